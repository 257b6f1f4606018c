// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_selftest.c - kselftests of ipu.ko, run inside the test VM (make
 * vm-check) with two `ipu` devices of 16 tiles x 256 KiB.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <xf86drm.h>

#include "ipu_util.h"
#include "kselftest_harness.h"

#define N 1024		/* floats per buffer */

static void fill(float *x, uint32_t n, float base)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		x[i] = base + (float)i * 0.25f;
}

static int check_affine(const float *x, const float *y, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (y[i] != x[i] * 2.0f + 1.0f)
			return 0;
	return 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */

TEST(info_fields)
{
	struct ipu_info_args a = { 0 };
	int fd = ipu_t_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &a));
	EXPECT_EQ(0x10002u, a.if_version);
	EXPECT_EQ(2u, a.hw_version);
	EXPECT_EQ(16u, a.tiles);
	EXPECT_EQ(256u * 1024, a.tile_mem);
	EXPECT_EQ(1024u, a.max_streams);
	EXPECT_EQ(0u, a.minor);
	EXPECT_EQ(IPU_DEV_STATE_IDLE, a.state);
	EXPECT_EQ(0, a.owner_pid);
	EXPECT_NE(0u, a.driver_caps & IPU_DRV_CAP_URING_CMD);
	EXPECT_NE(0u, a.driver_caps & IPU_DRV_CAP_GEM);
	EXPECT_EQ(ipu_t_sysfs_u64(0, "tiles"), a.tiles);
	{
		/* the DRM core's VERSION on the accel node names our driver */
		drmVersionPtr v = drmGetVersion(fd);

		ASSERT_NE(NULL, v);
		EXPECT_STREQ(IPU_DRM_DRIVER_NAME, v->name);
		EXPECT_EQ(1, v->version_major);
		drmFreeVersion(v);
	}
	{
		char path[64], buf[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/accel/accel0/device/serial");
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
		fclose(f);
		EXPECT_EQ(a.serial, strtoull(buf, NULL, 16));
	}
	close(fd);
	/* the second device */
	fd = ipu_t_open(1);
	ASSERT_LE(0, fd);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &a));
	EXPECT_EQ(1u, a.minor);
	EXPECT_EQ(2ull, a.serial);
	close(fd);
}

TEST(attach_exclusive)
{
	int a = ipu_t_open(0), b = ipu_t_open(0);
	struct ipu_info_args info = { 0 };
	uint64_t seq;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, ipu_t_attach(a));
	EXPECT_EQ(0, ipu_t_attach(a));	/* idempotent */
	EXPECT_EQ(-EBUSY, ipu_t_attach(b));
	EXPECT_EQ(-EPERM, ipu_t_run(b, 0, &seq));
	ASSERT_EQ(0, ipu_x(b, DRM_IOCTL_IPU_INFO, &info));
	EXPECT_EQ(getpid(), info.owner_pid);
	EXPECT_EQ((uint64_t)getpid(), ipu_t_sysfs_u64(0, "owner_pid"));
	close(a);
	EXPECT_EQ(0, ipu_t_attach(b));
	{
		struct ipu_attach_args d = { 0 };

		EXPECT_EQ(0, ipu_x(b, DRM_IOCTL_IPU_DETACH, &d));
		EXPECT_EQ(-EPERM, ipu_x(b, DRM_IOCTL_IPU_DETACH, &d));
	}
	close(b);
}

TEST(load_run_wait)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 1, 0, &len);
	float *x = malloc(N * 4), *y = malloc(N * 4);
	struct ipu_load_args la = { 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint64_t seq;
	uint32_t st;
	int fd, i;

	ASSERT_NE(NULL, img);
	fd = ipu_t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	la.image = (uintptr_t)img;
	la.size = len;
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &la));
	EXPECT_EQ(1u, la.num_programs);
	EXPECT_EQ(2u, la.num_streams);
	{
		struct ipu_stream_info_args si = { .stream = 1 };

		ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_STREAM_INFO, &si));
		EXPECT_EQ(IPU_STREAM_D2H, si.dir);
		EXPECT_EQ(N * 4u, si.buffer_bytes);
	}
	ASSERT_EQ(0, ipu_t_ring(&ring, 64));
	fill(x, N, -3.0f);
	memset(y, 0, N * 4);

	/* a run with no buffers stalls: WAIT times out, abort cancels it */
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd, seq, 50000000, NULL));
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd, seq, 0, NULL));
	{
		struct ipu_reset_args r = { .mode = IPU_RESET_ABORT };

		ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_RESET, &r));
	}
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(fd, seq, -1, NULL));

	/* now with buffers through io_uring */
	ASSERT_EQ(0, ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1));
	ASSERT_EQ(0, ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y, N * 4, 2, -1));
	ASSERT_EQ(2, io_uring_submit(&ring));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd, seq, 10000000000ll, &st));
	EXPECT_EQ(0u, st);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(N * 4, cqe->res);
		EXPECT_EQ(cqe->user_data, cqe->big_cqe[0]);	/* the tag */
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_TRUE(check_affine(x, y, N));
	EXPECT_EQ(-EINVAL, ipu_t_wait(fd, seq + 100, 0, NULL));
	io_uring_queue_exit(&ring);
	close(fd);
	free(img);
	free(x);
	free(y);
}

