/* SPDX-License-Identifier: MIT */
/*
 * lower_conv.c - 1-D and 2-D convolutions split over tiles by batch,
 * output-channel blocks (whole groups when grouped, parts of one group
 * when a whole group does not fit), output-row blocks
 * and, when a block over all input channels does not fit a tile, input
 * channel parts whose float32 partial sums are added on the block's home
 * tile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/opgeom.h"
#include "lower_internal.h"

#define REPLICATION 3.0
#define CONV_VERTEX_CYCLES 40.0	/* the modelled tile's overhead per vertex */
#define XCH_CYCLES 100.0	/* and per exchange */
/* What a vertex and an exchange copy cost the host that runs the tiles
 * (about 370 and 150 ns on two threads), in the planner's cycles, weighted
 * by the modelled device's time over the host's for a whole model (about
 * 1/30 for MobileNetV2): a plan that takes 1% off either is worth as
 * much. */
#define HOST_VERTEX_CYCLES 12.0
#define HOST_COPY_CYCLES 6.0
/* and per byte an exchange copies, over all tiles.  The host copies
 * about 15 GB/s on two threads, which at the weights above would be
 * 1/400 cycle a byte, but the copies also cost the codelets that read
 * them cold and the bytes they displace from the caches; weights from
 * 1/400 to 1/12 were measured (CPU time per request, one worker):
 * ResNet-18 fp32 went from 71.7 to 68.5 ms only at 1/12 (exchanges 119.5
 * -> 68.3 MB), with its modelled time 6% shorter.  Once partial sums of
 * whole channel planes were summed in place, 1/12 traded 11% of
 * ResNet-18's modelled time for fewer, larger blocks and about 1% of CPU
 * time (within the noise); 1/16 keeps the modelled time. */
#define HOST_BYTE_CYCLES (1.0 / 16)

struct convplan {
	int64_t pc, pr;		/* output-channel blocks, output-row blocks */
	int64_t pk;		/* input-channel parts (partial sums) */
};

/* Bytes one block of the conv holds on its tile.  A grouped conv's blocks
 * are whole groups (pc divides the group count), so a block reads only its
 * groups' C / pc input channels, or parts of one group (pc a multiple of
 * the group count) reading that group's C / G. */
static uint64_t conv_block_mem(int64_t C, int64_t G, int64_t W, int64_t OH, int64_t OW, int64_t M,
			       int64_t wrow, int64_t s, int64_t ext, int64_t H,
			       const struct convplan *p, size_t es)
{
	int64_t cb = (M + p->pc - 1) / p->pc, rows = (OH + p->pr - 1) / p->pr;
	int64_t in_rows = (rows - 1) * s + ext, cin = G > 1 ? C / (p->pc < G ? p->pc : G) : C;
	uint64_t part, home;

	if (in_rows > H)
		in_rows = H;
	if (p->pk == 1)
		return (uint64_t)(cin * in_rows * W + cb * wrow + cb * rows * OW * (p->pr > 1 && p->pc < M ? 2 : 1) + cb) * es;
	/* a part: its channels' rows and weights, a float32 partial; the
	 * home tile then holds every partial, their sum and its cast (the
	 * sum of a block of all rows is its part of the output; a grouped
	 * conv's parts split one group's C / G channels) */
	cin = (C / G + p->pk - 1) / p->pk;
	part = (uint64_t)(cin * in_rows * W + cb * (wrow / (C / G)) * cin + cb) * es + (uint64_t)(cb * rows * OW) * 4;
	home = (uint64_t)((p->pk + (p->pr == 1 && es == 4 ? 0 : 1)) * cb * rows * OW) * 4 +
	       (uint64_t)(cb * rows * OW) * es;
	return part > home ? part : home;
}

