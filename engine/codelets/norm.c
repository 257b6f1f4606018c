/* SPDX-License-Identifier: MIT */
/*
 * norm.c - NORM: per-row normalisation to zero mean and unit (biased)
 * variance, then scale and bias (layer, instance and group norm).
 * Mean and variance are computed in double with two passes.
 */
#include "cl_opt.h"
#include "cl_common.h"

static int norm_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	static const char *const opn[] = { "in", "scale", "bias", "out" };
	const uint32_t *p;
	uint64_t n, ns;
	uint32_t i;
	int r = cl_check_counts(v, "NORM", 4, 4, 5, 5, why, len);

	if (r)
		return r;
	p = v->params;
	r = cl_check_dtype_float(v, 0, "NORM", "in", why, len);
	if (r)
		return r;
	for (i = 1; i < 4; i++) {
		r = cl_check_same_dtype(v, 0, i, "NORM", "in", opn[i], why, len);
		if (r)
			return r;
	}
	if (p[3] > 1)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "NORM: scale_mode %u is not 0 or 1", p[3]);
	if (p[3] == 1 && p[4] == 0)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "NORM: period is 0");
	r = cl_check_dims(p, 2, &n, "NORM", "rows*cols", why, len);
	if (!r)
		r = cl_check_count(v, 0, n, "NORM", "in", "rows*cols", why, len);
	if (!r)
		r = cl_check_count(v, 3, n, "NORM", "out", "rows*cols", why,
				   len);
	if (r)
		return r;
	ns = p[3] == 0 ? p[1] : p[4];
	r = cl_check_count(v, 1, ns, "NORM", "scale",
			   p[3] == 0 ? "cols" : "period", why, len);
	if (!r)
		r = cl_check_count(v, 2, ns, "NORM", "bias",
				   p[3] == 0 ? "cols" : "period", why, len);
	return r;
}

static uint64_t norm_cost(const struct ipu_vertex_ctx *v)
{
	/* mean, variance, normalise+scale passes, sqrt per row */
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 4) +
	       cl_sat_mul(v->params[0], 8);
}

static int norm_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	size_t rows = p[0], cols = p[1], r, c0, c;
	float eps = cl_f32_from_bits(p[2]);
	uint32_t dt = v->ops[0].dtype, mode = p[3], period = p[4];
	const void *in = IPU_OP_PTR(v, 0, const void);
	const void *sc = IPU_OP_PTR(v, 1, const void);
	const void *bi = IPU_OP_PTR(v, 2, const void);
	void *out = IPU_OP_PTR(v, 3, void);

	for (r = 0; r < rows; r++) {
		size_t base = r * cols;
		double acc[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, sum, var, mean, inv;
		size_t k;
		float x[CL_BLK], s[CL_BLK], b[CL_BLK];

		for (c0 = 0; c0 < cols; c0 += CL_BLK) {
			size_t m = cols - c0 < CL_BLK ? cols - c0 : CL_BLK;

			cl_load_f(in, dt, base + c0, x, m);
			for (c = 0; c + 8 <= m; c += 8)
				for (k = 0; k < 8; k++)
					acc[k] += x[c + k];
			for (; c < m; c++)
				acc[0] += x[c];
		}
		sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
		      ((acc[4] + acc[5]) + (acc[6] + acc[7]));
		mean = sum / (double)cols;
		for (k = 0; k < 8; k++)
			acc[k] = 0;
		for (c0 = 0; c0 < cols; c0 += CL_BLK) {
			size_t m = cols - c0 < CL_BLK ? cols - c0 : CL_BLK;

			cl_load_f(in, dt, base + c0, x, m);
			for (c = 0; c + 8 <= m; c += 8)
				for (k = 0; k < 8; k++)
					acc[k] += (x[c + k] - mean) * (x[c + k] - mean);
			for (; c < m; c++)
				acc[0] += (x[c] - mean) * (x[c] - mean);
		}
		var = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
		      ((acc[4] + acc[5]) + (acc[6] + acc[7]));
		var /= (double)cols;
		inv = 1.0 / sqrt(var + (double)eps);
		if (mode == 1) {
			float s1 = cl_getf(sc, dt, r % period);
			float b1 = cl_getf(bi, dt, r % period);

			for (c = 0; c < CL_BLK; c++) {
				s[c] = s1;
				b[c] = b1;
			}
		}
		for (c0 = 0; c0 < cols; c0 += CL_BLK) {
			size_t m = cols - c0 < CL_BLK ? cols - c0 : CL_BLK;

			cl_load_f(in, dt, base + c0, x, m);
			if (mode == 0) {
				cl_load_f(sc, dt, c0, s, m);
				cl_load_f(bi, dt, c0, b, m);
			}
			for (c = 0; c < m; c++)
				x[c] = (float)((x[c] - mean) * inv) * s[c] + b[c];
			cl_store_f(out, dt, base + c0, x, m);
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_norm = {
	"NORM", norm_check, norm_cost, norm_run
};
