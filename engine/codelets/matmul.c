/* SPDX-License-Identifier: MIT */
/*
 * matmul.c - MATMUL: C[b] (+)= A[b] x B[b], f32 accumulation.
 *
 * The hot loop of the whole system.  The driver (mm_impl.h) is compiled
 * three times: generic (SSE2-class vectors, any architecture), AVX2+FMA
 * and AVX-512, and run() picks the best one the host CPU supports.
 */
#include "cl_opt.h"
#include "cl_common.h"
#include "cl_act.h"
#include "matmul.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MM_X86 1
#else
#define MM_X86 0
#endif

/*
 * Let the compiler fuse acc += a * b into FMA in the micro-kernel (C11 mode
 * otherwise forbids contraction in gcc; clang contracts within an
 * expression by default).  Not -ffast-math: no reassociation.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define MM_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define MM_CONTRACT
#endif

/* Full unrolling of the register-tile loops (gcc and clang). */
#define MM_PRAGMA(x) _Pragma(#x)
#define MM_UNROLL MM_PRAGMA(GCC unroll 16)

#define MM_KC 256	/* K block */
#define MM_NCB 64	/* N block (packed B: MM_KC x MM_NCB f32 = 64 KiB) */
#define MM_MC 64	/* M block of the f32 accumulators for f16 C */
#define MM_DIRECT_M 64	/* up to this M, f32 B is not packed */

#include "mm_args.h"


#define MM_SUFFIX generic
#define MM_TARGET
#define MM_VL 4
#define MM_MR 6
#define MM_F16C 0
#include "mm_impl.h"

#if MM_X86
#define MM_SUFFIX avx2
#define MM_TARGET __attribute__((target("avx2,fma,f16c")))
#define MM_VL 8
#define MM_MR 6
#define MM_F16C 1
#include "mm_impl.h"

#define MM_SUFFIX avx512
#define MM_TARGET __attribute__((target("avx512f,avx2,fma,f16c")))
#define MM_VL 16
#define MM_MR 8
#define MM_F16C 1
#include "mm_impl.h"
#endif

int ipu_mm_max_level(void)
{
#if MM_X86
	/* clang 14 cannot test f16c; every AVX2+FMA CPU has it */
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
#ifndef __clang__
	    && __builtin_cpu_supports("f16c")
#endif
	) {
		if (__builtin_cpu_supports("avx512f"))
			return 2;
		return 1;
	}
#endif
	return 0;
}

uint32_t ipu_isa_host(void)
{
	return (uint32_t)ipu_mm_max_level() + IPU_ISA_GENERIC;
}

const char *ipu_isa_name(uint32_t isa)
{
	static const char *const names[IPU_ISA_COUNT] = {
		"auto", "generic", "avx2", "avx512"
	};

	return isa < IPU_ISA_COUNT ? names[isa] : NULL;
}

int ipu_mm_level(const struct ipu_vertex_ctx *v)
{
	int host = ipu_mm_max_level();
	int want = v->isa == IPU_ISA_AUTO ? host : (int)v->isa - IPU_ISA_GENERIC;

	return want < host ? want : host;
}

static const char *const mm_what[] = { "A", "B", "C" };
static const char *const mm_dim[] = { "batch", "M", "N", "K" };

