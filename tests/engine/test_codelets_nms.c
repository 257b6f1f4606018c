/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_nms.c - NMS against an independent reference: candidates
 * picked by repeated scans for the best remaining score (no sort), IoU of
 * the corners in double, on random overlapping boxes with tied scores.
 */
#include "cl_test.h"

static void ref_corners(const double *v, int center, double *c)
{
	if (center) {
		c[0] = v[1] - v[3] / 2;
		c[1] = v[0] - v[2] / 2;
		c[2] = v[1] + v[3] / 2;
		c[3] = v[0] + v[2] / 2;
		return;
	}
	c[0] = v[0] < v[2] ? v[0] : v[2];
	c[1] = v[1] < v[3] ? v[1] : v[3];
	c[2] = v[0] < v[2] ? v[2] : v[0];
	c[3] = v[1] < v[3] ? v[3] : v[1];
}

static double ref_iou(const double *a, const double *b)
{
	double y1 = a[0] > b[0] ? a[0] : b[0], x1 = a[1] > b[1] ? a[1] : b[1];
	double y2 = a[2] < b[2] ? a[2] : b[2], x2 = a[3] < b[3] ? a[3] : b[3];
	double aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]);

	if (y2 - y1 <= 0 || x2 - x1 <= 0 || aa <= 0 || ab <= 0)
		return 0;
	return (y2 - y1) * (x2 - x1) / (aa + ab - (y2 - y1) * (x2 - x1));
}

/* The reference's selection into sel (3 per row); returns the count. */
static size_t ref_nms(const double *bx, const double *sc, uint32_t B, uint32_t C, uint32_t N,
		      uint32_t maxo, double iou_t, int has_st, double st, int center, int64_t *sel)
{
	char *used = calloc(N, 1);
	uint32_t *kept = calloc(N, sizeof(*kept));
	size_t cnt = 0;

	for (uint32_t b = 0; b < B; b++)
		for (uint32_t c = 0; c < C; c++) {
			const double *s = sc + ((size_t)b * C + c) * N;
			uint32_t taken = 0;

			memset(used, 0, N);
			while (taken < maxo) {
				int64_t best = -1;
				double bc[4], kc[4];
				int keep = 1;

				for (uint32_t k = 0; k < N; k++)
					if (!used[k] && !isnan(s[k]) && (!has_st || s[k] > st) &&
					    (best < 0 || s[k] > s[best]))
						best = k;
				if (best < 0)
					break;
				used[best] = 1;
				ref_corners(bx + ((size_t)b * N + (size_t)best) * 4, center, bc);
				for (uint32_t j = 0; j < taken && keep; j++) {
					ref_corners(bx + ((size_t)b * N + kept[j]) * 4, center, kc);
					keep = ref_iou(bc, kc) <= iou_t;
				}
				if (!keep)
					continue;
				kept[taken++] = (uint32_t)best;
				sel[cnt * 3] = b;
				sel[cnt * 3 + 1] = c;
				sel[cnt * 3 + 2] = best;
				cnt++;
			}
		}
	free(used);
	free(kept);
	return cnt;
}

