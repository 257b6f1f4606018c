/* SPDX-License-Identifier: MIT */
/*
 * prepare_argmax.c - an ArgMax/ArgMin over a row too long for one tile
 * (a language model's vocabulary: GPT-2's 50,257 logits are 201 KB in
 * float32) rewritten into ops whose rows are short:
 *
 *   x [O, L] -> Concat with the lowest value up to P*C -> [O, P, C]
 *   pi = ArgMax(axis 2), pm = ReduceMax(axis 2)      (P chunks per row,
 *                                                      spread over tiles)
 *   m = ReduceMax(pm, axis 1); i = ReduceMin(Where(pm == m, pi + k*C, big))
 *
 * The first chunk holding the maximum holds its first index, and within a
 * chunk ArgMax returns the first: the smallest candidate among the chunks
 * equal to the maximum is ONNX's answer (the first index on ties).  The
 * padding sorts after every value of the row (the lowest value, placed
 * after it), so it is never chosen over a real element.  ArgMin is the
 * same with the comparisons reversed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/opgeom.h"
#include "ops/registry.h"
#include "prepare_rw.h"

/* Smallest chunk worth a tile of its own; a row shorter than
 * tile_mem / ROW_DIV elements is left whole. */
#define MIN_CHUNK 1024
#define ROW_DIV 64

static int64_t isqrt_up(int64_t v)
{
	int64_t r = 1;

	while (r * r < v)
		r++;
	return r;
}

/* A constant [dims] filled with the value every element of the row beats. */
static int fill_const(struct lp_rw *r, int dt, int rank, const int64_t *dims, int is_max)
{
	struct ir_tensor t;
	int v = ir_value_add_unique(r->g, "argmax_pad", r->e);
	size_t n;

	if (v < 0 || ir_tensor_alloc(&t, dt, rank, dims, r->e))
		return -1;
	n = (size_t)ir_numel(rank, dims);
	for (size_t i = 0; i < n; i++) {
		if (dt == IR_I32)
			ir_set_i(t.data, dt, i, is_max ? INT32_MIN : INT32_MAX);
		else	/* infinite: a row of -inf still answers one of its own */
			ir_set_f(t.data, dt, i, is_max ? -INFINITY : INFINITY);
	}
	ir_value_set_const(&r->g->vals[v], &t);
	return v;
}

static int const_i32(struct lp_rw *r, const char *base, int64_t n, int64_t step, int64_t first)
{
	struct ir_tensor t;
	int v = ir_value_add_unique(r->g, base, r->e);

	if (v < 0 || ir_tensor_alloc(&t, IR_I32, 1, &n, r->e))
		return -1;
	for (int64_t i = 0; i < n; i++)
		ir_set_i(t.data, IR_I32, (size_t)i, first + i * step);
	ir_value_set_const(&r->g->vals[v], &t);
	return v;
}

