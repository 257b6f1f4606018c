// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_group.c - kselftest of the device group (DRM_IOCTL_IPU_GROUP_ATTACH,
 * DRM_IOCTL_IPU_LINK_STREAM) on the VM's two devices, joined by one
 * ipu-link (scripts/vm-run): acquired and released as one, a transfer
 * device to device, a reset of one member failing the group's request
 * and recovering every member; the same through libipu.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ipu/ipu.h"
#include "ipu_util.h"
#include "kselftest_harness.h"

#define N 1024		/* floats per buffer */

static int group_attach(int fd0, int fd1, uint32_t *id)
{
	int32_t fds[2] = { fd0, fd1 };
	struct ipu_group_attach_args a = { .fds = (uintptr_t)fds, .count = 2 };
	int ret = ipu_x(fd0, DRM_IOCTL_IPU_GROUP_ATTACH, &a);

	if (id)
		*id = a.group_id;
	return ret;
}

static int info(int fd, struct ipu_info_args *a)
{
	memset(a, 0, sizeof(*a));
	return ipu_x(fd, DRM_IOCTL_IPU_INFO, a);
}

static int sysfs_read(int n, const char *attr, char *buf, size_t len)
{
	char path[96];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/%s", n, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		return -errno;
	buf[r] = 0;
	return 0;
}

/* Both members load the affine executable; member 0's y feeds member 1's x. */
static int load_and_link(int fd0, int fd1, const void *img, size_t len,
			 struct ipu_link_stream_args *ls)
{
	int ret = ipu_t_load(fd0, img, len);

	if (!ret)
		ret = ipu_t_load(fd1, img, len);
	if (ret)
		return ret;
	memset(ls, 0, sizeof(*ls));
	ls->stream = 1;
	ls->peer_ipu = 1;
	ls->peer_stream = 0;
	return ipu_x(fd0, DRM_IOCTL_IPU_LINK_STREAM, ls);
}

