// SPDX-License-Identifier: MIT
/*
 * ringbuffer.c - lock-free SPSC ring of pointers (see ipu/ringbuffer.h).
 *
 * Memory ordering: the producer writes the slot, then publishes it with a
 * store of head (release or seq_cst, see below); the consumer loads
 * head with acquire (or stronger) before reading the slot.  Symmetrically
 * the consumer frees a slot with a store of tail that the producer loads
 * before reusing the slot.
 *
 * Sleeping: a side that wants to sleep reads its futex word (seq), raises
 * its waiting flag and then checks the ring again; the other side, after
 * publishing its index, reads the flag.  This is Dekker's pattern: either
 * the sleeper sees the new index or the waker sees the flag (and bumps seq,
 * so a futex_wait that has not started yet returns at once).  It needs a
 * full barrier on both sides.  The hot side would pay for it on every
 * push and pop, so when the kernel offers membarrier(PRIVATE_EXPEDITED)
 * the barrier is made asymmetric: the hot side only stops the compiler,
 * and the side about to sleep (already paying for a futex syscall) calls
 * membarrier(), which runs a full barrier on every CPU running one of our
 * threads.  Without membarrier the index stores, refreshing loads and flag
 * accesses are seq_cst (one locked store per operation on x86).  Both use
 * C11 atomics throughout, so ThreadSanitizer understands the code.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipu/ringbuffer.h"
#include "ringbuffer_internal.h"

#define CACHE_LINE 64
#define SPIN_TRIES 256
#define YIELD_TRIES 16

struct ipurt_ring {
	/* Written by the producer only. */
	alignas(CACHE_LINE) _Atomic uint32_t head;
	uint32_t cached_tail;
	/* Written by the consumer only. */
	alignas(CACHE_LINE) _Atomic uint32_t tail;
	uint32_t cached_head;
	/* Sleep/wake state: read on every operation, written rarely. */
	alignas(CACHE_LINE) _Atomic uint32_t cons_waiting;
	_Atomic uint32_t prod_waiting;
	_Atomic uint32_t closed;
	_Atomic uint32_t cons_seq;	/* futex word the consumer sleeps on */
	_Atomic uint32_t prod_seq;	/* futex word the producer sleeps on */
	/* Read-only after creation. */
	alignas(CACHE_LINE) uint32_t mask;
	uint32_t capacity;
	uint32_t asym;		/* membarrier available: light hot side */
	void **slots;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void futex_wait(_Atomic uint32_t *word, uint32_t val,
		       const struct timespec *rel)
{
	/* EINTR/EAGAIN/ETIMEDOUT all mean: look again. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, rel,
		NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
		NULL, 0);
}

/* Store our index and make it visible before we look at the peer's
 * waiting flag (see the comment at the top). */
static inline void publish(const struct ipurt_ring *r, _Atomic uint32_t *idx,
			   uint32_t v)
{
	if (r->asym) {
		atomic_store_explicit(idx, v, memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
	} else {
		atomic_store_explicit(idx, v, memory_order_seq_cst);
	}
}

static inline void wake(const struct ipurt_ring *r, _Atomic uint32_t *waiting,
			_Atomic uint32_t *seq)
{
	/* The exchange makes one waker per sleep pay for the syscall; the
	 * sleeper raises the flag again before it sleeps again. */
	if (atomic_load_explicit(waiting, r->asym ? memory_order_relaxed
						  : memory_order_seq_cst) &&
	    atomic_exchange_explicit(waiting, 0, memory_order_relaxed)) {
		atomic_fetch_add_explicit(seq, 1, memory_order_release);
		futex_wake_all(seq);
	}
}

/* The sleeper's half of the asymmetric barrier. */
static void heavy_barrier(const struct ipurt_ring *r)
{
	if (r->asym)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

int ipurt_ring_create_at(uint32_t capacity, uint32_t start, int symmetric,
			 struct ipurt_ring **out)
{
	struct ipurt_ring *r;

	if (!out)
		return IPURT_RING_INVAL;
	*out = NULL;
	if (capacity < 2 || capacity > IPURT_RING_MAX_CAPACITY ||
	    (capacity & (capacity - 1)))
		return IPURT_RING_INVAL;
	r = aligned_alloc(CACHE_LINE, sizeof(*r));
	if (!r)
		return IPURT_RING_NOMEM;
	memset(r, 0, sizeof(*r));
	r->slots = calloc(capacity, sizeof(*r->slots));
	if (!r->slots) {
		free(r);
		return IPURT_RING_NOMEM;
	}
	r->capacity = capacity;
	r->mask = capacity - 1;
	atomic_init(&r->head, start);
	atomic_init(&r->tail, start);
	r->cached_head = r->cached_tail = start;
	/* Registering is per process and idempotent; if the kernel (or a
	 * seccomp filter) refuses, this ring uses symmetric barriers. */
	r->asym = !symmetric && syscall(SYS_membarrier,
			  MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	*out = r;
	return IPURT_RING_OK;
}

int ipurt_ring_create(uint32_t capacity, struct ipurt_ring **out)
{
	return ipurt_ring_create_at(capacity, 0, 0, out);
}

void ipurt_ring_destroy(struct ipurt_ring *r)
{
	if (!r)
		return;
	free(r->slots);
	free(r);
}

int ipurt_ring_try_push(struct ipurt_ring *r, void *item)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (atomic_load_explicit(&r->closed, memory_order_relaxed))
		return IPURT_RING_CLOSED;
	if (h - r->cached_tail >= r->capacity) {
		r->cached_tail = atomic_load_explicit(&r->tail,
						      memory_order_seq_cst);
		if (h - r->cached_tail >= r->capacity)
			return IPURT_RING_AGAIN;
	}
	r->slots[h & r->mask] = item;
	publish(r, &r->head, h + 1);
	wake(r, &r->cons_waiting, &r->cons_seq);
	return IPURT_RING_OK;
}

int ipurt_ring_try_pop(struct ipurt_ring *r, void **item)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t == r->cached_head) {
		r->cached_head = atomic_load_explicit(&r->head,
						      memory_order_seq_cst);
		if (t == r->cached_head) {
			if (!atomic_load_explicit(&r->closed,
						  memory_order_seq_cst))
				return IPURT_RING_AGAIN;
			/* Closed: deliver what was pushed before close. */
			r->cached_head = atomic_load_explicit(
				&r->head, memory_order_seq_cst);
			if (t == r->cached_head)
				return IPURT_RING_CLOSED;
		}
	}
	*item = r->slots[t & r->mask];
	publish(r, &r->tail, t + 1);
	wake(r, &r->prod_waiting, &r->prod_seq);
	return IPURT_RING_OK;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Retry op until it stops returning AGAIN, spinning first and then
 * sleeping on seq with the waiting flag raised.
 */
static int wait_for(struct ipurt_ring *r, int (*op)(struct ipurt_ring *, void *),
		    void *arg, _Atomic uint32_t *waiting, _Atomic uint32_t *seq,
		    int64_t timeout_ns)
{
	int64_t deadline = 0;
	int rc = op(r, arg);

	if (rc != IPURT_RING_AGAIN)
		return rc;
	if (timeout_ns == 0)
		return IPURT_RING_TIMEOUT;
	if (timeout_ns > 0)
		deadline = now_ns() + timeout_ns;
	for (int i = 0; i < SPIN_TRIES + YIELD_TRIES; i++) {
		/* Pause first; then give the CPU away, which is what lets a
		 * peer sharing our core make progress without a sleep. */
		if (i < SPIN_TRIES)
			cpu_relax();
		else
			sched_yield();
		rc = op(r, arg);
		if (rc != IPURT_RING_AGAIN)
			return rc;
	}
	for (;;) {
		uint32_t s = atomic_load_explicit(seq, memory_order_acquire);
		struct timespec rel, *relp = NULL;

		atomic_store_explicit(waiting, 1, memory_order_seq_cst);
		heavy_barrier(r);
		rc = op(r, arg);
		if (rc != IPURT_RING_AGAIN)
			break;
		if (timeout_ns > 0) {
			int64_t left = deadline - now_ns();

			if (left <= 0) {
				rc = IPURT_RING_TIMEOUT;
				break;
			}
			rel.tv_sec = left / 1000000000;
			rel.tv_nsec = left % 1000000000;
			relp = &rel;
		}
		futex_wait(seq, s, relp);
	}
	atomic_store_explicit(waiting, 0, memory_order_relaxed);
	return rc;
}

static int push_op(struct ipurt_ring *r, void *item)
{
	return ipurt_ring_try_push(r, item);
}

static int pop_op(struct ipurt_ring *r, void *item)
{
	return ipurt_ring_try_pop(r, item);
}

int ipurt_ring_push(struct ipurt_ring *r, void *item, int64_t timeout_ns)
{
	return wait_for(r, push_op, item, &r->prod_waiting, &r->prod_seq,
			timeout_ns);
}

int ipurt_ring_pop(struct ipurt_ring *r, void **item, int64_t timeout_ns)
{
	return wait_for(r, pop_op, item, &r->cons_waiting, &r->cons_seq,
			timeout_ns);
}

void ipurt_ring_close(struct ipurt_ring *r)
{
	atomic_store_explicit(&r->closed, 1, memory_order_seq_cst);
	atomic_fetch_add_explicit(&r->cons_seq, 1, memory_order_seq_cst);
	atomic_fetch_add_explicit(&r->prod_seq, 1, memory_order_seq_cst);
	futex_wake_all(&r->cons_seq);
	futex_wake_all(&r->prod_seq);
}

int ipurt_ring_is_closed(const struct ipurt_ring *r)
{
	return (int)atomic_load_explicit(&r->closed, memory_order_acquire);
}

uint32_t ipurt_ring_capacity(const struct ipurt_ring *r)
{
	return r->capacity;
}

uint32_t ipurt_ring_size(const struct ipurt_ring *r)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t n = h - t;

	return n > r->capacity ? r->capacity : n;
}
