/* SPDX-License-Identifier: MIT */
/*
 * names.c - the graph's index of value names.
 *
 * Rewrites make thousands of values with generated names ("rw_const",
 * "gather_start", ...) and each one asked for a name no value has yet:
 * a linear search per candidate made splitting one long Gather cubic in
 * the number of chunks (seconds for a GridSample of a few thousand
 * elements on a small target).  The index answers "which value has this
 * name" in constant time, and remembers per base name the highest suffix
 * known to be taken, so that ir_value_add_unique picks exactly the name
 * the linear search picked: the smallest free "<base>_<k>".
 *
 * Names never change once given and values go away only in ir_compact,
 * which drops the index (ir_names_drop); it is rebuilt on demand.  When
 * the index cannot be allocated the graph falls back to the linear
 * search: slower, never wrong.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ir.h"
#include "names.h"

struct base_memo {
	char *base;		/* owned; NULL: empty slot */
	int last;		/* "<base>" and "<base>_1" .. "<base>_last" are taken */
};

struct ir_names {
	int *slot;		/* value index + 1; 0: empty */
	uint32_t cap, used;	/* cap: a power of two */
	struct base_memo *memo;
	uint32_t mcap, mused;
};

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The slot holding `name`, or the empty slot where it would go. */
static uint32_t find_slot(const struct ir_names *x, const struct ir_graph *g, const char *name)
{
	uint32_t m = x->cap - 1, i = hash_str(name) & m;

	while (x->slot[i] && strcmp(g->vals[x->slot[i] - 1].name, name))
		i = (i + 1) & m;
	return i;
}

static int grow_values(struct ir_names *x, const struct ir_graph *g, uint32_t want)
{
	uint32_t cap = x->cap ? x->cap : 64;
	int *old = x->slot;
	uint32_t ocap = x->cap;

	while (cap < want * 2)
		cap *= 2;
	if (cap == x->cap)
		return 0;
	x->slot = calloc(cap, sizeof(*x->slot));
	if (!x->slot) {
		x->slot = old;
		return -1;
	}
	x->cap = cap;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i])
			x->slot[find_slot(x, g, g->vals[old[i] - 1].name)] = old[i];
	free(old);
	return 0;
}

static void names_free(struct ir_names *x)
{
	if (!x)
		return;
	for (uint32_t i = 0; i < x->mcap; i++)
		free(x->memo[i].base);
	free(x->memo);
	free(x->slot);
	free(x);
}

void ir_names_drop(struct ir_graph *g)
{
	names_free(g->names);
	g->names = NULL;
}

/* Builds the index of every value's name; 0, or -1 (no memory: none). */
static int names_build(struct ir_graph *g)
{
	struct ir_names *x;

	if (g->names)
		return 0;
	x = calloc(1, sizeof(*x));
	if (!x || grow_values(x, g, (uint32_t)g->nvals + 64)) {
		names_free(x);
		return -1;
	}
	/* in index order: a later value of a duplicated name wins, as the
	 * linear search (from the end) has it */
	for (int v = 0; v < g->nvals; v++)
		x->slot[find_slot(x, g, g->vals[v].name)] = v + 1;
	x->used = (uint32_t)g->nvals;
	g->names = x;
	return 0;
}

int ir_names_find(const struct ir_graph *g, const char *name)
{
	const struct ir_names *x = g->names;
	uint32_t i;

	if (!x)
		return -2;
	i = find_slot(x, g, name);
	return x->slot[i] ? x->slot[i] - 1 : -1;
}

void ir_names_added(struct ir_graph *g, int v)
{
	struct ir_names *x = g->names;
	uint32_t i;

	if (!x)
		return;
	if ((x->used + 1) * 2 > x->cap && grow_values(x, g, x->used + 1)) {
		ir_names_drop(g);	/* the linear search takes over */
		return;
	}
	i = find_slot(x, g, g->vals[v].name);
	if (!x->slot[i])
		x->used++;
	x->slot[i] = v + 1;
}

static struct base_memo *memo_slot(struct ir_names *x, const char *base)
{
	uint32_t m = x->mcap - 1, i = hash_str(base) & m;

	while (x->memo[i].base && strcmp(x->memo[i].base, base))
		i = (i + 1) & m;
	return &x->memo[i];
}

static int grow_memo(struct ir_names *x)
{
	uint32_t cap = x->mcap ? x->mcap * 2 : 64, ocap = x->mcap;
	struct base_memo *old = x->memo;

	x->memo = calloc(cap, sizeof(*x->memo));
	if (!x->memo) {
		x->memo = old;
		return -1;
	}
	x->mcap = cap;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i].base)
			*memo_slot(x, old[i].base) = old[i];
	free(old);
	return 0;
}

int ir_names_first_suffix(struct ir_graph *g, const char *base)
{
	struct base_memo *b;

	if (names_build(g) || !g->names->memo)
		return 0;
	b = memo_slot(g->names, base);
	return b->base ? b->last + 1 : 0;
}

void ir_names_taken(struct ir_graph *g, const char *base, int k)
{
	struct ir_names *x = g->names;
	struct base_memo *b;

	if (!x)
		return;
	if ((x->mused + 1) * 2 > x->mcap && grow_memo(x))
		return;		/* no memo: the search starts at 0, still right */
	b = memo_slot(x, base);
	if (!b->base) {
		if (!(b->base = strdup(base)))
			return;
		x->mused++;
	}
	if (k > b->last)
		b->last = k;
}
