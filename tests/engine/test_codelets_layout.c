/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_layout.c - POOL2D, GATHER, TRANSPOSE, STRIDED_COPY and PAD
 * against independent references.
 */
#include "cl_test.h"

static const uint32_t all_dt[] = { IPUX_DT_F32, IPUX_DT_F16, IPUX_DT_I32,
				   IPUX_DT_U8, IPUX_DT_I8, IPUX_DT_I64 };
#define NDT (sizeof(all_dt) / sizeof(all_dt[0]))

/* ------------------------------------------------------------ POOL2D */

TEST(pool2d_random)
{
	struct ct_rng r = { 6 };
	struct ct_tile t;
	uint32_t it;

	ct_init(&t, 1 << 19);
	for (it = 0; it < 200; it++) {
		uint32_t p[15], OH, OW, I, O, c, oh, ow, kh, kw;
		uint32_t dt = it & 1 ? IPUX_DT_F16 : IPUX_DT_F32;
		double *want;

		do {
			p[0] = (it >> 1) & 1 ? IPUX_POOL_AVG : IPUX_POOL_MAX;
			p[1] = (uint32_t)ct_int(&r, 1, 5);
			p[2] = ct_size(&r) % 20 + 1;
			p[3] = ct_size(&r) % 20 + 1;
			p[4] = (uint32_t)ct_int(&r, 1, 4);
			p[5] = (uint32_t)ct_int(&r, 1, 4);
			p[6] = (uint32_t)ct_int(&r, 1, 3);
			p[7] = (uint32_t)ct_int(&r, 1, 3);
			p[8] = (uint32_t)ct_int(&r, 0, p[4] - 1);
			p[9] = (uint32_t)ct_int(&r, 0, p[5] - 1);
			p[10] = (uint32_t)ct_int(&r, 0, p[4] - 1);
			p[11] = (uint32_t)ct_int(&r, 0, p[5] - 1);
			p[12] = it % 5 == 0 ? 2 : 1;
			p[13] = it % 7 == 0 ? 2 : 1;
			p[14] = (it >> 2) & 1 ? IPUX_POOL_COUNT_PAD : 0;
		} while (p[2] + p[8] + p[10] < p[12] * (p[4] - 1) + 1 ||
			 p[3] + p[9] + p[11] < p[13] * (p[5] - 1) + 1);
		OH = (p[2] + p[8] + p[10] - p[12] * (p[4] - 1) - 1) / p[6] + 1;
		OW = (p[3] + p[9] + p[11] - p[13] * (p[5] - 1) - 1) / p[7] + 1;
		ct_reset(&t);
		I = ct_op(&t, dt, p[1] * p[2] * p[3]);
		O = ct_op(&t, dt, p[1] * OH * OW);
		for (c = 0; c < 15; c++)
			ct_p(&t, p[c]);
		ct_fill_rand(&t, &r, I, -5, 5);
		want = ct_dalloc((size_t)p[1] * OH * OW);
		for (c = 0; c < p[1]; c++)
			for (oh = 0; oh < OH; oh++)
				for (ow = 0; ow < OW; ow++) {
					double m = -INFINITY, s = 0;
					uint32_t cnt = 0;

					for (kh = 0; kh < p[4]; kh++)
						for (kw = 0; kw < p[5]; kw++) {
							long ih = (long)(oh * p[6] + kh * p[12]) - (long)p[8];
							long iw = (long)(ow * p[7] + kw * p[13]) - (long)p[9];
							double x;

							if (ih < 0 || iw < 0 || ih >= (long)p[2] || iw >= (long)p[3])
								continue;
							x = ct_get(&t, I, ((size_t)c * p[2] + (size_t)ih) * p[3] + (size_t)iw);
							m = fmax(m, x);
							s += x;
							cnt++;
						}
					if (p[0] == IPUX_POOL_AVG)
						m = (p[14] ? s / (p[4] * p[5]) : (cnt ? s / cnt : 0));
					want[((size_t)c * OH + oh) * OW + ow] = m;
				}
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_POOL2D), 0);
		CHECK_MSG(ct_compare(&t, O, want, ct_rtol(dt), 1e-6, "POOL2D") == 0,
			  "op %u dt %u it %u", p[0], dt, it);
		free(want);
	}
	ct_free(&t);
}

