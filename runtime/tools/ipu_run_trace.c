// SPDX-License-Identifier: MIT
/*
 * ipu_run_trace.c - ipu-run's --profile writer (Chrome trace event format,
 * the JSON object form).  Two processes:
 *
 *   pid 1 "IPU (modelled)": every program run and its supersteps in
 *         modelled time, program after program as the device would run
 *         them with the host always ready (its own time base, from 0);
 *   pid 2 "host": the same steps in wall time on the host running the
 *         engine, the tool's phases, and each request's life (async
 *         events: queued, then running from the moment it reached the
 *         device until done).
 *
 * A model split over IPUs has, instead of pid 1 and the host's steps, a
 * process per IPU and one for the links (ipu_run_trace_group.c).
 *
 * Events are written in time order per track, complete events ("X") of a
 * program enclose its steps, so a reader can check nesting.  Each event is
 * serialised by jansson (names from the model are escaped there) into one
 * buffer that is written atomically.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/file_atomic.h"
#include "ipu_run_trace.h"
#include "ipu_run_trace_internal.h"

struct req_event {
	uint64_t id, t_ns;
	int ev, status;
};

struct phase {
	char name[96];
	uint64_t start_ns, end_ns;
};

uint64_t run_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct run_trace *run_trace_create(void)
{
	struct run_trace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->t0 = run_trace_now();
	return t;
}

void run_trace_destroy(struct run_trace *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->steps);
	free(t->gsteps);
	free(t->reqs);
	free(t->phases);
	free(t);
}

/* Room for one more element of *arr (lock held); 0 or -1. */
static int grow(void **arr, size_t *cap, size_t n, size_t esize)
{
	size_t nc;
	void *na;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 1024;
	na = realloc(*arr, nc * esize);
	if (!na)
		return -1;
	*arr = na;
	*cap = nc;
	return 0;
}

void run_trace_step(void *ctx, const struct ipu_step_event *ev)
{
	struct run_trace *t = ctx;

	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->steps, &t->capsteps, t->nsteps, sizeof(*t->steps)))
		t->oom = 1;
	else
		t->steps[t->nsteps++] = *ev;
	pthread_mutex_unlock(&t->lock);
}

void run_trace_group_step(void *ctx, uint32_t ipu, const struct ipu_step_event *ev)
{
	struct run_trace *t = ctx;

	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->gsteps, &t->capgsteps, t->ngsteps, sizeof(*t->gsteps)))
		t->oom = 1;
	else
		t->gsteps[t->ngsteps++] = (struct gstep){ ipu, *ev };
	pthread_mutex_unlock(&t->lock);
}

void run_trace_request(void *ctx, uint64_t id, enum ipurt_request_event ev, uint64_t t_ns,
		       int status)
{
	struct run_trace *t = ctx;

	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->reqs, &t->capreqs, t->nreqs, sizeof(*t->reqs)))
		t->oom = 1;
	else
		t->reqs[t->nreqs++] = (struct req_event){ id, t_ns, (int)ev, status };
	pthread_mutex_unlock(&t->lock);
}

void run_trace_phase(struct run_trace *t, const char *name, uint64_t start_ns, uint64_t end_ns)
{
	pthread_mutex_lock(&t->lock);
	if (grow((void **)&t->phases, &t->capphases, t->nphases, sizeof(*t->phases))) {
		t->oom = 1;
	} else {
		struct phase *p = &t->phases[t->nphases++];

		snprintf(p->name, sizeof(p->name), "%s", name);
		p->start_ns = start_ns;
		p->end_ns = end_ns;
	}
	pthread_mutex_unlock(&t->lock);
}


/* Append one event (takes the reference). */
void trace_emit(struct writer *w, json_t *ev)
{
	if (!ev) {
		w->failed = 1;
		return;
	}
	if (!w->first && fputs(",\n", w->f) == EOF)
		w->failed = 1;
	w->first = 0;
	if (json_dumpf(ev, w->f, JSON_COMPACT | JSON_ENSURE_ASCII))
		w->failed = 1;
	json_decref(ev);
}

void trace_meta(struct writer *w, int pid, int tid, const char *what, const char *name)
{
	json_t *ev = json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "ph", "M", "name", what, "pid", pid,
			       "tid", tid, "args", "name", name);

	trace_emit(w, ev);
}

void trace_sort_index(struct writer *w, int pid, int tid, int idx)
{
	trace_emit(w, tid ? json_pack("{s:s,s:s,s:i,s:i,s:{s:i}}", "ph", "M", "name", "thread_sort_index",
				"pid", pid, "tid", tid, "args", "sort_index", idx)
		    : json_pack("{s:s,s:s,s:i,s:{s:i}}", "ph", "M", "name", "process_sort_index",
				"pid", pid, "args", "sort_index", idx));
}

