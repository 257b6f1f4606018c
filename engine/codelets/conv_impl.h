/* SPDX-License-Identifier: MIT */
/*
 * conv_impl.h - the direct convolution driver and micro-kernels,
 * instantiated once per instruction-set level by conv_direct.c (see
 * conv_args.h for the method).  Before including, define:
 *
 *   CD_SUFFIX   name suffix of the generated functions
 *   CD_TARGET   function attribute list (e.g. target("avx2,fma,f16c"))
 *   CD_VL       floats per vector register (4, 8 or 16)
 *   CD_MR_T     rows of the tall register tile (CD_MR_T x 2 vectors)
 *   CD_MR_W     rows of the wide register tile (CD_MR_W x 4 vectors),
 *               used when the vertex has at most CD_MR_W output channels
 *   CD_F16C     1 to convert f16 with the F16C instructions
 *   CD_MASKED   1 when the level has masked loads: then CD_MASK_T, the
 *               mask of one vector, and CD_MLOAD(mask, address), the
 *               vector at integer address with masked lanes 0.0
 *
 * Every output is the f32 sum over its taps in a fixed order (input
 * channel chunks of the band in order, taps in weight order within a
 * chunk), so results depend only on the level, never on threads.
 */

#define CD_CAT2(a, b) a##_##b
#define CD_CAT(a, b) CD_CAT2(a, b)
#define CD_FN(name) CD_CAT(name, CD_SUFFIX)

typedef float CD_FN(vf) __attribute__((vector_size(CD_VL * 4)));

/*
 * 8 f16 to f32 with F16C (every f16 is an f32: the same values as
 * cl_h2f); a short tail goes through a zero-padded vector, not a scalar
 * loop (rows are 7 to 112 wide).
 */
#if CD_F16C
CD_TARGET static inline void CD_FN(h2f_tail)(float *dst, __m128i h, size_t n)
{
	float t[8];

	_mm256_storeu_ps(t, _mm256_cvtph_ps(h));
	memcpy(dst, t, n * sizeof(float));
}
#endif

/* n f16 (src stride 1) to f32. */
CD_TARGET static void CD_FN(h2f)(float *dst, const uint16_t *src, size_t n)
{
	size_t i = 0;

#if CD_F16C
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
						  (const __m128i *)(src + i))));
	if (i < n) {
		uint16_t h[8] = { 0 };

		memcpy(h, src + i, (n - i) * sizeof(uint16_t));
		CD_FN(h2f_tail)(dst + i, _mm_loadu_si128((const __m128i *)h), n - i);
	}
#else
	for (; i < n; i++)
		dst[i] = cl_h2f(src[i]);
#endif
}

/* n f16 at src stride st to f32 (8 gathered at a time with F16C). */
CD_TARGET static void CD_FN(h2f_strided)(float *dst, const uint16_t *src, size_t n,
					 size_t st)
{
	size_t i = 0;

#if CD_F16C
	for (; i + 8 <= n; i += 8) {
		const uint16_t *p = src + i * st;
		__m128i h = _mm_setr_epi16((short)p[0], (short)p[st], (short)p[2 * st],
					   (short)p[3 * st], (short)p[4 * st], (short)p[5 * st],
					   (short)p[6 * st], (short)p[7 * st]);

		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
	}
	if (i < n) {
		uint16_t h[8] = { 0 };
		size_t j;

		for (j = 0; j < n - i; j++)
			h[j] = src[(i + j) * st];
		CD_FN(h2f_tail)(dst + i, _mm_loadu_si128((const __m128i *)h), n - i);
	}
#else
	for (; i < n; i++)
		dst[i] = cl_h2f(src[i * st]);
#endif
}

/*
 * n f32 to f16, bit-identical to cl_f2h: F16C rounds every number the
 * same way (to nearest even, overflow to inf, subnormal results
 * included) but keeps NaN payloads differently, so a vector holding a
 * NaN is done by cl_f2h.  The tail goes through a zero-padded vector.
 */
