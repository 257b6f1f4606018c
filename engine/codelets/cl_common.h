/* SPDX-License-Identifier: MIT */
/*
 * cl_common.h - helpers shared by the codelet implementations.
 *
 * Private to engine/codelets/.  Everything here is static
 * inline and free of global state.  check() helpers write their reason with
 * vsnprintf (into the caller's buffer, never to a stream); run() code never
 * allocates, prints or touches anything outside its operand regions.
 */
#ifndef IPU_CL_COMMON_H
#define IPU_CL_COMMON_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/engine.h"
#include "ipu/half.h"

/*
 * Hot elementwise loops are compiled twice, for AVX2 and for the baseline,
 * and picked at load time (gcc function multi-versioning, an ifunc).  Not
 * under ThreadSanitizer: ifunc resolvers run during relocation, before the
 * TSan runtime is up, and instrumented resolvers crash there.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
	defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define CL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CL_CLONES
#endif

/* Per-vertex overhead of the cost model, in cycles (codelets.md). */
#define CL_VERTEX_OVERHEAD 40u
/* Block of elements converted to f32 on the stack at a time. */
#define CL_BLK 256u

/* The codelet descriptors, one per id (defined in the family files). */
extern const struct ipu_codelet ipu_cl_copy, ipu_cl_fill, ipu_cl_cast,
	ipu_cl_unary, ipu_cl_binary, ipu_cl_where, ipu_cl_matmul,
	ipu_cl_conv2d, ipu_cl_reduce, ipu_cl_softmax, ipu_cl_norm,
	ipu_cl_pool2d, ipu_cl_gather, ipu_cl_transpose, ipu_cl_strided_copy,
	ipu_cl_pad, ipu_cl_cumsum, ipu_cl_topk, ipu_cl_iota, ipu_cl_cast_fp8,
	ipu_cl_matmul_fp8, ipu_cl_conv2d_fp8, ipu_cl_nms, ipu_cl_sample;

static inline const char *cl_dt_name(uint32_t dt)
{
	switch (dt) {
	case IPUX_DT_F32: return "F32";
	case IPUX_DT_F16: return "F16";
	case IPUX_DT_I32: return "I32";
	case IPUX_DT_U8: return "U8";
	case IPUX_DT_I8: return "I8";
	case IPUX_DT_I64: return "I64";
	case IPUX_DT_FP8_143: return "FP8_143";
	case IPUX_DT_FP8_152: return "FP8_152";
	default: return "INVALID";
	}
}

static inline int cl_is_float(uint32_t dt)
{
	return dt == IPUX_DT_F32 || dt == IPUX_DT_F16;
}

/*
 * The 8-bit floats are storage: codelets that only move bytes (COPY,
 * GATHER, TRANSPOSE, STRIDED_COPY, WHERE) take them like any dtype, the
 * *_FP8 codelets read and write them with a scale, every other codelet
 * refuses them (a value has no meaning without the tensor's scale).
 */
static inline int cl_is_fp8(uint32_t dt)
{
	return dt == IPUX_DT_FP8_143 || dt == IPUX_DT_FP8_152;
}

static inline int cl_is_valid_dt(uint32_t dt)
{
	return ipux_dtype_size(dt) != 0;
}

/* Operand and param count checks. */
static inline int cl_check_counts(const struct ipu_vertex_ctx *v,
				  const char *name, uint32_t min_ops,
				  uint32_t max_ops, uint32_t min_params,
				  uint32_t max_params, char *why,
				  size_t whylen)
{
	if (v->num_ops < min_ops || v->num_ops > max_ops) {
		if (min_ops == max_ops)
			return ipu_errorf(why, whylen, IPUX_E_OPERAND_COUNT,
				      "%s: %u operands, expected %u", name,
				      v->num_ops, min_ops);
		return ipu_errorf(why, whylen, IPUX_E_OPERAND_COUNT,
			      "%s: %u operands, expected %u..%u", name,
			      v->num_ops, min_ops, max_ops);
	}
	if (v->num_params < min_params || v->num_params > max_params) {
		if (min_params == max_params)
			return ipu_errorf(why, whylen, IPUX_E_PARAM_COUNT,
				      "%s: %u params, expected %u", name,
				      v->num_params, min_params);
		return ipu_errorf(why, whylen, IPUX_E_PARAM_COUNT,
			      "%s: %u params, expected %u..%u", name,
			      v->num_params, min_params, max_params);
	}
	return 0;
}

