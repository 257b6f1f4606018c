/* SPDX-License-Identifier: MIT */
/* onnx_export.c - IR graph -> ONNX ModelProto file (opset 17 or the one
 * asked for, forms converted by onnx_opset.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/file_atomic.h"
#include "ipu/onnx_io.h"
#include "onnx_internal.h"

/* Every allocation of one export, freed together. */
struct pool {
	void **p;
	size_t n, cap;
	int failed;
};

static void *pcalloc(struct pool *pl, size_t n, size_t size)
{
	void *x;

	if (pl->failed)
		return NULL;
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 256;
		void **np = realloc(pl->p, cap * sizeof(void *));

		if (!np) {
			pl->failed = 1;
			return NULL;
		}
		pl->p = np;
		pl->cap = cap;
	}
	x = calloc(n ? n : 1, size);
	if (!x) {
		pl->failed = 1;
		return NULL;
	}
	pl->p[pl->n++] = x;
	return x;
}

static void pool_free(struct pool *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		free(pl->p[i]);
	free(pl->p);
}

static Onnx__ValueInfoProto *value_info(struct pool *pl, const struct ir_value *v)
{
	Onnx__ValueInfoProto *vi = pcalloc(pl, 1, sizeof(*vi));
	Onnx__TypeProto *tp = pcalloc(pl, 1, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = pcalloc(pl, 1, sizeof(*tt));
	Onnx__TensorShapeProto *sp = pcalloc(pl, 1, sizeof(*sp));
	Onnx__TensorShapeProto__Dimension **dims =
		pcalloc(pl, (size_t)(v->rank > 0 ? v->rank : 1), sizeof(*dims));

	if (!vi || !tp || !tt || !sp || !dims)
		return NULL;
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sp);
	vi->name = v->name;
	vi->type = tp;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = v->dtype;
	if (v->rank >= 0) {
		tt->shape = sp;
		sp->n_dim = (size_t)v->rank;
		sp->dim = dims;
		for (int i = 0; i < v->rank; i++) {
			Onnx__TensorShapeProto__Dimension *d = pcalloc(pl, 1, sizeof(*d));

			if (!d)
				return NULL;
			onnx__tensor_shape_proto__dimension__init(d);
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = v->dims[i];
			dims[i] = d;
		}
	}
	return vi;
}

static Onnx__AttributeProto *attr(struct pool *pl, const struct ir_attr *a)
{
	Onnx__AttributeProto *p = pcalloc(pl, 1, sizeof(*p));

	if (!p)
		return NULL;
	onnx__attribute_proto__init(p);
	p->name = a->name;
	p->has_type = 1;
	switch (a->type) {
	case IR_ATTR_FLOAT:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
		p->has_f = 1;
		p->f = (float)a->f;
		break;
	case IR_ATTR_INT:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		p->has_i = 1;
		p->i = a->i;
		break;
	case IR_ATTR_STRING:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
		p->has_s = 1;
		p->s.data = (uint8_t *)a->s;
		p->s.len = strlen(a->s);
		break;
	case IR_ATTR_INTS:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		p->n_ints = a->n;
		p->ints = a->ints;
		break;
	case IR_ATTR_FLOATS:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
		p->n_floats = a->n;
		p->floats = pcalloc(pl, a->n, sizeof(float));
		if (!p->floats)
			return NULL;
		for (size_t i = 0; i < a->n; i++)
			p->floats[i] = (float)a->floats[i];
		break;
	case IR_ATTR_STRINGS:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
		p->n_strings = a->n;
		p->strings = pcalloc(pl, a->n, sizeof(ProtobufCBinaryData));
		if (!p->strings)
			return NULL;
		for (size_t i = 0; i < a->n; i++) {
			p->strings[i].data = (uint8_t *)a->strings[i];
			p->strings[i].len = strlen(a->strings[i]);
		}
		break;
	case IR_ATTR_TENSOR:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
		p->t = pcalloc(pl, 1, sizeof(*p->t));
		if (!p->t)
			return NULL;
		onnx_tensor_encode(a->t, "", p->t);
		break;
	default:
		return NULL;
	}
	return p;
}

/* Internal attributes are not ONNX: they are dropped (onnx_to_opset wrote
 * coerce2d's meaning into the opset's own form). */
int onnx_internal_attr(const char *name)
{
	return !strcmp(name, "coerce2d") || !strcmp(name, "accumulate_f32") || !strcmp(name, "captures");
}

static int write_model(const struct ir_graph *g, const char *path, int opset,
		       struct ir_error *e)
{
	struct pool pl = { 0 };
	Onnx__ModelProto m;
	Onnx__GraphProto gp;
	Onnx__OperatorSetIdProto ops;
	Onnx__OperatorSetIdProto *opsp = &ops;
	size_t ninit = 0, nnodes = 0, len;
	uint8_t *buf = NULL;
	struct ir_tensor *views;
	int r = -1;

	onnx__model_proto__init(&m);
	onnx__graph_proto__init(&gp);
	onnx__operator_set_id_proto__init(&ops);
	ops.domain = "";
	ops.has_version = 1;
	ops.version = opset;
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.producer_name = "ipu-compile";
	m.n_opset_import = 1;
	m.opset_import = &opsp;
	/* the custom operators' domains, at the model's versions */
	if (g->ndomains) {
		Onnx__OperatorSetIdProto *ids = pcalloc(&pl, (size_t)g->ndomains, sizeof(*ids));
		Onnx__OperatorSetIdProto **list = pcalloc(&pl, (size_t)g->ndomains + 1, sizeof(*list));

		if (pl.failed)
			goto oom;
		list[0] = &ops;
		for (int d = 0; d < g->ndomains; d++) {
			onnx__operator_set_id_proto__init(&ids[d]);
			ids[d].domain = (char *)g->domains[d].name;
			ids[d].has_version = 1;
			ids[d].version = g->domains[d].version;
			list[d + 1] = &ids[d];
		}
		m.n_opset_import = (size_t)g->ndomains + 1;
		m.opset_import = list;
	}
	m.graph = &gp;
	gp.name = g->name ? g->name : "graph";

