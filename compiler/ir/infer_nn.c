/* SPDX-License-Identifier: MIT */
/* infer_nn.c - shapes of matmul, conv, pooling, normalisation, softmax,
 * resize. */
#include <math.h>
#include <string.h>

#include "infer_internal.h"

#define R IR_MAX_RANK

int ir_matmul_dims(struct ir_graph *g, const struct ir_node *n, int ia, int ib, int64_t *d, int *r,
		   struct ir_error *e)
{
	struct ir_value *a = ir_in(g, n, ia), *b = ir_in(g, n, ib);
	int64_t ad[R], bd[R];
	int ar = a->rank, br = b->rank;

	if (ar < 1 || br < 1)
		return ir_node_err(e, g, n, "inputs must have rank >= 1");
	memcpy(ad, a->dims, sizeof(ad));
	memcpy(bd, b->dims, sizeof(bd));
	if (ar == 1) {
		ad[1] = ad[0];
		ad[0] = 1;
		ar = 2;
	}
	if (br == 1) {
		bd[1] = 1;
		br = 2;
	}
	if (ad[ar - 1] != bd[br - 2])
		return ir_node_err(e, g, n, "inner dimensions differ: A [..., %lld] x B [%lld, ...]",
				   (long long)ad[ar - 1], (long long)bd[br - 2]);
	if (ir_broadcast(ar - 2, ad, br - 2, bd, r, d))
		return ir_node_err(e, g, n, "batch dimensions cannot be broadcast");
	if (a->rank > 1)
		d[(*r)++] = ad[ar - 2];
	if (b->rank > 1)
		d[(*r)++] = bd[br - 1];
	return 0;
}

int ir_infer_matmul(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *a = ir_in(g, n, 0), *b = ir_in(g, n, 1);
	int64_t d[R];
	int r;

	if (a->rank >= 1 && b->rank >= 1 && a->dtype != b->dtype)
		return ir_node_err(e, g, n, "A is %s but B is %s", ir_dtype_name(a->dtype), ir_dtype_name(b->dtype));
	if (ir_matmul_dims(g, n, 0, 1, d, &r, e))
		return -1;
	return ir_set_out(g, n, 0, a->dtype, r, d);
}

int ir_infer_gemm(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *a = ir_in(g, n, 0), *b = ir_in(g, n, 1), *c = ir_in(g, n, 2);
	int ta = (int)ir_attr_int(n, "transA", 0), tb = (int)ir_attr_int(n, "transB", 0);
	int64_t d[2], k1, k2;
	int r;
	int64_t o[R];

	if (a->rank != 2 || b->rank != 2)
		return ir_node_err(e, g, n, "A and B must be 2-D (A rank %d, B rank %d)", a->rank, b->rank);
	d[0] = ta ? a->dims[1] : a->dims[0];
	k1 = ta ? a->dims[0] : a->dims[1];
	k2 = tb ? b->dims[1] : b->dims[0];
	d[1] = tb ? b->dims[0] : b->dims[1];
	if (k1 != k2)
		return ir_node_err(e, g, n, "inner dimensions differ (%lld vs %lld)", (long long)k1, (long long)k2);
	if (c && (ir_broadcast(2, d, c->rank, c->dims, &r, o) || r != 2 ||
		  o[0] != d[0] || o[1] != d[1]))
		return ir_node_err(e, g, n, "C cannot be broadcast to [%lld, %lld]", (long long)d[0], (long long)d[1]);
	return ir_set_out(g, n, 0, a->dtype, 2, d);
}

int ir_infer_conv(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *b = ir_in(g, n, 2);
	int64_t grp = ir_attr_int(n, "group", 1), d[R];
	int ct = n->opid == IR_OP_ConvTranspose;
	struct ir_window win;
	int nsp = x->rank - 2;
	int64_t cout;

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (x->rank < 3 || w->rank != x->rank)
		return ir_node_err(e, g, n, "X (rank %d) and W (rank %d) must have the same rank >= 3", x->rank, w->rank);
	if (grp < 1 || x->dims[1] % grp)
		return ir_node_err(e, g, n, "group %lld does not divide the %lld input channels", (long long)grp, (long long)x->dims[1]);
	if (!ct && w->dims[1] * grp != x->dims[1])
		return ir_node_err(e, g, n, "W has %lld input channels per group, X has %lld channels in %lld groups",
				   (long long)w->dims[1], (long long)x->dims[1], (long long)grp);
	if (!ct && w->dims[0] % grp)
		return ir_node_err(e, g, n, "group %lld does not divide the %lld output channels", (long long)grp, (long long)w->dims[0]);
	if (ct && w->dims[0] != x->dims[1])
		return ir_node_err(e, g, n, "W's first dimension (%lld) must equal X's channels (%lld)", (long long)w->dims[0], (long long)x->dims[1]);
	{
		size_t kc;
		const int64_t *ks = ir_attr_ints(n, "kernel_shape", &kc);

		if (ks && (kc != (size_t)nsp || memcmp(ks, w->dims + 2, kc * sizeof(int64_t))))
			return ir_node_err(e, g, n, "kernel_shape does not match W");
	}
	if (ct ? ir_window_convtranspose(g, n, nsp, x->dims + 2, w->dims + 2, &win, e) :
		 ir_window_conv(g, n, nsp, x->dims + 2, w->dims + 2, 0, &win, e))
		return -1;
	cout = ct ? w->dims[1] * grp : w->dims[0];
	if (b && (b->rank != 1 || b->dims[0] != cout))
		return ir_node_err(e, g, n, "B must have %lld elements", (long long)cout);
	d[0] = x->dims[0];
	d[1] = cout;
	memcpy(d + 2, win.out, (size_t)nsp * sizeof(int64_t));
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}

