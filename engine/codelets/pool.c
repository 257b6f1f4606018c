/* SPDX-License-Identifier: MIT */
/*
 * pool.c - POOL2D: max and average pooling over [NC][H][W] planes.
 *
 * Window loops are clipped to the input (padding is never visited), so
 * the work per output is bounded by the input plane whatever the params.
 */
#include "cl_opt.h"
#include "cl_common.h"

enum {
	Q_OP, Q_NC, Q_H, Q_W, Q_KH, Q_KW, Q_SH, Q_SW, Q_PT, Q_PL, Q_PB, Q_PR,
	Q_DH, Q_DW, Q_FLAGS, Q_COUNT
};

static const char *const pool_pname[Q_COUNT] = {
	"op", "NC", "H", "W", "kH", "kW", "strideH", "strideW", "padTop",
	"padLeft", "padBottom", "padRight", "dilH", "dilW", "flags"
};

static void pool_out_dims(const uint32_t *p, uint64_t *oh, uint64_t *ow)
{
	uint64_t hp = (uint64_t)p[Q_H] + p[Q_PT] + p[Q_PB];
	uint64_t wp = (uint64_t)p[Q_W] + p[Q_PL] + p[Q_PR];
	uint64_t kh = (uint64_t)p[Q_DH] * (p[Q_KH] - 1) + 1;
	uint64_t kw = (uint64_t)p[Q_DW] * (p[Q_KW] - 1) + 1;

	*oh = hp >= kh ? (hp - kh) / p[Q_SH] + 1 : 0;
	*ow = wp >= kw ? (wp - kw) / p[Q_SW] + 1 : 0;
}

static int pool_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	static const int nonzero[] = { Q_NC, Q_H, Q_W, Q_KH, Q_KW, Q_SH,
				       Q_SW, Q_DH, Q_DW };
	const uint32_t *p;
	uint64_t oh, ow, nin, nout;
	uint32_t i;
	int r = cl_check_counts(v, "POOL2D", 2, 2, Q_COUNT, Q_COUNT, why, len);

	if (r)
		return r;
	p = v->params;
	r = cl_check_dtype_float(v, 0, "POOL2D", "in", why, len);
	if (!r)
		r = cl_check_same_dtype(v, 0, 1, "POOL2D", "in", "out", why,
					len);
	if (r)
		return r;
	if (p[Q_OP] > IPUX_POOL_AVG)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "POOL2D: unknown op %u", p[Q_OP]);
	if (p[Q_FLAGS] & ~IPUX_POOL_COUNT_PAD)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "POOL2D: unknown flags 0x%x", p[Q_FLAGS]);
	for (i = 0; i < sizeof(nonzero) / sizeof(nonzero[0]); i++)
		if (p[nonzero[i]] == 0)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "POOL2D: %s is 0", pool_pname[nonzero[i]]);
	pool_out_dims(p, &oh, &ow);
	if (!oh || !ow)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "POOL2D: dilated window larger than the padded "
			      "input");
	r = cl_check_dims(p + Q_NC, 3, &nin, "POOL2D", "NC*H*W", why, len);
	if (r)
		return r;
	if (oh > UINT32_MAX || ow > UINT32_MAX ||
	    (nout = (uint64_t)p[Q_NC] * oh) > UINT32_MAX ||
	    (nout *= ow) > UINT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "POOL2D: out would exceed 2^32-1 elements");
	r = cl_check_count(v, 0, nin, "POOL2D", "in", "NC*H*W", why, len);
	if (!r)
		r = cl_check_count(v, 1, nout, "POOL2D", "out", "NC*OH*OW",
				   why, len);
	return r;
}

static uint64_t pool_cost(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint64_t win = (uint64_t)p[Q_KH] * p[Q_KW];

	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(cl_sat_mul(v->ops[1].count, win),
			      v->ops[0].dtype, 1) +
	       cl_sat_mul(v->ops[1].count, 2);
}

