// SPDX-License-Identifier: MIT
/*
 * ipu_run_bench.c - ipu-run's measurements (see ipu_run_bench.h).  Times
 * are CLOCK_MONOTONIC around each ipurt_runner_execute: what a caller of
 * the runtime waits for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu_run_bench.h"

void step_sums_hook(void *ctx, const struct ipu_step_event *ev)
{
	struct step_sums *s = ctx;
	uint64_t ns = ev->end_ns - ev->start_ns;

	switch (ev->kind) {
	case IPU_TRACE_PROGRAM:
		atomic_fetch_add_explicit(&s->programs, 1, memory_order_relaxed);
		break;
	case IPU_STEP_STREAM_COPY:
		if (ev->stream < s->nstreams && s->d2h[ev->stream])
			atomic_fetch_add_explicit(&s->d2h_ns, ns, memory_order_relaxed);
		else
			atomic_fetch_add_explicit(&s->h2d_ns, ns, memory_order_relaxed);
		break;
	default:
		atomic_fetch_add_explicit(&s->device_ns, ns, memory_order_relaxed);
		break;
	}
	if (s->trace)
		run_trace_step(s->trace, ev);
}

int step_sums_attach(struct step_sums *s, struct ipu_device *dev)
{
	int n = ipu_stream_count(dev), i;

	if (n < 0)
		return n;
	s->d2h = calloc(n ? (size_t)n : 1, 1);
	if (!s->d2h)
		return IPU_E_NOMEM;
	s->nstreams = (uint32_t)n;
	for (i = 0; i < n; i++) {
		uint32_t dir = 0, bytes;

		if (!ipu_stream_info(dev, (uint32_t)i, &dir, &bytes))
			s->d2h[i] = dir == IPU_STREAM_D2H;
	}
	n = ipu_set_trace(dev, step_sums_hook, s);
	if (n) {
		free(s->d2h);
		s->d2h = NULL;
	}
	return n;
}

void step_sums_detach(struct step_sums *s, struct ipu_device *dev)
{
	ipu_set_trace(dev, NULL, NULL);
	free(s->d2h);
	s->d2h = NULL;
}

static double secs(void)
{
	return (double)run_trace_now() * 1e-9;
}

/* Room for k + 1 samples. */
static int grow(struct bench_result *res, size_t k, size_t *cap)
{
	double *a, *b;

	if (k < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 1024;
	a = realloc(res->lat, *cap * sizeof(*a));
	if (a)
		res->lat = a;
	b = a ? realloc(res->start, *cap * sizeof(*b)) : NULL;
	if (b)
		res->start = b;
	return a && b ? 0 : -1;
}

int bench_run(struct ipurt_runner *r, const struct ipurt_tensor *in, uint32_t nin,
	      const struct ipurt_tensor *out, uint32_t nout, const struct bench_opts *o,
	      struct step_sums *sums, struct run_trace *trace, struct bench_result *res,
	      char *err, size_t errlen)
{
	struct ipurt_future **fs = NULL;
	uint64_t h2d0 = 0, d2h0 = 0, dev0 = 0, prog0 = 0, ph0;
	size_t cap = 0, k;
	double t0, s;
	unsigned w;

	memset(res, 0, sizeof(*res));
	if (!o->iterations && o->duration <= 0)
		return 0;
	ph0 = run_trace_now();
	for (w = 0; w < o->warmup; w++)
		if (ipurt_runner_execute(r, in, nin, out, nout, err, errlen))
			return -1;
	if (trace && o->warmup)
		run_trace_phase(trace, "warm-up", ph0, run_trace_now());
	if (sums) {
		h2d0 = atomic_load(&sums->h2d_ns);
		d2h0 = atomic_load(&sums->d2h_ns);
		dev0 = atomic_load(&sums->device_ns);
		prog0 = atomic_load(&sums->programs);
	}
	/* the latency run: one request at a time */
	ph0 = run_trace_now();
	t0 = secs();
	for (k = 0; k < o->iterations || (o->duration > 0 && secs() - t0 < o->duration); k++) {
		if (grow(res, k, &cap)) {
			snprintf(err, errlen, "out of memory after %zu requests", k);
			return -1;
		}
		s = secs();
		if (ipurt_runner_execute(r, in, nin, out, nout, err, errlen))
			return -1;
		res->lat[k] = secs() - s;
		res->start[k] = s - t0;
		res->n = k + 1;
	}
	res->elapsed = secs() - t0;
	if (trace)
		run_trace_phase(trace, "latency run (1 in flight)", ph0, run_trace_now());
	res->rps1 = (double)res->n / res->elapsed;
	if (sums && atomic_load(&sums->programs) > prog0) {
		double n = (double)res->n;

		res->have_split = 1;
		res->input_copy = (double)(atomic_load(&sums->h2d_ns) - h2d0) * 1e-9 / n;
		res->output_copy = (double)(atomic_load(&sums->d2h_ns) - d2h0) * 1e-9 / n;
		res->device_run = (double)(atomic_load(&sums->device_ns) - dev0) * 1e-9 / n;
	}
	{
		/* statistics on a sorted copy: lat stays in run order */
		double *v = malloc(res->n * sizeof(*v));

		if (!v) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(v, res->lat, res->n * sizeof(*v));
		lat_stats_compute(v, res->n, &res->st);
		free(v);
	}
	res->rpsn = res->rps1;
	if (o->inflight <= 1)
		return 0;
	/* the throughput run: as many requests, o->inflight at a time; the
	 * same buffers are fine, the outputs are identical */
	fs = calloc(o->inflight, sizeof(*fs));
	if (!fs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ph0 = run_trace_now();
	t0 = secs();
	for (k = 0; k < res->n; k++) {
		unsigned slot = (unsigned)(k % o->inflight);

		if (fs[slot]) {
			int rc = ipurt_future_wait(fs[slot], -1, err, errlen);

			ipurt_future_free(fs[slot]);
			fs[slot] = NULL;
			if (rc)
				break;
		}
		if (ipurt_runner_execute_async(r, in, nin, out, nout, &fs[slot], err, errlen))
			break;
	}
	for (w = 0; w < o->inflight; w++) {
		if (fs[w]) {
			char e2[256];

			if (ipurt_future_wait(fs[w], -1, e2, sizeof(e2)) && k == res->n) {
				snprintf(err, errlen, "%s", e2);
				k = 0;
			}
			ipurt_future_free(fs[w]);
		}
	}
	free(fs);
	if (k != res->n)
		return -1;
	res->rpsn = (double)res->n / (secs() - t0);
	if (trace) {
		char pn[64];

		snprintf(pn, sizeof(pn), "throughput run (%u in flight)", o->inflight);
		run_trace_phase(trace, pn, ph0, run_trace_now());
	}
	return 0;
}

void bench_result_free(struct bench_result *res)
{
	free(res->lat);
	free(res->start);
	memset(res, 0, sizeof(*res));
}
