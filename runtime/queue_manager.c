// SPDX-License-Identifier: MIT
/*
 * queue_manager.c - the QueueManager: per-anchor SPSC rings of pointers to
 * user memory, moved into the device's stream FIFOs before Main is started,
 * by the producer itself (the default) or by a feeder thread fed through a
 * ring of run tokens (IPURT_QM_FEEDER=1, kept to measure the difference).
 *
 * Runs are reported by libipu's run handler (from the device's thread), in
 * the order they were started; a small mutex-protected FIFO of in-flight
 * tokens pairs each report with its request.
 *
 * Producers (any thread) enqueue under one mutex, so each ring has one
 * producer at a time and every request's buffers are in the same order on
 * every ring; the device consumes each stream in FIFO order, so run k gets
 * request k's buffers without any per-request bookkeeping on the device
 * side.  This is also what makes conditional execution work: a request of
 * a fused model queues only its subgraph's anchors, and the device only
 * reads the streams of the branch the index selects.
 *
 * Recovery (after a timeout) bumps a generation number, aborts the device
 * (cancelling running and queued runs and buffers) and drops what is still
 * in the anchor rings; the feeder cancels tokens of an older generation.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/thread.h"
#include "ipu/ringbuffer.h"
#include "rt_internal.h"

struct qm_token {
	void *tag;
	uint64_t gen;
	uint64_t seq;
	struct qm_token *next;
};

struct ipurt_queue_manager {
	struct ipu_device *dev;
	const struct ipuef_metadata *m;
	uint32_t main_prog;
	struct ipurt_ring **rings;	/* per anchor; NULL if Main does not use it */
	uint64_t *bytes;
	uint32_t depth;
	struct ipurt_ring *runs;	/* producers -> feeder */
	pthread_mutex_t ilock;		/* in-flight FIFO */
	pthread_cond_t idle;		/* in-flight FIFO became empty */
	struct qm_token *head, *tail;
	pthread_mutex_t plock;		/* producers, recovery */
	pthread_mutex_t flock;		/* feeder's step, recovery */
	_Atomic uint64_t gen;
	_Atomic int dead;		/* rt_qm_fail: nothing more runs */
	ipurt_run_done_fn done;
	rt_run_dispatched_fn dispatched;	/* NULL: not wanted */
	void *done_ctx;
	pthread_t feeder;
	int use_feeder;			/* a feeder thread, else the producer feeds */
	int ready;			/* fully created: destroy must drain */
	int closed;			/* under plock: destroy has begun */
};

/*
 * Whether a feeder thread moves requests from the rings to the device.
 * libipu's submit and run only queue work, so the producer does it itself
 * under the producers' lock: that saves a thread hand-off per request,
 * which on a busy host costs a scheduling slot each (bench/bench_runner.md:
 * p50 13-18 us without the feeder against 48-70 us with it).
 */
#define QM_FEEDER_DEFAULT 0

static void finish(struct ipurt_queue_manager *qm, struct qm_token *t, int status,
		   const char *msg)
{
	qm->done(qm->done_ctx, t->tag, status, msg);
	free(t);
}

static void drain_anchor_rings(struct ipurt_queue_manager *qm)
{
	uint32_t i;
	void *buf;

	for (i = 0; i < qm->m->num_anchors; i++)
		while (qm->rings[i] && ipurt_ring_try_pop(qm->rings[i], &buf) == IPURT_RING_OK)
			;
}

/*
 * Start over on the device (flock held): cancel every run and buffer it
 * holds and drop what the rings hold, under a new generation.  After a run
 * or a stream buffer was refused, part of a request may be in the device's
 * stream FIFOs and the rest in the rings; left there, it would be read by
 * the next request's run, or fill the rings until producers block forever.
 */
static void clear_locked(struct ipurt_queue_manager *qm)
{
	atomic_fetch_add(&qm->gen, 1);
	ipu_abort(qm->dev);
	drain_anchor_rings(qm);
}

/*
 * Run Main for token t on this thread if the device is idle (flock held,
 * t's buffers submitted).  Returns IPU_E_BUSY, with nothing changed, if it
 * was not: the caller queues the run instead.  Otherwise t was reported
 * (and freed) by run_finished on this thread, unless the run could not
 * start (the error is returned).
 */