CD_TARGET static void CD_FN(f2h)(uint16_t *dst, const float *src, size_t n)
{
	size_t i = 0;

#if CD_F16C
	while (i < n) {
		size_t m = n - i < 8 ? n - i : 8, j;
		float t[8] = { 0 };
		uint16_t h[8];
		__m256 x;

		if (m == 8) {
			x = _mm256_loadu_ps(src + i);
		} else {
			memcpy(t, src + i, m * sizeof(float));
			x = _mm256_loadu_ps(t);
		}
		if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) {
			for (j = i; j < i + m; j++)
				dst[j] = cl_f2h(src[j]);
		} else if (m == 8) {
			_mm_storeu_si128((__m128i *)(dst + i),
					 _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
		} else {
			_mm_storeu_si128((__m128i *)h,
					 _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
			memcpy(dst + i, h, m * sizeof(uint16_t));
		}
		i += m;
	}
#else
	for (; i < n; i++)
		dst[i] = cl_f2h(src[i]);
#endif
}

/*
 * c[i][0..nv*VL) (+)= sum_k a[i*lda + k] * b[koff[k] + 0..nv*VL) for
 * i < mr.  Inlined with constant mr and nv, so the accumulators are
 * registers.  An always_inline body takes its caller's options: every
 * caller must be CD_CONTRACT too, or the sums are rounded twice (no FMA)
 * under -std=c11 and fused under -std=gnu11 (QEMU's build), and the two
 * devices would differ in the last bits.
 */
CD_TARGET CD_CONTRACT static inline __attribute__((always_inline)) void
CD_FN(tile)(size_t kc, const float *a, size_t lda, const float *b,
	    const uint32_t *koff, float *c, size_t ldc, int load,
	    const size_t mr, const size_t nv)
{
	typedef CD_FN(vf) vf;
	vf acc[CD_MR_T][4];
	size_t i, j, k;

	CD_UNROLL
	for (i = 0; i < mr; i++) {
		CD_UNROLL
		for (j = 0; j < nv; j++)
			acc[i][j] = (vf){ 0 };
	}
	for (k = 0; k < kc; k++) {
		const float *bk = b + koff[k];
		vf bv[4];

		CD_UNROLL
		for (j = 0; j < nv; j++)
			memcpy(&bv[j], bk + j * CD_VL, sizeof(vf));
		CD_UNROLL
		for (i = 0; i < mr; i++) {
			float av = a[i * lda + k];

			CD_UNROLL
			for (j = 0; j < nv; j++)
				acc[i][j] += av * bv[j];
		}
	}
	CD_UNROLL
	for (i = 0; i < mr; i++) {
		float *row = c + i * ldc;

		CD_UNROLL
		for (j = 0; j < nv; j++) {
			if (load) {
				vf old;

				memcpy(&old, row + j * CD_VL, sizeof(vf));
				acc[i][j] += old;
			}
			memcpy(row + j * CD_VL, &acc[i][j], sizeof(vf));
		}
	}
}

#define CD_TILE_CASE(m, v)                                                   \
	case m:                                                              \
		for (jr = 0; jr < nw; jr += (v) * CD_VL)                     \
			CD_FN(tile)(kc, a, lda, b + jr, koff, c + jr, ldc, \
				    load, m, v);                             \
		return

/* One row block of mr channels over all nw (a multiple of NR) columns. */
CD_TARGET CD_CONTRACT static void CD_FN(rows_t)(size_t mr, size_t kc, const float *a,
				    size_t lda, const float *b,
				    const uint32_t *koff, float *c, size_t ldc,
				    size_t nw, int load)
{
	size_t jr;

	switch (mr) {
#if CD_MR_T >= 8
	CD_TILE_CASE(8, 2);
	CD_TILE_CASE(7, 2);
#endif
	CD_TILE_CASE(6, 2);
	CD_TILE_CASE(5, 2);
	CD_TILE_CASE(4, 2);
	CD_TILE_CASE(3, 2);
	CD_TILE_CASE(2, 2);
	default:
	CD_TILE_CASE(1, 2);
	}
}

CD_TARGET CD_CONTRACT static void CD_FN(rows_w)(size_t mr, size_t kc, const float *a,
				    size_t lda, const float *b,
				    const uint32_t *koff, float *c, size_t ldc,
				    size_t nw, int load)
{
	size_t jr;

	switch (mr) {
#if CD_MR_W >= 4
	CD_TILE_CASE(4, 4);
#endif
	CD_TILE_CASE(3, 4);
	CD_TILE_CASE(2, 4);
	default:
	CD_TILE_CASE(1, 4);
	}
}

#undef CD_TILE_CASE

#if CD_VL == 16
/* Lanes [lo, hi) of a 16-lane mask, clamped to the vector. */
static inline __mmask16 CD_FN(lanes)(int64_t lo, int64_t hi)
{
	if (lo < 0)
		lo = 0;
	if (hi > 16)
		hi = 16;
	if (hi <= lo)
		return 0;
	return (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
}

/* The lane masks of fill_s2_row's steps: they depend on the row width only. */
#define CD_S2_STEPS 8
struct CD_FN(s2_masks) {
	__mmask16 lo[CD_S2_STEPS], hi[CD_S2_STEPS], st[CD_S2_STEPS];
};

/* 0, or -1 when the plane rows are too wide for CD_S2_STEPS steps. */
static inline int CD_FN(s2_masks_of)(struct CD_FN(s2_masks) *m, size_t W, size_t pl,
				     size_t wq)
{
	size_t x0, i;

	if (2 * wq > 32 * CD_S2_STEPS)
		return -1;
	for (x0 = 0, i = 0; x0 < 2 * wq; x0 += 32, i++) {
		/* input column of lane 0; masked lanes may lie outside the row */
		int64_t b = (int64_t)x0 - (int64_t)pl;

		m->lo[i] = CD_FN(lanes)(-b, (int64_t)W - b);
		m->hi[i] = CD_FN(lanes)(-b - 16, (int64_t)W - b - 16);
		m->st[i] = CD_FN(lanes)(0, (int64_t)wq - (int64_t)(x0 / 2));
	}
	return 0;
}

/*
 * Both column phases of one f32 input row s (W floats) at column stride
 * 2: column j of phase px reads input column 2j + px - pl, 0.0 outside
 * the row (the masks of s2_masks_of).  32 input columns a step (two
 * masked loads, one permute per phase) instead of one strided scalar copy
 * per plane column.
 */
CD_TARGET static inline __attribute__((always_inline)) void
CD_FN(fill_s2_row)(float *d0, float *d1, const float *s, size_t pl, size_t wq,
		   const struct CD_FN(s2_masks) *m)
{
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
					     20, 22, 24, 26, 28, 30);
	const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19,
					     21, 23, 25, 27, 29, 31);
	size_t x0, i;

	for (x0 = 0, i = 0; x0 < 2 * wq; x0 += 32, i++) {
		int64_t b = (int64_t)x0 - (int64_t)pl;
		uintptr_t a = (uintptr_t)s + (uintptr_t)(b * (int64_t)sizeof(float));
		__m512 lo = _mm512_maskz_loadu_ps(m->lo[i], (const void *)a);
		__m512 hi = _mm512_maskz_loadu_ps(m->hi[i], (const void *)(a + 16 * sizeof(float)));

		_mm512_mask_storeu_ps(d0 + x0 / 2, m->st[i], _mm512_permutex2var_ps(lo, ev, hi));
		_mm512_mask_storeu_ps(d1 + x0 / 2, m->st[i], _mm512_permutex2var_ps(lo, od, hi));
	}
}
#endif

