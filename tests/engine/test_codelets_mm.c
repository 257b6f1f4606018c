/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_mm.c - MATMUL and CONV2D against double references.
 */
#include "cl_test.h"
#include "../../engine/codelets/matmul.h"

/* ------------------------------------------------------------ MATMUL */

struct mm_case {
	uint32_t batch, M, N, K, flags;
	uint32_t abdt, cdt;
};

static int mm_one(struct ct_rng *r, const struct mm_case *c, int level)
{
	struct ct_tile t;
	uint32_t na = (c->flags & IPUX_MM_A_SHARED ? 1 : c->batch) * c->M * c->K;
	uint32_t nb = (c->flags & IPUX_MM_B_SHARED ? 1 : c->batch) * c->K * c->N;
	uint32_t nc = c->batch * c->M * c->N;
	size_t bytes = ((size_t)na + nb + nc) * 4 + 4096;
	uint32_t A, B, C, b, i, j, k;
	double *want = ct_dalloc(nc), *mag = ct_dalloc(nc);
	struct ipu_vertex_ctx v;
	int bad = 0;

	ct_init(&t, bytes);
	A = ct_op(&t, c->abdt, na);
	B = ct_op(&t, c->abdt, nb);
	C = ct_op(&t, c->cdt, nc);
	ct_p(&t, c->batch);
	ct_p(&t, c->M);
	ct_p(&t, c->N);
	ct_p(&t, c->K);
	ct_p(&t, c->flags);
	ct_fill_rand(&t, r, A, -1, 1);
	ct_fill_rand(&t, r, B, -1, 1);
	ct_fill_rand(&t, r, C, -1, 1);
	for (b = 0; b < c->batch; b++)
		for (i = 0; i < c->M; i++)
			for (j = 0; j < c->N; j++) {
				size_t ci = ((size_t)b * c->M + i) * c->N + j;
				double s = 0, m = 0;

				if (c->flags & IPUX_MM_ACCUMULATE) {
					s = ct_get(&t, C, ci);
					m = fabs(s);
				}
				for (k = 0; k < c->K; k++) {
					size_t ai = (c->flags & IPUX_MM_A_SHARED ? 0 : (size_t)b * c->M * c->K) +
						    (size_t)i * c->K + k;
					size_t bo = c->flags & IPUX_MM_B_SHARED ? 0 : (size_t)b * c->K * c->N;
					size_t bi = c->flags & IPUX_MM_TRANS_B
							    ? bo + (size_t)j * c->K + k
							    : bo + (size_t)k * c->N + j;
					double p = ct_get(&t, A, ai) * ct_get(&t, B, bi);

					s += p;
					m += fabs(p);
				}
				want[ci] = s;
				mag[ci] = m;
			}
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), 0);
	v = ct_ctx(&t, 1);
	ct_poison_gaps(&t, 1);
	ipu_mm_run_level(&v, level);
	ct_poison_gaps(&t, 0);
	CHECK(ct_guards_ok(&t));
	for (i = 0; i < nc; i++) {
		double g = ct_get(&t, C, i);
		double tol = c->cdt == IPUX_DT_F16
				     ? 1e-3 * fabs(want[i]) + 1e-5 * mag[i] + 1e-4
				     : 1e-6 * mag[i] + 1e-7;

		if (!(fabs(g - want[i]) <= tol)) {
			if (bad < 3)
				fprintf(stderr,
					"  MATMUL b%u M%u N%u K%u f%x dt%u/%u L%d: [%u] got %.9g want %.9g\n",
					c->batch, c->M, c->N, c->K, c->flags,
					c->abdt, c->cdt, level, i, g, want[i]);
			bad++;
		}
	}
	free(want);
	free(mag);
	ct_free(&t);
	return bad;
}

TEST(matmul_random)
{
	struct ct_rng r = { 0x1234567 };
	int it, level, maxl = ipu_mm_max_level();

	for (it = 0; it < 300; it++) {
		struct mm_case c;

		c.batch = (uint32_t)ct_int(&r, 1, 3);
		c.M = ct_size(&r);
		c.N = ct_size(&r);
		c.K = ct_size(&r);
		c.flags = (uint32_t)ct_int(&r, 0, 15);
		c.abdt = ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16;
		c.cdt = ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16;
		for (level = 0; level <= maxl; level++)
			CHECK_EQ_INT(mm_one(&r, &c, level), 0);
	}
}

