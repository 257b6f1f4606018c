/* SPDX-License-Identifier: MIT */
/*
 * normalize.c - rewrites opset differences into the one internal form
 * (Documentation/compiler/guide.md, "Internal form"), after models of
 * opsets 1 to 6 are brought to the opset-7 form (legacy.c):
 *  - Constant nodes become constant values;
 *  - attributes that later opsets turned into inputs become constant inputs:
 *    Slice (starts, ends, axes, steps < 10), Squeeze/Unsqueeze/Split and
 *    ReduceX axes (< 13 / < 18), Clip min/max (< 11), Pad pads/value (< 11),
 *    TopK k (< 10);
 *  - Upsample and Resize-10 become Resize (X, roi, scales, sizes) with the
 *    coordinate mode they implied (asymmetric, floor);
 *  - Softmax/LogSoftmax/Hardmax before 13 get coerce2d = 1.
 * Each rewrite of a registry operator is the `upgrade` hook of its line in
 * ops/ops.def.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ir.h"
#include "ops/registry.h"

static int add_const(struct ir_graph *g, const char *base, int dtype, int rank,
		     const int64_t *dims, const void *vals, struct ir_error *e)
{
	struct ir_tensor t;
	int v = ir_value_add_unique(g, base, e);

	if (v < 0 || ir_tensor_alloc(&t, dtype, rank, dims, e))
		return -1;
	memcpy(t.data, vals, ir_tensor_bytes(&t));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int add_ints(struct ir_graph *g, struct ir_node *n, const char *what,
		    const int64_t *v, size_t cnt, struct ir_error *e)
{
	char base[256];
	int64_t d = (int64_t)cnt;

	snprintf(base, sizeof(base), "%s_%s", n->name, what);
	return add_const(g, base, IR_I64, 1, &d, v, e);
}

/* Sets input k (growing the input list with omitted inputs). */
static int set_input(struct ir_node *n, int k, int v, struct ir_error *e)
{
	if (k >= n->nin) {
		int *ni = realloc(n->in, (size_t)(k + 1) * sizeof(int));

		if (!ni)
			return ir_err(e, "out of memory");
		n->in = ni;
		for (int i = n->nin; i <= k; i++)
			n->in[i] = -1;
		n->nin = k + 1;
	}
	n->in[k] = v;
	return 0;
}

/* Moves INTS attribute `attr` to input k (if the attribute is present). */
static int ints_to_input(struct ir_graph *g, struct ir_node *n,
			 const char *attr, int k, struct ir_error *e)
{
	size_t cnt;
	const int64_t *v = ir_attr_ints(n, attr, &cnt);
	int c;

	if (!v)
		return 0;
	c = add_ints(g, n, attr, v, cnt, e);
	if (c < 0 || set_input(n, k, c, e))
		return -1;
	ir_attr_remove(n, attr);
	return 0;
}

static int constant(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	const struct ir_attr *a = n->nattrs == 1 ? &n->attrs[0] : NULL;
	struct ir_tensor t;
	struct ir_value *out = &g->vals[n->out[0]];

	if (!a)
		return ir_node_err(e, g, n, "needs exactly one value attribute");
	if (!strcmp(a->name, "value") && a->type == IR_ATTR_TENSOR) {
		if (ir_tensor_alloc(&t, a->t->dtype, a->t->rank, a->t->dims, e))
			return -1;
		memcpy(t.data, a->t->data, ir_tensor_bytes(&t));
	} else if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
		int dt = a->name[6] == 'f' ? IR_F32 : IR_I64;

		if (ir_tensor_alloc(&t, dt, 0, NULL, e))
			return -1;
		if (dt == IR_F32)
			ir_set_f(t.data, dt, 0, a->f);
		else
			ir_set_i(t.data, dt, 0, a->i);
	} else if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
		int dt = a->name[6] == 'f' ? IR_F32 : IR_I64;
		int64_t d = (int64_t)a->n;

		if (ir_tensor_alloc(&t, dt, 1, &d, e))
			return -1;
		for (size_t i = 0; i < a->n; i++) {
			if (dt == IR_F32)
				ir_set_f(t.data, dt, i, a->floats[i]);
			else
				ir_set_i(t.data, dt, i, a->ints[i]);
		}
	} else {
		return ir_node_err(e, g, n, "attribute '%s' is not supported (string and sparse constants are not)", a->name);
	}
	ir_value_set_const(out, &t);
	n->dead = 1;
	return 0;
}

static int clip(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	const char *names[2] = { "min", "max" };

	for (int k = 0; k < 2; k++) {
		const struct ir_attr *a = ir_attr_find(n, names[k]);
		float f;
		int c;

		if (!a)
			continue;
		f = (float)a->f;
		c = add_const(g, names[k], IR_F32, 0, NULL, &f, e);
		if (c < 0 || set_input(n, k + 1, c, e))
			return -1;
		ir_attr_remove(n, names[k]);
	}
	return 0;
}

