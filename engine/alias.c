// SPDX-License-Identifier: MIT
/*
 * alias.c - exchange copies the host need not make.
 *
 * An exchange copy S -> D whose destination is only read, and only while
 * S still holds what was copied, can be skipped on the host: its readers
 * (vertex operands, other copies' sources, device-to-host stream regions)
 * read S in place instead.  The modelled device is unchanged: the copy's
 * bytes and cycles are still counted, and every reader sees the bytes it
 * would have seen.  Decided once at load, conservatively:
 *
 *  - the step graph is a tree (every step referenced at most once), the
 *    copy's exchange runs in exactly one step X, a direct child of a
 *    sequence Q, and is not staged;
 *  - nothing but this copy writes any byte of D (no other copy, no
 *    host-to-device stream, no vertex operand the codelet may write; a
 *    custom codelet's operands all count as written);
 *  - every access to D is a read that lies wholly inside D, by a step
 *    under Q after X (a redirect needs the whole region in one place);
 *    switch selectors and staged exchanges read D in place and keep it;
 *  - nothing writes S between X and the last of those readers in Q (the
 *    steps under Q run one after another, and nothing outside Q runs in
 *    between); a copy reading D counts one step later, because fusion may
 *    run it together with the compute set after it;
 *  - S itself is not an elided destination (no chains).
 * D then never holds the bytes in host memory; the engine refuses host
 * reads of it (engine.c).  The work is bounded by a budget of scanned
 * accesses, past which the remaining copies are kept.
 */
#include <stdlib.h>

#include "engine_internal.h"

#define NONE UINT32_MAX
#define ALIAS_BUDGET (1ull << 26)	/* accesses scanned */

enum { A_WRITE, A_READ, A_READ_COPY, A_READ_FIXED };
enum { U_CS, U_XCH, U_SC, U_STEP, U_NUM };

struct access {
	uint64_t start, end;
	uint32_t tile;
	uint8_t kind;
	uint8_t utype;
	uint32_t unit;		/* compute set, exchange, stream copy or step */
	uint32_t copy;		/* the copy, for an exchange's accesses */
};

struct plan_ctx {
	const struct ipu_exe *x;
	struct access *acc;
	uint64_t nacc;
	uint64_t *tile_first;	/* per tile + 1: first access of the tile */
	uint64_t *tile_maxlen;	/* per tile: longest access */
	uint32_t *parent, *pos;
	uint32_t *ustart[U_NUM], *ulist[U_NUM];	/* unit -> steps (CSR) */
	uint64_t work;
};

/*
 * Operands a built-in codelet only reads (bit i: operand i); every other
 * operand may be written, and so may every operand of a codelet not
 * listed here.  Conventions in ipu/codelet.h.
 */
static uint32_t read_only_ops(uint32_t codelet)
{
	switch (codelet) {
	case IPUX_CL_COPY: case IPUX_CL_CAST: case IPUX_CL_UNARY: case IPUX_CL_REDUCE:
	case IPUX_CL_SOFTMAX: case IPUX_CL_POOL2D: case IPUX_CL_TRANSPOSE:
	case IPUX_CL_STRIDED_COPY: case IPUX_CL_PAD: case IPUX_CL_CUMSUM: case IPUX_CL_TOPK:
	case IPUX_CL_CAST_FP8:
		return 0x1;
	case IPUX_CL_BINARY: case IPUX_CL_MATMUL: case IPUX_CL_GATHER:
		return 0x3;
	case IPUX_CL_WHERE: case IPUX_CL_NORM:
		return 0x7;
	case IPUX_CL_CONV2D: case IPUX_CL_MATMUL_FP8:
		return 0xb;
	case IPUX_CL_CONV2D_FP8:
		return 0x1b;
	default:
		return 0;
	}
}

static int cmp_access(const void *a, const void *b)
{
	const struct access *p = a, *q = b;

	if (p->tile != q->tile)
		return p->tile < q->tile ? -1 : 1;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return 0;
}

