/* SPDX-License-Identifier: MIT */
/*
 * conv.c - CONV2D: grouped, strided, dilated, padded 2-D convolution.
 *
 * Runs as a direct convolution over zero-padded phase planes of the input
 * (conv_direct.c).  Shapes whose single band of output rows does not fit
 * that engine's fixed scratch run on the MATMUL engine instead: for each
 * image n and group g,
 *   out[n][g] [Cout/g][OH*OW] (+)= weight[g] [Cout/g][K] x im2col [K][OH*OW]
 * with K = Cin/g * kH * kW, the im2col matrix gathered panel by panel by
 * the matmul's B-packing step (mm_impl.h), never materialised whole.
 */
#include "cl_opt.h"
#include "cl_common.h"
#include "matmul.h"
#include "mm_args.h"
#include "conv_args.h"

enum {
	P_N, P_CIN, P_H, P_W, P_COUT, P_KH, P_KW, P_SH, P_SW, P_PT, P_PL, P_PB,
	P_PR, P_DH, P_DW, P_G, P_FLAGS, P_COUNT
};

static const char *const conv_pname[P_COUNT] = {
	"N", "Cin", "H", "W", "Cout", "kH", "kW", "strideH", "strideW",
	"padTop", "padLeft", "padBottom", "padRight", "dilH", "dilW", "groups",
	"flags"
};

/* Product of u64 factors, -1 if above UINT32_MAX (factors may be big). */
static int conv_prod(const uint64_t *f, int n, uint64_t *out)
{
	uint64_t p = 1;
	int i;

	for (i = 0; i < n; i++) {
		if (f[i] > UINT32_MAX)
			return -1;
		p *= f[i];
		if (p > UINT32_MAX)
			return -1;
	}
	*out = p;
	return 0;
}

struct conv_dims {
	uint64_t OH, OW, cin_g, cout_g;
};

static void conv_out_dims(const uint32_t *p, struct conv_dims *d)
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

static int conv_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	static const int nonzero[] = { P_N, P_CIN, P_H, P_W, P_COUT, P_KH,
				       P_KW, P_SH, P_SW, P_DH, P_DW, P_G };
	static const char *const opn[] = { "in", "weight", "out", "bias" };
	const uint32_t *p;
	struct conv_dims d;
	uint64_t f[4], want[4];
	uint32_t i;
	int r = cl_check_counts(v, "CONV2D", 3, 4, P_COUNT, P_COUNT + 2, why,
				 len);

	if (r)
		return r;
	p = v->params;
	for (i = 0; i < v->num_ops; i++) {
		r = cl_check_dtype_float(v, i, "CONV2D", opn[i], why, len);
		if (r)
			return r;
	}
	r = cl_check_same_dtype(v, 0, 1, "CONV2D", "in", "weight", why, len);
	if (r)
		return r;
	for (i = 0; i < sizeof(nonzero) / sizeof(nonzero[0]); i++)
		if (p[nonzero[i]] == 0)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "CONV2D: %s is 0", conv_pname[nonzero[i]]);
	if (p[P_FLAGS] & ~(IPUX_CONV_ACCUMULATE | IPUX_CONV_RELU | IPUX_CONV_CLIP))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "CONV2D: unknown flags 0x%x", p[P_FLAGS]);
	r = cl_act_check(v, "CONV2D", p[P_FLAGS], IPUX_CONV_RELU, IPUX_CONV_CLIP,
			 P_COUNT, why, len);
	if (r)
		return r;
	if (p[P_CIN] % p[P_G] || p[P_COUT] % p[P_G])
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "CONV2D: groups %u does not divide Cin %u and "
			      "Cout %u", p[P_G], p[P_CIN], p[P_COUT]);
	conv_out_dims(p, &d);
	if (d.OH == 0 || d.OW == 0)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "CONV2D: dilated kernel larger than the padded "
			      "input");
	f[0] = p[P_N]; f[1] = p[P_CIN]; f[2] = p[P_H]; f[3] = p[P_W];
	if (conv_prod(f, 4, &want[0]))
		goto big;
	f[0] = p[P_COUT]; f[1] = d.cin_g; f[2] = p[P_KH]; f[3] = p[P_KW];
	if (conv_prod(f, 4, &want[1]))
		goto big;
	f[0] = p[P_N]; f[1] = p[P_COUT]; f[2] = d.OH; f[3] = d.OW;
	if (conv_prod(f, 4, &want[2]))
		goto big;
	want[3] = p[P_COUT];
	r = cl_check_count(v, 0, want[0], "CONV2D", "in", "N*Cin*H*W", why,
			   len);
	if (!r)
		r = cl_check_count(v, 1, want[1], "CONV2D", "weight",
				   "Cout*Cin/groups*kH*kW", why, len);
	if (!r)
		r = cl_check_count(v, 2, want[2], "CONV2D", "out",
				   "N*Cout*OH*OW", why, len);
	if (!r && v->num_ops == 4)
		r = cl_check_count(v, 3, want[3], "CONV2D", "bias", "Cout",
				   why, len);
	return r;
big:
	return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
		      "CONV2D: an operand would exceed 2^32-1 elements");
}

