/* SPDX-License-Identifier: MIT */
/*
 * unary.c - UNARY: elementwise functions of one operand.
 *
 * One tight loop per op (the op switch is outside the loop).  f16 is
 * converted to f32 in blocks on the stack, computed, rounded back.
 */
#include "cl_opt.h"
#include "cl_common.h"

typedef void (*un_fn)(size_t n, const float *s, float *d, float alpha,
		      float beta);

#define UN_KERNEL(name, EXPR)                                                 \
	CL_CLONES static void name(size_t n, const float *s, float *d,        \
				   float alpha,                               \
			 float beta)                                          \
	{                                                                     \
		size_t i;                                                     \
		(void)alpha;                                                  \
		(void)beta;                                                   \
		for (i = 0; i < n; i++) {                                     \
			float x = s[i];                                       \
			d[i] = (EXPR);                                        \
		}                                                             \
	}

static float un_softplus(float x)
{
	return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

/*
 * erf for GELU only, branch-free so that the GELU loop vectorises:
 * Abramowitz & Stegun 7.1.26 with cl_expf, absolute error below 3e-7
 * (|GELU error| <= 1.5e-7 |x| + rounding).  UNARY ERF itself uses libm.
 */
static inline float un_erf_fast(float x)
{
	float ax = fabsf(x), t = 1.0f / (1.0f + 0.3275911f * ax);
	float y = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t -
		    0.284496736f) * t + 0.254829592f) * t;

	y = 1.0f - y * cl_expf(-ax * ax);
	return copysignf(y, x);
}

UN_KERNEL(un_relu, x < 0 ? 0.0f : x)
UN_KERNEL(un_sigmoid, 1.0f / (1.0f + cl_expf(-x)))
UN_KERNEL(un_tanh, cl_tanhf(x))
UN_KERNEL(un_exp, cl_expf(x))
UN_KERNEL(un_log, logf(x))
UN_KERNEL(un_sqrt, sqrtf(x))
UN_KERNEL(un_erf, erff(x))
UN_KERNEL(un_gelu, 0.5f * x * (1.0f + un_erf_fast(x * 0.70710678118654752f)))
UN_KERNEL(un_gelu_tanh,
	  0.5f * x *
		  (1.0f + cl_tanhf(0.79788456080286536f *
				(x + 0.044715f * x * x * x))))
UN_KERNEL(un_neg, -x)
UN_KERNEL(un_abs, fabsf(x))
UN_KERNEL(un_recip, 1.0f / x)
UN_KERNEL(un_leaky, x < 0 ? alpha * x : x)
UN_KERNEL(un_hsigmoid, fmaxf(0.0f, fminf(1.0f, alpha * x + beta)))
UN_KERNEL(un_hswish, x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f)))
UN_KERNEL(un_clip, x < alpha ? alpha : (x > beta ? beta : x))
UN_KERNEL(un_floor, floorf(x))
UN_KERNEL(un_ceil, ceilf(x))
UN_KERNEL(un_round, nearbyintf(x))
UN_KERNEL(un_sign, x > 0 ? 1.0f : (x < 0 ? -1.0f : x))
UN_KERNEL(un_sin, sinf(x))
UN_KERNEL(un_cos, cosf(x))
UN_KERNEL(un_elu, x > 0 ? x : alpha * expm1f(x))
UN_KERNEL(un_softplus_k, un_softplus(x))
UN_KERNEL(un_selu, beta * (x > 0 ? x : alpha * expm1f(x)))
UN_KERNEL(un_square, x * x)
UN_KERNEL(un_rsqrt, 1.0f / sqrtf(x))

static const un_fn un_kernels[IPUX_UN_COUNT] = {
	[IPUX_UN_RELU] = un_relu, [IPUX_UN_SIGMOID] = un_sigmoid,
	[IPUX_UN_TANH] = un_tanh, [IPUX_UN_EXP] = un_exp,
	[IPUX_UN_LOG] = un_log, [IPUX_UN_SQRT] = un_sqrt,
	[IPUX_UN_ERF] = un_erf, [IPUX_UN_GELU] = un_gelu,
	[IPUX_UN_GELU_TANH] = un_gelu_tanh, [IPUX_UN_NEG] = un_neg,
	[IPUX_UN_ABS] = un_abs, [IPUX_UN_RECIPROCAL] = un_recip,
	[IPUX_UN_LEAKY_RELU] = un_leaky, [IPUX_UN_HARD_SIGMOID] = un_hsigmoid,
	[IPUX_UN_HARD_SWISH] = un_hswish, [IPUX_UN_CLIP] = un_clip,
	[IPUX_UN_FLOOR] = un_floor, [IPUX_UN_CEIL] = un_ceil,
	[IPUX_UN_ROUND] = un_round, [IPUX_UN_SIGN] = un_sign,
	[IPUX_UN_SIN] = un_sin, [IPUX_UN_COS] = un_cos,
	[IPUX_UN_ELU] = un_elu, [IPUX_UN_SOFTPLUS] = un_softplus_k,
	[IPUX_UN_SELU] = un_selu, [IPUX_UN_SQUARE] = un_square,
	[IPUX_UN_RSQRT] = un_rsqrt,
};

