/* SPDX-License-Identifier: MIT */
/*
 * http.h - the v2 endpoints over libmicrohttpd (server/http.c).
 */
#ifndef IPU_SERVE_HTTP_H
#define IPU_SERVE_HTTP_H

#include <stdatomic.h>
#include <stddef.h>

#include "serve.h"

struct srv_http {
	struct srv_repo *repo;
	size_t max_body;		/* bytes of a request body */
	int explicit_control;		/* load/unload through the API */
	int log_verbose;
	atomic_int draining;		/* SIGTERM: refuse new requests */
	atomic_int inflight;		/* requests being received or answered */
	atomic_ulong answered[6];	/* by class: 1xx..5xx, [0] unused */
};

struct MHD_Daemon;

/*
 * Start the API daemon (and, if metrics_port >= 0, the metrics daemon) on
 * addr; port 0 picks a free port.  The ports bound are returned.
 * max_connections bounds the API's connections (so the memory of bodies
 * being received is at most max_connections x max_body).
 */
int srv_http_start(struct srv_http *h, const char *addr, int port, int metrics_port,
		   unsigned connection_timeout_s, unsigned max_connections, struct MHD_Daemon **api,
		   struct MHD_Daemon **metrics, int *api_port_out, int *metrics_port_out,
		   char *err, size_t errlen);

#endif
