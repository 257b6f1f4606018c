/* SPDX-License-Identifier: MIT */
/* infer_tensor.c - shapes of layout and data-movement ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_internal.h"

#define R IR_MAX_RANK

int ir_infer_reshape(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t sh[R], known = 1;
	int cnt, neg = -1;
	int allowzero = (int)ir_attr_int(n, "allowzero", 0);

	if (ir_const_ints(g, n, 1, sh, R, &cnt, e))
		return -1;
	for (int i = 0; i < cnt; i++) {
		if (sh[i] == 0 && !allowzero) {
			if (i >= x->rank)
				return ir_node_err(e, g, n, "shape[%d] = 0 copies a dimension the input (rank %d) does not have", i, x->rank);
			sh[i] = x->dims[i];
		}
		if (sh[i] == -1) {
			if (neg >= 0)
				return ir_node_err(e, g, n, "shape has more than one -1");
			neg = i;
		} else if (sh[i] < 0 || ir_dim_mul(known, sh[i], &known)) {
			return ir_node_err(e, g, n, "shape[%d] = %lld is invalid", i, (long long)sh[i]);
		}
	}
	if (neg >= 0) {
		if (known == 0 || ir_value_numel(x) % known)
			return ir_node_err(e, g, n, "cannot infer the -1 dimension: %lld elements into blocks of %lld",
					   (long long)ir_value_numel(x), (long long)known);
		sh[neg] = ir_value_numel(x) / known;
	} else if (known != ir_value_numel(x)) {
		return ir_node_err(e, g, n, "target shape has %lld elements, the input %lld",
				   (long long)known, (long long)ir_value_numel(x));
	}
	return ir_set_out(g, n, 0, x->dtype, cnt, sh);
}

int ir_infer_flatten(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t ax = ir_attr_int(n, "axis", 1), d[2] = { 1, 1 };

	if (ax < 0)
		ax += x->rank;
	if (ax < 0 || ax > x->rank)
		return ir_node_err(e, g, n, "axis %lld is outside [-%d, %d]", (long long)ir_attr_int(n, "axis", 1), x->rank, x->rank);
	for (int i = 0; i < x->rank; i++)
		d[i >= ax] *= x->dims[i];
	return ir_set_out(g, n, 0, x->dtype, 2, d);
}

int ir_infer_squeeze(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t ax[R], d[R];
	int cnt = 0, r = 0, drop[R] = { 0 };

	if (ir_in(g, n, 1) && ir_const_ints(g, n, 1, ax, R, &cnt, e))
		return -1;
	if (!ir_in(g, n, 1)) {
		for (int i = 0; i < x->rank; i++)
			drop[i] = x->dims[i] == 1;
	}
	for (int i = 0; i < cnt; i++) {
		int a = ir_axis(ax[i], x->rank);

		if (a < 0)
			return ir_node_err(e, g, n, "axis %lld is outside rank %d", (long long)ax[i], x->rank);
		if (x->dims[a] != 1)
			return ir_node_err(e, g, n, "cannot squeeze axis %d of size %lld", a, (long long)x->dims[a]);
		drop[a] = 1;
	}
	for (int i = 0; i < x->rank; i++)
		if (!drop[i])
			d[r++] = x->dims[i];
	return ir_set_out(g, n, 0, x->dtype, r, d);
}

int ir_infer_unsqueeze(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t ax[R], d[R];
	int cnt, r, ins[R] = { 0 }, k = 0;

	if (ir_const_ints(g, n, 1, ax, R, &cnt, e))
		return -1;
	r = x->rank + cnt;
	if (r > R)
		return ir_node_err(e, g, n, "result rank %d is more than %d", r, R);
	for (int i = 0; i < cnt; i++) {
		int a = ir_axis(ax[i], r);

		if (a < 0 || ins[a])
			return ir_node_err(e, g, n, "axis %lld is out of range or repeated", (long long)ax[i]);
		ins[a] = 1;
	}
	for (int i = 0; i < r; i++)
		d[i] = ins[i] ? 1 : x->dims[k++];
	return ir_set_out(g, n, 0, x->dtype, r, d);
}

int ir_infer_transpose(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	size_t cnt;
	const int64_t *p = ir_attr_ints(n, "perm", &cnt);
	int64_t d[R];
	int seen[R] = { 0 };

	if (p && cnt != (size_t)x->rank)
		return ir_node_err(e, g, n, "perm has %zu entries for rank %d", cnt, x->rank);
	for (int i = 0; i < x->rank; i++) {
		int64_t a = p ? p[i] : x->rank - 1 - i;

		if (a < 0 || a >= x->rank || seen[a]++)
			return ir_node_err(e, g, n, "perm is not a permutation of 0..%d", x->rank - 1);
		d[i] = x->dims[a];
	}
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}

int ir_infer_concat(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int64_t d[R];

	if (!ir_attr_find(n, "axis"))
		return ir_node_err(e, g, n, "attribute axis is required");
	if (a < 0)
		return ir_node_err(e, g, n, "axis %lld is outside rank %d", (long long)ir_attr_int(n, "axis", 0), x->rank);
	memcpy(d, x->dims, sizeof(d));
	d[a] = 0;
	for (int k = 0; k < n->nin; k++) {
		struct ir_value *v = ir_in(g, n, k);

		if (!v)
			return ir_node_err(e, g, n, "input %d is missing", k);
		if (v->rank != x->rank || v->dtype != x->dtype)
			return ir_node_err(e, g, n, "input %d ('%s') has another rank or type than input 0", k, v->name);
		for (int i = 0; i < x->rank; i++)
			if (i != a && v->dims[i] != x->dims[i])
				return ir_node_err(e, g, n, "input %d ('%s') differs from input 0 in dimension %d", k, v->name, i);
		d[a] += v->dims[a];
	}
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}

int ir_infer_split(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int64_t sp[64], d[R], total = 0;
	int cnt = 0;

	if (a < 0)
		return ir_node_err(e, g, n, "axis out of range");
	if (ir_in(g, n, 1)) {
		if (ir_const_ints(g, n, 1, sp, 64, &cnt, e))
			return -1;
		if (cnt != n->nout)
			return ir_node_err(e, g, n, "split has %d entries for %d outputs", cnt, n->nout);
	} else {
		int64_t each = (x->dims[a] + n->nout - 1) / n->nout;

		cnt = n->nout;
		for (int i = 0; i < cnt; i++) {
			int64_t left = x->dims[a] - each * i;

			sp[i] = left < each ? (left < 0 ? 0 : left) : each;
		}
	}
	for (int i = 0; i < cnt; i++) {
		if (sp[i] < 0)
			return ir_node_err(e, g, n, "negative split size");
		total += sp[i];
	}
	if (total != x->dims[a])
		return ir_node_err(e, g, n, "split sizes add up to %lld, the axis has %lld", (long long)total, (long long)x->dims[a]);
	memcpy(d, x->dims, sizeof(d));
	for (int i = 0; i < cnt; i++) {
		d[a] = sp[i];
		ir_set_out(g, n, i, x->dtype, x->rank, d);
	}
	return 0;
}

int ir_infer_slice(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t st[R], en[R], ax[R], sp[R], start[R], step[R], cnt[R];
	int c1, c2, c3 = 0, c4 = 0;
	struct ir_error sub;

	if (ir_const_ints(g, n, 1, st, R, &c1, e) ||
	    ir_const_ints(g, n, 2, en, R, &c2, e) ||
	    (ir_in(g, n, 3) && ir_const_ints(g, n, 3, ax, R, &c3, e)) ||
	    (ir_in(g, n, 4) && ir_const_ints(g, n, 4, sp, R, &c4, e)))
		return -1;
	if (c1 != c2 || (ir_in(g, n, 3) && c3 != c1) || (ir_in(g, n, 4) && c4 != c1))
		return ir_node_err(e, g, n, "starts, ends, axes and steps must have the same length");
	if (ir_slice_resolve(x->rank, x->dims, st, en, ir_in(g, n, 3) ? ax : NULL,
			     ir_in(g, n, 4) ? sp : NULL, c1, start, step, cnt, &sub))
		return ir_node_err(e, g, n, "%s", sub.msg);
	return ir_set_out(g, n, 0, x->dtype, x->rank, cnt);
}

int ir_infer_gather(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *idx = ir_in(g, n, 1);
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int64_t d[2 * R];
	int r = 0;

	if (a < 0)
		return ir_node_err(e, g, n, "axis out of range");
	if (!ir_dtype_is_int(idx->dtype))
		return ir_node_err(e, g, n, "indices must be int32 or int64");
	if (n->opid == IR_OP_GatherElements) {
		if (idx->rank != x->rank)
			return ir_node_err(e, g, n, "indices must have the data's rank");
		return ir_set_out(g, n, 0, x->dtype, idx->rank, idx->dims);
	}
	if (x->rank - 1 + idx->rank > R)
		return ir_node_err(e, g, n, "result rank too large");
	for (int i = 0; i < a; i++)
		d[r++] = x->dims[i];
	for (int i = 0; i < idx->rank; i++)
		d[r++] = idx->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		d[r++] = x->dims[i];
	return ir_set_out(g, n, 0, x->dtype, r, d);
}

int ir_infer_expand(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t sh[R], d[R];
	int cnt, r;

	if (ir_const_ints(g, n, 1, sh, R, &cnt, e))
		return -1;
	if (ir_broadcast(x->rank, x->dims, cnt, sh, &r, d))
		return ir_node_err(e, g, n, "shape cannot be broadcast with the input");
	return ir_set_out(g, n, 0, x->dtype, r, d);
}

int ir_infer_tile(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t rep[R], d[R];
	int cnt;

	if (ir_const_ints(g, n, 1, rep, R, &cnt, e))
		return -1;
	if (cnt != x->rank)
		return ir_node_err(e, g, n, "repeats has %d entries for rank %d", cnt, x->rank);
	for (int i = 0; i < cnt; i++)
		if (rep[i] < 0 || ir_dim_mul(x->dims[i], rep[i], &d[i]))
			return ir_node_err(e, g, n, "repeat %lld is negative or too large", (long long)rep[i]);
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}

int ir_infer_pad(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t p[2 * R], d[R];
	int cnt;
	const char *mode = ir_attr_str(n, "mode", "constant");

	if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
		return ir_node_err(e, g, n, "mode '%s' is not constant, reflect or edge", mode);
	if (ir_in(g, n, 3))
		return ir_node_err(e, g, n, "the axes input is not supported");
	if (ir_const_ints(g, n, 1, p, 2 * R, &cnt, e))
		return -1;
	if (cnt != 2 * x->rank)
		return ir_node_err(e, g, n, "pads has %d entries for rank %d", cnt, x->rank);
	for (int i = 0; i < x->rank; i++) {
		if (p[i] > IR_DIM_LIMIT || p[i] < -IR_DIM_LIMIT || p[i + x->rank] > IR_DIM_LIMIT ||
		    p[i + x->rank] < -IR_DIM_LIMIT)
			return ir_node_err(e, g, n, "pads beyond 2^40");
		d[i] = x->dims[i] + p[i] + p[i + x->rank];
		if (d[i] < 0)
			return ir_node_err(e, g, n, "pads crop dimension %d below zero", i);
		if (strcmp(mode, "constant") && x->dims[i] == 0 && d[i])
			return ir_node_err(e, g, n, "cannot %s-pad an empty dimension", mode);
	}
	return ir_set_out(g, n, 0, x->dtype, x->rank, d);
}

int ir_infer_shape(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t st = ir_attr_int(n, "start", 0), en = ir_attr_int(n, "end", x->rank);
	int64_t d;

	(void)e;
	if (st < 0)
		st += x->rank;
	if (en < 0)
		en += x->rank;
	st = st < 0 ? 0 : st > x->rank ? x->rank : st;
	en = en < 0 ? 0 : en > x->rank ? x->rank : en;
	d = en > st ? en - st : 0;
	if (n->opid == IR_OP_Size)
		return ir_set_out(g, n, 0, IR_I64, 0, NULL);
	return ir_set_out(g, n, 0, IR_I64, 1, &d);
}

int ir_infer_constant_of_shape(struct ir_graph *g, struct ir_node *n,
			       struct ir_error *e)
{
	int64_t d[R];
	int cnt;
	const struct ir_attr *a = ir_attr_find(n, "value");
	int dt = IR_F32;

	if (ir_const_ints(g, n, 0, d, R, &cnt, e))
		return -1;
	if (a) {
		if (a->type != IR_ATTR_TENSOR || ir_numel(a->t->rank, a->t->dims) != 1)
			return ir_node_err(e, g, n, "value must be a one-element tensor");
		dt = a->t->dtype;
	}
	for (int i = 0; i < cnt; i++)
		if (d[i] < 0 || d[i] > IR_DIM_LIMIT)
			return ir_node_err(e, g, n, "dimension %lld in shape is negative or too large", (long long)d[i]);
	return ir_set_out(g, n, 0, dt, cnt, d);
}

int ir_infer_range(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	double s, l, dl;
	int64_t cnt;
	int dt = ir_in(g, n, 0)->dtype;

	if (ir_const_scalar(g, n, 0, &s, e) || ir_const_scalar(g, n, 1, &l, e) ||
	    ir_const_scalar(g, n, 2, &dl, e))
		return -1;
	if (dl == 0)
		return ir_node_err(e, g, n, "delta is 0");
	if (!(fabs(s) < 1e15 && fabs(l) < 1e15 && fabs(dl) < 1e15))
		return ir_node_err(e, g, n, "start, limit and delta must be below 1e15 in magnitude");
	if (ir_dtype_is_int(dt)) {
		int64_t si = (int64_t)s, li = (int64_t)l, di = (int64_t)dl;
		int64_t num = li - si;

		cnt = di > 0 ? (num > 0 ? (num + di - 1) / di : 0) :
			       (num < 0 ? (-num + -di - 1) / -di : 0);
	} else {
		double c = __builtin_ceil((l - s) / dl);

		cnt = c > 0 ? (int64_t)c : 0;
	}
	if (cnt > IR_DIM_LIMIT)
		return ir_node_err(e, g, n, "more than 2^40 elements");
	return ir_set_out(g, n, 0, dt, 1, &cnt);
}

int ir_infer_topk(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
	int64_t k, d[R];
	int cnt;

	if (a < 0)
		return ir_node_err(e, g, n, "axis out of range");
	if (ir_const_ints(g, n, 1, &k, 1, &cnt, e))
		return -1;
	if (cnt != 1 || k < 0 || k > x->dims[a])
		return ir_node_err(e, g, n, "K must be one value in [0, %lld]", (long long)x->dims[a]);
	memcpy(d, x->dims, sizeof(d));
	d[a] = k;
	ir_set_out(g, n, 0, x->dtype, x->rank, d);
	return ir_set_out(g, n, 1, IR_I64, x->rank, d);
}

int ir_infer_cumsum(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t a;
	int cnt;

	if (ir_const_ints(g, n, 1, &a, 1, &cnt, e))
		return -1;
	if (cnt != 1 || ir_axis(a, x->rank) < 0)
		return ir_node_err(e, g, n, "axis must be one value inside the rank");
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_trilu(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t k;
	int cnt;

	if (x->rank < 2)
		return ir_node_err(e, g, n, "input rank must be at least 2");
	if (ir_in(g, n, 1) && ir_const_ints(g, n, 1, &k, 1, &cnt, e))
		return -1;
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_depth_space(struct ir_graph *g, struct ir_node *n,
			 struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int64_t b = ir_attr_int(n, "blocksize", 0), d[4];

	if (x->rank != 4 || b < 1 || b > (1 << 20))
		return ir_node_err(e, g, n, "needs a rank-4 input and blocksize in 1..2^20");
	if (n->opid == IR_OP_DepthToSpace) {
		if (x->dims[1] % (b * b))
			return ir_node_err(e, g, n, "channels not divisible by blocksize^2");
		d[0] = x->dims[0];
		d[1] = x->dims[1] / (b * b);
		d[2] = x->dims[2] * b;
		d[3] = x->dims[3] * b;
	} else {
		if (x->dims[2] % b || x->dims[3] % b)
			return ir_node_err(e, g, n, "spatial size not divisible by blocksize");
		d[0] = x->dims[0];
		d[1] = x->dims[1] * b * b;
		d[2] = x->dims[2] / b;
		d[3] = x->dims[3] / b;
	}
	return ir_set_out(g, n, 0, x->dtype, 4, d);
}

int ir_infer_onehot(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *idx = ir_in(g, n, 0), *val = ir_in(g, n, 2);
	double depth;
	int r = idx->rank + 1, a;
	int64_t d[R];

	if (r > R)
		return ir_node_err(e, g, n, "rank too large");
	if (ir_const_scalar(g, n, 1, &depth, e))
		return -1;
	if (ir_value_numel(val) != 2)
		return ir_node_err(e, g, n, "values must have 2 elements");
	a = ir_axis(ir_attr_int(n, "axis", -1), r);
	if (a < 0)
		return ir_node_err(e, g, n, "axis out of range");
	if (!(depth >= 0 && depth <= (double)IR_DIM_LIMIT))
		return ir_node_err(e, g, n, "depth %g is negative or too large", depth);
	for (int i = 0, k = 0; i < r; i++)
		d[i] = i == a ? (int64_t)depth : idx->dims[k++];
	return ir_set_out(g, n, 0, val->dtype, r, d);
}

int ir_infer_eyelike(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0);
	int dt = (int)ir_attr_int(n, "dtype", x->dtype);

	if (x->rank != 2)
		return ir_node_err(e, g, n, "input must be 2-D");
	return ir_set_out(g, n, 0, dt, 2, x->dims);
}
