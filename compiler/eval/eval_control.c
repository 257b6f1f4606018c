/* SPDX-License-Identifier: MIT */
/*
 * eval_control.c - If, Loop and Scan in the reference evaluator: each
 * subgraph run with ir_eval_graph, once per branch taken or iteration.
 */
#include <stdlib.h>
#include <string.h>

#include "eval_control.h"
#include "eval_internal.h"
#include "ir/control.h"

/* Work a Loop or Scan may take in the evaluator: iterations times the
 * body's nodes, its subgraphs' included (a bound for hostile models, far
 * above any real one).  Loops nested in the body share it: each of L
 * levels gets the L-th root, so that their product stays within. */
#define CF_MAX_NODE_RUNS 250000

static int64_t node_runs(const struct ir_graph *body)
{
	int levels = 1 + ir_cf_loop_depth(body);
	int64_t b = CF_MAX_NODE_RUNS;

	if (levels > 1) {
		/* the largest b with b^levels <= CF_MAX_NODE_RUNS */
		b = 1;
		for (;;) {
			int64_t p = 1;
			int k;

			for (k = 0; k < levels && p <= CF_MAX_NODE_RUNS; k++)
				p *= b + 1;
			if (p > CF_MAX_NODE_RUNS)
				break;
			b++;
		}
	}
	return b;
}

static int copy_tensor(struct ir_tensor *d, const struct ir_tensor *s, struct ir_error *e)
{
	if (ir_tensor_alloc(d, s->dtype, s->rank, s->dims, e))
		return -1;
	memcpy(d->data, s->data, ir_tensor_bytes(s));
	return 0;
}

static void free_all(struct ir_tensor *t, int n)
{
	for (int i = 0; t && i < n; i++)
		ir_tensor_free(&t[i]);
}

static int run_if(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in,
		  int nin, struct ir_tensor *out, int nout, struct ir_error *e)
{
	int take = ir_get_i(in[0]->data, in[0]->dtype, 0) != 0;
	const struct ir_graph *br = ir_cf_sub(n, take ? "then_branch" : "else_branch");
	struct ir_tensor *args = calloc((size_t)nin, sizeof(*args));
	int r;

	if (!args)
		return ir_err(e, "out of memory");
	if (!br || br->noutputs != nout || br->ninputs != nin - 1) {
		free(args);
		return ir_node_err(e, g, n, "subgraph %s does not match the node", take ? "then_branch" : "else_branch");
	}
	for (int k = 1; k < nin; k++)
		args[k - 1] = *in[k];
	r = ir_eval_graph(br, args, out, e);
	free(args);
	return r;
}

/* Appends one step's scan output to a stack of `rows` rows. */
static int push_row(struct ir_tensor *stack, const struct ir_tensor *row, int64_t rows, struct ir_error *e)
{
	size_t bytes = ir_tensor_bytes(row);
	unsigned char *d = realloc(stack->data, bytes * (size_t)(rows + 1) + 1);

	if (!d)
		return ir_err(e, "out of memory");
	stack->data = d;
	memcpy(d + bytes * (size_t)rows, row->data, bytes);
	return 0;
}

