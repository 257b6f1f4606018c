/* SPDX-License-Identifier: MIT */
/*
 * lower_layout.c - data movement and window ops: reshape-like ops alias
 * their input's tensor; concat/split are exchange copies; transpose, slice,
 * expand, tile and pad are strided copies split over output rows; gather
 * runs on one tile when its operands fit one, else is split over indices
 * and columns (lower_gather_split.c, lower_gather_const.c), pooling over N*C (convolutions are in
 * lower_conv.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/opgeom.h"
#include "lower_internal.h"

#define R IR_MAX_RANK

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: the output is
 * the input, viewed with another shape. */
int lw_alias(struct lw *l, const struct ir_node *n)
{
	ipu_tensor t;

	/* the same elements in the same order: the same blocks */
	if (lw_is_blocked(l, n->in[0])) {
		lw_blocked_alias(l, n->out[0], n->in[0]);
		return 1;
	}
	t = lw_value_tensor(l, n->in[0]);

	if (t == IPU_GRAPH_INVALID)
		return -1;
	l->vt[n->out[0]] = t;
	return 1;
}

/* The output of n as a tensor on one tile; its inputs gathered there. */
static int one_tile(struct lw *l, const struct ir_node *n, const int *ins,
		    int nins, uint32_t codelet, const uint32_t *params,
		    uint32_t np)
{
	const struct ir_value *o = &l->g->vals[n->out[0]];
	uint64_t bytes = (uint64_t)ir_value_numel(o) * ir_dtype_size(o->dtype);
	uint32_t tile, cs, odt = lw_dtype(o->dtype);
	ipu_step xch = IPU_GRAPH_INVALID;
	struct ipu_slice ops[8];
	ipu_tensor out;

	for (int k = 0; k < nins; k++)
		bytes += (uint64_t)ir_value_numel(&l->g->vals[ins[k]]) * ir_dtype_size(l->g->vals[ins[k]].dtype);
	if (bytes > l->budget)
		return lw_fail_mem(l, bytes, "the whole op (its inputs and output; it is not split over tiles)");
	if (!odt)
		return lw_fail(l, "output type %s is not supported by the device", ir_dtype_name(o->dtype));
	tile = lw_pick_tile(l);
	for (int k = 0; k < nins; k++)
		if (lw_piece(l, ins[k], 0, (uint64_t)ir_value_numel(&l->g->vals[ins[k]]), tile, &xch, &ops[k]))
			return -1;
	out = lw_tensor(l, o->name, odt, (uint64_t)ir_value_numel(o));
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, out, tile))
		return lw_check(l);
	lw_account(l, tile, bytes);
	ops[nins] = (struct ipu_slice){ out, 0, (uint64_t)ir_value_numel(o) };
	if (ipu_graph_add_vertex(l->gb, cs, codelet, ops, (uint32_t)nins + 1, params, np))
		return lw_check(l);
	l->vt[n->out[0]] = out;
	return lw_emit(l, xch, cs) ? -1 : 1;
}

static void strides(const struct ir_value *v, int64_t *s)
{
	int64_t acc = 1;

	for (int i = v->rank - 1; i >= 0; i--) {
		s[i] = acc;
		acc *= v->dims[i];
	}
}

/* The same strided read in fewer dims: dims of size 1 dropped, and a dim
 * merged into the next when it steps over exactly that dim's span (a
 * Tile of a rank-4 input is a rank-8 read, more than a copy vertex takes,
 * but its repeats of 1 and its untiled trailing dims fold away).  Returns
 * the new rank. */
static int merge_dims(int rank, int64_t *shape, int64_t *st)
{
	int k = 0;

	for (int i = 0; i < rank; i++) {
		if (shape[i] == 1)
			continue;
		if (k > 0 && st[k - 1] == st[i] * shape[i]) {
			shape[k - 1] *= shape[i];
			st[k - 1] = st[i];
			continue;
		}
		shape[k] = shape[i];
		st[k++] = st[i];
	}
	if (k == 0) {
		shape[0] = 1;
		st[0] = 0;
		k = 1;
	}
	return k;
}

/* Dense output [shape] from in[off + sum idx_k * st_k]: blocks of the
 * output's first dim over the tiles, each reading the input range its
 * strides touch (one piece per block). */
