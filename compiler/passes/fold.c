/* SPDX-License-Identifier: MIT */
/* fold.c - constant folding with the reference evaluator. */
#include <string.h>

#include "eval/eval.h"
#include "ipu/passes.h"
#include "ops/registry.h"

int ir_pass_fold(struct ir_graph *g, int64_t limit, struct ir_error *e)
{
	int folded = 0;

	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];
		int all = 1, r;

		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && !g->vals[n->in[k]].data)
				all = 0;
		if (ir_node_has(n, IR_OP_SHAPE_ONLY))
			all = 1;
		if (!all)
			continue;
		r = ir_fold_node(g, i, limit, e);
		if (r < 0)
			return -1;
		folded += r;
	}
	return folded;
}
