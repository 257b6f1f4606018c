/* SPDX-License-Identifier: MIT */
/*
 * http.h - the v2 endpoints over libmicrohttpd (server/http.c).
 */
#ifndef IPU_SERVE_HTTP_H
#define IPU_SERVE_HTTP_H

#include <stdatomic.h>
#include <stddef.h>

#include "conn_guard.h"
#include "json_budget.h"
#include "serve.h"

struct srv_http {
	struct srv_repo *repo;
	struct srv_shm *shm;		/* shared-memory regions; NULL: the extension is off */
	struct srv_conns conns;		/* open API connections, request deadline */
	struct srv_json_budget json;	/* memory of JSON bodies being parsed */
	size_t max_body;		/* bytes of a request body */
	size_t max_body_memory;		/* bytes of all bodies being received or answered */
	atomic_size_t body_used;
	int explicit_control;		/* load/unload through the API */
	int log_verbose;
	atomic_int draining;		/* SIGTERM: refuse new requests */
	atomic_int inflight;		/* requests being received or answered */
	atomic_ulong answered[6];	/* by class: 1xx..5xx, [0] unused */
};

struct MHD_Daemon;

struct srv_http_limits {
	unsigned connection_timeout_s;	/* idle or stalled (libmicrohttpd's, reset by each byte) */
	unsigned max_connections;	/* API connections at once */
	unsigned max_per_client;	/* of them from one client address */
};

/*
 * Start the API daemon (and, if metrics_port >= 0, the metrics daemon) on
 * addr; port 0 picks a free port.  The ports bound are returned.
 * h->conns must be initialised (srv_conns_init) and h->json's limit set.
 * The memory of bodies being received is bounded by h->max_body_memory,
 * and of their JSON parses by h->json.limit.
 */
int srv_http_start(struct srv_http *h, const char *addr, int port, int metrics_port,
		   const struct srv_http_limits *l, struct MHD_Daemon **api,
		   struct MHD_Daemon **metrics, int *api_port_out, int *metrics_port_out,
		   char *err, size_t errlen);

/*
 * Stop accepting: close the listening socket, after handing the
 * connections already waiting in its backlog to the daemon.  Returns how
 * many were handed over.
 */
unsigned srv_http_quiesce(struct MHD_Daemon *api);

#endif
