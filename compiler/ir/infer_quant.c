/* SPDX-License-Identifier: MIT */
/* infer_quant.c - shape inference of the quantisation operators:
 * QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
 * QLinearMatMul, ConvInteger, QLinearConv. */
#include <string.h>

#include "infer_internal.h"

#define R IR_MAX_RANK

static int is_q8(int dt)
{
	return dt == IR_U8 || dt == IR_I8;
}

/* A scale or zero point: a scalar, or a vector of `len` elements (per
 * axis); len < 0 allows only a scalar. */
static int need_param(struct ir_graph *g, const struct ir_node *n, int k, int64_t len,
		      const char *what, struct ir_error *e)
{
	struct ir_value *v = ir_in(g, n, k);

	if (!v)
		return 0;
	if (ir_value_numel(v) == 1 && v->rank <= 1)
		return 0;
	if (len >= 0 && v->rank == 1 && v->dims[0] == len)
		return 0;
	if (len >= 0)
		return ir_node_err(e, g, n, "input %d (%s) must be a scalar or a vector of %lld", k, what,
				   (long long)len);
	return ir_node_err(e, g, n, "input %d (%s) must be a scalar", k, what);
}

/* The length of the quantisation axis of input 0, or -1 (bad axis). */
static int64_t axis_len(struct ir_graph *g, const struct ir_node *n)
{
	struct ir_value *x = ir_in(g, n, 0);
	int a = ir_axis(ir_attr_int(n, "axis", 1), x->rank);

	return x->rank == 0 ? 1 : a < 0 ? -1 : x->dims[a];
}

int ir_infer_quantize(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *s = ir_in(g, n, 1), *zp = ir_in(g, n, 2);
	int q = n->opid == IR_OP_QuantizeLinear;
	int64_t len = axis_len(g, n);

	/* the axis matters only to a per-axis scale */
	if (len < 0 && ir_value_numel(s) > 1)
		return ir_node_err(e, g, n, "axis %lld out of range for rank %d",
				   (long long)ir_attr_int(n, "axis", 1), x->rank);
	if (!ir_dtype_is_float(s->dtype))
		return ir_node_err(e, g, n, "input 1 (the scale) must be a float tensor");
	if (need_param(g, n, 1, len, "the scale", e) || need_param(g, n, 2, len, "the zero point", e))
		return -1;
	if (zp && (ir_value_numel(zp) != ir_value_numel(s) && ir_value_numel(zp) != 1))
		return ir_node_err(e, g, n, "the zero point and the scale differ in length");
	if (q) {
		if (!ir_dtype_is_float(x->dtype) && x->dtype != IR_I32)
			return ir_node_err(e, g, n, "input 0 must be float or int32");
		if (zp && !is_q8(zp->dtype))
			return ir_node_err(e, g, n, "the zero point must be uint8 or int8 (it gives the output type)");
		return ir_set_out(g, n, 0, zp ? zp->dtype : IR_U8, x->rank, x->dims);
	}
	if (!is_q8(x->dtype) && x->dtype != IR_I32)
		return ir_node_err(e, g, n, "input 0 must be uint8, int8 or int32");
	if (zp && zp->dtype != x->dtype)
		return ir_node_err(e, g, n, "the zero point must have input 0's type");
	return ir_set_out(g, n, 0, s->dtype, x->rank, x->dims);
}

int ir_infer_dyn_quantize(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);

	/* float16 once --precision fp16 converted the model */
	if (x->dtype != IR_F32 && x->dtype != IR_F16)
		return ir_node_err(e, g, n, "input 0 must be float32");
	if (ir_set_out(g, n, 0, IR_U8, x->rank, x->dims) || ir_set_out(g, n, 1, x->dtype, 0, NULL))
		return -1;
	return ir_set_out(g, n, 2, IR_U8, 0, NULL);
}

/* The MatMul shape of inputs ia, ib into d/r (numpy rules), both 8-bit. */
static int mm_shape(struct ir_graph *g, const struct ir_node *n, int ia, int ib, int64_t *d,
		    int *r, struct ir_error *e)
{
	struct ir_value *a = ir_in(g, n, ia), *b = ir_in(g, n, ib);

	if (a->rank >= 1 && b->rank >= 1 && (!is_q8(a->dtype) || !is_q8(b->dtype)))
		return ir_node_err(e, g, n, "A and B must be uint8 or int8");
	return ir_matmul_dims(g, n, ia, ib, d, r, e);
}

