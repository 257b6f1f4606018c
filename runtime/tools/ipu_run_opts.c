// SPDX-License-Identifier: MIT
/*
 * ipu_run_opts.c - ipu-run's command line (ipu_run_opts.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ipu_run_opts.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ipu-run MODEL.ipuef [options]\n"
		"Run a compiled model on an IPU device and report its outputs, its speed on\n"
		"the host and the modelled device time per request (cycles and us at the\n"
		"target's clock: 1.33 GHz ipu2, 1.85 GHz ipu21).\n"
		"\n"
		"  --device DEV          libipu device: model[:tiles=N,tile_mem=SIZE,workers=N]\n"
		"                        (SIZE: bytes, or with k/KiB, M/MiB) or /dev/accel/accelN\n"
		"                        (default: the in-process model device); several\n"
		"                        separated by ',' (/dev/accel/accel0,/dev/accel/accel1 or model,model):\n"
		"                        the model is loaded on each and requests are spread\n"
		"                        over them (a device that fails is taken out, its\n"
		"                        requests move to the others); separated by ';': the\n"
		"                        first of them that is free.  A model split over N\n"
		"                        IPUs runs on N in-process devices of one model spec,\n"
		"                        or on N kernel devices of one ipu-link listed with\n"
		"                        ',' (IPU k the k-th), attached as one device group\n"
		"  --custom-ops LIB.so   a custom-operator plugin the model was compiled\n"
		"                        with (repeatable): the in-process devices load it\n"
		"                        (a VM's /dev/accel/accelN uses its QEMU's custom-ops=)\n"
		"  --input NAME=FILE     read input NAME from a .npy file, or from an ONNX\n"
		"                        TensorProto file if FILE ends in .pb (repeatable);\n"
		"                        inputs not given are generated (seeded random) and\n"
		"                        said so; another element type is converted, with a\n"
		"                        note, when no value changes (f16 to f32, integers\n"
		"                        that fit) or for f32 into an f16 input (rounded to\n"
		"                        nearest); a .pb's float64 is rounded to f32\n"
		"  --output NAME=FILE    write output NAME to a .npy file, or a TensorProto\n"
		"                        file if FILE ends in .pb (repeatable); other\n"
		"                        outputs are summarised; an output with a\n"
		"                        NAME:count output is cut to that many rows\n"
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
		"                        time, and each request's life (a model split over\n"
		"                        IPUs: a track per IPU and per link on the group's\n"
		"                        modelled clock); keep --iterations small, every\n"
		"                        step of every request is recorded\n"
		"  --generate            generate tokens with a decoder compiled with its\n"
		"                        key/value cache as state: the prompt T tokens a run\n"
		"                        of its prefill program (ipu-compile --prefill-model)\n"
		"                        where it fits the cache, else one token per step,\n"
		"                        then each new token fed back; prints the new token\n"
		"                        ids, tokens/s and stream bytes per step\n"
		"  --prompt-ids A,B,...  the prompt's token ids (with --generate)\n"
		"  --max-new-tokens N    new tokens at most (1..1000000, default 16)\n"
		"  --stop-ids A,B,...    stop after any of these tokens\n"
		"  --temperature T       sample from softmax(logits / T) (0..100, default 0:\n"
		"                        greedy, the device's choice); seeded by --seed\n"
		"  --top-k K             sample among the K most likely tokens (0: all)\n"
		"  --top-p P             then among the fewest whose probabilities add up\n"
		"                        to P (0..1, default 1: all); on the device when\n"
		"                        the model has a sampling program and K is 1..64\n"
		"                        (any K for a vocabulary of 64 or fewer), else on\n"
		"                        the host from the logits: the same tokens\n"
		"  --host-sampling       sample on the host even when the device could\n"
		"  --help, --version     this text; the version\n"
		"\n"
		"MODEL may be '-' or a pipe: it is read once.  Names from the model are\n"
		"printed with control characters escaped (\\xNN).\n"
		"Exit status: 0 done, 1 failed (model, inputs, device), 2 bad command line.\n");
}

/* "1,2,3" -> ids; -1 with a message. */
/* --custom-ops: one more plugin path. */
static int add_custom_ops(struct run_opts *o, const char *path)
{
	size_t have = strlen(o->custom_ops);

	if (!*path || strchr(path, ':') || have + strlen(path) + 2 > sizeof(o->custom_ops)) {
		fprintf(stderr, "ipu-run: --custom-ops '%s': one path without ':' (repeat the option), %zu bytes in all at most\n",
			path, sizeof(o->custom_ops) - 1);
		return -1;
	}
	snprintf(o->custom_ops + have, sizeof(o->custom_ops) - have, "%s%s", have ? ":" : "", path);
	return 0;
}

