/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_basic.c - the codelet table, COPY, FILL, CAST, IOTA, UNARY,
 * BINARY and WHERE against independent double-precision references.
 */
#include <limits.h>

#include "cl_test.h"

static const uint32_t all_dt[] = { IPUX_DT_F32, IPUX_DT_F16, IPUX_DT_I32,
				   IPUX_DT_U8, IPUX_DT_I8, IPUX_DT_I64 };
#define NDT (sizeof(all_dt) / sizeof(all_dt[0]))

TEST(table)
{
	uint32_t id;

	CHECK(ipu_codelet_get(0) == NULL);
	CHECK(ipu_codelet_get(IPUX_CL_COUNT) == NULL);
	CHECK(ipu_codelet_get(0xffffffffu) == NULL);
	CHECK(ipu_codelet_get(1000) == NULL);
	for (id = 1; id < IPUX_CL_COUNT; id++) {
		const struct ipu_codelet *c = ipu_codelet_get(id);

		CHECK_MSG(c != NULL, "codelet %u missing", id);
		if (!c)
			continue;
		CHECK(c->name && c->check && c->cost && c->run);
	}
	CHECK(strcmp(ipu_codelet_get(IPUX_CL_MATMUL)->name, "MATMUL") == 0);
	CHECK(strcmp(ipu_codelet_get(IPUX_CL_IOTA)->name, "IOTA") == 0);
}

/* ------------------------------------------------------------ COPY/FILL */

TEST(copy)
{
	struct ct_rng r = { 11 };
	struct ct_tile t;
	size_t d, it;

	ct_init(&t, 1 << 16);
	for (d = 0; d < NDT; d++)
		for (it = 0; it < 5; it++) {
			uint32_t n = ct_size(&r), s, o;

			ct_reset(&t);
			s = ct_op(&t, all_dt[d], n);
			o = ct_op(&t, all_dt[d], n);
			ct_fill_rand(&t, &r, s, -100, 100);
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_COPY), 0);
			CHECK(memcmp(ct_ptr(&t, s), ct_ptr(&t, o),
				     n * ipux_dtype_size(all_dt[d])) == 0);
		}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 10);
	ct_op(&t, IPUX_DT_F32, 10);
	CT_EXPECT(&t, IPUX_CL_COPY, 0);
	t.nops = 1;
	CT_EXPECT(&t, IPUX_CL_COPY, IPUX_E_OPERAND_COUNT);
	t.nops = 2;
	ct_p(&t, 1);
	CT_EXPECT(&t, IPUX_CL_COPY, IPUX_E_PARAM_COUNT);
	t.nparams = 0;
	t.ops[1].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_COPY, IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_F32;
	t.ops[1].count = 9;
	CT_EXPECT(&t, IPUX_CL_COPY, IPUX_E_OPERAND_SHAPE);
	t.ops[1].count = 10;
	t.ops[0].dtype = 0;
	t.ops[1].dtype = 0;
	CT_EXPECT(&t, IPUX_CL_COPY, IPUX_E_OPERAND_TYPE);
	ct_free(&t);
}

TEST(fill)
{
	struct ct_tile t;
	size_t d, i;
	static const float fv[] = { 0.0f, -1.5f, 3.14159f, 70000.0f };
	static const int32_t iv[] = { 0, -1, 77, 300, INT_MIN };

	ct_init(&t, 1 << 14);
	for (d = 0; d < NDT; d++) {
		uint32_t dt = all_dt[d];
		int fl = dt == IPUX_DT_F32 || dt == IPUX_DT_F16;
		size_t nv = fl ? 4 : 5, k;

		for (k = 0; k < nv; k++) {
			uint32_t o, n = 33;
			double want;

			ct_reset(&t);
			o = ct_op(&t, dt, n);
			ct_p(&t, fl ? ct_fbits(fv[k]) : (uint32_t)iv[k]);
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_FILL), 0);
			if (fl)
				want = ct_round_dt(fv[k], dt);
			else if (dt == IPUX_DT_U8)
				want = (uint8_t)iv[k];
			else if (dt == IPUX_DT_I8)
				want = (int8_t)(uint8_t)iv[k];
			else
				want = iv[k];
			for (i = 0; i < n; i++)
				CHECK_MSG(ct_get(&t, o, i) == want,
					  "dt %u [%zu] %g != %g", dt, i,
					  ct_get(&t, o, i), want);
		}
	}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_p(&t, 0);
	CT_EXPECT(&t, IPUX_CL_FILL, 0);
	t.nparams = 0;
	CT_EXPECT(&t, IPUX_CL_FILL, IPUX_E_PARAM_COUNT);
	t.nparams = 1;
	t.nops = 2;
	t.ops[1] = t.ops[0];
	CT_EXPECT(&t, IPUX_CL_FILL, IPUX_E_OPERAND_COUNT);
	t.nops = 1;
	t.ops[0].dtype = 77;
	CT_EXPECT(&t, IPUX_CL_FILL, IPUX_E_OPERAND_TYPE);
	ct_free(&t);
}

