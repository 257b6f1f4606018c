/* SPDX-License-Identifier: MIT */
/*
 * lower_rows.c - ops over [outer][len][inner] views (softmax, reductions,
 * arg-reductions, cumsum, top-k, layer/instance norm, gather): the outer
 * rows are split over tiles, each block reading the contiguous input rows
 * it needs.
 */
#include <string.h>

#include "ir/opgeom.h"
#include "lower_internal.h"

#define MIN_BLOCK 1024

struct rowop {
	uint32_t codelet;
	uint32_t params[8];
	uint32_t np;
	int outer_param;	/* index of `outer` in params (rewritten per block) */
	int64_t outer, in_row, out_row;	/* elements per outer row */
	int64_t align;		/* blocks start at multiples of this many rows */
	int extra[2];		/* values passed whole (scale, bias) or -1 */
	int second_out;		/* TopK indices: 1 */
	uint32_t out_dt[2];
};

static void split3(const struct ir_value *x, int a0, int a1, int64_t *outer,
		   int64_t *len, int64_t *inner)
{
	*outer = *len = *inner = 1;
	for (int i = 0; i < x->rank; i++) {
		if (i < a0)
			*outer *= x->dims[i];
		else if (i <= a1)
			*len *= x->dims[i];
		else
			*inner *= x->dims[i];
	}
}

/* Emits the blocks; outputs 0 (and 1) get tensors of out_dt.  When an
 * output's IR type differs (ArgMax I32 -> int64), a CAST follows. */
static int run_rows(struct lw *l, const struct ir_node *n, struct rowop *r)
{
	const struct ir_graph *g = l->g;
	uint32_t cs = ipu_graph_add_compute_set(l->gb, n->name), cs2 = IPU_GRAPH_INVALID;
	ipu_step xch = IPU_GRAPH_INVALID;
	int nouts = r->second_out ? 2 : 1;
	ipu_tensor outs[2], finals[2];
	int64_t rows = r->outer, nb;
	int64_t per_row_bytes = (r->in_row + r->out_row) * 4;

	if (cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	nb = (rows * (r->in_row + r->out_row) + MIN_BLOCK - 1) / MIN_BLOCK;
	if (nb > (int64_t)l->tiles)
		nb = l->tiles;
	if ((uint64_t)per_row_bytes * (uint64_t)((rows + nb - 1) / (nb ? nb : 1)) > l->budget)
		nb = (int64_t)(((uint64_t)per_row_bytes * (uint64_t)rows + l->budget - 1) / l->budget);
	if (nb > rows / r->align)
		nb = rows / r->align;
	if (nb < 1)
		nb = 1;
	if ((uint64_t)per_row_bytes * (uint64_t)r->align > l->budget)
		return lw_fail_mem(l, (uint64_t)per_row_bytes * (uint64_t)r->align,
				   "%s of %lld elements (rows are not split over tiles)",
				   r->align > 1 ? "a group of rows" : "one row", (long long)r->in_row);
	for (int k = 0; k < nouts; k++) {
		const struct ir_value *o = &g->vals[n->out[k]];
		uint32_t want = lw_dtype(o->dtype);

		outs[k] = lw_tensor(l, k ? "indices" : o->name, r->out_dt[k], (uint64_t)(rows * r->out_row));
		if (outs[k] == IPU_GRAPH_INVALID)
			return lw_check(l);
		finals[k] = outs[k];
		if (want != r->out_dt[k]) {
			finals[k] = lw_tensor(l, o->name, want, (uint64_t)(rows * r->out_row));
			if (finals[k] == IPU_GRAPH_INVALID)
				return lw_check(l);
			if (cs2 == IPU_GRAPH_INVALID && (cs2 = ipu_graph_add_compute_set(l->gb, "cast")) == IPU_GRAPH_INVALID)
				return lw_check(l);
		}
		l->vt[n->out[k]] = finals[k];
	}
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = rows / r->align * b / nb * r->align;
		int64_t r1 = rows / r->align * (b + 1) / nb * r->align;
		uint32_t tile = lw_pick_tile(l);
		struct ipu_slice ops[6];
		uint32_t np = 0, params[8];

		if (b == nb - 1)
			r1 = rows;
		if (r1 <= r0)
			continue;
		if (lw_piece(l, n->in[0], (uint64_t)(r0 * r->in_row), (uint64_t)((r1 - r0) * r->in_row), tile, &xch, &ops[np++]))
			return -1;
		for (int k = 0; k < 2; k++) {
			const struct ir_value *x;

			if (r->extra[k] < 0)
				continue;
			x = &g->vals[r->extra[k]];
			if (lw_piece(l, r->extra[k], 0, (uint64_t)ir_value_numel(x), tile, &xch, &ops[np++]))
				return -1;
		}
		for (int k = 0; k < nouts; k++) {
			uint64_t b0 = (uint64_t)(r0 * r->out_row), cnt = (uint64_t)((r1 - r0) * r->out_row);

			if (ipu_graph_map(l->gb, outs[k], tile, b0, b0 + cnt))
				return lw_check(l);
			lw_account(l, tile, cnt * ipux_dtype_size(r->out_dt[k]));
			ops[np++] = (struct ipu_slice){ outs[k], b0, cnt };
			if (finals[k] != outs[k]) {
				struct ipu_slice c[2] = { ops[np - 1], { finals[k], b0, cnt } };

				if (ipu_graph_map(l->gb, finals[k], tile, b0, b0 + cnt) ||
				    ipu_graph_add_vertex(l->gb, cs2, IPUX_CL_CAST, c, 2, NULL, 0))
					return lw_check(l);
				lw_account(l, tile, cnt * 8);
			}
		}
		memcpy(params, r->params, sizeof(params));
		params[r->outer_param] = (uint32_t)(r1 - r0);
		if (ipu_graph_add_vertex(l->gb, cs, r->codelet, ops, np, params, r->np))
			return lw_check(l);
	}
	if (lw_emit(l, xch, cs))
		return -1;
	if (cs2 != IPU_GRAPH_INVALID && lw_emit(l, IPU_GRAPH_INVALID, cs2))
		return -1;
	return 1;
}

