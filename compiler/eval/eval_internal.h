/* SPDX-License-Identifier: MIT */
/* eval_internal.h - the evaluator's per-family op tables and helpers. */
#ifndef IPU_EVAL_INTERNAL_H
#define IPU_EVAL_INTERNAL_H

#include <stdint.h>

#include "eval.h"
#include "ir/opgeom.h"

/* in[k] is NULL for an omitted input; out[k] come allocated (zeroed) with
 * their inferred dtype and shape. */
typedef int (*ir_eval_fn)(const struct ir_graph *g, const struct ir_node *n,
			  const struct ir_tensor *const *in, int nin,
			  struct ir_tensor *out, int nout, struct ir_error *e);

struct ir_eval_op {
	const char *name;
	ir_eval_fn fn;
};

extern const struct ir_eval_op ir_eval_elementwise[];
extern const struct ir_eval_op ir_eval_tensor[];
extern const struct ir_eval_op ir_eval_nn[];
extern const struct ir_eval_op ir_eval_reduce[];
extern const struct ir_eval_op ir_eval_norm[];
extern const struct ir_eval_op ir_eval_resize[];
extern const struct ir_eval_op ir_eval_rnn[];

static inline int64_t ev_numel(const struct ir_tensor *t)
{
	return ir_numel(t->rank, t->dims);
}

/* Broadcast offsets of `in` into `out`'s shape (malloc'ed array). */
int64_t *ev_bcast(const struct ir_tensor *out, const struct ir_tensor *in,
		  struct ir_error *e);

#endif /* IPU_EVAL_INTERNAL_H */
