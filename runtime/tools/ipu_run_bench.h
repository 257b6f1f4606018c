/* SPDX-License-Identifier: MIT */
/*
 * ipu_run_bench.h - ipu-run's measurements: warm-up, the latency run (one
 * request in flight, by count and/or duration), the throughput run (many
 * in flight), and where a request's host time goes on the in-process
 * device (input copy, device run, output copy) from the engine's step
 * events.
 */
#ifndef IPU_RUN_BENCH_H
#define IPU_RUN_BENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ipu/runtime.h"
#include "ipu_run_stats.h"
#include "ipu_run_trace.h"

/*
 * Step hook of the whole run (ctx: struct step_sums): adds up host time
 * per kind of step and hands every event on to the trace, if any.
 */
struct step_sums {
	_Atomic uint64_t h2d_ns, d2h_ns, device_ns, programs;
	struct run_trace *trace;	/* NULL: no --profile */
	uint8_t *d2h;			/* per stream: 1 device-to-host */
	uint32_t nstreams;
};

void step_sums_hook(void *ctx, const struct ipu_step_event *ev);
/* Learn the device's stream directions and set the hook: 0 or an ipu_err. */
int step_sums_attach(struct step_sums *s, struct ipu_device *dev);
void step_sums_detach(struct step_sums *s, struct ipu_device *dev);

struct bench_opts {
	unsigned warmup;		/* untimed requests before the runs */
	unsigned iterations;		/* timed requests (the minimum with a duration) */
	double duration;		/* > 0: run at least this many seconds */
	unsigned inflight;		/* > 1: a throughput run of as many requests */
};

struct bench_result {
	size_t n;			/* requests of the latency run */
	double *lat;			/* their latencies, in run order (s) */
	double *start;			/* their starts, from the run's start (s) */
	double elapsed;			/* the latency run's wall time (s) */
	struct lat_stats st;		/* of lat (s) */
	double rps1, rpsn;		/* requests/s with 1 and with inflight */
	int have_split;			/* the device gave step events */
	double input_copy, device_run, output_copy;	/* per request (s) */
};

/*
 * Run the warm-up, the latency run and the throughput run of requests
 * (in, out); sums (may be NULL) has the hook attached.  Phases are added to
 * trace when it is not NULL.  0, or -1 with a message in err.
 */
int bench_run(struct ipurt_runner *r, const struct ipurt_tensor *in, uint32_t nin,
	      const struct ipurt_tensor *out, uint32_t nout, const struct bench_opts *o,
	      struct step_sums *sums, struct run_trace *trace, struct bench_result *res,
	      char *err, size_t errlen);
void bench_result_free(struct bench_result *res);

#endif /* IPU_RUN_BENCH_H */