/* The device's reduction of each reducing operator, by the registry's id. */
static int reduce_code(enum ir_op_id id, uint32_t *code)
{
	switch (id) {
	case IR_OP_ReduceSum: *code = IPUX_RED_SUM; break;
	case IR_OP_ReduceMean: *code = IPUX_RED_MEAN; break;
	case IR_OP_ReduceMax: *code = IPUX_RED_MAX; break;
	case IR_OP_ReduceMin: *code = IPUX_RED_MIN; break;
	case IR_OP_ReduceProd: *code = IPUX_RED_PROD; break;
	case IR_OP_ReduceSumSquare: *code = IPUX_RED_SUM_SQUARE; break;
	case IR_OP_ReduceL1: *code = IPUX_RED_L1; break;
	case IR_OP_ReduceL2: *code = IPUX_RED_L2; break;
	case IR_OP_ReduceLogSumExp: *code = IPUX_RED_LOG_SUM_EXP; break;
	case IR_OP_ArgMax: *code = IPUX_RED_ARGMAX; break;
	case IR_OP_ArgMin: *code = IPUX_RED_ARGMIN; break;
	default: return 0;
	}
	return 1;
}

static const struct ir_value *rows_init(struct lw *l, const struct ir_node *n, struct rowop *r)
{
	const struct ir_value *x = &l->g->vals[n->in[0]];

	memset(r, 0, sizeof(*r));
	r->extra[0] = r->extra[1] = -1;
	r->align = 1;
	r->out_dt[0] = lw_dtype(x->dtype);
	return x;
}

static int rows_finish(struct lw *l, const struct ir_node *n, struct rowop *r, int64_t outer)
{
	const struct ir_value *x = &l->g->vals[n->in[0]];

	if (!lw_dtype(x->dtype) || (x->dtype != IR_F32 && x->dtype != IR_F16 && x->dtype != IR_I32))
		return lw_fail(l, "input type %s is not lowered", ir_dtype_name(x->dtype));
	r->outer = outer;
	return run_rows(l, n, r);
}

