// SPDX-License-Identifier: MIT
/*
 * graph_origin.c - which node of the user's model each compute set and
 * exchange came from.  Consecutive supersteps of one node share one entry.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

int ipu_graph_set_origin(struct ipu_graph *g, const char *node, const char *op)
{
	struct g_origin *o;

	if (g->error)
		return -1;
	if (!node) {
		g->origin = IPU_GRAPH_INVALID;
		return 0;
	}
	if (!op)
		op = "";
	if (g->origin != IPU_GRAPH_INVALID && !strcmp(g->origins[g->origin].node, node) &&
	    !strcmp(g->origins[g->origin].op, op))
		return 0;
	if (G_PUSH(g, origins))
		return -1;
	o = &g->origins[g->n_origins];
	o->node = g_strdup(g, node);
	o->op = o->node ? g_strdup(g, op) : NULL;
	if (!o->op) {
		free(o->node);
		return -1;
	}
	g->origin = g->n_origins++;
	return 0;
}

uint32_t ipu_graph_num_origins(const struct ipu_graph *g)
{
	return g->n_origins;
}

const char *ipu_graph_origin(const struct ipu_graph *g, uint32_t i, const char **op)
{
	if (i >= g->n_origins)
		return NULL;
	if (op)
		*op = g->origins[i].op;
	return g->origins[i].node;
}

uint32_t ipu_graph_cs_origin(const struct ipu_graph *g, uint32_t cs)
{
	return cs < g->n_cs_origin ? g->cs_origin[cs] : IPU_GRAPH_INVALID;
}

uint32_t ipu_graph_exchange_origin(const struct ipu_graph *g, uint32_t x)
{
	return x < g->n_exchanges ? g->exchanges[x].origin : IPU_GRAPH_INVALID;
}
