/* SPDX-License-Identifier: MIT */
/*
 * conn_guard.h - what libmicrohttpd 0.9.75 does not enforce on a
 * connection (server/conn_guard.c): a deadline for a whole request
 * (headers and body), one validation of the decoded URL, one clean answer
 * to a malformed Content-Length, and the open connections the SIGTERM
 * drain waits for.
 */
#ifndef IPU_SERVE_CONN_GUARD_H
#define IPU_SERVE_CONN_GUARD_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* One open API connection (the socket context libmicrohttpd keeps for it). */
struct srv_conn {
	struct srv_conn *prev, *next;
	int fd;
	uint64_t start_ms;		/* the request being received began (accept or last answer) */
	int busy;			/* a whole request is being answered: no deadline */
	int cut;			/* shut down by the deadline */
	char bad_url[200];		/* why the decoded URL is refused, "" if it is not */
};

struct srv_conns {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct srv_conn *head;
	unsigned open;
	uint64_t request_timeout_ms;	/* 0: no deadline */
	uint64_t last_activity_ms;	/* of any connection, for the drain */
	int stop;
	int reaper_started;
	pthread_t reaper;
	atomic_ulong cut_total;		/* connections cut by the deadline */
	atomic_ulong framing_refused;	/* malformed Content-Length answered here */
};

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t srv_ms_now(void);

/*
 * Start the registry and (request_timeout_ms > 0) the thread that shuts
 * down every connection whose request has not fully arrived within
 * request_timeout_ms of its start.  0 or -1 with err.
 */
int srv_conns_init(struct srv_conns *cs, uint64_t request_timeout_ms, char *err, size_t errlen);
/* Stop the thread (after the daemons are stopped) and free the registry. */
void srv_conns_fini(struct srv_conns *cs);

/* MHD_OPTION_NOTIFY_CONNECTION: cls is the struct srv_conns. */
void srv_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);
/* MHD_OPTION_URI_LOG_CALLBACK: a new request line; returns NULL (no request context). */
void *srv_conns_uri_log(void *cls, const char *uri, struct MHD_Connection *c);
/*
 * MHD_OPTION_UNESCAPE_CALLBACK: decodes %XX in place and records in the
 * connection why the result is refused (a control byte, %00 among them,
 * or bytes that are not UTF-8), so that a name is checked once, where the
 * URL is decoded, and never reaches a lookup or a log line cut or raw.
 */
size_t srv_conns_unescape(void *cls, struct MHD_Connection *c, char *s);
/*
 * MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd's messages with control
 * bytes escaped.  libmicrohttpd 0.9.75 answers a Content-Length it cannot
 * parse (-1, +N, 2^64+1) with its status line and headers written twice;
 * its message about that header is the only hook in the connection's
 * thread before it does, so the one clean 400 is written here and the
 * connection shut down.
 */
void srv_conns_log(void *cls, const char *fmt, va_list ap);

/* The handler holds a complete request (deadline off) / answered it (clock restarts). */
void srv_conn_busy(struct srv_conns *cs, struct MHD_Connection *c, int busy);
/* The connection's refused URL message, cleared; NULL if the URL is fine. */
const char *srv_conn_bad_url(struct MHD_Connection *c, char *buf, size_t len);

/* Open connections and the time of the last request activity (drain). */
void srv_conns_state(struct srv_conns *cs, unsigned *open, uint64_t *last_activity_ms);

#endif