/* Accesses a plan may hold (32 bytes each): far above a real program's
 * (MobileNetV2 at 224 x 224: about 400,000). */
#define ALIAS_MAX_ACCESSES (1ull << 24)

/* Exactly the accesses collect() adds: a verified executable may let
 * compute sets share vertices, vertices share operands and exchanges share
 * copies, so the tables' own sizes are no bound. */
static uint64_t count_accesses(const struct ipu_exe *x)
{
	uint64_t n = 0;
	uint32_t i, j;

	for (i = 0; i < x->ncss; i++)
		for (j = 0; j < x->css[i].num_vertices; j++)
			n += x->vertices[x->css[i].first_vertex + j].num_operands;
	for (i = 0; i < x->nxchs; i++)
		n += 2ull * x->xchs[i].num_copies;
	for (i = 0; i < x->nscs; i++)
		n += x->scs[i].num_regions;
	for (i = 0; i < x->nsteps; i++)
		n += x->steps[i].kind == IPUX_STEP_SWITCH;
	return n;
}

static void add(struct plan_ctx *p, uint32_t tile, uint64_t start, uint64_t bytes, int kind,
		int utype, uint32_t unit, uint32_t copy)
{
	if (!bytes)
		return;
	p->acc[p->nacc++] = (struct access){ start, start + bytes, tile, (uint8_t)kind,
					     (uint8_t)utype, unit, copy };
}

static void collect(struct plan_ctx *p)
{
	const struct ipu_exe *x = p->x;
	uint32_t i, j, k;

	for (i = 0; i < x->ncss; i++)
		for (j = 0; j < x->css[i].num_vertices; j++) {
			const struct ipux_vertex *v = &x->vertices[x->css[i].first_vertex + j];
			uint32_t ro = read_only_ops(v->codelet);

			for (k = 0; k < v->num_operands; k++) {
				const struct ipux_operand *o = &x->operands[v->first_operand + k];

				add(p, v->tile, o->offset,
				    (uint64_t)o->count * ipux_dtype_size(o->dtype),
				    k < 32 && (ro >> k & 1) ? A_READ : A_WRITE, U_CS, i, NONE);
			}
		}
	for (i = 0; i < x->nxchs; i++)
		for (j = 0; j < x->xchs[i].num_copies; j++) {
			uint32_t ci = x->xchs[i].first_copy + j;
			const struct ipux_copy *c = &x->copies[ci];

			add(p, c->src_tile, c->src_offset, c->bytes,
			    x->xchplan[i].staged ? A_READ_FIXED : A_READ_COPY, U_XCH, i, ci);
			add(p, c->dst_tile, c->dst_offset, c->bytes, A_WRITE, U_XCH, i, ci);
		}
	for (i = 0; i < x->nscs; i++) {
		int kind = x->streams[x->scs[i].stream].dir == IPUX_STREAM_H2D ? A_WRITE : A_READ;

		for (j = 0; j < x->scs[i].num_regions; j++) {
			const struct ipux_region *r = &x->regions[x->scs[i].first_region + j];

			add(p, r->tile, r->offset, r->bytes, kind, U_SC, i, NONE);
		}
	}
	for (i = 0; i < x->nsteps; i++)
		if (x->steps[i].kind == IPUX_STEP_SWITCH)
			add(p, x->steps[i].a, x->steps[i].b, 4, A_READ_FIXED, U_STEP, i, NONE);
}

