// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_replication.c - one model on /dev/accel/accel0 and /dev/accel/accel1 through the
 * Model Runtime inside the VM: outputs bit-identical to /dev/accel/accel0 alone,
 * both devices used, and /dev/accel/accel1 reset
 * by another file descriptor in the middle of a run: every request still
 * completes with the same bits on /dev/accel/accel0, /dev/accel/accel1 is out of rotation,
 * and afterwards no page stays pinned, nobody owns either device and
 * /dev/accel/accel1 runs the model again; the same with /dev/accel/accel1 hanging by
 * itself (the device's fault injection) until the watchdog resets it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ipu/runtime.h"
#include "ipu_util.h"
#include "kselftest_harness.h"

#define MODEL_DIR "/ipu/data"
#define NREQ 48
#define MAXT 8

/* One model's requests: seeded inputs, and room for their outputs. */
struct reqs {
	struct ipurt_tensor t[MAXT];
	uint32_t n, nin;
	size_t bytes[MAXT];
	uint8_t *in[NREQ][MAXT];	/* inputs (outputs unused) */
	uint8_t *out[NREQ][MAXT];	/* outputs */
};

static struct ipurt_runner *open_runner(const char *model, const char *devices)
{
	struct ipurt_config c;
	struct ipurt_runner *r = NULL;
	char err[512];

	ipurt_config_init(&c);
	c.device = devices;
	c.num_devices = IPURT_ALL_LISTED;
	c.timeout_ns = 60ull * 1000000000ull;
	if (ipurt_runner_create(model, &c, &r, err, sizeof(err)))
		fprintf(stderr, "# %s on %s: %s\n", model, devices, err);
	return r;
}

static size_t tensor_bytes(const struct ipurt_tensor *t)
{
	size_t b = ipurt_dtype_size(t->dtype);
	uint32_t k;

	for (k = 0; k < t->rank; k++)
		b *= t->dims[k];
	return b;
}

/* Inputs of request i: small seeded values, exact in every float format. */
static int reqs_init(struct reqs *q, struct ipurt_runner *r)
{
	int n = ipurt_runner_io(r, -1, 0, q->t, NULL, MAXT, &q->nin);
	uint32_t i, k;
	size_t b;

	if (n <= 0)
		return -1;
	q->n = (uint32_t)n;
	for (k = 0; k < q->n; k++) {
		q->bytes[k] = tensor_bytes(&q->t[k]);
		for (i = 0; i < NREQ; i++) {
			q->in[i][k] = calloc(1, q->bytes[k]);
			q->out[i][k] = calloc(1, q->bytes[k]);
			if (!q->in[i][k] || !q->out[i][k])
				return -1;
			if (k >= q->nin)
				continue;
			for (b = 0; b < q->bytes[k]; b += ipurt_dtype_size(q->t[k].dtype)) {
				uint32_t v = (i * 2654435761u + (uint32_t)b * 40503u + k) >> 20;

				if (q->t[k].dtype == IPURT_DT_F32) {
					float f = (float)(v % 17) / 4.0f - 2.0f;

					memcpy(q->in[i][k] + b, &f, 4);
				} else {
					q->in[i][k][b] = (uint8_t)(v % 5);
				}
			}
		}
	}
	return 0;
}

static void reqs_free(struct reqs *q)
{
	uint32_t i, k;

	for (i = 0; i < NREQ; i++)
		for (k = 0; k < MAXT; k++) {
			free(q->in[i][k]);
			free(q->out[i][k]);
		}
}

struct resetter {
	struct ipurt_runner *r;
	uint64_t after;
	int rc;
	uint64_t runs;		/* /dev/accel/accel1's runs done before the reset */
};

/*
 * A device reset of /dev/accel/accel1 from another file descriptor (as ipu-reset
 * does) once it has finished `after` runs, with more queued behind them.
 */
static void *reset_ipu1(void *arg)
{
	struct resetter *z = arg;
	struct ipu_reset_args a = { .mode = IPU_RESET_DEVICE };
	int fd, i;

	for (i = 0; i < 30000; i++) {	/* 30 s at most: reset anyway */
		ipurt_runner_device_status(z->r, 1, &z->runs, NULL, 0);
		if (z->runs >= z->after)
			break;
		usleep(1000);
	}
	fd = ipu_t_open(1);
	z->rc = fd < 0 ? fd : ioctl(fd, DRM_IOCTL_IPU_RESET, &a);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Run every request (all in flight at once), outputs into out[]. */
static int run_all(struct ipurt_runner *r, struct reqs *q, uint8_t *(*out)[MAXT])
{
	struct ipurt_future *f[NREQ];
	struct ipurt_tensor in[MAXT], ot[MAXT];
	char err[512];
	uint32_t i, k;
	int bad = 0;

	for (i = 0; i < NREQ; i++) {
		for (k = 0; k < q->n; k++) {
			struct ipurt_tensor *t = k < q->nin ? &in[k] : &ot[k - q->nin];

			*t = q->t[k];
			t->data = k < q->nin ? q->in[i][k] : out[i][k];
			if (k >= q->nin)
				memset(out[i][k], 0xa5, q->bytes[k]);
		}
		if (ipurt_runner_execute_async(r, in, q->nin, ot, q->n - q->nin, &f[i], err,
					       sizeof(err))) {
			fprintf(stderr, "# request %u: %s\n", i, err);
			f[i] = NULL;
			bad++;
		}
	}
	for (i = 0; i < NREQ; i++) {
		if (!f[i])
			continue;
		if (ipurt_future_wait(f[i], -1, err, sizeof(err))) {
			fprintf(stderr, "# request %u: %s\n", i, err);
			bad++;
		}
		ipurt_future_free(f[i]);
	}
	return bad;
}

static int same_outputs(struct reqs *q, uint8_t *(*a)[MAXT], uint8_t *(*b)[MAXT])
{
	uint32_t i, k;

	for (i = 0; i < NREQ; i++)
		for (k = q->nin; k < q->n; k++)
			if (memcmp(a[i][k], b[i][k], q->bytes[k]))
				return 0;
	return 1;
}

static uint8_t *(*alloc_outs(struct reqs *q))[MAXT]
{
	uint8_t *(*o)[MAXT] = calloc(NREQ, sizeof(*o));
	uint32_t i, k;

	for (i = 0; o && i < NREQ; i++)
		for (k = q->nin; k < q->n; k++)
			if (!(o[i][k] = malloc(q->bytes[k])))
				return NULL;
	return o;
}

static void free_outs(uint8_t *(*o)[MAXT])
{
	uint32_t i, k;

	for (i = 0; o && i < NREQ; i++)
		for (k = 0; k < MAXT; k++)
			free(o[i][k]);
	free(o);
}

FIXTURE(repl) {
	struct reqs q;
	uint64_t pinned0, pinned1;
};

FIXTURE_VARIANT(repl) {
	const char *model;
};

FIXTURE_VARIANT_ADD(repl, conv) {
	.model = MODEL_DIR "/test_conv_with_strides_padding.ipuef",
};

FIXTURE_VARIANT_ADD(repl, gemm) {
	.model = MODEL_DIR "/test_gemm_default_matrix_bias.ipuef",
};

FIXTURE_SETUP(repl)
{
	struct ipurt_runner *r = open_runner(variant->model, "/dev/accel/accel0");

	memset(&self->q, 0, sizeof(self->q));
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, reqs_init(&self->q, r));
	ipurt_runner_destroy(r);
	self->pinned0 = ipu_t_sysfs_u64(0, "stats/pinned_pages");
	self->pinned1 = ipu_t_sysfs_u64(1, "stats/pinned_pages");
}

FIXTURE_TEARDOWN(repl)
{
	reqs_free(&self->q);
}

/*
 * Replicated over both devices: the bits of /dev/accel/accel0 alone (e2e-ipu-run.sh
 * compares ipu-run's replicated outputs with the host's in-process device).
 */
TEST_F(repl, identical_to_one_device)
{
	uint8_t *(*one)[MAXT] = alloc_outs(&self->q), *(*two)[MAXT] = alloc_outs(&self->q);
	struct ipurt_runner *r;
	uint64_t runs0 = 0, runs1 = 0;

	ASSERT_TRUE(one && two);
	r = open_runner(variant->model, "/dev/accel/accel0");
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, run_all(r, &self->q, one));
	ipurt_runner_destroy(r);

	r = open_runner(variant->model, "/dev/accel/accel0,/dev/accel/accel1");
	ASSERT_NE(NULL, r);
	ASSERT_EQ(2u, ipurt_runner_num_devices(r));
	/* both attached by this process while the runner lives */
	EXPECT_EQ((uint64_t)getpid(), ipu_t_sysfs_u64(0, "owner_pid"));
	EXPECT_EQ((uint64_t)getpid(), ipu_t_sysfs_u64(1, "owner_pid"));
	ASSERT_EQ(0, run_all(r, &self->q, two));
	EXPECT_EQ(1, ipurt_runner_device_status(r, 0, &runs0, NULL, 0));
	EXPECT_EQ(1, ipurt_runner_device_status(r, 1, &runs1, NULL, 0));
	TH_LOG("%u requests: %llu runs on /dev/accel/accel0, %llu on /dev/accel/accel1", NREQ,
	       (unsigned long long)runs0, (unsigned long long)runs1);
	EXPECT_LT(0u, runs0);
	EXPECT_LT(0u, runs1);
	EXPECT_EQ((uint64_t)NREQ, runs0 + runs1);
	ipurt_runner_destroy(r);
	EXPECT_TRUE(same_outputs(&self->q, one, two));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "owner_pid"));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(1, "owner_pid"));
	EXPECT_EQ(self->pinned0, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	EXPECT_EQ(self->pinned1, ipu_t_sysfs_u64(1, "stats/pinned_pages"));
	free_outs(one);
	free_outs(two);
}

