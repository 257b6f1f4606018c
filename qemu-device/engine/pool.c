// SPDX-License-Identifier: MIT
/*
 * pool.c - the engine's worker threads.
 *
 * A superstep (compute set or exchange) is a parallel-for over tile groups:
 * the caller publishes a job, every worker and the caller itself take items
 * from a shared atomic counter (so uneven tiles balance themselves), and
 * the caller returns when all items are done.  That return is the BSP
 * barrier between supersteps.  Workers spin briefly before sleeping so that
 * back-to-back supersteps do not pay a futex wake each.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "ipu/thread.h"
#include "engine_internal.h"

#define SPIN_ITERS 4000

struct ipu_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* new job or shutdown */
	pthread_cond_t done;		/* all workers finished the job */
	pthread_t *threads;
	uint32_t nthreads;		/* helper threads (workers - 1) */

	/* current job */
	ipu_pool_fn fn;
	void *ctx;
	uint32_t n;
	atomic_uint next;		/* next item to take */
	atomic_uint generation;		/* bumped per job */
	atomic_uint active;		/* helpers still inside the job */
	int shutdown;
};

struct worker_arg {
	struct ipu_pool *pool;
	uint32_t id;
};

static void take_items(struct ipu_pool *p, uint32_t worker)
{
	for (;;) {
		uint32_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);

		if (i >= p->n)
			break;
		p->fn(p->ctx, i, worker);
	}
}

static void *worker_main(void *argp)
{
	struct worker_arg *arg = argp;
	struct ipu_pool *p = arg->pool;
	uint32_t id = arg->id;
	unsigned seen = 0;

	free(arg);
	for (;;) {
		unsigned gen;
		int spins = 0;

		/* spin a little for the next job, then sleep */
		while ((gen = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen &&
		       spins < SPIN_ITERS) {
			spins++;
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
		if (gen == seen) {
			pthread_mutex_lock(&p->lock);
			while ((gen = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen &&
			       !p->shutdown)
				pthread_cond_wait(&p->wake, &p->lock);
			pthread_mutex_unlock(&p->lock);
		}
		if (gen == seen) /* shutdown without a new job */
			break;
		seen = gen;
		take_items(p, id);
		if (atomic_fetch_sub_explicit(&p->active, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&p->lock);
			pthread_cond_signal(&p->done);
			pthread_mutex_unlock(&p->lock);
		}
	}
	return NULL;
}

uint32_t ipu_pool_size(const struct ipu_pool *p)
{
	return p->nthreads + 1;
}

int ipu_pool_create(uint32_t workers, struct ipu_pool **out)
{
	struct ipu_pool *p;
	uint32_t i;

	*out = NULL;
	if (workers == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		workers = n > 0 ? (uint32_t)n : 1;
	}
	if (workers > 256)
		workers = 256;
	p = calloc(1, sizeof(*p));
	if (!p)
		return IPU_E_NOMEM;
	p->threads = calloc(workers, sizeof(*p->threads));
	if (!p->threads) {
		free(p);
		return IPU_E_NOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	for (i = 0; i + 1 < workers; i++) {
		struct worker_arg *a = malloc(sizeof(*a));

		if (a) {
			a->pool = p;
			a->id = i + 1;
		}
		if (!a || ipu_thread_create(&p->threads[i], worker_main, a)) {
			free(a);
			p->nthreads = i;
			ipu_pool_destroy(p);
			return IPU_E_NOMEM;
		}
		p->nthreads = i + 1;
	}
	*out = p;
	return 0;
}

void ipu_pool_run(struct ipu_pool *p, uint32_t n, ipu_pool_fn fn, void *ctx)
{
	if (n == 0)
		return;
	/* small jobs: waking helpers costs more than it saves */
	if (n == 1 || p->nthreads == 0) {
		uint32_t i;

		for (i = 0; i < n; i++)
			fn(ctx, i, 0);
		return;
	}
	p->fn = fn;
	p->ctx = ctx;
	p->n = n;
	atomic_store_explicit(&p->next, 0, memory_order_relaxed);
	atomic_store_explicit(&p->active, p->nthreads, memory_order_relaxed);
	pthread_mutex_lock(&p->lock);
	atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);

	take_items(p, 0);

	/* wait for helpers to leave the job (they may still hold an item) */
	{
		int spins = 0;

		while (atomic_load_explicit(&p->active, memory_order_acquire) && spins < SPIN_ITERS) {
			spins++;
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
	}
	if (atomic_load_explicit(&p->active, memory_order_acquire)) {
		pthread_mutex_lock(&p->lock);
		while (atomic_load_explicit(&p->active, memory_order_acquire))
			pthread_cond_wait(&p->done, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
}

void ipu_pool_destroy(struct ipu_pool *p)
{
	uint32_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->shutdown = 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	free(p->threads);
	free(p);
}
