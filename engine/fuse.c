// SPDX-License-Identifier: MIT
/*
 * fuse.c - plans that run an exchange and the compute set right after it
 * (in the same sequence) as one parallel-for over tiles: a worker copies
 * tile T's incoming data and then runs T's vertices, so the vertices read
 * their freshly copied operands from its cache instead of from memory
 * (an exchange of many MB runs to completion first otherwise, and the
 * data of the first tiles has left the caches when their vertices run).
 *
 * This is only a different order of the same copies and vertices, with
 * the same results, when no vertex of the compute set touches memory that
 * a copy of the exchange reads: vertices touch only their own tile, copies
 * into T are done before T's vertices, and copies read their sources
 * before or while other tiles' vertices run.  Operands are not marked
 * read or written, so any operand overlapping a copy source (on the same
 * tile) keeps the pair apart; so does a staged exchange.
 */
#include <stdlib.h>

#include "engine_internal.h"

/* 1 if a copy source of exchange xi overlaps an operand of compute set ci; <0 on no memory. */
static int pair_hazard(const struct ipu_exe *x, uint32_t xi, uint32_t ci)
{
	const struct ipux_exchange *xe = &x->xchs[xi];
	const struct ipux_compute_set *cs = &x->css[ci];
	uint64_t n = xe->num_copies, i, j, k = 0;
	struct ipu_span *s;
	int hazard;

	for (i = 0; i < cs->num_vertices; i++)
		n += x->vertices[cs->first_vertex + i].num_operands;
	s = malloc((n ? n : 1) * sizeof(*s));
	if (!s)
		return IPU_E_NOMEM;
	for (i = 0; i < xe->num_copies; i++) {
		const struct ipux_copy *c = &x->copies[xe->first_copy + i];

		s[k++] = (struct ipu_span){ c->src_offset, (uint64_t)c->src_offset + c->bytes,
					    c->src_tile, 1 };
	}
	for (i = 0; i < cs->num_vertices; i++) {
		const struct ipux_vertex *v = &x->vertices[cs->first_vertex + i];

		for (j = 0; j < v->num_operands; j++) {
			const struct ipux_operand *o = &x->operands[v->first_operand + j];

			s[k++] = (struct ipu_span){ o->offset,
						    o->offset + (uint64_t)o->count *
								ipux_dtype_size(o->dtype),
						    v->tile, 0 };
		}
	}
	hazard = ipu_spans_overlap(s, k);
	free(s);
	return hazard;
}

struct fitem_cost {
	uint64_t cost;
	struct ipu_fused_item it;
};

static int cmp_fitem(const void *a, const void *b)
{
	const struct fitem_cost *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	if (x->it.tile != y->it.tile)
		return x->it.tile < y->it.tile ? -1 : 1;
	return 0;
}

/*
 * The items of the pair: one per tile that receives copies or runs
 * vertices, largest first (vertex cycles plus copied bytes at the
 * exchange's modelled rate), so the threads finish together.
 */
static int build_plan(const struct ipu_exe *x, uint32_t xi, uint32_t ci,
		      struct ipu_fuse_plan *fp)
{
	const struct ipu_cs_plan *cp = &x->csplan[ci];
	const struct ipu_xch_plan *xp = &x->xchplan[xi];
	uint32_t a = 0, b = 0, n = 0, i;
	struct fitem_cost *fc = malloc(((size_t)cp->ngroups + xp->ngroups + 1) * sizeof(*fc));

	if (!fc)
		return IPU_E_NOMEM;
	/* both group lists are sorted by tile */
	while (a < cp->ngroups || b < xp->ngroups) {
		struct fitem_cost *f = &fc[n++];
		uint32_t ta = a < cp->ngroups ? cp->groups[a].tile : UINT32_MAX;
		uint32_t tb = b < xp->ngroups ? xp->groups[b].tile : UINT32_MAX;

		f->cost = 0;
		f->it.tile = ta < tb ? ta : tb;
		f->it.cs_group = IPU_FUSE_NONE;
		f->it.xch_group = IPU_FUSE_NONE;
		if (ta == f->it.tile) {
			const struct ipu_tile_group *g = &cp->groups[a];

			for (i = 0; i < g->count; i++)
				f->cost += x->vcost[cp->order[g->first + i]];
			f->it.cs_group = a++;
		}
		if (tb == f->it.tile) {
			const struct ipu_tile_group *g = &xp->groups[b];

			for (i = 0; i < g->count; i++)
				f->cost += x->copies[xp->order[g->first + i]].bytes /
					   IPU_COST_XCH_BYTES_PER_CYCLE;
			f->it.xch_group = b++;
		}
	}
	qsort(fc, n, sizeof(*fc), cmp_fitem);
	fp->items = malloc((n ? n : 1) * sizeof(*fp->items));
	if (!fp->items) {
		free(fc);
		return IPU_E_NOMEM;
	}
	for (i = 0; i < n; i++)
		fp->items[i] = fc[i].it;
	fp->nitems = n;
	fp->xch = xi;
	fp->cs = ci;
	free(fc);
	return 0;
}

int ipu_plan_fusion(struct ipu_exe *x)
{
	uint32_t si, p, n = 0;
	int rc = 0;

	x->child_fuse = malloc((x->nchildren ? x->nchildren : 1) * sizeof(*x->child_fuse));
	if (!x->child_fuse)
		return IPU_E_NOMEM;
	for (p = 0; p < x->nchildren; p++)
		x->child_fuse[p] = IPU_FUSE_NONE;
	/* pairs of neighbouring children of a sequence */
	for (si = 0; si < x->nsteps; si++) {
		const struct ipux_step *s = &x->steps[si];

		if (s->kind != IPUX_STEP_SEQUENCE)
			continue;
		for (p = s->a; p + 1 < s->a + s->b; p++)
			if (x->steps[x->children[p]].kind == IPUX_STEP_EXCHANGE &&
			    x->steps[x->children[p + 1]].kind == IPUX_STEP_EXECUTE &&
			    x->child_fuse[p] == IPU_FUSE_NONE) {
				x->child_fuse[p] = IPU_FUSE_NONE - 1;	/* candidate */
				n++;
			}
	}
	x->fplan = calloc(n ? n : 1, sizeof(*x->fplan));
	if (!x->fplan)
		return IPU_E_NOMEM;
	for (p = 0; p < x->nchildren && !rc; p++) {
		uint32_t xi, ci;
		int h;

		if (x->child_fuse[p] == IPU_FUSE_NONE)
			continue;
		x->child_fuse[p] = IPU_FUSE_NONE;
		xi = x->steps[x->children[p]].a;
		ci = x->steps[x->children[p + 1]].a;
		if (x->xchplan[xi].staged)
			continue;
		h = pair_hazard(x, xi, ci);
		if (h < 0)
			return h;
		if (h)
			continue;
		rc = build_plan(x, xi, ci, &x->fplan[x->nfplans]);
		if (!rc)
			x->child_fuse[p] = x->nfplans++;
	}
	return rc;
}

void ipu_fusion_free(struct ipu_exe *x)
{
	uint32_t i;

	if (x->fplan)
		for (i = 0; i < x->nfplans; i++)
			free(x->fplan[i].items);
	free(x->fplan);
	free(x->child_fuse);
	x->fplan = NULL;
	x->child_fuse = NULL;
	x->nfplans = 0;
}