/*
 * Max pooling over rows wide enough for the vectorised interior, with NaNs
 * (two payloads) and signed zeros among the inputs: the output must be the
 * exact bits the rule picks, walking each window in (kh, kw) order: the
 * first NaN, else the first of the largest values.
 */
TEST(pool2d_max_exact_bits)
{
	struct ct_rng r = { 61 };
	struct ct_tile t;
	uint32_t it;

	ct_init(&t, 1 << 19);
	for (it = 0; it < 120; it++) {
		uint32_t p[15], OH, OW, I, O, c, oh, ow, kh, kw, i;
		float *in, *out;

		p[0] = IPUX_POOL_MAX;
		p[1] = (uint32_t)ct_int(&r, 1, 3);
		p[4] = (uint32_t)ct_int(&r, 1, 4);
		p[5] = (uint32_t)ct_int(&r, 1, 4);
		p[6] = (uint32_t)ct_int(&r, 1, 3);
		p[7] = (uint32_t)ct_int(&r, 1, 4);
		p[8] = (uint32_t)ct_int(&r, 0, p[4] - 1);
		p[9] = (uint32_t)ct_int(&r, 0, p[5] - 1);
		p[10] = (uint32_t)ct_int(&r, 0, p[4] - 1);
		p[11] = (uint32_t)ct_int(&r, 0, p[5] - 1);
		p[12] = it % 3 == 0 ? 2 : 1;
		p[13] = it % 4 == 0 ? 2 : 1;
		p[14] = 0;
		p[2] = (uint32_t)ct_int(&r, p[12] * (p[4] - 1) + 1, 12);
		p[3] = (uint32_t)ct_int(&r, p[13] * (p[5] - 1) + 1, 90);
		OH = (p[2] + p[8] + p[10] - p[12] * (p[4] - 1) - 1) / p[6] + 1;
		OW = (p[3] + p[9] + p[11] - p[13] * (p[5] - 1) - 1) / p[7] + 1;
		ct_reset(&t);
		I = ct_op(&t, IPUX_DT_F32, p[1] * p[2] * p[3]);
		O = ct_op(&t, IPUX_DT_F32, p[1] * OH * OW);
		for (c = 0; c < 15; c++)
			ct_p(&t, p[c]);
		in = ct_ptr(&t, I);
		for (i = 0; i < p[1] * p[2] * p[3]; i++) {
			uint32_t bits, k = (uint32_t)ct_int(&r, 0, 19);

			/* few distinct values: ties between equal values are common */
			in[i] = (float)ct_int(&r, -2, 2);
			if (in[i] == 0.0f && (k & 1))
				in[i] = -0.0f;
			if (k == 0 || k == 1) {
				bits = k ? 0x7fc00001u : 0xffc00002u;
				memcpy(&in[i], &bits, sizeof(bits));
			}
		}
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_POOL2D), 0);
		in = ct_ptr(&t, I);
		out = ct_ptr(&t, O);
		for (c = 0; c < p[1]; c++)
			for (oh = 0; oh < OH; oh++)
				for (ow = 0; ow < OW; ow++) {
					float m = -INFINITY;
					int nan = 0;
					uint32_t gb, wb;

					for (kh = 0; kh < p[4] && !nan; kh++)
						for (kw = 0; kw < p[5] && !nan; kw++) {
							long ih = (long)(oh * p[6] + kh * p[12]) - (long)p[8];
							long iw = (long)(ow * p[7] + kw * p[13]) - (long)p[9];
							float x;

							if (ih < 0 || iw < 0 || ih >= (long)p[2] || iw >= (long)p[3])
								continue;
							x = in[((size_t)c * p[2] + (size_t)ih) * p[3] + (size_t)iw];
							if (isnan(x)) {
								m = x;
								nan = 1;
							} else if (x > m) {
								m = x;
							}
						}
					memcpy(&wb, &m, sizeof(wb));
					memcpy(&gb, &out[((size_t)c * OH + oh) * OW + ow], sizeof(gb));
					CHECK_MSG(gb == wb, "it %u c %u oh %u ow %u: got 0x%08x want 0x%08x",
						  it, c, oh, ow, gb, wb);
				}
	}
	ct_free(&t);
}

