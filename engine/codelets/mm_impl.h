/* SPDX-License-Identifier: MIT */
/*
 * mm_impl.h - the MATMUL driver and micro-kernel, instantiated once per
 * instruction-set level by matmul.c.  Before including, define:
 *
 *   MM_SUFFIX   name suffix of the generated functions
 *   MM_TARGET   function attribute list (e.g. target("avx2,fma,f16c"))
 *   MM_VL       floats per vector register (4, 8 or 16)
 *   MM_MR       rows of the register tile
 *   MM_F16C     1 to convert f16 with the F16C instructions
 *
 * The register tile is MM_MR x (2 * MM_VL) f32 accumulators written with
 * gcc vector extensions (portable; lowered to what the target has).  B is
 * packed (and converted to f32) into KC x NR panels on the stack; A is read
 * in place when f32 and full, otherwise packed into an MR x KC panel.  C is
 * accumulated directly when f32; for f16 C a block of MC x NCB f32
 * accumulators on the stack holds the sums over the whole K before the one
 * rounding to f16.
 */

#define MM_CAT2(a, b) a##_##b
#define MM_CAT(a, b) MM_CAT2(a, b)
#define MM_FN(name) MM_CAT(name, MM_SUFFIX)
#define MM_NR (2 * MM_VL)

typedef float MM_FN(vf) __attribute__((vector_size(MM_VL * 4)));

/*
 * Convert n f16 to f32.  Inlined: the packing loops call it per row of
 * a panel (16 to 32 values), where a call cost as much as the work; a
 * short tail goes through a zero-padded F16C vector.
 */
MM_TARGET static inline __attribute__((always_inline)) void
MM_FN(h2f)(float *dst, const uint16_t *src, size_t n)
{
	size_t i = 0;

#if MM_F16C
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
						  (const __m128i *)(src + i))));
	if (i < n) {
		uint16_t h[8] = { 0 };
		float t[8];

		memcpy(h, src + i, (n - i) * sizeof(uint16_t));
		_mm256_storeu_ps(t, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h)));
		memcpy(dst + i, t, (n - i) * sizeof(float));
	}
#else
	for (; i < n; i++)
		dst[i] = cl_h2f(src[i]);
#endif
}

/* Convert n f16 at src stride st (8 gathered at a time with F16C). */
MM_TARGET static void MM_FN(h2f_strided)(float *dst, const uint16_t *src, size_t n, size_t st)
{
	size_t i = 0;

#if MM_F16C
	for (; i + 8 <= n; i += 8) {
		const uint16_t *p = src + i * st;
		__m128i h = _mm_setr_epi16((short)p[0], (short)p[st], (short)p[2 * st],
					   (short)p[3 * st], (short)p[4 * st], (short)p[5 * st],
					   (short)p[6 * st], (short)p[7 * st]);

		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
	}
#endif
	for (; i < n; i++)
		dst[i] = cl_h2f(src[i * st]);
}

