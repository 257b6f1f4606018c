/* SPDX-License-Identifier: MIT */
/*
 * lower_elementwise.c - unary, binary, where and cast ops, spread over
 * tiles.  The output's shape is coalesced with its operands' broadcast
 * strides (adjacent dims that are contiguous for every operand merge, dims
 * of size 1 drop), then split into blocks of whole rows of the first
 * coalesced dim, one block per tile (more when the rows need it; a row too
 * large for a tile is split the same way over the next dim).  Each block reads, for each operand,
 * the contiguous range its strides touch: local if already there, a frozen
 * copy for constants, otherwise an exchange copy before the compute set.
 */
#include <string.h>

#include "ir/opgeom.h"
#include "lower_internal.h"

#define R IR_MAX_RANK
#define MAXOP 3
#define MIN_BLOCK 1024	/* elements per tile before spreading wider */

/* The device's operation code of each unary and binary operator, by the
 * registry's id: a misspelt operator does not compile. */
static int unary_code(enum ir_op_id id, uint32_t *op)
{
	switch (id) {
	case IR_OP_Relu: *op = IPUX_UN_RELU; break;
	case IR_OP_Sigmoid: *op = IPUX_UN_SIGMOID; break;
	case IR_OP_Tanh: *op = IPUX_UN_TANH; break;
	case IR_OP_Exp: *op = IPUX_UN_EXP; break;
	case IR_OP_Log: *op = IPUX_UN_LOG; break;
	case IR_OP_Sqrt: *op = IPUX_UN_SQRT; break;
	case IR_OP_Erf: *op = IPUX_UN_ERF; break;
	case IR_OP_Gelu: *op = IPUX_UN_GELU; break;
	case IR_OP_Neg: *op = IPUX_UN_NEG; break;
	case IR_OP_Abs: *op = IPUX_UN_ABS; break;
	case IR_OP_Reciprocal: *op = IPUX_UN_RECIPROCAL; break;
	case IR_OP_LeakyRelu: *op = IPUX_UN_LEAKY_RELU; break;
	case IR_OP_HardSigmoid: *op = IPUX_UN_HARD_SIGMOID; break;
	case IR_OP_HardSwish: *op = IPUX_UN_HARD_SWISH; break;
	case IR_OP_Clip: *op = IPUX_UN_CLIP; break;
	case IR_OP_Not: *op = IPUX_UN_NOT; break;
	case IR_OP_Floor: *op = IPUX_UN_FLOOR; break;
	case IR_OP_Ceil: *op = IPUX_UN_CEIL; break;
	case IR_OP_Round: *op = IPUX_UN_ROUND; break;
	case IR_OP_Sign: *op = IPUX_UN_SIGN; break;
	case IR_OP_Sin: *op = IPUX_UN_SIN; break;
	case IR_OP_Cos: *op = IPUX_UN_COS; break;
	case IR_OP_Elu: *op = IPUX_UN_ELU; break;
	case IR_OP_Softplus: *op = IPUX_UN_SOFTPLUS; break;
	case IR_OP_Selu: *op = IPUX_UN_SELU; break;
	default: return 0;
	}
	return 1;
}

static int binary_code(enum ir_op_id id, uint32_t *op)
{
	switch (id) {
	case IR_OP_Add: *op = IPUX_BIN_ADD; break;
	case IR_OP_Sub: *op = IPUX_BIN_SUB; break;
	case IR_OP_Mul: *op = IPUX_BIN_MUL; break;
	case IR_OP_Div: *op = IPUX_BIN_DIV; break;
	case IR_OP_Pow: *op = IPUX_BIN_POW; break;
	case IR_OP_Max: *op = IPUX_BIN_MAX; break;
	case IR_OP_Min: *op = IPUX_BIN_MIN; break;
	case IR_OP_Mod: *op = IPUX_BIN_MOD; break;
	case IR_OP_Equal: *op = IPUX_BIN_EQUAL; break;
	case IR_OP_Less: *op = IPUX_BIN_LESS; break;
	case IR_OP_LessOrEqual: *op = IPUX_BIN_LESS_EQUAL; break;
	case IR_OP_Greater: *op = IPUX_BIN_GREATER; break;
	case IR_OP_GreaterOrEqual: *op = IPUX_BIN_GREATER_EQUAL; break;
	case IR_OP_And: *op = IPUX_BIN_AND; break;
	case IR_OP_Or: *op = IPUX_BIN_OR; break;
	case IR_OP_Xor: *op = IPUX_BIN_XOR; break;
	case IR_OP_PRelu: *op = IPUX_BIN_PRELU; break;
	default: return 0;
	}
	return 1;
}

