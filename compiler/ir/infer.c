/* SPDX-License-Identifier: MIT */
/*
 * infer.c - shape and type inference driver: binds the user's input shapes,
 * walks the nodes in order, infers each one, and folds nodes whose inputs
 * are all constant with the reference evaluator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "custom/custom.h"
#include "eval/eval.h"
#include "infer_internal.h"

struct ir_value *ir_in(struct ir_graph *g, const struct ir_node *n, int k)
{
	if (k >= n->nin || n->in[k] < 0)
		return NULL;
	return &g->vals[n->in[k]];
}

int ir_need(struct ir_graph *g, const struct ir_node *n, int k,
	    struct ir_error *e)
{
	struct ir_value *v = ir_in(g, n, k);

	if (!v)
		return ir_node_err(e, g, n, "input %d is required", k);
	if (!ir_value_has_shape(v))
		return ir_node_err(e, g, n, "input %d ('%s') has no static shape (give the model's inputs with --input-shape)",
				   k, v->name);
	return 0;
}

int ir_need_float(struct ir_graph *g, const struct ir_node *n, int k,
		  struct ir_error *e)
{
	struct ir_value *v = ir_in(g, n, k);

	if (ir_need(g, n, k, e))
		return -1;
	if (!ir_dtype_is_float(v->dtype))
		return ir_node_err(e, g, n, "input %d ('%s') has type %s; a floating point type is required",
				   k, v->name, ir_dtype_name(v->dtype));
	return 0;
}

int ir_const_ints(struct ir_graph *g, const struct ir_node *n, int k,
		  int64_t *v, int max, int *count, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, k);
	int64_t cnt;

	if (ir_need(g, n, k, e))
		return -1;
	if (!x->data && x->is_input)
		return ir_node_err(e, g, n, "input %d ('%s') must be a compile-time constant for static shapes, but it is a graph input (give it a value: ipu-compile --freeze %s=FILE.pb)",
				   k, x->name, x->name);
	if (!x->data)
		return ir_node_err(e, g, n, "input %d ('%s') must be a compile-time constant for static shapes, but it is computed at run time",
				   k, x->name);
	if (!ir_dtype_is_int(x->dtype))
		return ir_node_err(e, g, n, "input %d ('%s') must be an integer tensor, not %s",
				   k, x->name, ir_dtype_name(x->dtype));
	cnt = ir_value_numel(x);
	if (cnt > max)
		return ir_node_err(e, g, n, "input %d ('%s') has %lld values; at most %d are supported",
				   k, x->name, (long long)cnt, max);
	for (int64_t i = 0; i < cnt; i++)
		v[i] = ir_get_i(x->data, x->dtype, (size_t)i);
	*count = (int)cnt;
	return 0;
}

int ir_const_scalar(struct ir_graph *g, const struct ir_node *n, int k,
		    double *v, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, k);

	if (ir_need(g, n, k, e))
		return -1;
	if (!x->data)
		return ir_node_err(e, g, n, "input %d ('%s') must be a compile-time constant", k, x->name);
	if (ir_value_numel(x) != 1)
		return ir_node_err(e, g, n, "input %d ('%s') must hold exactly one value", k, x->name);
	*v = ir_get_f(x->data, x->dtype, 0);
	return 0;
}

int ir_set_out(struct ir_graph *g, const struct ir_node *n, int k, int dtype,
	       int rank, const int64_t *dims)
{
	if (k < n->nout && n->out[k] >= 0)
		ir_value_set_shape(&g->vals[n->out[k]], dtype, rank, dims);
	return 0;
}

int ir_same_as(struct ir_graph *g, const struct ir_node *n, int k, int i)
{
	struct ir_value *v = ir_in(g, n, i);

	return ir_set_out(g, n, k, v->dtype, v->rank, v->dims);
}

int ir_infer_node(struct ir_graph *g, int idx, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[idx];
	const struct ir_op_desc *op = ir_node_desc(n);
	int custom = ir_custom_is(n->op);

	if (!op && !custom)
		return ir_node_err(e, g, n, "operator %s is not supported by ipu-compile (see ipu-compile --list-ops)",
				   n->op);
	if (custom) {
		/* the plugin checks arity and attributes (compiler/custom/) */
	} else if (n->nin < op->min_in || n->nin > op->max_in)
		return ir_node_err(e, g, n, "has %d inputs; %s takes %d to %d",
				   n->nin, n->op, op->min_in, op->max_in);
	for (int k = 0; !custom && k < op->min_in; k++)
		if (!ir_in(g, n, k))
			return ir_node_err(e, g, n, "input %d is required", k);
	if (n->nout < 1)
		return ir_node_err(e, g, n, "has no outputs");
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] < 0)
			return ir_node_err(e, g, n, "output %d has no value", k);
	for (int k = 0; k < n->nin; k++) {
		struct ir_value *v = ir_in(g, n, k);

		if (v && !ir_value_has_shape(v))
			return ir_node_err(e, g, n, "input %d ('%s') has no static shape (give the model's inputs with --input-shape or --batch-size)",
					   k, v->name);
		if (v && v->dtype == IR_STRING)
			return ir_node_err(e, g, n, "string tensors are not supported");
	}
	if (custom ? ir_custom_infer(g, n, e) : op->infer(g, n, e))
		return -1;
	for (int k = 0; k < n->nout; k++) {
		struct ir_value *v = &g->vals[n->out[k]];
		int64_t cnt = 1;

		if (v->rank < 0)
			continue;
		for (int i = 0; i < v->rank; i++)
			if (v->dims[i] < 0 || ir_dim_mul(cnt, v->dims[i], &cnt))
				return ir_node_err(e, g, n, "output %d ('%s') would have a dimension or size beyond 2^40 elements",
						   k, v->name);
	}
	return 0;
}

