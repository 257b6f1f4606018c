/* SPDX-License-Identifier: MIT */
/*
 * control.c - If, Loop and Scan expanded into the outer graph when their
 * control is static (see control.h): the subgraph's nodes copied in
 * before the node, reading the outer values the node reads, so that every
 * later pass (folding, fp16, the lowering) sees plain operators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "infer_internal.h"

/* Nodes appended to g (moved before the expanded node by splice()),
 * their values named after `prefix` and numbered: names are unique by
 * construction, without searching the graph's values. */
struct cf_rw {
	struct ir_graph *g;
	int start;		/* g->nnodes when the expansion began */
	int index;		/* the expanded node's position in the model */
	int count;		/* values named so far */
	char prefix[200];
	struct ir_error *e;
};

static int new_value(struct cf_rw *r, const char *name)
{
	char nm[420];

	snprintf(nm, sizeof(nm), "%s/%s~%d", r->prefix, name, r->count++);
	return ir_value_add(r->g, nm, r->e);
}

static int append(struct cf_rw *r, const char *name, const char *op, const int *in, int nin,
		  const int *out, int nout)
{
	char nm[420];
	int k;

	snprintf(nm, sizeof(nm), "%s/%s", r->prefix, name);
	if ((k = ir_node_add(r->g, nm, op, in, nin, out, nout, r->e)) < 0)
		return -1;
	r->g->nodes[k].index = r->index;
	return k;
}

static int add_node(struct cf_rw *r, const char *name, const char *op, const int *in, int nin, int out)
{
	int v = out;

	if (v < 0 && (v = new_value(r, name)) < 0)
		return -1;
	return append(r, name, op, in, nin, &v, 1) < 0 ? -1 : v;
}

/* Moves the nodes appended since r->start before node idx, in one go. */
static int splice(struct cf_rw *r, int idx)
{
	struct ir_graph *g = r->g;
	int cnt = g->nnodes - r->start;
	struct ir_node *tmp = malloc((size_t)(cnt ? cnt : 1) * sizeof(*tmp));

	if (!tmp)
		return ir_err(r->e, "out of memory");
	memcpy(tmp, &g->nodes[r->start], (size_t)cnt * sizeof(*tmp));
	memmove(&g->nodes[idx + cnt], &g->nodes[idx], (size_t)(r->start - idx) * sizeof(*tmp));
	memcpy(&g->nodes[idx], tmp, (size_t)cnt * sizeof(*tmp));
	free(tmp);
	ir_graph_link(g);
	return 0;
}

/* A constant int64 tensor of shape [count] (count < 0: a scalar). */
static int const_i64(struct cf_rw *r, const int64_t *v, int count)
{
	struct ir_tensor t;
	int64_t d = count;
	int x = new_value(r, "const");

	if (x < 0 || ir_tensor_alloc(&t, IR_I64, count < 0 ? 0 : 1, &d, r->e))
		return -1;
	memcpy(t.data, v, (size_t)(count < 0 ? 1 : count) * sizeof(int64_t));
	ir_value_set_const(&r->g->vals[x], &t);
	return x;
}

static int const_bool(struct cf_rw *r, int b)
{
	struct ir_tensor t;
	int x = new_value(r, "true");

	if (x < 0 || ir_tensor_alloc(&t, IR_BOOL, 0, NULL, r->e))
		return -1;
	*(unsigned char *)t.data = (unsigned char)b;
	ir_value_set_const(&r->g->vals[x], &t);
	return x;
}

/* Appends copies of sub's live nodes: sub input k reads outer value
 * map_in[k]; outs[k] gets the outer value of sub output k. */
