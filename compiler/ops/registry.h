/* SPDX-License-Identifier: MIT */
/*
 * registry.h - what the compiler knows about each operator, in one place:
 * ops.def has one line per operator; this header turns it into one
 * descriptor per operator (arity, flags, shape inference, reference
 * evaluator), looked up by name once per use with a binary search.  The
 * lowering's hooks of the same line live in a table of its own, indexed
 * by the operator's id (compiler/lower/lower_registry.c), so the front end
 * links without the lowering.
 */
#ifndef IPU_OPS_REGISTRY_H
#define IPU_OPS_REGISTRY_H

#include "ipu/ir.h"

/* Infers the output types and shapes of n (inputs already checked
 * against the descriptor's arity and shaped); -1 with a message naming
 * the node. */
typedef int (*ir_infer_fn)(struct ir_graph *g, struct ir_node *n,
			   struct ir_error *e);
/* in[k] is NULL for an omitted input; out[k] come allocated (zeroed) with
 * their inferred dtype and shape. */
typedef int (*ir_eval_fn)(const struct ir_graph *g, const struct ir_node *n,
			  const struct ir_tensor *const *in, int nin,
			  struct ir_tensor *out, int nout, struct ir_error *e);

/* Rewrites node n of a model of default-domain opset `opset` into the
 * internal form (attributes later opsets made inputs become constant
 * inputs, ...); nothing when the opset has that form already. */
typedef int (*ir_upgrade_fn)(struct ir_graph *g, struct ir_node *n, int opset,
			     struct ir_error *e);

enum ir_op_flag {
	IR_OP_LAYOUT = 1,	/* moves, selects or converts elements only */
	IR_OP_SHAPE_ONLY = 2,	/* result from the input shapes alone */
	IR_OP_CONST_OUT = 4,	/* always a compile-time constant */
	IR_OP_ACCUM_F32 = 8,	/* under fp16, statistics and sums in f32 */
	IR_OP_LEGACY_BCAST = 16,	/* opsets < 7: broadcast/axis attributes */
};

/* 1 if `op` is known and has every flag of `flags`. */
int ir_op_has(const char *op, unsigned flags);

/* One id per operator, in the registry's (sorted) order. */
enum ir_op_id {
#define OP(name, lo, hi, fl, inf, ev, up, prep, dec, low) IR_OP_##name,
#include "ops/ops.def"
#undef OP
	IR_OP_COUNT
};

struct ir_op_desc {
	const char *name;
	enum ir_op_id id;
	int min_in, max_in;	/* inputs (present or omitted) */
	unsigned flags;		/* enum ir_op_flag */
	ir_infer_fn infer;
	ir_eval_fn eval;
	ir_upgrade_fn upgrade;	/* NULL: the same at every opset */
};

/* The descriptor of `op`, or NULL if the compiler does not know it. */
const struct ir_op_desc *ir_op_lookup(const char *op);
/* The descriptor of node n's operator (by its id, no name lookup), or
 * NULL for a custom or unknown one. */
const struct ir_op_desc *ir_node_desc(const struct ir_node *n);
/* 1 if node n's operator is known and has every flag of `flags`. */
int ir_node_has(const struct ir_node *n, unsigned flags);
/* All descriptors, sorted by name; *n = IR_OP_COUNT. */
const struct ir_op_desc *ir_op_table(int *n);

/* The hook functions named in ops.def (defined in their family's file). */
#define OP(name, lo, hi, fl, inf, ev, up, prep, dec, low) \
	int inf(struct ir_graph *, struct ir_node *, struct ir_error *); \
	int ev(const struct ir_graph *, const struct ir_node *, \
	       const struct ir_tensor *const *, int, struct ir_tensor *, int, \
	       struct ir_error *); \
	int up(struct ir_graph *, struct ir_node *, int, struct ir_error *);
#include "ops/ops.def"
#undef OP

#endif /* IPU_OPS_REGISTRY_H */
