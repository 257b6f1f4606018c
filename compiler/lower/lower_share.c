/* SPDX-License-Identifier: MIT */
/*
 * lower_share.c - one set of constants for two graphs in one executable.
 *
 * A decoder's prefill program (lower_prefill.c) is a second export of the
 * same module: its weights are the decode step's, byte for byte, but
 * lowered on their own they would be frozen a second time and a model that
 * fills the device (GPT-2 small) would no longer fit.  So a constant of the
 * second graph with the same dtype, size and bytes as one of the first is
 * that constant: it takes the first's key in the frozen table (every block
 * the first froze on a tile is the second's too), its whole tensor if the
 * first made one, its embedding column blocks, and any other block of it
 * is copied in per run from the pieces the first froze (their segments
 * below) instead of being frozen again.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

static uint64_t content_hash(const struct ir_value *x)
{
	size_t n = (size_t)ir_value_numel(x) * ir_dtype_size(x->dtype);
	const unsigned char *p = x->data;
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)x->dtype ^ ((uint64_t)n << 8);

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int same_content(const struct ir_value *a, const struct ir_value *b)
{
	return a->dtype == b->dtype && ir_value_numel(a) == ir_value_numel(b) &&
	       !memcmp(a->data, b->data, (size_t)ir_value_numel(a) * ir_dtype_size(a->dtype));
}

int lw_share_first(struct lw_share *sh, const struct ir_graph *g)
{
	sh->g1 = g;
	sh->base = g->nvals;
	return 0;
}

int lw_share_second(struct lw_share *sh, const struct ir_graph *g, struct ir_error *e)
{
	const struct ir_graph *g1 = sh->g1;
	size_t cap = 64, nk = 0;
	struct { uint64_t h; int v; } *tab;
	int rc = 0;

	for (int i = 0; i < g1->nvals; i++)
		nk += g1->vals[i].data != NULL;
	while (cap < 2 * nk + 2)
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	sh->key = malloc((size_t)(g->nvals ? g->nvals : 1) * sizeof(int));
	if (!tab || !sh->key) {
		free(tab);
		return ir_err(e, "out of memory");
	}
	for (size_t i = 0; i < cap; i++)
		tab[i].v = -1;
	for (int i = 0; i < g1->nvals; i++) {
		uint64_t h;
		size_t k;

		if (!g1->vals[i].data || !ir_value_numel(&g1->vals[i]))
			continue;
		h = content_hash(&g1->vals[i]);
		for (k = h & (cap - 1); tab[k].v >= 0; k = (k + 1) & (cap - 1))
			;
		tab[k].h = h;
		tab[k].v = i;
	}
	for (int i = 0; i < g->nvals; i++) {
		const struct ir_value *x = &g->vals[i];

		sh->key[i] = sh->base + i;
		if (!x->data || !ir_value_numel(x))
			continue;
		{
			uint64_t h = content_hash(x);

			for (size_t k = h & (cap - 1); tab[k].v >= 0; k = (k + 1) & (cap - 1))
				if (tab[k].h == h && same_content(&g1->vals[tab[k].v], x)) {
					sh->key[i] = tab[k].v;
					sh->shared_bytes += (uint64_t)ir_value_numel(x) * ir_dtype_size(x->dtype);
					break;
				}
		}
	}
	free(tab);
	return rc;
}

int lw_key(const struct lw *l, int v)
{
	return l->sh && l->sh->key ? l->sh->key[v] : v;
}

int lw_shared(const struct lw *l, int v)
{
	return l->sh && l->sh->key && l->sh->key[v] < l->sh->base;
}

int lw_share_segments(struct lw *l, int v, uint64_t off, uint64_t rows, uint64_t cols,
		      uint64_t ld, ipu_tensor t)
{
	struct lw_share *sh = l->sh;

	if (!sh || sh->key)	/* only the first graph's pieces are sources */
		return 0;
	for (uint64_t r = 0; r < rows; r++) {
		if (sh->nseg == sh->capseg) {
			size_t cap = sh->capseg ? 2 * sh->capseg : 1024;
			struct lw_seg *s = realloc(sh->seg, cap * sizeof(*s));

			if (!s)
				return lw_fail(l, "out of memory");
			sh->seg = s;
			sh->capseg = cap;
		}
		sh->seg[sh->nseg++] = (struct lw_seg){ v, off + r * ld, cols, t, r * cols };
	}
	sh->sorted = 0;
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct lw_seg *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->len < y->len) - (x->len > y->len);	/* longest first */
}

/* A segment of key holding element a, or NULL. */
static const struct lw_seg *seg_at(const struct lw_share *sh, int key, uint64_t a)
{
	size_t lo = 0, hi = sh->nseg;

	/* the first segment after (key, a) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lw_seg *s = &sh->seg[mid];

		if (s->key < key || (s->key == key && s->start <= a))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* pieces of different shapes may overlap: look back a little */
	for (size_t k = lo, seen = 0; k-- > 0 && seen < 64; seen++) {
		const struct lw_seg *s = &sh->seg[k];

		if (s->key != key)
			break;
		if (s->start <= a && a < s->start + s->len)
			return s;
	}
	return NULL;
}

