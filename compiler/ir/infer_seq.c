/* SPDX-License-Identifier: MIT */
/* infer_seq.c - shape inference of ReverseSequence and Det. */
#include "infer_internal.h"

int ir_infer_reverse_sequence(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *l = ir_in(g, n, 1);
	int b = ir_axis(ir_attr_int(n, "batch_axis", 1), x->rank);
	int t = ir_axis(ir_attr_int(n, "time_axis", 0), x->rank);

	if (x->rank < 2 || b < 0 || t < 0 || b == t || b > 1 || t > 1)
		return ir_node_err(e, g, n, "batch_axis and time_axis must be 0 and 1 (either way) of an input of rank >= 2");
	if (!ir_dtype_is_int(l->dtype) || l->rank != 1 || l->dims[0] != x->dims[b])
		return ir_node_err(e, g, n, "sequence_lens must be %lld integers, one per batch entry",
				   (long long)x->dims[b]);
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_det(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return ir_node_err(e, g, n, "input must be [..., M, M]");
	return ir_set_out(g, n, 0, x->dtype, x->rank - 2, x->dims);
}
