// SPDX-License-Identifier: MIT
/*
 * metrics.c - the /metrics page in Prometheus' text exposition format
 * (version 0.0.4), one series per loaded model version.  Triton's own
 * names and labels (nv_inference_*, counted as its statistics extension
 * counts: durations summed over successful requests, failures by reason)
 * so that dashboards and alerts carry over unchanged, and ours
 * (ipu_inference_*, durations over every request, the execution time once
 * per batch) beside them; durations are in microseconds like Triton's
 * counters, the request latency histogram in seconds as Prometheus prefers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define MAX_SERIES 256

/* Triton's counters, from the statistics extension's numbers */
enum nv_counter {
	NV_SUCCESS, NV_FAILURE, NV_COUNT, NV_EXEC, NV_REQUEST_US, NV_QUEUE_US, NV_INPUT_US,
	NV_INFER_US, NV_OUTPUT_US, NV_PENDING, NV_N,
};

struct page {
	char *buf;
	size_t len, cap;
	int oom;
};

static void put(struct page *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(p->buf + p->len, p->cap - p->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			p->oom = 1;
			return;
		}
		if ((size_t)n < p->cap - p->len) {
			p->len += (size_t)n;
			return;
		}
		{
			size_t cap = p->cap * 2 + (size_t)n + 1;
			char *b = realloc(p->buf, cap);

			if (!b) {
				p->oom = 1;
				return;
			}
			p->buf = b;
			p->cap = cap;
		}
	}
}

/* Label values escaped as the format asks (backslash, quote, newline). */
static const char *label(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++) {
		if (*s == '\\' || *s == '"') {
			buf[n++] = '\\';
			buf[n++] = *s;
		} else if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *s;
		}
	}
	buf[n] = 0;
	return buf;
}

struct series {
	const char *name, *type, *help;
};

static const struct series nv_counters[NV_N] = {
	{ "nv_inference_request_success", "counter", "Number of successful inference requests, all batch sizes" },
	{ "nv_inference_request_failure", "counter", "Number of failed inference requests, all batch sizes" },
	{ "nv_inference_count", "counter", "Number of inferences performed (does not include cached requests)" },
	{ "nv_inference_exec_count", "counter", "Number of model executions performed (does not include cached requests)" },
	{ "nv_inference_request_duration_us", "counter", "Cumulative inference request duration in microseconds (successful requests)" },
	{ "nv_inference_queue_duration_us", "counter", "Cumulative inference queuing duration in microseconds (successful requests)" },
	{ "nv_inference_compute_input_duration_us", "counter", "Cumulative compute input duration in microseconds (successful requests)" },
	{ "nv_inference_compute_infer_duration_us", "counter", "Cumulative compute inference duration in microseconds (successful requests)" },
	{ "nv_inference_compute_output_duration_us", "counter", "Cumulative inference compute output duration in microseconds (successful requests)" },
	{ "nv_inference_pending_request_count", "gauge", "Instantaneous number of pending requests awaiting execution per-model" },
};

/* The nv_inference_* series of the n versions (their statistics in st). */
static void put_nv(struct page *p, struct srv_model **ms, const struct srv_metrics *met,
		   const struct srv_stats *st, const uint32_t *pending, uint32_t n)
{
	char name[512], ver[32];
	uint32_t c, i, r;

	for (c = 0; c < NV_N; c++) {
		put(p, "# HELP %s %s\n# TYPE %s %s\n", nv_counters[c].name, nv_counters[c].help,
		    nv_counters[c].name, nv_counters[c].type);
		for (i = 0; i < n; i++) {
			uint64_t v[NV_N] = {
				st[i].success.count, 0, met[i].inferences, met[i].executions,
				st[i].success.ns / 1000, st[i].queue.ns / 1000,
				st[i].compute_input.ns / 1000, st[i].compute_infer.ns / 1000,
				st[i].compute_output.ns / 1000, pending[i],
			};

			label(ms[i]->name, name, sizeof(name));
			snprintf(ver, sizeof(ver), "%lld", (long long)ms[i]->version);
			if (c != NV_FAILURE) {
				put(p, "%s{model=\"%s\",version=\"%s\"} %llu\n", nv_counters[c].name, name,
				    ver, (unsigned long long)v[c]);
				continue;
			}
			for (r = 0; r < SRV_FAIL_REASONS; r++)
				put(p, "%s{model=\"%s\",reason=\"%s\",version=\"%s\"} %llu\n",
				    nv_counters[c].name, name, srv_fail_reason_names[r], ver,
				    (unsigned long long)st[i].fail_reason[r]);
		}
	}
}

