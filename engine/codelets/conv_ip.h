/* SPDX-License-Identifier: MIT */
/*
 * conv_ip.h - stride-1 convolutions read in place: included by conv_impl.h
 * for the levels with masked vector loads (CD_MASKED: AVX2, AVX-512).
 *
 * When both strides are 1 and the output rows are no wider than the input
 * rows, the input value of output (oh, ow) at tap (kh, kw) is
 * in[(oh + kh*dH - pt) * W + ow + kw*dW - pl]: over outputs laid out as
 * rows of W columns (columns >= OW computed and dropped), a tap reads
 * consecutive floats of the input at a fixed offset.  Padding (and the
 * wrap of a row's first and last columns into the neighbour rows) is a
 * per-tap lane mask: masked lanes read 0.0 without touching memory, as
 * the phase planes' zeros would.  This saves the phase-plane fill, which
 * copied every input row into 64 KiB of planes (missing L1) before the
 * kernel read it back.
 *
 * The sums are those of run(): the same input-channel chunks (the plan's
 * icb), taps in weight order within a chunk, the same register tiles and
 * FMAs, zeros where run() reads the planes' padding; so the output bits do
 * not change.  Only the band of output rows differs, which changes no sum.
 */

/* bytes of lane masks: taps x vectors of one band */
#define CD_IP_MASKB 32768
/* lane masks of depthwise rows: kW x vectors of one output row */
#define CD_IP_DW_MASKS 1024

/*
 * c[i][0..nv*VL) (+)= sum over channels icl < icc, taps t < taps of
 * a[i*lda + icl*taps + t] * (masked) b[icl*cs + toff[t] + 0..nv*VL).
 * Addresses are integers: a masked tap may point outside the operand.
 */