static int matmul_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p = v->params;
	uint32_t flags, i;
	uint64_t na, nb, nc;
	int r = cl_check_counts(v, "MATMUL", 3, 3, 5, 7, why, len);

	if (r)
		return r;
	for (i = 0; i < 3; i++) {
		r = cl_check_dtype_float(v, i, "MATMUL", mm_what[i], why, len);
		if (r)
			return r;
	}
	r = cl_check_same_dtype(v, 0, 1, "MATMUL", "A", "B", why, len);
	if (r)
		return r;
	flags = p[4];
	if (flags & ~(IPUX_MM_ACCUMULATE | IPUX_MM_TRANS_B | IPUX_MM_B_SHARED |
		      IPUX_MM_A_SHARED | IPUX_MM_RELU | IPUX_MM_CLIP))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "MATMUL: unknown flags 0x%x", flags);
	r = cl_act_check(v, "MATMUL", flags, IPUX_MM_RELU, IPUX_MM_CLIP, 5, why,
			 len);
	if (r)
		return r;
	for (i = 0; i < 4; i++)
		if (p[i] == 0)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "MATMUL: %s is 0", mm_dim[i]);
	/* each operand's count must fit; the 4-way product need not */
	na = (uint64_t)((flags & IPUX_MM_A_SHARED) ? 1 : p[0]) * p[1];
	nb = (uint64_t)((flags & IPUX_MM_B_SHARED) ? 1 : p[0]) * p[3];
	nc = (uint64_t)p[0] * p[1];
	if (na > UINT32_MAX || (na *= p[3]) > UINT32_MAX || nb > UINT32_MAX ||
	    (nb *= p[2]) > UINT32_MAX || nc > UINT32_MAX ||
	    (nc *= p[2]) > UINT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "MATMUL: an operand of batch %u, M %u, N %u, "
			      "K %u exceeds 2^32-1 elements",
			      p[0], p[1], p[2], p[3]);
	r = cl_check_count(v, 0, na, "MATMUL", "A",
			   (flags & IPUX_MM_A_SHARED) ? "M*K" : "batch*M*K",
			   why, len);
	if (!r)
		r = cl_check_count(v, 1, nb, "MATMUL", "B",
				   (flags & IPUX_MM_B_SHARED) ? "K*N"
							      : "batch*K*N",
				   why, len);
	if (!r)
		r = cl_check_count(v, 2, nc, "MATMUL", "C", "batch*M*N", why,
				   len);
	return r;
}

static uint64_t matmul_cost(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint64_t macs = cl_sat_mul(cl_sat_mul((uint64_t)p[0] * p[1], p[2]),
				   p[3]);
	uint64_t rate = v->ops[0].dtype == IPUX_DT_F16 ? 64 : 16;
	/* per output row: loop setup and write-back of N results */
	uint64_t rows = (uint64_t)p[0] * p[1];

	return CL_VERTEX_OVERHEAD + cl_div_up(macs, rate) +
	       cl_sat_mul(rows, 4) +
	       cl_cost_stream(v->ops[2].count, v->ops[2].dtype, 1);
}

static void mm_args_of(const struct ipu_vertex_ctx *v, struct mm_args *g)
{
	const uint32_t *p = v->params;

	g->a = IPU_OP_PTR(v, 0, const void);
	g->b = IPU_OP_PTR(v, 1, const void);
	g->c = IPU_OP_PTR(v, 2, void);
	g->batch = p[0];
	g->M = p[1];
	g->N = p[2];
	g->K = p[3];
	g->f16 = v->ops[0].dtype == IPUX_DT_F16;
	g->c_f16 = v->ops[2].dtype == IPUX_DT_F16;
	g->accumulate = !!(p[4] & IPUX_MM_ACCUMULATE);
	g->trans_b = !!(p[4] & IPUX_MM_TRANS_B);
	g->a_mod = (p[4] & IPUX_MM_A_SHARED) ? 1 : g->batch;
	g->b_mod = (p[4] & IPUX_MM_B_SHARED) ? 1 : g->batch;
	g->a_bs = g->M * g->K;
	g->b_bs = g->K * g->N;
	g->c_bs = g->M * g->N;
	g->conv = NULL;
	cl_act_of(v, p[4], IPUX_MM_RELU, IPUX_MM_CLIP, 5, &g->act);
}

static void ipu_mm_exec_blocked(const struct mm_args *g, int level)
{
#if MM_X86
	if (level >= 2) {
		run_avx512(g);
		return;
	}
	if (level == 1) {
		run_avx2(g);
		return;
	}
#else
	(void)level;
#endif
	run_generic(g);
}


/*
 * Skinny shapes.  The register tile computes MR x NR results at a time, so
 * a product with very few rows (batch-1 inference: M = 1) or columns
 * (matrix-vector: N = 1) would waste up to MR resp. NR times the work on
 * padding.  Those shapes run here instead, on vectorisable f32 loops:
 *  - AXPY for M < 4 with B [K][N]: each C row is a sum of scaled B rows;
 *  - DOT for N < 8, or M < 4 with B [N][K]: each C element is a dot
 *    product of an A row and a B column (32 interleaved f32 partial sums).
 * Both accumulate in f32 over the whole K and round C once.
 */
#define SK_BLK 256
#define SK_SMALL_K 32	/* sk_dot's block of partial sums */
#define SK_SMALL_N 8

