/* SPDX-License-Identifier: MIT */
/*
 * infer_control.c - shape inference of If, Loop and Scan: the subgraphs'
 * inputs are bound from the node's, the subgraphs inferred, the node's
 * outputs read off theirs.  Shapes must be static: a Loop's carried
 * values keep their shape from one iteration to the next, a Loop with
 * scan outputs runs a compile-time number of iterations, the branches of
 * an If on a run-time condition agree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "eval/eval_control.h"
#include "infer_internal.h"

struct ir_graph *ir_cf_sub(const struct ir_node *n, const char *name)
{
	const struct ir_attr *a = ir_attr_find(n, name);

	return a && a->type == IR_ATTR_GRAPH ? a->g : NULL;
}

int ir_cf_captures(const struct ir_node *n)
{
	int64_t c = ir_attr_int(n, "captures", 0);

	return c < 0 || c > n->nin ? -1 : (int)c;
}

int ir_cf_live_nodes(const struct ir_graph *g)
{
	int c = 0;

	for (int i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].dead)
			continue;
		c++;
		for (int k = 0; k < g->nodes[i].nattrs; k++)
			if (g->nodes[i].attrs[k].g) {
				int sub = ir_cf_live_nodes(g->nodes[i].attrs[k].g);

				c = sub > INT32_MAX / 2 - c ? INT32_MAX / 2 : c + sub;
			}
	}
	return c;
}

int ir_cf_loop_depth(const struct ir_graph *g)
{
	int d = 0;

	for (int i = 0; i < g->nnodes; i++) {
		int own = !strcmp(g->nodes[i].op, "Loop") || !strcmp(g->nodes[i].op, "Scan");

		if (g->nodes[i].dead)
			continue;
		for (int k = 0; k < g->nodes[i].nattrs; k++)
			if (g->nodes[i].attrs[k].g) {
				int sub = own + ir_cf_loop_depth(g->nodes[i].attrs[k].g);

				d = sub > d ? sub : d;
			}
	}
	return d;
}

int ir_cf_cond_passes(struct ir_graph *body)
{
	int v, steps = 0;

	if (body->noutputs < 1 || body->ninputs < 2)
		return 0;
	ir_graph_link(body);
	v = body->outputs[0];
	while (steps++ <= body->nnodes) {
		const struct ir_value *x = &body->vals[v];

		if (v == body->inputs[1])
			return 1;
		if (x->data) {
			int64_t cnt = ir_value_numel(x);

			for (int64_t i = 0; i < cnt; i++)
				if (!ir_get_i(x->data, x->dtype, (size_t)i))
					return 0;
			return cnt > 0;
		}
		if (x->producer < 0 || strcmp(body->nodes[x->producer].op, "Identity") ||
		    body->nodes[x->producer].nin < 1)
			return 0;
		v = body->nodes[x->producer].in[0];
	}
	return 0;
}

int ir_cf_bind(struct ir_graph *sub, int k, const struct ir_value *v, int with_data, struct ir_error *e)
{
	struct ir_value *s = &sub->vals[sub->inputs[k]];

	if (s->dtype != IR_UNDEFINED && s->dtype != v->dtype)
		return ir_err(e, "subgraph input '%s' is declared %s but receives '%s' of type %s",
			      s->name, ir_dtype_name(s->dtype), v->name, ir_dtype_name(v->dtype));
	ir_value_set_shape(s, v->dtype, v->rank, v->dims);
	/* an outer constant stays one inside: shapes may depend on it */
	free(s->data);
	s->data = NULL;
	if (with_data && v->data) {
		size_t bytes = (size_t)ir_value_numel(v) * ir_dtype_size(v->dtype);

		if (!(s->data = malloc(bytes ? bytes : 1)))
			return ir_err(e, "out of memory");
		memcpy(s->data, v->data, bytes);
	}
	return 0;
}

int ir_cf_infer_sub(struct ir_graph *g, const struct ir_node *n, struct ir_graph *sub,
		    const char *what, struct ir_error *e)
{
	struct ir_infer_opts o = { .fold = 1 };

	if (ir_infer(sub, &o, e)) {
		char m[IR_ERROR_LEN];

		snprintf(m, sizeof(m), "%s", e->msg);
		return ir_node_err(e, g, n, "%s: %s", what, m);
	}
	for (int k = 0; k < sub->noutputs; k++)
		if (!ir_value_has_shape(&sub->vals[sub->outputs[k]]))
			return ir_node_err(e, g, n, "%s: output %d ('%s') has no static shape", what, k,
					   sub->vals[sub->outputs[k]].name);
	return 0;
}

