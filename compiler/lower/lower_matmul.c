/* SPDX-License-Identifier: MIT */
/*
 * lower_matmul.c - MatMul partitioned over tiles.
 *
 * The output [batch][M][N] is cut into blocks (batches of A sharing one B
 * are rows of a single product): batch x M rows first, then N
 * columns (only when B is a constant, whose column blocks are frozen where
 * they are used), then K when a block's working set would not fit in the
 * per-tile budget.  K parts compute float32 partial sums on different tiles;
 * the partials are exchanged to the tiles that sum them (whole output rows
 * in row pieces, straight into the output) and added as the product
 * ones x partials (a float16 output rounded once from the float32 sum).  A constant
 * bias the product's only reader adds is added inside the sum (lower_bias.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

struct mm {
	int64_t batch, ba, bb, M, N, K;
	int64_t pm, pn, pk;
	size_t esz;
	/* 'A' or 'B': that operand is a constant kept once, each of its
	 * blocks on one tile that computes every output block reading it (the
	 * other operand's blocks travel there); 0: blocks of both operands
	 * are copied to wherever an output block is computed */
	int homed;
	/* the operands are constants (frozen where they are used) */
	int a_const, b_const;
	/* columns per block: 0 for N cut evenly into pn blocks, else a
	 * multiple of the host kernel's register tile (the last block
	 * narrower) */
	int64_t nw;
	/* rows [r0, r0 + M) of a product of Mall rows: a chunk of a product
	 * too large to compute in one step (Mall == M, r0 == 0 otherwise) */
	int64_t r0, Mall;
	/* B is the blocked output of a product in column blocks this wide
	 * (each [K x width] one block): blocks of that width, all rows, no K
	 * split, read them in place (0: no such B) */
	int64_t b_width;
};

/* The host's matmul kernel computes 8 x 32 register tiles (AVX-512):
 * a block's rows and columns are paid rounded up to those. */
#define MM_TILE_ROWS 8
#define MM_TILE_COLS 32

/* Columns of the widest block. */
static int64_t ncols(const struct mm *m)
{
	return m->nw ? m->nw : (m->N + m->pn - 1) / m->pn;
}

/*
 * The pieces of output rows a K split's sums are made in.  Whole output
 * rows (pn 1) are summed on as many tiles as the output would be spread
 * over (a few KiB each), straight into the output kept there: the
 * partials' exchange and the sums are spread like the result, and no copy
 * places it.  Column blocks are summed on one tile and their rows copied
 * into the output.
 */
#define MM_SUM_PIECE_BYTES 8192
#define MM_MAX_PIECES 64

static int64_t sum_pieces(const struct mm *m, int64_t mb, int64_t nb)
{
	int64_t r;

	if (m->pk == 1 || m->pn > 1)
		return 1;
	r = (mb * nb * (int64_t)m->esz + MM_SUM_PIECE_BYTES - 1) / MM_SUM_PIECE_BYTES;
	if (r > mb)
		r = mb;
	if (r > MM_MAX_PIECES)
		r = MM_MAX_PIECES;
	return r > 0 ? r : 1;
}

static double round_up(double x, double to)
{
	return to * (double)(int64_t)((x + to - 1) / to);
}

/* " (W columns)" for the trace when the blocks have a set width. */
static const char *width(const struct mm *m, char *buf, size_t len)
{
	if (!m->nw)
		return "";
	snprintf(buf, len, " (%lld columns)", (long long)m->nw);
	return buf;
}

/* Output blocks computed on the tile of one constant block: the batches
 * sharing a constant A (B homed: pm is 1 and a shared B has no batch). */
static int64_t share(const struct mm *m)
{
	return m->homed == 'A' && m->ba == 1 ? m->batch : 1;
}

static uint64_t block_mem(const struct mm *m)
{
	int64_t mb = (m->M + m->pm - 1) / m->pm, nb = ncols(m);
	int64_t kb = (m->K + m->pk - 1) / m->pk;
	int64_t s = share(m);

	/* operand blocks, the result (or partial), and with a K split the
	 * home tile's share of the partials and their sum (a homed constant
	 * block once, the rest once per output block computed beside it) */
	if (m->homed == 'A')
		return (uint64_t)(mb * kb * (int64_t)m->esz +
				  s * (kb * nb * (int64_t)m->esz + mb * nb * 4 + (m->pk > 1 ? 2 * mb * nb * 4 : 0)));
	return (uint64_t)((mb * kb + kb * nb) * (int64_t)m->esz + mb * nb * 4 +
			  (m->pk > 1 ? 2 * mb * nb * 4 : 0));
}

/* Tiles' units of work: output blocks, or a homed constant's blocks. */
static uint64_t units(const struct mm *m)
{
	return (uint64_t)(m->batch * m->pm * m->pn * m->pk) / (uint64_t)share(m);
}

