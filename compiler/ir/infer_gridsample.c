/* SPDX-License-Identifier: MIT */
/* infer_gridsample.c - shape inference of GridSample (opset 16: 2-D,
 * X [N, C, H, W], grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo]). */
#include <string.h>

#include "infer_internal.h"

int ir_infer_gridsample(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *gr = ir_in(g, n, 1);
	const char *mode = ir_attr_str(n, "mode", "bilinear"), *pad = ir_attr_str(n, "padding_mode", "zeros");
	int64_t d[4];

	if (ir_need_float(g, n, 0, e) || ir_need_float(g, n, 1, e))
		return -1;
	if (x->rank != 4 || gr->rank != 4 || gr->dims[3] != 2 || gr->dims[0] != x->dims[0])
		return ir_node_err(e, g, n, "X must be [N, C, H, W] and grid [N, Ho, Wo, 2]");
	if (strcmp(mode, "bilinear") && strcmp(mode, "nearest") && strcmp(mode, "bicubic"))
		return ir_node_err(e, g, n, "mode '%s' is not bilinear, nearest or bicubic", mode);
	if (strcmp(pad, "zeros") && strcmp(pad, "border") && strcmp(pad, "reflection"))
		return ir_node_err(e, g, n, "padding_mode '%s' is not zeros, border or reflection", pad);
	d[0] = x->dims[0];
	d[1] = x->dims[1];
	d[2] = gr->dims[1];
	d[3] = gr->dims[2];
	return ir_set_out(g, n, 0, x->dtype, 4, d);
}
