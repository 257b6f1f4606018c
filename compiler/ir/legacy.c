/* SPDX-License-Identifier: MIT */
/*
 * legacy.c - models of default-domain opsets 1 to 6 rewritten into the
 * opset-7 form ir_normalize() continues from, as onnx's version converter
 * does:
 *  - `consumed_inputs` (opsets 1 to 5), `is_test` (BatchNormalization,
 *    Dropout) and BatchNormalization's `spatial` = 1 are dropped; Gemm's
 *    `broadcast` too, opset 7's unidirectional broadcast of C covers it;
 *  - binary ops with `broadcast` = 1 and an `axis` (B's dimensions lined up
 *    with A's from `axis` on) keep the axis as `legacy_axis`: shape
 *    inference, which knows A's rank, gives B trailing 1s with an
 *    Unsqueeze (ir_legacy_broadcast).  Without an axis the old rule is
 *    suffix matching, i.e. numpy broadcasting, so the attribute just goes;
 *  - PRelu's per-channel slope of shape [C] is lined up at axis 1 the same
 *    way;
 *  - Concat without `axis` (opsets 1 to 3) gets the old default 1;
 *    Reshape's `shape` attribute (opsets 1 to 4) becomes its input; Cast's
 *    `to` given as a type name (opsets 1 to 5) becomes the type number;
 *    Pad's `paddings` (opset 1) is `pads`; Upsample's `height_scale` and
 *    `width_scale` (opset 1) become the scales of opset 7.
 * Ops whose old meaning has no opset-7 equivalent here are refused naming
 * the node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ipu/ir.h"
#include "ops/registry.h"

/* A new constant 1-D tensor value of `cnt` elements. */
static int add_const(struct ir_graph *g, const char *base, int dt, const void *vals,
		     int64_t cnt, struct ir_error *e)
{
	struct ir_tensor t;
	int v = ir_value_add_unique(g, base, e);

	if (v < 0 || ir_tensor_alloc(&t, dt, 1, &cnt, e))
		return -1;
	memcpy(t.data, vals, ir_tensor_bytes(&t));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int add_input(struct ir_node *n, int v, struct ir_error *e)
{
	int *ni = realloc(n->in, (size_t)(n->nin + 1) * sizeof(int));

	if (!ni)
		return ir_err(e, "out of memory");
	n->in = ni;
	n->in[n->nin++] = v;
	return 0;
}

static int binary(struct ir_node *n, struct ir_error *e)
{
	int64_t axis = ir_attr_int(n, "axis", 0);
	int lined_up = ir_attr_int(n, "broadcast", 0) && ir_attr_find(n, "axis");
	ir_attr_remove(n, "broadcast");
	ir_attr_remove(n, "axis");
	return lined_up ? ir_attr_set_int(n, "legacy_axis", axis, e) : 0;
}

static int reshape(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	size_t cnt;
	const int64_t *s = ir_attr_ints(n, "shape", &cnt);
	char base[300];
	int v;

	if (!s)
		return 0;
	if (n->nin > 1)
		return ir_node_err(e, g, n, "has both a shape attribute and a shape input");
	snprintf(base, sizeof(base), "%s_shape", n->name);
	v = add_const(g, base, IR_I64, s, (int64_t)cnt, e);
	if (v < 0 || add_input(n, v, e))
		return -1;
	ir_attr_remove(n, "shape");
	return 0;
}

static int cast(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	/* TensorProto.DataType names, in enum ir_dtype's numbering */
	static const char *const names[] = {
		[IR_F32] = "FLOAT", [IR_U8] = "UINT8", [IR_I8] = "INT8",
		[IR_U16] = "UINT16", [IR_I16] = "INT16", [IR_I32] = "INT32",
		[IR_I64] = "INT64", [IR_STRING] = "STRING", [IR_BOOL] = "BOOL",
		[IR_F16] = "FLOAT16", [IR_F64] = "DOUBLE", [IR_U32] = "UINT32",
		[IR_U64] = "UINT64", [IR_C64] = "COMPLEX64", [IR_C128] = "COMPLEX128",
		[IR_BF16] = "BFLOAT16",
	};
	const struct ir_attr *a = ir_attr_find(n, "to");
	char to[32];

	if (!a || a->type != IR_ATTR_STRING)
		return 0;
	snprintf(to, sizeof(to), "%s", a->s ? a->s : "");
	for (int dt = 1; dt < IR_DTYPE_COUNT; dt++)
		if (names[dt] && !strcasecmp(to, names[dt])) {
			ir_attr_remove(n, "to");
			return ir_attr_set_int(n, "to", dt, e);
		}
	return ir_node_err(e, g, n, "cast to '%s': not an ONNX tensor type name", to);
}

static int pad(struct ir_node *n, struct ir_error *e)
{
	size_t cnt;
	const int64_t *p = ir_attr_ints(n, "paddings", &cnt);
	int r;
	if (!p)
		return 0;
	r = ir_attr_set_ints(n, "pads", p, cnt, e);
	ir_attr_remove(n, "paddings");
	return r;
}

static int upsample(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	float sc[4] = { 1, 1, 1, 1 };
	char base[300];
	int v;

	if (!ir_attr_find(n, "height_scale") && !ir_attr_find(n, "width_scale"))
		return 0;
	sc[2] = (float)ir_attr_float(n, "height_scale", 1);
	sc[3] = (float)ir_attr_float(n, "width_scale", 1);
	snprintf(base, sizeof(base), "%s_scales", n->name);
	v = add_const(g, base, IR_F32, sc, 4, e);
	if (v < 0 || add_input(n, v, e))
		return -1;
	ir_attr_remove(n, "height_scale");
	ir_attr_remove(n, "width_scale");
	return 0;
}

int ir_convert_legacy(struct ir_graph *g, struct ir_error *e)
{
	int opset = g->opset;

	if (opset >= 7)
		return 0;
	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];
		int r = 0;

		if (n->dead)
			continue;
		ir_attr_remove(n, "consumed_inputs");
		if (ir_node_has(n, IR_OP_LEGACY_BCAST)) {
			r = binary(n, e);
		} else if (n->opid == IR_OP_Gemm) {
			ir_attr_remove(n, "broadcast");
		} else if (n->opid == IR_OP_BatchNormalization) {
			if (!ir_attr_int(n, "spatial", 1))
				return ir_node_err(e, g, n, "spatial = 0 (statistics per element, opsets 1 to 8) has no later equivalent; export the model in opset 9 or later");
			ir_attr_remove(n, "spatial");
			ir_attr_remove(n, "is_test");
		} else if (n->opid == IR_OP_Dropout) {
			ir_attr_remove(n, "is_test");
		} else if (n->opid == IR_OP_PRelu) {
			r = ir_attr_set_int(n, "legacy_axis", 1, e);
		} else if (n->opid == IR_OP_Concat && !ir_attr_find(n, "axis")) {
			r = ir_attr_set_int(n, "axis", 1, e);
		} else if (n->opid == IR_OP_Reshape) {
			r = reshape(g, n, e);
		} else if (n->opid == IR_OP_Cast) {
			r = cast(g, n, e);
		} else if (n->opid == IR_OP_Pad) {
			r = pad(n, e);
		} else if (!strcmp(n->op, "Upsample")) {
			r = upsample(g, n, e);
		} else if (n->opid == IR_OP_Tile && opset < 6) {
			return ir_node_err(e, g, n, "Tile of opset %d (a count and an axis as inputs) is not converted; export the model in opset 6 or later",
					   opset);
		}
		if (r)
			return -1;
	}
	return 0;
}

