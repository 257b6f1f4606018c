// SPDX-License-Identifier: MIT
/*
 * ipu-serve - a model server speaking the KServe v2 / Triton HTTP
 * inference protocol over the Model Runtime: options, start-up, and the
 * SIGTERM drain (stop accepting, answer what is in flight, exit 0).
 */
#include <getopt.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"
#include "serve.h"

#define MAX_LOAD 256

struct opts {
	const char *repo, *device, *addr;
	uint64_t http_port, metrics_port, log_verbose, max_body, max_queue, exec_timeout_ms;
	uint64_t conn_timeout_s, drain_timeout_s, max_conns;
	int explicit_control;
	const char *load[MAX_LOAD];
	unsigned nload;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ipu-serve --model-repository DIR [options]\n"
		"Serve the .ipuef models of a repository over HTTP with the KServe v2 / Triton\n"
		"inference protocol (JSON and binary tensors, model repository extension),\n"
		"with dynamic batching and Prometheus metrics.  Layout: DIR/MODEL/VERSION/\n"
		"model.ipuef, optional DIR/MODEL/config.yaml (Triton's field names).\n"
		"\n"
		"  --model-repository DIR   the repository (required)\n"
		"  --http-port N            API port (default 8000; 0: any free port, logged)\n"
		"  --metrics-port N         Prometheus /metrics port (default 8002; 0: any)\n"
		"  --http-address ADDR      IPv4 address to listen on (default 0.0.0.0)\n"
		"  --device DEV             libipu device(s) for every instance: model[:tiles=N,...],\n"
		"                           /dev/ipuN, or a list separated by ';' (default: an\n"
		"                           in-process device sized to each model per instance)\n"
		"  --model-control-mode M   none (default): load every model at start, refuse\n"
		"                           load/unload; explicit: load the --load-model ones and\n"
		"                           allow POST /v2/repository/models/M/load and unload\n"
		"  --load-model NAME        with explicit control, load NAME at start (repeatable;\n"
		"                           '*' loads every model)\n"
		"  --max-body-size BYTES    largest request body (default 67108864); larger: 413\n"
		"  --max-queue-size N       queued requests per model version when config.yaml\n"
		"                           sets none (1..1048576, default 1024); full: 503\n"
		"  --exec-timeout-ms T      fail an execution not done after T ms (default 60000,\n"
		"                           0: never)\n"
		"  --connection-timeout S   close a connection idle or stalled for S seconds\n"
		"                           (default 30)\n"
		"  --max-connections N      concurrent API connections (1..10000, default 1000);\n"
		"                           with --max-body-size it bounds the memory of bodies\n"
		"  --drain-timeout S        on SIGTERM, wait up to S seconds for requests in\n"
		"                           flight (default 30)\n"
		"  --log-verbose N          0 quiet, 1 loads and errors, 2 every batch (default 0)\n"
		"  --help, --version        this text; the version\n"
		"\n"
		"SIGTERM or SIGINT: stop accepting connections, answer the requests in flight,\n"
		"exit.  Exit status: 0 stopped cleanly, 1 failed (repository, model, port, or\n"
		"requests still in flight after the drain timeout), 2 bad command line.\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "model-repository", required_argument, NULL, 'r' },
		{ "http-port", required_argument, NULL, 'p' },
		{ "metrics-port", required_argument, NULL, 'm' },
		{ "http-address", required_argument, NULL, 'a' },
		{ "device", required_argument, NULL, 'd' },
		{ "model-control-mode", required_argument, NULL, 'c' },
		{ "load-model", required_argument, NULL, 'l' },
		{ "max-body-size", required_argument, NULL, 'b' },
		{ "max-queue-size", required_argument, NULL, 'q' },
		{ "exec-timeout-ms", required_argument, NULL, 't' },
		{ "connection-timeout", required_argument, NULL, 'T' },
		{ "drain-timeout", required_argument, NULL, 'D' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "log-verbose", required_argument, NULL, 'v' },
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
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, &li)) != -1) {
		switch (c) {
		case 'r': o->repo = optarg; break;
		case 'a': o->addr = optarg; break;
		case 'd': o->device = optarg; break;
		case 'p':
			if (cli_parse_u64("ipu-serve", "http-port", optarg, 0, 65535, &o->http_port))
				return -1;
			break;
		case 'm':
			if (cli_parse_u64("ipu-serve", "metrics-port", optarg, 0, 65535, &o->metrics_port))
				return -1;
			break;
		case 'c':
			if (!strcmp(optarg, "explicit")) {
				o->explicit_control = 1;
			} else if (strcmp(optarg, "none")) {
				fprintf(stderr, "ipu-serve: --model-control-mode is none or explicit, got '%s'\n",
					optarg);
				return -1;
			}
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
		case 'D':
			if (cli_parse_u64("ipu-serve", "drain-timeout", optarg, 0, 86400, &o->drain_timeout_s))
				return -1;
			break;
		case 'v':
			if (cli_parse_u64("ipu-serve", "log-verbose", optarg, 0, 3, &o->log_verbose))
				return -1;
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

/* Stop accepting, let the requests in flight finish (bounded). */
static int drain(struct srv_http *h, struct MHD_Daemon *api, uint64_t timeout_s)
{
	uint64_t deadline = srv_now_ns() + timeout_s * 1000000000ull;
	MHD_socket fd;

	atomic_store(&h->draining, 1);
	fd = MHD_quiesce_daemon(api);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	while (atomic_load(&h->inflight) > 0) {
		struct timespec ts = { 0, 5000000 };

		if (srv_now_ns() > deadline) {
			fprintf(stderr, "ipu-serve: %d requests still in flight after %llu s, stopping anyway\n",
				atomic_load(&h->inflight), (unsigned long long)timeout_s);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct srv_load_opts lo = { 0 };
	struct srv_repo *repo = NULL;
	struct ipurt_device_manager *dm = NULL;
	struct MHD_Daemon *api = NULL, *metrics = NULL;
	struct srv_http *h;
	char err[SRV_ERR], se[SRV_ERR + 64];
	int api_port = 0, metrics_port = 0, sig = 0, rc = CLI_EXIT_FAILURE;
	sigset_t set;

	if (parse_args(argc, argv, &o))
		return CLI_EXIT_USAGE;
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
	if (o.device && ipurt_dm_create(o.device, &dm, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: --device: %s\n", cli_safe(err, se, sizeof(se)));
		goto out;
	}
	lo.device = o.device;
	lo.dm = dm;
	lo.exec_timeout_ns = o.exec_timeout_ms * 1000000ull;
	lo.default_max_queue = o.max_queue;
	lo.log_verbose = (int)o.log_verbose;
	if (srv_repo_create(o.repo, &lo, &repo, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: %s\n", cli_safe(err, se, sizeof(se)));
		goto out;
	}
	if (load_models(&o, repo))
		goto out;
	h->repo = repo;
	h->max_body = (size_t)o.max_body;
	h->explicit_control = o.explicit_control;
	h->log_verbose = (int)o.log_verbose;
	if (srv_http_start(h, o.addr, (int)o.http_port, (int)o.metrics_port, (unsigned)o.conn_timeout_s,
			   (unsigned)o.max_conns, &api, &metrics, &api_port, &metrics_port, err, sizeof(err))) {
		fprintf(stderr, "ipu-serve: %s\n", err);
		goto out;
	}
	fprintf(stderr, "ipu-serve: Started HTTPService at %s:%d\n", o.addr, api_port);
	fprintf(stderr, "ipu-serve: Started Metrics Service at %s:%d\n", o.addr, metrics_port);
	while (sigwait(&set, &sig) || (sig != SIGTERM && sig != SIGINT))
		;
	fprintf(stderr, "ipu-serve: %s: draining %d requests in flight\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT", atomic_load(&h->inflight));
	rc = drain(h, api, o.drain_timeout_s) ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
	fprintf(stderr, "ipu-serve: stopped (%lu answered 2xx, %lu 4xx, %lu 5xx)\n",
		atomic_load(&h->answered[2]), atomic_load(&h->answered[4]), atomic_load(&h->answered[5]));
out:
	if (api)
		MHD_stop_daemon(api);
	if (metrics)
		MHD_stop_daemon(metrics);
	srv_repo_destroy(repo);
	ipurt_dm_destroy(dm);
	free(h);
	return rc;
}