int ir_parse_shape_binding(const char *s, struct ir_shape_binding *b,
			   struct ir_error *e)
{
	const char *eq = strrchr(s, '=');
	const char *p;

	memset(b, 0, sizeof(*b));
	if (!eq || eq == s)
		return ir_err(e, "input shape '%s' is not NAME=d0,d1,...", s);
	b->name = strndup(s, (size_t)(eq - s));
	if (!b->name)
		return ir_err(e, "out of memory");
	p = eq + 1;
	while (*p) {
		char *end;
		long long d = strtoll(p, &end, 10);

		if (end == p || d < 0 || (*end && *end != ',' && *end != 'x')) {
			free(b->name);
			b->name = NULL;
			return ir_err(e, "input shape '%s': '%s' is not a list of non-negative integers", s, eq + 1);
		}
		if (b->rank == IR_MAX_RANK) {
			free(b->name);
			b->name = NULL;
			return ir_err(e, "input shape '%s': more than %d dimensions", s, IR_MAX_RANK);
		}
		b->dims[b->rank++] = d;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Fixes the graph inputs' shapes from the bindings and the batch size. */
static int bind_inputs(struct ir_graph *g, const struct ir_infer_opts *o,
		       struct ir_error *e)
{
	for (int i = 0; o && i < o->nshapes; i++) {
		const struct ir_shape_binding *b = &o->shapes[i];
		int v = ir_value_find(g, b->name);

		if (v < 0 || !g->vals[v].is_input) {
			char names[256] = "";
			size_t len = 0;

			for (int k = 0; k < g->ninputs && len < sizeof(names) - 1; k++)
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
							k ? ", " : "", g->vals[g->inputs[k]].name);
			return ir_err(e, "--input-shape names '%s', which is not an input of the model (inputs: %s)",
				      b->name, names);
		}
		if (g->vals[v].rank >= 0 && g->vals[v].rank != b->rank)
			return ir_err(e, "--input-shape %s has %d dimensions; the model declares %d",
				      b->name, b->rank, g->vals[v].rank);
		for (int k = 0; g->vals[v].rank >= 0 && k < b->rank; k++)
			if (g->vals[v].dims[k] >= 0 && g->vals[v].dims[k] != b->dims[k] &&
			    !g->vals[v].dim_param[k])
				fprintf(o->log ? (FILE *)o->log : stderr,
					"ipu-compile: warning: --input-shape %s overrides dimension %d (%lld -> %lld)\n",
					b->name, k, (long long)g->vals[v].dims[k], (long long)b->dims[k]);
		g->vals[v].rank = b->rank;
		memcpy(g->vals[v].dims, b->dims, sizeof(b->dims));
	}
	for (int i = 0; i < g->ninputs; i++) {
		struct ir_value *v = &g->vals[g->inputs[i]];

		if (v->rank < 0)
			return ir_err(e, "graph input '%s' has no shape; give it with --input-shape %s=d0,d1,...",
				      v->name, v->name);
		if (o && o->batch_size > 0) {
			int a = o->batch_axis;

			if (a < 0 || a >= v->rank) {
				if (v->rank == 0)
					continue;
				return ir_err(e, "--batch-axis %d is outside input '%s' (rank %d)",
					      o->batch_axis, v->name, v->rank);
			}
			if (v->dims[a] < 0 || v->dim_param[a])
				v->dims[a] = o->batch_size;
		}
		for (int k = 0; k < v->rank; k++)
			if (v->dims[k] < 0)
				return ir_err(e, "graph input '%s' dimension %d is dynamic ('%s'); fix it with --input-shape %s=... or --batch-size N",
					      v->name, k, v->dim_param[k] ? v->dim_param[k] : "?", v->name);
		{
			int64_t cnt = 1;

			for (int k = 0; k < v->rank; k++)
				if (ir_dim_mul(cnt, v->dims[k], &cnt))
					return ir_err(e, "graph input '%s' has more than 2^40 elements", v->name);
		}
	}
	return 0;
}

int ir_infer(struct ir_graph *g, const struct ir_infer_opts *o,
	     struct ir_error *e)
{
	int64_t limit = o && o->fold_limit ? o->fold_limit : ((int64_t)64 << 20);

