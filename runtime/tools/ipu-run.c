// SPDX-License-Identifier: MIT
/*
 * ipu-run - run an .ipuef model: inputs from .npy files (or generated from
 * a seed, and said so), outputs to .npy files or summarised, the modelled
 * device time, then a benchmark (ipu_run_bench.c): latency statistics and
 * throughput with 1 and with many requests in flight, and a trace of it
 * all on request (ipu_run_trace.c).  The command line is ipu_run_opts.c,
 * the request's tensors ipu_run_io.c, the report ipu_run_report.c; this
 * file is the order of the steps.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ipu/file_atomic.h"
#include "ipu/runtime.h"
#include "ipu_run_bench.h"
#include "ipu_run_io.h"
#include "ipu_run_generate.h"
#include "ipu_run_opts.h"
#include "ipu_run_report.h"
#include "ipu_run_trace.h"

/* One invocation: what was asked, what is open, what was measured. */
struct run {
	struct run_opts o;
	struct ipuef_file *file;	/* read once: the model may be a pipe */
	struct ipurt_runner *r;
	struct run_io io;
	struct run_trace *trace;	/* --profile */
	struct step_sums sums;		/* per-step host times (one device) */
	int trace_steps;		/* sums attached to the device */
	int trace_group;		/* the trace attached to a group's IPUs */
	struct ipu_counters tc0;	/* the device's counters before the runs */
	double first_ms;
	struct run_modelled mod;
	struct bench_result bench;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every timed request of the latency run, for one's own statistics. */
static int export_times(const char *path, const struct bench_result *b, char *err, size_t errlen)
{
	json_t *j = json_object(), *a = json_array();
	char *text = NULL;
	size_t k;
	int rc = -1;

	if (!j || !a) {
		json_decref(a);
		goto out;
	}
	json_object_set_new(j, "requests", a);
	json_object_set_new(j, "elapsed_us", json_real(b->elapsed * 1e6));
	for (k = 0; k < b->n; k++)
		if (json_array_append_new(a, json_pack("{s:f,s:f}", "start_us", b->start[k] * 1e6,
							"latency_us", b->lat[k] * 1e6)))
			goto out;
	text = json_dumps(j, JSON_COMPACT);
	if (!text)
		goto out;
	rc = ipurt_write_file_atomic(path, text, strlen(text), err, errlen);
	free(text);
	json_decref(j);
	return rc;
out:
	snprintf(err, errlen, "out of memory writing %s", path);
	json_decref(j);
	return -1;
}

/* Tile clock of the modelled IPU: GC200 (ipu2) 1.33 GHz, Bow (ipu21) 1.85 GHz. */
static double clock_ghz(const char *version)
{
	return version && !strcmp(version, "ipu21") ? 1.85 : 1.33;
}

/*
 * Opens the model and loads it on the device(s) with the runtime's
 * configuration for this command line: fused models run one subgraph per
 * request (the one the input files name, or --subgraph), --batch-size
 * batches along the first batched user anchor.
 */
static int run_open(struct run *x)
{
	struct run_opts *o = &x->o;
	const struct ipuef_metadata *m;
	struct ipurt_config cfg;
	char err[512], *spec = NULL;
	int fused = 0, i, rc;
	uint32_t a;

	ipurt_config_init(&cfg);
	cfg.device = o->device;
	/* ',' lists devices to use together, ';' alternatives to choose from */
	if (o->device && *o->device && !strchr(o->device, ';'))
		cfg.num_devices = IPURT_ALL_LISTED;
	cfg.timeout_ns = o->timeout_ms * 1000000ull;
	cfg.ring_buffer_size = 64;
	if (x->trace) {
		cfg.on_request = run_trace_request;
		cfg.on_request_ctx = x->trace;
	}
	if (ipuef_open(!strcmp(o->model, "-") ? "/dev/stdin" : o->model, &x->file, err, sizeof(err))) {
		fprintf(stderr, "ipu-run: %s\n", err);
		return -1;
	}
	m = ipuef_metadata(x->file);
	for (a = 0; a < m->num_anchors; a++)
		fused |= m->anchors[a].kind == IPUEF_ANCHOR_INDEX;
	for (a = 0; o->batch && a < m->num_anchors; a++) {
		if (m->anchors[a].kind == IPUEF_ANCHOR_USER && m->anchors[a].batch_dim != IPUEF_NO_BATCH_DIM) {
			cfg.batching_dim = m->anchors[a].batch_dim;
			break;
		}
	}
	if (fused) {
		cfg.validate_io_params = 0; /* one subgraph per request */
		/* the subgraph the input files name, else the first */
		for (i = 0; o->subgraph < 0 && i < o->nin; i++)
			o->subgraph = ipurt_anchor_subgraph(o->in[i].name);
		if (o->subgraph < 0)
			o->subgraph = 0;
	} else {
		o->subgraph = -1;
	}
	if (o->no_validate)
		cfg.validate_io_params = 0;
	if (o->custom_ops[0]) {
		if (ipurt_custom_ops_spec(o->device, x->file, o->custom_ops, &spec, err, sizeof(err))) {
			fprintf(stderr, "ipu-run: --custom-ops: %s\n", err);
			return -1;
		}
		cfg.device = spec;
	}
	rc = ipurt_runner_create_from(x->file, &cfg, &x->r, err, sizeof(err));
	free(spec);
	if (rc) {
		fprintf(stderr, "ipu-run: %s: %s\n", o->model, err);
		return -1;
	}
	return 0;
}

/* The counters of every device the model is loaded on, added up. */
static int counters_all(struct ipurt_runner *r, struct ipu_counters *out)
{
	uint64_t sum[sizeof(*out) / sizeof(uint64_t)], one[sizeof(*out) / sizeof(uint64_t)];
	struct ipu_counters c;
	uint32_t i;
	size_t k;

	memset(sum, 0, sizeof(sum));
	for (i = 0; i < ipurt_runner_num_devices(r); i++) {
		int rc = ipu_counters(ipurt_runner_device_at(r, i), &c);

		if (rc)
			return rc;
		memcpy(one, &c, sizeof(one));
		for (k = 0; k < sizeof(sum) / sizeof(sum[0]); k++)
			sum[k] += one[k];
	}
	memcpy(out, sum, sizeof(*out));
	return 0;
}

/*
 * Per-step events, for the host time split and the profile: one device,
 * or for the profile every IPU of a split model's group.
 */
static void attach_steps(struct run *x)
{
	struct ipu_device *dev = ipurt_runner_device(x->r);
	struct ipu_group *g = ipurt_runner_group(x->r);

	x->sums.trace = x->trace;
	if (ipurt_runner_num_devices(x->r) == 1 && !ipu_counters(dev, &x->tc0) &&
	    !step_sums_attach(&x->sums, dev))
		x->trace_steps = 1;
	else if (x->trace && g && !counters_all(x->r, &x->tc0)) {
		ipu_group_set_trace(g, run_trace_group_step, x->trace);
		x->trace_group = 1;
	} else if (x->trace && ipurt_runner_num_devices(x->r) > 1)
		fprintf(stderr, "ipu-run: note: per-step events are recorded on one device or a split model's group only; the profile has the requests only\n");
	else if (x->trace)
		fprintf(stderr, "ipu-run: note: this device gives no per-step events (only the in-process model device does); the profile has the requests only\n");
}

/*
 * The first request, cold, whose outputs are the ones reported; the
 * modelled cycles come from it, as they do not depend on the data.
 */
static int run_first(struct run *x)
{
	const struct ipuef_metadata *m = ipuef_metadata(x->file);
	struct ipu_counters c0, c1;
	uint64_t ph0 = run_trace_now();
	double t0 = now();
	int have = !counters_all(x->r, &c0);
	char err[512];

	if (ipurt_runner_execute(x->r, x->io.in, (uint32_t)x->io.nin, x->io.out, (uint32_t)x->io.nout, err,
				 sizeof(err))) {
		fprintf(stderr, "ipu-run: %s\n", err);
		return -1;
	}
	x->first_ms = (now() - t0) * 1e3;
	if (x->trace)
		run_trace_phase(x->trace, "first request", ph0, run_trace_now());
	if (have && !counters_all(x->r, &c1)) {
		x->mod.total = c1.cycles - c0.cycles;
		x->mod.compute = c1.compute_cycles - c0.compute_cycles;
		x->mod.exchange = c1.exchange_cycles - c0.exchange_cycles;
		x->mod.sync = c1.sync_cycles - c0.sync_cycles;
		x->mod.stream = c1.stream_cycles - c0.stream_cycles;
		x->mod.ghz = clock_ghz(m->ipu_version);
		x->mod.valid = 1;
	}
	return 0;
}

/* The warm-up, latency and throughput runs, and their times on request. */
static int run_timed(struct run *x)
{
	struct bench_opts bo = { x->o.warmup, x->o.iterations, x->o.duration, x->o.inflight };
	char err[512], sp[512];

	if (bench_run(x->r, x->io.in, (uint32_t)x->io.nin, x->io.out, (uint32_t)x->io.nout, &bo,
		      x->trace_steps ? &x->sums : NULL, x->trace, &x->bench, err, sizeof(err))) {
		fprintf(stderr, "ipu-run: %s\n", err);
		return -1;
	}
	if (x->o.export_times && export_times(x->o.export_times, &x->bench, err, sizeof(err))) {
		fprintf(stderr, "ipu-run: %s\n", cli_safe(err, sp, sizeof(sp)));
		return -1;
	}
	return 0;
}

/* --profile: the trace, with the device's counters over the traced runs. */
static int write_profile(struct run *x)
{
	const struct ipuef_metadata *m = ipuef_metadata(x->file);
	struct run_trace_info ti = { x->o.model, x->file, ipurt_runner_device(x->r), clock_ghz(m->ipu_version),
				     x->trace_steps || x->trace_group, NULL, { 0 } };
	char note[256], err[512], sp[512];
	struct ipu_counters c1;

	if (x->trace_group) {
		ipu_group_set_trace(ipurt_runner_group(x->r), NULL, NULL);
		x->trace_group = 0;
		ti.group = ipurt_runner_group(x->r);
	}
	if (ti.have_steps) {
		if (x->trace_steps)
			step_sums_detach(&x->sums, ipurt_runner_device(x->r));
		x->trace_steps = 0;
		if (!(ti.group ? counters_all(x->r, &c1) : ipu_counters(ipurt_runner_device(x->r), &c1))) {
#define D(f) ti.counters.f = c1.f - x->tc0.f
			D(programs_run); D(steps); D(compute_sets); D(vertices); D(cycles);
			D(compute_cycles); D(exchange_cycles); D(sync_cycles); D(stream_cycles);
			D(exchange_bytes); D(stream_bytes_in); D(stream_bytes_out);
			D(stream_copies); D(stream_stalls); D(stall_ns); D(errors);
#undef D
		}
	}
	if (run_trace_write(x->trace, x->o.profile, &ti, note, sizeof(note), err, sizeof(err))) {
		fprintf(stderr, "ipu-run: %s\n", cli_safe(err, sp, sizeof(sp)));
		return -1;
	}
	if (*note)
		fprintf(stderr, "ipu-run: note: %s\n", note);
	return 0;
}

static int report(struct run *x)
{
	struct run_report rep = { &x->o, x->r, &x->io, x->first_ms, &x->mod, &x->bench };

	if (run_io_write_outputs(&x->io, &x->o))
		return -1;
	return x->o.json ? run_report_json(&rep) : run_report_text(&rep);
}

static void run_close(struct run *x)
{
	bench_result_free(&x->bench);
	if (x->trace_steps)
		step_sums_detach(&x->sums, ipurt_runner_device(x->r));
	if (x->trace_group)
		ipu_group_set_trace(ipurt_runner_group(x->r), NULL, NULL);
	run_io_free(&x->io);
	ipurt_runner_destroy(x->r);
	ipuef_close(x->file);
	run_trace_destroy(x->trace);
}

int main(int argc, char **argv)
{
	struct run x;
	int rc = -1;

	memset(&x, 0, sizeof(x));
	if (run_opts_parse(argc, argv, &x.o))
		return CLI_EXIT_USAGE;
	if (run_opts_check_outputs(&x.o))
		return CLI_EXIT_FAILURE;
	if (x.o.generate)
		return run_generate(&x.o) ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
	if (x.o.profile && !(x.trace = run_trace_create())) {
		fprintf(stderr, "ipu-run: out of memory\n");
		return CLI_EXIT_FAILURE;
	}
	if (!run_open(&x) && !run_io_prepare(&x.io, &x.o, x.r)) {
		attach_steps(&x);
		if (!run_first(&x) && !run_timed(&x) && (!x.trace || !write_profile(&x)))
			rc = report(&x);
	}
	run_close(&x);
	return rc ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
