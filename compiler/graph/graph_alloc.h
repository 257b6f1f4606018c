/* SPDX-License-Identifier: MIT */
/*
 * graph_alloc.h - tile memory by liveness: when each piece of a tensor is
 * live in the programs' step order (graph_live.c) and where it goes in its
 * tile's memory (graph_alloc.c).  Internal to the graph builder; the unit
 * tests use it directly.
 */
#ifndef IPU_GRAPH_ALLOC_H
#define IPU_GRAPH_ALLOC_H

#include <stdint.h>

#include "graph_internal.h"

/* Live over every position: constants, pieces read before this run wrote
 * them, pieces no step touches. */
#define GA_PINNED_FIRST 0u
#define GA_PINNED_LAST UINT32_MAX

/* One piece of memory to place on one tile. */
struct ga_block {
	uint64_t bytes;
	uint32_t align;		/* power of two */
	uint32_t first, last;	/* live positions, inclusive */
	uint64_t offset;	/* result */
};

/*
 * Places the blocks of one tile: blocks whose [first, last] ranges
 * intersect get disjoint byte ranges, each offset a multiple of its
 * alignment.  Pinned blocks (first == GA_PINNED_FIRST, last ==
 * GA_PINNED_LAST) go first, packed from 0 in the given order; the others
 * greedily by decreasing size, each into the tightest gap left by the
 * blocks it is live with.  Returns the tile's peak (highest end) or
 * UINT64_MAX when out of memory for the scratch arrays.
 */
uint64_t ga_place(struct ga_block *b, uint32_t n);

/* The most bytes live at one position (a lower bound of any placement),
 * and that position. */
uint64_t ga_max_live(const struct ga_block *b, uint32_t n, uint32_t *at);

/*
 * Liveness of every mapped piece (tensor interval) over the programs'
 * flattened step order, every program's from position 0 (one program
 * runs at a time; npositions is the longest program's).  Pieces are numbered tensor by tensor in interval
 * order (intervals sorted by element), so piece k of tensor t is
 * base[t] + k.  first/last are written per piece; pinned pieces get
 * [GA_PINNED_FIRST, GA_PINNED_LAST].  Returns 0, or -1 with the graph's
 * error set.
 */
struct ga_live {
	uint32_t *base;		/* n_tensors + 1 */
	uint32_t *first, *last;	/* per piece */
	uint32_t npieces;
	uint32_t npositions;
};
int ga_liveness(struct ipu_graph *g, struct ga_live *lv);
void ga_live_free(struct ga_live *lv);

/* Lays out every tile (reuse per g->reuse) and fills st's memory fields. */
int g_layout(struct ipu_graph *g, struct ipu_graph_stats *st);

#endif /* IPU_GRAPH_ALLOC_H */
