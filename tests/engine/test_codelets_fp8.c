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
	static double mag[2][0x80];
	static int ready[2];
	double t, best = INFINITY;
	unsigned c, bc = 0;

	if (!ready[fmt]) {
		for (c = 0; c < 0x80; c++)
			mag[fmt][c] = o_decode(c, fmt);
		ready[fmt] = 1;
	}
	if (isnan(x))
		return IPU_FP8_NAN;
	t = fabs(ldexp(x, -scale));
	if (t > mag[fmt][0x7f]) /* far out, distances would round */
		return (uint8_t)(0x7fu | (signbit(x) ? 0x80u : 0));
	for (c = 0; c < 0x80; c++) {
		double d = fabs(mag[fmt][c] - t);

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


/* ------------------------------------------------------------ codelets */

static const uint32_t t_fp8_dts[] = { IPUX_DT_FP8_143, IPUX_DT_FP8_152 };

static uint32_t t_fmt(uint32_t dt)
{
	return dt == IPUX_DT_FP8_152 ? IPU_FP8_152 : IPU_FP8_143;
}

TEST(cast_fp8_bit_exact)
{
	struct ct_tile t;
	struct ct_rng rng = { 0xca57f8ull };
	static const int scales[] = { -32, -4, 0, 3, 31 };
	unsigned di, si, c;
	uint32_t h;
	int bad = 0;

	ct_init(&t, 65536 * 3 + 4096);
	for (di = 0; di < 2; di++)
		for (si = 0; si < 5; si++) {
			uint32_t dt = t_fp8_dts[di], fmt = t_fmt(dt);
			int s = scales[si];
			uint32_t src, dst;

			/* every f16 pattern -> fp8 */
			ct_reset(&t);
			src = ct_op(&t, IPUX_DT_F16, 65536);
			dst = ct_op(&t, dt, 65536);
			ct_p(&t, (uint32_t)s);
			for (h = 0; h < 65536; h++)
				((uint16_t *)ct_ptr(&t, src))[h] = (uint16_t)h;
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST_FP8), 0);
			for (h = 0; h < 65536; h++)
				if (((uint8_t *)ct_ptr(&t, dst))[h] !=
				    ipu_fp8_from_f16((uint16_t)h, fmt, s))
					bad++;
			/* f32 -> fp8: random patterns and every midpoint */
			ct_reset(&t);
			src = ct_op(&t, IPUX_DT_F32, 4096);
			dst = ct_op(&t, dt, 4096);
			ct_p(&t, (uint32_t)s);
			for (h = 0; h < 4096; h++) {
				float f;
				uint32_t b = (uint32_t)ct_next(&rng);

				if (h < 255)
					f = ldexpf((ipu_fp8_to_f32((uint8_t)h, fmt, 0) +
						    ipu_fp8_to_f32((uint8_t)(h + 1), fmt, 0)) / 2,
						   s);
				else
					memcpy(&f, &b, 4);
				((float *)ct_ptr(&t, src))[h] = f;
			}
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST_FP8), 0);
			for (h = 0; h < 4096; h++)
				if (((uint8_t *)ct_ptr(&t, dst))[h] !=
				    ipu_fp8_from_f32(((float *)ct_ptr(&t, src))[h], fmt, s))
					bad++;
			/* all 256 codes -> f32 and f16 */
			ct_reset(&t);
			src = ct_op(&t, dt, 256);
			dst = ct_op(&t, IPUX_DT_F32, 256);
			ct_p(&t, (uint32_t)s);
			for (c = 0; c < 256; c++)
				((uint8_t *)ct_ptr(&t, src))[c] = (uint8_t)c;
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST_FP8), 0);
			for (c = 0; c < 256; c++) {
				float want = ipu_fp8_to_f32((uint8_t)c, fmt, s);

				if (memcmp(&want, (float *)ct_ptr(&t, dst) + c, 4))
					bad++;
			}
			ct_reset(&t);
			src = ct_op(&t, dt, 256);
			dst = ct_op(&t, IPUX_DT_F16, 256);
			ct_p(&t, (uint32_t)s);
			for (c = 0; c < 256; c++)
				((uint8_t *)ct_ptr(&t, src))[c] = (uint8_t)c;
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST_FP8), 0);
			for (c = 0; c < 256; c++)
				if (((uint16_t *)ct_ptr(&t, dst))[c] !=
				    ipu_fp8_to_f16((uint8_t)c, fmt, s))
					bad++;
		}
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}