TEST(write_and_read_tensor)
{
	size_t len;
	void *img = ipu_t_affine_image(4096, 1, 0, &len);
	static uint8_t out[12288], back[12288];	/* 3 pages: an SG list */
	struct ipu_tensor_args a = { 0 };
	int fd = ipu_t_open(0), i;

	ASSERT_NE(NULL, img);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	a.data = (uintptr_t)out;
	a.size = sizeof(out);
	a.tile = 0;
	a.offset = 0;	/* x (16 KiB): the next run streams it in again */
	EXPECT_EQ(-ENOEXEC, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	for (i = 0; i < (int)sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 1);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
	memset(back, 0, sizeof(back));
	a.data = (uintptr_t)back;
	a.flags = IPU_TENSOR_F_READ;
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
	EXPECT_EQ(0, memcmp(out, back, sizeof(out)));
	/* past the end of the executable's tile memory, or its tiles */
	a.offset = IPU_T_TILE_MEM - 16;
	EXPECT_EQ(-ERANGE, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
	a.offset = 0;
	a.tile = IPU_T_TILES;
	EXPECT_EQ(-ERANGE, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
	close(fd);
	free(img);
}

static void streams_inflight(struct __test_metadata *_metadata, int fixed)
{
	enum { R = 64 };
	size_t len;
	void *img = ipu_t_affine_image(N, R, 0, &len);
	float *x, *y;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint64_t seq, before;
	int fd, i, ok = 1, got = 0;

	ASSERT_NE(NULL, img);
	x = mmap(NULL, 2 * R * N * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	y = x + R * N;
	fd = ipu_t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	ASSERT_EQ(0, ipu_t_ring(&ring, 2 * R));
	if (fixed) {
		struct iovec iov = { x, 2 * R * N * 4 };

		ASSERT_EQ(0, io_uring_register_buffers(&ring, &iov, 1));
	}
	for (i = 0; i < R; i++)
		fill(x + i * N, N, (float)i);
	memset(y, 0, R * N * 4);
	before = ipu_t_sysfs_u64(0, "stats/stream_cmds");
	for (i = 0; i < R; i++) {
		ASSERT_EQ(0, ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x + i * N, N * 4,
					i, fixed ? 0 : -1));
		ASSERT_EQ(0, ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y + i * N, N * 4,
					1000 + i, fixed ? 0 : -1));
	}
	ASSERT_EQ(2 * R, io_uring_submit(&ring));
	if (!fixed)
		EXPECT_LE(2 * R, (int)ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd, seq, 20000000000ll, NULL));
	while (got < 2 * R) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		if (cqe->res != N * 4)
			ok = 0;
		got++;
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_TRUE(ok);
	for (i = 0; i < R; i++)
		if (!check_affine(x + i * N, y + i * N, N))
			ok = 0;
	EXPECT_TRUE(ok);
	EXPECT_EQ(before + 2 * R, ipu_t_sysfs_u64(0, "stats/stream_cmds"));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	io_uring_queue_exit(&ring);
	close(fd);
	munmap(x, 2 * R * N * 4);
	free(img);
}

TEST(streams_64_in_flight)
{
	streams_inflight(_metadata, 0);
}

TEST(streams_64_in_flight_registered_buffers)
{
	streams_inflight(_metadata, 1);
}

/* struct big enough for any of our ioctls, with room beyond */
union anyarg {
	struct ipu_info_args info;
	struct ipu_counters_args cnt;
	uint8_t raw[512];
};

#define IOC_RESIZE(cmd, size) \
	(((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) | ((size) << _IOC_SIZESHIFT))

TEST(bad_ioctls)
{
	static const unsigned long cmds[] = {
		DRM_IOCTL_IPU_INFO, DRM_IOCTL_IPU_ATTACH, DRM_IOCTL_IPU_DETACH, DRM_IOCTL_IPU_LOAD_EXECUTABLE,
		DRM_IOCTL_IPU_WRITE_TENSOR, DRM_IOCTL_IPU_RUN, DRM_IOCTL_IPU_WAIT, DRM_IOCTL_IPU_RESET,
		DRM_IOCTL_IPU_COUNTERS, DRM_IOCTL_IPU_GET_EVENTS, DRM_IOCTL_IPU_STREAM_INFO,
	};
	union anyarg u;
	size_t len;
	void *img = ipu_t_affine_image(16, 1, 0, &len);
	unsigned int i;
	int fd = ipu_t_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		unsigned long c = cmds[i];

		/* bad pointers */
		EXPECT_EQ(-EFAULT, ipu_x(fd, c, NULL));
		EXPECT_EQ(-EFAULT, ipu_x(fd, c, (void *)8));
		EXPECT_EQ(-EFAULT, ipu_x(fd, c, (void *)-4096L));
	}
	/* flags and padding */
	{
		struct ipu_info_args a = { .flags = 1 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_INFO, &a));
		a.flags = 0;
		a.pad = 1;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_INFO, &a));
		/* an older (shorter) INFO is zero-filled and works */
		memset(&u, 0, sizeof(u));
		EXPECT_EQ(0, ipu_x(fd, IOC_RESIZE(DRM_IOCTL_IPU_INFO, 32), &u));
		EXPECT_EQ(16u, u.info.tiles);
		EXPECT_EQ(0u, u.info.state);	/* beyond 32 bytes: not written */
		/* a newer caller's struct: drm_ioctl() ignores the bytes beyond ours */
		memset(&u, 0, sizeof(u));
		u.raw[sizeof(a) + 8] = 0x5a;
		EXPECT_EQ(0, ipu_x(fd, IOC_RESIZE(DRM_IOCTL_IPU_INFO, sizeof(a) + 64), &u));
		EXPECT_EQ(16u, u.info.tiles);
		EXPECT_EQ(0x5a, u.raw[sizeof(a) + 8]);
	}
	{
		struct ipu_attach_args a = { .pad = 1 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_ATTACH, &a));
		a.pad = 0;
		a.flags = 0x80000000u;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_DETACH, &a));
	}
	{
		struct ipu_load_args a = { .image = (uintptr_t)img, .size = len, .flags = 2 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a));
		a.flags = 0;
		a.pad = 1;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a));
		a.pad = 0;
		a.size = 0;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a));
		a.size = len;
		a.image = 16;
		EXPECT_EQ(-EFAULT, ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a));
		a.image = (uintptr_t)img;
		a.size = 0x7fffffff;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a));
		/* a corrupt image: the device's verifier refuses it */
		((uint8_t *)img)[len - 1] ^= 0x55;
		a.size = len;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a));
		EXPECT_EQ(6u, a.dev_status);	/* EXE_INVALID */
		EXPECT_NE(0, a.verifier_error);
		((uint8_t *)img)[len - 1] ^= 0x55;
		EXPECT_EQ(0, ipu_t_load(fd, img, len));
	}
	{
		struct ipu_run_args a = { .flags = 1 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_RUN, &a));
		a.flags = 0;
		a.program = 7;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_RUN, &a));
	}
	{
		struct ipu_wait_args a = { .seq = 0 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_WAIT, &a));
		a.seq = 1ull << 60;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_WAIT, &a));
		a.seq = 0;
		a.flags = 4;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_WAIT, &a));
	}
	{
		struct ipu_reset_args a = { .mode = 3 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_RESET, &a));
		a.mode = 0;
		a.flags = 1;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_RESET, &a));
	}
	{
		struct ipu_tensor_args a = { .data = (uintptr_t)&u, .size = 4, .flags = 8 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
		a.flags = 0;
		a.tile = 9999;
		EXPECT_EQ(-ERANGE, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
		a.tile = 0;
		a.data = 12;
		EXPECT_EQ(-EFAULT, ipu_x(fd, DRM_IOCTL_IPU_WRITE_TENSOR, &a));
	}
	{
		struct ipu_events_args a = { .max = 100000 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &a));
		a.max = 4;
		a.events = 8;
		EXPECT_EQ(-EFAULT, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &a));
	}
	{
		struct ipu_stream_info_args a = { .stream = 2 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_STREAM_INFO, &a));
	}
	{
		struct ipu_counters_args a = { .pad = 3 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_COUNTERS, &a));
	}
	/* driver numbers beyond the table, numbers beyond DRM's range */
	EXPECT_EQ(-EINVAL, ipu_x(fd, IPU_DRM_IOWR(DRM_IPU_BO_INFO + 1, struct ipu_attach_args), &u));
	EXPECT_EQ(-EINVAL, ipu_x(fd, IPU_DRM_IOWR(0x5f, struct ipu_info_args), &u));
	EXPECT_EQ(-EINVAL, ipu_x(fd, _IOWR('d', 0xf0, struct ipu_info_args), &u));
	/* buffer objects: bad sizes, flags, handles */
	{
		struct ipu_bo_create_args c = { .size = 0 };
		struct ipu_bo_info_args bi = { .handle = 12345 };

		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_BO_CREATE, &c));
		c.size = 1ull << 40;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_BO_CREATE, &c));
		c.size = 4096;
		c.flags = 1;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_BO_CREATE, &c));
		EXPECT_EQ(-ENOENT, ipu_x(fd, DRM_IOCTL_IPU_BO_INFO, &bi));
		bi.flags = 1;
		EXPECT_EQ(-EINVAL, ipu_x(fd, DRM_IOCTL_IPU_BO_INFO, &bi));
	}
	/* the device is still fine */
	{
		struct ipu_info_args a = { 0 };

		EXPECT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &a));
		EXPECT_EQ(IPU_DEV_STATE_READY, a.state);
	}
	close(fd);
	free(img);
}

