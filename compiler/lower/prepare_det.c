/* SPDX-License-Identifier: MIT */
/*
 * prepare_det.c - Det of 1 x 1, 2 x 2 and 3 x 3 matrices in ops the device
 * has (its decompose hook): each element gathered out of the matrices
 * flattened to [batch, n * n] (or [n * n] for one matrix, which gives the
 * scalar output directly), then the Leibniz formula (ad - bc; for 3 x 3
 * the expansion along the first row).  Larger matrices stay unsupported:
 * an elimination needs pivoting, data-dependent control.
 */
#include <stdio.h>

#include "prepare_rw.h"

struct det {
	struct lp_rw r;
	int flat, axis, n;
};

static int el(struct det *d, int i, int j)
{
	int64_t k = i * d->n + j;
	int idx = lp_rw_ints(&d->r, "det_idx", IR_I64, 0, NULL, &k), v;

	if (idx < 0 || (v = lp_rw_add(&d->r, "Gather", d->flat, idx)) < 0 ||
	    lp_rw_int(&d->r, "axis", d->axis))
		return -1;
	return v;
}

static int mul(struct det *d, int a, int b)
{
	return a < 0 || b < 0 ? -1 : lp_rw_add(&d->r, "Mul", a, b);
}

/* a * b - c * e */
static int cross(struct det *d, int a, int b, int c, int e)
{
	int p = mul(d, a, b), q = mul(d, c, e);

	return p < 0 || q < 0 ? -1 : lp_rw_add(&d->r, "Sub", p, q);
}

int lp_dec_det(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	struct det d = { { g, *pi, "", e }, -1, 0, 0 };
	int64_t batch = 1, fd[2], od[IR_MAX_RANK];
	int r = xv->rank, y;

	if (r < 2 || !ir_dtype_is_float(xv->dtype) || xv->dims[r - 1] != xv->dims[r - 2] ||
	    xv->dims[r - 1] > 3)
		return 0;
	d.n = (int)xv->dims[r - 1];
	for (int i = 0; i < r - 2; i++) {
		batch *= xv->dims[i];
		od[i] = xv->dims[i];
	}
	snprintf(d.r.name, sizeof(d.r.name), "%s", n->name);
	fd[0] = batch;
	fd[1] = d.n * d.n;
	d.axis = r > 2 ? 1 : 0;
	{
		int sh = lp_rw_shape(&d.r, r > 2 ? fd : fd + 1, r > 2 ? 2 : 1);

		if (sh < 0 || (d.flat = lp_rw_add(&d.r, "Reshape", n->in[0], sh)) < 0)
			return -1;
	}
	if (d.n == 1) {
		y = el(&d, 0, 0);
	} else if (d.n == 2) {
		y = cross(&d, el(&d, 0, 0), el(&d, 1, 1), el(&d, 0, 1), el(&d, 1, 0));
	} else {
		int c0 = cross(&d, el(&d, 1, 1), el(&d, 2, 2), el(&d, 1, 2), el(&d, 2, 1));
		int c1 = cross(&d, el(&d, 1, 0), el(&d, 2, 2), el(&d, 1, 2), el(&d, 2, 0));
		int c2 = cross(&d, el(&d, 1, 0), el(&d, 2, 1), el(&d, 1, 1), el(&d, 2, 0));
		int t0 = mul(&d, el(&d, 0, 0), c0), t1 = mul(&d, el(&d, 0, 1), c1);
		int t2 = mul(&d, el(&d, 0, 2), c2);

		y = t0 < 0 || t1 < 0 ? -1 : lp_rw_add(&d.r, "Sub", t0, t1);
		y = y < 0 || t2 < 0 ? -1 : lp_rw_add(&d.r, "Add", y, t2);
	}
	if (y < 0)
		return -1;
	*pi = d.r.pos;
	if (r == 2)
		return lp_rw_become(&d.r, "Identity", &y, 1);
	{
		int in[2] = { y, lp_rw_shape(&d.r, od, r - 2) };

		if (in[1] < 0)
			return -1;
		*pi = d.r.pos;
		return lp_rw_become(&d.r, "Reshape", in, 2);
	}
}
