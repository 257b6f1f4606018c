/* SPDX-License-Identifier: MIT */
/* onnx_import.c - ModelProto -> IR graph. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipu/onnx_io.h"
#include "onnx_attr_schema.h"
#include "onnx_internal.h"

/* Subgraphs nest at most this deep (an If inside a Loop body is 2). */
#define MAX_SUBGRAPH_DEPTH 8

/* Where a graph being imported sits: its depth below the model's graph
 * and the directory external tensor data is read from. */
struct scope {
	int depth;
	const char *base_dir;
};

static int import_graph(struct ir_graph *g, const Onnx__GraphProto *gp,
			const struct scope *sc, int is_sub, struct ir_error *e);

/* Index of the value called `name`, created if new; -1 on error.  The
 * empty name means "optional input omitted" and gives -2. */
static int value_of(struct ir_graph *g, const char *name, struct ir_error *e)
{
	int v;

	if (!name || !name[0])
		return -2;
	v = ir_value_find(g, name);
	if (v >= 0)
		return v;
	return ir_value_add(g, name, e);
}

static int import_type(struct ir_value *v, const Onnx__TypeProto *tp,
		       struct ir_error *e)
{
	const Onnx__TypeProto__Tensor *tt;

	if (!tp)
		return 0;
	if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return ir_err(e, "value '%s': only tensor types are supported (not sequences, maps, optionals or sparse tensors)",
			      v->name);
	tt = tp->tensor_type;
	if (!tt)
		return 0;
	if (tt->has_elem_type)
		v->dtype = tt->elem_type;
	if (tt->shape) {
		if (tt->shape->n_dim > IR_MAX_RANK)
			return ir_err(e, "value '%s': rank %zu is more than %d",
				      v->name, tt->shape->n_dim, IR_MAX_RANK);
		v->rank = (int)tt->shape->n_dim;
		for (size_t i = 0; i < tt->shape->n_dim; i++) {
			const Onnx__TensorShapeProto__Dimension *d =
				tt->shape->dim[i];

			v->dims[i] = -1;
			if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
			    d->dim_value >= 0)
				v->dims[i] = d->dim_value;
			else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
				 d->dim_param) {
				free(v->dim_param[i]);	/* the value may be typed twice */
				v->dim_param[i] = strdup(d->dim_param);
				if (!v->dim_param[i])
					return ir_err(e, "out of memory");
			}
		}
	}
	return 0;
}

/* A subgraph attribute (If's branches, Loop's and Scan's body): imported
 * into a graph of its own, one level deeper. */
static int import_subgraph(struct ir_attr *a, const Onnx__AttributeProto *p,
			   const struct scope *sc, struct ir_error *e)
{
	struct scope inner = { sc->depth + 1, sc->base_dir };

	if (p->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || !p->g)
		return ir_err(e, "attribute '%s': a list of graphs (GRAPHS) is not supported, only one GRAPH",
			      a->name);
	if (inner.depth > MAX_SUBGRAPH_DEPTH)
		return ir_err(e, "attribute '%s': subgraphs nested more than %d deep", a->name,
			      MAX_SUBGRAPH_DEPTH);
	a->g = ir_graph_new(e);
	if (!a->g)
		return -1;
	return import_graph(a->g, p->g, &inner, 1, e);
}

