/* SPDX-License-Identifier: MIT */
/*
 * fp8_conv.c - CONV2D_FP8: CONV2D with the weights stored in fp8 and
 * decoded in registers; the input F32, F16 or fp8, out and bias F32/F16.
 *
 * For each image, block of CB output channels (of one group) and output
 * row, a band of up to OWB output columns is accumulated in f32 on the
 * stack, starting from the bias.  For each (input channel, kh, kw) the
 * input row the kernel tap reads is gathered once (zero where it falls in
 * the padding) and multiplied into the CB accumulator rows by one decoded
 * weight each.  Sums run over (ci, kh, kw) in increasing order, multiply
 * and add never fused (contraction off in this file), so the result does
 * not depend on the host or the build flags.
 *
 * With per-channel weight scales (IPUX_CONV_CHANNEL_SCALES, the last
 * operand) the sum starts from 0 and is multiplied by its channel's power
 * of two (exact) before the bias is added, so one decode table serves every
 * channel.
 */
#include "cl_opt.h"
#include "fp8_cl.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

enum {
	P_N, P_CIN, P_H, P_W, P_COUT, P_KH, P_KW, P_SH, P_SW, P_PT, P_PL, P_PB,
	P_PR, P_DH, P_DW, P_G, P_FLAGS, P_SIN, P_SW8, P_COUNT
};

#define CV8_CB 8u
#define CV8_OWB 256u

static const char *const cv8_pname[P_COUNT] = {
	"N", "Cin", "H", "W", "Cout", "kH", "kW", "strideH", "strideW",
	"padTop", "padLeft", "padBottom", "padRight", "dilH", "dilW", "groups",
	"flags", "in scale", "weight scale"
};

struct cv8_dims {
	uint64_t OH, OW, cin_g, cout_g;
};

static void cv8_out_dims(const uint32_t *p, struct cv8_dims *d)
{
	uint64_t hp = (uint64_t)p[P_H] + p[P_PT] + p[P_PB];
	uint64_t wp = (uint64_t)p[P_W] + p[P_PL] + p[P_PR];
	uint64_t kh = (uint64_t)p[P_DH] * (p[P_KH] - 1) + 1;
	uint64_t kw = (uint64_t)p[P_DW] * (p[P_KW] - 1) + 1;

	d->OH = hp >= kh ? (hp - kh) / p[P_SH] + 1 : 0;
	d->OW = wp >= kw ? (wp - kw) / p[P_SW] + 1 : 0;
	d->cin_g = p[P_CIN] / p[P_G];
	d->cout_g = p[P_COUT] / p[P_G];
}

/* Product of four u64 factors; -1 above UINT32_MAX. */
static int cv8_prod4(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		     uint64_t *out)
{
	uint64_t f[4] = { a, b, c, d }, p = 1;
	int i;

	for (i = 0; i < 4; i++) {
		if (f[i] > UINT32_MAX)
			return -1;
		p *= f[i];
		if (p > UINT32_MAX)
			return -1;
	}
	*out = p;
	return 0;
}