TEST(acquired_and_released_as_one)
{
	struct ipu_info_args i0, i1;
	struct ipu_attach_args d = { 0 };
	char buf[128], want[128];
	uint32_t id;
	int fd0 = ipu_t_open(0), fd1 = ipu_t_open(1), other = ipu_t_open(1);

	ASSERT_LE(0, fd0);
	ASSERT_LE(0, fd1);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, info(fd0, &i0));
	ASSERT_EQ(0, info(fd1, &i1));
	ASSERT_TRUE(i0.caps & IPU_INFO_CAP_LINK);
	EXPECT_EQ(0u, i0.link_index);
	EXPECT_EQ(1u, i1.link_index);
	EXPECT_EQ(0u, i0.group_size);
	ASSERT_EQ(0, sysfs_read(1, "group", buf, sizeof(buf)));
	EXPECT_STREQ("none\n", buf);
	ASSERT_EQ(0, sysfs_read(1, "link_index", buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);

	/* all or none: a member owned by another file refuses the group */
	ASSERT_EQ(0, ipu_t_attach(other));
	EXPECT_EQ(-EBUSY, group_attach(fd0, fd1, NULL));
	ASSERT_EQ(0, info(fd0, &i0));
	EXPECT_EQ(0, i0.owner_pid);
	EXPECT_EQ(0, ipu_x(other, DRM_IOCTL_IPU_DETACH, &d));
	/* malformed: a member twice, the caller's fd not first */
	EXPECT_EQ(-EINVAL, group_attach(fd0, fd0, NULL));
	{
		int32_t fds[2] = { fd0, fd1 };
		struct ipu_group_attach_args a = { .fds = (uintptr_t)fds, .count = 2 };

		EXPECT_EQ(-EINVAL, ipu_x(fd1, DRM_IOCTL_IPU_GROUP_ATTACH, &a));
	}

	ASSERT_EQ(0, group_attach(fd0, fd1, &id));
	EXPECT_LT(0u, id);
	ASSERT_EQ(0, info(fd0, &i0));
	ASSERT_EQ(0, info(fd1, &i1));
	EXPECT_EQ(getpid(), i0.owner_pid);
	EXPECT_EQ(getpid(), i1.owner_pid);
	EXPECT_EQ(2u, i0.group_size);
	EXPECT_EQ(id, i1.group_id);
	EXPECT_EQ(0u, i0.group_ipu);
	EXPECT_EQ(1u, i1.group_ipu);
	snprintf(want, sizeof(want), "%u IPU 1 of 2: accel0 accel1\n", id);
	ASSERT_EQ(0, sysfs_read(1, "group", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
	EXPECT_EQ(-EBUSY, ipu_t_attach(other));

	/* DETACH of one member releases both */
	EXPECT_EQ(0, ipu_x(fd1, DRM_IOCTL_IPU_DETACH, &d));
	ASSERT_EQ(0, info(fd0, &i0));
	EXPECT_EQ(0, i0.owner_pid);
	EXPECT_EQ(0u, i0.group_size);
	ASSERT_EQ(0, sysfs_read(0, "group", buf, sizeof(buf)));
	EXPECT_STREQ("none\n", buf);
	EXPECT_EQ(0, ipu_t_attach(other));
	EXPECT_EQ(0, ipu_x(other, DRM_IOCTL_IPU_DETACH, &d));

	/* and closing a member's fd does too */
	ASSERT_EQ(0, group_attach(fd0, fd1, &id));
	close(fd1);
	ASSERT_EQ(0, info(fd0, &i0));
	EXPECT_EQ(0, i0.owner_pid);
	EXPECT_EQ(0, ipu_t_attach(other));
	close(other);
	close(fd0);
}

/* y1 = ((x * 2 + 1) * 2 + 1): member 0's output went to member 1 by the link */
static int check_twice(const float *x, const float *y, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (y[i] != (x[i] * 2.0f + 1.0f) * 2.0f + 1.0f)
			return 0;
	return 1;
}

TEST(link_transfer_and_group_reset)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 1, 0, &len);
	float *x = malloc(N * 4), *y = malloc(N * 4);
	struct ipu_link_stream_args ls;
	struct ipu_counters_args c0 = { 0 }, c1 = { 0 };
	struct ipu_reset_args r = { .mode = IPU_RESET_DEVICE };
	struct ipu_info_args i0, i1;
	struct io_uring ring0, ring1;
	struct io_uring_cqe *cqe;
	uint64_t s0, s1;
	uint32_t st, i, round;
	int fd0 = ipu_t_open(0), fd1 = ipu_t_open(1);

	ASSERT_NE(NULL, img);
	ASSERT_LE(0, fd0);
	ASSERT_LE(0, fd1);
	ASSERT_EQ(0, group_attach(fd0, fd1, NULL));
	/* the counters from zero: a device reset of the group */
	ASSERT_EQ(0, ipu_x(fd0, DRM_IOCTL_IPU_RESET, &r));
	ASSERT_EQ(0, load_and_link(fd0, fd1, img, len, &ls));
	EXPECT_EQ(N * 4u, ls.bytes);
	EXPECT_EQ(0u, ls.dev_status);
	/* refused: a host-to-device stream, the IPU itself */
	{
		struct ipu_link_stream_args bad = { .stream = 0, .peer_ipu = 1 };

		EXPECT_EQ(-EINVAL, ipu_x(fd0, DRM_IOCTL_IPU_LINK_STREAM, &bad));
		bad.stream = 1;
		bad.peer_ipu = 0;
		EXPECT_EQ(-EINVAL, ipu_x(fd0, DRM_IOCTL_IPU_LINK_STREAM, &bad));
	}
	ASSERT_EQ(0, ipu_t_ring(&ring0, 16));
	ASSERT_EQ(0, ipu_t_ring(&ring1, 16));

	for (round = 0; round < 2; round++) {
		for (i = 0; i < N; i++)
			x[i] = (float)i * 0.5f - 100.0f + (float)round;
		memset(y, 0, N * 4);
		/* member 1 first: it waits for the link */
		ASSERT_EQ(0, ipu_t_prep(&ring1, fd1, IPU_URING_CMD_RECV, 1, y, N * 4, 2, -1));
		ASSERT_EQ(1, io_uring_submit(&ring1));
		ASSERT_EQ(0, ipu_t_run(fd1, 0, &s1));
		EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd1, s1, 50000000, NULL));
		ASSERT_EQ(0, ipu_t_prep(&ring0, fd0, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1));
		ASSERT_EQ(1, io_uring_submit(&ring0));
		ASSERT_EQ(0, ipu_t_run(fd0, 0, &s0));
		EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd0, s0, 20000000000ll, &st));
		EXPECT_EQ(0u, st);
		EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd1, s1, 20000000000ll, &st));
		EXPECT_EQ(0u, st);
		ASSERT_EQ(0, io_uring_wait_cqe(&ring0, &cqe));
		EXPECT_EQ(N * 4, cqe->res);
		io_uring_cqe_seen(&ring0, cqe);
		ASSERT_EQ(0, io_uring_wait_cqe(&ring1, &cqe));
		EXPECT_EQ(N * 4, cqe->res);
		io_uring_cqe_seen(&ring1, cqe);
		EXPECT_TRUE(check_twice(x, y, N));
		ASSERT_EQ(0, ipu_x(fd0, DRM_IOCTL_IPU_COUNTERS, &c0));
		ASSERT_EQ(0, ipu_x(fd1, DRM_IOCTL_IPU_COUNTERS, &c1));
		EXPECT_EQ(N * 4ull, c0.link_out_bytes);
		EXPECT_EQ(2000 + N * 4ull / 240, c0.link_cycles);
		EXPECT_EQ(N * 4ull, c1.link_in_bytes);
		EXPECT_EQ(0ull, c0.stream_out_bytes);	/* no guest memory */
		EXPECT_EQ(0ull, c1.stream_in_bytes);

		/*
		 * Member 1 waits on the link again; a device reset of member 0
		 * resets the group: member 1's run fails, both come back idle.
		 */
		ASSERT_EQ(0, ipu_t_run(fd1, 0, &s1));
		EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd1, s1, 50000000, NULL));
		EXPECT_EQ(0, ipu_x(fd0, DRM_IOCTL_IPU_RESET, &r));
		EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(fd1, s1, 20000000000ll, NULL));
		ASSERT_EQ(0, info(fd0, &i0));
		ASSERT_EQ(0, info(fd1, &i1));
		EXPECT_EQ(IPU_DEV_STATE_IDLE, i0.state);
		EXPECT_EQ(IPU_DEV_STATE_IDLE, i1.state);
		EXPECT_EQ(2u, i1.group_size);	/* still one group */
		EXPECT_EQ(getpid(), i1.owner_pid);
		ASSERT_EQ(0, load_and_link(fd0, fd1, img, len, &ls));
	}
	io_uring_queue_exit(&ring0);
	io_uring_queue_exit(&ring1);
	close(fd0);
	close(fd1);
	free(img);
	free(x);
	free(y);
}

