// SPDX-License-Identifier: MIT
/*
 * test_sample.c - sampling on the device against the host's sampler:
 *
 *   test_sample MODEL.ipuef
 *
 * MODEL is a decoder compiled with its sampling program (one slot or
 * several).  For several seeds and settings (temperature, top-k, top-p),
 * ipurt_generate on the device and with host_sampling must give the same
 * tokens, token for token; the device's step streams the token and its
 * scalars, the host's the logits; top_k 1 gives the greedy tokens.  On a
 * model of several slots, sequences of different seeds and settings
 * sampled in the same steps (the step API) give each its own tokens of a
 * sequence alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/runtime.h"

#define NEW 24
#define NSEEDS 6

static const char *model;

struct cfg {
	float temperature;
	uint32_t top_k;
	float top_p;
};

static const struct cfg cfgs[] = {
	{ 0.8f, 20, 0.9f },
	{ 1.0f, 64, 1.0f },
	{ 1.5f, 5, 1.0f },
	{ 0.6f, 40, 0.5f },
};

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

struct got {
	int64_t t[NEW];
	uint32_t n;
};

static int on_token(void *ctx, uint32_t i, int64_t token, const float *logits, uint64_t vocab)
{
	struct got *g = ctx;

	(void)logits;
	(void)vocab;
	if (i < NEW)
		g->t[g->n++] = token;
	return 0;
}

static int generate(struct ipurt_runner *r, const struct ipurt_generate_opts *o, struct got *g,
		    struct ipurt_generate_stats *st)
{
	static const int64_t prompt[] = { 1, 2, 3 };
	char err[512];

	memset(g, 0, sizeof(*g));
	if (ipurt_generate(r, prompt, 3, o, on_token, g, st, err, sizeof(err))) {
		fprintf(stderr, "  generate: %s\n", err);
		return -1;
	}
	return 0;
}

static struct ipurt_generate_opts opts(const struct cfg *c, uint64_t seed)
{
	struct ipurt_generate_opts o;

	memset(&o, 0, sizeof(o));
	o.max_new_tokens = NEW;
	o.temperature = c->temperature;
	o.top_k = c->top_k;
	o.top_p = c->top_p;
	o.seed = seed;
	return o;
}

TEST(device_and_host_draw_the_same_tokens)
{
	struct ipurt_runner *r = open_runner();
	uint32_t agree = 0, total = 0, seqs = 0, differ_seed = 0;
	uint64_t dev_bytes = 0, host_bytes = 0;

	REQUIRE(r);
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		struct got first = { { 0 }, 0 };

		for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
			struct ipurt_generate_opts o = opts(&cfgs[c], seed);
			struct ipurt_generate_stats sd, sh;
			struct got d, h;

			REQUIRE(generate(r, &o, &d, &sd) == 0);
			o.host_sampling = 1;
			REQUIRE(generate(r, &o, &h, &sh) == 0);
			CHECK(sd.device_sampling && !sh.device_sampling);
			CHECK_EQ_INT(d.n, NEW);
			CHECK_EQ_INT(h.n, NEW);
			for (uint32_t i = 0; i < NEW && i < d.n && i < h.n; i++) {
				agree += d.t[i] == h.t[i];
				total++;
			}
			CHECK_MSG(!memcmp(d.t, h.t, sizeof(d.t)), "cfg %zu seed %llu: device and host differ", c,
				  (unsigned long long)seed);
			seqs++;
			dev_bytes = sd.stream_bytes_per_step;
			host_bytes = sh.stream_bytes_per_step;
			if (seed == 1)
				first = d;
			else
				differ_seed += memcmp(first.t, d.t, sizeof(d.t)) != 0;
		}
	}
	CHECK_EQ_INT(agree, total);
	/* seeds matter: most draw other tokens than seed 1 */
	CHECK(differ_seed >= seqs / 2);
	CHECK(dev_bytes > 0 && dev_bytes < host_bytes);
	printf("# %u of %u tokens agree (%u sequences); stream bytes per step: device %llu, host %llu\n",
	       agree, total, seqs, (unsigned long long)dev_bytes, (unsigned long long)host_bytes);
	ipurt_runner_destroy(r);
}

