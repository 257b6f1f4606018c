/* SPDX-License-Identifier: MIT */
/* dtype.c - element types: sizes, names, conversions through double/int64. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ipu/half.h"
#include "ipu/ir.h"

int ir_err(struct ir_error *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

size_t ir_dtype_size(int dt)
{
	switch (dt) {
	case IR_F32: case IR_I32: case IR_U32: return 4;
	case IR_U8: case IR_I8: case IR_BOOL: return 1;
	case IR_U16: case IR_I16: case IR_F16: case IR_BF16: return 2;
	case IR_I64: case IR_F64: case IR_U64: case IR_C64: return 8;
	case IR_C128: return 16;
	default: return 0;
	}
}

static const char *const names[IR_DTYPE_COUNT] = {
	[IR_UNDEFINED] = "undefined", [IR_F32] = "float32", [IR_U8] = "uint8",
	[IR_I8] = "int8", [IR_U16] = "uint16", [IR_I16] = "int16",
	[IR_I32] = "int32", [IR_I64] = "int64", [IR_STRING] = "string",
	[IR_BOOL] = "bool", [IR_F16] = "float16", [IR_F64] = "float64",
	[IR_U32] = "uint32", [IR_U64] = "uint64", [IR_C64] = "complex64",
	[IR_C128] = "complex128", [IR_BF16] = "bfloat16",
};

const char *ir_dtype_name(int dt)
{
	if (dt < 0 || dt >= IR_DTYPE_COUNT)
		return "unknown";
	return names[dt];
}

int ir_dtype_is_float(int dt)
{
	return dt == IR_F32 || dt == IR_F16 || dt == IR_F64 || dt == IR_BF16;
}

int ir_dtype_is_int(int dt)
{
	switch (dt) {
	case IR_U8: case IR_I8: case IR_U16: case IR_I16: case IR_I32:
	case IR_I64: case IR_U32: case IR_U64:
		return 1;
	default:
		return 0;
	}
}

static float bf16_to_f32(uint16_t h)
{
	uint32_t b = (uint32_t)h << 16;
	float f;

	memcpy(&f, &b, 4);
	return f;
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	if ((b & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((b >> 16) | 0x40);
	b += 0x7fffu + ((b >> 16) & 1);
	return (uint16_t)(b >> 16);
}

double ir_get_f(const void *p, int dt, size_t i)
{
	switch (dt) {
	case IR_F32: return ((const float *)p)[i];
	case IR_F64: return ((const double *)p)[i];
	case IR_F16: return ipu_f16_to_f32(((const uint16_t *)p)[i]);
	case IR_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
	case IR_U8: case IR_BOOL: return ((const uint8_t *)p)[i];
	case IR_I8: return ((const int8_t *)p)[i];
	case IR_U16: return ((const uint16_t *)p)[i];
	case IR_I16: return ((const int16_t *)p)[i];
	case IR_I32: return ((const int32_t *)p)[i];
	case IR_U32: return ((const uint32_t *)p)[i];
	case IR_I64: return (double)((const int64_t *)p)[i];
	case IR_U64: return (double)((const uint64_t *)p)[i];
	default: return 0;
	}
}

/* Float to integer as numpy's astype does for in-range values; NaN -> 0,
 * out of range saturates (defined behaviour instead of C's UB). */
static int64_t f2i(double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9.2233720368547758e18)
		return INT64_MAX;
	if (v <= -9.2233720368547758e18)
		return INT64_MIN;
	return (int64_t)v;
}

void ir_set_f(void *p, int dt, size_t i, double v)
{
	switch (dt) {
	case IR_F32: ((float *)p)[i] = (float)v; break;
	case IR_F64: ((double *)p)[i] = v; break;
	case IR_F16: ((uint16_t *)p)[i] = ipu_f32_to_f16((float)v); break;
	case IR_BF16: ((uint16_t *)p)[i] = f32_to_bf16((float)v); break;
	case IR_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case IR_U64:
		((uint64_t *)p)[i] = v >= 1.8446744073709552e19 ? UINT64_MAX :
				     v <= 0 || isnan(v) ? 0 : (uint64_t)v;
		break;
	default:
		if (ir_dtype_is_int(dt))
			ir_set_i(p, dt, i, f2i(v));
		break;	/* no numeric representation: nothing to store */
	}
}

int64_t ir_get_i(const void *p, int dt, size_t i)
{
	switch (dt) {
	case IR_I64: return ((const int64_t *)p)[i];
	case IR_U64: return (int64_t)((const uint64_t *)p)[i];
	case IR_I32: return ((const int32_t *)p)[i];
	case IR_U32: return ((const uint32_t *)p)[i];
	case IR_I16: return ((const int16_t *)p)[i];
	case IR_U16: return ((const uint16_t *)p)[i];
	case IR_I8: return ((const int8_t *)p)[i];
	case IR_U8: case IR_BOOL: return ((const uint8_t *)p)[i];
	default: return ir_dtype_is_float(dt) ? f2i(ir_get_f(p, dt, i)) : 0;
	}
}

/* Integer stores wrap modulo 2^bits, like numpy's astype. */
void ir_set_i(void *p, int dt, size_t i, int64_t v)
{
	switch (dt) {
	case IR_I64: ((int64_t *)p)[i] = v; break;
	case IR_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case IR_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
	case IR_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case IR_I16: ((int16_t *)p)[i] = (int16_t)(uint16_t)v; break;
	case IR_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case IR_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; break;
	case IR_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case IR_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	default:
		if (ir_dtype_is_float(dt))
			ir_set_f(p, dt, i, (double)v);
		break;
	}
}
