// SPDX-License-Identifier: MIT
/*
 * metrics.c - the /metrics page in Prometheus' text exposition format
 * (version 0.0.4), one series per loaded model version.  Names follow
 * Triton's (nv_inference_* there, ipu_inference_* here) so dashboards
 * carry over; durations are in microseconds like Triton's counters, the
 * request latency histogram in seconds as Prometheus prefers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define MAX_SERIES 256

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
};

char *srv_metrics_page(struct srv_repo *r, size_t *len)
{
	struct srv_model *ms[MAX_SERIES];
	struct srv_metrics met[MAX_SERIES];
	uint32_t q[MAX_SERIES], ex[MAX_SERIES];
	uint32_t n = srv_repo_all(r, ms, MAX_SERIES), i, c, b;
	char name[512], ver[32];
	struct page p = { malloc(8192), 0, 8192, 0 };

	if (!p.buf)
		p.oom = 1;
	for (i = 0; i < n; i++)
		srv_model_metrics(ms[i], &met[i], &q[i], &ex[i]);
	for (c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		put(&p, "# HELP %s %s\n# TYPE %s %s\n", counters[c].name, counters[c].help,
		    counters[c].name, counters[c].type);
		for (i = 0; i < n; i++) {
			const struct srv_metrics *mt = &met[i];
			uint64_t v[] = {
				mt->success, mt->failure, mt->inferences, mt->executions,
				mt->request_ns / 1000, mt->queue_ns / 1000, mt->compute_ns / 1000,
				mt->modelled_cycles, q[i], ex[i], mt->batch_rows_max,
				mt->gen_tokens,
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
	for (i = 0; i < n; i++)
		srv_repo_put(r, ms[i]);
	if (p.oom) {
		free(p.buf);
		return NULL;
	}
	*len = p.len;
	return p.buf;
}
