/* SPDX-License-Identifier: MIT */
/* eval_reduce.c - reductions, arg-reductions, cumsum and top-k. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

#define GETF(t, i) ir_get_f((t)->data, (t)->dtype, (size_t)(i))

int ir_ev_reduce(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int op = n->opid;
	int red[IR_MAX_RANK] = { 0 }, nax = nin > 1 && in[1] ? (int)ev_numel(in[1]) : 0;
	int64_t cnt = ev_numel(x), ocnt = ev_numel(out), len;
	double *acc;
	int isint = ir_dtype_is_int(x->dtype);
	int64_t *iacc;

	(void)g; (void)nout;
	if (nax == 0 && ir_attr_int(n, "noop_with_empty_axes", 0)) {
		memcpy(out->data, x->data, ir_tensor_bytes(x));
		return 0;
	}
	for (int i = 0; i < nax; i++)
		red[ir_axis(ir_get_i(in[1]->data, in[1]->dtype, (size_t)i), x->rank)] = 1;
	if (!nax)
		for (int i = 0; i < x->rank; i++)
			red[i] = 1;
	len = ocnt ? cnt / ocnt : 0;
	acc = malloc((size_t)(ocnt ? ocnt : 1) * sizeof(double));
	iacc = malloc((size_t)(ocnt ? ocnt : 1) * sizeof(int64_t));
	if (!acc || !iacc) {
		free(acc);
		free(iacc);
		return ir_err(e, "out of memory");
	}
	for (int64_t k = 0; k < ocnt; k++) {
		acc[k] = op == IR_OP_ReduceMax ? -INFINITY : op == IR_OP_ReduceMin ? INFINITY :
			 op == IR_OP_ReduceProd ? 1 : 0;
		iacc[k] = op == IR_OP_ReduceMax ? INT64_MIN : op == IR_OP_ReduceMin ? INT64_MAX :
			  op == IR_OP_ReduceProd ? 1 : 0;
	}
	for (int64_t i = 0; i < cnt; i++) {
		int64_t rem = i, key = 0, mul = 1;
		double v;
		int64_t iv;

		for (int d = x->rank - 1; d >= 0; d--) {
			int64_t id = rem % x->dims[d];

			rem /= x->dims[d];
			if (!red[d]) {
				key += id * mul;
				mul *= x->dims[d];
			}
		}
		if (isint) {
			iv = ir_get_i(x->data, x->dtype, (size_t)i);
			if (op == IR_OP_ReduceMax)
				iacc[key] = iv > iacc[key] ? iv : iacc[key];
			else if (op == IR_OP_ReduceMin)
				iacc[key] = iv < iacc[key] ? iv : iacc[key];
			else if (op == IR_OP_ReduceProd)
				iacc[key] *= iv;
			else if (op == IR_OP_ReduceSumSquare)
				iacc[key] += iv * iv;
			else if (op == IR_OP_ReduceL1)
				iacc[key] += iv < 0 ? -iv : iv;
		}
		v = GETF(x, i);
		if (op == IR_OP_ReduceMax)
			acc[key] = v > acc[key] || isnan(v) ? v : acc[key];
		else if (op == IR_OP_ReduceMin)
			acc[key] = v < acc[key] || isnan(v) ? v : acc[key];
		else if (op == IR_OP_ReduceProd)
			acc[key] *= v;
		else if (op == IR_OP_ReduceSumSquare || op == IR_OP_ReduceL2)
			acc[key] += v * v;
		else if (op == IR_OP_ReduceL1)
			acc[key] += fabs(v);
		else if (op == IR_OP_ReduceLogSumExp)
			acc[key] += exp(v);
		else
			acc[key] += v;
		if (isint && (op == IR_OP_ReduceSum || op == IR_OP_ReduceMean))
			iacc[key] += ir_get_i(x->data, x->dtype, (size_t)i);
	}
	for (int64_t k = 0; k < ocnt; k++) {
		double v = acc[k];

		if (op == IR_OP_ReduceMean)
			v /= (double)len;
		else if (op == IR_OP_ReduceL2)
			v = sqrt(v);
		else if (op == IR_OP_ReduceLogSum || op == IR_OP_ReduceLogSumExp)
			v = log(v);
		if (isint && op != IR_OP_ReduceL2 && op != IR_OP_ReduceLogSum && op != IR_OP_ReduceLogSumExp)
			ir_set_i(out->data, out->dtype, (size_t)k,
				 op == IR_OP_ReduceMean ? iacc[k] / (len ? len : 1) : iacc[k]);
		else
			ir_set_f(out->data, out->dtype, (size_t)k, v);
	}
	free(acc);
	free(iacc);
	return 0;
}

static void ax_split(const struct ir_tensor *x, int a, int64_t *outer,
		     int64_t *len, int64_t *inner)
{
	*outer = *inner = 1;
	for (int i = 0; i < a; i++)
		*outer *= x->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		*inner *= x->dims[i];
	*len = x->dims[a];
}

int ir_ev_argmax(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int last = (int)ir_attr_int(n, "select_last_index", 0);
	int mx = n->opid == IR_OP_ArgMax;
	int64_t outer, len, inner;

	(void)g; (void)nin; (void)nout; (void)e;
	ax_split(x, a, &outer, &len, &inner);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			double best = GETF(x, o * len * inner + i);
			int64_t arg = 0;

			for (int64_t j = 1; j < len; j++) {
				double v = GETF(x, (o * len + j) * inner + i);
				int better = mx ? v > best : v < best;

				if (better || (last && v == best)) {
					best = v;
					arg = j;
				}
			}
			ir_set_i(out->data, IR_I64, (size_t)(o * inner + i), arg);
		}
	return 0;
}

int ir_ev_cumsum(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int a = ir_axis(ir_get_i(in[1]->data, in[1]->dtype, 0), x->rank);
	int excl = (int)ir_attr_int(n, "exclusive", 0), rev = (int)ir_attr_int(n, "reverse", 0);
	int64_t outer, len, inner;
	int isint = ir_dtype_is_int(x->dtype);

	(void)g; (void)nin; (void)nout; (void)e;
	ax_split(x, a, &outer, &len, &inner);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			double s = 0;
			int64_t si = 0;

			for (int64_t jj = 0; jj < len; jj++) {
				int64_t j = rev ? len - 1 - jj : jj;
				int64_t idx = (o * len + j) * inner + i;
				double v = GETF(x, idx);
				int64_t iv = ir_get_i(x->data, x->dtype, (size_t)idx);

				if (!excl) {
					s += v;
					si += iv;
				}
				if (isint)
					ir_set_i(out->data, out->dtype, (size_t)idx, si);
				else
					ir_set_f(out->data, out->dtype, (size_t)idx, s);
				if (excl) {
					s += v;
					si += iv;
				}
			}
		}
	return 0;
}

struct kv {
	double v;
	int64_t i;
	int largest;
};

static int kv_cmp(const void *pa, const void *pb)
{
	const struct kv *a = pa, *b = pb;

	if (a->v != b->v)
		return a->largest ? (a->v < b->v ? 1 : -1) : (a->v < b->v ? -1 : 1);
	return a->i < b->i ? -1 : a->i > b->i;
}

int ir_ev_topk(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
	int largest = (int)ir_attr_int(n, "largest", 1);
	int64_t outer, len, inner, k = out->dims[a];
	struct kv *buf;

	(void)g; (void)nin;
	ax_split(x, a, &outer, &len, &inner);
	buf = malloc((size_t)(len ? len : 1) * sizeof(*buf));
	if (!buf)
		return ir_err(e, "out of memory");
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			for (int64_t j = 0; j < len; j++) {
				buf[j].v = GETF(x, (o * len + j) * inner + i);
				buf[j].i = j;
				buf[j].largest = largest;
			}
			qsort(buf, (size_t)len, sizeof(*buf), kv_cmp);
			for (int64_t j = 0; j < k; j++) {
				int64_t oi = (o * k + j) * inner + i;

				memcpy((char *)out[0].data + oi * (int64_t)ir_dtype_size(x->dtype),
				       (char *)x->data + ((o * len + buf[j].i) * inner + i) * (int64_t)ir_dtype_size(x->dtype),
				       ir_dtype_size(x->dtype));
				if (nout > 1)
					ir_set_i(out[1].data, IR_I64, (size_t)oi, buf[j].i);
			}
		}
	free(buf);
	return 0;
}
