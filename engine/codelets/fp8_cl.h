/* SPDX-License-Identifier: MIT */
/*
 * fp8_cl.h - helpers shared by the CAST_FP8, MATMUL_FP8 and CONV2D_FP8
 * codelets (private to engine/codelets/).
 *
 * An fp8 operand's format is its dtype (FP8_143 or FP8_152); its scale is
 * an i32 param of the vertex.  Values are decoded through a 256-entry f32
 * table built from the scalar reference (fp8.c) with the scale folded in,
 * which is exact, so every product of a decoded weight is the product of
 * the exact values.
 */
#ifndef IPU_FP8_CL_H
#define IPU_FP8_CL_H

#include "cl_common.h"
#include "ipu/fp8.h"

static inline uint32_t fp8_fmt_of(uint32_t dt)
{
	return dt == IPUX_DT_FP8_152 ? IPU_FP8_152 : IPU_FP8_143;
}

/*
 * A scale param: for an fp8 operand within [IPU_FP8_SCALE_MIN, _MAX], for
 * any other operand 0 (a scale that would be ignored is refused rather
 * than silently dropped).
 */
static inline int fp8_check_scale(const struct ipu_vertex_ctx *v, uint32_t op,
				  uint32_t param, const char *name,
				  const char *opname, char *why, size_t len)
{
	int32_t s = (int32_t)v->params[param];

	if (!cl_is_fp8(v->ops[op].dtype)) {
		if (s != 0)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "%s: scale of %s is %d but %s is %s, "
				      "not fp8 (must be 0)", name, opname, s,
				      opname, cl_dt_name(v->ops[op].dtype));
		return 0;
	}
	if (s < IPU_FP8_SCALE_MIN || s > IPU_FP8_SCALE_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: scale of %s is %d, outside [%d, %d]", name,
			      opname, s, IPU_FP8_SCALE_MIN, IPU_FP8_SCALE_MAX);
	return 0;
}

/* F32, F16, FP8_143 or FP8_152: what the fp8 codelets read. */
static inline int fp8_check_readable(const struct ipu_vertex_ctx *v,
				     uint32_t op, const char *name,
				     const char *opname, char *why, size_t len)
{
	uint32_t dt = v->ops[op].dtype;

	if (!cl_is_float(dt) && !cl_is_fp8(dt))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "%s: %s is %s, expected F32, F16, FP8_143 or "
			      "FP8_152", name, opname, cl_dt_name(dt));
	return 0;
}

static inline int fp8_check_fp8(const struct ipu_vertex_ctx *v, uint32_t op,
				const char *name, const char *opname,
				char *why, size_t len)
{
	if (!cl_is_fp8(v->ops[op].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "%s: %s is %s, expected FP8_143 or FP8_152",
			      name, opname, cl_dt_name(v->ops[op].dtype));
	return 0;
}

/* The decode table of an fp8 operand (only called for one). */
static inline void fp8_table_of(const struct ipu_vertex_ctx *v, uint32_t op,
				uint32_t param, float tab[256])
{
	ipu_fp8_table(tab, fp8_fmt_of(v->ops[op].dtype),
		      (int32_t)v->params[param]);
}

/*
 * Element i of a readable operand as f32: tab is its decode table when it
 * is fp8 (ignored otherwise).
 */
static inline float fp8_get(const void *base, uint32_t dt, const float *tab,
			    size_t i)
{
	switch (dt) {
	case IPUX_DT_F32: return ((const float *)base)[i];
	case IPUX_DT_F16: return cl_h2f(((const uint16_t *)base)[i]);
	default: return tab[((const uint8_t *)base)[i]];
	}
}

/*
 * 2^s as an f32 for a per-channel scale s, an I8 operand's element: check()
 * cannot read operand values (the verifier runs before the tile memory
 * exists), so s is clamped into the fp8 scale range here, where 2^s is a
 * normal f32 and multiplying by it is exact.
 */
static inline float fp8_pow2f(int8_t s)
{
	int32_t e = s < IPU_FP8_SCALE_MIN ? IPU_FP8_SCALE_MIN
		    : s > IPU_FP8_SCALE_MAX ? IPU_FP8_SCALE_MAX : s;
	uint32_t bits = (uint32_t)(e + 127) << 23;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/*
 * Per-channel scales: operand op, I8 with count exponents, replacing the
 * scale param of the fp8 weight operand w, which must then be 0.
 */
static inline int fp8_check_channel_scales(const struct ipu_vertex_ctx *v,
					   uint32_t op, uint32_t w,
					   uint32_t param, uint32_t count,
					   const char *name, const char *dim,
					   char *why, size_t len)
{
	if (!cl_is_fp8(v->ops[w].dtype) || v->params[param] != 0)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: per-channel scales need an fp8 weight with "
			      "scale param 0 (it is %s, scale %d)", name,
			      cl_dt_name(v->ops[w].dtype),
			      (int32_t)v->params[param]);
	if (v->ops[op].dtype != IPUX_DT_I8)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "%s: channel scales are %s, expected I8", name,
			      cl_dt_name(v->ops[op].dtype));
	if (v->ops[op].count != count)
		return ipu_errorf(why, len, IPUX_E_OPERAND_SHAPE,
			      "%s: %u channel scales, expected %u (%s)", name,
			      v->ops[op].count, count, dim);
	return 0;
}

#endif /* IPU_FP8_CL_H */
