// SPDX-License-Identifier: MIT
/*
 * test_ringbuffer.c - the SPSC RingBuffer: FIFO semantics, index
 * wrap-around, timeouts, close, its statuses being plain -errno values
 * (each its own class of the one error table), and a producer/consumer
 * stress run
 * (10 million items by default; IPURT_RING_ITEMS overrides) checking that
 * order and the pointed-to contents are preserved.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/error.h"
#include "ipu/ringbuffer.h"
#include "ringbuffer_internal.h"

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

TEST(create_args)
{
	struct ipurt_ring *r = (struct ipurt_ring *)1;

	CHECK_EQ_INT(ipurt_ring_create(0, &r), IPURT_RING_INVAL);
	CHECK(r == NULL);
	CHECK_EQ_INT(ipurt_ring_create(1, &r), IPURT_RING_INVAL);
	CHECK_EQ_INT(ipurt_ring_create(3, &r), IPURT_RING_INVAL);
	CHECK_EQ_INT(ipurt_ring_create(IPURT_RING_MAX_CAPACITY * 2u, &r),
		     IPURT_RING_INVAL);
	CHECK_EQ_INT(ipurt_ring_create(4, NULL), IPURT_RING_INVAL);
	REQUIRE(ipurt_ring_create(2, &r) == 0);
	CHECK_EQ_INT(ipurt_ring_capacity(r), 2);
	ipurt_ring_destroy(r);
	ipurt_ring_destroy(NULL);
}

/* Statuses are -errno: the error table passes them through as their class. */
TEST(statuses_are_errno)
{
	static const struct {
		int status, errno_class;
		const char *name;
	} st[] = {
		{ IPURT_RING_AGAIN, -EAGAIN, "EAGAIN" },
		{ IPURT_RING_TIMEOUT, -ETIMEDOUT, "ETIMEDOUT" },
		{ IPURT_RING_CLOSED, -ESHUTDOWN, "ESHUTDOWN" },
		{ IPURT_RING_INVAL, -EINVAL, "EINVAL" },
		{ IPURT_RING_NOMEM, -ENOMEM, "ENOMEM" },
	};
	struct ipurt_ring *r;
	void *p;

	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		CHECK_EQ_INT(st[i].status, st[i].errno_class);
		CHECK_EQ_INT(ipu_err_errno(st[i].status), st[i].errno_class);
		CHECK_MSG(!strcmp(ipu_err_name(st[i].status), st[i].name), "%d named %s",
			  st[i].status, ipu_err_name(st[i].status));
	}
	REQUIRE(ipurt_ring_create(2, &r) == 0);
	CHECK_EQ_INT(ipurt_ring_pop(r, &p, 0), -ETIMEDOUT);
	ipurt_ring_close(r);
	CHECK_EQ_INT(ipurt_ring_push(r, NULL, 0), -ESHUTDOWN);
	ipurt_ring_destroy(r);
}

static void fifo_at(uint32_t start)
{
	struct ipurt_ring *r;
	void *p;

	REQUIRE(ipurt_ring_create_at(8, start, start & 1, &r) == 0);
	CHECK_EQ_INT(ipurt_ring_try_pop(r, &p), IPURT_RING_AGAIN);
	/* Many laps so the indices cross UINT32_MAX when start is near. */
	for (uintptr_t lap = 0; lap < 10; lap++) {
		for (uintptr_t i = 0; i < 8; i++)
			CHECK_EQ_INT(ipurt_ring_try_push(r, (void *)(lap * 100 + i)), 0);
		CHECK_EQ_INT(ipurt_ring_try_push(r, (void *)1), IPURT_RING_AGAIN);
		CHECK_EQ_INT(ipurt_ring_size(r), 8);
		for (uintptr_t i = 0; i < 8; i++) {
			CHECK_EQ_INT(ipurt_ring_try_pop(r, &p), 0);
			CHECK_EQ_INT((uintptr_t)p, lap * 100 + i);
		}
		CHECK_EQ_INT(ipurt_ring_try_pop(r, &p), IPURT_RING_AGAIN);
		CHECK_EQ_INT(ipurt_ring_size(r), 0);
		/* Partial fills move the window. */
		CHECK_EQ_INT(ipurt_ring_try_push(r, NULL), 0);
		CHECK_EQ_INT(ipurt_ring_try_pop(r, &p), 0);
		CHECK(p == NULL);
	}
	ipurt_ring_destroy(r);
}

TEST(fifo)
{
	fifo_at(0);
}

TEST(index_wraparound)
{
	fifo_at(UINT32_MAX - 20);
	fifo_at(UINT32_MAX);
}