/* parent/pos of every step; 0 if some step is referenced twice. */
static int build_tree(struct plan_ctx *p)
{
	const struct ipu_exe *x = p->x;
	uint32_t i, k;

#define REF(child, par, at)                                   \
	do {                                                  \
		if (p->parent[child] != NONE || p->pos[child] != NONE) \
			return 0;                             \
		p->parent[child] = (par);                     \
		p->pos[child] = (at);                         \
	} while (0)
	for (i = 0; i < x->nsteps; i++)
		p->parent[i] = p->pos[i] = NONE;
	for (i = 0; i < x->nprograms; i++)
		REF(x->programs[i], NONE, 0);
	for (i = 0; i < x->nsteps; i++) {
		const struct ipux_step *s = &x->steps[i];

		if (s->kind == IPUX_STEP_SEQUENCE)
			for (k = 0; k < s->b; k++)
				REF(x->children[s->a + k], i, k);
		else if (s->kind == IPUX_STEP_REPEAT)
			REF(s->b, i, 0);
		else if (s->kind == IPUX_STEP_SWITCH)
			for (k = 0; k < s->d; k++)
				REF(x->children[s->c + k], i, k);
	}
#undef REF
	return 1;
}

static int build_units(struct plan_ctx *p)
{
	const struct ipu_exe *x = p->x;
	uint32_t n[U_NUM] = { x->ncss, x->nxchs, x->nscs, x->nsteps };
	uint32_t i, t;

	for (t = 0; t < U_NUM; t++) {
		p->ustart[t] = calloc((size_t)n[t] + 1, sizeof(uint32_t));
		p->ulist[t] = malloc((x->nsteps ? x->nsteps : 1) * sizeof(uint32_t));
		if (!p->ustart[t] || !p->ulist[t])
			return IPU_E_NOMEM;
	}
	for (t = 0; t < U_NUM; t++) {
		for (i = 0; i < x->nsteps; i++) {
			const struct ipux_step *s = &x->steps[i];
			uint32_t u = t == U_STEP ? i : s->a;

			if ((t == U_CS && s->kind == IPUX_STEP_EXECUTE) ||
			    (t == U_XCH && s->kind == IPUX_STEP_EXCHANGE) ||
			    (t == U_SC && s->kind == IPUX_STEP_STREAM_COPY) ||
			    (t == U_STEP && s->kind == IPUX_STEP_SWITCH))
				p->ustart[t][u + 1]++;
		}
		for (i = 0; i < n[t]; i++)
			p->ustart[t][i + 1] += p->ustart[t][i];
		{
			uint32_t *fill = calloc((size_t)n[t] + 1, sizeof(uint32_t));

			if (!fill)
				return IPU_E_NOMEM;
			for (i = 0; i < x->nsteps; i++) {
				const struct ipux_step *s = &x->steps[i];
				uint32_t u = t == U_STEP ? i : s->a;

				if ((t == U_CS && s->kind == IPUX_STEP_EXECUTE) ||
				    (t == U_XCH && s->kind == IPUX_STEP_EXCHANGE) ||
				    (t == U_SC && s->kind == IPUX_STEP_STREAM_COPY) ||
				    (t == U_STEP && s->kind == IPUX_STEP_SWITCH))
					p->ulist[t][p->ustart[t][u] + fill[u]++] = i;
			}
			free(fill);
		}
	}
	return 0;
}

/* Position under q of the child of q that contains step s, or -1. */
static int64_t pos_under(struct plan_ctx *p, uint32_t s, uint32_t q)
{
	uint32_t depth;

	for (depth = 0; depth <= IPUX_MAX_DEPTH + 1 && s != NONE; depth++) {
		p->work++;
		if (p->parent[s] == q)
			return p->pos[s];
		s = p->parent[s];
	}
	return -1;
}