int lw_share_assemble(struct lw *l, int v, uint64_t off, int64_t ld, int64_t nr, int64_t nc,
		      uint32_t tile, ipu_step *xch, struct ipu_slice *out)
{
	struct lw_share *sh = l->sh;
	int key = lw_key(l, v);
	uint32_t dt = lw_dtype(l->g->vals[v].dtype);

	if (!lw_shared(l, v) || !sh->nseg)
		return 0;
	if (!sh->sorted) {
		qsort(sh->seg, sh->nseg, sizeof(*sh->seg), cmp_seg);
		sh->sorted = 1;
	}
	/* covered? (else the caller freezes a copy of its own) */
	for (int64_t r = 0; r < nr; r++)
		for (uint64_t a = off + (uint64_t)(r * ld), end = a + (uint64_t)nc; a < end;) {
			const struct lw_seg *s = seg_at(sh, key, a);

			if (!s)
				return 0;
			a = s->start + s->len;
		}
	if (lw_temp(l, "shared", dt, (uint64_t)(nr * nc), tile, out))
		return -1;
	if (*xch == IPU_GRAPH_INVALID && (*xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
		return lw_check(l);
	for (int64_t r = 0; r < nr; r++)
		for (uint64_t a = off + (uint64_t)(r * ld), end = a + (uint64_t)nc; a < end;) {
			const struct lw_seg *s = seg_at(sh, key, a);
			uint64_t stop = s->start + s->len < end ? s->start + s->len : end;
			uint64_t at = out->begin + (uint64_t)(r * nc) + (a - (off + (uint64_t)(r * ld)));

			if (ipu_exchange_add(l->gb, *xch,
					     (struct ipu_slice){ s->t, s->toff + (a - s->start), stop - a },
					     (struct ipu_slice){ out->t, at, stop - a }))
				return lw_check(l);
			a = stop;
		}
	sh->copied_bytes += (uint64_t)(nr * nc) * ipux_dtype_size(dt);
	return 1;
}

int lw_share_whole(struct lw *l, int v, ipu_tensor *t)
{
	struct lw_share *sh = l->sh;
	int key = lw_key(l, v);

	*t = IPU_GRAPH_INVALID;
	if (!sh)
		return 0;
	for (size_t i = 0; i < sh->nwhole; i++)
		if (sh->whole[i].key == key) {
			*t = sh->whole[i].t;
			return 1;
		}
	return 0;
}

int lw_share_whole_add(struct lw *l, int v, ipu_tensor t)
{
	struct lw_share *sh = l->sh;
	void *p;

	if (!sh || sh->key)
		return 0;
	p = realloc(sh->whole, (sh->nwhole + 1) * sizeof(*sh->whole));
	if (!p)
		return lw_fail(l, "out of memory");
	sh->whole = p;
	sh->whole[sh->nwhole].key = v;
	sh->whole[sh->nwhole++].t = t;
	return lw_share_segments(l, v, 0, 1, (uint64_t)ir_value_numel(&l->g->vals[v]), 0, t);
}

int lw_share_gather(struct lw *l, int v, const struct lw_gblk **blk, size_t *n)
{
	struct lw_share *sh = l->sh;
	int key = lw_key(l, v);
	size_t i;

	*blk = NULL;
	*n = 0;
	if (!sh)
		return 0;
	for (i = 0; i < sh->ngblk && sh->gblk[i].key != key; i++)
		;
	*blk = sh->gblk + i;
	while (i < sh->ngblk && sh->gblk[i].key == key) {
		i++;
		(*n)++;
	}
	return *n > 0;
}

int lw_share_gather_add(struct lw *l, int v, int64_t c0, int64_t cb, uint32_t tile, ipu_tensor t)
{
	struct lw_share *sh = l->sh;
	void *p;

	if (!sh || sh->key)
		return 0;
	p = realloc(sh->gblk, (sh->ngblk + 1) * sizeof(*sh->gblk));
	if (!p)
		return lw_fail(l, "out of memory");
	sh->gblk = p;
	sh->gblk[sh->ngblk++] = (struct lw_gblk){ v, c0, cb, tile, t };
	return 0;
}

int lw_share_plan(struct lw *l, int v, int64_t *pn, int64_t *nw, int64_t *pk)
{
	struct lw_share *sh = l->sh;
	int key = lw_key(l, v);
	void *p;

	if (!sh)
		return 0;
	if (sh->key) {
		for (size_t i = 0; i < sh->nplan; i++)
			if (sh->plan[i].key == key && lw_shared(l, v)) {
				*pn = sh->plan[i].pn;
				*nw = sh->plan[i].nw;
				*pk = sh->plan[i].pk;
				return 1;
			}
		return 0;
	}
	p = realloc(sh->plan, (sh->nplan + 1) * sizeof(*sh->plan));
	if (!p)
		return lw_fail(l, "out of memory");
	sh->plan = p;
	sh->plan[sh->nplan++] = (struct lw_mmplan){ key, *pn, *nw, *pk };
	return 0;
}

void lw_share_free(struct lw_share *sh)
{
	free(sh->plan);
	lw_frozen_free(&sh->frozen);
	free(sh->key);
	free(sh->seg);
	free(sh->whole);
	free(sh->gblk);
	memset(sh, 0, sizeof(*sh));
}