static int run_here(struct ipurt_queue_manager *qm, struct qm_token *t, int *reported)
{
	int rc;

	/*
	 * Only with nothing of ours in flight: t, first in the FIFO before the
	 * run starts, is the one its report pairs with.  seq 0 matches no run
	 * until ipu_run_here sets it, on this thread, before the program starts.
	 */
	pthread_mutex_lock(&qm->ilock);
	if (qm->head) {
		pthread_mutex_unlock(&qm->ilock);
		return IPU_E_BUSY;
	}
	t->seq = 0;
	t->next = NULL;
	qm->head = qm->tail = t;
	pthread_mutex_unlock(&qm->ilock);
	/* "handed to the device": the report must come before the run's */
	if (qm->dispatched)
		qm->dispatched(qm->done_ctx, t->tag);
	*reported = 1;
	rc = ipu_run_here(qm->dev, qm->main_prog, &t->seq);
	if (rc) {
		/* not started, so not reported (seq 0): t is still the only token */
		pthread_mutex_lock(&qm->ilock);
		qm->head = qm->tail = NULL;
		pthread_cond_broadcast(&qm->idle);
		pthread_mutex_unlock(&qm->ilock);
	}
	return rc;
}

/*
 * Move what the anchor rings hold into the device's stream FIFOs and start
 * Main for token t (on this thread if `here` and the device is idle).
 * Returns t if it must be finished with *status (the caller does that with
 * no lock held), else NULL: it is in flight, or done.
 */
static struct qm_token *feed(struct ipurt_queue_manager *qm, struct qm_token *t, int here,
			     int *status)
{
	uint32_t i;
	int rc = 0, reported = 0;
	void *buf;

	pthread_mutex_lock(&qm->flock);
	if (t->gen != atomic_load(&qm->gen) || atomic_load(&qm->dead)) {
		pthread_mutex_unlock(&qm->flock);
		*status = IPURT_E_CANCELLED;
		return t;
	}
	for (i = 0; i < qm->m->num_anchors && !rc; i++) {
		while (qm->rings[i] && ipurt_ring_try_pop(qm->rings[i], &buf) == IPURT_RING_OK) {
			rc = ipu_stream_submit(qm->dev, qm->m->anchors[i].stream_id, buf,
					       qm->bytes[i], 0);
			if (rc)
				break;
		}
	}
	if (!rc && here) {
		rc = run_here(qm, t, &reported);
		if (rc != IPU_E_BUSY) {
			if (rc)
				clear_locked(qm);
			pthread_mutex_unlock(&qm->flock);
			*status = rc;
			return rc ? t : NULL;
		}
		rc = 0;
	}
	if (!rc) {
		/* in the FIFO before the run can finish: the handler pairs them */
		pthread_mutex_lock(&qm->ilock);
		rc = ipu_run(qm->dev, qm->main_prog, &t->seq);
		/* under ilock: the run cannot be reported done before this */
		if (!rc && qm->dispatched && !reported)
			qm->dispatched(qm->done_ctx, t->tag);
		if (!rc) {
			t->next = NULL;
			if (qm->tail)
				qm->tail->next = t;
			else
				qm->head = t;
			qm->tail = t;
		}
		pthread_mutex_unlock(&qm->ilock);
	}
	/* the producer feeding holds plock: the rings hold only this request */
	if (rc && !qm->use_feeder)
		clear_locked(qm);
	pthread_mutex_unlock(&qm->flock);
	*status = rc;
	return rc ? t : NULL;
}

static void finish_failed(struct ipurt_queue_manager *qm, struct qm_token *t, int status)
{
	finish(qm, t, status, status == IPURT_E_CANCELLED ? "cancelled by a timeout recovery" :
			      ipu_strerror(status));
}

static void *feeder_main(void *arg)
{
	struct ipurt_queue_manager *qm = arg;
	void *item;
	int status;

	while (ipurt_ring_pop(qm->runs, &item, -1) == IPURT_RING_OK) {
		struct qm_token *t = feed(qm, item, 0, &status);

		if (t && status != IPURT_E_CANCELLED)
			ipurt_qm_recover(qm);
		if (t)
			finish_failed(qm, t, status);
	}
	return NULL;
}

/*
 * Buffer completions carry nothing a request needs (the run's status
 * covers them); taking them keeps libipu from queueing them for a poll
 * that never comes.
 */
static void buffer_finished(void *ctx, const struct ipu_completion *c)
{
	(void)ctx;
	(void)c;
}

/* libipu's run handler: the oldest in-flight token is this run's. */
static void run_finished(void *ctx, uint64_t seq, int status, const char *msg)
{
	struct ipurt_queue_manager *qm = ctx;
	struct qm_token *t;

	pthread_mutex_lock(&qm->ilock);
	t = qm->head;
	if (!t || t->seq != seq) { /* a run someone else started (e.g. Save) */
		pthread_mutex_unlock(&qm->ilock);
		return;
	}
	qm->head = t->next;
	if (!qm->head)
		qm->tail = NULL;
	pthread_mutex_unlock(&qm->ilock);
	finish(qm, t, status == IPU_E_CANCELLED ? IPURT_E_CANCELLED : status, msg);
	pthread_mutex_lock(&qm->ilock);
	if (!qm->head)
		pthread_cond_broadcast(&qm->idle);
	pthread_mutex_unlock(&qm->ilock);
}