/*
 * Copy the input rows of one band of output rows, channels [ic0, ic0+icc)
 * of image n, group g, into the phase planes (zero outside the input).
 * Rows are short (7 to 60 floats): inline loops, not memcpy/memset calls.
 */
CD_TARGET CD_NO_LIBCALLS static void CD_FN(fill)(const struct conv_args *c,
				  const struct cd_plan *pl, float *bp,
				  size_t n, size_t g, size_t ic0, size_t icc,
				  size_t oh0)
{
	size_t sH = c->sH, sW = c->sW, icl, py, px, i, j;
	size_t cin = c->G * c->cin_g;
#if CD_VL == 16
	struct CD_FN(s2_masks) s2m;
	int s2 = sW == 2 && !c->in_f16 && !CD_FN(s2_masks_of)(&s2m, c->W, c->pl, pl->wq);
#endif

	for (icl = 0; icl < icc; icl++) {
		size_t plane0 = ((n * cin + g * c->cin_g + ic0 + icl) * c->H) * c->W;

		for (py = 0; py < sH; py++) {
#if CD_VL == 16
			if (s2) {
				float *p0 = bp + (icl * sH + py) * 2 * pl->ps;

				for (i = 0; i < pl->rq; i++) {
					float *d0 = p0 + i * pl->wq, *d1 = d0 + pl->ps;
					int64_t ih = (int64_t)((oh0 + i) * sH + py) -
						     (int64_t)c->pt;

					if (ih < 0 || ih >= (int64_t)c->H) {
						for (j = 0; j < pl->wq; j++)
							d0[j] = d1[j] = 0;
						continue;
					}
					CD_FN(fill_s2_row)(d0, d1, (const float *)c->in + plane0 +
							   (size_t)ih * c->W, c->pl, pl->wq, &s2m);
				}
				continue;
			}
#endif
			for (px = 0; px < sW; px++) {
				float *pp = bp + ((icl * sH + py) * sW + px) * pl->ps;
				/* plane columns j reading input columns [0, W) */
				size_t jlo = px >= c->pl ? 0
					     : (c->pl - px + sW - 1) / sW;
				size_t jhi = c->W + c->pl > px
					     ? (c->W + c->pl - px + sW - 1) / sW : 0;

				if (jhi > pl->wq)
					jhi = pl->wq;
				if (jlo > jhi)
					jlo = jhi;
				for (i = 0; i < pl->rq; i++) {
					float *d = pp + i * pl->wq;
					int64_t ih = (int64_t)((oh0 + i) * sH + py) -
						     (int64_t)c->pt;

					if (ih < 0 || ih >= (int64_t)c->H) {
						for (j = 0; j < pl->wq; j++)
							d[j] = 0;
						continue;
					}
					for (j = 0; j < jlo; j++)
						d[j] = 0;
					if (jhi > jlo) {
						size_t s0 = plane0 + (size_t)ih * c->W +
							    jlo * sW + px - c->pl;

						if (c->in_f16) {
							const uint16_t *s = (const uint16_t *)c->in + s0;

							if (sW == 1)
								CD_FN(h2f)(d + jlo, s, jhi - jlo);
							else
								CD_FN(h2f_strided)(d + jlo, s, jhi - jlo, sW);
						} else {
							const float *s = (const float *)c->in + s0;

							if (sW == 1)
								for (j = jlo; j < jhi; j++)
									d[j] = s[j - jlo];
							else
								for (j = jlo; j < jhi; j++)
									d[j] = s[(j - jlo) * sW];
						}
					}
					for (j = jhi; j < pl->wq; j++)
						d[j] = 0;
				}
			}
		}
	}
}