/* The Conv shape of x (input 0) and w (input iw) into d. */
static int conv_shape(struct ir_graph *g, const struct ir_node *n, int iw, int64_t *d,
		      struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *w = ir_in(g, n, iw);
	int64_t grp = ir_attr_int(n, "group", 1);
	struct ir_window win;
	int nsp = x->rank - 2;

	if (!is_q8(x->dtype) || !is_q8(w->dtype))
		return ir_node_err(e, g, n, "X and W must be uint8 or int8");
	if (x->rank < 3 || w->rank != x->rank)
		return ir_node_err(e, g, n, "X (rank %d) and W (rank %d) must have the same rank >= 3", x->rank, w->rank);
	if (grp < 1 || x->dims[1] % grp || w->dims[0] % grp || w->dims[1] * grp != x->dims[1])
		return ir_node_err(e, g, n, "W [%lld, %lld, ...] does not fit X's %lld channels in %lld groups",
				   (long long)w->dims[0], (long long)w->dims[1], (long long)x->dims[1],
				   (long long)grp);
	if (ir_window_conv(g, n, nsp, x->dims + 2, w->dims + 2, 0, &win, e))
		return -1;
	d[0] = x->dims[0];
	d[1] = w->dims[0];
	memcpy(d + 2, win.out, (size_t)nsp * sizeof(int64_t));
	return 0;
}

int ir_infer_matmul_integer(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *a = ir_in(g, n, 0), *b = ir_in(g, n, 1);
	int64_t d[R];
	int r;

	if (mm_shape(g, n, 0, 1, d, &r, e) ||
	    need_param(g, n, 2, a->rank > 1 ? a->dims[a->rank - 2] : 1, "A's zero point", e) ||
	    need_param(g, n, 3, b->rank > 1 ? b->dims[b->rank - 1] : 1, "B's zero point", e))
		return -1;
	return ir_set_out(g, n, 0, IR_I32, r, d);
}

int ir_infer_qlinear_matmul(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *a = ir_in(g, n, 0), *b = ir_in(g, n, 3), *yzp = ir_in(g, n, 7);
	int64_t d[R], m = a->rank > 1 ? a->dims[a->rank - 2] : 1, nn = b->rank > 1 ? b->dims[b->rank - 1] : 1;
	int r;

	if (mm_shape(g, n, 0, 3, d, &r, e) || need_param(g, n, 1, m, "A's scale", e) ||
	    need_param(g, n, 2, m, "A's zero point", e) || need_param(g, n, 4, nn, "B's scale", e) ||
	    need_param(g, n, 5, nn, "B's zero point", e) || need_param(g, n, 6, -1, "Y's scale", e) ||
	    need_param(g, n, 7, -1, "Y's zero point", e))
		return -1;
	if (!is_q8(yzp->dtype))
		return ir_node_err(e, g, n, "Y's zero point must be uint8 or int8 (it gives the output type)");
	return ir_set_out(g, n, 0, yzp->dtype, r, d);
}

int ir_infer_conv_integer(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t d[R];

	if (conv_shape(g, n, 1, d, e) || need_param(g, n, 2, -1, "X's zero point", e) ||
	    need_param(g, n, 3, d[1], "W's zero point", e))
		return -1;
	return ir_set_out(g, n, 0, IR_I32, x->rank, d);
}

int ir_infer_qlinear_conv(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *yzp = ir_in(g, n, 7), *b = ir_in(g, n, 8);
	int64_t d[R];

	if (conv_shape(g, n, 3, d, e) || need_param(g, n, 1, -1, "X's scale", e) ||
	    need_param(g, n, 2, -1, "X's zero point", e) || need_param(g, n, 4, d[1], "W's scale", e) ||
	    need_param(g, n, 5, d[1], "W's zero point", e) || need_param(g, n, 6, -1, "Y's scale", e) ||
	    need_param(g, n, 7, -1, "Y's zero point", e))
		return -1;
	if (b && (b->dtype != IR_I32 || b->rank != 1 || b->dims[0] != d[1]))
		return ir_node_err(e, g, n, "B must be %lld int32 values", (long long)d[1]);
	if (!is_q8(yzp->dtype))
		return ir_node_err(e, g, n, "Y's zero point must be uint8 or int8 (it gives the output type)");
	return ir_set_out(g, n, 0, yzp->dtype, x->rank, d);
}