static const char *program_name(const struct writer *w, uint32_t prog)
{
	uint32_t i;

	for (i = 0; i < w->m->num_programs; i++)
		if (w->m->programs[i].index == prog)
			return w->m->programs[i].name;
	return "program";
}

/* The user anchor a stream carries, or NULL. */
static const char *stream_anchor(const struct writer *w, uint32_t stream)
{
	uint32_t i, s;

	for (i = 0; i < w->m->num_anchors; i++) {
		const struct ipuef_anchor *a = &w->m->anchors[i];

		if (w->ipu < 0 && a->stream_id == stream)
			return a->name;
		/* a group's anchor ids are group-wide: the IPU's own stream */
		if (w->ipu >= 0 && ipuef_anchor_ipu(w->m, a, &s) == (uint32_t)w->ipu && s == stream)
			return a->name;
	}
	if (w->ipu >= 0 && w->m->group)
		for (i = 0; i < w->m->group->num_links; i++) {
			const struct ipuef_link *l = &w->m->group->links[i];

			if ((l->src_ipu == (uint32_t)w->ipu && l->src_stream == stream) ||
			    (l->dst_ipu == (uint32_t)w->ipu && l->dst_stream == stream))
				return l->name;
		}
	return NULL;
}

static const struct ipuef_debug_node *node_of(const struct writer *w, uint16_t kind, uint32_t idx)
{
	const struct ipuef_debug *d = w->dbg;
	uint32_t n = IPUEF_DEBUG_NONE;

	/* the debug blob indexes one executable's compute sets */
	if (!d || w->ipu >= 0)
		return NULL;
	if (kind == IPU_STEP_EXECUTE && idx < d->num_compute_sets)
		n = d->cs_node[idx];
	else if (kind == IPU_STEP_EXCHANGE && idx < d->num_exchanges)
		n = d->xch_node[idx];
	return n == IPUEF_DEBUG_NONE ? NULL : &d->nodes[n];
}

/* Name, category and arguments of a step event (args: a new object). */
json_t *trace_step_args(const struct writer *w, const struct ipu_step_event *e, char *name,
			 size_t len, const char **cat, uint64_t run)
{
	const struct ipuef_debug_node *nd = node_of(w, e->kind, e->index);
	json_t *a = json_pack("{s:I}", "cycles", (json_int_t)e->cycles);

	if (!a)
		return NULL;
	switch (e->kind) {
	case IPU_STEP_EXECUTE: {
		struct ipu_cs_profile p;

		*cat = "compute";
		if (nd)
			snprintf(name, len, "%s", nd->name);
		else
			snprintf(name, len, "compute set %u", e->index);
		json_object_set_new(a, "compute_set", json_integer(e->index));
		if (w->dev && !ipu_cs_profile(w->dev, e->index, &p)) {
			json_object_set_new(a, "tiles", json_integer(p.tiles));
			json_object_set_new(a, "vertices", json_integer(p.vertices));
		}
		break;
	}
	case IPU_STEP_EXCHANGE:
		*cat = "exchange";
		if (nd)
			snprintf(name, len, "exchange: %s", nd->name);
		else
			snprintf(name, len, "exchange %u", e->index);
		json_object_set_new(a, "exchange", json_integer(e->index));
		json_object_set_new(a, "bytes", json_integer((json_int_t)e->bytes));
		break;
	case IPU_STEP_STREAM_COPY: {
		const char *an = stream_anchor(w, e->stream);

		*cat = "stream";
		snprintf(name, len, "stream copy %s", an ? an : "");
		if (!an)
			snprintf(name, len, "stream copy (stream %u)", e->stream);
		json_object_set_new(a, "stream", json_integer(e->stream));
		if (an)
			json_object_set_new(a, "anchor", json_string(an));
		json_object_set_new(a, "bytes", json_integer((json_int_t)e->bytes));
		json_object_set_new(a, "stalled", json_boolean(e->flags & IPU_TRACE_STALLED));
		break;
	}
	case IPU_STEP_SYNC:
		*cat = "sync";
		snprintf(name, len, "sync");
		json_object_set_new(a, "external", json_boolean(e->index == IPU_SYNC_EXTERNAL));
		break;
	default:
		*cat = "program";
		snprintf(name, len, "%s #%llu", program_name(w, e->program), (unsigned long long)run);
		json_object_set_new(a, "program", json_integer(e->program));
		json_object_set_new(a, "run", json_integer((json_int_t)run));
		json_object_set_new(a, "status", json_integer(e->status));
		json_object_set_new(a, "bytes", json_integer((json_int_t)e->bytes));
		break;
	}
	if (nd) {
		json_object_set_new(a, "node", json_string(nd->name));
		json_object_set_new(a, "op", json_string(nd->op));
	}
	return a;
}