static int strided(struct lw *l, const struct ir_node *n, int rank,
		   const int64_t *shape, int64_t off, const int64_t *st)
{
	const struct ir_value *x = &l->g->vals[n->in[0]], *o = &l->g->vals[n->out[0]];
	int64_t total = ir_value_numel(o), inner = 1, nb;
	size_t es = ir_dtype_size(o->dtype);
	uint32_t cs, odt = lw_dtype(o->dtype);
	ipu_step xch = IPU_GRAPH_INVALID;
	ipu_tensor out;

	if (rank > (int)IPUX_MAX_RANK) {
		int64_t sh[2 * R], stc[2 * R];
		int merged;

		memcpy(sh, shape, (size_t)rank * sizeof(*sh));
		memcpy(stc, st, (size_t)rank * sizeof(*stc));
		merged = merge_dims(rank, sh, stc);
		if (merged > (int)IPUX_MAX_RANK)
			return lw_fail(l, "rank %d copy is more than the device's %u", merged, IPUX_MAX_RANK);
		return strided(l, n, merged, sh, off, stc);
	}
	if (rank == 0) {
		static const int64_t one = 1, zero = 0;

		return strided(l, n, 1, &one, off, &zero);
	}
	if (!odt)
		return lw_fail(l, "output type %s is not supported by the device", ir_dtype_name(o->dtype));
	/* leading dims of size 1 do not move data: split on the first real one */
	while (rank > 1 && shape[0] == 1) {
		shape++;
		st++;
		rank--;
	}
	for (int i = 1; i < rank; i++)
		inner *= shape[i];
	nb = (total + 1023) / 1024;
	if ((uint64_t)nb < (uint64_t)(total * (int64_t)es) / (l->budget / 2) + 1)
		nb = (int64_t)((uint64_t)(total * (int64_t)es) / (l->budget / 2) + 1);
	if (nb > shape[0])
		nb = shape[0];
	if (nb > (int64_t)l->tiles * 64)
		nb = (int64_t)l->tiles * 64;
	if (nb < 1)
		nb = 1;
	{
		/* the widest block's input span; too wide: gather its runs */
		int64_t rows = (shape[0] + nb - 1) / nb, span = 1;

		for (int i = 0; i < rank; i++)
			span += ((i == 0 ? rows : shape[i]) - 1) * (st[i] < 0 ? -st[i] : st[i]);
		if ((uint64_t)(span + rows * inner) * es > l->budget)
			return lw_strided_gather(l, n, rank, shape, off, st);
	}
	out = lw_tensor(l, o->name, odt, (uint64_t)total);
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	l->vt[n->out[0]] = out;
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = shape[0] * b / nb, r1 = shape[0] * (b + 1) / nb;
		int64_t lo = off + r0 * st[0], hi = lo;
		uint32_t tile = lw_pick_tile(l), p[2 + 2 * R];
		uint32_t np = 0;
		struct ipu_slice ops[2];

		if (r1 <= r0)
			continue;
		/* the input range the block touches (strides may be < 0) */
		for (int i = 0; i < rank; i++) {
			int64_t ext = ((i == 0 ? r1 - r0 : shape[i]) - 1) * st[i];

			if (ext < 0)
				lo += ext;
			else
				hi += ext;
		}
		if ((uint64_t)((hi - lo + 1) + (r1 - r0) * inner) * es > l->budget)
			return lw_fail_mem(l, (uint64_t)((hi - lo + 1) + (r1 - r0) * inner) * es,
					   "a block of %lld output rows (%lld elements) reading a span of %lld input elements",
					   (long long)(r1 - r0), (long long)((r1 - r0) * inner),
					   (long long)(hi - lo + 1));
		if (lw_piece(l, n->in[0], (uint64_t)lo, (uint64_t)(hi - lo + 1), tile, &xch, &ops[0]))
			return -1;
		if (ipu_graph_map(l->gb, out, tile, (uint64_t)(r0 * inner), (uint64_t)(r1 * inner)))
			return lw_check(l);
		lw_account(l, tile, (uint64_t)((r1 - r0) * inner) * es);
		ops[1] = (struct ipu_slice){ out, (uint64_t)(r0 * inner), (uint64_t)((r1 - r0) * inner) };
		p[np++] = (uint32_t)rank;
		p[np++] = (uint32_t)(r1 - r0);
		for (int i = 1; i < rank; i++)
			p[np++] = (uint32_t)shape[i];
		p[np++] = (uint32_t)(off + r0 * st[0] - lo);
		for (int i = 0; i < rank; i++)
			p[np++] = (uint32_t)(int32_t)st[i];
		if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_STRIDED_COPY, ops, 2, p, np))
			return lw_check(l);
	}
	(void)x;
	return lw_emit(l, xch, cs) ? -1 : 1;
}

