/* SPDX-License-Identifier: MIT */
/*
 * ipu/ringbuffer.h - the QueueManager's per-anchor queue: a bounded,
 * lock-free, single-producer single-consumer FIFO of pointers.
 *
 * Why pointers: the runtime never copies tensors through its queues (as the
 * Model Runtime's QueueManager); an entry points to the caller's buffer, or to a small
 * request record the QueueManager keeps in its own pool.  One pointer per
 * slot keeps push and pop a single store and a single load.
 *
 * Why SPSC: each anchor's queue has exactly one producer (the thread
 * enqueueing requests) and one consumer (the device feeder), so no CAS
 * loop is needed.  The producer's and consumer's indices live on separate
 * cache lines, and each side keeps a private copy of the other side's index
 * that it refreshes only when the ring looks full (producer) or empty
 * (consumer): in steady state neither side touches the other's line.
 *
 * Why blocking variants: a feeder waiting for the next request must not
 * burn a core.  The blocking calls spin briefly, then sleep on a futex; the
 * non-blocking calls wake a sleeping peer, so the two kinds may be mixed
 * freely (e.g. a user thread try_push()es, the feeder pop()s).
 *
 * Thread rules: at any time at most one thread pushes and at most one
 * thread pops (they may be different threads over time if the handover is
 * synchronised).  close(), capacity(), size() and is_closed() may be called
 * from any thread.  No global state.
 */
#ifndef IPU_RINGBUFFER_H
#define IPU_RINGBUFFER_H

#include <errno.h>
#include <stdint.h>

/*
 * Status: 0 or a negative errno, as liburing's calls return (each its own
 * class for ipu_err_errno(), so a caller maps them like any library error).
 */
enum ipurt_ring_status {
	IPURT_RING_OK = 0,
	IPURT_RING_AGAIN = -EAGAIN,	/* try_push: full; try_pop: empty */
	IPURT_RING_TIMEOUT = -ETIMEDOUT, /* nothing happened within timeout_ns */
	IPURT_RING_CLOSED = -ESHUTDOWN,	/* push after close; pop: closed and drained */
	IPURT_RING_INVAL = -EINVAL,	/* capacity not a power of two in range */
	IPURT_RING_NOMEM = -ENOMEM,
};

/* Largest capacity: indices are 32-bit and wrap, so half their range. */
#define IPURT_RING_MAX_CAPACITY (1u << 30)

struct ipurt_ring;

/* capacity: a power of two, 2 .. IPURT_RING_MAX_CAPACITY. */
int ipurt_ring_create(uint32_t capacity, struct ipurt_ring **out);
/* The caller makes sure no thread is still using the ring. */
void ipurt_ring_destroy(struct ipurt_ring *r);

/* Non-blocking.  Any pointer value (NULL too) is a valid item. */
int ipurt_ring_try_push(struct ipurt_ring *r, void *item);
int ipurt_ring_try_pop(struct ipurt_ring *r, void **item);

/*
 * Blocking, with a timeout: timeout_ns < 0 waits forever, 0 does not wait
 * (returns IPURT_RING_TIMEOUT instead of AGAIN).  They return
 * IPURT_RING_CLOSED as soon as the ring is closed (push) or closed and
 * empty (pop), waking up if they were asleep.
 */
int ipurt_ring_push(struct ipurt_ring *r, void *item, int64_t timeout_ns);
int ipurt_ring_pop(struct ipurt_ring *r, void **item, int64_t timeout_ns);

/*
 * Shut the ring down: later pushes fail with IPURT_RING_CLOSED, pops
 * return what is left and then IPURT_RING_CLOSED, and sleeping threads
 * wake.  Items pushed before close() (in happens-before order) are all
 * delivered.  Idempotent.
 */
void ipurt_ring_close(struct ipurt_ring *r);
int ipurt_ring_is_closed(const struct ipurt_ring *r);

uint32_t ipurt_ring_capacity(const struct ipurt_ring *r);
/* Items queued; exact only when neither side is active. */
uint32_t ipurt_ring_size(const struct ipurt_ring *r);

#endif /* IPU_RINGBUFFER_H */