/* ---------------------------------------------------------------- IOTA */

TEST(iota)
{
	struct ct_tile t;
	size_t d, i;

	ct_init(&t, 1 << 14);
	for (d = 0; d < NDT; d++) {
		uint32_t dt = all_dt[d], o, n = 65;
		int fl = dt == IPUX_DT_F32 || dt == IPUX_DT_F16;

		ct_reset(&t);
		o = ct_op(&t, dt, n);
		if (fl) {
			ct_p(&t, ct_fbits(-2.5f));
			ct_p(&t, ct_fbits(0.25f));
		} else {
			ct_p(&t, (uint32_t)-7);
			ct_p(&t, 3);
		}
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_IOTA), 0);
		for (i = 0; i < n; i++) {
			double want = fl ? ct_round_dt(-2.5 + 0.25 * (double)i, dt)
					 : -7.0 + 3.0 * (double)i;

			if (dt == IPUX_DT_U8)
				want = (uint8_t)(int64_t)want;
			if (dt == IPUX_DT_I8)
				want = (int8_t)(uint8_t)(int64_t)want;
			CHECK_MSG(ct_get(&t, o, i) == want, "dt %u [%zu] %g %g",
				  dt, i, ct_get(&t, o, i), want);
		}
	}
	/* i32 wraps instead of overflowing */
	ct_reset(&t);
	ct_op(&t, IPUX_DT_I32, 3);
	ct_p(&t, INT32_MAX);
	ct_p(&t, INT32_MAX);
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_IOTA), 0);
	CHECK(((int32_t *)ct_ptr(&t, 0))[1] == -2);
	CT_EXPECT(&t, IPUX_CL_IOTA, 0);
	t.nparams = 1;
	CT_EXPECT(&t, IPUX_CL_IOTA, IPUX_E_PARAM_COUNT);
	t.nparams = 2;
	t.nops = 0;
	CT_EXPECT(&t, IPUX_CL_IOTA, IPUX_E_OPERAND_COUNT);
	t.nops = 1;
	t.ops[0].dtype = 0;
	CT_EXPECT(&t, IPUX_CL_IOTA, IPUX_E_OPERAND_TYPE);
	ct_free(&t);
}

/* ---------------------------------------------------------------- CAST */

static double cast_ref(double x, uint32_t sdt, uint32_t ddt)
{
	int sfl = sdt == IPUX_DT_F32 || sdt == IPUX_DT_F16;
	double lo, hi;

	switch (ddt) {
	case IPUX_DT_F32:
	case IPUX_DT_F16:
		return ct_round_dt(x, ddt);
	case IPUX_DT_I32: lo = -2147483648.0; hi = 2147483647.0; break;
	case IPUX_DT_U8: lo = 0; hi = 255; break;
	case IPUX_DT_I8: lo = -128; hi = 127; break;
	default: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
	}
	if (sfl) {
		if (isnan(x))
			return 0;
		if (x <= lo)
			return lo;
		if (x >= hi)
			return ddt == IPUX_DT_I64 ? (double)INT64_MAX : hi;
		return trunc(x);
	}
	/* integer to integer wraps (two's complement) */
	{
		int64_t v = (int64_t)x;

		switch (ddt) {
		case IPUX_DT_I32: return (int32_t)(uint32_t)(uint64_t)v;
		case IPUX_DT_U8: return (uint8_t)v;
		case IPUX_DT_I8: return (int8_t)(uint8_t)v;
		default: return (double)v;
		}
	}
}