/* IPURT_QM_FEEDER=1|0 forces one design (bench/bench_runner compares them). */
static int feeder_wanted(void)
{
	const char *v = getenv("IPURT_QM_FEEDER");

	return v && *v ? strcmp(v, "0") != 0 : QM_FEEDER_DEFAULT;
}

int ipurt_session_create_queue_manager(struct ipurt_session *s, uint32_t depth,
				       ipurt_run_done_fn done, void *done_ctx,
				       struct ipurt_queue_manager **out, char *err,
				       size_t errlen)
{
	return rt_qm_create(s, depth, done, NULL, done_ctx, out, err, errlen);
}

int rt_qm_create(struct ipurt_session *s, uint32_t depth, ipurt_run_done_fn done,
		 rt_run_dispatched_fn dispatched, void *done_ctx,
		 struct ipurt_queue_manager **out, char *err, size_t errlen)
{
	const struct ipuef_file *f = ipurt_session_file(s);
	struct ipurt_queue_manager *qm;
	int prog = ipurt_executable_program(ipurt_session_executable(s), "main");
	uint32_t i;
	int rc = 0;

	*out = NULL;
	if (!done || depth < 2 || depth > (1u << 20) || (depth & (depth - 1))) {
		return ipu_errorf(err, errlen, IPURT_E_INVAL, "ring buffer size %u must be a power of two in 2..%u", depth,
			1u << 20);
	}
	if (prog < 0) {
		return ipu_errorf(err, errlen, IPURT_E_MODEL, "the model has no 'main' program");
	}
	qm = calloc(1, sizeof(*qm));
	if (!qm) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	qm->dev = ipurt_executable_device(ipurt_session_executable(s));
	qm->m = ipuef_metadata(f);
	qm->main_prog = (uint32_t)prog;
	qm->depth = depth;
	qm->done = done;
	qm->dispatched = dispatched;
	qm->done_ctx = done_ctx;
	qm->use_feeder = feeder_wanted();
	pthread_mutex_init(&qm->plock, NULL);
	pthread_mutex_init(&qm->flock, NULL);
	pthread_mutex_init(&qm->ilock, NULL);
	pthread_cond_init(&qm->idle, NULL);
	qm->rings = calloc(qm->m->num_anchors ? qm->m->num_anchors : 1, sizeof(*qm->rings));
	qm->bytes = calloc(qm->m->num_anchors ? qm->m->num_anchors : 1, sizeof(*qm->bytes));
	if (!qm->rings || !qm->bytes)
		rc = IPURT_E_NOMEM;
	for (i = 0; !rc && i < qm->m->num_anchors; i++) {
		const struct ipuef_anchor *a = &qm->m->anchors[i];

		qm->bytes[i] = ipuef_anchor_bytes(a);
		if (!(a->programs & (1ull << qm->main_prog)))
			continue;
		if (ipurt_ring_create(depth, &qm->rings[i]))
			rc = IPURT_E_NOMEM;
	}
	if (!rc && ipurt_ring_create(depth, &qm->runs))
		rc = IPURT_E_NOMEM;
	if (!rc && ipu_set_run_handler(qm->dev, run_finished, qm))
		rc = IPURT_E_INVAL;
	if (!rc)
		ipu_set_completion_handler(qm->dev, buffer_finished, NULL);
	if (!rc && qm->use_feeder && ipu_thread_create(&qm->feeder, feeder_main, qm)) {
		ipu_set_run_handler(qm->dev, NULL, NULL);
		rc = IPURT_E_NOMEM;
	}
	if (!rc)
		qm->ready = 1;
	if (rc) {
		ipu_errorf(err, errlen, rc, "out of memory creating the queue manager");
		ipurt_qm_destroy(qm);
		return rc;
	}
	*out = qm;
	return 0;
}

