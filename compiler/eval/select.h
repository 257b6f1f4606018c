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

/* Unique's items (elements, or slices along `axis` when has_axis) of x:
 * returns the number of distinct ones, or -1 with e set; when `order` is
 * not NULL it receives, per distinct item in output order, its first
 * index, and `inverse` (one per item) and `counts` (per distinct item) are
 * filled when not NULL. */
int64_t ir_unique(const struct ir_tensor *x, int has_axis, int axis, int sorted, int64_t *order,
		  int64_t *inverse, int64_t *counts, struct ir_error *e);

#endif /* IPU_EVAL_SELECT_H */