TEST(cast)
{
	static const double specials[] = { NAN, INFINITY, -INFINITY, 1e10,
					   -1e10, 3e9, -3e9, 255.9, 256, -0.9,
					   -1.5, 127.5, -128.7, 65519, 65520,
					   1e-8, 0.5, -0.0 };
	struct ct_rng r = { 5 };
	struct ct_tile t;
	size_t sd, dd, i;

	ct_init(&t, 1 << 14);
	for (sd = 0; sd < NDT; sd++)
		for (dd = 0; dd < NDT; dd++) {
			uint32_t sdt = all_dt[sd], ddt = all_dt[dd], s, o;
			int sfl = sdt == IPUX_DT_F32 || sdt == IPUX_DT_F16;
			uint32_t n = 300 + (uint32_t)(sizeof(specials) / sizeof(specials[0]));

			ct_reset(&t);
			s = ct_op(&t, sdt, n);
			o = ct_op(&t, ddt, n);
			for (i = 0; i < n; i++) {
				double x;

				if (i < sizeof(specials) / sizeof(specials[0]) && sfl)
					x = specials[i];
				else if (sdt == IPUX_DT_U8)
					x = (double)ct_int(&r, 0, 255);
				else if (sdt == IPUX_DT_I8)
					x = (double)ct_int(&r, -128, 127);
				else if (sfl)
					x = ct_unif(&r, -400, 400);
				else
					x = (double)ct_int(&r, -100000, 100000) *
					    (i & 1 ? 1 : 30000);
				ct_set(&t, s, i, x);
			}
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST), 0);
			for (i = 0; i < n; i++) {
				double x = ct_get(&t, s, i);
				double w = cast_ref(x, sdt, ddt), g = ct_get(&t, o, i);

				CHECK_MSG((isnan(w) && isnan(g)) || g == w,
					  "CAST %u->%u [%zu] %.17g: got %.17g want %.17g",
					  sdt, ddt, i, x, g, w);
			}
		}
	/* in place: F32 -> F16 narrowing and F16 -> F32 widening */
	for (sd = 0; sd < 2; sd++) {
		uint32_t n = 77, s, o;
		double want[77];

		ct_reset(&t);
		s = ct_op(&t, sd ? IPUX_DT_F16 : IPUX_DT_F32, n * 2);
		t.ops[s].count = n;
		o = ct_op_alias(&t, s);
		t.ops[o].dtype = sd ? IPUX_DT_F32 : IPUX_DT_F16;
		for (i = 0; i < n; i++) {
			ct_set(&t, s, i, ct_unif(&r, -50, 50));
			want[i] = ct_round_dt(ct_get(&t, s, i), IPUX_DT_F16);
		}
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST), 0);
		for (i = 0; i < n; i++)
			CHECK_MSG(ct_get(&t, o, i) == want[i], "in place %zu", i);
	}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_F32, 8);
	ct_op(&t, IPUX_DT_I32, 8);
	CT_EXPECT(&t, IPUX_CL_CAST, 0);
	t.nops = 1;
	CT_EXPECT(&t, IPUX_CL_CAST, IPUX_E_OPERAND_COUNT);
	t.nops = 2;
	ct_p(&t, 0);
	CT_EXPECT(&t, IPUX_CL_CAST, IPUX_E_PARAM_COUNT);
	t.nparams = 0;
	t.ops[1].dtype = 9;
	CT_EXPECT(&t, IPUX_CL_CAST, IPUX_E_OPERAND_TYPE);
	t.ops[1].dtype = IPUX_DT_U8;
	t.ops[1].count = 7;
	CT_EXPECT(&t, IPUX_CL_CAST, IPUX_E_OPERAND_SHAPE);
	ct_free(&t);
}

/* ---------------------------------------------------------------- UNARY */

static double un_ref(uint32_t op, double x, double a, double b)
{
	switch (op) {
	case IPUX_UN_RELU: return x < 0 ? 0 : x;
	case IPUX_UN_SIGMOID: return 1 / (1 + exp(-x));
	case IPUX_UN_TANH: return tanh(x);
	case IPUX_UN_EXP: return exp(x);
	case IPUX_UN_LOG: return log(x);
	case IPUX_UN_SQRT: return sqrt(x);
	case IPUX_UN_ERF: return erf(x);
	case IPUX_UN_GELU: return x * 0.5 * (1 + erf(x / sqrt(2.0)));
	case IPUX_UN_GELU_TANH:
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	case IPUX_UN_NEG: return -x;
	case IPUX_UN_ABS: return fabs(x);
	case IPUX_UN_RECIPROCAL: return 1 / x;
	case IPUX_UN_LEAKY_RELU: return x >= 0 ? x : a * x;
	case IPUX_UN_HARD_SIGMOID: return fmax(0, fmin(1, a * x + b));
	case IPUX_UN_HARD_SWISH: return x * fmax(0, fmin(1, x / 6 + 0.5));
	case IPUX_UN_CLIP: return x < a ? a : x > b ? b : x;
	case IPUX_UN_FLOOR: return floor(x);
	case IPUX_UN_CEIL: return ceil(x);
	case IPUX_UN_ROUND: return nearbyint(x);
	case IPUX_UN_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
	case IPUX_UN_SIN: return sin(x);
	case IPUX_UN_COS: return cos(x);
	case IPUX_UN_ELU: return x > 0 ? x : a * (exp(x) - 1);
	case IPUX_UN_SOFTPLUS: return log(1 + exp(x));
	case IPUX_UN_SELU: return b * (x > 0 ? x : a * (exp(x) - 1));
	case IPUX_UN_SQUARE: return x * x;
	case IPUX_UN_RSQRT: return 1 / sqrt(x);
	default: abort();
	}
}