static int import_attr(struct ir_attr *a, const Onnx__AttributeProto *p,
		       const struct scope *sc, struct ir_error *e)
{
	memset(a, 0, sizeof(*a));
	a->name = strdup(p->name ? p->name : "");
	if (!a->name)
		return ir_err(e, "out of memory");
	if (p->ref_attr_name && p->ref_attr_name[0])
		return ir_err(e, "attribute '%s' refers to a function attribute", a->name);
	switch (p->type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
		a->type = IR_ATTR_FLOAT;
		a->f = p->f;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
		a->type = IR_ATTR_INT;
		a->i = p->i;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
		a->type = IR_ATTR_STRING;
		a->s = malloc(p->s.len + 1);
		if (!a->s)
			return ir_err(e, "out of memory");
		if (p->s.len)
			memcpy(a->s, p->s.data, p->s.len);
		a->s[p->s.len] = 0;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
		a->type = IR_ATTR_TENSOR;
		if (!p->t)
			return ir_err(e, "attribute '%s': tensor missing", a->name);
		a->t = calloc(1, sizeof(*a->t));
		if (!a->t)
			return ir_err(e, "out of memory");
		if (onnx_tensor_decode(p->t, NULL, a->t, e))
			return -1;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
		a->type = IR_ATTR_FLOATS;
		a->n = p->n_floats;
		a->floats = malloc((a->n ? a->n : 1) * sizeof(double));
		if (!a->floats)
			return ir_err(e, "out of memory");
		for (size_t i = 0; i < a->n; i++)
			a->floats[i] = p->floats[i];
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		a->type = IR_ATTR_INTS;
		a->n = p->n_ints;
		a->ints = malloc((a->n ? a->n : 1) * sizeof(int64_t));
		if (!a->ints)
			return ir_err(e, "out of memory");
		if (a->n)
			memcpy(a->ints, p->ints, a->n * sizeof(int64_t));
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
		a->type = IR_ATTR_STRINGS;
		a->strings = calloc(p->n_strings ? p->n_strings : 1, sizeof(char *));
		if (!a->strings)
			return ir_err(e, "out of memory");
		a->n = p->n_strings;
		for (size_t i = 0; i < a->n; i++) {
			a->strings[i] = malloc(p->strings[i].len + 1);
			if (!a->strings[i])
				return ir_err(e, "out of memory");
			if (p->strings[i].len)
				memcpy(a->strings[i], p->strings[i].data, p->strings[i].len);
			a->strings[i][p->strings[i].len] = 0;
		}
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
		a->type = IR_ATTR_GRAPH;
		return import_subgraph(a, p, sc, e);
	default:
		return ir_err(e, "attribute '%s' has type %d, which is not supported",
			      a->name, (int)p->type);
	}
	return 0;
}

static int cmp_schema(const void *key, const void *elt)
{
	const struct onnx_attr_schema *k = key, *s = elt;
	int c = strcmp(k->op, s->op);

	return c ? c : strcmp(k->attr, s->attr);
}

static const char *attr_type_name(unsigned t)
{
	static const char *const names[] = {
		"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
		"STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO",
		"TYPE_PROTOS",
	};

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "UNKNOWN";
}

/* An attribute of a type the operator's ONNX schema does not take. */
static int check_attr_type(const char *op, const Onnx__AttributeProto *p, const char *nm,
			   int idx, struct ir_error *e)
{
	struct onnx_attr_schema key = { op, p->name ? p->name : "", 0 };
	const struct onnx_attr_schema *s;
	char want[160] = "";
	unsigned t;

	s = bsearch(&key, onnx_attr_schemas, onnx_attr_schema_count, sizeof(*s), cmp_schema);
	if (!s || (p->type < 32 && (s->types & (1u << p->type))))
		return 0;
	for (t = 0; t < 32; t++)
		if (s->types & (1u << t))
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
				 want[0] ? " or " : "", attr_type_name(t));
	return ir_err(e, "node '%s' (%s, #%d): attribute '%s' is %s; %s takes %s", nm, op, idx,
		      key.attr, attr_type_name((unsigned)p->type), op, want);
}

/*
 * The outer values node n's subgraphs read (their inputs after the formal
 * ones, in each subgraph's own order) become inputs of n, one list shared
 * by every subgraph of n: each subgraph's inputs are rebuilt as its formal
 * ones followed by that list, so input k of a subgraph is input k of n
 * past n's formal inputs.  The count is n's attribute `captures`.
 */
static int share_captures(struct ir_graph *g, struct ir_node *n, const Onnx__NodeProto *np,
			  struct ir_error *e)
{
	const char **names = NULL;
	int nnames = 0, cap = 0, r = -1;

