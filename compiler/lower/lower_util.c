/* SPDX-License-Identifier: MIT */
/* lower_util.c - tensors, tile choice, operand pieces, program steps. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

uint32_t lw_dtype(int dt)
{
	switch (dt) {
	case IR_F32: return IPUX_DT_F32;
	case IR_F16: return IPUX_DT_F16;
	case IR_I32: return IPUX_DT_I32;
	case IR_I64: return IPUX_DT_I64;
	case IR_BOOL: case IR_U8: return IPUX_DT_U8;
	case IR_I8: return IPUX_DT_I8;
	default: return 0;
	}
}

uint32_t lw_f32bits(double v)
{
	float f = (float)v;
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

int lw_fail(struct lw *l, const char *fmt, ...)
{
	char msg[IR_ERROR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l->node)
		return ir_node_err(l->e, l->g, l->node, "%s", msg);
	return ir_err(l->e, "%s", msg);
}

int lw_fail_mem(struct lw *l, uint64_t need, const char *fmt, ...)
{
	char what[IR_ERROR_LEN / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (l->budget < l->tile_mem / 2) {
		uint64_t device = (uint64_t)l->tiles * l->tile_mem, room, ipus;
		char detail[IR_ERROR_LEN];

		lw_fail(l, "%s needs %llu bytes on one tile, more than the %llu bytes a tile gives one op (of its %u bytes of memory, the model's other constants keep %llu on average: %llu bytes on %u tiles)",
			what, (unsigned long long)need, (unsigned long long)l->budget, l->tile_mem,
			(unsigned long long)(l->consts / l->tiles), (unsigned long long)l->consts, l->tiles);
		/* The op would fit beside a share of the constants: the model
		 * needs the IPUs over which that share is small enough (each
		 * tile keeps an eighth for the values live around the op, as
		 * op_budget does). */
		if (need > l->tile_mem / 2 || !l->e)
			return -1;
		room = (uint64_t)l->tiles * (l->tile_mem - l->tile_mem / 8 - need);
		ipus = room ? (l->consts + room - 1) / room : 2;
		if (ipus < 2)
			ipus = 2;
		snprintf(detail, sizeof(detail), "%s", l->e->msg);
		return ir_err(l->e, "model does not fit one IPU: its constants take %llu bytes (%.0f%% of the IPU's %u tiles x %u = %llu bytes): it needs about %llu IPUs; %s",
			      (unsigned long long)l->consts,
			      device ? 100.0 * (double)l->consts / (double)device : 0.0, l->tiles,
			      l->tile_mem, (unsigned long long)device, (unsigned long long)ipus, detail);
	}
	return lw_fail(l, "%s needs %llu bytes on one tile, more than the %llu bytes a tile gives one op (half of its %u bytes of memory)",
		       what, (unsigned long long)need, (unsigned long long)l->budget, l->tile_mem);
}

int lw_check(struct lw *l)
{
	const char *m = ipu_graph_error(l->gb);

	if (!m)
		return 0;
	return lw_fail(l, "graph builder: %s", m);
}

ipu_tensor lw_tensor(struct lw *l, const char *what, uint32_t dtype, uint64_t n)
{
	char name[256];
	uint64_t d = n ? n : 1;

	snprintf(name, sizeof(name), "%s/%s", l->node ? l->node->name : "graph", what);
	return ipu_graph_add_tensor(l->gb, name, dtype, 1, &d);
}

void lw_account(struct lw *l, uint32_t tile, uint64_t bytes)
{
	if (tile < l->tiles)
		l->used[tile] += (bytes + 63) & ~(uint64_t)63;
}

uint32_t lw_pick_tile(struct lw *l)
{
	uint32_t best = l->cursor % l->tiles;

	for (uint32_t k = 0; k < l->tiles; k++) {
		uint32_t t = (l->cursor + k) % l->tiles;

		if (l->used[t] < l->used[best])
			best = t;
	}
	l->cursor = (best + 1) % l->tiles;
	return best;
}

/* What the current op adds to a tile is live on top of the tile's peak
 * so far, the conservative guess when the op's blocks are chosen. */
