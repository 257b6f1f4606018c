/* SPDX-License-Identifier: MIT */
/*
 * copy.c - COPY, FILL, CAST and IOTA codelets.
 */
#include "cl_opt.h"
#include "cl_common.h"

/* ---------------------------------------------------------------- COPY */

static int copy_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	int r = cl_check_counts(v, "COPY", 2, 2, 0, 0, why, len);

	if (r)
		return r;
	if (!cl_is_valid_dt(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "COPY: src has invalid dtype %u",
			      v->ops[0].dtype);
	r = cl_check_same_dtype(v, 0, 1, "COPY", "src", "dst", why, len);
	if (r)
		return r;
	return cl_check_count(v, 1, v->ops[0].count, "COPY", "dst",
			      "src count", why, len);
}

static uint64_t copy_cost(const struct ipu_vertex_ctx *v)
{
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 1);
}

static int copy_run(const struct ipu_vertex_ctx *v)
{
	size_t bytes = (size_t)v->ops[0].count * ipux_dtype_size(v->ops[0].dtype);

	if (bytes)
		memmove(IPU_OP_PTR(v, 1, uint8_t), IPU_OP_PTR(v, 0, uint8_t),
			bytes);
	return 0;
}

const struct ipu_codelet ipu_cl_copy = {
	"COPY", copy_check, copy_cost, copy_run
};

/* ---------------------------------------------------------------- FILL */

static int fill_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	int r = cl_check_counts(v, "FILL", 1, 1, 1, 1, why, len);

	if (r)
		return r;
	if (!cl_is_valid_dt(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "FILL: dst has invalid dtype %u",
			      v->ops[0].dtype);
	return 0;
}

static uint64_t fill_cost(const struct ipu_vertex_ctx *v)
{
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 1);
}

static int fill_run(const struct ipu_vertex_ctx *v)
{
	cl_fill_elems(IPU_OP_PTR(v, 0, void), v->ops[0].dtype, v->ops[0].count,
		   v->params[0]);
	return 0;
}

const struct ipu_codelet ipu_cl_fill = {
	"FILL", fill_check, fill_cost, fill_run
};

/* ---------------------------------------------------------------- CAST */

