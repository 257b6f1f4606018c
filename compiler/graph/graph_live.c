// SPDX-License-Identifier: MIT
/*
 * graph_live.c - when each mapped piece of a tensor holds a value the
 * programs still need.
 *
 * Each program's step tree is flattened into positions: every Execute,
 * Exchange and StreamCopy reached (a step reached twice gets two), and a
 * Switch's read of its selector.  The device runs one program at a time,
 * so every program's positions start at 0: they are the steps of one run,
 * whichever program it is.  A piece is live from the first to the last
 * position that touches it in any program (the union of its ranges in
 * each, so two pieces whose ranges are disjoint are never live together in
 * any run).  Everything used inside a Repeat body is
 * live for the whole loop (the outermost one), since an iteration reads
 * what the previous one wrote.  A Switch's cases are laid out one after
 * the other: a run executes a subsequence of the positions, so pieces used
 * only in different cases may share memory, and a piece used before and
 * in a case stays live through the cases before it.
 *
 * Memory shared by two pieces may hold the other one's bytes when a piece
 * is read, so a piece keeps its memory to itself for the whole program
 * when its value can come from outside this run's earlier steps (such as
 * a value one program leaves for another, state between runs):
 *  - it has an initial value (constants, frozen weights);
 *  - a step reads elements of it that no earlier step of the same program
 *    run surely wrote (memory is zeroed only at load, and a value from a
 *    previous run does not survive reuse); writes inside a Switch case or
 *    a Repeat of 0 iterations do not count after it, the case may not run;
 *  - no step touches it (nothing here says what it is for).
 * Within one step all reads come before all writes, so a vertex reading
 * what another vertex of its compute set wrote pins the piece: safe, if
 * sometimes wasteful.  Which operands a codelet writes is the engine's
 * contract (ipu/codelet.h); an unknown codelet reads and writes all.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_alloc.h"
#include "ipu/codelet.h"

#define NCOV 6			/* written ranges remembered per piece */
#define MAX_DEPTH 64		/* the format's step nesting limit */
#define NO_PROGRAM UINT32_MAX

/* Elements [b, e) of a piece surely written this run, relative to the
 * piece; when more ranges than fit arrive, the extra is forgotten (less
 * coverage only pins more). */
struct cov {
	uint32_t b[NCOV], e[NCOV];
	uint32_t n;
};

/* A write of elements [b, e) of piece p, applied when its step ends. */
struct pending {
	uint32_t p, b, e;
};

struct walk {
	struct ipu_graph *g;
	struct ga_live *lv;
	uint64_t *size;		/* positions a step spans; UINT64_MAX unknown */
	struct cov *cov;
	uint32_t *prog;		/* a program touching each piece */
	uint8_t *pinned;
	uint32_t *cs_first, *cs_vtx;	/* vertices grouped by compute set */
	uint32_t pos;
	int scoped;		/* inside a Repeat or Switch */
	uint32_t scope_first, scope_last;
	uint32_t program;
	struct pending *wr;	/* the current step's writes */
	size_t nwr, capwr;
	int oom;
};

enum { RD = 1, WR = 2 };

/* Read/write role of operand k of vertex v (ipu/codelet.h). */
static int operand_role(const struct ipu_graph *g, const struct g_vertex *v, uint32_t k)
{
	const uint32_t *p = g->params + v->first_param;
	int out = -1, acc = 0;

	switch (v->codelet) {
	case IPUX_CL_FILL: case IPUX_CL_IOTA:
		out = 0;
		break;
	case IPUX_CL_COPY: case IPUX_CL_CAST: case IPUX_CL_UNARY: case IPUX_CL_REDUCE:
	case IPUX_CL_CAST_FP8:
	case IPUX_CL_SOFTMAX: case IPUX_CL_POOL2D: case IPUX_CL_TRANSPOSE:
	case IPUX_CL_STRIDED_COPY: case IPUX_CL_PAD: case IPUX_CL_CUMSUM:
		out = 1;
		break;
	case IPUX_CL_BINARY: case IPUX_CL_GATHER:
		out = 2;
		break;
	case IPUX_CL_WHERE: case IPUX_CL_NORM:
		out = 3;
		break;
	case IPUX_CL_MATMUL: case IPUX_CL_MATMUL_FP8:
		out = 2;
		acc = v->nparams < 5 || (p[4] & IPUX_MM_ACCUMULATE);
		break;
	case IPUX_CL_CONV2D: case IPUX_CL_CONV2D_FP8:
		out = 2;
		acc = v->nparams < 17 || (p[16] & IPUX_CONV_ACCUMULATE);
		break;
	case IPUX_CL_TOPK:
		return k == 0 ? RD : WR;
	case IPUX_CL_SAMPLE:
		return k == 4 ? WR : RD;
	default:
		return RD | WR;
	}
	if ((int)k != out)
		return RD;
	return acc ? RD | WR : WR;
}

