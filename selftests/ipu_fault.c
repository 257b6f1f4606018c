// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_fault.c - kselftests of ipu.ko against faults the device injects
 * itself (debugfs ipu/ipuN/fault, the QEMU device's FAULT_* registers):
 * a hang, a lost interrupt, a corrupt completion, a failed DMA, and a slow
 * program that keeps progressing.  Each one must be detected and
 * recovered, leave no page pinned, and leave /dev/accel/accel1 working while
 * /dev/accel/accel0 is faulted.  Run inside the test VM (make vm-check).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipu_util.h"
#include "kselftest_harness.h"

#define N 1024		/* floats per buffer */
#define SPIN 30		/* steps of the slow program */
#define SLOW_MS 100	/* added to each of them */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill(float *x, uint32_t n, float base)
{
	for (uint32_t i = 0; i < n; i++)
		x[i] = base + (float)i * 0.25f;
}

static int check_affine(const float *x, const float *y, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (y[i] != x[i] * 2.0f + 1.0f)
			return 0;
	return 1;
}

/* One device opened, attached, the affine executable loaded, a ring. */
struct dev {
	int n, fd;
	void *img;
	size_t len;
	struct io_uring ring;
	uint64_t resets;
};

static int dev_open(struct dev *d, int n, uint32_t spin)
{
	memset(d, 0, sizeof(*d));
	d->n = n;
	d->resets = ipu_t_sysfs_u64(n, "stats/resets");
	d->img = ipu_t_affine_image(N, 1, spin, &d->len);
	d->fd = ipu_t_open(n);
	if (!d->img || d->fd < 0 || ipu_t_attach(d->fd) || ipu_t_load(d->fd, d->img, d->len) ||
	    ipu_t_ring(&d->ring, 8))
		return -1;
	return 0;
}

static void dev_close(struct dev *d)
{
	io_uring_queue_exit(&d->ring);
	close(d->fd);
	free(d->img);
}

/* Queue x -> stream 0 and stream 1 -> y (tags 1, 2), submitted. */
static int queue_io(struct dev *d, float *x, float *y)
{
	if (ipu_t_prep(&d->ring, d->fd, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1) ||
	    ipu_t_prep(&d->ring, d->fd, IPU_URING_CMD_RECV, 1, y, N * 4, 2, -1))
		return -1;
	return io_uring_submit(&d->ring) == 2 ? 0 : -1;
}

/* The result of the buffer tagged `tag` among the next `n` completions. */
static int reap(struct dev *d, int n, int *res)
{
	struct io_uring_cqe *cqe;

	for (int i = 0; i < n; i++) {
		if (io_uring_wait_cqe(&d->ring, &cqe))
			return -1;
		if (cqe->user_data >= 1 && cqe->user_data <= 2)
			res[cqe->user_data - 1] = cqe->res;
		io_uring_cqe_seen(&d->ring, cqe);
	}
	return 0;
}

/* The debugfs fault knob: the specification, and how many faults fired. */
static const char *fault_spec(char *buf, size_t len, unsigned int *fired)
{
	char *sp;

	ipu_t_debugfs_read(0, "fault", buf, len);
	sp = strstr(buf, " fired=");
	*fired = sp ? (unsigned int)strtoul(sp + 7, NULL, 10) : ~0u;
	if (sp)
		*sp = 0;
	return buf;
}

/* A whole run on device n with fresh buffers: 0 if the result is right. */
static int good_run(int n, float base)
{
	struct dev d;
	float x[N], y[N];
	int res[2] = { 0, 0 }, ok = 0;
	uint64_t seq;

	memset(y, 0, sizeof(y));
	fill(x, N, base);
	if (dev_open(&d, n, 0) == 0 && queue_io(&d, x, y) == 0 && ipu_t_run(d.fd, 0, &seq) == 0 &&
	    ipu_t_wait(d.fd, seq, 30000000000ll, NULL) == IPU_WAIT_COMPLETED &&
	    reap(&d, 2, res) == 0)
		ok = res[0] == N * 4 && res[1] == N * 4 && check_affine(x, y, N);
	dev_close(&d);
	return ok ? 0 : -1;
}

FIXTURE(fault) {
	int64_t pins0;
	uint64_t resets1;
};

FIXTURE_SETUP(fault)
{
	char buf[64];
	unsigned int fired;

	ASSERT_EQ(0, access("/sys/kernel/debug/ipu/ipu0/fault", W_OK)) {
		TH_LOG("no debugfs fault knob (debugfs not mounted, or a device without IPU_CAP_FAULT)");
	}
	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", "none"));
	ASSERT_STREQ("none", fault_spec(buf, sizeof(buf), &fired));
	self->pins0 = foll_pins_settled();
	self->resets1 = ipu_t_sysfs_u64(1, "stats/resets");
}

/* Whatever happened to ipu0: nothing is left pinned, ipu1 was never reset,
 * and ipu0 itself works again. */
FIXTURE_TEARDOWN(fault)
{
	int64_t pins = foll_pins_held();

	ipu_t_debugfs_write(0, "fault", "none");
	ipu_t_sysfs_write(0, "watchdog_ms", "10000");
	ipu_t_sysfs_write(0, "run_limit_ms", "60000");
	for (int i = 0; i < 100 && pins != self->pins0; i++) {
		usleep(50000);
		pins = foll_pins_held();
	}
	EXPECT_EQ(self->pins0, pins);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(1, "stats/pinned_pages"));
	EXPECT_EQ(self->resets1, ipu_t_sysfs_u64(1, "stats/resets"));
	EXPECT_EQ(0, good_run(0, 11.0f));
}

