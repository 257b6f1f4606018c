/* SPDX-License-Identifier: MIT */
/*
 * nms.c - NMS: ONNX NonMaxSuppression's greedy selection on one tile, its
 * data-dependent number of results written into a static upper bound plus
 * a run-time count.
 *
 * Per batch b and class c: the boxes whose score passes the threshold
 * (all but NaN without one), in descending score order, ties by lower box
 * index; a box is kept when its IoU with every box kept before it is at
 * most the IoU threshold, until max_out are kept.  Corners and IoU are
 * computed in double from the stored values, as the reference evaluator
 * does, so that both select the same boxes.
 */
#include "cl_common.h"

/* Does candidate a come before candidate b (score descending, index ascending)? */
static int nms_before(const void *sc, uint32_t dt, size_t row, int32_t a, int32_t b)
{
	double sa = cl_getf(sc, dt, row + (size_t)a), sb = cl_getf(sc, dt, row + (size_t)b);

	return sa > sb || (sa == sb && a < b);
}

/* Heap sort of cand[0..n) into output order (root: the last one). */
static void nms_sift(const void *sc, uint32_t dt, size_t row, int32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		int32_t t;

		if (l < n && nms_before(sc, dt, row, h[m], h[l]))
			m = l;
		if (r < n && nms_before(sc, dt, row, h[m], h[r]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void nms_sort(const void *sc, uint32_t dt, size_t row, int32_t *h, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		nms_sift(sc, dt, row, h, n, i);
	for (size_t k = n; k > 1; k--) {
		int32_t t = h[0];

		h[0] = h[k - 1];
		h[k - 1] = t;
		nms_sift(sc, dt, row, h, k - 1, 0);
	}
}

/* Box k (element offset of its 4 values) as (y1, x1, y2, x2), y1 <= y2, x1 <= x2. */
static void nms_corners(const void *bx, uint32_t dt, size_t at, int center, double *c)
{
	double v[4];

	for (int i = 0; i < 4; i++)
		v[i] = cl_getf(bx, dt, at + (size_t)i);
	if (center) {
		c[0] = v[1] - v[3] / 2;
		c[1] = v[0] - v[2] / 2;
		c[2] = v[1] + v[3] / 2;
		c[3] = v[0] + v[2] / 2;
		return;
	}
	c[0] = fmin(v[0], v[2]);
	c[1] = fmin(v[1], v[3]);
	c[2] = fmax(v[0], v[2]);
	c[3] = fmax(v[1], v[3]);
}

static double nms_iou(const double *a, const double *b)
{
	double ih = fmin(a[2], b[2]) - fmax(a[0], b[0]), iw = fmin(a[3], b[3]) - fmax(a[1], b[1]);
	double aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]), in;

	if (ih <= 0 || iw <= 0 || aa <= 0 || ab <= 0)
		return 0;
	in = ih * iw;
	return in / (aa + ab - in);
}

static int nms_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p;
	uint32_t dt;
	uint64_t B, C, N, per, bound;
	int r = cl_check_counts(v, "NMS", 5, 5, 7, 7, why, len);

	if (r)
		return r;
	p = v->params;
	dt = v->ops[0].dtype;
	if (!cl_is_float(dt))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE, "NMS: boxes is %s, expected F32 or F16",
				  cl_dt_name(dt));
	r = cl_check_same_dtype(v, 0, 1, "NMS", "boxes", "scores", why, len);
	if (r)
		return r;
	if (v->ops[2].dtype != IPUX_DT_I64 || v->ops[3].dtype != IPUX_DT_I32 ||
	    v->ops[4].dtype != IPUX_DT_I32)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
				  "NMS: selected, count and scratch are %s, %s and %s, expected I64, I32 and I32",
				  cl_dt_name(v->ops[2].dtype), cl_dt_name(v->ops[3].dtype),
				  cl_dt_name(v->ops[4].dtype));
	if (p[6] & ~(IPUX_NMS_CENTER | IPUX_NMS_SCORE_THRESHOLD))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE, "NMS: unknown flags 0x%x", p[6]);
	B = p[0];
	C = p[1];
	N = p[2];
	if (!B || !C || !N || !p[3] || N > INT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				  "NMS: batches %u, classes %u, boxes %u, max_out %u: each must be >= 1, boxes < 2^31",
				  p[0], p[1], p[2], p[3]);
	per = p[3] < N ? p[3] : N;
	bound = B * C * per;	/* each factor < 2^32: fits after the checks below */
	if (B * N * 4 > UINT32_MAX || B * C * N > UINT32_MAX || bound * 3 > UINT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE, "NMS: operands beyond 2^32-1 elements");
	r = cl_check_count(v, 0, B * N * 4, "NMS", "boxes", "batches*boxes*4", why, len);
	if (!r)
		r = cl_check_count(v, 1, B * C * N, "NMS", "scores", "batches*classes*boxes", why, len);
	if (!r)
		r = cl_check_count(v, 2, bound * 3, "NMS", "selected", "batches*classes*min(boxes,max_out)*3",
				   why, len);
	if (!r)
		r = cl_check_count(v, 3, 1, "NMS", "count", "1", why, len);
	if (!r)
		r = cl_check_count(v, 4, 2 * N, "NMS", "scratch", "2*boxes", why, len);
	if (r)
		return r;
	/* the outputs and the scratch are written while the inputs are read */
	for (uint32_t a = 0; a < 5; a++)
		for (uint32_t b = a < 2 ? 2 : a + 1; b < 5; b++)
			if (cl_overlap(v, a, b))
				return ipu_errorf(why, len, IPUX_E_OPERAND_SHAPE, "NMS: operands overlap");
	return 0;
}