void ipurt_qm_destroy(struct ipurt_queue_manager *qm)
{
	uint32_t i;

	if (!qm)
		return;
	if (qm->ready) {
		/* cancel what has not run, stop what runs, let the threads drain */
		pthread_mutex_lock(&qm->plock);
		qm->closed = 1;
		ipurt_ring_close(qm->runs);
		pthread_mutex_lock(&qm->flock);
		atomic_fetch_add(&qm->gen, 1);
		ipu_abort(qm->dev);
		drain_anchor_rings(qm);
		pthread_mutex_unlock(&qm->flock);
		pthread_mutex_unlock(&qm->plock);
		if (qm->use_feeder)
			pthread_join(qm->feeder, NULL);
		/* every started run is reported, finished or cancelled */
		pthread_mutex_lock(&qm->ilock);
		while (qm->head)
			pthread_cond_wait(&qm->idle, &qm->ilock);
		pthread_mutex_unlock(&qm->ilock);
		ipu_set_run_handler(qm->dev, NULL, NULL);
		ipu_set_completion_handler(qm->dev, NULL, NULL);
	}
	for (i = 0; qm->rings && i < qm->m->num_anchors; i++)
		ipurt_ring_destroy(qm->rings[i]);
	ipurt_ring_destroy(qm->runs);
	free(qm->rings);
	free(qm->bytes);
	pthread_mutex_destroy(&qm->plock);
	pthread_mutex_destroy(&qm->flock);
	pthread_mutex_destroy(&qm->ilock);
	pthread_cond_destroy(&qm->idle);
	free(qm);
}

static int enqueue(struct ipurt_queue_manager *qm, const uint32_t *anchors,
		   void *const *buffers, uint32_t n, void *run_tag, int here)
{
	struct qm_token *t;
	uint32_t i;
	int rc = 0, status;

	for (i = 0; i < n; i++)
		if (anchors[i] >= qm->m->num_anchors || !qm->rings[anchors[i]] || !buffers[i])
			return IPURT_E_INVAL;
	if (atomic_load(&qm->dead))
		return IPURT_E_CLOSED;
	t = malloc(sizeof(*t));
	if (!t)
		return IPURT_E_NOMEM;
	t->tag = run_tag;
	pthread_mutex_lock(&qm->plock);
	t->gen = atomic_load(&qm->gen);
	if (qm->closed)
		rc = IPURT_E_CLOSED;
	for (i = 0; i < n && !rc; i++)
		if (ipurt_ring_push(qm->rings[anchors[i]], buffers[i], -1) != IPURT_RING_OK)
			rc = IPURT_E_CLOSED;
	if (!rc && qm->use_feeder && ipurt_ring_push(qm->runs, t, -1) != IPURT_RING_OK)
		rc = IPURT_E_CLOSED;
	if (!rc && !qm->use_feeder) {
		/* the rings hold only this request's buffers now: feed them here */
		struct qm_token *failed = feed(qm, t, here, &status);

		pthread_mutex_unlock(&qm->plock);
		if (failed)
			finish_failed(qm, failed, status);
		return 0;
	}
	pthread_mutex_unlock(&qm->plock);
	if (rc)
		free(t);
	return rc;
}

int ipurt_qm_enqueue(struct ipurt_queue_manager *qm, const uint32_t *anchors,
		     void *const *buffers, uint32_t n, void *run_tag)
{
	return enqueue(qm, anchors, buffers, n, run_tag, 0);
}

int rt_qm_enqueue_here(struct ipurt_queue_manager *qm, const uint32_t *anchors,
		       void *const *buffers, uint32_t n, void *run_tag)
{
	/* a feeder thread feeds every run: there is nothing to run here */
	return enqueue(qm, anchors, buffers, n, run_tag, !qm->use_feeder);
}

void ipurt_qm_recover(struct ipurt_queue_manager *qm)
{
	/* tokens of the old generation are reported cancelled */
	pthread_mutex_lock(&qm->plock);
	pthread_mutex_lock(&qm->flock);
	clear_locked(qm);
	pthread_mutex_unlock(&qm->flock);
	pthread_mutex_unlock(&qm->plock);
}

int rt_qm_reload(struct ipurt_queue_manager *qm, struct ipurt_session *s, char *err,
		 size_t errlen)
{
	int rc;

	/* Load's run is not in the in-flight FIFO: run_finished passes it by */
	pthread_mutex_lock(&qm->plock);
	pthread_mutex_lock(&qm->flock);
	clear_locked(qm);
	rc = ipurt_session_reload(s, err, errlen);
	pthread_mutex_unlock(&qm->flock);
	pthread_mutex_unlock(&qm->plock);
	return rc;
}

void rt_qm_fail(struct ipurt_queue_manager *qm)
{
	uint32_t i;

	/*
	 * Without the producers' lock: a producer may be asleep on a full
	 * ring of a device that no longer drains it, holding that lock.
	 * Closing the rings wakes it (its enqueue fails); the feeder cancels
	 * every token still queued and then stops.
	 */
	atomic_store(&qm->dead, 1);
	atomic_fetch_add(&qm->gen, 1);
	for (i = 0; i < qm->m->num_anchors; i++)
		if (qm->rings[i])
			ipurt_ring_close(qm->rings[i]);
	ipurt_ring_close(qm->runs);
	pthread_mutex_lock(&qm->flock);
	ipu_abort(qm->dev);
	pthread_mutex_unlock(&qm->flock);
}