TEST(cast_fp8_check)
{
	struct ct_tile t;

	ct_init(&t, 8192);
	ct_op(&t, IPUX_DT_F32, 10);
	ct_op(&t, IPUX_DT_FP8_143, 10);
	ct_p(&t, (uint32_t)-3);
	CT_REJECTS(&t, IPUX_CL_CAST_FP8, 1, IPUX_DT_I8, 1);
	t.params[0] = 32;
	CT_EXPECT(&t, IPUX_CL_CAST_FP8, IPUX_E_PARAM_VALUE);
	t.params[0] = (uint32_t)-33;
	CT_EXPECT(&t, IPUX_CL_CAST_FP8, IPUX_E_PARAM_VALUE);
	t.params[0] = 0;
	t.ops[1].dtype = IPUX_DT_F16; /* no fp8 side */
	CT_EXPECT(&t, IPUX_CL_CAST_FP8, IPUX_E_OPERAND_TYPE);
	t.ops[0].dtype = IPUX_DT_FP8_152;
	t.ops[1].dtype = IPUX_DT_FP8_143; /* fp8 to fp8 */
	CT_EXPECT(&t, IPUX_CL_CAST_FP8, IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_F16;
	CT_EXPECT(&t, IPUX_CL_CAST_FP8, 0);
	t.ops[1].offset = t.ops[0].offset + 4; /* overlap */
	CT_EXPECT(&t, IPUX_CL_CAST_FP8, IPUX_E_OPERAND_SHAPE);
	ct_free(&t);
}

/* Which other codelets take fp8 operands: byte movers yes, math no. */
TEST(fp8_operands_in_other_codelets)
{
	struct ct_tile t;
	unsigned di;

	ct_init(&t, 8192);
	for (di = 0; di < 2; di++) {
		uint32_t dt = t_fp8_dts[di];

		ct_reset(&t);
		ct_op(&t, dt, 12);
		ct_op(&t, dt, 12);
		CT_EXPECT(&t, IPUX_CL_COPY, 0);
		CT_EXPECT(&t, IPUX_CL_CAST, IPUX_E_OPERAND_TYPE);
		CHECK(strstr(t.why, "CAST_FP8") != NULL);
		ct_p(&t, IPUX_UN_RELU);
		CT_EXPECT(&t, IPUX_CL_UNARY, IPUX_E_OPERAND_TYPE);
		t.ops[1].dtype = IPUX_DT_F32;
		t.params[0] = 0;
		ct_p(&t, 1);
		ct_p(&t, 12);
		ct_p(&t, 1);
		t.ops[1].count = 1;
		CT_EXPECT(&t, IPUX_CL_REDUCE, IPUX_E_OPERAND_TYPE);
		t.ops[1].dtype = (uint8_t)dt;
		t.ops[1].count = 12;
		/* TRANSPOSE [rank, shape, perm] */
		t.nparams = 0;
		ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 0);
		CT_EXPECT(&t, IPUX_CL_TRANSPOSE, 0);

		ct_reset(&t);
		ct_op(&t, dt, 12);
		ct_p(&t, 0x40);
		CT_EXPECT(&t, IPUX_CL_FILL, 0);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_FILL), 0);
		CHECK(((uint8_t *)ct_ptr(&t, 0))[11] == 0x40);
		ct_p(&t, 1);
		CT_EXPECT(&t, IPUX_CL_IOTA, IPUX_E_OPERAND_TYPE);

		/* MATMUL (not _FP8) refuses fp8 weights */
		ct_reset(&t);
		ct_op(&t, IPUX_DT_F16, 4);
		ct_op(&t, dt, 4);
		ct_op(&t, IPUX_DT_F16, 4);
		ct_p(&t, 1); ct_p(&t, 2); ct_p(&t, 2); ct_p(&t, 2); ct_p(&t, 0);
		CT_EXPECT(&t, IPUX_CL_MATMUL, IPUX_E_OPERAND_TYPE);
		ct_p(&t, 0); ct_p(&t, 0);
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, 0);
		t.ops[1].dtype = IPUX_DT_F16; /* _FP8 wants an fp8 operand */
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, IPUX_E_OPERAND_TYPE);
		t.ops[0].dtype = (uint8_t)dt; /* the weight first: W x X */
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, 0);
		t.params[6] = 1; /* a scale for B, which is not fp8 */
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, IPUX_E_PARAM_VALUE);
	}
	ct_free(&t);
}