	views = pcalloc(&pl, (size_t)g->nvals, sizeof(*views));
	gp.initializer = pcalloc(&pl, (size_t)g->nvals, sizeof(*gp.initializer));
	gp.node = pcalloc(&pl, (size_t)g->nnodes, sizeof(*gp.node));
	gp.input = pcalloc(&pl, (size_t)g->ninputs, sizeof(*gp.input));
	gp.output = pcalloc(&pl, (size_t)g->noutputs, sizeof(*gp.output));
	gp.value_info = pcalloc(&pl, (size_t)g->nvals, sizeof(*gp.value_info));
	if (pl.failed)
		goto oom;
	for (int i = 0; i < g->nvals; i++) {
		const struct ir_value *v = &g->vals[i];
		Onnx__TensorProto *tp;

		if (!v->data)
			continue;
		tp = pcalloc(&pl, 1, sizeof(*tp));
		if (!tp)
			goto oom;
		ir_value_view(v, &views[i]);
		onnx_tensor_encode(&views[i], v->name, tp);
		gp.initializer[ninit++] = tp;
	}
	gp.n_initializer = ninit;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];
		Onnx__NodeProto *np;
		size_t na = 0;

		if (n->dead)
			continue;
		/* static control flow was expanded by shape inference; what
		 * stays a node keeps subgraphs this writer does not encode */
		for (int k = 0; k < n->nattrs; k++)
			if (n->attrs[k].type == IR_ATTR_GRAPH) {
				ir_node_err(e, g, n, "control flow that stays a node (subgraph '%s') cannot be exported",
					    n->attrs[k].name);
				goto out;
			}
		np = pcalloc(&pl, 1, sizeof(*np));
		if (!np)
			goto oom;
		onnx__node_proto__init(np);
		np->name = n->name;
		np->op_type = n->op;
		np->domain = "";
		{
			const char *sep = strstr(n->op, "::");
			char *dom;

			if (sep) {
				/* "domain::op_type" (compiler/custom/) */
				dom = pcalloc(&pl, (size_t)(sep - n->op) + 1, 1);
				if (!dom)
					goto oom;
				memcpy(dom, n->op, (size_t)(sep - n->op));
				np->domain = dom;
				np->op_type = (char *)sep + 2;
			}
		}
		np->n_input = (size_t)n->nin;
		np->input = pcalloc(&pl, (size_t)n->nin, sizeof(char *));
		np->n_output = (size_t)n->nout;
		np->output = pcalloc(&pl, (size_t)n->nout, sizeof(char *));
		np->attribute = pcalloc(&pl, (size_t)n->nattrs, sizeof(*np->attribute));
		if (pl.failed)
			goto oom;
		for (int k = 0; k < n->nin; k++)
			np->input[k] = n->in[k] >= 0 ? g->vals[n->in[k]].name : "";
		for (int k = 0; k < n->nout; k++)
			np->output[k] = g->vals[n->out[k]].name;
		for (int k = 0; k < n->nattrs; k++) {
			if (onnx_internal_attr(n->attrs[k].name))
				continue;
			np->attribute[na] = attr(&pl, &n->attrs[k]);
			if (!np->attribute[na])
				goto oom;
			na++;
		}
		np->n_attribute = na;
		gp.node[nnodes++] = np;
	}
	gp.n_node = nnodes;
	for (int i = 0; i < g->ninputs; i++)
		if (!(gp.input[i] = value_info(&pl, &g->vals[g->inputs[i]])))
			goto oom;
	gp.n_input = (size_t)g->ninputs;
	for (int i = 0; i < g->noutputs; i++)
		if (!(gp.output[i] = value_info(&pl, &g->vals[g->outputs[i]])))
			goto oom;
	gp.n_output = (size_t)g->noutputs;
	for (int i = 0; i < g->nvals; i++) {
		const struct ir_value *v = &g->vals[i];

		if (v->data || v->is_input || v->is_output || v->producer < 0 ||
		    v->dtype == IR_UNDEFINED)
			continue;
		if (!(gp.value_info[gp.n_value_info] = value_info(&pl, v)))
			goto oom;
		gp.n_value_info++;
	}
	len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto oom;
	onnx__model_proto__pack(&m, buf);
	{
		char msg[512];

		if (ipurt_write_file_atomic(path, buf, len, msg, sizeof(msg))) {
			ir_err(e, "cannot write the ONNX model: %s", msg);
			goto out;
		}
	}
	r = 0;
	goto out;
oom:
	ir_err(e, "out of memory exporting ONNX");
out:
	free(buf);
	pool_free(&pl);
	return r;
}

int onnx_save_file(const struct ir_graph *g, const char *path,
		   struct ir_error *e)
{
	struct ir_graph *c = onnx_to_opset(g, ONNX_OPSET_MAX, 0, e);
	int r;

	if (!c)
		return -1;
	r = write_model(c, path, ONNX_OPSET_MAX, e);
	ir_graph_free(c);
	return r;
}

int onnx_save_file_opset(const struct ir_graph *g, const char *path, int opset,
			 struct ir_error *e)
{
	struct ir_graph *c = onnx_to_opset(g, opset, 1, e);
	int r;

	if (!c)
		return -1;
	r = write_model(c, path, opset, e);
	ir_graph_free(c);
	return r;
}
