// SPDX-License-Identifier: MIT
/*
 * conn_guard.c - the API connections as ipu-serve tracks them beside
 * libmicrohttpd: a registry of open connections (the socket context), a
 * thread that enforces a whole-request deadline, the decoded URL checked
 * once, and libmicrohttpd's log with control bytes escaped.
 *
 * libmicrohttpd's MHD_OPTION_CONNECTION_TIMEOUT restarts on every byte,
 * so a client sending one byte a second holds its connection (and a slot
 * of --max-connections) forever.  The deadline here counts from the
 * connection's accept or its previous answer to the moment the request has
 * fully arrived; past it the socket is shut down, which ends the
 * connection's thread in libmicrohttpd like a client hang-up.  The socket
 * stays open until libmicrohttpd reports the connection closed (it closes
 * the descriptor only after that notification), so the shutdown never
 * reaches a reused descriptor.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "cli.h"
#include "conn_guard.h"

/*
 * The connection whose request line this thread parsed last: with one
 * thread per connection, the connection this thread serves.
 */
static _Thread_local struct srv_conn *this_conn;

uint64_t srv_ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void *reaper(void *arg)
{
	struct srv_conns *cs = arg;
	uint64_t tick = cs->request_timeout_ms / 8;

	if (tick < 20)
		tick = 20;
	if (tick > 500)
		tick = 500;
	pthread_mutex_lock(&cs->lock);
	while (!cs->stop) {
		struct timespec ts;
		uint64_t now = srv_ms_now();
		struct srv_conn *c;

		for (c = cs->head; c; c = c->next) {
			if (c->busy || c->cut || now - c->start_ms < cs->request_timeout_ms)
				continue;
			/* the reader sees end of file and libmicrohttpd closes the connection */
			shutdown(c->fd, SHUT_RDWR);
			c->cut = 1;
			atomic_fetch_add(&cs->cut_total, 1);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(tick % 1000) * 1000000L;
		ts.tv_sec += (time_t)(tick / 1000) + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&cs->wake, &cs->lock, &ts);
	}
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

int srv_conns_init(struct srv_conns *cs, uint64_t request_timeout_ms, char *err, size_t errlen)
{
	int rc;

	memset(cs, 0, sizeof(*cs));
	pthread_mutex_init(&cs->lock, NULL);
	pthread_cond_init(&cs->wake, NULL);
	cs->request_timeout_ms = request_timeout_ms;
	cs->last_activity_ms = srv_ms_now();
	if (!request_timeout_ms)
		return 0;
	rc = pthread_create(&cs->reaper, NULL, reaper, cs);
	if (rc) {
		snprintf(err, errlen, "cannot start the request deadline thread: %s", strerror(rc));
		return -1;
	}
	cs->reaper_started = 1;
	return 0;
}

void srv_conns_fini(struct srv_conns *cs)
{
	pthread_mutex_lock(&cs->lock);
	cs->stop = 1;
	pthread_cond_signal(&cs->wake);
	pthread_mutex_unlock(&cs->lock);
	if (cs->reaper_started)
		pthread_join(cs->reaper, NULL);
	cs->reaper_started = 0;
	pthread_cond_destroy(&cs->wake);
	pthread_mutex_destroy(&cs->lock);
}

void srv_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	struct srv_conns *cs = cls;
	struct srv_conn *e = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		/* without an entry the connection is served, only not guarded */
		e = calloc(1, sizeof(*e));
		if (!e || !fd) {
			free(e);
			return;
		}
		e->fd = fd->connect_fd;
		e->start_ms = srv_ms_now();
		pthread_mutex_lock(&cs->lock);
		e->next = cs->head;
		if (cs->head)
			cs->head->prev = e;
		cs->head = e;
		cs->open++;
		pthread_mutex_unlock(&cs->lock);
		*socket_context = e;
		return;
	}
	if (!e)
		return;
	pthread_mutex_lock(&cs->lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		cs->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	cs->open--;
	cs->last_activity_ms = srv_ms_now();
	pthread_mutex_unlock(&cs->lock);
	free(e);
	*socket_context = NULL;
}

static struct srv_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