	if (bind_inputs(g, o, e))
		return -1;
	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];
		int all_const = 1;

		if (n->dead)
			continue;
		if (ir_attr_find(n, "legacy_axis")) {
			int r = ir_legacy_broadcast(g, i, e);

			if (r < 0)
				return -1;
			if (r > 0) {	/* infer the inserted node first */
				i--;
				continue;
			}
		}
		int expanded = 0;

		for (int pass = 0; pass < 2 && !expanded; pass++) {
			/* static control flow becomes plain nodes (inferred
			 * next): before the node's own inference, which would
			 * infer a Loop body with a run-time iteration number,
			 * and after it, for an If whose branches must agree */
			int r = 0;

			if (ir_cf_sub(n, "then_branch") || ir_cf_sub(n, "body"))
				r = ir_cf_expand(g, i, pass, o ? o->log : NULL, e);
			if (r < 0)
				return -1;
			expanded = r > 0;
			if (!expanded && !pass && ir_infer_node(g, i, e))
				return -1;
		}
		if (expanded) {
			i--;
			continue;
		}
		for (int k = 0; k < n->nout; k++) {
			struct ir_value *v = &g->vals[n->out[k]];

			if (!ir_value_has_shape(v))
				return ir_node_err(e, g, n, "shape inference left output %d ('%s') without a static shape",
						   k, v->name);
		}
		if (!o || !o->fold)
			continue;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && !g->vals[n->in[k]].data)
				all_const = 0;
		if (ir_node_has(n, IR_OP_SHAPE_ONLY))
			all_const = 1;
		if (all_const) {
			int r = ir_fold_node(g, i, limit, e);

			if (r < 0)
				return -1;
		}
	}
	return 0;
}