int lw_transpose(struct lw *l, const struct ir_node *n)
{
	const struct ir_value *x = &l->g->vals[n->in[0]];
	size_t cnt;
	const int64_t *perm = ir_attr_ints(n, "perm", &cnt);
	int64_t xs[R], shape[R], st[R];

	strides(x, xs);
	for (int i = 0; i < x->rank; i++) {
		int64_t a = perm ? perm[i] : x->rank - 1 - i;

		shape[i] = x->dims[a];
		st[i] = xs[a];
	}
	return strided(l, n, x->rank, shape, 0, st);
}

int lw_slice(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[n->in[0]];
	int64_t v[4][R], start[R], step[R], cnt[R], xs[R], st[R], off = 0;
	int c = (int)ir_value_numel(&g->vals[n->in[1]]);
	struct ir_error sub;

	for (int k = 1; k < 5 && k < n->nin; k++) {
		const struct ir_value *p = n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;

		for (int i = 0; p && i < c; i++)
			v[k - 1][i] = ir_get_i(p->data, p->dtype, (size_t)i);
	}
	if (ir_slice_resolve(x->rank, x->dims, v[0], v[1],
			     n->nin > 3 && n->in[3] >= 0 ? v[2] : NULL,
			     n->nin > 4 && n->in[4] >= 0 ? v[3] : NULL, c, start, step, cnt, &sub))
		return lw_fail(l, "%s", sub.msg);
	strides(x, xs);
	for (int i = 0; i < x->rank; i++) {
		off += start[i] * xs[i];
		st[i] = step[i] * xs[i];
	}
	return strided(l, n, x->rank, cnt, off, st);
}

int lw_expand(struct lw *l, const struct ir_node *n)
{
	const struct ir_value *x = &l->g->vals[n->in[0]], *o = &l->g->vals[n->out[0]];
	int64_t st[R], s = 1;

	for (int i = o->rank - 1; i >= 0; i--) {
		int j = i - (o->rank - x->rank);

		st[i] = j >= 0 && x->dims[j] != 1 ? s : 0;
		if (j >= 0)
			s *= x->dims[j];
	}
	return strided(l, n, o->rank, o->dims, 0, st);
}

int lw_tile_op(struct lw *l, const struct ir_node *n)
{
	const struct ir_value *x = &l->g->vals[n->in[0]], *o = &l->g->vals[n->out[0]];
	int64_t xs[R], shape[2 * R], st[2 * R];

	strides(x, xs);
	for (int i = 0; i < x->rank; i++) {
		shape[2 * i] = o->dims[i] / (x->dims[i] ? x->dims[i] : 1);
		st[2 * i] = 0;
		shape[2 * i + 1] = x->dims[i];
		st[2 * i + 1] = xs[i];
	}
	return strided(l, n, merge_dims(2 * x->rank, shape, st), shape, 0, st);
}

/* Pad: the leading dims without padding merge into one outer dim whose
 * rows are split over the tiles (one PAD vertex per block). */