/* What a partition costs, in cycles of the modelled tile: the busiest
 * tile's blocks (each a vertex's overhead, its multiply-adds, streaming
 * its input, output and weights, and the exchange bringing its input rows
 * in and, for row blocks, its result out; with input-channel parts, the
 * partial sums' exchange to the block's home tile, their REDUCE, cast and
 * copy out) plus what every block costs the host that runs the tiles: per
 * vertex, per exchange copy (a row block copies each of its input and
 * output channels apart, a block of whole channel planes one piece in and
 * none out) and per byte every exchange copies (over all tiles: the host
 * copies them all).  Counting multiply-adds and bytes alone, the search
 * cut a 960-channel 7 x 7 depthwise conv into 1344 vertices of 5 channels
 * x 1 row, a few hundred multiply-adds each; with these overheads it takes
 * 80 blocks of 12 whole channels, and the modelled time of MobileNetV2's
 * depthwise convs fell too (fewer halo rows read twice, fewer output
 * copies). */
struct convcost {
	double dev;		/* modelled cycles of the busiest tiles */
	double verts, copies, bytes;	/* the host's work */
	double total;		/* dev + the host's work in planner cycles */
};

static void conv_plan_cost(int64_t N, int64_t C, int64_t G, int64_t H, int64_t W, int64_t OH,
			   int64_t OW, int64_t M, int64_t wrow, int64_t s, int64_t ext,
			   const struct convplan *p, size_t es, uint32_t tiles, int f16,
			   struct convcost *cc)
{
	int64_t cb = (M + p->pc - 1) / p->pc, rows = (OH + p->pr - 1) / p->pr;
	int64_t in_rows = (rows - 1) * s + ext, cin;
	uint64_t blocks = (uint64_t)(N * p->pc * p->pr * p->pk), per = (blocks + tiles - 1) / tiles;
	uint64_t homes = (uint64_t)(N * p->pc * p->pr), perh = (homes + tiles - 1) / tiles;
	double in, out, macs, cyc;
	/* row blocks of several channels are copied into the output; whole
	 * channel planes, and rows of one channel, are one contiguous range
	 * of it, computed in place */
	int copied_out = p->pr > 1 && p->pc < M && p->pk == 1;

	if (in_rows > H)
		in_rows = H;
	if (p->pk > 1)
		cin = (C / G + p->pk - 1) / p->pk;
	else
		cin = G > 1 ? C / (p->pc < G ? p->pc : G) : C;
	in = (double)(cin * in_rows * W);
	out = (double)(cb * rows * OW);
	macs = out * (double)wrow / (double)p->pk;
	cyc = CONV_VERTEX_CYCLES + macs / (f16 ? 64 : 16) + (in + out) * (double)es / 8 +
	      in * (double)es / 8 + (double)(cb * wrow / p->pk) * (double)es / 8;
	if (p->pk > 1)
		cyc += out * (4.0 - (double)es) / 8;	/* a float32 partial */
	if (copied_out)
		cyc += out * (double)es / 8;
	cyc *= (double)per;
	if (copied_out)
		cyc += XCH_CYCLES;
	cc->verts = (double)blocks;
	cc->copies = (double)blocks * (p->pr > 1 ? (double)cin : 1);
	cc->bytes = (double)blocks * in * (double)es;
	if (copied_out) {
		cc->copies += (double)homes * (double)cb;
		cc->bytes += (double)homes * out * (double)es;
	}
	if (p->pk > 1) {
		/* the partials' exchange to the home tile, the REDUCE (and
		 * the cast to float16), and but for blocks of all rows
		 * (summed in place in the output) the copy out */
		cyc += 2 * XCH_CYCLES + (double)perh * ((double)p->pk * out * 4 / 8 +
			CONV_VERTEX_CYCLES + (double)(p->pk + 1) * out * 4 / 8);
		if (es != 4)
			cyc += (double)perh * (CONV_VERTEX_CYCLES + out * (4 + (double)es) / 8);
		cc->verts += (double)homes * (es != 4 ? 2 : 1);
		cc->copies += (double)blocks;
		cc->bytes += (double)blocks * out * 4;
		if (p->pr > 1) {
			cyc += XCH_CYCLES + (double)perh * out * (double)es / 8;
			cc->copies += (double)homes * (double)cb;
			cc->bytes += (double)homes * out * (double)es;
		}
	}
	cc->dev = cyc;
	cc->total = cyc + cc->verts * HOST_VERTEX_CYCLES + cc->copies * HOST_COPY_CYCLES +
		    cc->bytes * HOST_BYTE_CYCLES;
}