/* Unary params: [op, alpha, beta] with the op's defaults. */
static int unary_params(struct lw *l, const struct ir_node *n, uint32_t op,
			uint32_t *p)
{
	const struct ir_graph *g = l->g;
	double a = 0, b = 0;

	p[0] = op;
	switch (op) {
	case IPUX_UN_LEAKY_RELU: a = ir_attr_float(n, "alpha", 0.01); break;
	case IPUX_UN_HARD_SIGMOID:
		a = ir_attr_float(n, "alpha", 0.2);
		b = ir_attr_float(n, "beta", 0.5);
		break;
	case IPUX_UN_ELU: a = ir_attr_float(n, "alpha", 1.0); break;
	case IPUX_UN_SELU:
		a = ir_attr_float(n, "alpha", 1.67326319217681884765625);
		b = ir_attr_float(n, "gamma", 1.05070102214813232421875);
		break;
	case IPUX_UN_GELU:
		if (!strcmp(ir_attr_str(n, "approximate", "none"), "tanh"))
			p[0] = IPUX_UN_GELU_TANH;
		break;
	case IPUX_UN_CLIP:
		a = -3.4028234663852886e38;
		b = 3.4028234663852886e38;
		for (int k = 1; k < 3; k++) {
			const struct ir_value *v = k < n->nin && n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;

			if (!v)
				continue;
			if (!v->data)
				return lw_fail(l, "Clip bounds must be constants to lower");
			if (k == 1)
				a = ir_get_f(v->data, v->dtype, 0);
			else
				b = ir_get_f(v->data, v->dtype, 0);
		}
		break;
	default:
		break;
	}
	p[1] = lw_f32bits(a);
	p[2] = lw_f32bits(b);
	return 0;
}

struct ew {
	int rank;
	int64_t dims[R];
	int64_t st[MAXOP][R];	/* element strides of each operand */
	int nops;
	int64_t base[MAXOP];	/* a sub-view's first element of each operand */
	int64_t obase;		/* and of the output */
};

/* Coalesces the output shape and the operands' broadcast strides. */
static void coalesce(const struct ir_graph *g, const struct ir_node *n,
		     const int *ins, int nops, struct ew *w)
{
	const struct ir_value *o = &g->vals[n->out[0]];
	int r = o->rank;
	int64_t dims[R], st[MAXOP][R];
	int k2 = 0;

	w->nops = nops;
	w->obase = 0;
	for (int k = 0; k < nops; k++)
		w->base[k] = 0;
	for (int i = 0; i < r; i++)
		dims[i] = o->dims[i];
	for (int k = 0; k < nops; k++) {
		const struct ir_value *v = &g->vals[ins[k]];
		int64_t s = 1;

		for (int i = r - 1; i >= 0; i--) {
			int j = i - (r - v->rank);

			if (j >= 0 && v->dims[j] != 1) {
				st[k][i] = s;
			} else {
				st[k][i] = 0;
			}
			if (j >= 0)
				s *= v->dims[j];
		}
	}
	/* drop size-1 dims, merge contiguous neighbours */
	for (int i = 0; i < r; i++) {
		int merge;

		if (dims[i] == 1)
			continue;
		merge = k2 > 0;
		for (int k = 0; k < nops && merge; k++)
			merge = w->st[k][k2 - 1] == st[k][i] * dims[i];
		if (merge) {
			w->dims[k2 - 1] *= dims[i];
			for (int k = 0; k < nops; k++)
				w->st[k][k2 - 1] = st[k][i];
			continue;
		}
		w->dims[k2] = dims[i];
		for (int k = 0; k < nops; k++)
			w->st[k][k2] = st[k][i];
		k2++;
	}
	if (k2 == 0) {
		w->dims[0] = 1;
		for (int k = 0; k < nops; k++)
			w->st[k][0] = 0;
		k2 = 1;
	}
	w->rank = k2;
}

