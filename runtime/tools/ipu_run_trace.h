/* SPDX-License-Identifier: MIT */
/*
 * ipu_run_trace.h - ipu-run's --profile: collects the device's per-step
 * events and the Model Runtime's request events while requests run, then
 * writes them in the Chrome trace event format (Perfetto, chrome://tracing).
 */
#ifndef IPU_RUN_TRACE_H
#define IPU_RUN_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/runtime.h"

struct run_trace;

/* A collector whose host time starts now; NULL when out of memory. */
struct run_trace *run_trace_create(void);
void run_trace_destroy(struct run_trace *t);

/* Hooks to give to ipu_set_trace and ipurt_config.on_request (ctx: the collector). */
void run_trace_step(void *ctx, const struct ipu_step_event *ev);
void run_trace_request(void *ctx, uint64_t id, enum ipurt_request_event ev, uint64_t t_ns,
		       int status);
/* The same for a group of IPUs (ipu_group_set_trace): every IPU's steps. */
void run_trace_group_step(void *ctx, uint32_t ipu, const struct ipu_step_event *ev);
/* A phase of the tool's run ("latency run", ...) on the host's own track. */
void run_trace_phase(struct run_trace *t, const char *name, uint64_t start_ns, uint64_t end_ns);

/* What the writer needs to know about the run. */
struct run_trace_info {
	const char *model;
	const struct ipuef_file *file;
	struct ipu_device *dev;		/* for per-compute-set tiles and vertices */
	double ghz;			/* the modelled tile clock */
	int have_steps;			/* the device gave per-step events */
	struct ipu_group *group;	/* a split model's: one track per IPU */
	struct ipu_counters counters;	/* the device's, over the traced runs */
};

/*
 * Write everything collected to `path` (atomically): 0, or -1 with a
 * message in err.  Model node names come from the file's debug blob when it
 * has one; *note receives a line for the user when it has none (or "").
 */
int run_trace_write(struct run_trace *t, const char *path, const struct run_trace_info *info,
		    char *note, size_t notelen, char *err, size_t errlen);

/* CLOCK_MONOTONIC in ns, the clock of every event. */
uint64_t run_trace_now(void);

#endif /* IPU_RUN_TRACE_H */