TEST(pool2d_check)
{
	struct ct_tile t;
	/* NC2 5x5 k3x3 s2 p1 -> 3x3 */
	static const uint32_t p[15] = { 0, 2, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0 };
	uint32_t i;

	ct_init(&t, 8192);
	ct_op(&t, IPUX_DT_F32, 50);
	ct_op(&t, IPUX_DT_F32, 18);
	for (i = 0; i < 15; i++)
		ct_p(&t, p[i]);
	CT_REJECTS(&t, IPUX_CL_POOL2D, 0, IPUX_DT_I32, 1);
	t.params[0] = 2;
	CT_EXPECT(&t, IPUX_CL_POOL2D, IPUX_E_PARAM_VALUE);
	t.params[0] = 1;
	t.params[6] = 0;
	CT_EXPECT(&t, IPUX_CL_POOL2D, IPUX_E_PARAM_VALUE);
	t.params[6] = 2;
	t.params[4] = 10;
	CT_EXPECT(&t, IPUX_CL_POOL2D, IPUX_E_PARAM_VALUE);
	t.params[4] = 3;
	t.params[14] = 4;
	CT_EXPECT(&t, IPUX_CL_POOL2D, IPUX_E_PARAM_VALUE);
	t.params[14] = 0;
	/* enormous padding must not wrap the out size */
	t.params[8] = t.params[10] = 0xfffffff0u;
	CHECK(ct_check(&t, IPUX_CL_POOL2D) != 0);
	ct_free(&t);
}

TEST(pool2d_huge_window)
{
	/* a window far larger than the input, mostly padding: bounded work */
	struct ct_tile t;
	uint32_t p[15] = { IPUX_POOL_AVG, 1, 2, 2, 0x40000000u, 1, 1, 1,
			   0x3fffffffu, 0, 0, 0, 1, 1, IPUX_POOL_COUNT_PAD };
	uint32_t i;
	float *x;

	ct_init(&t, 4096);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 2); /* OH = 2 + 0x3fffffff - 0x3fffffff... */
	for (i = 0; i < 15; i++)
		ct_p(&t, p[i]);
	x = ct_ptr(&t, 0);
	for (i = 0; i < 4; i++)
		x[i] = 1;
	/* OH = (2 + 0x3fffffff - 0x40000000)/1 + 1 = 2, OW = 2 -> 4 outputs */
	t.ops[1].count = 4;
	REQUIRE(ct_run(&t, IPUX_CL_POOL2D) == 0);
	CHECK(fabs(ct_get(&t, 1, 0) - 1.0 / 0x40000000) < 1e-12);
	ct_free(&t);
}

/* ------------------------------------------------------------ GATHER */