/*
 * Product of n u32 dims, each of which must be >= 1.  Returns 0 and the
 * product (<= UINT32_MAX, the largest operand count) or -1 if a dim is 0
 * and -2 if the product exceeds UINT32_MAX.
 */
static inline int cl_prod(const uint32_t *d, uint32_t n, uint64_t *out)
{
	uint64_t p = 1;
	uint32_t i;

	*out = 0;
	for (i = 0; i < n; i++) {
		if (d[i] == 0)
			return -1;
		p *= d[i]; /* p <= 2^32, d < 2^32: no u64 overflow */
		if (p > UINT32_MAX)
			return -2;
	}
	*out = p;
	return 0;
}

/*
 * Checks that every dim in d[0..n) is >= 1 and their product fits an
 * operand count; names the codelet and `what` in the reason.
 */
static inline int cl_check_dims(const uint32_t *d, uint32_t n, uint64_t *out,
				const char *name, const char *what, char *why,
				size_t whylen)
{
	int r = cl_prod(d, n, out);

	if (r == -1)
		return ipu_errorf(why, whylen, IPUX_E_PARAM_VALUE,
			      "%s: %s has a zero dimension", name, what);
	if (r == -2)
		return ipu_errorf(why, whylen, IPUX_E_PARAM_VALUE,
			      "%s: %s has more than 2^32-1 elements", name,
			      what);
	return 0;
}

static inline int cl_check_count(const struct ipu_vertex_ctx *v, uint32_t op,
				 uint64_t want, const char *name,
				 const char *opname, const char *expr,
				 char *why, size_t whylen)
{
	if (v->ops[op].count != want)
		return ipu_errorf(why, whylen, IPUX_E_OPERAND_SHAPE,
			      "%s: %s has %u elements, %s = %llu", name,
			      opname, v->ops[op].count, expr,
			      (unsigned long long)want);
	return 0;
}

static inline int cl_check_dtype_float(const struct ipu_vertex_ctx *v,
				       uint32_t op, const char *name,
				       const char *opname, char *why,
				       size_t whylen)
{
	if (!cl_is_float(v->ops[op].dtype))
		return ipu_errorf(why, whylen, IPUX_E_OPERAND_TYPE,
			      "%s: %s is %s, expected F32 or F16", name, opname,
			      cl_dt_name(v->ops[op].dtype));
	return 0;
}

static inline int cl_check_same_dtype(const struct ipu_vertex_ctx *v,
				      uint32_t a, uint32_t b,
				      const char *name, const char *an,
				      const char *bn, char *why,
				      size_t whylen)
{
	if (v->ops[a].dtype != v->ops[b].dtype)
		return ipu_errorf(why, whylen, IPUX_E_OPERAND_TYPE,
			      "%s: %s is %s but %s is %s", name, bn,
			      cl_dt_name(v->ops[b].dtype), an,
			      cl_dt_name(v->ops[a].dtype));
	return 0;
}

/* Byte range [begin, end) of operand i. */
static inline int cl_overlap(const struct ipu_vertex_ctx *v, uint32_t a,
			     uint32_t b)
{
	uint64_t a0 = v->ops[a].offset, b0 = v->ops[b].offset;
	uint64_t a1 = a0 + (uint64_t)v->ops[a].count *
			      ipux_dtype_size(v->ops[a].dtype);
	uint64_t b1 = b0 + (uint64_t)v->ops[b].count *
			      ipux_dtype_size(v->ops[b].dtype);

	return a0 < b1 && b0 < a1;
}

static inline float cl_f32_from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline uint32_t cl_bits_from_f32(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* Saturating add for cost arithmetic. */
static inline uint64_t cl_sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return UINT64_MAX;
	return r;
}

static inline uint64_t cl_sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return UINT64_MAX;
	return r;
}

static inline uint64_t cl_div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/*
 * Cost of streaming `elems` elements of dtype dt through the vector unit
 * (8 bytes per cycle: f32 2/cycle, f16 4/cycle, u8 8/cycle), times `passes`.
 */