/* The device stops (hang on the RUN): no completion, no progress.  While it
 * is hung, ipu1 runs normally; then the watchdog resets ipu0, the run is
 * aborted and its buffers come back cancelled. */
TEST_F(fault, hang_is_detected_and_reset)
{
	struct dev d;
	float x[N], y[N];
	int res[2] = { 0, 0 };
	uint64_t seq, p0;
	char buf[64];
	unsigned int fired0, fired;
	double t0;

	ASSERT_EQ(0, dev_open(&d, 0, 0));
	ASSERT_EQ(0, ipu_t_sysfs_write(0, "watchdog_ms", "3000"));
	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", "hang:1:run"));
	EXPECT_STREQ("hang:1:run", fault_spec(buf, sizeof(buf), &fired0));
	fill(x, N, 1.0f);
	ASSERT_EQ(0, queue_io(&d, x, y));
	p0 = strtoull(ipu_t_debugfs_read(0, "progress", buf, sizeof(buf)), NULL, 0);
	ASSERT_EQ(0, ipu_t_run(d.fd, 0, &seq));
	t0 = now_s();
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(d.fd, seq, 300000000, NULL));
	EXPECT_EQ(p0, strtoull(ipu_t_debugfs_read(0, "progress", buf, sizeof(buf)), NULL, 0));
	EXPECT_STREQ("none", fault_spec(buf, sizeof(buf), &fired));	/* one-shot */
	EXPECT_EQ(fired0 + 1, fired);
	/* the other device is not affected while this one hangs */
	EXPECT_EQ(0, good_run(1, 5.0f));
	EXPECT_EQ(d.resets, ipu_t_sysfs_u64(0, "stats/resets")) {
		TH_LOG("ipu0 was reset before ipu1's run ended: the check above did not overlap the hang");
	}
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(d.fd, seq, 30000000000ll, NULL));
	TH_LOG("hang reset by the watchdog after %.2f s", now_s() - t0);
	ASSERT_EQ(0, reap(&d, 2, res));
	EXPECT_EQ(-ECANCELED, res[0]);
	EXPECT_EQ(-ECANCELED, res[1]);
	EXPECT_EQ(d.resets + 1, ipu_t_sysfs_u64(0, "stats/resets"));
	dev_close(&d);
}

/* The RUN's completion interrupt is lost: the watchdog finds the entry by
 * polling, counts it, and the run completes with its result; no reset.
 * The RUN first waits for its input (stalled) while any interrupt still
 * on its way for an earlier command of ipu0 arrives: one raised for an
 * entry its handler had already taken would take the RUN's entry instead,
 * and nothing would be left to poll. */