TEST(timeouts)
{
	struct ipurt_ring *r;
	void *p;
	int64_t t0;

	REQUIRE(ipurt_ring_create(2, &r) == 0);
	CHECK_EQ_INT(ipurt_ring_pop(r, &p, 0), IPURT_RING_TIMEOUT);
	t0 = now_ns();
	CHECK_EQ_INT(ipurt_ring_pop(r, &p, 20 * 1000000), IPURT_RING_TIMEOUT);
	CHECK(now_ns() - t0 >= 20 * 1000000);
	CHECK(now_ns() - t0 < 2000 * 1000000ll);
	CHECK_EQ_INT(ipurt_ring_push(r, (void *)1, 0), 0);
	CHECK_EQ_INT(ipurt_ring_push(r, (void *)2, -1), 0);
	t0 = now_ns();
	CHECK_EQ_INT(ipurt_ring_push(r, (void *)3, 20 * 1000000), IPURT_RING_TIMEOUT);
	CHECK(now_ns() - t0 >= 20 * 1000000);
	CHECK_EQ_INT(ipurt_ring_pop(r, &p, -1), 0);
	CHECK(p == (void *)1);
	ipurt_ring_destroy(r);
}

TEST(close_drains)
{
	struct ipurt_ring *r;
	void *p;

	REQUIRE(ipurt_ring_create(4, &r) == 0);
	CHECK_EQ_INT(ipurt_ring_try_push(r, (void *)7), 0);
	CHECK_EQ_INT(ipurt_ring_try_push(r, (void *)8), 0);
	CHECK(!ipurt_ring_is_closed(r));
	ipurt_ring_close(r);
	ipurt_ring_close(r);
	CHECK(ipurt_ring_is_closed(r));
	CHECK_EQ_INT(ipurt_ring_try_push(r, (void *)9), IPURT_RING_CLOSED);
	CHECK_EQ_INT(ipurt_ring_push(r, (void *)9, -1), IPURT_RING_CLOSED);
	CHECK_EQ_INT(ipurt_ring_pop(r, &p, -1), 0);
	CHECK(p == (void *)7);
	CHECK_EQ_INT(ipurt_ring_try_pop(r, &p), 0);
	CHECK(p == (void *)8);
	CHECK_EQ_INT(ipurt_ring_try_pop(r, &p), IPURT_RING_CLOSED);
	CHECK_EQ_INT(ipurt_ring_pop(r, &p, -1), IPURT_RING_CLOSED);
	ipurt_ring_destroy(r);
}

struct waiter {
	struct ipurt_ring *r;
	int push;		/* 1: blocked pusher, 0: blocked popper */
	int rc;
	void *item;
	int64_t woke_ns;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	if (w->push)
		w->rc = ipurt_ring_push(w->r, (void *)99, -1);
	else
		w->rc = ipurt_ring_pop(w->r, &w->item, -1);
	w->woke_ns = now_ns();
	return NULL;
}

/* A sleeping side is woken by its peer and by close. */
TEST(wakeups)
{
	struct waiter w = { 0 };
	pthread_t th;
	int64_t t0;
	void *p;

	REQUIRE(ipurt_ring_create(2, &w.r) == 0);
	/* Consumer asleep, producer pushes after 30 ms. */
	REQUIRE(pthread_create(&th, NULL, waiter_main, &w) == 0);
	usleep(30000);
	t0 = now_ns();
	CHECK_EQ_INT(ipurt_ring_try_push(w.r, (void *)5), 0);
	pthread_join(th, NULL);
	CHECK_EQ_INT(w.rc, 0);
	CHECK(w.item == (void *)5);
	CHECK(w.woke_ns - t0 < 1000 * 1000000ll);
	/* Producer asleep on a full ring, consumer pops. */
	CHECK_EQ_INT(ipurt_ring_try_push(w.r, (void *)1), 0);
	CHECK_EQ_INT(ipurt_ring_try_push(w.r, (void *)2), 0);
	w.push = 1;
	REQUIRE(pthread_create(&th, NULL, waiter_main, &w) == 0);
	usleep(30000);
	CHECK_EQ_INT(ipurt_ring_try_pop(w.r, &p), 0);
	pthread_join(th, NULL);
	CHECK_EQ_INT(w.rc, 0);
	CHECK_EQ_INT(ipurt_ring_try_pop(w.r, &p), 0);
	CHECK(p == (void *)2);
	CHECK_EQ_INT(ipurt_ring_try_pop(w.r, &p), 0);
	CHECK(p == (void *)99);
	/* Consumer asleep, close wakes it. */
	w.push = 0;
	REQUIRE(pthread_create(&th, NULL, waiter_main, &w) == 0);
	usleep(30000);
	ipurt_ring_close(w.r);
	pthread_join(th, NULL);
	CHECK_EQ_INT(w.rc, IPURT_RING_CLOSED);
	ipurt_ring_destroy(w.r);
}