static int inline_sub(struct cf_rw *r, const struct ir_graph *sub, const int *map_in, int *outs)
{
	int *m = malloc((size_t)(sub->nvals ? sub->nvals : 1) * sizeof(int));
	int rc = -1;

	if (!m)
		return ir_err(r->e, "out of memory");
	for (int i = 0; i < sub->nvals; i++)
		m[i] = -1;
	for (int k = 0; k < sub->ninputs; k++)
		m[sub->inputs[k]] = map_in[k];
	for (int i = 0; i < sub->nvals; i++) {
		const struct ir_value *v = &sub->vals[i];
		struct ir_tensor t, view;

		if (!v->data || m[i] >= 0)
			continue;
		ir_value_view(v, &view);
		if ((m[i] = new_value(r, v->name)) < 0 ||
		    ir_tensor_alloc(&t, view.dtype, view.rank, view.dims, r->e))
			goto out;
		memcpy(t.data, view.data, ir_tensor_bytes(&view));
		ir_value_set_const(&r->g->vals[m[i]], &t);
	}
	for (int i = 0; i < sub->nnodes; i++) {
		const struct ir_node *s = &sub->nodes[i];
		int in[1024], out[64], at;
		struct ir_node *d;

		if (s->dead)
			continue;
		if (s->nin > 1024 || s->nout > 64) {
			ir_err(r->e, "subgraph node '%s' has too many inputs or outputs", s->name);
			goto out;
		}
		for (int k = 0; k < s->nin; k++) {
			in[k] = s->in[k] < 0 ? -1 : m[s->in[k]];
			if (s->in[k] >= 0 && in[k] < 0) {
				ir_err(r->e, "subgraph node '%s' reads '%s' before it is computed", s->name,
				       sub->vals[s->in[k]].name);
				goto out;
			}
		}
		for (int k = 0; k < s->nout; k++)
			if ((out[k] = m[s->out[k]] = new_value(r, sub->vals[s->out[k]].name)) < 0)
				goto out;
		if ((at = append(r, s->name, s->op, in, s->nin, out, s->nout)) < 0)
			goto out;
		d = &r->g->nodes[at];
		if (s->nattrs) {
			d->attrs = calloc((size_t)s->nattrs, sizeof(*d->attrs));
			if (!d->attrs) {
				ir_err(r->e, "out of memory");
				goto out;
			}
			for (int k = 0; k < s->nattrs; k++) {
				if (ir_attr_copy(&d->attrs[k], &s->attrs[k], r->e))
					goto out;
				d->nattrs++;
			}
		}
	}
	for (int k = 0; k < sub->noutputs; k++) {
		outs[k] = m[sub->outputs[k]];
		if (outs[k] < 0) {
			ir_err(r->e, "subgraph output '%s' is never computed", sub->vals[sub->outputs[k]].name);
			goto out;
		}
	}
	rc = 0;
out:
	free(m);
	return rc;
}

/* The node gives up its outputs (fresh values) and dies; returns a copy
 * of the old output list for the appended nodes to write. */
static int *retire(struct cf_rw *r, int idx)
{
	struct ir_graph *g = r->g;
	int nout = g->nodes[idx].nout;
	int *outs = malloc((size_t)(nout ? nout : 1) * sizeof(int));

	if (!outs) {
		ir_err(r->e, "out of memory");
		return NULL;
	}
	memcpy(outs, g->nodes[idx].out, (size_t)nout * sizeof(int));
	for (int k = 0; k < nout; k++) {
		int v = new_value(r, "retired");

		if (v < 0) {
			free(outs);
			return NULL;
		}
		g->nodes[idx].out[k] = v;
	}
	g->nodes[idx].dead = 1;
	return outs;
}

/* A cf_rw for expanding node idx of g. */
static void rw_init(struct cf_rw *r, struct ir_graph *g, int idx, struct ir_error *e)
{
	memset(r, 0, sizeof(*r));
	r->g = g;
	r->start = g->nnodes;
	r->index = g->nodes[idx].index;
	r->e = e;
	snprintf(r->prefix, sizeof(r->prefix), "%s", g->nodes[idx].name);
}