static int cv8_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	static const int nonzero[] = { P_N, P_CIN, P_H, P_W, P_COUT, P_KH,
				       P_KW, P_SH, P_SW, P_DH, P_DW, P_G };
	const char *nm = "CONV2D_FP8";
	const uint32_t *p;
	struct cv8_dims d;
	uint64_t want[3];
	uint32_t i;
	int r = cl_check_counts(v, nm, 3, 5, P_COUNT, P_COUNT, why, len);
	uint32_t nsc;

	if (r)
		return r;
	p = v->params;
	nsc = !!(p[P_FLAGS] & IPUX_CONV_CHANNEL_SCALES);
	if (v->num_ops > 4 + nsc)
		return ipu_errorf(why, len, IPUX_E_OPERAND_COUNT,
			      "%s: %u operands, expected 3..%u%s", nm,
			      v->num_ops, 4 + nsc,
			      nsc ? "" : " (5 with CHANNEL_SCALES)");
	if (v->num_ops < 3 + nsc)
		return ipu_errorf(why, len, IPUX_E_OPERAND_COUNT,
			      "%s: %u operands, expected 4..5 with "
			      "CHANNEL_SCALES (the scales last)", nm,
			      v->num_ops);
	r = fp8_check_readable(v, 0, nm, "in", why, len);
	if (!r)
		r = fp8_check_fp8(v, 1, nm, "weight", why, len);
	if (!r)
		r = cl_check_dtype_float(v, 2, nm, "out", why, len);
	if (!r && v->num_ops == 4 + nsc)
		r = cl_check_dtype_float(v, 3, nm, "bias", why, len);
	if (!r)
		r = fp8_check_scale(v, 0, P_SIN, nm, "in", why, len);
	if (!r)
		r = fp8_check_scale(v, 1, P_SW8, nm, "weight", why, len);
	if (r)
		return r;
	for (i = 0; i < sizeof(nonzero) / sizeof(nonzero[0]); i++)
		if (p[nonzero[i]] == 0)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "%s: %s is 0", nm, cv8_pname[nonzero[i]]);
	if (p[P_FLAGS] & ~(IPUX_CONV_ACCUMULATE | IPUX_CONV_CHANNEL_SCALES))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: unknown flags 0x%x", nm, p[P_FLAGS]);
	if (p[P_CIN] % p[P_G] || p[P_COUT] % p[P_G])
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: groups %u does not divide Cin %u and Cout %u",
			      nm, p[P_G], p[P_CIN], p[P_COUT]);
	cv8_out_dims(p, &d);
	if (d.OH == 0 || d.OW == 0)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: dilated kernel larger than the padded input",
			      nm);
	if (cv8_prod4(p[P_N], p[P_CIN], p[P_H], p[P_W], &want[0]) ||
	    cv8_prod4(p[P_COUT], d.cin_g, p[P_KH], p[P_KW], &want[1]) ||
	    cv8_prod4(p[P_N], p[P_COUT], d.OH, d.OW, &want[2]))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: an operand would exceed 2^32-1 elements", nm);
	r = cl_check_count(v, 0, want[0], nm, "in", "N*Cin*H*W", why, len);
	if (!r)
		r = cl_check_count(v, 1, want[1], nm, "weight",
				   "Cout*Cin/groups*kH*kW", why, len);
	if (!r)
		r = cl_check_count(v, 2, want[2], nm, "out", "N*Cout*OH*OW",
				   why, len);
	if (!r && v->num_ops == 4 + nsc)
		r = cl_check_count(v, 3, p[P_COUT], nm, "bias", "Cout", why,
				   len);
	if (!r && nsc)
		r = fp8_check_channel_scales(v, v->num_ops - 1, 1, P_SW8,
					     p[P_COUT], nm, "Cout", why, len);
	return r;
}

static uint64_t cv8_cost(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	struct cv8_dims d;
	uint64_t macs;

	cv8_out_dims(p, &d);
	macs = cl_sat_mul(cl_sat_mul(v->ops[2].count, d.cin_g),
			  (uint64_t)p[P_KH] * p[P_KW]);
	return CL_VERTEX_OVERHEAD + cl_div_up(macs, 64) +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 1) +
	       cl_cost_stream(v->ops[2].count, v->ops[2].dtype, 1);
}

/* Gathers x[j] = row[ix0 + j*step] for j < n, 0 outside [0, W). */
static void cv8_gather(float *restrict x, const uint8_t *row, uint32_t dt,
		       const float *tab, int64_t ix0, size_t step, size_t n,
		       size_t W)
{
	size_t j;

	for (j = 0; j < n; j++) {
		int64_t ix = ix0 + (int64_t)(j * step);

		x[j] = (ix >= 0 && (uint64_t)ix < W)
			       ? fp8_get(row, dt, tab, (size_t)ix)
			       : 0.0f;
	}
}