struct stress {
	struct ipurt_ring *r;
	uint64_t items;
	uint64_t *payload;	/* 2 * capacity slots, reused */
	uint32_t npayload;
	int blocking;
	uint64_t errors, first_bad;
};

static void *producer(void *arg)
{
	struct stress *s = arg;

	for (uint64_t i = 0; i < s->items; i++) {
		uint64_t *slot = &s->payload[i % s->npayload];

		*slot = i * 0x9e3779b97f4a7c15ull;
		if (s->blocking) {
			if (ipurt_ring_push(s->r, slot, -1))
				break;
		} else {
			while (ipurt_ring_try_push(s->r, slot) == IPURT_RING_AGAIN)
				sched_yield(); /* the cores are shared */
		}
	}
	ipurt_ring_close(s->r);
	return NULL;
}

static void *consumer(void *arg)
{
	struct stress *s = arg;
	uint64_t i = 0;

	for (;;) {
		void *p;
		int rc;

		if (s->blocking) {
			rc = ipurt_ring_pop(s->r, &p, -1);
		} else {
			while ((rc = ipurt_ring_try_pop(s->r, &p)) ==
			       IPURT_RING_AGAIN)
				sched_yield();
		}
		if (rc)
			break;
		if (p != &s->payload[i % s->npayload] ||
		    *(uint64_t *)p != i * 0x9e3779b97f4a7c15ull) {
			if (!s->errors++)
				s->first_bad = i;
		}
		i++;
	}
	if (i != s->items) {
		s->errors++;
		fprintf(stderr, "  consumer got %llu of %llu items\n",
			(unsigned long long)i, (unsigned long long)s->items);
	}
	return NULL;
}

static uint64_t stress_items(uint64_t dflt)
{
	const char *e = getenv("IPURT_RING_ITEMS");

	return e ? strtoull(e, NULL, 0) : dflt;
}

static void stress(uint32_t capacity, uint64_t items, int blocking,
		   int symmetric)
{
	struct stress s = { 0 };
	pthread_t pt, ct;
	int64_t t0 = now_ns();

	REQUIRE(ipurt_ring_create_at(capacity, 0, symmetric, &s.r) == 0);
	s.items = items;
	s.blocking = blocking;
	s.npayload = 2 * capacity;
	s.payload = calloc(s.npayload, sizeof(*s.payload));
	REQUIRE(s.payload != NULL);
	REQUIRE(pthread_create(&ct, NULL, consumer, &s) == 0);
	REQUIRE(pthread_create(&pt, NULL, producer, &s) == 0);
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	CHECK_MSG(s.errors == 0, "%llu errors, first at item %llu",
		  (unsigned long long)s.errors,
		  (unsigned long long)s.first_bad);
	printf("# capacity %u, %llu items, %s, %s barriers: %.1f Mitems/s\n",
	       capacity, (unsigned long long)items,
	       blocking ? "blocking" : "spinning",
	       symmetric ? "symmetric" : "default",
	       (double)items * 1e3 / (double)(now_ns() - t0));
	free(s.payload);
	ipurt_ring_destroy(s.r);
}

TEST(stress_10M_blocking)
{
	stress(1024, stress_items(10000000), 1, 0);
}

TEST(stress_spinning)
{
	stress(256, stress_items(10000000) / 4, 0, 0);
}

/* Capacity 2: nearly every operation meets a full or empty ring, so the
 * sleep/wake path runs constantly. */
TEST(stress_tiny_ring)
{
	stress(2, stress_items(10000000) / 200, 1, 0);
}

/* The mode used where membarrier() is not available. */
TEST(stress_symmetric)
{
	stress(1024, stress_items(10000000) / 4, 1, 1);
	stress(2, stress_items(10000000) / 200, 1, 1);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(create_args);
	RUN(statuses_are_errno);
	RUN(fifo);
	RUN(index_wraparound);
	RUN(timeouts);
	RUN(close_drains);
	RUN(wakeups);
	RUN(stress_10M_blocking);
	RUN(stress_spinning);
	RUN(stress_tiny_ring);
	RUN(stress_symmetric);
	return TH_DONE();
}
