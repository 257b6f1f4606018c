/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_reduce.c - REDUCE, SOFTMAX, NORM, CUMSUM and TOPK against
 * independent double-precision references.
 */
#include "cl_test.h"

static void rand_olI(struct ct_rng *r, uint32_t *o, uint32_t *l, uint32_t *i,
		     uint32_t maxn)
{
	do {
		*o = ct_size(r);
		*l = ct_size(r);
		*i = ct_int(r, 0, 2) ? 1 : ct_size(r);
	} while (*o * *l * *i > maxn);
}

/* |got - want| <= rtol*|want| + 1e-6*mag + atol (mag: sum of |terms|) */
static int close_mag(double g, double w, double mag, uint32_t dt)
{
	double rt = dt == IPUX_DT_F16 ? 2e-3 : 2e-6;
	double at = dt == IPUX_DT_F16 ? 1e-4 : 1e-7;

	if (isnan(w))
		return isnan(g);
	if (isinf(w))
		return g == w;
	if (dt == IPUX_DT_F16)
		w = ct_round_dt(w, dt);
	return fabs(g - w) <= rt * fabs(w) + 2e-6 * mag + at;
}

/* ------------------------------------------------------------ REDUCE */

static double red_ref(uint32_t op, const double *x, uint32_t n, size_t st,
		      double *mag, int isint)
{
	double acc = 0, m;
	uint32_t l, bi = 0;

	*mag = 0;
	switch (op) {
	case IPUX_RED_SUM:
	case IPUX_RED_MEAN:
		for (l = 0; l < n; l++) {
			acc += x[l * st];
			*mag += fabs(x[l * st]);
		}
		if (op == IPUX_RED_MEAN) {
			*mag /= n;
			return isint ? trunc(acc / n) : acc / n;
		}
		return acc;
	case IPUX_RED_MAX:
	case IPUX_RED_ARGMAX:
		m = x[0];
		for (l = 1; l < n; l++)
			if (x[l * st] > m) {
				m = x[l * st];
				bi = l;
			}
		return op == IPUX_RED_MAX ? m : bi;
	case IPUX_RED_MIN:
	case IPUX_RED_ARGMIN:
		m = x[0];
		for (l = 1; l < n; l++)
			if (x[l * st] < m) {
				m = x[l * st];
				bi = l;
			}
		return op == IPUX_RED_MIN ? m : bi;
	case IPUX_RED_PROD:
		acc = 1;
		for (l = 0; l < n; l++)
			acc *= x[l * st];
		*mag = fabs(acc) * n * 1e-1;
		return acc;
	case IPUX_RED_SUM_SQUARE:
	case IPUX_RED_L2:
		for (l = 0; l < n; l++)
			acc += x[l * st] * x[l * st];
		*mag = acc;
		return op == IPUX_RED_L2 ? sqrt(acc) : acc;
	case IPUX_RED_L1:
		for (l = 0; l < n; l++)
			acc += fabs(x[l * st]);
		*mag = acc;
		return acc;
	default: /* LOG_SUM_EXP */
		m = x[0];
		for (l = 1; l < n; l++)
			if (x[l * st] > m)
				m = x[l * st];
		for (l = 0; l < n; l++)
			acc += exp(x[l * st] - m);
		*mag = fabs(m);
		return m + log(acc);
	}
}