/*
 * Valid window taps: t in [*lo, *hi) with 0 <= start + t*d < n, t < k
 * (start may be negative; |start| < 2^35 here).
 */
static void pool_range(int64_t start, uint64_t d, uint64_t k, uint64_t n,
		       uint64_t *lo, uint64_t *hi)
{
	uint64_t l = 0, h;

	if (d == 1) { /* the common case, without divisions */
		int64_t lo_ = start < 0 ? -start : 0;
		int64_t hi_ = (int64_t)n - start;

		if (hi_ > (int64_t)k)
			hi_ = (int64_t)k;
		if (hi_ < lo_)
			hi_ = lo_;
		*lo = (uint64_t)lo_;
		*hi = (uint64_t)hi_;
		return;
	}
	if (start < 0)
		l = ((uint64_t)(-start) + d - 1) / d;
	if (start >= (int64_t)n) {
		*lo = *hi = 0;
		return;
	}
	/* start + t*d < n  <=>  t < (n - start) / d rounded up */
	h = ((uint64_t)((int64_t)n - start) + d - 1) / d;
	if (h > k)
		h = k;
	*lo = l;
	*hi = h > l ? h : l;
}

/*
 * Max pooling of 8 outputs [o0, o0+8) of one output row whose windows lie
 * inside the input horizontally: the same per-element update in the same
 * (kh, kw) order as the scalar loop, lane by lane, so the chosen input
 * (NaN first, the first of equal values) is the same bits.  On a ResNet
 * stem this ran at a fraction of the convolutions' speed one output at a
 * time.
 */
typedef float pool_vf __attribute__((vector_size(16)));
typedef int32_t pool_vi __attribute__((vector_size(16)));

/* m = x where x is a NaN or above m and m is no NaN (128-bit: every x86-64) */
static inline pool_vf pool_vmax(pool_vf m, pool_vf x)
{
	pool_vi sel = ((x > m) | (x != x)) & (m == m);

	return (pool_vf)(((pool_vi)x & sel) | ((pool_vi)m & ~sel));
}

static void pool_max8(const float *in, size_t plane, size_t W, int64_t hs,
		      uint64_t h0, uint64_t h1, const uint32_t *p, uint64_t o0,
		      float *dst)
{
	size_t sW = p[Q_SW], dH = p[Q_DH], dW = p[Q_DW], kW = p[Q_KW], kw, l;
	pool_vf m0 = { -INFINITY, -INFINITY, -INFINITY, -INFINITY }, m1 = m0;
	uint64_t kh;

	for (kh = h0; kh < h1; kh++) {
		const float *row = in + plane +
				   (size_t)(hs + (int64_t)(kh * dH)) * W +
				   (size_t)(o0 * sW) - p[Q_PL];

		for (kw = 0; kw < kW; kw++) {
			const float *r = row + kw * dW;
			pool_vf x0, x1;

			if (sW == 1) {
				memcpy(&x0, r, sizeof(x0));
				memcpy(&x1, r + 4, sizeof(x1));
			} else if (sW == 2) {
				pool_vf a, b, c, d;

				memcpy(&a, r, sizeof(a));
				memcpy(&b, r + 4, sizeof(b));
				memcpy(&c, r + 8, sizeof(c));
				/* the last lane reads r[14]: 15 floats, not 16 */
				memcpy(&d, r + 11, sizeof(d));
#ifdef __clang__
				x0 = __builtin_shufflevector(a, b, 0, 2, 4, 6);
				x1 = __builtin_shufflevector(c, d, 0, 2, 5, 7);
#else
				x0 = __builtin_shuffle(a, b, (pool_vi){ 0, 2, 4, 6 });
				x1 = __builtin_shuffle(c, d, (pool_vi){ 0, 2, 5, 7 });
#endif
			} else {
				for (l = 0; l < 4; l++) {
					x0[l] = r[l * sW];
					x1[l] = r[(l + 4) * sW];
				}
			}
			m0 = pool_vmax(m0, x0);
			m1 = pool_vmax(m1, x1);
		}
	}
	memcpy(dst, &m0, sizeof(m0));
	memcpy(dst + 4, &m1, sizeof(m1));
}

