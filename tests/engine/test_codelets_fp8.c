/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_fp8.c - the F143/F152 formats (ipu/fp8.h) against an
 * independent oracle: decoding from the field definitions in double, and
 * encoding as the nearest finite code by exhaustive search (ties to the
 * code with the even mantissa), which also gives saturation for free.
 */
#include <float.h>

#include "cl_test.h"
#include "ipu/fp8.h"

static const int t_scales[] = { IPU_FP8_SCALE_MIN, -7, -1, 0, 1, 5,
				 IPU_FP8_SCALE_MAX };
#define T_NSCALES (sizeof(t_scales) / sizeof(t_scales[0]))

/* Value of code c (c != 0x80) at scale 0, from the field definitions. */
static double o_decode(unsigned c, uint32_t fmt)
{
	int mb = fmt == IPU_FP8_152 ? 2 : 3;
	int bias = fmt == IPU_FP8_152 ? 16 : 8;
	int e = (int)((c & 0x7fu) >> mb), m = (int)(c & ((1u << mb) - 1));
	double v;

	if (e == 0)
		v = ldexp((double)m / (1 << mb), 1 - bias);
	else
		v = ldexp(1.0 + (double)m / (1 << mb), e - bias);
	return (c & 0x80u) ? -v : v;
}

/* Nearest finite code to x * 2^-scale; ties to the even code. */
static uint8_t o_encode(double x, uint32_t fmt, int scale)
{
	double t, best = INFINITY;
	unsigned c, bc = 0;

	if (isnan(x))
		return IPU_FP8_NAN;
	t = fabs(ldexp(x, -scale));
	if (t > o_decode(0x7f, fmt)) /* far out, distances would round */
		return (uint8_t)(0x7fu | (signbit(x) ? 0x80u : 0));
	for (c = 0; c < 0x80; c++) {
		double d = fabs(o_decode(c, fmt) - t);

		if (d < best || (d == best && !(c & 1))) {
			best = d;
			bc = c;
		}
	}
	if (bc == 0)
		return 0;
	return (uint8_t)(bc | (signbit(x) ? 0x80u : 0));
}

TEST(fp8_decode_all_codes)
{
	uint32_t fmt;
	unsigned c, k;

	for (fmt = 0; fmt < IPU_FP8_FORMAT_COUNT; fmt++)
		for (k = 0; k < T_NSCALES; k++) {
			int s = t_scales[k];
			float tab[256];

			ipu_fp8_table(tab, fmt, s);
			for (c = 0; c < 256; c++) {
				float got = ipu_fp8_to_f32((uint8_t)c, fmt, s);
				uint16_t h = ipu_fp8_to_f16((uint8_t)c, fmt, s);

				if (c == 0x80) {
					CHECK(isnan(got) && isnan(tab[c]));
					CHECK((h & 0x7c00u) == 0x7c00u &&
					      (h & 0x3ffu));
					continue;
				}
				CHECK_MSG((double)got ==
						  ldexp(o_decode(c, fmt), s),
					  "fmt %u scale %d code 0x%02x: %g",
					  fmt, s, c, (double)got);
				CHECK(memcmp(&got, &tab[c], 4) == 0);
				CHECK(h == ipu_f32_to_f16(got));
				/* every code round-trips, from f32 and f16 */
				CHECK_EQ_INT(ipu_fp8_from_f32(got, fmt, s),
					     c == 0x80 ? 0x80 : c);
				if (fabs(ldexp(o_decode(c, fmt), s)) < 65504 &&
				    fabs(ldexp(o_decode(c, fmt), s)) >= 0x1p-21)
					CHECK_EQ_INT(ipu_fp8_from_f16(h, fmt, s),
						     c);
			}
		}
}