/* /dev/accel/accel1 reset mid-run: its requests finish on /dev/accel/accel0, nothing leaks. */
TEST_F(repl, device_reset_mid_run)
{
	uint8_t *(*one)[MAXT] = alloc_outs(&self->q), *(*two)[MAXT] = alloc_outs(&self->q);
	uint64_t resets = ipu_t_sysfs_u64(1, "stats/resets"), runs0 = 0, runs1 = 0;
	struct ipurt_runner *r;
	struct resetter z = { NULL, 4, 0, 0 };
	char why[256] = "";
	pthread_t t;
	int i;

	ASSERT_TRUE(one && two);
	r = open_runner(variant->model, "/dev/accel/accel0");
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, run_all(r, &self->q, one));
	ipurt_runner_destroy(r);

	r = open_runner(variant->model, "/dev/accel/accel0,/dev/accel/accel1");
	ASSERT_NE(NULL, r);
	z.r = r;
	ASSERT_EQ(0, pthread_create(&t, NULL, reset_ipu1, &z));
	EXPECT_EQ(0, run_all(r, &self->q, two));
	pthread_join(t, NULL);
	EXPECT_EQ(0, z.rc);
	EXPECT_EQ(resets + 1, ipu_t_sysfs_u64(1, "stats/resets"));
	/* the reset may come after the last run: more requests meet it */
	for (i = 0; i < 3 && ipurt_runner_device_status(r, 1, NULL, NULL, 0) == 1; i++)
		EXPECT_EQ(0, run_all(r, &self->q, two));
	EXPECT_TRUE(same_outputs(&self->q, one, two));
	EXPECT_EQ(1, ipurt_runner_device_status(r, 0, &runs0, NULL, 0));
	EXPECT_EQ(0, ipurt_runner_device_status(r, 1, &runs1, why, sizeof(why)));
	TH_LOG("/dev/accel/accel1 reset after %llu runs; then /dev/accel/accel0 %llu runs, /dev/accel/accel1 %llu, taken out: %s",
	       (unsigned long long)z.runs, (unsigned long long)runs0, (unsigned long long)runs1, why);
	/* every request ran once, each on one device or the other */
	EXPECT_EQ((uint64_t)NREQ * (i + 1), runs0 + runs1);
	ipurt_runner_destroy(r);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "owner_pid"));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(1, "owner_pid"));
	EXPECT_EQ(self->pinned0, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	EXPECT_EQ(self->pinned1, ipu_t_sysfs_u64(1, "stats/pinned_pages"));
	/* the reset device serves again */
	r = open_runner(variant->model, "/dev/accel/accel1");
	ASSERT_NE(NULL, r);
	EXPECT_EQ(0, run_all(r, &self->q, two));
	EXPECT_TRUE(same_outputs(&self->q, one, two));
	ipurt_runner_destroy(r);
	free_outs(one);
	free_outs(two);
}