int lw_pad(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[n->in[0]], *pv = &g->vals[n->in[1]], *o = &g->vals[n->out[0]];
	const struct ir_value *cv = n->nin > 2 && n->in[2] >= 0 ? &g->vals[n->in[2]] : NULL;
	const char *mode = ir_attr_str(n, "mode", "constant");
	int64_t pads[2 * R], outer = 1, in_row = 1, out_row = 1, nb;
	int k = 0, rank = x->rank;
	size_t es = ir_dtype_size(x->dtype);
	uint32_t cs, odt = lw_dtype(o->dtype);
	ipu_step xch = IPU_GRAPH_INVALID;
	ipu_tensor out;
	double val;

	if (cv && !cv->data)
		return lw_fail(l, "the pad value must be a constant to lower");
	if (!odt)
		return lw_fail(l, "output type %s is not supported by the device", ir_dtype_name(o->dtype));
	val = cv ? ir_get_f(cv->data, cv->dtype, 0) : 0;
	for (int i = 0; i < 2 * rank; i++)
		pads[i] = ir_get_i(pv->data, pv->dtype, (size_t)i);
	while (k < rank - 1 && pads[k] == 0 && pads[k + rank] == 0)
		outer *= x->dims[k++];
	if (rank - k + 1 > (int)IPUX_MAX_RANK)
		return lw_fail(l, "rank %d pad is more than the device's %u", rank - k + 1, IPUX_MAX_RANK);
	for (int i = k; i < rank; i++) {
		in_row *= x->dims[i];
		out_row *= o->dims[i];
	}
	nb = (outer * out_row + 1023) / 1024;
	if ((uint64_t)nb < (uint64_t)(outer * (in_row + out_row)) * es / (l->budget / 2) + 1)
		nb = (int64_t)((uint64_t)(outer * (in_row + out_row)) * es / (l->budget / 2) + 1);
	if (nb > outer)
		nb = outer;
	if (nb > (int64_t)l->tiles)
		nb = l->tiles;
	if (nb < 1)
		nb = 1;
	if ((uint64_t)((in_row + out_row) * (int64_t)es) * (uint64_t)((outer + nb - 1) / nb) > l->budget)
		return lw_fail_mem(l, (uint64_t)((in_row + out_row) * (int64_t)es) * (uint64_t)((outer + nb - 1) / nb),
				   "%lld padded rows of %lld elements (from %lld)", (long long)((outer + nb - 1) / nb),
				   (long long)out_row, (long long)in_row);
	out = lw_tensor(l, o->name, odt, (uint64_t)ir_value_numel(o));
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	l->vt[n->out[0]] = out;
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = outer * b / nb, r1 = outer * (b + 1) / nb;
		uint32_t tile = lw_pick_tile(l), p[4 + 3 * R], np = 0;
		struct ipu_slice ops[2];

		if (r1 <= r0)
			continue;
		if (lw_piece(l, n->in[0], (uint64_t)(r0 * in_row), (uint64_t)((r1 - r0) * in_row), tile, &xch, &ops[0]))
			return -1;
		if (ipu_graph_map(l->gb, out, tile, (uint64_t)(r0 * out_row), (uint64_t)(r1 * out_row)))
			return lw_check(l);
		lw_account(l, tile, (uint64_t)((r1 - r0) * out_row) * es);
		ops[1] = (struct ipu_slice){ out, (uint64_t)(r0 * out_row), (uint64_t)((r1 - r0) * out_row) };
		p[np++] = (uint32_t)(rank - k + 1);
		p[np++] = (uint32_t)(r1 - r0);
		for (int i = k; i < rank; i++)
			p[np++] = (uint32_t)x->dims[i];
		p[np++] = 0;
		for (int i = k; i < rank; i++)
			p[np++] = (uint32_t)(int32_t)pads[i];
		p[np++] = 0;
		for (int i = k; i < rank; i++)
			p[np++] = (uint32_t)(int32_t)pads[i + rank];
		p[np++] = mode[0] == 'c' ? 0 : mode[0] == 'r' ? 1 : 2;
		p[np++] = ir_dtype_is_float(x->dtype) ? lw_f32bits(val) : (uint32_t)(int32_t)val;
		if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_PAD, ops, 2, p, np))
			return lw_check(l);
	}
	return lw_emit(l, xch, cs) ? -1 : 1;
}