static uint64_t per_tile(const struct lw *l, const struct mm *m)
{
	uint64_t per = (units(m) + l->tiles - 1) / l->tiles;

	return per * block_mem(m);
}

/*
 * What a partition costs, in host nanoseconds.  The device is modelled
 * (cycles of the busiest tile: operand exchange, the MATMUL vertices, with
 * K split the partials' exchange and their sum, the blocks' rows copied
 * into the output) and interpreted on a couple of host threads, where a
 * vertex costs a fixed overhead, an exchange copy a memcpy, and a reduced
 * partial sum far more than a multiply-add.  Both count: a modelled
 * nanosecond weighs 10 host ones (a whole model runs about 20 times longer
 * on the host than modelled; 10 leans to the host), so a plan spreads over
 * more tiles only when the device gains more than the interpreter loses.
 * The host figures are wall time on 2 threads, measured on MobileNetV2 and
 * the MLP: 220 ns per vertex, 15 ns per copy plus 0.15 ns per byte, 1.2 ns
 * per partial sum reduced, 3 us per exchange or compute set, and in the
 * kernel 0.015 ns per multiply-add and 0.2 ns per result of its register
 * tiles (blocks whose rows and columns are not whole tiles pay for the
 * padding; a short K pays for its many results).
 */
#define MM_NS_PER_CYCLE 0.75		/* 1.33 GHz */
#define MM_MODEL_WEIGHT 10.0		/* host ns per modelled ns */
#define MM_HOST_VERTEX_NS 220.0
#define MM_HOST_STEP_NS 3000.0
#define MM_HOST_COPY_NS 15.0
#define MM_HOST_BYTE_NS 0.15
#define MM_HOST_REDUCED_NS 1.2
#define MM_HOST_MAC_NS 0.015
#define MM_HOST_RESULT_NS 0.2

static double plan_cost(const struct lw *l, const struct mm *c, double *cyc_out, double *host_out)
{
	double mb = (double)((c->M + c->pm - 1) / c->pm), nb = (double)ncols(c);
	double kb = (double)((c->K + c->pk - 1) / c->pk), esz = (double)c->esz;
	double blocks = (double)(c->batch * c->pm * c->pn * c->pk), outs = (double)(c->batch * c->pm * c->pn);
	/* blocks on the busiest tile, and output blocks (homes) */
	double per = (double)((units(c) + l->tiles - 1) / l->tiles) * (double)share(c);
	double homes = (double)(((uint64_t)outs + l->tiles - 1) / l->tiles);
	double rate = c->esz == 2 ? 64 : 16, osz = c->pk > 1 ? 4 : esz;
	int a_moves = c->homed == 'B' || (c->homed != 'A' && !c->a_const);
	int b_moves = (c->homed == 'A' || (c->homed != 'B' && !c->b_const)) &&
		      !(c->b_width && c->nw == c->b_width && c->pm == 1 && c->pk == 1);
	double in = (a_moves ? mb * kb * esz : 0) + (b_moves ? kb * nb * esz : 0);
	/* column blocks' rows are copied into the output; whole rows (a K
	 * split's sums too) are made where the output keeps them */
	int placed = c->pn > 1;
	double np = (double)sum_pieces(c, (int64_t)mb, (int64_t)nb);
	/* sum pieces on the busiest tile, each a share np of a block */
	double sums = (double)(((uint64_t)outs * (uint64_t)np + l->tiles - 1) / l->tiles);
	double cyc, host, copies, bytes;

	cyc = (in > 0 ? 100 + per * in / 8 : 0) +
	      50 + per * (40 + mb * nb * kb / rate + mb * 4 + mb * nb * osz / 8);
	if (c->pk > 1)
		cyc += 100 + sums * (double)c->pk * mb * nb * 4 / np / 8 +
		       50 + sums * (40 + (double)(c->pk + 1) * mb * nb * 4 / np / 8);
	if (placed)
		cyc += 100 + homes * mb * nb * esz / 8;

	/* a block of A is contiguous unless K is cut, one of B unless N is */
	copies = blocks * ((a_moves ? (c->pk > 1 ? mb : 1) : 0) + (b_moves ? (c->pn > 1 ? kb : 1) : 0));
	bytes = blocks * in;
	host = (blocks + (c->pk > 1 ? outs * np : 0)) * MM_HOST_VERTEX_NS;
	if (c->pk > 1) {
		copies += blocks * np;
		bytes += blocks * mb * nb * 4;
		host += outs * (double)(c->pk + 1) * mb * nb * MM_HOST_REDUCED_NS + 2 * MM_HOST_STEP_NS;
	}
	if (placed) {
		copies += outs * mb;
		bytes += outs * mb * nb * esz;
		host += MM_HOST_STEP_NS;
	}
	host += copies * MM_HOST_COPY_NS + bytes * MM_HOST_BYTE_NS;
	/* the kernel: multiply-adds and results of whole register tiles */
	host += blocks * round_up(mb, MM_TILE_ROWS) * round_up(nb, MM_TILE_COLS) *
		(kb * MM_HOST_MAC_NS + MM_HOST_RESULT_NS);
	if (cyc_out)
		*cyc_out = cyc;
	if (host_out)
		*host_out = host;
	return host + cyc * MM_NS_PER_CYCLE * MM_MODEL_WEIGHT;
}