	for (int i = 0; i < n->nattrs; i++) {
		struct ir_graph *sub = n->attrs[i].g;
		int formal;

		if (!sub)
			continue;
		formal = (int)np->attribute[i]->g->n_input;
		for (int k = formal; k < sub->ninputs; k++) {
			const char *nm = sub->vals[sub->inputs[k]].name;
			int seen = 0;

			for (int j = 0; j < nnames && !seen; j++)
				seen = !strcmp(names[j], nm);
			if (seen)
				continue;
			if (nnames == cap) {
				const char **nn = realloc(names, (size_t)(cap = cap ? 2 * cap : 8) * sizeof(*nn));

				if (!nn) {
					ir_err(e, "out of memory");
					goto out;
				}
				names = nn;
			}
			names[nnames++] = nm;
		}
	}
	if (!nnames)
		return 0;
	if (n->nin + nnames > 1024) {
		ir_err(e, "subgraphs read %d outer values; at most %d are supported", nnames, 1024 - n->nin);
		goto out;
	}
	{
		int *in = realloc(n->in, (size_t)(n->nin + nnames) * sizeof(int));

		if (!in) {
			ir_err(e, "out of memory");
			goto out;
		}
		n->in = in;
	}
	/* names point into the subgraphs: add the outer values first */
	for (int j = 0; j < nnames; j++) {
		int v = value_of(g, names[j], e);

		if (v < 0)
			goto out;
		n->in[n->nin + j] = v;
	}
	for (int i = 0; i < n->nattrs; i++) {
		struct ir_graph *sub = n->attrs[i].g;

		if (!sub)
			continue;
		sub->ninputs = (int)np->attribute[i]->g->n_input;
		for (int j = 0; j < nnames; j++) {
			const char *nm = g->vals[n->in[n->nin + j]].name;
			int v = ir_value_find(sub, nm);

			if (v < 0 && (v = ir_value_add(sub, nm, e)) < 0)
				goto out;
			if (ir_graph_add_input(sub, v, e))
				goto out;
		}
	}
	n->nin += nnames;
	r = ir_attr_set_int(n, "captures", nnames, e);
out:
	free(names);
	return r;
}

static int import_node(struct ir_graph *g, const Onnx__NodeProto *np, int idx,
		       const struct scope *sc, struct ir_error *e)
{
	int in[64], out[64];
	int ni;
	struct ir_node *n;
	char name[64];
	const char *op = np->op_type ? np->op_type : "";
	const char *nm = np->name;
	char cop[96];

	if (!nm || !nm[0]) {
		snprintf(name, sizeof(name), "%s_%d", op, idx);
		nm = name;
	}
	/* another domain: a custom operator, "domain::op_type", resolved
	 * against the plugins at shape inference (compiler/custom/) */
	if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx")) {
		if (strlen(np->domain) + strlen(op) + 3 > sizeof(cop) || strstr(op, "::"))
			return ir_err(e, "node '%s' (%s, #%d): domain '%s' and op_type too long or malformed for a custom operator",
				      nm, op, idx, np->domain);
		snprintf(cop, sizeof(cop), "%s::%s", np->domain, op);
		op = cop;
	}
	if (np->n_input > 64 || np->n_output > 64)
		return ir_err(e, "node '%s' (%s, #%d): more than 64 inputs or outputs",
			      nm, op, idx);
	for (size_t i = 0; i < np->n_input; i++) {
		in[i] = value_of(g, np->input[i], e);
		if (in[i] == -1)
			return -1;
		if (in[i] == -2)
			in[i] = -1;
	}
	/* Trailing omitted inputs are dropped. */
	ni = (int)np->n_input;
	while (ni > 0 && in[ni - 1] < 0)
		ni--;
	for (size_t i = 0; i < np->n_output; i++) {
		int v = value_of(g, np->output[i], e);

		if (v == -1)
			return -1;
		if (v == -2) {
			v = ir_value_add(g, NULL, e);
			if (v < 0)
				return -1;
		} else if (g->vals[v].producer >= 0 || g->vals[v].is_input ||
			   g->vals[v].data) {
			return ir_err(e, "node '%s' (%s, #%d): output '%s' is already defined earlier in the graph",
				      nm, op, idx, g->vals[v].name);
		}
		out[i] = v;
	}
	if (ir_node_add(g, nm, op, in, ni, out, (int)np->n_output, e) < 0)
		return -1;
	n = &g->nodes[g->nnodes - 1];
	n->index = idx;
	if (np->n_attribute) {
		n->attrs = calloc(np->n_attribute, sizeof(*n->attrs));
		if (!n->attrs)
			return ir_err(e, "out of memory");
		for (size_t i = 0; i < np->n_attribute; i++) {
			n->nattrs++;
			if (import_attr(&n->attrs[i], np->attribute[i], sc, e)) {
				char m[IR_ERROR_LEN];

				snprintf(m, sizeof(m), "%s", e->msg);
				return ir_err(e, "node '%s' (%s, #%d): %s", nm, op, idx, m);
			}
			if ((!np->domain || !np->domain[0] || !strcmp(np->domain, "ai.onnx")) &&
			    check_attr_type(op, np->attribute[i], nm, idx, e))
				return -1;
		}
		if (share_captures(g, n, np, e)) {
			char m[IR_ERROR_LEN];

			snprintf(m, sizeof(m), "%s", e->msg);
			return ir_err(e, "node '%s' (%s, #%d): %s", nm, op, idx, m);
		}
	}
	return 0;
}

