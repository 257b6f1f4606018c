/* SPDX-License-Identifier: MIT */
/*
 * lower_bias.c - a float16 or float32 MatMul whose only reader adds a constant bias
 * along its rows or columns (a Gemm's C, a 1x1 convolution's or a Linear
 * layer's bias, which the preparation writes as MatMul + Add) is lowered
 * with the Add: each output block starts as the bias and the MATMUL
 * vertex accumulates onto it (with K split, the bias in float32 is one
 * more partial sum for the REDUCE), so the bias joins the product's float32
 * sum and the block is rounded to float16 once.  Lowered apart, the product
 * was rounded first and the sum again: a folded BatchNorm's bias often
 * cancels most of the product, so the first rounding's error, relative to
 * the larger product, became a much larger error of the result.
 * A float32 product takes its bias the same way (no K split: the block is
 * filled with the bias in float32; with one: the bias is one more
 * partial), for speed: the Add, an op of its own with its vertices and
 * exchange, is gone; a 1x1 convolution's bias now costs one fill vertex
 * per output block.
 */
#include <string.h>

#include "lower_internal.h"

/* 1 when constant c ([..., rows, cols] broadcast against an output of
 * that shape) varies along at most axis `axis` (0: rows, 1: columns) and
 * holds `len` elements. */
static int along(const struct ir_value *c, int axis, int64_t len)
{
	int keep = axis == 0 ? c->rank - 2 : c->rank - 1;

	if (c->rank < 1 || (axis == 0 && c->rank < 2) || ir_value_numel(c) != len)
		return 0;
	for (int i = 0; i < c->rank; i++)
		if (i != keep && c->dims[i] != 1)
			return 0;
	return 1;
}

int lw_mm_bias_find(const struct lw *l, const struct ir_node *n, int64_t M, int64_t N,
		    struct lw_mm_bias *b)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *o = &g->vals[n->out[0]];
	const struct ir_node *add;
	int ai;

	memset(b, 0, sizeof(*b));
	b->v = -1;
	if ((o->dtype != IR_F16 && o->dtype != IR_F32) || o->is_output ||
	    (o->dtype == IR_F32 && lw_fp8_is_layer(n)))
		return 0;
	ai = lw_only_reader(g, n->out[0]);
	if (ai < 0)
		return 0;
	add = &g->nodes[ai];
	if (add->opid != IR_OP_Add || add->nin != 2 || add->nout != 1 || add->out[0] < 0)
		return 0;
	for (int k = 0; k < 2; k++) {
		const struct ir_value *c, *r = &g->vals[add->out[0]];

		if (add->in[k] != n->out[0] || add->in[1 - k] < 0)
			continue;
		c = &g->vals[add->in[1 - k]];
		if (!c->data || c->dtype != o->dtype || r->dtype != o->dtype || r->rank != o->rank ||
		    c->rank > o->rank ||
		    memcmp(r->dims, o->dims, (size_t)o->rank * sizeof(o->dims[0])))
			return 0;
		if (along(c, 1, N))
			b->axis = 1;
		else if (along(c, 0, M))
			b->axis = 0;
		else
			return 0;
		b->v = add->in[1 - k];
		b->node = ai;
		b->len = b->axis == 0 ? M : N;
		return 1;
	}
	return 0;
}

int lw_mm_bias_fill(struct lw *l, const struct lw_mm_bias *b, uint32_t cs, ipu_step *xch,
		    uint32_t tile, struct ipu_slice dst, int64_t m0, int64_t mb, int64_t n0,
		    int64_t nb)
{
	struct ipu_slice ops[2];
	/* a rows-by-columns copy of one bias element per row or per column */
	uint32_t p[6] = { 2, (uint32_t)mb, (uint32_t)nb, 0,
			  b->axis == 0 ? 1u : 0u, b->axis == 0 ? 0u : 1u };

	if (b->axis == 0 ? lw_const_block(l, b->v, 0, 1, m0, mb, 0, 1, tile, xch, &ops[0])
			 : lw_const_block(l, b->v, 0, b->len, 0, 1, n0, nb, tile, xch, &ops[0]))
		return -1;
	ops[1] = dst;
	if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_STRIDED_COPY, ops, 2, p, 6))
		return lw_check(l);
	return 0;
}

int lw_mm_bias_f32(struct lw *l, const struct lw_mm_bias *b, uint32_t cs_fill, uint32_t cs_cast,
		   ipu_step *xch, uint32_t tile, struct ipu_slice dst, int64_t m0, int64_t mb,
		   int64_t n0, int64_t nb)
{
	struct ipu_slice ops[2];

	if (lw_temp(l, "bias16", IPUX_DT_F16, (uint64_t)(mb * nb), tile, &ops[0]) ||
	    lw_mm_bias_fill(l, b, cs_fill, xch, tile, ops[0], m0, mb, n0, nb))
		return -1;
	ops[1] = dst;
	if (ipu_graph_add_vertex(l->gb, cs_cast, IPUX_CL_CAST, ops, 2, NULL, 0))
		return lw_check(l);
	return 0;
}
