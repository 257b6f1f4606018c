/* SPDX-License-Identifier: MIT */
/*
 * sample.c - SAMPLE: a generation step's token drawn on the device from
 * each row's top-k candidates (temperature, top-k, top-p, seeded), with
 * the sampler the host uses too (ipu/sample.h), so that both give the same
 * token for the same logits and seed.
 */
#include "cl_common.h"
#include "ipu/sample.h"

static int sample_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p;
	uint64_t rows, k;
	int r = cl_check_counts(v, "SAMPLE", 5, 5, 2, 2, why, len);

	if (r)
		return r;
	p = v->params;
	rows = p[0];
	k = p[1];
	if (!cl_is_float(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE, "SAMPLE: values is %s, expected F32 or F16",
				  cl_dt_name(v->ops[0].dtype));
	if (v->ops[1].dtype != IPUX_DT_I32 && v->ops[1].dtype != IPUX_DT_I64)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE, "SAMPLE: ids is %s, expected I32 or I64",
				  cl_dt_name(v->ops[1].dtype));
	if (v->ops[2].dtype != IPUX_DT_F32)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE, "SAMPLE: params is %s, expected F32",
				  cl_dt_name(v->ops[2].dtype));
	if (v->ops[3].dtype != IPUX_DT_I64)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE, "SAMPLE: keys is %s, expected I64",
				  cl_dt_name(v->ops[3].dtype));
	if (v->ops[4].dtype != IPUX_DT_I32 && v->ops[4].dtype != IPUX_DT_I64)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE, "SAMPLE: out is %s, expected I32 or I64",
				  cl_dt_name(v->ops[4].dtype));
	if (k < 1 || k > IPU_SAMPLE_MAX_K)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE, "SAMPLE: k %llu outside 1..%u",
				  (unsigned long long)k, IPU_SAMPLE_MAX_K);
	if ((r = cl_check_count(v, 0, rows * k, "SAMPLE", "values", "rows*k", why, len)) ||
	    (r = cl_check_count(v, 1, rows * k, "SAMPLE", "ids", "rows*k", why, len)) ||
	    (r = cl_check_count(v, 2, rows * 2, "SAMPLE", "params", "rows*2", why, len)) ||
	    (r = cl_check_count(v, 3, rows * 3, "SAMPLE", "keys", "rows*3", why, len)) ||
	    (r = cl_check_count(v, 4, rows, "SAMPLE", "out", "rows", why, len)))
		return r;
	for (uint32_t i = 0; i < 4; i++)
		if (cl_overlap(v, i, 4))
			return ipu_errorf(why, len, IPUX_E_OPERAND_SHAPE, "SAMPLE: out overlaps operand %u", i);
	return 0;
}

static uint64_t sample_cost(const struct ipu_vertex_ctx *v)
{
	/* three passes of an exp per candidate, about 20 cycles each */
	return CL_VERTEX_OVERHEAD + 60 * (uint64_t)v->params[0] * v->params[1];
}

static int sample_run(const struct ipu_vertex_ctx *v)
{
	uint32_t rows = v->params[0], k = v->params[1];
	const void *vals = IPU_OP_PTR(v, 0, const void);
	const void *ids = IPU_OP_PTR(v, 1, const void);
	const float *prm = IPU_OP_PTR(v, 2, const float);
	const int64_t *keys = IPU_OP_PTR(v, 3, const int64_t);
	void *out = IPU_OP_PTR(v, 4, void);
	float x[IPU_SAMPLE_MAX_K];

	for (uint32_t r = 0; r < rows; r++) {
		/* out-of-range top_k means every candidate (the runtime asks
		 * the device only for top_k 1..k) */
		int64_t top_k = keys[3 * (size_t)r];
		uint32_t n = top_k >= 1 && top_k < (int64_t)k ? (uint32_t)top_k : k, pick;
		size_t at;
		int64_t id;

		for (uint32_t j = 0; j < n; j++)
			x[j] = cl_getf(vals, v->ops[0].dtype, (size_t)r * k + j);
		pick = ipu_sample_pick(x, n, prm[2 * (size_t)r], prm[2 * (size_t)r + 1],
				       ipu_sample_uniform((uint64_t)keys[3 * (size_t)r + 1],
							  (uint64_t)keys[3 * (size_t)r + 2]));
		at = (size_t)r * k + pick;
		id = v->ops[1].dtype == IPUX_DT_I64 ? ((const int64_t *)ids)[at] : ((const int32_t *)ids)[at];
		if (v->ops[4].dtype == IPUX_DT_I64)
			((int64_t *)out)[r] = id;
		else
			((int32_t *)out)[r] = (int32_t)id;
	}
	return 0;
}

const struct ipu_codelet ipu_cl_sample = {
	"SAMPLE", sample_check, sample_cost, sample_run
};