/*
 * A link's receiver for IPUs of `tiles` tiles: stream 0 (H2D, the link's
 * end) into x of N floats on tile `tile`, stream 1 (D2H) out of it.
 */
static void *receiver_image(uint32_t tiles, uint32_t tile, size_t *len)
{
	struct ipu_graph *g = ipu_graph_create(tiles, IPU_T_TILE_MEM);
	uint64_t nn = N;
	ipu_tensor x;
	uint32_t in, out;
	ipu_step body;
	void *img = NULL;

	if (!g)
		return NULL;
	x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &nn);
	ipu_graph_map_tile(g, x, tile);
	in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, N * 4);
	out = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, N * 4);
	body = ipu_step_sequence(g);
	ipu_step_append(g, body, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, N }, 1));
	ipu_step_append(g, body, ipu_step_stream_copy(g, out, &(struct ipu_slice){ x, 0, N }, 1));
	ipu_graph_add_program(g, body);
	if (ipu_graph_compile(g, &img, len, NULL)) {
		fprintf(stderr, "graph: %s\n", ipu_graph_error(g));
		img = NULL;
	}
	ipu_graph_destroy(g);
	return img;
}

/*
 * A stage whose link end writes a tile outside the peer's memory (an
 * executable for IPUs of twice the tiles, the receiving tensor on tile
 * 16 of the VM's 16): the peer's verifier refuses the LOAD (IPUX_E_TILES,
 * EXE_INVALID) and the peer stays idle; the sender's stage loads; the
 * same receiver on tile 15 loads and links.
 */