static int pad(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	const struct ir_attr *v = ir_attr_find(n, "value");

	if (ints_to_input(g, n, "pads", 1, e))
		return -1;
	if (v) {
		float f = (float)v->f;
		int c = add_const(g, "pad_value", IR_F32, 0, NULL, &f, e);

		if (c < 0 || set_input(n, 2, c, e))
			return -1;
		ir_attr_remove(n, "value");
	}
	return 0;
}

static int topk(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	const struct ir_attr *k = ir_attr_find(n, "k");
	int64_t kv;

	if (!k)
		return 0;
	kv = k->i;
	{
		int c = add_ints(g, n, "k", &kv, 1, e);

		if (c < 0 || set_input(n, 1, c, e))
			return -1;
	}
	ir_attr_remove(n, "k");
	return 0;
}

/* Upsample(X, scales) / Resize-10(X, scales) -> Resize(X, -, scales). */
static int to_resize(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	const struct ir_attr *sa = ir_attr_find(n, "scales");
	int sc = n->nin > 1 ? n->in[1] : -1;

	if (sa) { /* Upsample-7: attribute */
		int64_t d = (int64_t)sa->n;
		float *f = malloc((sa->n ? sa->n : 1) * sizeof(float));

		if (!f)
			return ir_err(e, "out of memory");
		for (size_t i = 0; i < sa->n; i++)
			f[i] = (float)sa->floats[i];
		sc = add_const(g, "scales", IR_F32, 1, &d, f, e);
		free(f);
		if (sc < 0)
			return -1;
		ir_attr_remove(n, "scales");
	}
	if (set_input(n, 2, sc, e) || set_input(n, 1, -1, e))
		return -1;
	if (ir_attr_set_str(n, "coordinate_transformation_mode", "asymmetric", e) ||
	    ir_attr_set_str(n, "nearest_mode", "floor", e))
		return -1;
	if (!strcmp(ir_attr_str(n, "mode", "nearest"), "bilinear") &&
	    ir_attr_set_str(n, "mode", "linear", e))
		return -1;
	return ir_node_set_op(n, "Resize", e);
}

int ir_up_slice(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	if (opset >= 10)
		return 0;
	return ints_to_input(g, n, "starts", 1, e) || ints_to_input(g, n, "ends", 2, e) ||
	       ints_to_input(g, n, "axes", 3, e);
}

/* Squeeze, Unsqueeze */
int ir_up_axes(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	return opset < 13 ? ints_to_input(g, n, "axes", 1, e) : 0;
}

int ir_up_split(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	return opset < 13 ? ints_to_input(g, n, "split", 1, e) : 0;
}

/* ReduceSum took its axes as an input from 13, the others from 18. */
int ir_up_reduce(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	if (opset >= 13 && n->opid == IR_OP_ReduceSum)
		return 0;
	return ints_to_input(g, n, "axes", 1, e);
}

int ir_up_clip(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	return opset < 11 ? clip(g, n, e) : 0;
}

int ir_up_pad(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	return opset < 11 ? pad(g, n, e) : 0;
}

int ir_up_topk(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	return opset < 10 ? topk(g, n, e) : 0;
}

int ir_up_resize(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	return opset < 11 ? to_resize(g, n, e) : 0;
}

/* Softmax, LogSoftmax, Hardmax: before 13, over the input coerced to 2-D
 * at `axis` (default 1). */
int ir_up_softmax(struct ir_graph *g, struct ir_node *n, int opset, struct ir_error *e)
{
	int r;

	(void)g;
	if (opset >= 13)
		return 0;
	r = ir_attr_set_int(n, "coerce2d", 1, e);
	if (!r && !ir_attr_find(n, "axis"))
		r = ir_attr_set_int(n, "axis", 1, e);
	return r;
}

int ir_normalize(struct ir_graph *g, struct ir_error *e)
{
	int opset = g->opset;

	if (ir_convert_legacy(g, e))
		return -1;

	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];
		const struct ir_op_desc *d;
		int r = 0;

		if (n->dead)
			continue;
		/* If branches and Loop/Scan bodies: the same opset */
		for (int k = 0; k < n->nattrs; k++)
			if (n->attrs[k].g && ir_normalize(n->attrs[k].g, e))
				return -1;
		/* Constant and Upsample have no internal form of their own */
		if (!strcmp(n->op, "Constant"))
			r = constant(g, n, e);
		else if (!strcmp(n->op, "Upsample"))
			r = to_resize(g, n, e);
		else if ((d = ir_node_desc(n)) && d->upgrade)
			r = d->upgrade(g, n, opset, e);
		if (r)
			return -1;
	}
	ir_graph_link(g);
	return 0;
}