/* One block of output rows [r0, r1) (rows of `inner` elements) on `tile`. */
static int emit_block(struct lw *l, const struct ir_node *n, const struct ew *w,
		      uint32_t codelet, uint32_t op, const uint32_t *up, const int *ins,
		      int nops, ipu_tensor out, uint32_t odt, uint32_t cs, int64_t r0,
		      int64_t r1, int64_t inner, uint32_t tile, ipu_step *xchp)
{
	struct ipu_slice ops[MAXOP + 1];
	uint32_t params[2 + 4 * R];
	uint32_t np = 0;
	ipu_step xch = *xchp;

	(void)n;
	if (ipu_graph_map(l->gb, out, tile, (uint64_t)(w->obase + r0 * inner),
			  (uint64_t)(w->obase + r1 * inner)))
		return lw_check(l);
	lw_account(l, tile, (uint64_t)((r1 - r0) * inner) * ipux_dtype_size(odt));
	for (int k = 0; k < nops; k++) {
		int64_t lo = w->base[k] + r0 * w->st[k][0], hi = lo + (r1 - r0 - 1) * w->st[k][0] + 1;

		for (int i = 1; i < w->rank; i++)
			hi += (w->dims[i] - 1) * w->st[k][i];
		if (lw_piece(l, ins[k], (uint64_t)lo, (uint64_t)(hi - lo), tile, &xch, &ops[k]))
			return -1;
	}
	ops[nops] = (struct ipu_slice){ out, (uint64_t)(w->obase + r0 * inner), (uint64_t)((r1 - r0) * inner) };
	if (codelet == IPUX_CL_UNARY) {
		memcpy(params, up, 3 * sizeof(uint32_t));
		np = 3;
	} else if (codelet == IPUX_CL_BINARY || codelet == IPUX_CL_WHERE) {
		if (codelet == IPUX_CL_BINARY)
			params[np++] = op;
		params[np++] = (uint32_t)w->rank;
		params[np++] = (uint32_t)(r1 - r0);
		for (int i = 1; i < w->rank; i++)
			params[np++] = (uint32_t)w->dims[i];
		for (int k = 0; k < nops; k++)
			for (int i = 0; i < w->rank; i++)
				params[np++] = (uint32_t)w->st[k][i];
	}
	*xchp = xch;
	if (ipu_graph_add_vertex(l->gb, cs, codelet, ops, (uint32_t)nops + 1, params, np))
		return lw_check(l);
	return 0;
}

/* Row i of view w as a view of one dim fewer. */
static void sub_view(const struct ew *w, int64_t i, struct ew *sub)
{
	int64_t inner = 1;

	for (int d = 1; d < w->rank; d++)
		inner *= w->dims[d];
	*sub = *w;
	sub->rank = w->rank - 1;
	memmove(sub->dims, w->dims + 1, (size_t)sub->rank * sizeof(sub->dims[0]));
	for (int k = 0; k < w->nops; k++) {
		memmove(sub->st[k], w->st[k] + 1, (size_t)sub->rank * sizeof(sub->st[k][0]));
		sub->base[k] = w->base[k] + i * w->st[k][0];
	}
	sub->obase = w->obase + i * inner;
}

/* Output elements [begin, end) of view w (from its obase) on `tile`: its
 * whole rows as one block, a partial row at either end as blocks of that
 * row's view (and so on down the dims). */
static int follow_range(struct lw *l, const struct ir_node *n, const struct ew *w,
			uint32_t codelet, uint32_t op, const uint32_t *up, const int *ins, int nops,
			ipu_tensor out, uint32_t odt, uint32_t cs, int64_t begin, int64_t end,
			uint32_t tile, ipu_step *xch)
{
	int64_t inner = 1, r0, r1;
	struct ew sub;

	for (int d = 1; d < w->rank; d++)
		inner *= w->dims[d];
	r0 = (begin + inner - 1) / inner;
	r1 = end / inner;
	if (r0 > r1) {
		/* inside one row */
		sub_view(w, begin / inner, &sub);
		return follow_range(l, n, &sub, codelet, op, up, ins, nops, out, odt, cs,
				    begin % inner, end - begin / inner * inner, tile, xch);
	}
	if (begin < r0 * inner) {
		sub_view(w, r0 - 1, &sub);
		if (follow_range(l, n, &sub, codelet, op, up, ins, nops, out, odt, cs,
				 begin - (r0 - 1) * inner, inner, tile, xch))
			return -1;
	}
	if (r1 > r0 && emit_block(l, n, w, codelet, op, up, ins, nops, out, odt, cs, r0, r1, inner,
				  tile, xch))
		return -1;
	if (end > r1 * inner) {
		sub_view(w, r1, &sub);
		if (follow_range(l, n, &sub, codelet, op, up, ins, nops, out, odt, cs, 0,
				 end - r1 * inner, tile, xch))
			return -1;
	}
	return 0;
}

/* Bytes one row of the view's first dim needs on a tile: its output and
 * the operand ranges it reads. */