static int expand_if(struct ir_graph *g, int idx, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[idx];
	struct ir_graph *br[2] = { ir_cf_sub(n, "then_branch"), ir_cf_sub(n, "else_branch") };
	const struct ir_value *c;
	struct cf_rw r;
	int nout = n->nout, nin = n->nin, cond, rc = -1, nodes, taken;
	int *in, *o[2], *dst = NULL;

	/* shape inference names what is wrong with a malformed node */
	if (!br[0] || !br[1] || nin < 1 || n->in[0] < 0 || br[0]->ninputs != nin - 1 ||
	    br[1]->ninputs != nin - 1 || br[0]->noutputs != nout || br[1]->noutputs != nout)
		return 0;
	c = &g->vals[n->in[0]];
	cond = n->in[0];
	nodes = ir_cf_live_nodes(br[0]) + ir_cf_live_nodes(br[1]);
	in = malloc((size_t)nin * sizeof(int));
	o[0] = malloc((size_t)nout * sizeof(int));
	o[1] = malloc((size_t)nout * sizeof(int));
	if (!in || !o[0] || !o[1]) {
		ir_err(e, "out of memory");
		goto out;
	}
	/* the values move as values are added: only indices from here on */
	taken = c->data ? (ir_get_i(c->data, c->dtype, 0) ? 0 : 1) : -1;
	if (taken < 0 && (nodes > IR_CF_MAX_UNROLL_NODES || g->nnodes + nodes > IR_CF_MAX_GRAPH_NODES)) {
		rc = 0;	/* stays an If */
		goto out;
	}
	rw_init(&r, g, idx, e);
	memcpy(in, n->in, (size_t)nin * sizeof(int));
	if (!(dst = retire(&r, idx)))
		goto out;
	if (taken >= 0) {
		int b = taken;

		if (inline_sub(&r, br[b], in + 1, o[0]))
			goto out;
		for (int k = 0; k < nout; k++)
			if (add_node(&r, "out", "Identity", &o[0][k], 1, dst[k]) < 0)
				goto out;
	} else {
		int64_t none = 0;
		int shape, sc;

		for (int b = 0; b < 2; b++)
			if (inline_sub(&r, br[b], in + 1, o[b]))
				goto out;
		/* a [1] condition must not broadcast a scalar output to [1] */
		if ((shape = const_i64(&r, &none, 0)) < 0 ||
		    (sc = add_node(&r, "cond", "Reshape", (int[]){ cond, shape }, 2, -1)) < 0)
			goto out;
		for (int k = 0; k < nout; k++)
			if (add_node(&r, "select", "Where", (int[]){ sc, o[0][k], o[1][k] }, 3, dst[k]) < 0)
				goto out;
	}
	rc = splice(&r, idx) ? -1 : 1;
out:
	free(in);
	free(o[0]);
	free(o[1]);
	free(dst);
	return rc;
}

/* x with a new axis of size 1 at `axis` (Unsqueeze, axes as an input). */
static int unsqueeze(struct cf_rw *r, int x, int64_t axis)
{
	int a = const_i64(r, &axis, 1);

	return a < 0 ? -1 : add_node(r, "stack", "Unsqueeze", (int[]){ x, a }, 2, -1);
}

/* Concat of parts along axis into out. */
static int concat(struct cf_rw *r, const int *parts, int64_t count, int64_t axis, int out)
{
	int v = add_node(r, "stacked", "Concat", parts, (int)count, out);

	if (v < 0 || ir_attr_set_int(&r->g->nodes[r->g->nnodes - 1], "axis", axis, r->e))
		return -1;
	return v;
}

