// SPDX-License-Identifier: MIT
/*
 * graph_alloc.c - tile memory layout.
 *
 * Without reuse (the builder's default) every mapped piece gets its own
 * bytes, packed per tile in tensor creation order.  With reuse
 * (ipu_graph_set_memory_reuse) pieces whose live ranges (graph_live.c) do
 * not meet share memory: pieces live for the whole program are packed
 * first, then the rest are placed largest first, each into the tightest
 * gap the pieces live at the same time leave ("greedy by size", as
 * TensorFlow Lite's arena planner), which stays close to the most bytes
 * ever live at once.  Every piece is aligned to 16 bytes (vector loads) or
 * its element size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_alloc.h"

#define PIECE_ALIGN 16u

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static int pinned(const struct ga_block *b)
{
	return b->first == GA_PINNED_FIRST && b->last == GA_PINNED_LAST;
}

static int meet(const struct ga_block *a, const struct ga_block *b)
{
	return a->first <= b->last && b->first <= a->last;
}

struct key {
	uint64_t bytes;
	uint32_t first, i;
};

static int cmp_size(const void *x, const void *y)
{
	const struct key *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->i < b->i ? -1 : 1;
}

uint64_t ga_place(struct ga_block *b, uint32_t n)
{
	struct key *order = malloc(((size_t)n + 1) * sizeof(*order));
	uint32_t *placed = malloc(((size_t)n + 1) * sizeof(*placed));	/* by offset */
	uint32_t i, j, k, np = 0, nmov = 0;
	uint64_t top = 0, base, peak;

	if (!order || !placed) {
		free(order);
		free(placed);
		return UINT64_MAX;
	}
	for (i = 0; i < n; i++) {
		if (pinned(&b[i])) {
			b[i].offset = align_up(top, b[i].align);
			top = b[i].offset + b[i].bytes;
		} else {
			order[nmov++] = (struct key){ b[i].bytes, b[i].first, i };
		}
	}
	base = peak = top;
	qsort(order, nmov, sizeof(*order), cmp_size);
	for (i = 0; i < nmov; i++) {
		struct ga_block *x = &b[order[i].i];
		uint64_t cur = base, best = UINT64_MAX, best_gap = UINT64_MAX;

		/* gaps between the placed blocks x is live with, lowest first */
		for (j = 0; j < np; j++) {
			const struct ga_block *y = &b[placed[j]];
			uint64_t at = align_up(cur, x->align);

			if (!meet(x, y))
				continue;
			if (at + x->bytes <= y->offset && y->offset - cur < best_gap) {
				best_gap = y->offset - cur;
				best = at;
			}
			if (y->offset + y->bytes > cur)
				cur = y->offset + y->bytes;
		}
		if (best == UINT64_MAX)
			best = align_up(cur, x->align);
		x->offset = best;
		if (best + x->bytes > peak)
			peak = best + x->bytes;
		/* keep placed sorted by offset */
		for (k = np; k > 0 && b[placed[k - 1]].offset > best; k--)
			placed[k] = placed[k - 1];
		placed[k] = order[i].i;
		np++;
	}
	free(order);
	free(placed);
	return peak;
}

struct event {
	uint32_t pos;
	int64_t delta;
};

static int cmp_event(const void *x, const void *y)
{
	const struct event *a = x, *b = y;

	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	/* ends (at last + 1) before starts at the same position */
	return (a->delta > 0) - (b->delta > 0);
}

uint64_t ga_max_live(const struct ga_block *b, uint32_t n, uint32_t *at)
{
	struct event *ev = malloc(((size_t)n * 2 + 1) * sizeof(*ev));
	uint64_t fixed = 0, best = 0;
	int64_t cur = 0;
	uint32_t i, ne = 0;

	*at = 0;
	if (!ev)
		return UINT64_MAX;
	for (i = 0; i < n; i++) {
		if (pinned(&b[i])) {
			fixed += b[i].bytes;
			continue;
		}
		ev[ne++] = (struct event){ b[i].first, (int64_t)b[i].bytes };
		ev[ne++] = (struct event){ b[i].last + 1, -(int64_t)b[i].bytes };
	}
	qsort(ev, ne, sizeof(*ev), cmp_event);
	for (i = 0; i < ne; i++) {
		cur += ev[i].delta;
		if ((uint64_t)cur > best) {
			best = (uint64_t)cur;
			*at = ev[i].pos;
		}
	}
	free(ev);
	return fixed + best;
}

static uint32_t piece_align(const struct g_tensor *t)
{
	return t->esize > PIECE_ALIGN ? t->esize : PIECE_ALIGN;
}

static void add_stats(struct ipu_graph *g, const uint64_t *used, struct ipu_graph_stats *st)
{
	for (uint32_t i = 0; i < g->num_tiles; i++) {
		if (!used[i])
			continue;
		st->tiles_used++;
		st->mem_total += used[i];
		if (used[i] > st->mem_max) {
			st->mem_max = used[i];
			st->mem_max_tile = i;
		}
	}
}

