/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_act.c - the activation epilogue of MATMUL and CONV2D, and
 * BINARY's ADD_RELU.
 *
 * For every kernel variant (each ISA level; for CONV2D the direct engine
 * with its depthwise, in-place and phase-plane paths and the im2col path;
 * for MATMUL the blocked and skinny paths), the vertex with RELU or CLIP
 * must store exactly act(x) where the same vertex without the flag stores
 * x: the same bits for F32 out, and for F16 out the same value (the
 * epilogue runs on the f32 sum before rounding, so only the sign of a zero
 * may differ: round(act(x)) is +0 where act(round(x)) keeps a -0).
 * ACCUMULATE vertices apply it to the final sum (out + product).
 */
#include "cl_test.h"
#include "../../engine/codelets/matmul.h"

struct act {
	int kind;	/* 0 none, 1 relu, 2 clip */
	float lo, hi;
};

/* the scalar reference: UNARY RELU's and CLIP's formulas */
static float act_ref(const struct act *a, float x)
{
	if (a->kind == 1)
		return x < 0 ? 0.0f : x;
	if (a->kind == 2)
		return x < a->lo ? a->lo : (x > a->hi ? a->hi : x);
	return x;
}

/* bounds that F16 represents exactly (rounding then commutes with CLIP) */
static const float act_bounds[][2] = {
	{ -0.5f, 0.75f }, { 0.0f, 6.0f }, { 0.0f, 1.0f }, { 0.25f, 0.25f },
	{ -2.0f, 0.0f },
};

static void act_pick(struct ct_rng *r, struct act *a)
{
	int b = (int)ct_int(r, 0, sizeof(act_bounds) / sizeof(act_bounds[0]) - 1);

	a->kind = (int)ct_int(r, 1, 2);
	a->lo = act_bounds[b][0];
	a->hi = act_bounds[b][1];
}

typedef void (*act_run_fn)(struct ct_tile *t, int variant);

static void act_run_mm(struct ct_tile *t, int variant)
{
	struct ipu_vertex_ctx v = ct_ctx(t, 1);

	ipu_mm_run_level(&v, variant);
}

static void act_run_conv(struct ct_tile *t, int variant)
{
	struct ipu_vertex_ctx v = ct_ctx(t, 1);

	ipu_conv_run_level(&v, variant / 2, variant % 2);
}

/*
 * Run every variant of the vertex on t without and with the activation
 * (flags word params[fi], base params nbase), each from out's initial
 * content, and compare.  Returns the number of mismatching elements.
 */
static int act_compare(struct ct_tile *t, uint32_t id, uint32_t out, uint32_t fi,
		       uint32_t nbase, uint32_t relu, uint32_t clip,
		       const struct act *a, act_run_fn run, int nvar,
		       const char *what)
{
	size_t n = t->ops[out].count, esz = ipux_dtype_size(t->ops[out].dtype), i;
	uint8_t *init = malloc(n * esz), *plain = malloc(n * esz);
	uint32_t flags = t->params[fi];
	int f16 = t->ops[out].dtype == IPUX_DT_F16, var, bad = 0;

	if (!init || !plain)
		abort();
	memcpy(init, ct_ptr(t, out), n * esz);
	for (var = -1; var < nvar; var++) {
		/* plain: the flags as given */
		memcpy(ct_ptr(t, out), init, n * esz);
		t->params[fi] = flags;
		t->nparams = nbase;
		if (ct_check(t, id)) {
			fprintf(stderr, "  %s: plain vertex refused: %s\n", what, t->why);
			bad++;
			break;
		}
		if (var < 0)
			CHECK_EQ_INT(ct_run(t, id), 0);
		else
			run(t, var);
		memcpy(plain, ct_ptr(t, out), n * esz);
		/* fused: the same vertex with the activation */
		memcpy(ct_ptr(t, out), init, n * esz);
		t->params[fi] = flags | (a->kind == 1 ? relu : clip);
		if (a->kind == 2) {
			t->params[nbase] = ct_fbits(a->lo);
			t->params[nbase + 1] = ct_fbits(a->hi);
			t->nparams = nbase + 2;
		}
		if (ct_check(t, id)) {
			fprintf(stderr, "  %s: fused vertex refused: %s\n", what, t->why);
			bad++;
			break;
		}
		if (var < 0) {
			CHECK_EQ_INT(ct_run(t, id), 0);
		} else {
			ct_poison_gaps(t, 1);
			run(t, var);
			ct_poison_gaps(t, 0);
			CHECK(ct_guards_ok(t));
		}
		for (i = 0; i < n; i++) {
			int ok;
			float want, got;

			if (f16) {
				uint16_t u, g;

				memcpy(&u, plain + i * 2, 2);
				memcpy(&g, (uint8_t *)ct_ptr(t, out) + i * 2, 2);
				want = act_ref(a, ipu_f16_to_f32(u));
				got = ipu_f16_to_f32(g);
				ok = got == want;
			} else {
				uint32_t wb, gb;

				memcpy(&want, plain + i * 4, 4);
				want = act_ref(a, want);
				memcpy(&wb, &want, 4);
				memcpy(&gb, (uint8_t *)ct_ptr(t, out) + i * 4, 4);
				memcpy(&got, &gb, 4);
				ok = wb == gb;
			}
			if (!ok) {
				if (bad < 3)
					fprintf(stderr, "  %s act %d [%g, %g] variant %d: [%zu] got %.9g want %.9g\n",
						what, a->kind, (double)a->lo, (double)a->hi, var, i,
						(double)got, (double)want);
				bad++;
			}
		}
	}
	t->params[fi] = flags;
	t->nparams = nbase;
	free(init);
	free(plain);
	return bad;
}

