// SPDX-License-Identifier: MIT
/*
 * grpc_server.c - the gRPC transport of ipu-serve over gRPC's C core.
 *
 * Every call is bound to the server's one completion queue, which two
 * threads drain: a call is asked for, its request message received and its
 * answer sent as batches whose completions arrive there, so network I/O
 * never waits on a model.  Cheap RPCs (health, metadata) are answered on
 * the queue's thread; a ModelInfer is handed to a thread of a pool that
 * grows to the calls in flight, since it blocks until its batch ran (like
 * the HTTP side's thread per connection), and that thread starts the
 * answer's batch and takes the next call.  A
 * sweep once a second cancels calls whose message has not arrived within
 * --request-timeout, or whose client has not taken the answer in a minute.
 *
 * Limits shared with HTTP: the message size is --max-body-size (gRPC's
 * receive limit: the core answers RESOURCE_EXHAUSTED itself), a message's
 * bytes are charged to --max-body-memory while the call holds them, and
 * the calls at once are bounded by --max-connections.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "cli.h"
#include "grpc_server.h"

/* An answer a client does not take within this is dropped with its call. */
#define ANSWER_TIMEOUT_MS 60000
#define CQ_THREADS 2
/* calls asked for ahead, so that a burst does not wait for each */
#define PENDING_CALLS 16

enum call_state { ASKED, RECEIVING, RUNNING, SENDING };

/* A call asked for, then received, run and answered. */
struct call {
	struct srv_grpc *g;
	grpc_call *call;
	grpc_call_details details;
	grpc_metadata_array md;
	grpc_byte_buffer *recv;
	grpc_byte_buffer *send;
	grpc_slice status_details;
	int has_details;
	size_t charged;			/* bytes of --max-body-memory */
	int counted;			/* in g->calls */
	enum call_state state;		/* under g->lock */
	uint64_t since_ms;		/* entered RECEIVING or SENDING */
	struct call *prev, *next;	/* g->active, under g->lock */
	struct call *queued;		/* g->work, under g->wlock */
};

struct srv_grpc {
	struct srv_http *h;
	struct srv_grpc_limits lim;
	grpc_server *server;
	grpc_completion_queue *cq;
	pthread_t threads[CQ_THREADS];
	unsigned nthreads;
	atomic_uint calls;		/* calls past ASKED, not yet freed */
	/* ModelInfer calls waiting for a thread, and the threads */
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	struct call *work, **work_tail;
	unsigned workers, idle;
	int stopping;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct call *active;		/* calls past ASKED, for the sweep */
	int shut;			/* the server's shutdown completed */
	int shutdown_tag;
	uint64_t last_sweep_ms;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void set_state(struct call *c, enum call_state s)
{
	struct srv_grpc *g = c->g;

	pthread_mutex_lock(&g->lock);
	if (c->state == ASKED) {
		c->next = g->active;
		if (g->active)
			g->active->prev = c;
		g->active = c;
	}
	c->state = s;
	c->since_ms = now_ms();
	pthread_mutex_unlock(&g->lock);
}

static void call_free(struct call *c)
{
	struct srv_grpc *g = c->g;

	if (c->state != ASKED) {
		pthread_mutex_lock(&g->lock);
		if (c->prev)
			c->prev->next = c->next;
		else
			g->active = c->next;
		if (c->next)
			c->next->prev = c->prev;
		pthread_mutex_unlock(&g->lock);
	}
	if (c->recv)
		grpc_byte_buffer_destroy(c->recv);
	if (c->send)
		grpc_byte_buffer_destroy(c->send);
	if (c->has_details)
		grpc_slice_unref(c->status_details);
	atomic_fetch_sub(&g->h->body_used, c->charged);
	if (c->call)
		grpc_call_unref(c->call);
	grpc_call_details_destroy(&c->details);
	grpc_metadata_array_destroy(&c->md);
	if (c->counted)
		atomic_fetch_sub(&g->calls, 1);
	free(c);
}

/* Ask the core for the next call; -1 when it cannot be asked (no memory or shut down). */
static int request_next(struct srv_grpc *g)
{
	struct call *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->g = g;
	c->state = ASKED;
	grpc_call_details_init(&c->details);
	grpc_metadata_array_init(&c->md);
	if (grpc_server_request_call(g->server, &c->call, &c->details, &c->md, g->cq, g->cq, c) !=
	    GRPC_CALL_OK) {
		call_free(c);
		return -1;
	}
	return 0;
}

/*
 * Send the answer: the message when status is 0, and the status with its
 * text; with the initial metadata too when nothing was sent yet (the core
 * holds a status back until they went out).  Its completion frees the call.
 */
static void answer(struct call *c, int status, const uint8_t *out, size_t len, const char *msg,
		   int first)
{
	struct srv_http *h = c->g->h;
	char safe[SRV_ERR * 4 + 16];
	grpc_op ops[3];
	size_t n = 0;
	grpc_slice s;

	memset(ops, 0, sizeof(ops));
	if (first)
		ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (!status) {
		s = grpc_slice_from_copied_buffer((const char *)out, len);
		c->send = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n++].data.send_message.send_message = c->send;
		msg = "";
	}
	/* names from the request never put control bytes into a header */
	cli_safe(msg, safe, sizeof(safe));
	c->status_details = grpc_slice_from_copied_string(safe);
	c->has_details = 1;
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = (grpc_status_code)srv_grpc_code(status);
	ops[n++].data.send_status_from_server.status_details = status ? &c->status_details : NULL;
	atomic_fetch_add(&h->answered[status >= 100 && status < 600 ? status / 100 : 2], 1);
	if (status && h->log_verbose)
		fprintf(stderr, "ipu-serve: gRPC %d: %s\n", srv_grpc_code(status), safe);
	set_state(c, SENDING);
	if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK)
		call_free(c);
}