static int run_loop(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in,
		    int nin, struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_graph *body = ir_cf_sub(n, "body");
	int nc = ir_cf_captures(n), nv = nin - 2 - nc, ns = nout - nv, r = -1, live;
	int64_t budget, max = in[0] ? ir_get_i(in[0]->data, in[0]->dtype, 0) : -1, it = 0;
	int cond = in[1] ? ir_get_i(in[1]->data, in[1]->dtype, 0) != 0 : 1;
	struct ir_tensor *args = calloc((size_t)nin, sizeof(*args));
	struct ir_tensor *res = calloc((size_t)nout + 1, sizeof(*res));
	struct ir_tensor *carried = calloc((size_t)nv + 1, sizeof(*carried));
	struct ir_tensor *stack = calloc((size_t)ns + 1, sizeof(*stack));
	int64_t iv = 0;
	unsigned char cv = 1;

	if (!args || !res || !carried || !stack) {
		ir_err(e, "out of memory");
		goto out;
	}
	if (!body || nc < 0 || nv < 0 || ns < 0 || body->ninputs != nin || body->noutputs != nout + 1) {
		ir_node_err(e, g, n, "body does not match the node");
		goto out;
	}
	live = ir_cf_live_nodes(body) + 1;
	budget = node_runs(body);
	for (int k = 0; k < nv; k++)
		if (copy_tensor(&carried[k], in[2 + k], e))
			goto out;
	for (int k = 0; k < ns; k++) {
		const struct ir_value *v = &body->vals[body->outputs[1 + nv + k]];

		stack[k].dtype = v->dtype;
		stack[k].rank = v->rank + 1;
		memcpy(stack[k].dims + 1, v->dims, (size_t)v->rank * sizeof(int64_t));
	}
	for (; cond && (max < 0 || it < max); it++) {
		if (it >= IR_CF_MAX_TRIPS || (it + 1) * live > budget) {
			ir_node_err(e, g, n, "more than %lld iterations (%d body nodes each) in the reference evaluator",
				    (long long)it, live - 1);
			goto out;
		}
		iv = it;
		args[0] = (struct ir_tensor){ .dtype = IR_I64, .rank = 0, .data = &iv };
		args[1] = (struct ir_tensor){ .dtype = IR_BOOL, .rank = 0, .data = &cv };
		for (int k = 0; k < nv; k++)
			args[2 + k] = carried[k];
		for (int k = 2 + nv; k < nin; k++)
			args[k] = *in[k];
		if (ir_eval_graph(body, args, res, e))
			goto out;
		cond = ir_get_i(res[0].data, res[0].dtype, 0) != 0;
		cv = (unsigned char)cond;
		for (int k = 0; k < nv; k++) {
			ir_tensor_free(&carried[k]);
			carried[k] = res[1 + k];
			res[1 + k].data = NULL;
		}
		for (int k = 0; k < ns; k++)
			if (push_row(&stack[k], &res[1 + nv + k], it, e)) {
				free_all(res, nout + 1);
				goto out;
			}
		free_all(res, nout + 1);
	}
	for (int k = 0; k < nv; k++) {
		out[k] = carried[k];
		carried[k].data = NULL;
	}
	for (int k = 0; k < ns; k++) {
		stack[k].dims[0] = it;
		if (!stack[k].data && !(stack[k].data = malloc(1))) {
			ir_err(e, "out of memory");
			free_all(out, nv);
			goto out;
		}
		out[nv + k] = stack[k];
		stack[k].data = NULL;
	}
	r = 0;
out:
	free_all(carried, nv > 0 ? nv : 0);
	for (int k = 0; stack && k < ns; k++)
		free(stack[k].data);
	free(carried);
	free(stack);
	free(res);
	free(args);
	return r;
}

/* Outer size, steps and inner size of t around axis a, in elements. */
static void around(const struct ir_tensor *t, int a, int64_t *outer, int64_t *inner)
{
	*outer = 1;
	*inner = 1;
	for (int i = 0; i < a; i++)
		*outer *= t->dims[i];
	for (int i = a + 1; i < t->rank; i++)
		*inner *= t->dims[i];
}

