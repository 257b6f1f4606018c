// SPDX-License-Identifier: MIT
/*
 * completion.c - finished stream buffers: handed to the user's handler
 * as they happen, or kept in a growable FIFO for ipu_stream_poll().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"

void ipu_deadline(struct timespec *ts, int64_t timeout_ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ns / 1000000000;
	ts->tv_nsec += timeout_ns % 1000000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

int ipu_cq_init(struct ipu_cq *q)
{
	pthread_condattr_t ca;

	memset(q, 0, sizeof(*q));
	if (pthread_mutex_init(&q->lock, NULL))
		return IPU_E_NOMEM;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_cond_init(&q->cv, &ca)) {
		pthread_condattr_destroy(&ca);
		pthread_mutex_destroy(&q->lock);
		return IPU_E_NOMEM;
	}
	pthread_condattr_destroy(&ca);
	return 0;
}

void ipu_cq_destroy(struct ipu_cq *q)
{
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cv);
	free(q->ring);
}

void ipu_cq_set_handler(struct ipu_cq *q, ipu_completion_fn fn, void *ctx)
{
	pthread_mutex_lock(&q->lock);
	q->fn = fn;
	q->ctx = ctx;
	pthread_mutex_unlock(&q->lock);
}

int ipu_cq_post(struct ipu_cq *q, const struct ipu_completion *c)
{
	ipu_completion_fn fn;
	void *ctx;

	pthread_mutex_lock(&q->lock);
	fn = q->fn;
	ctx = q->ctx;
	if (!fn) {
		if (q->count == q->cap) {
			uint32_t ncap = q->cap ? q->cap * 2 : 64, i;
			struct ipu_completion *n = malloc(ncap * sizeof(*n));

			if (!n) {
				pthread_mutex_unlock(&q->lock);
				return IPU_E_NOMEM;
			}
			for (i = 0; i < q->count; i++)
				n[i] = q->ring[(q->head + i) % q->cap];
			free(q->ring);
			q->ring = n;
			q->cap = ncap;
			q->head = 0;
		}
		q->ring[(q->head + q->count) % q->cap] = *c;
		q->count++;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->lock);
	if (fn)
		fn(ctx, c);
	return 0;
}

int ipu_cq_poll(struct ipu_cq *q, struct ipu_completion *out, unsigned max,
		int64_t timeout_ns)
{
	struct timespec dl;
	unsigned n = 0;

	if (timeout_ns > 0)
		ipu_deadline(&dl, timeout_ns);
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && timeout_ns != 0) {
		int rc = timeout_ns < 0 ? pthread_cond_wait(&q->cv, &q->lock)
					: pthread_cond_timedwait(&q->cv, &q->lock, &dl);
		if (rc == ETIMEDOUT)
			break;
	}
	while (n < max && q->count) {
		out[n++] = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	pthread_mutex_unlock(&q->lock);
	return (int)n;
}
