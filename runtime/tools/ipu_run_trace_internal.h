/* SPDX-License-Identifier: MIT */
/*
 * ipu_run_trace_internal.h - what the --profile writer's files share: the
 * collector, the writer's state and its event emitters (ipu_run_trace.c),
 * used by a group's tracks (ipu_run_trace_group.c).
 */
#ifndef IPU_RUN_TRACE_INTERNAL_H
#define IPU_RUN_TRACE_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>

#include "ipu_run_trace.h"

struct req_event;
struct phase;

struct gstep {
	uint32_t ipu;
	struct ipu_step_event ev;
};

struct run_trace {
	pthread_mutex_t lock;
	uint64_t t0;
	struct ipu_step_event *steps;
	size_t nsteps, capsteps;
	struct gstep *gsteps;		/* a group's, every IPU's in arrival order */
	size_t ngsteps, capgsteps;
	struct req_event *reqs;
	size_t nreqs, capreqs;
	struct phase *phases;
	size_t nphases, capphases;
	int oom;			/* an event was lost: say so, never hide it */
};

/* The writer's state: the output stream and what names the events. */
struct writer {
	FILE *f;
	int first, failed;
	const struct run_trace_info *info;
	const struct ipuef_metadata *m;
	struct ipuef_debug *dbg;
	uint64_t t0;
	int ipu;			/* a group's IPU whose steps these are, or -1 */
	struct ipu_device *dev;		/* that IPU's device (or the one device) */
};

#define PID_DEVICE 1
#define PID_HOST 2
#define TID_STEPS 1
#define TID_PHASES 2
#define TID_REQUESTS 3
#define PID_LINKS 3
#define PID_IPU0 10			/* a group's IPU k: PID_IPU0 + k */
#define LINK_LANES 64			/* transfers of one link in flight at once */

/* Append one event (takes the reference; NULL marks the writer failed). */
void trace_emit(struct writer *w, json_t *ev);
/* A metadata event: `what` ("process_name", "thread_name") is `name`. */
void trace_meta(struct writer *w, int pid, int tid, const char *what, const char *name);
/* A process's (tid 0) or thread's place among the tracks. */
void trace_sort_index(struct writer *w, int pid, int tid, int idx);
/* Name, category and arguments (a new object) of a step event of run `run`. */
json_t *trace_step_args(const struct writer *w, const struct ipu_step_event *e, char *name,
			size_t len, const char **cat, uint64_t run);
/* A complete event on track (pid, TID_STEPS); takes args. */
void trace_complete(struct writer *w, int pid, const char *name, const char *cat, double ts,
		    double dur, json_t *args);

/*
 * A group's tracks (ipu_run_trace_group.c): one process per IPU on the
 * group's modelled clock and one for the links.  Returns the clock's end
 * in cycles; *bytes and *transfers over the links.
 */
uint64_t trace_group_events(struct writer *w, const struct run_trace *t, uint64_t *bytes,
			    uint64_t *transfers);

#endif /* IPU_RUN_TRACE_INTERNAL_H */
