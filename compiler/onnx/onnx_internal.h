/* SPDX-License-Identifier: MIT */
/* onnx_internal.h - shared between the ONNX importer and exporter. */
#ifndef IPU_ONNX_INTERNAL_H
#define IPU_ONNX_INTERNAL_H

#include "ipu/ir.h"
#include "onnx/onnx.pb-c.h"

/* Decodes a TensorProto (raw_data, typed fields or external data relative
 * to base_dir; base_dir NULL refuses external data). */
int onnx_tensor_decode(const Onnx__TensorProto *tp, const char *base_dir,
		       struct ir_tensor *t, struct ir_error *e);
/* Fills a TensorProto from a tensor (raw_data; pointers into t, no copy). */
void onnx_tensor_encode(const struct ir_tensor *t, const char *name,
			Onnx__TensorProto *tp);

#endif /* IPU_ONNX_INTERNAL_H */