/* Element i of operand op as double, fp8 through its scale. */
static double t_val(struct ct_tile *t, uint32_t op, size_t i, int scale)
{
	uint32_t dt = t->ops[op].dtype;

	if (dt == IPUX_DT_FP8_143 || dt == IPUX_DT_FP8_152)
		return ipu_fp8_to_f32(((uint8_t *)ct_ptr(t, op))[i], t_fmt(dt),
				      scale);
	return ct_get(t, op, i);
}

/* Values in [-2, 2): fp8 ones encoded at the operand's scale. */
static void t_fill(struct ct_tile *t, struct ct_rng *r, uint32_t op, int scale)
{
	uint32_t dt = t->ops[op].dtype;
	size_t i;

	if (dt == IPUX_DT_FP8_143 || dt == IPUX_DT_FP8_152) {
		for (i = 0; i < t->ops[op].count; i++)
			((uint8_t *)ct_ptr(t, op))[i] = ipu_fp8_from_f32(
				(float)ct_unif(r, -2, 2), t_fmt(dt), scale);
		return;
	}
	ct_fill_rand(t, r, op, -2, 2);
}

/*
 * got within the f32 accumulation error of a sum whose terms add up to
 * sabs in magnitude (plus the output rounding for f16).
 */
static int t_close_sum(double got, double want, double sabs, uint32_t cdt,
		       size_t terms)
{
	double tol = (double)(terms + 2) * 0x1p-23 * sabs + 1e-30;

	if (cdt == IPUX_DT_F16)
		tol += fabs(want) * 0x1p-11 + 0x1p-24;
	return fabs(got - want) <= tol;
}

static const uint32_t t_rd_dts[] = { IPUX_DT_F32, IPUX_DT_F16,
				     IPUX_DT_FP8_143, IPUX_DT_FP8_152 };

TEST(matmul_fp8_random)
{
	struct ct_tile t;
	struct ct_rng rng = { 0x3a7f8ull };
	int iter, bad = 0;

	ct_init(&t, 1 << 20);
	for (iter = 0; iter < 120; iter++) {
		uint32_t batch = (uint32_t)ct_int(&rng, 1, 3), M = ct_size(&rng);
		uint32_t N = iter == 7 ? 300 : ct_size(&rng);
		uint32_t K = ct_size(&rng);
		uint32_t flags = (uint32_t)ct_int(&rng, 0, 15);
		uint32_t adt = t_rd_dts[ct_int(&rng, 0, 3)];
		uint32_t bdt = (adt == IPUX_DT_FP8_143 || adt == IPUX_DT_FP8_152)
				       ? t_rd_dts[ct_int(&rng, 0, 3)]
				       : t_fp8_dts[ct_int(&rng, 0, 1)];
		uint32_t cdt = ct_int(&rng, 0, 1) ? IPUX_DT_F16 : IPUX_DT_F32;
		int sa = (adt == IPUX_DT_FP8_143 || adt == IPUX_DT_FP8_152)
				 ? (int)ct_int(&rng, -6, 2) : 0;
		int sb = (bdt == IPUX_DT_FP8_143 || bdt == IPUX_DT_FP8_152)
				 ? (int)ct_int(&rng, -8, 1) : 0;
		size_t amod = (flags & IPUX_MM_A_SHARED) ? 1 : batch;
		size_t bmod = (flags & IPUX_MM_B_SHARED) ? 1 : batch;
		uint32_t a, b, c;
		double *c0;
		size_t bt, m, n, k;

		ct_reset(&t);
		a = ct_op(&t, adt, (uint32_t)(amod * M * K));
		b = ct_op(&t, bdt, (uint32_t)(bmod * K * N));
		c = ct_op(&t, cdt, batch * M * N);
		ct_p(&t, batch); ct_p(&t, M); ct_p(&t, N); ct_p(&t, K);
		ct_p(&t, flags); ct_p(&t, (uint32_t)sa); ct_p(&t, (uint32_t)sb);
		t_fill(&t, &rng, a, sa);
		t_fill(&t, &rng, b, sb);
		t_fill(&t, &rng, c, 0);
		c0 = ct_dalloc(batch * M * N);
		for (m = 0; m < batch * M * N; m++)
			c0[m] = ct_get(&t, c, m);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_MATMUL_FP8), 0);
		for (bt = 0; bt < batch; bt++)
			for (m = 0; m < M; m++)
				for (n = 0; n < N; n++) {
					double s = 0, sabs = 0, got;
					size_t ci = (bt * M + m) * N + n;

					for (k = 0; k < K; k++) {
						size_t bi = (flags & IPUX_MM_TRANS_B)
							? n * K + k : k * N + n;
						double x = t_val(&t, a, (bt % amod) * M * K + m * K + k, sa) *
							   t_val(&t, b, (bt % bmod) * K * N + bi, sb);

						s += x;
						sabs += fabs(x);
					}
					if (flags & IPUX_MM_ACCUMULATE) {
						s += c0[ci];
						sabs += fabs(c0[ci]);
					}
					got = ct_get(&t, c, ci);
					if (!t_close_sum(got, s, sabs, cdt, K)) {
						if (bad++ < 4)
							fprintf(stderr, "  mm8 iter %d [%zu,%zu,%zu] got %.9g want %.9g\n",
								iter, bt, m, n, got, s);
					}
				}
		free(c0);
	}
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}