TEST(bad_uring_cmds)
{
	size_t len;
	void *img = ipu_t_affine_image(16, 1, 0, &len);
	float buf[16];
	struct io_uring ring, small;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int fd = ipu_t_open(0), other = ipu_t_open(0), i;
	struct {
		uint32_t op, stream, len;
		uint64_t addr;
		int want;
	} cases[] = {
		{ 0x77, 0, 64, 0, -ENOTTY },			/* unknown cmd_op */
		{ IPU_URING_CMD_SEND, 5, 64, 0, -EINVAL },	/* no such stream */
		{ IPU_URING_CMD_RECV, 0, 64, 0, -EINVAL },	/* wrong direction */
		{ IPU_URING_CMD_SEND, 0, 60, 0, -EINVAL },	/* wrong length */
		{ IPU_URING_CMD_SEND, 0, 0, 0, -EINVAL },	/* zero length */
		{ IPU_URING_CMD_SEND, 0, 64, 16, -EFAULT },	/* bad address */
	};

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	ASSERT_EQ(0, ipu_t_ring(&ring, 16));
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		ASSERT_EQ(0, ipu_t_prep(&ring, fd, cases[i].op, cases[i].stream,
					cases[i].addr ? (void *)(uintptr_t)cases[i].addr : buf,
					cases[i].len, i, -1));
		ASSERT_EQ(1, io_uring_submit(&ring));
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(cases[i].want, cqe->res) TH_LOG("case %d", i);
		io_uring_cqe_seen(&ring, cqe);
	}
	/* flags and padding of the command must be zero */
	sqe = ipu_t_prep_sqe(&ring, fd, IPU_URING_CMD_SEND, 0, buf, 64, 99, -1);
	ASSERT_NE(NULL, sqe);
	((struct ipu_uring_cmd *)sqe->cmd)->flags = 2;
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	sqe = ipu_t_prep_sqe(&ring, fd, IPU_URING_CMD_SEND, 0, buf, 64, 98, -1);
	ASSERT_NE(NULL, sqe);
	sqe->cmd[60] = 1;
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	/* a handle without IPU_URING_F_BO */
	sqe = ipu_t_prep_sqe(&ring, fd, IPU_URING_CMD_SEND, 0, buf, 64, 96, -1);
	ASSERT_NE(NULL, sqe);
	((struct ipu_uring_cmd *)sqe->cmd)->handle = 1;
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	/* buffer objects: no such handle, outside the object */
	{
		void *map = NULL;
		int h = ipu_t_bo(fd, 4096, &map);

		ASSERT_LT(0, h);
		ASSERT_EQ(0, ipu_t_prep_bo(&ring, fd, IPU_URING_CMD_SEND, 0, h + 100, 0, 64, 95));
		ASSERT_EQ(0, ipu_t_prep_bo(&ring, fd, IPU_URING_CMD_SEND, 0, h, 4096 - 32, 64, 94));
		ASSERT_EQ(2, io_uring_submit(&ring));
		for (i = 0; i < 2; i++) {
			ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
			EXPECT_EQ(cqe->user_data == 95 ? -ENOENT : -EFAULT, cqe->res);
			io_uring_cqe_seen(&ring, cqe);
		}
		munmap(map, 4096);
	}
	/* a file that is not attached */
	ASSERT_EQ(0, ipu_t_prep(&ring, other, IPU_URING_CMD_SEND, 0, buf, 64, 97, -1));
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EPERM, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	/* without SQE128 */
	ASSERT_EQ(0, io_uring_queue_init(4, &small, 0));
	sqe = io_uring_get_sqe(&small);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = IPU_URING_CMD_SEND;
	ASSERT_EQ(1, io_uring_submit(&small));
	ASSERT_EQ(0, io_uring_wait_cqe(&small, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&small, cqe);
	io_uring_queue_exit(&small);
	io_uring_queue_exit(&ring);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	close(other);
	close(fd);
	free(img);
}