/*
 * Weight rows [m0, m0+mr) x taps [k0, k0+kc) of group g as f32 rows of
 * stride *lda: read in place when f32, converted into ap when f16.
 */
CD_TARGET static const float *CD_FN(weights)(const struct conv_args *c,
					     float *ap, size_t g, size_t m0,
					     size_t mr, size_t k0, size_t kc,
					     size_t *lda)
{
	size_t K = c->cin_g * c->kH * c->kW, i;
	size_t s = (g * c->cout_g + m0) * K + k0;

	if (!c->in_f16) {
		*lda = K;
		return (const float *)c->w + s;
	}
	for (i = 0; i < mr; i++)
		CD_FN(h2f)(ap + i * kc, (const uint16_t *)c->w + s + i * K, kc);
	*lda = kc;
	return ap;
}

static float CD_FN(bias)(const struct conv_args *c, size_t oc)
{
	if (!c->bias)
		return 0.0f;
	return c->bias_f16 ? cl_h2f(((const uint16_t *)c->bias)[oc])
			   : ((const float *)c->bias)[oc];
}

#if CD_MASKED
#if CD_VL == 16
typedef __m512 CD_FN(vs);
typedef __mmask16 CD_FN(vm);
#define CD_SV_ALL ((__mmask16)0xffff)
#define CD_SV_MASK(n) ((__mmask16)((1u << (n)) - 1))
#define CD_SV_SET1(x) _mm512_set1_ps(x)
#define CD_SV_LOAD(m, p) _mm512_maskz_loadu_ps((m), (p))
#define CD_SV_STORE(m, p, x) _mm512_mask_storeu_ps((p), (m), (x))
#define CD_SV_ADD(a, b) _mm512_add_ps((a), (b))
#define CD_SV_LT(x, y) _mm512_cmp_ps_mask((x), (y), _CMP_LT_OQ)
#define CD_SV_GT(x, y) _mm512_cmp_ps_mask((x), (y), _CMP_GT_OQ)
#define CD_SV_ISNAN(x) _mm512_cmp_ps_mask((x), (x), _CMP_UNORD_Q)
#define CD_SV_PICK(k, x, y) _mm512_mask_blend_ps((k), (x), (y))
#define CD_SV_H2F(h) _mm512_cvtph_ps(h)
#define CD_SV_F2H(x) _mm512_cvtps_ph((x), _MM_FROUND_TO_NEAREST_INT)
typedef __m256i CD_FN(vh);
#define CD_SV_HLOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define CD_SV_HSTORE(p, h) _mm256_storeu_si256((__m256i *)(p), (h))
#else
typedef __m256 CD_FN(vs);
typedef __m256i CD_FN(vm);
#define CD_SV_ALL _mm256_set1_epi32(-1)
#define CD_SV_MASK(n) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n)), \
					 _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define CD_SV_SET1(x) _mm256_set1_ps(x)
