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

/* the lanes of one vector whose flags are set */
CD_TARGET static inline CD_MASK_T CD_FN(ip_mask)(const unsigned char *on)
{
	CD_MASK_T m;
#if CD_VL == 16
	unsigned l;

	m = 0;
	for (l = 0; l < 16; l++)
		m |= (CD_MASK_T)((unsigned)on[l] << l);
#else
	int32_t e[8];
	unsigned l;

	for (l = 0; l < 8; l++)
		e[l] = on[l] ? -1 : 0;
	memcpy(&m, e, sizeof(m));
#endif
	return m;
}

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

/*
 * The masks of band rows [oh0, oh0+bh): lane p of the band (output row
 * oh0 + p / W, column p % W) reads at tap (kh, kw) when that output
 * exists and its input lies inside the input.
 */
CD_TARGET static void CD_FN(ip_masks)(const struct conv_args *c, size_t oh0,
				      size_t bh, size_t nw, CD_MASK_T *mt)
{
	size_t W = c->W, ldm = nw / CD_VL, kh, kw, v, l;
	unsigned char on[CD_VL];

	for (kh = 0; kh < c->kH; kh++)
		for (kw = 0; kw < c->kW; kw++) {
			CD_MASK_T *mk = mt + (kh * c->kW + kw) * ldm;
			int64_t dy = (int64_t)(kh * c->dH) - (int64_t)c->pt;
			int64_t dx = (int64_t)(kw * c->dW) - (int64_t)c->pl;
			size_t p = 0, oh = oh0, ow = 0;

			for (v = 0; v < ldm; v++) {
				for (l = 0; l < CD_VL; l++, p++) {
					int64_t ih = (int64_t)oh + dy, iw = (int64_t)ow + dx;

					on[l] = p < bh * W && ow < c->OW && ih >= 0 &&
						ih < (int64_t)c->H && iw >= 0 &&
						iw < (int64_t)W;
					if (++ow == W) {
						ow = 0;
						oh++;
					}
				}
				mk[v] = CD_FN(ip_mask)(on);
			}
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

	if (c->sH != 1 || c->sW != 1 || c->OW > W || c->in_f16 ||
	    cd_plan(c, CD_VL, CD_MR_T, CD_MR_W, &pl))
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