MM_TARGET static void MM_FN(f2h)(uint16_t *dst, const float *src, size_t n)
{
	size_t i = 0;

#if MM_F16C
	for (; i + 8 <= n; i += 8) {
		__m256 x = _mm256_loadu_ps(src + i);

		/* F16C rounds like ipu_f32_to_f16 except NaN payloads */
		_mm_storeu_si128((__m128i *)(dst + i),
				 _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
	}
#endif
	for (; i < n; i++)
		dst[i] = cl_f2h(src[i]);
}

typedef int32_t MM_FN(vi) __attribute__((vector_size(MM_VL * 4)));

/* cl_clamp on a vector: two compares and blends, in registers (the
 * kernel's own options, or gcc does not inline it) */
MM_TARGET MM_CONTRACT static inline __attribute__((always_inline)) MM_FN(vf)
MM_FN(clamp)(MM_FN(vf) x, MM_FN(vf) lo, MM_FN(vf) hi)
{
	typedef MM_FN(vi) vi;
	vi m = x < lo;

	x = (MM_FN(vf))(((vi)x & ~m) | ((vi)lo & m));
	m = x > hi;
	return (MM_FN(vf))(((vi)x & ~m) | ((vi)hi & m));
}

/*
 * C[0..mr)[0..nr) (+)= a[MR rows, stride lda][0..kc) * bp[kc][NR].
 * a must have MM_MR readable rows (the caller pads short panels).  act
 * (the last K block's call only, else NULL): the epilogue on the sums
 * before they are stored.
 */
MM_TARGET MM_CONTRACT static void
MM_FN(kernel)(size_t kc, const float *a, size_t lda, const float *bp,
	      size_t ldb, float *c, size_t ldc, size_t mr, size_t nr, int load,
	      const struct cl_act *act)
{
	typedef MM_FN(vf) vf;
	vf acc[MM_MR][2];
	size_t i, j, k;

	/* unrolled whatever -O level QEMU builds with: acc stays in registers */
	MM_UNROLL
	for (i = 0; i < MM_MR; i++) {
		acc[i][0] = (vf){ 0 };
		acc[i][1] = (vf){ 0 };
	}
	for (k = 0; k < kc; k++) {
		vf b0, b1;

		memcpy(&b0, bp + k * ldb, sizeof(vf));
		memcpy(&b1, bp + k * ldb + MM_VL, sizeof(vf));
		MM_UNROLL
		for (i = 0; i < MM_MR; i++) {
			float av = a[i * lda + k];

			acc[i][0] += av * b0;
			acc[i][1] += av * b1;
		}
	}
	if (mr == MM_MR && nr == MM_NR) {
		MM_UNROLL
		for (i = 0; i < MM_MR; i++) {
			float *row = c + i * ldc;

			if (load) {
				vf c0, c1;

				memcpy(&c0, row, sizeof(vf));
				memcpy(&c1, row + MM_VL, sizeof(vf));
				acc[i][0] += c0;
				acc[i][1] += c1;
			}
		}
		if (act && act->kind) {
			vf lo = (vf){ 0 } + act->lo, hi = (vf){ 0 } + act->hi;

			MM_UNROLL
			for (i = 0; i < MM_MR; i++) {
				acc[i][0] = MM_FN(clamp)(acc[i][0], lo, hi);
				acc[i][1] = MM_FN(clamp)(acc[i][1], lo, hi);
			}
		}
		MM_UNROLL
		for (i = 0; i < MM_MR; i++) {
			float *row = c + i * ldc;

			memcpy(row, &acc[i][0], sizeof(vf));
			memcpy(row + MM_VL, &acc[i][1], sizeof(vf));
		}
	} else {
		float t[MM_MR][MM_NR];

		memcpy(t, acc, sizeof(t));
		for (i = 0; i < mr; i++) {
			float *row = c + i * ldc;

			for (j = 0; j < nr; j++) {
				float x = load ? row[j] + t[i][j] : t[i][j];

				if (act && act->kind) {
					/* cl_clamp, inline */
					x = x < act->lo ? act->lo : x;
					x = x > act->hi ? act->hi : x;
				}
				row[j] = x;
			}
		}
	}
}

/*
 * Pack an implicit im2col matrix: row k = (ic, kh, kw), column n = (oh, ow)
 * of the convolution input b (one image, one group), zero where the window
 * reads padding.
 */
MM_TARGET static void MM_FN(pack_conv)(float *bp, const struct mm_args *g,
				       const void *b, size_t pc, size_t kc,
				       size_t jc, size_t nc)
{
	const struct mm_conv *cv = g->conv;
	size_t jr, k, j, khw = cv->kH * cv->kW;

	for (jr = 0; jr < nc; jr += MM_NR) {
		size_t nr = nc - jr < MM_NR ? nc - jr : MM_NR;
		float *p = bp + jr * kc;
		size_t n0 = jc + jr, oh0 = n0 / cv->OW, ow0 = n0 % cv->OW;

		for (k = 0; k < kc; k++) {
			size_t kk = pc + k, ic = kk / khw, r = kk % khw;
			size_t kh = r / cv->kW, kw = r % cv->kW;
			size_t oh = oh0, ow = ow0;
			int64_t hoff = (int64_t)(kh * cv->dH) - (int64_t)cv->pt;
			int64_t woff = (int64_t)(kw * cv->dW) - (int64_t)cv->pl;
			int64_t W = (int64_t)cv->W, sW = (int64_t)cv->sW;
			/* output columns ow in [wlo, whi) read inside the row */
			int64_t wlo = woff >= 0 ? 0 : (-woff + sW - 1) / sW;
			int64_t whi = W - woff <= 0 ? 0 : (W - woff + sW - 1) / sW;
			size_t plane = ic * cv->H * cv->W;
			float *row = p + k * MM_NR;

			j = 0;
			while (j < nr) {
				size_t run = nr - j < cv->OW - ow ? nr - j : cv->OW - ow;
				int64_t ih = (int64_t)(oh * cv->sH) + hoff;
				size_t t;

				if (ih < 0 || ih >= (int64_t)cv->H) {
					for (t = 0; t < run; t++)
						row[j + t] = 0;
				} else {
					size_t rb = plane + (size_t)ih * cv->W;
					/* [ow, ow+run) = zeros, [a, e) inside, zeros */
					int64_t a0 = (int64_t)ow, e0 = (int64_t)(ow + run);
					int64_t a = a0 > wlo ? a0 : wlo;
					int64_t e = e0 < whi ? e0 : whi;
					/* d[o] is row[j + o - ow], in[o] is element rb + o*sW + woff */
					float *d = row + j;
					size_t na = (size_t)(a - a0), ne = (size_t)(e - a0);

					if (e < a)
						na = ne = run;
					for (t = 0; t < na; t++)
						d[t] = 0;
					if (ne > na) {
						/* a >= wlo: the first input column is >= 0 */
						size_t first = rb + (size_t)(a * sW + woff);

						if (g->f16) {
							const uint16_t *src = (const uint16_t *)b + first;

							MM_FN(h2f_strided)(d + na, src, ne - na, (size_t)sW);
						} else if (sW == 1) {
							memcpy(d + na, (const float *)b + first,
							       (ne - na) * sizeof(float));
						} else {
							const float *src = (const float *)b + first;

							for (t = na; t < ne; t++)
								d[t] = src[(t - na) * (size_t)sW];
						}
					}
					for (t = ne; t < run; t++)
						d[t] = 0;
				}
				j += run;
				ow += run;
				if (ow == cv->OW) {
					ow = 0;
					oh++;
				}
			}
			for (j = nr; j < MM_NR; j++)
				row[j] = 0;
		}
	}
}

/* Pack B[pc..pc+kc)[jc..jc+nc) into NR-wide panels, zero-padded. */
MM_TARGET static void MM_FN(pack_b)(float *bp, const struct mm_args *g,
				    const void *b, size_t pc, size_t kc,
				    size_t jc, size_t nc)
{
	size_t jr, k, j, N = g->N, K = g->K;

	if (g->conv) {
		MM_FN(pack_conv)(bp, g, b, pc, kc, jc, nc);
		return;
	}
	for (jr = 0; jr < nc; jr += MM_NR) {
		size_t nr = nc - jr < MM_NR ? nc - jr : MM_NR;
		float *p = bp + jr * kc;

		if (!g->trans_b) {
			for (k = 0; k < kc; k++) {
				size_t src = (pc + k) * N + jc + jr;

				if (g->f16) {
					MM_FN(h2f)(p + k * MM_NR,
						   (const uint16_t *)b + src,
						   nr);
				} else {
					memcpy(p + k * MM_NR,
					       (const float *)b + src,
					       nr * sizeof(float));
				}
				for (j = nr; j < MM_NR; j++)
					p[k * MM_NR + j] = 0;
			}
		} else {
			float col[MM_KC];

			for (j = 0; j < nr; j++) {
				size_t src = (jc + jr + j) * K + pc;

				if (g->f16)
					MM_FN(h2f)(col,
						   (const uint16_t *)b + src,
						   kc);
				else
					memcpy(col, (const float *)b + src,
					       kc * sizeof(float));
				for (k = 0; k < kc; k++)
					p[k * MM_NR + j] = col[k];
			}
			for (j = nr; j < MM_NR; j++)
				for (k = 0; k < kc; k++)
					p[k * MM_NR + j] = 0;
		}
	}
}

MM_TARGET static void MM_FN(run)(const struct mm_args *g)
{
	_Alignas(64) float bp[MM_NCB * MM_KC];
	_Alignas(64) float ap[MM_MR * MM_KC];
	_Alignas(64) float cs[MM_MC * MM_NCB];
	size_t M = g->M, N = g->N, K = g->K, bt;
	int c16 = g->c_f16;
	/* f32 C is its own accumulator: one row block covers all of M */
	size_t mcb = c16 ? MM_MC : M;
	int direct = !g->f16 && !g->trans_b && !g->conv &&
		     g->M <= MM_DIRECT_M;

	for (bt = 0; bt < g->batch; bt++) {
		size_t ao = (bt % g->a_mod) * g->a_bs;
		size_t bo = (bt % g->b_mod) * g->b_bs;
		size_t co = bt * g->c_bs;
		const void *A = g->f16 ? (const void *)((const uint16_t *)g->a + ao)
				       : (const void *)((const float *)g->a + ao);
		const void *B = g->f16 ? (const void *)((const uint16_t *)g->b + bo)
				       : (const void *)((const float *)g->b + bo);
		size_t jc, ic, pc, ir, jr, i;

		for (jc = 0; jc < N; jc += MM_NCB) {
			size_t nc = N - jc < MM_NCB ? N - jc : MM_NCB;

			for (ic = 0; ic < M; ic += mcb) {
				size_t mc = M - ic < mcb ? M - ic : mcb;
				float *cbase;
				size_t ldc;

				if (c16) {
					/* f32 accumulators for this block */
					cbase = cs;
					ldc = nc;
					for (i = 0; i < mc; i++) {
						float *row = cs + i * nc;
						const uint16_t *crow =
							(const uint16_t *)g->c +
							co + (ic + i) * N + jc;

						if (g->accumulate)
							MM_FN(h2f)(row, crow, nc);
						else
							memset(row, 0,
							       nc * sizeof(float));
					}
				} else {
					cbase = (float *)g->c + co + ic * N + jc;
					ldc = N;
				}
				for (pc = 0; pc < K; pc += MM_KC) {
					size_t kc = K - pc < MM_KC ? K - pc : MM_KC;
					int load = c16 || pc > 0 || g->accumulate;

					/*
					 * Small M: packing B would cost as much as
					 * the multiply; full f32 panels are read
					 * in place (row stride N), only the N edge
					 * is packed.
					 */
					size_t nfull = direct ? nc / MM_NR * MM_NR : 0;

					if (nc > nfull)
						MM_FN(pack_b)(bp, g, B, pc, kc,
							      jc + nfull, nc - nfull);
					for (ir = 0; ir < mc; ir += MM_MR) {
						size_t mr = mc - ir < MM_MR ? mc - ir : MM_MR;
						const float *a;
						size_t lda;

						if (!g->f16 && mr == MM_MR) {
							a = (const float *)A +
							    (ic + ir) * K + pc;
							lda = K;
						} else {
							for (i = 0; i < MM_MR; i++) {
								size_t s = (ic + ir + i) * K + pc;

								if (i >= mr)
									memset(ap + i * kc, 0,
									       kc * sizeof(float));
								else if (g->f16)
									MM_FN(h2f)(ap + i * kc,
										   (const uint16_t *)A + s,
										   kc);
								else
									memcpy(ap + i * kc,
									       (const float *)A + s,
									       kc * sizeof(float));
							}
							a = ap;
							lda = kc;
						}
						for (jr = 0; jr < nc; jr += MM_NR) {
							size_t nr = nc - jr < MM_NR ? nc - jr : MM_NR;

							const float *bb;
							size_t ldb;

							if (jr < nfull) {
								bb = (const float *)B + pc * N + jc + jr;
								ldb = N;
							} else {
								bb = bp + (jr - nfull) * kc;
								ldb = MM_NR;
							}
							MM_FN(kernel)(kc, a, lda, bb, ldb,
								      cbase + ir * ldc + jr,
								      ldc, mr, nr, load,
								      pc + kc >= K ? &g->act : NULL);
						}
					}
				}
				if (c16)
					for (i = 0; i < mc; i++)
						MM_FN(f2h)((uint16_t *)g->c + co +
								   (ic + i) * N + jc,
							   cs + i * nc, nc);
			}
		}
	}
}

#undef MM_SUFFIX
#undef MM_TARGET
#undef MM_VL
#undef MM_MR
#undef MM_F16C
#undef MM_NR