static int same_type(const struct ir_value *a, const struct ir_value *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

static void type_str(const struct ir_value *v, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "%s[", ir_dtype_name(v->dtype));

	for (int i = 0; i < v->rank && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "," : "", (long long)v->dims[i]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
}

/* Binds the captured outer values: subgraph inputs from `first` on. */
static int bind_captures(struct ir_graph *g, const struct ir_node *n, struct ir_graph *sub,
			 int first, const char *what, struct ir_error *e)
{
	int nc = ir_cf_captures(n);

	if (nc < 0 || sub->ninputs != first + nc)
		return ir_node_err(e, g, n, "%s has %d inputs; %d expected (%d formal, %d outer values)",
				   what, sub->ninputs, first + (nc > 0 ? nc : 0), first, nc > 0 ? nc : 0);
	for (int k = 0; k < nc; k++)
		if (ir_cf_bind(sub, first + k, &g->vals[n->in[n->nin - nc + k]], 1, e)) {
			char m[IR_ERROR_LEN];

			snprintf(m, sizeof(m), "%s", e->msg);
			return ir_node_err(e, g, n, "%s: %s", what, m);
		}
	return 0;
}

int ir_infer_if(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_graph *br[2] = { ir_cf_sub(n, "then_branch"), ir_cf_sub(n, "else_branch") };
	const char *names[2] = { "then_branch", "else_branch" };
	const struct ir_value *c = ir_in(g, n, 0);
	int nc = ir_cf_captures(n);

	if (!br[0] || !br[1])
		return ir_node_err(e, g, n, "needs the subgraphs then_branch and else_branch");
	if (nc < 0 || n->nin != 1 + nc)
		return ir_node_err(e, g, n, "takes one input, the condition (and %d outer values)", nc);
	if (c->dtype != IR_BOOL || ir_value_numel(c) != 1)
		return ir_node_err(e, g, n, "the condition '%s' must be one bool, not %s with %lld elements",
				   c->name, ir_dtype_name(c->dtype), (long long)ir_value_numel(c));
	for (int b = 0; b < 2; b++) {
		if (bind_captures(g, n, br[b], 0, names[b], e) ||
		    ir_cf_infer_sub(g, n, br[b], names[b], e))
			return -1;
		if (br[b]->noutputs != n->nout)
			return ir_node_err(e, g, n, "%s has %d outputs; the node has %d", names[b],
					   br[b]->noutputs, n->nout);
	}
	for (int k = 0; k < n->nout; k++) {
		const struct ir_value *t = &br[0]->vals[br[0]->outputs[k]];
		const struct ir_value *f = &br[1]->vals[br[1]->outputs[k]];
		const struct ir_value *pick = t;

		if (c->data)
			pick = ir_get_i(c->data, c->dtype, 0) ? t : f;
		else if (!same_type(t, f)) {
			char a[128], b[128];

			type_str(t, a, sizeof(a));
			type_str(f, b, sizeof(b));
			return ir_node_err(e, g, n, "output %d is %s in then_branch but %s in else_branch; branches of different shapes need a compile-time constant condition (freeze '%s')",
					   k, a, b, c->name);
		}
		ir_set_out(g, n, k, pick->dtype, pick->rank, pick->dims);
	}
	return 0;
}

/* All inputs of n constant (the evaluator may run it now). */
static int all_const(struct ir_graph *g, const struct ir_node *n)
{
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && !g->vals[n->in[k]].data)
			return 0;
	return 1;
}

/* Runs a node whose inputs are all constant to learn its output shapes. */
static int shapes_by_running(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_tensor *view = calloc((size_t)n->nin + 1, sizeof(*view)), *out;
	const struct ir_tensor **in = calloc((size_t)n->nin + 1, sizeof(*in));
	int r;

	if (!view || !in) {
		free(view);
		free(in);
		return ir_err(e, "out of memory");
	}
	for (int k = 0; k < n->nin; k++) {
		in[k] = NULL;
		if (n->in[k] >= 0) {
			ir_value_view(&g->vals[n->in[k]], &view[k]);
			in[k] = &view[k];
		}
	}
	out = calloc((size_t)n->nout, sizeof(*out));
	if (!out) {
		free(view);
		free(in);
		return ir_err(e, "out of memory");
	}
	r = ir_cf_run(g, n, in, n->nin, out, n->nout, e);
	free(view);
	free(in);
	for (int k = 0; k < n->nout; k++) {
		if (!r)
			ir_set_out(g, n, k, out[k].dtype, out[k].rank, out[k].dims);
		ir_tensor_free(&out[k]);
	}
	free(out);
	return r;
}