TEST(fp8_named_values)
{
	/* F143 */
	CHECK(ipu_fp8_to_f32(0x7f, IPU_FP8_143, 0) == 240.0f);
	CHECK(ipu_fp8_to_f32(0xff, IPU_FP8_143, 0) == -240.0f);
	CHECK(ipu_fp8_to_f32(0x01, IPU_FP8_143, 0) == 0x1p-10f);
	CHECK(ipu_fp8_to_f32(0x08, IPU_FP8_143, 0) == 0x1p-7f);
	CHECK(ipu_fp8_to_f32(0x40, IPU_FP8_143, 0) == 1.0f);
	CHECK(ipu_fp8_to_f32(0x00, IPU_FP8_143, 0) == 0.0f &&
	      !signbit(ipu_fp8_to_f32(0x00, IPU_FP8_143, 0)));
	CHECK(ipu_fp8_max(IPU_FP8_143) == 240.0f);
	/* F152 */
	CHECK(ipu_fp8_to_f32(0x7f, IPU_FP8_152, 0) == 57344.0f);
	CHECK(ipu_fp8_to_f32(0x01, IPU_FP8_152, 0) == 0x1p-17f);
	CHECK(ipu_fp8_to_f32(0x40, IPU_FP8_152, 0) == 1.0f);
	CHECK(ipu_fp8_max(IPU_FP8_152) == 57344.0f);
	/* scale is a power of two folded into the value */
	CHECK(ipu_fp8_to_f32(0x40, IPU_FP8_143, -3) == 0.125f);
	CHECK(ipu_fp8_to_f32(0x7f, IPU_FP8_152, 31) == 57344.0f * 0x1p31f);
	CHECK(ipu_fp8_to_f32(0x01, IPU_FP8_152, -32) == 0x1p-49f);

	/* saturation: beyond max, infinities */
	CHECK_EQ_INT(ipu_fp8_from_f32(240.0f, IPU_FP8_143, 0), 0x7f);
	CHECK_EQ_INT(ipu_fp8_from_f32(247.9f, IPU_FP8_143, 0), 0x7f);
	CHECK_EQ_INT(ipu_fp8_from_f32(248.0f, IPU_FP8_143, 0), 0x7f);
	CHECK_EQ_INT(ipu_fp8_from_f32(1e30f, IPU_FP8_143, 0), 0x7f);
	CHECK_EQ_INT(ipu_fp8_from_f32(-1e30f, IPU_FP8_143, 0), 0xff);
	CHECK_EQ_INT(ipu_fp8_from_f32(INFINITY, IPU_FP8_143, 0), 0x7f);
	CHECK_EQ_INT(ipu_fp8_from_f32(-INFINITY, IPU_FP8_152, 0), 0xff);
	CHECK_EQ_INT(ipu_fp8_from_f32(FLT_MAX, IPU_FP8_152, 31), 0x7f);
	CHECK_EQ_INT(ipu_fp8_from_f16(0x7c00u, IPU_FP8_143, 0), 0x7f);
	CHECK_EQ_INT(ipu_fp8_from_f16(0xfbffu, IPU_FP8_143, 0), 0xff);
	/* NaN of any sign and payload is the one NaN code */
	CHECK_EQ_INT(ipu_fp8_from_f32(NAN, IPU_FP8_143, 0), 0x80);
	CHECK_EQ_INT(ipu_fp8_from_f32(-NAN, IPU_FP8_152, 5), 0x80);
	CHECK_EQ_INT(ipu_fp8_from_f16(0xfe01u, IPU_FP8_152, 0), 0x80);
	/* zeros: no -0 code */
	CHECK_EQ_INT(ipu_fp8_from_f32(-0.0f, IPU_FP8_143, 0), 0x00);
	CHECK_EQ_INT(ipu_fp8_from_f16(0x8000u, IPU_FP8_152, 0), 0x00);
	CHECK_EQ_INT(ipu_fp8_from_f32(-0x1p-12f, IPU_FP8_143, 0), 0x00);
	/* ties to even: half the smallest subnormal goes to 0, 1.5 of it to 2 */
	CHECK_EQ_INT(ipu_fp8_from_f32(0x1p-11f, IPU_FP8_143, 0), 0x00);
	CHECK_EQ_INT(ipu_fp8_from_f32(0x1.8p-10f, IPU_FP8_143, 0), 0x02);
	CHECK_EQ_INT(ipu_fp8_from_f32(0x1.000002p-11f, IPU_FP8_143, 0), 0x01);
	/* 1 + 1/16 is between 1 (0x40) and 1.125 (0x41): to 0x40 */
	CHECK_EQ_INT(ipu_fp8_from_f32(1.0625f, IPU_FP8_143, 0), 0x40);
	CHECK_EQ_INT(ipu_fp8_from_f32(1.1875f, IPU_FP8_143, 0), 0x42);
	/* carry from the mantissa into the exponent */
	CHECK_EQ_INT(ipu_fp8_from_f32(1.9375f, IPU_FP8_143, 0), 0x48);
	CHECK_EQ_INT(ipu_fp8_from_f32(1.875f, IPU_FP8_152, 0), 0x44);
	/* f32 subnormals scaled up by a negative scale */
	CHECK_EQ_INT(ipu_fp8_from_f32(0x1p-140f, IPU_FP8_152, -32), 0x00);
	CHECK_EQ_INT(ipu_fp8_from_f32(0x1p-49f, IPU_FP8_152, -32), 0x01);
	CHECK_EQ_INT(ipu_fp8_from_f32(0x1p-149f, IPU_FP8_143, -32), 0x00);
}