/* ------------------------------------------------------------ MATMUL */

static int mm_act_one(struct ct_rng *r, uint32_t batch, uint32_t M, uint32_t N,
		      uint32_t K, uint32_t flags, uint32_t abdt, uint32_t cdt,
		      const struct act *a)
{
	struct ct_tile t;
	uint32_t na = (flags & IPUX_MM_A_SHARED ? 1 : batch) * M * K;
	uint32_t nb = (flags & IPUX_MM_B_SHARED ? 1 : batch) * K * N;
	uint32_t nc = batch * M * N, C;
	char what[96];
	int bad;

	ct_init(&t, ((size_t)na + nb + nc) * 4 + 4096);
	ct_fill_rand(&t, r, ct_op(&t, abdt, na), -1, 1);
	ct_fill_rand(&t, r, ct_op(&t, abdt, nb), -1, 1);
	C = ct_op(&t, cdt, nc);
	ct_fill_rand(&t, r, C, -1, 1);
	ct_p(&t, batch);
	ct_p(&t, M);
	ct_p(&t, N);
	ct_p(&t, K);
	ct_p(&t, flags);
	snprintf(what, sizeof(what), "MATMUL b%u M%u N%u K%u f%x dt%u/%u", batch, M, N,
		 K, flags, abdt, cdt);
	bad = act_compare(&t, IPUX_CL_MATMUL, C, 4, 5, IPUX_MM_RELU, IPUX_MM_CLIP, a,
			  act_run_mm, ipu_mm_max_level() + 1, what);
	ct_free(&t);
	return bad;
}

TEST(matmul_act_random)
{
	struct ct_rng r = { 0xac7 };
	int it;

	for (it = 0; it < 300; it++) {
		struct act a;
		/* skinny shapes (M < 4, N < 8, short K) as often as blocked ones */
		uint32_t M = it % 3 == 0 ? (uint32_t)ct_int(&r, 1, 4) : ct_size(&r);
		uint32_t N = it % 3 == 1 ? (uint32_t)ct_int(&r, 1, 8) : ct_size(&r);
		uint32_t K = it % 4 == 0 ? (uint32_t)ct_int(&r, 1, 40) : ct_size(&r);

		act_pick(&r, &a);
		CHECK_EQ_INT(mm_act_one(&r, (uint32_t)ct_int(&r, 1, 3), M, N, K,
					(uint32_t)ct_int(&r, 0, 15),
					ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16,
					ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16, &a), 0);
	}
}

TEST(matmul_act_big_blocks)
{
	/* the K, N and M blocking of every level: the epilogue after the last K block */
	static const uint32_t sz[][3] = {
		{ 67, 130, 300 }, { 13, 64, 256 }, { 128, 129, 513 }, { 96, 128, 16 },
		{ 1, 200, 600 }, { 100, 1, 257 },
	};
	struct ct_rng r = { 5 };
	uint32_t i, f;

	for (i = 0; i < sizeof(sz) / sizeof(sz[0]); i++)
		for (f = 0; f < 4; f++) {
			struct act a = { 1 + (int)(f & 1), 0.0f, 6.0f };

			CHECK_EQ_INT(mm_act_one(&r, 2, sz[i][0], sz[i][1], sz[i][2],
						f & 1 ? IPUX_MM_TRANS_B | IPUX_MM_ACCUMULATE : 0,
						f & 2 ? IPUX_DT_F16 : IPUX_DT_F32,
						f == 2 ? IPUX_DT_F16 : IPUX_DT_F32, &a), 0);
		}
}

