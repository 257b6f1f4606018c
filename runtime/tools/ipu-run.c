// SPDX-License-Identifier: MIT
/*
 * ipu-run - run an .ipuef model: inputs from .npy files (or generated from
 * a seed, and said so), outputs to .npy files or summarised, the modelled
 * device time, then a benchmark (ipu_run_bench.c): latency statistics and
 * throughput with 1 and with many requests in flight, and a trace of it
 * all on request (ipu_run_trace.c).
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ipu/file_atomic.h"
#include "ipu/half.h"
#include "ipu/npy.h"
#include "ipu/runtime.h"
#include "ipu_run_bench.h"
#include "ipu_run_convert.h"
#include "ipu_run_trace.h"

#define MAX_IO 64

struct named {
	const char *name;
	const char *path;
};

struct opts {
	const char *model;
	const char *device;
	struct named in[MAX_IO], out[MAX_IO];
	int nin, nout;
	unsigned iterations, inflight, warmup;
	double duration;
	const char *export_times;
	uint64_t batch;
	uint64_t seed;
	int json, subgraph, no_validate;
	uint64_t timeout_ms;
	const char *profile;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ipu-run MODEL.ipuef [options]\n"
		"Run a compiled model on an IPU device and report its outputs, its speed on\n"
		"the host and the modelled device time per request (cycles and us at the\n"
		"target's clock: 1.33 GHz ipu2, 1.85 GHz ipu21).\n"
		"\n"
		"  --device DEV          libipu device: model[:tiles=N,tile_mem=SIZE,workers=N]\n"
		"                        (SIZE: bytes, or with k/KiB, M/MiB) or /dev/ipuN\n"
		"                        (default: the in-process model device); several\n"
		"                        separated by ',' (/dev/ipu0,/dev/ipu1 or model,model):\n"
		"                        the model is loaded on each and requests are spread\n"
		"                        over them (a device that fails is taken out, its\n"
		"                        requests move to the others); separated by ';': the\n"
		"                        first of them that is free\n"
		"  --input NAME=FILE     read input NAME from a .npy file (repeatable); inputs\n"
		"                        not given are generated (seeded random) and said so;\n"
		"                        another element type is converted, with a note, when\n"
		"                        no value changes (f16 to f32, integers that fit) or\n"
		"                        for f32 into an f16 input (rounded to nearest)\n"
		"  --output NAME=FILE    write output NAME to a .npy file (repeatable); other\n"
		"                        outputs are summarised\n"
		"  --warmup N            untimed requests after the first, before timing\n"
		"                        (0..1000000, default 5)\n"
		"  --iterations N        timed requests (0..100000000, default 100, 0: none;\n"
		"                        with --duration: at least N)\n"
		"  --duration S          time requests for at least S seconds (0.001..86400)\n"
		"  --inflight N          requests in flight for the throughput run, which\n"
		"                        runs as many requests as the latency run (1..4096,\n"
		"                        default 16; 1: no throughput run)\n"
		"  --batch-size B        run B samples per request (dynamic batch sizing\n"
		"                        along the model's batch dimension; 1..2147483648)\n"
		"  --subgraph K          fused models: run subgraph K (graphK/... anchors)\n"
		"  --seed S              seed of generated inputs (default 1)\n"
		"  --timeout-ms T        fail loading the model, or a request, not done after\n"
		"                        T ms (0..86400000, default 0: wait forever)\n"
		"  --no-validate         do not require every input/output (validate_io_params)\n"
		"  --json                print one JSON object instead of text\n"
		"  --export-times FILE.json  write every timed request's start and latency\n"
		"  --profile FILE.json   write a trace of the run in the Chrome trace event\n"
		"                        format (open it in https://ui.perfetto.dev or\n"
		"                        chrome://tracing): every program step on the\n"
		"                        modelled device, the same steps in host wall\n"
		"                        time, and each request's life; keep --iterations\n"
		"                        small, every step of every request is recorded\n"
		"  --help, --version     this text; the version\n"
		"\n"
		"MODEL may be '-' or a pipe: it is read once.  Names from the model are\n"
		"printed with control characters escaped (\\xNN).\n"
		"Exit status: 0 done, 1 failed (model, inputs, device), 2 bad command line.\n");
}

static int parse_named(char *arg, struct named *n, int *count, const char *what)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		fprintf(stderr, "ipu-run: --%s takes NAME=FILE.npy, got '%s'\n", what, arg);
		return -1;
	}
	if (*count >= MAX_IO) {
		fprintf(stderr, "ipu-run: more than %d --%s options\n", MAX_IO, what);
		return -1;
	}
	*eq = 0;
	n[*count].name = arg;
	n[*count].path = eq + 1;
	(*count)++;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "inflight", required_argument, NULL, 'f' },
		{ "batch-size", required_argument, NULL, 'b' },
		{ "subgraph", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "no-validate", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'j' },
		{ "profile", required_argument, NULL, 'P' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "duration", required_argument, NULL, 'D' },
		{ "export-times", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	int c, li, iterations_given = 0;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->iterations = 100;
	o->warmup = 5;
	o->inflight = 16;
	o->seed = 1;
	o->subgraph = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:i:o:n:b:s:jh", lo, &li)) != -1) {
		switch (c) {
		case 'd': o->device = optarg; break;
		case 'i': if (parse_named(optarg, o->in, &o->nin, "input")) return -1; break;
		case 'o': if (parse_named(optarg, o->out, &o->nout, "output")) return -1; break;
		case 'n':
			if (cli_parse_u64("ipu-run", "iterations", optarg, 0, 100000000, &v))
				return -1;
			o->iterations = (unsigned)v;
			iterations_given |= 1;
			break;
		case 'f':
			if (cli_parse_u64("ipu-run", "inflight", optarg, 1, 4096, &v))
				return -1;
			o->inflight = (unsigned)v;
			break;
		case 'b':
			if (cli_parse_u64("ipu-run", "batch-size", optarg, 1, 1ull << 31, &o->batch))
				return -1;
			break;
		case 'g':
			if (cli_parse_u64("ipu-run", "subgraph", optarg, 0, 4095, &v))
				return -1;
			o->subgraph = (int)v;
			break;
		case 's':
			if (cli_parse_u64("ipu-run", "seed", optarg, 0, UINT64_MAX, &o->seed))
				return -1;
			break;
		case 't':
			if (cli_parse_u64("ipu-run", "timeout-ms", optarg, 0, 86400000, &o->timeout_ms))
				return -1;
			break;
		case 'V': o->no_validate = 1; break;
		case 'j': o->json = 1; break;
		case 'P': o->profile = optarg; break;
		case 'E': o->export_times = optarg; break;
		case 'W':
			if (cli_parse_u64("ipu-run", "warmup", optarg, 0, 1000000, &v))
				return -1;
			o->warmup = (unsigned)v;
			break;
		case 'D': {
			char *end;

			o->duration = strtod(optarg, &end);
			if (end == optarg || *end || !(o->duration >= 0.001 && o->duration <= 86400)) {
				fprintf(stderr, "ipu-run: --duration takes seconds from 0.001 to 86400, got '%s'\n",
					optarg);
				return -1;
			}
			iterations_given |= 2;
			break;
		}
		case 'h': usage(stdout); exit(CLI_EXIT_OK);
		case 'v': cli_print_version("ipu-run"); exit(CLI_EXIT_OK);
		case ':':
			fprintf(stderr, "ipu-run: option %s needs a value (see --help)\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "ipu-run: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, optind == argc ? "ipu-run: which model? (usage: ipu-run MODEL.ipuef [options])\n"
					      : "ipu-run: one model at a time (got '%s' after it)\n",
			optind < argc - 1 ? argv[optind + 1] : "");
		return -1;
	}
	o->model = argv[optind];
	/* a duration alone: as many requests as fit, at least one */
	if (iterations_given == 2)
		o->iterations = 1;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Seeded values: floats in [-1, 1), ints in [0, 10), bools 0/1. */