static int cast_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	int r = cl_check_counts(v, "CAST", 2, 2, 0, 0, why, len);

	if (r)
		return r;
	if (!cl_is_valid_dt(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "CAST: src has invalid dtype %u",
			      v->ops[0].dtype);
	if (!cl_is_valid_dt(v->ops[1].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "CAST: dst has invalid dtype %u",
			      v->ops[1].dtype);
	if (cl_is_fp8(v->ops[0].dtype) || cl_is_fp8(v->ops[1].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "CAST: %s to %s needs a scale: use CAST_FP8",
			      cl_dt_name(v->ops[0].dtype),
			      cl_dt_name(v->ops[1].dtype));
	return cl_check_count(v, 1, v->ops[0].count, "CAST", "dst",
			      "src count", why, len);
}

static uint64_t cast_cost(const struct ipu_vertex_ctx *v)
{
	uint32_t dt = v->ops[0].dtype;

	if (ipux_dtype_size(v->ops[1].dtype) > ipux_dtype_size(dt))
		dt = v->ops[1].dtype;
	return CL_VERTEX_OVERHEAD + cl_cost_stream(v->ops[0].count, dt, 1);
}

/* Float to integer: truncate toward zero, saturate, NaN -> 0. */
static int64_t cast_f2i(double d, int64_t lo, int64_t hi)
{
	if (d != d)
		return 0;
	if (d <= (double)lo)
		return lo;
	if (d >= (double)hi)
		return hi;
	return (int64_t)d; /* C conversion truncates toward zero */
}

static int cast_run(const struct ipu_vertex_ctx *v)
{
	uint32_t sdt = v->ops[0].dtype, ddt = v->ops[1].dtype;
	const uint8_t *src = IPU_OP_PTR(v, 0, const uint8_t);
	uint8_t *dst = IPU_OP_PTR(v, 1, uint8_t);
	size_t n = v->ops[0].count, i0, i;
	int sfloat = cl_is_float(sdt);

	if (sdt == ddt) {
		if (n)
			memmove(dst, src, n * ipux_dtype_size(sdt));
		return 0;
	}
	if (sdt == IPUX_DT_F32 && ddt == IPUX_DT_F16) {
		uintptr_t s0 = (uintptr_t)src, d0 = (uintptr_t)dst;

		if (d0 >= s0 + n * 4 || d0 + n * 2 <= s0) {
			ipu_cl_f2h_block((uint16_t *)dst, (const float *)src, n);
			return 0;
		}
		/* overlapping (e.g. narrowed in place): forwards */
		for (i = 0; i < n; i++)
			((uint16_t *)dst)[i] =
				cl_f2h(((const float *)src)[i]);
		return 0;
	}
	if (sdt == IPUX_DT_F16 && ddt == IPUX_DT_F32) {
		uintptr_t s0 = (uintptr_t)src, d0 = (uintptr_t)dst;

		if (d0 >= s0 + n * 2 || d0 + n * 4 <= s0) {
			ipu_cl_h2f_block((float *)dst, (const uint16_t *)src, n);
			return 0;
		}
		/* overlapping (e.g. widened in place): backwards */
		for (i = n; i-- > 0;)
			((float *)dst)[i] =
				cl_h2f(((const uint16_t *)src)[i]);
		return 0;
	}
	for (i0 = 0; i0 < n; i0 += CL_BLK) {
		size_t b = n - i0 < CL_BLK ? n - i0 : CL_BLK;
		union { double f; int64_t i; } u[CL_BLK] = { { 0 } };

		/* load a block (the whole block is read before any write) */
		switch (sdt) {
		case IPUX_DT_F32:
			for (i = 0; i < b; i++)
				u[i].f = ((const float *)src)[i0 + i];
			break;
		case IPUX_DT_F16:
			for (i = 0; i < b; i++)
				u[i].f = cl_h2f(
					((const uint16_t *)src)[i0 + i]);
			break;
		case IPUX_DT_I32:
			for (i = 0; i < b; i++)
				u[i].i = ((const int32_t *)src)[i0 + i];
			break;
		case IPUX_DT_U8:
			for (i = 0; i < b; i++)
				u[i].i = src[i0 + i];
			break;
		case IPUX_DT_I8:
			for (i = 0; i < b; i++)
				u[i].i = (int8_t)src[i0 + i];
			break;
		default: /* I64 */
			for (i = 0; i < b; i++)
				memcpy(&u[i].i, src + (i0 + i) * 8, 8);
			break;
		}
		switch (ddt) {
		case IPUX_DT_F32:
			for (i = 0; i < b; i++)
				((float *)dst)[i0 + i] =
					sfloat ? (float)u[i].f : (float)u[i].i;
			break;
		case IPUX_DT_F16:
			for (i = 0; i < b; i++)
				((uint16_t *)dst)[i0 + i] = cl_f2h(
					sfloat ? (float)u[i].f : (float)u[i].i);
			break;
		case IPUX_DT_I32:
			for (i = 0; i < b; i++)
				((int32_t *)dst)[i0 + i] = (int32_t)(
					sfloat ? cast_f2i(u[i].f, INT32_MIN,
							  INT32_MAX)
					       : (int64_t)(uint32_t)u[i].i);
			break;
		case IPUX_DT_U8:
			for (i = 0; i < b; i++)
				dst[i0 + i] = (uint8_t)(
					sfloat ? cast_f2i(u[i].f, 0, 255)
					       : u[i].i);
			break;
		case IPUX_DT_I8:
			for (i = 0; i < b; i++)
				dst[i0 + i] = (uint8_t)(
					sfloat ? cast_f2i(u[i].f, -128, 127)
					       : u[i].i);
			break;
		default: /* I64 */
			for (i = 0; i < b; i++) {
				int64_t x = sfloat ? cast_f2i(u[i].f, INT64_MIN,
							      INT64_MAX)
						   : u[i].i;

				memcpy(dst + (i0 + i) * 8, &x, 8);
			}
			break;
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_cast = {
	"CAST", cast_check, cast_cost, cast_run
};

/* ---------------------------------------------------------------- IOTA */

static int iota_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	int r = cl_check_counts(v, "IOTA", 1, 1, 2, 2, why, len);

	if (r)
		return r;
	if (!cl_is_valid_dt(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "IOTA: out has invalid dtype %u",
			      v->ops[0].dtype);
	if (cl_is_fp8(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "IOTA: out is %s, which has no scale here",
			      cl_dt_name(v->ops[0].dtype));
	return 0;
}

static uint64_t iota_cost(const struct ipu_vertex_ctx *v)
{
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 1);
}

static int iota_run(const struct ipu_vertex_ctx *v)
{
	uint32_t dt = v->ops[0].dtype;
	uint8_t *out = IPU_OP_PTR(v, 0, uint8_t);
	size_t n = v->ops[0].count, i;

	if (cl_is_float(dt)) {
		double s = cl_f32_from_bits(v->params[0]);
		double d = cl_f32_from_bits(v->params[1]);

		for (i = 0; i < n; i++)
			cl_setf(out, dt, i, (float)(s + (double)i * d));
	} else {
		int64_t s = (int32_t)v->params[0], d = (int32_t)v->params[1];

		for (i = 0; i < n; i++) {
			/* |i * d| < 2^63: no overflow */
			int64_t x = s + (int64_t)i * d;

			switch (dt) {
			case IPUX_DT_I32:
				((int32_t *)out)[i] = (int32_t)(uint32_t)x;
				break;
			case IPUX_DT_I64:
				memcpy(out + i * 8, &x, 8);
				break;
			default: /* U8, I8 */
				out[i] = (uint8_t)x;
				break;
			}
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_iota = {
	"IOTA", iota_check, iota_cost, iota_run
};