static uint64_t whole_peak(const struct lw *l, uint32_t t)
{
	uint64_t p = l->kept[t] + l->hi[t];

	if (p < l->base[t])
		p = l->base[t];
	return l->used[t] > l->base[t] ? p + l->used[t] - l->base[t] : p;
}

uint32_t lw_pick_tile_kept(struct lw *l)
{
	uint32_t best;

	if (!l->hi || !l->base || !l->kept || !l->reuse)
		return lw_pick_tile(l);
	best = l->cursor % l->tiles;
	for (uint32_t k = 0; k < l->tiles; k++) {
		uint32_t t = (l->cursor + k) % l->tiles;

		if (whole_peak(l, t) < whole_peak(l, best))
			best = t;
	}
	l->cursor = (best + 1) % l->tiles;
	return best;
}

/* The first tile of the `want` consecutive tiles with the least of a[]. */
static uint32_t least_window(const struct lw *l, const uint64_t *a, uint32_t want)
{
	uint64_t sum = 0, bestsum;
	uint32_t first = 0;

	for (uint32_t k = 0; k < want; k++)
		sum += a[k];
	bestsum = sum;
	for (uint32_t s0 = 1; s0 + want <= l->tiles; s0++) {
		sum += a[s0 + want - 1] - a[s0 - 1];
		if (sum < bestsum) {
			bestsum = sum;
			first = s0;
		}
	}
	return first;
}

int lw_spread(struct lw *l, ipu_tensor t, uint64_t n, uint32_t esize, uint32_t want)
{
	uint32_t first, nt;
	uint64_t per;
	int used;

	if (!n)
		n = 1;
	if (want < 1)
		want = 1;
	if (want > l->tiles)
		want = l->tiles;
	if ((uint64_t)want > n)
		want = (uint32_t)n;
	first = l->cursor;
	/* past the last tile: the window of `want` tiles holding the least
	 * (restarting at tile 0 every time piled the spreads of a whole
	 * model's constants onto the first tiles) */
	if (first + want > l->tiles)
		first = least_window(l, l->used, want);
	nt = want;
	used = ipu_graph_map_linear(l->gb, t, first, nt, 1);
	if (used < 0)
		return lw_check(l);
	per = (n + (uint64_t)used - 1) / (uint64_t)used;
	for (int i = 0; i < used; i++)
		lw_account(l, first + (uint32_t)i, per * esize);
	l->cursor = (first + (uint32_t)used) % l->tiles;
	return used;
}

/* One more (or one fewer) live value refers to builder tensor t; when
 * none does, t's bytes leave the tiles' estimates (memory reuse only). */
static int tref_add(struct lw *l, ipu_tensor t, int d)
{
	if (t == IPU_GRAPH_INVALID)
		return 0;
	if (t >= l->ntrefs) {
		uint32_t n = ipu_graph_num_tensors(l->gb) + 256;

		if (n < 2 * l->ntrefs)
			n = 2 * l->ntrefs;
		if (n <= t)
			n = t + 1;
		uint32_t *nt = realloc(l->trefs, (size_t)n * sizeof(*nt));

		if (!nt)
			return lw_fail(l, "out of memory");
		memset(nt + l->ntrefs, 0, (size_t)(n - l->ntrefs) * sizeof(*nt));
		l->trefs = nt;
		l->ntrefs = n;
	}
	if (d > 0) {
		l->trefs[t] += (uint32_t)d;
		return 0;
	}
	if (!l->trefs[t] || --l->trefs[t] || !l->reuse)
		return 0;
	for (uint32_t k = 0;; k++) {
		uint32_t tile, off;
		uint64_t b, e, bytes;

		if (ipu_graph_tensor_location(l->gb, t, k, &tile, &b, &e, &off))
			break;
		if (tile >= l->tiles)
			continue;
		bytes = ((e - b) * ipux_dtype_size(ipu_graph_tensor_dtype(l->gb, t)) + 63) & ~(uint64_t)63;
		l->used[tile] -= bytes < l->used[tile] ? bytes : l->used[tile];
	}
	return 0;
}

int lw_tref(struct lw *l, ipu_tensor t, int d)
{
	return tref_add(l, t, d);
}