#define CD_SV_LOAD(m, p) _mm256_maskload_ps((p), (m))
#define CD_SV_STORE(m, p, x) _mm256_maskstore_ps((p), (m), (x))
#define CD_SV_ADD(a, b) _mm256_add_ps((a), (b))
#define CD_SV_LT(x, y) _mm256_cmp_ps((x), (y), _CMP_LT_OQ)
#define CD_SV_GT(x, y) _mm256_cmp_ps((x), (y), _CMP_GT_OQ)
#define CD_SV_ISNAN(x) _mm256_movemask_ps(_mm256_cmp_ps((x), (x), _CMP_UNORD_Q))
#define CD_SV_PICK(k, x, y) _mm256_blendv_ps((x), (y), (k))
#define CD_SV_H2F(h) _mm256_cvtph_ps(h)
#define CD_SV_F2H(x) _mm256_cvtps_ph((x), _MM_FROUND_TO_NEAREST_INT)
typedef __m128i CD_FN(vh);
#define CD_SV_HLOAD(p) _mm_loadu_si128((const __m128i *)(p))
#define CD_SV_HSTORE(p, h) _mm_storeu_si128((__m128i *)(p), (h))
#endif

/*
 * store_row a vector at a time, the short last vector masked (rows are 7
 * to 112 wide: a scalar tail was up to half of a row): the same
 * operations per element as the scalar loops, in the same order, so the
 * same bits.  f16 values go through F16C, a vector holding a NaN through
 * cl_f2h (F16C keeps NaN payloads differently).
 */
CD_TARGET static inline __attribute__((always_inline)) CD_FN(vs)
CD_FN(sv_one)(const struct conv_args *c, CD_FN(vs) x, CD_FN(vs) old,
	      CD_FN(vs) bv, CD_FN(vs) lo, CD_FN(vs) hi)
{
	if (c->accumulate)
		x = CD_SV_ADD(CD_SV_ADD(old, bv), x);
	else if (c->bias)
		x = CD_SV_ADD(bv, x);
	if (c->act.kind) {
		x = CD_SV_PICK(CD_SV_LT(x, lo), x, lo);
		x = CD_SV_PICK(CD_SV_GT(x, hi), x, hi);
	}
	return x;
}

CD_TARGET static void CD_FN(store_vec)(const struct conv_args *c, size_t o,
				       const float *s, float b)
{
	typedef CD_FN(vs) vs;
	typedef CD_FN(vh) vh;
	vs bv = CD_SV_SET1(b), lo = CD_SV_SET1(c->act.lo), hi = CD_SV_SET1(c->act.hi);
	vs zero = CD_SV_SET1(0.0f);
	size_t OW = c->OW, ow, i;

	if (!c->out_f16) {
		float *d = (float *)c->out + o;

		for (ow = 0; ow + CD_VL <= OW; ow += CD_VL) {
			vs old = c->accumulate ? CD_SV_LOAD(CD_SV_ALL, d + ow) : zero;

			CD_SV_STORE(CD_SV_ALL, d + ow,
				    CD_FN(sv_one)(c, CD_SV_LOAD(CD_SV_ALL, s + ow), old, bv, lo, hi));
		}
		if (ow < OW) {
			CD_FN(vm) m = CD_SV_MASK(OW - ow);
			vs old = c->accumulate ? CD_SV_LOAD(m, d + ow) : zero;

			CD_SV_STORE(m, d + ow, CD_FN(sv_one)(c, CD_SV_LOAD(m, s + ow), old, bv, lo, hi));
		}
		return;
	}
	{
		uint16_t *d = (uint16_t *)c->out + o;

		for (ow = 0; ow < OW; ow += CD_VL) {
			size_t n = OW - ow < CD_VL ? OW - ow : CD_VL;
			CD_FN(vm) m = n == CD_VL ? CD_SV_ALL : CD_SV_MASK(n);
			_Alignas(64) uint16_t h[CD_VL];
			_Alignas(64) float t[CD_VL];
			vs old = zero, x;

			if (c->accumulate && n == CD_VL) {
				old = CD_SV_H2F(CD_SV_HLOAD(d + ow));
			} else if (c->accumulate) {
				memset(h, 0, sizeof(h));
				memcpy(h, d + ow, n * sizeof(uint16_t));
				old = CD_SV_H2F(CD_SV_HLOAD(h));
			}
			x = CD_FN(sv_one)(c, CD_SV_LOAD(m, s + ow), old, bv, lo, hi);
			if (CD_SV_ISNAN(x)) {
				CD_SV_STORE(CD_SV_ALL, t, x);
				for (i = 0; i < n; i++)
					d[ow + i] = cl_f2h(t[i]);
				continue;
			}
			if (n == CD_VL) {
				CD_SV_HSTORE(d + ow, (vh)CD_SV_F2H(x));
			} else {
				CD_SV_HSTORE(h, (vh)CD_SV_F2H(x));
				memcpy(d + ow, h, n * sizeof(uint16_t));
			}
		}
	}
}
#undef CD_SV_ALL
#undef CD_SV_MASK
#undef CD_SV_SET1
#undef CD_SV_LOAD
#undef CD_SV_STORE
#undef CD_SV_ADD
#undef CD_SV_LT
#undef CD_SV_GT
#undef CD_SV_ISNAN
#undef CD_SV_PICK
#undef CD_SV_H2F
#undef CD_SV_F2H
#undef CD_SV_HLOAD
#undef CD_SV_HSTORE
#endif