TEST(unary_float)
{
	struct ct_rng r = { 77 };
	struct ct_tile t;
	uint32_t op, d, it;

	ct_init(&t, 1 << 16);
	for (op = 0; op < IPUX_UN_COUNT; op++) {
		if (op == IPUX_UN_NOT)
			continue;
		for (d = 0; d < 2; d++)
			for (it = 0; it < 4; it++) {
				uint32_t dt = d ? IPUX_DT_F16 : IPUX_DT_F32;
				uint32_t n = ct_size(&r) * (it == 3 ? 40 : 1), s, o, i;
				int pos = op == IPUX_UN_LOG || op == IPUX_UN_SQRT ||
					  op == IPUX_UN_RSQRT;
				/* it 0: default alpha/beta; 1, 2: given */
				double a = 0.3, b = 0.7;
				double *want = ct_dalloc(n);

				ct_reset(&t);
				s = ct_op(&t, dt, n);
				o = it == 2 ? ct_op_alias(&t, s) : ct_op(&t, dt, n);
				ct_p(&t, op);
				if (it == 0) {
					switch (op) {
					case IPUX_UN_LEAKY_RELU: a = 0.01f; break;
					case IPUX_UN_HARD_SIGMOID: a = 0.2f; b = 0.5; break;
					case IPUX_UN_CLIP: a = -INFINITY; b = INFINITY; break;
					case IPUX_UN_ELU: a = 1; break;
					case IPUX_UN_SELU: a = 1.67326319217681884765625;
						b = 1.05070102214813232421875; break;
					default: break;
					}
				} else {
					if (op == IPUX_UN_CLIP)
						a = -0.5;
					ct_p(&t, ct_fbits((float)a));
					ct_p(&t, ct_fbits((float)b));
					a = (float)a;
					b = (float)b;
				}
				for (i = 0; i < n; i++) {
					double x = pos ? ct_unif(&r, 0.05, 4)
						       : ct_unif(&r, -4, 4);

					if (op == IPUX_UN_ROUND && i % 3 == 0)
						x = (double)ct_int(&r, -6, 6) + 0.5;
					ct_set(&t, s, i, x);
					want[i] = un_ref(op, ct_get(&t, s, i), a, b);
				}
				CHECK_EQ_INT(ct_run(&t, IPUX_CL_UNARY), 0);
				CHECK_MSG(ct_compare(&t, o, want,
						     dt == IPUX_DT_F16 ? 2e-3 : 2e-6,
						     dt == IPUX_DT_F16 ? 1e-4 : 1e-6,
						     "UNARY") == 0,
					  "op %u dt %u n %u", op, dt, n);
				free(want);
			}
	}
	ct_free(&t);
}

TEST(unary_int)
{
	struct ct_tile t;
	int32_t *s, *o;
	uint8_t *su, *ou;
	static const int32_t v[] = { 0, 1, -1, 5, -7, INT32_MAX, INT32_MIN };
	uint32_t i, k;
	static const uint32_t ops[] = { IPUX_UN_NEG, IPUX_UN_ABS, IPUX_UN_SIGN };

	ct_init(&t, 4096);
	for (k = 0; k < 3; k++) {
		ct_reset(&t);
		ct_op(&t, IPUX_DT_I32, 7);
		ct_op(&t, IPUX_DT_I32, 7);
		ct_p(&t, ops[k]);
		s = ct_ptr(&t, 0);
		memcpy(s, v, sizeof(v));
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_UNARY), 0);
		o = ct_ptr(&t, 1);
		for (i = 0; i < 7; i++) {
			int64_t x = v[i], w;

			w = k == 0 ? -x : k == 1 ? (x < 0 ? -x : x) : (x > 0) - (x < 0);
			w = (int32_t)(uint32_t)(uint64_t)w; /* wraps */
			CHECK_MSG(o[i] == w, "op %u %d: %d != %lld", ops[k],
				  v[i], o[i], (long long)w);
		}
	}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_U8, 5);
	ct_op(&t, IPUX_DT_U8, 5);
	ct_p(&t, IPUX_UN_NOT);
	su = ct_ptr(&t, 0);
	for (i = 0; i < 5; i++)
		su[i] = (uint8_t)(i == 2 ? 0 : i * 50);
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_UNARY), 0);
	ou = ct_ptr(&t, 1);
	for (i = 0; i < 5; i++)
		CHECK(ou[i] == (su[i] == 0));
	/* NOT only on U8, exp not on I32 */
	CT_REJECTS(&t, IPUX_CL_UNARY, 0, IPUX_DT_F32, 1);
	t.ops[0].dtype = t.ops[1].dtype = IPUX_DT_I32;
	t.params[0] = IPUX_UN_EXP;
	CT_EXPECT(&t, IPUX_CL_UNARY, IPUX_E_OPERAND_TYPE);
	t.params[0] = IPUX_UN_COUNT;
	CT_EXPECT(&t, IPUX_CL_UNARY, IPUX_E_PARAM_VALUE);
	t.params[0] = IPUX_UN_NEG;
	CT_EXPECT(&t, IPUX_CL_UNARY, 0);
	ct_p(&t, 0); ct_p(&t, 0); ct_p(&t, 0);
	CT_EXPECT(&t, IPUX_CL_UNARY, IPUX_E_PARAM_COUNT);
	t.nparams = 1;
	t.ops[1].dtype = IPUX_DT_F32;
	CT_EXPECT(&t, IPUX_CL_UNARY, IPUX_E_OPERAND_TYPE);
	ct_free(&t);
}

/* ------------------------------------------------------------ BINARY */

/*
 * A random broadcast layout: for each dim the operand either has it or
 * broadcasts it (stride 0); the dims it has are stored in a random order.
 * Returns the operand's element count.
 */