/* Defaults of alpha and beta when the params are omitted (ONNX's). */
static void un_defaults(uint32_t op, float *alpha, float *beta)
{
	*alpha = 0;
	*beta = 0;
	switch (op) {
	case IPUX_UN_LEAKY_RELU:
		*alpha = 0.01f;
		break;
	case IPUX_UN_HARD_SIGMOID:
		*alpha = 0.2f;
		*beta = 0.5f;
		break;
	case IPUX_UN_CLIP:
		*alpha = -INFINITY;
		*beta = INFINITY;
		break;
	case IPUX_UN_ELU:
		*alpha = 1.0f;
		break;
	case IPUX_UN_SELU:
		*alpha = 1.67326319217681884765625f;
		*beta = 1.05070102214813232421875f;
		break;
	default:
		break;
	}
}

static int un_is_costly(uint32_t op)
{
	switch (op) {
	case IPUX_UN_SIGMOID: case IPUX_UN_TANH: case IPUX_UN_EXP:
	case IPUX_UN_LOG: case IPUX_UN_SQRT: case IPUX_UN_ERF:
	case IPUX_UN_GELU: case IPUX_UN_GELU_TANH: case IPUX_UN_RECIPROCAL:
	case IPUX_UN_SIN: case IPUX_UN_COS: case IPUX_UN_ELU:
	case IPUX_UN_SOFTPLUS: case IPUX_UN_SELU: case IPUX_UN_RSQRT:
		return 1;
	default:
		return 0;
	}
}

static int unary_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	uint32_t op, dt;
	int r = cl_check_counts(v, "UNARY", 2, 2, 1, 3, why, len);

	if (r)
		return r;
	op = v->params[0];
	if (op >= IPUX_UN_COUNT)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "UNARY: unknown op %u", op);
	dt = v->ops[0].dtype;
	r = cl_check_same_dtype(v, 0, 1, "UNARY", "src", "dst", why, len);
	if (r)
		return r;
	if (op == IPUX_UN_NOT) {
		if (dt != IPUX_DT_U8)
			return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
				      "UNARY: NOT needs U8, src is %s",
				      cl_dt_name(dt));
	} else if (!cl_is_float(dt) &&
		   !(dt == IPUX_DT_I32 &&
		     (op == IPUX_UN_NEG || op == IPUX_UN_ABS ||
		      op == IPUX_UN_SIGN))) {
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "UNARY: op %u does not accept %s", op,
			      cl_dt_name(dt));
	}
	return cl_check_count(v, 1, v->ops[0].count, "UNARY", "dst",
			      "src count", why, len);
}

static uint64_t unary_cost(const struct ipu_vertex_ctx *v)
{
	uint64_t c = cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 1);

	if (un_is_costly(v->params[0]))
		c = cl_sat_mul(c, 4);
	return CL_VERTEX_OVERHEAD + c;
}

static void un_i32(uint32_t op, size_t n, const int32_t *s, int32_t *d)
{
	size_t i;

	switch (op) {
	case IPUX_UN_NEG:
		for (i = 0; i < n; i++)
			d[i] = (int32_t)(0u - (uint32_t)s[i]);
		break;
	case IPUX_UN_ABS:
		for (i = 0; i < n; i++)
			d[i] = s[i] < 0 ? (int32_t)(0u - (uint32_t)s[i]) : s[i];
		break;
	default: /* SIGN */
		for (i = 0; i < n; i++)
			d[i] = (s[i] > 0) - (s[i] < 0);
		break;
	}
}

static int unary_run(const struct ipu_vertex_ctx *v)
{
	uint32_t op = v->params[0], dt = v->ops[0].dtype;
	size_t n = v->ops[0].count, i0, i;
	float alpha, beta;
	un_fn fn;

	if (op == IPUX_UN_NOT) {
		const uint8_t *s = IPU_OP_PTR(v, 0, const uint8_t);
		uint8_t *d = IPU_OP_PTR(v, 1, uint8_t);

		for (i = 0; i < n; i++)
			d[i] = s[i] == 0;
		return 0;
	}
	if (dt == IPUX_DT_I32) {
		un_i32(op, n, IPU_OP_PTR(v, 0, const int32_t),
		       IPU_OP_PTR(v, 1, int32_t));
		return 0;
	}
	un_defaults(op, &alpha, &beta);
	if (v->num_params > 1)
		alpha = cl_f32_from_bits(v->params[1]);
	if (v->num_params > 2)
		beta = cl_f32_from_bits(v->params[2]);
	fn = un_kernels[op];
	if (dt == IPUX_DT_F32) {
		fn(n, IPU_OP_PTR(v, 0, const float), IPU_OP_PTR(v, 1, float),
		   alpha, beta);
		return 0;
	}
	for (i0 = 0; i0 < n; i0 += CL_BLK) {
		size_t m = n - i0 < CL_BLK ? n - i0 : CL_BLK;
		float buf[CL_BLK];

		cl_load_f(IPU_OP_PTR(v, 0, const void), dt, i0, buf, m);
		fn(m, buf, buf, alpha, beta);
		cl_store_f(IPU_OP_PTR(v, 1, void), dt, i0, buf, m);
	}
	return 0;
}

const struct ipu_codelet ipu_cl_unary = {
	"UNARY", unary_check, unary_cost, unary_run
};
