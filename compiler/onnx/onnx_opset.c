/* SPDX-License-Identifier: MIT */
/*
 * onnx_opset.c - the internal form written as a given opset of the default
 * domain (--export-onnx, --convert-version N).
 *
 * The internal form takes as inputs what later opsets made inputs (Slice's
 * starts/ends/axes/steps, Squeeze/Unsqueeze/Split axes, every Reduce's
 * axes, Clip's bounds, Pad's pads and value, TopK's k); for an opset in
 * which they are attributes, constant inputs move back into attributes.
 * Softmax-family nodes are written in the opset's own meaning: the internal
 * `coerce2d` (flatten the axes from `axis` on) is the meaning before opset
 * 13, a plain axis the meaning from 13 on.  Every node is then checked
 * against ONNX's schema of that opset (the operator exists, takes that many
 * inputs and those attributes); what cannot be written is refused naming
 * the node.  Not strict, an op newer than python3-onnx's schemas (Gelu, an
 * internal op from opset 20) is written as it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/onnx_io.h"
#include "onnx_attr_schema.h"
#include "onnx_internal.h"
#include "ops/registry.h"

/* The first opset in which an op took input `input` instead of attribute
 * `attr`. */
struct moved {
	const char *op;		/* "Reduce" matches every ReduceX */
	int input;
	const char *attr;
	int since;
	int kind;		/* IR_ATTR_INTS, IR_ATTR_INT or IR_ATTR_FLOAT */
};

static const struct moved moved[] = {
	{ "Slice", 1, "starts", 10, IR_ATTR_INTS },
	{ "Slice", 2, "ends", 10, IR_ATTR_INTS },
	{ "Slice", 3, "axes", 10, IR_ATTR_INTS },
	{ "Squeeze", 1, "axes", 13, IR_ATTR_INTS },
	{ "Unsqueeze", 1, "axes", 13, IR_ATTR_INTS },
	{ "Split", 1, "split", 13, IR_ATTR_INTS },
	{ "ReduceSum", 1, "axes", 13, IR_ATTR_INTS },
	{ "Reduce", 1, "axes", 18, IR_ATTR_INTS },
	{ "Clip", 1, "min", 11, IR_ATTR_FLOAT },
	{ "Clip", 2, "max", 11, IR_ATTR_FLOAT },
	{ "Pad", 1, "pads", 11, IR_ATTR_INTS },
	{ "Pad", 2, "value", 11, IR_ATTR_FLOAT },
	{ "TopK", 1, "k", 10, IR_ATTR_INT },
	{ "Dropout", 1, "ratio", 12, IR_ATTR_FLOAT },
};

static int matches(const char *pattern, const char *op)
{
	if (!strcmp(pattern, "Reduce"))
		return !strncmp(op, "Reduce", 6) && strcmp(op, "ReduceSum");
	return !strcmp(pattern, op);
}

static int to_attr(struct ir_graph *g, struct ir_node *n, const struct moved *m,
		   int opset, struct ir_error *e)
{
	const struct ir_value *v;
	int64_t cnt;
	int r;

	if (m->input >= n->nin || n->in[m->input] < 0)
		return 0;
	v = &g->vals[n->in[m->input]];
	if (!v->data)
		return ir_node_err(e, g, n, "input %d ('%s') is computed at run time; in opset %d it is the attribute '%s', a constant",
				   m->input, v->name, opset, m->attr);
	cnt = ir_value_numel(v);
	if (m->kind == IR_ATTR_INTS) {
		int64_t *x = malloc((size_t)(cnt ? cnt : 1) * sizeof(*x));

		if (!x)
			return ir_err(e, "out of memory");
		for (int64_t i = 0; i < cnt; i++)
			x[i] = ir_get_i(v->data, v->dtype, (size_t)i);
		r = ir_attr_set_ints(n, m->attr, x, (size_t)cnt, e);
		free(x);
	} else if (cnt != 1) {
		return ir_node_err(e, g, n, "input %d ('%s') has %lld elements; opset %d's attribute '%s' is one value",
				   m->input, v->name, (long long)cnt, opset, m->attr);
	} else if (m->kind == IR_ATTR_INT) {
		r = ir_attr_set_int(n, m->attr, ir_get_i(v->data, v->dtype, 0), e);
	} else {
		r = ir_attr_set_float(n, m->attr, ir_get_f(v->data, v->dtype, 0), e);
	}
	n->in[m->input] = -1;
	return r;
}

