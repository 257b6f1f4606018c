// SPDX-License-Identifier: MIT
/*
 * ipu_run_report.c - ipu-run's report, text or JSON (ipu_run_report.h).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ipu/half.h"
#include "ipu_run_group.h"
#include "ipu_run_report.h"

static double element(const struct ipurt_npy *a, uint64_t i)
{
	switch (a->dtype) {
	case IPURT_DT_F32: return ((const float *)a->data)[i];
	case IPURT_DT_F16: return ipu_f16_to_f32(((const uint16_t *)a->data)[i]);
	case IPURT_DT_I32: return ((const int32_t *)a->data)[i];
	case IPURT_DT_I64: return (double)((const int64_t *)a->data)[i];
	case IPURT_DT_I8: return ((const int8_t *)a->data)[i];
	default: return ((const uint8_t *)a->data)[i];
	}
}

static uint64_t elements(const struct ipurt_npy *a)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < a->rank; i++)
		n *= a->dims[i];
	return n;
}

struct summary {
	uint64_t n;
	double min, max, mean;
};

static struct summary summarise(const struct ipurt_npy *a)
{
	struct summary s = { elements(a), INFINITY, -INFINITY, 0 };
	double sum = 0;
	uint64_t e;

	for (e = 0; e < s.n; e++) {
		double v = element(a, e);

		s.min = v < s.min ? v : s.min;
		s.max = v > s.max ? v : s.max;
		sum += v;
	}
	if (!s.n)
		s.min = s.max = 0;
	s.mean = s.n ? sum / (double)s.n : 0;
	return s;
}

static const char *output_path(const struct run_opts *o, const char *anchor)
{
	const char *path = NULL;
	int j;

	for (j = 0; j < o->nout; j++)
		if (!strcmp(o->out[j].name, anchor))
			path = o->out[j].path;
	return path;
}

static void shape_str(const struct ipurt_npy *a, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s[", ipurt_dtype_name(a->dtype));
	uint32_t i;

	for (i = 0; i < a->rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%llu", i ? "," : "",
				      (unsigned long long)a->dims[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

static json_t *shape_json(const struct ipurt_npy *a)
{
	json_t *j = json_array();
	uint32_t i;

	for (i = 0; j && i < a->rank; i++)
		json_array_append_new(j, json_integer((json_int_t)a->dims[i]));
	return j;
}

/* --- text --- */

static void text_tensors(const struct run_report *rep)
{
	const struct run_io *io = rep->io;
	char sh[128], sn[256], sp[512];
	int i;

	for (i = 0; i < io->nin; i++) {
		struct ipurt_npy v = run_io_view(&io->in[i]);

		shape_str(&v, sh, sizeof(sh));
		printf("input  %-24s %-20s %s\n", cli_safe(io->in[i].name, sn, sizeof(sn)), sh,
		       io->generated[i] ? "(generated: seeded random, no --input given)" : "(from file)");
	}
	for (i = 0; i < io->nout; i++) {
		struct ipurt_npy v = run_io_view(&io->out[i]);
		struct summary s = summarise(&v);
		const char *path = output_path(rep->o, io->out[i].name);
		uint64_t e;

		shape_str(&v, sh, sizeof(sh));
		printf("output %-24s %-20s min %.6g max %.6g mean %.6g", cli_safe(io->out[i].name, sn, sizeof(sn)),
		       sh, s.min, s.max, s.mean);
		if (path)
			printf("  -> %s", cli_safe(path, sp, sizeof(sp)));
		printf("\n       first:");
		for (e = 0; e < s.n && e < 8; e++)
			printf(" %.6g", element(&v, e));
		printf("%s\n", s.n > 8 ? " ..." : "");
	}
}

static void text_timing(const struct run_report *rep)
{
	const struct bench_result *bench = rep->bench;
	const struct lat_stats *st = &bench->st;
	const struct run_opts *o = rep->o;
	uint64_t samples = rep->io->samples;
	char b[7][32], e[32];

	printf("latency over %zu requests in %s (1 in flight, after %u warm-up): min %s, mean %s, median %s, p90 %s, p95 %s, p99 %s, max %s\n",
	       bench->n, fmt_seconds(bench->elapsed, e, sizeof(e)), o->warmup,
	       fmt_seconds(st->min, b[0], 32), fmt_seconds(st->mean, b[1], 32),
	       fmt_seconds(st->median, b[2], 32), fmt_seconds(st->p90, b[3], 32),
	       fmt_seconds(st->p95, b[4], 32), fmt_seconds(st->p99, b[5], 32),
	       fmt_seconds(st->max, b[6], 32));
	printf("throughput %.0f req/s = %.0f samples/s (1 in flight)", bench->rps1,
	       bench->rps1 * (double)samples);
	if (o->inflight > 1)
		printf(", %.0f req/s = %.0f samples/s (%u in flight)", bench->rpsn,
		       bench->rpsn * (double)samples, o->inflight);
	printf("; %llu sample%s per request\n", (unsigned long long)samples, samples == 1 ? "" : "s");
	if (bench->have_split)
		printf("host time per request: input copy %s, device run %s, output copy %s, runtime %s (mean of the latency run)\n",
		       fmt_seconds(bench->input_copy, b[0], 32), fmt_seconds(bench->device_run, b[1], 32),
		       fmt_seconds(bench->output_copy, b[2], 32),
		       fmt_seconds(st->mean - bench->input_copy - bench->device_run - bench->output_copy,
				   b[3], 32));
}