TEST(matmul_act_check)
{
	struct ct_tile t;

	ct_init(&t, 8192);
	ct_op(&t, IPUX_DT_F32, 2 * 3 * 4);
	ct_op(&t, IPUX_DT_F32, 2 * 4 * 5);
	ct_op(&t, IPUX_DT_F32, 2 * 3 * 5);
	ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 5); ct_p(&t, 4); ct_p(&t, IPUX_MM_RELU);
	CT_EXPECT(&t, IPUX_CL_MATMUL, 0);
	/* RELU takes no bounds */
	ct_p(&t, ct_fbits(0.0f)); ct_p(&t, ct_fbits(6.0f));
	CT_EXPECT(&t, IPUX_CL_MATMUL, IPUX_E_PARAM_COUNT);
	t.params[4] = IPUX_MM_CLIP | IPUX_MM_ACCUMULATE;
	CT_EXPECT(&t, IPUX_CL_MATMUL, 0);
	t.params[4] = IPUX_MM_CLIP | IPUX_MM_RELU;
	CT_EXPECT(&t, IPUX_CL_MATMUL, IPUX_E_PARAM_VALUE);
	CHECK(strstr(t.why, "both RELU and CLIP") != NULL);
	t.params[4] = IPUX_MM_CLIP;
	t.params[5] = ct_fbits(7.0f);	/* lo > hi */
	CT_EXPECT(&t, IPUX_CL_MATMUL, IPUX_E_PARAM_VALUE);
	CHECK(strstr(t.why, "CLIP bounds") != NULL);
	t.params[5] = 0x7fc00000u;	/* NaN */
	CT_EXPECT(&t, IPUX_CL_MATMUL, IPUX_E_PARAM_VALUE);
	t.params[5] = ct_fbits(0.0f);
	t.nparams = 6;			/* CLIP without hi */
	CT_EXPECT(&t, IPUX_CL_MATMUL, IPUX_E_PARAM_COUNT);
	CHECK(strstr(t.why, "CLIP appends") != NULL);
	t.nparams = 5;
	CT_EXPECT(&t, IPUX_CL_MATMUL, IPUX_E_PARAM_COUNT);
	ct_free(&t);
}

/* ------------------------------------------------------------ CONV2D */

static int conv_act_one(struct ct_rng *r, const uint32_t *p, uint32_t idt, uint32_t odt,
			int bias, const struct act *a)
{
	uint32_t N = p[0], Cin = p[1], H = p[2], W = p[3], Cout = p[4], kH = p[5],
		 kW = p[6], sH = p[7], sW = p[8], pt = p[9], pl = p[10], pb = p[11],
		 pr = p[12], dH = p[13], dW = p[14], G = p[15];
	uint32_t OH = (H + pt + pb - dH * (kH - 1) - 1) / sH + 1;
	uint32_t OW = (W + pl + pr - dW * (kW - 1) - 1) / sW + 1;
	uint32_t nin = N * Cin * H * W, nw = Cout * (Cin / G) * kH * kW;
	uint32_t nout = N * Cout * OH * OW, O, i;
	struct ct_tile t;
	char what[160];
	int bad;

	ct_init(&t, ((size_t)nin + nw + nout + Cout) * 4 + 4096);
	ct_fill_rand(&t, r, ct_op(&t, idt, nin), -1, 1);
	ct_fill_rand(&t, r, ct_op(&t, idt, nw), -1, 1);
	O = ct_op(&t, odt, nout);
	ct_fill_rand(&t, r, O, -1, 1);
	if (bias)
		ct_fill_rand(&t, r, ct_op(&t, odt, Cout), -1, 1);
	for (i = 0; i < 17; i++)
		ct_p(&t, p[i]);
	snprintf(what, sizeof(what),
		 "CONV2D N%u Cin%u %ux%u Cout%u k%ux%u s%u,%u p%u,%u,%u,%u d%u,%u g%u f%u dt%u/%u b%d",
		 N, Cin, H, W, Cout, kH, kW, sH, sW, pt, pl, pb, pr, dH, dW, G, p[16], idt, odt,
		 bias);
	bad = act_compare(&t, IPUX_CL_CONV2D, O, 16, 17, IPUX_CONV_RELU, IPUX_CONV_CLIP, a,
			  act_run_conv, 2 * (ipu_mm_max_level() + 1), what);
	ct_free(&t);
	return bad;
}

