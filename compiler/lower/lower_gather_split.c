/* SPDX-License-Identifier: MIT */
/*
 * lower_gather_split.c - a Gather at run-time indices whose operands do
 * not fit one tile, split over tiles.
 *
 * The output [outer][ni][inner] is cut into blocks of outer rows, of
 * indices and of columns; each block is a GATHER vertex on its own tile
 * that reads the indices of its chunk and the part of the data its rows
 * and columns cover ([len x columns] of each of its outer rows: an index
 * known only at run time may name any of the len rows).  Blocks of whole
 * rows (all `inner` columns) write their part of the output in place;
 * narrower column blocks write a temporary whose rows an exchange after
 * the compute set copies into the output.
 */
#include <stdio.h>

#include "lower_internal.h"

/* Output bytes per block the split aims at, when memory allows more:
 * enough blocks to use many tiles without one exchange copy per row. */
#define GATHER_BLOCK_BYTES 8192

struct gsplit {
	struct lw *l;
	const struct ir_node *n;
	int64_t outer, len, inner, ni;
	size_t es, ies;
	uint32_t dt, cs;
	ipu_tensor out;
	ipu_step xch, post;
};

/* One GATHER vertex: outer rows [b0, b1), indices [j0, j1), columns
 * [c0, c1) (all columns when c1 - c0 == inner, then b1 - b0 may exceed
 * 1 only with all indices). */