/* The received message, dispatched; the answer started. */
static void run(struct call *c)
{
	struct srv_http *h = c->g->h;
	grpc_byte_buffer_reader rd;
	char err[SRV_ERR], method[256];
	uint8_t *out = NULL;
	size_t out_len = 0;
	grpc_slice body;
	int status;

	if (!grpc_byte_buffer_reader_init(&rd, c->recv)) {
		answer(c, 400, NULL, 0, "the request message could not be decompressed", 0);
		return;
	}
	body = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	grpc_byte_buffer_destroy(c->recv);
	c->recv = NULL;
	snprintf(method, sizeof(method), "%.*s", (int)GRPC_SLICE_LENGTH(c->details.method),
		 (const char *)GRPC_SLICE_START_PTR(c->details.method));
	status = srv_grpc_dispatch(h, method, GRPC_SLICE_START_PTR(body), GRPC_SLICE_LENGTH(body), &out,
				   &out_len, err, sizeof(err));
	grpc_slice_unref(body);
	answer(c, status, out, out_len, err, 0);
	free(out);
}

static void *infer_thread(void *arg)
{
	struct srv_grpc *g = arg;
	struct call *c;

	pthread_mutex_lock(&g->wlock);
	for (;;) {
		while (!g->work && !g->stopping) {
			g->idle++;
			pthread_cond_wait(&g->wcond, &g->wlock);
			g->idle--;
		}
		c = g->work;
		if (!c)
			break;
		g->work = c->queued;
		if (!g->work)
			g->work_tail = &g->work;
		pthread_mutex_unlock(&g->wlock);
		run(c);
		pthread_mutex_lock(&g->wlock);
	}
	g->workers--;
	pthread_cond_broadcast(&g->wcond);
	pthread_mutex_unlock(&g->wlock);
	return NULL;
}

/* Queue a ModelInfer for the pool, with one more thread if none is idle; -1: no thread. */
static int hand_over(struct call *c)
{
	struct srv_grpc *g = c->g;
	pthread_attr_t at;
	pthread_t t;
	int rc = 0;

	pthread_mutex_lock(&g->wlock);
	if (!g->idle) {
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, infer_thread, g))
			rc = -1;
		else
			g->workers++;
		pthread_attr_destroy(&at);
	}
	if (!rc) {
		c->queued = NULL;
		*g->work_tail = c;
		g->work_tail = &c->queued;
		pthread_cond_signal(&g->wcond);
	}
	pthread_mutex_unlock(&g->wlock);
	return rc;
}

static int is_infer(const struct call *c)
{
	static const char m[] = "/inference.GRPCInferenceService/ModelInfer";

	return GRPC_SLICE_LENGTH(c->details.method) == sizeof(m) - 1 &&
	       !memcmp(GRPC_SLICE_START_PTR(c->details.method), m, sizeof(m) - 1);
}