TEST(matmul_big_blocks)
{
	/* sizes that cross the K, N and M blocking of every level */
	static const uint32_t sz[][3] = {
		{ 67, 130, 300 }, { 13, 64, 256 }, { 128, 129, 513 },
		{ 1, 200, 600 }, { 100, 1, 257 },
	};
	struct ct_rng r = { 99 };
	uint32_t i, f;
	int level, maxl = ipu_mm_max_level();

	for (i = 0; i < sizeof(sz) / sizeof(sz[0]); i++)
		for (f = 0; f < 4; f++) {
			struct mm_case c = { 2, sz[i][0], sz[i][1], sz[i][2],
					     f & 1 ? IPUX_MM_TRANS_B | IPUX_MM_ACCUMULATE : 0,
					     f & 2 ? IPUX_DT_F16 : IPUX_DT_F32,
					     f == 2 ? IPUX_DT_F16 : IPUX_DT_F32 };

			for (level = 0; level <= maxl; level++)
				CHECK_EQ_INT(mm_one(&r, &c, level), 0);
		}
}

/*
 * Products with few rows or columns run the skinny paths, whose sums are
 * part of the bits the QEMU and in-process devices must agree on.  M < 4
 * with B [K][N]: each element is C (or +0) plus its products in K order.
 * Otherwise with N < 8: 32 interleaved partial sums per 256-long block of
 * K (term k into partial k % 32, each starting from +0), added by pairs
 * in order, the block sums added to C (or +0).  Short K and few columns
 * take their own loops; their f32 results must be these exact bits,
 * checked here against those sums written out (f32 operations, no fused
 * multiply-add), signed zeros and all.
 */
TEST(matmul_skinny_exact_bits)
{
	struct ct_rng r = { 0x5eed };
	int it;

	for (it = 0; it < 400; it++) {
		uint32_t batch = (uint32_t)ct_int(&r, 1, 3), M = (uint32_t)ct_int(&r, 1, 9);
		uint32_t N = (uint32_t)ct_int(&r, 1, 7), K = (uint32_t)ct_int(&r, 1, 40);
		uint32_t flags = (uint32_t)ct_int(&r, 0, 15), na, nb, nc, A, B, C, b, i, j, k;
		struct ct_tile t;
		float *a, *bm, *c, *c0;

		na = (flags & IPUX_MM_A_SHARED ? 1 : batch) * M * K;
		nb = (flags & IPUX_MM_B_SHARED ? 1 : batch) * K * N;
		nc = batch * M * N;
		ct_init(&t, ((size_t)na + nb + nc) * 4 + 4096);
		A = ct_op(&t, IPUX_DT_F32, na);
		B = ct_op(&t, IPUX_DT_F32, nb);
		C = ct_op(&t, IPUX_DT_F32, nc);
		ct_p(&t, batch);
		ct_p(&t, M);
		ct_p(&t, N);
		ct_p(&t, K);
		ct_p(&t, flags);
		ct_fill_rand(&t, &r, A, -1, 1);
		ct_fill_rand(&t, &r, B, -1, 1);
		ct_fill_rand(&t, &r, C, -1, 1);
		a = ct_ptr(&t, A);
		bm = ct_ptr(&t, B);
		/* zeros of both signs: a product of -0 must still add as +0 */
		for (i = 0; i < na; i += 3)
			a[i] = i % 2 ? -0.0f : 0.0f;
		c = ct_ptr(&t, C);
		c0 = malloc(nc * sizeof(float));
		CHECK(c0 != NULL);
		memcpy(c0, c, nc * sizeof(float));
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_MATMUL), 0);
		c = ct_ptr(&t, C);
		for (b = 0; b < batch; b++)
			for (i = 0; i < M; i++)
				for (j = 0; j < N; j++) {
					size_t ci = ((size_t)b * M + i) * N + j;
					size_t ao = (flags & IPUX_MM_A_SHARED ? 0 : (size_t)b * M * K) + (size_t)i * K;
					size_t bo = flags & IPUX_MM_B_SHARED ? 0 : (size_t)b * K * N;
					volatile float acc = flags & IPUX_MM_ACCUMULATE ? c0[ci] : 0.0f;
					int axpy = M < 4 && !(flags & IPUX_MM_TRANS_B);
					uint32_t k0, l, gb, wb;
					float want;

					if (axpy) {
						for (k = 0; k < K; k++) {
							volatile float p = a[ao + k] * bm[bo + (size_t)k * N + j];

							acc = acc + p;
						}
					}
					for (k0 = 0; !axpy && k0 < K; k0 += 256) {
						volatile float part[32], sum = 0.0f;

						for (l = 0; l < 32; l++)
							part[l] = 0.0f;
						for (k = k0; k < K && k < k0 + 256; k++) {
							size_t bi = flags & IPUX_MM_TRANS_B ? bo + (size_t)j * K + k
											    : bo + (size_t)k * N + j;
							volatile float p = a[ao + k] * bm[bi];

							part[(k - k0) % 32] = part[(k - k0) % 32] + p;
						}
						for (l = 0; l < 32; l += 2)
							sum = sum + (part[l] + part[l + 1]);
						acc = acc + sum;
					}
					want = acc;
					memcpy(&wb, &want, sizeof(wb));
					memcpy(&gb, &c[ci], sizeof(gb));
					CHECK_MSG(gb == wb, "b%u M%u N%u K%u f%x [%zu]: got 0x%08x want 0x%08x",
						  batch, M, N, K, flags, ci, gb, wb);
				}
		free(c0);
		ct_free(&t);
	}
}