void trace_complete(struct writer *w, int pid, const char *name, const char *cat, double ts,
		     double dur, json_t *args)
{
	json_t *ev = args ? json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:o}", "ph", "X", "name", name,
				      "cat", cat, "pid", pid, "tid", TID_STEPS, "ts", ts, "dur", dur,
				      "args", args)
			  : NULL;

	trace_emit(w, ev);
}

/*
 * One program run: steps[first .. last) then its program event at last.
 * Modelled: from *mclk (cycles), steps back to back.  Host: wall times.
 */
static void program_events(struct writer *w, const struct ipu_step_event *s, size_t first,
			   size_t last, uint64_t run, uint64_t *mclk)
{
	double k = w->info->ghz * 1e3;	/* cycles per microsecond */
	const char *cat;
	char name[1200];
	uint64_t c = *mclk;
	size_t i;

	for (int pass = 0; pass < 2; pass++) {
		int pid = pass ? PID_HOST : PID_DEVICE;
		json_t *a = trace_step_args(w, &s[last], name, sizeof(name), &cat, run);

		if (pass)
			trace_complete(w, pid, name, cat, (double)(s[last].start_ns - w->t0) / 1e3,
				 (double)(s[last].end_ns - s[last].start_ns) / 1e3, a);
		else
			trace_complete(w, pid, name, cat, (double)*mclk / k, (double)s[last].cycles / k, a);
		c = *mclk;
		for (i = first; i < last; i++) {
			a = trace_step_args(w, &s[i], name, sizeof(name), &cat, run);
			if (pass) {
				trace_complete(w, pid, name, cat, (double)(s[i].start_ns - w->t0) / 1e3,
					 (double)(s[i].end_ns - s[i].start_ns) / 1e3, a);
			} else {
				/* end computed from integers: a last child ends exactly with its parent */
				trace_complete(w, pid, name, cat, (double)c / k,
					 (double)(c + s[i].cycles) / k - (double)c / k, a);
				c += s[i].cycles;
			}
		}
	}
	*mclk += s[last].cycles;
}

static int cmp_req(const void *a, const void *b)
{
	const struct req_event *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	/* same instant: a request's own events keep their order */
	return x->ev - y->ev;
}

/*
 * Each request is an async slice "request N" from queued to done holding
 * "queued" (until its first run reached the device) then "running".
 */
static void request_events(struct writer *w, struct req_event *r, size_t n)
{
	size_t i;

	qsort(r, n, sizeof(*r), cmp_req);
	for (i = 0; i < n; i++) {
		double ts = (double)(r[i].t_ns - w->t0) / 1e3;
		char name[48], id[32];

		snprintf(name, sizeof(name), "request %llu", (unsigned long long)r[i].id);
		snprintf(id, sizeof(id), "0x%llx", (unsigned long long)r[i].id);
#define ASYNC(ph, nm) \
	trace_emit(w, json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:f}", "ph", ph, "name", nm, "cat", "request", \
			  "id", id, "pid", PID_HOST, "tid", TID_REQUESTS, "ts", ts))
		switch (r[i].ev) {
		case IPURT_REQ_QUEUED:
			ASYNC("b", name);
			ASYNC("b", "queued");
			break;
		case IPURT_REQ_STARTED:
			ASYNC("e", "queued");
			ASYNC("b", "running");
			break;
		default:
			ASYNC("e", "running");
			trace_emit(w, json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:f,s:{s:i}}", "ph", "e", "name", name,
					  "cat", "request", "id", id, "pid", PID_HOST, "tid", TID_REQUESTS,
					  "ts", ts, "args", "status", r[i].status));
			break;
		}
#undef ASYNC
	}
}

static json_t *counters_json(const struct ipu_counters *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			 "programs_run", (json_int_t)c->programs_run, "steps", (json_int_t)c->steps,
			 "compute_sets", (json_int_t)c->compute_sets, "cycles", (json_int_t)c->cycles,
			 "compute_cycles", (json_int_t)c->compute_cycles,
			 "exchange_cycles", (json_int_t)c->exchange_cycles,
			 "sync_cycles", (json_int_t)c->sync_cycles,
			 "stream_cycles", (json_int_t)c->stream_cycles,
			 "exchange_bytes", (json_int_t)c->exchange_bytes,
			 "stream_bytes_in", (json_int_t)c->stream_bytes_in,
			 "stream_bytes_out", (json_int_t)c->stream_bytes_out,
			 "stream_copies", (json_int_t)c->stream_copies,
			 "stream_stalls", (json_int_t)c->stream_stalls);
}