static int cv8_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t idt = v->ops[0].dtype, odt = v->ops[2].dtype;
	uint32_t nsc = !!(p[P_FLAGS] & IPUX_CONV_CHANNEL_SCALES);
	uint32_t bdt = v->num_ops == 4 + nsc ? v->ops[3].dtype : 0;
	const uint8_t *in = IPU_OP_PTR(v, 0, const uint8_t);
	const uint8_t *w = IPU_OP_PTR(v, 1, const uint8_t);
	uint8_t *out = IPU_OP_PTR(v, 2, uint8_t);
	const uint8_t *bias = v->num_ops == 4 + nsc ? IPU_OP_PTR(v, 3, const uint8_t)
					      : NULL;
	size_t N = p[P_N], Cin = p[P_CIN], H = p[P_H], W = p[P_W];
	size_t kH = p[P_KH], kW = p[P_KW], sH = p[P_SH], sW = p[P_SW];
	size_t pt = p[P_PT], pl = p[P_PL], dH = p[P_DH], dW = p[P_DW];
	size_t G = p[P_G], Cout = p[P_COUT];
	int accumulate = !!(p[P_FLAGS] & IPUX_CONV_ACCUMULATE);
	size_t isz = ipux_dtype_size(idt);
	struct cv8_dims d;
	size_t OH, OW, cig, cog, n, g, co0, oh, ow0, ci, kh, kw, c, j;
	float tw[256], ti[256];
	float acc[CV8_CB][CV8_OWB], x[CV8_OWB];
	const int8_t *sc = nsc ? IPU_OP_PTR(v, v->num_ops - 1, const int8_t)
			       : NULL;

	cv8_out_dims(p, &d);
	OH = d.OH;
	OW = d.OW;
	cig = d.cin_g;
	cog = d.cout_g;
	fp8_table_of(v, 1, P_SW8, tw);
	if (cl_is_fp8(idt))
		fp8_table_of(v, 0, P_SIN, ti);
	for (n = 0; n < N; n++)
	for (g = 0; g < G; g++)
	for (co0 = 0; co0 < cog; co0 += CV8_CB) {
		size_t cb = cog - co0 < CV8_CB ? cog - co0 : CV8_CB;
		size_t cofirst = g * cog + co0;

		for (oh = 0; oh < OH; oh++)
		for (ow0 = 0; ow0 < OW; ow0 += CV8_OWB) {
			size_t nb = OW - ow0 < CV8_OWB ? OW - ow0 : CV8_OWB;

			for (c = 0; c < cb; c++) {
				float b0 = bias ? cl_getf(bias, bdt, cofirst + c)
						: 0.0f;

				for (j = 0; j < nb; j++)
					acc[c][j] = sc ? 0.0f : b0;
			}
			for (ci = 0; ci < cig; ci++) {
				size_t cin = g * cig + ci;

				for (kh = 0; kh < kH; kh++) {
					int64_t ih = (int64_t)(oh * sH + kh * dH) -
						     (int64_t)pt;
					const uint8_t *row;

					if (ih < 0 || (uint64_t)ih >= H)
						continue; /* padding adds nothing */
					row = in + ((n * Cin + cin) * H + (size_t)ih) *
							   W * isz;
					for (kw = 0; kw < kW; kw++) {
						int64_t ix0 = (int64_t)(ow0 * sW + kw * dW) -
							      (int64_t)pl;

						cv8_gather(x, row, idt, ti, ix0, sW, nb, W);
						for (c = 0; c < cb; c++) {
							size_t wi = (((cofirst + c) * cig + ci) *
								     kH + kh) * kW + kw;
							float wv = tw[w[wi]];
							float *restrict ac = acc[c];

							for (j = 0; j < nb; j++)
								ac[j] += wv * x[j];
						}
					}
				}
			}
			for (c = 0; c < cb; c++) {
				size_t o = ((n * Cout + cofirst + c) * OH + oh) * OW + ow0;
				float f = sc ? fp8_pow2f(sc[cofirst + c]) : 1.0f;
				float b0 = sc && bias ? cl_getf(bias, bdt, cofirst + c)
						      : 0.0f;

				for (j = 0; j < nb; j++) {
					float r = sc ? acc[c][j] * f + b0 : acc[c][j];

					if (accumulate)
						r = cl_getf(out, odt, o + j) + r;
					cl_setf(out, odt, o + j, r);
				}
			}
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_conv2d_fp8 = {
	"CONV2D_FP8", cv8_check, cv8_cost, cv8_run
};