static int expand_loop(struct ir_graph *g, int idx, char *what, size_t len, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[idx];
	struct ir_graph *body = ir_cf_sub(n, "body");
	const struct ir_value *m, *c;
	int nc = ir_cf_captures(n), nv = n->nin - 2 - nc, ns = n->nout - nv, nin = n->nin, rc = -1;
	int64_t trips, live, none = 0;
	struct cf_rw r;
	int *map = NULL, *res = NULL, *dst = NULL, *rows = NULL, guarded, scalar = -1;

	/* shape inference names what is wrong with a malformed node */
	if (!body || nc < 0 || nin < 2 || nv < 0 || ns < 0 || body->ninputs != nin ||
	    body->noutputs != n->nout + 1)
		return 0;
	m = n->in[0] >= 0 ? &g->vals[n->in[0]] : NULL;
	c = n->in[1] >= 0 ? &g->vals[n->in[1]] : NULL;
	if (!m || !m->data)
		return 0;
	/* a condition known only at run time (the initial one, or the one
	 * the body computes) guards each copy: every carried value takes
	 * the copy's result only while the condition held so far; scan
	 * outputs would then have a run-time length */
	guarded = (c && !c->data) || !ir_cf_cond_passes(body);
	if (guarded && ns)
		return 0;
	live = ir_cf_live_nodes(body) + (guarded ? nv + 3 : 2 * ns + 1);
	trips = ir_get_i(m->data, m->dtype, 0);
	snprintf(what, len, guarded ? "unrolled, at most %lld iterations, each guarded by the run-time condition (Where)"
				    : "unrolled, %lld iterations", (long long)(trips > 0 ? trips : 0));
	if (c && c->data && !ir_get_i(c->data, c->dtype, 0))
		trips = 0;
	if (trips < 0)
		trips = 0;
	if (trips > IR_CF_MAX_UNROLL_NODES / live || g->nnodes + trips * live > IR_CF_MAX_GRAPH_NODES ||
	    (trips == 0 && ns))
		return 0;	/* stays a Loop */
	map = malloc((size_t)nin * sizeof(int));
	res = malloc((size_t)(n->nout + 1) * sizeof(int));
	rows = malloc((size_t)(ns * trips + 1) * sizeof(int));
	if (!map || !res || !rows) {
		ir_err(e, "out of memory");
		goto out;
	}
	rw_init(&r, g, idx, e);
	memcpy(map, n->in, (size_t)nin * sizeof(int));
	if (!(dst = retire(&r, idx)))
		goto out;
	if (!c && (map[1] = const_bool(&r, 1)) < 0)
		goto out;
	/* the condition as a scalar: a [1] one must not broadcast a scalar */
	if (guarded && ((scalar = const_i64(&r, &none, 0)) < 0 ||
			(map[1] = add_node(&r, "cond", "Reshape", (int[]){ map[1], scalar }, 2, -1)) < 0))
		goto out;
	for (int64_t it = 0; it < trips; it++) {
		snprintf(r.prefix, sizeof(r.prefix), "%s/iter%lld", g->nodes[idx].name, (long long)it);
		if ((map[0] = const_i64(&r, &it, -1)) < 0 || inline_sub(&r, body, map, res))
			goto out;
		for (int k = 0; k < nv && !guarded; k++)
			map[2 + k] = res[1 + k];
		for (int k = 0; k < nv && guarded; k++)
			if ((map[2 + k] = add_node(&r, "keep", "Where", (int[]){ map[1], res[1 + k], map[2 + k] }, 3,
						   -1)) < 0)
				goto out;
		if (guarded && ((res[0] = add_node(&r, "cond", "Reshape", (int[]){ res[0], scalar }, 2, -1)) < 0 ||
				(map[1] = add_node(&r, "cond", "And", (int[]){ map[1], res[0] }, 2, -1)) < 0))
			goto out;
		for (int k = 0; k < ns; k++)
			if ((rows[k * trips + it] = unsqueeze(&r, res[1 + nv + k], 0)) < 0)
				goto out;
	}
	snprintf(r.prefix, sizeof(r.prefix), "%s", g->nodes[idx].name);
	for (int k = 0; k < nv; k++)
		if (add_node(&r, "out", "Identity", &map[2 + k], 1, dst[k]) < 0)
			goto out;
	for (int k = 0; k < ns; k++)
		if (concat(&r, rows + k * trips, trips, 0, dst[nv + k]) < 0)
			goto out;
	rc = splice(&r, idx) ? -1 : 1;
out:
	free(map);
	free(res);
	free(rows);
	free(dst);
	return rc;
}

