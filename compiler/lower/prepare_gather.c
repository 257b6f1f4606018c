/* SPDX-License-Identifier: MIT */
/*
 * prepare_gather.c - a Gather of one constant index from run-time data (a
 * vision transformer's class token, x[:, 0]) is a Slice plus a Reshape:
 * the Slice is a strided copy spread over tiles, where a Gather of run-time
 * data puts its whole input on one tile.
 */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

static int const_i64(struct ir_graph *g, const char *base, int64_t v, struct ir_error *e)
{
	struct ir_tensor t;
	int64_t one = 1;
	int x = ir_value_add_unique(g, base, e);

	if (x < 0 || ir_tensor_alloc(&t, IR_I64, 1, &one, e))
		return -1;
	ir_set_i(t.data, IR_I64, 0, v);
	ir_value_set_const(&g->vals[x], &t);
	return x;
}

int lp_gather_slice(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *idx = &g->vals[n->in[1]];
	const struct ir_value *o = &g->vals[n->out[0]];
	int64_t axis = ir_attr_int(n, "axis", 0), i, shape[IR_MAX_RANK];
	int in[5], s, pos = *pi, sh;
	char name[256];

	if (x->data || !idx->data || ir_value_numel(idx) != 1)
		return 0;
	if (axis < 0)
		axis += x->rank;
	i = ir_get_i(idx->data, idx->dtype, 0);
	if (i < 0)
		i += x->dims[axis];
	if (axis < 0 || axis >= x->rank || i < 0 || i >= x->dims[axis])
		return ir_node_err(e, g, n, "index %lld is outside dimension %lld (%lld)",
				   (long long)ir_get_i(idx->data, idx->dtype, 0), (long long)axis,
				   (long long)(axis >= 0 && axis < x->rank ? x->dims[axis] : 0));
	for (int k = 0; k < o->rank; k++)
		shape[k] = o->dims[k];
	snprintf(name, sizeof(name), "%s", n->name);
	in[0] = n->in[0];
	if ((in[1] = const_i64(g, "gather_start", i, e)) < 0 ||
	    (in[2] = const_i64(g, "gather_end", i + 1, e)) < 0 ||
	    (in[3] = const_i64(g, "gather_axis", axis, e)) < 0 ||
	    (s = lp_add_node(g, &pos, name, "Slice", in, 4, e)) < 0)
		return -1;
	{
		struct ir_tensor t;
		int64_t r = o->rank;

		sh = ir_value_add_unique(g, "gather_shape", e);
		if (sh < 0 || ir_tensor_alloc(&t, IR_I64, 1, &r, e))
			return -1;
		memcpy(t.data, shape, (size_t)r * sizeof(int64_t));
		ir_value_set_const(&g->vals[sh], &t);
	}
	/* the Gather node becomes the Reshape writing its output */
	n = &g->nodes[pos];
	n->in[0] = s;
	n->in[1] = sh;
	ir_attr_remove(n, "axis");
	*pi = pos;
	return ir_node_set_op(n, "Reshape", e);
}