static uint64_t row_bytes(const struct ir_graph *g, const struct ew *w, const int *ins,
			  int nops, uint32_t odt)
{
	uint64_t inner = 1, b;

	for (int i = 1; i < w->rank; i++)
		inner *= (uint64_t)w->dims[i];
	b = inner * ipux_dtype_size(odt);
	for (int k = 0; k < nops; k++) {
		uint64_t span = 1;

		for (int i = 1; i < w->rank; i++)
			span += (uint64_t)((w->dims[i] - 1) * w->st[k][i]);
		b += span * ir_dtype_size(g->vals[ins[k]].dtype);
	}
	return b;
}

/* The view's rows in blocks over the tiles, as many blocks as the budget
 * needs; when one row is more than a tile can hold, each row is spread the
 * same way over its next dim. */
static int spread(struct lw *l, const struct ir_node *n, const struct ew *w, uint32_t codelet,
		  uint32_t op, const uint32_t *up, const int *ins, int nops, ipu_tensor out,
		  uint32_t odt, uint32_t cs, ipu_step *xch)
{
	int64_t rows = w->dims[0], inner = 1, total, nb;
	uint64_t rb = row_bytes(l->g, w, ins, nops, odt);

	for (int i = 1; i < w->rank; i++)
		inner *= w->dims[i];
	total = rows * inner;
	if (rb > l->budget && w->rank > 1) {
		struct ew sub;

		for (int64_t i = 0; i < rows; i++) {
			sub_view(w, i, &sub);
			if (spread(l, n, &sub, codelet, op, up, ins, nops, out, odt, cs, xch))
				return -1;
		}
		return 0;
	}
	if (rb > l->budget)
		return lw_fail_mem(l, rb, "one element with its operands");
	nb = (total + MIN_BLOCK - 1) / MIN_BLOCK;
	if (nb > (int64_t)l->tiles)
		nb = l->tiles;
	/* at least as many blocks as the rows' bytes need */
	if ((uint64_t)nb < ((uint64_t)rows * rb + l->budget - 1) / l->budget)
		nb = (int64_t)(((uint64_t)rows * rb + l->budget - 1) / l->budget);
	if (nb > rows)
		nb = rows;
	if (nb < 1)
		nb = 1;
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = rows * b / nb, r1 = rows * (b + 1) / nb;

		if (r1 <= r0)
			continue;
		if (emit_block(l, n, w, codelet, op, up, ins, nops, out, odt, cs, r0, r1, inner,
			       lw_pick_tile(l), xch))
			return -1;
	}
	return 0;
}

/* One elementwise node: `codelet` with `nops` operands and, for unary and
 * binary codelets, the operation `op`. */