/*
 * Chaos: streams and runs in flight while aborts, engine resets and device
 * resets land at random moments.  Every buffer must come back exactly once
 * (moved or -ECANCELED), no page may stay pinned, the device must work.
 */
TEST(chaos_aborts_and_resets_while_streaming)
{
	enum { R = 32, ITER = 24, NC = 16384 };
	size_t len;
	void *img = ipu_t_affine_image(NC, R, 0, &len);
	float *x = malloc(R * NC * 4), *y = malloc(R * NC * 4);
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned int seed = 12345;
	int fd = ipu_t_open(0), it, i, moved = 0, cancelled = 0, other = 0, need_load = 1;
	uint64_t seq;

	ASSERT_NE(NULL, img);
	ASSERT_TRUE(x && y);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_ring(&ring, 4 * R));
	for (it = 0; it < ITER; it++) {
		struct ipu_reset_args r = { 0 };
		int action = rand_r(&seed) % 4, got = 0, expect;

		if (need_load)
			ASSERT_EQ(0, ipu_t_load(fd, img, len));
		need_load = action >= 2;	/* those unload the executable */
		/* all outputs, half the inputs: the run stalls half way unless
		 * the rest comes (no action) or it is cancelled (the others) */
		for (i = 0; i < R; i++) {
			if (i < R / 2)
				ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x + i * NC, NC * 4, i, -1);
			ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y + i * NC, NC * 4, R + i, -1);
		}
		ASSERT_EQ(R + R / 2, io_uring_submit(&ring));
		ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
		usleep(rand_r(&seed) % 2000);
		switch (action) {
		case 0:
			break;
		case 1:
			r.mode = IPU_RESET_ABORT;
			break;
		case 2:
			r.mode = IPU_RESET_ENGINE;
			break;
		default:
			r.mode = IPU_RESET_DEVICE;
			break;
		}
		if (action) {
			ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_RESET, &r));
			expect = R + R / 2;
		} else {
			for (i = R / 2; i < R; i++)
				ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x + i * NC, NC * 4, i, -1);
			ASSERT_EQ(R / 2, io_uring_submit(&ring));
			expect = 2 * R;
		}
		{
			int w = ipu_t_wait(fd, seq, 20000000000ll, NULL);

			EXPECT_EQ(action ? IPU_WAIT_ABORTED : IPU_WAIT_COMPLETED, w);
		}
		while (got < expect) {
			ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
			if (cqe->res == NC * 4)
				moved++;
			else if (cqe->res == -ECANCELED)
				cancelled++;
			else
				other++;
			got++;
			io_uring_cqe_seen(&ring, cqe);
		}
		/* nothing more may arrive */
		EXPECT_NE(0, io_uring_peek_cqe(&ring, &cqe));
	}
	TH_LOG("%d iterations: %d buffers moved, %d cancelled, %d other", ITER, moved,
	       cancelled, other);
	EXPECT_EQ(0, other);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	/* and a clean run afterwards */
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	for (i = 0; i < R * NC; i++)
		x[i] = (float)i;
	for (i = 0; i < R; i++) {
		ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x + i * NC, NC * 4, i, -1);
		ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y + i * NC, NC * 4, R + i, -1);
	}
	ASSERT_EQ(2 * R, io_uring_submit(&ring));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd, seq, 20000000000ll, NULL));
	for (i = 0; i < 2 * R; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(NC * 4, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_TRUE(check_affine(x, y, R * NC));
	io_uring_queue_exit(&ring);
	close(fd);
	free(x);
	free(y);
	free(img);
}

/* A child with streams in flight (and a run waiting for more) is killed. */
TEST(kill9_with_streams_in_flight)
{
	enum { R = 64 };
	int pipefd[2], st, fd, i;
	uint64_t base = ipu_t_sysfs_u64(0, "stats/pinned_pages");
	uint64_t resets = ipu_t_sysfs_u64(0, "stats/resets");
	pid_t pid;
	char c;

	ASSERT_EQ(0u, base);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		size_t len;
		void *img = ipu_t_affine_image(N, R + 1, 0, &len);
		float *x = malloc(R * N * 4), *y = malloc(R * N * 4);
		struct io_uring ring;
		uint64_t seq;

		fd = ipu_t_open(0);
		if (fd < 0 || ipu_t_attach(fd) || ipu_t_load(fd, img, len) ||
		    ipu_t_ring(&ring, 2 * R))
			_exit(1);
		/* outputs first: the run consumes inputs, fills outputs, then
		 * waits for input R+1 that never comes */
		for (i = 0; i < R; i++)
			ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y + i * N, N * 4, i, -1);
		for (i = 0; i < R / 2; i++)
			ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x + i * N, N * 4, i, -1);
		if (io_uring_submit(&ring) != R + R / 2 || ipu_t_run(fd, 0, &seq))
			_exit(2);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	usleep(200000);
	EXPECT_LT(base, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	/* the io_uring teardown may finish just after the wait */
	for (i = 0; i < 100 && ipu_t_sysfs_u64(0, "stats/pinned_pages") != base; i++)
		usleep(50000);
	EXPECT_EQ(base, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	for (i = 0; i < 100 && ipu_t_sysfs_u64(0, "owner_pid") != 0; i++)
		usleep(50000);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "owner_pid"));
	TH_LOG("device resets during cleanup: %llu",
	       (unsigned long long)(ipu_t_sysfs_u64(0, "stats/resets") - resets));

	/* the next process gets a working device */
	{
		size_t len;
		void *img = ipu_t_affine_image(N, 1, 0, &len);
		float x[N], y[N];
		struct io_uring ring;
		struct io_uring_cqe *cqe;
		uint64_t seq;

		fd = ipu_t_open(0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ipu_t_attach(fd));
		ASSERT_EQ(0, ipu_t_load(fd, img, len));
		ASSERT_EQ(0, ipu_t_ring(&ring, 4));
		fill(x, N, 7.0f);
		ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1);
		ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y, N * 4, 2, -1);
		ASSERT_EQ(2, io_uring_submit(&ring));
		ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
		EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd, seq, 10000000000ll, NULL));
		for (i = 0; i < 2; i++) {
			ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
			EXPECT_EQ(N * 4, cqe->res);
			io_uring_cqe_seen(&ring, cqe);
		}
		EXPECT_TRUE(check_affine(x, y, N));
		io_uring_queue_exit(&ring);
		close(fd);
		free(img);
	}
	EXPECT_EQ(base, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
}

