/* SPDX-License-Identifier: MIT */
/* eval_select.c - NonMaxSuppression (ONNX's greedy selection per batch and
 * class: scores above score_threshold in descending order, ties by index,
 * a box dropped when its IoU with a selected one exceeds iou_threshold),
 * NonZero and Compress. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "select.h"

struct cand {
	double score;
	int64_t box;
};

static int by_score(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->box < y->box ? -1 : x->box > y->box;
}

/* Box k of batch b as (y1, x1, y2, x2) with y1 <= y2, x1 <= x2. */
static void corners(const struct ir_tensor *bx, int64_t b, int64_t k, int center, double *c)
{
	double v[4];

	for (int i = 0; i < 4; i++)
		v[i] = ir_get_f(bx->data, bx->dtype, (size_t)((b * bx->dims[1] + k) * 4 + i));
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

static double iou(const double *a, const double *b)
{
	double ih = fmin(a[2], b[2]) - fmax(a[0], b[0]), iw = fmin(a[3], b[3]) - fmax(a[1], b[1]);
	double aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]), in;

	if (ih <= 0 || iw <= 0 || aa <= 0 || ab <= 0)
		return 0;
	in = ih * iw;
	return in / (aa + ab - in);
}

int64_t ir_nms_select(const struct ir_graph *g, const struct ir_node *n,
		      const struct ir_tensor *const *in, int nin, int64_t *sel, struct ir_error *e)
{
	const struct ir_tensor *bx = in[0], *sc = in[1];
	int64_t B = sc->dims[0], C = sc->dims[1], N = sc->dims[2], maxo = 0, cnt = 0;
	double iou_t = 0, score_t = -INFINITY;
	int center = (int)ir_attr_int(n, "center_point_box", 0), has_st = 0;
	struct cand *cd;
	double (*box)[4];

	if (nin > 2 && in[2] && ev_numel(in[2]))
		maxo = ir_get_i(in[2]->data, in[2]->dtype, 0);
	if (nin > 3 && in[3] && ev_numel(in[3]))
		iou_t = ir_get_f(in[3]->data, in[3]->dtype, 0);
	if (nin > 4 && in[4] && ev_numel(in[4])) {
		score_t = ir_get_f(in[4]->data, in[4]->dtype, 0);
		has_st = 1;
	}
	if (maxo <= 0 || !N)
		return 0;
	cd = malloc((size_t)N * sizeof(*cd));
	box = malloc((size_t)N * sizeof(*box));
	if (!cd || !box) {
		free(cd);
		free(box);
		ir_err(e, "out of memory");
		return -1;
	}
	for (int64_t b = 0; b < B; b++) {
		for (int64_t k = 0; k < N; k++)
			corners(bx, b, k, center, box[k]);
		for (int64_t c = 0; c < C; c++) {
			int64_t nc = 0, taken = 0;

			for (int64_t k = 0; k < N; k++) {
				double s = ir_get_f(sc->data, sc->dtype, (size_t)((b * C + c) * N + k));

				if (s == s && (!has_st || s > score_t))
					cd[nc++] = (struct cand){ s, k };
			}
			qsort(cd, (size_t)nc, sizeof(*cd), by_score);
			/* the kept boxes move to cd[0..taken) (taken <= i) */
			for (int64_t i = 0; i < nc && taken < maxo; i++) {
				int keep = 1;

				for (int64_t j = 0; j < taken && keep; j++)
					keep = iou(box[cd[i].box], box[cd[j].box]) <= iou_t;
				if (!keep)
					continue;
				if (sel) {
					sel[cnt * 3] = b;
					sel[cnt * 3 + 1] = c;
					sel[cnt * 3 + 2] = cd[i].box;
				}
				cd[taken++] = cd[i];
				cnt++;
			}
		}
	}
	free(cd);
	free(box);
	(void)g;
	return cnt;
}

int ir_ev_nms(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	int64_t cnt = out->dims[0], *sel = malloc((size_t)(cnt ? cnt : 1) * 3 * sizeof(int64_t));
	int64_t got;

	(void)nout;
	if (!sel)
		return ir_err(e, "out of memory");
	got = ir_nms_select(g, n, in, nin, sel, e);
	/* a bounded selection: the rows past the count are -1, as the device's */
	if (got >= 0 && got < cnt && g->vals[n->out[0]].bounded)
		for (int64_t i = 3 * got; i < 3 * cnt; i++)
			sel[i] = -1;
	else if (got != cnt) {
		free(sel);
		return got < 0 ? -1 : ir_node_err(e, g, n, "selected %lld boxes, inferred %lld", (long long)got, (long long)cnt);
	}
	for (int64_t i = 0; i < 3 * cnt; i++)
		ir_set_i(out->data, out->dtype, (size_t)i, sel[i]);
	free(sel);
	return 0;
}

int ir_ev_nonzero(const struct ir_graph *g, const struct ir_node *n,
		  const struct ir_tensor *const *in, int nin,
		  struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t cnt = ev_numel(x), nz = out->dims[1], k = 0, id[IR_MAX_RANK] = { 0 };

	(void)g; (void)n; (void)nin; (void)nout; (void)e;
	for (int64_t i = 0; i < cnt; i++) {
		if (ir_get_f(x->data, x->dtype, (size_t)i) != 0) {
			for (int d = 0; d < x->rank; d++)
				ir_set_i(out->data, out->dtype, (size_t)(d * nz + k), id[d]);
			k++;
		}
		for (int d = x->rank - 1; d >= 0; d--) {
			if (++id[d] < x->dims[d])
				break;
			id[d] = 0;
		}
	}
	return 0;
}

int ir_ev_compress(const struct ir_graph *g, const struct ir_node *n,
		   const struct ir_tensor *const *in, int nin,
		   struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *c = in[1];
	int has_axis = ir_attr_find(n, "axis") != NULL;
	int a = has_axis ? ir_axis(ir_attr_int(n, "axis", 0), x->rank) : 0;
	int64_t outer = 1, len = has_axis ? x->dims[a] : ev_numel(x), inner = 1, k = 0;
	int64_t nc = ev_numel(c);
	size_t es = ir_dtype_size(x->dtype);

	(void)g; (void)nin; (void)nout; (void)e;
	for (int i = 0; has_axis && i < a; i++)
		outer *= x->dims[i];
	for (int i = a + 1; has_axis && i < x->rank; i++)
		inner *= x->dims[i];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < len && j < nc; j++)
			if (ir_get_f(c->data, c->dtype, (size_t)j) != 0) {
				memcpy((char *)out->data + (size_t)(k * inner) * es,
				       (const char *)x->data + (size_t)((o * len + j) * inner) * es, (size_t)inner * es);
				k++;
			}
	return 0;
}