int ir_legacy_broadcast(struct ir_graph *g, int node, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[node];
	const struct ir_value *a, *b;
	int64_t axis = ir_attr_int(n, "legacy_axis", 0), trailing, axes[IR_MAX_RANK];
	char name[300];
	int c, v, in[2];

	ir_attr_remove(n, "legacy_axis");
	if (g->opset >= 7 || n->nin < 2 || n->in[0] < 0 || n->in[1] < 0)
		return 0;
	a = &g->vals[n->in[0]];
	b = &g->vals[n->in[1]];
	/* a single element broadcasts anywhere; PRelu lines up only a
	 * per-channel slope */
	if (ir_value_numel(b) == 1 || (n->opid == IR_OP_PRelu && (b->rank != 1 || a->rank < 2)))
		return 0;
	trailing = a->rank - (axis < 0 ? axis + a->rank : axis) - b->rank;
	if (axis < -a->rank || axis >= a->rank || trailing < 0)
		return ir_node_err(e, g, n, "broadcast of B (rank %d) from axis %lld does not fit A (rank %d)",
				   b->rank, (long long)axis, a->rank);
	if (trailing == 0)
		return 0;
	for (int k = 0; k < trailing; k++)
		axes[k] = b->rank + k;
	snprintf(name, sizeof(name), "%s_axes", n->name);
	c = add_const(g, name, IR_I64, axes, trailing, e);
	snprintf(name, sizeof(name), "%s/broadcast", n->name);
	v = c < 0 ? -1 : ir_value_add_unique(g, name, e);
	if (v < 0)
		return -1;
	in[0] = g->nodes[node].in[1];
	in[1] = c;
	if (ir_node_insert(g, node, g->vals[v].name, "Unsqueeze", in, 2, &v, 1, e) < 0)
		return -1;
	g->nodes[node + 1].in[1] = v;
	ir_graph_link(g);
	return 1;
}