static inline uint64_t cl_cost_stream(uint64_t elems, uint32_t dt,
				      uint64_t passes)
{
	uint32_t sz = ipux_dtype_size(dt);

	if (!sz)
		sz = 4;
	return cl_sat_mul(cl_div_up(cl_sat_mul(elems, sz), 8), passes);
}

/*
 * Branchless binary16 <-> binary32 conversions (the FP16 library's
 * algorithms), bit-identical to half.h's ipu_f16_to_f32/ipu_f32_to_f16
 * (NaN payloads kept and quieted), but free of branches so that gcc
 * vectorises loops of them.  They rely on IEEE single arithmetic in the
 * default rounding mode without flush-to-zero, so they are only used when
 * float expressions are evaluated in float (FLT_EVAL_METHOD 0: SSE, NEON);
 * otherwise (x87) the half.h versions are used.  tests/engine checks them
 * exhaustively against half.h.
 */
#include <float.h>

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
static inline float cl_h2f(uint16_t h)
{
	uint32_t w = (uint32_t)h << 16;
	uint32_t sign = w & 0x80000000u;
	uint32_t two_w = w + w;
	float norm = cl_f32_from_bits((two_w >> 4) + (0xE0u << 23)) *
		     0x1.0p-112f;
	float denorm = cl_f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
	/* select with masks: no branch for the vectoriser to give up on */
	uint32_t m = 0u - (uint32_t)(two_w < (1u << 27));
	uint32_t r = (cl_bits_from_f32(denorm) & m) |
		     (cl_bits_from_f32(norm) & ~m);

	return cl_f32_from_bits(sign | r);
}