TEST(gather_random)
{
	struct ct_rng r = { 7 };
	struct ct_tile t;
	uint32_t d, it;

	ct_init(&t, 1 << 19);
	for (d = 0; d < NDT; d++)
		for (it = 0; it < 12; it++) {
			uint32_t dt = all_dt[d], O, L, I, NI, D, X, Y, o, k, j;
			uint32_t idt = it & 1 ? IPUX_DT_I64 : IPUX_DT_I32;
			double *want;

			do {
				O = ct_size(&r);
				L = ct_size(&r);
				I = it % 3 ? ct_size(&r) : 1;
				NI = ct_size(&r);
			} while (O * L * I > 20000 || O * NI * I > 20000);
			ct_reset(&t);
			D = ct_op(&t, dt, O * L * I);
			X = ct_op(&t, idt, NI);
			Y = ct_op(&t, dt, O * NI * I);
			ct_p(&t, O); ct_p(&t, L); ct_p(&t, I); ct_p(&t, NI);
			ct_fill_rand(&t, &r, D, -100, 100);
			for (k = 0; k < NI; k++)
				ct_set(&t, X, k, (double)ct_int(&r, -(int64_t)L, L - 1));
			want = ct_dalloc((size_t)O * NI * I);
			for (o = 0; o < O; o++)
				for (k = 0; k < NI; k++) {
					int64_t ix = (int64_t)ct_get(&t, X, k);

					if (ix < 0)
						ix += L;
					for (j = 0; j < I; j++)
						want[((size_t)o * NI + k) * I + j] =
							ct_get(&t, D, ((size_t)o * L + (size_t)ix) * I + j);
				}
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_GATHER), 0);
			CHECK_MSG(ct_compare(&t, Y, want, 0, 0, "GATHER") == 0, "dt %u", dt);
			free(want);
			/* an index out of range faults, never reads outside */
			ct_set(&t, X, NI - 1, it & 2 ? (double)L : -(double)L - 1);
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_GATHER), IPU_FAULT_INDEX);
		}
	/* I64 indices far outside the i32 range */
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_I64, 1);
	ct_op(&t, IPUX_DT_F32, 1);
	ct_p(&t, 1); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 1);
	((int64_t *)ct_ptr(&t, 1))[0] = INT64_MIN;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_GATHER), IPU_FAULT_INDEX);
	((int64_t *)ct_ptr(&t, 1))[0] = (int64_t)1 << 40;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_GATHER), IPU_FAULT_INDEX);
	((int64_t *)ct_ptr(&t, 1))[0] = -4;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_GATHER), 0);
	CT_REJECTS(&t, IPUX_CL_GATHER, 1, IPUX_DT_F32, 2);
	t.ops[2].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_GATHER, IPUX_E_OPERAND_TYPE);
	t.ops[2].dtype = IPUX_DT_F32;
	t.params[3] = 0;
	CT_EXPECT(&t, IPUX_CL_GATHER, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}

/* ------------------------------------------------------------ TRANSPOSE */

TEST(transpose_random)
{
	struct ct_rng r = { 8 };
	struct ct_tile t;
	uint32_t d, it;

	ct_init(&t, 1 << 19);
	for (d = 0; d < NDT; d++)
		for (it = 0; it < 15; it++) {
			uint32_t dt = all_dt[d], rank, shape[6], perm[6], n, k, A, B, i;
			uint32_t st[6], oidx[6] = { 0 };
			double *want;

			do {
				rank = (uint32_t)ct_int(&r, 1, 6);
				n = 1;
				for (k = 0; k < rank; k++) {
					shape[k] = ct_int(&r, 0, 3) ? ct_size(&r) % 9 + 1 : 1;
					n *= shape[k];
					perm[k] = k;
				}
			} while (n > 20000);
			for (k = rank; k > 1; k--) {
				uint32_t j = (uint32_t)ct_int(&r, 0, k - 1), x = perm[k - 1];

				perm[k - 1] = perm[j];
				perm[j] = x;
			}
			for (k = rank, i = 1; k-- > 0;) {
				st[k] = i;
				i *= shape[k];
			}
			ct_reset(&t);
			A = ct_op(&t, dt, n);
			B = ct_op(&t, dt, n);
			ct_p(&t, rank);
			for (k = 0; k < rank; k++) ct_p(&t, shape[k]);
			for (k = 0; k < rank; k++) ct_p(&t, perm[k]);
			ct_fill_rand(&t, &r, A, -100, 100);
			want = ct_dalloc(n);
			for (i = 0; i < n; i++) {
				size_t src = 0;

				for (k = 0; k < rank; k++)
					src += (size_t)oidx[k] * st[perm[k]];
				want[i] = ct_get(&t, A, src);
				for (k = rank; k-- > 0;) {
					if (++oidx[k] < shape[perm[k]])
						break;
					oidx[k] = 0;
				}
			}
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_TRANSPOSE), 0);
			CHECK_MSG(ct_compare(&t, B, want, 0, 0, "TRANSPOSE") == 0,
				  "dt %u rank %u", dt, rank);
			free(want);
		}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 6);
	ct_op(&t, IPUX_DT_F32, 6);
	ct_p(&t, 2); ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 1); ct_p(&t, 0);
	CT_REJECTS(&t, IPUX_CL_TRANSPOSE, 1, IPUX_DT_I32, 1);
	t.params[4] = 1; /* perm [1, 1] */
	CT_EXPECT(&t, IPUX_CL_TRANSPOSE, IPUX_E_PARAM_VALUE);
	t.params[4] = 2;
	CT_EXPECT(&t, IPUX_CL_TRANSPOSE, IPUX_E_PARAM_VALUE);
	t.params[4] = 0;
	t.params[0] = 7;
	CT_EXPECT(&t, IPUX_CL_TRANSPOSE, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}