static void generate(struct ipurt_npy *a, uint64_t seed)
{
	uint64_t n = a->size / ipurt_dtype_size(a->dtype), i, s = seed | 1;

	for (i = 0; i < n; i++) {
		uint64_t r = rng(&s);
		double u = (double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0;

		switch (a->dtype) {
		case IPURT_DT_F32: ((float *)a->data)[i] = (float)u; break;
		case IPURT_DT_F16: ((uint16_t *)a->data)[i] = ipu_f32_to_f16((float)u); break;
		case IPURT_DT_I32: ((int32_t *)a->data)[i] = (int32_t)(r % 10); break;
		case IPURT_DT_I64: ((int64_t *)a->data)[i] = (int64_t)(r % 10); break;
		case IPURT_DT_I8: ((int8_t *)a->data)[i] = (int8_t)(r % 10); break;
		case IPURT_DT_BOOL: ((uint8_t *)a->data)[i] = (uint8_t)(r & 1); break;
		default: ((uint8_t *)a->data)[i] = (uint8_t)(r % 10); break;
		}
	}
}

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

/* The modelled device's time per request (engine counters, cost-model.md). */
struct modelled {
	int valid;
	uint64_t total, compute, exchange, sync, stream;
	double ghz;
};

/* Tile clock of the modelled IPU: GC200 (ipu2) 1.33 GHz, Bow (ipu21) 1.85 GHz. */
static double clock_ghz(const char *version)
{
	return version && !strcmp(version, "ipu21") ? 1.85 : 1.33;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	struct ipuef_file *file = NULL;
	const struct ipuef_metadata *m;
	struct ipurt_npy arrays[2 * MAX_IO];
	struct ipurt_tensor tin[MAX_IO], tout[MAX_IO];
	int generated[MAX_IO] = { 0 }, fused = 0, nin = 0, nout = 0, rc = 1, i, j;
	double first_ms = 0;
	struct bench_result bench = { 0 };
	struct step_sums sums = { 0 };
	uint64_t samples = 1;		/* rows of the request's first batched input */
	int samples_dim = -1;
	char err[512];
	json_t *json = NULL, *jin = NULL, *jout = NULL;
	struct modelled mod = { 0 };
	uint32_t a;
	struct run_trace *trace = NULL;
	struct ipu_counters tc0;
	int trace_steps = 0;
	uint64_t ph0;

	memset(arrays, 0, sizeof(arrays));
	if (parse_args(argc, argv, &o))
		return CLI_EXIT_USAGE;
	/* outputs checked before any work: never an input, never a device */
	{
		const char *inputs[MAX_IO + 1];
		unsigned k = 0;

		inputs[k++] = o.model;
		for (i = 0; i < o.nin; i++)
			inputs[k++] = o.in[i].path;
		for (i = 0; i < o.nout; i++)
			if (cli_check_output(stderr, "ipu-run", o.out[i].path, inputs, k))
				return CLI_EXIT_FAILURE;
		if (o.profile && cli_check_output(stderr, "ipu-run", o.profile, inputs, k))
			return CLI_EXIT_FAILURE;
		if (o.export_times && cli_check_output(stderr, "ipu-run", o.export_times, inputs, k))
			return CLI_EXIT_FAILURE;
	}
	if (o.profile) {
		trace = run_trace_create();
		if (!trace) {
			fprintf(stderr, "ipu-run: out of memory\n");
			return CLI_EXIT_FAILURE;
		}
	}
	ipurt_config_init(&cfg);
	cfg.device = o.device;
	/* ',' lists devices to use together, ';' alternatives to choose from */
	if (o.device && *o.device && !strchr(o.device, ';'))
		cfg.num_devices = IPURT_ALL_LISTED;
	cfg.timeout_ns = o.timeout_ms * 1000000ull;
	cfg.ring_buffer_size = 64;
	if (trace) {
		cfg.on_request = run_trace_request;
		cfg.on_request_ctx = trace;
	}
	/* read once: the model may be a pipe or standard input */
	if (ipuef_open(!strcmp(o.model, "-") ? "/dev/stdin" : o.model, &file, err, sizeof(err))) {
		fprintf(stderr, "ipu-run: %s\n", err);
		run_trace_destroy(trace);
		return CLI_EXIT_FAILURE;
	}
	m = ipuef_metadata(file);
	for (a = 0; a < m->num_anchors; a++)
		fused |= m->anchors[a].kind == IPUEF_ANCHOR_INDEX;
	if (o.batch) {
		for (a = 0; a < m->num_anchors; a++) {
			if (m->anchors[a].kind == IPUEF_ANCHOR_USER &&
			    m->anchors[a].batch_dim != IPUEF_NO_BATCH_DIM) {
				cfg.batching_dim = m->anchors[a].batch_dim;
				break;
			}
		}
	}
	if (fused) {
		cfg.validate_io_params = 0; /* one subgraph per request */
		if (o.subgraph < 0) {
			o.subgraph = 0;
			for (i = 0; i < o.nin; i++)
				if (ipurt_anchor_subgraph(o.in[i].name) >= 0)
					o.subgraph = ipurt_anchor_subgraph(o.in[i].name);
		}
	} else {
		o.subgraph = -1;
	}
	if (o.no_validate)
		cfg.validate_io_params = 0;
	if (ipurt_runner_create_from(file, &cfg, &r, err, sizeof(err))) {
		fprintf(stderr, "ipu-run: %s: %s\n", o.model, err);
		ipuef_close(file);
		run_trace_destroy(trace);
		return CLI_EXIT_FAILURE;
	}
	m = ipuef_metadata(ipurt_runner_file(r));
	/* the files given must name anchors */
	for (i = 0; i < o.nin + o.nout; i++) {
		const struct named *nm = i < o.nin ? &o.in[i] : &o.out[i - o.nin];
		const struct ipuef_anchor *an = ipuef_find_anchor(ipurt_runner_file(r), nm->name);

		if (!an || (an->direction == IPUEF_OUTPUT) != (i >= o.nin)) {
			char sn[256], sm[256];

			fprintf(stderr, "ipu-run: the model has no %s named '%s' (see ipuef-dump %s)\n",
				i < o.nin ? "input" : "output", cli_safe(nm->name, sn, sizeof(sn)),
				cli_safe(o.model, sm, sizeof(sm)));
			goto out;
		}
	}
	/* the tensors of a request (the runtime's rule for subgraphs and batch) */
	{
		struct ipurt_tensor io[MAX_IO];
		uint32_t bdim[MAX_IO], nio_in, k;
		uint64_t rows = o.batch;
		int nio = ipurt_runner_io(r, o.subgraph, 0, io, bdim, MAX_IO, &nio_in);

		if (nio < 0) {
			fprintf(stderr, "ipu-run: the model has more than %d inputs and outputs\n", MAX_IO);
			goto out;
		}
		/* input files first: the first batched one sets the request's rows */
		for (k = 0; k < nio_in; k++) {
			const char *path = NULL;

			for (j = 0; j < o.nin; j++)
				if (!strcmp(o.in[j].name, io[k].name))
					path = o.in[j].path;
			if (!path)
				continue;
			if (ipurt_npy_read(path, &arrays[k], err, sizeof(err))) {
				/* the reader names the file in some messages, not all */
				if (strncmp(err, path, strlen(path)))
					fprintf(stderr, "ipu-run: %s: %s\n", path, err);
				else
					fprintf(stderr, "ipu-run: %s\n", err);
				goto out;
			}
			{
				char note[768];
				int cv = convert_input(&arrays[k], io[k].dtype, path, io[k].name, note,
						       sizeof(note), err, sizeof(err));

				if (cv < 0) {
					fprintf(stderr, "ipu-run: %s\n", err);
					goto out;
				}
				if (cv > 0)
					fprintf(stderr, "ipu-run: note: %s\n", note);
			}
			if (arrays[k].rank > IPUEF_MAX_RANK) {
				fprintf(stderr, "ipu-run: %s has rank %u, the model's anchors have at most %u\n",
					path, arrays[k].rank, IPUEF_MAX_RANK);
				goto out;
			}
			if (!rows && bdim[k] != IPUEF_NO_BATCH_DIM && bdim[k] < arrays[k].rank)
				rows = arrays[k].dims[bdim[k]];
		}
		if (rows)
			ipurt_runner_io(r, o.subgraph, rows, io, bdim, MAX_IO, &nio_in);
		/* the rest is generated (inputs, seeded) or allocated (outputs) */
		for (k = 0; k < (uint32_t)nio; k++) {
			struct ipurt_npy *arr = &arrays[k];
			struct ipurt_tensor *t = k < nio_in ? &tin[nin++] : &tout[nout++];

			if (!arr->data) {
				arr->dtype = io[k].dtype;
				arr->rank = io[k].rank;
				memcpy(arr->dims, io[k].dims, sizeof(io[k].dims));
				arr->size = ipurt_dtype_size(arr->dtype);
				for (j = 0; j < (int)arr->rank; j++)
					arr->size *= arr->dims[j];
				arr->data = calloc(1, arr->size ? arr->size : 1);
				if (!arr->data) {
					fprintf(stderr, "ipu-run: out of memory\n");
					goto out;
				}
				if (k < nio_in) {
					/* the seed follows the anchor, so runs are repeatable */
					generate(arr, o.seed + (uint64_t)(ipuef_find_anchor(file, io[k].name) -
									  m->anchors));
					generated[nin - 1] = 1;
				}
			}
			if (k < nio_in && samples_dim < 0 && bdim[k] != IPUEF_NO_BATCH_DIM &&
			    bdim[k] < arr->rank) {
				samples_dim = (int)bdim[k];
				samples = arr->dims[bdim[k]];
			}
			*t = io[k];
			t->dtype = arr->dtype;
			t->rank = arr->rank;
			memcpy(t->dims, arr->dims, sizeof(t->dims[0]) * arr->rank);
			t->data = arr->data;
		}
	}
	/* per-step events: the host time split, and the profile */
	sums.trace = trace;
	memset(&tc0, 0, sizeof(tc0));
	if (ipurt_runner_num_devices(r) == 1 && !ipu_counters(ipurt_runner_device(r), &tc0) &&
	    !step_sums_attach(&sums, ipurt_runner_device(r)))
		trace_steps = 1;
	else if (trace && ipurt_runner_num_devices(r) > 1)
		fprintf(stderr, "ipu-run: note: per-step events are recorded on one device only; the profile has the requests only\n");
	else if (trace)
		fprintf(stderr, "ipu-run: note: this device gives no per-step events (only the in-process model device does); the profile has the requests only\n");
	ph0 = run_trace_now();
	{
		double t0 = now();
		struct ipu_counters c0, c1;
		int have = !counters_all(r, &c0);

		if (ipurt_runner_execute(r, tin, (uint32_t)nin, tout, (uint32_t)nout, err, sizeof(err))) {
			fprintf(stderr, "ipu-run: %s\n", err);
			goto out;
		}
		first_ms = (now() - t0) * 1e3;
		if (trace)
			run_trace_phase(trace, "first request", ph0, run_trace_now());
		/* modelled cycles do not depend on data: one request tells all */
		if (have && !counters_all(r, &c1)) {
			mod.total = c1.cycles - c0.cycles;
			mod.compute = c1.compute_cycles - c0.compute_cycles;
			mod.exchange = c1.exchange_cycles - c0.exchange_cycles;
			mod.sync = c1.sync_cycles - c0.sync_cycles;
			mod.stream = c1.stream_cycles - c0.stream_cycles;
			mod.ghz = clock_ghz(m->ipu_version);
			mod.valid = 1;
		}
	}
	{
		struct bench_opts bo = { o.warmup, o.iterations, o.duration, o.inflight };

		if (bench_run(r, tin, (uint32_t)nin, tout, (uint32_t)nout, &bo, trace_steps ? &sums : NULL,
			      trace, &bench, err, sizeof(err))) {
			fprintf(stderr, "ipu-run: %s\n", err);
			goto out;
		}
		if (o.export_times && export_times(o.export_times, &bench, err, sizeof(err))) {
			char sp[512];

			fprintf(stderr, "ipu-run: %s\n", cli_safe(err, sp, sizeof(sp)));
			goto out;
		}
	}
	if (trace) {
		struct run_trace_info ti = { o.model, file, ipurt_runner_device(r), clock_ghz(m->ipu_version),
					     trace_steps, { 0 } };
		char note[256], sp[512];

		if (trace_steps) {
			struct ipu_counters c1;

			step_sums_detach(&sums, ipurt_runner_device(r));
			trace_steps = 0;
			if (!ipu_counters(ipurt_runner_device(r), &c1)) {
#define D(f) ti.counters.f = c1.f - tc0.f
				D(programs_run); D(steps); D(compute_sets); D(vertices); D(cycles);
				D(compute_cycles); D(exchange_cycles); D(sync_cycles); D(stream_cycles);
				D(exchange_bytes); D(stream_bytes_in); D(stream_bytes_out);
				D(stream_copies); D(stream_stalls); D(stall_ns); D(errors);
#undef D
			}
		}
		if (run_trace_write(trace, o.profile, &ti, note, sizeof(note), err, sizeof(err))) {
			fprintf(stderr, "ipu-run: %s\n", cli_safe(err, sp, sizeof(sp)));
			goto out;
		}
		if (*note)
			fprintf(stderr, "ipu-run: note: %s\n", note);
	}
	/* report */
	if (o.json) {
		json = json_object();
		jin = json_array();
		jout = json_array();
		if (!json || !jin || !jout) {
			fprintf(stderr, "ipu-run: out of memory\n");
			goto out;
		}
		json_object_set_new(json, "model", json_string(o.model));
		json_object_set_new(json, "device", json_string(o.device ? o.device : "model"));
		json_object_set_new(json, "inputs", jin);
		json_object_set_new(json, "outputs", jout);
	} else {
		char sm[512], sd[256];

		printf("model %s on %s\n", cli_safe(o.model, sm, sizeof(sm)),
		       o.device ? cli_safe(o.device, sd, sizeof(sd)) : "model (in-process)");
	}
	for (i = 0; i < nin; i++) {
		char sh[128], sn[256];
		struct ipurt_npy view = { tin[i].dtype, tin[i].rank, { 0 }, tin[i].data, 0 };

		memcpy(view.dims, tin[i].dims, sizeof(tin[i].dims));
		if (o.json) {
			json_array_append_new(jin, json_pack("{s:s,s:s,s:o,s:b}", "name", tin[i].name,
							     "dtype", ipurt_dtype_name(view.dtype),
							     "shape", shape_json(&view),
							     "generated", generated[i]));
			continue;
		}
		shape_str(&view, sh, sizeof(sh));
		printf("input  %-24s %-20s %s\n", cli_safe(tin[i].name, sn, sizeof(sn)), sh,
		       generated[i] ? "(generated: seeded random, no --input given)" : "(from file)");
	}
	for (i = 0; i < nout; i++) {
		struct ipurt_npy view = { tout[i].dtype, tout[i].rank, { 0 }, tout[i].data, 0 };
		const char *path = NULL;
		uint64_t n = 1, e;
		double mn = INFINITY, mx = -INFINITY, sum = 0;
		char sh[128], sn[256], sp[512];

		memcpy(view.dims, tout[i].dims, sizeof(tout[i].dims));
		for (j = 0; j < (int)view.rank; j++)
			n *= view.dims[j];
		view.size = n * ipurt_dtype_size(view.dtype);
		shape_str(&view, sh, sizeof(sh));
		for (j = 0; j < o.nout; j++)
			if (!strcmp(o.out[j].name, tout[i].name))
				path = o.out[j].path;
		if (path && ipurt_npy_write(path, &view, err, sizeof(err))) {
			fprintf(stderr, "ipu-run: %s\n", cli_safe(err, sp, sizeof(sp)));
			goto out;
		}
		for (e = 0; e < n; e++) {
			double v = element(&view, e);

			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			sum += v;
		}
		if (o.json) {
			json_t *first = json_array(), *jo;

			for (e = 0; e < n && e < 8; e++)
				json_array_append_new(first, json_real(element(&view, e)));
			jo = json_pack("{s:s,s:s,s:o,s:f,s:f,s:f,s:o}", "name", tout[i].name,
				       "dtype", ipurt_dtype_name(view.dtype), "shape", shape_json(&view),
				       "min", n ? mn : 0.0, "max", n ? mx : 0.0,
				       "mean", n ? sum / (double)n : 0.0, "first", first);
			if (jo && path)
				json_object_set_new(jo, "file", json_string(path));
			json_array_append_new(jout, jo);
			continue;
		}
		printf("output %-24s %-20s min %.6g max %.6g mean %.6g", cli_safe(tout[i].name, sn, sizeof(sn)),
		       sh, mn, mx, n ? sum / (double)n : 0);
		if (path)
			printf("  -> %s", cli_safe(path, sp, sizeof(sp)));
		printf("\n       first:");
		for (e = 0; e < n && e < 8; e++)
			printf(" %.6g", element(&view, e));
		printf("%s\n", n > 8 ? " ..." : "");
	}
	if (o.json) {
		const struct lat_stats *st = &bench.st;

		json_object_set_new(json, "first_request_ms", json_real(first_ms));
		json_object_set_new(json, "warmup", json_integer(bench.n ? o.warmup : 0));
		json_object_set_new(json, "iterations", json_integer((json_int_t)bench.n));
		if (o.duration > 0)
			json_object_set_new(json, "duration_s", json_real(o.duration));
		json_object_set_new(json, "elapsed_s", json_real(bench.elapsed));
		json_object_set_new(json, "latency_us",
				    bench.n ? json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "min", st->min * 1e6,
							"mean", st->mean * 1e6, "median", st->median * 1e6,
							"p90", st->p90 * 1e6, "p95", st->p95 * 1e6,
							"p99", st->p99 * 1e6, "max", st->max * 1e6)
					    : json_null());
		json_object_set_new(json, "latency_p50_us", json_real(st->median * 1e6));
		json_object_set_new(json, "latency_p99_us", json_real(st->p99 * 1e6));
		json_object_set_new(json, "requests_per_s_1", json_real(bench.rps1));
		json_object_set_new(json, "requests_per_s_inflight", json_real(bench.rpsn));
		json_object_set_new(json, "samples_per_request", json_integer((json_int_t)samples));
		json_object_set_new(json, "samples_per_s_1", json_real(bench.rps1 * (double)samples));
		json_object_set_new(json, "samples_per_s_inflight", json_real(bench.rpsn * (double)samples));
		json_object_set_new(json, "inflight", json_integer(o.inflight));
		{
			json_t *jd = json_array();

			for (i = 0; jd && i < (int)ipurt_runner_num_devices(r); i++) {
				struct ipu_device_info info;
				uint64_t runs = 0;
				char why[256];
				int in = ipurt_runner_device_status(r, (uint32_t)i, &runs, why, sizeof(why));

				memset(&info, 0, sizeof(info));
				ipu_info(ipurt_runner_device_at(r, (uint32_t)i), &info);
				json_array_append_new(jd, json_pack("{s:s,s:I,s:b,s:s?}", "device", info.path,
								    "runs", (json_int_t)runs, "in_rotation", in == 1,
								    "taken_out", in == 1 ? NULL : why));
			}
			json_object_set_new(json, "devices", jd ? jd : json_null());
		}
		json_object_set_new(json, "host_time_per_request_us",
				    bench.have_split ?
				    json_pack("{s:f,s:f,s:f,s:f}", "input_copy", bench.input_copy * 1e6,
					      "device_run", bench.device_run * 1e6,
					      "output_copy", bench.output_copy * 1e6,
					      "runtime", (st->mean - bench.input_copy - bench.device_run -
							  bench.output_copy) * 1e6)
				    : json_null());
		if (o.export_times)
			json_object_set_new(json, "export_times", json_string(o.export_times));
		if (o.profile)
			json_object_set_new(json, "profile", json_string(o.profile));
		if (mod.valid) {
			json_object_set_new(json, "modelled_cycles_per_request", json_integer((json_int_t)mod.total));
			json_object_set_new(json, "modelled_us_per_request", json_real(mod.total / (mod.ghz * 1e3)));
			json_object_set_new(json, "modelled_clock_ghz", json_real(mod.ghz));
			json_object_set_new(json, "modelled_requests_per_s",
					    json_real(mod.total ? mod.ghz * 1e9 / (double)mod.total : 0.0));
			json_object_set_new(json, "modelled_breakdown_cycles",
					    json_pack("{s:I,s:I,s:I,s:I}", "compute", (json_int_t)mod.compute,
						      "exchange", (json_int_t)mod.exchange, "sync", (json_int_t)mod.sync,
						      "stream_io", (json_int_t)mod.stream));
		}
		/* ensure_ascii: any byte of a name survives as \\uXXXX, never raw */
		if (json_dumpf(json, stdout, JSON_COMPACT | JSON_ENSURE_ASCII) || putchar('\n') == EOF) {
			fprintf(stderr, "ipu-run: cannot write the JSON report\n");
			goto out;
		}
	} else {
		if (mod.valid)
			printf("modelled device time %llu cycles = %.2f us per request at %.2f GHz (compute %llu, exchange %llu, sync %llu, stream I/O %llu cycles); modelled throughput %.0f req/s\n",
			       (unsigned long long)mod.total, mod.total / (mod.ghz * 1e3), mod.ghz,
			       (unsigned long long)mod.compute, (unsigned long long)mod.exchange,
			       (unsigned long long)mod.sync, (unsigned long long)mod.stream,
			       mod.total ? mod.ghz * 1e9 / (double)mod.total : 0.0);
		printf("first request %.2f ms (cold: includes the device's first run)\n", first_ms);
		if (bench.n) {
			const struct lat_stats *st = &bench.st;
			char b[7][32], e[32];

			printf("latency over %zu requests in %s (1 in flight, after %u warm-up): min %s, mean %s, median %s, p90 %s, p95 %s, p99 %s, max %s\n",
			       bench.n, fmt_seconds(bench.elapsed, e, sizeof(e)), o.warmup,
			       fmt_seconds(st->min, b[0], 32), fmt_seconds(st->mean, b[1], 32),
			       fmt_seconds(st->median, b[2], 32), fmt_seconds(st->p90, b[3], 32),
			       fmt_seconds(st->p95, b[4], 32), fmt_seconds(st->p99, b[5], 32),
			       fmt_seconds(st->max, b[6], 32));
			printf("throughput %.0f req/s = %.0f samples/s (1 in flight)", bench.rps1,
			       bench.rps1 * (double)samples);
			if (o.inflight > 1)
				printf(", %.0f req/s = %.0f samples/s (%u in flight)", bench.rpsn,
				       bench.rpsn * (double)samples, o.inflight);
			printf("; %llu sample%s per request\n", (unsigned long long)samples,
			       samples == 1 ? "" : "s");
			if (bench.have_split)
				printf("host time per request: input copy %s, device run %s, output copy %s, runtime %s (mean of the latency run)\n",
				       fmt_seconds(bench.input_copy, b[0], 32),
				       fmt_seconds(bench.device_run, b[1], 32),
				       fmt_seconds(bench.output_copy, b[2], 32),
				       fmt_seconds(st->mean - bench.input_copy - bench.device_run -
						   bench.output_copy, b[3], 32));
		}
		if (ipurt_runner_num_devices(r) > 1) {
			printf("device runs:");
			for (i = 0; i < (int)ipurt_runner_num_devices(r); i++) {
				struct ipu_device_info info;
				uint64_t runs = 0;
				char why[256], sw[512], sn[128];
				int in = ipurt_runner_device_status(r, (uint32_t)i, &runs, why,
								    sizeof(why));

				memset(&info, 0, sizeof(info));
				ipu_info(ipurt_runner_device_at(r, (uint32_t)i), &info);
				printf("%s %s %llu", i ? "," : "", cli_safe(info.path, sn, sizeof(sn)),
				       (unsigned long long)runs);
				if (in != 1)
					printf(" (taken out: %s)", cli_safe(why, sw, sizeof(sw)));
			}
			printf("\n");
		}
		if (o.profile) {
			char sp[512];

			printf("profile written to %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
			       cli_safe(o.profile, sp, sizeof(sp)));
		}
	}
	rc = 0;
out:
	json_decref(json);
	bench_result_free(&bench);
	if (trace_steps)
		step_sums_detach(&sums, ipurt_runner_device(r));
	for (i = 0; i < 2 * MAX_IO; i++)
		ipurt_npy_free(&arrays[i]);
	ipurt_runner_destroy(r);
	ipuef_close(file);
	run_trace_destroy(trace);
	return rc;
}
