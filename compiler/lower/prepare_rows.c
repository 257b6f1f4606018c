/* SPDX-License-Identifier: MIT */
/*
 * prepare_rows.c - row ops whose one row is too long for a tile (the row
 * lowering places whole rows on tiles, lower_rows.c) rewritten into ops
 * whose rows are short.  The row, x viewed as [O, L], is reduced in two
 * stages: padded to P*C elements (with the reduction's identity), viewed
 * as [O, P, C], reduced over its C chunk elements and then over its P
 * chunks (as ArgMax's split does, prepare_argmax.c):
 *
 *   ReduceSum/Mean/Max/Min over trailing axes -> two-stage reduction
 *                                                (Mean: the sum over L)
 *   Softmax         -> e = Exp(x - max(x)), e / sum(e)
 *   LogSoftmax      -> (x - max(x)) - Log(sum(Exp(x - max(x))))
 *   LayerNormalization -> d = x - mean(x), d / Sqrt(mean(d * d) + eps)
 *                         * scale + bias
 *   CumSum          -> CumSum within each chunk + the exclusive CumSum of
 *                      the chunks' sums (both with the node's exclusive
 *                      and reverse), the padding sliced off
 *   InstanceNormalization -> the same over each (n, c) row, scale and bias
 *                      per channel (the row lowering needs all C rows of
 *                      an image on one tile: 64 channels of 64 x 64 did
 *                      not fit)
 *   TopK            -> TopK of each chunk (chunks at least k long), then
 *                      TopK of the P x k candidates, whose row indices are
 *                      gathered from the candidates' (int32 on the way)
 *
 * The elementwise steps are split over tiles like any other.  float16
 * rows are cast to float32 first and back at the end: the row codelets
 * accumulate in float32, and so do these.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/opgeom.h"
#include "ops/registry.h"
#include "prepare_rw.h"

/* Smallest chunk worth a block of its own. */
#define MIN_CHUNK 1024

/* A constant [O x n] of v. */
static int fill(struct lp_rw *r, int dt, int64_t O, int64_t n, double v)
{
	struct ir_tensor t;
	int64_t d[2] = { O, n };
	int x = ir_value_add_unique(r->g, "row_pad", r->e);

	if (x < 0 || ir_tensor_alloc(&t, dt, 2, d, r->e))
		return -1;
	for (int64_t i = 0; i < O * n; i++)
		ir_set_f(t.data, dt, (size_t)i, v);
	ir_value_set_const(&r->g->vals[x], &t);
	return x;
}

/* red (ReduceSum, ReduceMax, ReduceMin) of each row of x [O, L] in
 * chunks of C, padded with `pad`: [O, 1]. */
static int chunked(struct lp_rw *r, int x, int dt, int64_t O, int64_t L, int64_t C,
		   const char *red, double pad)
{
	int64_t P = (L + C - 1) / C, d3[3] = { O, P, C }, two = 2, one = 1;
	int in[2], v = x;

	if (P * C > L) {
		in[0] = x;
		if ((in[1] = fill(r, dt, O, P * C - L, pad)) < 0 ||
		    (v = lp_rw_add_to(r, "Concat", in, 2, -1)) < 0 || lp_rw_int(r, "axis", 1))
			return -1;
	}
	if ((in[1] = lp_rw_shape(r, d3, 3)) < 0 || (v = lp_rw_add(r, "Reshape", v, in[1])) < 0 ||
	    (in[1] = lp_rw_shape(r, &two, 1)) < 0 || (v = lp_rw_add(r, red, v, in[1])) < 0 ||
	    lp_rw_int(r, "keepdims", 0) ||
	    (in[1] = lp_rw_shape(r, &one, 1)) < 0 || (v = lp_rw_add(r, red, v, in[1])) < 0 ||
	    lp_rw_int(r, "keepdims", 1))
		return -1;
	return v;
}

/* The row's mean, [O, 1]. */
static int row_mean(struct lp_rw *r, int x, int dt, int64_t O, int64_t L, int64_t C)
{
	int s = chunked(r, x, dt, O, L, C, "ReduceSum", 0), k;

	if (s < 0 || (k = lp_rw_scalar(r, dt, 1.0 / (double)L)) < 0)
		return -1;
	return lp_rw_add(r, "Mul", s, k);
}

