/* SPDX-License-Identifier: MIT */
/*
 * int64.c - int64 -> int32 where it is safe.  The device computes in i32;
 * int64 is storage only.  A constant int64 tensor whose every reader uses
 * it as gather indices (Gather, GatherElements input 1) and whose values fit
 * in int32 is converted.  Shape parameters (Reshape shape, Slice starts...)
 * are consumed at compile time and need no conversion.
 */
#include <string.h>

#include "ipu/passes.h"
#include "ops/registry.h"

static int index_slot(const struct ir_node *n, int k)
{
	return k == 1 && (n->opid == IR_OP_Gather || n->opid == IR_OP_GatherElements);
}

int ir_pass_int64_to_int32(struct ir_graph *g, struct ir_error *e)
{
	int converted = 0;

	for (int v = 0; v < g->nvals; v++) {
		struct ir_value *x = &g->vals[v];
		int ok = 1, uses = 0;
		int64_t cnt;
		struct ir_tensor t;

		if (x->dtype != IR_I64 || !x->data || x->is_output)
			continue;
		for (int i = 0; i < g->nnodes && ok; i++) {
			const struct ir_node *n = &g->nodes[i];

			if (n->dead)
				continue;
			for (int k = 0; k < n->nin; k++) {
				if (n->in[k] != v)
					continue;
				uses++;
				if (!index_slot(n, k))
					ok = 0;
			}
		}
		if (!ok || !uses)
			continue;
		cnt = ir_value_numel(x);
		for (int64_t i = 0; i < cnt && ok; i++) {
			int64_t a = ir_get_i(x->data, IR_I64, (size_t)i);

			ok = a >= INT32_MIN && a <= INT32_MAX;
		}
		if (!ok)
			continue;
		if (ir_tensor_alloc(&t, IR_I32, x->rank, x->dims, e))
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			ir_set_i(t.data, IR_I32, (size_t)i, ir_get_i(x->data, IR_I64, (size_t)i));
		ir_value_set_const(x, &t);
		converted++;
	}
	return converted;
}
