/* SPDX-License-Identifier: MIT */
/*
 * eval.h - the reference CPU evaluator of the IR ops.
 *
 * Simple and exact rather than fast: elementwise math in double, matmul,
 * conv and reductions accumulate in double, results rounded once to the
 * output dtype.  Used for constant folding and as the reference of
 * `ipu-compile --check`.
 */
#ifndef IPU_EVAL_H
#define IPU_EVAL_H

#include "ipu/ir.h"

/* Evaluates one node.  out[k] must come with dtype/rank/dims set (from
 * shape inference); eval allocates out[k].data. */
int ir_eval_node(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, struct ir_tensor *out,
		 struct ir_error *e);
/* 1 if the evaluator implements the op. */
int ir_eval_supported(const char *op);
/* Folds node `node` (all inputs constant, shapes inferred): its outputs
 * become constants and the node is marked dead.  Returns 1 if folded, 0 if
 * skipped (a result larger than `limit` bytes, -1 = no limit, unless the
 * op only moves or converts elements and makes no more of them than its
 * inputs hold; or not evaluable), -1 on error. */
int ir_fold_node(struct ir_graph *g, int node, int64_t limit,
		 struct ir_error *e);
/* Runs the whole (inferred) graph: inputs in graph input order, outputs
 * allocated in graph output order. */
int ir_eval_graph(const struct ir_graph *g, const struct ir_tensor *inputs,
		  struct ir_tensor *outputs, struct ir_error *e);
/* Called by ir_eval_graph_visit after node `node` ran, with its inputs and
 * its outputs.  The outputs may be changed in place (same dtype and shape):
 * what later nodes read is what the callback leaves, which is how a
 * storage format the evaluator does not compute in (a scaled 8-bit float)
 * is emulated.  Nonzero stops the run (message in e). */
typedef int (*ir_eval_visit_fn)(void *ctx, const struct ir_graph *g, int node,
				const struct ir_tensor *const *in,
				struct ir_tensor *out, struct ir_error *e);
/* ir_eval_graph with a callback after every node; outputs may be NULL
 * when only the visits matter. */
int ir_eval_graph_visit(const struct ir_graph *g, const struct ir_tensor *inputs,
			struct ir_tensor *outputs, ir_eval_visit_fn visit, void *ctx,
			struct ir_error *e);

#endif /* IPU_EVAL_H */
