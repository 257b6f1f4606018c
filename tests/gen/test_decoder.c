// SPDX-License-Identifier: MIT
/*
 * test_decoder.c - a decoder compiled with its key/value cache as state,
 * stepped token by token through the ModelRunner:
 *
 *   test_decoder MODEL.ipuef TOKENS.npy LOGITS.npy
 *
 * TOKENS (i64 [S]) are the ids torch's greedy loop fed, LOGITS (f32
 * [S, V]) what it computed at each step (tests/gen/tiny_gpt.py).  Checks:
 * every step's logits within 1e-4 of torch's, the same argmax, and the
 * device's own greedy token (next_token) equal to it; the
 * bytes streamed per step (the device's counters) exactly the user
 * anchors' (ids, position, logits: nothing of the cache, whatever its
 * length); the cache holds the steps' keys at positions < S and zeros
 * after; after a reset the first steps give the same logits again.
 * ipurt_generate gives torch's greedy tokens, streaming the logits only
 * when asked for them: without, a step streams the token, its position
 * and next_token (the model's tokens-only program), 24 bytes whatever the
 * vocabulary and the cache.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/ipu.h"
#include "ipu/npy.h"
#include "ipu/runtime.h"

static const char *model, *tokens_path, *logits_path;
static struct ipurt_npy tokens, want;

static struct ipurt_runner *open_runner(void)
{
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	char err[512];

	ipurt_config_init(&cfg);
	if (ipurt_runner_create(model, &cfg, &r, err, sizeof(err)))
		fprintf(stderr, "  runner: %s\n", err);
	return r;
}

static int64_t last_token;	/* the device's greedy choice of the last step */

/* One decode step: logits of token `id` at position `pos`. */
static int step(struct ipurt_runner *r, int64_t id, int64_t pos, float *logits, uint64_t vocab)
{
	struct ipurt_tensor in[2] = {
		{ "input_ids", IPURT_DT_I64, 2, { 1, 1 }, &id },
		{ "position_ids", IPURT_DT_I64, 2, { 1, 1 }, &pos },
	};
	struct ipurt_tensor out[2] = {
		{ "logits", IPURT_DT_F32, 3, { 1, 1, vocab }, logits },
		{ "next_token", IPURT_DT_I64, 2, { 1, 1 }, &last_token },
	};
	char err[512];
	int rc = ipurt_runner_execute(r, in, 2, out, 2, err, sizeof(err));

	if (rc)
		fprintf(stderr, "  step %lld: %s\n", (long long)pos, err);
	return rc;
}

/* The user anchors' bytes of Main (program 0). */
static uint64_t user_anchor_bytes(const struct ipuef_metadata *m)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < m->num_anchors; i++)
		if (m->anchors[i].kind == IPUEF_ANCHOR_USER && (m->anchors[i].programs & 1))
			n += ipuef_anchor_bytes(&m->anchors[i]);
	return n;
}

/* The user anchors' bytes of one program (its bit in `programs`). */
static uint64_t program_bytes(const struct ipuef_file *f, const char *name)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	const struct ipuef_program *p = ipuef_find_program(f, name);
	uint64_t n = 0;

	for (uint32_t i = 0; p && i < m->num_anchors; i++)
		if (m->anchors[i].kind == IPUEF_ANCHOR_USER && (m->anchors[i].programs & (1ull << p->index)))
			n += ipuef_anchor_bytes(&m->anchors[i]);
	return n;
}

static uint32_t argmax(const float *v, uint64_t n)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