TEST(top_k_1_is_greedy)
{
	struct ipurt_runner *r = open_runner();
	struct ipurt_generate_opts o;
	struct ipurt_generate_stats sg, ss;
	struct got g, s;

	REQUIRE(r);
	memset(&o, 0, sizeof(o));
	o.max_new_tokens = NEW;
	REQUIRE(generate(r, &o, &g, &sg) == 0);
	o.temperature = 1.3f;
	o.top_k = 1;
	o.seed = 5;
	REQUIRE(generate(r, &o, &s, &ss) == 0);
	CHECK(ss.device_sampling && sg.device_argmax);
	CHECK(!memcmp(g.t, s.t, sizeof(g.t)));
	ipurt_runner_destroy(r);
}

/* Several sequences sampled in the same steps, each with its own seed and
 * settings: each gives the tokens it gives alone. */
TEST(slots_sample_each_with_its_own_settings)
{
	struct ipurt_runner *r = open_runner();
	struct ipurt_gen_slots *g = NULL;
	struct ipurt_gen_event ev[16];
	struct got alone[16], both[16];
	static const int64_t prompt[] = { 1, 2, 3 };
	uint32_t S, nev, slot, owner[16] = { 0 };
	char err[512];

	REQUIRE(r);
	REQUIRE(ipurt_gen_slots_open(r, &g, err, sizeof(err)) == 0);
	S = ipurt_gen_slots_count(g);
	ipurt_gen_slots_close(g);
	g = NULL;
	if (S < 2 || S > 16) {
		printf("# one slot: nothing to share\n");
		ipurt_runner_destroy(r);
		return;
	}
	for (uint32_t k = 0; k < S; k++) {
		struct ipurt_generate_opts o = opts(&cfgs[k % 4], 100 + k);

		REQUIRE(generate(r, &o, &alone[k], NULL) == 0);
	}
	REQUIRE(ipurt_gen_slots_open(r, &g, err, sizeof(err)) == 0);
	memset(both, 0, sizeof(both));
	for (uint32_t k = 0; k < S; k++) {
		struct ipurt_generate_opts o = opts(&cfgs[k % 4], 100 + k);

		if (k % 2)
			o.temperature = 0, o.seed = 0;	/* a greedy one among them */
		if (k % 2)
			REQUIRE(generate(r, &o, &alone[k], NULL) == 0);
		REQUIRE(ipurt_gen_slots_start(g, prompt, 3, &o, &slot, err, sizeof(err)) == 0);
		owner[slot] = k;
	}
	while (ipurt_gen_slots_active(g)) {
		REQUIRE(ipurt_gen_slots_step(g, ev, &nev, err, sizeof(err)) == 0);
		for (uint32_t i = 0; i < nev; i++) {
			struct got *q = &both[owner[ev[i].slot]];

			if (q->n < NEW)
				q->t[q->n++] = ev[i].token;
		}
	}
	for (uint32_t k = 0; k < S; k++)
		CHECK_MSG(both[k].n == NEW && !memcmp(both[k].t, alone[k].t, sizeof(both[k].t)),
			  "slot sequence %u", k);
	printf("# %u sequences sampled at once (%u greedy), %llu stream bytes per step\n", S, S / 2,
	       (unsigned long long)ipurt_gen_slots_stream_bytes(g));
	ipurt_gen_slots_close(g);
	ipurt_runner_destroy(r);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_sample MODEL.ipuef\n");
		return 2;
	}
	model = argv[1];
	RUN(device_and_host_draw_the_same_tokens);
	RUN(top_k_1_is_greedy);
	RUN(slots_sample_each_with_its_own_settings);
	return TH_DONE();
}