static uint32_t rand_layout(struct ct_rng *r, uint32_t rank,
			    const uint32_t *shape, uint32_t *stride)
{
	uint32_t own[IPUX_MAX_RANK], order[IPUX_MAX_RANK], k, s = 1;

	for (k = 0; k < rank; k++) {
		own[k] = ct_int(r, 0, 9) < 3 ? 1 : shape[k];
		order[k] = k;
	}
	if (ct_int(r, 0, 2) == 0)
		for (k = rank; k > 1; k--) {
			uint32_t j = (uint32_t)ct_int(r, 0, k - 1), x = order[k - 1];

			order[k - 1] = order[j];
			order[j] = x;
		}
	for (k = rank; k-- > 0;) {
		uint32_t d = order[k];

		stride[d] = own[d] == 1 ? 0 : s;
		s *= own[d];
	}
	return s;
}

static void rand_shape(struct ct_rng *r, uint32_t *rank, uint32_t *shape,
		       uint32_t maxn)
{
	uint32_t k, n;

	do {
		*rank = (uint32_t)ct_int(r, 1, 4);
		n = 1;
		for (k = 0; k < *rank; k++) {
			shape[k] = ct_size(r);
			n *= shape[k];
		}
	} while (n > maxn);
}

static double bin_ref(uint32_t op, double x, double y, uint32_t dt)
{
	int fl = dt == IPUX_DT_F32 || dt == IPUX_DT_F16;

	switch (op) {
	case IPUX_BIN_ADD: return x + y;
	case IPUX_BIN_SUB: return x - y;
	case IPUX_BIN_MUL: return x * y;
	case IPUX_BIN_DIV:
		if (fl)
			return x / y;
		return y == 0 ? 0 : trunc(x / y);
	case IPUX_BIN_POW: return pow(x, y);
	case IPUX_BIN_MAX: return x > y ? x : y;
	case IPUX_BIN_MIN: return x < y ? x : y;
	case IPUX_BIN_MOD:
		if (fl)
			return fmod(x, y);
		return y == 0 ? 0 : (double)((int64_t)x % (int64_t)y);
	case IPUX_BIN_EQUAL: return x == y;
	case IPUX_BIN_NOT_EQUAL: return x != y;
	case IPUX_BIN_LESS: return x < y;
	case IPUX_BIN_LESS_EQUAL: return x <= y;
	case IPUX_BIN_GREATER: return x > y;
	case IPUX_BIN_GREATER_EQUAL: return x >= y;
	case IPUX_BIN_AND: return (x != 0) && (y != 0);
	case IPUX_BIN_OR: return (x != 0) || (y != 0);
	case IPUX_BIN_XOR: return (x != 0) != (y != 0);
	case IPUX_BIN_PRELU: return x >= 0 ? x : x * y;
	case IPUX_BIN_ADD_RELU: return x + y < 0 ? 0 : x + y;
	default: abort();
	}
}

static int bin_ok(uint32_t op, uint32_t dt)
{
	int cmp = op >= IPUX_BIN_EQUAL && op <= IPUX_BIN_GREATER_EQUAL;
	int logic = op >= IPUX_BIN_AND && op <= IPUX_BIN_XOR;

	switch (dt) {
	case IPUX_DT_F32:
	case IPUX_DT_F16: return !logic;
	case IPUX_DT_I32: return !logic && op != IPUX_BIN_POW && op != IPUX_BIN_ADD_RELU;
	case IPUX_DT_U8: return cmp || logic;
	default: return 0;
	}
}

