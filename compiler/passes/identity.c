/* SPDX-License-Identifier: MIT */
/* identity.c - removes Identity and inference Dropout nodes. */
#include <string.h>

#include "ipu/passes.h"
#include "ops/registry.h"

int ir_pass_identity(struct ir_graph *g, struct ir_error *e)
{
	int removed = 0;

	(void)e;
	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];
		int src, dst;
		struct ir_value *sv;

		if (n->dead || (n->opid != IR_OP_Identity && n->opid != IR_OP_Dropout))
			continue;
		if (n->nout > 1 && ir_value_uses(g, n->out[1]))
			continue; /* Dropout's mask is read */
		if (n->nout > 1 && g->vals[n->out[1]].is_output)
			continue;
		src = n->in[0];
		dst = n->out[0];
		sv = &g->vals[src];
		if (!g->vals[dst].is_output) {
			ir_value_replace_uses(g, dst, src);
		} else if (sv->producer >= 0 && !sv->is_output && !sv->is_input) {
			/* the producer writes the graph output directly */
			struct ir_node *p = &g->nodes[sv->producer];

			for (int k = 0; k < p->nout; k++)
				if (p->out[k] == src)
					p->out[k] = dst;
			ir_value_replace_uses(g, src, dst);
		} else {
			continue; /* input or constant straight to an output */
		}
		n->dead = 1;
		removed++;
		ir_graph_link(g);
	}
	return removed;
}
