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

#endif /* IPU_EVAL_INTERNAL_H */