int lw_values_done(struct lw *l, int i)
{
	const struct ir_node *n = &l->g->nodes[i];

	/* a blocked value holds its blocks (and, once made, its standard
	 * tensor: lw_blocked_materialise counts that) */
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0 && (tref_add(l, l->vt[n->out[k]], 1) ||
				       tref_add(l, lw_blocked_store(l, n->out[k]), 1)))
			return -1;
	for (int k = 0; k < n->nin + n->nout; k++) {
		int v = k < n->nin ? n->in[k] : n->out[k - n->nin], seen = 0;
		const struct ir_value *x;

		if (v < 0)
			continue;
		for (int j = 0; j < k && !seen; j++)
			seen = (j < n->nin ? n->in[j] : n->out[j - n->nin]) == v;
		x = &l->g->vals[v];
		if (seen || x->data || x->is_output || l->last_use[v] != i)
			continue;
		if (tref_add(l, l->vt[v], -1) || tref_add(l, lw_blocked_store(l, v), -1))
			return -1;
	}
	return 0;
}

int lw_value_live(struct lw *l, int v)
{
	return tref_add(l, l->vt[v], 1);
}

static size_t frozen_hash(int v, uint32_t tile, uint64_t off, uint64_t rows, uint64_t cols)
{
	uint64_t h = (uint64_t)(uint32_t)v * 0x9E3779B97F4A7C15ull;

	h ^= (uint64_t)tile + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
	h ^= off + 0x85EBCA77C2B2AE63ull + (h << 6) + (h >> 2);
	h ^= rows * 31 + cols + (h << 6) + (h >> 2);
	return (size_t)(h ^ (h >> 29));
}

static struct lw_frozen_slot *frozen_find(struct lw_frozen *f, int v, uint32_t tile,
					  uint64_t off, uint64_t rows, uint64_t cols, uint64_t ld)
{
	size_t i;

	if (!f->cap)
		return NULL;
	for (i = frozen_hash(v, tile, off, rows, cols) & (f->cap - 1); f->slot[i].v >= 0; i = (i + 1) & (f->cap - 1)) {
		struct lw_frozen_slot *s = &f->slot[i];

		if (s->v == v && s->tile == tile && s->off == off && s->rows == rows && s->cols == cols &&
		    s->ld == ld)
			return s;
	}
	return &f->slot[i];
}

static int frozen_add(struct lw *l, int v, uint32_t tile, uint64_t off, uint64_t rows,
		      uint64_t cols, uint64_t ld, ipu_tensor t)
{
	struct lw_frozen *f = &l->frozen;
	struct lw_frozen_slot *s;

	if (2 * (f->n + 1) > f->cap) {
		struct lw_frozen nf = { 0 };

		nf.cap = f->cap ? 2 * f->cap : 1024;
		nf.slot = malloc(nf.cap * sizeof(*nf.slot));
		if (!nf.slot)
			return lw_fail(l, "out of memory");
		for (size_t i = 0; i < nf.cap; i++)
			nf.slot[i].v = -1;
		for (size_t i = 0; i < f->cap; i++)
			if (f->slot[i].v >= 0)
				*frozen_find(&nf, f->slot[i].v, f->slot[i].tile, f->slot[i].off, f->slot[i].rows,
					     f->slot[i].cols, f->slot[i].ld) = f->slot[i];
		nf.n = f->n;
		free(f->slot);
		*f = nf;
	}
	s = frozen_find(f, v, tile, off, rows, cols, ld);
	*s = (struct lw_frozen_slot){ v, tile, off, rows, cols, ld, t };
	f->n++;
	return 0;
}

void lw_frozen_free(struct lw_frozen *f)
{
	free(f->slot);
	memset(f, 0, sizeof(*f));
}

/* Spread wide enough that no tile holds more than a few KiB of it. */
static uint32_t spread_width(struct lw *l, uint64_t bytes)
{
	uint64_t w = (bytes + 8191) / 8192;

	if (w > l->tiles)
		w = l->tiles;
	return w ? (uint32_t)w : 1;
}