TEST(steps_match_torch_with_the_cache_on_the_device)
{
	struct ipurt_runner *r = open_runner();
	const struct ipuef_metadata *m;
	uint64_t steps = tokens.dims[0], vocab = want.dims[1], per_step = 0;
	const int64_t *ids = tokens.data;
	const float *ref = want.data;
	float *logits = calloc(vocab, sizeof(float));
	double worst = 0;

	REQUIRE(r && logits);
	m = ipuef_metadata(ipurt_runner_file(r));
	CHECK_MSG(m->num_states >= 2, "%u states: the cache did not become state", m->num_states);
	for (uint64_t s = 0; s < steps; s++) {
		struct ipu_counters c0, c1;

		REQUIRE(ipu_counters(ipurt_runner_device(r), &c0) == 0);
		REQUIRE(step(r, ids[s], (int64_t)s, logits, vocab) == 0);
		REQUIRE(ipu_counters(ipurt_runner_device(r), &c1) == 0);
		per_step = (c1.stream_bytes_in - c0.stream_bytes_in) +
			   (c1.stream_bytes_out - c0.stream_bytes_out);
		CHECK_MSG(per_step == user_anchor_bytes(m),
			  "step %llu streamed %llu bytes, the user anchors have %llu",
			  (unsigned long long)s, (unsigned long long)per_step,
			  (unsigned long long)user_anchor_bytes(m));
		for (uint64_t v = 0; v < vocab; v++) {
			double d = fabs((double)logits[v] - ref[s * vocab + v]);

			if (d > worst)
				worst = d;
		}
		CHECK_MSG(argmax(logits, vocab) == argmax(ref + s * vocab, vocab),
			  "step %llu: argmax %u, torch %u", (unsigned long long)s,
			  argmax(logits, vocab), argmax(ref + s * vocab, vocab));
		CHECK_MSG(last_token == argmax(ref + s * vocab, vocab),
			  "step %llu: the device chose token %lld, torch's argmax is %u",
			  (unsigned long long)s, (long long)last_token, argmax(ref + s * vocab, vocab));
	}
	CHECK_MSG(worst <= 1e-4, "max |logit - torch| %.3g over %llu steps", worst,
		  (unsigned long long)steps);
	printf("# %llu steps, max |logit - torch| %.3g, %llu stream bytes per step\n",
	       (unsigned long long)steps, worst, (unsigned long long)per_step);
	free(logits);
	ipurt_runner_destroy(r);
}

TEST(cache_holds_the_steps_and_resets)
{
	struct ipurt_runner *r = open_runner();
	const struct ipuef_state *k;
	uint64_t steps = tokens.dims[0], vocab = want.dims[1], bytes, slot;
	const int64_t *ids = tokens.data;
	float *logits = calloc(vocab, sizeof(float)), *cache = NULL;
	char err[512];

	REQUIRE(r && logits);
	k = ipuef_find_state(ipurt_runner_file(r), "past_key_values.0.key");
	REQUIRE(k && k->rank == 4);
	bytes = ipuef_state_bytes(k);
	slot = k->dims[3];	/* [1, heads, positions, head dim] */
	cache = malloc(bytes);
	REQUIRE(cache);
	for (uint64_t s = 0; s < 3; s++)
		REQUIRE(step(r, ids[s], (int64_t)s, logits, vocab) == 0);
	REQUIRE(ipurt_runner_read_state(r, k->name, cache, bytes, err, sizeof(err)) == 0);
	for (uint64_t h = 0; h < k->dims[1]; h++)
		for (uint64_t p = 0; p < k->dims[2]; p++) {
			int nonzero = 0;

			for (uint64_t d = 0; d < slot; d++)
				nonzero |= cache[(h * k->dims[2] + p) * slot + d] != 0.0f;
			CHECK_MSG(nonzero == (p < 3), "head %llu position %llu: %s",
				  (unsigned long long)h, (unsigned long long)p,
				  nonzero ? "written" : "still zero");
		}
	REQUIRE(ipurt_runner_reset_state(r, err, sizeof(err)) == 0);
	REQUIRE(ipurt_runner_read_state(r, k->name, cache, bytes, err, sizeof(err)) == 0);
	for (uint64_t i = 0; i < bytes / 4; i++)
		CHECK(cache[i] == 0.0f);
	/* a fresh sequence: the same logits as the first time */
	for (uint64_t s = 0; s < 4 && s < steps; s++) {
		REQUIRE(step(r, ids[s], (int64_t)s, logits, vocab) == 0);
		for (uint64_t v = 0; v < vocab; v++)
			CHECK(fabs((double)logits[v] - ((const float *)want.data)[s * vocab + v]) <= 1e-4);
	}
	free(cache);
	free(logits);
	ipurt_runner_destroy(r);
}

/* ipurt_generate's callback: record tokens, compare logits, maybe stop. */
struct gen_seen {
	int64_t tok[64];
	uint32_t n, stop_after;
	double worst;		/* |logits - torch| of the steps reported */
	int logits_missing;
};