/* The driver stops hearing from the device (debugfs inject_hang): the
 * watchdog resets it. */
TEST(watchdog_recovers_hung_device)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 1, 0, &len);
	float x[N], y[N];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint64_t seq, resets = ipu_t_sysfs_u64(1, "stats/resets");
	double t0;
	char knob[16];
	int fd = ipu_t_open(1), i, rc;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	ASSERT_EQ(0, ipu_t_ring(&ring, 4));
	ASSERT_EQ(0, ipu_t_sysfs_write(1, "watchdog_ms", "500"));
	fill(x, N, 1.0f);
	ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1);
	ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y, N * 4, 2, -1);
	ASSERT_EQ(2, io_uring_submit(&ring));
	ASSERT_EQ(0, ipu_t_debugfs_write(1, "inject_hang", "1"));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	t0 = now_s();
	rc = ipu_t_wait(fd, seq, 10000000000ll, NULL);
	EXPECT_EQ(IPU_WAIT_ABORTED, rc);
	TH_LOG("watchdog fired after %.2f s", now_s() - t0);
	EXPECT_LT(now_s() - t0, 5.0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(-ECANCELED, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_EQ(resets + 1, ipu_t_sysfs_u64(1, "stats/resets"));
	EXPECT_STREQ("N", ipu_t_debugfs_read(1, "inject_hang", knob, sizeof(knob)));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(1, "stats/pinned_pages"));
	/* the reset unloaded the executable; load again and run */
	ASSERT_EQ(-ENOEXEC, ipu_t_run(fd, 0, &seq));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	memset(y, 0, sizeof(y));
	ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1);
	ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y, N * 4, 2, -1);
	ASSERT_EQ(2, io_uring_submit(&ring));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd, seq, 10000000000ll, NULL));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_TRUE(check_affine(x, y, N));
	ipu_t_sysfs_write(1, "watchdog_ms", "10000");
	io_uring_queue_exit(&ring);
	close(fd);
	free(img);
}