TEST(reduce_random)
{
	static const uint32_t dts[] = { IPUX_DT_F32, IPUX_DT_F16, IPUX_DT_I32 };
	struct ct_rng r = { 1 };
	struct ct_tile t;
	uint32_t op, d, it;

	ct_init(&t, 1 << 18);
	for (op = 0; op < IPUX_RED_COUNT; op++)
		for (d = 0; d < 3; d++) {
			uint32_t dt = dts[d];
			int isint = dt == IPUX_DT_I32;
			int arg = op == IPUX_RED_ARGMAX || op == IPUX_RED_ARGMIN;

			if (isint && (op == IPUX_RED_L2 || op == IPUX_RED_LOG_SUM_EXP))
				continue;
			for (it = 0; it < 10; it++) {
				uint32_t O, L, I, n, A, B, o, j, i;
				uint32_t odt = arg ? IPUX_DT_I32 : dt;
				double *x;

				rand_olI(&r, &O, &L, &I, 20000);
				if (op == IPUX_RED_PROD && isint && L > 17)
					L = 17;
				n = O * L * I;
				ct_reset(&t);
				A = ct_op(&t, dt, n);
				B = ct_op(&t, odt, O * I);
				ct_p(&t, op); ct_p(&t, O); ct_p(&t, L); ct_p(&t, I);
				if (op == IPUX_RED_PROD)
					ct_fill_rand(&t, &r, A, isint ? -2 : 0.6, isint ? 3 : 1.5);
				else
					ct_fill_rand(&t, &r, A, isint ? -1000 : -3, isint ? 1000 : 3);
				x = ct_dalloc(n);
				for (i = 0; i < n; i++)
					x[i] = ct_get(&t, A, i);
				CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
				for (o = 0; o < O; o++)
					for (j = 0; j < I; j++) {
						double mag, w = red_ref(op, x + (size_t)o * L * I + j, L, I, &mag, isint);
						double g = ct_get(&t, B, (size_t)o * I + j);
						int ok;

						if (isint && op == IPUX_RED_PROD)
							w = (double)(int32_t)(uint32_t)(uint64_t)(int64_t)w;
						ok = (arg || isint) ? g == w : close_mag(g, w, mag, dt);
						CHECK_MSG(ok, "REDUCE op %u dt %u O%u L%u I%u [%u,%u]: got %.9g want %.9g",
							  op, dt, O, L, I, o, j, g, w);
						if (!ok)
							goto next;
					}
next:
				free(x);
			}
		}
	ct_free(&t);
}

TEST(reduce_nan)
{
	struct ct_tile t;
	float *x;
	double g;
	int i;

	ct_init(&t, 4096);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 1);
	ct_p(&t, IPUX_RED_MAX); ct_p(&t, 1); ct_p(&t, 4); ct_p(&t, 1);
	x = ct_ptr(&t, 0);
	x[0] = 1; x[1] = NAN; x[2] = 5; x[3] = 2;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	g = ct_get(&t, 1, 0);
	CHECK(isnan(g));
	t.params[0] = IPUX_RED_MIN;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	CHECK(isnan(ct_get(&t, 1, 0)));
	t.ops[1].dtype = IPUX_DT_I32;
	t.params[0] = IPUX_RED_ARGMAX;
	x = ct_ptr(&t, 0);
	x[0] = 1; x[1] = NAN; x[2] = 5; x[3] = NAN;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	CHECK(ct_get(&t, 1, 0) == 1);
	t.ops[1].dtype = IPUX_DT_F32;
	t.params[0] = IPUX_RED_LOG_SUM_EXP;
	x[0] = -INFINITY; x[1] = -INFINITY; x[2] = -INFINITY; x[3] = -INFINITY;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	CHECK(ct_get(&t, 1, 0) == -INFINITY);
	/* the same through the column path (inner 2; column 1 is finite) */
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 8);
	ct_op(&t, IPUX_DT_F32, 2);
	ct_p(&t, IPUX_RED_MAX); ct_p(&t, 1); ct_p(&t, 4); ct_p(&t, 2);
	x = ct_ptr(&t, 0);
	x[0] = 1; x[2] = NAN; x[4] = 5; x[6] = 2;
	x[1] = 1; x[3] = 7; x[5] = 5; x[7] = 2;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	CHECK(isnan(ct_get(&t, 1, 0)) && ct_get(&t, 1, 1) == 7);
	t.params[0] = IPUX_RED_MIN;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	CHECK(isnan(ct_get(&t, 1, 0)) && ct_get(&t, 1, 1) == 1);
	t.ops[1].dtype = IPUX_DT_I32;
	t.params[0] = IPUX_RED_ARGMAX;
	x[6] = NAN;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	CHECK(ct_get(&t, 1, 0) == 1 && ct_get(&t, 1, 1) == 1);
	t.ops[1].dtype = IPUX_DT_F32;
	t.params[0] = IPUX_RED_LOG_SUM_EXP;
	for (i = 0; i < 8; i++)
		x[i] = i & 1 ? -INFINITY : INFINITY;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_REDUCE), 0);
	CHECK(ct_get(&t, 1, 0) == INFINITY && ct_get(&t, 1, 1) == -INFINITY);
	ct_free(&t);
}

