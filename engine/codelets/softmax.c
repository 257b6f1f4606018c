/* SPDX-License-Identifier: MIT */
/*
 * softmax.c - SOFTMAX and log-softmax over the middle axis of
 * [outer][len][inner], max-subtracted, sums in double.
 */
#include "cl_opt.h"
#include "cl_common.h"

#define SB 64u

static int softmax_check(const struct ipu_vertex_ctx *v, char *why,
			 size_t len)
{
	uint64_t n;
	int r = cl_check_counts(v, "SOFTMAX", 2, 2, 4, 4, why, len);

	if (r)
		return r;
	r = cl_check_dtype_float(v, 0, "SOFTMAX", "in", why, len);
	if (!r)
		r = cl_check_same_dtype(v, 0, 1, "SOFTMAX", "in", "out", why,
					len);
	if (r)
		return r;
	if (v->params[3] & ~IPUX_SOFTMAX_LOG)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "SOFTMAX: unknown flags 0x%x", v->params[3]);
	r = cl_check_dims(v->params, 3, &n, "SOFTMAX", "outer*len*inner", why,
			  len);
	if (!r)
		r = cl_check_count(v, 0, n, "SOFTMAX", "in", "outer*len*inner",
				   why, len);
	if (!r)
		r = cl_check_count(v, 1, n, "SOFTMAX", "out",
				   "outer*len*inner", why, len);
	return r;
}

static uint64_t softmax_cost(const struct ipu_vertex_ctx *v)
{
	/* max pass, exp+sum pass (exp 4x), scale pass */
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 6);
}

/*
 * Softmax of one contiguous row (inner == 1).  For an f32 output the
 * exponentials are stored by the sum pass and only scaled afterwards (one
 * exp per element); f16 outputs recompute them so that each result is
 * rounded once.
 */
static void sm_row(const void *in, void *out, uint32_t dt, size_t base,
		   size_t L, int lg)
{
	float x[CL_BLK], m = -INFINITY;
	double acc[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, s, ls;
	int keep = !lg && dt == IPUX_DT_F32;
	size_t i0, i, k;

	for (i0 = 0; i0 < L; i0 += CL_BLK) {
		size_t b = L - i0 < CL_BLK ? L - i0 : CL_BLK;

		cl_load_f(in, dt, base + i0, x, b);
		for (i = 0; i < b; i++)
			m = (x[i] > m || x[i] != x[i]) && m == m ? x[i] : m;
	}
	for (i0 = 0; i0 < L; i0 += CL_BLK) {
		size_t b = L - i0 < CL_BLK ? L - i0 : CL_BLK;

		cl_load_f(in, dt, base + i0, x, b);
		for (i = 0; i < b; i++)
			x[i] = cl_expf(x[i] - m);
		for (i = 0; i + 8 <= b; i += 8)
			for (k = 0; k < 8; k++)
				acc[k] += x[i + k];
		for (; i < b; i++)
			acc[0] += x[i];
		if (keep)
			memcpy((float *)out + base + i0, x, b * sizeof(float));
	}
	s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
	    ((acc[4] + acc[5]) + (acc[6] + acc[7]));
	ls = log(s);
	for (i0 = 0; i0 < L; i0 += CL_BLK) {
		size_t b = L - i0 < CL_BLK ? L - i0 : CL_BLK;
		float inv = (float)(1.0 / s);

		if (keep) {
			float *o = (float *)out + base + i0;

			for (i = 0; i < b; i++)
				o[i] *= inv;
			continue;
		}
		cl_load_f(in, dt, base + i0, x, b);
		if (lg) {
			for (i = 0; i < b; i++)
				x[i] = (float)((double)(x[i] - m) - ls);
		} else {
			for (i = 0; i < b; i++)
				x[i] = cl_expf(x[i] - m) * inv;
		}
		cl_store_f(out, dt, base + i0, x, b);
	}
}

static int softmax_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	size_t outer = p[0], L = p[1], inner = p[2], o, j0, j, l;
	uint32_t dt = v->ops[0].dtype;
	int lg = !!(p[3] & IPUX_SOFTMAX_LOG);
	const void *in = IPU_OP_PTR(v, 0, const void);
	void *out = IPU_OP_PTR(v, 1, void);

	for (o = 0; o < outer; o++) {
		if (inner == 1) {
			sm_row(in, out, dt, o * L, L, lg);
			continue;
		}
		for (j0 = 0; j0 < inner; j0 += SB) {
			size_t jb = inner - j0 < SB ? inner - j0 : SB;
			float m[SB], x[SB];
			double s[SB];

			for (j = 0; j < jb; j++) {
				m[j] = -INFINITY;
				s[j] = 0;
			}
			for (l = 0; l < L; l++) {
				cl_load_f(in, dt, (o * L + l) * inner + j0, x, jb);
				for (j = 0; j < jb; j++)
					m[j] = (x[j] > m[j] || x[j] != x[j]) &&
							       m[j] == m[j]
						       ? x[j]
						       : m[j];
			}
			for (l = 0; l < L; l++) {
				cl_load_f(in, dt, (o * L + l) * inner + j0, x, jb);
				for (j = 0; j < jb; j++)
					s[j] += cl_expf(x[j] - m[j]);
			}
			for (j = 0; j < jb; j++)
				s[j] = lg ? log(s[j]) : 1.0 / s[j];
			for (l = 0; l < L; l++) {
				size_t base = (o * L + l) * inner + j0;

				cl_load_f(in, dt, base, x, jb);
				for (j = 0; j < jb; j++)
					x[j] = lg ? (float)((double)(x[j] - m[j]) - s[j])
						  : cl_expf(x[j] - m[j]) * (float)s[j];
				cl_store_f(out, dt, base, x, jb);
			}
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_softmax = {
	"SOFTMAX", softmax_check, softmax_cost, softmax_run
};