/* The other way: an attribute of an older opset that is an input in the
 * one written (a Dropout of opset 7 to 11 written in 12 or later). */
static int to_input(struct ir_graph *g, struct ir_node *n, const struct moved *m,
		    struct ir_error *e)
{
	const struct ir_attr *a = ir_attr_find(n, m->attr);
	struct ir_tensor t;
	char base[300];
	int v, *ni;

	if (!a || m->kind != IR_ATTR_FLOAT || (m->input < n->nin && n->in[m->input] >= 0))
		return 0;
	snprintf(base, sizeof(base), "%s_%s", n->name, m->attr);
	v = ir_value_add_unique(g, base, e);
	if (v < 0 || ir_tensor_alloc(&t, IR_F32, 0, NULL, e))
		return -1;
	ir_set_f(t.data, IR_F32, 0, a->f);
	ir_value_set_const(&g->vals[v], &t);
	if (m->input >= n->nin) {
		ni = realloc(n->in, (size_t)(m->input + 1) * sizeof(int));
		if (!ni)
			return ir_err(e, "out of memory");
		n->in = ni;
		for (int k = n->nin; k <= m->input; k++)
			n->in[k] = -1;
		n->nin = m->input + 1;
	}
	n->in[m->input] = v;
	ir_attr_remove(n, m->attr);
	return 0;
}

static int softmax(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	const struct ir_value *x = &g->vals[n->in[0]];
	/* without coerce2d the internal form means opset 13's (default -1);
	 * with it, normalisation wrote the axis */
	int64_t axis = ir_attr_int(n, "axis", -1);
	int last = axis == -1 || axis == x->rank - 1;

	if (ir_attr_find(n, "coerce2d")) {
		if (opset >= 13 && !last)
			return ir_node_err(e, g, n, "works on the axes from %lld on flattened (the meaning before opset 13), which opset %d's %s cannot express; use an opset below 13",
					   (long long)axis, opset, n->op);
		ir_attr_remove(n, "coerce2d");
		return 0;
	}
	if (opset < 13 && !last)
		return ir_node_err(e, g, n, "works on axis %lld alone (the meaning from opset 13 on), which opset %d's %s cannot express; use opset 13 or later",
				   (long long)axis, opset, n->op);
	if (opset < 13 && !ir_attr_find(n, "axis"))
		return ir_attr_set_int(n, "axis", -1, e);
	return 0;
}

/* Negative axes were allowed from opset 11 on: below, they are counted
 * from the front (of the output for Unsqueeze, of input 0 otherwise). */
static void positive_axes(struct ir_graph *g, struct ir_node *n)
{
	int rank = n->opid == IR_OP_Unsqueeze ? g->vals[n->out[0]].rank :
		   n->nin && n->in[0] >= 0 ? g->vals[n->in[0]].rank : 0;
	struct ir_attr *a;

	for (int k = 0; k < n->nattrs; k++) {
		a = &n->attrs[k];
		if (!strcmp(a->name, "axis") && a->type == IR_ATTR_INT && a->i < 0)
			a->i += rank;
		if (!strcmp(a->name, "axes") && a->type == IR_ATTR_INTS)
			for (size_t j = 0; j < a->n; j++)
				if (a->ints[j] < 0)
					a->ints[j] += rank;
	}
}

/* The schema of `op` in effect at `opset` (NULL: none); *first receives the
 * opset that introduced the op (0: not an ONNX operator). */
static const struct onnx_op_version *schema(const char *op, int opset, int *first)
{
	const struct onnx_op_version *best = NULL;

	*first = 0;
	for (unsigned i = 0; i < onnx_op_version_count; i++) {
		const struct onnx_op_version *s = &onnx_op_versions[i];

		if (strcmp(s->op, op))
			continue;
		if (!*first || s->since < *first)
			*first = s->since;
		if (s->since <= opset && (!best || s->since > best->since))
			best = s;
	}
	return best;
}