TEST(reduce_check)
{
	struct ct_tile t;

	ct_init(&t, 8192);
	ct_op(&t, IPUX_DT_F32, 2 * 3 * 4);
	ct_op(&t, IPUX_DT_F32, 2 * 4);
	ct_p(&t, IPUX_RED_SUM); ct_p(&t, 2); ct_p(&t, 3); ct_p(&t, 4);
	CT_REJECTS(&t, IPUX_CL_REDUCE, 0, IPUX_DT_U8, 1);
	t.params[0] = IPUX_RED_ARGMAX; /* needs I32 out */
	CT_EXPECT(&t, IPUX_CL_REDUCE, IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_REDUCE, 0);
	t.params[0] = IPUX_RED_COUNT;
	CT_EXPECT(&t, IPUX_CL_REDUCE, IPUX_E_PARAM_VALUE);
	t.params[0] = IPUX_RED_L2;
	t.ops[0].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_REDUCE, IPUX_E_OPERAND_TYPE);
	t.ops[0].dtype = t.ops[1].dtype = IPUX_DT_F32;
	t.params[2] = 0; /* len 0 */
	CT_EXPECT(&t, IPUX_CL_REDUCE, IPUX_E_PARAM_VALUE);
	/* outer*len*inner wrapping to 24 in 32 bits */
	t.params[1] = 0x40000002u; t.params[2] = 4; t.params[3] = 3;
	CT_EXPECT(&t, IPUX_CL_REDUCE, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}

/* ------------------------------------------------------------ SOFTMAX */

TEST(softmax_random)
{
	struct ct_rng r = { 2 };
	struct ct_tile t;
	uint32_t it;

	ct_init(&t, 1 << 18);
	for (it = 0; it < 80; it++) {
		uint32_t dt = it & 1 ? IPUX_DT_F16 : IPUX_DT_F32;
		int lg = (it >> 1) & 1, inplace = it % 5 == 0;
		uint32_t O, L, I, n, A, B, o, j, l;
		double *want;

		rand_olI(&r, &O, &L, &I, 20000);
		if (it % 9 == 0) {
			O = 2;
			L = 1000;
			I = 1;
		}
		n = O * L * I;
		ct_reset(&t);
		A = ct_op(&t, dt, n);
		B = inplace ? ct_op_alias(&t, A) : ct_op(&t, dt, n);
		ct_p(&t, O); ct_p(&t, L); ct_p(&t, I); ct_p(&t, lg ? IPUX_SOFTMAX_LOG : 0);
		ct_fill_rand(&t, &r, A, -6, 6);
		want = ct_dalloc(n);
		for (o = 0; o < O; o++)
			for (j = 0; j < I; j++) {
				size_t b = (size_t)o * L * I + j;
				double m = -INFINITY, s = 0;

				for (l = 0; l < L; l++)
					m = fmax(m, ct_get(&t, A, b + (size_t)l * I));
				for (l = 0; l < L; l++)
					s += exp(ct_get(&t, A, b + (size_t)l * I) - m);
				for (l = 0; l < L; l++) {
					double x = ct_get(&t, A, b + (size_t)l * I);

					want[b + (size_t)l * I] = lg ? x - m - log(s) : exp(x - m) / s;
				}
			}
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_SOFTMAX), 0);
		CHECK_MSG(ct_compare(&t, B, want, dt == IPUX_DT_F16 ? 2e-3 : 1e-5,
				     dt == IPUX_DT_F16 ? 2e-4 : 3e-6, "SOFTMAX") == 0,
			  "dt %u log %d O%u L%u I%u", dt, lg, O, L, I);
		free(want);
	}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F16, 12);
	ct_op(&t, IPUX_DT_F16, 12);
	ct_p(&t, 3); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 0);
	CT_REJECTS(&t, IPUX_CL_SOFTMAX, 1, IPUX_DT_F32, 1);
	t.params[3] = 2;
	CT_EXPECT(&t, IPUX_CL_SOFTMAX, IPUX_E_PARAM_VALUE);
	t.params[3] = 0;
	t.params[0] = 0;
	CT_EXPECT(&t, IPUX_CL_SOFTMAX, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}