struct search {
	struct mm best;
	double best_cost;	/* < 0: none yet */
	double best_total;	/* bytes over all tiles of `best` */
	int best_ok;
	double unique;		/* bytes of A, B and the result */
	uint64_t least;		/* least per-tile memory of any partition */
};

/* Candidate c with every pk (powers of two). */
static void consider(const struct lw *l, struct search *s, struct mm c)
{
	for (c.pk = 1;; c.pk = c.pk * 2 > c.K ? c.K : c.pk * 2) {
		uint64_t mem = per_tile(l, &c);
		uint64_t blocks = (uint64_t)(c.batch * c.pm * c.pn * c.pk);
		double cyc, host, cost = plan_cost(l, &c, &cyc, &host);
		double total = (double)units(&c) * (double)block_mem(&c);
		/* no liveness yet: bound the replication of A and B */
		int spread_ok = total <= 3.0 * s->unique;
		/* the home tile of a K split's sum holds every partial of
		 * its piece */
		int64_t mb = (c.M + c.pm - 1) / c.pm;
		uint64_t home = c.pk > 1 ? (uint64_t)(c.pk + 2) * (uint64_t)mb * (uint64_t)ncols(&c) * 4 /
			(uint64_t)sum_pieces(&c, mb, ncols(&c)) : 0;

		if (home > mem)
			mem = home;
		/* IPU_LOWER_TRACE=mm: every partition tried */
		if (getenv("IPU_LOWER_TRACE") && !strcmp(getenv("IPU_LOWER_TRACE"), "mm"))
			fprintf(stderr, "  try pm %lld pn %lld nw %lld pk %lld%s: %llu bytes per tile%s, cost %.0f (%.0f cycles, host %.0f ns)\n",
				(long long)c.pm, (long long)c.pn, (long long)c.nw, (long long)c.pk,
				c.homed == 'A' ? " (A kept once)" : c.homed == 'B' ? " (B kept once)" : "",
				(unsigned long long)mem, mem > l->budget ? " (over)" : "", cost, cyc, host);
		if (blocks <= 64u * l->tiles && mem < s->least)
			s->least = mem;
		if (mem <= l->budget && blocks <= 64u * l->tiles &&
		    (s->best_cost < 0 || (spread_ok && !s->best_ok) ||
		     (!spread_ok && !s->best_ok && total < s->best_total) ||
		     (spread_ok && s->best_ok && cost < s->best_cost))) {
			s->best_cost = cost;
			s->best = c;
			s->best_ok = spread_ok;
			s->best_total = total;
		}
		if (c.pk == c.K)
			break;
	}
}

/* Searches pm, pn, pk over powers of two, and column blocks whose width
 * is a multiple of the kernel's register tile, for the partition with the
 * least plan_cost whose per-tile memory fits the budget.  A homed
 * constant is never cut along the dimension its blocks are shared over
 * (pm for B, pn for A). */
static int plan(struct lw *l, struct mm *m, uint64_t *least_out)
{
	struct search s = { .best = *m, .best_cost = -1, .least = UINT64_MAX };
	struct mm c = *m;

	s.unique = (double)((m->batch * m->M * m->K + m->batch * m->K * m->N) * (int64_t)m->esz +
			    m->batch * m->M * m->N * 4);
	for (c.pm = 1;; c.pm = c.pm * 2 > m->M ? m->M : c.pm * 2) {
		c.nw = 0;
		for (c.pn = 1;; c.pn = c.pn * 2 > m->N ? m->N : c.pn * 2) {
			consider(l, &s, c);
			if (c.pn == m->N || m->homed == 'A')
				break;
		}
		/* widths 32, 64, 96, 128, 192, 256, ... columns */
		for (int64_t w = MM_TILE_COLS; w < m->N && m->homed != 'A';
		     w = w == MM_TILE_COLS ? 2 * w : w % 3 ? w / 2 * 3 : w / 3 * 4) {
			c.nw = w;
			c.pn = (m->N + w - 1) / w;
			consider(l, &s, c);
		}
		if (c.pm == m->M || m->homed == 'B')
			break;
	}
	if (least_out)
		*least_out = s.least;
	if (s.best_cost < 0)
		return -1;
	*m = s.best;
	return 0;
}

/* Has tile t room for an [mb x kb] x [kb x nb] block of m: its memory,
 * and a constant operand's block frozen there (a tile that keeps enough
 * constants has them copied in every run, which costs more than the
 * copy a chosen tile saves)? */