/* Concat and Split: the output blocks are plain copies. */
static int concat_split(struct lw *l, const struct ir_node *n, int is_concat)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *big = &g->vals[is_concat ? n->out[0] : n->in[0]];
	int a = ir_axis(ir_attr_int(n, "axis", 0), big->rank);
	int nparts = is_concat ? n->nin : n->nout;
	int64_t outer = 1, inner = 1, pos = 0;
	ipu_tensor bt;
	ipu_step xch = ipu_step_exchange(l->gb);

	for (int i = 0; i < a; i++)
		outer *= big->dims[i];
	for (int i = a + 1; i < big->rank; i++)
		inner *= big->dims[i];
	if (xch == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (is_concat) {
		bt = lw_tensor(l, big->name, lw_dtype(big->dtype), (uint64_t)ir_value_numel(big));
		if (bt == IPU_GRAPH_INVALID ||
		    lw_spread(l, bt, (uint64_t)ir_value_numel(big), (uint32_t)ir_dtype_size(big->dtype),
			      (uint32_t)((ir_value_numel(big) + 1023) / 1024)) < 0)
			return lw_check(l);
		l->vt[n->out[0]] = bt;
	} else {
		bt = lw_value_tensor(l, n->in[0]);
		if (bt == IPU_GRAPH_INVALID)
			return -1;
	}
	for (int k = 0; k < nparts; k++) {
		int v = is_concat ? n->in[k] : n->out[k];
		const struct ir_value *pv = &g->vals[v];
		int64_t blk = pv->dims[a] * inner;
		ipu_tensor pt;

		if (is_concat) {
			pt = lw_value_tensor(l, v);
		} else {
			pt = lw_tensor(l, pv->name, lw_dtype(pv->dtype), (uint64_t)ir_value_numel(pv));
			if (pt == IPU_GRAPH_INVALID ||
			    lw_spread(l, pt, (uint64_t)ir_value_numel(pv), (uint32_t)ir_dtype_size(pv->dtype),
				      (uint32_t)((ir_value_numel(pv) + 1023) / 1024)) < 0)
				return lw_check(l);
			l->vt[v] = pt;
		}
		if (pt == IPU_GRAPH_INVALID)
			return lw_check(l);
		for (int64_t o = 0; o < outer && blk > 0; o++) {
			struct ipu_slice part = { pt, (uint64_t)(o * blk), (uint64_t)blk };
			struct ipu_slice whole = { bt, (uint64_t)(o * big->dims[a] * inner + pos), (uint64_t)blk };

			if (ipu_exchange_add(l->gb, xch, is_concat ? part : whole, is_concat ? whole : part))
				return lw_check(l);
		}
		pos += blk;
	}
	return lw_emit(l, xch, IPU_GRAPH_INVALID) ? -1 : 1;
}

/* Bytes of one index's result row a column block produces, at least. */
#define GATHER_MIN_RUN 64

/* A large constant table [len][inner] (embeddings): column blocks frozen
 * on different tiles, each gathering its columns for every index; the
 * blocks' rows are then copied into the output [ni][inner]. */