/* The next count of output-channel blocks to try: powers of two, or for a
 * grouped conv the next divisor of the group count (blocks of whole
 * groups, 25 groups too), then G times the next divisor of a group's
 * M / G output channels (blocks within one group). */
static int64_t next_pc(int64_t pc, int64_t G, int64_t M)
{
	if (G > 1 && pc < G) {
		int64_t d = pc + 1;

		while (G % d)
			d++;
		return d;
	}
	if (G > 1) {
		int64_t d = pc / G + 1;

		while ((M / G) % d)
			d++;
		return G * d;
	}
	return pc * 2 > M ? M : pc * 2;
}

/* Conv with input-channel parts: each block of output channels x output
 * rows of an image is computed as pk float32 partial sums over the parts'
 * input channels on different tiles (the first adds the bias); a grouped
 * conv's blocks lie within one group (pc a multiple of G) and its parts
 * split that group's channels; the partials are exchanged to the block's
 * home tile and summed there as the product ones[1 x pk] x partials[pk x
 * block] (the matmul kernel adds whole float32 rows at vector speed, where
 * a REDUCE added each element alone in double, and writes a float16 output
 * itself, with the activation epilogue of a Relu or Clip reading only the
 * result), then copied into the output, which is spread over the tiles. */
static int conv_parts(struct lw *l, const struct ir_node *n, const struct convplan *pl,
		      const struct ir_window *win)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[n->in[0]], *w = &g->vals[n->in[1]], *o = &g->vals[n->out[0]];
	int bias = n->nin > 2 && n->in[2] >= 0, nsp = x->rank - 2;
	int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0];
	int64_t G = ir_attr_int(n, "group", 1), Cg = C / G;
	int64_t H = nsp == 2 ? x->dims[2] : 1, W = x->dims[x->rank - 1];
	int64_t KH = nsp == 2 ? w->dims[2] : 1, KW = w->dims[w->rank - 1], kk = KH * KW;
	int64_t OH = nsp == 2 ? win->out[0] : 1, OW = win->out[nsp - 1];
	int64_t s_h = nsp == 2 ? win->s[0] : 1, ext_h = nsp == 2 ? win->d[0] * (KH - 1) + 1 : 1;
	int64_t pt = nsp == 2 ? win->pb[0] : 0, img = C * H * W;
	uint32_t odt = lw_dtype(o->dtype), xdt = lw_dtype(x->dtype);
	uint32_t cs = ipu_graph_add_compute_set(l->gb, n->name);
	uint32_t cs2 = ipu_graph_add_compute_set(l->gb, "sum");
	int inplace = pl->pr == 1;
	struct lw_act act;
	ipu_step xch = IPU_GRAPH_INVALID, x2 = ipu_step_exchange(l->gb);
	ipu_step post = inplace ? IPU_GRAPH_INVALID : ipu_step_exchange(l->gb);
	ipu_tensor out = lw_tensor(l, o->name, odt, (uint64_t)ir_value_numel(o));
	size_t es = ir_dtype_size(o->dtype);

	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID || cs2 == IPU_GRAPH_INVALID ||
	    x2 == IPU_GRAPH_INVALID || (!inplace && post == IPU_GRAPH_INVALID))
		return lw_check(l);
	/* a block of all rows is cb whole channel planes, one contiguous
	 * range of the output: its sum is written there on the home tile
	 * (no copy out) */
	if (!inplace && lw_spread(l, out, (uint64_t)ir_value_numel(o), (uint32_t)es,
				  (uint32_t)((uint64_t)ir_value_numel(o) * es / 8192 + 1)) < 0)
		return -1;
	l->vt[n->out[0]] = out;
	/* the sums write the final values: a Relu or Clip reading only them
	 * is applied there (lower_act.c) */
	if (lw_act_take(l, n->out[0], out, 0, &act))
		return -1;
	for (int64_t b = 0; b < N; b++)
	for (int64_t ic = 0; ic < pl->pc; ic++)
	for (int64_t ir = 0; ir < pl->pr; ir++) {
		int64_t c0 = M * ic / pl->pc, c1 = M * (ic + 1) / pl->pc, cb = c1 - c0;
		int64_t o0 = OH * ir / pl->pr, o1 = OH * (ir + 1) / pl->pr, rows = o1 - o0;
		int64_t r0 = o0 * s_h - pt, r1 = (o1 - 1) * s_h - pt + ext_h;
		int64_t r0c = r0 < 0 ? 0 : r0, r1c = r1 > H ? H : r1, hin = r1c - r0c;
		int64_t gbase = ic / (pl->pc / G) * Cg;
		uint64_t blk = (uint64_t)(cb * rows * OW);
		uint32_t home = IPU_GRAPH_INVALID, sp[5] = { 1, 1, (uint32_t)blk, (uint32_t)pl->pk, 0 };
		struct ipu_slice parts = { IPU_GRAPH_INVALID, 0, 0 }, sops[3], res;

		if (cb <= 0 || rows <= 0)
			continue;
		for (int64_t ik = 0; ik < pl->pk; ik++) {
			int64_t k0 = gbase + Cg * ik / pl->pk, k1 = gbase + Cg * (ik + 1) / pl->pk, ck = k1 - k0;
			uint32_t tile = lw_pick_tile(l);
			struct ipu_slice ops[4];
			uint32_t p[17] = {
				1, (uint32_t)ck, (uint32_t)hin, (uint32_t)W, (uint32_t)cb,
				(uint32_t)KH, (uint32_t)KW,
				(uint32_t)s_h, (uint32_t)win->s[nsp - 1],
				(uint32_t)(r0c - r0), (uint32_t)win->pb[nsp - 1],
				(uint32_t)(r1 - r1c), (uint32_t)win->pe[nsp - 1],
				(uint32_t)(nsp == 2 ? win->d[0] : 1), (uint32_t)win->d[nsp - 1],
				1, 0,
			};
			int with_bias = bias && ik == 0;

			if (ck <= 0)
				continue;
			if (hin == H) {
				if (lw_piece(l, n->in[0], (uint64_t)(b * img + k0 * H * W), (uint64_t)(ck * H * W),
					     tile, &xch, &ops[0]))
					return -1;
			} else {
				if (lw_temp(l, "rows", xdt, (uint64_t)(ck * hin * W), tile, &ops[0]))
					return -1;
				if (xch == IPU_GRAPH_INVALID && (xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
					return lw_check(l);
				for (int64_t ch = 0; ch < ck; ch++)
					if (lw_copy_in(l, n->in[0], (uint64_t)(b * img + ((k0 + ch) * H + r0c) * W), (uint64_t)(hin * W),
						       (struct ipu_slice){ ops[0].t, ops[0].begin + (uint64_t)(ch * hin * W), (uint64_t)(hin * W) },
						       &xch))
						return -1;
			}
			/* weight [M][C/G][kH][kW]: rows c0.., columns of channels k0.. */
			if (lw_block_piece(l, n->in[1], 0, Cg * kk, c0, cb, (k0 - gbase) * kk, ck * kk, tile, &xch, &ops[1]))
				return -1;
			if (lw_temp(l, "partial", IPUX_DT_F32, blk, tile, &ops[2]))
				return -1;
			if (with_bias && lw_piece(l, n->in[2], (uint64_t)c0, (uint64_t)cb, tile, &xch, &ops[3]))
				return -1;
			if (home == IPU_GRAPH_INVALID) {
				home = tile;
				if (lw_temp(l, "partials", IPUX_DT_F32, (uint64_t)pl->pk * blk, home, &parts))
					return -1;
			}
			if (ipu_exchange_add(l->gb, x2, ops[2],
					     (struct ipu_slice){ parts.t, parts.begin + (uint64_t)ik * blk, blk }))
				return lw_check(l);
			if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_CONV2D, ops, with_bias ? 4 : 3, p, 17))
				return lw_check(l);
		}
		if (inplace) {
			uint64_t ob = (uint64_t)((b * M + c0) * OH * OW);

			if (ipu_graph_map(l->gb, out, home, ob, ob + blk))
				return lw_check(l);
			lw_account(l, home, blk * es);
			res = (struct ipu_slice){ out, ob, blk };
		}
		if (lw_ones_on(l, home, (uint64_t)pl->pk, &sops[0]))
			return -1;
		sops[1] = parts;
		if (inplace)
			sops[2] = res;
		else if (lw_temp(l, "sum", odt, blk, home, &sops[2]))
			return -1;
		if (lw_mm_vertex(l, cs2, sops, sp, &act))
			return lw_check(l);
		if (!inplace)
			res = sops[2];
		for (int64_t ch = 0; ch < cb && !inplace; ch++) {
			uint64_t ob = (uint64_t)(((b * M + c0 + ch) * OH + o0) * OW);

			if (ipu_exchange_add(l->gb, post,
					     (struct ipu_slice){ res.t, res.begin + (uint64_t)(ch * rows * OW), (uint64_t)(rows * OW) },
					     (struct ipu_slice){ out, ob, (uint64_t)(rows * OW) }))
				return lw_check(l);
		}
	}
	if (lw_emit(l, xch, cs) || lw_emit(l, x2, cs2) ||
	    (!inplace && lw_emit(l, post, IPU_GRAPH_INVALID)))
		return -1;
	return 1;
}

