/* SPDX-License-Identifier: MIT */
/* eval_norm.c - normalisations and softmax (statistics in double). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

#define GETF(t, i) ir_get_f((t)->data, (t)->dtype, (size_t)(i))
#define SETF(t, i, v) ir_set_f((t)->data, (t)->dtype, (size_t)(i), (v))

int ir_ev_batchnorm(const struct ir_graph *g, const struct ir_node *n,
		    const struct ir_tensor *const *in, int nin,
		    struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	double eps = ir_attr_float(n, "epsilon", 1e-5);
	int64_t C = x->dims[1], inner = 1, cnt = ev_numel(x);

	(void)g; (void)nin; (void)nout; (void)e;
	for (int i = 2; i < x->rank; i++)
		inner *= x->dims[i];
	for (int64_t i = 0; i < cnt; i++) {
		int64_t c = (i / inner) % C;
		double y = (GETF(x, i) - GETF(in[3], c)) / sqrt(GETF(in[4], c) + eps);

		SETF(out, i, y * GETF(in[1], c) + GETF(in[2], c));
	}
	return 0;
}

/* Normalises rows of `cols` elements; scale/bias element for column j and
 * row r: param(r, j). */
int ir_ev_layernorm(const struct ir_graph *g, const struct ir_node *n,
		    const struct ir_tensor *const *in, int nin,
		    struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *sc = nin > 1 ? in[1] : NULL;
	const struct ir_tensor *b = nin > 2 ? in[2] : NULL;
	int a = ir_axis(ir_attr_int(n, "axis", -1), x->rank);
	double eps = ir_attr_float(n, "epsilon", 1e-5);
	int64_t rows = 1, cols = 1;
	struct ir_tensor shp = { 0 };
	int64_t *so = NULL, *bo = NULL;

	(void)g;
	for (int i = 0; i < x->rank; i++) {
		if (i < a)
			rows *= x->dims[i];
		else
			cols *= x->dims[i];
	}
	shp.rank = x->rank - a;
	memcpy(shp.dims, x->dims + a, (size_t)shp.rank * sizeof(int64_t));
	if ((sc && !(so = ev_bcast(&shp, sc, e))) || (b && !(bo = ev_bcast(&shp, b, e)))) {
		free(so);
		return -1;
	}
	for (int64_t r = 0; r < rows; r++) {
		double mean = 0, var = 0, inv;

		for (int64_t j = 0; j < cols; j++)
			mean += GETF(x, r * cols + j);
		mean /= (double)cols;
		for (int64_t j = 0; j < cols; j++) {
			double d = GETF(x, r * cols + j) - mean;

			var += d * d;
		}
		var /= (double)cols;
		inv = 1 / sqrt(var + eps);
		for (int64_t j = 0; j < cols; j++) {
			double y = (GETF(x, r * cols + j) - mean) * inv;

			if (sc)
				y *= GETF(sc, so[j]);
			if (b)
				y += GETF(b, bo[j]);
			SETF(out, r * cols + j, y);
		}
		if (nout > 1 && out[1].data)
			SETF(&out[1], r, mean);
		if (nout > 2 && out[2].data)
			SETF(&out[2], r, inv);
	}
	free(so);
	free(bo);
	return 0;
}

int ir_ev_instnorm(const struct ir_graph *g, const struct ir_node *n,
		   const struct ir_tensor *const *in, int nin,
		   struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	double eps = ir_attr_float(n, "epsilon", 1e-5);
	int64_t C = x->dims[1], NC = x->dims[0] * C, sp = ev_numel(x) / (NC ? NC : 1);

	(void)g; (void)nin; (void)nout; (void)e;
	for (int64_t r = 0; r < NC; r++) {
		double mean = 0, var = 0;
		int64_t c = r % C;

		for (int64_t j = 0; j < sp; j++)
			mean += GETF(x, r * sp + j);
		mean /= (double)sp;
		for (int64_t j = 0; j < sp; j++) {
			double d = GETF(x, r * sp + j) - mean;

			var += d * d;
		}
		var /= (double)sp;
		for (int64_t j = 0; j < sp; j++)
			SETF(out, r * sp + j, (GETF(x, r * sp + j) - mean) / sqrt(var + eps) *
				 GETF(in[1], c) + GETF(in[2], c));
	}
	return 0;
}