static int parse_ids(const char *arg, const char *what, int64_t *ids, uint32_t *n)
{
	const char *p = arg;

	*n = 0;
	while (*p) {
		char *end;
		long long v = strtoll(p, &end, 10);

		if (end == p || (*end && *end != ',') || v < 0) {
			fprintf(stderr, "ipu-run: --%s takes token ids (integers >= 0) separated by ',', got '%s'\n",
				what, arg);
			return -1;
		}
		if (*n >= RUN_MAX_IDS) {
			fprintf(stderr, "ipu-run: --%s: more than %d ids\n", what, RUN_MAX_IDS);
			return -1;
		}
		ids[(*n)++] = v;
		p = *end ? end + 1 : end;
	}
	if (!*n) {
		fprintf(stderr, "ipu-run: --%s: no token id\n", what);
		return -1;
	}
	return 0;
}

static int parse_named(char *arg, struct run_named *n, int *count, const char *what)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		fprintf(stderr, "ipu-run: --%s takes NAME=FILE.npy, got '%s'\n", what, arg);
		return -1;
	}
	if (*count >= RUN_MAX_IO) {
		fprintf(stderr, "ipu-run: more than %d --%s options\n", RUN_MAX_IO, what);
		return -1;
	}
	*eq = 0;
	n[*count].name = arg;
	n[*count].path = eq + 1;
	(*count)++;
	return 0;
}

int run_opts_parse(int argc, char **argv, struct run_opts *o)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "custom-ops", required_argument, NULL, 'C' },
		{ "custom_ops", required_argument, NULL, 'C' },
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
		{ "generate", no_argument, NULL, 'G' },
		{ "prompt-ids", required_argument, NULL, 'p' },
		{ "stop-ids", required_argument, NULL, 'S' },
		{ "max-new-tokens", required_argument, NULL, 'M' },
		{ "temperature", required_argument, NULL, 'T' },
		{ "top-k", required_argument, NULL, 'K' },
		{ "top-p", required_argument, NULL, 'Q' },
		{ "host-sampling", no_argument, NULL, 0x100 },
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
	o->max_new_tokens = 16;
	o->top_p = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:i:o:n:b:s:jh", lo, &li)) != -1) {
		switch (c) {
		case 'd': o->device = optarg; break;
		case 'C':
			if (add_custom_ops(o, optarg))
				return -1;
			break;
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
		case 'G': o->generate = 1; break;
		case 'p': if (parse_ids(optarg, "prompt-ids", o->prompt, &o->nprompt)) return -1; break;
		case 'S': if (parse_ids(optarg, "stop-ids", o->stop, &o->nstop)) return -1; break;
		case 'M':
			if (cli_parse_u64("ipu-run", "max-new-tokens", optarg, 1, 1000000, &v))
				return -1;
			o->max_new_tokens = (uint32_t)v;
			break;
		case 0x100:
			o->host_sampling = 1;
			break;
		case 'K':
			if (cli_parse_u64("ipu-run", "top-k", optarg, 0, UINT32_MAX, &v))
				return -1;
			o->top_k = (uint32_t)v;
			break;
		case 'T':
		case 'Q': {
			char *end;
			double x = strtod(optarg, &end), hi = c == 'T' ? 100 : 1;

			if (end == optarg || *end || !(x >= 0 && x <= hi)) {
				fprintf(stderr, "ipu-run: --%s takes a number from 0 to %g, got '%s'\n",
					c == 'T' ? "temperature" : "top-p", hi, optarg);
				return -1;
			}
			*(c == 'T' ? &o->temperature : &o->top_p) = x;
			break;
		}
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
	if (o->generate != (o->nprompt > 0)) {
		fprintf(stderr, o->generate ? "ipu-run: --generate needs --prompt-ids\n"
					    : "ipu-run: --prompt-ids is for --generate\n");
		return -1;
	}
	/* a duration alone: as many requests as fit, at least one */
	if (iterations_given == 2)
		o->iterations = 1;
	return 0;
}

int run_opts_check_outputs(const struct run_opts *o)
{
	const char *inputs[RUN_MAX_IO + 1];
	unsigned k = 0;
	int i;

	inputs[k++] = o->model;
	for (i = 0; i < o->nin; i++)
		inputs[k++] = o->in[i].path;
	for (i = 0; i < o->nout; i++)
		if (cli_check_output(stderr, "ipu-run", o->out[i].path, inputs, k))
			return -1;
	if (o->profile && cli_check_output(stderr, "ipu-run", o->profile, inputs, k))
		return -1;
	if (o->export_times && cli_check_output(stderr, "ipu-run", o->export_times, inputs, k))
		return -1;
	return 0;
}