/*
 * One device, reset by another file descriptor between requests: the
 * request that meets it fails saying the device lost the model, the runner
 * loads the model again by itself, and every later request has the same
 * bits as before the reset; nothing else resets the device meanwhile.
 */
TEST_F(repl, one_device_reset_reloads_the_model)
{
	uint8_t *(*one)[MAXT] = alloc_outs(&self->q), *(*two)[MAXT] = alloc_outs(&self->q);
	struct ipu_reset_args a = { .mode = IPU_RESET_DEVICE };
	struct ipurt_tensor in[MAXT], ot[MAXT];
	uint64_t resets;
	struct ipurt_runner *r;
	char err[512] = "";
	uint32_t k;
	int fd, rc;

	ASSERT_TRUE(one && two);
	r = open_runner(variant->model, "/dev/accel/accel1");
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, run_all(r, &self->q, one));
	resets = ipu_t_sysfs_u64(1, "stats/resets");
	fd = ipu_t_open(1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_IPU_RESET, &a));
	close(fd);
	for (k = 0; k < self->q.n; k++) {
		struct ipurt_tensor *t = k < self->q.nin ? &in[k] : &ot[k - self->q.nin];

		*t = self->q.t[k];
		t->data = k < self->q.nin ? self->q.in[0][k] : two[0][k];
	}
	rc = ipurt_runner_execute(r, in, self->q.nin, ot, self->q.n - self->q.nin, err, sizeof(err));
	TH_LOG("the request after the reset: %s (%s)", err, ipu_err_name(rc));
	EXPECT_EQ(IPU_E_NOT_LOADED, rc);
	EXPECT_NE(NULL, strstr(err, "no longer holds the model"));
	EXPECT_EQ(0, run_all(r, &self->q, two));
	EXPECT_TRUE(same_outputs(&self->q, one, two));
	EXPECT_EQ(resets + 1, ipu_t_sysfs_u64(1, "stats/resets"));
	ipurt_runner_destroy(r);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(1, "owner_pid"));
	EXPECT_EQ(self->pinned1, ipu_t_sysfs_u64(1, "stats/pinned_pages"));
	free_outs(one);
	free_outs(two);
}