static int elementwise(struct lw *l, const struct ir_node *n, uint32_t codelet, int nops,
		       uint32_t op)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *o = &g->vals[n->out[0]];
	uint32_t odt = lw_dtype(o->dtype);
	int ins[MAXOP];
	struct ew w;
	int64_t total = ir_value_numel(o), inner = 1, rows;
	uint32_t cs;
	ipu_tensor out;
	ipu_step xch = IPU_GRAPH_INVALID;
	uint32_t up[3] = { 0 };
	struct lw_act act = { .node = -1 };

	if (codelet == IPUX_CL_UNARY && unary_params(l, n, op, up))
		return -1;
	if (!odt)
		return lw_fail(l, "output type %s is not supported by the device", ir_dtype_name(o->dtype));
	for (int k = 0; k < nops; k++) {
		ins[k] = n->in[k];
		if (!lw_dtype(g->vals[ins[k]].dtype))
			return lw_fail(l, "input %d has type %s, which the device does not support",
				       k, ir_dtype_name(g->vals[ins[k]].dtype));
	}
	if (codelet == IPUX_CL_BINARY && g->vals[ins[0]].dtype != g->vals[ins[1]].dtype)
		return lw_fail(l, "inputs of different types (%s, %s) are not lowered",
			       ir_dtype_name(g->vals[ins[0]].dtype), ir_dtype_name(g->vals[ins[1]].dtype));
	coalesce(g, n, ins, nops, &w);
	if ((codelet == IPUX_CL_UNARY || codelet == IPUX_CL_CAST) && w.st[0][w.rank - 1] != 1 && total > 1)
		return lw_fail(l, "broadcasting unary input");
	/* a float Add read only by a Relu: one pass, Add then Relu (lower_act.c) */
	if (codelet == IPUX_CL_BINARY && op == IPUX_BIN_ADD &&
	    lw_act_find_relu(l, n->out[0], odt != IPUX_DT_F32 && odt != IPUX_DT_F16, &act))
		op = IPUX_BIN_ADD_RELU;
	/* operands in a MatMul's column blocks: computed on the blocks, in
	 * place (lower_blocked.c) */
	{
		int r = lw_blocked_elementwise(l, n, codelet, op, up, ins, nops);

		if (r > 0)
			lw_act_absorb(l, n->out[0], IPU_GRAPH_INVALID, &act);
		if (r)
			return r;
	}
	for (int i = 1; i < w.rank; i++)
		inner *= w.dims[i];
	rows = w.dims[0];
	out = lw_tensor(l, o->name, odt, (uint64_t)total);
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	l->vt[n->out[0]] = out;
	lw_act_absorb(l, n->out[0], out, &act);
	/* An operand with the output's full shape: follow its layout (whole
	 * rows to the tile holding each row's first element), so it is read
	 * where it lives and only the others move. */
	{
		int lead = -1;

		for (int k = 0; k < nops && lead < 0; k++) {
			int64_t dense = 1, ok = l->vt[ins[k]] != IPU_GRAPH_INVALID &&
						ipu_graph_tensor_elems(l->gb, l->vt[ins[k]]) == (uint64_t)total;

			for (int i = w.rank - 1; i >= 0 && ok; i--) {
				ok = w.st[k][i] == dense;
				dense *= w.dims[i];
			}
			if (ok)
				lead = k;
		}
		/* following the lead is only for rows a tile can hold */
		if (lead >= 0 && row_bytes(g, &w, ins, nops, odt) <= l->budget) {
			uint32_t tile, off, k2 = 0, pieces = 0;
			uint64_t b0, b1, avg;
			int exact;

			while (ipu_graph_tensor_location(l->gb, l->vt[ins[lead]], pieces, &tile, &b0, &b1, &off) == 0)
				pieces++;
			/* Rows of at least a grain and twice the lead's
			 * pieces: each piece is computed where it is, cut at
			 * the rows' ends.  A whole row on the tile of its first
			 * element moved most of a [96 x 12544] matmul output
			 * spread in 8 KiB pieces (its bias Add copied all 4.8
			 * MB).  Rows about a piece long move a part of it;
			 * cutting them instead made more vertices than that
			 * saved (ResNet-50's 56 x 56 maps), and shorter rows
			 * would make vertices of a few elements. */
			avg = (uint64_t)total / (pieces ? pieces : 1);
			exact = inner >= MIN_BLOCK && avg >= MIN_BLOCK / 4 && (uint64_t)inner >= 2 * avg;
			while (ipu_graph_tensor_location(l->gb, l->vt[ins[lead]], k2++, &tile, &b0, &b1, &off) == 0) {
				int64_t r0 = ((int64_t)b0 + inner - 1) / inner, r1 = ((int64_t)b1 + inner - 1) / inner;

				if (exact) {
					if (b1 > (uint64_t)total)
						b1 = (uint64_t)total;
					if (b1 > b0 && follow_range(l, n, &w, codelet, op, up, ins, nops, out, odt,
								    cs, (int64_t)b0, (int64_t)b1, tile, &xch))
						return -1;
					continue;
				}
				if (r1 > rows)
					r1 = rows;
				if (r1 > r0 && emit_block(l, n, &w, codelet, op, up, ins, nops, out, odt, cs,
							  r0, r1, inner, tile, &xch))
					return -1;
			}
			if (lw_emit(l, xch, cs))
				return -1;
			return 1;
		}
	}
	if (spread(l, n, &w, codelet, op, up, ins, nops, out, odt, cs, &xch))
		return -1;
	if (lw_emit(l, xch, cs))
		return -1;
	return 1;
}

int lw_unary(struct lw *l, const struct ir_node *n)
{
	uint32_t op;

	if (!unary_code(n->opid, &op))
		return 0;
	return elementwise(l, n, IPUX_CL_UNARY, 1, op);
}

int lw_binary(struct lw *l, const struct ir_node *n)
{
	enum ir_op_id id = n->opid;
	uint32_t op;

	if (!binary_code(id, &op))
		return 0;
	if (n->nin != 2)
		return lw_fail(l, "expected 2 inputs after preparation");
	if (id == IR_OP_Mod && !ir_attr_int(n, "fmod", 0) &&
	    ir_dtype_is_int(l->g->vals[n->in[0]].dtype))
		return lw_fail(l, "integer Mod with fmod = 0 is not lowered");
	return elementwise(l, n, IPUX_CL_BINARY, 2, op);
}

int lw_where(struct lw *l, const struct ir_node *n)
{
	return elementwise(l, n, IPUX_CL_WHERE, 3, 0);
}

/* Cast and CastLike: the second input of CastLike only names the type. */
int lw_cast(struct lw *l, const struct ir_node *n)
{
	return elementwise(l, n, IPUX_CL_CAST, 1, 0);
}
