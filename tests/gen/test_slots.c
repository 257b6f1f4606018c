// SPDX-License-Identifier: MIT
/*
 * test_slots.c - several sequences at once on a decoder exported with S
 * cache slots (tests/gen/tiny_gpt.py --slots S), through the step API
 * (ipurt_gen_slots_*):
 *
 *   test_slots MODEL.ipuef PROMPT=TOKENS...
 *
 * Each PROMPT=TOKENS (comma-separated ids) is torch's greedy loop for that
 * prompt alone (one sequence, the same weights).  Checks: more sequences
 * than slots, started as slots free up and at different positions, each
 * give torch's tokens; a slot whose sequence was finished early serves the
 * next one without a reset; a tokens-only step streams S x 24 bytes;
 * sampling with top_k 1 is greedy and a seed gives the same tokens twice;
 * want_logits gives each event its row; a full set of slots and a free
 * slot's finish are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/runtime.h"

#define MAXSEQ 8
#define MAXTOK 64

struct seq {
	int64_t prompt[MAXTOK], want[MAXTOK], got[MAXTOK];
	uint32_t np, nw, ng;
	int done;
};

static const char *model;
static struct seq ref[MAXSEQ];
static uint32_t nref;

static uint32_t parse_ids(const char *s, int64_t *out)
{
	uint32_t n = 0;
	char *end;

	while (*s && n < MAXTOK) {
		out[n++] = strtoll(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			break;
	}
	return n;
}

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

static struct ipurt_generate_opts greedy_opts(uint32_t n)
{
	struct ipurt_generate_opts o;

	memset(&o, 0, sizeof(o));
	o.max_new_tokens = n;
	return o;
}

/* Steps until no slot is active, appending each event's token to its
 * sequence (owner[slot]); starts sequences from *next as slots free up. */
static int drain(struct ipurt_gen_slots *g, struct seq *seqs, uint32_t nseq, uint32_t *next,
		 int *owner, const struct ipurt_generate_opts *o, uint64_t *bytes)
{
	struct ipurt_gen_event ev[MAXSEQ];
	char err[512];
	uint32_t nev, slot;

	for (int guard = 0; guard < 1000; guard++) {
		while (*next < nseq) {
			struct seq *q = &seqs[*next];
			struct ipurt_generate_opts oo = *o;

			oo.max_new_tokens = q->nw;
			if (ipurt_gen_slots_start(g, q->prompt, q->np, &oo, &slot, err, sizeof(err)))
				break;
			owner[slot] = (int)(*next)++;
		}
		if (!ipurt_gen_slots_active(g))
			return 0;
		if (ipurt_gen_slots_step(g, ev, &nev, err, sizeof(err))) {
			fprintf(stderr, "  step: %s\n", err);
			return -1;
		}
		if (bytes && ipurt_gen_slots_stream_bytes(g) > *bytes)
			*bytes = ipurt_gen_slots_stream_bytes(g);
		for (uint32_t i = 0; i < nev; i++) {
			struct seq *q = &seqs[owner[ev[i].slot]];

			if (q->ng < MAXTOK && ev[i].index == q->ng)
				q->got[q->ng++] = ev[i].token;
			if (ev[i].done)
				q->done = 1;
		}
	}
	return -1;
}