static int seen_token(void *ctx, uint32_t index, int64_t token, const float *logits,
		      uint64_t vocab)
{
	struct gen_seen *g = ctx;
	/* new token i comes from the step at position 2 + i (3 prompt tokens) */
	uint64_t s = 2 + index;

	if (g->n < 64)
		g->tok[g->n++] = token;
	if (!logits)
		g->logits_missing = 1;
	else if (s < want.dims[0])
		for (uint64_t v = 0; v < vocab; v++) {
			double d = fabs((double)logits[v] - ((const float *)want.data)[s * vocab + v]);

			g->worst = d > g->worst ? d : g->worst;
		}
	return g->stop_after && g->n >= g->stop_after;
}

TEST(generate_gives_torchs_greedy_tokens)
{
	struct ipurt_runner *r = open_runner();
	const int64_t *ids = tokens.data;
	uint64_t steps = tokens.dims[0], vocab = want.dims[1];
	uint32_t expect = (uint32_t)(steps - 2);	/* torch's new tokens */
	struct ipurt_generate_opts o = { .max_new_tokens = expect, .want_logits = 1 };
	struct ipurt_generate_stats st;
	struct gen_seen g = { 0 };
	char err[512];

	REQUIRE(r && steps >= 4 && steps - 2 <= 64);
	REQUIRE(ipurt_generate(r, ids, 3, &o, seen_token, &g, &st, err, sizeof(err)) == 0);
	CHECK_EQ_INT(st.new_tokens, expect);
	CHECK_EQ_INT(g.n, expect);
	CHECK_EQ_INT(st.stopped, IPURT_GEN_STOP_LIMIT);
	CHECK(st.device_argmax);
	CHECK_EQ_INT(st.decode_steps, expect - 1);
	for (uint32_t i = 0; i < g.n; i++) {
		int64_t torch = i + 3 < steps ? ids[i + 3]
					     : (int64_t)argmax((const float *)want.data + (steps - 1) * vocab, vocab);

		CHECK_MSG(g.tok[i] == torch, "new token %u: %lld, torch %lld", i, (long long)g.tok[i],
			  (long long)torch);
	}
	CHECK(!g.logits_missing);
	CHECK_MSG(g.worst <= 1e-4, "logits %.3g from torch's", g.worst);
	CHECK_EQ_INT(st.stream_bytes_per_step, user_anchor_bytes(ipuef_metadata(ipurt_runner_file(r))));
	/* without the logits: the same tokens from the tokens-only program,
	 * which streams ids, position and next_token only */
	{
		struct gen_seen g2 = { 0 };

		o.want_logits = 0;
		REQUIRE(ipurt_generate(r, ids, 3, &o, seen_token, &g2, &st, err, sizeof(err)) == 0);
		CHECK_EQ_INT(g2.n, g.n);
		CHECK(!memcmp(g2.tok, g.tok, g.n * sizeof(g.tok[0])));
		CHECK(g2.logits_missing);
		CHECK_EQ_INT(program_bytes(ipurt_runner_file(r), IPUEF_PROGRAM_TOKENS), 24);
		CHECK_EQ_INT(st.stream_bytes_per_step, 24);
	}
	/* a stop token ends it, reported; so does the caller */
	o.stop_ids = &g.tok[4];
	o.num_stop = 1;
	o.want_logits = 0;
	memset(&g, 0, sizeof(g));
	REQUIRE(ipurt_generate(r, ids, 3, &o, seen_token, &g, &st, err, sizeof(err)) == 0);
	CHECK_EQ_INT(st.stopped, IPURT_GEN_STOP_TOKEN);
	CHECK(g.logits_missing);
	CHECK(g.n >= 1 && g.n <= 5 && g.tok[g.n - 1] == ids[3 + g.n - 1]);
	o.num_stop = 0;
	memset(&g, 0, sizeof(g));
	g.stop_after = 2;
	REQUIRE(ipurt_generate(r, ids, 3, &o, seen_token, &g, &st, err, sizeof(err)) == 0);
	CHECK_EQ_INT(st.stopped, IPURT_GEN_STOP_CALLER);
	CHECK_EQ_INT(g.n, 2);
	/* a replicated runner spreads the steps over devices: refused */
	{
		struct ipurt_config cfg;
		struct ipurt_runner *rr = NULL;

		ipurt_config_init(&cfg);
		cfg.device = "model,model";
		cfg.num_devices = IPURT_ALL_LISTED;
		REQUIRE(ipurt_runner_create(model, &cfg, &rr, err, sizeof(err)) == 0);
		CHECK_EQ_INT(ipurt_generate(rr, ids, 3, &o, NULL, NULL, &st, err, sizeof(err)),
			     IPURT_E_INVAL);
		CHECK(strstr(err, "one device"));
		ipurt_runner_destroy(rr);
	}
	/* past the cache: refused */
	o.max_positions = 2;
	CHECK_EQ_INT(ipurt_generate(r, ids, 3, &o, NULL, NULL, &st, err, sizeof(err)), IPURT_E_INVAL);
	CHECK(strstr(err, "holds 2 positions"));
	ipurt_runner_destroy(r);
}