TEST(binary_random)
{
	static const uint32_t dts[] = { IPUX_DT_F32, IPUX_DT_F16, IPUX_DT_I32,
					IPUX_DT_U8 };
	struct ct_rng r = { 2024 };
	struct ct_tile t;
	uint32_t op, d, it;

	ct_init(&t, 1 << 18);
	for (op = 0; op < IPUX_BIN_COUNT; op++)
		for (d = 0; d < 4; d++) {
			uint32_t dt = dts[d];

			if (!bin_ok(op, dt))
				continue;
			for (it = 0; it < 12; it++) {
				uint32_t rank, shape[IPUX_MAX_RANK], as[IPUX_MAX_RANK],
					bs[IPUX_MAX_RANK], na, nb, n = 1, k, A, B, O, i;
				uint32_t odt = (op >= IPUX_BIN_EQUAL && op <= IPUX_BIN_XOR)
						       ? IPUX_DT_U8 : dt;
				double *want;

				rand_shape(&r, &rank, shape, 5000);
				for (k = 0; k < rank; k++)
					n *= shape[k];
				na = rand_layout(&r, rank, shape, as);
				nb = rand_layout(&r, rank, shape, bs);
				ct_reset(&t);
				A = ct_op(&t, dt, na);
				B = ct_op(&t, dt, nb);
				O = ct_op(&t, odt, n);
				ct_p(&t, op);
				ct_p(&t, rank);
				for (k = 0; k < rank; k++) ct_p(&t, shape[k]);
				for (k = 0; k < rank; k++) ct_p(&t, as[k]);
				for (k = 0; k < rank; k++) ct_p(&t, bs[k]);
				if (dt == IPUX_DT_U8) {
					ct_fill_rand(&t, &r, A, 0, 3);
					ct_fill_rand(&t, &r, B, 0, 3);
				} else if (op == IPUX_BIN_POW) {
					ct_fill_rand(&t, &r, A, 0.25, 3);
					ct_fill_rand(&t, &r, B, -2, 2);
				} else if (dt == IPUX_DT_I32) {
					ct_fill_rand(&t, &r, A, -1000, 1000);
					ct_fill_rand(&t, &r, B, -9, 9); /* zeros too */
				} else {
					ct_fill_rand(&t, &r, A, -3, 3);
					ct_fill_rand(&t, &r, B, -3, 3);
					for (i = 0; i < nb; i++) /* no 0 divisor */
						if (fabs(ct_get(&t, B, i)) < 0.1)
							ct_set(&t, B, i, 0.5);
					if (op >= IPUX_BIN_EQUAL && na > 0 && nb > 0)
						ct_set(&t, B, 0, ct_get(&t, A, 0));
				}
				want = ct_dalloc(n);
				{
					uint32_t idx[IPUX_MAX_RANK] = { 0 };

					for (i = 0; i < n; i++) {
						size_t ai = 0, bi = 0;

						for (k = 0; k < rank; k++) {
							ai += (size_t)idx[k] * as[k];
							bi += (size_t)idx[k] * bs[k];
						}
						want[i] = bin_ref(op, ct_get(&t, A, ai),
								  ct_get(&t, B, bi), dt);
						for (k = rank; k-- > 0;) {
							if (++idx[k] < shape[k])
								break;
							idx[k] = 0;
						}
					}
				}
				CHECK_EQ_INT(ct_run(&t, IPUX_CL_BINARY), 0);
				CHECK_MSG(ct_compare(&t, O, want,
						     op == IPUX_BIN_POW ? 4 * ct_rtol(odt) : ct_rtol(odt),
						     ct_atol(odt), "BINARY") == 0,
					  "op %u dt %u rank %u", op, dt, rank);
				free(want);
			}
		}
	ct_free(&t);
}

TEST(binary_int_edges)
{
	struct ct_tile t;
	int32_t *a, *b, *o;

	ct_init(&t, 4096);
	ct_op(&t, IPUX_DT_I32, 4);
	ct_op(&t, IPUX_DT_I32, 4);
	ct_op(&t, IPUX_DT_I32, 4);
	ct_p(&t, IPUX_BIN_DIV); ct_p(&t, 1); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 1);
	a = ct_ptr(&t, 0);
	b = ct_ptr(&t, 1);
	a[0] = INT32_MIN; b[0] = -1;
	a[1] = 7; b[1] = 0;
	a[2] = -7; b[2] = 2;
	a[3] = INT32_MAX; b[3] = INT32_MAX;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_BINARY), 0);
	o = ct_ptr(&t, 2);
	CHECK(o[0] == INT32_MIN && o[1] == 0 && o[2] == -3 && o[3] == 1);
	t.params[0] = IPUX_BIN_MOD;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_BINARY), 0);
	CHECK(o[0] == 0 && o[1] == 0 && o[2] == -1 && o[3] == 0);
	t.params[0] = IPUX_BIN_ADD;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_BINARY), 0);
	CHECK(o[3] == -2); /* wraps */
	ct_free(&t);
}

TEST(binary_check)
{
	struct ct_tile t;

	ct_init(&t, 8192);
	ct_op(&t, IPUX_DT_F32, 3 * 4);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 3 * 4);
	ct_p(&t, IPUX_BIN_ADD); ct_p(&t, 2);
	ct_p(&t, 3); ct_p(&t, 4);	/* shape */
	ct_p(&t, 4); ct_p(&t, 1);	/* astride */
	ct_p(&t, 0); ct_p(&t, 1);	/* bstride: broadcast rows */
	CT_REJECTS(&t, IPUX_CL_BINARY, 1, IPUX_DT_F16, 2);
	/* comparisons need a U8 out */
	t.params[0] = IPUX_BIN_LESS;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_OPERAND_TYPE);
	t.ops[2].dtype = IPUX_DT_U8;
	CT_EXPECT(&t, IPUX_CL_BINARY, 0);
	t.ops[2].dtype = IPUX_DT_F32;
	t.params[0] = IPUX_BIN_AND; /* logic on f32 */
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_OPERAND_TYPE);
	t.params[0] = IPUX_BIN_COUNT;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_PARAM_VALUE);
	t.params[0] = IPUX_BIN_ADD;
	/* a stride that walks off a's 12 elements */
	t.params[4] = 5;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_OPERAND_SHAPE);
	t.params[4] = 4;
	/* b stride overflowing 64 bits must not wrap into range */
	t.params[6] = 0xffffffffu;
	t.params[7] = 0xffffffffu;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_OPERAND_SHAPE);
	t.params[6] = 0;
	t.params[7] = 1;
	t.params[1] = 0;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_PARAM_VALUE);
	t.params[1] = 7;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_PARAM_VALUE);
	t.params[1] = 2;
	t.params[2] = 0;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_PARAM_VALUE);
	t.params[2] = 3;
	/* huge shape whose product wraps to 12 in 32 bits */
	t.params[2] = 0x40000003u;
	t.params[3] = 4;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_PARAM_VALUE);
	t.params[2] = 3;
	CT_EXPECT(&t, IPUX_CL_BINARY, 0);
	t.nparams = 9;
	t.params[8] = 0;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_PARAM_COUNT);
	t.nparams = 1;
	CT_EXPECT(&t, IPUX_CL_BINARY, IPUX_E_PARAM_COUNT);
	ct_free(&t);
}