/* ------------------------------------------------------------ NORM */

TEST(norm_random)
{
	struct ct_rng r = { 3 };
	struct ct_tile t;
	uint32_t it;

	ct_init(&t, 1 << 18);
	for (it = 0; it < 60; it++) {
		uint32_t dt = it & 1 ? IPUX_DT_F16 : IPUX_DT_F32, mode = (it >> 1) & 1;
		uint32_t rows = ct_size(&r), cols = ct_size(&r) * (it % 7 == 0 ? 40 : 1);
		uint32_t period = mode ? ct_size(&r) : 0, ns = mode ? period : cols;
		uint32_t X, S, B, Y, i, c;
		float eps = 1e-5f;
		double *want;

		ct_reset(&t);
		X = ct_op(&t, dt, rows * cols);
		S = ct_op(&t, dt, ns);
		B = ct_op(&t, dt, ns);
		Y = it % 5 == 0 ? ct_op_alias(&t, X) : ct_op(&t, dt, rows * cols);
		ct_p(&t, rows); ct_p(&t, cols); ct_p(&t, ct_fbits(eps)); ct_p(&t, mode); ct_p(&t, period);
		ct_fill_rand(&t, &r, X, -2, 5);
		ct_fill_rand(&t, &r, S, 0.5, 2);
		ct_fill_rand(&t, &r, B, -1, 1);
		want = ct_dalloc((size_t)rows * cols);
		for (i = 0; i < rows; i++) {
			double m = 0, v = 0;

			for (c = 0; c < cols; c++)
				m += ct_get(&t, X, (size_t)i * cols + c);
			m /= cols;
			for (c = 0; c < cols; c++) {
				double d = ct_get(&t, X, (size_t)i * cols + c) - m;

				v += d * d;
			}
			v /= cols;
			for (c = 0; c < cols; c++) {
				uint32_t si = mode ? i % period : c;

				want[(size_t)i * cols + c] =
					(ct_get(&t, X, (size_t)i * cols + c) - m) / sqrt(v + eps) *
						ct_get(&t, S, si) + ct_get(&t, B, si);
			}
		}
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_NORM), 0);
		CHECK_MSG(ct_compare(&t, Y, want, dt == IPUX_DT_F16 ? 3e-3 : 1e-5,
				     dt == IPUX_DT_F16 ? 3e-3 : 1e-5, "NORM") == 0,
			  "dt %u mode %u rows %u cols %u", dt, mode, rows, cols);
		free(want);
	}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 12);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 12);
	ct_p(&t, 3); ct_p(&t, 4); ct_p(&t, ct_fbits(1e-5f)); ct_p(&t, 0); ct_p(&t, 0);
	CT_REJECTS(&t, IPUX_CL_NORM, 2, IPUX_DT_F16, 1);
	t.params[3] = 1; /* period 0 */
	CT_EXPECT(&t, IPUX_CL_NORM, IPUX_E_PARAM_VALUE);
	t.params[4] = 3; /* scale must then have 3 */
	CT_EXPECT(&t, IPUX_CL_NORM, IPUX_E_OPERAND_SHAPE);
	t.params[4] = 4;
	CT_EXPECT(&t, IPUX_CL_NORM, 0);
	t.params[3] = 2;
	CT_EXPECT(&t, IPUX_CL_NORM, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}