/* The CumSum of each row of x [O, L] in chunks of C: [O, L]. */
static int cumsum(struct lp_rw *r, int x, int dt, int64_t O, int64_t L, int64_t C, int64_t excl,
		  int64_t rev)
{
	int64_t P = (L + C - 1) / C, d3[3] = { O, P, C }, d2[2] = { O, P * C }, one = 1, two = 2, zero = 0;
	int in[4], v = x, x3, cs, tot, off;

	if (P * C > L) {
		in[0] = x;
		if ((in[1] = fill(r, dt, O, P * C - L, 0)) < 0 ||
		    (v = lp_rw_add_to(r, "Concat", in, 2, -1)) < 0 || lp_rw_int(r, "axis", 1))
			return -1;
	}
	if ((in[1] = lp_rw_shape(r, d3, 3)) < 0 || (x3 = lp_rw_add(r, "Reshape", v, in[1])) < 0 ||
	    (in[1] = lp_rw_ints(r, "cumsum_axis", IR_I64, 0, NULL, &two)) < 0 ||
	    (cs = lp_rw_add(r, "CumSum", x3, in[1])) < 0 || lp_rw_int(r, "exclusive", excl) ||
	    lp_rw_int(r, "reverse", rev) ||
	    (in[1] = lp_rw_shape(r, &two, 1)) < 0 || (tot = lp_rw_add(r, "ReduceSum", x3, in[1])) < 0 ||
	    lp_rw_int(r, "keepdims", 1) ||
	    (in[1] = lp_rw_ints(r, "cumsum_axis", IR_I64, 0, NULL, &one)) < 0 ||
	    (off = lp_rw_add(r, "CumSum", tot, in[1])) < 0 || lp_rw_int(r, "exclusive", 1) ||
	    lp_rw_int(r, "reverse", rev) ||
	    (v = lp_rw_add(r, "Add", cs, off)) < 0 ||
	    (in[1] = lp_rw_shape(r, d2, 2)) < 0 || (v = lp_rw_add(r, "Reshape", v, in[1])) < 0)
		return -1;
	if (P * C == L)
		return v;
	in[0] = v;
	if ((in[1] = lp_rw_shape(r, &zero, 1)) < 0 || (in[2] = lp_rw_shape(r, &L, 1)) < 0 ||
	    (in[3] = lp_rw_shape(r, &one, 1)) < 0)
		return -1;
	return lp_rw_add_to(r, "Slice", in, 4, -1);
}

struct rowsplit {
	int kind;		/* 0 reduce, 1 softmax, 2 log-softmax, 3 layer norm, 4 cumsum,
				 * 5 top-k, 6 instance norm */
	int64_t C;		/* instance norm: channels (rows per image) */
	int64_t k;		/* top-k: k */
	const char *red;	/* reduce: ReduceSum, ReduceMax, ReduceMin */
	int mean;
	int64_t O, L;
};

/* What the node is as a row op over [O, L] (rows of its trailing axes),
 * 0 if it is none this rewrite handles. */