static void text_devices(struct ipurt_runner *r)
{
	uint32_t i;

	printf("device runs:");
	for (i = 0; i < ipurt_runner_num_devices(r); i++) {
		struct ipu_device_info info;
		uint64_t runs = 0;
		char why[256], sw[512], sn[128];
		int in = ipurt_runner_device_status(r, i, &runs, why, sizeof(why));

		memset(&info, 0, sizeof(info));
		ipu_info(ipurt_runner_device_at(r, i), &info);
		printf("%s %s %llu", i ? "," : "", cli_safe(info.path, sn, sizeof(sn)), (unsigned long long)runs);
		if (in != 1)
			printf(" (taken out: %s)", cli_safe(why, sw, sizeof(sw)));
	}
	printf("\n");
}

int run_report_text(const struct run_report *rep)
{
	const struct run_modelled *mod = rep->mod;
	const struct run_opts *o = rep->o;
	char sm[512], sd[256], sp[512];

	printf("model %s on %s\n", cli_safe(o->model, sm, sizeof(sm)),
	       o->device ? cli_safe(o->device, sd, sizeof(sd)) : "model (in-process)");
	text_tensors(rep);
	if (mod->valid)
		printf("modelled device time %llu cycles = %.2f us per request at %.2f GHz (compute %llu, exchange %llu, sync %llu, stream I/O %llu cycles); modelled throughput %.0f req/s\n",
		       (unsigned long long)mod->total, mod->total / (mod->ghz * 1e3), mod->ghz,
		       (unsigned long long)mod->compute, (unsigned long long)mod->exchange,
		       (unsigned long long)mod->sync, (unsigned long long)mod->stream,
		       mod->total ? mod->ghz * 1e9 / (double)mod->total : 0.0);
	printf("first request %.2f ms (cold: includes the device's first run)\n", rep->first_ms);
	if (rep->bench->n)
		text_timing(rep);
	if (ipurt_runner_num_devices(rep->r) > 1)
		text_devices(rep->r);
	group_report_text(rep->r);
	if (o->profile)
		printf("profile written to %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
		       cli_safe(o->profile, sp, sizeof(sp)));
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "ipu-run: cannot write the report to standard output\n");
		return -1;
	}
	return 0;
}

/* --- JSON --- */

static json_t *json_tensors(const struct run_report *rep, int outputs)
{
	const struct run_io *io = rep->io;
	json_t *a = json_array();
	int i, n = outputs ? io->nout : io->nin;

	for (i = 0; a && i < n; i++) {
		const struct ipurt_tensor *t = outputs ? &io->out[i] : &io->in[i];
		struct ipurt_npy v = run_io_view(t);
		const char *path;
		struct summary s;
		json_t *first, *jo;
		uint64_t e;

		if (!outputs) {
			json_array_append_new(a, json_pack("{s:s,s:s,s:o,s:b}", "name", t->name, "dtype",
							   ipurt_dtype_name(v.dtype), "shape", shape_json(&v),
							   "generated", io->generated[i]));
			continue;
		}
		s = summarise(&v);
		first = json_array();
		for (e = 0; first && e < s.n && e < 8; e++)
			json_array_append_new(first, json_real(element(&v, e)));
		jo = json_pack("{s:s,s:s,s:o,s:f,s:f,s:f,s:o}", "name", t->name, "dtype",
			       ipurt_dtype_name(v.dtype), "shape", shape_json(&v), "min", s.min, "max", s.max,
			       "mean", s.mean, "first", first);
		path = output_path(rep->o, t->name);
		if (jo && path)
			json_object_set_new(jo, "file", json_string(path));
		json_array_append_new(a, jo);
	}
	return a;
}

static json_t *json_devices(struct ipurt_runner *r)
{
	json_t *jd = json_array();
	uint32_t i;

	for (i = 0; jd && i < ipurt_runner_num_devices(r); i++) {
		struct ipu_device_info info;
		uint64_t runs = 0;
		char why[256];
		int in = ipurt_runner_device_status(r, i, &runs, why, sizeof(why));

		memset(&info, 0, sizeof(info));
		ipu_info(ipurt_runner_device_at(r, i), &info);
		json_array_append_new(jd, json_pack("{s:s,s:I,s:b,s:s?}", "device", info.path, "runs",
						    (json_int_t)runs, "in_rotation", in == 1, "taken_out",
						    in == 1 ? NULL : why));
	}
	return jd ? jd : json_null();
}