TEST(matmul_codelet_entry)
{
	/* the table's run() (best level) on one case */
	struct ct_tile t;
	uint32_t A, B, C, i;
	float *a, *b, *c;

	ct_init(&t, 4096);
	A = ct_op(&t, IPUX_DT_F32, 6);
	B = ct_op(&t, IPUX_DT_F32, 6);
	C = ct_op(&t, IPUX_DT_F32, 4);
	a = ct_ptr(&t, A);
	b = ct_ptr(&t, B);
	for (i = 0; i < 6; i++) {
		a[i] = (float)(i + 1);
		b[i] = (float)(i + 7);
	}
	ct_p(&t, 1); ct_p(&t, 2); ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 0);
	REQUIRE(ct_run(&t, IPUX_CL_MATMUL) == 0);
	c = ct_ptr(&t, C);
	/* [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] */
	CHECK(c[0] == 58 && c[1] == 64 && c[2] == 139 && c[3] == 154);
	ct_free(&t);
}

TEST(matmul_check)
{
	struct ct_tile t;

	ct_init(&t, 8192);
	/* good */
	ct_op(&t, IPUX_DT_F32, 2 * 3 * 4);
	ct_op(&t, IPUX_DT_F32, 2 * 4 * 5);
	ct_op(&t, IPUX_DT_F32, 2 * 3 * 5);
	ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 5); ct_p(&t, 4); ct_p(&t, 0);
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), 0);
	/* operand count */
	t.nops = 2;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_OPERAND_COUNT);
	t.nops = 3;
	/* param count */
	t.nparams = 4;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_PARAM_COUNT);
	t.nparams = 5;
	/* dtype */
	t.ops[1].dtype = IPUX_DT_F16;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_I32;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_F32;
	/* shape */
	t.ops[0].count = 23;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_OPERAND_SHAPE);
	CHECK(strstr(t.why, "A has 23 elements") != NULL);
	t.ops[0].count = 24;
	t.params[4] = IPUX_MM_B_SHARED; /* B would need 20 */
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_OPERAND_SHAPE);
	t.params[4] = 0x40;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_PARAM_VALUE);
	t.params[4] = 0;
	t.params[1] = 0;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_PARAM_VALUE);
	/* overflow: batch*M*K wraps in 32 bits to 24 */
	t.params[0] = 2; t.params[1] = 3; t.params[3] = 4;
	t.params[1] = (uint32_t)((1ull << 32) / 8 + 3);
	CHECK(ct_check(&t, IPUX_CL_MATMUL) != 0);
	t.params[0] = 0x10000; t.params[1] = 0x10000; t.params[2] = 0x10000;
	t.params[3] = 0x10000;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), IPUX_E_PARAM_VALUE);
	ct_free(&t);
}


/* ------------------------------------------------------------ variants */

static int isa_engine(const char *env, uint32_t *isa, char *err, size_t len)
{
	struct ipu_engine_config cfg = { 1, 65536, 1 };
	struct ipu_engine *e;
	int rc;

	if (env)
		setenv("IPU_ENGINE_ISA", env, 1);
	else
		unsetenv("IPU_ENGINE_ISA");
	err[0] = 0;
	rc = ipu_engine_create(&cfg, NULL, &e, err, len);
	if (!rc) {
		*isa = ipu_engine_isa(e);
		ipu_engine_destroy(e);
	}
	unsetenv("IPU_ENGINE_ISA");
	return rc;
}

