/* SPDX-License-Identifier: MIT */
/* graph.c - the IR graph: values, nodes, inputs/outputs, compaction. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ir.h"
#include "names.h"
#include "ops/registry.h"

static char *dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

struct ir_graph *ir_graph_new(struct ir_error *e)
{
	struct ir_graph *g = calloc(1, sizeof(*g));

	if (!g) {
		ir_err(e, "out of memory");
		return NULL;
	}
	g->opset = 17;
	g->ir_version = 8;
	return g;
}

static void value_clear(struct ir_value *v)
{
	free(v->name);
	free(v->data);
	for (int i = 0; i < IR_MAX_RANK; i++)
		free(v->dim_param[i]);
}

static void node_clear(struct ir_node *n)
{
	free(n->name);
	free(n->op);
	free(n->in);
	free(n->out);
	for (int i = 0; i < n->nattrs; i++)
		ir_attr_clear(&n->attrs[i]);
	free(n->attrs);
}

void ir_graph_free(struct ir_graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->nvals; i++)
		value_clear(&g->vals[i]);
	for (int i = 0; i < g->nnodes; i++)
		node_clear(&g->nodes[i]);
	free(g->vals);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	free(g->out_decl);
	free(g->name);
	ir_names_drop(g);
	free(g);
}

int ir_value_find(const struct ir_graph *g, const char *name)
{
	int v = ir_names_find(g, name);

	if (v != -2)
		return v;
	for (int i = g->nvals - 1; i >= 0; i--)
		if (!strcmp(g->vals[i].name, name))
			return i;
	return -1;
}

int ir_value_add(struct ir_graph *g, const char *name, struct ir_error *e)
{
	struct ir_value *v;
	char buf[32];

	if (!name) {
		snprintf(buf, sizeof(buf), "_v%d", g->nvals);
		return ir_value_add_unique(g, buf, e);
	}
	if (g->nvals == g->capvals) {
		int cap = g->capvals ? g->capvals * 2 : 64;
		struct ir_value *nv = realloc(g->vals, (size_t)cap * sizeof(*nv));

		if (!nv)
			return ir_err(e, "out of memory");
		g->vals = nv;
		g->capvals = cap;
	}
	v = &g->vals[g->nvals];
	memset(v, 0, sizeof(*v));
	v->name = dupstr(name);
	if (!v->name)
		return ir_err(e, "out of memory");
	v->rank = -1;
	v->producer = -1;
	ir_names_added(g, g->nvals);
	return g->nvals++;
}

int ir_value_add_unique(struct ir_graph *g, const char *base,
			struct ir_error *e)
{
	size_t len = strlen(base) + 24;
	char *buf = malloc(len);
	int r, k;

	if (!buf)
		return ir_err(e, "out of memory");
	/* the smallest free suffix: those below the index's first one are
	 * known to be taken */
	k = ir_names_first_suffix(g, base);
	for (;; k++) {
		if (k)
			snprintf(buf, len, "%s_%d", base, k);
		else
			snprintf(buf, len, "%s", base);
		if (ir_value_find(g, buf) < 0)
			break;
	}
	r = ir_value_add(g, buf, e);
	if (r >= 0)
		ir_names_taken(g, base, k);
	free(buf);
	return r;
}

static int op_id(const char *op)
{
	const struct ir_op_desc *d = op ? ir_op_lookup(op) : NULL;

	return d ? (int)d->id : IR_OP_COUNT;
}

static int make_node(struct ir_node *n, const char *name, const char *op,
		     const int *in, int nin, const int *out, int nout,
		     struct ir_error *e)
{
	memset(n, 0, sizeof(*n));
	n->name = dupstr(name ? name : "");
	n->op = dupstr(op);
	n->opid = op_id(op);
	n->in = malloc((size_t)(nin ? nin : 1) * sizeof(int));
	n->out = malloc((size_t)(nout ? nout : 1) * sizeof(int));
	if (!n->name || !n->op || !n->in || !n->out) {
		node_clear(n);
		return ir_err(e, "out of memory");
	}
	if (nin)
		memcpy(n->in, in, (size_t)nin * sizeof(int));
	if (nout)
		memcpy(n->out, out, (size_t)nout * sizeof(int));
	n->nin = nin;
	n->nout = nout;
	return 0;
}

static int grow_nodes(struct ir_graph *g, struct ir_error *e)
{
	if (g->nnodes == g->capnodes) {
		int cap = g->capnodes ? g->capnodes * 2 : 32;
		struct ir_node *nn = realloc(g->nodes, (size_t)cap * sizeof(*nn));

		if (!nn)
			return ir_err(e, "out of memory");
		g->nodes = nn;
		g->capnodes = cap;
	}
	return 0;
}