int ir_infer_pool(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	struct ir_window win;
	int nsp = x->rank - 2;
	int64_t d[R];

	if (x->rank < 3)
		return ir_node_err(e, g, n, "input must have rank >= 3 (N, C, spatial...)");
	if (n->opid == IR_OP_GlobalAveragePool || n->opid == IR_OP_GlobalMaxPool) {
		d[0] = x->dims[0];
		d[1] = x->dims[1];
		for (int i = 2; i < x->rank; i++)
			d[i] = 1;
		return ir_set_out(g, n, 0, x->dtype, x->rank, d);
	}
	if (n->opid != IR_OP_MaxPool && ir_need_float(g, n, 0, e))
		return -1;
	if (ir_window_conv(g, n, nsp, x->dims + 2, NULL, (int)ir_attr_int(n, "ceil_mode", 0), &win, e))
		return -1;
	if (ir_attr_int(n, "storage_order", 0))
		return ir_node_err(e, g, n, "storage_order 1 is not supported");
	memcpy(d, x->dims, 2 * sizeof(int64_t));
	memcpy(d + 2, win.out, (size_t)nsp * sizeof(int64_t));
	ir_set_out(g, n, 0, x->dtype, x->rank, d);
	return ir_set_out(g, n, 1, IR_I64, x->rank, d);
}

int ir_infer_batchnorm(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (ir_attr_int(n, "training_mode", 0) || n->nout > 1)
		return ir_node_err(e, g, n, "training mode (running mean/var outputs) is not supported for inference");
	if (x->rank < 2)
		return ir_node_err(e, g, n, "input rank must be >= 2");
	for (int k = 1; k < 5; k++) {
		struct ir_value *p = ir_in(g, n, k);

		if (ir_value_numel(p) != x->dims[1])
			return ir_node_err(e, g, n, "input %d ('%s') must have %lld elements", k, p->name, (long long)x->dims[1]);
	}
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_layernorm(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
	int64_t d[R];

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (a < 0)
		return ir_node_err(e, g, n, "axis out of range");
	ir_same_as(g, n, 0, 0);
	for (int i = 0; i < x->rank; i++)
		d[i] = i < a ? x->dims[i] : 1;
	{
		int st = (int)ir_attr_int(n, "stash_type", 1);

		ir_set_out(g, n, 1, st, x->rank, d);
		ir_set_out(g, n, 2, st, x->rank, d);
	}
	return 0;
}

int ir_infer_instnorm(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (x->rank < 3)
		return ir_node_err(e, g, n, "input rank must be >= 3");
	for (int k = 1; k < 3; k++)
		if (ir_value_numel(ir_in(g, n, k)) != x->dims[1])
			return ir_node_err(e, g, n, "scale and B must have C elements");
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_softmax(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (ir_axis(ir_attr_int(n, "axis", -1), x->rank) < 0 && x->rank > 0)
		return ir_node_err(e, g, n, "axis %lld out of range for rank %d",
				   (long long)ir_attr_int(n, "axis", -1), x->rank);
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_samefloat(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	if (ir_need_float(g, n, 0, e))
		return -1;
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_resize(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *sc = ir_in(g, n, 2), *sz = ir_in(g, n, 3);
	const char *mode = ir_attr_str(n, "mode", "nearest");
	int64_t d[R];

	if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic"))
		return ir_node_err(e, g, n, "mode '%s' is not nearest, linear or cubic", mode);
	if (ir_attr_find(n, "axes") || ir_attr_int(n, "antialias", 0))
		return ir_node_err(e, g, n, "axes and antialias are not supported");
	if (sz && ir_value_numel(sz) > 0) {
		int cnt;

		if (ir_const_ints(g, n, 3, d, R, &cnt, e))
			return -1;
		if (cnt != x->rank)
			return ir_node_err(e, g, n, "sizes has %d entries for rank %d", cnt, x->rank);
	} else if (sc && ir_value_numel(sc) > 0) {
		if (!sc->data)
			return ir_node_err(e, g, n, "scales must be a compile-time constant");
		if (ir_value_numel(sc) != x->rank)
			return ir_node_err(e, g, n, "scales has %lld entries for rank %d", (long long)ir_value_numel(sc), x->rank);
		for (int i = 0; i < x->rank; i++) {
			double s = ir_get_f(sc->data, sc->dtype, (size_t)i);

			if (!(s > 0) || !((double)x->dims[i] * s <= (double)IR_DIM_LIMIT))
				return ir_node_err(e, g, n, "scale %g is not positive or too large", s);
			d[i] = (int64_t)floor((double)x->dims[i] * s);
		}
	} else {
		return ir_node_err(e, g, n, "needs scales or sizes");
	}
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}