/* the skinny loops' sums as written: mul then add, never fused */
#if defined(__GNUC__) && !defined(__clang__)
#define SK_EXACT __attribute__((optimize("fp-contract=off")))
#else
#define SK_EXACT
#endif

CL_CLONES static void sk_axpy(float *c, float a, const float *b, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		c[j] += a * b[j];
}

CL_CLONES static float sk_dot(const float *a, const float *b, size_t n)
{
	float acc[32], s = 0;
	size_t k, l;

	/* 32 interleaved partial sums: 4 independent vector chains */
	for (l = 0; l < 32; l++)
		acc[l] = 0;
	for (k = 0; k + 32 <= n; k += 32)
		for (l = 0; l < 32; l++)
			acc[l] += a[k + l] * b[k + l];
	for (; k < n; k++)
		acc[k % 32] += a[k] * b[k];
	for (l = 0; l < 32; l += 2)
		s += acc[l] + acc[l + 1];
	return s;
}

/* n elements of a float operand (dt F32/F16) from element i0, as f32. */
static const float *sk_row(const void *base, int f16, size_t i0, size_t n,
			   float *buf)
{
	if (!f16)
		return (const float *)base + i0;
	ipu_cl_h2f_block(buf, (const uint16_t *)base + i0, n);
	return buf;
}

static float sk_getc(const struct mm_args *g, size_t i)
{
	return g->c_f16 ? cl_h2f(((const uint16_t *)g->c)[i])
			: ((const float *)g->c)[i];
}

static void sk_setc(const struct mm_args *g, size_t i, float x)
{
	if (g->c_f16)
		((uint16_t *)g->c)[i] = cl_f2h(x);
	else
		((float *)g->c)[i] = x;
}

/* a few columns: sk_axpy's sums inline, without the call through its clones */
SK_EXACT static void sk_axpy_run(const struct mm_args *g)
{
	size_t M = g->M, N = g->N, K = g->K, bt, i, j0, j, k;
	float cb[SK_BLK], ab[SK_BLK], bb[SK_BLK];

	for (bt = 0; bt < g->batch; bt++) {
		size_t ao = (bt % g->a_mod) * g->a_bs;
		size_t bo = (bt % g->b_mod) * g->b_bs;
		size_t co = bt * g->c_bs;

		for (i = 0; i < M; i++)
			for (j0 = 0; j0 < N; j0 += SK_BLK) {
				size_t nb = N - j0 < SK_BLK ? N - j0 : SK_BLK;
				size_t k0;

				if (g->accumulate)
					cl_load_f(g->c, g->c_f16 ? IPUX_DT_F16 : IPUX_DT_F32,
						  co + i * N + j0, cb, nb);
				else
					memset(cb, 0, nb * sizeof(*cb));
				for (k0 = 0; k0 < K; k0 += SK_BLK) {
					size_t kb = K - k0 < SK_BLK ? K - k0 : SK_BLK;
					const float *a = sk_row(g->a, g->f16,
								ao + i * K + k0, kb, ab);

					for (k = 0; k < kb; k++) {
						const float *b = sk_row(
							g->b, g->f16,
							bo + (k0 + k) * N + j0, nb, bb);

						if (nb <= SK_SMALL_N)
							for (j = 0; j < nb; j++)
								cb[j] += a[k] * b[j];
						else
							sk_axpy(cb, a[k], b, nb);
					}
				}
				cl_act_apply(&g->act, cb, nb);
				cl_store_f(g->c, g->c_f16 ? IPUX_DT_F16 : IPUX_DT_F32,
					   co + i * N + j0, cb, nb);
			}
	}
}

/*
 * sk_dot_run for K <= 32 and N <= 8, where sk_dot's set-up (32 partial
 * sums) and call cost more than the products: the vertices of split 1x1
 * convolutions are this small (M 5, N 4, K 10).  Each element gets sk_dot's
 * value: the products of its one 32-wide block, each added to +0, summed
 * by pairs in the same order.  The pairs past K are +0 + +0 and adding
 * them never changes the sum (neither a pair nor the sum can be -0: each
 * starts from +0), so they are skipped.  The N columns of B are gathered
 * once per batch (not once per row of A), j-minor, so the N sums of a row
 * are one vector.
 */
