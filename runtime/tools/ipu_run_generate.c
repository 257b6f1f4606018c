// SPDX-License-Identifier: MIT
/*
 * ipu_run_generate.c - ipu-run --generate: ipurt_generate over the model,
 * then the new token ids, tokens per second (decode steps over their wall
 * time) and the bytes streamed per step, as text or one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "ipu/runtime.h"
#include "ipu_run_generate.h"

struct gen_out {
	int64_t *ids;
	uint32_t n, cap;
};

static int on_token(void *ctx, uint32_t index, int64_t token, const float *logits, uint64_t vocab)
{
	struct gen_out *g = ctx;

	(void)index, (void)logits, (void)vocab;
	if (g->n < g->cap)	/* never more than max_new_tokens */
		g->ids[g->n++] = token;
	return 0;
}

static const char *stop_name(uint32_t why)
{
	switch (why) {
	case IPURT_GEN_STOP_TOKEN: return "stop token";
	case IPURT_GEN_STOP_CALLER: return "caller";
	case IPURT_GEN_STOP_CACHE_FULL: return "cache full";
	default: return "max new tokens";
	}
}

static int print_json(const struct gen_out *g, const struct ipurt_generate_stats *st, double tps,
		      int sampled, double ghz)
{
	json_t *j = json_object(), *ids = json_array();
	char *text;

	if (!j || !ids) {
		json_decref(j);
		json_decref(ids);
		return -1;
	}
	for (uint32_t i = 0; i < g->n; i++)
		json_array_append_new(ids, json_integer(g->ids[i]));
	json_object_set_new(j, "tokens", ids);
	json_object_set_new(j, "prompt_tokens", json_integer(st->prompt_tokens));
	json_object_set_new(j, "new_tokens", json_integer(st->new_tokens));
	json_object_set_new(j, "stopped", json_string(stop_name(st->stopped)));
	json_object_set_new(j, "device_argmax", json_boolean(st->device_argmax));
	json_object_set_new(j, "sampled", json_boolean(sampled));
	json_object_set_new(j, "device_sampling", json_boolean(st->device_sampling));
	json_object_set_new(j, "prompt_ms", json_real((double)st->prompt_ns / 1e6));
	json_object_set_new(j, "prefill_runs", json_integer(st->prefill_runs));
	json_object_set_new(j, "prefill_tokens", json_integer(st->prefill_tokens));
	json_object_set_new(j, "prompt_modelled_ms", json_real((double)st->prompt_cycles / (ghz * 1e6)));
	json_object_set_new(j, "decode_ms", json_real((double)st->decode_ns / 1e6));
	json_object_set_new(j, "tokens_per_s", st->decode_steps ? json_real(tps) : json_null());
	json_object_set_new(j, "stream_bytes_per_step", json_integer((json_int_t)st->stream_bytes_per_step));
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!text)
		return -1;
	printf("%s\n", text);
	free(text);
	return 0;
}

int run_generate(const struct run_opts *o)
{
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	struct ipurt_generate_opts go = { 0 };
	struct ipurt_generate_stats st;
	struct gen_out g = { 0 };
	char err[1024];
	double tps = 0, ghz;
	int rc = -1;

	ipurt_config_init(&cfg);
	cfg.device = o->device;
	cfg.timeout_ns = o->timeout_ms * 1000000ull;
	g.cap = o->max_new_tokens;
	g.ids = calloc(g.cap, sizeof(*g.ids));
	if (!g.ids) {
		fprintf(stderr, "ipu-run: out of memory\n");
		return -1;
	}
	if (ipurt_runner_create(!strcmp(o->model, "-") ? "/dev/stdin" : o->model, &cfg, &r, err,
				sizeof(err))) {
		fprintf(stderr, "ipu-run: %s: %s\n", o->model, err);
		goto out;
	}
	go.max_new_tokens = o->max_new_tokens;
	go.stop_ids = o->stop;
	go.num_stop = o->nstop;
	go.temperature = (float)o->temperature;
	go.top_k = o->top_k;
	go.top_p = (float)o->top_p;
	go.seed = o->seed;
	go.host_sampling = o->host_sampling;
	if (ipurt_generate(r, o->prompt, o->nprompt, &go, on_token, &g, &st, err, sizeof(err))) {
		fprintf(stderr, "ipu-run: %s: generation failed: %s\n", o->model, err);
		goto out;
	}
	if (st.decode_steps && st.decode_ns)
		tps = st.decode_steps / ((double)st.decode_ns / 1e9);
	{
		/* the modelled tile clock: GC200 (ipu2) 1.33 GHz, Bow (ipu21) 1.85 */
		const char *v = ipuef_metadata(ipurt_runner_file(r))->ipu_version;

		ghz = v && !strcmp(v, "ipu21") ? 1.85 : 1.33;
	}
	if (o->json) {
		rc = print_json(&g, &st, tps, o->temperature > 0, ghz);
		if (rc)
			fprintf(stderr, "ipu-run: out of memory\n");
		goto out;
	}
	printf("Generated %u tokens after a prompt of %u (stopped: %s):\n", st.new_tokens,
	       st.prompt_tokens, stop_name(st.stopped));
	for (uint32_t i = 0; i < g.n; i++)
		printf("%s%lld", i ? "," : "  ", (long long)g.ids[i]);
	printf("\n");
	if (st.prefill_runs)
		printf("Prompt:   %.3f ms, modelled %.3f ms (%u tokens in %u runs of the prefill program, %u steps; the first new token included)\n",
		       (double)st.prompt_ns / 1e6, (double)st.prompt_cycles / (ghz * 1e6),
		       st.prefill_tokens, st.prefill_runs, st.prompt_tokens - st.prefill_tokens);
	else
		printf("Prompt:   %.3f ms, modelled %.3f ms (%u steps, the first new token included)\n",
		       (double)st.prompt_ns / 1e6, (double)st.prompt_cycles / (ghz * 1e6),
		       st.prompt_tokens);
	if (st.decode_steps)
		printf("Decode:   %.3f ms for %u steps, %.1f tokens/s\n", (double)st.decode_ns / 1e6,
		       st.decode_steps, tps);
	printf("Streamed: %llu bytes per step (tokens %s)\n",
	       (unsigned long long)st.stream_bytes_per_step,
	       o->temperature > 0 && st.device_sampling ? "sampled on the device"
	       : o->temperature > 0 ? "sampled on the host from the logits"
	       : st.device_argmax ? "chosen on the device" : "chosen on the host from the logits");
	rc = 0;
out:
	ipurt_runner_destroy(r);
	free(g.ids);
	return rc;
}
