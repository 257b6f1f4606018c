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
 *
 * The caller waits only for the helpers that joined the job: once it has
 * taken the last item it closes the job, and a helper that had not joined
 * by then (asleep, or descheduled on a busy machine) stays out instead of
 * making every superstep wait for it to be scheduled again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "ipu/thread.h"
#include "engine_internal.h"

#define SPIN_ITERS 4000

/*
 * join: the open job's generation (high 32 bits), JOB_CLOSED, and the
 * number of helpers inside it (JOB_COUNT bits).
 */
#define JOB_CLOSED 0x80000000u
#define JOB_COUNT 0x7fffffffu

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
	_Atomic uint64_t join;		/* who is inside the job (JOB_*) */
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

/* Enter job gen if it is still open; the caller then waits for us. */
static int join_job(struct ipu_pool *p, unsigned gen)
{
	uint64_t j = atomic_load_explicit(&p->join, memory_order_acquire);

	for (;;) {
		if ((uint32_t)(j >> 32) != (uint32_t)gen || (j & JOB_CLOSED))
			return 0;
		if (atomic_compare_exchange_weak_explicit(&p->join, &j, j + 1,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return 1;
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
		if (!join_job(p, gen))
			continue;	/* closed already: the caller did it all */
		take_items(p, id);
		{
			uint64_t old = atomic_fetch_sub_explicit(&p->join, 1,
								 memory_order_acq_rel);

			if ((old & JOB_CLOSED) && (old & JOB_COUNT) == 1) {
				pthread_mutex_lock(&p->lock);
				pthread_cond_signal(&p->done);
				pthread_mutex_unlock(&p->lock);
			}
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
	unsigned gen;
	int spins;

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
	gen = atomic_load_explicit(&p->generation, memory_order_relaxed) + 1;
	atomic_store_explicit(&p->next, 0, memory_order_relaxed);
	/* open the job before announcing it: a helper that sees gen can join */
	atomic_store_explicit(&p->join, (uint64_t)gen << 32, memory_order_release);
	pthread_mutex_lock(&p->lock);
	atomic_store_explicit(&p->generation, gen, memory_order_release);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);

	take_items(p, 0);

	/*
	 * Every item is taken: close the job, then wait for the helpers inside
	 * (they may still hold an item).  fn, ctx and n stay valid for them
	 * until then.
	 */
	if (!(atomic_fetch_or_explicit(&p->join, JOB_CLOSED, memory_order_acq_rel) & JOB_COUNT))
		return;
	for (spins = 0; spins < SPIN_ITERS; spins++) {
		if (!(atomic_load_explicit(&p->join, memory_order_acquire) & JOB_COUNT))
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	pthread_mutex_lock(&p->lock);
	while (atomic_load_explicit(&p->join, memory_order_acquire) & JOB_COUNT)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
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