TEST(conv_fp8_random)
{
	struct ct_tile t;
	struct ct_rng rng = { 0xc0417f8ull };
	int iter, bad = 0;

	ct_init(&t, 1 << 21);
	for (iter = 0; iter < 80; iter++) {
		uint32_t G = (uint32_t)ct_int(&rng, 1, 2);
		uint32_t Nn = (uint32_t)ct_int(&rng, 1, 2);
		uint32_t Cin = G * (uint32_t)ct_int(&rng, 1, 3);
		uint32_t Cout = G * (uint32_t)(iter % 5 == 0 ? 11 : ct_int(&rng, 1, 4));
		uint32_t H = (uint32_t)ct_int(&rng, 1, 9);
		uint32_t W = iter == 3 ? 300 : (uint32_t)ct_int(&rng, 1, 9);
		uint32_t kH = (uint32_t)ct_int(&rng, 1, 3), kW = (uint32_t)ct_int(&rng, 1, 3);
		uint32_t sH = (uint32_t)ct_int(&rng, 1, 2), sW = (uint32_t)ct_int(&rng, 1, 2);
		uint32_t pt = (uint32_t)ct_int(&rng, 0, 2), pl = (uint32_t)ct_int(&rng, 0, 2);
		uint32_t pb = (uint32_t)ct_int(&rng, 0, 2), pr = (uint32_t)ct_int(&rng, 0, 2);
		uint32_t dH = (uint32_t)ct_int(&rng, 1, 2), dW = (uint32_t)ct_int(&rng, 1, 2);
		uint32_t flags = (uint32_t)ct_int(&rng, 0, 1);
		int with_bias = (int)ct_int(&rng, 0, 1);
		uint32_t idt = t_rd_dts[ct_int(&rng, 0, 3)];
		uint32_t wdt = t_fp8_dts[ct_int(&rng, 0, 1)];
		uint32_t odt = ct_int(&rng, 0, 1) ? IPUX_DT_F16 : IPUX_DT_F32;
		int si = (idt == IPUX_DT_FP8_143 || idt == IPUX_DT_FP8_152)
				 ? (int)ct_int(&rng, -6, 2) : 0;
		int sw = (int)ct_int(&rng, -8, 1);
		int64_t hp = (int64_t)H + pt + pb - (int64_t)dH * (kH - 1) - 1;
		int64_t wp = (int64_t)W + pl + pr - (int64_t)dW * (kW - 1) - 1;
		uint32_t OH, OW, cig = Cin / G, cog = Cout / G;
		uint32_t in, w, out, bias = 0;
		double *o0;
		size_t n, co, oh, ow, ci, kh, kw;

		if (hp < 0 || wp < 0) {
			iter--;
			continue;
		}
		OH = (uint32_t)(hp / sH + 1);
		OW = (uint32_t)(wp / sW + 1);
		ct_reset(&t);
		in = ct_op(&t, idt, Nn * Cin * H * W);
		w = ct_op(&t, wdt, Cout * cig * kH * kW);
		out = ct_op(&t, odt, Nn * Cout * OH * OW);
		if (with_bias)
			bias = ct_op(&t, ct_int(&rng, 0, 1) ? IPUX_DT_F16 : IPUX_DT_F32, Cout);
		ct_p(&t, Nn); ct_p(&t, Cin); ct_p(&t, H); ct_p(&t, W);
		ct_p(&t, Cout); ct_p(&t, kH); ct_p(&t, kW); ct_p(&t, sH);
		ct_p(&t, sW); ct_p(&t, pt); ct_p(&t, pl); ct_p(&t, pb);
		ct_p(&t, pr); ct_p(&t, dH); ct_p(&t, dW); ct_p(&t, G);
		ct_p(&t, flags); ct_p(&t, (uint32_t)si); ct_p(&t, (uint32_t)sw);
		t_fill(&t, &rng, in, si);
		t_fill(&t, &rng, w, sw);
		t_fill(&t, &rng, out, 0);
		if (with_bias)
			t_fill(&t, &rng, bias, 0);
		o0 = ct_dalloc(Nn * Cout * OH * OW);
		for (n = 0; n < (size_t)Nn * Cout * OH * OW; n++)
			o0[n] = ct_get(&t, out, n);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_CONV2D_FP8), 0);
		for (n = 0; n < Nn; n++)
			for (co = 0; co < Cout; co++)
				for (oh = 0; oh < OH; oh++)
					for (ow = 0; ow < OW; ow++) {
						size_t g = co / cog, oi = ((n * Cout + co) * OH + oh) * OW + ow;
						double s = with_bias ? ct_get(&t, bias, co) : 0;
						double sabs = fabs(s), got;

						for (ci = 0; ci < cig; ci++)
							for (kh = 0; kh < kH; kh++)
								for (kw = 0; kw < kW; kw++) {
									int64_t ih = (int64_t)(oh * sH + kh * dH) - pt;
									int64_t iw = (int64_t)(ow * sW + kw * dW) - pl;
									double x;

									if (ih < 0 || ih >= H || iw < 0 || iw >= W)
										continue;
									x = t_val(&t, in, ((n * Cin + g * cig + ci) * H + (size_t)ih) * W + (size_t)iw, si) *
									    t_val(&t, w, ((co * cig + ci) * kH + kh) * kW + kw, sw);
									s += x;
									sabs += fabs(x);
								}
						if (flags) {
							s += o0[oi];
							sabs += fabs(o0[oi]);
						}
						got = ct_get(&t, out, oi);
						if (!t_close_sum(got, s, sabs, odt, cig * kH * kW + 1) && bad++ < 4)
							fprintf(stderr, "  conv8 iter %d [%zu,%zu,%zu,%zu] got %.9g want %.9g\n",
								iter, n, co, oh, ow, got, s);
					}
		free(o0);
	}
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}