static int softmax(struct lw *l, const struct ir_node *n, uint32_t flags)
{
	struct rowop r;
	const struct ir_value *x = rows_init(l, n, &r);
	int a = x->rank ? ir_axis(ir_attr_int(n, "axis", -1), x->rank) : 0;
	int64_t outer, len, inner;

	split3(x, a, ir_attr_int(n, "coerce2d", 0) ? x->rank - 1 : a, &outer, &len, &inner);
	r.codelet = IPUX_CL_SOFTMAX;
	r.params[0] = 0;
	r.params[1] = (uint32_t)len;
	r.params[2] = (uint32_t)inner;
	r.params[3] = flags;
	r.np = 4;
	r.in_row = r.out_row = len * inner;
	return rows_finish(l, n, &r, outer);
}

int lw_softmax(struct lw *l, const struct ir_node *n)
{
	return softmax(l, n, 0);
}

int lw_log_softmax(struct lw *l, const struct ir_node *n)
{
	return softmax(l, n, IPUX_SOFTMAX_LOG);
}

/* The Reduce operators over the axes of their second input (or all), ArgMax/ArgMin
 * over `axis`. */
int lw_reduce(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	struct rowop r;
	const struct ir_value *x = rows_init(l, n, &r);
	enum ir_op_id id = n->opid;
	int red[IR_MAX_RANK] = { 0 }, a0 = -1, a1 = -1;
	int64_t outer, len, inner;
	uint32_t code;

	if (!reduce_code(id, &code))
		return 0;
	if (id == IR_OP_ArgMax || id == IR_OP_ArgMin) {
		if (ir_attr_int(n, "select_last_index", 0))
			return lw_fail(l, "select_last_index = 1 is not lowered");
		red[ir_axis(ir_attr_int(n, "axis", 0), x->rank)] = 1;
		r.out_dt[0] = IPUX_DT_I32;
	} else {
		const struct ir_value *ax = n->nin > 1 && n->in[1] >= 0 ? &g->vals[n->in[1]] : NULL;
		int64_t na = ax ? ir_value_numel(ax) : 0;

		if (na == 0 && ir_attr_int(n, "noop_with_empty_axes", 0))
			return lw_fail(l, "noop reduction should have been removed");
		for (int64_t i = 0; i < na; i++)
			red[ir_axis(ir_get_i(ax->data, ax->dtype, (size_t)i), x->rank)] = 1;
		if (na == 0)
			for (int i = 0; i < x->rank; i++)
				red[i] = 1;
	}
	for (int i = 0; i < x->rank; i++) {
		if (!red[i] || x->dims[i] == 1)
			continue;
		if (a0 < 0)
			a0 = i;
		else if (a1 < i - 1) {
			for (int k = a1 + 1; k < i; k++)
				if (x->dims[k] != 1)
					return lw_fail(l, "reducing non-adjacent axes is not lowered (transpose first)");
		}
		a1 = i;
	}
	/* every reduced axis has extent 1: each element is its own row (it
	 * was reduced over axis 0, one result for a [2, 1] input) */
	if (a0 < 0)
		a0 = a1 = x->rank;
	split3(x, a0, a1, &outer, &len, &inner);
	r.codelet = IPUX_CL_REDUCE;
	r.params[0] = code;
	r.params[1] = 0;
	r.params[2] = (uint32_t)len;
	r.params[3] = (uint32_t)inner;
	r.np = 4;
	r.outer_param = 1;
	r.in_row = len * inner;
	r.out_row = inner;
	return rows_finish(l, n, &r, outer);
}

static int global_pool(struct lw *l, const struct ir_node *n, uint32_t code)
{
	struct rowop r;
	const struct ir_value *x = rows_init(l, n, &r);
	int64_t outer = x->dims[0] * x->dims[1];
	int64_t len = ir_value_numel(x) / (outer ? outer : 1);

	r.codelet = IPUX_CL_REDUCE;
	r.params[0] = code;
	r.params[2] = (uint32_t)len;
	r.params[3] = 1;
	r.np = 4;
	r.outer_param = 1;
	r.in_row = len;
	r.out_row = 1;
	return rows_finish(l, n, &r, outer);
}

int lw_global_average_pool(struct lw *l, const struct ir_node *n)
{
	return global_pool(l, n, IPUX_RED_MEAN);
}