/* A program that computes forever: the device is busy, never stalled on a
 * stream, and completes nothing, but it keeps executing steps, so the
 * progress watchdog leaves it alone; run_limit_ms resets it mid-run. */
TEST(watchdog_stops_runaway_program)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 1, 0x7fffffff, &len);
	uint64_t seq, resets = ipu_t_sysfs_u64(1, "stats/resets");
	struct ipu_info_args info = { 0 };
	double t0;
	int fd = ipu_t_open(1);

	ASSERT_NE(NULL, img);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	ASSERT_EQ(0, ipu_t_sysfs_write(1, "watchdog_ms", "1000"));
	ASSERT_EQ(0, ipu_t_sysfs_write(1, "run_limit_ms", "1000"));
	ASSERT_EQ(0, ipu_t_run(fd, 1, &seq));
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd, seq, 300000000, NULL));
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &info));
	EXPECT_EQ(IPU_DEV_STATE_BUSY, info.state);
	t0 = now_s();
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(fd, seq, 10000000000ll, NULL));
	TH_LOG("runaway program reset by run_limit_ms after %.2f s more", now_s() - t0);
	EXPECT_EQ(resets + 1, ipu_t_sysfs_u64(1, "stats/resets"));
	/* and the device works again */
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &info));
	EXPECT_EQ(IPU_DEV_STATE_READY, info.state);
	ipu_t_sysfs_write(1, "watchdog_ms", "10000");
	ipu_t_sysfs_write(1, "run_limit_ms", "60000");
	close(fd);
	free(img);
}

/* netlink events: attach, error, reset, detach (and the GET_EVENTS copy) */
static int nl_seen[8];

static int nl_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[IPU_GENL_A_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));

	(void)arg;
	if (nla_parse(tb, IPU_GENL_A_MAX, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
		      NULL) < 0)
		return NL_SKIP;
	if (tb[IPU_GENL_A_TYPE] && tb[IPU_GENL_A_MINOR] &&
	    nla_get_u32(tb[IPU_GENL_A_MINOR]) == 1) {
		uint32_t t = nla_get_u32(tb[IPU_GENL_A_TYPE]);

		if (t < 8)
			nl_seen[t]++;
	}
	return NL_OK;
}

TEST(netlink_events)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct ipu_event ev[16];
	struct ipu_events_args ea = { .events = (uintptr_t)ev, .max = 16 };
	struct ipu_reset_args r = { .mode = IPU_RESET_DEVICE };
	uint64_t errors;
	int grp, fd, i;

	ASSERT_NE(NULL, sk);
	ASSERT_EQ(0, genl_connect(sk));
	grp = genl_ctrl_resolve_grp(sk, IPU_GENL_NAME, IPU_GENL_MCGRP_EVENTS);
	ASSERT_LE(0, grp);
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, nl_cb, NULL);
	ASSERT_EQ(0, nl_socket_add_membership(sk, grp));
	fd = ipu_t_open(1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &ea));
	ea.after = ea.last_id;
	errors = ipu_t_sysfs_u64(1, "stats/errors");
	ASSERT_EQ(0, ipu_t_attach(fd));
	/* a refused executable: the device latches EXE_INVALID, an error event */
	{
		size_t len;
		uint8_t *img = ipu_t_affine_image(16, 1, 0, &len);

		ASSERT_NE(NULL, img);
		img[len / 2] ^= 0xff;
		EXPECT_EQ(-EINVAL, ipu_t_load(fd, img, len));
		free(img);
	}
	/* the error interrupt is a separate vector: let it arrive first */
	for (i = 0; i < 100 && ipu_t_sysfs_u64(1, "stats/errors") == errors; i++)
		usleep(20000);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_RESET, &r));
	{
		struct ipu_attach_args d = { 0 };

		ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_DETACH, &d));
	}
	ASSERT_EQ(0, nl_socket_set_nonblocking(sk));
	for (i = 0; i < 50 && !(nl_seen[IPU_EVENT_ATTACH] && nl_seen[IPU_EVENT_DETACH] &&
				nl_seen[IPU_EVENT_RESET] && nl_seen[IPU_EVENT_ERROR]); i++) {
		nl_recvmsgs_default(sk);
		usleep(20000);
	}
	EXPECT_EQ(1, nl_seen[IPU_EVENT_ATTACH]);
	EXPECT_EQ(1, nl_seen[IPU_EVENT_ERROR]);
	EXPECT_EQ(1, nl_seen[IPU_EVENT_RESET]);
	EXPECT_EQ(1, nl_seen[IPU_EVENT_DETACH]);
	EXPECT_EQ(errors + 1, ipu_t_sysfs_u64(1, "stats/errors"));
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &ea));
	ASSERT_EQ(4u, ea.count);
	EXPECT_EQ(IPU_EVENT_ATTACH, ev[0].type);
	EXPECT_EQ(getpid(), ev[0].pid);
	EXPECT_EQ(IPU_EVENT_ERROR, ev[1].type);
	EXPECT_EQ(6u, ev[1].code);	/* EXE_INVALID */
	EXPECT_EQ(IPU_EVENT_RESET, ev[2].type);
	EXPECT_EQ(IPU_RESET_REASON_USER, ev[2].code);
	EXPECT_EQ(IPU_EVENT_DETACH, ev[3].type);
	EXPECT_LT(ev[0].id, ev[3].id);
	EXPECT_LE(ev[0].time_ns, ev[3].time_ns);
	close(fd);
	nl_socket_free(sk);
}

