// SPDX-License-Identifier: MIT
/*
 * ipu-serve - a model server speaking the KServe v2 / Triton inference
 * protocol over HTTP and gRPC on the Model Runtime: options, start-up, and
 * the SIGTERM drain (stop accepting, answer what is in flight, exit 0).
 */
#include <getopt.h>
#include <malloc.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "grpc_server.h"
#include "http.h"
#include "repo_poll.h"
#include "serve.h"
#include "shm.h"

#define MAX_LOAD 256

struct opts {
	const char *repo, *device, *addr;
	uint64_t http_port, metrics_port, log_verbose, max_body, max_queue, exec_timeout_ms;
	uint64_t conn_timeout_s, drain_timeout_s, max_conns, max_per_client, request_timeout_s;
	uint64_t max_json_memory, drain_grace_ms, max_body_memory;
	int64_t grpc_port;		/* -1: no gRPC endpoint */
	int explicit_control, poll_control;
	uint64_t poll_secs;
	int shm_off;
	const char *load[MAX_LOAD];
	unsigned nload;
	char custom_ops[4096];		/* --custom-ops, ':'-joined */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ipu-serve --model-repository DIR [options]\n"
		"Serve the .ipuef models of a repository with the KServe v2 / Triton inference\n"
		"protocol over HTTP (JSON and binary tensors, model repository extension,\n"
		"generate extension for decoders: token ids, streamed as server-sent events,\n"
		"continuous batching over the decoder's cache slots,\n"
		"statistics extension: GET /v2/models[/M[/versions/V]]/stats) and, with\n"
		"--grpc-port, over gRPC (GRPCInferenceService: health, metadata, ModelInfer\n"
		"with typed or raw tensors, ModelConfig, ModelStatistics), with dynamic\n"
		"batching, packing of variable-length sequences along the sequence axis\n"
		"(config.yaml packing:) and Prometheus metrics (Triton's nv_inference_*\n"
		"names and ours,\n"
		"ipu_inference_*).  Layout: DIR/MODEL/VERSION/model.ipuef (or model.onnx,\n"
		"compiled in memory when it loads), optional DIR/MODEL/config.pbtxt (Triton's\n"
		"model configuration, as Triton and its Poplar backend read it) or\n"
		"DIR/MODEL/config.yaml (the same fields in YAML).\n"
		"\n"
		"  --model-repository DIR   the repository (required)\n"
		"  --http-port N            API port (default 8000; 0: any free port, logged)\n"
		"  --metrics-port N         Prometheus /metrics port (default 8002; 0: any)\n"
		"  --grpc-port N            also serve KServe v2 gRPC on N (Triton's is 8001;\n"
		"                           0: any free port, logged; default: no gRPC)\n"
		"  --http-address ADDR      IPv4 address to listen on, HTTP and gRPC (default\n"
		"                           0.0.0.0)\n"
		"  --device DEV             libipu device(s) for every instance: model[:tiles=N,...],\n"
		"                           /dev/accel/accelN, or a list separated by ';' (default: an\n"
		"                           in-process device sized to each model per instance)\n"
		"  --custom-ops LIB.so      a custom-operator plugin the models were compiled with\n"
		"                           (repeatable): every in-process device loads it\n"
		"                           (native code run in this server's process)\n"
		"  --model-control-mode M   none (default): load every model at start, refuse\n"
		"                           load/unload; explicit: load the --load-model ones and\n"
		"                           allow POST /v2/repository/models/M/load and unload;\n"
		"                           poll: load every model at start, then load, reload\n"
		"                           and unload the model folders added, changed or\n"
		"                           removed (requests in flight finish on the old version)\n"
		"  --repository-poll-secs S with poll: look every S seconds (1..86400, default 15)\n"
		"  --load-model NAME        with explicit control, load NAME at start (repeatable;\n"
		"                           '*' loads every model)\n"
		"  --max-body-size BYTES    largest request body or gRPC message (default\n"
		"                           67108864); larger: 413, gRPC RESOURCE_EXHAUSTED\n"
		"  --max-body-memory BYTES  memory all request bodies being received or answered\n"
		"                           may hold together (at least --max-body-size; default\n"
		"                           1073741824 or --max-body-size if larger); a body that\n"
		"                           finds it full: 503\n"
		"  --max-queue-size N       queued requests per model version when its config\n"
		"                           sets none (1..1048576, default 1024); full: 503.\n"
		"                           Generations wait there for a free cache slot: each\n"
		"                           instance steps its decoder's slots together and a\n"
		"                           queued generation joins at the next step\n"
		"                           (Documentation/serve/generation.md)\n"
		"  --exec-timeout-ms T      fail an execution not done after T ms (default 60000,\n"
		"                           0: never)\n"
		"  --max-json-memory BYTES  memory the JSON bodies being parsed may hold together\n"
		"                           (default 268435456); a body that alone parses into\n"
		"                           more: 413, while others hold it: 503\n"
		"  --connection-timeout S   close a connection idle or stalled for S seconds\n"
		"                           (default 30)\n"
		"  --request-timeout S      close a connection whose request (headers and body)\n"
		"                           has not fully arrived S seconds after the connection\n"
		"                           opened or its previous answer, however slowly it\n"
		"                           trickles in (default 60, 0: never); a gRPC call's\n"
		"                           request message must arrive within it too\n"
		"  --max-connections N      concurrent API connections, and gRPC calls in flight\n"
		"                           (1..10000, default 1000; one call more:\n"
		"                           RESOURCE_EXHAUSTED)\n"
		"  --max-connections-per-client N  of them from one client address (default half\n"
		"                           of --max-connections); one more is closed at once\n"
		"  --drain-timeout S        on SIGTERM, wait up to S seconds for requests in\n"
		"                           flight (default 30)\n"
		"  --drain-grace-ms MS      on SIGTERM, keep open connections until none has sent\n"
		"                           a request for MS ms, answering what arrives (infer:\n"
		"                           503) (default 1000)\n"
		"  --system-shared-memory on|off  Triton's system shared-memory extension\n"
		"                           (default on): any client of the API port may have\n"
		"                           the server open, read and write any POSIX shared-\n"
		"                           memory object this user can open; off refuses it\n"
		"                           (Documentation/serve/shared-memory.md)\n"
		"  --log-verbose N          0 quiet, 1 loads and errors, 2 every batch (default 0)\n"
		"  --help, --version        this text; the version\n"
		"\n"
		"SIGTERM or SIGINT: stop accepting connections, answer the requests in flight\n"
		"and those arriving on open connections during the grace period, exit.\n"
		"Exit status: 0 stopped cleanly, 1 failed (repository, model, port, or\n"
		"requests still in flight after the drain timeout), 2 bad command line.\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "model-repository", required_argument, NULL, 'r' },
		{ "http-port", required_argument, NULL, 'p' },
		{ "metrics-port", required_argument, NULL, 'm' },
		{ "http-address", required_argument, NULL, 'a' },
		{ "grpc-port", required_argument, NULL, 'g' },
		{ "device", required_argument, NULL, 'd' },
		{ "model-control-mode", required_argument, NULL, 'c' },
		{ "load-model", required_argument, NULL, 'l' },
		{ "repository-poll-secs", required_argument, NULL, 'o' },
		{ "custom-ops", required_argument, NULL, 'O' },
		{ "max-body-size", required_argument, NULL, 'b' },
		{ "max-queue-size", required_argument, NULL, 'q' },
		{ "exec-timeout-ms", required_argument, NULL, 't' },
		{ "connection-timeout", required_argument, NULL, 'T' },
		{ "drain-timeout", required_argument, NULL, 'D' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "max-connections-per-client", required_argument, NULL, 'P' },
		{ "request-timeout", required_argument, NULL, 'R' },
		{ "max-json-memory", required_argument, NULL, 'J' },
		{ "max-body-memory", required_argument, NULL, 'M' },
		{ "drain-grace-ms", required_argument, NULL, 'G' },
		{ "log-verbose", required_argument, NULL, 'v' },
		{ "system-shared-memory", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, li;

	memset(o, 0, sizeof(*o));
	o->addr = "0.0.0.0";
	o->http_port = 8000;
	o->metrics_port = 8002;
	o->max_body = 64ull << 20;
	o->max_queue = 1024;
	o->exec_timeout_ms = 60000;
	o->conn_timeout_s = 30;
	o->drain_timeout_s = 30;
	o->max_conns = 1000;
	o->request_timeout_s = 60;
	o->max_json_memory = 256ull << 20;
	o->drain_grace_ms = 1000;
	o->poll_secs = 15;
	o->grpc_port = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, &li)) != -1) {
		switch (c) {
		case 'r': o->repo = optarg; break;
		case 'a': o->addr = optarg; break;
		case 'd': o->device = optarg; break;
		case 'O': {
			size_t have = strlen(o->custom_ops);

			if (!*optarg || strchr(optarg, ':') ||
			    have + strlen(optarg) + 2 > sizeof(o->custom_ops)) {
				fprintf(stderr, "ipu-serve: --custom-ops '%s': one path without ':' (repeat the option)\n",
					optarg);
				return -1;
			}
			snprintf(o->custom_ops + have, sizeof(o->custom_ops) - have, "%s%s",
				 have ? ":" : "", optarg);
			break;
		}
		case 'p':
			if (cli_parse_u64("ipu-serve", "http-port", optarg, 0, 65535, &o->http_port))
				return -1;
			break;
		case 'g': {
			uint64_t v;

			if (cli_parse_u64("ipu-serve", "grpc-port", optarg, 0, 65535, &v))
				return -1;
			o->grpc_port = (int64_t)v;
			break;
		}
		case 'm':
			if (cli_parse_u64("ipu-serve", "metrics-port", optarg, 0, 65535, &o->metrics_port))
				return -1;
			break;
		case 'c':
			o->explicit_control = !strcmp(optarg, "explicit");
			o->poll_control = !strcmp(optarg, "poll");
			if (!o->explicit_control && !o->poll_control && strcmp(optarg, "none")) {
				fprintf(stderr, "ipu-serve: --model-control-mode is none, explicit or poll, got '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'o':
			if (cli_parse_u64("ipu-serve", "repository-poll-secs", optarg, 1, 86400, &o->poll_secs))
				return -1;
			break;
		case 'l':
			if (o->nload == MAX_LOAD) {
				fprintf(stderr, "ipu-serve: more than %d --load-model options\n", MAX_LOAD);
				return -1;
			}
			o->load[o->nload++] = optarg;
			break;
		case 'b':
			if (cli_parse_u64("ipu-serve", "max-body-size", optarg, 1024, 1ull << 34, &o->max_body))
				return -1;
			break;
		case 'q':
			if (cli_parse_u64("ipu-serve", "max-queue-size", optarg, 1, 1u << 20, &o->max_queue))
				return -1;
			break;
		case 't':
			if (cli_parse_u64("ipu-serve", "exec-timeout-ms", optarg, 0, 86400000, &o->exec_timeout_ms))
				return -1;
			break;
		case 'T':
			if (cli_parse_u64("ipu-serve", "connection-timeout", optarg, 1, 86400, &o->conn_timeout_s))
				return -1;
			break;
		case 'C':
			if (cli_parse_u64("ipu-serve", "max-connections", optarg, 1, 10000, &o->max_conns))
				return -1;
			break;
		case 'P':
			if (cli_parse_u64("ipu-serve", "max-connections-per-client", optarg, 1, 10000,
					  &o->max_per_client))
				return -1;
			break;
		case 'R':
			if (cli_parse_u64("ipu-serve", "request-timeout", optarg, 0, 86400, &o->request_timeout_s))
				return -1;
			break;
		case 'J':
			if (cli_parse_u64("ipu-serve", "max-json-memory", optarg, 1ull << 20, 1ull << 40,
					  &o->max_json_memory))
				return -1;
			break;
		case 'M':
			if (cli_parse_u64("ipu-serve", "max-body-memory", optarg, 1024, 1ull << 40,
					  &o->max_body_memory))
				return -1;
			break;
		case 'G':
			if (cli_parse_u64("ipu-serve", "drain-grace-ms", optarg, 0, 600000, &o->drain_grace_ms))
				return -1;
			break;
		case 'D':
			if (cli_parse_u64("ipu-serve", "drain-timeout", optarg, 0, 86400, &o->drain_timeout_s))
				return -1;
			break;
		case 'v':
			if (cli_parse_u64("ipu-serve", "log-verbose", optarg, 0, 3, &o->log_verbose))
				return -1;
			break;
		case 'S':
			if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
				fprintf(stderr, "ipu-serve: --system-shared-memory is on or off, got '%s'\n",
					optarg);
				return -1;
			}
			o->shm_off = !strcmp(optarg, "off");
			break;
		case 'h': usage(stdout); exit(CLI_EXIT_OK);
		case 'V': cli_print_version("ipu-serve"); exit(CLI_EXIT_OK);
		case ':':
			fprintf(stderr, "ipu-serve: option %s needs a value (see --help)\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "ipu-serve: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ipu-serve: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
	}
	if (!o->repo) {
		fprintf(stderr, "ipu-serve: which models? (--model-repository DIR; see --help)\n");
		return -1;
	}
	/* by default room for 1 GiB of bodies, or one of the largest */
	if (!o->max_body_memory)
		o->max_body_memory = o->max_body > (1ull << 30) ? o->max_body : 1ull << 30;
	if (o->max_body_memory < o->max_body) {
		fprintf(stderr, "ipu-serve: --max-body-memory %llu is less than --max-body-size %llu: "
			"a body of the largest size could never be received\n",
			(unsigned long long)o->max_body_memory, (unsigned long long)o->max_body);
		return -1;
	}
	if (!o->max_per_client)
		o->max_per_client = o->max_conns > 1 ? o->max_conns / 2 : 1;
	if (o->nload && !o->explicit_control) {
		fprintf(stderr, "ipu-serve: --load-model needs --model-control-mode=explicit\n");
		return -1;
	}
	return 0;
}

static int load_models(const struct opts *o, struct srv_repo *repo)
{
	char err[SRV_ERR], se[SRV_ERR + 64];
	unsigned i;

	if (!o->explicit_control) {
		if (srv_repo_load_all(repo, err, sizeof(err))) {
			fprintf(stderr, "ipu-serve: %s\n", cli_safe(err, se, sizeof(se)));
			return -1;
		}
		return 0;
	}
	for (i = 0; i < o->nload; i++) {
		int rc = !strcmp(o->load[i], "*") ? srv_repo_load_all(repo, err, sizeof(err))
						  : srv_repo_load(repo, o->load[i], err, sizeof(err));

		if (rc) {
			fprintf(stderr, "ipu-serve: %s\n", cli_safe(err, se, sizeof(se)));
			return -1;
		}
	}
	return 0;
}

/*
 * Stop accepting, let the requests in flight finish, and keep the open
 * connections while requests keep arriving on them (each answered, with
 * Connection: close), so that no request a client sent before the end is
 * left without an answer; bounded by the drain timeout.
 */
static int drain(struct srv_http *h, struct MHD_Daemon *api, uint64_t timeout_s, uint64_t grace_ms)
{
	uint64_t t0 = srv_ms_now(), deadline = t0 + timeout_s * 1000u;
	unsigned handed;

	atomic_store(&h->draining, 1);
	handed = srv_http_quiesce(api);
	for (;;) {
		struct timespec ts = { 0, 5000000 };
		uint64_t last, now = srv_ms_now();
		unsigned open;

		srv_conns_state(&h->conns, &open, &last);
		if (last < t0)
			last = t0;
		/* connections taken from the backlog count as open only once their thread runs */
		if (atomic_load(&h->inflight) == 0 && ((!open && !handed) || now - last >= grace_ms))
			return 0;
		if (now > deadline) {
			if (!atomic_load(&h->inflight))
				return 0;
			fprintf(stderr, "ipu-serve: %d requests still in flight after %llu s, stopping anyway\n",
				atomic_load(&h->inflight), (unsigned long long)timeout_s);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	struct srv_load_opts lo = { 0 };
	struct srv_repo *repo = NULL;
	struct srv_poll *watch = NULL;
	struct ipurt_device_manager *dm = NULL;
	struct MHD_Daemon *api = NULL, *metrics = NULL;
	struct srv_http *h;
	struct srv_http_limits limits;
	struct srv_grpc *grpc = NULL;
	uint64_t t_drain;
	int grpc_port = 0;
	char err[SRV_ERR], se[SRV_ERR + 64], *spec = NULL;
	int api_port = 0, metrics_port = 0, sig = 0, rc = CLI_EXIT_FAILURE;
	sigset_t set;

	if (parse_args(argc, argv, &o))
		return CLI_EXIT_USAGE;
	/* before any thread: jansson's allocator is per process */
	srv_json_budget_install();
	/*
	 * A fixed threshold: glibc would otherwise raise it to the size of the
	 * last large body freed (up to 32 MiB), keeping later bodies in arenas
	 * that are not given back to the system.
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	/* every thread started from here on inherits the mask: main takes the signals */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	h = calloc(1, sizeof(*h));
	if (!h) {
		fprintf(stderr, "ipu-serve: out of memory\n");
		return CLI_EXIT_FAILURE;
	}
	h->json.limit = (size_t)o.max_json_memory;
	if (srv_conns_init(&h->conns, o.request_timeout_s * 1000u, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: %s\n", err);
		free(h);
		return CLI_EXIT_FAILURE;
	}
	if (o.device && o.custom_ops[0] &&
	    ipurt_custom_ops_spec(o.device, NULL, o.custom_ops, &spec, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: --custom-ops: %s\n", cli_safe(err, se, sizeof(se)));
		goto out;
	}
	if (o.device && ipurt_dm_create(spec ? spec : o.device, &dm, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: --device: %s\n", cli_safe(err, se, sizeof(se)));
		goto out;
	}
	lo.device = spec ? spec : o.device;
	lo.custom_ops = o.custom_ops[0] ? o.custom_ops : NULL;
	lo.dm = dm;
	lo.exec_timeout_ns = o.exec_timeout_ms * 1000000ull;
	lo.default_max_queue = o.max_queue;
	lo.log_verbose = (int)o.log_verbose;
	if (srv_repo_create(o.repo, &lo, &repo, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: %s\n", cli_safe(err, se, sizeof(se)));
		goto out;
	}
	/* the repository as it is before the first load: later changes are polled */
	if (o.poll_control && srv_poll_create(repo, o.repo, (int)o.log_verbose, &watch, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: %s\n", err);
		goto out;
	}
	if (load_models(&o, repo))
		goto out;
	h->repo = repo;
	if (!o.shm_off && !(h->shm = srv_shm_create(SRV_SHM_MAX_REGIONS))) {
		fprintf(stderr, "ipu-serve: out of memory\n");
		goto out;
	}
	h->max_body = (size_t)o.max_body;
	h->max_body_memory = (size_t)o.max_body_memory;
	h->explicit_control = o.explicit_control;
	h->log_verbose = (int)o.log_verbose;
	limits.connection_timeout_s = (unsigned)o.conn_timeout_s;
	limits.max_connections = (unsigned)o.max_conns;
	limits.max_per_client = (unsigned)o.max_per_client;
	if (srv_http_start(h, o.addr, (int)o.http_port, (int)o.metrics_port, &limits, &api, &metrics,
			   &api_port, &metrics_port, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: %s\n", err);
		goto out;
	}
	if (o.grpc_port >= 0) {
		struct srv_grpc_limits gl = {
			.max_message = (size_t)o.max_body,
			.max_calls = (unsigned)o.max_conns,
			.request_timeout_ms = o.request_timeout_s * 1000u,
		};

		if (srv_grpc_start(h, o.addr, (int)o.grpc_port, &gl, &grpc, &grpc_port, err, sizeof(err))) {
			fprintf(stderr, "ipu-serve: %s\n", err);
			goto out;
		}
		fprintf(stderr, "ipu-serve: Started GRPCInferenceService at %s:%d\n", o.addr, grpc_port);
	}
	fprintf(stderr, "ipu-serve: Started HTTPService at %s:%d\n", o.addr, api_port);
	fprintf(stderr, "ipu-serve: Started Metrics Service at %s:%d\n", o.addr, metrics_port);
	if (watch && srv_poll_start(watch, (unsigned)o.poll_secs, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: %s\n", err);
		goto out;
	}
	while (sigwait(&set, &sig) || (sig != SIGTERM && sig != SIGINT))
		;
	fprintf(stderr, "ipu-serve: %s: draining %d requests in flight\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT", atomic_load(&h->inflight));
	t_drain = srv_ms_now();
	rc = drain(h, api, o.drain_timeout_s, o.drain_grace_ms) ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
	if (grpc) {
		/* calls that came during the HTTP drain were refused (UNAVAILABLE); the rest finish */
		uint64_t spent = srv_ms_now() - t_drain, left = o.drain_timeout_s * 1000u;
		unsigned cut = srv_grpc_stop(grpc, left > spent ? left - spent : 0);

		grpc = NULL;
		if (cut) {
			fprintf(stderr, "ipu-serve: %u gRPC calls still in flight after the drain timeout, "
				"cancelled\n", cut);
			rc = CLI_EXIT_FAILURE;
		}
	}
	fprintf(stderr, "ipu-serve: stopped (%lu answered 2xx, %lu 4xx, %lu 5xx; %lu connections cut "
		"by --request-timeout, %lu malformed Content-Length; JSON parses held at most %zu bytes)\n",
		atomic_load(&h->answered[2]), atomic_load(&h->answered[4]), atomic_load(&h->answered[5]),
		atomic_load(&h->conns.cut_total), atomic_load(&h->conns.framing_refused),
		atomic_load(&h->json.peak));
out:
	srv_grpc_stop(grpc, 0);
	if (api)
		MHD_stop_daemon(api);
	if (metrics)
		MHD_stop_daemon(metrics);
	srv_conns_fini(&h->conns);
	/* the daemons are stopped: no request holds a region any more */
	srv_shm_destroy(h->shm);
	srv_poll_destroy(watch);
	srv_repo_destroy(repo);
	ipurt_dm_destroy(dm);
	free(spec);
	free(h);
	return rc;
}