/*
 * A model that does not fit is refused at the chip's level first: the
 * memory plan's bytes over all tiles against the IPU's, and the IPUs it
 * would take, then the first tile's detail.  The estimate is the larger of
 * the plan over one IPU's bytes and the fullest tile over one tile's bytes
 * (splitting the model's layers over IPUs divides both, at best evenly).
 */
static int chip_full(struct ipu_graph *g, const uint64_t *used, const char *how,
		     const char *detail)
{
	uint64_t total = 0, most = 0, device = (uint64_t)g->num_tiles * g->tile_mem;
	uint64_t by_total, by_tile, ipus;
	uint32_t over = 0, fullest = 0;

	for (uint32_t i = 0; i < g->num_tiles; i++) {
		total += used[i];
		if (used[i] > g->tile_mem)
			over++;
		if (used[i] > most) {
			most = used[i];
			fullest = i;
		}
	}
	by_total = device ? (total + device - 1) / device : 1;
	by_tile = g->tile_mem ? (most + g->tile_mem - 1) / g->tile_mem : 1;
	ipus = by_total > by_tile ? by_total : by_tile;
	if (ipus < 2)
		ipus = 2;
	return g_fail(g,
		      "model does not fit one IPU: its memory plan needs %llu bytes %s (%.0f%% of the IPU's %u tiles x %u = %llu bytes; %u of its tiles over their %u bytes, the fullest, tile %u, needs %llu): it needs at least %llu IPUs; %s",
		      (unsigned long long)total, how,
		      device ? 100.0 * (double)total / (double)device : 0.0, g->num_tiles,
		      g->tile_mem, (unsigned long long)device, over, g->tile_mem, fullest,
		      (unsigned long long)most, (unsigned long long)ipus, detail);
}

/* The layout without reuse; with place == 0 only its figures. */
static int bump(struct ipu_graph *g, uint64_t *used, int place)
{
	char detail[1024] = "";

	for (uint32_t i = 0; i < g->n_tensors; i++) {
		struct g_tensor *t = &g->tensors[i];

		for (uint32_t j = 0; j < t->niv; j++) {
			struct g_interval *iv = &t->iv[j];
			uint64_t off = align_up(used[iv->tile], piece_align(t));
			uint64_t bytes = (iv->end - iv->begin) * t->esize;

			if (place && off + bytes > g->tile_mem && !detail[0])
				snprintf(detail, sizeof(detail),
					 "tile %u out of memory: tensor '%s' elements [%llu, %llu) need %llu bytes at offset %llu, tile has %u (without memory reuse)",
					 iv->tile, t->name, (unsigned long long)iv->begin,
					 (unsigned long long)iv->end, (unsigned long long)bytes,
					 (unsigned long long)off, g->tile_mem);
			if (place && !detail[0])
				iv->offset = (uint32_t)off;
			used[iv->tile] = off + bytes;
		}
	}
	if (detail[0])
		return chip_full(g, used, "without memory reuse", detail);
	return 0;
}

/* The tensor of piece p (pieces numbered by ga_liveness). */
static const struct g_tensor *piece_tensor(const struct ipu_graph *g, const struct ga_live *lv,
					   uint32_t p)
{
	uint32_t lo = 0, hi = g->n_tensors;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (lv->base[mid] <= p)
			lo = mid;
		else
			hi = mid;
	}
	return &g->tensors[lo];
}

/* The detail of the first tile that does not fit, written into msg. */
static void tile_full(const struct ipu_graph *g, const struct ga_live *lv, uint32_t tile,
		      const struct ga_block *b, const uint32_t *pieces, uint32_t n, uint64_t peak,
		      char *msg, size_t cap)
{
	uint64_t fixed = 0, live, consts = 0, device = (uint64_t)g->num_tiles * g->tile_mem;
	uint32_t at, big, i;

	for (i = 0; i < n; i++)
		if (pinned(&b[i]))
			fixed += b[i].bytes;
	/* a model whose constants fill most of the device cannot be helped by
	 * a finer split: say so with the device's total */
	for (i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].init)
			consts += g->tensors[i].elems * g->tensors[i].esize;
	live = ga_max_live(b, n, &at);
	for (i = 0, big = UINT32_MAX; i < n; i++)
		if (!pinned(&b[i]) && b[i].first <= at && at <= b[i].last &&
		    (big == UINT32_MAX || b[i].bytes > b[big].bytes))
			big = i;
	snprintf(msg, cap,
		 "tile %u out of memory: %llu bytes needed with memory reuse, tile has %u (%llu bytes of constants and tensors kept for the whole program, at most %llu bytes live at once%s%s%s); constants placed on all tiles (the model's and copies of them): %llu bytes (%.0f%% of the device's %u tiles x %u = %llu bytes)",
		      tile, (unsigned long long)peak, g->tile_mem, (unsigned long long)fixed,
		      (unsigned long long)live, big == UINT32_MAX ? "" : ", the largest then: '",
		      big == UINT32_MAX ? "" : piece_tensor(g, lv, pieces[big])->name,
		      big == UINT32_MAX ? "" : "'", (unsigned long long)consts,
		      device ? 100.0 * (double)consts / (double)device : 0.0, g->num_tiles,
		      g->tile_mem, (unsigned long long)device);
}

