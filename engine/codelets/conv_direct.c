/* SPDX-License-Identifier: MIT */
/*
 * conv_direct.c - CONV2D's direct convolution engine (conv_args.h): the
 * driver of conv_impl.h compiled generic, AVX2+FMA and AVX-512, and the
 * blocking plan they share.
 */
#include "cl_opt.h"
#include "cl_common.h"
#include "conv_args.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CD_X86 1
#else
#define CD_X86 0
#endif

/* acc += a * b fused to FMA where the target has it (not fast-math). */
#if defined(__GNUC__) && !defined(__clang__)
#define CD_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define CD_CONTRACT
#endif
/* short copies stay inline loops instead of memcpy/memset calls */
#if defined(__GNUC__) && !defined(__clang__)
#define CD_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define CD_NO_LIBCALLS
#endif
#define CD_PRAGMA(x) _Pragma(#x)
#define CD_UNROLL CD_PRAGMA(GCC unroll 16)

/*
 * Fixed scratch on the worker's stack (about 170 KiB in all): phase planes
 * of one input-channel chunk, the f32 accumulators of one band of output
 * rows for all the vertex's channels, and one packed weight panel.
 */
#define CD_BP 16384	/* floats of phase planes */
#define CD_CS 16384	/* floats of accumulators */
#define CD_KT 1024	/* taps (input channels x kH x kW) per chunk */
#define CD_STORE_CHUNK 256	/* floats of an f16 row's sums before rounding */

/* How one vertex is blocked. */
struct cd_plan {
	size_t bh;	/* output rows per band */
	size_t icb;	/* input channels per chunk */
	size_t wq, rq;	/* phase plane width (>= OW) and rows */
	size_t ps;	/* floats per phase plane */
	size_t khq, kwq;	/* largest tap offset in plane rows, columns */
	size_t nv, mr, nr;	/* register tile: mr rows x nv vectors (nr floats) */
};

static size_t cd_round_up(size_t x, size_t m)
{
	return (x + m - 1) / m * m;
}

static size_t cd_div_up(size_t x, size_t m)
{
	return (x + m - 1) / m;
}

/* Floats of bp the kernels read for a chunk of icc channels, nw columns. */
static size_t cd_need(const struct cd_plan *p, const struct conv_args *c,
		      size_t icc, size_t nw)
{
	return (icc * c->sH * c->sW - 1) * p->ps + p->khq * p->wq + p->kwq + nw;
}

/* Input channels per chunk for the current bh (0: not even one fits). */
static size_t cd_chunk(struct cd_plan *p, const struct conv_args *c)
{
	size_t nw = cd_round_up(p->bh * p->wq, p->nr), fixed, per, icb;

	p->rq = p->bh + p->khq;
	p->ps = p->rq * p->wq;
	fixed = p->khq * p->wq + p->kwq + nw;
	per = c->sH * c->sW * p->ps;
	if (fixed + per > CD_BP + p->ps)
		return 0;
	icb = (CD_BP + p->ps - fixed) / per;
	if (icb > c->cin_g)
		icb = c->cin_g;
	if (icb > CD_KT / (c->kH * c->kW))
		icb = CD_KT / (c->kH * c->kW);
	return icb;
}

static int cd_plan(const struct conv_args *c, size_t vl, size_t mr_t,
		   size_t mr_w, struct cd_plan *p)
{
	size_t M = c->cout_g, wneed, maxw, nb;

	if (c->kH * c->kW > CD_KT)
		return -1;
	p->nv = M <= mr_w ? 4 : 2;
	p->mr = p->nv == 4 ? mr_w : mr_t;
	p->nr = p->nv * vl;
	wneed = (c->OW - 1) * c->sW + (c->kW - 1) * c->dW + 1;
	p->wq = cd_div_up(wneed, c->sW);
	p->khq = (c->kH - 1) * c->dH / c->sH;
	p->kwq = (c->kW - 1) * c->dW / c->sW;
	maxw = CD_CS / M / p->nr * p->nr;
	p->bh = maxw / p->wq;
	if (p->bh > c->OH)
		p->bh = c->OH;
	if (p->bh == 0)
		return -1;
	while (!cd_chunk(p, c)) {
		if (p->bh == 1)
			return -1;
		p->bh /= 2;
	}
	/* even bands and chunks: no tiny remainder pass */
	nb = cd_div_up(c->OH, p->bh);
	p->bh = cd_div_up(c->OH, nb);
	p->icb = cd_chunk(p, c);
	p->icb = cd_div_up(c->cin_g, cd_div_up(c->cin_g, p->icb));
	return 0;
}

#define CD_SUFFIX generic
#define CD_TARGET
#define CD_VL 4
#define CD_MR_T 6
#define CD_MR_W 3
#define CD_F16C 0
#define CD_MASKED 0
#include "conv_impl.h"

#if CD_X86
#define CD_SUFFIX avx2
#define CD_TARGET __attribute__((target("avx2,fma,f16c")))
#define CD_VL 8
#define CD_MR_T 6
#define CD_MR_W 3
#define CD_F16C 1
#define CD_MASKED 1
#define CD_MASK_T __m256i
#define CD_MLOAD(m, p) ((vf)_mm256_maskload_ps((const float *)(p), (m)))
#include "conv_impl.h"

#define CD_SUFFIX avx512
#define CD_TARGET __attribute__((target("avx512f,avx2,fma,f16c")))
#define CD_VL 16
#define CD_MR_T 8
#define CD_MR_W 4
#define CD_F16C 1
#define CD_MASKED 1
#define CD_MASK_T __mmask16
#define CD_MLOAD(m, p) ((vf)_mm512_maskz_loadu_ps((m), (const void *)(p)))
#include "conv_impl.h"
#endif

int ipu_conv_direct(const struct conv_args *c, int level)
{
#if CD_X86
	if (level >= 2)
		return direct_avx512(c);
	if (level == 1)
		return direct_avx2(c);
#else
	(void)level;
#endif
	return direct_generic(c);
}
