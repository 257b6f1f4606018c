/* SPDX-License-Identifier: MIT */
/*
 * fuzz_onnx_import.c - libFuzzer target: arbitrary bytes as an ONNX model
 * through import, normalisation, shape inference with constant folding and
 * the front-end passes.  Every input must end in a graph or a message,
 * never a crash, a leak or undefined behaviour.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ipu/onnx_io.h"
#include "ipu/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ir_error e = { "" };
	struct ir_graph *g = onnx_load_buffer(data, size, NULL, &e);
	struct ir_pipeline_opts po;

	if (!g) {
		if (!e.msg[0])
			__builtin_trap();	/* every failure has a message */
		return 0;
	}
	memset(&po, 0, sizeof(po));
	po.infer.batch_size = 2;
	po.infer.fold_limit = 1 << 20;	/* bound what folding may allocate */
	po.precision_fp16 = size & 1;
	if (ir_pipeline_run(g, &po, &e) && !e.msg[0])
		__builtin_trap();
	ir_graph_free(g);
	return 0;
}
