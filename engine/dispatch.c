// SPDX-License-Identifier: MIT
/*
 * dispatch.c - whether a superstep runs on the calling thread or on the
 * worker pool, measured on this host rather than guessed.
 *
 * The helpers join a pool run about wake_ns after it starts (measured
 * when the engine is created, the median of a few runs; it grows with the
 * machine's load); with W workers a superstep of serial host time t takes about
 * wake_ns + t / W there, so the caller alone is faster while
 * t < wake_ns * W / (W - 1), and a pool run shorter than that same limit
 * was such a superstep.  The modelled cost gives the first guess;
 * the superstep's second execution (the first one pays the page faults
 * of fresh tile memory) is timed, and the choice it implies is kept for
 * every later execution, until the engine measures again (after
 * IPU_DISPATCH_RELEARN_RUNS programs: the machine's load changes).  Either way every tile's vertices and copies
 * run in the same order on one thread, so the results do not depend on
 * the choice.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"

#define WAKE_SAMPLES 7

uint64_t ipu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define JOIN_WAIT_NS 100000u	/* a helper later than this counts as this late */

struct wake_probe {
	uint64_t t0;
	_Atomic uint64_t last;		/* latest start of an item, ns after t0 */
	atomic_uint started;
	uint32_t n;
};

/* Each item waits (briefly) for all the others to start: it measures when the last helper joined. */
static void probe_item(void *ctx, uint32_t item, uint32_t worker)
{
	struct wake_probe *w = ctx;
	uint64_t t = ipu_now_ns() - w->t0, prev;

	(void)item;
	(void)worker;
	prev = atomic_load(&w->last);
	while (prev < t && !atomic_compare_exchange_weak(&w->last, &prev, t))
		;
	atomic_fetch_add(&w->started, 1);
	while (atomic_load(&w->started) < w->n && ipu_now_ns() - w->t0 < JOIN_WAIT_NS)
		;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t ipu_dispatch_wake_ns(struct ipu_pool *p)
{
	uint64_t t[WAKE_SAMPLES];
	uint32_t w = ipu_pool_size(p);
	int i;

	if (w < 2)
		return 0;
	for (i = 0; i < WAKE_SAMPLES; i++) {
		struct wake_probe pr = { .n = w };

		atomic_init(&pr.last, 0);
		atomic_init(&pr.started, 0);
		pr.t0 = ipu_now_ns();
		ipu_pool_run(p, w, probe_item, &pr);
		t[i] = atomic_load(&pr.started) < w ? JOIN_WAIT_NS : atomic_load(&pr.last);
	}
	qsort(t, WAKE_SAMPLES, sizeof(t[0]), cmp_u64);
	return t[WAKE_SAMPLES / 2];
}

void ipu_dispatch_learn(struct ipu_dispatch *d, int ran_inline, uint64_t ns, uint64_t wake_ns,
			uint32_t workers)
{
	uint64_t limit;

	if (d->mode || ++d->runs < 2)
		return;
	if (workers < 2) {
		d->mode = IPU_DISPATCH_INLINE;
		return;
	}
	/*
	 * Inline, ns is t; on the pool it is wake_ns + t / W: either way the
	 * caller alone wins below the same limit.
	 */
	(void)ran_inline;
	limit = wake_ns * workers / (workers - 1);
	d->mode = ns < limit ? IPU_DISPATCH_INLINE : IPU_DISPATCH_POOL;
}

void ipu_dispatch_relearn(struct ipu_engine *e)
{
	const struct ipu_exe *x = e->exe;

	e->wake_ns = ipu_dispatch_wake_ns(e->pool);
	e->runs_since_learn = 0;
	if (x && e->dsp)
		memset(e->dsp, 0, ((size_t)x->ncss + x->nxchs + x->nfplans + 1) * sizeof(*e->dsp));
}