/* The tokens of one generation (logits of each step checked against top_k). */
struct sampled {
	int64_t tok[64];
	uint32_t n, top_k, outside;
};

static int sampled_token(void *ctx, uint32_t index, int64_t token, const float *logits,
			 uint64_t vocab)
{
	struct sampled *g = ctx;
	uint32_t above = 0;

	(void)index;
	if (g->n < 64)
		g->tok[g->n++] = token;
	/* the token is among the top_k: fewer than top_k logits beat it */
	for (uint64_t v = 0; logits && v < vocab; v++)
		above += logits[v] > logits[token];
	g->outside += !logits || (g->top_k && above >= g->top_k);
	return 0;
}

static void run_sampled(struct ipurt_runner *r, const struct ipurt_generate_opts *o,
			struct sampled *g)
{
	struct ipurt_generate_stats st;
	char err[512];

	memset(g, 0, sizeof(*g));
	g->top_k = o->top_k;
	if (ipurt_generate(r, tokens.data, 3, o, sampled_token, g, &st, err, sizeof(err)))
		fprintf(stderr, "  generate: %s\n", err);
}

TEST(sampling_is_seeded_and_stays_in_the_top_k)
{
	struct ipurt_runner *r = open_runner();
	const int64_t *ids = tokens.data;
	struct ipurt_generate_opts o = { .max_new_tokens = 16, .want_logits = 1,
					 .temperature = 0.8f, .top_k = 20, .top_p = 0.9f, .seed = 7 };
	struct sampled a, b, c;

	REQUIRE(r && tokens.dims[0] >= 19);
	run_sampled(r, &o, &a);
	run_sampled(r, &o, &b);
	o.seed = 8;
	run_sampled(r, &o, &c);
	CHECK_EQ_INT(a.n, 16);
	CHECK(a.n == b.n && !memcmp(a.tok, b.tok, a.n * sizeof(a.tok[0])));	/* same seed */
	CHECK(a.n == c.n && memcmp(a.tok, c.tok, a.n * sizeof(a.tok[0])));	/* another */
	CHECK_EQ_INT(a.outside + c.outside, 0);
	/* sampling among one token, or a sliver of probability, is greedy */
	o.top_k = 1;
	run_sampled(r, &o, &b);
	o.top_k = 0;
	o.top_p = 1e-6f;
	run_sampled(r, &o, &c);
	for (uint32_t i = 0; i < 16; i++) {
		CHECK(b.tok[i] == ids[3 + i]);
		CHECK(c.tok[i] == ids[3 + i]);
	}
	o.temperature = -1;
	CHECK_EQ_INT(ipurt_generate(r, ids, 3, &o, NULL, NULL, NULL, (char[64]){ 0 }, 64), IPURT_E_INVAL);
	ipurt_runner_destroy(r);
}

int main(int argc, char **argv)
{
	char err[512];

	if (argc != 4) {
		fprintf(stderr, "usage: test_decoder MODEL.ipuef TOKENS.npy LOGITS.npy\n");
		return 2;
	}
	model = argv[1];
	tokens_path = argv[2];
	logits_path = argv[3];
	if (ipurt_npy_read(tokens_path, &tokens, err, sizeof(err)) ||
	    ipurt_npy_read(logits_path, &want, err, sizeof(err)) || tokens.dtype != IPURT_DT_I64 ||
	    want.dtype != IPURT_DT_F32 || want.rank != 2 || tokens.dims[0] != want.dims[0]) {
		fprintf(stderr, "test_decoder: bad reference files: %s\n", err);
		printf("0 passed, 1 failed\n");
		return 1;
	}
	RUN(steps_match_torch_with_the_cache_on_the_device);
	RUN(cache_holds_the_steps_and_resets);
	RUN(generate_gives_torchs_greedy_tokens);
	RUN(sampling_is_seeded_and_stays_in_the_top_k);
	ipurt_npy_free(&tokens);
	ipurt_npy_free(&want);
	return TH_DONE();
}