TEST(more_sequences_than_slots_give_torchs_tokens)
{
	struct ipurt_runner *r = open_runner();
	struct ipurt_gen_slots *g = NULL;
	struct seq seqs[MAXSEQ];
	struct ipurt_generate_opts o = greedy_opts(1);
	int owner[MAXSEQ] = { 0 };
	uint32_t next = 0, S;
	uint64_t bytes = 0;
	char err[512];

	REQUIRE(r);
	REQUIRE(ipurt_gen_slots_open(r, &g, err, sizeof(err)) == 0);
	S = ipurt_gen_slots_count(g);
	CHECK(nref > S);
	memcpy(seqs, ref, sizeof(seqs));
	CHECK(drain(g, seqs, nref, &next, owner, &o, &bytes) == 0);
	for (uint32_t k = 0; k < nref; k++) {
		CHECK_MSG(seqs[k].done && seqs[k].ng == seqs[k].nw &&
			  !memcmp(seqs[k].got, seqs[k].want, seqs[k].nw * sizeof(int64_t)),
			  "sequence %u: %u of %u tokens, first %lld want %lld", k, seqs[k].ng,
			  seqs[k].nw, (long long)seqs[k].got[0], (long long)seqs[k].want[0]);
	}
	/* greedy without logits: the tokens-only program, 24 bytes a slot */
	CHECK_EQ_INT(bytes, 24 * S);
	printf("# %u sequences through %u slots, %llu stream bytes per step\n", nref, S,
	       (unsigned long long)bytes);
	ipurt_gen_slots_close(g);
	ipurt_runner_destroy(r);
}

