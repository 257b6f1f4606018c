/* SPDX-License-Identifier: MIT */
/* infer_signal.c - shape inference of the window functions (HannWindow,
 * HammingWindow, BlackmanWindow: a vector of `size` values of
 * output_datatype; size must be a compile-time constant), DFT and the mel
 * filter bank. */
#include <string.h>

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

/* DFT (opset 17): x [..., N, ..., 1 or 2] (real or complex), the signal
 * along `axis`; y has L = dft_length (constant) or N points there, or
 * L / 2 + 1 when onesided, and a last dim of 2. */
int ir_infer_dft(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t a = ir_attr_int(n, "axis", 1), len, d[IR_MAX_RANK];
	int cnt;

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (x->rank < 3 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
		return ir_node_err(e, g, n, "input must be [batch, ..., signal, ..., 1 or 2]");
	if (a < 0)
		a += x->rank;
	if (a < 1 || a > x->rank - 2)
		return ir_node_err(e, g, n, "axis %lld is not a signal axis (1 to rank - 2)",
				   (long long)ir_attr_int(n, "axis", 1));
	len = x->dims[a];
	if (ir_in(g, n, 1) && (ir_const_ints(g, n, 1, &len, 1, &cnt, e) || cnt != 1 || len < 1))
		return ir_node_err(e, g, n, "dft_length must be one positive compile-time constant");
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	d[a] = ir_attr_int(n, "onesided", 0) ? len / 2 + 1 : len;
	d[x->rank - 1] = 2;
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}

/* MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular
 * filters from constant scalars, always folded; the evaluator checks the
 * edges against the sample rate. */
#define MEL_MAX_ELEMENTS ((int64_t)1 << 22)

int ir_infer_mel(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	int64_t bins, dft, d[2];
	int cnt, dt = (int)ir_attr_int(n, "output_datatype", IR_F32);
	double v;

	if (ir_const_ints(g, n, 0, &bins, 1, &cnt, e))
		return -1;
	if (cnt != 1 || bins < 1)
		return ir_node_err(e, g, n, "num_mel_bins must be one positive integer");
	if (ir_const_ints(g, n, 1, &dft, 1, &cnt, e))
		return -1;
	if (cnt != 1 || dft < 1)
		return ir_node_err(e, g, n, "dft_length must be one positive integer");
	for (int k = 2; k < 5; k++)
		if (ir_const_scalar(g, n, k, &v, e))
			return -1;
	d[0] = dft / 2 + 1;
	d[1] = bins;
	if (d[0] > MEL_MAX_ELEMENTS / d[1])
		return ir_node_err(e, g, n, "a %lld x %lld matrix; at most %lld elements",
				   (long long)d[0], (long long)d[1], (long long)MEL_MAX_ELEMENTS);
	if (dt <= 0 || dt >= IR_DTYPE_COUNT || !ir_dtype_size(dt) || dt == IR_BOOL ||
	    dt == IR_C64 || dt == IR_C128)
		return ir_node_err(e, g, n, "output_datatype %d (%s) is not a numeric type", dt,
				   ir_dtype_name(dt));
	return ir_set_out(g, n, 0, dt, 2, d);
}