static const struct series counters[] = {
	{ "ipu_inference_request_success", "counter", "Successful inference requests" },
	{ "ipu_inference_request_failure", "counter", "Failed inference requests (after they were queued)" },
	{ "ipu_inference_count", "counter", "Inferences performed (a request of N rows counts N)" },
	{ "ipu_inference_exec_count", "counter", "Batch executions on the device (inference_count / exec_count is the mean batch)" },
	{ "ipu_inference_request_duration_us", "counter", "Cumulative end-to-end request time in the scheduler, microseconds" },
	{ "ipu_inference_queue_duration_us", "counter", "Cumulative time requests waited in the queue, microseconds" },
	{ "ipu_inference_compute_infer_duration_us", "counter", "Cumulative execution time of batches, microseconds" },
	{ "ipu_device_modelled_cycles", "counter", "IPU cycles the modelled device spent on this model's executions" },
	{ "ipu_inference_pending_request_count", "gauge", "Requests waiting for a device (queued, or in a batch being formed)" },
	{ "ipu_inference_inflight_request_count", "gauge", "Requests executing on a device" },
	{ "ipu_inference_max_batch_rows", "gauge", "The largest batch formed so far, in rows" },
	{ "ipu_generate_tokens", "counter", "Tokens made by the generate endpoints (prompts not counted)" },
	{ "ipu_generate_steps", "counter", "Device steps of the generation loops, each for every cache slot at once" },
};

char *srv_metrics_page(struct srv_repo *r, size_t *len)
{
	struct srv_model *ms[MAX_SERIES];
	struct srv_metrics met[MAX_SERIES];
	struct srv_stats *st = calloc(MAX_SERIES, sizeof(*st));
	uint32_t q[MAX_SERIES], ex[MAX_SERIES];
	uint32_t n = srv_repo_all(r, ms, MAX_SERIES), i, c, b;
	char name[512], ver[32];
	struct page p = { malloc(8192), 0, 8192, 0 };

	if (!p.buf || !st)
		p.oom = 1;
	for (i = 0; i < n; i++) {
		if (st)
			p.oom |= srv_model_stats(ms[i], &met[i], &st[i], &q[i], &ex[i]) != 0;
		else
			srv_model_metrics(ms[i], &met[i], &q[i], &ex[i]);
	}
	if (st)
		put_nv(&p, ms, met, st, q, n);
	for (c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		put(&p, "# HELP %s %s\n# TYPE %s %s\n", counters[c].name, counters[c].help,
		    counters[c].name, counters[c].type);
		for (i = 0; i < n; i++) {
			const struct srv_metrics *mt = &met[i];
			uint64_t v[] = {
				mt->success, mt->failure, mt->inferences, mt->executions,
				mt->request_ns / 1000, mt->queue_ns / 1000, mt->compute_ns / 1000,
				mt->modelled_cycles, q[i], ex[i], mt->batch_rows_max,
				mt->gen_tokens, mt->gen_steps,
			};

			snprintf(ver, sizeof(ver), "%lld", (long long)ms[i]->version);
			put(&p, "%s{model=\"%s\",version=\"%s\"} %llu\n", counters[c].name,
			    label(ms[i]->name, name, sizeof(name)), ver, (unsigned long long)v[c]);
		}
	}
	put(&p, "# HELP ipu_inference_request_duration_seconds End-to-end request time in the scheduler\n"
		"# TYPE ipu_inference_request_duration_seconds histogram\n");
	for (i = 0; i < n; i++) {
		uint64_t cum = 0;

		label(ms[i]->name, name, sizeof(name));
		snprintf(ver, sizeof(ver), "%lld", (long long)ms[i]->version);
		for (b = 0; b <= SRV_HIST_BUCKETS; b++) {
			cum += met[i].hist[b];
			if (b < SRV_HIST_BUCKETS)
				put(&p, "ipu_inference_request_duration_seconds_bucket{model=\"%s\",version=\"%s\",le=\"%g\"} %llu\n",
				    name, ver, srv_hist_bounds[b], (unsigned long long)cum);
			else
				put(&p, "ipu_inference_request_duration_seconds_bucket{model=\"%s\",version=\"%s\",le=\"+Inf\"} %llu\n",
				    name, ver, (unsigned long long)cum);
		}
		put(&p, "ipu_inference_request_duration_seconds_sum{model=\"%s\",version=\"%s\"} %.9f\n"
			"ipu_inference_request_duration_seconds_count{model=\"%s\",version=\"%s\"} %llu\n",
		    name, ver, met[i].hist_sum_s, name, ver, (unsigned long long)cum);
	}
	for (i = 0; i < n; i++) {
		if (st)
			srv_stats_fini(&st[i]);
		srv_repo_put(r, ms[i]);
	}
	free(st);
	if (p.oom) {
		free(p.buf);
		return NULL;
	}
	*len = p.len;
	return p.buf;
}