static int run_scan(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in,
		    int nin, struct ir_tensor *out, int nout, struct ir_error *e)
{
	struct ir_scan s;
	struct ir_tensor *args = calloc((size_t)nin, sizeof(*args));
	struct ir_tensor *res = calloc((size_t)nout, sizeof(*res));
	struct ir_tensor *slice = calloc(IR_CF_MAX_IO, sizeof(*slice));
	int r = -1, live;

	if (!args || !res || !slice) {
		ir_err(e, "out of memory");
		goto out;
	}
	/* the layout reads attributes and the graph's opset only */
	if (ir_scan_layout((struct ir_graph *)g, n, &s, e))
		goto out;
	live = ir_cf_live_nodes(s.body) + 1;
	if (s.len * live > node_runs(s.body)) {
		ir_node_err(e, g, n, "%lld steps of %d body nodes are more than the reference evaluator runs",
			    (long long)s.len, live - 1);
		goto out;
	}
	for (int k = 0; k < s.n; k++)
		if (copy_tensor(&out[k], in[k], e))
			goto out;
	for (int j = 0; j < s.k; j++) {
		const struct ir_value *v = &s.body->vals[s.body->outputs[s.n + j]];
		int64_t d[IR_MAX_RANK];

		for (int i = 0, o = 0; i <= v->rank; i++)
			d[i] = i == s.out_axis[j] ? s.len : v->dims[o++];
		if (ir_tensor_alloc(&out[s.n + j], v->dtype, v->rank + 1, d, e))
			goto fail;
	}
	for (int j = 0; j < s.m; j++) {
		const struct ir_tensor *x = in[s.n + j];
		int64_t d[IR_MAX_RANK];

		for (int i = 0, o = 0; i < x->rank; i++)
			if (i != s.in_axis[j])
				d[o++] = x->dims[i];
		if (ir_tensor_alloc(&slice[j], x->dtype, x->rank - 1, d, e))
			goto fail;
	}
	for (int64_t t = 0; t < s.len; t++) {
		for (int j = 0; j < s.m; j++) {
			const struct ir_tensor *x = in[s.n + j];
			int64_t outer, inner, at = s.in_rev[j] ? s.len - 1 - t : t;
			size_t es = ir_dtype_size(x->dtype);

			around(x, s.in_axis[j], &outer, &inner);
			for (int64_t o = 0; o < outer; o++)
				memcpy((char *)slice[j].data + (size_t)(o * inner) * es,
				       (const char *)x->data + (size_t)((o * s.len + at) * inner) * es,
				       (size_t)inner * es);
		}
		for (int k = 0; k < s.n; k++)
			args[k] = out[k];
		for (int j = 0; j < s.m; j++)
			args[s.n + j] = slice[j];
		for (int k = s.n + s.m; k < nin; k++)
			args[k] = *in[k];
		if (ir_eval_graph(s.body, args, res, e))
			goto fail;
		for (int k = 0; k < s.n; k++) {
			ir_tensor_free(&out[k]);
			out[k] = res[k];
			res[k].data = NULL;
		}
		for (int j = 0; j < s.k; j++) {
			struct ir_tensor *y = &out[s.n + j];
			int64_t outer, inner, at = s.out_rev[j] ? s.len - 1 - t : t;
			size_t es = ir_dtype_size(y->dtype);

			around(y, (int)s.out_axis[j], &outer, &inner);
			for (int64_t o = 0; o < outer; o++)
				memcpy((char *)y->data + (size_t)((o * s.len + at) * inner) * es,
				       (const char *)res[s.n + j].data + (size_t)(o * inner) * es,
				       (size_t)inner * es);
		}
		free_all(res, nout);
	}
	r = 0;
	goto out;
fail:
	free_all(out, nout);
out:
	free_all(slice, IR_CF_MAX_IO);
	free(slice);
	free(res);
	free(args);
	return r;
}

int ir_cf_run(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in,
	      int nin, struct ir_tensor *out, int nout, struct ir_error *e)
{
	memset(out, 0, (size_t)nout * sizeof(*out));
	if (!strcmp(n->op, "If"))
		return run_if(g, n, in, nin, out, nout, e);
	if (!strcmp(n->op, "Loop"))
		return run_loop(g, n, in, nin, out, nout, e);
	if (!strcmp(n->op, "Scan"))
		return run_scan(g, n, in, nin, out, nout, e);
	return ir_node_err(e, g, n, "not a control-flow operator");
}

/* The registry's evaluator: the run's results into the inferred outputs. */
static int ev_control(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in,
		      int nin, struct ir_tensor *out, int nout, struct ir_error *e)
{
	struct ir_tensor *got = calloc((size_t)nout, sizeof(*got));
	int r = 0;

	if (!got)
		return ir_err(e, "out of memory");
	if (ir_cf_run(g, n, in, nin, got, nout, e)) {
		free(got);
		return -1;
	}
	for (int k = 0; k < nout && !r; k++) {
		if (got[k].dtype != out[k].dtype || got[k].rank != out[k].rank ||
		    memcmp(got[k].dims, out[k].dims, (size_t)got[k].rank * sizeof(int64_t)))
			r = ir_node_err(e, g, n, "output %d has another shape at run time than shape inference gave it (a run-time number of iterations)",
					k);
		else
			memcpy(out[k].data, got[k].data, ir_tensor_bytes(&got[k]));
	}
	free_all(got, nout);
	free(got);
	return r;
}

int ir_ev_if(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in, int nin,
	     struct ir_tensor *out, int nout, struct ir_error *e)
{
	return ev_control(g, n, in, nin, out, nout, e);
}

int ir_ev_loop(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	return ev_control(g, n, in, nin, out, nout, e);
}

int ir_ev_scan(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	return ev_control(g, n, in, nin, out, nout, e);
}
