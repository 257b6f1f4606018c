/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_sample.c - SAMPLE against a plain C reference: the row's
 * candidates sorted from its whole logits, softmax at the temperature,
 * the top-k and top-p cuts, and the draw from a splitmix64 stream stepped
 * to the counter; greedy cases and check()'s refusals.
 */
#include <stdlib.h>

#include "cl_test.h"
#include "ipu/sample.h"

/* splitmix64 stepped counter + 1 times from seed, to a double in [0, 1). */
static double ref_uniform(uint64_t seed, uint64_t counter)
{
	uint64_t s = seed, z = 0;

	for (uint64_t i = 0; i <= counter; i++) {
		z = (s += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
	}
	return (double)(z >> 11) * 0x1.0p-53;
}

static const float *g_row;

static int by_logit(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (g_row[x] != g_row[y])
		return g_row[x] < g_row[y] ? 1 : -1;
	return (x > y) - (x < y);
}

/* The token of one row of `vocab` logits. */
static int64_t ref_sample(const float *row, uint32_t vocab, float temp, uint32_t top_k, float top_p,
			  uint64_t seed, uint64_t counter)
{
	uint32_t *ord = malloc(vocab * sizeof(*ord)), n = vocab, k;
	double *w = malloc(vocab * sizeof(*w)), sum = 0, acc = 0, u;
	int64_t tok;

	if (!ord || !w)
		abort();
	for (k = 0; k < vocab; k++)
		ord[k] = k;
	g_row = row;
	qsort(ord, vocab, sizeof(*ord), by_logit);
	if (top_k && top_k < n)
		n = top_k;
	if (!(temp > 0)) {
		tok = ord[0];
		goto out;
	}
	for (k = 0; k < n; k++) {
		w[k] = exp((double)(row[ord[k]] / temp) - (double)(row[ord[0]] / temp));
		sum += w[k];
	}
	if (top_p > 0 && top_p < 1) {
		for (k = 0; k < n; k++) {
			acc += w[k] / sum;
			if (acc >= top_p)
				break;
		}
		if (k < n)
			n = k + 1;
		for (sum = 0, k = 0; k < n; k++)
			sum += w[k];
	}
	u = ref_uniform(seed, counter) * sum;
	for (acc = 0, k = 0; k + 1 < n; k++) {
		acc += w[k];
		if (u < acc)
			break;
	}
	tok = ord[k];
out:
	free(ord);
	free(w);
	return tok;
}

/* Rows of random logits; the vertex gets each row's top K (as TopK gives
 * them) and must draw the reference's token. */
TEST(sample_random)
{
	struct ct_tile t;
	struct ct_rng r = { 0x5a3bull };
	int bad = 0, greedy_seen = 0;

	ct_init(&t, 1 << 16);
	for (int it = 0; it < 400; it++) {
		uint32_t dt = it % 2 ? IPUX_DT_F16 : IPUX_DT_F32, idt = it % 3 ? IPUX_DT_I64 : IPUX_DT_I32;
		uint32_t rows = (uint32_t)ct_int(&r, 1, 4), vocab = (uint32_t)ct_int(&r, 1, 200);
		uint32_t K = vocab < IPU_SAMPLE_MAX_K ? vocab : IPU_SAMPLE_MAX_K;
		uint32_t V, X, P, Y, O;
		float *row = malloc(vocab * sizeof(float));
		uint32_t *ord = malloc(vocab * sizeof(uint32_t));

		if (!row || !ord)
			abort();
		ct_reset(&t);
		V = ct_op(&t, dt, rows * K);
		X = ct_op(&t, idt, rows * K);
		P = ct_op(&t, IPUX_DT_F32, rows * 2);
		Y = ct_op(&t, IPUX_DT_I64, rows * 3);
		O = ct_op(&t, it % 5 ? IPUX_DT_I64 : IPUX_DT_I32, rows);
		ct_p(&t, rows);
		ct_p(&t, K);
		for (uint32_t s = 0; s < rows; s++) {
			float temp = it % 7 == 0 ? 0.0f : (float)ct_unif(&r, 0.2, 2.0);
			uint32_t top_k = it % 11 == 0 ? 1 : (uint32_t)ct_int(&r, 1, K);
			float top_p = it % 3 == 0 ? 1.0f : (float)ct_unif(&r, 0.05, 1.0);
			uint64_t seed = ct_next(&r), counter = (uint64_t)ct_int(&r, 0, 5000);
			int64_t want, got;

			for (uint32_t v = 0; v < vocab; v++) {
				/* f16-exact values, some equal (ties by id) */
				row[v] = ipu_f16_to_f32(ipu_f32_to_f16((float)ct_unif(&r, -4, 4)));
				if (v % 9 == 4)
					row[v] = row[v / 2];
				ord[v] = v;
			}
			g_row = row;
			qsort(ord, vocab, sizeof(*ord), by_logit);
			for (uint32_t k = 0; k < K; k++) {
				ct_set(&t, V, (size_t)s * K + k, row[ord[k]]);
				if (idt == IPUX_DT_I64)
					((int64_t *)ct_ptr(&t, X))[(size_t)s * K + k] = ord[k];
				else
					((int32_t *)ct_ptr(&t, X))[(size_t)s * K + k] = (int32_t)ord[k];
			}
			((float *)ct_ptr(&t, P))[2 * s] = temp;
			((float *)ct_ptr(&t, P))[2 * s + 1] = top_p;
			((int64_t *)ct_ptr(&t, Y))[3 * s] = top_k;
			((int64_t *)ct_ptr(&t, Y))[3 * s + 1] = (int64_t)seed;
			((int64_t *)ct_ptr(&t, Y))[3 * s + 2] = (int64_t)counter;
			CT_EXPECT(&t, IPUX_CL_SAMPLE, 0);
			CHECK_EQ_INT(ct_run(&t, IPUX_CL_SAMPLE), 0);
			want = ref_sample(row, vocab, temp, top_k, top_p, seed, counter);
			got = (int64_t)ct_get(&t, O, s);
			if (got != want && bad++ < 3)
				fprintf(stderr, "  SAMPLE it %d row %u: got %lld want %lld\n", it, s,
					(long long)got, (long long)want);
			if (top_k == 1 || !(temp > 0)) {
				CHECK_EQ_INT(got, ord[0]);
				greedy_seen++;
			}
		}
		free(row);
		free(ord);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(greedy_seen > 0);
	ct_free(&t);
}

/* The same seed and counter draw alike; another counter usually not. */
TEST(sample_counter)
{
	int differ = 0;

	for (uint64_t c = 0; c < 64; c++) {
		CHECK(ipu_sample_uniform(7, c) == ref_uniform(7, c));
		CHECK(ipu_sample_uniform(7, c) >= 0 && ipu_sample_uniform(7, c) < 1);
		differ += ipu_sample_uniform(7, c) != ipu_sample_uniform(7, c + 1);
		differ += ipu_sample_uniform(7, c) != ipu_sample_uniform(8, c);
	}
	CHECK_EQ_INT(differ, 128);
}

TEST(sample_check)
{
	struct ct_tile t;

	ct_init(&t, 1 << 12);
	ct_op(&t, IPUX_DT_F32, 8);
	ct_op(&t, IPUX_DT_I64, 8);
	ct_op(&t, IPUX_DT_F32, 4);
	ct_op(&t, IPUX_DT_I64, 6);
	ct_op(&t, IPUX_DT_I64, 2);
	ct_p(&t, 2);
	ct_p(&t, 4);
	CT_EXPECT(&t, IPUX_CL_SAMPLE, 0);
	CT_REJECTS(&t, IPUX_CL_SAMPLE, 0, IPUX_DT_I32, 0);
	t.ops[2].dtype = IPUX_DT_F16;
	CT_EXPECT(&t, IPUX_CL_SAMPLE, IPUX_E_OPERAND_TYPE);
	t.ops[2].dtype = IPUX_DT_F32;
	t.ops[3].dtype = IPUX_DT_I32;
	CT_EXPECT(&t, IPUX_CL_SAMPLE, IPUX_E_OPERAND_TYPE);
	t.ops[3].dtype = IPUX_DT_I64;
	t.params[1] = 0;
	CT_EXPECT(&t, IPUX_CL_SAMPLE, IPUX_E_PARAM_VALUE);
	t.params[1] = IPU_SAMPLE_MAX_K + 1;
	CT_EXPECT(&t, IPUX_CL_SAMPLE, IPUX_E_PARAM_VALUE);
	t.params[1] = 4;
	t.params[0] = 3;	/* rows * k != values' count */
	CT_EXPECT(&t, IPUX_CL_SAMPLE, IPUX_E_OPERAND_SHAPE);
	t.params[0] = 2;
	t.ops[4].offset = t.ops[3].offset;	/* out aliases keys */
	CT_EXPECT(&t, IPUX_CL_SAMPLE, IPUX_E_OPERAND_SHAPE);
	t.nparams = 1;
	CT_EXPECT(&t, IPUX_CL_SAMPLE, IPUX_E_PARAM_COUNT);
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(sample_random);
	RUN(sample_counter);
	RUN(sample_check);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
