/* SPDX-License-Identifier: MIT */
/*
 * prepare_loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * rewritten into ops the device has:
 *   [LogSoftmax over the classes (the second output, when asked for)]
 *   -> each target's class picked with a one-hot mask (Equal against the
 *      classes, Where, ReduceSum over them) -> Neg
 *   -> times the target's class weight (picked the same way) and 0 where
 *      the target is ignore_index (Equal, Where: an ignored target may lie
 *      outside the classes, so it is replaced by class 0 first)
 *   -> none: as is; sum: ReduceSum; mean: ReduceSum / the weights' sum
 *      (ReduceMean without weights nor ignore_index), as ONNX defines it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "prepare_rw.h"

/* ReduceSum over the classes (axis 1) of Where(mask, v, zero). */
static int pick(struct lp_rw *r, int mask, int v, int zero)
{
	int in[3] = { mask, v, zero }, one = 1;
	int64_t ax = 1;

	if ((v = lp_rw_add_to(r, "Where", in, 3, -1)) < 0 || (one = lp_rw_shape(r, &ax, 1)) < 0 ||
	    (v = lp_rw_add(r, "ReduceSum", v, one)) < 0 || lp_rw_int(r, "keepdims", 0))
		return -1;
	return v;
}

int lp_prep_loss(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct lp_rw r = { g, *pi, "", e };
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *tv = &g->vals[n->in[1]];
	int dt = xv->dtype, has_ii = ir_attr_find(n, "ignore_index") != NULL;
	int64_t ii = ir_attr_int(n, "ignore_index", 0), d1[IR_MAX_RANK], td[IR_MAX_RANK];
	int64_t xd[IR_MAX_RANK], D = 1;
	int trank = tv->rank, x = n->in[0], t = n->in[1];
	int w = n->nin > 2 ? n->in[2] : -1;
	int sce = n->opid == IR_OP_SoftmaxCrossEntropyLoss;
	int lp = x, keep = -1, wt = -1, l, c, flat, xrank, lrank, mask, zero;
	int64_t cd[IR_MAX_RANK], *cls;
	char red[8];

	snprintf(r.name, sizeof(r.name), "%s", n->name);
	snprintf(red, sizeof(red), "%s", ir_attr_str(n, "reduction", "mean"));
	memcpy(td, tv->dims, sizeof(td));
	memcpy(xd, xv->dims, sizeof(xd));
	xrank = xv->rank;
	/* (N, C, d1..dk) as (N, C, D): the device copies at most rank 6 */
	flat = xrank > 3;
	if (flat) {
		for (int i = 2; i < xrank; i++)
			D *= xd[i];
		d1[0] = xd[0];
		d1[1] = xd[1];
		d1[2] = D;
		if ((c = lp_rw_shape(&r, d1, 3)) < 0 || (x = lp = lp_rw_add(&r, "Reshape", x, c)) < 0)
			return -1;
	}
	if (sce) {
		int out1 = g->nodes[r.pos].nout > 1 ? g->nodes[r.pos].out[1] : -1;

		/* the node's own log_prob output is the LogSoftmax's */
		if ((lp = lp_rw_add_to(&r, "LogSoftmax", &x, 1, flat ? -1 : out1)) < 0)
			return -1;
		if (lp_rw_int(&r, "axis", 1))
			return -1;
		if (out1 >= 0 && flat) {
			int in[2] = { lp, lp_rw_shape(&r, xd, xrank) };

			if (in[1] < 0 || lp_rw_add_to(&r, "Reshape", in, 2, out1) < 0)
				return -1;
		}
	}
	/* the device computes integers in int32 */
	if ((t = lp_rw_add(&r, "Cast", t, -1)) < 0 || lp_rw_int(&r, "to", IR_I32))
		return -1;
	if (has_ii) {
		int iiv = lp_rw_scalar(&r, IR_I32, (double)ii);
		int class0 = lp_rw_scalar(&r, IR_I32, 0);
		int m, in[3];

		if (iiv < 0 || class0 < 0 || (m = lp_rw_add(&r, "Equal", t, iiv)) < 0)
			return -1;
		in[0] = m;
		in[1] = class0;
		in[2] = t;
		if ((t = lp_rw_add_to(&r, "Where", in, 3, -1)) < 0 ||
		    (keep = lp_rw_add(&r, "Not", m, -1)) < 0 ||
		    (keep = lp_rw_add(&r, "Cast", keep, -1)) < 0 || lp_rw_int(&r, "to", dt))
			return -1;
	}
	/* targets (N, d...) -> (N, 1, d...) against the classes (1, C, 1...):
	 * each target's class is a one-hot mask over the scores, selected with
	 * Where and summed over the classes (elementwise and row work, split
	 * over tiles like any, where a gather would hold the scores on one) */
	d1[0] = td[0];
	d1[1] = 1;
	memcpy(d1 + 2, td + 1, (size_t)(trank - 1) * sizeof(int64_t));
	if (flat)
		d1[2] = D;
	lrank = flat ? 3 : trank + 1;
	for (int i = 0; i < lrank; i++)
		cd[i] = i == 1 ? xd[1] : 1;
	if (!(cls = malloc((size_t)xd[1] * sizeof(int64_t))))
		return ir_err(e, "out of memory");
	for (int64_t i = 0; i < xd[1]; i++)
		cls[i] = i;
	c = lp_rw_ints(&r, "classes", IR_I32, lrank, cd, cls);
	free(cls);
	if (c < 0 || (mask = lp_rw_shape(&r, d1, lrank)) < 0 ||
	    (mask = lp_rw_add(&r, "Reshape", t, mask)) < 0 || (mask = lp_rw_add(&r, "Equal", mask, c)) < 0 ||
	    (zero = lp_rw_scalar(&r, dt, 0)) < 0 || (l = pick(&r, mask, lp, zero)) < 0 ||
	    (c = lp_rw_shape(&r, td, trank)) < 0 || (l = lp_rw_add(&r, "Reshape", l, c)) < 0 ||
	    (l = lp_rw_add(&r, "Neg", l, -1)) < 0)
		return -1;
	if (w >= 0) {
		if ((c = lp_rw_shape(&r, cd, lrank)) < 0 || (wt = lp_rw_add(&r, "Reshape", w, c)) < 0 ||
		    (wt = pick(&r, mask, wt, zero)) < 0 || (c = lp_rw_shape(&r, td, trank)) < 0 ||
		    (wt = lp_rw_add(&r, "Reshape", wt, c)) < 0)
			return -1;
		if (keep >= 0 && (wt = lp_rw_add(&r, "Mul", wt, keep)) < 0)
			return -1;
	} else {
		wt = keep;
	}
	if (wt >= 0 && (l = lp_rw_add(&r, "Mul", l, wt)) < 0)
		return -1;
	*pi = r.pos;
	if (!strcmp(red, "none"))
		return lp_rw_become(&r, "Identity", &l, 1);
	if (!strcmp(red, "sum") || wt >= 0) {
		int s[2];

		if (!strcmp(red, "sum")) {
			if (lp_rw_become(&r, "ReduceSum", &l, 1))
				return -1;
			return ir_attr_set_int(&g->nodes[r.pos], "keepdims", 0, e);
		}
		if ((s[0] = lp_rw_add(&r, "ReduceSum", l, -1)) < 0 || lp_rw_int(&r, "keepdims", 0) ||
		    (s[1] = lp_rw_add(&r, "ReduceSum", wt, -1)) < 0 || lp_rw_int(&r, "keepdims", 0))
			return -1;
		*pi = r.pos;
		return lp_rw_become(&r, "Div", s, 2);
	}
	if (lp_rw_become(&r, "ReduceMean", &l, 1))
		return -1;
	return ir_attr_set_int(&g->nodes[r.pos], "keepdims", 0, e);
}