/* ------------------------------------------------------------ STRIDED_COPY */

/* A bias broadcast: each output row repeats one input element (column
 * stride 0), rows of lengths around the fill's doubling steps. */
TEST(strided_copy_broadcast_rows)
{
	static const uint32_t cols[] = { 1, 2, 3, 31, 32, 33, 300 };
	struct ct_rng r = { 11 };
	struct ct_tile t;
	uint32_t d, c, i, j;

	ct_init(&t, 1 << 19);
	for (d = 0; d < NDT; d++)
		for (c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			uint32_t dt = all_dt[d], rows = 5, n = rows * cols[c], A, B;
			double *want = ct_dalloc(n);

			ct_reset(&t);
			A = ct_op(&t, dt, rows + 2);
			B = ct_op(&t, dt, n);
			ct_p(&t, 2);
			ct_p(&t, rows);
			ct_p(&t, cols[c]);
			ct_p(&t, 2);	/* offset */
			ct_p(&t, 1);
			ct_p(&t, 0);
			ct_fill_rand(&t, &r, A, -100, 100);
			for (i = 0; i < rows; i++)
				for (j = 0; j < cols[c]; j++)
					want[i * cols[c] + j] = ct_get(&t, A, 2 + i);
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_STRIDED_COPY), 0);
			CHECK_MSG(ct_compare(&t, B, want, 0, 0, "STRIDED_COPY") == 0,
				  "dt %u cols %u", dt, cols[c]);
			free(want);
		}
	ct_free(&t);
}