/* Conv split over batch x output-channel blocks (whole groups when grouped)
 * x output-row blocks (rows only for 2-D).  A row block reads the input rows its windows
 * touch, one copy per channel, and writes its rows of each channel back
 * with one copy per channel, or in place when it has one channel. */
static int conv(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[n->in[0]], *w = &g->vals[n->in[1]], *o = &g->vals[n->out[0]];
	int bias = n->nin > 2 && n->in[2] >= 0;
	int64_t G = ir_attr_int(n, "group", 1), N = x->dims[0], C = x->dims[1], M = w->dims[0];
	int nsp = x->rank - 2;
	struct ir_window win;
	int64_t H, W, KH, KW, OH, OW, img, wrow, orow, s_h, ext_h, pt, pbm;
	uint32_t cs, odt = lw_dtype(o->dtype), cs8 = IPU_GRAPH_INVALID;
	ipu_step xch = IPU_GRAPH_INVALID, post = IPU_GRAPH_INVALID;
	ipu_tensor out;
	size_t es = ir_dtype_size(x->dtype);
	struct convplan best = { 0, 0, 1 }, c;
	double best_cost = -1, unique;
	int best_ok = 0;
	double best_total = 0;	/* bytes over all tiles of `best` */
	uint64_t least = UINT64_MAX;
	int homed, inplace, fp8 = lw_fp8_is_layer(n);
	struct convcost best_cc = { 0, 0, 0, 0, 0 };
	struct lw_act act;

	if (nsp < 1 || nsp > 2)
		return lw_fail(l, "%d-D convolution is not lowered (1-D and 2-D are)", nsp);
	if (ir_window_conv(g, n, nsp, x->dims + 2, w->dims + 2, 0, &win, l->e))
		return -1;
	H = nsp == 2 ? x->dims[2] : 1;
	W = x->dims[x->rank - 1];
	KH = nsp == 2 ? w->dims[2] : 1;
	KW = w->dims[w->rank - 1];
	OH = nsp == 2 ? win.out[0] : 1;
	OW = win.out[nsp - 1];
	s_h = nsp == 2 ? win.s[0] : 1;
	ext_h = nsp == 2 ? win.d[0] * (KH - 1) + 1 : 1;
	pt = nsp == 2 ? win.pb[0] : 0;
	pbm = nsp == 2 ? win.pe[0] : 0;
	img = C * H * W;
	wrow = (C / G) * KH * KW;
	orow = OH * OW;
	unique = (double)((N * img + M * wrow + N * M * orow) * (int64_t)es);
	/* weights at least as large as the image stay where their blocks are
	 * and the image's channels travel to them: row blocks would each need
	 * their channel block's weights (kept again, or moved every run) */
	homed = N == 1 && G == 1 && M * wrow >= img;
	/* search the partition: channel blocks (whole groups when grouped),
	 * row blocks (2-D only, not for homed weights); input-channel parts
	 * only when no block over all of them fits (a partial sum costs an
	 * exchange and a reduction) */
	for (int pass = 0; pass < 2; pass++) {
	if (pass && (best_cost >= 0 || !homed))
		break;
	if (pass)
		homed = 0;
	for (c.pk = 1;; c.pk = c.pk * 2 > C / G ? C / G : c.pk * 2) {
	for (c.pc = 1;; c.pc = next_pc(c.pc, G, M)) {
		for (c.pr = 1;; c.pr = c.pr * 2 > OH ? OH : c.pr * 2) {
			/* a grouped conv's parts split one group's channels */
			if (c.pk > 1 && G > 1 && c.pc < G)
				break;
			uint64_t mem = conv_block_mem(C, G, W, OH, OW, M, wrow, s_h, ext_h, H, &c, es);
			uint64_t blocks = (uint64_t)(N * c.pc * c.pr * c.pk);
			uint64_t per = (blocks + l->tiles - 1) / l->tiles;
			struct convcost cc;
			double cost;

			conv_plan_cost(N, C, G, H, W, OH, OW, M, wrow, s_h, ext_h, &c, es, l->tiles,
				       x->dtype == IR_F16, &cc);
			cost = cc.total;

			/* no liveness yet: an op may not replicate its data
			 * more than REPLICATION times over the tiles */
			int spread_ok = (double)blocks * (double)mem <= REPLICATION * unique;

			/* what the best partition the search may pick needs */
			if (blocks <= 64u * l->tiles && mem * per < least)
				least = mem * per;
			if (mem * per <= l->budget && blocks <= 64u * l->tiles &&
			    (best_cost < 0 || (spread_ok && !best_ok) ||
			     (!spread_ok && !best_ok && (double)blocks * (double)mem < best_total) ||
			     (spread_ok && best_ok && cost < best_cost))) {
				best_cost = cost;
				best = c;
				best_ok = spread_ok;
				best_total = (double)blocks * (double)mem;
				best_cc = cc;
			}
			if (c.pr == OH || nsp == 1 || homed)
				break;
		}
		/* parts of a group only when no block of whole groups fits */
		if (c.pc == M || (G > 1 && c.pc >= G && best_cost >= 0))
			break;
	}
		/* more parts while they may cost less (they cut the bytes of
		 * the image each channel block copies), but not for grouped
		 * convs (only when no block of whole groups fits) and fp8
		 * layers (lowered without parts) */
		if ((best_cost >= 0 && (G > 1 || fp8)) || c.pk == C / G)
			break;
	}
	}
	if (best_cost < 0 && G > 1)
		return lw_fail_mem(l, least, "the smallest block of a convolution over %lld input channels of %lld x %lld in %lld groups (blocks split the %lld output channels, within a group too, %lld output rows and a group's input channels)",
				   (long long)C, (long long)H, (long long)W, (long long)G, (long long)M,
				   (long long)OH);
	if (best_cost < 0)
		return lw_fail_mem(l, least, "the smallest block of a convolution over %lld input channels of %lld x %lld (blocks split the %lld output channels, %lld output rows and the input channels)",
				   (long long)C, (long long)H, (long long)W, (long long)M, (long long)OH);
	if (getenv("IPU_LOWER_TRACE"))
		fprintf(stderr, "lower: %s: conv N %lld C %lld %lldx%lld -> M %lld %lldx%lld: pc %lld pr %lld pk %lld%s, %llu bytes per block; cost %.0f cycles, %.0f vertices, %.0f copies, %.0f bytes\n",
			n->name, (long long)N, (long long)C, (long long)H, (long long)W, (long long)M,
			(long long)OH, (long long)OW, (long long)best.pc, (long long)best.pr, (long long)best.pk,
			homed ? " (weights kept once)" : "",
			(unsigned long long)conv_block_mem(C, G, W, OH, OW, M, wrow, s_h, ext_h, H, &best, es),
			best_cc.dev, best_cc.verts, best_cc.copies, best_cc.bytes);
	if (best.pk > 1 && fp8)
		return lw_fail(l, "this fp8 convolution needs its %lld input channels split into %lld parts, which is lowered in float16/float32 only (--fp8_skip_op_names keeps it out of fp8)",
			       (long long)C, (long long)best.pk);
	if (best.pk > 1)
		return conv_parts(l, n, &best, &win);
	out = lw_tensor(l, o->name, odt, (uint64_t)ir_value_numel(o));
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	/* a block's output rows of one channel are contiguous: in place */
	inplace = best.pr == 1 || best.pc == M;
	if (!inplace) {
		uint64_t want = (uint64_t)ir_value_numel(o) * es / 8192 + 1;

		/* over no more tiles than there are blocks: the ops after it
		 * (Relu, Clip) make a vertex per piece, and 8 KiB pieces made
		 * ResNet-18's first conv output 393 of them for 64 blocks */
		if (want > (uint64_t)(N * best.pc * best.pr))
			want = (uint64_t)(N * best.pc * best.pr);
		if (lw_spread(l, out, (uint64_t)ir_value_numel(o), (uint32_t)es, (uint32_t)want) < 0)
			return -1;
	}
	l->vt[n->out[0]] = out;
	/* each vertex writes its outputs' final values: a Relu or Clip
	 * reading only them is applied there (CONV2D_FP8 has no epilogue) */
	if (lw_act_take(l, n->out[0], out, fp8, &act))
		return -1;
	for (int64_t b = 0; b < N; b++)
	for (int64_t ic = 0; ic < best.pc; ic++)
	for (int64_t ir = 0; ir < best.pr; ir++) {
		int64_t c0 = M * ic / best.pc, c1 = M * (ic + 1) / best.pc, cb = c1 - c0;
		/* a grouped block's groups and their input channels */
		int64_t whole = G > 1 && best.pc <= G;
		int64_t gb = whole ? G / best.pc : 1;
		int64_t ci0 = whole ? C * ic / best.pc : G > 1 ? ic / (best.pc / G) * (C / G) : 0;
		int64_t cin = whole ? C / best.pc : G > 1 ? C / G : C;
		int64_t o0 = OH * ir / best.pr, o1 = OH * (ir + 1) / best.pr, rows = o1 - o0;
		int64_t r0 = o0 * s_h - pt, r1 = (o1 - 1) * s_h - pt + ext_h;
		int64_t r0c = r0 < 0 ? 0 : r0, r1c = r1 > H ? H : r1, hin = r1c - r0c;
		uint32_t tile;
		struct ipu_slice ops[4];
		uint32_t p[19] = {
			1, (uint32_t)cin, (uint32_t)hin, (uint32_t)W, (uint32_t)cb,
			(uint32_t)KH, (uint32_t)KW,
			(uint32_t)s_h, (uint32_t)win.s[nsp - 1],
			(uint32_t)(r0c - r0), (uint32_t)win.pb[nsp - 1],
			(uint32_t)(r1 - r1c), (uint32_t)win.pe[nsp - 1],
			(uint32_t)(nsp == 2 ? win.d[0] : 1), (uint32_t)win.d[nsp - 1],
			(uint32_t)gb, 0, act.lo, act.hi,
		};
		uint32_t np = act.kind == 2 ? 19 : 17;

		if (act.kind)
			p[16] |= act.kind == 1 ? IPUX_CONV_RELU : IPUX_CONV_CLIP;

		if (cb <= 0 || rows <= 0)
			continue;
		(void)pbm;
		/* a grouped block whose input channels lie on one tile goes
		 * there and reads them in place (a depthwise conv after the
		 * ops that made its input in blocks of whole channels: MobileNetV2
		 * fp32 copies 3.4 MB less per run; several blocks may share
		 * a tile, modelled time +3%) */
		if (G == 1 || hin != H ||
		    !lw_range_tile(l, n->in[0], (uint64_t)(b * img + ci0 * H * W), (uint64_t)(cin * H * W), &tile))
			tile = lw_pick_tile(l);
		/* whole images when the windows touch every row (with one row
		 * block they may not: a stride-2 conv of an even height without
		 * end padding never reads the last row) */
		if (hin == H) {
			if (lw_piece(l, n->in[0], (uint64_t)(b * img + ci0 * H * W), (uint64_t)(cin * H * W),
				     tile, &xch, &ops[0]))
				return -1;
		} else {
			if (lw_temp(l, "rows", lw_dtype(x->dtype), (uint64_t)(cin * hin * W), tile, &ops[0]))
				return -1;
			for (int64_t ch = 0; ch < cin; ch++)
				if (lw_copy_in(l, n->in[0], (uint64_t)(b * img + ((ci0 + ch) * H + r0c) * W), (uint64_t)(hin * W),
					       (struct ipu_slice){ ops[0].t, ops[0].begin + (uint64_t)(ch * hin * W), (uint64_t)(hin * W) },
					       &xch))
					return -1;
		}
		if (lw_piece(l, n->in[1], (uint64_t)(c0 * wrow), (uint64_t)(cb * wrow), tile, &xch, &ops[1]))
			return -1;
		if (inplace) {
			uint64_t ob = (uint64_t)((b * M + c0) * orow + o0 * OW), oc = (uint64_t)(cb * rows * OW);

			if (ipu_graph_map(l->gb, out, tile, ob, ob + oc))
				return lw_check(l);
			lw_account(l, tile, oc * es);
			ops[2] = (struct ipu_slice){ out, ob, oc };
		} else {
			if (lw_temp(l, "out_rows", odt, (uint64_t)(cb * rows * OW), tile, &ops[2]))
				return -1;
			if (post == IPU_GRAPH_INVALID && (post = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
				return lw_check(l);
			for (int64_t ch = 0; ch < cb; ch++) {
				uint64_t ob = (uint64_t)(((b * M + c0 + ch) * OH + o0) * OW);

				if (ipu_exchange_add(l->gb, post,
						     (struct ipu_slice){ ops[2].t, ops[2].begin + (uint64_t)(ch * rows * OW), (uint64_t)(rows * OW) },
						     (struct ipu_slice){ out, ob, (uint64_t)(rows * OW) }))
					return lw_check(l);
			}
		}
		if (bias && lw_piece(l, n->in[2], (uint64_t)c0, (uint64_t)cb, tile, &xch, &ops[3]))
			return -1;
		if (lw_fp8_is_layer(n)) {
			uint32_t p8[19], f8dt;
			int sin = 0, sw = 0;
			struct ipu_slice o8[5] = { ops[0], ops[1], ops[2], ops[3] };
			uint32_t no = bias ? 4 : 3;
			size_t nsc;

			memcpy(p8, p, 17 * sizeof(p[0]));
			if (!lw_fp8_weight(l, n->in[1], &f8dt, &sw))
				return lw_fail(l, "internal: fp8 convolution without an fp8 weight");
			if (lw_fp8_input(l, n, 0, &o8[0], tile, &cs8, &sin))
				return -1;
			/* per-channel scales: a last operand, one an output
			 * channel of this block */
			if (lw_fp8_channel_scales(n, &nsc)) {
				p8[16] |= IPUX_CONV_CHANNEL_SCALES;
				if (lw_fp8_channel_piece(l, n, c0, cb, tile, &o8[no++]))
					return -1;
			}
			p8[17] = (uint32_t)sin;
			p8[18] = (uint32_t)sw;
			if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_CONV2D_FP8, o8, no, p8, 19))
				return lw_check(l);
		} else if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_CONV2D, ops, bias ? 4 : 3, p, np))
			return lw_check(l);
	}
	if (cs8 != IPU_GRAPH_INVALID ? lw_emit(l, xch, cs8) || lw_emit(l, IPU_GRAPH_INVALID, cs)
				     : lw_emit(l, xch, cs))
		return -1;
	return post != IPU_GRAPH_INVALID && lw_emit(l, post, IPU_GRAPH_INVALID) ? -1 : 1;
}

int lw_conv(struct lw *l, const struct ir_node *n)
{
	if (n->opid != IR_OP_Conv)
		return 0;
	return conv(l, n);
}
