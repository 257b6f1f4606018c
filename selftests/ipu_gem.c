// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_gem.c - buffer objects of the accel driver inside the test VM: an
 * executable and stream buffers in GEM objects shared as dma-bufs between
 * two processes with no copy, and a drm_file that goes away mid-stream
 * releasing every object and every pinned page.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "ipu_util.h"
#include "kselftest_harness.h"

#define N 1024		/* floats per buffer */

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

/* The driver's counters of device 0, from a file of our own; -errno. */
static int counters(struct ipu_counters_args *c)
{
	int fd = ipu_t_open(0), rc;

	if (fd < 0)
		return -errno;
	memset(c, 0, sizeof(*c));
	rc = ipu_x(fd, DRM_IOCTL_IPU_COUNTERS, c);
	close(fd);
	return rc;
}

/*
 * The second process: imports the executable and both stream buffers from
 * the dma-bufs it was given, loads the executable from its object, runs
 * with the streams in the objects, and checks nothing was pinned for it
 * (pinned_pages counts user pages; objects' pages are gem_pages).
 * Returns the exit status: 0 when all went as it should.
 */
static int importer(int img_buf, uint32_t img_len, int x_buf, int y_buf)
{
	struct ipu_load_args la = { .size = img_len, .flags = IPU_LOAD_F_BO };
	struct ipu_counters_args c;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint32_t himg, hx, hy, st = 1;
	uint64_t seq;
	int fd = ipu_t_open(0), i;

	if (fd < 0 || drmPrimeFDToHandle(fd, img_buf, &himg) ||
	    drmPrimeFDToHandle(fd, x_buf, &hx) || drmPrimeFDToHandle(fd, y_buf, &hy))
		return 10;
	la.image = himg;
	if (ipu_t_attach(fd) || ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &la))
		return 11;
	if (ipu_t_ring(&ring, 4) ||
	    ipu_t_prep_bo(&ring, fd, IPU_URING_CMD_SEND, 0, hx, 0, N * 4, 1) ||
	    ipu_t_prep_bo(&ring, fd, IPU_URING_CMD_RECV, 1, hy, 0, N * 4, 2) ||
	    io_uring_submit(&ring) != 2)
		return 12;
	if (ipu_t_run(fd, 0, &seq) || ipu_t_wait(fd, seq, 10000000000ll, &st) != IPU_WAIT_COMPLETED ||
	    st)
		return 13;
	for (i = 0; i < 2; i++) {
		if (io_uring_wait_cqe(&ring, &cqe) || cqe->res != N * 4)
			return 14;
		io_uring_cqe_seen(&ring, cqe);
	}
	if (counters(&c) || c.pinned_pages != 0 || c.gem_pages < 2 * (N * 4 / 4096))
		return 15;
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

/*
 * One process makes the executable and the input in buffer objects and
 * hands them out as dma-bufs; another imports them into its own file and
 * runs them; the output lands in the first process's mapping of a third
 * object.  No user page is pinned and nothing is copied on the way.
 */
TEST(dmabuf_from_another_process_carries_streams)
{
	size_t len;
	void *img = ipu_t_affine_image(N, 1, 0, &len);
	struct ipu_counters_args before, after;
	void *mimg = NULL, *mx = NULL, *my = NULL;
	int fd = ipu_t_open(0), himg, hx, hy, bimg, bx, by, st, i;
	pid_t pid;

	ASSERT_NE(NULL, img);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, counters(&before));
	himg = ipu_t_bo(fd, len, &mimg);
	hx = ipu_t_bo(fd, N * 4, &mx);
	hy = ipu_t_bo(fd, N * 4, &my);
	ASSERT_LT(0, himg);
	ASSERT_LT(0, hx);
	ASSERT_LT(0, hy);
	memcpy(mimg, img, len);
	fill(mx, N, 3.0f);
	memset(my, 0, N * 4);
	ASSERT_EQ(0, drmPrimeHandleToFD(fd, himg, DRM_CLOEXEC | DRM_RDWR, &bimg));
	ASSERT_EQ(0, drmPrimeHandleToFD(fd, hx, DRM_CLOEXEC | DRM_RDWR, &bx));
	ASSERT_EQ(0, drmPrimeHandleToFD(fd, hy, DRM_CLOEXEC | DRM_RDWR, &by));
	EXPECT_EQ(before.gem_objects + 3, (counters(&after), after.gem_objects));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(importer(bimg, (uint32_t)len, bx, by));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("importer failed at step %d", WEXITSTATUS(st));
	EXPECT_TRUE(check_affine(mx, my, N));
	TH_LOG("y[0] %.2f y[%d] %.2f from x %.2f, %.2f: written by the device into this process's object",
	       ((float *)my)[0], N - 1, ((float *)my)[N - 1], ((float *)mx)[0], ((float *)mx)[N - 1]);

	/* the dma-bufs and the mappings keep the objects; closing all frees them */
	close(bimg);
	close(bx);
	close(by);
	munmap(mimg, len);
	munmap(mx, N * 4);
	munmap(my, N * 4);
	close(fd);
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, counters(&after));
		if (after.gem_objects == before.gem_objects && after.gem_pages == before.gem_pages)
			break;
		usleep(20000);
	}
	EXPECT_EQ(before.gem_objects, after.gem_objects);
	EXPECT_EQ(before.gem_pages, after.gem_pages);
	EXPECT_EQ(before.pinned_pages, after.pinned_pages);
	free(img);
}