TEST(conv_fp8_check)
{
	struct ct_tile t;
	uint32_t i;
	static const uint32_t prm[] = { 1, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1,
					1, 1, 1, 0, 0, (uint32_t)-2 };

	ct_init(&t, 8192);
	ct_op(&t, IPUX_DT_F16, 32);
	ct_op(&t, IPUX_DT_FP8_152, 36);
	ct_op(&t, IPUX_DT_F32, 32);
	for (i = 0; i < 19; i++)
		ct_p(&t, prm[i]);
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, 0);
	t.params[17] = 1; /* a scale for an input that is not fp8 */
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_PARAM_VALUE);
	t.params[17] = 0;
	t.params[18] = 40;
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_PARAM_VALUE);
	t.params[18] = 0;
	t.ops[1].dtype = IPUX_DT_F16;
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_FP8_143;
	t.ops[2].dtype = IPUX_DT_FP8_143; /* out must be F32/F16 */
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_OPERAND_TYPE);
	t.ops[2].dtype = IPUX_DT_F32;
	t.ops[1].count++;
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_OPERAND_SHAPE);
	t.ops[1].count--;
	t.params[15] = 3; /* groups do not divide */
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_PARAM_VALUE);
	t.params[15] = 1;
	t.nparams--;
	CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_PARAM_COUNT);
	t.nparams++;
	/* CONV2D itself refuses the fp8 weight */
	t.nparams -= 2;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_OPERAND_TYPE);
	ct_free(&t);
}