ipu_tensor lw_value_tensor(struct lw *l, int v)
{
	const struct ir_value *x = &l->g->vals[v];
	uint32_t dt = lw_dtype(x->dtype);
	uint64_t n = (uint64_t)ir_value_numel(x);
	ipu_tensor t;
	int used;

	if (l->vt[v] != IPU_GRAPH_INVALID)
		return l->vt[v];
	if (lw_blocked_store(l, v) != IPU_GRAPH_INVALID)
		return lw_blocked_materialise(l, v);
	if (!dt) {
		lw_fail(l, "value '%s' has type %s, which the device does not support",
			x->name, ir_dtype_name(x->dtype));
		return IPU_GRAPH_INVALID;
	}
	if (!x->data) {
		lw_fail(l, "value '%s' is used before it is computed", x->name);
		return IPU_GRAPH_INVALID;
	}
	if (!n) {
		lw_fail(l, "constant '%s' is empty; empty tensors are not supported on the device", x->name);
		return IPU_GRAPH_INVALID;
	}
	if (lw_share_whole(l, v, &t)) {
		/* the first graph's, kept for its whole program already */
		if (tref_add(l, t, 1))
			return IPU_GRAPH_INVALID;
		l->vt[v] = t;
		return t;
	}
	t = ipu_graph_add_tensor(l->gb, x->name, dt, 1, &n);
	/* kept for the whole program: where the least is kept already */
	if (l->kept) {
		uint32_t w = spread_width(l, n * ipux_dtype_size(dt));

		if (w > n)
			w = (uint32_t)n;
		l->cursor = least_window(l, l->kept, w);
	}
	if (t == IPU_GRAPH_INVALID || (used = lw_spread(l, t, n, ipux_dtype_size(dt), spread_width(l, n * ipux_dtype_size(dt)))) < 0 ||
	    ipu_graph_set_init(l->gb, t, x->data, n * ipux_dtype_size(dt))) {
		lw_check(l);
		return IPU_GRAPH_INVALID;
	}
	/* kept for the whole program: never released */
	if (tref_add(l, t, 1))
		return IPU_GRAPH_INVALID;
	for (uint32_t k = 0; l->kept && k < l->tiles; k++) {
		uint32_t tt;
		uint64_t b, e;
		uint32_t off;

		if (ipu_graph_tensor_location(l->gb, t, k, &tt, &b, &e, &off))
			break;
		if (tt < l->tiles)
			l->kept[tt] += ((e - b) * ipux_dtype_size(dt) + 63) & ~(uint64_t)63;
	}
	(void)used;
	l->vt[v] = t;
	if (lw_share_whole_add(l, v, t))
		return IPU_GRAPH_INVALID;
	return t;
}

int lw_temp(struct lw *l, const char *what, uint32_t dt, uint64_t count,
	    uint32_t tile, struct ipu_slice *out)
{
	struct lw_scratch *s = l->scr;
	size_t k = (size_t)tile * IPUX_DT_COUNT + dt;
	ipu_tensor t;

	lw_account(l, tile, count * ipux_dtype_size(dt));
	if (l->reuse && l->optemp && tile < l->tiles)
		l->optemp[tile] += (count * ipux_dtype_size(dt) + 63) & ~(uint64_t)63;
	if (s && !s->measure) {
		if (s->t[k] == IPU_GRAPH_INVALID || s->top[k] + count > s->peak[k])
			return lw_fail(l, "internal: scratch of tile %u overflows (%llu + %llu > %llu elements)",
				       tile, (unsigned long long)s->top[k], (unsigned long long)count,
				       (unsigned long long)s->peak[k]);
		*out = (struct ipu_slice){ s->t[k], s->top[k], count };
		s->top[k] += count;
		return 0;
	}
	t = lw_tensor(l, what, dt, count);
	if (t == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, t, tile))
		return lw_check(l);
	if (s) {
		s->top[k] += count;
		if (s->top[k] > s->peak[k])
			s->peak[k] = s->top[k];
	}
	*out = (struct ipu_slice){ t, 0, count };
	return 0;
}

