/* SPDX-License-Identifier: MIT */
/*
 * prepare_mvn.c - MeanVarianceNormalization in ops the device has (its
 * decompose hook), as the reference evaluator computes it:
 *   d = x - ReduceMean(x, axes);  y = d / sqrt(ReduceMean(d * d, axes) + 1e-9)
 * axes default (0, 2, 3); the centred variance avoids E[x^2] - E[x]^2's
 * cancellation.
 */
#include <stdio.h>

#include "prepare_rw.h"

int lp_dec_mvn(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	static const int64_t def[3] = { 0, 2, 3 };
	int x = n->in[0], dt = g->vals[x].dtype, ax, mean, d, v, c, in[2];
	struct lp_rw r = { g, *pi, "", e };
	const int64_t *axes;
	size_t na;

	if (!ir_dtype_is_float(dt))
		return 0;
	axes = ir_attr_ints(n, "axes", &na);
	if (!axes) {
		axes = def;
		na = 3;
	}
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	if ((ax = lp_rw_shape(&r, axes, (int64_t)na)) < 0 ||
	    (mean = lp_rw_add(&r, "ReduceMean", x, ax)) < 0 || (d = lp_rw_add(&r, "Sub", x, mean)) < 0 ||
	    (v = lp_rw_add(&r, "Mul", d, d)) < 0 || (v = lp_rw_add(&r, "ReduceMean", v, ax)) < 0 ||
	    (c = lp_rw_scalar(&r, dt, 1e-9)) < 0 || (v = lp_rw_add(&r, "Add", v, c)) < 0 ||
	    (v = lp_rw_add(&r, "Sqrt", v, -1)) < 0)
		return -1;
	in[0] = d;
	in[1] = v;
	*pi = r.pos;
	return lp_rw_become(&r, "Div", in, 2);
}