static void json_timing(json_t *json, const struct run_report *rep)
{
	const struct bench_result *bench = rep->bench;
	const struct lat_stats *st = &bench->st;
	const struct run_opts *o = rep->o;
	double samples = (double)rep->io->samples;

	json_object_set_new(json, "first_request_ms", json_real(rep->first_ms));
	json_object_set_new(json, "warmup", json_integer(bench->n ? o->warmup : 0));
	json_object_set_new(json, "iterations", json_integer((json_int_t)bench->n));
	if (o->duration > 0)
		json_object_set_new(json, "duration_s", json_real(o->duration));
	json_object_set_new(json, "elapsed_s", json_real(bench->elapsed));
	json_object_set_new(json, "latency_us",
			    bench->n ? json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "min", st->min * 1e6, "mean",
						 st->mean * 1e6, "median", st->median * 1e6, "p90",
						 st->p90 * 1e6, "p95", st->p95 * 1e6, "p99", st->p99 * 1e6,
						 "max", st->max * 1e6)
				     : json_null());
	json_object_set_new(json, "latency_p50_us", json_real(st->median * 1e6));
	json_object_set_new(json, "latency_p99_us", json_real(st->p99 * 1e6));
	json_object_set_new(json, "requests_per_s_1", json_real(bench->rps1));
	json_object_set_new(json, "requests_per_s_inflight", json_real(bench->rpsn));
	json_object_set_new(json, "samples_per_request", json_integer((json_int_t)rep->io->samples));
	json_object_set_new(json, "samples_per_s_1", json_real(bench->rps1 * samples));
	json_object_set_new(json, "samples_per_s_inflight", json_real(bench->rpsn * samples));
	json_object_set_new(json, "inflight", json_integer(o->inflight));
	json_object_set_new(json, "devices", json_devices(rep->r));
	json_object_set_new(json, "host_time_per_request_us",
			    bench->have_split ?
			    json_pack("{s:f,s:f,s:f,s:f}", "input_copy", bench->input_copy * 1e6, "device_run",
				      bench->device_run * 1e6, "output_copy", bench->output_copy * 1e6,
				      "runtime", (st->mean - bench->input_copy - bench->device_run -
						  bench->output_copy) * 1e6)
			    : json_null());
}

static void json_modelled(json_t *json, const struct run_modelled *mod)
{
	json_object_set_new(json, "modelled_cycles_per_request", json_integer((json_int_t)mod->total));
	json_object_set_new(json, "modelled_us_per_request", json_real(mod->total / (mod->ghz * 1e3)));
	json_object_set_new(json, "modelled_clock_ghz", json_real(mod->ghz));
	json_object_set_new(json, "modelled_requests_per_s",
			    json_real(mod->total ? mod->ghz * 1e9 / (double)mod->total : 0.0));
	json_object_set_new(json, "modelled_breakdown_cycles",
			    json_pack("{s:I,s:I,s:I,s:I}", "compute", (json_int_t)mod->compute, "exchange",
				      (json_int_t)mod->exchange, "sync", (json_int_t)mod->sync, "stream_io",
				      (json_int_t)mod->stream));
}

int run_report_json(const struct run_report *rep)
{
	const struct run_opts *o = rep->o;
	json_t *json = json_object(), *jin = json_tensors(rep, 0), *jout = json_tensors(rep, 1);
	int rc = -1;

	if (!json || !jin || !jout) {
		json_decref(jin);
		json_decref(jout);
		fprintf(stderr, "ipu-run: out of memory\n");
		goto out;
	}
	json_object_set_new(json, "model", json_string(o->model));
	json_object_set_new(json, "device", json_string(o->device ? o->device : "model"));
	json_object_set_new(json, "inputs", jin);
	json_object_set_new(json, "outputs", jout);
	json_timing(json, rep);
	if (o->export_times)
		json_object_set_new(json, "export_times", json_string(o->export_times));
	if (o->profile)
		json_object_set_new(json, "profile", json_string(o->profile));
	if (rep->mod->valid)
		json_modelled(json, rep->mod);
	if (ipurt_runner_group(rep->r))
		json_object_set_new(json, "group", group_report_json(rep->r));
	/* ensure_ascii: any byte of a name survives as \\uXXXX, never raw */
	if (json_dumpf(json, stdout, JSON_COMPACT | JSON_ENSURE_ASCII) || putchar('\n') == EOF ||
	    fflush(stdout) == EOF) {
		fprintf(stderr, "ipu-run: cannot write the JSON report\n");
		goto out;
	}
	rc = 0;
out:
	json_decref(json);
	return rc;
}