static int covered(const struct cov *c, uint32_t b, uint32_t e)
{
	/* ranges are disjoint and merged, so one must hold [b, e) */
	for (uint32_t i = 0; i < c->n; i++)
		if (c->b[i] <= b && e <= c->e[i])
			return 1;
	return 0;
}

static void cover(struct cov *c, uint32_t b, uint32_t e)
{
	uint32_t i = 0;

	/* merge every range touching [b, e) into it */
	while (i < c->n) {
		if (c->e[i] < b || e < c->b[i]) {
			i++;
			continue;
		}
		if (c->b[i] < b)
			b = c->b[i];
		if (c->e[i] > e)
			e = c->e[i];
		c->n--;
		c->b[i] = c->b[c->n];
		c->e[i] = c->e[c->n];
	}
	if (c->n < NCOV) {
		c->b[c->n] = b;
		c->e[c->n] = e;
		c->n++;
	}
}

/* Records a read or a write of slice s at the current position. */
static void touch(struct walk *w, struct ipu_slice s, int rw)
{
	struct g_tensor *t = g_tensor(w->g, s.t);
	uint64_t end = s.begin + s.count;
	uint32_t k, lo = w->scoped ? w->scope_first : w->pos;
	uint32_t hi = w->scoped ? w->scope_last : w->pos;
	const struct g_interval *iv;

	if (!t || !s.count || !(iv = g_find(t, s.begin)))
		return;
	for (k = (uint32_t)(iv - t->iv); k < t->niv && t->iv[k].begin < end; k++) {
		const struct g_interval *x = &t->iv[k];
		uint32_t p = w->lv->base[s.t] + k;
		uint32_t b = (uint32_t)((s.begin > x->begin ? s.begin : x->begin) - x->begin);
		uint32_t e = (uint32_t)((end < x->end ? end : x->end) - x->begin);

		if (x->end <= s.begin)
			continue;
		if (w->lv->first[p] > lo)
			w->lv->first[p] = lo;
		if (w->lv->last[p] == GA_PINNED_LAST || w->lv->last[p] < hi)
			w->lv->last[p] = hi;
		w->prog[p] = w->program;
		if ((rw & RD) && !covered(&w->cov[p], b, e))
			w->pinned[p] = 1;
		if (rw & WR) {
			if (w->nwr == w->capwr) {
				size_t cap = w->capwr ? w->capwr * 2 : 1024;
				struct pending *n = realloc(w->wr, cap * sizeof(*n));

				if (!n) {
					w->oom = 1;
					continue;
				}
				w->wr = n;
				w->capwr = cap;
			}
			w->wr[w->nwr++] = (struct pending){ p, b, e };
		}
	}
}