static inline uint16_t cl_f2h(float f)
{
	uint32_t w = cl_bits_from_f32(f);
	uint32_t shl1_w = w + w;
	uint32_t sign = w & 0x80000000u;
	uint32_t bias = shl1_w & 0xFF000000u;
	float base = (fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
	uint32_t bits, nonsign, nan, m;

	m = 0u - (uint32_t)(bias < 0x71000000u);
	bias = (0x71000000u & m) | (bias & ~m);
	base = cl_f32_from_bits((bias >> 1) + 0x07800000u) + base;
	bits = cl_bits_from_f32(base);
	nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
	nan = 0x7E00u | ((w & 0x7fffffu) >> 13);
	m = 0u - (uint32_t)(shl1_w > 0xFF000000u);
	return (uint16_t)((sign >> 16) | (nan & m) | (nonsign & ~m));
}
#else
static inline float cl_h2f(uint16_t h)
{
	return ipu_f16_to_f32(h);
}

static inline uint16_t cl_f2h(float f)
{
	return ipu_f32_to_f16(f);
}
#endif

/*
 * exp(x) in f32 without branches (Cephes' expf: Cody-Waite reduction by
 * ln 2, degree-6 polynomial, scaling by 2^n in two steps so that subnormal
 * results are rounded once).  Error below 2 ulp over the whole range
 * (tests/engine checks it against exp() in double); overflow gives +inf,
 * underflow 0, NaN stays NaN.  Unlike glibc's expf, loops of it vectorise.
 */
static inline float cl_expf(float x)
{
	uint32_t xb = cl_bits_from_f32(x);
	uint32_t big = 0u - (uint32_t)(x > 88.72283935546875f);
	uint32_t small = 0u - (uint32_t)(x < -103.97208404541015625f);
	uint32_t nan = 0u - (uint32_t)(x != x);
	uint32_t spec = big | small | nan;
	float xc = cl_f32_from_bits(xb & ~spec); /* 0 where special */
	float fn = xc * 1.44269504088896341f + 12582912.0f;
	int32_t n = (int32_t)(cl_bits_from_f32(fn) - 0x4B400000u);
	int32_t n1 = n / 2, n2 = n - n1;
	float r, p, y;

	fn -= 12582912.0f;
	r = xc - fn * 0.693359375f;
	r = r - fn * -2.12194440e-4f;
	p = 1.9875691500E-4f;
	p = p * r + 1.3981999507E-3f;
	p = p * r + 8.3334519073E-3f;
	p = p * r + 4.1665795894E-2f;
	p = p * r + 1.6666665459E-1f;
	p = p * r + 5.0000001201E-1f;
	y = p * (r * r) + r + 1.0f;
	y = y * cl_f32_from_bits((uint32_t)(n1 + 127) << 23);
	y = y * cl_f32_from_bits((uint32_t)(n2 + 127) << 23);
	return cl_f32_from_bits((cl_bits_from_f32(y) & ~spec) |
				(0x7f800000u & big) | (xb & nan));
}

/*
 * tanh(x) in f32 without branches (Cephes' tanhf): an odd polynomial below
 * |x| = 0.625, 1 - 2/(exp(2|x|)+1) above; both are computed and one is
 * selected.  Error below 1.5 ulp over all f32 inputs (tested), NaN stays.
 */
static inline float cl_tanhf(float x)
{
	float ax = fabsf(x), s = x * x;
	float e = cl_expf(ax + ax);
	float big = copysignf(1.0f - 2.0f / (e + 1.0f), x);
	float small = ((((-5.70498872745E-3f * s + 2.06390887954E-2f) * s -
			 5.37397155531E-2f) * s + 1.33314422036E-1f) * s -
		       3.33332819422E-1f) * s * x + x;
	uint32_t m = 0u - (uint32_t)(ax < 0.625f);

	return cl_f32_from_bits((cl_bits_from_f32(small) & m) |
				(cl_bits_from_f32(big) & ~m));
}

/* Blocks of f16 <-> f32 (convert.c, multi-versioned). */
void ipu_cl_h2f_block(float *dst, const uint16_t *src, size_t n);
void ipu_cl_f2h_block(uint16_t *dst, const float *src, size_t n);

/* Load n elements (float dtype dt) starting at element i0 into f32. */
static inline void cl_load_f(const void *base, uint32_t dt, size_t i0,
			     float *dst, size_t n)
{
	if (dt == IPUX_DT_F32)
		memcpy(dst, (const float *)base + i0, n * sizeof(float));
	else
		ipu_cl_h2f_block(dst, (const uint16_t *)base + i0, n);
}

static inline void cl_store_f(void *base, uint32_t dt, size_t i0,
			      const float *src, size_t n)
{
	if (dt == IPUX_DT_F32)
		memcpy((float *)base + i0, src, n * sizeof(float));
	else
		ipu_cl_f2h_block((uint16_t *)base + i0, src, n);
}

/* One float element (F32 or F16) read/write. */
static inline float cl_getf(const void *base, uint32_t dt, size_t i)
{
	if (dt == IPUX_DT_F32)
		return ((const float *)base)[i];
	return cl_h2f(((const uint16_t *)base)[i]);
}

static inline void cl_setf(void *base, uint32_t dt, size_t i, float f)
{
	if (dt == IPUX_DT_F32)
		((float *)base)[i] = f;
	else
		((uint16_t *)base)[i] = cl_f2h(f);
}

/*
 * Fill `count` elements of dtype dt at p with the FILL-encoded `value`
 * (shared with PAD's constant mode).
 */
static inline void cl_fill_elems(void *p, uint32_t dt, size_t count, uint32_t value)
{
	size_t i;

	switch (dt) {
	case IPUX_DT_F32: {
		float *d = p, f = cl_f32_from_bits(value);

		for (i = 0; i < count; i++)
			d[i] = f;
		break;
	}
	case IPUX_DT_F16: {
		uint16_t *d = p, h = ipu_f32_to_f16(cl_f32_from_bits(value));

		for (i = 0; i < count; i++)
			d[i] = h;
		break;
	}
	case IPUX_DT_I32: {
		int32_t *d = p, x = (int32_t)value;

		for (i = 0; i < count; i++)
			d[i] = x;
		break;
	}
	case IPUX_DT_U8:
	case IPUX_DT_I8:
	case IPUX_DT_FP8_143: /* the value is the code, scale-free */
	case IPUX_DT_FP8_152:
		memset(p, (int)(value & 0xffu), count);
		break;
	case IPUX_DT_I64: {
		int64_t *d = p, x = (int32_t)value;

		for (i = 0; i < count; i++)
			d[i] = x;
		break;
	}
	default:
		break;
	}
}

/* Copy one element of `size` bytes (1, 2, 4 or 8). */
static inline void cl_copy_elem(uint8_t *d, const uint8_t *s, uint32_t size)
{
	switch (size) {
	case 1: *d = *s; break;
	case 2: memcpy(d, s, 2); break;
	case 4: memcpy(d, s, 4); break;
	default: memcpy(d, s, 8); break;
	}
}


/*
 * N-dimensional walk over a dense output of `shape` with up to CL_ND_OPS
 * strided operands.  cl_nd_simplify() drops size-1 dims and merges adjacent
 * dims that are contiguous for every operand, so the innermost row is as
 * long as possible; cl_nd_next() advances the outer index (all dims but the
 * last) and the per-operand element offsets.
 */
#define CL_ND_OPS 4

struct cl_nd {
	uint32_t rank;			/* >= 1 after simplify */
	uint32_t nops;
	uint64_t shape[IPUX_MAX_RANK];
	int64_t stride[CL_ND_OPS][IPUX_MAX_RANK];
};

static inline void cl_nd_simplify(struct cl_nd *nd)
{
	uint32_t k, j, r = 0;

	/* drop size-1 dims */
	for (k = 0; k < nd->rank; k++) {
		if (nd->shape[k] == 1)
			continue;
		nd->shape[r] = nd->shape[k];
		for (j = 0; j < nd->nops; j++)
			nd->stride[j][r] = nd->stride[j][k];
		r++;
	}
	if (r == 0) {
		nd->shape[0] = 1;
		for (j = 0; j < nd->nops; j++)
			nd->stride[j][0] = 0;
		r = 1;
	}
	nd->rank = r;
	/* merge dim k-1 into dim k when contiguous for every operand */
	r = 0;
	for (k = 1; k < nd->rank; k++) {
		int ok = 1;

		for (j = 0; j < nd->nops; j++)
			if (nd->stride[j][r] !=
			    nd->stride[j][k] * (int64_t)nd->shape[k])
				ok = 0;
		if (ok) {
			nd->shape[r] *= nd->shape[k];
			for (j = 0; j < nd->nops; j++)
				nd->stride[j][r] = nd->stride[j][k];
		} else {
			r++;
			nd->shape[r] = nd->shape[k];
			for (j = 0; j < nd->nops; j++)
				nd->stride[j][r] = nd->stride[j][k];
		}
	}
	nd->rank = r + 1;
}

/* Number of rows (product of all dims but the last). */
static inline uint64_t cl_nd_rows(const struct cl_nd *nd)
{
	uint64_t p = 1;
	uint32_t k;

	for (k = 0; k + 1 < nd->rank; k++)
		p *= nd->shape[k];
	return p;
}

/* Advance idx (outer dims) and off[] to the next row. */
static inline void cl_nd_next(const struct cl_nd *nd, uint64_t *idx,
			      int64_t *off)
{
	uint32_t j;
	int k;

	for (k = (int)nd->rank - 2; k >= 0; k--) {
		idx[k]++;
		for (j = 0; j < nd->nops; j++)
			off[j] += nd->stride[j][k];
		if (idx[k] < nd->shape[k])
			return;
		for (j = 0; j < nd->nops; j++)
			off[j] -= nd->stride[j][k] * (int64_t)nd->shape[k];
		idx[k] = 0;
	}
}

/*
 * Largest element index reached by strides st[0..rank) (non-negative)
 * over `shape` (dims >= 1), or -1 on overflow.
 */
static inline int cl_max_index(const uint32_t *shape, const uint32_t *st,
			       uint32_t rank, uint64_t *out)
{
	uint64_t m = 0, t;
	uint32_t k;

	for (k = 0; k < rank; k++) {
		t = (uint64_t)(shape[k] - 1) * st[k]; /* < 2^64 */
		if (__builtin_add_overflow(m, t, &m)) {
			*out = UINT64_MAX;
			return -1;
		}
	}
	*out = m;
	return 0;
}

/*
 * Checks that non-negative strides st over shape stay inside operand op;
 * names the stride list `what`.
 */
static inline int cl_check_strides(const struct ipu_vertex_ctx *v, uint32_t op,
				   const uint32_t *shape, const uint32_t *st,
				   uint32_t rank, const char *name,
				   const char *what, char *why, size_t whylen)
{
	uint64_t m;

	if (cl_max_index(shape, st, rank, &m) || m >= v->ops[op].count)
		return ipu_errorf(why, whylen, IPUX_E_OPERAND_SHAPE,
			      "%s: %s reach element %llu of %u", name, what,
			      (unsigned long long)m, v->ops[op].count);
	return 0;
}

#endif /* IPU_CL_COMMON_H */
