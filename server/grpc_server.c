// SPDX-License-Identifier: MIT
/*
 * grpc_server.c - the gRPC transport of ipu-serve over gRPC's C core.
 *
 * One thread waits on the server's completion queue for new calls; each
 * call is then run on a thread of its own with a completion queue of its
 * own (plucked), like the HTTP side's thread per connection, so that an
 * infer waits for its batch without holding up other calls.  A call reads
 * its one request message (within --request-timeout), hands it to
 * grpc_service.c and sends the answer with its status.
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
#define ANSWER_TIMEOUT_S 60
#define REFUSE_TIMEOUT_S 2

struct srv_grpc {
	struct srv_http *h;
	struct srv_grpc_limits lim;
	grpc_server *server;
	grpc_completion_queue *cq;	/* new calls and the shutdown notice */
	pthread_t thread;
	int thread_started;
	atomic_uint calls;		/* calls being run */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int shut;			/* the server's shutdown completed */
	int shutdown_tag;
};

/* A call asked for, then run. */
struct call {
	struct srv_grpc *g;
	grpc_call *call;
	grpc_call_details details;
	grpc_metadata_array md;
	grpc_completion_queue *cq;	/* the call's own, plucked by its thread */
};

static void cq_destroy(grpc_completion_queue *cq)
{
	grpc_event ev;

	grpc_completion_queue_shutdown(cq);
	do
		ev = grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	while (ev.type != GRPC_QUEUE_SHUTDOWN);
	grpc_completion_queue_destroy(cq);
}

static void call_free(struct call *c)
{
	if (c->call)
		grpc_call_unref(c->call);
	grpc_call_details_destroy(&c->details);
	grpc_metadata_array_destroy(&c->md);
	if (c->cq)
		cq_destroy(c->cq);
	free(c);
}

/* Ask the core for the next call; -1 when it cannot be asked (no memory or shut down). */
static int request_next(struct srv_grpc *g)
{
	struct call *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->g = g;
	grpc_call_details_init(&c->details);
	grpc_metadata_array_init(&c->md);
	c->cq = grpc_completion_queue_create_for_pluck(NULL);
	if (!c->cq || grpc_server_request_call(g->server, &c->call, &c->details, &c->md, c->cq, g->cq,
					       c) != GRPC_CALL_OK) {
		call_free(c);
		return -1;
	}
	return 0;
}

static grpc_event run_batch(struct call *c, const grpc_op *ops, size_t n, void *tag,
			    gpr_timespec deadline)
{
	grpc_event ev;

	if (grpc_call_start_batch(c->call, ops, n, tag, NULL) != GRPC_CALL_OK) {
		memset(&ev, 0, sizeof(ev));
		ev.type = GRPC_OP_COMPLETE;
		ev.success = 0;
		return ev;
	}
	ev = grpc_completion_queue_pluck(c->cq, tag, deadline, NULL);
	if (ev.type == GRPC_QUEUE_TIMEOUT) {
		/* the batch still completes, as failed, once the call is cancelled */
		grpc_call_cancel_with_status(c->call, GRPC_STATUS_DEADLINE_EXCEEDED,
					     "the call did not go on within its time (the request message "
					     "within --request-timeout)", NULL);
		grpc_completion_queue_pluck(c->cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		ev.success = 0;
	}
	return ev;
}

/*
 * The answer: the message when status is 0, and the status with its text;
 * with the initial metadata too when nothing was sent yet (the core holds
 * a status back until they went out).
 */
static void answer(struct call *c, int status, const uint8_t *out, size_t len, const char *msg,
		   int first)
{
	grpc_op ops[4];
	grpc_slice details, s;
	grpc_byte_buffer *bb = NULL;
	char safe[SRV_ERR * 4 + 16];
	size_t n = 0;
	int tag;

	memset(ops, 0, sizeof(ops));
	if (first)
		ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (!status) {
		s = grpc_slice_from_copied_buffer((const char *)out, len);
		bb = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n++].data.send_message.send_message = bb;
		msg = "";
	}
	/* names from the request never put control bytes into a header */
	cli_safe(msg, safe, sizeof(safe));
	details = grpc_slice_from_copied_string(safe);
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = (grpc_status_code)srv_grpc_code(status);
	ops[n++].data.send_status_from_server.status_details = status ? &details : NULL;
	/*
	 * A client gone by now just fails the batch; one that reads nothing is
	 * cut, soon when the refusal holds up the thread that takes new calls.
	 */
	run_batch(c, ops, n, &tag, gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
						gpr_time_from_seconds(first ? REFUSE_TIMEOUT_S : ANSWER_TIMEOUT_S,
								      GPR_TIMESPAN)));
	grpc_slice_unref(details);
	if (bb)
		grpc_byte_buffer_destroy(bb);
	if (status >= 100 && status < 600)
		atomic_fetch_add(&c->g->h->answered[status / 100], 1);
	else if (!status)
		atomic_fetch_add(&c->g->h->answered[2], 1);
	if (status && c->g->h->log_verbose)
		fprintf(stderr, "ipu-serve: gRPC %d: %s\n", srv_grpc_code(status), safe);
}