TEST(conv2d_act_random)
{
	struct ct_rng r = { 0xc0de };
	int it;

	for (it = 0; it < 200; it++) {
		uint32_t p[17], G = (uint32_t)ct_int(&r, 1, 3);
		struct act a;

		do {
			p[0] = (uint32_t)ct_int(&r, 1, 2);
			p[15] = G;
			p[1] = G * (uint32_t)ct_int(&r, 1, it % 4 == 0 ? 12 : 4);
			p[2] = ct_size(&r) % 18 + 1;
			p[3] = ct_size(&r) % 18 + 1;
			p[4] = G * (uint32_t)ct_int(&r, 1, it % 10 == 0 ? 20 : 5);
			p[5] = (uint32_t)ct_int(&r, 1, 3);
			p[6] = (uint32_t)ct_int(&r, 1, 3);
			p[7] = (uint32_t)ct_int(&r, 1, 3);
			p[8] = (uint32_t)ct_int(&r, 1, 3);
			if (it % 3 == 0)
				p[7] = p[8] = 1;	/* the in-place path */
			p[9] = (uint32_t)ct_int(&r, 0, 2);
			p[10] = (uint32_t)ct_int(&r, 0, 2);
			p[11] = (uint32_t)ct_int(&r, 0, 2);
			p[12] = (uint32_t)ct_int(&r, 0, 2);
			p[13] = (uint32_t)ct_int(&r, 1, 2);
			p[14] = (uint32_t)ct_int(&r, 1, 2);
			p[16] = (uint32_t)ct_int(&r, 0, 1);
		} while (p[2] + p[9] + p[11] < p[13] * (p[5] - 1) + 1 ||
			 p[3] + p[10] + p[12] < p[14] * (p[6] - 1) + 1);
		act_pick(&r, &a);
		CHECK_EQ_INT(conv_act_one(&r, p, ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16,
					  ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16,
					  (int)ct_int(&r, 0, 1), &a), 0);
	}
}

TEST(conv2d_act_paths)
{
	/*
	 * One shape per direct-engine path: depthwise rows (stride 1 and 2,
	 * f32 in place and f16 copied), stride-1 in place with many channels,
	 * stride-2 phase planes with several channel chunks, and a row too
	 * wide for the direct scratch (the im2col fallback).
	 */
	static const uint32_t sh[][17] = {
		{ 1, 8, 3, 40, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 0 },
		{ 1, 6, 3, 57, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, 1 },
		{ 1, 32, 14, 14, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
		{ 1, 64, 9, 56, 32, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1 },
		{ 1, 256, 14, 14, 8, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1, 1, 0 },
		{ 1, 16, 7, 7, 96, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1 },
		{ 1, 2, 3, 6000, 9, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 },
	};
	struct ct_rng r = { 61 };
	uint32_t i, f;

	for (i = 0; i < sizeof(sh) / sizeof(sh[0]); i++)
		for (f = 0; f < 4; f++) {
			struct act a = { 1 + (int)(f & 1), 0.0f, 6.0f };

			CHECK_EQ_INT(conv_act_one(&r, sh[i], f == 3 ? IPUX_DT_F16 : IPUX_DT_F32,
						  f >= 2 ? IPUX_DT_F16 : IPUX_DT_F32, f != 1, &a), 0);
		}
}

TEST(conv2d_act_check)
{
	struct ct_tile t;
	static const uint32_t p[17] = { 1, 4, 6, 6, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2,
					IPUX_CONV_RELU | IPUX_CONV_ACCUMULATE };
	uint32_t i;

	ct_init(&t, 1 << 14);
	ct_op(&t, IPUX_DT_F32, 4 * 36);
	ct_op(&t, IPUX_DT_F32, 2 * 2 * 9);
	ct_op(&t, IPUX_DT_F32, 2 * 16);
	for (i = 0; i < 17; i++)
		ct_p(&t, p[i]);
	CT_EXPECT(&t, IPUX_CL_CONV2D, 0);
	ct_p(&t, ct_fbits(0.0f));
	ct_p(&t, ct_fbits(6.0f));
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_COUNT);
	t.params[16] = IPUX_CONV_CLIP;
	CT_EXPECT(&t, IPUX_CL_CONV2D, 0);
	t.params[16] = IPUX_CONV_CLIP | IPUX_CONV_RELU;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	t.params[16] = IPUX_CONV_CLIP;
	t.params[18] = 0xffc00000u;	/* NaN hi */
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	CHECK(strstr(t.why, "CLIP bounds") != NULL);
	t.nparams = 17;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_COUNT);
	t.params[16] = 8;	/* unknown flag */
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}