TEST(strided_copy_random)
{
	struct ct_rng r = { 9 };
	struct ct_tile t;
	uint32_t d, it;

	ct_init(&t, 1 << 19);
	for (d = 0; d < NDT; d++)
		for (it = 0; it < 20; it++) {
			uint32_t dt = all_dt[d], rank, shape[6], n, k, A, B, i, nin;
			int32_t st[6];
			int64_t lo = 0, hi = 0, off;
			uint32_t idx[6] = { 0 };
			double *want;

			do {
				rank = (uint32_t)ct_int(&r, 1, 4);
				n = 1;
				lo = hi = 0;
				for (k = 0; k < rank; k++) {
					shape[k] = ct_size(&r) % 12 + 1;
					n *= shape[k];
					st[k] = (int32_t)ct_int(&r, -20, 20);
					if (st[k] < 0)
						lo += (int64_t)(shape[k] - 1) * st[k];
					else
						hi += (int64_t)(shape[k] - 1) * st[k];
				}
			} while (n > 10000 || hi - lo > 40000);
			off = -lo + ct_int(&r, 0, 5);
			nin = (uint32_t)(off + hi + 1 + ct_int(&r, 0, 5));
			ct_reset(&t);
			A = ct_op(&t, dt, nin);
			B = ct_op(&t, dt, n);
			ct_p(&t, rank);
			for (k = 0; k < rank; k++) ct_p(&t, shape[k]);
			ct_p(&t, (uint32_t)off);
			for (k = 0; k < rank; k++) ct_p(&t, (uint32_t)st[k]);
			ct_fill_rand(&t, &r, A, -100, 100);
			want = ct_dalloc(n);
			for (i = 0; i < n; i++) {
				int64_t s = off;

				for (k = 0; k < rank; k++)
					s += (int64_t)idx[k] * st[k];
				want[i] = ct_get(&t, A, (size_t)s);
				for (k = rank; k-- > 0;) {
					if (++idx[k] < shape[k])
						break;
					idx[k] = 0;
				}
			}
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_STRIDED_COPY), 0);
			CHECK_MSG(ct_compare(&t, B, want, 0, 0, "STRIDED_COPY") == 0,
				  "dt %u rank %u", dt, rank);
			free(want);
			/* one element short: refused */
			t.ops[A].count = (uint32_t)(off + hi);
			CT_EXPECT(&t, IPUX_CL_STRIDED_COPY, IPUX_E_OPERAND_SHAPE);
		}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 10);
	ct_op(&t, IPUX_DT_F32, 6);
	/* [2][3] from offset 9, strides -3, -1: reads 9..1 */
	ct_p(&t, 2); ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 9);
	ct_p(&t, (uint32_t)-3); ct_p(&t, (uint32_t)-1);
	CT_REJECTS(&t, IPUX_CL_STRIDED_COPY, 1, IPUX_DT_F16, 1);
	t.params[3] = 3; /* would read index -2 */
	CT_EXPECT(&t, IPUX_CL_STRIDED_COPY, IPUX_E_OPERAND_SHAPE);
	t.params[3] = 10; /* would read index 10 */
	CT_EXPECT(&t, IPUX_CL_STRIDED_COPY, IPUX_E_OPERAND_SHAPE);
	/* extreme strides must not wrap back inside */
	t.params[3] = 0;
	t.params[4] = 0x80000000u; /* INT32_MIN */
	t.params[5] = 0x7fffffffu;
	CT_EXPECT(&t, IPUX_CL_STRIDED_COPY, IPUX_E_OPERAND_SHAPE);
	ct_free(&t);
}

TEST(strided_copy_overflow)
{
	/* rank 6, dims 2^16-ish with i32 strides: the index sum exceeds 2^63? */
	struct ct_tile t;
	uint32_t k;

	ct_init(&t, 4096);
	ct_op(&t, IPUX_DT_U8, 100);
	ct_op(&t, IPUX_DT_U8, 64);
	ct_p(&t, 6);
	for (k = 0; k < 6; k++) ct_p(&t, 2);
	ct_p(&t, 0);
	for (k = 0; k < 6; k++) ct_p(&t, 0x7fffffffu);
	CT_EXPECT(&t, IPUX_CL_STRIDED_COPY, IPUX_E_OPERAND_SHAPE);
	ct_free(&t);
}

/* ------------------------------------------------------------ PAD */

static int64_t pad_ref_map(int64_t o, int64_t b, int64_t in, uint32_t mode)
{
	int64_t i = o - b;

	if (i >= 0 && i < in)
		return i;
	if (mode == 0)
		return -1;
	if (mode == 2)
		return i < 0 ? 0 : in - 1;
	/* reflect (numpy "reflect"): mirror without repeating the edge */
	while (i < 0 || i >= in)
		i = i < 0 ? -i : 2 * (in - 1) - i;
	return i;
}