static int classify(const struct ir_graph *g, const struct ir_node *n, struct rowsplit *s)
{
	const struct ir_value *x = &g->vals[n->in[0]];
	int a = -1, red[IR_MAX_RANK] = { 0 };

	memset(s, 0, sizeof(*s));
	if (!ir_value_has_shape(x) || (x->dtype != IR_F32 && x->dtype != IR_F16) || x->rank < 1)
		return 0;
	if (n->opid == IR_OP_ReduceSum || n->opid == IR_OP_ReduceMean || n->opid == IR_OP_ReduceMax ||
	    n->opid == IR_OP_ReduceMin) {
		const struct ir_value *ax = n->nin > 1 && n->in[1] >= 0 ? &g->vals[n->in[1]] : NULL;
		int64_t na = ax ? ir_value_numel(ax) : 0;

		if (ax && !ax->data)
			return 0;
		if (na == 0 && ir_attr_int(n, "noop_with_empty_axes", 0))
			return 0;
		for (int64_t i = 0; i < na; i++)
			red[ir_axis(ir_get_i(ax->data, ax->dtype, (size_t)i), x->rank)] = 1;
		for (int i = 0; i < x->rank && na == 0; i++)
			red[i] = 1;
		/* the reduced axes must be the trailing ones (dims of 1 aside) */
		for (int i = 0; i < x->rank; i++)
			if (red[i] && a < 0)
				a = i;
		if (a < 0)
			return 0;
		for (int i = a; i < x->rank; i++)
			if (!red[i] && x->dims[i] != 1)
				return 0;
		s->kind = 0;
		s->mean = n->opid == IR_OP_ReduceMean;
		s->red = s->mean ? "ReduceSum" : n->op;
	} else if (n->opid == IR_OP_Softmax || n->opid == IR_OP_LogSoftmax) {
		a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
		if (!ir_attr_int(n, "coerce2d", 0))
			for (int i = a + 1; i < x->rank; i++)
				if (x->dims[i] != 1)
					return 0;
		s->kind = n->opid == IR_OP_LogSoftmax ? 2 : 1;
	} else if (n->opid == IR_OP_CumSum) {
		const struct ir_value *ax = &g->vals[n->in[1]];

		if (!ax->data || ir_value_numel(ax) != 1)
			return 0;
		a = ir_axis(ir_get_i(ax->data, ax->dtype, 0), x->rank);
		for (int i = a + 1; i < x->rank; i++)
			if (x->dims[i] != 1)
				return 0;
		s->kind = 4;
	} else if (n->opid == IR_OP_TopK) {
		const struct ir_value *kv = &g->vals[n->in[1]];

		if (!kv->data || ir_value_numel(kv) != 1 || n->nout != 2 || n->out[1] < 0)
			return 0;
		a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
		for (int i = a + 1; i < x->rank; i++)
			if (x->dims[i] != 1)
				return 0;
		s->kind = 5;
		s->k = ir_get_i(kv->data, kv->dtype, 0);
		if (s->k < 1)
			return 0;
	} else if (n->opid == IR_OP_InstanceNormalization) {
		if (x->rank < 3 || n->nin < 3 || n->in[1] < 0 || n->in[2] < 0)
			return 0;
		a = 2;
		s->kind = 6;
		s->C = x->dims[1];
	} else if (n->opid == IR_OP_LayerNormalization) {
		a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
		for (int k = 1; k < n->nout; k++)
			if (n->out[k] >= 0 && (ir_value_uses(g, n->out[k]) || g->vals[n->out[k]].is_output))
				return 0;
		s->kind = 3;
	} else {
		return 0;
	}
	s->O = 1;
	s->L = 1;
	for (int i = 0; i < x->rank; i++) {
		if (i < a)
			s->O *= x->dims[i];
		else
			s->L *= x->dims[i];
	}
	return 1;
}

/* Inserts a TopK of x (its last axis; kv the k input) with both outputs;
 * the indices' value in *idx. */
static int topk(struct lp_rw *r, int x, int kv, int64_t largest, int *idx)
{
	char nm[300];
	int in[2] = { x, kv }, out[2];

	for (int k = 0; k < 2; k++) {
		snprintf(nm, sizeof(nm), "%s/TopK%s", r->name, k ? "_indices" : "");
		if ((out[k] = ir_value_add_unique(r->g, nm, r->e)) < 0)
			return -1;
	}
	if (ir_node_insert(r->g, r->pos, r->g->vals[out[0]].name, "TopK", in, 2, out, 2, r->e) < 0)
		return -1;
	r->pos++;
	if (lp_rw_int(r, "axis", -1) || lp_rw_int(r, "largest", largest) || lp_rw_int(r, "sorted", 1))
		return -1;
	*idx = out[1];
	return out[0];
}

/* TopK of each row of x [O, L] in chunks of C >= k: values [O, k] into
 * *vals, int32 row indices [O, k] into *idx. */