/* The values a subgraph reads that nothing in it defines are outer values:
 * appended to its inputs (share_captures() lines them up). */
static int find_captures(struct ir_graph *g, struct ir_error *e)
{
	char *defined = calloc((size_t)(g->nvals ? g->nvals : 1), 1);
	int r = 0;

	if (!defined)
		return ir_err(e, "out of memory");
	for (int i = 0; i < g->nvals; i++)
		defined[i] = g->vals[i].is_input || g->vals[i].data;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nout; k++)
			defined[g->nodes[i].out[k]] = 1;
	for (int i = 0; i < g->nnodes && !r; i++)
		for (int k = 0; k < g->nodes[i].nin && !r; k++) {
			int v = g->nodes[i].in[k];

			if (v >= 0 && !defined[v]) {
				defined[v] = 1;
				r = ir_graph_add_input(g, v, e);
			}
		}
	for (int i = 0; i < g->noutputs && !r; i++)
		if (!defined[g->outputs[i]]) {
			defined[g->outputs[i]] = 1;
			r = ir_graph_add_input(g, g->outputs[i], e);
		}
	free(defined);
	return r;
}

/* Checks that every node input is defined before it is read. */
static int check_order(struct ir_graph *g, struct ir_error *e)
{
	char *defined = calloc((size_t)(g->nvals ? g->nvals : 1), 1);

	if (!defined)
		return ir_err(e, "out of memory");
	for (int i = 0; i < g->nvals; i++)
		defined[i] = g->vals[i].is_input || g->vals[i].data;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		for (int k = 0; k < n->nin; k++) {
			if (n->in[k] < 0 || defined[n->in[k]])
				continue;
			ir_node_err(e, g, n, "input '%s' is not produced by any earlier node, graph input or initializer (graph not topologically sorted, or a subgraph refers to an outer value)",
				    g->vals[n->in[k]].name);
			free(defined);
			return -1;
		}
		for (int k = 0; k < n->nout; k++)
			defined[n->out[k]] = 1;
	}
	for (int i = 0; i < g->noutputs; i++) {
		if (!defined[g->outputs[i]]) {
			ir_err(e, "graph output '%s' is not produced by any node, input or initializer",
			       g->vals[g->outputs[i]].name);
			free(defined);
			return -1;
		}
	}
	free(defined);
	return 0;
}