static void *call_thread(void *arg)
{
	struct call *c = arg;
	struct srv_grpc *g = c->g;
	struct srv_http *h = g->h;
	grpc_byte_buffer *bb = NULL;
	grpc_byte_buffer_reader rd;
	grpc_op ops[2];
	grpc_event ev;
	gpr_timespec deadline = gpr_inf_future(GPR_CLOCK_REALTIME);
	char err[SRV_ERR], method[256];
	uint8_t *out = NULL;
	size_t out_len = 0, len, charged = 0;
	grpc_slice body;
	int tag, status;

	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_RECV_MESSAGE;
	ops[1].data.recv_message.recv_message = &bb;
	if (g->lim.request_timeout_ms)
		deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
					gpr_time_from_millis((int64_t)g->lim.request_timeout_ms, GPR_TIMESPAN));
	ev = run_batch(c, ops, 2, &tag, deadline);
	if (!ev.success) {
		/* the client went away or stalled: nobody to answer */
		if (bb)
			grpc_byte_buffer_destroy(bb);
		goto done;
	}
	if (!bb) {
		answer(c, 400, NULL, 0, "the call carried no request message", 0);
		goto done;
	}
	len = grpc_byte_buffer_length(bb);
	if (atomic_fetch_add(&h->body_used, len) + len > h->max_body_memory) {
		atomic_fetch_sub(&h->body_used, len);
		grpc_byte_buffer_destroy(bb);
		snprintf(err, sizeof(err), "the request messages being answered hold all of "
			 "--max-body-memory (%zu bytes); retry", h->max_body_memory);
		answer(c, 503, NULL, 0, err, 0);
		goto done;
	}
	charged = len;
	if (!grpc_byte_buffer_reader_init(&rd, bb)) {
		grpc_byte_buffer_destroy(bb);
		answer(c, 400, NULL, 0, "the request message could not be decompressed", 0);
		goto done;
	}
	body = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	grpc_byte_buffer_destroy(bb);
	snprintf(method, sizeof(method), "%.*s", (int)GRPC_SLICE_LENGTH(c->details.method),
		 (const char *)GRPC_SLICE_START_PTR(c->details.method));
	status = srv_grpc_dispatch(h, method, GRPC_SLICE_START_PTR(body), GRPC_SLICE_LENGTH(body), &out,
				   &out_len, err, sizeof(err));
	grpc_slice_unref(body);
	answer(c, status, out, out_len, err, 0);
	free(out);
done:
	atomic_fetch_sub(&h->body_used, charged);
	call_free(c);
	atomic_fetch_sub(&g->calls, 1);
	return NULL;
}

/* A call that cannot get a thread is answered at once on this one. */
static void refuse(struct call *c, const char *msg)
{
	answer(c, 413, NULL, 0, msg, 1);
	call_free(c);
}

static void *cq_thread(void *arg)
{
	struct srv_grpc *g = arg;
	char msg[SRV_ERR];

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		struct call *c;
		pthread_attr_t at;
		pthread_t t;

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
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
		if (!ev.success) {
			/* the server is shutting down: the call asked for never came */
			call_free(c);
			continue;
		}
		request_next(g);
		if (atomic_fetch_add(&g->calls, 1) >= g->lim.max_calls) {
			atomic_fetch_sub(&g->calls, 1);
			snprintf(msg, sizeof(msg), "%u calls are in flight, the most --max-connections allows; "
				 "retry", g->lim.max_calls);
			refuse(c, msg);
			continue;
		}
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, call_thread, c)) {
			atomic_fetch_sub(&g->calls, 1);
			refuse(c, "no thread for the call (out of memory); retry");
		}
		pthread_attr_destroy(&at);
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
	/* a few calls asked for ahead, so that a burst does not wait for each */
	for (i = 0; i < 8; i++) {
		if (request_next(g)) {
			snprintf(err, errlen, "gRPC: cannot wait for calls (out of memory)");
			goto fail_started;
		}
	}
	if (pthread_create(&g->thread, NULL, cq_thread, g)) {
		snprintf(err, errlen, "gRPC: no thread for the completion queue");
		goto fail_started;
	}
	g->thread_started = 1;
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
	unsigned cut = 0;

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
	if (!g->thread_started) {
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
	/* the calls' threads finish their cleanup after their status went out */
	while (atomic_load(&g->calls))
		nanosleep(&pause, NULL);
	grpc_server_destroy(g->server);
	grpc_completion_queue_shutdown(g->cq);
	if (g->thread_started)
		pthread_join(g->thread, NULL);
	else
		for (;;) {
			grpc_event ev = grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME),
								   NULL);

			if (ev.type == GRPC_QUEUE_SHUTDOWN)
				break;
			if (ev.type == GRPC_OP_COMPLETE && ev.tag != &g->shutdown_tag)
				call_free(ev.tag);
		}
	grpc_completion_queue_destroy(g->cq);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
	grpc_shutdown();
	return cut;
}
