// SPDX-License-Identifier: MIT
/*
 * ipu_run_report.h - what ipu-run prints at the end: the tensors, the
 * modelled device time, the host's latency and throughput and the devices'
 * share, as text or as one JSON object.
 */
#ifndef IPU_RUN_REPORT_H
#define IPU_RUN_REPORT_H

#include <stdint.h>

#include "ipu/runtime.h"
#include "ipu_run_bench.h"
#include "ipu_run_io.h"
#include "ipu_run_opts.h"

/* The modelled device's time per request (engine counters, cost-model.md). */
struct run_modelled {
	int valid;
	uint64_t total, compute, exchange, sync, stream;
	double ghz;			/* the modelled tile clock */
};

struct run_report {
	const struct run_opts *o;
	struct ipurt_runner *r;
	const struct run_io *io;
	double first_ms;		/* the first request, cold */
	const struct run_modelled *mod;
	const struct bench_result *bench;
};

/* Prints the report on standard output; -1 with a message if it cannot. */
int run_report_text(const struct run_report *rep);
int run_report_json(const struct run_report *rep);

#endif /* IPU_RUN_REPORT_H */
