// SPDX-License-Identifier: MIT
/*
 * graph_report.c - what a compile report needs from a compiled builder:
 * its tensors, each tile's memory peak, and the bytes live over the
 * programs' steps (the allocator's liveness, graph_live.c).
 */
#include <stdlib.h>
#include <string.h>

#include "graph_alloc.h"

uint32_t ipu_graph_num_tensors(const struct ipu_graph *g)
{
	return g->n_tensors;
}

const char *ipu_graph_tensor_name(const struct ipu_graph *g, ipu_tensor t)
{
	return t < g->n_tensors ? g->tensors[t].name : NULL;
}

int ipu_graph_tile_usage(const struct ipu_graph *g, uint64_t *peak)
{
	uint32_t t, k;

	memset(peak, 0, (size_t)g->num_tiles * sizeof(*peak));
	for (t = 0; t < g->n_tensors; t++) {
		const struct g_tensor *x = &g->tensors[t];

		for (k = 0; k < x->niv; k++) {
			const struct g_interval *iv = &x->iv[k];
			uint64_t end = iv->offset + (iv->end - iv->begin) * x->esize;

			if (iv->tile >= g->num_tiles)
				return -1;
			if (end > peak[iv->tile])
				peak[iv->tile] = end;
		}
	}
	return 0;
}

int ipu_graph_memory_timeline(struct ipu_graph *g, uint64_t **bytes, uint32_t *n)
{
	struct ga_live lv;
	int64_t *delta;
	uint64_t pinned = 0, cur = 0, *out;
	uint32_t t, k, p;

	*bytes = NULL;
	*n = 0;
	if (ga_liveness(g, &lv))
		return -1;
	delta = calloc((size_t)lv.npositions + 1, sizeof(*delta));
	out = malloc(((size_t)lv.npositions + 1) * sizeof(*out));
	if (!delta || !out) {
		free(delta);
		free(out);
		ga_live_free(&lv);
		return g_fail(g, "out of memory");
	}
	for (t = 0; t < g->n_tensors; t++) {
		const struct g_tensor *x = &g->tensors[t];

		for (k = 0; k < x->niv; k++) {
			uint32_t piece = lv.base[t] + k;
			uint64_t b = (x->iv[k].end - x->iv[k].begin) * x->esize;
			uint32_t f = lv.first[piece], l = lv.last[piece];

			if (f == GA_PINNED_FIRST && l == GA_PINNED_LAST) {
				pinned += b;
				continue;
			}
			if (f >= lv.npositions)
				continue;
			if (l >= lv.npositions)
				l = lv.npositions - 1;
			delta[f] += (int64_t)b;
			delta[l + 1] -= (int64_t)b;
		}
	}
	for (p = 0; p < lv.npositions; p++) {
		cur += (uint64_t)delta[p];
		out[p] = pinned + cur;
	}
	*bytes = out;
	*n = lv.npositions;
	free(delta);
	ga_live_free(&lv);
	return 0;
}