/* Gather of x at constant index i along axis. */
static int take(struct cf_rw *r, int x, int64_t i, int64_t axis)
{
	int c = const_i64(r, &i, -1), v;

	if (c < 0 || (v = add_node(r, "slice", "Gather", (int[]){ x, c }, 2, -1)) < 0 ||
	    ir_attr_set_int(&r->g->nodes[r->g->nnodes - 1], "axis", axis, r->e))
		return -1;
	return v;
}

/*
 * Scan of opset 8: inputs sequence_lens (omitted), states and scan inputs
 * with a batch axis 0, scanned along axis 1 (`directions` per scan
 * input); the body sees one batch element.  Unrolled over batch elements
 * and steps, or refused.
 */
static int expand_scan8(struct ir_graph *g, int idx, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[idx];
	struct ir_graph *body = ir_cf_sub(n, "body");
	int nc = ir_cf_captures(n), m = (int)ir_attr_int(n, "num_scan_inputs", -1), nin = n->nin, rc = -1;
	int ns = nin - 1 - m - (nc > 0 ? nc : 0), nk = n->nout - ns;
	int64_t batch = -1, len = -1, live;
	size_t cnt;
	const int64_t *dirs = ir_attr_ints(n, "directions", &cnt);
	struct cf_rw r;
	int *map = NULL, *res = NULL, *dst = NULL, *outer = NULL;

	if (!body || nc < 0 || m < 1 || ns < 0 || nk < 0 || body->ninputs != nin - 1 || body->noutputs != n->nout)
		return ir_node_err(e, g, n, "num_scan_inputs %d, %d inputs and %d outputs do not match the body's %d inputs and %d outputs",
				   m, nin, n->nout, body ? body->ninputs : 0, body ? body->noutputs : 0);
	if (n->in[0] >= 0)
		return ir_node_err(e, g, n, "Scan of opset 8 with sequence_lens is not supported; convert the model to opset 9 or later");
	for (int k = 1; k < 1 + ns + m; k++) {
		const struct ir_value *v = n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;

		if (!v || v->rank < (k > ns ? 2 : 1) || (batch >= 0 && v->dims[0] != batch) ||
		    (k > ns && len >= 0 && v->dims[1] != len))
			return ir_node_err(e, g, n, "input %d: opset 8's states [batch, ...] and scan inputs [batch, steps, ...] of one batch size and length are required",
					   k);
		batch = v->dims[0];
		if (k > ns)
			len = v->dims[1];
	}
	live = ir_cf_live_nodes(body) + 2 * m + 2 * nk + 2;
	if (batch < 1 || len < 1 || batch * len > IR_CF_MAX_UNROLL_NODES / live ||
	    g->nnodes + batch * len * live > IR_CF_MAX_GRAPH_NODES)
		return ir_node_err(e, g, n, "Scan of opset 8 over %lld batch elements and %lld steps is more than is unrolled; convert the model to opset 9 or later",
				   (long long)batch, (long long)len);
	map = malloc((size_t)nin * sizeof(int));
	res = malloc((size_t)(n->nout + 1) * sizeof(int));
	outer = malloc((size_t)(n->nout * batch + 1) * sizeof(int));
	if (!map || !res || !outer) {
		ir_err(e, "out of memory");
		goto out;
	}
	rw_init(&r, g, idx, e);
	memcpy(map, n->in + 1, (size_t)(nin - 1) * sizeof(int));
	if (!(dst = retire(&r, idx)))
		goto out;
	for (int64_t b = 0; b < batch; b++) {
		int xb[IR_CF_MAX_IO];

		if (m > IR_CF_MAX_IO) {
			ir_node_err(e, g, &g->nodes[idx], "more than %d scan inputs", IR_CF_MAX_IO);
			goto out;
		}
		snprintf(r.prefix, sizeof(r.prefix), "%s/batch%lld", g->nodes[idx].name, (long long)b);
		for (int k = 0; k < ns; k++)
			if ((map[k] = take(&r, g->nodes[idx].in[1 + k], b, 0)) < 0)
				goto out;
		for (int j = 0; j < m; j++)
			if ((xb[j] = take(&r, g->nodes[idx].in[1 + ns + j], b, 0)) < 0)
				goto out;
		for (int j = 0; j < nk; j++)
			outer[j * batch + b] = -1;
		for (int64_t t = 0; t < len; t++) {
			snprintf(r.prefix, sizeof(r.prefix), "%s/batch%lld/step%lld", g->nodes[idx].name, (long long)b,
				 (long long)t);
			for (int j = 0; j < m; j++) {
				int64_t at = dirs && (int)cnt == m && dirs[j] ? len - 1 - t : t;

				if ((map[ns + j] = take(&r, xb[j], at, 0)) < 0)
					goto out;
			}
			if (inline_sub(&r, body, map, res))
				goto out;
			for (int k = 0; k < ns; k++)
				map[k] = res[k];
			for (int j = 0; j < nk; j++) {
				/* steps of output j for this batch element, in order */
				if ((res[ns + j] = unsqueeze(&r, res[ns + j], 0)) < 0)
					goto out;
				if (t == 0)
					outer[j * batch + b] = res[ns + j];
				else if ((outer[j * batch + b] = concat(&r, (int[]){ outer[j * batch + b], res[ns + j] }, 2,
									0, -1)) < 0)
					goto out;
			}
		}
		for (int k = 0; k < ns; k++)
			if ((res[k] = unsqueeze(&r, map[k], 0)) < 0)
				goto out;
		for (int k = 0; k < ns; k++)
			outer[(nk + k) * batch + b] = res[k];
		for (int j = 0; j < nk; j++)
			if ((outer[j * batch + b] = unsqueeze(&r, outer[j * batch + b], 0)) < 0)
				goto out;
	}
	snprintf(r.prefix, sizeof(r.prefix), "%s", g->nodes[idx].name);
	for (int k = 0; k < ns; k++)
		if (concat(&r, outer + (nk + k) * batch, batch, 0, dst[k]) < 0)
			goto out;
	for (int j = 0; j < nk; j++)
		if (concat(&r, outer + j * batch, batch, 0, dst[ns + j]) < 0)
			goto out;
	rc = splice(&r, idx) ? -1 : 1;
out:
	free(map);
	free(res);
	free(outer);
	free(dst);
	return rc;
}