TEST_F(fault, lost_interrupt_is_polled)
{
	struct dev d;
	float x[N], y[N];
	int res[2] = { 0, 0 };
	uint64_t seq, lost = ipu_t_sysfs_u64(0, "stats/lost_irqs");
	uint32_t st = 99;

	ASSERT_EQ(0, dev_open(&d, 0, 0));
	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", "drop-irq:1:run"));
	fill(x, N, 2.0f);
	memset(y, 0, sizeof(y));
	ASSERT_EQ(0, ipu_t_run(d.fd, 0, &seq));
	usleep(200000);
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(d.fd, seq, 0, NULL));
	ASSERT_EQ(0, queue_io(&d, x, y));
	EXPECT_EQ(0, good_run(1, 6.0f));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(d.fd, seq, 30000000000ll, &st));
	EXPECT_EQ(0u, st);
	ASSERT_EQ(0, reap(&d, 2, res));
	EXPECT_EQ(N * 4, res[0]);
	EXPECT_EQ(N * 4, res[1]);
	EXPECT_TRUE(check_affine(x, y, N));
	EXPECT_EQ(lost + 1, ipu_t_sysfs_u64(0, "stats/lost_irqs"));
	EXPECT_EQ(d.resets, ipu_t_sysfs_u64(0, "stats/resets"));
	dev_close(&d);
}

/* The RUN's completion names a tag the driver never issued: the ring is not
 * trusted any more, the device is reset at once and the run aborted. */
