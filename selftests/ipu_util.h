/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipu_util.h - helpers shared by the driver selftests and the uring bench:
 * raw ioctl wrappers, test executables built with the graph builder, and
 * IORING_OP_URING_CMD stream submissions with liburing.
 */
#ifndef IPU_SELFTEST_UTIL_H
#define IPU_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <liburing.h>
#include <linux/ipu.h>

#include "ipu/codelet.h"
#include "ipu/graph.h"

#define IPU_T_TILES 16
#define IPU_T_TILE_MEM (256 * 1024)

/* ioctl returning 0 or -errno */
static inline int ipu_x(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int ipu_t_open(int n)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/accel/accel%d", n);
	return open(path, O_RDWR | O_CLOEXEC);
}

static inline int ipu_t_attach(int fd)
{
	struct ipu_attach_args a = { 0 };

	return ipu_x(fd, DRM_IOCTL_IPU_ATTACH, &a);
}

/*
 * An executable with one program: repeat `reps` times { x <- stream 0 (H2D);
 * y = x * 2 + 1; stream 1 (D2H) <- y }, x and y `n` floats on tile 0.
 * With `spin` > 0, program 1 runs a compute set spin times (a long run).
 */
static inline void *ipu_t_affine_image(uint32_t n, uint32_t reps, uint32_t spin,
				       size_t *len)
{
	struct ipu_graph *g = ipu_graph_create(IPU_T_TILES, IPU_T_TILE_MEM);
	uint64_t nn = n, one = 1;
	ipu_tensor x, y, two, c1;
	uint32_t cs1, cs2, in, out;
	ipu_step body;
	float v2 = 2.0f, v1 = 1.0f;
	void *img = NULL;

	if (!g)
		return NULL;
	x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &nn);
	y = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &nn);
	two = ipu_graph_add_tensor(g, "two", IPUX_DT_F32, 1, &one);
	c1 = ipu_graph_add_tensor(g, "one", IPUX_DT_F32, 1, &one);
	ipu_graph_map_tile(g, x, 0);
	ipu_graph_map_tile(g, y, 0);
	ipu_graph_map_tile(g, two, 0);
	ipu_graph_map_tile(g, c1, 0);
	ipu_graph_set_init(g, two, &v2, 4);
	ipu_graph_set_init(g, c1, &v1, 4);
	cs1 = ipu_graph_add_compute_set(g, "mul");
	{
		struct ipu_slice ops[3] = { { x, 0, n }, { two, 0, 1 }, { y, 0, n } };
		uint32_t p[5] = { IPUX_BIN_MUL, 1, n, 1, 0 };

		ipu_graph_add_vertex(g, cs1, IPUX_CL_BINARY, ops, 3, p, 5);
	}
	cs2 = ipu_graph_add_compute_set(g, "add");
	{
		struct ipu_slice ops[3] = { { y, 0, n }, { c1, 0, 1 }, { y, 0, n } };
		uint32_t p[5] = { IPUX_BIN_ADD, 1, n, 1, 0 };

		ipu_graph_add_vertex(g, cs2, IPUX_CL_BINARY, ops, 3, p, 5);
	}
	in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, n * 4);
	out = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, n * 4);
	body = ipu_step_sequence(g);
	ipu_step_append(g, body, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, n }, 1));
	ipu_step_append(g, body, ipu_step_execute(g, cs1));
	ipu_step_append(g, body, ipu_step_execute(g, cs2));
	ipu_step_append(g, body, ipu_step_stream_copy(g, out, &(struct ipu_slice){ y, 0, n }, 1));
	ipu_graph_add_program(g, reps > 1 ? ipu_step_repeat(g, reps, body) : body);
	if (spin)
		ipu_graph_add_program(g, ipu_step_repeat(g, spin, ipu_step_execute(g, cs1)));
	if (ipu_graph_compile(g, &img, len, NULL)) {
		fprintf(stderr, "graph: %s\n", ipu_graph_error(g));
		img = NULL;
	}
	ipu_graph_destroy(g);
	return img;
}

static inline int ipu_t_load(int fd, const void *img, size_t len)
{
	struct ipu_load_args a = { .image = (uintptr_t)img, .size = (uint32_t)len };

	return ipu_x(fd, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a);
}

static inline int ipu_t_run(int fd, uint32_t prog, uint64_t *seq)
{
	struct ipu_run_args a = { .program = prog };
	int rc = ipu_x(fd, DRM_IOCTL_IPU_RUN, &a);

	*seq = a.seq;
	return rc;
}

/* returns -errno, or the IPU_WAIT_* status; *dev_status the device's */
static inline int ipu_t_wait(int fd, uint64_t seq, int64_t timeout_ns, uint32_t *dev_status)
{
	struct ipu_wait_args a = { .seq = seq, .timeout_ns = timeout_ns };
	int rc = ipu_x(fd, DRM_IOCTL_IPU_WAIT, &a);

	if (dev_status)
		*dev_status = a.dev_status;
	return rc ? rc : (int)a.status;
}