void *srv_conns_uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct srv_conns *cs = cls;
	struct srv_conn *e = conn_of(c);

	(void)uri;
	this_conn = e;
	if (e)
		e->bad_url[0] = 0;
	pthread_mutex_lock(&cs->lock);
	cs->last_activity_ms = srv_ms_now();
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

size_t srv_conns_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	struct srv_conn *e = conn_of(c);
	size_t n = MHD_http_unescape(s);
	char *safe;
	json_t *utf8;

	(void)cls;
	if (!e || e->bad_url[0])
		return n;
	safe = malloc(4 * n + 1);
	if (!safe) {
		snprintf(e->bad_url, sizeof(e->bad_url), "out of memory for the URL");
		return n;
	}
	cli_safe(s, safe, 4 * n + 1);
	/* jansson's check too, so that every name can be written back in JSON */
	utf8 = json_stringn(s, n);
	if (strlen(s) != n)
		snprintf(e->bad_url, sizeof(e->bad_url), "the URL holds a %%00 byte (after '%.120s')", safe);
	else if (strcmp(safe, s) || !utf8)
		snprintf(e->bad_url, sizeof(e->bad_url),
			 "the URL '%.120s' holds control characters or bytes that are not UTF-8", safe);
	json_decref(utf8);
	free(safe);
	return n;
}

const char *srv_conn_bad_url(struct MHD_Connection *c, char *buf, size_t len)
{
	struct srv_conn *e = conn_of(c);

	if (!e || !e->bad_url[0])
		return NULL;
	snprintf(buf, len, "%s", e->bad_url);
	e->bad_url[0] = 0;
	return buf;
}

void srv_conn_busy(struct srv_conns *cs, struct MHD_Connection *c, int busy)
{
	struct srv_conn *e = conn_of(c);
	uint64_t now = srv_ms_now();

	pthread_mutex_lock(&cs->lock);
	if (e) {
		e->busy = busy;
		if (!busy)
			e->start_ms = now;
	}
	cs->last_activity_ms = now;
	pthread_mutex_unlock(&cs->lock);
}

void srv_conns_state(struct srv_conns *cs, unsigned *open, uint64_t *last_activity_ms)
{
	pthread_mutex_lock(&cs->lock);
	*open = cs->open;
	*last_activity_ms = cs->last_activity_ms;
	pthread_mutex_unlock(&cs->lock);
}

/* One answer in place of libmicrohttpd's doubled one; the socket is then shut down. */
static void refuse_framing(struct srv_conns *cs, struct srv_conn *e, const char *why)
{
	char body[256], msg[512];
	int bl, ml;
	size_t off = 0;

	bl = snprintf(body, sizeof(body),
		      "{\"error\":\"%s: the Content-Length header must be one decimal number below 2^64\"}",
		      why);
	ml = snprintf(msg, sizeof(msg),
		      "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
		      "Content-Length: %d\r\nConnection: close\r\n\r\n%s", bl, body);
	while (off < (size_t)ml) {
		ssize_t w = send(e->fd, msg + off, (size_t)ml - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	/* libmicrohttpd's own answer then fails to write and it closes the connection */
	shutdown(e->fd, SHUT_WR);
	pthread_mutex_lock(&cs->lock);
	e->cut = 1;
	pthread_mutex_unlock(&cs->lock);
	atomic_fetch_add(&cs->framing_refused, 1);
}

void srv_conns_log(void *cls, const char *fmt, va_list ap)
{
	struct srv_conns *cs = cls;
	char text[512], safe[1024];
	size_t n;
	int cut;

	vsnprintf(text, sizeof(text), fmt, ap);
	n = strlen(text);
	if (n && text[n - 1] == '\n')
		text[--n] = 0;
	fprintf(stderr, "ipu-serve: http: %s\n", cli_safe(text, safe, sizeof(safe)));
	if (!cs || !this_conn)
		return;
	pthread_mutex_lock(&cs->lock);
	cut = this_conn->cut;
	pthread_mutex_unlock(&cs->lock);
	if (cut)
		return;
	if (strstr(fmt, "'Content-Length' header") || strstr(fmt, "`Content-Length' header"))
		refuse_framing(cs, this_conn, strstr(fmt, "Too large") ? "Content-Length over 2^64 - 1"
									: "Content-Length is not a number");
}