TEST(two_devices_at_once)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 8, 0, &len);
	static float x[2][8 * N], y[2][8 * N];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint64_t seq[2];
	int fd[2], d, i;

	ASSERT_EQ(0, ipu_t_ring(&ring, 64));
	for (d = 0; d < 2; d++) {
		fd[d] = ipu_t_open(d);
		ASSERT_LE(0, fd[d]);
		ASSERT_EQ(0, ipu_t_attach(fd[d]));
		ASSERT_EQ(0, ipu_t_load(fd[d], img, len));
		for (i = 0; i < 8; i++) {
			fill(x[d] + i * N, N, (float)(d * 100 + i));
			ipu_t_prep(&ring, fd[d], IPU_URING_CMD_SEND, 0, x[d] + i * N, N * 4, i, -1);
			ipu_t_prep(&ring, fd[d], IPU_URING_CMD_RECV, 1, y[d] + i * N, N * 4, i, -1);
		}
	}
	ASSERT_EQ(32, io_uring_submit(&ring));
	for (d = 0; d < 2; d++)
		ASSERT_EQ(0, ipu_t_run(fd[d], 0, &seq[d]));
	for (d = 0; d < 2; d++)
		EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd[d], seq[d], 20000000000ll, NULL));
	for (i = 0; i < 32; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(N * 4, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	for (d = 0; d < 2; d++)
		EXPECT_TRUE(check_affine(x[d], y[d], 8 * N));
	io_uring_queue_exit(&ring);
	close(fd[0]);
	close(fd[1]);
	free(img);
}

/*
 * The PCI function goes away (sysfs remove, like a hot unplug) while a
 * process has it attached with buffers queued and a run waiting: the
 * buffers come back cancelled, calls fail with -ENODEV, close works; a
 * rescan brings the device back.  Runs last: it re-creates /dev/accel/accel1.
 */
/*
 * After a reset: fd loads img (the affine model) again and one run with
 * input v gives the right result through the io_uring stream path.
 */
static void runs_again(struct __test_metadata *_metadata, struct io_uring *ring, int fd,
		       const void *img, size_t len, float v)
{
	static float x[N], z[N];
	struct io_uring_cqe *cqe;
	uint64_t seq;
	uint32_t st;
	int i;

	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	fill(x, N, v);
	memset(z, 0, sizeof(z));
	ASSERT_EQ(0, ipu_t_prep(ring, fd, IPU_URING_CMD_SEND, 0, x, N * 4, 10, -1));
	ASSERT_EQ(0, ipu_t_prep(ring, fd, IPU_URING_CMD_RECV, 1, z, N * 4, 11, -1));
	ASSERT_EQ(2, io_uring_submit(ring));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd, seq, 10000000000ll, &st));
	EXPECT_EQ(0u, st);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
		EXPECT_EQ(N * 4, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
	EXPECT_TRUE(check_affine(x, z, N));
}

/*
 * A function-level reset through the PCI core (sysfs "reset": the device
 * offers FLR) while a run waits for buffers: the driver's reset_prepare
 * and reset_done hooks cancel the buffers, unpin every page, report a
 * RESET event for reason PCI, and the device works again afterwards on
 * the same file.
 */
TEST(flr_through_sysfs_reset)
{
	size_t len, len1;
	void *img = ipu_t_affine_image(N, 4, 0, &len);
	void *img1 = ipu_t_affine_image(N, 1, 0, &len1);
	static float y[4][N];
	struct ipu_info_args info = { 0 };
	struct ipu_event ev[16];
	struct ipu_events_args ea = { .events = (uintptr_t)ev, .max = 16 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char path[128], methods[128] = "";
	int64_t pins;
	uint64_t seq, resets;
	uint32_t i, n_pci = 0;
	int fd = ipu_t_open(0);
	FILE *f;

	ASSERT_NE(NULL, img);
	ASSERT_NE(NULL, img1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &info));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/reset_method",
		 info.pci_domain, info.pci_bus, info.pci_dev, info.pci_fn);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(methods, sizeof(methods), f));
	fclose(f);
	ASSERT_NE(NULL, strstr(methods, "flr")) TH_LOG("reset methods: %s", methods);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &ea));
	ea.after = ea.last_id;
	resets = ipu_t_sysfs_u64(0, "stats/resets");
	pins = foll_pins_settled();
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	ASSERT_EQ(0, ipu_t_ring(&ring, 8));
	for (i = 0; i < 4; i++)
		ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y[i], N * 4, i, -1);
	ASSERT_EQ(4, io_uring_submit(&ring));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd, seq, 50000000, NULL));
	EXPECT_LT(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));

	path[strlen(path) - strlen("_method")] = 0;
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	EXPECT_LE(0, fputs("1", f));
	EXPECT_EQ(0, fclose(f)) TH_LOG("%s: %s", path, strerror(errno));

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(-ECANCELED, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(fd, seq, -1, NULL));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	EXPECT_EQ(pins, foll_pins_settled());
	EXPECT_EQ(resets + 1, ipu_t_sysfs_u64(0, "stats/resets"));
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &ea));
	for (i = 0; i < ea.count; i++)
		if (ev[i].type == IPU_EVENT_RESET && ev[i].code == IPU_RESET_REASON_PCI)
			n_pci++;
	EXPECT_EQ(1u, n_pci);

	/* recovered: the same file loads and runs again, with the right result */
	runs_again(_metadata, &ring, fd, img1, len1, 1.5f);
	io_uring_queue_exit(&ring);
	close(fd);
	free(img);
	free(img1);
}