/* ---------------------------------------------------------------- WHERE */

TEST(where_random)
{
	struct ct_rng r = { 31337 };
	struct ct_tile t;
	uint32_t d, it;

	ct_init(&t, 1 << 18);
	for (d = 0; d < NDT; d++)
		for (it = 0; it < 10; it++) {
			uint32_t dt = all_dt[d], rank, shape[IPUX_MAX_RANK];
			uint32_t cs[IPUX_MAX_RANK], xs[IPUX_MAX_RANK], ys[IPUX_MAX_RANK];
			uint32_t nc, nx, ny, n = 1, k, C, X, Y, O, i;
			uint32_t idx[IPUX_MAX_RANK] = { 0 };
			double *want;

			rand_shape(&r, &rank, shape, 4000);
			for (k = 0; k < rank; k++)
				n *= shape[k];
			nc = rand_layout(&r, rank, shape, cs);
			nx = rand_layout(&r, rank, shape, xs);
			ny = rand_layout(&r, rank, shape, ys);
			ct_reset(&t);
			C = ct_op(&t, IPUX_DT_U8, nc);
			X = ct_op(&t, dt, nx);
			Y = ct_op(&t, dt, ny);
			O = ct_op(&t, dt, n);
			ct_p(&t, rank);
			for (k = 0; k < rank; k++) ct_p(&t, shape[k]);
			for (k = 0; k < rank; k++) ct_p(&t, cs[k]);
			for (k = 0; k < rank; k++) ct_p(&t, xs[k]);
			for (k = 0; k < rank; k++) ct_p(&t, ys[k]);
			ct_fill_rand(&t, &r, C, 0, 3);
			ct_fill_rand(&t, &r, X, -100, 100);
			ct_fill_rand(&t, &r, Y, -100, 100);
			want = ct_dalloc(n);
			for (i = 0; i < n; i++) {
				size_t ci = 0, xi = 0, yi = 0;

				for (k = 0; k < rank; k++) {
					ci += (size_t)idx[k] * cs[k];
					xi += (size_t)idx[k] * xs[k];
					yi += (size_t)idx[k] * ys[k];
				}
				want[i] = ct_get(&t, C, ci) != 0 ? ct_get(&t, X, xi)
								 : ct_get(&t, Y, yi);
				for (k = rank; k-- > 0;) {
					if (++idx[k] < shape[k])
						break;
					idx[k] = 0;
				}
			}
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_WHERE), 0);
			CHECK_MSG(ct_compare(&t, O, want, 0, 0, "WHERE") == 0,
				  "dt %u rank %u", dt, rank);
			free(want);
		}
	ct_reset(&t);
	ct_op(&t, IPUX_DT_U8, 4);
	ct_op(&t, IPUX_DT_F32, 1);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_p(&t, 1); ct_p(&t, 4); ct_p(&t, 1); ct_p(&t, 0); ct_p(&t, 1);
	CT_REJECTS(&t, IPUX_CL_WHERE, 0, IPUX_DT_I32, 3);
	t.ops[2].dtype = IPUX_DT_F16;
	CT_EXPECT(&t, IPUX_CL_WHERE, IPUX_E_OPERAND_TYPE);
	t.ops[2].dtype = IPUX_DT_F32;
	t.params[3] = 1; /* x stride over its 1 element */
	CT_EXPECT(&t, IPUX_CL_WHERE, IPUX_E_OPERAND_SHAPE);
	t.params[3] = 0;
	t.params[0] = 9;
	CT_EXPECT(&t, IPUX_CL_WHERE, IPUX_E_PARAM_VALUE);
	ct_free(&t);
}


/* ------------------------------------------------------------ f16 casts */

/*
 * The codelets' branchless (vectorisable) f16 conversions must be
 * bit-identical to half.h: every f16 value, and f32 values around every
 * f16 rounding boundary (all sign/exponent/top-mantissa patterns with the
 * low 13 bits at the interesting points).  Seen through CAST.
 */