/*
 * Per-channel weight scales: the weight (A per row, or B per column) is
 * encoded channel by channel at its own scale and decoded at scale 0 with
 * the channel's power of two applied to the sum; the reference decodes
 * each weight at its channel's scale and sums in double.
 */
TEST(matmul_fp8_channel_scales)
{
	struct ct_tile t;
	struct ct_rng rng = { 0x5ca1e8ull };
	int iter, bad = 0;

	ct_init(&t, 1 << 20);
	for (iter = 0; iter < 60; iter++) {
		uint32_t M = ct_size(&rng), N = iter == 5 ? 300 : ct_size(&rng);
		uint32_t K = ct_size(&rng), batch = (uint32_t)ct_int(&rng, 1, 2);
		int wa = (int)ct_int(&rng, 0, 1);	/* the weight is A: W x X */
		uint32_t flags = (uint32_t)ct_int(&rng, 0, 1) |
				 (wa ? IPUX_MM_A_SHARED | IPUX_MM_SCALES_A
				     : IPUX_MM_B_SHARED | IPUX_MM_SCALES_B);
		uint32_t wdt = t_fp8_dts[ct_int(&rng, 0, 1)];
		uint32_t xdt = t_rd_dts[ct_int(&rng, 0, 3)];
		uint32_t cdt = ct_int(&rng, 0, 1) ? IPUX_DT_F16 : IPUX_DT_F32;
		int sx = (xdt == IPUX_DT_FP8_143 || xdt == IPUX_DT_FP8_152)
				 ? (int)ct_int(&rng, -4, 2) : 0;
		uint32_t nch = wa ? M : N, a, b, c, so, i, ch;
		int sc[300];
		double *c0;
		size_t bt, m, n, k;

		for (ch = 0; ch < nch; ch++)
			sc[ch] = (int)ct_int(&rng, -20, 6);
		ct_reset(&t);
		a = ct_op(&t, wa ? wdt : xdt, (wa ? 1 : batch) * M * K);
		b = ct_op(&t, wa ? xdt : wdt, (wa ? batch : 1) * K * N);
		c = ct_op(&t, cdt, batch * M * N);
		so = ct_op(&t, IPUX_DT_I8, nch);
		ct_p(&t, batch); ct_p(&t, M); ct_p(&t, N); ct_p(&t, K);
		ct_p(&t, flags); ct_p(&t, (uint32_t)(wa ? 0 : sx));
		ct_p(&t, (uint32_t)(wa ? sx : 0));
		for (ch = 0; ch < nch; ch++)
			((int8_t *)ct_ptr(&t, so))[ch] = (int8_t)sc[ch];
		t_fill(&t, &rng, wa ? b : a, sx);
		for (i = 0; i < t.ops[wa ? a : b].count; i++) {
			ch = wa ? i / K : i % N;
			((uint8_t *)ct_ptr(&t, wa ? a : b))[i] = ipu_fp8_from_f32(
				(float)ct_unif(&rng, -2, 2) * ldexpf(1.0f, sc[ch]),
				t_fmt(wdt), sc[ch]);
		}
		t_fill(&t, &rng, c, 0);
		c0 = ct_dalloc(batch * M * N);
		for (m = 0; m < batch * M * N; m++)
			c0[m] = ct_get(&t, c, m);
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, 0);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_MATMUL_FP8), 0);
		for (bt = 0; bt < batch; bt++)
			for (m = 0; m < M; m++)
				for (n = 0; n < N; n++) {
					double s = 0, sabs = 0, got;
					size_t ci = (bt * M + m) * N + n;

					for (k = 0; k < K; k++) {
						double x = wa
							? t_val(&t, a, m * K + k, sc[m]) *
							  t_val(&t, b, bt * K * N + k * N + n, sx)
							: t_val(&t, a, bt * M * K + m * K + k, sx) *
							  t_val(&t, b, k * N + n, sc[n]);

						s += x;
						sabs += fabs(x);
					}
					if (flags & IPUX_MM_ACCUMULATE) {
						s += c0[ci];
						sabs += fabs(c0[ci]);
					}
					got = ct_get(&t, c, ci);
					if (!t_close_sum(got, s, sabs, cdt, K) && bad++ < 4)
						fprintf(stderr, "  mm8 scales iter %d [%zu,%zu,%zu] got %.9g want %.9g\n",
							iter, bt, m, n, got, s);
				}
		free(c0);
		/* what check() refuses */
		t.params[4] |= IPUX_MM_SCALES_A | IPUX_MM_SCALES_B;
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, IPUX_E_PARAM_VALUE);
		t.params[4] &= ~(wa ? IPUX_MM_SCALES_B : IPUX_MM_SCALES_A);
		t.params[wa ? 5 : 6] = 1; /* the weight's own scale must be 0 */
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, IPUX_E_PARAM_VALUE);
		t.params[wa ? 5 : 6] = 0;
		t.ops[so].count++;
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, IPUX_E_OPERAND_SHAPE);
		t.ops[so].count--;
		t.ops[so].dtype = IPUX_DT_U8;
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, IPUX_E_OPERAND_TYPE);
		t.ops[so].dtype = IPUX_DT_I8;
		t.params[4] &= ~(IPUX_MM_SCALES_A | IPUX_MM_SCALES_B);
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, IPUX_E_OPERAND_COUNT);
		t.nops--;	/* no scales: the weight's param is its scale */
		CT_EXPECT(&t, IPUX_CL_MATMUL_FP8, 0);
	}
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}

