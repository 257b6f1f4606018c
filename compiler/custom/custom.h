/* SPDX-License-Identifier: MIT */
/*
 * custom.h - custom operators in the compiler's front end: a node of a
 * domain other than ONNX's default has op "domain::op_type" and is served
 * by a plugin (ipu/custom_op.h) of the graph's table (g->custom): its
 * attributes, shape inference and reference evaluation.  The lowering is
 * compiler/lower/lower_custom.c.
 */
#ifndef IPU_COMPILER_CUSTOM_H
#define IPU_COMPILER_CUSTOM_H

#include <stdint.h>

#include "ipu/custom_table.h"
#include "ipu/ir.h"

/* 1 if op names a custom operator ("domain::op_type"). */
int ir_custom_is(const char *op);
/*
 * The plugin operator of custom node n (for the model's opset of its
 * domain) and its library's hash (hash may be NULL); NULL with a message
 * naming the node when no loaded plugin serves it.
 */
const struct ipu_custom_op *ir_custom_op(const struct ir_graph *g, const struct ir_node *n,
					 const uint8_t **hash, struct ir_error *e);
/* The node's attribute values in the operator's schema order (defaults
 * filled in, ints as doubles): 0, or -1 naming the node. */
int ir_custom_attrs(const struct ir_graph *g, const struct ir_node *n,
		    const struct ipu_custom_op *op, double *attrs, struct ir_error *e);
/* Shape and type inference of a custom node (as ir_infer_fn). */
int ir_custom_infer(struct ir_graph *g, struct ir_node *n, struct ir_error *e);
/* The reference evaluator of a custom node (as ir_eval_fn). */
int ir_custom_eval(const struct ir_graph *g, const struct ir_node *n,
		   const struct ir_tensor *const *in, int nin, struct ir_tensor *out, int nout,
		   struct ir_error *e);
/* IR dtype <-> ipux dtype (0 / IR_UNDEFINED if the other side lacks it). */
uint32_t ir_custom_ipux_dtype(int ir_dtype);
int ir_custom_ir_dtype(uint32_t ipux_dtype);

#endif /* IPU_COMPILER_CUSTOM_H */