int ir_node_insert(struct ir_graph *g, int pos, const char *name,
		   const char *op, const int *in, int nin, const int *out,
		   int nout, struct ir_error *e)
{
	struct ir_node n;

	if (grow_nodes(g, e) || make_node(&n, name, op, in, nin, out, nout, e))
		return -1;
	n.index = pos < g->nnodes ? g->nodes[pos].index : g->nnodes;
	memmove(&g->nodes[pos + 1], &g->nodes[pos],
		(size_t)(g->nnodes - pos) * sizeof(n));
	g->nodes[pos] = n;
	g->nnodes++;
	ir_graph_link(g);
	return pos;
}

int ir_node_add(struct ir_graph *g, const char *name, const char *op,
		const int *in, int nin, const int *out, int nout,
		struct ir_error *e)
{
	int pos = g->nnodes;

	if (grow_nodes(g, e) || make_node(&g->nodes[pos], name, op, in, nin,
					  out, nout, e))
		return -1;
	g->nodes[pos].index = pos;
	g->nnodes++;
	for (int i = 0; i < nout; i++)
		if (out[i] >= 0)
			g->vals[out[i]].producer = pos;
	return pos;
}

int ir_node_set_op(struct ir_node *n, const char *op, struct ir_error *e)
{
	char *s = strdup(op);

	if (!s)
		return ir_err(e, "out of memory");
	free(n->op);
	n->op = s;
	n->opid = op_id(op);
	return 0;
}

static int add_idx(int **arr, int *n, int v, struct ir_error *e)
{
	int *na = realloc(*arr, (size_t)(*n + 1) * sizeof(int));

	if (!na)
		return ir_err(e, "out of memory");
	na[(*n)++] = v;
	*arr = na;
	return 0;
}

int ir_graph_add_input(struct ir_graph *g, int v, struct ir_error *e)
{
	g->vals[v].is_input = 1;
	return add_idx(&g->inputs, &g->ninputs, v, e);
}

int ir_graph_add_output(struct ir_graph *g, int v, struct ir_error *e)
{
	g->vals[v].is_output = 1;
	return add_idx(&g->outputs, &g->noutputs, v, e);
}

void ir_graph_link(struct ir_graph *g)
{
	for (int i = 0; i < g->nvals; i++)
		g->vals[i].producer = -1;
	for (int i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].dead)
			continue;
		for (int k = 0; k < g->nodes[i].nout; k++)
			if (g->nodes[i].out[k] >= 0)
				g->vals[g->nodes[i].out[k]].producer = i;
	}
}

int ir_compact(struct ir_graph *g, struct ir_error *e)
{
	int *map = malloc((size_t)(g->nvals ? g->nvals : 1) * sizeof(int));
	char *used = calloc((size_t)(g->nvals ? g->nvals : 1), 1);
	int nn = 0, nv = 0;

	if (!map || !used) {
		free(map);
		free(used);
		return ir_err(e, "out of memory");
	}
	for (int i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].dead) {
			node_clear(&g->nodes[i]);
			continue;
		}
		g->nodes[nn++] = g->nodes[i];
	}
	g->nnodes = nn;
	for (int i = 0; i < g->ninputs; i++)
		used[g->inputs[i]] = 1;
	for (int i = 0; i < g->noutputs; i++)
		used[g->outputs[i]] = 1;
	for (int i = 0; i < nn; i++) {
		struct ir_node *n = &g->nodes[i];

		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				used[n->in[k]] = 1;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				used[n->out[k]] = 1;
	}
	for (int i = 0; i < g->nvals; i++) {
		if (!used[i]) {
			value_clear(&g->vals[i]);
			map[i] = -1;
			continue;
		}
		map[i] = nv;
		g->vals[nv++] = g->vals[i];
	}
	g->nvals = nv;
	ir_names_drop(g);	/* indices moved, names went */
	for (int i = 0; i < g->ninputs; i++)
		g->inputs[i] = map[g->inputs[i]];
	for (int i = 0; i < g->noutputs; i++)
		g->outputs[i] = map[g->outputs[i]];
	for (int i = 0; i < nn; i++) {
		struct ir_node *n = &g->nodes[i];

		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				n->in[k] = map[n->in[k]];
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				n->out[k] = map[n->out[k]];
	}
	free(map);
	free(used);
	ir_graph_link(g);
	return 0;
}

