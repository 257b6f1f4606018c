/* SPDX-License-Identifier: MIT */
/* select.h - operators whose output size depends on input values
 * (NonMaxSuppression, NonZero, Compress): the selection is computed once
 * from constant inputs by shape inference and again by the evaluator. */
#ifndef IPU_EVAL_SELECT_H
#define IPU_EVAL_SELECT_H

#include <stdint.h>

#include "ipu/ir.h"

/* NonMaxSuppression's selected (batch, class, box) triples into sel (3
 * per selection; NULL: count only).  in[]: the node's inputs, NULL when
 * omitted.  Returns the count, or -1 with e set. */
int64_t ir_nms_select(const struct ir_graph *g, const struct ir_node *n,
		      const struct ir_tensor *const *in, int nin, int64_t *sel, struct ir_error *e);

#endif /* IPU_EVAL_SELECT_H */