/* One output row from its f32 sums s: out = act(out (+)= bias + s). */
CD_TARGET static void CD_FN(store_row)(const struct conv_args *c, size_t o,
				       const float *s, float b)
{
	int base = c->accumulate || c->bias;
	size_t ow;

#if CD_MASKED
	(void)base;
	(void)ow;
	CD_FN(store_vec)(c, o, s, b);
	return;
#endif
	if (c->out_f16) {
		/*
		 * The f32 path's sums in a buffer, then one conversion loop:
		 * separate passes vectorise (the f16 rounding is branchless),
		 * one loop with the per-element choices did not.
		 */
		uint16_t *d = (uint16_t *)c->out + o;
		float t[CD_STORE_CHUNK], lo = c->act.lo, hi = c->act.hi;
		size_t i, n;

		for (ow = 0; ow < c->OW; ow += n) {
			n = c->OW - ow < CD_STORE_CHUNK ? c->OW - ow : CD_STORE_CHUNK;
			if (c->accumulate) {
				CD_FN(h2f)(t, d + ow, n);
				for (i = 0; i < n; i++)
					t[i] = (t[i] + b) + s[ow + i];
			} else if (base) {
				for (i = 0; i < n; i++)
					t[i] = b + s[ow + i];
			} else {
				memcpy(t, s + ow, n * sizeof(float));
			}
			if (c->act.kind)
				for (i = 0; i < n; i++)
					t[i] = cl_clamp(t[i], lo, hi);
			CD_FN(f2h)(d + ow, t, n);
		}
	} else if (!c->act.kind) {
		float *d = (float *)c->out + o;

		if (!base)
			for (ow = 0; ow < c->OW; ow++)
				d[ow] = s[ow];
		else if (c->accumulate)
			for (ow = 0; ow < c->OW; ow++)
				d[ow] = (d[ow] + b) + s[ow];
		else
			for (ow = 0; ow < c->OW; ow++)
				d[ow] = b + s[ow];
	} else {
		/* the epilogue in the same loop: rows are short (7 to 112) */
		float *d = (float *)c->out + o, lo = c->act.lo, hi = c->act.hi;

		if (!base)
			for (ow = 0; ow < c->OW; ow++)
				d[ow] = cl_clamp(s[ow], lo, hi);
		else if (c->accumulate)
			for (ow = 0; ow < c->OW; ow++)
				d[ow] = cl_clamp((d[ow] + b) + s[ow], lo, hi);
		else
			for (ow = 0; ow < c->OW; ow++)
				d[ow] = cl_clamp(b + s[ow], lo, hi);
	}
}

/*
 * Depthwise convolution (one input and one output channel per group).
 * MobileNet-style vertices hold one output row of a few channels, where
 * the band engine's set-up (planning, tap offsets, whole phase planes,
 * register tiles 64 columns wide) cost several times the 9 multiplies
 * per output.  Here, per output row, the kH input rows are copied
 * zero-padded and split by column phase (so every tap reads a contiguous
 * slice), then each vector of outputs sums all taps in registers, in
 * weight order, rows outside the input skipped.  Returns -1 (nothing
 * written) when the rows do not fit the fixed scratch.
 */
