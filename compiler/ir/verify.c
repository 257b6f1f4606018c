/* SPDX-License-Identifier: MIT */
/*
 * verify.c - the graph's invariants, checked between passes: a rewrite
 * that breaks one is caught where it happened rather than later, as a
 * puzzling shape-inference message about another node.  Linear in the
 * graph's size (nodes, their inputs and outputs, values).
 */
#include <stdlib.h>
#include <string.h>

#include "ipu/ir.h"
#include "ops/registry.h"

/* What reading value v from node n needs: a graph input, a constant or an
 * output of an earlier live node. */
static int check_read(const struct ir_graph *g, const struct ir_node *n, int k,
		      const char *ready, const int *made_by, struct ir_error *e)
{
	int v = n->in[k];

	if (v < -1 || v >= g->nvals)
		return ir_node_err(e, g, n, "input %d is value id %d, outside the graph's %d values", k, v,
				   g->nvals);
	if (v < 0 || ready[v])
		return 0;
	if (made_by[v] >= 0)
		return ir_node_err(e, g, n, "input %d '%s' is made later, by node '%s' (#%d): the nodes are not in topological order",
				   k, g->vals[v].name, g->nodes[made_by[v]].name, made_by[v]);
	return ir_node_err(e, g, n, "input %d '%s' is neither a graph input, a constant nor the output of a live node", k,
			   g->vals[v].name);
}

static int check_typed(const struct ir_graph *g, const struct ir_node *n, int v, const char *what, int k,
		       struct ir_error *e)
{
	const struct ir_value *x = &g->vals[v];

	if (x->dtype == IR_UNDEFINED)
		return ir_node_err(e, g, n, "%s %d '%s' has no element type after shape inference", what, k, x->name);
	if (x->rank < 0 || x->rank > IR_MAX_RANK)
		return ir_node_err(e, g, n, "%s %d '%s' has no shape after shape inference (rank %d)", what, k,
				   x->name, x->rank);
	for (int d = 0; d < x->rank; d++)
		if (x->dims[d] < -1)
			return ir_node_err(e, g, n, "%s %d '%s' has dimension %d = %lld", what, k, x->name, d,
					   (long long)x->dims[d]);
	return 0;
}

static int check_node(const struct ir_graph *g, int i, unsigned flags, char *ready, int *made_by,
		      struct ir_error *e)
{
	const struct ir_node *n = &g->nodes[i];
	const struct ir_op_desc *d = ir_op_lookup(n->op);

	if ((d ? (int)d->id : IR_OP_COUNT) != n->opid)
		return ir_node_err(e, g, n, "operator id %d does not match op '%s' (set op with ir_node_set_op)",
				   n->opid, n->op);
	if (n->nin < 0 || n->nout < 0 || (n->nin && !n->in) || (n->nout && !n->out))
		return ir_node_err(e, g, n, "%d inputs and %d outputs", n->nin, n->nout);
	for (int k = 0; k < n->nin; k++) {
		if (check_read(g, n, k, ready, made_by, e))
			return -1;
		if ((flags & IR_VERIFY_TYPED) && n->in[k] >= 0 && check_typed(g, n, n->in[k], "input", k, e))
			return -1;
	}
	for (int k = 0; k < n->nout; k++) {
		int v = n->out[k];

		if (v < -1 || v >= g->nvals)
			return ir_node_err(e, g, n, "output %d is value id %d, outside the graph's %d values", k, v,
					   g->nvals);
		if (v < 0)
			continue;
		if (made_by[v] != i)
			return ir_node_err(e, g, n, "output %d '%s' is also made by node '%s' (#%d)", k,
					   g->vals[v].name, g->nodes[made_by[v]].name, made_by[v]);
		if (ready[v])
			return ir_node_err(e, g, n, "output %d '%s' is a graph input or a constant", k, g->vals[v].name);
		if ((flags & IR_VERIFY_TYPED) && check_typed(g, n, v, "output", k, e))
			return -1;
		ready[v] = 1;
	}
	return 0;
}

/* made_by[v]: the first live node writing v (-1: none); a second writer
 * is reported by check_node. */
static int first_writers(const struct ir_graph *g, int *made_by, struct ir_error *e)
{
	for (int v = 0; v < g->nvals; v++)
		made_by[v] = -1;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->nout; k++) {
			int v = n->out ? n->out[k] : -1;

			if (v < -1 || v >= g->nvals)
				return ir_node_err(e, g, n, "output %d is value id %d, outside the graph's %d values",
						   k, v, g->nvals);
			if (v >= 0 && made_by[v] < 0)
				made_by[v] = i;
		}
	}
	return 0;
}

int ir_verify(const struct ir_graph *g, unsigned flags, struct ir_error *e)
{
	char *ready;
	int *made_by, r = -1;

	if (g->nvals < 0 || g->nnodes < 0 || g->ninputs < 0 || g->noutputs < 0)
		return ir_err(e, "graph: negative counts (%d values, %d nodes)", g->nvals, g->nnodes);
	ready = calloc((size_t)g->nvals + 1, 1);
	made_by = malloc(((size_t)g->nvals + 1) * sizeof(*made_by));
	if (!ready || !made_by) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int k = 0; k < g->ninputs; k++) {
		if (g->inputs[k] < 0 || g->inputs[k] >= g->nvals) {
			ir_err(e, "graph input %d is value id %d, outside the graph's %d values", k, g->inputs[k],
			       g->nvals);
			goto out;
		}
		ready[g->inputs[k]] = 1;
	}
	for (int v = 0; v < g->nvals; v++) {
		if (g->vals[v].data)
			ready[v] = 1;
		if (g->vals[v].producer < -1 || g->vals[v].producer >= g->nnodes) {
			ir_err(e, "value '%s' names producer %d, outside the graph's %d nodes", g->vals[v].name,
			       g->vals[v].producer, g->nnodes);
			goto out;
		}
	}
	if (first_writers(g, made_by, e))
		goto out;
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && check_node(g, i, flags, ready, made_by, e))
			goto out;
	for (int k = 0; k < g->noutputs; k++) {
		int v = g->outputs[k];

		if (v < 0 || v >= g->nvals) {
			ir_err(e, "graph output %d is value id %d, outside the graph's %d values", k, v, g->nvals);
			goto out;
		}
		if (!ready[v]) {
			ir_err(e, "graph output '%s' is neither a graph input, a constant nor the output of a live node",
			       g->vals[v].name);
			goto out;
		}
	}
	r = 0;
out:
	free(ready);
	free(made_by);
	return r;
}