static int expand_scan(struct ir_graph *g, int idx, int inferred, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[idx];
	struct ir_scan s;
	struct cf_rw r;
	int nin = n->nin, rc = -1;
	int *map = NULL, *res = NULL, *dst = NULL, *rows = NULL, *xs = NULL;
	int64_t live;
	int neg = 0;

	if (g->opset < 9)
		return inferred ? 0 : expand_scan8(g, idx, e);
	if (ir_scan_layout(g, n, &s, e))
		return -1;
	/* a negative output axis counts from the body's output rank: known
	 * once the node is inferred */
	for (int j = 0; j < s.k; j++)
		neg |= s.out_axis[j] < 0;
	if (neg != inferred)
		return 0;
	live = ir_cf_live_nodes(s.body) + 2 * s.m + 2 * s.k + 1;
	if (s.len < 1 || s.len * live > IR_CF_MAX_UNROLL_NODES || g->nnodes + s.len * live > IR_CF_MAX_GRAPH_NODES)
		return 0;	/* stays a Scan */
	for (int j = 0; j < s.k; j++) {
		int64_t a = s.out_axis[j], rk = s.body->vals[s.body->outputs[s.n + j]].rank;

		s.out_axis[j] = a < 0 ? a + rk + 1 : a;
	}
	map = malloc((size_t)nin * sizeof(int));
	res = malloc((size_t)(n->nout + 1) * sizeof(int));
	rows = malloc((size_t)(s.k * s.len + 1) * sizeof(int));
	xs = malloc((size_t)(s.m + 1) * sizeof(int));
	if (!map || !res || !rows || !xs) {
		ir_err(e, "out of memory");
		goto out;
	}
	rw_init(&r, g, idx, e);
	memcpy(map, n->in, (size_t)nin * sizeof(int));
	memcpy(xs, n->in + s.n, (size_t)s.m * sizeof(int));
	if (!(dst = retire(&r, idx)))
		goto out;
	for (int64_t t = 0; t < s.len; t++) {
		snprintf(r.prefix, sizeof(r.prefix), "%s/step%lld", g->nodes[idx].name, (long long)t);
		for (int j = 0; j < s.m; j++) {
			int64_t at = s.in_rev[j] ? s.len - 1 - t : t;
			int i = const_i64(&r, &at, -1), v;

			if (i < 0 || (v = add_node(&r, "slice", "Gather", (int[]){ xs[j], i }, 2, -1)) < 0 ||
			    ir_attr_set_int(&g->nodes[g->nnodes - 1], "axis", s.in_axis[j], e))
				goto out;
			map[s.n + j] = v;
		}
		if (inline_sub(&r, s.body, map, res))
			goto out;
		for (int k = 0; k < s.n; k++)
			map[k] = res[k];
		for (int j = 0; j < s.k; j++) {
			int64_t at = s.out_rev[j] ? s.len - 1 - t : t;

			if ((rows[j * s.len + at] = unsqueeze(&r, res[s.n + j], s.out_axis[j])) < 0)
				goto out;
		}
	}
	snprintf(r.prefix, sizeof(r.prefix), "%s", g->nodes[idx].name);
	for (int k = 0; k < s.n; k++)
		if (add_node(&r, "out", "Identity", &map[k], 1, dst[k]) < 0)
			goto out;
	for (int j = 0; j < s.k; j++)
		if (concat(&r, rows + j * s.len, s.len, s.out_axis[j], dst[s.n + j]) < 0)
			goto out;
	rc = splice(&r, idx) ? -1 : 1;
out:
	free(map);
	free(res);
	free(rows);
	free(xs);
	free(dst);
	return rc;
}