#define CD_DW_MAX 2048	/* output columns */
#define CD_DW_ROWS 8192	/* floats of the padded input rows of one output row */
CD_TARGET CD_CONTRACT CD_NO_LIBCALLS __attribute__((noinline)) static int
CD_FN(dw)(const struct conv_args *c)
{
	typedef CD_FN(vf) vf;
	_Alignas(64) float acc[CD_DW_MAX];
	_Alignas(64) float rows[CD_DW_ROWS];
	float wt[CD_KT], tw[CD_KT];
	uint32_t toff[CD_KT], tidx[CD_KT];
	size_t sW = c->sW, kH = c->kH, kW = c->kW, taps = kH * kW, OW = c->OW;
	size_t owr = cd_round_up(OW, CD_VL), kwq = (kW - 1) * c->dW / sW;
	size_t wq = cd_div_up((OW - 1) * sW + (kW - 1) * c->dW + 1, sW);
	size_t wr = owr + kwq > wq ? owr + kwq : wq;
	size_t n, ch, oh, kh, kw, px, j, ow, t, nt;

	if (taps > CD_KT || owr > CD_DW_MAX || kH * sW * wr > CD_DW_ROWS)
		return -1;
	/*
	 * The vertices hold one output row of a few channels: the taps whose
	 * input row exists (and where each reads in the padded rows) depend
	 * on the row only, so they are listed once per row for all channels.
	 */
	for (n = 0; n < c->N; n++)
		for (oh = 0; oh < c->OH; oh++) {
			int64_t ih0 = (int64_t)(oh * c->sH) - (int64_t)c->pt;

			nt = 0;
			for (kh = 0; kh < kH; kh++) {
				int64_t ih = ih0 + (int64_t)(kh * c->dH);

				if (ih < 0 || ih >= (int64_t)c->H)
					continue;
				for (kw = 0; kw < kW; kw++) {
					size_t off = kw * c->dW;

					toff[nt] = (uint32_t)((kh * sW + off % sW) * wr + off / sW);
					tidx[nt++] = (uint32_t)(kh * kW + kw);
				}
			}
			for (ch = 0; ch < c->G; ch++) {
				size_t plane = (n * c->G + ch) * c->H * c->W;
				float b = CD_FN(bias)(c, ch);

				/* the taps in weight order, rows outside the input skipped */
				if (c->in_f16) {
					CD_FN(h2f)(wt, (const uint16_t *)c->w + ch * taps, taps);
					for (t = 0; t < nt; t++)
						tw[t] = wt[tidx[t]];
				} else {
					for (t = 0; t < nt; t++)
						tw[t] = ((const float *)c->w)[ch * taps + tidx[t]];
				}
				/* the kH input rows, zero-padded and split by column phase */
				for (kh = 0; kh < kH; kh++) {
					int64_t ih = ih0 + (int64_t)(kh * c->dH);
					size_t src;

					if (ih < 0 || ih >= (int64_t)c->H)
						continue;
					src = plane + (size_t)ih * c->W;
					for (px = 0; px < sW; px++) {
						float *d = rows + (kh * sW + px) * wr;
						size_t jlo = px >= c->pl ? 0 : (c->pl - px + sW - 1) / sW;
						size_t jhi = c->W + c->pl > px
							     ? (c->W + c->pl - px + sW - 1) / sW : 0;

						if (jhi > wr)
							jhi = wr;
						if (jlo > jhi)
							jlo = jhi;
						for (j = 0; j < jlo; j++)
							d[j] = 0.0f;
						if (c->in_f16) {
							const uint16_t *s = (const uint16_t *)c->in + src +
									    jlo * sW + px - c->pl;

							if (sW == 1)
								CD_FN(h2f)(d + jlo, s, jhi - jlo);
							else
								CD_FN(h2f_strided)(d + jlo, s, jhi - jlo, sW);
						} else {
							const float *s = (const float *)c->in + src +
									 jlo * sW + px - c->pl;

							if (sW == 1)
								for (j = jlo; j < jhi; j++)
									d[j] = s[j - jlo];
							else
								for (j = jlo; j < jhi; j++)
									d[j] = s[(j - jlo) * sW];
						}
						for (j = jhi; j < wr; j++)
							d[j] = 0.0f;
					}
				}
				for (ow = 0; ow + 4 * CD_VL <= owr; ow += 4 * CD_VL) {
					vf a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };

					for (t = 0; t < nt; t++) {
						const float *s = rows + toff[t] + ow;
						vf x0, x1, x2, x3;

						memcpy(&x0, s, sizeof(vf));
						memcpy(&x1, s + CD_VL, sizeof(vf));
						memcpy(&x2, s + 2 * CD_VL, sizeof(vf));
						memcpy(&x3, s + 3 * CD_VL, sizeof(vf));
						a0 += tw[t] * x0;
						a1 += tw[t] * x1;
						a2 += tw[t] * x2;
						a3 += tw[t] * x3;
					}
					memcpy(acc + ow, &a0, sizeof(vf));
					memcpy(acc + ow + CD_VL, &a1, sizeof(vf));
					memcpy(acc + ow + 2 * CD_VL, &a2, sizeof(vf));
					memcpy(acc + ow + 3 * CD_VL, &a3, sizeof(vf));
				}
				for (; ow < owr; ow += CD_VL) {
					vf a0 = { 0 };

					for (t = 0; t < nt; t++) {
						vf x0;

						memcpy(&x0, rows + toff[t] + ow, sizeof(vf));
						a0 += tw[t] * x0;
					}
					memcpy(acc + ow, &a0, sizeof(vf));
				}
				CD_FN(store_row)(c, ((n * c->G + ch) * c->OH + oh) * OW, acc, b);
			}
		}
	return 0;
}