TEST(link_receiver_outside_the_peer_refused)
{
	size_t len, lbad, lgood;
	void *img = ipu_t_affine_image(N, 1, 0, &len);
	void *bad = receiver_image(2 * IPU_T_TILES, IPU_T_TILES, &lbad);
	void *good = receiver_image(IPU_T_TILES, IPU_T_TILES - 1, &lgood);
	struct ipu_load_args a = { 0 };
	struct ipu_link_stream_args ls = { .stream = 1, .peer_ipu = 1, .peer_stream = 0 };
	struct ipu_info_args i1;
	int fd0 = ipu_t_open(0), fd1 = ipu_t_open(1);

	ASSERT_NE(NULL, img);
	ASSERT_NE(NULL, bad);
	ASSERT_NE(NULL, good);
	ASSERT_LE(0, fd0);
	ASSERT_LE(0, fd1);
	ASSERT_EQ(0, group_attach(fd0, fd1, NULL));
	ASSERT_EQ(0, ipu_t_load(fd0, img, len));
	a.image = (uintptr_t)bad;
	a.size = (uint32_t)lbad;
	EXPECT_EQ(-EINVAL, ipu_x(fd1, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a));
	EXPECT_EQ(6u, a.dev_status);	/* EXE_INVALID */
	EXPECT_EQ(IPUX_E_TILES, a.verifier_error);
	ASSERT_EQ(0, info(fd1, &i1));
	EXPECT_EQ(IPU_DEV_STATE_IDLE, i1.state);
	EXPECT_EQ(0, ipu_t_load(fd1, good, lgood));
	EXPECT_EQ(0, ipu_x(fd0, DRM_IOCTL_IPU_LINK_STREAM, &ls));
	EXPECT_EQ(N * 4u, ls.bytes);
	close(fd0);
	close(fd1);
	free(img);
	free(bad);
	free(good);
}

/* Writes "1" to accel0's PCI function's reset (a function-level reset). */
static int flr_accel0(int fd0)
{
	struct ipu_info_args i;
	char path[128];
	FILE *f;
	int ret;

	if (info(fd0, &i))
		return -errno;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/reset", i.pci_domain,
		 i.pci_bus, i.pci_dev, i.pci_fn);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fputs("1", f) < 0;
	return fclose(f) || ret ? -EIO : 0;
}

/* The peer's reset is the group's work: wait up to 5 s for its count. */
static uint64_t wait_resets(int dev, uint64_t want)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < 500 && (n = ipu_t_sysfs_u64(dev, "stats/resets")) < want; i++)
		usleep(10000);
	return n;
}

/*
 * A reset of member 0 of its own while member 1 waits on the link: a
 * function-level reset through sysfs while member 0's run waits for its
 * input (how = 0), or the watchdog once the driver stops hearing from
 * member 0 (how = 1, debugfs inject_hang: its run sends one transfer, so
 * member 1 finishes one run and waits in a second).  The group resets
 * member 1 too: its waiting run ABORTED and its buffer cancelled, both
 * idle (executables dropped), one RESET more on each, still one group;
 * loaded and linked again, a transfer gives the right result.
 */