static int gather_columns(struct lw *l, const struct ir_node *n, int64_t len,
			  int64_t inner, int64_t ni)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[n->in[0]], *o = &g->vals[n->out[0]];
	size_t es = ir_dtype_size(x->dtype);
	uint32_t cs, dt = lw_dtype(x->dtype);
	int64_t nb, colmax, colmin, spread;
	ipu_step xch = IPU_GRAPH_INVALID, post = IPU_GRAPH_INVALID;
	ipu_tensor out;
	const struct lw_gblk *shared = NULL;
	size_t nshared = 0;

	/* columns per block: the table block, the indices and the result fit */
	colmax = (int64_t)(l->budget / es) / (len + 2 * ni);
	if (colmax < 1)
		return lw_fail_mem(l, (uint64_t)(len + 2 * ni) * es,
				   "one column of the %lld-row table with %lld indices and their results",
				   (long long)len, (long long)ni);
	nb = (inner + colmax - 1) / colmax;
	/* more blocks for parallelism, but each result row piece is one
	 * exchange copy per index: keep the pieces at least a cache line
	 * long (one-element copies cost far more than they move) */
	colmin = (int64_t)(GATHER_MIN_RUN / es) > 1 ? (int64_t)(GATHER_MIN_RUN / es) : 1;
	if (colmin > colmax)
		colmin = colmax;
	spread = (inner + colmin - 1) / colmin;
	if (spread > (int64_t)l->tiles)
		spread = (int64_t)l->tiles;
	if (nb < spread)
		nb = spread;
	out = lw_tensor(l, o->name, dt, (uint64_t)(ni * inner));
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	/* the output is spread once; the column blocks are copied into it */
	if (lw_spread(l, out, (uint64_t)(ni * inner), (uint32_t)es,
		      (uint32_t)((uint64_t)(ni * inner) * es / 4096 + 1)) < 0)
		return -1;
	l->vt[n->out[0]] = out;
	/* the table another graph of the executable froze already: its blocks */
	if (lw_share_gather(l, n->in[0], &shared, &nshared))
		nb = (int64_t)nshared;
	for (int64_t b = 0; b < nb; b++) {
		int64_t c0 = inner * b / nb, c1 = inner * (b + 1) / nb, cb = c1 - c0;
		uint32_t tile = nshared ? shared[b].tile : lw_pick_tile(l);
		uint32_t p[4];
		ipu_tensor tb, ob;
		char *buf;
		struct ipu_slice ops[3];

		if (nshared) {
			c0 = shared[b].c0;
			cb = shared[b].cb;
		}
		p[0] = 1;
		p[1] = (uint32_t)len;
		p[2] = (uint32_t)cb;
		p[3] = (uint32_t)ni;
		if (cb <= 0)
			continue;
		if (lw_temp(l, "cols", dt, (uint64_t)(ni * cb), tile, &ops[2]))
			return -1;
		ob = ops[2].t;
		if (nshared) {
			tb = shared[b].t;
			lw_account(l, tile, (uint64_t)(ni * cb) * es);
		} else {
			tb = lw_tensor(l, "table", dt, (uint64_t)(len * cb));
			if (tb == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, tb, tile))
				return lw_check(l);
			buf = malloc((size_t)(len * cb) * es);
			if (!buf)
				return lw_fail(l, "out of memory");
			for (int64_t r = 0; r < len; r++)
				memcpy(buf + (size_t)(r * cb) * es,
				       (const char *)x->data + (size_t)(r * inner + c0) * es, (size_t)cb * es);
			if (ipu_graph_set_init(l->gb, tb, buf, (size_t)(len * cb) * es)) {
				free(buf);
				return lw_check(l);
			}
			free(buf);
			lw_account(l, tile, (uint64_t)((len + ni) * cb) * es);
			if (lw_share_gather_add(l, n->in[0], c0, cb, tile, tb))
				return -1;
		}
		ops[0] = (struct ipu_slice){ tb, 0, (uint64_t)(len * cb) };
		if (lw_piece(l, n->in[1], 0, (uint64_t)ni, tile, &xch, &ops[1]))
			return -1;
		if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_GATHER, ops, 3, p, 4))
			return lw_check(l);
		if (post == IPU_GRAPH_INVALID && (post = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
			return lw_check(l);
		for (int64_t r = 0; r < ni; r++)
			if (ipu_exchange_add(l->gb, post, (struct ipu_slice){ ob, ops[2].begin + (uint64_t)(r * cb), (uint64_t)cb },
					     (struct ipu_slice){ out, (uint64_t)(r * inner + c0), (uint64_t)cb }))
				return lw_check(l);
	}
	if (lw_emit(l, xch, cs))
		return -1;
	return lw_emit(l, post, IPU_GRAPH_INVALID) ? -1 : 1;
}

int lw_gather(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[n->in[0]], *idx = &g->vals[n->in[1]];
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int64_t outer = 1, inner = 1, len = x->dims[a], ni = ir_value_numel(idx);
	uint32_t p[4];

	for (int i = 0; i < a; i++)
		outer *= x->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		inner *= x->dims[i];
	p[0] = (uint32_t)outer;
	p[1] = (uint32_t)len;
	p[2] = (uint32_t)inner;
	p[3] = (uint32_t)ni;
	if (idx->dtype != IR_I32 && idx->dtype != IR_I64)
		return lw_fail(l, "indices must be int32 or int64");
	if (x->data && outer == 1 && inner > 1 &&
	    (uint64_t)(ir_value_numel(x) * (int64_t)ir_dtype_size(x->dtype)) > l->budget / 2 &&
	    (uint64_t)(len + 2 * ni) * ir_dtype_size(x->dtype) <= l->budget)
		return gather_columns(l, n, len, inner, ni);
	if (!x->data && idx->data)
		return lw_gather_const(l, n, outer, len, inner);
	if ((uint64_t)(ir_value_numel(x) * (int64_t)ir_dtype_size(x->dtype)) +
	    (uint64_t)ni * ir_dtype_size(idx->dtype) +
	    (uint64_t)(outer * ni * inner) * ir_dtype_size(x->dtype) > l->budget)
		return lw_gather_split(l, n, outer, len, inner, ni);
	return one_tile(l, n, n->in, 2, IPUX_CL_GATHER, p, 4);
}