int ir_infer_loop(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_graph *body = ir_cf_sub(n, "body");
	int nc = ir_cf_captures(n), nv, ns;
	struct ir_value iter = { .name = "iteration", .dtype = IR_I64, .rank = 0 };
	struct ir_value cond = { .name = "condition", .dtype = IR_BOOL, .rank = 0 };
	const struct ir_value *m = ir_in(g, n, 0), *c = ir_in(g, n, 1);
	int64_t trips = -1;

	if (!body)
		return ir_node_err(e, g, n, "needs the subgraph body");
	nv = n->nin - 2 - (nc > 0 ? nc : 0);
	ns = n->nout - nv;
	if (nc < 0 || nv < 0 || ns < 0 || body->ninputs != 2 + nv + nc || body->noutputs != 1 + nv + ns)
		return ir_node_err(e, g, n, "body has %d inputs and %d outputs; the node's %d inputs and %d outputs need %d and %d",
				   body->ninputs, body->noutputs, n->nin, n->nout, n->nin, n->nout + 1);
	if (m && (!ir_dtype_is_int(m->dtype) || ir_value_numel(m) != 1))
		return ir_node_err(e, g, n, "the trip count '%s' must be one integer", m->name);
	if (c && (c->dtype != IR_BOOL || ir_value_numel(c) != 1))
		return ir_node_err(e, g, n, "the condition '%s' must be one bool", c->name);
	if (ir_cf_bind(body, 0, &iter, 0, e) || ir_cf_bind(body, 1, &cond, 0, e))
		return ir_node_err(e, g, n, "body: %s", e->msg);
	for (int k = 0; k < nv; k++)
		if (ir_cf_bind(body, 2 + k, &g->vals[n->in[2 + k]], 0, e))
			return ir_node_err(e, g, n, "body: %s", e->msg);
	if (bind_captures(g, n, body, 2 + nv, "body", e) || ir_cf_infer_sub(g, n, body, "body", e))
		return -1;
	for (int k = 0; k < nv; k++) {
		const struct ir_value *a = &g->vals[n->in[2 + k]], *b = &body->vals[body->outputs[1 + k]];

		if (!same_type(a, b)) {
			char x[128], y[128];

			type_str(a, x, sizeof(x));
			type_str(b, y, sizeof(y));
			return ir_node_err(e, g, n, "loop-carried value %d enters as %s and leaves the body as %s; its shape must stay the same",
					   k, x, y);
		}
		ir_set_out(g, n, k, a->dtype, a->rank, a->dims);
	}
	if (!ns)
		return 0;
	if (m && m->data && ir_cf_cond_passes(body) && (!c || c->data)) {
		trips = ir_get_i(m->data, m->dtype, 0);
		if (c && !ir_get_i(c->data, c->dtype, 0))
			trips = 0;
	}
	if (trips < 0 && all_const(g, n))
		return shapes_by_running(g, n, e);
	if (trips < 0)
		return ir_node_err(e, g, n, "the number of iterations must be a compile-time constant for the scan outputs' shapes: a constant trip count, and a condition that is constant and passed through by the body");
	if (trips > IR_CF_MAX_TRIPS)
		return ir_node_err(e, g, n, "%lld iterations; at most %d are supported", (long long)trips,
				   IR_CF_MAX_TRIPS);
	for (int k = 0; k < ns; k++) {
		const struct ir_value *b = &body->vals[body->outputs[1 + nv + k]];
		int64_t d[IR_MAX_RANK];

		if (b->rank + 1 > IR_MAX_RANK)
			return ir_node_err(e, g, n, "scan output %d would have rank %d; at most %d", k, b->rank + 1,
					   IR_MAX_RANK);
		d[0] = trips;
		memcpy(d + 1, b->dims, (size_t)b->rank * sizeof(int64_t));
		ir_set_out(g, n, nv + k, b->dtype, b->rank + 1, d);
	}
	return 0;
}