static void member_reset(struct __test_metadata *_metadata, int how)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 1, 0, &len);
	float *x = malloc(N * 4), *y = malloc(N * 4);
	struct ipu_link_stream_args ls;
	struct ipu_reset_args r = { .mode = IPU_RESET_DEVICE };
	struct ipu_info_args i0, i1;
	struct io_uring ring0, ring1;
	struct io_uring_cqe *cqe;
	uint64_t s0, s1, s1b = 0, r0, r1;
	uint32_t st, i;
	int fd0 = ipu_t_open(0), fd1 = ipu_t_open(1);

	ASSERT_NE(NULL, img);
	ASSERT_LE(0, fd0);
	ASSERT_LE(0, fd1);
	ASSERT_EQ(0, group_attach(fd0, fd1, NULL));
	ASSERT_EQ(0, ipu_x(fd0, DRM_IOCTL_IPU_RESET, &r));
	ASSERT_EQ(0, load_and_link(fd0, fd1, img, len, &ls));
	ASSERT_EQ(0, ipu_t_ring(&ring0, 16));
	ASSERT_EQ(0, ipu_t_ring(&ring1, 16));
	r0 = ipu_t_sysfs_u64(0, "stats/resets");
	r1 = ipu_t_sysfs_u64(1, "stats/resets");
	memset(y, 0, N * 4);
	for (i = 0; i < N; i++)
		x[i] = (float)i;
	ASSERT_EQ(0, ipu_t_prep(&ring1, fd1, IPU_URING_CMD_RECV, 1, y, N * 4, 2, -1));
	if (how == 1)
		ASSERT_EQ(0, ipu_t_prep(&ring1, fd1, IPU_URING_CMD_RECV, 1, y, N * 4, 5, -1));
	ASSERT_EQ(how == 1 ? 2 : 1, io_uring_submit(&ring1));
	ASSERT_EQ(0, ipu_t_run(fd1, 0, &s1));
	if (how == 1) {
		ASSERT_EQ(0, ipu_t_run(fd1, 0, &s1b));
		ASSERT_EQ(0, ipu_t_prep(&ring0, fd0, IPU_URING_CMD_SEND, 0, x, N * 4, 1, -1));
		ASSERT_EQ(1, io_uring_submit(&ring0));
		ASSERT_EQ(0, ipu_t_sysfs_write(0, "watchdog_ms", "500"));
		ASSERT_EQ(0, ipu_t_debugfs_write(0, "inject_hang", "1"));
	}
	ASSERT_EQ(0, ipu_t_run(fd0, 0, &s0));
	if (how == 0) {
		EXPECT_EQ(IPU_WAIT_TIMEDOUT, ipu_t_wait(fd1, s1, 50000000, NULL));
		ASSERT_EQ(0, flr_accel0(fd0));
	} else {
		/* member 0's one transfer reached member 1 */
		EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd1, s1, 10000000000ll, &st));
		EXPECT_EQ(0u, st);
		ASSERT_EQ(0, io_uring_wait_cqe(&ring1, &cqe));
		EXPECT_EQ(N * 4, cqe->res);
		io_uring_cqe_seen(&ring1, cqe);
		s1 = s1b;
	}
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(fd0, s0, 10000000000ll, NULL));
	EXPECT_EQ(IPU_WAIT_ABORTED, ipu_t_wait(fd1, s1, 10000000000ll, NULL));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring1, &cqe));
	EXPECT_EQ(-ECANCELED, cqe->res);
	io_uring_cqe_seen(&ring1, cqe);
	if (how == 1) {
		/* the driver never heard member 0's buffer done: cancelled */
		ASSERT_EQ(0, io_uring_wait_cqe(&ring0, &cqe));
		EXPECT_EQ(-ECANCELED, cqe->res);
		io_uring_cqe_seen(&ring0, cqe);
	}
	EXPECT_EQ(r0 + 1, ipu_t_sysfs_u64(0, "stats/resets"));
	EXPECT_EQ(r1 + 1, wait_resets(1, r1 + 1));
	ASSERT_EQ(0, info(fd0, &i0));
	ASSERT_EQ(0, info(fd1, &i1));
	EXPECT_EQ(IPU_DEV_STATE_IDLE, i0.state);
	EXPECT_EQ(IPU_DEV_STATE_IDLE, i1.state);
	EXPECT_EQ(2u, i0.group_size);
	EXPECT_EQ(2u, i1.group_size);
	if (how == 1)
		ipu_t_sysfs_write(0, "watchdog_ms", "10000");

	/* the group recovered: loaded, linked, a transfer */
	ASSERT_EQ(0, load_and_link(fd0, fd1, img, len, &ls));
	for (i = 0; i < N; i++)
		x[i] = (float)i * 0.25f - 3.0f;
	ASSERT_EQ(0, ipu_t_prep(&ring1, fd1, IPU_URING_CMD_RECV, 1, y, N * 4, 4, -1));
	ASSERT_EQ(1, io_uring_submit(&ring1));
	ASSERT_EQ(0, ipu_t_run(fd1, 0, &s1));
	ASSERT_EQ(0, ipu_t_prep(&ring0, fd0, IPU_URING_CMD_SEND, 0, x, N * 4, 3, -1));
	ASSERT_EQ(1, io_uring_submit(&ring0));
	ASSERT_EQ(0, ipu_t_run(fd0, 0, &s0));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd0, s0, 20000000000ll, &st));
	EXPECT_EQ(IPU_WAIT_COMPLETED, ipu_t_wait(fd1, s1, 20000000000ll, &st));
	EXPECT_EQ(0u, st);
	ASSERT_EQ(0, io_uring_wait_cqe(&ring0, &cqe));
	EXPECT_EQ(N * 4, cqe->res);
	io_uring_cqe_seen(&ring0, cqe);
	ASSERT_EQ(0, io_uring_wait_cqe(&ring1, &cqe));
	EXPECT_EQ(N * 4, cqe->res);
	io_uring_cqe_seen(&ring1, cqe);
	EXPECT_TRUE(check_twice(x, y, N));
	io_uring_queue_exit(&ring0);
	io_uring_queue_exit(&ring1);
	close(fd0);
	close(fd1);
	free(img);
	free(x);
	free(y);
}