static int topk_rows(struct lp_rw *r, int x, int dt, int kv, int64_t O, int64_t L, int64_t C, int64_t k,
		     int64_t largest, int *vals, int *idx)
{
	int64_t P = (L + C - 1) / C, d3[3] = { O, P, C }, dc[2] = { O, P * k }, flat = O * P * k;
	int64_t ok = O * k, *off;
	int in[2], v = x, ti, ci, cv, j;

	if (P * C > L) {
		in[0] = x;
		if ((in[1] = fill(r, dt, O, P * C - L, largest ? -INFINITY : INFINITY)) < 0 ||
		    (v = lp_rw_add_to(r, "Concat", in, 2, -1)) < 0 || lp_rw_int(r, "axis", 1))
			return -1;
	}
	if ((in[1] = lp_rw_shape(r, d3, 3)) < 0 || (v = lp_rw_add(r, "Reshape", v, in[1])) < 0 ||
	    (v = topk(r, v, kv, largest, &ti)) < 0)
		return -1;
	/* the candidates' row indices: chunk p's start added */
	if (!(off = malloc((size_t)(P > O ? P : O) * sizeof(int64_t))))
		return ir_err(r->e, "out of memory");
	for (int64_t p = 0; p < P; p++)
		off[p] = p * C;
	if ((ti = lp_rw_add(r, "Cast", ti, -1)) < 0 || lp_rw_int(r, "to", IR_I32) ||
	    (in[1] = lp_rw_ints(r, "topk_chunk", IR_I32, 3, (int64_t[]){ 1, P, 1 }, off)) < 0 ||
	    (ti = lp_rw_add(r, "Add", ti, in[1])) < 0 ||
	    (in[1] = lp_rw_shape(r, &flat, 1)) < 0 || (ci = lp_rw_add(r, "Reshape", ti, in[1])) < 0 ||
	    (in[1] = lp_rw_shape(r, dc, 2)) < 0 || (cv = lp_rw_add(r, "Reshape", v, in[1])) < 0 ||
	    (*vals = topk(r, cv, kv, largest, &j)) < 0) {
		free(off);
		return -1;
	}
	/* the winners' candidate positions, flat over the rows */
	for (int64_t o = 0; o < O; o++)
		off[o] = o * P * k;
	if ((j = lp_rw_add(r, "Cast", j, -1)) < 0 || lp_rw_int(r, "to", IR_I32) ||
	    (in[1] = lp_rw_ints(r, "topk_row", IR_I32, 2, (int64_t[]){ O, 1 }, off)) < 0 ||
	    (j = lp_rw_add(r, "Add", j, in[1])) < 0 ||
	    (in[1] = lp_rw_shape(r, &ok, 1)) < 0 || (j = lp_rw_add(r, "Reshape", j, in[1])) < 0) {
		free(off);
		return -1;
	}
	free(off);
	in[0] = ci;
	in[1] = j;
	if ((*idx = lp_rw_add_to(r, "Gather", in, 2, -1)) < 0 || lp_rw_int(r, "axis", 0))
		return -1;
	return 0;
}

static int64_t isqrt_up(int64_t v)
{
	int64_t q = (int64_t)sqrt((double)v);

	while (q * q < v)
		q++;
	return q;
}

static int split_one(struct ir_graph *g, int *pi, const struct rowsplit *s, int64_t longest,
		     struct ir_error *e)
{
	const struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *y = &g->vals[n->out[0]];
	int dt = x->dtype, cdt = IR_F32, in[2], v, kind = s->kind;
	int64_t O = s->O, L = s->L, C = isqrt_up(L), d2[2] = { s->O, s->L }, ydims[IR_MAX_RANK];
	int yrank = y->rank, scale = n->nin > 1 ? n->in[1] : -1, bias = n->nin > 2 ? n->in[2] : -1;
	double eps = ir_attr_float(n, "epsilon", 1e-5);
	int64_t excl = ir_attr_int(n, "exclusive", 0), rev = ir_attr_int(n, "reverse", 0);
	int64_t largest = ir_attr_int(n, "largest", 1), idims[IR_MAX_RANK];
	int kin = n->nin > 1 ? n->in[1] : -1, iout = n->nout > 1 ? n->out[1] : -1, irank = 0;
	struct lp_rw r = { g, *pi, "", e };