/* ------------------------------------------------------------ CUMSUM */

TEST(cumsum_random)
{
	static const uint32_t dts[] = { IPUX_DT_F32, IPUX_DT_F16, IPUX_DT_I32 };
	struct ct_rng r = { 4 };
	struct ct_tile t;
	uint32_t it;

	ct_init(&t, 1 << 18);
	for (it = 0; it < 60; it++) {
		uint32_t dt = dts[it % 3], flags = (it / 3) & 3;
		uint32_t O, L, I, n, A, B, o, j, s;
		int bad = 0;

		rand_olI(&r, &O, &L, &I, 20000);
		n = O * L * I;
		ct_reset(&t);
		A = ct_op(&t, dt, n);
		B = it % 4 == 0 ? ct_op_alias(&t, A) : ct_op(&t, dt, n);
		ct_p(&t, O); ct_p(&t, L); ct_p(&t, I); ct_p(&t, flags);
		ct_fill_rand(&t, &r, A, dt == IPUX_DT_I32 ? -1e9 : -3, dt == IPUX_DT_I32 ? 1e9 : 3);
		{
			double *x = ct_dalloc(n);

			for (s = 0; s < n; s++)
				x[s] = ct_get(&t, A, s);
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_CUMSUM), 0);
			for (o = 0; o < O; o++)
				for (j = 0; j < I; j++) {
					double acc = 0, mag = 0;
					int64_t iacc = 0;

					for (s = 0; s < L; s++) {
						uint32_t l = flags & IPUX_CUMSUM_REVERSE ? L - 1 - s : s;
						size_t k = ((size_t)o * L + l) * I + j;
						double w, g = ct_get(&t, B, k);

						if (flags & IPUX_CUMSUM_EXCLUSIVE) {
							w = dt == IPUX_DT_I32 ? (double)(int32_t)(uint32_t)iacc : acc;
							acc += x[k];
							iacc += (int64_t)x[k];
							mag += fabs(x[k]);
						} else {
							acc += x[k];
							iacc += (int64_t)x[k];
							mag += fabs(x[k]);
							w = dt == IPUX_DT_I32 ? (double)(int32_t)(uint32_t)iacc : acc;
						}
						if (!(dt == IPUX_DT_I32 ? g == w : close_mag(g, w, mag, dt)) && bad++ < 3)
							fprintf(stderr, "  CUMSUM dt %u f %u O%u L%u I%u [%zu] got %.9g want %.9g\n",
								dt, flags, O, L, I, k, g, w);
					}
				}
			free(x);
		}
		CHECK_EQ_INT(bad, 0);
	}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 12);
	ct_op(&t, IPUX_DT_F32, 12);
	ct_p(&t, 3); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 0);
	CT_REJECTS(&t, IPUX_CL_CUMSUM, 1, IPUX_DT_I32, 1);
	t.params[3] = 4;
	CT_EXPECT(&t, IPUX_CL_CUMSUM, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}

/* ------------------------------------------------------------ TOPK */

struct tk_ref {
	const double *x;
	size_t st;
	int largest;
};

/* before(a, b): a comes first (NaN greatest, ties by index) */
static int tk_first(const struct tk_ref *c, uint32_t a, uint32_t b)
{
	double va = c->x[a * c->st], vb = c->x[b * c->st];
	int cmp;

	if (isnan(va) && isnan(vb))
		cmp = 0;
	else if (isnan(va))
		cmp = 1;
	else if (isnan(vb))
		cmp = -1;
	else
		cmp = va < vb ? -1 : va > vb;
	if (!c->largest)
		cmp = -cmp;
	return cmp > 0 || (cmp == 0 && a < b);
}

