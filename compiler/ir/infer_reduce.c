/* SPDX-License-Identifier: MIT */
/* infer_reduce.c - shapes of ReduceX and ArgMax/ArgMin. */
#include <string.h>

#include "infer_internal.h"

#define R IR_MAX_RANK

int ir_infer_reduce(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t ax[R], d[R];
	int cnt = 0, red[R] = { 0 }, r = 0;
	int keep = (int)ir_attr_int(n, "keepdims", 1);

	if (ir_in(g, n, 1) && ir_const_ints(g, n, 1, ax, R, &cnt, e))
		return -1;
	if (x->dtype == IR_BOOL)
		return ir_node_err(e, g, n, "bool input is not supported");
	if (cnt == 0 && ir_attr_int(n, "noop_with_empty_axes", 0))
		return ir_same_as(g, n, 0, 0);
	for (int i = 0; i < cnt; i++) {
		int a = ir_axis(ax[i], x->rank);

		if (a < 0)
			return ir_node_err(e, g, n, "axis %lld is outside rank %d", (long long)ax[i], x->rank);
		red[a] = 1;
	}
	for (int i = 0; i < x->rank; i++) {
		int rd = cnt == 0 || red[i];

		if (rd && keep)
			d[r++] = 1;
		else if (!rd)
			d[r++] = x->dims[i];
	}
	return ir_set_out(g, n, 0, x->dtype, r, d);
}

int ir_infer_argmax(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int keep = (int)ir_attr_int(n, "keepdims", 1), r = 0;
	int64_t d[R];

	if (a < 0)
		return ir_node_err(e, g, n, "axis out of range");
	if (x->dims[a] == 0)
		return ir_node_err(e, g, n, "cannot reduce an empty axis");
	for (int i = 0; i < x->rank; i++) {
		if (i != a)
			d[r++] = x->dims[i];
		else if (keep)
			d[r++] = 1;
	}
	return ir_set_out(g, n, 0, IR_I64, r, d);
}