int lw_global_max_pool(struct lw *l, const struct ir_node *n)
{
	return global_pool(l, n, IPUX_RED_MAX);
}

int lw_cumsum(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	struct rowop r;
	const struct ir_value *x = rows_init(l, n, &r);
	const struct ir_value *ax = &g->vals[n->in[1]];
	int a = ir_axis(ir_get_i(ax->data, ax->dtype, 0), x->rank);
	int64_t outer, len, inner;

	split3(x, a, a, &outer, &len, &inner);
	r.codelet = IPUX_CL_CUMSUM;
	r.params[1] = (uint32_t)len;
	r.params[2] = (uint32_t)inner;
	r.params[3] = (ir_attr_int(n, "exclusive", 0) ? IPUX_CUMSUM_EXCLUSIVE : 0) |
		      (ir_attr_int(n, "reverse", 0) ? IPUX_CUMSUM_REVERSE : 0);
	r.np = 4;
	r.in_row = r.out_row = len * inner;
	return rows_finish(l, n, &r, outer);
}

int lw_topk(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	struct rowop r;
	const struct ir_value *x = rows_init(l, n, &r);
	int a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
	int64_t k = g->vals[n->out[0]].dims[a];
	int64_t outer, len, inner;

	split3(x, a, a, &outer, &len, &inner);
	r.codelet = IPUX_CL_TOPK;
	r.params[1] = (uint32_t)len;
	r.params[2] = (uint32_t)inner;
	r.params[3] = (uint32_t)k;
	r.params[4] = ir_attr_int(n, "largest", 1) ? IPUX_TOPK_LARGEST : 0;
	r.np = 5;
	r.in_row = len * inner;
	r.out_row = k * inner;
	r.second_out = 1;
	r.out_dt[1] = IPUX_DT_I32;
	return rows_finish(l, n, &r, outer);
}

int lw_layer_norm(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	struct rowop r;
	const struct ir_value *x = rows_init(l, n, &r);
	int a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
	int64_t outer, len, inner;

	if (n->nout > 1)
		for (int k = 1; k < n->nout; k++)
			if (n->out[k] >= 0 && ir_value_uses(g, n->out[k]))
				return lw_fail(l, "the Mean/InvStdDev outputs are not lowered");
	split3(x, 0, a - 1, &outer, &len, &inner);
	/* rows = outer (dims before axis), cols = the rest */
	outer = len;
	len = inner;
	if (a == 0) {
		outer = 1;
		len = ir_value_numel(x);
	}
	if (n->nin < 3 || n->in[2] < 0)
		return lw_fail(l, "LayerNormalization without a bias should have been prepared");
	if (ir_value_numel(&g->vals[n->in[1]]) != len || ir_value_numel(&g->vals[n->in[2]]) != len)
		return lw_fail(l, "scale and bias must have the normalised size");
	r.codelet = IPUX_CL_NORM;
	r.params[1] = (uint32_t)len;
	r.params[2] = lw_f32bits(ir_attr_float(n, "epsilon", 1e-5));
	r.params[3] = 0;
	r.params[4] = (uint32_t)len;
	r.np = 5;
	r.in_row = r.out_row = len;
	r.extra[0] = n->in[1];
	r.extra[1] = n->in[2];
	return rows_finish(l, n, &r, outer);
}

int lw_instance_norm(struct lw *l, const struct ir_node *n)
{
	struct rowop r;
	const struct ir_value *x = rows_init(l, n, &r);
	int64_t C = x->dims[1];
	int64_t outer = x->dims[0] * C;
	int64_t len = ir_value_numel(x) / (outer ? outer : 1);

	r.codelet = IPUX_CL_NORM;
	r.params[1] = (uint32_t)len;
	r.params[2] = lw_f32bits(ir_attr_float(n, "epsilon", 1e-5));
	r.params[3] = 1;
	r.params[4] = (uint32_t)C;
	r.np = 5;
	r.in_row = r.out_row = len;
	r.align = C;
	r.extra[0] = n->in[1];
	r.extra[1] = n->in[2];
	return rows_finish(l, n, &r, outer);
}