/*
 * AER recovery while a run waits for buffers.  The emulated device has no
 * AER capability to inject an error through, so the driver's debugfs knob
 * "aer" calls its handlers in the PCI core's order (error_detected with a
 * frozen channel, slot_reset, resume): the buffers come back cancelled,
 * no page stays pinned, a RESET event says PCI, and the same file loads
 * and runs again.
 */
TEST(aer_recovery_through_handlers)
{
	size_t len, len1;
	void *img = ipu_t_affine_image(N, 4, 0, &len);
	void *img1 = ipu_t_affine_image(N, 1, 0, &len1);
	static float y[4][N];
	struct ipu_event ev[16];
	struct ipu_events_args ea = { .events = (uintptr_t)ev, .max = 16 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint64_t seq, resets;
	uint32_t i, n_pci = 0;
	int fd = ipu_t_open(0);

	ASSERT_NE(NULL, img);
	ASSERT_NE(NULL, img1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &ea));
	ea.after = ea.last_id;
	resets = ipu_t_sysfs_u64(0, "stats/resets");
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	ASSERT_EQ(0, ipu_t_ring(&ring, 8));
	for (i = 0; i < 4; i++)
		ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y[i], N * 4, i, -1);
	ASSERT_EQ(4, io_uring_submit(&ring));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd, seq, 50000000, NULL));
	EXPECT_LT(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));

	ASSERT_EQ(0, ipu_t_debugfs_write(0, "aer", "1"));

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(-ECANCELED, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(fd, seq, -1, NULL));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	EXPECT_LE(resets + 1, ipu_t_sysfs_u64(0, "stats/resets"));
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_GET_EVENTS, &ea));
	for (i = 0; i < ea.count; i++)
		if (ev[i].type == IPU_EVENT_RESET && ev[i].code == IPU_RESET_REASON_PCI)
			n_pci++;
	EXPECT_EQ(1u, n_pci);

	/* recovered: the same file loads and runs again, with the right result */
	runs_again(_metadata, &ring, fd, img1, len1, 2.5f);
	io_uring_queue_exit(&ring);
	close(fd);
	free(img);
	free(img1);
}

TEST(pci_remove_while_open)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 4, 0, &len);
	static float y[4][N];
	struct ipu_info_args info = { 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char path[128];
	uint64_t seq;
	int fd = ipu_t_open(1), i, w;

	ASSERT_NE(NULL, img);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &info));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/remove",
		 info.pci_domain, info.pci_bus, info.pci_dev, info.pci_fn);
	ASSERT_EQ(0, ipu_t_attach(fd));
	ASSERT_EQ(0, ipu_t_load(fd, img, len));
	ASSERT_EQ(0, ipu_t_ring(&ring, 8));
	for (i = 0; i < 4; i++)
		ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y[i], N * 4, i, -1);
	ASSERT_EQ(4, io_uring_submit(&ring));
	ASSERT_EQ(0, ipu_t_run(fd, 0, &seq));
	EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd, seq, 50000000, NULL));
	{
		FILE *f = fopen(path, "w");

		ASSERT_NE(NULL, f);
		fputs("1", f);
		fclose(f);
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(-ECANCELED, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	w = ipu_t_wait(fd, seq, 0, NULL);
	EXPECT_TRUE(w == -ENODEV || w == IPU_WAIT_ABORTED);
	EXPECT_EQ(-ENODEV, ipu_x(fd, DRM_IOCTL_IPU_INFO, &info));
	EXPECT_NE(0, access("/dev/accel/accel1", F_OK));
	io_uring_queue_exit(&ring);
	close(fd);
	{
		FILE *f = fopen("/sys/bus/pci/rescan", "w");

		ASSERT_NE(NULL, f);
		fputs("1", f);
		fclose(f);
	}
	for (i = 0; i < 50 && access("/dev/accel/accel1", F_OK); i++)
		usleep(100000);
	fd = ipu_t_open(1);
	ASSERT_LE(0, fd);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, ipu_x(fd, DRM_IOCTL_IPU_INFO, &info));
	EXPECT_EQ(2ull, info.serial);
	EXPECT_EQ(1u, info.minor);
	close(fd);
	free(img);
}

TEST_HARNESS_MAIN