TEST_F(fault, corrupt_completion_resets)
{
	struct dev d;
	float x[N], y[N];
	int res[2] = { 0, 0 };
	uint64_t seq, bad = ipu_t_sysfs_u64(0, "stats/bad_completions");

	ASSERT_EQ(0, dev_open(&d, 0, 0));
	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", "corrupt-cpl:1:run"));
	fill(x, N, 3.0f);
	ASSERT_EQ(0, queue_io(&d, x, y));
	ASSERT_EQ(0, ipu_t_run(d.fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(d.fd, seq, 30000000000ll, NULL));
	ASSERT_EQ(0, reap(&d, 2, res));
	/* the buffers completed before the run did, unless the reset got there first */
	EXPECT_TRUE(res[0] == N * 4 || res[0] == -ECANCELED);
	EXPECT_TRUE(res[1] == N * 4 || res[1] == -ECANCELED);
	EXPECT_EQ(bad + 1, ipu_t_sysfs_u64(0, "stats/bad_completions"));
	EXPECT_EQ(d.resets + 1, ipu_t_sysfs_u64(0, "stats/resets"));
	EXPECT_EQ(0, good_run(1, 7.0f));
	dev_close(&d);
}

/* The RUN's input transfer fails as a DMA fault: that buffer fails with
 * -EIO, the run with STREAM_ERROR; the device needs no reset, and the next
 * run takes the output buffer still queued. */
TEST_F(fault, dma_failure_fails_the_buffer)
{
	struct dev d;
	float x[N], y[N];
	int res[2] = { 0, 0 };
	uint64_t seq, errors = ipu_t_sysfs_u64(0, "stats/errors");
	uint32_t st = 0;

	ASSERT_EQ(0, dev_open(&d, 0, 0));
	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", "dma:1:run"));
	fill(x, N, 4.0f);
	memset(y, 0, sizeof(y));
	ASSERT_EQ(0, queue_io(&d, x, y));
	ASSERT_EQ(0, ipu_t_run(d.fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(d.fd, seq, 30000000000ll, &st));
	EXPECT_EQ(10u, st);	/* STREAM_ERROR (pci.md) */
	ASSERT_EQ(0, reap(&d, 1, res));
	EXPECT_EQ(-EIO, res[0]);
	/* the error interrupt may come after the completion: give it time */
	for (int i = 0; i < 100 && ipu_t_sysfs_u64(0, "stats/errors") == errors; i++)
		usleep(20000);
	EXPECT_LT(errors, ipu_t_sysfs_u64(0, "stats/errors"));
	EXPECT_EQ(0, good_run(1, 8.0f));
	/* the same device, no reset: a new input, the queued output */
	ASSERT_EQ(0, ipu_t_prep(&d.ring, d.fd, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1));
	ASSERT_EQ(1, io_uring_submit(&d.ring));
	ASSERT_EQ(0, ipu_t_run(d.fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(d.fd, seq, 30000000000ll, &st));
	EXPECT_EQ(0u, st);
	ASSERT_EQ(0, reap(&d, 2, res));
	EXPECT_EQ(N * 4, res[0]);
	EXPECT_EQ(N * 4, res[1]);
	EXPECT_TRUE(check_affine(x, y, N));
	EXPECT_EQ(d.resets, ipu_t_sysfs_u64(0, "stats/resets"));
	dev_close(&d);
}

/* A program that runs three times longer than watchdog_ms but executes a
 * step every SLOW_MS is not reset: the watchdog reads PROGRESS, not only
 * completions.  It executes exactly its SPIN steps. */
TEST_F(fault, progressing_program_outlives_the_watchdog)
{
	struct dev d;
	char buf[64], arg[64];
	uint64_t seq, p0, p1;
	uint32_t st = 99;
	double t0, secs;

	ASSERT_EQ(0, dev_open(&d, 0, SPIN));
	ASSERT_EQ(0, ipu_t_sysfs_write(0, "watchdog_ms", "1000"));
	snprintf(arg, sizeof(arg), "slow:1:run:arg=%d", SLOW_MS);
	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", arg));
	p0 = strtoull(ipu_t_debugfs_read(0, "progress", buf, sizeof(buf)), NULL, 0);
	t0 = now_s();
	ASSERT_EQ(0, ipu_t_run(d.fd, 1, &seq));
	EXPECT_EQ(0, good_run(1, 9.0f));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(d.fd, seq, 60000000000ll, &st));
	secs = now_s() - t0;
	EXPECT_EQ(0u, st);
	p1 = strtoull(ipu_t_debugfs_read(0, "progress", buf, sizeof(buf)), NULL, 0);
	EXPECT_EQ(p0 + SPIN, p1);
	EXPECT_EQ(d.resets, ipu_t_sysfs_u64(0, "stats/resets"));
	/* the device sleeps SPIN * SLOW_MS in all: the run outlasted watchdog_ms */
	EXPECT_GE(secs, SPIN * SLOW_MS / 1000.0);
	TH_LOG("%d steps in %.2f s with watchdog_ms 1000: not reset", SPIN, secs);
	dev_close(&d);
}

/* The same slow program with a run limit below its length is reset: a
 * runaway program is stopped however much it progresses. */
TEST_F(fault, run_limit_stops_a_progressing_program)
{
	struct dev d;
	char arg[64];
	uint64_t seq;

	ASSERT_EQ(0, dev_open(&d, 0, SPIN));
	ASSERT_EQ(0, ipu_t_sysfs_write(0, "run_limit_ms", "1000"));
	snprintf(arg, sizeof(arg), "slow:1:run:arg=%d", SLOW_MS);
	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", arg));
	ASSERT_EQ(0, ipu_t_run(d.fd, 1, &seq));
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(d.fd, seq, 60000000000ll, NULL));
	EXPECT_EQ(d.resets + 1, ipu_t_sysfs_u64(0, "stats/resets"));
	dev_close(&d);
}

/* Bad fault specifications are refused, and change nothing. */
TEST_F(fault, bad_specifications_are_refused)
{
	static const char *const bad[] = { "bogus:1", "hang", "hang:0", "dma:1:launch",
					   "slow:1:arg=5000", "none:1" };
	char buf[64];
	unsigned int fired0, fired;

	ASSERT_EQ(0, ipu_t_debugfs_write(0, "fault", "drop-irq:3:run:repeat"));
	EXPECT_STREQ("drop-irq:3:run:repeat", fault_spec(buf, sizeof(buf), &fired0));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, ipu_t_debugfs_write(0, "fault", bad[i])) {
			TH_LOG("%s", bad[i]);
		}
	}
	EXPECT_STREQ("drop-irq:3:run:repeat", fault_spec(buf, sizeof(buf), &fired));
	EXPECT_EQ(fired0, fired);
}

TEST_HARNESS_MAIN
