// SPDX-License-Identifier: MIT
/*
 * bench_ringbuffer - items per second through the runtime's SPSC
 * RingBuffer and, in the same run and under the same conditions, through
 * ConcurrencyKit's ck_ring SPSC (the yardstick), reported as a ratio.
 *
 * One producer and one consumer thread (pinned to two different CPUs when
 * there are two) move ITEMS pointers through a ring of CAPACITY slots; the
 * consumer checks the sequence.  Both rings use the same back-off when
 * full/empty (pause, then yield: the CPUs may be shared).  Runs alternate
 * between the implementations; best and median of each are printed.
 *
 *   bench_ringbuffer [ITEMS [CAPACITY [RUNS]]]   (defaults 20M, 1024, 5)
 */
#include <ck_ring.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/ringbuffer.h"

enum impl { IPURT_TRY, CK_SPSC, IPURT_BLOCKING, NIMPL };

static const char *const impl_name[NIMPL] = {
	"ipurt_ring try_push/try_pop",
	"ck_ring enqueue/dequeue_spsc",
	"ipurt_ring push/pop (blocking)",
};

struct run {
	enum impl impl;
	uint64_t items;
	struct ipurt_ring *r;
	struct ck_ring ck;
	struct ck_ring_buffer *ckbuf;
	int cpu[2];
	uint64_t bad;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void backoff(unsigned *fails)
{
	if (++*fails % 64 == 0)
		sched_yield();
	else
		__builtin_ia32_pause();
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *producer(void *arg)
{
	struct run *r = arg;
	unsigned fails = 0;

	pin(r->cpu[0]);
	for (uint64_t i = 1; i <= r->items; i++) {
		void *p = (void *)(uintptr_t)i;

		switch (r->impl) {
		case IPURT_TRY:
			while (ipurt_ring_try_push(r->r, p))
				backoff(&fails);
			break;
		case CK_SPSC:
			while (!ck_ring_enqueue_spsc(&r->ck, r->ckbuf, p))
				backoff(&fails);
			break;
		default:
			if (ipurt_ring_push(r->r, p, -1))
				return NULL;
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct run *r = arg;
	unsigned fails = 0;

	pin(r->cpu[1]);
	for (uint64_t i = 1; i <= r->items; i++) {
		void *p = NULL;

		switch (r->impl) {
		case IPURT_TRY:
			while (ipurt_ring_try_pop(r->r, &p))
				backoff(&fails);
			break;
		case CK_SPSC:
			while (!ck_ring_dequeue_spsc(&r->ck, r->ckbuf, &p))
				backoff(&fails);
			break;
		default:
			if (ipurt_ring_pop(r->r, &p, -1))
				return NULL;
		}
		r->bad += (uintptr_t)p != i;
	}
	return NULL;
}

/* Items per second of one run, 0 on a failure. */
static double one_run(enum impl impl, uint64_t items, uint32_t cap,
		      const int cpu[2])
{
	struct run r = { .impl = impl, .items = items, .cpu = { cpu[0], cpu[1] } };
	pthread_t pt, ct;
	int64_t t0, t1;

	if (impl == CK_SPSC) {
		r.ckbuf = calloc(cap, sizeof(*r.ckbuf));
		if (!r.ckbuf)
			return 0;
		ck_ring_init(&r.ck, cap);
	} else if (ipurt_ring_create(cap, &r.r)) {
		return 0;
	}
	t0 = now_ns();
	if (pthread_create(&ct, NULL, consumer, &r) ||
	    pthread_create(&pt, NULL, producer, &r)) {
		fprintf(stderr, "bench_ringbuffer: pthread_create failed\n");
		exit(1);
	}
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	t1 = now_ns();
	free(r.ckbuf);
	ipurt_ring_destroy(r.r);
	if (r.bad) {
		fprintf(stderr, "bench_ringbuffer: %s: %llu items out of order\n",
			impl_name[impl], (unsigned long long)r.bad);
		return 0;
	}
	return (double)items * 1e9 / (double)(t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	uint64_t items = argc > 1 ? strtoull(argv[1], NULL, 0) : 20000000;
	uint32_t cap = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 1024;
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	double res[NIMPL][64], best[NIMPL], med[NIMPL];
	int cpu[2] = { -1, -1 }, n = 0;
	cpu_set_t set;

	if (runs < 1 || runs > 64 || !items || cap < 2 || (cap & (cap - 1))) {
		fprintf(stderr,
			"usage: bench_ringbuffer [ITEMS [CAPACITY(power of 2) [RUNS(1-64)]]]\n");
		return 2;
	}
	if (!sched_getaffinity(0, sizeof(set), &set))
		for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
			if (CPU_ISSET(c, &set))
				cpu[n++] = c;
	if (n < 2)
		cpu[0] = cpu[1] = -1;
	printf("RingBuffer SPSC: %llu items per run, capacity %u, %d runs, ",
	       (unsigned long long)items, cap, runs);
	if (cpu[0] >= 0)
		printf("producer on CPU %d, consumer on CPU %d\n", cpu[0], cpu[1]);
	else
		printf("threads not pinned (one CPU)\n");
	for (int k = 0; k < runs; k++)
		for (int i = 0; i < NIMPL; i++) {
			res[i][k] = one_run((enum impl)i, items, cap, cpu);
			if (res[i][k] == 0)
				return 1;
		}
	for (int i = 0; i < NIMPL; i++) {
		qsort(res[i], (size_t)runs, sizeof(double), cmp_double);
		best[i] = res[i][runs - 1];
		med[i] = res[i][runs / 2];
		printf("  %-32s best %7.1f M items/s, median %7.1f\n",
		       impl_name[i], best[i] / 1e6, med[i] / 1e6);
	}
	printf("ipurt_ring / ck_ring (non-blocking): %.2fx best, %.2fx median\n",
	       best[IPURT_TRY] / best[CK_SPSC], med[IPURT_TRY] / med[CK_SPSC]);
	return 0;
}