/*
 * A process with buffer objects and plain user buffers queued on the
 * device, a run waiting for input that never comes, is killed: its
 * drm_file goes away mid-stream.  Every object is freed, every page it
 * had pinned (objects' and user pages) is released, the device is free.
 */
TEST(drm_file_closed_mid_stream_releases_everything)
{
	enum { R = 8 };
	struct ipu_counters_args before, during, after;
	int pipefd[2], st, i;
	pid_t pid;
	char c;

	ASSERT_EQ(0, counters(&before));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		size_t len;
		void *img = ipu_t_affine_image(N, 2 * R + 1, 0, &len);
		float *x = malloc(R * N * 4), *y = malloc(R * N * 4);
		void *bx = NULL, *by = NULL;
		struct io_uring ring;
		uint64_t seq;
		int fd = ipu_t_open(0), hx, hy;

		if (!img || !x || !y || fd < 0 || ipu_t_attach(fd) || ipu_t_load(fd, img, len) ||
		    ipu_t_ring(&ring, 4 * R))
			_exit(1);
		hx = ipu_t_bo(fd, R * N * 4, &bx);
		hy = ipu_t_bo(fd, R * N * 4, &by);
		if (hx < 0 || hy < 0)
			_exit(2);
		/* R outputs into an object, R into user memory; R inputs of each */
		for (i = 0; i < R; i++) {
			ipu_t_prep_bo(&ring, fd, IPU_URING_CMD_RECV, 1, hy, (uint64_t)i * N * 4,
				      N * 4, i);
			ipu_t_prep(&ring, fd, IPU_URING_CMD_RECV, 1, y + i * N, N * 4, R + i, -1);
		}
		for (i = 0; i < R / 2; i++) {
			ipu_t_prep_bo(&ring, fd, IPU_URING_CMD_SEND, 0, hx, (uint64_t)i * N * 4,
				      N * 4, 2 * R + i);
			ipu_t_prep(&ring, fd, IPU_URING_CMD_SEND, 0, x + i * N, N * 4, 3 * R + i, -1);
		}
		if (io_uring_submit(&ring) != 3 * R || ipu_t_run(fd, 0, &seq))
			_exit(3);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(4);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	usleep(200000);
	ASSERT_EQ(0, counters(&during));
	EXPECT_EQ(before.gem_objects + 2, during.gem_objects);
	EXPECT_LT(before.gem_pages, during.gem_pages);
	EXPECT_LT(before.pinned_pages, during.pinned_pages);
	TH_LOG("mid-stream: %llu objects, %llu object pages, %llu user pages pinned",
	       (unsigned long long)(during.gem_objects - before.gem_objects),
	       (unsigned long long)(during.gem_pages - before.gem_pages),
	       (unsigned long long)(during.pinned_pages - before.pinned_pages));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	/* the io_uring teardown and the file's release may finish just after */
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, counters(&after));
		if (after.gem_objects == before.gem_objects && after.gem_pages == before.gem_pages &&
		    after.pinned_pages == before.pinned_pages && !ipu_t_sysfs_u64(0, "owner_pid"))
			break;
		usleep(50000);
	}
	EXPECT_EQ(before.gem_objects, after.gem_objects);
	EXPECT_EQ(before.gem_pages, after.gem_pages);
	EXPECT_EQ(before.pinned_pages, after.pinned_pages);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "owner_pid"));
	/* and the device is free for the next process */
	{
		int fd = ipu_t_open(0);

		ASSERT_LE(0, fd);
		EXPECT_EQ(0, ipu_t_attach(fd));
		close(fd);
	}
}

TEST_HARNESS_MAIN