TEST(isa_chosen_at_engine_creation)
{
	uint32_t host = ipu_isa_host(), isa = 0, i;
	char err[256];

	CHECK(host >= IPU_ISA_GENERIC && host < IPU_ISA_COUNT);
	CHECK_EQ_INT((int)host, ipu_mm_max_level() + IPU_ISA_GENERIC);
	CHECK_EQ_INT(isa_engine(NULL, &isa, err, sizeof(err)), 0);
	CHECK_EQ_INT((int)isa, (int)host);
	CHECK_EQ_INT(isa_engine("auto", &isa, err, sizeof(err)), 0);
	CHECK_EQ_INT((int)isa, (int)host);
	/* every variant the host has can be forced; the others are refused */
	for (i = IPU_ISA_GENERIC; i < IPU_ISA_COUNT; i++) {
		int rc = isa_engine(ipu_isa_name(i), &isa, err, sizeof(err));

		if (i <= host) {
			CHECK_EQ_INT(rc, 0);
			CHECK_EQ_INT((int)isa, (int)i);
		} else {
			CHECK_EQ_INT(rc, IPU_E_INVAL);
			CHECK(strstr(err, "the CPU lacks it") != NULL);
		}
	}
	CHECK_EQ_INT(isa_engine("sse9", &isa, err, sizeof(err)), IPU_E_INVAL);
	CHECK(strstr(err, "IPU_ENGINE_ISA=sse9: unknown kernel variant; this host supports auto, generic") != NULL);
	CHECK(ipu_isa_name(IPU_ISA_COUNT) == NULL);
}

TEST(isa_of_vertex_selects_kernels)
{
	/*
	 * The codelet table's run() follows the vertex's isa: forcing generic
	 * gives exactly ipu_mm_run_level(level 0), and AUTO the host's best.
	 */
	struct ct_rng r = { 77 };
	struct ct_tile t;
	uint32_t A, B, C, i, n = 40 * 50;
	const struct ipu_codelet *cl = ipu_codelet_get(IPUX_CL_MATMUL);
	float *got = malloc(n * sizeof(float));
	struct ipu_vertex_ctx v;
	int level;

	CHECK(got != NULL);
	ct_init(&t, (40 * 300 + 300 * 50 + 40 * 50) * 4 + 4096);
	A = ct_op(&t, IPUX_DT_F32, 40 * 300);
	B = ct_op(&t, IPUX_DT_F32, 300 * 50);
	C = ct_op(&t, IPUX_DT_F32, n);
	ct_p(&t, 1);
	ct_p(&t, 40);
	ct_p(&t, 50);
	ct_p(&t, 300);
	ct_p(&t, 0);
	ct_fill_rand(&t, &r, A, -1, 1);
	ct_fill_rand(&t, &r, B, -1, 1);
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_MATMUL), 0);
	v = ct_ctx(&t, 1);
	for (level = 0; level <= ipu_mm_max_level(); level++) {
		ipu_mm_run_level(&v, level);
		memcpy(got, ct_ptr(&t, C), n * sizeof(float));
		memset(ct_ptr(&t, C), 0, n * sizeof(float));
		v.isa = (uint32_t)level + IPU_ISA_GENERIC;
		CHECK_EQ_INT(cl->run(&v), 0);
		CHECK(memcmp(got, ct_ptr(&t, C), n * sizeof(float)) == 0);
		if (level == ipu_mm_max_level()) {
			memset(ct_ptr(&t, C), 0, n * sizeof(float));
			v.isa = IPU_ISA_AUTO;
			CHECK_EQ_INT(cl->run(&v), 0);
			CHECK(memcmp(got, ct_ptr(&t, C), n * sizeof(float)) == 0);
		}
	}
	for (i = 0; i < n; i++)
		CHECK(got[i] == got[i]);
	free(got);
	ct_free(&t);
}

/* ------------------------------------------------------------ CONV2D */

struct conv_case {
	uint32_t p[17];
	uint32_t idt, odt, bias;
};

