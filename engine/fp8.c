/* SPDX-License-Identifier: MIT */
/*
 * fp8.c - scalar reference of the F143/F152 formats (rules in ipu/fp8.h).
 *
 * Written on integer bit patterns so that the scale is folded into the
 * exponent and every conversion rounds exactly once; the codelets decode
 * through ipu_fp8_table() and encode through ipu_fp8_from_f32(), so this
 * file is the single definition the device and the compiler share.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "ipu/fp8.h"
#include "ipu/half.h"

struct fp8_fmt {
	int mbits;	/* mantissa field width */
	int bias;
};

static const struct fp8_fmt fp8_fmts[IPU_FP8_FORMAT_COUNT] = {
	[IPU_FP8_143] = { 3, 8 },
	[IPU_FP8_152] = { 2, 16 },
};

const char *ipu_fp8_format_name(uint32_t fmt)
{
	switch (fmt) {
	case IPU_FP8_143: return "F143";
	case IPU_FP8_152: return "F152";
	default: return NULL;
	}
}

int ipu_fp8_format_parse(const char *s, uint32_t *fmt)
{
	if (!s)
		return -1;
	if (!strcasecmp(s, "F143") || !strcmp(s, "143") ||
	    !strcasecmp(s, "E4M3")) {
		*fmt = IPU_FP8_143;
		return 0;
	}
	if (!strcasecmp(s, "F152") || !strcmp(s, "152") ||
	    !strcasecmp(s, "E5M2")) {
		*fmt = IPU_FP8_152;
		return 0;
	}
	return -1;
}

float ipu_fp8_max(uint32_t fmt)
{
	return fmt == IPU_FP8_152 ? IPU_FP8_MAX_152 : IPU_FP8_MAX_143;
}

/* 2^k for k in the normal f32 range (every scaled fp8 exponent is). */
static float fp8_pow2(int k)
{
	uint32_t b = (uint32_t)(k + 127) << 23;
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

uint8_t ipu_fp8_from_f32(float x, uint32_t fmt, int scale)
{
	const struct fp8_fmt *f = &fp8_fmts[fmt == IPU_FP8_152];
	uint32_t bits, sign, exp, man, sig;
	int lead, ex, t, emin, q, shift;
	uint64_t r;
	int64_t code;

	memcpy(&bits, &x, sizeof(bits));
	sign = bits >> 31;
	exp = (bits >> 23) & 0xffu;
	man = bits & 0x7fffffu;
	if (exp == 0xff) {
		if (man)
			return IPU_FP8_NAN;
		return (uint8_t)((sign << 7) | 0x7fu); /* infinity saturates */
	}
	if (exp == 0 && man == 0)
		return 0;
	if (exp) {
		sig = man | 0x800000u;
		ex = (int)exp - 127 - 23;
	} else {
		sig = man;
		ex = -149;
	}
	/* value = sig * 2^ex; lead = exponent of its leading bit */
	lead = ex + (31 - __builtin_clz(sig));
	t = lead - scale;
	emin = 1 - f->bias;
	q = (t > emin ? t : emin) - f->mbits; /* exponent of the result's lsb */
	shift = q + scale - ex;
	if (shift <= 0) {
		r = (uint64_t)sig << -shift; /* exact: few significant bits */
	} else if (shift > 31) {
		r = 0; /* below half of the smallest subnormal */
	} else {
		uint64_t half = 1ull << (shift - 1);
		uint64_t rest = sig & ((half << 1) - 1);

		r = sig >> shift;
		if (rest > half || (rest == half && (r & 1)))
			r++;
	}
	/* the exponent field is q's, carrying into it when r overflows */
	code = ((int64_t)(q + f->mbits + f->bias - 1) << f->mbits) + (int64_t)r;
	if (r == 0)
		return 0; /* no -0 code: 0x80 is NaN */
	if (code > 0x7f)
		code = 0x7f;
	return (uint8_t)((sign << 7) | (uint32_t)code);
}

uint8_t ipu_fp8_from_f16(uint16_t h, uint32_t fmt, int scale)
{
	/* f16 -> f32 is exact, so this still rounds once */
	return ipu_fp8_from_f32(ipu_f16_to_f32(h), fmt, scale);
}

float ipu_fp8_to_f32(uint8_t code, uint32_t fmt, int scale)
{
	const struct fp8_fmt *f = &fp8_fmts[fmt == IPU_FP8_152];
	uint32_t e = (uint32_t)(code & 0x7fu) >> f->mbits;
	uint32_t m = code & ((1u << f->mbits) - 1);
	float v;

	if (code == IPU_FP8_NAN)
		return NAN;
	if (e)
		v = (float)((1u << f->mbits) | m) *
		    fp8_pow2((int)e - f->bias - f->mbits + scale);
	else
		v = (float)m * fp8_pow2(1 - f->bias - f->mbits + scale);
	return (code & 0x80u) ? -v : v;
}

uint16_t ipu_fp8_to_f16(uint8_t code, uint32_t fmt, int scale)
{
	return ipu_f32_to_f16(ipu_fp8_to_f32(code, fmt, scale));
}

void ipu_fp8_table(float tab[256], uint32_t fmt, int scale)
{
	uint32_t c;

	for (c = 0; c < 256; c++)
		tab[c] = ipu_fp8_to_f32((uint8_t)c, fmt, scale);
}

int ipu_fp8_scale_for_absmax(double absmax, uint32_t fmt)
{
	double mx = ipu_fp8_max(fmt);
	int s;

	if (!(absmax > 0) || !isfinite(absmax))
		return 0;
	for (s = IPU_FP8_SCALE_MIN; s < IPU_FP8_SCALE_MAX; s++)
		if (absmax <= ldexp(mx, s))
			break;
	return s;
}
