/* SPDX-License-Identifier: MIT */
/*
 * prepare_lrn.c - LRN rewritten into ops the device has:
 *   square_sum = Conv(x * x, W) with W[c][i] = 1 for the channels i of c's
 *                window (a 1 x 1 convolution across channels; MatMul by
 *                W's transpose for (N, C) input)
 *   y = x / (bias + alpha / size * square_sum) ^ beta
 * as ONNX defines the window: from c - floor((size - 1) / 2) to
 * c + ceil((size - 1) / 2), clipped to the channels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prepare_rw.h"

int lp_prep_lrn(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	int64_t size = ir_attr_int(n, "size", 1), C = xv->rank > 1 ? xv->dims[1] : 1, wd[IR_MAX_RANK];
	double alpha = ir_attr_float(n, "alpha", 1e-4), beta = ir_attr_float(n, "beta", 0.75);
	double bias = ir_attr_float(n, "bias", 1.0);
	int rank = xv->rank, dt = xv->dtype, x = n->in[0], w, sq, in[2], c;
	struct lp_rw r = { g, *pi, "", e };
	struct ir_tensor t;

	if (rank < 2)
		return ir_node_err(e, g, n, "input must be (N, C, ...)");
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	wd[0] = C;
	wd[1] = C;
	for (int i = 2; i < rank; i++)
		wd[i] = 1;
	if ((w = ir_value_add_unique(g, "lrn_window", e)) < 0 || ir_tensor_alloc(&t, dt, rank, wd, e))
		return -1;
	for (int64_t o = 0; o < C; o++)
		for (int64_t i = 0; i < C; i++) {
			int in_win = i >= o - (size - 1) / 2 && i <= o + size / 2;

			/* Conv: W[out][in]; MatMul: W[in][out] (the same band) */
			ir_set_f(t.data, dt, (size_t)(o * C + i), in_win ? 1.0 : 0.0);
		}
	ir_value_set_const(&g->vals[w], &t);
	if ((sq = lp_rw_add(&r, "Mul", x, x)) < 0)
		return -1;
	in[0] = sq;
	in[1] = w;
	if ((sq = lp_rw_add_to(&r, rank > 2 ? "Conv" : "MatMul", in, 2, -1)) < 0)
		return -1;
	if ((c = lp_rw_scalar(&r, dt, alpha / (double)size)) < 0 || (sq = lp_rw_add(&r, "Mul", sq, c)) < 0 ||
	    (c = lp_rw_scalar(&r, dt, bias)) < 0 || (sq = lp_rw_add(&r, "Add", sq, c)) < 0 ||
	    (c = lp_rw_scalar(&r, dt, beta)) < 0 || (sq = lp_rw_add(&r, "Pow", sq, c)) < 0)
		return -1;
	in[0] = x;
	in[1] = sq;
	*pi = r.pos;
	return lp_rw_become(&r, "Div", in, 2);
}