static int import_model(struct ir_graph *g, const Onnx__ModelProto *m,
			const char *base_dir, struct ir_error *e)
{
	const Onnx__GraphProto *gp = m->graph;
	struct scope sc = { 0, base_dir };
	int opset = -1;

	if (!gp)
		return ir_err(e, "model has no graph");
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		if (!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx")) {
			opset = (int)o->version;
		} else if (strlen(o->domain) < sizeof(g->domains[0].name) &&
			   g->ndomains < IR_MAX_CUSTOM_DOMAINS) {
			snprintf(g->domains[g->ndomains].name, sizeof(g->domains[0].name), "%s", o->domain);
			g->domains[g->ndomains++].version = (int)o->version;
		}
	}
	if (opset < 0)
		opset = m->n_opset_import ? -1 : 1;
	if (opset < ONNX_OPSET_MIN || opset > ONNX_OPSET_MAX)
		return ir_err(e, "model imports opset %d of the default ONNX domain; supported are opsets %d to %d (convert the model, e.g. with onnx.version_converter)",
			      opset, ONNX_OPSET_MIN, ONNX_OPSET_MAX);
	g->opset = opset;
	g->ir_version = m->has_ir_version ? m->ir_version : 8;
	return import_graph(g, gp, &sc, 0, e);
}

/* Every subgraph of g's nodes gets g's opset and domains. */
static void inherit_opset(struct ir_graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nattrs; k++) {
			struct ir_graph *sub = g->nodes[i].attrs[k].g;

			if (!sub)
				continue;
			sub->opset = g->opset;
			sub->ir_version = g->ir_version;
			memcpy(sub->domains, g->domains, sizeof(sub->domains));
			sub->ndomains = g->ndomains;
			inherit_opset(sub);
		}
}

/* The model's graph (is_sub 0) or a subgraph: initializers, inputs, nodes,
 * outputs.  A subgraph's inputs may be untyped (bound from the node's at
 * shape inference) and its outputs declare nothing that is checked. */
static int import_graph(struct ir_graph *g, const Onnx__GraphProto *gp,
			const struct scope *sc, int is_sub, struct ir_error *e)
{
	if (gp->name && !(g->name = strdup(gp->name)))
		return ir_err(e, "out of memory");
	if (gp->n_sparse_initializer)
		return ir_err(e, "sparse initializers are not supported (tensor '%s')",
			      gp->sparse_initializer[0]->values &&
			      gp->sparse_initializer[0]->values->name ?
			      gp->sparse_initializer[0]->values->name : "?");
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		struct ir_tensor t;
		int v;

		if (!tp->name || !tp->name[0])
			return ir_err(e, "initializer #%zu has no name", i);
		v = value_of(g, tp->name, e);
		if (v < 0)
			return -1;
		if (onnx_tensor_decode(tp, sc->base_dir, &t, e))
			return -1;
		ir_value_set_const(&g->vals[v], &t);
	}
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		int v = value_of(g, vi->name, e);

		if (v < 0)
			return v == -2 ? ir_err(e, "%sgraph input #%zu has no name", is_sub ? "sub" : "", i) : -1;
		if (g->vals[v].data && !is_sub)
			continue; /* an initializer listed as input (IR < 4) */
		if (g->vals[v].is_input)
			return ir_err(e, "subgraph '%s': input '%s' listed twice", g->name ? g->name : "",
				      vi->name);
		if (import_type(&g->vals[v], vi->type, e) ||
		    ir_graph_add_input(g, v, e))
			return -1;
		if (g->vals[v].dtype == IR_UNDEFINED && !is_sub)
			return ir_err(e, "graph input '%s' has no element type", vi->name);
	}
	for (size_t i = 0; i < gp->n_node; i++)
		if (import_node(g, gp->node[i], (int)i, sc, e))
			return -1;
	if (gp->n_output && !is_sub) {
		g->out_decl = calloc(gp->n_output, sizeof(*g->out_decl));
		if (!g->out_decl)
			return ir_err(e, "out of memory");
	}
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		int v = value_of(g, vi->name, e);
		struct ir_value declared = { .rank = -1 };

		if (v < 0)
			return v == -2 ? ir_err(e, "%sgraph output #%zu has no name", is_sub ? "sub" : "", i) : -1;
		declared.name = vi->name;
		if (import_type(&declared, vi->type, e))
			return -1;
		if (!is_sub) {
			struct ir_decl *d = &g->out_decl[i];

			d->dtype = declared.dtype;
			d->rank = declared.rank;
			for (int k = 0; k < IR_MAX_RANK; k++)
				d->dims[k] = k < declared.rank && !declared.dim_param[k] ? declared.dims[k] : -1;
		}
		for (int k = 0; k < IR_MAX_RANK; k++)
			free(declared.dim_param[k]);
		if (ir_graph_add_output(g, v, e))
			return -1;
		/* Declared output types are checked after inference; keep
		 * the element type if nothing else sets it. */
		if (g->vals[v].dtype == IR_UNDEFINED && !is_sub)
			g->vals[v].dtype = declared.dtype;
	}
	if (is_sub) {
		if (find_captures(g, e))
			return -1;
	} else {
		inherit_opset(g);
	}
	return check_order(g, e);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return strdup(".");
	d = malloc((size_t)(slash - path) + 2);
	if (!d)
		return NULL;
	if (slash == path) {
		strcpy(d, "/");
		return d;
	}
	memcpy(d, path, (size_t)(slash - path));
	d[slash - path] = 0;
	return d;
}