int ir_ev_softmax(const struct ir_graph *g, const struct ir_node *n,
		  const struct ir_tensor *const *in, int nin,
		  struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int a = x->rank ? ir_axis(ir_attr_int(n, "axis", -1), x->rank) : 0;
	int coerce = (int)ir_attr_int(n, "coerce2d", 0);
	int64_t outer = 1, len = 1, inner = 1;
	int logsm = n->opid == IR_OP_LogSoftmax, hard = n->opid == IR_OP_Hardmax;

	(void)g; (void)nin; (void)nout; (void)e;
	for (int i = 0; i < x->rank; i++) {
		if (i < a)
			outer *= x->dims[i];
		else if (i == a || coerce)
			len *= x->dims[i];
		else
			inner *= x->dims[i];
	}
	for (int64_t o = 0; o < outer; o++)
		for (int64_t in_ = 0; in_ < inner; in_++) {
			int64_t base = o * len * inner + in_;
			double mx = -INFINITY, sum = 0;
			int64_t arg = 0;

			for (int64_t j = 0; j < len; j++) {
				double v = GETF(x, base + j * inner);

				if (v > mx) {
					mx = v;
					arg = j;
				}
			}
			if (hard) {
				for (int64_t j = 0; j < len; j++)
					SETF(out, base + j * inner, j == arg);
				continue;
			}
			for (int64_t j = 0; j < len; j++)
				sum += exp(GETF(x, base + j * inner) - mx);
			for (int64_t j = 0; j < len; j++) {
				double d = GETF(x, base + j * inner) - mx;

				SETF(out, base + j * inner, logsm ? d - log(sum) : exp(d) / sum);
			}
		}
	return 0;
}

int ir_ev_mvn(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	size_t na;
	const int64_t *axes = ir_attr_ints(n, "axes", &na);
	int64_t def[3] = { 0, 2, 3 }, cnt = ev_numel(x), groups;
	int red[IR_MAX_RANK] = { 0 };
	int64_t *gid;
	double *sum, *sq, *num;

	(void)g; (void)nin; (void)nout;
	if (!axes) {
		axes = def;
		na = 3;
	}
	for (size_t i = 0; i < na; i++) {
		int a = ir_axis(axes[i], x->rank);

		if (a < 0)
			return ir_node_err(e, g, n, "axis out of range");
		red[a] = 1;
	}
	gid = malloc((size_t)(cnt ? cnt : 1) * sizeof(int64_t));
	sum = calloc((size_t)(cnt ? cnt : 1), sizeof(double));
	sq = calloc((size_t)(cnt ? cnt : 1), sizeof(double));
	num = calloc((size_t)(cnt ? cnt : 1), sizeof(double));
	if (!gid || !sum || !sq || !num) {
		free(gid); free(sum); free(sq); free(num);
		return ir_err(e, "out of memory");
	}
	groups = 0;
	for (int64_t i = 0; i < cnt; i++) {
		int64_t rem = i, key = 0, mul = 1;

		for (int d = x->rank - 1; d >= 0; d--) {
			int64_t id = rem % x->dims[d];

			rem /= x->dims[d];
			if (!red[d]) {
				key += id * mul;
				mul *= x->dims[d];
			}
		}
		gid[i] = key;
		if (key + 1 > groups)
			groups = key + 1;
		sum[key] += GETF(x, i);
		num[key] += 1;
	}
	for (int64_t k = 0; k < groups; k++)
		sum[k] /= num[k] ? num[k] : 1;
	for (int64_t i = 0; i < cnt; i++) {
		double d = GETF(x, i) - sum[gid[i]];

		sq[gid[i]] += d * d;
	}
	for (int64_t i = 0; i < cnt; i++)
		SETF(out, i, (GETF(x, i) - sum[gid[i]]) / sqrt(sq[gid[i]] / num[gid[i]] + 1e-9));
	free(gid); free(sum); free(sq); free(num);
	return 0;
}

int ir_ev_lrn(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	double alpha = ir_attr_float(n, "alpha", 1e-4), beta = ir_attr_float(n, "beta", 0.75);
	double bias = ir_attr_float(n, "bias", 1.0);
	int64_t size = ir_attr_int(n, "size", 1), C = x->dims[1], inner = 1;
	int64_t cnt = ev_numel(x);

	(void)g; (void)nin; (void)nout; (void)e;
	for (int i = 2; i < x->rank; i++)
		inner *= x->dims[i];
	for (int64_t i = 0; i < cnt; i++) {
		int64_t c = (i / inner) % C, base = i - c * inner;
		int64_t lo = c - (size - 1) / 2, hi = c + (size - 1 + 1) / 2;
		double ss = 0;

		for (int64_t k = lo < 0 ? 0 : lo; k <= hi && k < C; k++) {
			double v = GETF(x, base + k * inner);

			ss += v * v;
		}
		SETF(out, i, GETF(x, i) / pow(bias + alpha / (double)size * ss, beta));
	}
	return 0;
}