/* Sorting, then every candidate against every kept box (at most max_out). */
static uint64_t nms_cost(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint64_t N = p[2], per = p[3] < N ? p[3] : N, lg = 1;

	while ((1ull << lg) < N + 1 && lg < 40)
		lg++;
	return CL_VERTEX_OVERHEAD +
	       cl_sat_mul((uint64_t)p[0] * p[1], cl_sat_mul(N, 2 * lg + 4) + cl_sat_mul(N, per) * 8);
}

static int nms_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	size_t B = p[0], C = p[1], N = p[2], maxo = p[3], per = maxo < N ? maxo : N;
	uint32_t dt = v->ops[0].dtype;
	const void *bx = IPU_OP_PTR(v, 0, const void), *sc = IPU_OP_PTR(v, 1, const void);
	int64_t *sel = IPU_OP_PTR(v, 2, int64_t);
	int32_t *count = IPU_OP_PTR(v, 3, int32_t);
	int32_t *cand = IPU_OP_PTR(v, 4, int32_t), *kept = cand + N;
	int center = !!(p[6] & IPUX_NMS_CENTER), has_st = !!(p[6] & IPUX_NMS_SCORE_THRESHOLD);
	float iou_t, score_t;
	size_t cnt = 0;

	memcpy(&iou_t, &p[4], sizeof(iou_t));
	memcpy(&score_t, &p[5], sizeof(score_t));
	for (size_t b = 0; b < B; b++)
		for (size_t c = 0; c < C; c++) {
			size_t row = (b * C + c) * N, nc = 0, taken = 0;

			for (size_t k = 0; k < N; k++) {
				double s = cl_getf(sc, dt, row + k);

				if (s == s && (!has_st || s > (double)score_t))
					cand[nc++] = (int32_t)k;
			}
			nms_sort(sc, dt, row, cand, nc);
			for (size_t i = 0; i < nc && taken < per; i++) {
				double a[4], o[4];
				int keep = 1;

				nms_corners(bx, dt, (b * N + (size_t)cand[i]) * 4, center, a);
				for (size_t j = 0; j < taken && keep; j++) {
					nms_corners(bx, dt, (b * N + (size_t)kept[j]) * 4, center, o);
					keep = nms_iou(a, o) <= (double)iou_t;
				}
				if (!keep)
					continue;
				kept[taken++] = cand[i];
				sel[cnt * 3] = (int64_t)b;
				sel[cnt * 3 + 1] = (int64_t)c;
				sel[cnt * 3 + 2] = cand[i];
				cnt++;
			}
		}
	*count = (int32_t)cnt;
	for (size_t i = cnt * 3; i < B * C * per * 3; i++)
		sel[i] = -1;
	return 0;
}

const struct ipu_codelet ipu_cl_nms = { "NMS", nms_check, nms_cost, nms_run };
