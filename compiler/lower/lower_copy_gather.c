/* SPDX-License-Identifier: MIT */
/*
 * lower_copy_gather.c - a strided copy (Transpose, ...) whose blocks of
 * output rows read input spans too wide for a tile.
 *
 * Moving NCHW to NHWC, one output row takes one element of every channel:
 * the input span it touches is the whole tensor.  Here a block gathers only
 * the input runs it needs (along the output dim whose input stride is 1)
 * into a dense temporary with one exchange copy per run, and the
 * STRIDED_COPY vertex reorders the temporary into the block's output rows.
 * When one row of the output's first dim is too large, each row is split
 * the same way over the next dim.
 */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

struct gather {
	struct lw *l;
	uint32_t odt, cs;
	size_t es;
	ipu_tensor out, xt;
	ipu_step xch;
	int in;			/* the input value */
};

/* Without an input dim of stride 1 (a Slice with steps) runs would be
 * single elements: blocks of rows read the input span they touch instead,
 * as the plain strided copy does, on rows small enough for that. */
static int span_blocks(struct gather *G, int rank, const int64_t *shape, int64_t off,
		       const int64_t *st, uint64_t obase, int64_t inner, int64_t span)
{
	struct lw *l = G->l;
	/* a block of rows reads its first row's span plus a stride of dim 0
	 * per further row, and holds its rows */
	int64_t s0 = st[0] < 0 ? -st[0] : st[0];
	int64_t rows = ((int64_t)(l->budget / G->es) - span + s0) / (s0 + inner), nb;

	if (rows < 1)
		return lw_fail_mem(l, (uint64_t)(span + inner) * G->es,
				   "one output row (%lld elements) reading a span of %lld input elements",
				   (long long)inner, (long long)span);
	if (rows > shape[0])
		rows = shape[0];
	nb = (shape[0] + rows - 1) / rows;
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = shape[0] * b / nb, r1 = shape[0] * (b + 1) / nb;
		int64_t lo = off + r0 * st[0], hi = lo;
		uint32_t tile = lw_pick_tile(l), p[2 + 2 * IR_MAX_RANK], np = 0;
		uint64_t ob = obase + (uint64_t)(r0 * inner), cnt = (uint64_t)((r1 - r0) * inner);
		struct ipu_slice ops[2];

		if (r1 <= r0)
			continue;
		for (int i = 0; i < rank; i++) {
			int64_t ext = ((i == 0 ? r1 - r0 : shape[i]) - 1) * st[i];

			if (ext < 0)
				lo += ext;
			else
				hi += ext;
		}
		if (lw_piece(l, G->in, (uint64_t)lo, (uint64_t)(hi - lo + 1), tile, &G->xch, &ops[0]))
			return -1;
		if (ipu_graph_map(l->gb, G->out, tile, ob, ob + cnt))
			return lw_check(l);
		lw_account(l, tile, cnt * G->es);
		ops[1] = (struct ipu_slice){ G->out, ob, cnt };
		p[np++] = (uint32_t)rank;
		p[np++] = (uint32_t)(r1 - r0);
		for (int i = 1; i < rank; i++)
			p[np++] = (uint32_t)shape[i];
		p[np++] = (uint32_t)(off + r0 * st[0] - lo);
		for (int i = 0; i < rank; i++)
			p[np++] = (uint32_t)(int32_t)st[i];
		if (ipu_graph_add_vertex(l->gb, G->cs, IPUX_CL_STRIDED_COPY, ops, 2, p, np))
			return lw_check(l);
	}
	return 0;
}

/* Output elements [obase, obase + prod(shape)) from in[off + sum idx_i *
 * st_i]: blocks of rows of dim 0; when one row does not fit, each row is
 * the same problem one rank down. */