int ir_cf_expand(struct ir_graph *g, int idx, int inferred, void *log, struct ir_error *e)
{
	const struct ir_node *n = &g->nodes[idx];
	char op[16], name[160], what[160];
	int r;

	snprintf(op, sizeof(op), "%s", n->op);
	snprintf(name, sizeof(name), "%s", n->name);
	if (!strcmp(op, "If")) {
		/* a constant condition: the other branch is never inferred */
		int c = n->nin > 0 && n->in[0] >= 0 && g->vals[n->in[0]].data;

		if (c == inferred)
			return 0;
		snprintf(what, sizeof(what), "%s", c ? "the taken branch inlined (a compile-time constant condition)"
						     : "both branches computed, each output selected by the run-time condition (Where)");
		r = expand_if(g, idx, e);
	} else if (!strcmp(op, "Scan")) {
		snprintf(what, sizeof(what), "unrolled");
		r = expand_scan(g, idx, inferred, e);
	} else if (inferred) {
		return 0;
	} else if (!strcmp(op, "Loop")) {
		r = expand_loop(g, idx, what, sizeof(what), e);
	} else {
		return 0;
	}
	if (r > 0) {
		ir_graph_link(g);
		if (log)
			fprintf(log, "ipu-compile: %s '%s': %s\n", op, name, what);
	}
	return r;
}
