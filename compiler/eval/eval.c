/* SPDX-License-Identifier: MIT */
/* eval.c - evaluator dispatch, constant folding of one node, whole graphs. */
#include <stdlib.h>
#include <string.h>

#include "custom/custom.h"
#include "eval_internal.h"

static ir_eval_fn find(const char *op)
{
	const struct ir_op_desc *d = ir_op_lookup(op);

	return d ? d->eval : NULL;
}

int ir_eval_supported(const char *op)
{
	/* a custom operator's plugin brings its reference */
	return find(op) != NULL || ir_custom_is(op);
}

int ir_eval_node(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, struct ir_tensor *out,
		 struct ir_error *e)
{
	const struct ir_op_desc *d = ir_node_desc(n);
	ir_eval_fn fn = ir_custom_is(n->op) ? ir_custom_eval : d ? d->eval : NULL;

	if (!fn)
		return ir_node_err(e, g, n, "the reference evaluator has no implementation of %s", n->op);
	for (int k = 0; k < n->nout; k++) {
		struct ir_tensor t;

		if (ir_tensor_alloc(&t, out[k].dtype, out[k].rank, out[k].dims, e)) {
			for (int j = 0; j < k; j++)
				ir_tensor_free(&out[j]);
			return -1;
		}
		out[k].data = t.data;
	}
	if (fn(g, n, in, n->nin, out, n->nout, e)) {
		for (int k = 0; k < n->nout; k++)
			ir_tensor_free(&out[k]);
		return -1;
	}
	return 0;
}

/* 1 if the node's result is too large to fold under `limit`. */
static int over_limit(const struct ir_graph *g, const struct ir_node *n, int64_t limit)
{
	int64_t in = 0, out = 0, bytes = 0;

	if (limit < 0)
		return 0;
	for (int k = 0; k < n->nout; k++) {
		const struct ir_value *v = &g->vals[n->out[k]];

		out += ir_value_numel(v);
		bytes += ir_value_numel(v) * (int64_t)ir_dtype_size(v->dtype);
	}
	if (bytes <= limit)
		return 0;
	/* moving elements costs time linear in the data and makes no tensor
	 * larger than its inputs (checked below): the limit guards against
	 * folds that grow the model, and lowering a layout op on a large
	 * constant (a transposed 9216 x 4096 Gemm weight) would instead put
	 * the whole tensor on one tile */
	if (!ir_node_has(n, IR_OP_LAYOUT))
		return 1;
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0)
			in += ir_value_numel(&g->vals[n->in[k]]);
	return out > in;
}

int ir_fold_node(struct ir_graph *g, int idx, int64_t limit,
		 struct ir_error *e)
{
	struct ir_node *n = &g->nodes[idx];
	const struct ir_tensor *in[1024];
	struct ir_tensor tin[1024], out[64];

	if (n->nin > 1024 || n->nout > 64 || !find(n->op) || over_limit(g, n, limit))
		return 0;
	for (int k = 0; k < n->nout; k++) {
		const struct ir_value *v = &g->vals[n->out[k]];

		memset(&out[k], 0, sizeof(out[k]));
		out[k].dtype = v->dtype;
		out[k].rank = v->rank;
		memcpy(out[k].dims, v->dims, sizeof(v->dims));
	}
	for (int k = 0; k < n->nin; k++) {
		in[k] = NULL;
		if (n->in[k] < 0)
			continue;
		ir_value_view(&g->vals[n->in[k]], &tin[k]);
		in[k] = &tin[k];
	}
	if (ir_eval_node(g, n, in, out, e))
		return -1;
	for (int k = 0; k < n->nout; k++)
		ir_value_set_const(&g->vals[n->out[k]], &out[k]);
	n->dead = 1;
	return 1;
}

int ir_eval_graph(const struct ir_graph *g, const struct ir_tensor *inputs,
		  struct ir_tensor *outputs, struct ir_error *e)
{
	return ir_eval_graph_visit(g, inputs, outputs, NULL, NULL, e);
}

int ir_eval_graph_visit(const struct ir_graph *g, const struct ir_tensor *inputs,
			struct ir_tensor *outputs, ir_eval_visit_fn visit, void *ctx,
			struct ir_error *e)
{
	struct ir_tensor *vals = calloc((size_t)(g->nvals ? g->nvals : 1), sizeof(*vals));
	char *have = calloc((size_t)(g->nvals ? g->nvals : 1), 1);
	int r = -1;

	if (!vals || !have) {
		free(vals);
		free(have);
		return ir_err(e, "out of memory");
	}
	for (int i = 0; i < g->nvals; i++)
		if (g->vals[i].data) {
			ir_value_view(&g->vals[i], &vals[i]);
			have[i] = 2; /* borrowed */
		}
	for (int i = 0; i < g->ninputs; i++) {
		const struct ir_value *v = &g->vals[g->inputs[i]];

		if (inputs[i].dtype != v->dtype || inputs[i].rank != v->rank ||
		    memcmp(inputs[i].dims, v->dims, (size_t)v->rank * sizeof(int64_t))) {
			ir_err(e, "input '%s': given tensor does not match the compiled type/shape", v->name);
			goto out;
		}
		vals[g->inputs[i]] = inputs[i];
		have[g->inputs[i]] = 2;
	}
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];
		const struct ir_tensor *in[1024];
		struct ir_tensor out[64];

		if (n->dead)
			continue;
		if (n->nin > 1024 || n->nout > 64) {
			ir_node_err(e, g, n, "too many inputs or outputs");
			goto out;
		}
		for (int k = 0; k < n->nin; k++) {
			in[k] = NULL;
			if (n->in[k] < 0)
				continue;
			if (!have[n->in[k]]) {
				ir_node_err(e, g, n, "input '%s' has not been computed", g->vals[n->in[k]].name);
				goto out;
			}
			in[k] = &vals[n->in[k]];
		}
		for (int k = 0; k < n->nout; k++) {
			const struct ir_value *v = &g->vals[n->out[k]];

			memset(&out[k], 0, sizeof(out[k]));
			out[k].dtype = v->dtype;
			out[k].rank = v->rank;
			memcpy(out[k].dims, v->dims, sizeof(v->dims));
		}
		if (ir_eval_node(g, n, in, out, e))
			goto out;
		for (int k = 0; k < n->nout; k++) {
			vals[n->out[k]] = out[k];
			have[n->out[k]] = 1;
		}
		if (visit && visit(ctx, g, i, in, out, e))
			goto out;
	}
	for (int i = 0; outputs && i < g->noutputs; i++) {
		int v = g->outputs[i];
		struct ir_tensor *src = &vals[v];

		if (!have[v]) {
			ir_err(e, "output '%s' was not computed", g->vals[v].name);
			for (int j = 0; j < i; j++)
				ir_tensor_free(&outputs[j]);
			goto out;
		}
		if (ir_tensor_alloc(&outputs[i], src->dtype, src->rank, src->dims, e)) {
			for (int j = 0; j < i; j++)
				ir_tensor_free(&outputs[j]);
			goto out;
		}
		memcpy(outputs[i].data, src->data, ir_tensor_bytes(src));
	}
	r = 0;
out:
	for (int i = 0; i < g->nvals; i++)
		if (have[i] == 1)
			ir_tensor_free(&vals[i]);
	free(vals);
	free(have);
	return r;
}