/* 2-D pooling of images too large for a tile: each image in blocks of
 * output rows, each reading the input rows its windows touch, with the
 * image's own top and end padding where the block reaches them. */
static int pool_rows(struct lw *l, const struct ir_node *n, const struct ir_window *win,
		     const int64_t *pe, int is_max, int cip, int64_t NC, int64_t H, int64_t W,
		     int64_t OH, int64_t OW, ipu_tensor out, uint32_t cs, ipu_step *xch)
{
	const struct ir_value *x = &l->g->vals[n->in[0]];
	size_t es = ir_dtype_size(x->dtype);
	int64_t s = win->s[0], ext = win->d[0] * (win->k[0] - 1) + 1, rows;

	/* output rows per block: their input rows and the rows themselves */
	rows = (int64_t)(l->budget / es - (uint64_t)(ext * W)) / (s * W + OW);
	if ((uint64_t)((ext + s) * W + OW) * es > l->budget || rows < 1)
		return lw_fail_mem(l, (uint64_t)((ext + s) * W + OW) * es,
				   "one output row of a pooling window %lld rows high over rows of %lld elements",
				   (long long)ext, (long long)W);
	if (rows > OH)
		rows = OH;
	for (int64_t c = 0; c < NC; c++)
	for (int64_t o0 = 0; o0 < OH; o0 += rows) {
		int64_t o1 = o0 + rows > OH ? OH : o0 + rows;
		int64_t r0 = o0 * s - win->pb[0], r1 = (o1 - 1) * s - win->pb[0] + ext;
		int64_t r0c = r0 < 0 ? 0 : r0, r1c = r1 > H ? H : r1;
		uint32_t tile = lw_pick_tile(l);
		uint64_t ob = (uint64_t)((c * OH + o0) * OW), oc = (uint64_t)((o1 - o0) * OW);
		struct ipu_slice ops[2];
		uint32_t p[15] = {
			is_max ? IPUX_POOL_MAX : IPUX_POOL_AVG, 1, (uint32_t)(r1c - r0c), (uint32_t)W,
			(uint32_t)win->k[0], (uint32_t)win->k[1], (uint32_t)s, (uint32_t)win->s[1],
			(uint32_t)(r0c - r0), (uint32_t)win->pb[1], (uint32_t)(r1 - r1c), (uint32_t)pe[1],
			(uint32_t)win->d[0], (uint32_t)win->d[1], cip ? IPUX_POOL_COUNT_PAD : 0,
		};

		if (lw_piece(l, n->in[0], (uint64_t)((c * H + r0c) * W), (uint64_t)((r1c - r0c) * W), tile,
			     xch, &ops[0]))
			return -1;
		if (ipu_graph_map(l->gb, out, tile, ob, ob + oc))
			return lw_check(l);
		lw_account(l, tile, oc * es);
		ops[1] = (struct ipu_slice){ out, ob, oc };
		if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_POOL2D, ops, 2, p, 15))
			return lw_check(l);
	}
	return 0;
}

