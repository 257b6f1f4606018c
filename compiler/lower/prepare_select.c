/* SPDX-License-Identifier: MIT */
/* prepare_select.c - Compress with its constant condition (shape
 * inference requires it) becomes a Gather of the kept indices along the
 * axis (of the flattened data without an axis): run-time data at constant
 * indices, exchange copies spread over tiles (lower_gather_const.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prepare_rw.h"

int lp_prep_compress(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *c = &g->vals[n->in[1]];
	int has_axis = ir_attr_find(n, "axis") != NULL;
	int64_t axis = ir_attr_int(n, "axis", 0), nc = ir_value_numel(c), kept = 0;
	struct lp_rw r = { g, *pi, "", e };
	struct ir_tensor t;
	int x = n->in[0], idx, in[2];

	snprintf(r.name, sizeof(r.name), "%s", n->name);
	for (int64_t j = 0; j < nc; j++)
		kept += ir_get_f(c->data, c->dtype, (size_t)j) != 0;
	if ((idx = ir_value_add_unique(g, "kept", e)) < 0 || ir_tensor_alloc(&t, IR_I32, 1, &kept, e))
		return -1;
	for (int64_t j = 0, k = 0; j < nc; j++)
		if (ir_get_f(c->data, c->dtype, (size_t)j) != 0)
			ir_set_i(t.data, IR_I32, (size_t)k++, j);
	ir_value_set_const(&g->vals[idx], &t);
	if (!has_axis) {
		int64_t m1 = -1;
		int s = lp_rw_shape(&r, &m1, 1);

		if (s < 0 || (x = lp_rw_add(&r, "Reshape", x, s)) < 0)
			return -1;
		axis = 0;
	}
	in[0] = x;
	in[1] = idx;
	*pi = r.pos;
	if (lp_rw_become(&r, "Gather", in, 2))
		return -1;
	return ir_attr_set_int(&g->nodes[r.pos], "axis", axis, e);
}