SK_EXACT static void sk_dot_small_run(const struct mm_args *g)
{
	size_t M = g->M, N = g->N, K = g->K, bt, i, j, k;
	float ab[SK_SMALL_K], bk[SK_SMALL_K][SK_SMALL_N];

	memset(bk, 0, sizeof(bk));
	for (bt = 0; bt < g->batch; bt++) {
		size_t ao = (bt % g->a_mod) * g->a_bs;
		size_t bo = (bt % g->b_mod) * g->b_bs;
		size_t co = bt * g->c_bs;

		for (j = 0; j < N; j++)
			for (k = 0; k < K; k++) {
				/* [N][K] when transposed or a single column */
				size_t e = g->trans_b || N == 1 ? bo + j * K + k
								: bo + k * N + j;

				bk[k][j] = g->f16 ? cl_h2f(((const uint16_t *)g->b)[e])
						  : ((const float *)g->b)[e];
			}
		for (i = 0; i < M; i++) {
			const float *a = sk_row(g->a, g->f16, ao + i * K, K, ab);
			float s[SK_SMALL_N] = { 0 };

			for (k = 0; k + 1 < K; k += 2)
				for (j = 0; j < SK_SMALL_N; j++)
					s[j] += (0.0f + a[k] * bk[k][j]) +
						(0.0f + a[k + 1] * bk[k + 1][j]);
			if (k < K)
				for (j = 0; j < SK_SMALL_N; j++)
					s[j] += (0.0f + a[k] * bk[k][j]) + 0.0f;
			for (j = 0; j < N; j++) {
				float acc = g->accumulate ? sk_getc(g, co + i * N + j) : 0.0f;

				acc += s[j];
				sk_setc(g, co + i * N + j, cl_act1(&g->act, acc));
			}
		}
	}
}

static void sk_dot_run(const struct mm_args *g)
{
	size_t M = g->M, N = g->N, K = g->K, bt, i, j, k, k0;
	float ab[SK_BLK], bb[SK_BLK];

	if (K <= SK_SMALL_K && N <= SK_SMALL_N) {
		sk_dot_small_run(g);
		return;
	}

	for (bt = 0; bt < g->batch; bt++) {
		size_t ao = (bt % g->a_mod) * g->a_bs;
		size_t bo = (bt % g->b_mod) * g->b_bs;
		size_t co = bt * g->c_bs;

		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++) {
				float acc = g->accumulate ? sk_getc(g, co + i * N + j)
							  : 0.0f;

				for (k0 = 0; k0 < K; k0 += SK_BLK) {
					size_t kb = K - k0 < SK_BLK ? K - k0 : SK_BLK;
					const float *a = sk_row(g->a, g->f16,
								ao + i * K + k0, kb, ab);
					const float *b;

					if (g->trans_b || N == 1) {
						/* the column is contiguous */
						b = sk_row(g->b, g->f16,
							   bo + j * K + k0, kb, bb);
					} else {
						/* gather the column */
						for (k = 0; k < kb; k++)
							bb[k] = g->f16
								? cl_h2f(((const uint16_t *)g->b)
										 [bo + (k0 + k) * N + j])
								: ((const float *)g->b)
									  [bo + (k0 + k) * N + j];
						b = bb;
					}
					acc += sk_dot(a, b, kb);
				}
				sk_setc(g, co + i * N + j, cl_act1(&g->act, acc));
			}
	}
}

void ipu_mm_exec(const struct mm_args *g, int level)
{
	if (!g->conv) {
		if (g->M < 4 && !g->trans_b) {
			sk_axpy_run(g);
			return;
		}
		if (g->N < 8 || (g->M < 4 && g->trans_b)) {
			sk_dot_run(g);
			return;
		}
	}
	ipu_mm_exec_blocked(g, level);
}

int ipu_mm_run_level(const struct ipu_vertex_ctx *v, int level)
{
	struct mm_args g;

	mm_args_of(v, &g);
	ipu_mm_exec(&g, level);
	return 0;
}

static int matmul_run(const struct ipu_vertex_ctx *v)
{
	return ipu_mm_run_level(v, ipu_mm_level(v));
}

const struct ipu_codelet ipu_cl_matmul = {
	"MATMUL", matmul_check, matmul_cost, matmul_run
};