	/* n, x and y move once nodes are inserted: everything read first */
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	memcpy(ydims, y->dims, sizeof(ydims));
	if (iout >= 0) {
		irank = g->vals[iout].rank;
		memcpy(idims, g->vals[iout].dims, sizeof(idims));
	}
	if (C < MIN_CHUNK)
		C = MIN_CHUNK;
	if (C > longest)
		C = longest;
	if (kind == 5 && C < s->k)
		C = s->k;
	if ((in[1] = lp_rw_shape(&r, d2, 2)) < 0 || (v = lp_rw_add(&r, "Reshape", n->in[0], in[1])) < 0)
		return -1;
	if (kind == 5) {
		/* no arithmetic on the values: they stay in their type */
		int vals = -1, idx = -1, ix;

		if (topk_rows(&r, v, dt, kin, O, L, C, s->k, largest, &vals, &idx) ||
		    (idx = lp_rw_add(&r, "Cast", idx, -1)) < 0 || lp_rw_int(&r, "to", IR_I64) ||
		    (ix = lp_rw_shape(&r, idims, irank)) < 0)
			return -1;
		in[0] = idx;
		in[1] = ix;
		if (lp_rw_add_to(&r, "Reshape", in, 2, iout) < 0 || (in[1] = lp_rw_shape(&r, ydims, yrank)) < 0)
			return -1;
		in[0] = vals;
		*pi = r.pos;
		return lp_rw_become(&r, "Reshape", in, 2);
	}
	if (dt != cdt && ((v = lp_rw_add(&r, "Cast", v, -1)) < 0 || lp_rw_int(&r, "to", cdt)))
		return -1;
	if (kind == 0) {
		v = s->mean ? row_mean(&r, v, cdt, O, L, C) :
		    chunked(&r, v, cdt, O, L, C, s->red,
			    !strcmp(s->red, "ReduceSum") ? 0 : !strcmp(s->red, "ReduceMax") ? -INFINITY : INFINITY);
	} else if (kind == 1 || kind == 2) {
		int m = chunked(&r, v, cdt, O, L, C, "ReduceMax", -INFINITY), d, ex, sum;

		if (m < 0 || (d = lp_rw_add(&r, "Sub", v, m)) < 0 || (ex = lp_rw_add(&r, "Exp", d, -1)) < 0 ||
		    (sum = chunked(&r, ex, cdt, O, L, C, "ReduceSum", 0)) < 0)
			return -1;
		if (kind == 1)
			v = lp_rw_add(&r, "Div", ex, sum);
		else if ((sum = lp_rw_add(&r, "Log", sum, -1)) >= 0)
			v = lp_rw_add(&r, "Sub", d, sum);
		else
			v = -1;
	} else if (kind == 4) {
		v = cumsum(&r, v, cdt, O, L, C, excl, rev);
	} else {
		int mu = row_mean(&r, v, cdt, O, L, C), d, sq, var, k;
		int64_t one = L, nc1[3] = { O / (s->C ? s->C : 1), s->C, L }, c1[2] = { s->C, 1 };

		if (mu < 0 || (d = lp_rw_add(&r, "Sub", v, mu)) < 0 || (sq = lp_rw_add(&r, "Mul", d, d)) < 0 ||
		    (var = row_mean(&r, sq, cdt, O, L, C)) < 0 || (k = lp_rw_scalar(&r, cdt, eps)) < 0 ||
		    (var = lp_rw_add(&r, "Add", var, k)) < 0 || (var = lp_rw_add(&r, "Sqrt", var, -1)) < 0 ||
		    (v = lp_rw_add(&r, "Div", d, var)) < 0)
			return -1;
		/* scale and bias over the row's L elements (layer norm) or per
		 * channel, the rows seen as [N, C, L] (instance norm) */
		if (kind == 6 && ((in[1] = lp_rw_shape(&r, nc1, 3)) < 0 ||
				  (v = lp_rw_add(&r, "Reshape", v, in[1])) < 0))
			return -1;
		for (int k2 = 0; k2 < 2; k2++) {
			int w = k2 ? bias : scale;

			if (w < 0)
				continue;
			if ((in[1] = kind == 6 ? lp_rw_shape(&r, c1, 2) : lp_rw_shape(&r, &one, 1)) < 0 ||
			    (w = lp_rw_add(&r, "Reshape", w, in[1])) < 0 ||
			    (g->vals[w].dtype != cdt && ((w = lp_rw_add(&r, "Cast", w, -1)) < 0 ||
							 lp_rw_int(&r, "to", cdt))) ||
			    (v = lp_rw_add(&r, k2 ? "Add" : "Mul", v, w)) < 0)
				return -1;
		}
	}
	if (v < 0)
		return -1;
	if (dt != cdt && ((v = lp_rw_add(&r, "Cast", v, -1)) < 0 || lp_rw_int(&r, "to", dt)))
		return -1;
	if ((in[1] = lp_rw_shape(&r, ydims, yrank)) < 0)
		return -1;
	in[0] = v;
	*pi = r.pos;
	return lp_rw_become(&r, "Reshape", in, 2);
}

int lw_split_long_rows(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
		       struct ir_error *e)
{
	struct ir_infer_opts io = { .fold = 1, .fold_limit = fold_limit };
	uint64_t budget = lp_op_budget(g, t);
	int64_t longest = (int64_t)(budget / 4 / 4);
	int any = 0;

	if (longest < 2)
		return 0;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];
		struct rowsplit s;
		int64_t out_row;

		if (n->dead || !classify(g, n, &s))
			continue;
		/* the row lowering's bytes per row (in and out as float32) */
		out_row = s.kind == 0 ? 1 : s.kind == 5 ? s.k : s.L;
		/* instance norm: a block holds an image's C rows at least */
		if ((uint64_t)(s.L + out_row) * 4 * (uint64_t)(s.kind == 6 ? s.C : 1) <= budget)
			continue;
		/* top-k: the candidates' second stage must be short itself */
		if (s.kind == 5 && (uint64_t)(s.k * ((s.L + longest - 1) / longest) + s.k) * 4 > budget)
			continue;
		if (split_one(g, &i, &s, longest, e))
			return -1;
		any = 1;
	}
	if (!any)
		return 0;
	ir_graph_link(g);
	return ir_infer(g, &io, e);
}