TEST(flr_of_one_member_resets_the_group)
{
	member_reset(_metadata, 0);
}

TEST(watchdog_of_one_member_resets_the_group)
{
	member_reset(_metadata, 1);
}

/* The same through libipu: ipu_attach_group, ipu_link_stream. */
TEST(libipu_group)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 1, 0, &len);
	float *x = malloc(N * 4), *y = malloc(N * 4);
	struct ipu_device *d[2] = { NULL, NULL }, *other = NULL;
	struct ipu_completion c[2];
	struct ipu_counters k0, k1;
	uint64_t s0, s1;
	char err[256];
	int got = 0, i;

	ASSERT_NE(NULL, img);
	ASSERT_EQ(0, ipu_open("/dev/accel/accel0", &d[0], err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, ipu_open("/dev/accel/accel1", &d[1], err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, ipu_open("/dev/accel/accel1", &other, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(IPU_E_INVAL, ipu_attach_group(d, 1));
	ASSERT_EQ(0, ipu_attach_group(d, 2));
	EXPECT_EQ(IPU_E_BUSY, ipu_attach(other));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ipu_load(d[i], img, len, NULL));
	EXPECT_EQ(IPU_E_INVAL, ipu_link_stream(d[0], 0, 1, 0));	/* host-to-device */
	ASSERT_EQ(0, ipu_link_stream(d[0], 1, 1, 0));
	for (i = 0; i < N; i++)
		x[i] = (float)i * 0.125f - 7.0f;
	memset(y, 0, N * 4);
	ASSERT_EQ(0, ipu_counters(d[0], &k0));
	ASSERT_EQ(0, ipu_stream_submit(d[0], 0, x, N * 4, 1));
	ASSERT_EQ(0, ipu_stream_submit(d[1], 1, y, N * 4, 2));
	ASSERT_EQ(0, ipu_run(d[1], 0, &s1));
	ASSERT_EQ(0, ipu_run(d[0], 0, &s0));
	EXPECT_EQ(0, ipu_wait(d[0], s0, 20000000000ll, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, ipu_wait(d[1], s1, 20000000000ll, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < 2; i++) {
		int n = ipu_stream_poll(d[i], &c[i], 1, 5000000000ll);

		got += n;
		EXPECT_EQ(1, n);
		EXPECT_EQ(0, c[i].status);
		EXPECT_EQ(N * 4u, c[i].bytes);
	}
	EXPECT_EQ(2, got);
	EXPECT_TRUE(check_twice(x, y, N));
	ASSERT_EQ(0, ipu_counters(d[0], &k1));
	/* its output went over the link, its input from the host */
	EXPECT_EQ(k0.stream_bytes_out, k1.stream_bytes_out);
	EXPECT_EQ(k0.stream_bytes_in + N * 4, k1.stream_bytes_in);
	/* closing one member releases the group */
	ipu_close(d[1]);
	EXPECT_EQ(0, ipu_attach(other));
	ipu_close(other);
	ipu_close(d[0]);
	free(img);
	free(x);
	free(y);
}

TEST_HARNESS_MAIN