static int conv_one(struct ct_rng *r, const struct conv_case *c)
{
	const uint32_t *p = c->p;
	uint32_t N = p[0], Cin = p[1], H = p[2], W = p[3], Cout = p[4], kH = p[5],
		 kW = p[6], sH = p[7], sW = p[8], pt = p[9], pl = p[10], pb = p[11],
		 pr = p[12], dH = p[13], dW = p[14], G = p[15], flags = p[16];
	uint32_t OH = (H + pt + pb - dH * (kH - 1) - 1) / sH + 1;
	uint32_t OW = (W + pl + pr - dW * (kW - 1) - 1) / sW + 1;
	uint32_t cig = Cin / G, cog = Cout / G;
	uint32_t nin = N * Cin * H * W, nw = Cout * cig * kH * kW, nout = N * Cout * OH * OW;
	struct ct_tile t;
	uint32_t I, Wt, O, B = 0, i, n, oc, oh, ow, ic, kh, kw;
	double *want = ct_dalloc(nout), *mag = ct_dalloc(nout), *init = ct_dalloc(nout);
	int bad = 0, var, maxl = ipu_mm_max_level();

	ct_init(&t, ((size_t)nin + nw + nout + Cout) * 4 + 4096);
	I = ct_op(&t, c->idt, nin);
	Wt = ct_op(&t, c->idt, nw);
	O = ct_op(&t, c->odt, nout);
	if (c->bias)
		B = ct_op(&t, c->odt, Cout);
	for (i = 0; i < 17; i++)
		ct_p(&t, p[i]);
	ct_fill_rand(&t, r, I, -1, 1);
	ct_fill_rand(&t, r, Wt, -1, 1);
	ct_fill_rand(&t, r, O, -1, 1);
	if (c->bias)
		ct_fill_rand(&t, r, B, -1, 1);
	for (n = 0; n < N; n++)
		for (oc = 0; oc < Cout; oc++)
			for (oh = 0; oh < OH; oh++)
				for (ow = 0; ow < OW; ow++) {
					size_t oi = (((size_t)n * Cout + oc) * OH + oh) * OW + ow;
					uint32_t g = oc / cog;
					double s = 0, m = 0;

					if (flags & IPUX_CONV_ACCUMULATE) {
						s = ct_get(&t, O, oi);
						m = fabs(s);
					}
					if (c->bias) {
						s += ct_get(&t, B, oc);
						m += fabs(ct_get(&t, B, oc));
					}
					for (ic = 0; ic < cig; ic++)
						for (kh = 0; kh < kH; kh++)
							for (kw = 0; kw < kW; kw++) {
								long ih = (long)(oh * sH + kh * dH) - (long)pt;
								long iw = (long)(ow * sW + kw * dW) - (long)pl;
								double x, w;

								if (ih < 0 || ih >= (long)H || iw < 0 || iw >= (long)W)
									continue;
								x = ct_get(&t, I, (((size_t)n * Cin + g * cig + ic) * H + (size_t)ih) * W + (size_t)iw);
								w = ct_get(&t, Wt, (((size_t)oc * cig + ic) * kH + kh) * kW + kw);
								s += x * w;
								m += fabs(x * w);
							}
					want[oi] = s;
					mag[oi] = m;
				}
	for (i = 0; i < nout; i++)
		init[i] = ct_get(&t, O, i);
	/*
	 * The table's run() (best level, direct engine), then every level of
	 * the direct engine and of the im2col path, each from the same out.
	 */
	for (var = -1; var < 2 * (maxl + 1); var++) {
		int level = var / 2, im2col = var % 2;

		for (i = 0; i < nout; i++)
			ct_set(&t, O, i, init[i]);
		if (var < 0) {
			i = (uint32_t)ct_run(&t, IPUX_CL_CONV2D);
			CHECK_EQ_INT((int)i, 0);
		} else {
			struct ipu_vertex_ctx v = ct_ctx(&t, 1);

			ct_poison_gaps(&t, 1);
			ipu_conv_run_level(&v, level, im2col);
			ct_poison_gaps(&t, 0);
			CHECK(ct_guards_ok(&t));
		}
		for (i = 0; i < nout; i++) {
			double g = ct_get(&t, O, i);
			double tol = c->odt == IPUX_DT_F16
					     ? 2e-3 * fabs(want[i]) + 2e-3 * mag[i] + 1e-4
					     : 1e-6 * mag[i] + 1e-7;

			if (!(fabs(g - want[i]) <= tol)) {
				if (bad < 3)
					fprintf(stderr, "  CONV2D N%u Cin%u %ux%u Cout%u k%ux%u s%u,%u p%u,%u,%u,%u d%u,%u g%u f%u dt%u/%u b%u L%d%s: [%u] got %.9g want %.9g\n",
						N, Cin, H, W, Cout, kH, kW, sH, sW, pt, pl, pb, pr, dH, dW, G, flags,
						c->idt, c->odt, c->bias, var < 0 ? maxl : level,
						var < 0 ? "" : im2col ? " im2col" : " direct",
						i, g, want[i]);
				bad++;
			}
		}
	}
	free(want);
	free(mag);
	free(init);
	ct_free(&t);
	return bad;
}