TEST(f16_conversions_exact)
{
	static const uint32_t low[] = { 0, 1, 0xfff, 0x1000, 0x1001, 0x1fff };
	struct ct_tile t;
	uint32_t i, hi, l, bad = 0;
	const uint32_t nlow = sizeof(low) / sizeof(low[0]), chunk = 1u << 16;

	ct_init(&t, (size_t)chunk * nlow * 6 + 4096);
	/* f16 -> f32: all 65536 */
	ct_op(&t, IPUX_DT_F16, 65536);
	ct_op(&t, IPUX_DT_F32, 65536);
	for (i = 0; i < 65536; i++)
		((uint16_t *)ct_ptr(&t, 0))[i] = (uint16_t)i;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST), 0);
	for (i = 0; i < 65536; i++) {
		float w = ipu_f16_to_f32((uint16_t)i), g = ((float *)ct_ptr(&t, 1))[i];

		if (memcmp(&w, &g, 4) && bad++ < 3)
			fprintf(stderr, "  f16 %04x -> %08x, half.h %08x\n", i,
				ct_fbits(g), ct_fbits(w));
	}
	/* f32 -> f16 around every boundary, in chunks of 2^16 * nlow */
	for (hi = 0; hi < (1u << 19); hi += chunk) {
		ct_reset(&t);
		ct_op(&t, IPUX_DT_F32, chunk * nlow);
		ct_op(&t, IPUX_DT_F16, chunk * nlow);
		for (i = 0; i < chunk; i++)
			for (l = 0; l < nlow; l++) {
				uint32_t b = ((hi + i) << 13) | low[l];

				memcpy((float *)ct_ptr(&t, 0) + i * nlow + l, &b, 4);
			}
		CHECK_EQ_INT(ct_run(&t, IPUX_CL_CAST), 0);
		for (i = 0; i < chunk * nlow; i++) {
			float f = ((float *)ct_ptr(&t, 0))[i];
			uint16_t w = ipu_f32_to_f16(f), g = ((uint16_t *)ct_ptr(&t, 1))[i];

			if (w != g && bad++ < 3)
				fprintf(stderr, "  f32 %08x -> %04x, half.h %04x\n",
					ct_fbits(f), g, w);
		}
	}
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}


static void exp_tanh_accuracy(uint32_t op)
{
	/* a sweep over all f32 values: error < 2 ulp, exact specials */
	struct ct_tile t;
	const uint32_t n = 1u << 20;
	uint32_t i, bad = 0;
	double maxulp = 0;

	ct_init(&t, (size_t)n * 8 + 4096);
	ct_op(&t, IPUX_DT_F32, n);
	ct_op(&t, IPUX_DT_F32, n);
	ct_p(&t, op);
	for (i = 0; i < n; i++) {
		uint32_t b = i * 4099u;

		memcpy((float *)ct_ptr(&t, 0) + i, &b, 4);
	}
	((float *)ct_ptr(&t, 0))[0] = INFINITY;
	((float *)ct_ptr(&t, 0))[1] = -INFINITY;
	((float *)ct_ptr(&t, 0))[2] = NAN;
	((float *)ct_ptr(&t, 0))[3] = 88.72283935546875f;
	((float *)ct_ptr(&t, 0))[4] = 88.72284f;
	((float *)ct_ptr(&t, 0))[5] = -103.972084f;
	((float *)ct_ptr(&t, 0))[6] = -87.5f;
	CHECK_EQ_INT(ct_run(&t, IPUX_CL_UNARY), 0);
	for (i = 0; i < n; i++) {
		float x = ((float *)ct_ptr(&t, 0))[i];
		float g = ((float *)ct_ptr(&t, 1))[i];
		double w = op == IPUX_UN_EXP ? exp((double)x) : tanh((double)x);
		float wf = (float)w;
		double ulp;

		if (isnan(x)) {
			if (!isnan(g) && bad++ < 3)
				fprintf(stderr, "  exp(nan) = %g\n", g);
			continue;
		}
		if (isinf(wf) || wf == 0) {
			if (g != wf && fabs(g - w) > 0x1p-149 && bad++ < 3)
				fprintf(stderr, "  exp(%a) = %a want %a\n", x, g, wf);
			continue;
		}
		ulp = fabs((double)g - w) /
		      (double)(nextafterf(fabsf(wf), INFINITY) - fabsf(wf));
		if (ulp > maxulp)
			maxulp = ulp;
	}
	CHECK_MSG(maxulp < 2.0, "op %u: max error %.3f ulp", op, maxulp);
	CHECK_EQ_INT(bad, 0);
	ct_free(&t);
}

TEST(unary_exp_tanh_accuracy)
{
	exp_tanh_accuracy(IPUX_UN_EXP);
	exp_tanh_accuracy(IPUX_UN_TANH);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(table);
	RUN(copy);
	RUN(fill);
	RUN(iota);
	RUN(cast);
	RUN(f16_conversions_exact);
	RUN(unary_float);
	RUN(unary_int);
	RUN(unary_exp_tanh_accuracy);
	RUN(binary_random);
	RUN(binary_int_edges);
	RUN(binary_check);
	RUN(where_random);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