/* First access of tile t that may overlap [a, ...). */
static uint64_t scan_from(const struct plan_ctx *p, uint32_t t, uint64_t a)
{
	uint64_t lo = p->tile_first[t], hi = p->tile_first[t + 1];
	uint64_t want = a > p->tile_maxlen[t] ? a - p->tile_maxlen[t] : 0;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (p->acc[mid].start < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 1 if copy ci (of exchange xi, run by step xs at position px of q) may be elided. */
static int copy_elidable(struct plan_ctx *p, uint32_t ci, uint32_t q, uint32_t px)
{
	const struct ipu_exe *x = p->x;
	const struct ipux_copy *c = &x->copies[ci];
	uint64_t d0 = c->dst_offset, d1 = d0 + c->bytes, s0 = c->src_offset, s1 = s0 + c->bytes;
	int64_t maxr = px;
	uint64_t k;
	uint32_t j;

	for (k = scan_from(p, c->dst_tile, d0);
	     k < p->tile_first[c->dst_tile + 1] && p->acc[k].start < d1; k++) {
		const struct access *a = &p->acc[k];

		if (++p->work > ALIAS_BUDGET)
			return 0;
		if (a->end <= d0)
			continue;
		if (a->copy == ci && a->kind == A_WRITE)
			continue;
		if (a->kind == A_WRITE || a->kind == A_READ_FIXED || a->start < d0 || a->end > d1)
			return 0;
		for (j = p->ustart[a->utype][a->unit]; j < p->ustart[a->utype][a->unit + 1]; j++) {
			int64_t r = pos_under(p, p->ulist[a->utype][j], q);

			if (r <= (int64_t)px)
				return 0;
			r += a->kind == A_READ_COPY;
			if (r > maxr)
				maxr = r;
		}
	}
	for (k = scan_from(p, c->src_tile, s0);
	     k < p->tile_first[c->src_tile + 1] && p->acc[k].start < s1; k++) {
		const struct access *a = &p->acc[k];

		if (++p->work > ALIAS_BUDGET)
			return 0;
		if (a->end <= s0 || a->kind != A_WRITE)
			continue;
		for (j = p->ustart[a->utype][a->unit]; j < p->ustart[a->utype][a->unit + 1]; j++) {
			int64_t w = pos_under(p, p->ulist[a->utype][j], q);

			if (w >= (int64_t)px && w <= maxr)
				return 0;
		}
	}
	return 1;
}

static int cmp_span(const void *a, const void *b)
{
	const struct ipu_alias_span *p = a, *q = b;

	if (p->dtile != q->dtile)
		return p->dtile < q->dtile ? -1 : 1;
	if (p->doff != q->doff)
		return p->doff < q->doff ? -1 : 1;
	return 0;
}

const struct ipu_alias_span *ipu_alias_find(const struct ipu_alias *a, uint32_t tile,
					    uint64_t off, uint64_t len, int *overlaps)
{
	uint32_t lo = 0, hi = a->n;

	*overlaps = 0;
	/* first span ending after off on this tile (spans are disjoint) */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct ipu_alias_span *s = &a->spans[mid];

		if (s->dtile < tile || (s->dtile == tile && (uint64_t)s->doff + s->bytes <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!len || lo == a->n || a->spans[lo].dtile != tile || a->spans[lo].doff >= off + len)
		return NULL;
	*overlaps = 1;
	if (a->spans[lo].doff <= off && off + len <= (uint64_t)a->spans[lo].doff + a->spans[lo].bytes)
		return &a->spans[lo];
	return NULL;
}

static int decide(struct plan_ctx *p, struct ipu_alias *out)
{
	const struct ipu_exe *x = p->x;
	uint32_t xi, i, n = 0, keep = 0;

	for (xi = 0; xi < x->nxchs && p->work < ALIAS_BUDGET; xi++) {
		uint32_t st, q;

		if (x->xchplan[xi].staged || p->ustart[U_XCH][xi + 1] - p->ustart[U_XCH][xi] != 1)
			continue;
		st = p->ulist[U_XCH][p->ustart[U_XCH][xi]];
		q = p->parent[st];
		if (q == NONE || x->steps[q].kind != IPUX_STEP_SEQUENCE)
			continue;
		for (i = 0; i < x->xchs[xi].num_copies && p->work < ALIAS_BUDGET; i++) {
			uint32_t ci = x->xchs[xi].first_copy + i;

			if (x->copies[ci].bytes && copy_elidable(p, ci, q, p->pos[st])) {
				out->elided[ci] = 1;
				n++;
			}
		}
	}
	out->spans = malloc((n ? n : 1) * sizeof(*out->spans));
	if (!out->spans)
		return IPU_E_NOMEM;
	for (i = 0; i < x->ncopies; i++)
		if (out->elided[i]) {
			const struct ipux_copy *c = &x->copies[i];

			out->spans[out->n++] = (struct ipu_alias_span){
				c->dst_tile, c->dst_offset, c->bytes, c->src_tile, c->src_offset, i };
		}
	qsort(out->spans, out->n, sizeof(*out->spans), cmp_span);
	/* no chains: a source that is itself an elided destination stays a copy */
	for (i = 0; i < out->n; i++) {
		const struct ipu_alias_span *s = &out->spans[i];
		int ov;

		ipu_alias_find(out, s->stile, s->soff, s->bytes, &ov);
		if (ov)
			out->elided[s->copy] = 2;
	}
	for (i = 0; i < out->n; i++)
		if (out->elided[out->spans[i].copy] == 1)
			out->spans[keep++] = out->spans[i];
		else
			out->elided[out->spans[i].copy] = 0;
	out->n = keep;
	for (i = 0; i < out->n; i++)
		out->bytes += out->spans[i].bytes;
	return 0;
}

int ipu_alias_plan(const struct ipu_exe *x, struct ipu_alias *out)
{
	struct plan_ctx p = { .x = x };
	uint32_t ntiles = x->hdr->num_tiles, t;
	uint64_t i, nacc;
	int rc = IPU_E_NOMEM;

	*out = (struct ipu_alias){ 0 };
	out->elided = calloc(x->ncopies ? x->ncopies : 1, 1);
	nacc = count_accesses(x);
	if (!out->elided)
		goto done;
	/* compute sets sharing vertices can multiply the accesses far beyond
	 * the tables: past a bound the plan is not worth its memory, every
	 * copy is kept */
	if (nacc > ALIAS_MAX_ACCESSES) {
		rc = 0;
		goto done;
	}
	p.acc = malloc((nacc + 1) * sizeof(*p.acc));
	p.tile_first = calloc((size_t)ntiles + 1, sizeof(*p.tile_first));
	p.tile_maxlen = calloc((size_t)ntiles + 1, sizeof(*p.tile_maxlen));
	p.parent = malloc(((size_t)x->nsteps + 1) * sizeof(*p.parent));
	p.pos = malloc(((size_t)x->nsteps + 1) * sizeof(*p.pos));
	if (!out->elided || !p.acc || !p.tile_first || !p.tile_maxlen || !p.parent || !p.pos)
		goto done;
	rc = 0;
	if (!build_tree(&p))
		goto done;	/* shared steps: keep every copy */
	rc = build_units(&p);
	if (rc)
		goto done;
	collect(&p);
	qsort(p.acc, p.nacc, sizeof(*p.acc), cmp_access);
	for (i = 0; i < p.nacc; i++) {
		const struct access *a = &p.acc[i];

		p.tile_first[a->tile + 1]++;
		if (a->end - a->start > p.tile_maxlen[a->tile])
			p.tile_maxlen[a->tile] = a->end - a->start;
	}
	for (t = 0; t < ntiles; t++)
		p.tile_first[t + 1] += p.tile_first[t];
	rc = decide(&p, out);
done:
	free(p.acc);
	free(p.tile_first);
	free(p.tile_maxlen);
	free(p.parent);
	free(p.pos);
	for (t = 0; t < U_NUM; t++) {
		free(p.ustart[t]);
		free(p.ulist[t]);
	}
	if (rc)
		ipu_alias_free(out);
	return rc;
}

void ipu_alias_free(struct ipu_alias *a)
{
	free(a->elided);
	free(a->spans);
	*a = (struct ipu_alias){ 0 };
}