TEST(conv2d_random)
{
	struct ct_rng r = { 4242 };
	int it;

	for (it = 0; it < 250; it++) {
		struct conv_case c;
		uint32_t *p = c.p;
		uint32_t G = (uint32_t)ct_int(&r, 1, 3);

		do {
			p[0] = (uint32_t)ct_int(&r, 1, 2);
			p[15] = G;
			p[1] = G * (uint32_t)ct_int(&r, 1, 4);
			p[2] = ct_size(&r) % 18 + 1;
			p[3] = ct_size(&r) % 18 + 1;
			p[4] = G * (uint32_t)ct_int(&r, 1, it % 10 == 0 ? 20 : 5);
			p[5] = (uint32_t)ct_int(&r, 1, 3);
			p[6] = it % 7 == 0 ? 5 : (uint32_t)ct_int(&r, 1, 3);
			p[7] = (uint32_t)ct_int(&r, 1, 3);
			p[8] = (uint32_t)ct_int(&r, 1, 3);
			p[9] = (uint32_t)ct_int(&r, 0, 2);
			p[10] = (uint32_t)ct_int(&r, 0, 2);
			p[11] = (uint32_t)ct_int(&r, 0, 2);
			p[12] = (uint32_t)ct_int(&r, 0, 2);
			p[13] = (uint32_t)ct_int(&r, 1, 2);
			p[14] = (uint32_t)ct_int(&r, 1, 2);
			p[16] = (uint32_t)ct_int(&r, 0, 1);
		} while (p[2] + p[9] + p[11] < p[13] * (p[5] - 1) + 1 ||
			 p[3] + p[10] + p[12] < p[14] * (p[6] - 1) + 1);
		c.idt = ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16;
		c.odt = ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16;
		c.bias = (uint32_t)ct_int(&r, 0, 1);
		CHECK_EQ_INT(conv_one(&r, &c), 0);
	}
}

