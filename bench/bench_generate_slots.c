// SPDX-License-Identifier: MIT
/*
 * bench_generate_slots.c - K sequences at once through the step API
 * (ipurt_gen_slots_*) of a decoder exported with S >= K cache slots
 * (bench/bench_generate.py runs it):
 *
 *   bench_generate_slots MODEL.ipuef K NEW [DEVICE]
 *
 * Starts K greedy sequences together (prompt k: the 8 ids k+1 .. k+8),
 * each for NEW tokens, and steps until all are done.  Prints one JSON
 * object: the first 8 steps (the prompts; the 8th gives every sequence its
 * first token) and the decode steps after them, their wall times, decode
 * tokens per second over all sequences, and the stream bytes of a step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/runtime.h"

#define PROMPT 8

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	struct ipurt_gen_slots *g = NULL;
	struct ipurt_gen_event *ev = NULL;
	struct ipurt_generate_opts o;
	uint32_t k, n, nev, steps = 0, slot, decode_tokens = 0;
	uint64_t bytes = 0;
	double t0, t1 = 0, t2;
	char err[512];
	int rc = 1;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: bench_generate_slots MODEL.ipuef K NEW [DEVICE]\n");
		return 2;
	}
	k = (uint32_t)strtoul(argv[2], NULL, 10);
	n = (uint32_t)strtoul(argv[3], NULL, 10);
	ipurt_config_init(&cfg);
	if (argc == 5)
		cfg.device = argv[4];
	if (ipurt_runner_create(argv[1], &cfg, &r, err, sizeof(err)) ||
	    ipurt_gen_slots_open(r, &g, err, sizeof(err)))
		goto fail;
	if (!k || k > ipurt_gen_slots_count(g) || !n) {
		snprintf(err, sizeof(err), "K must be 1 .. %u slots, NEW >= 1", ipurt_gen_slots_count(g));
		goto fail;
	}
	ev = calloc(ipurt_gen_slots_count(g), sizeof(*ev));
	if (!ev) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	memset(&o, 0, sizeof(o));
	o.max_new_tokens = n;
	for (uint32_t i = 0; i < k; i++) {
		int64_t prompt[PROMPT];

		for (uint32_t j = 0; j < PROMPT; j++)
			prompt[j] = i + j + 1;
		if (ipurt_gen_slots_start(g, prompt, PROMPT, &o, &slot, err, sizeof(err)))
			goto fail;
	}
	t0 = now_s();
	while (ipurt_gen_slots_active(g)) {
		if (ipurt_gen_slots_step(g, ev, &nev, err, sizeof(err)))
			goto fail;
		steps++;
		if (steps == PROMPT)
			t1 = now_s();
		else if (steps > PROMPT)
			decode_tokens += nev;
		if (ipurt_gen_slots_stream_bytes(g) > bytes)
			bytes = ipurt_gen_slots_stream_bytes(g);
	}
	t2 = now_s();
	printf("{\"slots\": %u, \"sequences\": %u, \"new_tokens_each\": %u, \"steps\": %u, "
	       "\"prompt_ms\": %.1f, \"decode_ms\": %.1f, \"decode_ms_per_step\": %.2f, "
	       "\"tokens_per_s\": %.2f, \"stream_bytes_per_step\": %llu}\n",
	       ipurt_gen_slots_count(g), k, n, steps, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
	       steps > PROMPT ? (t2 - t1) * 1e3 / (steps - PROMPT) : 0.0,
	       t2 > t1 ? decode_tokens / (t2 - t1) : 0.0, (unsigned long long)bytes);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_generate_slots: %s\n", err);
out:
	free(ev);
	ipurt_gen_slots_close(g);
	if (r)
		ipurt_runner_destroy(r);
	return rc;
}