TEST(nms_random)
{
	static const uint32_t dts[] = { IPUX_DT_F32, IPUX_DT_F16 };
	struct ct_rng r = { 37 };
	struct ct_tile t;

	ct_init(&t, 1 << 18);
	for (uint32_t it = 0; it < 120; it++) {
		uint32_t dt = dts[it % 2], B = (uint32_t)ct_int(&r, 1, 3), C = (uint32_t)ct_int(&r, 1, 4);
		uint32_t N = ct_size(&r) + (uint32_t)ct_int(&r, 0, 40), maxo = (uint32_t)ct_int(&r, 1, N + 3);
		uint32_t per = maxo < N ? maxo : N, center = (it / 2) & 1, has_st = (it / 4) & 1;
		float iou_t = (float)ct_unif(&r, 0, 0.8), st = (float)ct_unif(&r, -0.5, 0.5);
		uint32_t BX, SC, SEL, CNT;
		double *bx, *sc;
		int64_t *want;
		size_t wcnt, bad = 0;

		ct_reset(&t);
		BX = ct_op(&t, dt, B * N * 4);
		SC = ct_op(&t, dt, B * C * N);
		SEL = ct_op(&t, IPUX_DT_I64, B * C * per * 3);
		CNT = ct_op(&t, IPUX_DT_I32, 1);
		ct_op(&t, IPUX_DT_I32, 2 * N);
		ct_p(&t, B); ct_p(&t, C); ct_p(&t, N); ct_p(&t, maxo);
		ct_p(&t, ct_fbits(iou_t)); ct_p(&t, ct_fbits(st));
		ct_p(&t, (center ? IPUX_NMS_CENTER : 0) | (has_st ? IPUX_NMS_SCORE_THRESHOLD : 0));
		/* boxes on a coarse grid of a small field: many overlaps, some
		 * identical or empty; scores in quarters: many ties */
		for (size_t i = 0; i < (size_t)B * N * 4; i++)
			ct_set(&t, BX, i, (double)ct_int(&r, 0, 12) / 4);
		for (size_t i = 0; i < (size_t)B * C * N; i++)
			ct_set(&t, SC, i, it % 5 == 3 && i % 7 == 2 ? NAN : (double)ct_int(&r, -4, 4) / 4);
		bx = ct_dalloc((size_t)B * N * 4);
		sc = ct_dalloc((size_t)B * C * N);
		want = calloc((size_t)B * C * per * 3 + 1, sizeof(*want));
		for (size_t i = 0; i < (size_t)B * N * 4; i++)
			bx[i] = ct_get(&t, BX, i);
		for (size_t i = 0; i < (size_t)B * C * N; i++)
			sc[i] = ct_get(&t, SC, i);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_NMS), 0);
		wcnt = ref_nms(bx, sc, B, C, N, maxo, iou_t, (int)has_st, st, (int)center, want);
		CHECK_EQ_INT((long long)ct_get(&t, CNT, 0), (long long)wcnt);
		for (size_t i = 0; i < (size_t)B * C * per * 3; i++) {
			int64_t w = i < wcnt * 3 ? want[i] : -1, g = ((const int64_t *)ct_ptr(&t, SEL))[i];

			if (g != w && bad++ < 3)
				fprintf(stderr, "  NMS dt %u B%u C%u N%u max %u center %u st %u: [%zu] got %lld want %lld\n",
					dt, B, C, N, maxo, center, has_st, i, (long long)g, (long long)w);
		}
		CHECK_EQ_INT(bad, 0);
		free(bx);
		free(sc);
		free(want);
	}
	ct_free(&t);
}

TEST(nms_check)
{
	struct ct_tile t;

	ct_init(&t, 1 << 14);
	ct_op(&t, IPUX_DT_F32, 2 * 5 * 4);
	ct_op(&t, IPUX_DT_F32, 2 * 3 * 5);
	ct_op(&t, IPUX_DT_I64, 2 * 3 * 4 * 3);
	ct_op(&t, IPUX_DT_I32, 1);
	ct_op(&t, IPUX_DT_I32, 10);
	ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 5); ct_p(&t, 4);
	ct_p(&t, ct_fbits(0.5f)); ct_p(&t, 0); ct_p(&t, 0);
	CT_REJECTS(&t, IPUX_CL_NMS, 2, IPUX_DT_F32, 1);
	t.params[3] = 5;	/* the bound no longer matches selected */
	CT_EXPECT(&t, IPUX_CL_NMS, IPUX_E_OPERAND_SHAPE);
	t.params[3] = 0;
	CT_EXPECT(&t, IPUX_CL_NMS, IPUX_E_PARAM_VALUE);
	t.params[3] = 4;
	t.params[6] = 4;
	CT_EXPECT(&t, IPUX_CL_NMS, IPUX_E_PARAM_VALUE);
	t.params[6] = 0;
	t.ops[2].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_NMS, IPUX_E_OPERAND_TYPE);
	t.ops[2].dtype = IPUX_DT_I64;
	t.ops[4].offset = t.ops[0].offset;	/* scratch aliases the boxes */
	CT_EXPECT(&t, IPUX_CL_NMS, IPUX_E_OPERAND_SHAPE);
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(nms_random);
	RUN(nms_check);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
