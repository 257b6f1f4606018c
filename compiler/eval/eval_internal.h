/* SPDX-License-Identifier: MIT */
/* eval_internal.h - helpers shared by the evaluator's per-family files. */
#ifndef IPU_EVAL_INTERNAL_H
#define IPU_EVAL_INTERNAL_H

#include <stdint.h>

#include "eval.h"
#include "ir/opgeom.h"
#include "ops/registry.h"

static inline int64_t ev_numel(const struct ir_tensor *t)
{
	return ir_numel(t->rank, t->dims);
}

/* Broadcast offsets of `in` into `out`'s shape (malloc'ed array). */
int64_t *ev_bcast(const struct ir_tensor *out, const struct ir_tensor *in,
		  struct ir_error *e);

/* Row-major element strides of t's shape into s. */
static inline void ev_strides(const struct ir_tensor *t, int64_t *s)
{
	int64_t acc = 1;

	for (int i = t->rank - 1; i >= 0; i--) {
		s[i] = acc;
		acc *= t->dims[i];
	}
}

/* Steps the multi-index idx of a shape: returns 0 after the last one. */
static inline int ev_next_idx(int rank, const int64_t *dims, int64_t *idx)
{
	for (int i = rank - 1; i >= 0; i--) {
		if (++idx[i] < dims[i])
			return 1;
		idx[i] = 0;
	}
	return 0;
}

#endif /* IPU_EVAL_INTERNAL_H */
