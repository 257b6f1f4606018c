/* SPDX-License-Identifier: MIT */
/* infer_select.c - shape inference of NonMaxSuppression, NonZero and
 * Compress, whose output size depends on input values: those inputs must
 * be compile-time constants (the node then folds, or, for Compress with
 * run-time data, becomes a Gather at constant indices), except
 * NonMaxSuppression's boxes and scores, whose selection gets a static
 * upper bound and a run-time count. */
#include <string.h>

#include "eval/select.h"
#include "infer_internal.h"

static int need_const(struct ir_graph *g, const struct ir_node *n, int k, const char *what,
		      struct ir_error *e)
{
	struct ir_value *v = ir_in(g, n, k);

	if (v && !v->data)
		return ir_node_err(e, g, n, "input %d ('%s') must be a compile-time constant: the output's size depends on its values, and shapes are static",
				   k, what);
	return 0;
}

/* Run-time boxes or scores: the selection's static upper bound, B * C *
 * min(N, max_output_boxes_per_class), the true count known at run time
 * (the value is marked bounded).  The limits stay compile-time constants. */
static int nms_bound(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	static const char *const names[] = { NULL, NULL, "max_output_boxes_per_class",
					     "iou_threshold", "score_threshold" };
	struct ir_value *bx = ir_in(g, n, 0), *sc = ir_in(g, n, 1), *mo = ir_in(g, n, 2);
	int64_t per = 0, d[2];

	for (int k = 2; k < n->nin && k < 5; k++)
		if (need_const(g, n, k, names[k], e))
			return -1;
	if (mo && ir_value_numel(mo))
		per = ir_get_i(mo->data, mo->dtype, 0);
	if (per > bx->dims[1])
		per = bx->dims[1];
	if (per < 0)
		per = 0;
	d[0] = sc->dims[0] * sc->dims[1] * per;
	d[1] = 3;
	if (ir_set_out(g, n, 0, IR_I64, 2, d))
		return -1;
	g->vals[n->out[0]].bounded = 1;
	return 0;
}

int ir_infer_nms(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	static const char *const names[] = { "boxes", "scores", "max_output_boxes_per_class",
					     "iou_threshold", "score_threshold" };
	struct ir_value *bx = ir_in(g, n, 0), *sc = ir_in(g, n, 1);
	const struct ir_tensor *in[5] = { NULL };
	struct ir_tensor t[5];
	int64_t cnt, d[2];

	if (bx->rank != 3 || bx->dims[2] != 4 || sc->rank != 3 || sc->dims[0] != bx->dims[0] ||
	    sc->dims[2] != bx->dims[1])
		return ir_node_err(e, g, n, "boxes must be [B, N, 4] and scores [B, C, N]");
	if (!bx->data || !sc->data)
		return nms_bound(g, n, e);
	for (int k = 0; k < n->nin && k < 5; k++) {
		if (need_const(g, n, k, names[k], e))
			return -1;
		if (ir_in(g, n, k)) {
			ir_value_view(ir_in(g, n, k), &t[k]);
			in[k] = &t[k];
		}
	}
	if ((cnt = ir_nms_select(g, n, in, n->nin, NULL, e)) < 0)
		return -1;
	d[0] = cnt;
	d[1] = 3;
	if (ir_set_out(g, n, 0, IR_I64, 2, d))
		return -1;
	g->vals[n->out[0]].bounded = 0;
	return 0;
}

int ir_infer_nonzero(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t cnt = ir_value_numel(x), d[2] = { x->rank, 0 };

	if (need_const(g, n, 0, "X", e))
		return -1;
	for (int64_t i = 0; i < cnt; i++)
		d[1] += ir_get_f(x->data, x->dtype, (size_t)i) != 0;
	return ir_set_out(g, n, 0, IR_I64, 2, d);
}

int ir_infer_compress(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *c = ir_in(g, n, 1);
	int has_axis = ir_attr_find(n, "axis") != NULL;
	int a = has_axis ? ir_axis(ir_attr_int(n, "axis", 0), x->rank) : 0;
	int64_t len, kept = 0, d[IR_MAX_RANK], nc;

	if (has_axis && a < 0)
		return ir_node_err(e, g, n, "axis %lld out of range for rank %d",
				   (long long)ir_attr_int(n, "axis", 0), x->rank);
	if (c->rank != 1)
		return ir_node_err(e, g, n, "the condition must be a vector");
	if (need_const(g, n, 1, "condition", e))
		return -1;
	len = has_axis ? x->dims[a] : ir_value_numel(x);
	nc = ir_value_numel(c);
	if (nc > len)
		return ir_node_err(e, g, n, "the condition has %lld values for an axis of %lld", (long long)nc,
				   (long long)len);
	for (int64_t j = 0; j < nc; j++)
		kept += ir_get_f(c->data, c->dtype, (size_t)j) != 0;
	if (!has_axis)
		return ir_set_out(g, n, 0, x->dtype, 1, &kept);
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	d[a] = kept;
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}

int ir_infer_unique(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int has_axis = ir_attr_find(n, "axis") != NULL;
	int a = has_axis ? ir_axis(ir_attr_int(n, "axis", 0), x->rank) : 0;
	int64_t u, len, d[IR_MAX_RANK];
	struct ir_tensor t;

	if (a < 0)
		return ir_node_err(e, g, n, "axis %lld out of range for rank %d",
				   (long long)ir_attr_int(n, "axis", 0), x->rank);
	if (need_const(g, n, 0, "X", e))
		return -1;
	ir_value_view(x, &t);
	if ((u = ir_unique(&t, has_axis, a, 1, NULL, NULL, NULL, e)) < 0)
		return -1;
	len = has_axis ? x->dims[a] : ir_value_numel(x);
	if (has_axis) {
		memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
		d[a] = u;
		if (ir_set_out(g, n, 0, x->dtype, x->rank, d))
			return -1;
	} else if (ir_set_out(g, n, 0, x->dtype, 1, &u)) {
		return -1;
	}
	if (ir_set_out(g, n, 1, IR_I64, 1, &u) || ir_set_out(g, n, 2, IR_I64, 1, &len))
		return -1;
	return ir_set_out(g, n, 3, IR_I64, 1, &u);
}