/*
 * /dev/accel/accel1 hangs by itself (the device's own fault injection, debugfs
 * `fault` "hang:5:run") while requests are queued on it: the driver's
 * watchdog resets it, the runs it held move to /dev/accel/accel0, every request
 * has the same bits.
 */
TEST_F(repl, device_hang_mid_run)
{
	uint8_t *(*one)[MAXT] = alloc_outs(&self->q), *(*two)[MAXT] = alloc_outs(&self->q);
	uint64_t resets = ipu_t_sysfs_u64(1, "stats/resets"), runs0 = 0, runs1 = 0;
	uint64_t wd = ipu_t_sysfs_u64(1, "watchdog_ms");
	struct ipurt_runner *r;
	char why[256] = "", wds[32];

	if (access("/sys/kernel/debug/ipu/ipu1/fault", W_OK))
		SKIP(return, "no debugfs fault knob (debugfs not mounted, or no IPU_CAP_FAULT)");
	ASSERT_TRUE(one && two);
	r = open_runner(variant->model, "/dev/accel/accel0");
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, run_all(r, &self->q, one));
	ipurt_runner_destroy(r);

	r = open_runner(variant->model, "/dev/accel/accel0,/dev/accel/accel1");
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, ipu_t_sysfs_write(1, "watchdog_ms", "2000"));
	ASSERT_EQ(0, ipu_t_debugfs_write(1, "fault", "hang:5:run"));
	EXPECT_EQ(0, run_all(r, &self->q, two));
	EXPECT_TRUE(same_outputs(&self->q, one, two));
	EXPECT_EQ(1, ipurt_runner_device_status(r, 0, &runs0, NULL, 0));
	EXPECT_EQ(0, ipurt_runner_device_status(r, 1, &runs1, why, sizeof(why)));
	TH_LOG("/dev/accel/accel0 %llu runs, /dev/accel/accel1 %llu before it hung, taken out: %s",
	       (unsigned long long)runs0, (unsigned long long)runs1, why);
	EXPECT_EQ((uint64_t)NREQ, runs0 + runs1);
	EXPECT_EQ(resets + 1, ipu_t_sysfs_u64(1, "stats/resets"));
	ipurt_runner_destroy(r);
	ipu_t_debugfs_write(1, "fault", "none");
	snprintf(wds, sizeof(wds), "%llu", (unsigned long long)wd);
	ipu_t_sysfs_write(1, "watchdog_ms", wds);
	EXPECT_EQ(self->pinned0, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	EXPECT_EQ(self->pinned1, ipu_t_sysfs_u64(1, "stats/pinned_pages"));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(1, "owner_pid"));
	free_outs(one);
	free_outs(two);
}

TEST_HARNESS_MAIN