TEST(topk_random)
{
	static const uint32_t dts[] = { IPUX_DT_F32, IPUX_DT_F16, IPUX_DT_I32 };
	struct ct_rng r = { 5 };
	struct ct_tile t;
	uint32_t it;

	ct_init(&t, 1 << 18);
	for (it = 0; it < 90; it++) {
		uint32_t dt = dts[it % 3], largest = (it / 3) & 1;
		uint32_t O, L, I, K, A, V, X, o, j, i, l;
		double *x;
		uint32_t *order;
		int bad = 0;

		rand_olI(&r, &O, &L, &I, 10000);
		K = (uint32_t)ct_int(&r, 1, L);
		ct_reset(&t);
		A = ct_op(&t, dt, O * L * I);
		V = ct_op(&t, dt, O * K * I);
		X = ct_op(&t, IPUX_DT_I32, O * K * I);
		ct_p(&t, O); ct_p(&t, L); ct_p(&t, I); ct_p(&t, K);
		ct_p(&t, largest ? IPUX_TOPK_LARGEST : 0);
		if (it % 4 == 1)
			ct_fill_rand(&t, &r, A, -3, 3); /* many ties when floored */
		else
			ct_fill_rand(&t, &r, A, -100, 100);
		if (it % 4 == 1 && dt != IPUX_DT_I32)
			for (i = 0; i < O * L * I; i++) {
				ct_set(&t, A, i, floor(ct_get(&t, A, i)));
				if (i % 11 == 3)
					ct_set(&t, A, i, NAN);
			}
		x = ct_dalloc((size_t)O * L * I);
		for (i = 0; i < O * L * I; i++)
			x[i] = ct_get(&t, A, i);
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_TOPK), 0);
		order = calloc(L, sizeof(*order));
		for (o = 0; o < O; o++)
			for (j = 0; j < I; j++) {
				struct tk_ref c = { x + (size_t)o * L * I + j, I, (int)largest };

				/* insertion sort of 0..L-1 by tk_first */
				for (l = 0; l < L; l++) {
					uint32_t p = l;

					while (p > 0 && tk_first(&c, l, order[p - 1])) {
						order[p] = order[p - 1];
						p--;
					}
					order[p] = l;
				}
				for (l = 0; l < K; l++) {
					size_t k = ((size_t)o * K + l) * I + j;
					double gi = ct_get(&t, X, k), gv = ct_get(&t, V, k);
					double wv = c.x[order[l] * I];

					if ((gi != order[l] || !((isnan(wv) && isnan(gv)) || gv == wv)) && bad++ < 3)
						fprintf(stderr, "  TOPK dt %u largest %u O%u L%u I%u K%u [%u,%u,%u]: got %g@%g want %g@%u\n",
							dt, largest, O, L, I, K, o, l, j, gv, gi, wv, order[l]);
				}
			}
		CHECK_EQ_INT(bad, 0);
		free(order);
		free(x);
	}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 12);
	ct_op(&t, IPUX_DT_F32, 6);
	ct_op(&t, IPUX_DT_I32, 6);
	ct_p(&t, 3); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 2); ct_p(&t, 1);
	CT_REJECTS(&t, IPUX_CL_TOPK, 2, IPUX_DT_F32, 1);
	t.params[3] = 5; /* k > len */
	CT_EXPECT(&t, IPUX_CL_TOPK, IPUX_E_PARAM_VALUE);
	t.params[3] = 0;
	CT_EXPECT(&t, IPUX_CL_TOPK, IPUX_E_PARAM_VALUE);
	t.params[3] = 2;
	t.params[4] = 2;
	CT_EXPECT(&t, IPUX_CL_TOPK, IPUX_E_PARAM_VALUE);
	t.params[4] = 0;
	t.ops[2].offset = t.ops[0].offset; /* indices alias in */
	CT_EXPECT(&t, IPUX_CL_TOPK, IPUX_E_OPERAND_SHAPE);
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(reduce_random);
	RUN(reduce_nan);
	RUN(reduce_check);
	RUN(softmax_random);
	RUN(norm_random);
	RUN(cumsum_random);
	RUN(topk_random);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