TEST(a_finished_slot_serves_the_next_sequence)
{
	struct ipurt_runner *r = open_runner();
	struct ipurt_gen_slots *g = NULL;
	struct ipurt_generate_opts o = greedy_opts(30);
	struct ipurt_gen_event ev[MAXSEQ];
	struct seq seqs[1];
	int owner[MAXSEQ];
	uint32_t slot, nev, next = 0;
	char err[512];

	memset(owner, 0xff, sizeof(owner));
	REQUIRE(r);
	REQUIRE(ipurt_gen_slots_open(r, &g, err, sizeof(err)) == 0);
	/* a long sequence, ended after 6 steps: its cache rows stay written */
	REQUIRE(ipurt_gen_slots_start(g, ref[1].prompt, ref[1].np, &o, &slot, err, sizeof(err)) == 0);
	for (int i = 0; i < 6; i++)
		REQUIRE(ipurt_gen_slots_step(g, ev, &nev, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ipurt_gen_slots_finish(g, slot), 0);
	CHECK_EQ_INT(ipurt_gen_slots_active(g), 0);
	CHECK(ipurt_gen_slots_finish(g, slot) == IPURT_E_INVAL);
	/* the next sequence takes the same (first free) slot */
	memcpy(seqs, &ref[0], sizeof(seqs));
	CHECK(drain(g, seqs, 1, &next, owner, &o, NULL) == 0);
	CHECK_EQ_INT(owner[slot], 0);
	CHECK(seqs[0].ng == seqs[0].nw &&
	      !memcmp(seqs[0].got, seqs[0].want, seqs[0].nw * sizeof(int64_t)));
	ipurt_gen_slots_close(g);
	ipurt_runner_destroy(r);
}

TEST(sampling_is_seeded_and_top_k_1_is_greedy)
{
	struct ipurt_runner *r = open_runner();
	struct ipurt_gen_slots *g = NULL;
	struct ipurt_generate_opts o = greedy_opts(1);
	struct seq a[MAXSEQ], b[MAXSEQ];
	int owner[MAXSEQ] = { 0 };
	uint32_t next, S;
	uint64_t bytes = 0;
	char err[512];

	REQUIRE(r);
	REQUIRE(ipurt_gen_slots_open(r, &g, err, sizeof(err)) == 0);
	S = ipurt_gen_slots_count(g);
	o.temperature = 0.7f;
	o.top_k = 1;
	memcpy(a, ref, sizeof(a));
	next = 0;
	CHECK(drain(g, a, nref, &next, owner, &o, &bytes) == 0);
	for (uint32_t k = 0; k < nref; k++)
		CHECK_MSG(!memcmp(a[k].got, a[k].want, a[k].nw * sizeof(int64_t)), "sequence %u", k);
	/* on the device: ids, position, the 5 scalars and the token a slot */
	CHECK_EQ_INT(bytes, 56 * S);
	/* a real sample: the same seed twice, the same tokens */
	o.top_k = 20;
	o.top_p = 0.9f;
	o.seed = 11;
	for (int round = 0; round < 2; round++) {
		struct seq *q = round ? b : a;

		memcpy(q, ref, sizeof(a));
		for (uint32_t k = 0; k < nref; k++)
			q[k].ng = 0;
		next = 0;
		CHECK(drain(g, q, nref, &next, owner, &o, NULL) == 0);
	}
	for (uint32_t k = 0; k < nref; k++)
		CHECK_MSG(a[k].ng == b[k].ng && !memcmp(a[k].got, b[k].got, a[k].ng * sizeof(int64_t)),
			  "sequence %u", k);
	ipurt_gen_slots_close(g);
	ipurt_runner_destroy(r);
}

TEST(logits_on_request_and_refusals)
{
	struct ipurt_runner *r = open_runner();
	struct ipurt_gen_slots *g = NULL;
	struct ipurt_generate_opts o = greedy_opts(3);
	struct ipurt_gen_event ev[MAXSEQ];
	uint32_t slot, nev, S, seen = 0;
	char err[512];

	REQUIRE(r);
	REQUIRE(ipurt_gen_slots_open(r, &g, err, sizeof(err)) == 0);
	S = ipurt_gen_slots_count(g);
	o.want_logits = 1;
	REQUIRE(ipurt_gen_slots_start(g, ref[0].prompt, ref[0].np, &o, &slot, err, sizeof(err)) == 0);
	while (ipurt_gen_slots_active(g)) {
		REQUIRE(ipurt_gen_slots_step(g, ev, &nev, err, sizeof(err)) == 0);
		for (uint32_t i = 0; i < nev; i++) {
			uint64_t best = 0;

			REQUIRE(ev[i].logits && ev[i].vocab > 1);
			for (uint64_t v = 1; v < ev[i].vocab; v++)
				if (ev[i].logits[v] > ev[i].logits[best])
					best = v;
			CHECK_EQ_INT(best, ev[i].token);
			CHECK_EQ_INT(ev[i].token, ref[0].want[ev[i].index]);
			seen++;
			if (ev[i].done)
				CHECK_EQ_INT(ev[i].stopped, IPURT_GEN_STOP_LIMIT);
		}
	}
	CHECK_EQ_INT(seen, 3);
	/* every slot taken: the next start is refused */
	o = greedy_opts(5);
	for (uint32_t i = 0; i < S; i++)
		REQUIRE(ipurt_gen_slots_start(g, ref[0].prompt, ref[0].np, &o, &slot, err, sizeof(err)) == 0);
	CHECK(ipurt_gen_slots_start(g, ref[0].prompt, ref[0].np, &o, &slot, err, sizeof(err)) ==
	      IPURT_E_BUSY);
	CHECK(strstr(err, "slots hold a sequence") != NULL);
	CHECK(ipurt_gen_slots_start(g, ref[0].prompt, 0, &o, &slot, err, sizeof(err)) ==
	      IPURT_E_INVAL);
	CHECK(ipurt_gen_slots_finish(g, S) == IPURT_E_INVAL);
	ipurt_gen_slots_close(g);
	ipurt_runner_destroy(r);
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc - 2 > MAXSEQ) {
		fprintf(stderr, "usage: test_slots MODEL.ipuef PROMPT=TOKENS... (at most %d)\n", MAXSEQ);
		return 2;
	}
	model = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		struct seq *q = &ref[nref++];

		if (!eq) {
			fprintf(stderr, "test_slots: %s: not PROMPT=TOKENS\n", argv[i]);
			printf("0 passed, 1 failed\n");
			return 1;
		}
		q->np = parse_ids(argv[i], q->prompt);
		q->nw = parse_ids(eq + 1, q->want);
	}
	RUN(more_sequences_than_slots_give_torchs_tokens);
	RUN(a_finished_slot_serves_the_next_sequence);
	RUN(sampling_is_seeded_and_top_k_1_is_greedy);
	RUN(logits_on_request_and_refusals);
	return TH_DONE();
}