/* A new call: within the limit, its message asked for; else refused at once. */
static void started(struct call *c)
{
	struct srv_grpc *g = c->g;
	char msg[SRV_ERR];
	grpc_op ops[2];

	c->counted = 1;
	if (atomic_fetch_add(&g->calls, 1) >= g->lim.max_calls) {
		snprintf(msg, sizeof(msg), "%u calls are in flight, the most --max-connections allows; retry",
			 g->lim.max_calls);
		answer(c, 413, NULL, 0, msg, 1);
		return;
	}
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_RECV_MESSAGE;
	ops[1].data.recv_message.recv_message = &c->recv;
	set_state(c, RECEIVING);
	if (grpc_call_start_batch(c->call, ops, 2, c, NULL) != GRPC_CALL_OK)
		call_free(c);
}

/* The message arrived (or the client went): run it here or on a thread of its own. */
static void received(struct call *c, int ok)
{
	struct srv_grpc *g = c->g;
	struct srv_http *h = g->h;
	char err[SRV_ERR];
	size_t len;

	if (!ok) {
		/* the client went away, or the sweep cancelled it: nobody to answer */
		call_free(c);
		return;
	}
	if (!c->recv) {
		answer(c, 400, NULL, 0, "the call carried no request message", 0);
		return;
	}
	len = grpc_byte_buffer_length(c->recv);
	if (atomic_fetch_add(&h->body_used, len) + len > h->max_body_memory) {
		atomic_fetch_sub(&h->body_used, len);
		snprintf(err, sizeof(err), "the request messages being answered hold all of "
			 "--max-body-memory (%zu bytes); retry", h->max_body_memory);
		answer(c, 503, NULL, 0, err, 0);
		return;
	}
	c->charged = len;
	set_state(c, RUNNING);
	if (!is_infer(c)) {
		run(c);
		return;
	}
	if (hand_over(c))
		answer(c, 503, NULL, 0, "no thread for the call (out of memory); retry", 0);
}

/* Cancel the calls stalled receiving or sending; their batches then complete, failed. */
static void sweep(struct srv_grpc *g)
{
	uint64_t now = now_ms();
	struct call *c;

	pthread_mutex_lock(&g->lock);
	if (now - g->last_sweep_ms < 1000) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	g->last_sweep_ms = now;
	for (c = g->active; c; c = c->next) {
		if (c->state == RECEIVING && g->lim.request_timeout_ms &&
		    now - c->since_ms > g->lim.request_timeout_ms)
			grpc_call_cancel_with_status(c->call, GRPC_STATUS_DEADLINE_EXCEEDED,
						     "the request message did not arrive within "
						     "--request-timeout", NULL);
		else if (c->state == SENDING && now - c->since_ms > ANSWER_TIMEOUT_MS)
			grpc_call_cancel(c->call, NULL);
	}
	pthread_mutex_unlock(&g->lock);
}

static void *cq_thread(void *arg)
{
	struct srv_grpc *g = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(
			g->cq, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
					    gpr_time_from_millis(1000, GPR_TIMESPAN)), NULL);
		struct call *c;

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		sweep(g);
		if (ev.type != GRPC_OP_COMPLETE)
			continue;
		if (ev.tag == &g->shutdown_tag) {
			pthread_mutex_lock(&g->lock);
			g->shut = 1;
			pthread_cond_broadcast(&g->cond);
			pthread_mutex_unlock(&g->lock);
			continue;
		}
		c = ev.tag;
		switch (c->state) {
		case ASKED:
			if (!ev.success) {
				/* the server is shutting down: the call asked for never came */
				call_free(c);
				break;
			}
			request_next(g);
			started(c);
			break;
		case RECEIVING:
			received(c, ev.success);
			break;
		default: /* SENDING: the answer went out, or the client is gone */
			call_free(c);
			break;
		}
	}
	return NULL;
}