TEST(conv2d_big)
{
	/* a ResNet-like layer crossing the K and N blocking */
	struct ct_rng r = { 8 };
	struct conv_case c = { { 1, 32, 20, 20, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
			       IPUX_DT_F32, IPUX_DT_F32, 1 };

	CHECK_EQ_INT(conv_one(&r, &c), 0);
	c.idt = IPUX_DT_F16;
	c.odt = IPUX_DT_F16;
	CHECK_EQ_INT(conv_one(&r, &c), 0);
}

TEST(conv2d_direct_blocking)
{
	/*
	 * Shapes of a ResNet-18 split over tiles (few output channels, many
	 * input channels: several channel chunks), stride-2 phase planes with
	 * uneven padding, several row bands, every row-tile remainder, and
	 * shapes too wide for the direct engine's scratch (im2col fallback).
	 */
	static const uint32_t sh[][17] = {
		{ 1, 512, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
		{ 1, 256, 14, 14, 8, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1, 1, 0 },
		{ 1, 3, 19, 40, 16, 7, 7, 2, 2, 0, 3, 0, 3, 1, 1, 1, 0 },
		{ 1, 64, 9, 56, 32, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1 },
		{ 2, 6, 40, 30, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
		{ 1, 4, 9, 11, 7, 3, 2, 3, 2, 2, 0, 1, 1, 2, 3, 1, 0 },
		{ 1, 10, 6, 6, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5, 1 },
		{ 1, 2, 3, 6000, 9, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 },
		{ 1, 1, 2, 1200, 1, 1, 1100, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0 },
	};
	struct ct_rng r = { 18 };
	uint32_t i, f;

	for (i = 0; i < sizeof(sh) / sizeof(sh[0]); i++)
		for (f = 0; f < 3; f++) {
			struct conv_case c;

			memcpy(c.p, sh[i], sizeof(c.p));
			c.idt = f == 1 ? IPUX_DT_F16 : IPUX_DT_F32;
			c.odt = f == 2 ? IPUX_DT_F16 : IPUX_DT_F32;
			c.bias = f != 1;
			CHECK_EQ_INT(conv_one(&r, &c), 0);
		}
}

TEST(conv2d_stride1_in_place)
{
	/*
	 * Stride-1 convolutions read in place (levels with masked loads):
	 * padding on every side and uneven, dilation, output rows narrower
	 * than the input's, row bands set by the accumulators and by the lane
	 * masks (7x7 taps), several channel chunks, groups, batches, and
	 * outputs wider than the input (the phase-plane path).
	 */
	static const uint32_t sh[][17] = {
		{ 1, 3, 60, 100, 5, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 1, 0 },
		{ 1, 6, 64, 64, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ 1, 130, 5, 9, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
		{ 2, 8, 11, 13, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 2, 1 },
		{ 1, 5, 12, 17, 9, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0 },
		{ 1, 4, 10, 10, 7, 3, 3, 1, 1, 0, 2, 2, 0, 1, 1, 1, 0 },
		{ 1, 4, 9, 5, 3, 2, 3, 1, 1, 1, 0, 0, 2, 1, 2, 1, 0 },
		{ 1, 4, 6, 7, 4, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, 0 },
		{ 1, 7, 1, 33, 20, 1, 5, 1, 1, 0, 2, 0, 2, 1, 1, 1, 0 },
	};
	struct ct_rng r = { 31 };
	uint32_t i, f;

	for (i = 0; i < sizeof(sh) / sizeof(sh[0]); i++)
		for (f = 0; f < 2; f++) {
			struct conv_case c;

			memcpy(c.p, sh[i], sizeof(c.p));
			c.idt = IPUX_DT_F32;
			c.odt = f ? IPUX_DT_F16 : IPUX_DT_F32;
			c.bias = f;
			CHECK_EQ_INT(conv_one(&r, &c), 0);
		}
}

TEST(conv2d_depthwise)
{
	/*
	 * Depthwise vertices of one output row (their own path) and of a few
	 * rows, every stride, padding, dilation, accumulate and element type,
	 * and a row too wide for the one-row path's scratch.
	 */
	struct ct_rng r = { 77 };
	int it;

	for (it = 0; it < 120; it++) {
		struct conv_case c;
		uint32_t *p = c.p;
		uint32_t G = (uint32_t)ct_int(&r, 1, 6), k = (uint32_t)ct_int(&r, 1, 5);

		p[0] = (uint32_t)ct_int(&r, 1, 2);
		p[1] = p[4] = p[15] = G;
		p[5] = k;
		p[6] = it % 5 == 0 ? (uint32_t)ct_int(&r, 1, 5) : k;
		p[7] = (uint32_t)ct_int(&r, 1, 3);
		p[8] = (uint32_t)ct_int(&r, 1, 3);
		p[9] = (uint32_t)ct_int(&r, 0, 2);
		p[10] = (uint32_t)ct_int(&r, 0, 2);
		p[11] = (uint32_t)ct_int(&r, 0, 2);
		p[12] = (uint32_t)ct_int(&r, 0, 2);
		p[13] = (uint32_t)ct_int(&r, 1, 2);
		p[14] = (uint32_t)ct_int(&r, 1, 2);
		p[16] = (uint32_t)ct_int(&r, 0, 1);
		/* input rows for one output row (most), or a few */
		p[2] = p[13] * (p[5] - 1) + 1 + (it % 3 == 0 ? (uint32_t)ct_int(&r, 0, 5) : 0);
		if (p[2] > p[9] + p[11])
			p[2] -= it % 2 ? 0 : p[9] + p[11];
		p[3] = p[14] * (p[6] - 1) + 1 + (uint32_t)(it == 7 ? 5000 : ct_int(&r, 0, 150));
		c.idt = ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16;
		c.odt = ct_int(&r, 0, 1) ? IPUX_DT_F32 : IPUX_DT_F16;
		c.bias = (uint32_t)ct_int(&r, 0, 1);
		CHECK_EQ_INT(conv_one(&r, &c), 0);
	}
}

TEST(conv2d_check)
{
	struct ct_tile t;
	/* N1 Cin4 6x6 Cout2 k3x3 s1 p0 d1 g2 -> out 1x2x4x4 */
	static const uint32_t p[17] = { 1, 4, 6, 6, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0 };
	uint32_t i;

	ct_init(&t, 1 << 14);
	ct_op(&t, IPUX_DT_F32, 4 * 36);
	ct_op(&t, IPUX_DT_F32, 2 * 2 * 9);
	ct_op(&t, IPUX_DT_F32, 2 * 16);
	for (i = 0; i < 17; i++)
		ct_p(&t, p[i]);
	CT_EXPECT(&t, IPUX_CL_CONV2D, 0);
	t.nops = 2;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_OPERAND_COUNT);
	t.nops = 3;
	ct_op(&t, IPUX_DT_F32, 2); /* bias */
	CT_EXPECT(&t, IPUX_CL_CONV2D, 0);
	t.ops[4] = t.ops[3];
	t.nops = 5;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_OPERAND_COUNT);
	t.nops = 4;
	t.nparams = 16;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_COUNT);
	t.nparams = 17;
	t.ops[1].dtype = IPUX_DT_F16;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_F32;
	t.ops[2].count++;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_OPERAND_SHAPE);
	t.ops[2].count--;
	CT_EXPECT(&t, IPUX_CL_CONV2D, 0);
	t.ops[3].count = 3;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_OPERAND_SHAPE);
	t.nops = 3;
	t.params[15] = 3; /* groups does not divide */
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	t.params[15] = 0;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	t.params[15] = 2;
	t.params[7] = 0; /* stride 0 */
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	t.params[7] = 1;
	t.params[5] = 7; /* kernel larger than input */
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	t.params[5] = 3;
	t.params[16] = 8; /* unknown flag */
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	t.params[16] = 0;
	/* huge padding: out would be enormous, not wrap */
	t.params[9] = 0xffffffffu;
	t.params[11] = 0xffffffffu;
	CHECK(ct_check(&t, IPUX_CL_CONV2D) != 0);
	t.params[9] = t.params[11] = 0;
	/* dilation overflowing 32 bits in dil*(k-1) */
	t.params[13] = 0x80000001u;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_PARAM_VALUE);
	t.params[13] = 1;
	t.ops[2].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_CONV2D, IPUX_E_OPERAND_TYPE);
	ct_free(&t);
}