void lw_temp_reset(struct lw *l)
{
	/* the previous op's temporaries are dead: their memory is free for
	 * the next op's (the builder's liveness gives it back) */
	if (l->reuse && l->optemp)
		for (uint32_t k = 0; k < l->tiles; k++) {
			uint64_t kk = l->kept ? l->kept[k] : 0;
			uint64_t live = l->used[k] > kk ? l->used[k] - kk : 0;

			if (l->hi && live > l->hi[k])
				l->hi[k] = live;
			l->used[k] -= l->optemp[k] < l->used[k] ? l->optemp[k] : l->used[k];
			l->optemp[k] = 0;
			if (l->base)
				l->base[k] = l->used[k];
		}
	if (l->scr)
		memset(l->scr->top, 0, (size_t)l->tiles * IPUX_DT_COUNT * sizeof(uint64_t));
}

/* Is [begin, begin+count) of t inside one piece on `tile`?  Pieces mapped
 * next to each other on one tile are placed apart in its memory, and a
 * vertex operand must be one contiguous range. */
static int on_tile(struct lw *l, ipu_tensor t, uint64_t begin, uint64_t count,
		   uint32_t tile)
{
	uint64_t b, e;
	uint32_t k, pt, off;

	if (ipu_graph_tile_of(l->gb, t, begin) != tile)
		return 0;
	for (k = 0; ipu_graph_tensor_location(l->gb, t, k, &pt, &b, &e, &off) == 0; k++)
		if (begin >= b && begin < e)
			return pt == tile && begin + count <= e;
	return 0;
}

int lw_range_tile(struct lw *l, int v, uint64_t begin, uint64_t count, uint32_t *tile)
{
	ipu_tensor t = l->vt[v];
	uint32_t at;

	if (lw_is_blocked(l, v))
		return lw_blocked_range_tile(l, v, begin, count, tile);
	if (t == IPU_GRAPH_INVALID || l->g->vals[v].data)
		return 0;
	at = ipu_graph_tile_of(l->gb, t, begin);
	if (at >= l->tiles || !on_tile(l, t, begin, count, at))
		return 0;
	*tile = at;
	return 1;
}