/* ------------------------------------------------------------ BINARY */

/*
 * ADD_RELU stores relu(a + b) where ADD stores a + b: the same bits for
 * F32, the same value for F16 (the sum is rounded once, after the Relu).
 * Contiguous, broadcast (stride 0) and strided rows, f16 blocks.
 */
TEST(binary_add_relu)
{
	struct ct_rng r = { 0xadd };
	struct act relu = { 1, 0.0f, 0.0f };
	int it;

	for (it = 0; it < 60; it++) {
		uint32_t dt = it % 2 ? IPUX_DT_F16 : IPUX_DT_F32, esz = dt == IPUX_DT_F16 ? 2 : 4;
		uint32_t rows = (uint32_t)ct_int(&r, 1, 9), cols = (uint32_t)ct_int(&r, 1, 700);
		/* a: dense or column-major; b: dense, a row broadcast, or a scalar */
		int alay = (int)ct_int(&r, 0, 1), blay = (int)ct_int(&r, 0, 2);
		uint32_t n = rows * cols, nb = blay == 0 ? n : blay == 1 ? cols : 1, A, B, O, i;
		struct ct_tile t;
		uint8_t *plain = malloc((size_t)n * esz);

		REQUIRE(plain != NULL);
		ct_init(&t, ((size_t)n * 3 + 64) * 4 + 4096);
		A = ct_op(&t, dt, n);
		B = ct_op(&t, dt, nb);
		O = ct_op(&t, dt, n);
		ct_fill_rand(&t, &r, A, -2, 2);
		ct_fill_rand(&t, &r, B, -2, 2);
		ct_p(&t, IPUX_BIN_ADD);
		ct_p(&t, 2);
		ct_p(&t, rows);
		ct_p(&t, cols);
		ct_p(&t, alay ? 1 : cols);
		ct_p(&t, alay ? rows : 1);
		ct_p(&t, blay == 0 ? cols : 0);
		ct_p(&t, blay == 2 ? 0 : 1);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_BINARY), 0);
		memcpy(plain, ct_ptr(&t, O), (size_t)n * esz);
		t.params[0] = IPUX_BIN_ADD_RELU;
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_BINARY), 0);
		for (i = 0; i < n; i++) {
			float want, got;
			int ok;

			if (dt == IPUX_DT_F16) {
				uint16_t u, g;

				memcpy(&u, plain + (size_t)i * 2, 2);
				memcpy(&g, (uint8_t *)ct_ptr(&t, O) + (size_t)i * 2, 2);
				want = act_ref(&relu, ipu_f16_to_f32(u));
				got = ipu_f16_to_f32(g);
				ok = want == got;
			} else {
				uint32_t wb, gb;

				memcpy(&want, plain + (size_t)i * 4, 4);
				want = act_ref(&relu, want);
				memcpy(&got, (uint8_t *)ct_ptr(&t, O) + (size_t)i * 4, 4);
				memcpy(&wb, &want, 4);
				memcpy(&gb, &got, 4);
				ok = wb == gb;
			}
			if (!ok) {
				CHECK_MSG(0, "ADD_RELU dt %u %ux%u a%d b%d [%u]: got %.9g want %.9g", dt,
					  rows, cols, alay, blay, i, (double)got, (double)want);
				break;
			}
		}
		free(plain);
		ct_free(&t);
	}
}

TEST(binary_add_relu_check)
{
	struct ct_tile t;

	ct_init(&t, 4096);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_p(&t, IPUX_BIN_ADD_RELU); ct_p(&t, 1); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 1);
	CT_EXPECT(&t, IPUX_CL_BINARY, 0);
	t.ops[2].dtype = IPUX_DT_U8;	/* out is the operands' float type */
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_OPERAND_TYPE);
	t.ops[0].dtype = t.ops[1].dtype = t.ops[2].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_OPERAND_TYPE);
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(matmul_act_check);
	RUN(matmul_act_random);
	RUN(matmul_act_big_blocks);
	RUN(conv2d_act_check);
	RUN(conv2d_act_random);
	RUN(conv2d_act_paths);
	RUN(binary_add_relu_check);
	RUN(binary_add_relu);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