int ir_scan_layout(struct ir_graph *g, const struct ir_node *n, struct ir_scan *s, struct ir_error *e)
{
	size_t cnt;
	const int64_t *v;
	int nc = ir_cf_captures(n);

	memset(s, 0, sizeof(*s));
	if (g->opset < 9)
		return ir_node_err(e, g, n, "Scan of opset 8 (sequence_lens and a batch axis) is not supported; convert the model to opset 9 or later");
	s->body = ir_cf_sub(n, "body");
	if (!s->body)
		return ir_node_err(e, g, n, "needs the subgraph body");
	s->m = (int)ir_attr_int(n, "num_scan_inputs", -1);
	s->nc = nc;
	s->n = n->nin - s->m - (nc > 0 ? nc : 0);
	s->k = n->nout - s->n;
	if (nc < 0 || s->m < 1 || s->n < 0 || s->k < 0 || s->m > IR_CF_MAX_IO || s->k > IR_CF_MAX_IO ||
	    s->body->ninputs != n->nin || s->body->noutputs != n->nout)
		return ir_node_err(e, g, n, "num_scan_inputs %d, %d inputs and %d outputs do not match the body's %d inputs and %d outputs",
				   s->m, n->nin, n->nout, s->body->ninputs, s->body->noutputs);
	for (int j = 0; j < s->m; j++) {
		const struct ir_value *x = ir_in(g, n, s->n + j);
		int64_t a;

		if (!x)
			return ir_node_err(e, g, n, "scan input %d is required", j);
		v = ir_attr_ints(n, "scan_input_axes", &cnt);
		a = v && (int)cnt == s->m ? v[j] : 0;
		if (a < -x->rank || a >= x->rank)
			return ir_node_err(e, g, n, "scan input %d: axis %lld outside rank %d", j, (long long)a, x->rank);
		s->in_axis[j] = (int)(a < 0 ? a + x->rank : a);
		v = ir_attr_ints(n, "scan_input_directions", &cnt);
		s->in_rev[j] = v && (int)cnt == s->m ? v[j] != 0 : 0;
		if (j == 0)
			s->len = x->dims[s->in_axis[j]];
		else if (x->dims[s->in_axis[j]] != s->len)
			return ir_node_err(e, g, n, "scan input %d has %lld steps along axis %d; scan input 0 has %lld",
					   j, (long long)x->dims[s->in_axis[j]], s->in_axis[j], (long long)s->len);
	}
	for (int j = 0; j < s->k; j++) {
		v = ir_attr_ints(n, "scan_output_axes", &cnt);
		s->out_axis[j] = v && (int)cnt == s->k ? v[j] : 0;
		v = ir_attr_ints(n, "scan_output_directions", &cnt);
		s->out_rev[j] = v && (int)cnt == s->k ? v[j] != 0 : 0;
	}
	if (s->len > IR_CF_MAX_TRIPS)
		return ir_node_err(e, g, n, "%lld steps; at most %d are supported", (long long)s->len, IR_CF_MAX_TRIPS);
	return 0;
}

int ir_infer_scan(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_scan s;

	if (ir_scan_layout(g, n, &s, e))
		return -1;
	for (int k = 0; k < s.n; k++)
		if (ir_cf_bind(s.body, k, &g->vals[n->in[k]], 0, e))
			return ir_node_err(e, g, n, "body: %s", e->msg);
	for (int j = 0; j < s.m; j++) {
		const struct ir_value *x = &g->vals[n->in[s.n + j]];
		struct ir_value slice = { .name = x->name, .dtype = x->dtype, .rank = x->rank - 1 };

		for (int i = 0, o = 0; i < x->rank; i++)
			if (i != s.in_axis[j])
				slice.dims[o++] = x->dims[i];
		if (ir_cf_bind(s.body, s.n + j, &slice, 0, e))
			return ir_node_err(e, g, n, "body: %s", e->msg);
	}
	if (bind_captures(g, n, s.body, s.n + s.m, "body", e) || ir_cf_infer_sub(g, n, s.body, "body", e))
		return -1;
	for (int k = 0; k < s.n; k++) {
		const struct ir_value *a = &g->vals[n->in[k]], *b = &s.body->vals[s.body->outputs[k]];

		if (!same_type(a, b)) {
			char x[128], y[128];

			type_str(a, x, sizeof(x));
			type_str(b, y, sizeof(y));
			return ir_node_err(e, g, n, "state %d enters as %s and leaves the body as %s; its shape must stay the same",
					   k, x, y);
		}
		ir_set_out(g, n, k, a->dtype, a->rank, a->dims);
	}
	for (int j = 0; j < s.k; j++) {
		const struct ir_value *b = &s.body->vals[s.body->outputs[s.n + j]];
		int64_t d[IR_MAX_RANK], a = s.out_axis[j];

		if (b->rank + 1 > IR_MAX_RANK)
			return ir_node_err(e, g, n, "scan output %d would have rank %d; at most %d", j, b->rank + 1,
					   IR_MAX_RANK);
		if (a < -(b->rank + 1) || a > b->rank)
			return ir_node_err(e, g, n, "scan output %d: axis %lld outside rank %d", j, (long long)a,
					   b->rank + 1);
		if (a < 0)
			a += b->rank + 1;
		s.out_axis[j] = a;
		for (int i = 0, o = 0; i <= b->rank; i++)
			d[i] = i == a ? s.len : b->dims[o++];
		ir_set_out(g, n, s.n + j, b->dtype, b->rank + 1, d);
	}
	return 0;
}