int lw_piece_t(struct lw *l, ipu_tensor t, uint64_t begin, uint64_t count,
	       uint32_t tile, ipu_step *xch, struct ipu_slice *out)
{
	uint32_t dt = ipu_graph_tensor_dtype(l->gb, t);

	if (on_tile(l, t, begin, count, tile)) {
		*out = (struct ipu_slice){ t, begin, count };
		return 0;
	}
	if (lw_temp(l, "in", dt, count, tile, out))
		return -1;
	if (*xch == IPU_GRAPH_INVALID && (*xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (ipu_exchange_add(l->gb, *xch, (struct ipu_slice){ t, begin, count }, *out))
		return lw_check(l);
	return 0;
}

int lw_piece(struct lw *l, int v, uint64_t begin, uint64_t count, uint32_t tile,
	     ipu_step *xch, struct ipu_slice *out)
{
	const struct ir_value *x = &l->g->vals[v];

	if (x->data)
		return lw_const_block(l, v, begin, (int64_t)count, 0, 1, 0, (int64_t)count, tile, xch, out);
	if (lw_is_blocked(l, v))
		return lw_blocked_piece(l, v, begin, (int64_t)count, 0, 1, 0, (int64_t)count, tile, xch, out);
	if (lw_value_tensor(l, v) == IPU_GRAPH_INVALID)
		return lw_check(l) ? -1 : -1;
	return lw_piece_t(l, l->vt[v], begin, count, tile, xch, out);
}

int lw_const_block(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0,
		   int64_t nr, int64_t c0, int64_t nc, uint32_t tile, ipu_step *xch,
		   struct ipu_slice *out)
{
	const struct ir_value *x = &l->g->vals[v];
	uint32_t dt = lw_dtype(x->dtype);
	size_t es = ir_dtype_size(x->dtype);
	uint64_t off = base + (uint64_t)(r0 * ld + c0), cnt = (uint64_t)(nr * nc), bytes = cnt * es;
	struct lw_frozen_slot *s, *h;
	ipu_tensor t, home;
	uint32_t f8dt;
	int f8s, key = lw_key(l, v);

	if (lw_fp8_weight(l, v, &f8dt, &f8s))
		return lw_fp8_const_piece(l, v, base, ld, r0, nr, c0, nc, tile, out);
	if (!dt)
		return lw_fail(l, "constant '%s' has type %s, which the device does not support",
			       x->name, ir_dtype_name(x->dtype));
	if (nc == ld || nr == 1) {
		/* contiguous: one key whatever the caller's view */
		nr = 1;
		nc = ld = (int64_t)cnt;
	}
	if (nr == 1 && l->vt[v] != IPU_GRAPH_INVALID && on_tile(l, l->vt[v], off, cnt, tile)) {
		*out = (struct ipu_slice){ l->vt[v], off, cnt };
		return 0;
	}
	s = frozen_find(&l->frozen, key, tile, off, (uint64_t)nr, (uint64_t)nc, (uint64_t)ld);
	if (s && s->v >= 0) {
		*out = (struct ipu_slice){ s->t, 0, cnt };
		return 0;
	}
	h = frozen_find(&l->frozen, key, LW_HOME, off, (uint64_t)nr, (uint64_t)nc, (uint64_t)ld);
	/* a block of the first graph's constant that it did not freeze
	 * there: copied in from its pieces, so the device keeps one copy */
	if (lw_shared(l, v)) {
		int r = lw_share_assemble(l, v, off, ld, nr, nc, tile, xch, out);

		if (r)
			return r < 0 ? -1 : 0;
	}
	if (!h || h->v < 0 || l->kept[tile] + bytes <= l->keep_limit) {
		/* a frozen copy of just this block, where it is used */
		char *buf = NULL;
		const void *src = (const char *)x->data + off * es;
		int first = !h || h->v < 0;

		t = lw_tensor(l, x->name, dt, cnt);
		if (t == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, t, tile))
			return lw_check(l);
		if (nr > 1) {
			buf = malloc((size_t)bytes);
			if (!buf)
				return lw_fail(l, "out of memory");
			for (int64_t r = 0; r < nr; r++)
				memcpy(buf + (size_t)(r * nc) * es, (const char *)src + (size_t)(r * ld) * es,
				       (size_t)nc * es);
			src = buf;
		}
		if (ipu_graph_set_init(l->gb, t, src, (size_t)bytes)) {
			free(buf);
			return lw_check(l);
		}
		free(buf);
		lw_account(l, tile, bytes);
		l->kept[tile] += (bytes + 63) & ~(uint64_t)63;
		if (lw_shared(l, v))
			l->sh->frozen_again += bytes;
		if (frozen_add(l, key, tile, off, (uint64_t)nr, (uint64_t)nc, (uint64_t)ld, t) ||
		    (first && frozen_add(l, key, LW_HOME, off, (uint64_t)nr, (uint64_t)nc, (uint64_t)ld, t)) ||
		    (first && lw_share_segments(l, v, off, (uint64_t)nr, (uint64_t)nc, (uint64_t)ld, t)))
			return -1;
		*out = (struct ipu_slice){ t, 0, cnt };
		return 0;
	}
	/* the tile keeps enough constants: this block is copied in from its
	 * home every run, and its memory is shared once the op has run */
	home = h->t;
	if (lw_temp(l, "block", dt, cnt, tile, out))
		return -1;
	if (*xch == IPU_GRAPH_INVALID && (*xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (ipu_exchange_add(l->gb, *xch, (struct ipu_slice){ home, 0, cnt }, *out))
		return lw_check(l);
	return 0;
}

int lw_const_home_tile(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0, int64_t nr,
		       int64_t c0, int64_t nc, uint32_t *tile)
{
	uint64_t off = base + (uint64_t)(r0 * ld + c0), cnt = (uint64_t)(nr * nc), b, en;
	struct lw_frozen_slot *h;
	uint32_t toff;

	if (nc == ld || nr == 1) {
		nr = 1;
		nc = ld = (int64_t)cnt;
	}
	h = frozen_find(&l->frozen, lw_key(l, v), LW_HOME, off, (uint64_t)nr, (uint64_t)nc, (uint64_t)ld);
	return h && h->v >= 0 && !ipu_graph_tensor_location(l->gb, h->t, 0, tile, &b, &en, &toff) &&
	       *tile < l->tiles;
}

int lw_block_piece(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0,
		       int64_t nr, int64_t c0, int64_t nc, uint32_t tile, ipu_step *xch,
		       struct ipu_slice *out)
{
	const struct ir_value *x = &l->g->vals[v];
	uint32_t dt = lw_dtype(x->dtype);

	if (nc == ld)
		return lw_piece(l, v, base + (uint64_t)(r0 * ld), (uint64_t)(nr * nc), tile, xch, out);
	if (x->data)
		return lw_const_block(l, v, base, ld, r0, nr, c0, nc, tile, xch, out);
	if (lw_is_blocked(l, v))
		return lw_blocked_piece(l, v, base, ld, r0, nr, c0, nc, tile, xch, out);
	{
		ipu_tensor src = lw_value_tensor(l, v);

		if (src == IPU_GRAPH_INVALID || lw_temp(l, "block", dt, (uint64_t)(nr * nc), tile, out))
			return -1;
		if (*xch == IPU_GRAPH_INVALID && (*xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
			return lw_check(l);
		for (int64_t r = 0; r < nr; r++)
			if (ipu_exchange_add(l->gb, *xch,
					     (struct ipu_slice){ src, base + (uint64_t)((r0 + r) * ld + c0), (uint64_t)nc },
					     (struct ipu_slice){ out->t, out->begin + (uint64_t)(r * nc), (uint64_t)nc }))
				return lw_check(l);
	}
	return 0;
}

int lw_emit(struct lw *l, ipu_step xch, uint32_t cs)
{
	if (xch != IPU_GRAPH_INVALID && ipu_step_append(l->gb, l->seq, xch))
		return lw_check(l);
	if (cs != IPU_GRAPH_INVALID) {
		ipu_step ex = ipu_step_execute(l->gb, cs);

		if (ex == IPU_GRAPH_INVALID || ipu_step_append(l->gb, l->seq, ex))
			return lw_check(l);
	}
	return 0;
}

int lp_const_scalar(struct ir_graph *g, const char *base, int dt, double v,
			int rank, struct ir_error *e)
{
	struct ir_tensor t;
	int64_t d[IR_MAX_RANK];
	int x = ir_value_add_unique(g, base, e);

	for (int i = 0; i < rank; i++)
		d[i] = 1;
	if (x < 0 || ir_tensor_alloc(&t, dt, rank, d, e))
		return -1;
	ir_set_f(t.data, dt, 0, v);
	ir_value_set_const(&g->vals[x], &t);
	return x;
}

/* Inserts `op`(in) -> new value before node pos; returns the value. */
int lp_add_node(struct ir_graph *g, int *pos, const char *name,
		    const char *op, const int *in, int nin, struct ir_error *e)
{
	char buf[300];
	int v, ni;

	snprintf(buf, sizeof(buf), "%s/%s", name, op);
	v = ir_value_add_unique(g, buf, e);
	if (v < 0)
		return -1;
	ni = ir_node_insert(g, *pos, g->vals[v].name, op, in, nin, &v, 1, e);
	if (ni < 0)
		return -1;
	(*pos)++;
	return v;
}

int lw_ones_on(struct lw *l, uint32_t tile, uint64_t n, struct ipu_slice *out)
{
	float *one = malloc((size_t)n * sizeof(*one));
	ipu_tensor t;

	if (!one)
		return lw_fail(l, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		one[i] = 1.0f;
	t = lw_tensor(l, "ones", IPUX_DT_F32, n);
	if (t == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, t, tile) ||
	    ipu_graph_set_init(l->gb, t, one, (size_t)n * sizeof(*one))) {
		free(one);
		return lw_check(l);
	}
	free(one);
	lw_account(l, tile, n * sizeof(float));
	if (l->kept)
		l->kept[tile] += (n * sizeof(float) + 63) & ~(uint64_t)63;
	*out = (struct ipu_slice){ t, 0, n };
	return 0;
}

int lw_only_reader(const struct ir_graph *g, int v)
{
	int who = -1;

	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] == v) {
				if (who >= 0)
					return -1;
				who = i;
			}
	}
	return who;
}