static int cmp_pending(const void *x, const void *y)
{
	const struct pending *a = x, *b = y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

/* Applies the step's writes, merged first: a step often writes one piece
 * in many small runs (rows of blocks) that only together cover it. */
static void apply_writes(struct walk *w)
{
	size_t i = 0;

	if (!w->nwr)
		return;
	qsort(w->wr, w->nwr, sizeof(*w->wr), cmp_pending);
	while (i < w->nwr) {
		struct pending r = w->wr[i++];

		while (i < w->nwr && w->wr[i].p == r.p && w->wr[i].b <= r.e) {
			if (w->wr[i].e > r.e)
				r.e = w->wr[i].e;
			i++;
		}
		cover(&w->cov[r.p], r.b, r.e);
	}
	w->nwr = 0;
}

static void leaf(struct walk *w, const struct g_step *s)
{
	struct ipu_graph *g = w->g;
	uint32_t i, j;

	switch (s->kind) {
	case IPUX_STEP_EXECUTE:
		for (int pass = RD; pass <= WR; pass++)
			for (i = w->cs_first[s->a]; i < w->cs_first[s->a + 1]; i++) {
				const struct g_vertex *v = &g->vertices[w->cs_vtx[i]];

				for (j = 0; j < v->nops; j++)
					if (operand_role(g, v, j) & pass)
						touch(w, g->ops[v->first_op + j].s, pass);
			}
		break;
	case IPUX_STEP_EXCHANGE: {
		const struct g_exchange *x = &g->exchanges[s->a];

		for (i = 0; i < x->n; i++)
			touch(w, g->copies[x->idx[i]].src, RD);
		for (i = 0; i < x->n; i++)
			touch(w, g->copies[x->idx[i]].dst, WR);
		break;
	}
	case IPUX_STEP_STREAM_COPY: {
		const struct g_stream_copy *sc = &g->scs[s->a];
		int rw = g->streams[sc->stream].dir == IPUX_STREAM_H2D ? WR : RD;

		for (i = 0; i < sc->nslices; i++)
			touch(w, g->sc_slices[sc->first_slice + i], rw);
		break;
	}
	}
}

static uint64_t step_size(struct walk *w, uint32_t si, int depth)
{
	const struct g_step *s = &w->g->steps[si];
	uint64_t n = 0;

	if (depth > MAX_DEPTH)
		return UINT64_MAX;
	if (w->size[si] != UINT64_MAX)
		return w->size[si];
	switch (s->kind) {
	case IPUX_STEP_EXECUTE: case IPUX_STEP_EXCHANGE: case IPUX_STEP_STREAM_COPY:
		n = 1;
		break;
	case IPUX_STEP_REPEAT:
		n = step_size(w, s->b, depth + 1);
		break;
	case IPUX_STEP_SWITCH:
		n = 1;
		/* fall through */
	case IPUX_STEP_SEQUENCE:
		for (uint32_t i = 0; i < s->nkids && n != UINT64_MAX; i++) {
			uint64_t k = step_size(w, s->kids[i], depth + 1);

			n = k == UINT64_MAX || n + k >= UINT32_MAX - 1 ? UINT64_MAX : n + k;
		}
		break;
	default:
		break;
	}
	w->size[si] = n;
	return n;
}

static int walk(struct walk *w, uint32_t si);

/* Walks a step whose writes may not happen (a Switch case, a Repeat of 0):
 * what it writes is forgotten afterwards. */
static int walk_maybe(struct walk *w, uint32_t si, const struct cov *before)
{
	size_t bytes = (size_t)w->lv->npieces * sizeof(*w->cov);

	if (before)
		memcpy(w->cov, before, bytes);
	return walk(w, si);
}

static int walk(struct walk *w, uint32_t si)
{
	const struct g_step *s = &w->g->steps[si];
	int outer = !w->scoped, r = 0;
	struct cov *saved = NULL;
	size_t bytes = (size_t)w->lv->npieces * sizeof(*w->cov);

	if (s->kind == IPUX_STEP_REPEAT && outer) {
		w->scoped = 1;
		w->scope_first = w->pos;
		w->scope_last = w->pos + (uint32_t)w->size[si] - 1;
		if (!w->size[si])
			w->scope_last = w->pos;
	}
	switch (s->kind) {
	case IPUX_STEP_EXECUTE: case IPUX_STEP_EXCHANGE: case IPUX_STEP_STREAM_COPY:
		leaf(w, s);
		apply_writes(w);
		w->pos++;
		if (w->oom)
			r = g_fail(w->g, "out of memory for the liveness of %u tensor pieces",
				   w->lv->npieces);
		break;
	case IPUX_STEP_SEQUENCE:
		for (uint32_t i = 0; i < s->nkids && !r; i++)
			r = walk(w, s->kids[i]);
		break;
	case IPUX_STEP_REPEAT:
		if (s->a) {
			r = walk(w, s->b);
			break;
		}
		/* a body that may not run: as a Switch case */
		/* fall through */
	case IPUX_STEP_SWITCH:
		saved = malloc(bytes ? bytes : 1);
		if (!saved) {
			r = g_fail(w->g, "out of memory for the liveness of %u tensor pieces",
				   w->lv->npieces);
			break;
		}
		memcpy(saved, w->cov, bytes);
		if (s->kind == IPUX_STEP_REPEAT) {
			r = walk_maybe(w, s->b, NULL);
		} else {
			touch(w, (struct ipu_slice){ s->selector, 0, 1 }, RD);
			w->pos++;
			for (uint32_t i = 0; i < s->nkids && !r; i++)
				r = walk_maybe(w, s->kids[i], saved);
		}
		memcpy(w->cov, saved, bytes);
		free(saved);
		break;
	default:
		break;
	}
	if (s->kind == IPUX_STEP_REPEAT && outer)
		w->scoped = 0;
	return r;
}

void ga_live_free(struct ga_live *lv)
{
	free(lv->base);
	free(lv->first);
	free(lv->last);
	memset(lv, 0, sizeof(*lv));
}

static int group_vertices(struct walk *w)
{
	struct ipu_graph *g = w->g;
	uint32_t i;

	w->cs_first = calloc((size_t)g->n_cs_names + 2, sizeof(*w->cs_first));
	w->cs_vtx = malloc(((size_t)g->n_vertices + 1) * sizeof(*w->cs_vtx));
	if (!w->cs_first || !w->cs_vtx)
		return -1;
	for (i = 0; i < g->n_vertices; i++)
		w->cs_first[g->vertices[i].cs + 2]++;
	for (i = 1; i <= g->n_cs_names; i++)
		w->cs_first[i + 1] += w->cs_first[i];
	for (i = 0; i < g->n_vertices; i++)
		w->cs_vtx[w->cs_first[g->vertices[i].cs + 1]++] = i;
	return 0;
}

int ga_liveness(struct ipu_graph *g, struct ga_live *lv)
{
	struct walk w;
	uint64_t np = 0, total = 0;
	uint32_t i, p;
	int r = -1;

	memset(lv, 0, sizeof(*lv));
	memset(&w, 0, sizeof(w));
	w.g = g;
	w.lv = lv;
	lv->base = malloc(((size_t)g->n_tensors + 1) * sizeof(*lv->base));
	if (!lv->base)
		goto oom;
	for (i = 0; i < g->n_tensors; i++) {
		lv->base[i] = (uint32_t)np;
		np += g->tensors[i].niv;
		if (!g->tensors[i].sorted)
			g_find(&g->tensors[i], 0);
	}
	lv->base[g->n_tensors] = (uint32_t)np;
	if (np >= UINT32_MAX)
		return g_fail(g, "more than 2^32 mapped tensor pieces");
	lv->npieces = (uint32_t)np;
	lv->first = malloc((np + 1) * sizeof(*lv->first));
	lv->last = malloc((np + 1) * sizeof(*lv->last));
	w.cov = calloc(np + 1, sizeof(*w.cov));
	w.prog = malloc((np + 1) * sizeof(*w.prog));
	w.pinned = calloc(np + 1, 1);
	w.size = malloc(((size_t)g->n_steps + 1) * sizeof(*w.size));
	if (!lv->first || !lv->last || !w.cov || !w.prog || !w.pinned || !w.size ||
	    group_vertices(&w))
		goto oom;
	for (p = 0; p < np; p++) {
		lv->first[p] = UINT32_MAX;
		lv->last[p] = GA_PINNED_LAST;	/* untouched so far */
		w.prog[p] = NO_PROGRAM;
	}
	for (i = 0; i < g->n_steps; i++)
		w.size[i] = UINT64_MAX;
	for (i = 0; i < g->n_programs; i++) {
		uint64_t n = step_size(&w, g->programs[i], 0);

		if (n == UINT64_MAX || n >= UINT32_MAX - 1) {
			g_fail(g, "program %u: its steps nest deeper than %u or contain themselves, or it runs more than 2^32 steps",
			       i, MAX_DEPTH);
			goto out;
		}
		if (n > total)
			total = n;
	}
	lv->npositions = (uint32_t)total;
	for (i = 0; i < g->n_programs; i++) {
		/* each run starts with nothing written, at position 0 */
		memset(w.cov, 0, np * sizeof(*w.cov));
		w.program = i;
		w.pos = 0;
		if (walk(&w, g->programs[i]))
			goto out;
	}
	for (i = 0; i < g->n_tensors; i++)
		for (p = lv->base[i]; p < lv->base[i + 1]; p++)
			if (g->tensors[i].init || w.pinned[p] || w.prog[p] == NO_PROGRAM) {
				lv->first[p] = GA_PINNED_FIRST;
				lv->last[p] = GA_PINNED_LAST;
			}
	r = 0;
	goto out;
oom:
	g_fail(g, "out of memory for the liveness of %llu tensor pieces", (unsigned long long)np);
out:
	free(w.cov);
	free(w.prog);
	free(w.pinned);
	free(w.size);
	free(w.cs_first);
	free(w.cs_vtx);
	free(w.wr);
	if (r)
		ga_live_free(lv);
	return r;
}