int srv_grpc_start(struct srv_http *h, const char *addr, int port, const struct srv_grpc_limits *l,
		   struct srv_grpc **out, int *port_out, char *err, size_t errlen)
{
	struct srv_grpc *g;
	grpc_arg args[2];
	grpc_channel_args ca = { 2, args };
	grpc_server_credentials *cred;
	char where[320];
	unsigned i;

	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	grpc_init();
	g->h = h;
	g->lim = *l;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	pthread_mutex_init(&g->wlock, NULL);
	pthread_cond_init(&g->wcond, NULL);
	g->work_tail = &g->work;
	args[0].type = GRPC_ARG_INTEGER;
	args[0].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	args[0].value.integer = l->max_message > INT32_MAX ? INT32_MAX : (int)l->max_message;
	args[1].type = GRPC_ARG_INTEGER;
	args[1].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
	args[1].value.integer = -1;
	g->server = grpc_server_create(&ca, NULL);
	g->cq = grpc_completion_queue_create_for_next(NULL);
	if (!g->server || !g->cq) {
		snprintf(err, errlen, "gRPC: cannot create the server");
		goto fail;
	}
	grpc_server_register_completion_queue(g->server, g->cq, NULL);
	snprintf(where, sizeof(where), "%s:%d", addr, port);
	cred = grpc_insecure_server_credentials_create();
	*port_out = grpc_server_add_http2_port(g->server, where, cred);
	grpc_server_credentials_release(cred);
	if (*port_out <= 0) {
		snprintf(err, errlen, "cannot listen for gRPC on %s (in use, or not an address?)", where);
		goto fail;
	}
	grpc_server_start(g->server);
	for (i = 0; i < PENDING_CALLS; i++) {
		if (request_next(g)) {
			snprintf(err, errlen, "gRPC: cannot wait for calls (out of memory)");
			goto fail_started;
		}
	}
	for (i = 0; i < CQ_THREADS; i++) {
		if (pthread_create(&g->threads[i], NULL, cq_thread, g)) {
			snprintf(err, errlen, "gRPC: no thread for the completion queue");
			goto fail_started;
		}
		g->nthreads++;
	}
	*out = g;
	return 0;
fail_started:
	srv_grpc_stop(g, 0);
	return -1;
fail:
	if (g->server)
		grpc_server_destroy(g->server);
	if (g->cq) {
		grpc_completion_queue_shutdown(g->cq);
		grpc_completion_queue_destroy(g->cq);
	}
	pthread_cond_destroy(&g->wcond);
	pthread_mutex_destroy(&g->wlock);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
	grpc_shutdown();
	return -1;
}

/* Wait until the server's shutdown completed, or until (CLOCK_REALTIME) passed. */
static int wait_shut(struct srv_grpc *g, const struct timespec *until)
{
	int shut;

	pthread_mutex_lock(&g->lock);
	while (!g->shut) {
		if (!until)
			pthread_cond_wait(&g->cond, &g->lock);
		else if (pthread_cond_timedwait(&g->cond, &g->lock, until) == ETIMEDOUT)
			break;
	}
	shut = g->shut;
	pthread_mutex_unlock(&g->lock);
	return shut;
}

unsigned srv_grpc_stop(struct srv_grpc *g, uint64_t timeout_ms)
{
	struct timespec until, pause = { 0, 2000000 };
	unsigned cut = 0, i;

	if (!g)
		return 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(timeout_ms / 1000);
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	grpc_server_shutdown_and_notify(g->server, g->cq, &g->shutdown_tag);
	if (!g->nthreads) {
		/* nobody reads the queue: the notice and the calls asked for are drained here */
		for (;;) {
			grpc_event ev = grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME),
								   NULL);

			if (ev.type != GRPC_OP_COMPLETE || ev.tag == &g->shutdown_tag)
				break;
			call_free(ev.tag);
		}
		g->shut = 1;
	} else if (!wait_shut(g, &until)) {
		cut = atomic_load(&g->calls);
		grpc_server_cancel_all_calls(g->server);
		wait_shut(g, NULL);
	}
	/* the answers' completions free the last calls; then the pool's threads end */
	while (atomic_load(&g->calls))
		nanosleep(&pause, NULL);
	pthread_mutex_lock(&g->wlock);
	g->stopping = 1;
	pthread_cond_broadcast(&g->wcond);
	while (g->workers)
		pthread_cond_wait(&g->wcond, &g->wlock);
	pthread_mutex_unlock(&g->wlock);
	grpc_server_destroy(g->server);
	grpc_completion_queue_shutdown(g->cq);
	for (i = 0; i < g->nthreads; i++)
		pthread_join(g->threads[i], NULL);
	if (!g->nthreads)
		for (;;) {
			grpc_event ev = grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME),
								   NULL);

			if (ev.type == GRPC_QUEUE_SHUTDOWN)
				break;
			if (ev.type == GRPC_OP_COMPLETE && ev.tag != &g->shutdown_tag)
				call_free(ev.tag);
		}
	grpc_completion_queue_destroy(g->cq);
	pthread_cond_destroy(&g->wcond);
	pthread_mutex_destroy(&g->wlock);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
	grpc_shutdown();
	return cut;
}
