/* SPDX-License-Identifier: MIT */
/* dce.c - dead-code elimination. */
#include <stdlib.h>

#include "ipu/passes.h"

int ir_pass_dce(struct ir_graph *g, struct ir_error *e)
{
	char *live = calloc((size_t)(g->nvals ? g->nvals : 1), 1);
	int removed = 0;

	if (!live)
		return ir_err(e, "out of memory");
	for (int i = 0; i < g->noutputs; i++)
		live[g->outputs[i]] = 1;
	for (int i = g->nnodes - 1; i >= 0; i--) {
		struct ir_node *n = &g->nodes[i];
		int used = 0;

		if (n->dead)
			continue;
		for (int k = 0; k < n->nout; k++)
			used |= live[n->out[k]];
		if (!used) {
			n->dead = 1;
			removed++;
			continue;
		}
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				live[n->in[k]] = 1;
	}
	free(live);
	if (ir_compact(g, e))
		return -1;
	return removed;
}
