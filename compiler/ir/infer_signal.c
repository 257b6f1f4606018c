/* SPDX-License-Identifier: MIT */
/* infer_signal.c - shape inference of the window functions (HannWindow,
 * HammingWindow, BlackmanWindow): a vector of `size` values of
 * output_datatype; size must be a compile-time constant. */
#include "infer_internal.h"

int ir_infer_window(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	int64_t size;
	int cnt, dt = (int)ir_attr_int(n, "output_datatype", IR_F32);

	if (ir_const_ints(g, n, 0, &size, 1, &cnt, e))
		return -1;
	if (cnt != 1 || size < 0 || size > IR_DIM_LIMIT)
		return ir_node_err(e, g, n, "size must be one non-negative integer");
	if (dt <= 0 || dt >= IR_DTYPE_COUNT || !ir_dtype_size(dt) || dt == IR_BOOL ||
	    dt == IR_C64 || dt == IR_C128)
		return ir_node_err(e, g, n, "output_datatype %d (%s) is not a numeric type", dt,
				   ir_dtype_name(dt));
	return ir_set_out(g, n, 0, dt, 1, &size);
}