static int block(struct gsplit *G, int64_t b0, int64_t b1, int64_t j0, int64_t j1,
		 int64_t c0, int64_t c1)
{
	struct lw *l = G->l;
	int64_t nb = b1 - b0, nj = j1 - j0, cb = c1 - c0;
	uint32_t tile = lw_pick_tile(l);
	uint32_t p[4] = { (uint32_t)nb, (uint32_t)G->len, (uint32_t)cb, (uint32_t)nj };
	uint64_t cnt = (uint64_t)(nb * nj * cb);
	struct ipu_slice ops[3];

	if (lw_block_piece(l, G->n->in[0], (uint64_t)(b0 * G->len * G->inner), G->inner, 0,
			   nb * G->len, c0, cb, tile, &G->xch, &ops[0]) ||
	    lw_piece(l, G->n->in[1], (uint64_t)j0, (uint64_t)nj, tile, &G->xch, &ops[1]))
		return -1;
	if (cb == G->inner) {
		uint64_t ob = (uint64_t)((b0 * G->ni + j0) * G->inner);

		if (ipu_graph_map(l->gb, G->out, tile, ob, ob + cnt))
			return lw_check(l);
		lw_account(l, tile, cnt * G->es);
		ops[2] = (struct ipu_slice){ G->out, ob, cnt };
	} else {
		if (lw_temp(l, "cols", G->dt, cnt, tile, &ops[2]))
			return -1;
		if (G->post == IPU_GRAPH_INVALID && (G->post = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
			return lw_check(l);
		for (int64_t j = 0; j < nj; j++)
			if (ipu_exchange_add(l->gb, G->post,
					     (struct ipu_slice){ ops[2].t, ops[2].begin + (uint64_t)(j * cb), (uint64_t)cb },
					     (struct ipu_slice){ G->out, (uint64_t)((b0 * G->ni + j0 + j) * G->inner + c0),
								 (uint64_t)cb }))
				return lw_check(l);
	}
	if (ipu_graph_add_vertex(l->gb, G->cs, IPUX_CL_GATHER, ops, 3, p, 4))
		return lw_check(l);
	return 0;
}

/* How many pieces to cut `total` items into: at least `least`, and
 * `want` when there are that many items. */
static int64_t pieces(int64_t total, int64_t least, int64_t want)
{
	int64_t k = want > least ? want : least;

	return k > total ? total : k < 1 ? 1 : k;
}

int lw_gather_split(struct lw *l, const struct ir_node *n, int64_t outer, int64_t len,
		    int64_t inner, int64_t ni)
{
	const struct ir_value *x = &l->g->vals[n->in[0]], *idx = &l->g->vals[n->in[1]];
	struct gsplit G = { l, n, outer, len, inner, ni, ir_dtype_size(x->dtype),
			    ir_dtype_size(idx->dtype), lw_dtype(x->dtype), IPU_GRAPH_INVALID,
			    IPU_GRAPH_INVALID, IPU_GRAPH_INVALID, IPU_GRAPH_INVALID };
	uint64_t B = l->budget, row = (uint64_t)(len * inner) * G.es;
	uint64_t out_bytes = (uint64_t)(outer * ni * inner) * G.es;
	int64_t want = (int64_t)(out_bytes / GATHER_BLOCK_BYTES) + 1, cb, nc, nj;

	if (!G.dt)
		return lw_fail(l, "output type %s is not supported by the device", ir_dtype_name(x->dtype));
	if (want > (int64_t)l->tiles)
		want = l->tiles;
	/* a column of the data for every outer row, one index and its
	 * result: the least a block can hold */
	if ((uint64_t)len * G.es + G.ies + G.es > B)
		return lw_fail_mem(l, (uint64_t)len * G.es + G.ies + G.es,
				   "one column of the %lld-row data with one index and its result (the data's rows are not split over tiles)",
				   (long long)len);
	G.out = lw_tensor(l, l->g->vals[n->out[0]].name, G.dt, out_bytes / G.es);
	G.cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (G.out == IPU_GRAPH_INVALID || G.cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	l->vt[n->out[0]] = G.out;
	if (row + (uint64_t)ni * (G.ies + (uint64_t)inner * G.es) <= B) {
		/* whole outer rows with all their indices */
		int64_t per = (int64_t)(B / (row + (uint64_t)ni * (G.ies + (uint64_t)inner * G.es)));
		int64_t nb = pieces(outer, (outer + per - 1) / per, want);

		for (int64_t b = 0; b < nb; b++)
			if (outer * b / nb < outer * (b + 1) / nb &&
			    block(&G, outer * b / nb, outer * (b + 1) / nb, 0, ni, 0, inner))
				return -1;
		return lw_emit(l, G.xch, G.cs) ? -1 : 1;
	}
	/* one outer row per block; columns as wide as half the budget lets
	 * the data be, the indices in chunks filling the rest */
	cb = (int64_t)(B / 2 / ((uint64_t)len * G.es));
	if (cb > inner)
		cb = inner;
	if (cb < 1)
		cb = 1;
	nc = (inner + cb - 1) / cb;
	if (nc > 1) {
		/* the column blocks' results are copied into the output */
		if (lw_spread(l, G.out, out_bytes / G.es, (uint32_t)G.es,
			      (uint32_t)(out_bytes / 4096 + 1)) < 0)
			return -1;
	}
	nj = (int64_t)((B - (uint64_t)((inner + nc - 1) / nc * len) * G.es) /
		       (G.ies + (uint64_t)((inner + nc - 1) / nc) * G.es));
	if (nj < 1)
		nj = 1;
	{
		/* every index chunk of a row copies the row's data: no more
		 * chunks than make those copies as large as the output */
		int64_t copies = (int64_t)(out_bytes / ((uint64_t)outer * row)) + 1;
		int64_t spread = (want + outer * nc - 1) / (outer * nc);
		int64_t per_row = pieces(ni, (ni + nj - 1) / nj, spread < copies ? spread : copies);

		for (int64_t b = 0; b < outer; b++)
			for (int64_t c = 0; c < nc; c++)
				for (int64_t j = 0; j < per_row; j++) {
					int64_t j0 = ni * j / per_row, j1 = ni * (j + 1) / per_row;

					if (j1 > j0 && block(&G, b, b + 1, j0, j1, inner * c / nc, inner * (c + 1) / nc))
						return -1;
				}
	}
	if (lw_emit(l, G.xch, G.cs))
		return -1;
	return lw_emit(l, G.post, IPU_GRAPH_INVALID) ? -1 : 1;
}
