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

/* 1 for the IR's own attributes (coerce2d, accumulate_f32, control flow's
 * captures): not ONNX. */
int onnx_internal_attr(const char *name);
/* A clone of g in the forms of `opset` (ONNX_EXPORT_OPSET_MIN to
 * ONNX_OPSET_MAX), every node checked against ONNX's schema of that opset;
 * strict: an op unknown to the schemas is refused too. */
struct ir_graph *onnx_to_opset(const struct ir_graph *g, int opset, int strict,
				struct ir_error *e);

#endif /* IPU_ONNX_INTERNAL_H */