static int room(const struct lw *l, const struct mm *m, uint32_t t, int64_t mb, int64_t kb, int64_t nb)
{
	uint64_t frozen = (uint64_t)((m->a_const ? mb * kb : 0) + (m->b_const ? kb * nb : 0)) * m->esz;

	return t < l->tiles && l->used[t] + block_mem(m) <= l->tile_mem - l->tile_mem / 4 &&
	       (!frozen || l->kept[t] + frozen <= l->keep_limit);
}

/* The blocks of plan m; ctile[im * pk + ik]: the tile of a homed A's
 * block (INVALID until its first use). */
static int mm_emit(struct lw *l, const struct ir_node *n, const struct mm *mp, uint32_t *ctile)
{
	/* the output of all chunks exists once, made by the first */
	int first = mp->r0 == 0;
	const struct ir_graph *g = l->g;
	const struct ir_value *o = &g->vals[n->out[0]];
	struct mm m = *mp;
	uint32_t odt = lw_dtype(o->dtype), cs1, cs2 = IPU_GRAPH_INVALID;
	uint32_t cs8 = IPU_GRAPH_INVALID;	/* fp8 conversions of activations */
	uint32_t cs0 = IPU_GRAPH_INVALID;	/* output blocks filled with the bias */
	struct lw_mm_bias bias = { .v = -1 };
	int fp8 = lw_fp8_is_layer(n);
	ipu_step x1 = IPU_GRAPH_INVALID, x2 = IPU_GRAPH_INVALID, x3 = IPU_GRAPH_INVALID;
	ipu_tensor out = IPU_GRAPH_INVALID;
	/* column blocks stay where they are computed: the output is blocked
	 * (lower_blocked.c) and readers copy from the blocks, instead of
	 * their rows being copied into a standard output first
	 * (IPU_LOWER_BLOCKED=0: the copy, for comparisons).  Not for a
	 * product made in chunks (too large for the tiles at once): its
	 * blocks would pile up where the chunks were computed, while the
	 * standard output is spread evenly; nor for the A operand of a later
	 * product (an MLP's or a transformer's next layer): each of its
	 * column blocks reads all of A's rows, run by run from blocks (many
	 * more copies) but row by row from the standard output */
	int partner = -1;	/* blocked value the output is added to */
	int blocked = m.pn > 1 && m.M == m.Mall && !(getenv("IPU_LOWER_BLOCKED") && !strcmp(getenv("IPU_LOWER_BLOCKED"), "0")) &&
		      !lw_read_as_matmul_a(l, n, n->out[0], 0);

	/* a float32 bias joining partial sums is filled beside the products
	 * (its slot is read only by the reduction): no compute set of its own */
	if (lw_mm_bias_find(l, n, m.Mall, m.N, &bias) && (m.pk == 1 || odt != IPUX_DT_F32) &&
	    (cs0 = ipu_graph_add_compute_set(l->gb, "bias")) == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (blocked) {
		if (lw_blocked_new(l, n->out[0], odt, (uint64_t)(m.batch * m.Mall * m.N)))
			return -1;
	} else if ((out = first ? lw_tensor(l, o->name, odt, (uint64_t)(m.batch * m.Mall * m.N))
				: l->vt[n->out[0]]) == IPU_GRAPH_INVALID)
		return lw_check(l);
	cs1 = ipu_graph_add_compute_set(l->gb, n->name);
	if (cs1 == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (!blocked)
		l->vt[n->out[0]] = out;
	if (bias.v >= 0) {
		if (blocked)
			lw_blocked_alias(l, g->nodes[bias.node].out[0], n->out[0]);
		else
			l->vt[g->nodes[bias.node].out[0]] = out;
		l->absorbed[bias.node] = 1;
	}
	/* a Relu or Clip reading only the result: in its final writers (lower_act.c) */
	struct lw_act act;

	if (lw_act_take(l, bias.v >= 0 ? g->nodes[bias.node].out[0] : n->out[0], out, fp8, &act))
		return -1;
	/* blocks that are not whole output rows are copied into an output
	 * spread once over the tiles */
	if (first && m.pn > 1 && !blocked &&
	    lw_spread(l, out, (uint64_t)(m.batch * m.Mall * m.N), ipux_dtype_size(odt),
		      lw_matmul_a_tiles(l, n->out[0], m.batch * m.Mall,
					(uint64_t)(m.batch * m.Mall * m.N) * ipux_dtype_size(odt))) < 0)
		return -1;
	if (m.pk > 1) {
		cs2 = ipu_graph_add_compute_set(l->gb, "sum");
	}
	if (blocked && m.pk == 1 && !ctile)
		partner = lw_blocked_partner(l, n, n->out[0]);
	for (int64_t p = 0; p < m.batch; p++)
	for (int64_t im = 0; im < m.pm; im++)
	for (int64_t in = 0; in < m.pn; in++) {
		int64_t m0 = m.r0 + m.M * im / m.pm, m1 = m.r0 + m.M * (im + 1) / m.pm;
		int64_t n0 = m.nw ? (in * m.nw < m.N ? in * m.nw : m.N) : m.N * in / m.pn;
		int64_t n1 = m.nw ? ((in + 1) * m.nw < m.N ? (in + 1) * m.nw : m.N) : m.N * (in + 1) / m.pn;
		int64_t mb = m1 - m0, nb = n1 - n0;
		uint64_t obase = (uint64_t)(p * m.Mall * m.N);
		/* the K split's sum pieces: rows [ra, ra + rn) of the block
		 * summed on tile home from partials parts */
		struct {
			uint32_t home;
			int64_t ra, rn;
			struct ipu_slice parts;
		} pc[MM_MAX_PIECES];
		int64_t np = sum_pieces(&m, mb, nb);
		int started = 0;
		struct ipu_slice blk = { IPU_GRAPH_INVALID, 0, 0 };
		struct ipu_slice res;

		if (mb <= 0 || nb <= 0)
			continue;
		for (int64_t ik = 0; ik < m.pk; ik++) {
			int64_t k0 = m.K * ik / m.pk, k1 = m.K * (ik + 1) / m.pk;
			uint32_t *ct = ctile ? &ctile[im * m.pk + ik] : NULL;
			uint32_t tile = ct && *ct != IPU_GRAPH_INVALID ? *ct : IPU_GRAPH_INVALID, bt;

			/* a block of a product added to a blocked value
			 * (a residual Add) is computed beside that value's
			 * same block, so that the Add runs in place; else the
			 * first block reading a block of a blocked B (the
			 * previous product's, same columns) is computed where
			 * that block is, reading it in place; both while the
			 * tile has room for it */
			if (tile == IPU_GRAPH_INVALID && partner >= 0 &&
			    lw_blocked_block_tile(l, partner, obase, m.N, m0, mb, n0, nb, &bt) &&
			    room(l, &m, bt, mb, k1 - k0, nb))
				tile = bt;
			if (tile == IPU_GRAPH_INVALID && !ct && im == 0 &&
			    lw_blocked_block_tile(l, n->in[1], (uint64_t)((m.bb == 1 ? 0 : p) * m.K * m.N), m.N,
						  k0, k1 - k0, n0, nb, &bt) &&
			    room(l, &m, bt, mb, k1 - k0, nb))
				tile = bt;
			/* a constant operand's block (kept once or frozen
			 * beside the block) stays for the whole program: on
			 * the tile with the lowest peak so far */
			if (tile == IPU_GRAPH_INVALID && m.b_const && lw_shared(l, n->in[1]) &&
			    lw_const_home_tile(l, n->in[1], (uint64_t)((m.bb == 1 ? 0 : p) * m.K * m.N), m.N,
					       k0, k1 - k0, n0, nb, &bt))
				tile = bt;
			if (tile == IPU_GRAPH_INVALID)
				tile = ct || m.a_const || m.b_const ? lw_pick_tile_kept(l) : lw_pick_tile(l);
			struct ipu_slice ops[3];
			uint32_t params[5] = { 1, (uint32_t)mb, (uint32_t)nb, (uint32_t)(k1 - k0), 0 };

			if (k1 <= k0)
				continue;
			if (ct)
				*ct = tile;
			if (lw_block_piece(l, n->in[0], (uint64_t)((m.ba == 1 ? 0 : p) * m.Mall * m.K), m.K,
					m0, mb, k0, k1 - k0, tile, &x1, &ops[0]) ||
			    lw_block_piece(l, n->in[1], (uint64_t)((m.bb == 1 ? 0 : p) * m.K * m.N), m.N,
					k0, k1 - k0, n0, nb, tile, &x1, &ops[1]))
				return -1;
			if (m.pk == 1 && m.pn == 1) {
				if (ipu_graph_map(l->gb, out, tile, obase + (uint64_t)(m0 * m.N),
						  obase + (uint64_t)(m1 * m.N)))
					return lw_check(l);
				lw_account(l, tile, (uint64_t)(mb * nb) * ipux_dtype_size(odt));
				ops[2] = (struct ipu_slice){ out, obase + (uint64_t)(m0 * m.N), (uint64_t)(mb * nb) };
			} else {
				uint32_t pdt = m.pk > 1 ? IPUX_DT_F32 : odt;

				if (blocked && m.pk == 1 ? lw_blocked_block(l, n->out[0], tile, (uint64_t)(mb * nb), &ops[2])
				    : lw_temp(l, "partial", pdt, (uint64_t)(mb * nb), tile, &ops[2]))
					return -1;
				for (int64_t j = 0; !started && m.pk > 1 && j < np; j++) {
					int64_t ra = mb * j / np, rn = mb * (j + 1) / np - ra;
					struct ipu_slice *pp = &pc[j].parts;

					/* a homed constant's tiles hold its blocks
					 * already: the partials go elsewhere; so do
					 * they when the block and the whole piece
					 * would pass what the plan gave a tile (the
					 * plan counts the block with its share of the
					 * sum, and the piece alone: BERT-large's FFN
					 * on two IPUs put 122,880 + 139,264 bytes on
					 * tiles planned for 159,000) */
					uint64_t piece = (uint64_t)((m.pk + 2) * rn * nb) * 4;
					uint64_t share = (uint64_t)(2 * mb * nb) * 4;

					pc[j].home = m.homed || j || block_mem(&m) - share + piece > l->budget
						     ? lw_pick_tile(l) : tile;
					pc[j].ra = ra;
					pc[j].rn = rn;
					/* with a bias, one more partial: the bias */
					if (lw_temp(l, "partials", IPUX_DT_F32,
						    (uint64_t)((m.pk + (bias.v >= 0)) * rn * nb), pc[j].home, pp))
						return -1;
					if (bias.v >= 0) {
						struct ipu_slice bs = { pp->t, pp->begin + (uint64_t)(m.pk * rn * nb),
									(uint64_t)(rn * nb) };

						if (odt == IPUX_DT_F32
						    ? lw_mm_bias_fill(l, &bias, cs1, &x1, pc[j].home, bs, m0 + ra, rn, n0, nb)
						    : lw_mm_bias_f32(l, &bias, cs0, cs1, &x1, pc[j].home, bs, m0 + ra, rn, n0, nb))
							return -1;
					}
				}
				if (!started)
					blk = ops[2];
				started = 1;
				for (int64_t j = 0; m.pk > 1 && j < np; j++) {
					uint64_t rn = (uint64_t)pc[j].rn;

					if (x2 == IPU_GRAPH_INVALID && (x2 = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
						return lw_check(l);
					if (ipu_exchange_add(l->gb, x2,
							     (struct ipu_slice){ ops[2].t, ops[2].begin + (uint64_t)pc[j].ra * (uint64_t)nb,
										 rn * (uint64_t)nb },
							     (struct ipu_slice){ pc[j].parts.t,
										 pc[j].parts.begin + (uint64_t)ik * rn * (uint64_t)nb,
										 rn * (uint64_t)nb }))
						return lw_check(l);
				}
			}
			if (bias.v >= 0 && m.pk == 1) {
				if (lw_mm_bias_fill(l, &bias, cs0, &x1, tile, ops[2], m0, mb, n0, nb))
					return -1;
				params[4] |= IPUX_MM_ACCUMULATE;
			}
			if (fp8) {
				uint32_t p8[7] = { 1, (uint32_t)mb, (uint32_t)nb, (uint32_t)(k1 - k0), params[4], 0, 0 };
				struct ipu_slice o8[4] = { ops[0], ops[1], ops[2] };
				size_t nsc;
				/* per-channel scales: a fourth operand, one a
				 * row of A (a weight W x X) or a column of B */
				int wk = (int)ir_attr_int(n, "fp8_weight_input", 1);
				int scaled = lw_fp8_channel_scales(n, &nsc) != NULL;

				if (scaled) {
					p8[4] |= wk ? IPUX_MM_SCALES_B : IPUX_MM_SCALES_A;
					if (lw_fp8_channel_piece(l, n, wk ? n0 : m0, wk ? nb : mb, tile, &o8[3]))
						return -1;
				}
				for (int k = 0; k < 2; k++) {
					uint32_t f8dt;
					int s = 0;

					if (!lw_fp8_weight(l, n->in[k], &f8dt, &s) &&
					    lw_fp8_input(l, n, k, &o8[k], tile, &cs8, &s))
						return -1;
					p8[5 + k] = (uint32_t)s;
				}
				if (ipu_graph_add_vertex(l->gb, cs1, IPUX_CL_MATMUL_FP8, o8, scaled ? 4 : 3, p8, 7))
					return lw_check(l);
			} else if (lw_mm_vertex(l, cs1, ops, params, m.pk == 1 ? &act : NULL))
				return lw_check(l);
		}
		if (m.pk == 1 && m.pn == 1)
			continue;
		res = blk;
		for (int64_t j = 0; m.pk > 1 && j < np; j++) {
			/* partial sums -> one piece on its home tile: whole
			 * output rows into the output, mapped there */
			uint64_t cnt = (uint64_t)(pc[j].rn * nb);
			uint32_t kp = (uint32_t)(m.pk + (bias.v >= 0));
			uint32_t sp[5] = { 1, 1, (uint32_t)cnt, kp, 0 };
			uint32_t home = pc[j].home;
			struct ipu_slice sops[3], dst = { IPU_GRAPH_INVALID, 0, 0 };

			if (m.pn == 1) {
				uint64_t o0 = obase + (uint64_t)((m0 + pc[j].ra) * m.N);

				if (ipu_graph_map(l->gb, out, home, o0, o0 + cnt))
					return lw_check(l);
				lw_account(l, home, cnt * ipux_dtype_size(odt));
				dst = (struct ipu_slice){ out, o0, cnt };
			}
			if (lw_ones_on(l, home, kp, &sops[0]))
				return -1;
			sops[1] = pc[j].parts;
			if (dst.t != IPU_GRAPH_INVALID)
				sops[2] = dst;
			else if (blocked ? lw_blocked_block(l, n->out[0], home, cnt, &sops[2])
					 : lw_temp(l, "sum", odt, cnt, home, &sops[2]))
				return -1;
			if (lw_mm_vertex(l, cs2, sops, sp, &act))
				return lw_check(l);
			res = sops[2];
		}
		if (m.pk > 1 && m.pn == 1)
			continue;
		if (blocked) {
			/* the block's rows are runs of the output */
			for (int64_t r = 0; r < mb; r++)
				if (lw_blocked_run(l, n->out[0], obase + (uint64_t)((m0 + r) * m.N + n0), (uint64_t)nb,
						   res.begin + (uint64_t)(r * nb)))
					return -1;
			continue;
		}
		/* block rows -> the output, which lives on the home tile */
		if (x3 == IPU_GRAPH_INVALID && (x3 = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
			return lw_check(l);
		for (int64_t r = 0; r < mb; r++) {
			uint64_t ob = obase + (uint64_t)((m0 + r) * m.N + n0);

			if (ipu_exchange_add(l->gb, x3, (struct ipu_slice){ res.t, res.begin + (uint64_t)(r * nb), (uint64_t)nb },
					     (struct ipu_slice){ out, ob, (uint64_t)nb }))
				return lw_check(l);
		}
	}
	if (lw_emit(l, x1, cs8) || lw_emit(l, IPU_GRAPH_INVALID, cs0) ||
	    lw_emit(l, IPU_GRAPH_INVALID, cs1))
		return -1;
	if (m.pk > 1 && lw_emit(l, x2, cs2))
		return -1;
	if (x3 != IPU_GRAPH_INVALID && lw_emit(l, x3, IPU_GRAPH_INVALID))
		return -1;
	if (blocked && lw_blocked_done(l, n->out[0]))
		return -1;
	return 1;
}

/*
 * A product whose operands, cut into as many blocks as the tiles can hold
 * at once, still need more than a tile gives: every output block needs its
 * rows of A and columns of B beside it, so the device holds the operands
 * replicated about sqrt(tiles) times.  Computing the output rows in chunks,
 * one after another, cuts that: each chunk is planned over all tiles and
 * its temporaries are dead (their memory reused) before the next starts.
 * With batches, a chunk is the same rows of every batch.
 */
static int chunked(struct lw *l, const struct ir_node *n, struct mm *m, uint64_t least)
{
	struct mm c = *m;
	char wbuf[32];
	int64_t rows = 0;

	for (int64_t nc = 2; nc / 2 < m->Mall && nc <= 4096; nc *= 2) {
		c = *m;
		c.M = (m->Mall + nc - 1) / nc;
		if (plan(l, &c, NULL) == 0) {
			rows = c.M;
			break;
		}
	}
	if (!rows)
		return lw_fail_mem(l, least, "matmul [%lld x %lld] x [%lld x %lld] (batch %lld), split as finely as it can be,",
				   (long long)m->Mall, (long long)m->K, (long long)m->K, (long long)m->N,
				   (long long)m->batch);
	if (getenv("IPU_LOWER_TRACE"))
		fprintf(stderr, "lower: %s: matmul [%lld x %lld] x [%lld x %lld] in chunks of %lld rows -> pm %lld pn %lld%s pk %lld, %llu bytes per block\n",
			n->name, (long long)m->Mall, (long long)m->K, (long long)m->K, (long long)m->N,
			(long long)rows, (long long)c.pm, (long long)c.pn, width(&c, wbuf, sizeof(wbuf)), (long long)c.pk,
			(unsigned long long)block_mem(&c));
	/* every chunk with the first one's plan: the output's layout (one
	 * spread, or blocks mapped where they are computed) is the same */
	for (int64_t r0 = 0; r0 < m->Mall; r0 += rows) {
		c.r0 = r0;
		c.M = m->Mall - r0 < rows ? m->Mall - r0 : rows;
		if (r0)
			lw_temp_reset(l);
		if (mm_emit(l, n, &c, NULL) < 0)
			return -1;
	}
	return 1;
}

uint32_t lw_matmul_a_tiles(struct lw *l, int v, int64_t rows, uint64_t bytes)
{
	uint64_t want = bytes / 8192 + 1;
	const struct ir_graph *g = l->g;
	int reads_a = 0;

	/* does a product read v as its A (through elementwise ops too)? */
	for (int j = 0; j < g->nnodes && !reads_a; j++) {
		const struct ir_node *r = &g->nodes[j];
		int reads = 0;

		for (int k = 0; k < r->nin && !r->dead; k++)
			reads |= r->in[k] == v;
		if (reads)
			reads_a = r->opid == IR_OP_MatMul ? r->in[0] == v
				  : r->nout >= 1 && r->out[0] >= 0 && lw_read_as_matmul_a(l, r, r->out[0], 1);
	}
	if (reads_a && rows > 0 && (uint64_t)rows > want)
		want = (uint64_t)rows;
	return want < l->tiles ? (uint32_t)want : l->tiles;
}

int lw_matmul(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *a, *b;
	struct mm m;
	char wbuf[32];
	uint32_t *ctile;

	if (n->opid != IR_OP_MatMul)
		return 0;
	a = &g->vals[n->in[0]];
	b = &g->vals[n->in[1]];
	if ((a->dtype != IR_F32 && a->dtype != IR_F16) || a->dtype != b->dtype)
		return lw_fail(l, "matmul of %s x %s: float32 or float16 operands of one type are lowered",
			       ir_dtype_name(a->dtype), ir_dtype_name(b->dtype));
	memset(&m, 0, sizeof(m));
	m.esz = ir_dtype_size(a->dtype);
	m.K = a->dims[a->rank - 1];
	m.M = a->rank > 1 ? a->dims[a->rank - 2] : 1;
	m.N = b->rank > 1 ? b->dims[b->rank - 1] : 1;
	m.ba = a->rank > 2 ? ir_numel(a->rank - 2, a->dims) : 1;
	m.bb = b->rank > 2 ? ir_numel(b->rank - 2, b->dims) : 1;
	m.batch = m.ba > m.bb ? m.ba : m.bb;
	if (m.ba != m.bb && m.ba != 1 && m.bb != 1)
		return lw_fail(l, "batch dimensions broadcast partially; only equal batches or a shared operand are lowered");
	if (m.ba == m.bb && m.ba > 1 && a->rank != b->rank)
		return lw_fail(l, "batch ranks differ");
	/* A shared B (a 2-D weight): A's batches are consecutive rows of one
	 * [batch*M x K] matrix and the output's of one [batch*M x N], so one
	 * product lets the planner cut rows freely instead of giving every
	 * batch (every token of a seq-first transformer) its own copy of B. */
	if (m.bb == 1 && m.ba > 1) {
		m.M *= m.ba;
		m.ba = m.batch = 1;
	}
	/* exchange the smaller operand: a constant at least as large as the
	 * other operand stays where its blocks are (copies of it would be
	 * kept for the whole program, or moved every run) */
	if (b->data && m.bb == 1 && ir_value_numel(b) >= ir_value_numel(a))
		m.homed = 'B';
	else if (a->data && !b->data && m.ba == 1 && ir_value_numel(a) >= ir_value_numel(b))
		m.homed = 'A';
	m.Mall = m.M;
	m.a_const = a->data != NULL;
	m.b_const = b->data != NULL;
	if (m.bb == 1 && m.batch == 1)
		m.b_width = lw_blocked_col_width(l, n->in[1], m.K, m.N);
	{
		struct mm h = m;
		uint64_t least;

		if (!m.homed || plan(l, &h, NULL)) {
			m.homed = 0;
			if (plan(l, &m, &least))
				return chunked(l, n, &m, least);
		} else
			m = h;
	}
	if (m.b_const && m.bb == 1 && m.batch == 1) {
		/* a prefill's product over the decode step's weight: cut B as
		 * the step did, each block computed where the step froze it
		 * (mm_emit), so the weight is read in place, never copied */
		struct mm f = m;
		int r = lw_share_plan(l, n->in[1], &f.pn, &f.nw, &f.pk);

		if (r < 0)
			return -1;
		if (r) {
			f.homed = 'B';
			if (block_mem(&f) > l->budget)
				f.pm = f.M;
			if (block_mem(&f) <= l->budget)
				m = f;
		}
	}
	if (getenv("IPU_LOWER_TRACE"))
		fprintf(stderr, "lower: %s: matmul batch %lld [%lld x %lld] x [%lld x %lld] -> pm %lld pn %lld%s pk %lld%s, %llu bytes per block\n",
			n->name, (long long)m.batch, (long long)m.M, (long long)m.K, (long long)m.K,
			(long long)m.N, (long long)m.pm, (long long)m.pn, width(&m, wbuf, sizeof(wbuf)), (long long)m.pk,
			m.homed == 'A' ? " (A kept once)" : m.homed == 'B' ? " (B kept once)" : "",
			(unsigned long long)block_mem(&m));
	if (m.homed == 'A') {
		int r;

		ctile = malloc((size_t)(m.pm * m.pk) * sizeof(*ctile));
		if (!ctile)
			return lw_fail(l, "out of memory");
		for (int64_t i = 0; i < m.pm * m.pk; i++)
			ctile[i] = IPU_GRAPH_INVALID;
		r = mm_emit(l, n, &m, ctile);
		free(ctile);
		return r;
	}
	return mm_emit(l, n, &m, NULL);
}