static int blocks(struct gather *G, int rank, const int64_t *shape, int64_t off,
		  const int64_t *st, uint64_t obase)
{
	struct lw *l = G->l;
	int64_t inner = 1, rows, nb, T[IR_MAX_RANK], acc;
	int k = -1;

	for (int i = 0; i < rank; i++)
		if (st[i] == 1 && shape[i] > 1)
			k = i;
	for (int i = 1; i < rank; i++)
		inner *= shape[i];
	if (k < 0) {
		int64_t span = 1;

		for (int i = 1; i < rank; i++)
			span += (shape[i] - 1) * (st[i] < 0 ? -st[i] : st[i]);
		if ((uint64_t)(span + inner) * G->es <= l->budget || rank == 1)
			return span_blocks(G, rank, shape, off, st, obase, inner, span);
	}
	/* a block holds the gathered temporary and its output rows */
	rows = (int64_t)(l->budget / (2 * (uint64_t)inner * G->es));
	if ((rows < 1 || k < 0) && rank > 1) {
		for (int64_t i = 0; i < shape[0]; i++)
			if (blocks(G, rank - 1, shape + 1, off + i * st[0], st + 1, obase + (uint64_t)(i * inner)))
				return -1;
		return 0;
	}
	if (rows < 1)
		return lw_fail_mem(l, 2 * (uint64_t)inner * G->es,
				   "one output row (%lld elements) gathered from its input runs",
				   (long long)inner);
	if (rows > shape[0])
		rows = shape[0];
	nb = (shape[0] + rows - 1) / rows;
	if (nb < (int64_t)l->tiles && nb < shape[0])
		nb = shape[0] < (int64_t)l->tiles ? shape[0] : (int64_t)l->tiles;
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = shape[0] * b / nb, r1 = shape[0] * (b + 1) / nb, ext[IR_MAX_RANK] = { 0 };
		int64_t runs = 1;
		uint32_t tile = lw_pick_tile(l), p[2 + 2 * IR_MAX_RANK], np = 0;
		uint64_t ob = obase + (uint64_t)(r0 * inner), cnt = (uint64_t)((r1 - r0) * inner);
		struct ipu_slice ops[2];

		if (r1 <= r0)
			continue;
		/* the temporary: dims other than k in output order, then k */
		for (int i = 0; i < rank; i++)
			ext[i] = i ? shape[i] : r1 - r0;
		acc = ext[k];
		T[k] = 1;
		for (int i = rank - 1; i >= 0; i--)
			if (i != k) {
				T[i] = acc;
				acc *= ext[i];
			}
		if (lw_temp(l, "gather", G->odt, cnt, tile, &ops[0]))
			return -1;
		if (G->xch == IPU_GRAPH_INVALID && (G->xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
			return lw_check(l);
		for (int i = 0; i < rank; i++)
			if (i != k)
				runs *= ext[i];
		for (int64_t r = 0; r < runs; r++) {
			int64_t src = off + r0 * st[0], dst = 0, q = r;

			/* the run's index over the dims other than k */
			for (int i = rank - 1; i >= 0; i--) {
				if (i == k)
					continue;
				src += (q % ext[i]) * st[i];
				dst += (q % ext[i]) * T[i];
				q /= ext[i];
			}
			if (ipu_exchange_add(l->gb, G->xch, (struct ipu_slice){ G->xt, (uint64_t)src, (uint64_t)ext[k] },
					     (struct ipu_slice){ ops[0].t, ops[0].begin + (uint64_t)dst, (uint64_t)ext[k] }))
				return lw_check(l);
		}
		if (ipu_graph_map(l->gb, G->out, tile, ob, ob + cnt))
			return lw_check(l);
		lw_account(l, tile, cnt * G->es);
		ops[1] = (struct ipu_slice){ G->out, ob, cnt };
		p[np++] = (uint32_t)rank;
		p[np++] = (uint32_t)(r1 - r0);
		for (int i = 1; i < rank; i++)
			p[np++] = (uint32_t)shape[i];
		p[np++] = 0;
		for (int i = 0; i < rank; i++)
			p[np++] = (uint32_t)T[i];
		if (ipu_graph_add_vertex(l->gb, G->cs, IPUX_CL_STRIDED_COPY, ops, 2, p, np))
			return lw_check(l);
	}
	return 0;
}

int lw_strided_gather(struct lw *l, const struct ir_node *n, int rank,
		      const int64_t *shape, int64_t off, const int64_t *st)
{
	const struct ir_value *o = &l->g->vals[n->out[0]];
	struct gather G = { l, lw_dtype(o->dtype), 0, ir_dtype_size(o->dtype),
			    IPU_GRAPH_INVALID, IPU_GRAPH_INVALID, IPU_GRAPH_INVALID, n->in[0] };

	G.out = lw_tensor(l, o->name, G.odt, (uint64_t)ir_value_numel(o));
	G.cs = ipu_graph_add_compute_set(l->gb, n->name);
	G.xt = lw_value_tensor(l, n->in[0]);
	if (G.out == IPU_GRAPH_INVALID || G.cs == IPU_GRAPH_INVALID || G.xt == IPU_GRAPH_INVALID)
		return lw_check(l);
	l->vt[n->out[0]] = G.out;
	if (blocks(&G, rank, shape, off, st, 0))
		return -1;
	return lw_emit(l, G.xch, G.cs) ? -1 : 1;
}