static inline int ipu_t_ring(struct io_uring *ring, unsigned int entries)
{
	return io_uring_queue_init(entries, ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
}

/* Queue one stream buffer (not submitted yet). fixed_index < 0: plain memory. */
static inline struct io_uring_sqe *ipu_t_prep_sqe(struct io_uring *ring, int fd, uint32_t op,
						  uint32_t stream, void *buf, uint32_t len,
						  uint64_t tag, int fixed_index)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct ipu_uring_cmd c = {
		.addr = (uintptr_t)buf, .len = len, .stream = stream, .tag = tag,
	};

	if (!sqe)
		return NULL;
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	sqe->user_data = tag;
	if (fixed_index >= 0) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = (uint16_t)fixed_index;
	}
	memcpy(sqe->cmd, &c, sizeof(c));
	return sqe;
}

/* Queue one stream buffer at `offset` in buffer object `handle` (not submitted yet). */
static inline int ipu_t_prep_bo(struct io_uring *ring, int fd, uint32_t op, uint32_t stream,
				uint32_t handle, uint64_t offset, uint32_t len, uint64_t tag)
{
	struct io_uring_sqe *sqe = ipu_t_prep_sqe(ring, fd, op, stream, NULL, len, tag, -1);
	struct ipu_uring_cmd c;

	if (!sqe)
		return -EBUSY;
	memcpy(&c, sqe->cmd, sizeof(c));
	c.addr = offset;
	c.flags = IPU_URING_F_BO;
	c.handle = handle;
	memcpy(sqe->cmd, &c, sizeof(c));
	return 0;
}

/* A buffer object of `size` bytes mapped at *map; its handle or -errno. */
static inline int ipu_t_bo(int fd, uint64_t size, void **map)
{
	struct ipu_bo_create_args c = { .size = size };
	struct ipu_bo_info_args i = { 0 };
	int rc = ipu_x(fd, DRM_IOCTL_IPU_BO_CREATE, &c);

	if (rc)
		return rc;
	i.handle = c.handle;
	rc = ipu_x(fd, DRM_IOCTL_IPU_BO_INFO, &i);
	if (rc)
		return rc;
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)i.mmap_offset);
	return *map == MAP_FAILED ? -errno : (int)c.handle;
}

static inline int ipu_t_prep(struct io_uring *ring, int fd, uint32_t op, uint32_t stream,
			     void *buf, uint32_t len, uint64_t tag, int fixed_index)
{
	return ipu_t_prep_sqe(ring, fd, op, stream, buf, len, tag, fixed_index) ? 0 : -EBUSY;
}

static inline uint64_t ipu_t_sysfs_u64(int dev, const char *attr)
{
	char path[128], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/%s", dev, attr);
	f = fopen(path, "r");
	if (!f)
		return UINT64_MAX;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtoull(buf, NULL, 0);
}

static inline int ipu_t_sysfs_write(int dev, const char *attr, const char *val)
{
	char path[128];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/%s", dev, attr);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	rc = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f))
		rc = -errno;
	return rc;
}

/* The driver's test knobs: /sys/kernel/debug/ipu/ipuN/NAME (root, not ABI). */
static inline int ipu_t_debugfs_write(int dev, const char *name, const char *val)
{
	char path[128];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/sys/kernel/debug/ipu/ipu%d/%s", dev, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		rc = -errno;
	close(fd);
	return rc;
}

/* The first line of a debugfs knob (without the newline), "" if none. */
static inline const char *ipu_t_debugfs_read(int dev, const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/kernel/debug/ipu/ipu%d/%s", dev, name);
	f = fopen(path, "r");
	if (!f)
		return buf;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/*
 * Pages pinned with FOLL_PIN since boot, minus those released (/proc/vmstat).
 * The counters are folded from per-CPU deltas lazily, so the two can be off
 * by a few pages (even below zero) until stat_refresh folds them.
 */
static inline int64_t foll_pins_held(void)
{
	int rfd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	FILE *f;
	char name[64];
	unsigned long long v;
	int64_t acq = -1, rel = -1;

	if (rfd >= 0) {
		if (write(rfd, "1", 1) != 1)
			acq = -1;	/* read the unfolded counters then */
		close(rfd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acq = (int64_t)v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			rel = (int64_t)v;
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

/* The count once deferred releases are done (steady for 200 ms). */
static inline int64_t foll_pins_settled(void)
{
	int64_t v = foll_pins_held(), w;

	for (int i = 0; i < 50; i++) {
		usleep(200000);
		w = foll_pins_held();
		if (w == v)
			break;
		v = w;
	}
	return v;
}

#endif /* IPU_SELFTEST_UTIL_H */