TEST(conv2d_f16_store_exact)
{
	/*
	 * An f16 output is its f32 sum rounded once like half.h, at every
	 * level and in both engines: a 1x1 convolution by 1.0 (sum = input)
	 * of f32 values around every f16 rounding boundary, subnormals,
	 * overflow, infinities and NaNs with payloads (the sum quiets them).
	 */
	static const uint32_t low[] = { 0, 1, 0xfff, 0x1000, 0x1001, 0x1fff };
	const uint32_t H = 3, W = 301, n = H * W;
	struct ct_rng r = { 90 };
	struct ct_tile t;
	uint32_t I, Wt, O, i, bad = 0;
	int level, im2col;

	ct_init(&t, (size_t)n * 6 + 4096);
	I = ct_op(&t, IPUX_DT_F32, n);
	Wt = ct_op(&t, IPUX_DT_F32, 1);
	O = ct_op(&t, IPUX_DT_F16, n);
	{
		const uint32_t p[17] = { 1, 1, H, W, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0 };

		for (i = 0; i < 17; i++)
			ct_p(&t, p[i]);
	}
	for (i = 0; i < n; i++) {
		/* sign, exponent and top mantissa at random, the low 13 bits at
		 * a rounding point; some NaNs and infinities, no -0 (0 + -0 is
		 * +0 in the sum) */
		uint32_t b = ((uint32_t)ct_int(&r, 0, (1 << 19) - 1) << 13) |
			     low[ct_int(&r, 0, 5)];

		if (i % 37 == 0)
			b = 0x7f800000u | (uint32_t)ct_int(&r, 0, 0x7fffff) |
			    (i % 2 ? 0x80000000u : 0);
		if (b == 0x80000000u)
			b = 0;
		memcpy((float *)ct_ptr(&t, I) + i, &b, 4);
	}
	((float *)ct_ptr(&t, Wt))[0] = 1.0f;
	CHECK_EQ_INT(ct_check(&t, IPUX_CL_CONV2D), 0);
	for (level = 0; level <= ipu_mm_max_level(); level++)
		for (im2col = 0; im2col < 2; im2col++) {
			struct ipu_vertex_ctx v = ct_ctx(&t, 1);

			memset(ct_ptr(&t, O), 0, n * 2);
			ipu_conv_run_level(&v, level, im2col);
			for (i = 0; i < n; i++) {
				float x = ((const float *)ct_ptr(&t, I))[i];
				uint32_t xb = ct_fbits(x);
				uint16_t got = ((const uint16_t *)ct_ptr(&t, O))[i], want;

				if (x != x)
					xb |= 0x400000u;	/* quieted by the sum */
				memcpy(&x, &xb, 4);
				want = ipu_f32_to_f16(x);
				/* the im2col path's MATMUL keeps NaN payloads its
				 * own way: there only that it is a NaN */
				if (im2col && (xb & 0x7fffffffu) > 0x7f800000u) {
					want = 1;
					got = (uint16_t)((got & 0x7fffu) > 0x7c00u);
				}
				if (got != want && bad++ < 3)
					fprintf(stderr, "  CONV2D f16 store L%d%s: f32 %08x -> %04x, half.h %04x\n",
						level, im2col ? " im2col" : " direct", xb, got, want);
			}
		}
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(matmul_skinny_exact_bits);
	RUN(matmul_codelet_entry);
	RUN(matmul_check);
	RUN(matmul_random);
	RUN(matmul_big_blocks);
	RUN(conv2d_check);
	RUN(conv2d_random);
	RUN(conv2d_big);
	RUN(conv2d_direct_blocking);
	RUN(conv2d_stride1_in_place);
	RUN(conv2d_depthwise);
	RUN(conv2d_f16_store_exact);
	RUN(isa_chosen_at_engine_creation);
	RUN(isa_of_vertex_selects_kernels);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
