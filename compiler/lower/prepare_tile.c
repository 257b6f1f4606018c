/* SPDX-License-Identifier: MIT */
/*
 * prepare_tile.c - a Tile repeating more than two axes becomes a chain of
 * Tiles of two axes each (the decompose hook of Tile).  One Tile is one
 * strided copy of rank 2 x rank before its dims merge; with at most two
 * axes repeated it merges to rank 5 or less, within what a copy vertex
 * takes, where a rank-4 input repeated on every axis would need 8.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

int lp_dec_tile(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *rv = &g->vals[n->in[1]];
	int64_t reps[IR_MAX_RANK], part[IR_MAX_RANK], nr;
	int rank = g->vals[n->in[0]].rank, pos = *pi, cur = n->in[0], repeated = 0, done = 0;
	char name[256];

	if (!rv->data || rank > IR_MAX_RANK)
		return 0;
	nr = ir_value_numel(rv);
	if (nr != rank)
		return 0;
	for (int i = 0; i < rank; i++) {
		reps[i] = ir_get_i(rv->data, rv->dtype, (size_t)i);
		repeated += reps[i] != 1;
	}
	if (repeated <= 2)
		return 0;
	snprintf(name, sizeof(name), "%s", n->name);
	/* every pair of repeated axes but the last goes to a Tile of its own */
	while (repeated - done > 2) {
		struct ir_tensor t;
		int in[2], taken = 0, rvv;
		int64_t r = rank;

		for (int i = 0; i < rank; i++) {
			part[i] = 1;
			if (reps[i] != 1 && taken < 2) {
				part[i] = reps[i];
				reps[i] = 1;
				taken++;
			}
		}
		done += taken;
		if ((rvv = ir_value_add_unique(g, "tile_reps", e)) < 0 ||
		    ir_tensor_alloc(&t, IR_I64, 1, &r, e))
			return -1;
		memcpy(t.data, part, (size_t)rank * sizeof(int64_t));
		ir_value_set_const(&g->vals[rvv], &t);
		in[0] = cur;
		in[1] = rvv;
		if ((cur = lp_add_node(g, &pos, name, "Tile", in, 2, e)) < 0)
			return -1;
	}
	/* the node keeps the last two repeated axes */
	{
		struct ir_tensor t;
		int64_t r = rank;
		int rvv = ir_value_add_unique(g, "tile_reps", e);

		if (rvv < 0 || ir_tensor_alloc(&t, IR_I64, 1, &r, e))
			return -1;
		memcpy(t.data, reps, (size_t)rank * sizeof(int64_t));
		ir_value_set_const(&g->vals[rvv], &t);
		n = &g->nodes[pos];
		n->in[0] = cur;
		n->in[1] = rvv;
	}
	*pi = pos;
	return 0;
}