TEST(conv_fp8_channel_scales)
{
	struct ct_tile t;
	struct ct_rng rng = { 0xc5ca1e8ull };
	int iter, bad = 0;

	ct_init(&t, 1 << 21);
	for (iter = 0; iter < 40; iter++) {
		uint32_t G = (uint32_t)ct_int(&rng, 1, 3), Nn = (uint32_t)ct_int(&rng, 1, 2);
		uint32_t Cin = G * (uint32_t)ct_int(&rng, 1, 3);
		uint32_t Cout = G * (uint32_t)(iter % 5 == 0 ? 11 : ct_int(&rng, 1, 4));
		uint32_t H = (uint32_t)ct_int(&rng, 3, 9), W = (uint32_t)ct_int(&rng, 3, 9);
		uint32_t kH = (uint32_t)ct_int(&rng, 1, 3), kW = (uint32_t)ct_int(&rng, 1, 3);
		uint32_t flags = (uint32_t)ct_int(&rng, 0, 1) | IPUX_CONV_CHANNEL_SCALES;
		int with_bias = (int)ct_int(&rng, 0, 1);
		uint32_t idt = t_rd_dts[ct_int(&rng, 0, 3)];
		uint32_t wdt = t_fp8_dts[ct_int(&rng, 0, 1)];
		uint32_t odt = ct_int(&rng, 0, 1) ? IPUX_DT_F16 : IPUX_DT_F32;
		int si = (idt == IPUX_DT_FP8_143 || idt == IPUX_DT_FP8_152)
				 ? (int)ct_int(&rng, -4, 2) : 0;
		uint32_t OH = H - kH + 1, OW = W - kW + 1, cig = Cin / G, cog = Cout / G;
		uint32_t in, w, out, bias = 0, so, i;
		int sc[64];
		double *o0;
		size_t n, co, oh, ow, ci, kh, kw, wrow = (size_t)cig * kH * kW;

		for (co = 0; co < Cout; co++)
			sc[co] = (int)ct_int(&rng, -20, 6);
		ct_reset(&t);
		in = ct_op(&t, idt, Nn * Cin * H * W);
		w = ct_op(&t, wdt, Cout * cig * kH * kW);
		out = ct_op(&t, odt, Nn * Cout * OH * OW);
		if (with_bias)
			bias = ct_op(&t, ct_int(&rng, 0, 1) ? IPUX_DT_F16 : IPUX_DT_F32, Cout);
		so = ct_op(&t, IPUX_DT_I8, Cout);
		ct_p(&t, Nn); ct_p(&t, Cin); ct_p(&t, H); ct_p(&t, W);
		ct_p(&t, Cout); ct_p(&t, kH); ct_p(&t, kW); ct_p(&t, 1);
		ct_p(&t, 1); ct_p(&t, 0); ct_p(&t, 0); ct_p(&t, 0);
		ct_p(&t, 0); ct_p(&t, 1); ct_p(&t, 1); ct_p(&t, G);
		ct_p(&t, flags); ct_p(&t, (uint32_t)si); ct_p(&t, 0);
		for (co = 0; co < Cout; co++)
			((int8_t *)ct_ptr(&t, so))[co] = (int8_t)sc[co];
		t_fill(&t, &rng, in, si);
		for (i = 0; i < t.ops[w].count; i++)
			((uint8_t *)ct_ptr(&t, w))[i] = ipu_fp8_from_f32(
				(float)ct_unif(&rng, -2, 2) * ldexpf(1.0f, sc[i / wrow]),
				t_fmt(wdt), sc[i / wrow]);
		t_fill(&t, &rng, out, 0);
		if (with_bias)
			t_fill(&t, &rng, bias, 0);
		o0 = ct_dalloc(Nn * Cout * OH * OW);
		for (n = 0; n < (size_t)Nn * Cout * OH * OW; n++)
			o0[n] = ct_get(&t, out, n);
		CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, 0);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_CONV2D_FP8), 0);
		for (n = 0; n < Nn; n++)
			for (co = 0; co < Cout; co++)
				for (oh = 0; oh < OH; oh++)
					for (ow = 0; ow < OW; ow++) {
						size_t g = co / cog, oi = ((n * Cout + co) * OH + oh) * OW + ow;
						double s = with_bias ? ct_get(&t, bias, co) : 0;
						double sabs = fabs(s), got;

						for (ci = 0; ci < cig; ci++)
							for (kh = 0; kh < kH; kh++)
								for (kw = 0; kw < kW; kw++) {
									double x = t_val(&t, in, ((n * Cin + g * cig + ci) * H + oh + kh) * W + ow + kw, si) *
										   t_val(&t, w, ((co * cig + ci) * kH + kh) * kW + kw, sc[co]);

									s += x;
									sabs += fabs(x);
								}
						if (flags & IPUX_CONV_ACCUMULATE) {
							s += o0[oi];
							sabs += fabs(o0[oi]);
						}
						got = ct_get(&t, out, oi);
						if (!t_close_sum(got, s, sabs, odt, wrow + 2) && bad++ < 4)
							fprintf(stderr, "  conv8 scales iter %d [%zu,%zu,%zu,%zu] got %.9g want %.9g\n",
								iter, n, co, oh, ow, got, s);
					}
		free(o0);
		t.params[18] = 2;	/* scaleW must be 0 with channel scales */
		CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_PARAM_VALUE);
		t.params[18] = 0;
		t.ops[so].count--;
		CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_OPERAND_SHAPE);
		t.ops[so].count++;
		t.ops[so].dtype = IPUX_DT_F16;
		CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_OPERAND_TYPE);
		t.ops[so].dtype = IPUX_DT_I8;
		if (!with_bias) {
			/* without the flag the scales would be read as a bias */
			t.params[16] &= ~IPUX_CONV_CHANNEL_SCALES;
			CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_OPERAND_TYPE);
		} else {
			t.params[16] &= ~IPUX_CONV_CHANNEL_SCALES;
			CT_EXPECT(&t, IPUX_CL_CONV2D_FP8, IPUX_E_OPERAND_COUNT);
		}
	}
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(fp8_decode_all_codes);
	RUN(fp8_named_values);
	RUN(fp8_encode_every_f16);
	RUN(fp8_encode_f32);
	RUN(fp8_names_and_scales);
	RUN(cast_fp8_bit_exact);
	RUN(cast_fp8_check);
	RUN(fp8_operands_in_other_codelets);
	RUN(matmul_fp8_random);
	RUN(conv_fp8_random);
	RUN(conv_fp8_check);
	RUN(matmul_fp8_channel_scales);
	RUN(conv_fp8_channel_scales);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