TEST(pad_random)
{
	struct ct_rng r = { 10 };
	struct ct_tile t;
	uint32_t d, it;

	ct_init(&t, 1 << 19);
	for (d = 0; d < NDT; d++)
		for (it = 0; it < 24; it++) {
			uint32_t dt = all_dt[d], mode = it % 3, rank, ish[6], n, on, k, A, B, i;
			int32_t bg[6], en[6];
			int64_t osh[6];
			uint32_t idx[6] = { 0 }, st[6];
			int fl = dt == IPUX_DT_F32 || dt == IPUX_DT_F16;
			double cval = fl ? -1.25 : 7;
			double *want;

			do {
				rank = (uint32_t)ct_int(&r, 1, 4);
				n = 1;
				on = 1;
				for (k = 0; k < rank; k++) {
					int64_t lim;

					ish[k] = ct_size(&r) % 10 + 1;
					lim = mode == 1 ? ish[k] - 1 : 4;
					bg[k] = (int32_t)ct_int(&r, -(int64_t)ish[k] / 2, lim);
					en[k] = (int32_t)ct_int(&r, -(int64_t)ish[k] / 2, lim);
					osh[k] = ish[k] + bg[k] + en[k];
					n *= ish[k];
					on *= osh[k] > 0 ? (uint32_t)osh[k] : 0;
				}
			} while (n > 10000 || on == 0 || on > 20000);
			for (k = rank, i = 1; k-- > 0;) {
				st[k] = i;
				i *= ish[k];
			}
			ct_reset(&t);
			A = ct_op(&t, dt, n);
			B = ct_op(&t, dt, on);
			ct_p(&t, rank);
			for (k = 0; k < rank; k++) ct_p(&t, ish[k]);
			for (k = 0; k < rank; k++) ct_p(&t, (uint32_t)bg[k]);
			for (k = 0; k < rank; k++) ct_p(&t, (uint32_t)en[k]);
			ct_p(&t, mode);
			ct_p(&t, fl ? ct_fbits((float)cval) : (uint32_t)(int32_t)cval);
			ct_fill_rand(&t, &r, A, -100, 100);
			want = ct_dalloc(on);
			for (i = 0; i < on; i++) {
				size_t s = 0;
				int konst = 0;

				for (k = 0; k < rank; k++) {
					int64_t m = pad_ref_map(idx[k], bg[k], ish[k], mode);

					if (m < 0)
						konst = 1;
					else
						s += (size_t)m * st[k];
				}
				want[i] = konst ? cval : ct_get(&t, A, s);
				for (k = rank; k-- > 0;) {
					if (++idx[k] < osh[k])
						break;
					idx[k] = 0;
				}
			}
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_PAD), 0);
			CHECK_MSG(ct_compare(&t, B, want, 0, 0, "PAD") == 0,
				  "dt %u mode %u rank %u", dt, mode, rank);
			free(want);
		}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 6);
	ct_op(&t, IPUX_DT_F32, 4 * 5);
	ct_p(&t, 2); ct_p(&t, 2); ct_p(&t, 3);	/* in [2][3] */
	ct_p(&t, 1); ct_p(&t, 1);		/* begin */
	ct_p(&t, 1); ct_p(&t, 1);		/* end -> [4][5] */
	ct_p(&t, 1); ct_p(&t, 0);		/* reflect */
	CT_REJECTS(&t, IPUX_CL_PAD, 1, IPUX_DT_I32, 1);
	t.params[3] = 2; /* reflect 2 on a dim of 2 */
	t.ops[1].count = 5 * 5;
	CT_EXPECT(&t, IPUX_CL_PAD, IPUX_E_PARAM_VALUE);
	t.params[7] = 0; /* constant: fine */
	CT_EXPECT(&t, IPUX_CL_PAD, 0);
	t.params[7] = 3;
	CT_EXPECT(&t, IPUX_CL_PAD, IPUX_E_PARAM_VALUE);
	t.params[7] = 0;
	t.params[3] = (uint32_t)-3; t.params[5] = 0; /* out dim 2-3+0 < 1 */
	CT_EXPECT(&t, IPUX_CL_PAD, IPUX_E_PARAM_VALUE);
	/* out dims 2^32-1 and ~2^33: the product must not wrap in 64 bits */
	t.params[1] = 1; t.params[2] = 0xffffffffu;
	t.params[3] = t.params[4] = t.params[5] = t.params[6] = 0x7fffffffu;
	t.ops[0].count = 0xffffffffu;
	CT_EXPECT(&t, IPUX_CL_PAD, IPUX_E_PARAM_VALUE);
	CHECK(strstr(t.why, "2^32-1") != NULL);
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(pool2d_random);
	RUN(pool2d_max_exact_bits);
	RUN(pool2d_check);
	RUN(pool2d_huge_window);
	RUN(gather_random);
	RUN(transpose_random);
	RUN(strided_copy_broadcast_rows);
	RUN(strided_copy_random);
	RUN(strided_copy_overflow);
	RUN(pad_random);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
