/* SPDX-License-Identifier: MIT */
/*
 * rmsnorm.c - a custom-operator plugin: RMSNorm fused into one codelet,
 * written against the installed <ipu/custom_op.h> only.
 *
 *   com.example::RmsNorm(X[..., D], W[D]; epsilon) =
 *       X / sqrt(mean(X^2 over the last axis) + epsilon) * W
 *
 * Each vertex normalises `rows` rows of `cols` = D elements (split by
 * rows); W comes whole to every vertex.  F32 and F16 (stored binary16,
 * computed in f32, like the device's own codelets).
 *
 * Build: cc -shared -fPIC -O2 $(pkg-config --cflags libipu) -o librmsnorm.so rmsnorm.c
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ipu/custom_op.h>

#ifndef RMSNORM_MAX_COLS
#define RMSNORM_MAX_COLS 65536u	/* tests build a smaller limit */
#endif
#ifndef RMSNORM_ABI
#define RMSNORM_ABI IPU_CUSTOM_OP_ABI_VERSION	/* tests build other values */
#endif

/* the sum of squares in row order, in double: the reference does the same */
static float rms_scale(double sumsq, uint32_t cols, float eps)
{
	return (float)(1.0 / sqrt(sumsq / cols + (double)eps));
}

static int infer(const struct ipu_custom_shape *in, uint32_t nin, const double *attrs,
		 struct ipu_custom_shape *out, uint32_t nout, char *why, size_t whylen)
{
	int64_t d;

	(void)attrs;
	(void)nout;
	if (nin != 2)
		return snprintf(why, whylen, "takes X and W"), -1;
	if (in[0].rank < 1 || (in[0].dtype != IPUX_DT_F32 && in[0].dtype != IPUX_DT_F16))
		return snprintf(why, whylen, "X must be a float tensor of rank >= 1"), -1;
	d = in[0].dims[in[0].rank - 1];
	if (in[1].rank != 1 || in[1].dims[0] != d || in[1].dtype != in[0].dtype)
		return snprintf(why, whylen,
				"W must be a vector of X's last dimension (%lld) and type; it has rank %u%s",
				(long long)d, in[1].rank,
				in[1].rank == 1 ? " and another length or type" : ""), -1;
	if (attrs[0] < 0)
		return snprintf(why, whylen, "epsilon %g is negative", attrs[0]), -1;
	out[0] = in[0];
	return 0;
}

static int reference(const struct ipu_custom_shape *in_shapes, const float *const *in, uint32_t nin,
		     const double *attrs, const struct ipu_custom_shape *out_shapes,
		     float *const *out, uint32_t nout, char *why, size_t whylen)
{
	const struct ipu_custom_shape *x = &in_shapes[0];
	uint32_t cols = (uint32_t)x->dims[x->rank - 1];
	int64_t rows = 1;

	(void)nin;
	(void)out_shapes;
	(void)nout;
	(void)why;
	(void)whylen;
	for (uint32_t i = 0; i + 1 < x->rank; i++)
		rows *= x->dims[i];
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = in[0] + r * cols;
		double s = 0;
		float k;

		for (uint32_t c = 0; c < cols; c++)
			s += (double)xr[c] * xr[c];
		k = rms_scale(s, cols, (float)attrs[0]);
		for (uint32_t c = 0; c < cols; c++)
			out[0][r * cols + c] = xr[c] * k * in[1][c];
	}
	return 0;
}

/* ops [X, W, Y]; params [rows, cols, epsilon (f32 bits)] */
static int check(const struct ipu_vertex_ctx *v, char *why, size_t whylen)
{
	uint64_t n;
	uint32_t dt;

	if (v->num_ops != 3)
		return snprintf(why, whylen, "RmsNorm takes 3 operands, not %u", v->num_ops),
		       IPUX_E_OPERAND_COUNT;
	if (v->num_params != 3)
		return snprintf(why, whylen, "RmsNorm takes 3 params, not %u", v->num_params),
		       IPUX_E_PARAM_COUNT;
	dt = v->ops[0].dtype;
	if ((dt != IPUX_DT_F32 && dt != IPUX_DT_F16) || v->ops[1].dtype != dt || v->ops[2].dtype != dt)
		return snprintf(why, whylen, "operands must be all F32 or all F16"), IPUX_E_OPERAND_TYPE;
	n = (uint64_t)v->params[0] * v->params[1];
	if (!v->params[0] || !v->params[1] || v->ops[0].count != n || v->ops[2].count != n ||
	    v->ops[1].count != v->params[1])
		return snprintf(why, whylen, "X and Y need rows*cols = %llu elements, W cols = %u",
				(unsigned long long)n, v->params[1]), IPUX_E_OPERAND_SHAPE;
	if (v->params[1] > RMSNORM_MAX_COLS)
		return snprintf(why, whylen, "rows of %u elements, this build takes at most %u",
				v->params[1], RMSNORM_MAX_COLS), IPUX_E_PARAM_VALUE;
	return 0;
}

static uint64_t cost(const struct ipu_vertex_ctx *v)
{
	/* two passes over the row (square-sum, scale) plus a sqrt per row */
	return 20 + (uint64_t)v->params[0] * (30 + 2ull * v->params[1]);
}

static float load(const void *p, uint32_t dt, uint32_t i)
{
	return dt == IPUX_DT_F16 ? (float)((const _Float16 *)p)[i] : ((const float *)p)[i];
}

static void store(void *p, uint32_t dt, uint32_t i, float f)
{
	if (dt == IPUX_DT_F16)
		((_Float16 *)p)[i] = (_Float16)f;
	else
		((float *)p)[i] = f;
}

static int run(const struct ipu_vertex_ctx *v)
{
	const void *x = v->mem + v->ops[0].offset, *w = v->mem + v->ops[1].offset;
	void *y = v->mem + v->ops[2].offset;
	uint32_t rows = v->params[0], cols = v->params[1], dt = v->ops[0].dtype;
	float eps;

	memcpy(&eps, &v->params[2], sizeof(eps));
	for (uint32_t r = 0; r < rows; r++) {
		double s = 0;
		float k;

		for (uint32_t c = 0; c < cols; c++) {
			float f = load(x, dt, r * cols + c);

			s += (double)f * f;
		}
		k = rms_scale(s, cols, eps);
		for (uint32_t c = 0; c < cols; c++)
			store(y, dt, r * cols + c, load(x, dt, r * cols + c) * k * load(w, dt, c));
	}
	return 0;
}

static const struct ipu_custom_attr attrs[] = {
	{ "epsilon", IPU_CUSTOM_ATTR_FLOAT, 0, 1e-6 },
};

static const struct ipu_custom_op ops[] = { {
	.struct_size = sizeof(struct ipu_custom_op),
	.flags = IPU_CUSTOM_F16,
	.domain = "com.example",
	.name = "RmsNorm",
	.opset_min = 1,
	.opset_max = 1,
	.min_inputs = 2,
	.max_inputs = 2,
	.num_outputs = 1,
	.split = IPU_CUSTOM_SPLIT_ROWS,
	.attrs = attrs,
	.num_attrs = 1,
	.infer = infer,
	.reference = reference,
	.codelet = { "RmsNorm", check, cost, run },
} };

static const struct ipu_custom_op_library library = {
	.abi_version = RMSNORM_ABI,
	.struct_size = sizeof(struct ipu_custom_op_library),
	.name = "rmsnorm example",
	.ops = ops,
	.num_ops = 1,
};

const struct ipu_custom_op_library *ipu_custom_op_library(void);

const struct ipu_custom_op_library *ipu_custom_op_library(void)
{
	return &library;
}
