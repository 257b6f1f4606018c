/* SPDX-License-Identifier: MIT */
/*
 * fuzz_onnx_lower.c - libFuzzer target: arbitrary bytes as an ONNX model
 * through the front end and the lowering for a small target.  Whatever
 * the lowering builds must pass the graph builder's verification (the
 * engine's verifier), and every refusal must come with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/lower.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ir_error e = { "" };
	struct ir_graph *g = onnx_load_buffer(data, size, NULL, &e);
	struct ir_pipeline_opts po;
	struct ipu_target t = { "ipu2", 8, 64 * 1024 };
	struct ipu_lower_info info;
	void *image = NULL;
	size_t len = 0;

	if (!g)
		return 0;
	memset(&po, 0, sizeof(po));
	po.infer.batch_size = 1;
	po.infer.fold_limit = 1 << 16;
	if (ir_pipeline_run(g, &po, &e) == 0) {
		e.msg[0] = 0;
		if (ipu_lower_image(&g, 1, &t, &image, &len, &info, &e) == 0)
			ipu_lower_info_free(&info);
		else if (!e.msg[0])
			__builtin_trap();
		free(image);
	}
	ir_graph_free(g);
	return 0;
}