CD_TARGET CD_CONTRACT static inline __attribute__((always_inline)) void
CD_FN(tile_ip)(size_t icc, size_t taps, const float *a, size_t lda,
	       uintptr_t b, size_t cs, const intptr_t *toff,
	       const CD_MASK_T *mt, size_t ldm, float *c, size_t ldc, int load,
	       const size_t mr, const size_t nv)
{
	typedef CD_FN(vf) vf;
	vf acc[CD_MR_T][4];
	size_t i, j, icl, t;

	CD_UNROLL
	for (i = 0; i < mr; i++) {
		CD_UNROLL
		for (j = 0; j < nv; j++)
			acc[i][j] = (vf){ 0 };
	}
	for (icl = 0; icl < icc; icl++, b += cs, a += taps) {
		for (t = 0; t < taps; t++) {
			uintptr_t bk = b + (uintptr_t)toff[t];
			const CD_MASK_T *mk = mt + t * ldm;
			vf bv[4];

			CD_UNROLL
			for (j = 0; j < nv; j++)
				bv[j] = CD_MLOAD(mk[j], bk + j * CD_VL * sizeof(float));
			CD_UNROLL
			for (i = 0; i < mr; i++) {
				float av = a[i * lda + t];

				CD_UNROLL
				for (j = 0; j < nv; j++)
					acc[i][j] += av * bv[j];
			}
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
			CD_FN(tile_ip)(icc, taps, a, lda,                    \
				       b + jr * sizeof(float), cs, toff,     \
				       mt + jr / CD_VL, ldm, c + jr, ldc,    \
				       load, m, v);                          \
		return

/* One row block of mr channels over all nw (a multiple of NR) columns. */
CD_TARGET CD_CONTRACT static void
CD_FN(rows_ip_t)(size_t mr, size_t icc, size_t taps, const float *a,
		 size_t lda, uintptr_t b, size_t cs, const intptr_t *toff,
		 const CD_MASK_T *mt, size_t ldm, float *c, size_t ldc,
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

CD_TARGET CD_CONTRACT static void
CD_FN(rows_ip_w)(size_t mr, size_t icc, size_t taps, const float *a,
		 size_t lda, uintptr_t b, size_t cs, const intptr_t *toff,
		 const CD_MASK_T *mt, size_t ldm, float *c, size_t ldc,
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

/* Sets lanes [lo, hi) of the bitmap w (CD_VL lanes a word). */
static inline void CD_FN(ip_run)(uint16_t *w, size_t lo, size_t hi)
{
	while (lo < hi) {
		size_t v = lo / CD_VL, l = lo % CD_VL;
		size_t n = hi - lo < CD_VL - l ? hi - lo : CD_VL - l;

		w[v] |= (uint16_t)(((1u << n) - 1) << l);
		lo += n;
	}
}

/*
 * The masks of band rows [oh0, oh0+bh): lane p of the band (output row
 * oh0 + p / W, column p % W) reads at tap (kh, kw) when that output
 * exists and its input lies inside the input: per tap, one run of
 * columns in each row whose input row exists.  Built as bitmaps, so a
 * small vertex pays per row, not per lane.
 */
CD_TARGET static void CD_FN(ip_masks)(const struct conv_args *c, size_t oh0,
				      size_t bh, size_t nw, CD_MASK_T *mt)
{
	size_t W = c->W, ldm = nw / CD_VL, kh, kw, r, v;
#if CD_VL != 16
	uint16_t wb[CD_IP_MASKB / sizeof(CD_MASK_T)];
#endif

	for (kh = 0; kh < c->kH; kh++)
		for (kw = 0; kw < c->kW; kw++) {
			CD_MASK_T *mk = mt + (kh * c->kW + kw) * ldm;
			int64_t dy = (int64_t)(kh * c->dH) - (int64_t)c->pt;
			int64_t dx = (int64_t)(kw * c->dW) - (int64_t)c->pl;
			/* columns ow < OW whose input column ow + dx is inside */
			int64_t hi64 = (int64_t)W - dx < (int64_t)c->OW
				       ? (int64_t)W - dx : (int64_t)c->OW;
			size_t lo = dx < 0 ? (size_t)-dx : 0;
			size_t hi = hi64 > 0 ? (size_t)hi64 : 0;
#if CD_VL == 16
			uint16_t *w = (uint16_t *)mk;
#else
			uint16_t *w = wb;
#endif

			for (v = 0; v < ldm; v++)
				w[v] = 0;
			for (r = 0; r < bh && lo < hi; r++) {
				int64_t ih = (int64_t)(oh0 + r) + dy;

				if (ih >= 0 && ih < (int64_t)c->H)
					CD_FN(ip_run)(w, r * W + lo, r * W + hi);
			}
#if CD_VL != 16
			for (v = 0; v < ldm; v++) {
				const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);

				mk[v] = _mm256_cmpeq_epi32(_mm256_and_si256(
					_mm256_set1_epi32(w[v]), bit), bit);
			}
#endif
		}
}

/*
 * The convolution read in place; -1 (nothing written) when it does not
 * apply: strides other than 1, output rows wider than the input's, f16
 * input, or a plan that does not fit.
 */
CD_TARGET CD_CONTRACT __attribute__((noinline)) static int
CD_FN(ip)(const struct conv_args *c)
{
	_Alignas(64) float cs[CD_CS];
	_Alignas(64) CD_MASK_T mt[CD_IP_MASKB / sizeof(CD_MASK_T)];
	intptr_t toff[CD_KT];
	struct cd_plan pl;
	size_t M = c->cout_g, taps = c->kH * c->kW, W = c->W, HW = c->H * W;
	size_t cout = c->G * M, cin = c->G * c->cin_g;
	size_t bh, nb, n, g, oh0, ic0, m, r, kh, kw, maxw;

	/*
	 * The masks cost per tap and band, the fill per input channel: with
	 * fewer channels than taps (depthwise, RGB input) the fill is cheaper.
	 */
	if (c->sH != 1 || c->sW != 1 || c->OW > W || c->in_f16 ||
	    c->cin_g < taps || cd_plan(c, CD_VL, CD_MR_T, CD_MR_W, &pl))
		return -1;
	/* the largest band whose accumulators and masks fit */
	maxw = CD_CS / M;
	if (maxw > CD_IP_MASKB / sizeof(CD_MASK_T) / taps * CD_VL)
		maxw = CD_IP_MASKB / sizeof(CD_MASK_T) / taps * CD_VL;
	maxw = maxw / pl.nr * pl.nr;
	bh = maxw / W;
	if (bh == 0)
		return -1;
	if (bh > c->OH)
		bh = c->OH;
	nb = cd_div_up(c->OH, bh);
	bh = cd_div_up(c->OH, nb);
	for (kh = 0; kh < c->kH; kh++)
		for (kw = 0; kw < c->kW; kw++)
			toff[kh * c->kW + kw] =
				((intptr_t)(kh * c->dH) - (intptr_t)c->pt) *
					(intptr_t)(W * sizeof(float)) +
				((intptr_t)(kw * c->dW) - (intptr_t)c->pl) *
					(intptr_t)sizeof(float);
	for (oh0 = 0; oh0 < c->OH; oh0 += bh) {
		size_t bhr = c->OH - oh0 < bh ? c->OH - oh0 : bh;
		size_t nw = cd_round_up(bhr * W, pl.nr), ldm = nw / CD_VL;

		CD_FN(ip_masks)(c, oh0, bhr, nw, mt);
		for (n = 0; n < c->N; n++)
			for (g = 0; g < c->G; g++) {
				for (ic0 = 0; ic0 < c->cin_g; ic0 += pl.icb) {
					size_t icc = c->cin_g - ic0 < pl.icb ? c->cin_g - ic0 : pl.icb;
					uintptr_t b = (uintptr_t)c->in +
						((n * cin + g * c->cin_g + ic0) * HW + oh0 * W) *
							sizeof(float);

					for (m = 0; m < M; m += pl.mr) {
						size_t mr = M - m < pl.mr ? M - m : pl.mr;
						size_t K = c->cin_g * taps;
						const float *a = (const float *)c->w +
								 (g * M + m) * K + ic0 * taps;

						if (pl.nv == 4)
							CD_FN(rows_ip_w)(mr, icc, taps, a, K, b,
									 HW * sizeof(float), toff, mt,
									 ldm, cs + m * nw, nw, nw,
									 ic0 > 0);
						else
							CD_FN(rows_ip_t)(mr, icc, taps, a, K, b,
									 HW * sizeof(float), toff, mt,
									 ldm, cs + m * nw, nw, nw,
									 ic0 > 0);
					}
				}
				for (m = 0; m < M; m++) {
					size_t oc = g * M + m;
					float bias = CD_FN(bias)(c, oc);

					for (r = 0; r < bhr; r++)
						CD_FN(store_row)(c, ((n * cout + oc) * c->OH + oh0 + r) *
								 c->OW, cs + m * nw + r * W, bias);
				}
			}
	}
	return 0;
}

/*
 * Depthwise rows (see dw()) read in place when the column stride is 1 and
 * the input f32: each tap of an output vector is one masked load of the
 * input row (columns outside the input masked to 0.0), instead of copying
 * the kH input rows of every channel first.  The same sums as dw(): taps
 * in weight order, rows outside the input skipped, padded columns adding
 * 0.0 * w.  Returns -1 (nothing written) when it does not apply.
 */
CD_TARGET CD_CONTRACT CD_NO_LIBCALLS __attribute__((noinline)) static int
CD_FN(dw_ip)(const struct conv_args *c)
{
	typedef CD_FN(vf) vf;
	_Alignas(64) float acc[CD_DW_MAX];
	CD_MASK_T cm[CD_IP_DW_MASKS];
	float tw[CD_KT];
	intptr_t toff[CD_KT];
	uint32_t tidx[CD_KT], tkw[CD_KT];
	size_t kH = c->kH, kW = c->kW, taps = kH * kW, OW = c->OW, W = c->W;
	size_t nv = cd_div_up(OW, CD_VL), n, ch, oh, kh, kw, v, t, nt;

	if (c->sW != 1 || c->in_f16 || taps > CD_KT || nv * CD_VL > CD_DW_MAX ||
	    kW * nv > CD_IP_DW_MASKS)
		return -1;
	/* per kw, the output columns whose input column exists */
	for (kw = 0; kw < kW; kw++) {
		int64_t dx = (int64_t)(kw * c->dW) - (int64_t)c->pl;
		int64_t hi64 = (int64_t)W - dx < (int64_t)OW ? (int64_t)W - dx : (int64_t)OW;
		size_t lo = dx < 0 ? (size_t)-dx : 0, hi = hi64 > 0 ? (size_t)hi64 : 0;
		uint16_t wb[CD_IP_DW_MASKS];

		for (v = 0; v < nv; v++)
			wb[v] = 0;
		if (lo < hi)
			CD_FN(ip_run)(wb, lo, hi);
		for (v = 0; v < nv; v++) {
#if CD_VL == 16
			cm[kw * nv + v] = wb[v];
#else
			const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);

			cm[kw * nv + v] = _mm256_cmpeq_epi32(_mm256_and_si256(
				_mm256_set1_epi32(wb[v]), bit), bit);
#endif
		}
	}
	for (n = 0; n < c->N; n++)
		for (oh = 0; oh < c->OH; oh++) {
			int64_t ih0 = (int64_t)(oh * c->sH) - (int64_t)c->pt;

			nt = 0;
			for (kh = 0; kh < kH; kh++) {
				int64_t ih = ih0 + (int64_t)(kh * c->dH);

				if (ih < 0 || ih >= (int64_t)c->H)
					continue;
				for (kw = 0; kw < kW; kw++) {
					toff[nt] = (intptr_t)((ih * (int64_t)W +
							       (int64_t)(kw * c->dW) -
							       (int64_t)c->pl) *
							      (int64_t)sizeof(float));
					tkw[nt] = (uint32_t)(kw * nv);
					tidx[nt++] = (uint32_t)(kh * kW + kw);
				}
			}
			for (ch = 0; ch < c->G; ch++) {
				uintptr_t plane = (uintptr_t)c->in +
						  (n * c->G + ch) * c->H * W * sizeof(float);
				const float *w = (const float *)c->w + ch * taps;

				for (t = 0; t < nt; t++)
					tw[t] = w[tidx[t]];
				/* four independent sums at a time: FMA latency */
				for (v = 0; v + 4 <= nv; v += 4) {
					vf a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };

					for (t = 0; t < nt; t++) {
						uintptr_t s = plane + (uintptr_t)toff[t] +
							      v * CD_VL * sizeof(float);
						const CD_MASK_T *m = cm + tkw[t] + v;

						a0 += tw[t] * CD_MLOAD(m[0], s);
						a1 += tw[t] * CD_MLOAD(m[1], s + CD_VL * sizeof(float));
						a2 += tw[t] * CD_MLOAD(m[2], s + 2 * CD_VL * sizeof(float));
						a3 += tw[t] * CD_MLOAD(m[3], s + 3 * CD_VL * sizeof(float));
					}
					memcpy(acc + v * CD_VL, &a0, sizeof(vf));
					memcpy(acc + (v + 1) * CD_VL, &a1, sizeof(vf));
					memcpy(acc + (v + 2) * CD_VL, &a2, sizeof(vf));
					memcpy(acc + (v + 3) * CD_VL, &a3, sizeof(vf));
				}
				for (; v < nv; v++) {
					vf a0 = { 0 };

					for (t = 0; t < nt; t++)
						a0 += tw[t] * CD_MLOAD(cm[tkw[t] + v],
								       plane + (uintptr_t)toff[t] +
								       v * CD_VL * sizeof(float));
					memcpy(acc + v * CD_VL, &a0, sizeof(vf));
				}
				CD_FN(store_row)(c, ((n * c->G + ch) * c->OH + oh) * OW, acc,
						 CD_FN(bias)(c, ch));
			}
		}
	return 0;
}

#if CD_VL == 16
/*
 * Depthwise rows of column stride 2 read in place (AVX-512): output
 * column ow of tap kw reads input column 2 ow + kw dW - pl, so a vector
 * of 16 outputs is the even lanes of 32 input columns: two masked loads
 * (columns outside the row read 0.0) and one permute, instead of copying
 * the kH rows of every channel split by column phase.  The same sums as
 * dw().  Returns -1 (nothing written) when it does not apply.
 */
CD_TARGET CD_CONTRACT CD_NO_LIBCALLS __attribute__((noinline)) static int
CD_FN(dw_ip_s2)(const struct conv_args *c)
{
	typedef CD_FN(vf) vf;
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
					     20, 22, 24, 26, 28, 30);
	_Alignas(64) float acc[CD_DW_MAX];
	__mmask16 cm[2 * CD_IP_DW_MASKS];
	float tw[CD_KT];
	intptr_t toff[CD_KT];
	uint32_t tidx[CD_KT], tkw[CD_KT];
	size_t kH = c->kH, kW = c->kW, taps = kH * kW, OW = c->OW, W = c->W;
	size_t nv = cd_div_up(OW, CD_VL), n, ch, oh, kh, kw, v, t, nt;

	if (c->sW != 2 || c->in_f16 || taps > CD_KT || nv * CD_VL > CD_DW_MAX ||
	    kW * nv > CD_IP_DW_MASKS)
		return -1;
	/* per kw and output vector, the input columns of its two loads inside the row */
	for (kw = 0; kw < kW; kw++)
		for (v = 0; v < nv; v++) {
			int64_t b = (int64_t)(2 * CD_VL * v + kw * c->dW) - (int64_t)c->pl;

			cm[2 * (kw * nv + v)] = CD_FN(lanes)(-b, (int64_t)W - b);
			cm[2 * (kw * nv + v) + 1] = CD_FN(lanes)(-b - 16, (int64_t)W - b - 16);
		}
	for (n = 0; n < c->N; n++)
		for (oh = 0; oh < c->OH; oh++) {
			int64_t ih0 = (int64_t)(oh * c->sH) - (int64_t)c->pt;

			nt = 0;
			for (kh = 0; kh < kH; kh++) {
				int64_t ih = ih0 + (int64_t)(kh * c->dH);

				if (ih < 0 || ih >= (int64_t)c->H)
					continue;
				for (kw = 0; kw < kW; kw++) {
					toff[nt] = (intptr_t)((ih * (int64_t)W +
							       (int64_t)(kw * c->dW) -
							       (int64_t)c->pl) *
							      (int64_t)sizeof(float));
					tkw[nt] = (uint32_t)(2 * kw * nv);
					tidx[nt++] = (uint32_t)(kh * kW + kw);
				}
			}
			for (ch = 0; ch < c->G; ch++) {
				uintptr_t plane = (uintptr_t)c->in +
						  (n * c->G + ch) * c->H * W * sizeof(float);
				const float *w = (const float *)c->w + ch * taps;

				for (t = 0; t < nt; t++)
					tw[t] = w[tidx[t]];
				/* two independent sums at a time: FMA latency */
				for (v = 0; v + 2 <= nv; v += 2) {
					vf a0 = { 0 }, a1 = { 0 };

					for (t = 0; t < nt; t++) {
						uintptr_t s = plane + (uintptr_t)toff[t] +
							      2 * v * CD_VL * sizeof(float);
						const __mmask16 *m = cm + tkw[t] + 2 * v;
						__m512 x0 = _mm512_permutex2var_ps(
							_mm512_maskz_loadu_ps(m[0], (const void *)s), ev,
							_mm512_maskz_loadu_ps(m[1], (const void *)(s + 64)));
						__m512 x1 = _mm512_permutex2var_ps(
							_mm512_maskz_loadu_ps(m[2], (const void *)(s + 128)), ev,
							_mm512_maskz_loadu_ps(m[3], (const void *)(s + 192)));

						a0 += tw[t] * (vf)x0;
						a1 += tw[t] * (vf)x1;
					}
					memcpy(acc + v * CD_VL, &a0, sizeof(vf));
					memcpy(acc + (v + 1) * CD_VL, &a1, sizeof(vf));
				}
				for (; v < nv; v++) {
					vf a0 = { 0 };

					for (t = 0; t < nt; t++) {
						uintptr_t s = plane + (uintptr_t)toff[t] +
							      2 * v * CD_VL * sizeof(float);
						const __mmask16 *m = cm + tkw[t] + 2 * v;

						a0 += tw[t] * (vf)_mm512_permutex2var_ps(
							_mm512_maskz_loadu_ps(m[0], (const void *)s), ev,
							_mm512_maskz_loadu_ps(m[1], (const void *)(s + 64)));
					}
					memcpy(acc + v * CD_VL, &a0, sizeof(vf));
				}
				CD_FN(store_row)(c, ((n * c->G + ch) * c->OH + oh) * OW, acc,
						 CD_FN(bias)(c, ch));
			}
		}
	return 0;
}
#endif