int run_trace_write(struct run_trace *t, const char *path, const struct run_trace_info *info,
		    char *note, size_t notelen, char *err, size_t errlen)
{
	struct writer w = { .first = 1, .info = info, .t0 = t->t0, .ipu = -1, .dev = info->dev };
	char *buf = NULL, dbgerr[256], title[160];
	size_t len = 0, i, first = 0;
	uint64_t mclk = 0, runs[64] = { 0 }, lbytes = 0, ltransfers = 0;
	int group;
	json_t *other;
	int rc = -1;

	snprintf(note, notelen, "%s", "");
	w.m = ipuef_metadata(info->file);
	group = info->group && w.m->group;
	if (group)
		snprintf(note, notelen, "the steps of a model split over IPUs are named by index");
	else if (ipuef_debug_read(info->file, &w.dbg, dbgerr, sizeof(dbgerr)))
		snprintf(note, notelen, "the model's debug information is unreadable (%s): steps are named by index", dbgerr);
	else if (!w.dbg)
		snprintf(note, notelen, "the model has no debug information (compile it with this ipu-compile): steps are named by index");
	if (t->oom)
		snprintf(note, notelen, "out of memory while profiling: some events are missing");
	w.f = open_memstream(&buf, &len);
	if (!w.f) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (fputs("{\"traceEvents\":[\n", w.f) == EOF)
		w.failed = 1;
	if (!group) {
		snprintf(title, sizeof(title), "IPU %s (modelled at %.2f GHz; programs back to back)",
			 w.m->ipu_version, info->ghz);
		trace_meta(&w, PID_DEVICE, 0, "process_name", title);
		trace_meta(&w, PID_DEVICE, TID_STEPS, "thread_name", "programs and supersteps");
		trace_meta(&w, PID_HOST, TID_STEPS, "thread_name", "device steps run by the engine");
	}
	trace_meta(&w, PID_HOST, 0, "process_name", "host (wall time)");
	trace_meta(&w, PID_HOST, TID_PHASES, "thread_name", "ipu-run");
	trace_meta(&w, PID_HOST, TID_REQUESTS, "thread_name", "requests (Model Runtime)");
	if (!group)
		trace_sort_index(&w, PID_DEVICE, 0, 1);
	trace_sort_index(&w, PID_HOST, 0, 100);
	if (group)
		mclk = trace_group_events(&w, t, &lbytes, &ltransfers);
	for (i = 0; i < t->nsteps; i++) {
		if (t->steps[i].kind != IPU_TRACE_PROGRAM)
			continue;
		program_events(&w, t->steps, first, i, runs[t->steps[i].program % 64]++, &mclk);
		first = i + 1;
	}
	for (i = 0; i < t->nphases; i++)
		trace_emit(&w, json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "ph", "X", "name", t->phases[i].name,
				   "cat", "phase", "pid", PID_HOST, "tid", TID_PHASES,
				   "ts", (double)(t->phases[i].start_ns - t->t0) / 1e3,
				   "dur", (double)(t->phases[i].end_ns - t->phases[i].start_ns) / 1e3));
	request_events(&w, t->reqs, t->nreqs);
	other = json_pack("{s:s,s:s,s:s,s:f,s:b,s:o,s:I,s:b}", "tool", "ipu-run", "model", info->model,
			  "ipu_version", w.m->ipu_version, "clock_ghz", info->ghz,
			  "device_steps", info->have_steps, "engine_counters", counters_json(&info->counters),
			  "modelled_cycles", (json_int_t)mclk, "debug_info", w.dbg != NULL);
	if (group && other)
		json_object_set_new(other, "group", json_pack("{s:i,s:I,s:I,s:I}", "ipus",
							      (int)w.m->group->num_ipus, "link_transfers",
							      (json_int_t)ltransfers, "link_bytes",
							      (json_int_t)lbytes, "modelled_cycles_pipelined",
							      (json_int_t)mclk));
	if (fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":", w.f) == EOF || !other ||
	    json_dumpf(other, w.f, JSON_COMPACT | JSON_ENSURE_ASCII) || fputs("}\n", w.f) == EOF)
		w.failed = 1;
	json_decref(other);
	if (fclose(w.f) || w.failed) {
		w.f = NULL;
		snprintf(err, errlen, "out of memory writing the trace");
		goto out;
	}
	w.f = NULL;
	rc = ipurt_write_file_atomic(path, buf, len, err, errlen);
out:
	if (w.f)
		fclose(w.f);
	free(buf);
	ipuef_debug_free(w.dbg);
	return rc;
}