static int pool_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t dt = v->ops[0].dtype;
	int is_max = p[Q_OP] == IPUX_POOL_MAX;
	int count_pad = !!(p[Q_FLAGS] & IPUX_POOL_COUNT_PAD);
	size_t H = p[Q_H], W = p[Q_W], c;
	uint64_t OH, OW, oh, ow;
	const void *in = IPU_OP_PTR(v, 0, const void);
	void *out = IPU_OP_PTR(v, 1, void);
	double full = (double)p[Q_KH] * p[Q_KW];
	uint64_t vlo, vhi, span;
	int fast;

	pool_out_dims(p, &OH, &OW);
	/* outputs [vlo, vhi) of a row have their windows inside the row */
	vlo = ((uint64_t)p[Q_PL] + p[Q_SW] - 1) / p[Q_SW];
	span = (uint64_t)p[Q_DW] * (p[Q_KW] - 1);
	vhi = W + p[Q_PL] > span ? (W + p[Q_PL] - span - 1) / p[Q_SW] + 1 : 0;
	if (vhi > OW)
		vhi = OW;
	fast = is_max && dt == IPUX_DT_F32 && vhi >= vlo + 8;
	for (c = 0; c < p[Q_NC]; c++) {
		size_t plane = c * H * W;

		for (oh = 0; oh < OH; oh++) {
			int64_t hs = (int64_t)(oh * p[Q_SH]) - (int64_t)p[Q_PT];
			uint64_t h0, h1, kh;

			pool_range(hs, p[Q_DH], p[Q_KH], H, &h0, &h1);
			if (fast) {
				float *o = (float *)out + (c * OH + oh) * OW;

				for (ow = vlo; ow + 8 <= vhi; ow += 8)
					pool_max8(in, plane, W, hs, h0, h1, p, ow, o + ow);
			}
			for (ow = 0; ow < OW; ow++) {
				if (fast && ow == vlo) {
					ow = vlo + (vhi - vlo) / 8 * 8;
					if (ow >= OW)
						break;
				}
				int64_t ws = (int64_t)(ow * p[Q_SW]) -
					     (int64_t)p[Q_PL];
				uint64_t w0, w1, cnt;
				float m = -INFINITY;
				double s = 0;

				pool_range(ws, p[Q_DW], p[Q_KW], W, &w0, &w1);
				cnt = (h1 - h0) * (w1 - w0);
				for (kh = h0; kh < h1; kh++) {
					size_t row = plane +
						     (size_t)(hs + (int64_t)(kh * p[Q_DH])) * W;
					size_t c0 = row + (size_t)(ws + (int64_t)(w0 * p[Q_DW]));
					size_t nw = (size_t)(w1 - w0), dw = p[Q_DW], q;

					if (dt == IPUX_DT_F32) {
						const float *r = (const float *)in + c0;

						if (is_max) {
							for (q = 0; q < nw; q++) {
								float x = r[q * dw];

								m = (((x > m) | (x != x)) & (m == m)) ? x : m;
							}
						} else {
							for (q = 0; q < nw; q++)
								s += r[q * dw];
						}
						continue;
					}
					for (q = 0; q < nw; q++) {
						float x = cl_getf(in, dt, c0 + q * dw);

						if (is_max)
							m = (((x > m) | (x != x)) & (m == m)) ? x : m;
						else
							s += x;
					}
				}
				if (!is_max) {
					double div = count_pad ? full : (double)cnt;

					m = div > 0 ? (float)(s / div) : 0.0f;
				}
				cl_setf(out, dt, (c * OH + oh) * OW + ow, m);
			}
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_pool2d = {
	"POOL2D", pool_check, pool_cost, pool_run
};