static struct ir_graph *load_buffer(const void *buf, size_t len,
				    const char *base_dir, struct ir_error *e)
{
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
	struct ir_graph *g;

	if (!m) {
		ir_err(e, "not a valid ONNX model (protobuf decoding of ModelProto failed)");
		return NULL;
	}
	g = ir_graph_new(e);
	if (g && import_model(g, m, base_dir, e)) {
		ir_graph_free(g);
		g = NULL;
	}
	onnx__model_proto__free_unpacked(m, NULL);
	return g;
}

struct ir_graph *onnx_load_buffer(const void *buf, size_t len,
				  const char *base_dir, struct ir_error *e)
{
	return load_buffer(buf, len, base_dir, e);
}

/* protobuf refuses messages over 2 GiB */
#define ONNX_MAX_MODEL_BYTES (2ull << 30)

struct ir_graph *onnx_load_file(const char *path, struct ir_error *e)
{
	unsigned char *buf;
	struct stat st;
	size_t size, got = 0;
	char *dir;
	struct ir_graph *g;
	/* O_NONBLOCK: a FIFO must not block the open (it is refused below) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		ir_err(e, "cannot open model %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		ir_err(e, "model %s is not a regular file", path);
		return NULL;
	}
	/* protobuf's own limit on a message: ONNX keeps larger weights outside */
	if ((uint64_t)st.st_size > ONNX_MAX_MODEL_BYTES) {
		close(fd);
		ir_err(e, "model %s is %lld bytes, over the 2 GiB protobuf limit (store weights as external data)",
		       path, (long long)st.st_size);
		return NULL;
	}
	size = (size_t)st.st_size;
	buf = malloc(size ? size : 1);
	while (buf && got < size) {
		ssize_t k = read(fd, buf + got, size - got);

		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (!buf || got != size) {
		free(buf);
		ir_err(e, buf ? "cannot read %s" : "out of memory reading %s", path);
		return NULL;
	}
	dir = dir_of(path);
	if (!dir) {
		free(buf);
		ir_err(e, "out of memory");
		return NULL;
	}
	g = load_buffer(buf, size, dir, e);
	if (!g) {
		char m[IR_ERROR_LEN];

		snprintf(m, sizeof(m), "%s", e->msg);
		ir_err(e, "%s: %s", path, m);
	}
	free(dir);
	free(buf);
	return g;
}
