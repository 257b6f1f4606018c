/* SPDX-License-Identifier: MIT */
/*
 * fp8.h - the device's two 8-bit float formats and their scalar reference.
 *
 * The IPU stores 8-bit floats in two layouts, named by their
 * sign-exponent-mantissa bit counts as PopRT and Poplar name them:
 *
 *   F143 (1-4-3, "E4M3"): exponent bias 8, largest finite 240,
 *                         smallest subnormal 2^-10;
 *   F152 (1-5-2, "E5M2"): exponent bias 16, largest finite 57344,
 *                         smallest subnormal 2^-17.
 *
 * Both follow the IPU's convention (the "fnuz" layouts): every exponent
 * field is finite (no infinities), there is a single NaN, code 0x80 (the
 * pattern that would be -0), and so a single zero, 0x00.  A code c with
 * sign s, exponent field E and mantissa field m means
 *     E > 0:  (-1)^s * 2^(E - bias) * (1 + m / 2^mbits)
 *     E = 0:  (-1)^s * 2^(1 - bias) * (m / 2^mbits)
 * and a tensor carries one per-tensor scale, an integer power of two
 * (PopRT's "scale", Poplar's scale bias): the value of c in a tensor of
 * scale s is decode(c) * 2^s, with s in [IPU_FP8_SCALE_MIN, _MAX].
 *
 * Encoding (from f32 or f16) is decided as:
 *  - x * 2^-s is rounded once, to nearest, ties to the even code (the one
 *    whose mantissa field is even); the scaling is folded into the exponent,
 *    never done as a separate multiplication that could round;
 *  - magnitudes beyond the largest finite value (including infinities)
 *    saturate to +/- the largest finite value: weights and activations are
 *    clipped, never turned into NaN, as the IPU's conversion does with
 *    overflow exceptions off.  (This differs from numpy-style casts of
 *    ml_dtypes' float8_*_fnuz, which give NaN.)  Only a value that rounds
 *    to a magnitude above max saturates: values between max and the
 *    midpoint above it round to max anyway;
 *  - NaN (any payload, either sign) encodes as 0x80;
 *  - +0, -0 and every value that rounds to zero encode as 0x00 (there is no
 *    -0 code: the sign of an underflow is lost).
 * Decoding is exact into f32; into f16 it is exact when the scaled value
 * is within f16's range and otherwise rounds once (to nearest even, to
 * infinity beyond 65504) like any f32 -> f16 conversion.
 * Documentation/device/codelets.md has the tables of both formats.
 */
#ifndef IPU_FP8_H
#define IPU_FP8_H

#include <stdint.h>

enum ipu_fp8_format {
	IPU_FP8_143 = 0,	/* 1-4-3 */
	IPU_FP8_152 = 1,	/* 1-5-2 */
	IPU_FP8_FORMAT_COUNT
};

#define IPU_FP8_SCALE_MIN (-32)
#define IPU_FP8_SCALE_MAX 31
#define IPU_FP8_NAN 0x80u
#define IPU_FP8_MAX_143 240.0f
#define IPU_FP8_MAX_152 57344.0f

/* "F143" / "F152"; NULL for an unknown format. */
const char *ipu_fp8_format_name(uint32_t fmt);
/* Parses "F143"/"F152" (also "143", "152", "E4M3", "E5M2", any case). */
int ipu_fp8_format_parse(const char *s, uint32_t *fmt);
/* Largest finite value of fmt at scale 0 (240 or 57344). */
float ipu_fp8_max(uint32_t fmt);

/*
 * Code of x * 2^-scale in fmt (rules above).  fmt must be a valid format
 * and scale within [IPU_FP8_SCALE_MIN, IPU_FP8_SCALE_MAX] (not checked).
 */
uint8_t ipu_fp8_from_f32(float x, uint32_t fmt, int scale);
/* Same from an IEEE binary16 pattern (rounded once, from the exact value). */
uint8_t ipu_fp8_from_f16(uint16_t h, uint32_t fmt, int scale);
/* decode(code) * 2^scale, exact (NaN for 0x80). */
float ipu_fp8_to_f32(uint8_t code, uint32_t fmt, int scale);
/* decode(code) * 2^scale rounded once to binary16. */
uint16_t ipu_fp8_to_f16(uint8_t code, uint32_t fmt, int scale);
/* tab[c] = ipu_fp8_to_f32(c, fmt, scale) for all 256 codes. */
void ipu_fp8_table(float tab[256], uint32_t fmt, int scale);

/*
 * The power-of-two scale that maps a tensor whose largest magnitude is
 * absmax onto fmt without saturating: the smallest s with
 * absmax <= max(fmt) * 2^s, clamped to the scale range (0 for absmax 0 or
 * not finite).  This is how scales are chosen from weights alone.
 */
int ipu_fp8_scale_for_absmax(double absmax, uint32_t fmt);

#endif /* IPU_FP8_H */