void ir_value_set_shape(struct ir_value *v, int dtype, int rank,
			const int64_t *dims)
{
	v->dtype = dtype;
	v->rank = rank;
	for (int i = 0; i < IR_MAX_RANK; i++)
		v->dims[i] = i < rank ? dims[i] : 0;
}

void ir_value_set_const(struct ir_value *v, struct ir_tensor *t)
{
	free(v->data);
	ir_value_set_shape(v, t->dtype, t->rank, t->dims);
	v->data = t->data;
	t->data = NULL;
}

void ir_value_view(const struct ir_value *v, struct ir_tensor *t)
{
	t->dtype = v->dtype;
	t->rank = v->rank < 0 ? 0 : v->rank;
	memcpy(t->dims, v->dims, sizeof(t->dims));
	t->data = v->data;
}

int64_t ir_value_numel(const struct ir_value *v)
{
	if (v->rank < 0)
		return -1;
	return ir_numel(v->rank, v->dims);
}

int ir_value_has_shape(const struct ir_value *v)
{
	return v->dtype != IR_UNDEFINED && ir_value_numel(v) >= 0;
}

int ir_value_uses(const struct ir_graph *g, int v)
{
	int uses = 0;

	for (int i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].dead)
			continue;
		for (int k = 0; k < g->nodes[i].nin; k++)
			uses += g->nodes[i].in[k] == v;
	}
	return uses;
}

void ir_value_replace_uses(struct ir_graph *g, int from, int to)
{
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nin; k++)
			if (g->nodes[i].in[k] == from)
				g->nodes[i].in[k] = to;
	for (int i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == from)
			g->outputs[i] = to;
}

int ir_node_err(struct ir_error *e, const struct ir_graph *g,
		const struct ir_node *n, const char *fmt, ...)
{
	char msg[IR_ERROR_LEN];
	va_list ap;

	(void)g;
	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(e->msg, sizeof(e->msg), "node '%s' (%s, #%d): %s",
		 n->name, n->op, n->index, msg);
	return -1;
}

struct ir_graph *ir_graph_clone(const struct ir_graph *g, struct ir_error *e)
{
	struct ir_graph *c = ir_graph_new(e);

	if (!c)
		return NULL;
	c->opset = g->opset;
	c->ir_version = g->ir_version;
	c->custom = g->custom;
	memcpy(c->domains, g->domains, sizeof(c->domains));
	c->ndomains = g->ndomains;
	if (g->name && !(c->name = dupstr(g->name)))
		goto oom;
	for (int i = 0; i < g->nvals; i++) {
		const struct ir_value *s = &g->vals[i];
		struct ir_value *d;

		if (ir_value_add(c, s->name, e) < 0)
			goto fail;
		d = &c->vals[i];
		ir_value_set_shape(d, s->dtype, s->rank, s->dims);
		d->is_input = s->is_input;
		d->is_output = s->is_output;
		d->bounded = s->bounded;
		for (int k = 0; k < IR_MAX_RANK; k++)
			if (s->dim_param[k] &&
			    !(d->dim_param[k] = dupstr(s->dim_param[k])))
				goto oom;
		if (s->data) {
			int64_t n = ir_value_numel(s);
			size_t bytes = (size_t)(n > 0 ? n : 1) *
				       ir_dtype_size(s->dtype);

			d->data = malloc(bytes);
			if (!d->data)
				goto oom;
			memcpy(d->data, s->data, bytes);
		}
	}
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *s = &g->nodes[i];
		struct ir_node *d;

		if (ir_node_add(c, s->name, s->op, s->in, s->nin, s->out,
				s->nout, e) < 0)
			goto fail;
		d = &c->nodes[i];
		d->index = s->index;
		d->dead = s->dead;
		if (s->nattrs) {
			d->attrs = calloc((size_t)s->nattrs, sizeof(*d->attrs));
			if (!d->attrs)
				goto oom;
			for (int k = 0; k < s->nattrs; k++) {
				if (ir_attr_copy(&d->attrs[k], &s->attrs[k], e))
					goto fail;
				d->nattrs++;
			}
		}
	}
	for (int i = 0; i < g->ninputs; i++)
		if (add_idx(&c->inputs, &c->ninputs, g->inputs[i], e))
			goto fail;
	for (int i = 0; i < g->noutputs; i++)
		if (add_idx(&c->outputs, &c->noutputs, g->outputs[i], e))
			goto fail;
	ir_graph_link(c);
	return c;
oom:
	ir_err(e, "out of memory");
fail:
	ir_graph_free(c);
	return NULL;
}