/* Pieces of each tile, in creation order: tile k has pieces
 * idx[first[k] .. first[k+1]). */
static int by_tile(struct ipu_graph *g, const struct ga_live *lv, uint32_t **first,
		   uint32_t **idx)
{
	uint32_t i, j;

	*first = calloc((size_t)g->num_tiles + 2, sizeof(**first));
	*idx = malloc(((size_t)lv->npieces + 1) * sizeof(**idx));
	if (!*first || !*idx)
		return g_fail(g, "out of memory laying out %u tensor pieces", lv->npieces);
	for (i = 0; i < g->n_tensors; i++)
		for (j = 0; j < g->tensors[i].niv; j++)
			(*first)[g->tensors[i].iv[j].tile + 2]++;
	for (i = 1; i <= g->num_tiles; i++)
		(*first)[i + 1] += (*first)[i];
	for (i = 0; i < g->n_tensors; i++)
		for (j = 0; j < g->tensors[i].niv; j++)
			(*idx)[(*first)[g->tensors[i].iv[j].tile + 1]++] = lv->base[i] + j;
	return 0;
}

static int reuse_layout(struct ipu_graph *g, uint64_t *used)
{
	struct ga_live lv;
	struct g_interval **ivs = NULL;
	struct ga_block *b = NULL;
	uint32_t *first = NULL, *idx = NULL, i, j, most = 0;
	char detail[1024] = "";
	int r = -1;

	if (ga_liveness(g, &lv))
		return -1;
	ivs = malloc(((size_t)lv.npieces + 1) * sizeof(*ivs));
	if (!ivs || by_tile(g, &lv, &first, &idx)) {
		g_fail(g, "out of memory laying out %u tensor pieces", lv.npieces);
		goto out;
	}
	for (i = 0; i < g->n_tensors; i++)
		for (j = 0; j < g->tensors[i].niv; j++)
			ivs[lv.base[i] + j] = &g->tensors[i].iv[j];
	for (i = 0; i < g->num_tiles; i++)
		if (first[i + 1] - first[i] > most)
			most = first[i + 1] - first[i];
	b = malloc(((size_t)most + 1) * sizeof(*b));
	if (!b) {
		g_fail(g, "out of memory laying out %u tensor pieces", lv.npieces);
		goto out;
	}
	for (i = 0; i < g->num_tiles; i++) {
		uint32_t n = first[i + 1] - first[i];
		const uint32_t *pc = idx + first[i];
		uint64_t peak;

		if (!n)
			continue;
		for (j = 0; j < n; j++) {
			const struct g_tensor *t = piece_tensor(g, &lv, pc[j]);
			const struct g_interval *iv = ivs[pc[j]];

			b[j] = (struct ga_block){ (iv->end - iv->begin) * t->esize, piece_align(t),
						  lv.first[pc[j]], lv.last[pc[j]], 0 };
		}
		peak = ga_place(b, n);
		if (peak == UINT64_MAX) {
			g_fail(g, "out of memory laying out tile %u", i);
			goto out;
		}
		used[i] = peak;
		if (peak > g->tile_mem) {
			/* keep planning the other tiles: the whole plan's size
			 * says how many IPUs the model needs */
			if (!detail[0])
				tile_full(g, &lv, i, b, pc, n, peak, detail, sizeof(detail));
			continue;
		}
		for (j = 0; j < n; j++)
			ivs[pc[j]]->offset = (uint32_t)b[j].offset;
	}
	if (detail[0]) {
		chip_full(g, used, "with memory reuse", detail);
		goto out;
	}
	r = 0;
out:
	ga_live_free(&lv);
	free(ivs);
	free(b);
	free(first);
	free(idx);
	return r;
}

int g_layout(struct ipu_graph *g, struct ipu_graph_stats *st)
{
	uint64_t *used = calloc(g->num_tiles, sizeof(*used));
	struct ipu_graph_stats plain = { 0 };
	int r = -1;

	if (!used)
		return g_fail(g, "out of memory");
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		struct g_tensor *t = &g->tensors[i];
		uint64_t mapped = 0;

		for (uint32_t j = 0; j < t->niv; j++)
			mapped += t->iv[j].end - t->iv[j].begin;
		if (mapped != t->elems) {
			g_fail(g, "tensor '%s': %llu of %llu elements are not mapped to a tile",
			       t->name, (unsigned long long)(t->elems - mapped),
			       (unsigned long long)t->elems);
			goto out;
		}
		if (!t->sorted)
			g_find(t, 0);
	}
	/* what every tile would hold without reuse, for the figures */
	if (bump(g, used, !g->reuse))
		goto out;
	add_stats(g, used, &plain);
	st->mem_max_no_reuse = plain.mem_max;
	st->mem_max_no_reuse_tile = plain.mem_max_tile;
	st->mem_total_no_reuse = plain.mem_total;
	st->memory_reuse = g->reuse;
	if (g->reuse) {
		memset(used, 0, g->num_tiles * sizeof(*used));
		if (reuse_layout(g, used))
			goto out;
	}
	add_stats(g, used, st);
	r = 0;
out:
	free(used);
	return r;
}