static int check_node(const struct ir_graph *g, const struct ir_node *n, int opset,
		      int strict, struct ir_error *e)
{
	int first, nin = n->nin;
	const struct onnx_op_version *s;

	/* a custom operator is written in its own domain, as it came */
	if (strstr(n->op, "::"))
		return 0;
	s = schema(n->op, opset, &first);
	if (!s && !first && !strict)
		return 0;
	if (!s && !first)
		return ir_node_err(e, g, n, "%s is not an operator of ONNX's default domain up to opset %d (as python3-onnx knows it)",
				   n->op, ONNX_OPSET_MAX);
	if (!s)
		return ir_node_err(e, g, n, "%s first appears in opset %d; it cannot be written in opset %d",
				   n->op, first, opset);
	while (nin > 0 && n->in[nin - 1] < 0)
		nin--;
	if (nin < s->min_inputs || nin > s->max_inputs)
		return ir_node_err(e, g, n, "has %d inputs; %s of opset %d takes %d to %d",
				   nin, n->op, opset, s->min_inputs, s->max_inputs);
	if (n->nout < s->min_outputs || n->nout > s->max_outputs)
		return ir_node_err(e, g, n, "has %d outputs; %s of opset %d gives %d to %d",
				   n->nout, n->op, opset, s->min_outputs, s->max_outputs);
	for (int k = 0; k < nin + n->nout; k++) {
		int out = k >= nin, j = out ? k - nin : k, v = out ? n->out[j] : n->in[j];
		int nf = out ? s->n_out_types : s->n_in_types;
		unsigned m;
		int dt;

		if (v < 0 || !nf || g->vals[v].dtype == IR_UNDEFINED)
			continue;
		m = (out ? s->out_types : s->in_types)[j < nf ? j : nf - 1];
		dt = g->vals[v].dtype;
		if (m && !(m & (1u << dt)))
			return ir_node_err(e, g, n, "%s %d ('%s') is %s, a type %s of opset %d does not take",
					   out ? "output" : "input", j, g->vals[v].name,
					   ir_dtype_name(dt), n->op, opset);
	}
	for (int k = 0; k < n->nattrs; k++) {
		char key[300];

		if (onnx_internal_attr(n->attrs[k].name))
			continue;
		snprintf(key, sizeof(key), "|%s|", n->attrs[k].name);
		if (!strstr(s->attrs, key))
			return ir_node_err(e, g, n, "attribute '%s' does not exist in %s of opset %d",
					   n->attrs[k].name, n->op, opset);
	}
	return 0;
}

struct ir_graph *onnx_to_opset(const struct ir_graph *src, int opset, int strict,
				struct ir_error *e)
{
	struct ir_graph *g;

	if (opset < ONNX_EXPORT_OPSET_MIN || opset > ONNX_OPSET_MAX) {
		ir_err(e, "opset %d cannot be written: models are written in opsets %d to %d",
		       opset, ONNX_EXPORT_OPSET_MIN, ONNX_OPSET_MAX);
		return NULL;
	}
	g = ir_graph_clone(src, e);
	if (!g)
		return NULL;
	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (size_t k = 0; k < sizeof(moved) / sizeof(moved[0]); k++) {
			if (!matches(moved[k].op, n->op))
				continue;
			if (opset < moved[k].since ? to_attr(g, n, &moved[k], opset, e) :
			    to_input(g, n, &moved[k], e))
				goto fail;
			n = &g->nodes[i];
		}
		if (n->opid == IR_OP_Slice && opset < 10 && n->nin > 4 && n->in[4] >= 0) {
			const struct ir_value *st = &g->vals[n->in[4]];

			for (int64_t j = 0; st->data && j < ir_value_numel(st); j++)
				if (ir_get_i(st->data, st->dtype, (size_t)j) != 1) {
					ir_node_err(e, g, n, "has steps other than 1, which Slice of opset %d does not take",
						    opset);
					goto fail;
				}
			if (!st->data) {
				ir_node_err(e, g, n, "has run-time steps, which Slice of opset %d does not take", opset);
				goto fail;
			}
			n->in[4] = -1;
		}
		if ((n->opid == IR_OP_Softmax || n->opid == IR_OP_LogSoftmax ||
		     n->opid == IR_OP_Hardmax) && softmax(g, n, opset, e))
			goto fail;
		if (opset < 11)
			positive_axes(g, n);
		while (n->nin > 1 && n->in[n->nin - 1] < 0)
			n->nin--;
		if (check_node(g, n, opset, strict, e))
			goto fail;
	}
	return g;
fail:
	ir_graph_free(g);
	return NULL;
}
