/* SPDX-License-Identifier: MIT */
/*
 * wide_types.c - types the device has no arithmetic for become the nearest
 * it has: float64 -> float32, int16 and uint16 -> int32.  Every value of
 * those types (graph inputs and outputs too: the executable's anchors then
 * take and give the converted type, the caller converts at the host
 * boundary), every constant's data, and the types Cast, EyeLike and
 * ConstantOfShape produce.  Shape inference then runs again.
 */
#include <string.h>

#include "ipu/passes.h"
#include "ops/registry.h"

static int target(int dt)
{
	switch (dt) {
	case IR_F64: return IR_F32;
	case IR_I16: case IR_U16: return IR_I32;
	default: return dt;
	}
}

static int convert_tensor(struct ir_tensor *t, struct ir_error *e)
{
	struct ir_tensor c;
	int64_t n = ir_numel(t->rank, t->dims);
	int to = target(t->dtype);

	if (to == t->dtype)
		return 0;
	if (ir_tensor_alloc(&c, to, t->rank, t->dims, e))
		return -1;
	for (int64_t i = 0; i < n; i++) {
		if (to == IR_F32)
			ir_set_f(c.data, to, (size_t)i, ir_get_f(t->data, t->dtype, (size_t)i));
		else
			ir_set_i(c.data, to, (size_t)i, ir_get_i(t->data, t->dtype, (size_t)i));
	}
	ir_tensor_free(t);
	*t = c;
	return 1;
}

int ir_pass_wide_types(struct ir_graph *g, struct ir_error *e)
{
	int n = 0;

	for (int v = 0; v < g->nvals; v++) {
		struct ir_value *x = &g->vals[v];
		int to = target(x->dtype);

		if (to == x->dtype)
			continue;
		if (x->data) {
			struct ir_tensor t;

			if (ir_tensor_alloc(&t, to, x->rank, x->dims, e))
				return -1;
			for (int64_t i = 0; i < ir_value_numel(x); i++) {
				if (to == IR_F32)
					ir_set_f(t.data, to, (size_t)i, ir_get_f(x->data, x->dtype, (size_t)i));
				else
					ir_set_i(t.data, to, (size_t)i, ir_get_i(x->data, x->dtype, (size_t)i));
			}
			ir_value_set_const(x, &t);
		}
		x->dtype = to;
		n++;
	}
	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *nd = &g->nodes[i];

		if (nd->dead)
			continue;
		for (int k = 0; k < nd->nattrs; k++) {
			struct ir_attr *a = &nd->attrs[k];
			int r;

			if (a->type == IR_ATTR_INT && ((nd->opid == IR_OP_Cast && !strcmp(a->name, "to")) ||
						      (nd->opid == IR_OP_EyeLike && !strcmp(a->name, "dtype"))) &&
			    target((int)a->i) != a->i) {
				a->i = target((int)a->i);
				n++;
			}
			if (a->type == IR_ATTR_TENSOR && a->t && (r = convert_tensor(a->t, e)) != 0) {
				if (r < 0)
					return -1;
				n++;
			}
		}
	}
	return n;
}