/* Every f16 pattern, every format and scale: exhaustive. */
TEST(fp8_encode_every_f16)
{
	uint32_t fmt, h;
	unsigned k;
	int bad = 0;

	for (fmt = 0; fmt < IPU_FP8_FORMAT_COUNT; fmt++)
		for (k = 0; k < T_NSCALES; k++)
			for (h = 0; h < 0x10000u; h++) {
				double x = ipu_f16_to_f32((uint16_t)h);
				uint8_t want = isinf(x)
					? (uint8_t)(x > 0 ? 0x7f : 0xff)
					: o_encode(x, fmt, t_scales[k]);
				uint8_t got = ipu_fp8_from_f16((uint16_t)h, fmt,
							       t_scales[k]);

				if (got != want && bad++ < 5)
					fprintf(stderr,
						"  fmt %u s %d f16 0x%04x: got "
						"0x%02x want 0x%02x\n",
						fmt, t_scales[k], h, got, want);
			}
	CHECK_EQ_INT(bad, 0);
}

/*
 * f32: every midpoint between neighbouring codes, one ulp either side of
 * it, and random bit patterns.
 */
TEST(fp8_encode_f32)
{
	struct ct_rng rng = { 0x5eed0f8ull };
	uint32_t fmt;
	unsigned k, c, i;
	int bad = 0;

	for (fmt = 0; fmt < IPU_FP8_FORMAT_COUNT; fmt++)
		for (k = 0; k < T_NSCALES; k++) {
			int s = t_scales[k];
			float xs[3 * 128 + 4096];
			unsigned n = 0;

			for (c = 0; c < 0x7f; c++) {
				float mid = (float)ldexp(
					(o_decode(c, fmt) + o_decode(c + 1, fmt)) / 2,
					s);

				xs[n++] = mid;
				xs[n++] = nextafterf(mid, 0.0f);
				xs[n++] = nextafterf(mid, INFINITY);
			}
			for (i = 0; i < 4096; i++) {
				uint32_t b = (uint32_t)ct_next(&rng);
				float f;

				if (i & 1) /* near the format's range */
					b = (b & 0x807fffffu) |
					    ((uint32_t)ct_int(&rng, 127 + s - 22,
							      127 + s + 18)
					     << 23);
				memcpy(&f, &b, 4);
				xs[n++] = f;
			}
			for (i = 0; i < n; i++) {
				float x = (i & 2) ? -xs[i] : xs[i];
				uint8_t want = isinf(x)
					? (uint8_t)(x > 0 ? 0x7f : 0xff)
					: o_encode(x, fmt, s);
				uint8_t got = ipu_fp8_from_f32(x, fmt, s);

				if (got != want && bad++ < 5)
					fprintf(stderr,
						"  fmt %u s %d x %a: got 0x%02x "
						"want 0x%02x\n",
						fmt, s, (double)x, got, want);
			}
		}
	CHECK_EQ_INT(bad, 0);
}

TEST(fp8_names_and_scales)
{
	uint32_t f = 99;

	CHECK(ipu_fp8_format_parse("F143", &f) == 0 && f == IPU_FP8_143);
	CHECK(ipu_fp8_format_parse("e5m2", &f) == 0 && f == IPU_FP8_152);
	CHECK(ipu_fp8_format_parse("152", &f) == 0 && f == IPU_FP8_152);
	CHECK(ipu_fp8_format_parse("F16", &f) != 0);
	CHECK(ipu_fp8_format_parse(NULL, &f) != 0);
	CHECK(!strcmp(ipu_fp8_format_name(IPU_FP8_152), "F152"));
	CHECK(ipu_fp8_format_name(7) == NULL);
	CHECK_EQ_INT(ipu_fp8_scale_for_absmax(240.0, IPU_FP8_143), 0);
	CHECK_EQ_INT(ipu_fp8_scale_for_absmax(240.01, IPU_FP8_143), 1);
	CHECK_EQ_INT(ipu_fp8_scale_for_absmax(1.0, IPU_FP8_143), -7);
	CHECK_EQ_INT(ipu_fp8_scale_for_absmax(0.0, IPU_FP8_143), 0);
	CHECK_EQ_INT(ipu_fp8_scale_for_absmax(1e300, IPU_FP8_152),
		     IPU_FP8_SCALE_MAX);
	CHECK_EQ_INT(ipu_fp8_scale_for_absmax(1e-300, IPU_FP8_152),
		     IPU_FP8_SCALE_MIN);
	/* the chosen scale never saturates the absmax */
	CHECK_EQ_INT(ipu_fp8_from_f32(3.7f, IPU_FP8_143,
				      ipu_fp8_scale_for_absmax(3.7, IPU_FP8_143)) &
			     0x7f,
		     ipu_fp8_from_f32(3.7f, IPU_FP8_143, -6) & 0x7f);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(fp8_decode_all_codes);
	RUN(fp8_named_values);
	RUN(fp8_encode_every_f16);
	RUN(fp8_encode_f32);
	RUN(fp8_names_and_scales);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