CD_TARGET CD_CONTRACT __attribute__((noinline)) static int CD_FN(run)(const struct conv_args *c)
{
	_Alignas(64) float bp[CD_BP];
	_Alignas(64) float cs[CD_CS];
	_Alignas(64) float ap[CD_MR_T * CD_KT];
	uint32_t koff[CD_KT];
	struct cd_plan pl;
	size_t M = c->cout_g, taps = c->kH * c->kW, n, g, oh0, ic0, i, k;
	size_t cout = c->G * M, icl, kh, kw;

	if (cd_plan(c, CD_VL, CD_MR_T, CD_MR_W, &pl))
		return -1;
	/* plane offset of each tap of a chunk (a shorter chunk: a prefix) */
	k = 0;
	for (icl = 0; icl < pl.icb; icl++)
		for (kh = 0; kh < c->kH; kh++)
			for (kw = 0; kw < c->kW; kw++) {
				size_t ry = kh * c->dH, rx = kw * c->dW;

				koff[k++] = (uint32_t)(((icl * c->sH + ry % c->sH) * c->sW +
							rx % c->sW) * pl.ps +
						       ry / c->sH * pl.wq + rx / c->sW);
			}
	for (n = 0; n < c->N; n++)
		for (g = 0; g < c->G; g++)
			for (oh0 = 0; oh0 < c->OH; oh0 += pl.bh) {
				size_t bh = c->OH - oh0 < pl.bh ? c->OH - oh0 : pl.bh;
				size_t nw = cd_round_up(bh * pl.wq, pl.nr), r, m;

				for (ic0 = 0; ic0 < c->cin_g; ic0 += pl.icb) {
					size_t icc = c->cin_g - ic0 < pl.icb ? c->cin_g - ic0 : pl.icb;
					size_t kc = icc * taps, filled = icc * c->sH * c->sW * pl.ps;
					size_t need = cd_need(&pl, c, icc, nw);

					CD_FN(fill)(c, &pl, bp, n, g, ic0, icc, oh0);
					for (i = filled; i < need; i++)
						bp[i] = 0;
					for (m = 0; m < M; m += pl.mr) {
						size_t mr = M - m < pl.mr ? M - m : pl.mr, lda;
						const float *a = CD_FN(weights)(c, ap, g, m, mr,
										ic0 * taps, kc, &lda);

						if (pl.nv == 4)
							CD_FN(rows_w)(mr, kc, a, lda, bp, koff,
								      cs + m * nw, nw, nw, ic0 > 0);
						else
							CD_FN(rows_t)(mr, kc, a, lda, bp, koff,
								      cs + m * nw, nw, nw, ic0 > 0);
					}
				}
				for (m = 0; m < M; m++) {
					size_t oc = g * M + m;
					float b = CD_FN(bias)(c, oc);

					for (r = 0; r < bh; r++)
						CD_FN(store_row)(c, ((n * cout + oc) * c->OH + oh0 + r) *
								 c->OW, cs + m * nw + r * pl.wq, b);
				}
			}
	return 0;
}

#if CD_MASKED
#include "conv_ip.h"
#endif

/*
 * Depthwise vertices of one output row take their own path (the band
 * engine's set-up outweighs its reuse of input rows there), stride-1
 * convolutions read their input in place where the level has masked
 * loads.  Called one after the other, never nested, so their stack
 * scratch never adds up.
 */
CD_TARGET static int CD_FN(direct)(const struct conv_args *c)
{
	if (c->cin_g == 1 && c->cout_g == 1 && c->OH == 1) {
#if CD_MASKED
		if (!CD_FN(dw_ip)(c))
			return 0;
#endif
#if CD_VL == 16
		if (!CD_FN(dw_ip_s2)(c))
			return 0;
#endif
		if (!CD_FN(dw)(c))
			return 0;
	}
#if CD_MASKED
	if (!CD_FN(ip)(c))
		return 0;
#endif
	return CD_FN(run)(c);
}

#undef CD_SUFFIX
#undef CD_TARGET
#undef CD_VL
#undef CD_MR_T
#undef CD_MR_W
#undef CD_F16C
#undef CD_MASKED
#undef CD_MASK_T
#undef CD_MLOAD