static uint64_t conv_cost(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	struct conv_dims d;
	uint64_t macs, rate = v->ops[0].dtype == IPUX_DT_F16 ? 64 : 16;

	conv_out_dims(p, &d);
	/* out elements x (Cin/g * kH * kW) */
	macs = cl_sat_mul(cl_sat_mul(v->ops[2].count, d.cin_g),
			  (uint64_t)p[P_KH] * p[P_KW]);
	return CL_VERTEX_OVERHEAD + cl_div_up(macs, rate) +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 1) +
	       cl_cost_stream(v->ops[2].count, v->ops[2].dtype, 1);
}

/* The im2col path: out = bias, then the matmul engine accumulates. */
static void conv_run_im2col(const struct ipu_vertex_ctx *v, int level)
{
	const uint32_t *p = v->params;
	struct conv_dims d;
	struct mm_conv cv;
	struct mm_args g;
	int acc = !!(p[P_FLAGS] & IPUX_CONV_ACCUMULATE);

	conv_out_dims(p, &d);
	if (v->num_ops == 4) {
		/* out = (acc ? out : 0) + bias, then accumulate the conv */
		uint32_t odt = v->ops[2].dtype, bdt = v->ops[3].dtype;
		void *out = IPU_OP_PTR(v, 2, void);
		const void *bias = IPU_OP_PTR(v, 3, const void);
		size_t n, oc, i0, i, plane = d.OH * d.OW;

		for (n = 0; n < p[P_N]; n++)
			for (oc = 0; oc < p[P_COUT]; oc++) {
				float b = cl_getf(bias, bdt, oc);
				size_t base = (n * p[P_COUT] + oc) * plane;

				for (i0 = 0; i0 < plane; i0 += CL_BLK) {
					size_t m = plane - i0 < CL_BLK ? plane - i0
								       : CL_BLK;
					float buf[CL_BLK];

					if (acc) {
						cl_load_f(out, odt, base + i0, buf, m);
						for (i = 0; i < m; i++)
							buf[i] += b;
					} else {
						for (i = 0; i < m; i++)
							buf[i] = b;
					}
					cl_store_f(out, odt, base + i0, buf, m);
				}
			}
		acc = 1;
	}
	cv.H = p[P_H];
	cv.W = p[P_W];
	cv.kH = p[P_KH];
	cv.kW = p[P_KW];
	cv.sH = p[P_SH];
	cv.sW = p[P_SW];
	cv.pt = p[P_PT];
	cv.pl = p[P_PL];
	cv.dH = p[P_DH];
	cv.dW = p[P_DW];
	cv.OW = d.OW;
	g.a = IPU_OP_PTR(v, 1, const void);
	g.b = IPU_OP_PTR(v, 0, const void);
	g.c = IPU_OP_PTR(v, 2, void);
	g.batch = (size_t)p[P_N] * p[P_G];
	g.M = d.cout_g;
	g.N = d.OH * d.OW;
	g.K = d.cin_g * p[P_KH] * p[P_KW];
	g.a_mod = p[P_G];
	g.a_bs = g.M * g.K;
	g.b_mod = g.batch;
	g.b_bs = d.cin_g * cv.H * cv.W;
	g.c_bs = g.M * g.N;
	g.f16 = v->ops[0].dtype == IPUX_DT_F16;
	g.c_f16 = v->ops[2].dtype == IPUX_DT_F16;
	g.trans_b = 0;
	g.accumulate = acc;
	g.conv = &cv;
	cl_act_of(v, p[P_FLAGS], IPUX_CONV_RELU, IPUX_CONV_CLIP, P_COUNT, &g.act);
	ipu_mm_exec(&g, level);
}


int ipu_conv_run_level(const struct ipu_vertex_ctx *v, int level, int im2col)
{
	const uint32_t *p = v->params;
	struct conv_dims d;
	struct conv_args a;

	conv_out_dims(p, &d);
	a.in = IPU_OP_PTR(v, 0, const void);
	a.w = IPU_OP_PTR(v, 1, const void);
	a.out = IPU_OP_PTR(v, 2, void);
	a.bias = v->num_ops == 4 ? IPU_OP_PTR(v, 3, const void) : NULL;
	a.in_f16 = v->ops[0].dtype == IPUX_DT_F16;
	a.out_f16 = v->ops[2].dtype == IPUX_DT_F16;
	a.bias_f16 = v->num_ops == 4 && v->ops[3].dtype == IPUX_DT_F16;
	a.accumulate = !!(p[P_FLAGS] & IPUX_CONV_ACCUMULATE);
	a.N = p[P_N];
	a.G = p[P_G];
	a.cin_g = d.cin_g;
	a.cout_g = d.cout_g;
	a.H = p[P_H];
	a.W = p[P_W];
	a.OH = d.OH;
	a.OW = d.OW;
	a.kH = p[P_KH];
	a.kW = p[P_KW];
	a.sH = p[P_SH];
	a.sW = p[P_SW];
	a.pt = p[P_PT];
	a.pl = p[P_PL];
	a.dH = p[P_DH];
	a.dW = p[P_DW];
	cl_act_of(v, p[P_FLAGS], IPUX_CONV_RELU, IPUX_CONV_CLIP, P_COUNT, &a.act);
	if (im2col || ipu_conv_direct(&a, level))
		conv_run_im2col(v, level);
	return 0;
}

static int conv_run(const struct ipu_vertex_ctx *v)
{
	return ipu_conv_run_level(v, ipu_mm_level(v), 0);
}

const struct ipu_codelet ipu_cl_conv2d = {
	"CONV2D", conv_check, conv_cost, conv_run
};