static int split_one(struct ir_graph *g, int *pi, int64_t C, struct ir_error *e)
{
	const struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *y = &g->vals[n->out[0]];
	int is_max = n->opid == IR_OP_ArgMax;
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank), dt = x->dtype;
	int64_t O = 1, L = x->dims[a], P = (L + C - 1) / C, pad = P * C - L;
	int64_t d3[3], two = 2, one = 1, pdims[IR_MAX_RANK];
	const char *red = is_max ? "ReduceMax" : "ReduceMin";
	struct lp_rw r = { g, *pi, "", e };
	int xv = n->in[0], in[3], xr, pidx, pmax, m, eq, cand, sel, out, ax2, ax1;
	int yrank = y->rank;
	int64_t ydims[IR_MAX_RANK];

	snprintf(r.name, sizeof(r.name), "%s", n->name);
	memcpy(ydims, y->dims, sizeof(ydims));
	for (int i = 0; i < a; i++)
		O *= x->dims[i];
	if (pad > 0) {
		memcpy(pdims, x->dims, sizeof(pdims));
		pdims[a] = pad;
		in[0] = xv;
		if ((in[1] = fill_const(&r, dt, x->rank, pdims, is_max)) < 0 ||
		    (xv = lp_rw_add_to(&r, "Concat", in, 2, -1)) < 0 || lp_rw_int(&r, "axis", a))
			return -1;
	}
	d3[0] = O;
	d3[1] = P;
	d3[2] = C;
	if ((in[1] = lp_rw_shape(&r, d3, 3)) < 0 || (xr = lp_rw_add(&r, "Reshape", xv, in[1])) < 0)
		return -1;
	/* per chunk: its first extreme index and its extreme value */
	if ((pidx = lp_rw_add(&r, is_max ? "ArgMax" : "ArgMin", xr, -1)) < 0 ||
	    lp_rw_int(&r, "axis", 2) || lp_rw_int(&r, "keepdims", 0) ||
	    (ax2 = lp_rw_shape(&r, &two, 1)) < 0 || (ax1 = lp_rw_shape(&r, &one, 1)) < 0 ||
	    (pmax = lp_rw_add(&r, red, xr, ax2)) < 0 || lp_rw_int(&r, "keepdims", 0))
		return -1;
	/* per row: the smallest global index among the chunks at the extreme */
	if ((m = lp_rw_add(&r, red, pmax, ax1)) < 0 || lp_rw_int(&r, "keepdims", 1) ||
	    (eq = lp_rw_add(&r, "Equal", pmax, m)) < 0 ||
	    (pidx = lp_rw_add(&r, "Cast", pidx, -1)) < 0 || lp_rw_int(&r, "to", IR_I32) ||
	    (in[0] = const_i32(&r, "argmax_offsets", P, C, 0)) < 0 ||
	    (cand = lp_rw_add(&r, "Add", pidx, in[0])) < 0 ||
	    (in[2] = const_i32(&r, "argmax_none", 1, 0, INT32_MAX)) < 0)
		return -1;
	in[0] = eq;
	in[1] = cand;
	if ((sel = lp_rw_add_to(&r, "Where", in, 3, -1)) < 0 ||
	    (out = lp_rw_add(&r, "ReduceMin", sel, ax1)) < 0 || lp_rw_int(&r, "keepdims", 0) ||
	    (out = lp_rw_add(&r, "Cast", out, -1)) < 0 || lp_rw_int(&r, "to", IR_I64) ||
	    (in[1] = lp_rw_shape(&r, ydims, yrank)) < 0)
		return -1;
	in[0] = out;
	*pi = r.pos;
	return lp_rw_become(&r, "Reshape", in, 2);
}

int lw_split_wide_argmax(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
			 struct ir_error *e)
{
	struct ir_infer_opts io = { .fold = 1, .fold_limit = fold_limit };
	int64_t longest = (int64_t)(t->tile_mem / ROW_DIV), any = 0;

	if (longest < 2)
		return 0;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];
		const struct ir_value *x;
		int a, inner = 1;
		int64_t L, C;

		if (n->dead || (n->opid != IR_OP_ArgMax && n->opid != IR_OP_ArgMin) ||
		    ir_attr_int(n, "select_last_index", 0))
			continue;
		x = &g->vals[n->in[0]];
		if (!ir_value_has_shape(x) || (x->dtype != IR_F32 && x->dtype != IR_F16 && x->dtype != IR_I32))
			continue;
		a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
		for (int k = a + 1; k < x->rank; k++)
			inner &= x->dims[k] == 1;
		L = x->dims[a];
		if (!inner || L <= longest)
			continue;
		/* about as many chunks as elements per chunk: both stages short */
		C = isqrt_up(L);
		if (C < MIN_CHUNK)
			C = MIN_CHUNK;
		if (C > longest)
			C = longest;
		if (split_one(g, &i, C, e))
			return -1;
		any = 1;
	}
	if (!any)
		return 0;
	ir_graph_link(g);
	return ir_infer(g, &io, e);
}