static int pool(struct lw *l, const struct ir_node *n, int is_max)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[n->in[0]], *o = &g->vals[n->out[0]];
	int nsp = x->rank - 2;
	int ceil_mode = (int)ir_attr_int(n, "ceil_mode", 0);
	int cip = (int)ir_attr_int(n, "count_include_pad", 0);
	struct ir_window win;
	int64_t NC = x->dims[0] * x->dims[1], H, W, OH, OW, nb, pe[2];
	uint64_t img;
	uint32_t cs, odt = lw_dtype(o->dtype);
	ipu_step xch = IPU_GRAPH_INVALID;
	ipu_tensor out;

	if (nsp < 1 || nsp > 2)
		return lw_fail(l, "%d-D pooling is not lowered (1-D and 2-D are)", nsp);
	if (n->nout > 1 && n->out[1] >= 0 && (ir_value_uses(g, n->out[1]) || g->vals[n->out[1]].is_output))
		return lw_fail(l, "the Indices output is not lowered");
	if (ir_window_conv(g, n, nsp, x->dims + 2, NULL, ceil_mode, &win, l->e))
		return -1;
	if (ceil_mode && cip && !is_max)
		return lw_fail(l, "ceil_mode with count_include_pad is not lowered");
	H = nsp == 2 ? x->dims[2] : 1;
	W = x->dims[x->rank - 1];
	OH = nsp == 2 ? win.out[0] : 1;
	OW = win.out[nsp - 1];
	/* ceil_mode: extra end padding so the floor formula gives the ceil */
	for (int i = 0; i < nsp; i++) {
		int64_t ext = win.d[i] * (win.k[i] - 1) + 1;
		int64_t need = (win.out[i] - 1) * win.s[i] + ext - win.in[i] - win.pb[i];

		pe[i] = need > win.pe[i] ? need : win.pe[i];
	}
	img = (uint64_t)(H * W + OH * OW) * ir_dtype_size(x->dtype);
	nb = (int64_t)l->tiles;
	/* at least as many blocks of whole images as their bytes need */
	if ((uint64_t)nb < ((uint64_t)NC * img + l->budget - 1) / l->budget)
		nb = (int64_t)(((uint64_t)NC * img + l->budget - 1) / l->budget);
	if (nb > NC)
		nb = NC;
	out = lw_tensor(l, o->name, odt, (uint64_t)ir_value_numel(o));
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	l->vt[n->out[0]] = out;
	/* 1-D images stay whole (one row: nothing to split by rows), and so
	 * do images whose single output row is already too large while the
	 * image fits a tile's memory */
	if (img > l->budget && nsp == 2 &&
	    ((uint64_t)((win.d[0] * (win.k[0] - 1) + 1 + win.s[0]) * W + OW) * ir_dtype_size(x->dtype) <=
	     l->budget || img > l->tile_mem)) {
		if (pool_rows(l, n, &win, pe, is_max, cip, NC, H, W, OH, OW, out, cs, &xch))
			return -1;
		return lw_emit(l, xch, cs) ? -1 : 1;
	}
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = NC * b / nb, r1 = NC * (b + 1) / nb;
		uint32_t tile = lw_pick_tile(l);
		struct ipu_slice ops[2];
		uint32_t p[15] = {
			is_max ? IPUX_POOL_MAX : IPUX_POOL_AVG, (uint32_t)(r1 - r0), (uint32_t)H, (uint32_t)W,
			(uint32_t)(nsp == 2 ? win.k[0] : 1), (uint32_t)win.k[nsp - 1],
			(uint32_t)(nsp == 2 ? win.s[0] : 1), (uint32_t)win.s[nsp - 1],
			(uint32_t)(nsp == 2 ? win.pb[0] : 0), (uint32_t)win.pb[nsp - 1],
			(uint32_t)(nsp == 2 ? pe[0] : 0), (uint32_t)pe[nsp - 1],
			(uint32_t)(nsp == 2 ? win.d[0] : 1), (uint32_t)win.d[nsp - 1],
			cip ? IPUX_POOL_COUNT_PAD : 0,
		};

		if (r1 <= r0)
			continue;
		if (lw_piece(l, n->in[0], (uint64_t)(r0 * H * W), (uint64_t)((r1 - r0) * H * W), tile, &xch, &ops[0]))
			return -1;
		if (ipu_graph_map(l->gb, out, tile, (uint64_t)(r0 * OH * OW), (uint64_t)(r1 * OH * OW)))
			return lw_check(l);
		lw_account(l, tile, (uint64_t)((r1 - r0) * OH * OW) * ir_dtype_size(o->dtype));
		ops[1] = (struct ipu_slice){ out, (uint64_t)(r0 * OH * OW), (uint64_t)((r1 - r0) * OH * OW) };
		if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_POOL2D, ops, 2, p, 15))
			return lw_check(l);
	}
	return lw_emit(l, xch, cs) ? -1 : 1;
}

int lw_concat(struct lw *l, const struct ir_node *n)
{
	return concat_split(l, n, 1);
}

int lw_split(struct lw *l, const struct ir_node *n)
{
	return concat_split(l, n, 0);
}

int lw_max_pool(struct lw *l, const struct ir_node *n)
{
	return pool(l, n, 1);
}

int lw_average_pool(struct lw *l, const struct ir_node *n)
{
	return pool(l, n, 0);
}
