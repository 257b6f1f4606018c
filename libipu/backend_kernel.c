// SPDX-License-Identifier: MIT
/*
 * backend_kernel.c - libipu over the driver: /dev/accel/accelN (ipu.ko, a DRM accel driver).
 *
 * The node is opened directly (bookworm's and backports' libdrm know no
 * accel nodes: drmOpen* and drmGetNodeTypeFromFd look at /dev/dri only);
 * libdrm's drmGetVersion() checks it is ipu.ko's, and control (attach,
 * load, run, wait, reset, counters) goes through drmIoctl() with the
 * driver's DRM ioctls (uapi/linux/ipu.h).  Stream buffers go through io_uring: one ring per
 * device handle, set up with SQE128/CQE32, IORING_OP_URING_CMD entries
 * with the driver's IPU_URING_CMD_SEND/RECV, as many in flight as the
 * driver's per-stream rings hold.  A reaper thread waits on the completion
 * queue and hands every finished buffer to libipu's completion queue
 * (ipu_cq_post), so callers see the same completions as with the model
 * backend.
 *
 * user_data of a stream SQE: KUD_STREAM | seq << 16 | stream, seq counting
 * the stream's buffers in the order they were given to the driver; the
 * caller's tag travels in the command and comes back in big_cqe[0].
 * io_uring on 6.1 may post one batch of completions in reverse order: the
 * reaper puts each stream's completions back in seq order (the device's
 * order) before delivering them, as the model backend does.
 *
 * Registered memory (ipu_register_memory) is the ring's sparse table of
 * fixed buffers, slot for slot with libipu's region table: a buffer inside
 * a registered range goes out with IORING_URING_CMD_FIXED and its slot in
 * buf_index, and the driver maps the pages io_uring pinned at registration
 * instead of pinning them for this request.  Memory of the driver's own
 * (ipu_alloc_memory, ipu_import_dmabuf) is a buffer object mapped through
 * the accel fd: a buffer inside it goes out with IPU_URING_F_BO, its
 * handle and its offset, and the device reaches the object's pages with
 * no copy and no pinning per request.
 *
 * ipu_stream_submit never blocks (a completion handler may call it from
 * the reaper): when the driver's ring of a stream is full, the buffer waits
 * in a per-stream FIFO that the reaper feeds to the driver as completions
 * free room.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <linux/ipu.h>
#include <xf86drm.h>

#include "ipu/thread.h"
#include "backend.h"

extern const struct ipu_backend_ops ipu_kernel_backend;

#define KRING_ENTRIES 512u
#define KUD_STREAM (1ull << 62)
#define KUD_SEQ_MASK ((1ull << 40) - 1)
#define KHOLD 256u	/* > buffers a stream has in the driver at once */
#define KUD_STOP (1ull << 61)
#define KGROUP_MAX 16u	/* members of one ipu-link (uapi: GROUP_ATTACH count) */

/* a buffer waiting for room in the driver's ring of its stream */
struct kpending {
	void *buf;
	uint64_t tag;
};

struct kstream {
	uint32_t dir, bytes;
	uint32_t inflight;		/* in the driver */
	struct kpending *pq;		/* FIFO of buffers not yet given to it */
	uint32_t pq_cap, pq_head, pq_count;
	uint64_t next_issue;		/* seq of the next buffer given to the driver */
	uint64_t next_deliver;		/* seq of the next completion to deliver */
	struct ipu_completion *held;	/* KHOLD slots: arrived early */
	uint8_t *held_ok;
};

/* a registered slot holding a buffer object (0: none) */
struct kbo {
	uint32_t handle;
	void *map;
	size_t len;
};

struct kernel_dev {
	struct ipu_device *dev;
	int fd;
	struct kbo bo[IPU_MAX_REGISTERED];
	char name[32];
	struct ipu_info_args info;

	struct io_uring ring;
	pthread_mutex_t sq_lock;	/* SQ of the ring */
	int fixed_ok;			/* IPU_MAX_REGISTERED sparse fixed-buffer slots */
	pthread_t reaper;
	int reaper_started;

	pthread_mutex_t lock;		/* streams, in-flight counts */
	pthread_cond_t cv;		/* a buffer completed */
	struct kstream *streams;
	uint32_t nstreams;
	uint32_t per_stream_max;
	uint32_t inflight;
	uint64_t last_seq;

	/* run handler: a thread waits for queued runs in order */
	pthread_mutex_t rlock;
	pthread_cond_t rcv;
	ipu_run_fn run_fn;
	void *run_ctx;
	uint64_t *rq;			/* sequence numbers, FIFO */
	uint32_t rq_cap, rq_head, rq_count;
	pthread_t runner;
	int runner_started, runner_stop;
};

#define READ_STOP(k) __atomic_load_n(&(k)->runner_stop, __ATOMIC_RELAXED)

static struct kernel_dev *K(struct ipu_device *d)
{
	return d->priv;
}

static int kioctl(struct kernel_dev *k, unsigned long cmd, void *arg)
{
	/* drmIoctl restarts on EINTR and EAGAIN */
	return drmIoctl(k->fd, cmd, arg) ? -errno : 0;
}

/*
 * The device's status codes (ipu_status of Documentation/device/pci.md),
 * which the driver passes through as dev_status: what a user reads.
 */
static const char *dev_status_str(uint32_t st)
{
	static const char *const text[] = {
		[0] = "ok",
		[1] = "unknown command (INVALID_OPCODE)",
		[2] = "reserved field or unknown flag set (INVALID_FIELD)",
		[3] = "a host address could not be accessed by DMA (DMA_FAULT)",
		[4] = "malformed scatter-gather list (BAD_SG)",
		[5] = "length over a device limit (TOO_LARGE)",
		[6] = "executable refused (EXE_INVALID)",
		[7] = "no executable loaded (NOT_LOADED)",
		[8] = "program index out of range (BAD_PROGRAM)",
		[9] = "cancelled by an abort or reset (ABORTED)",
		[10] = "a stream transfer of the program failed (STREAM_ERROR)",
		[11] = "a codelet faulted (FAULT)",
		[12] = "tile, offset or length outside tile memory (RANGE)",
		[13] = "bad stream id or ring (BAD_STREAM)",
		[14] = "ring base or size invalid (RING_CONFIG)",
		[15] = "doorbell index out of range (RING_INDEX)",
		[16] = "descriptor length does not fit the stream (LENGTH)",
		[17] = "the device ran out of memory (NO_MEMORY)",
		[18] = "engine error (ENGINE)",
	};

	return st < sizeof(text) / sizeof(text[0]) && text[st] ? text[st] : "unknown device status";
}

/* errno of the driver -> ipu_err */
static int kerr(int e)
{
	switch (e) {
	case 0: return 0;
	case -ENOMEM: return IPU_E_NOMEM;
	case -EBUSY: return IPU_E_BUSY;
	case -ENOEXEC: return IPU_E_NOT_LOADED;
	case -ECANCELED: return IPU_E_CANCELLED;
	case -ETIMEDOUT: return IPU_E_TIMEOUT;
	case -EINVAL: case -EFAULT: case -E2BIG: case -ERANGE: case -EPERM:
		return IPU_E_INVAL;
	default: return IPU_E_IO;
	}
}

static void free_streams(struct kstream *st, uint32_t n)
{
	uint32_t i;

	for (i = 0; st && i < n; i++) {
		free(st[i].pq);
		free(st[i].held);
		free(st[i].held_ok);
	}
	free(st);
}

/* Put one stream buffer on the ring and submit it. */
static int issue(struct kernel_dev *k, uint32_t stream, uint32_t dir, void *buf,
		 uint32_t len, uint64_t tag, uint64_t seq)
{
	struct io_uring_sqe *sqe;
	struct ipu_uring_cmd c = { 0 };
	int rc, slot;

	c.addr = (uintptr_t)buf;
	c.len = len;
	c.stream = stream;
	c.tag = tag;
	/* held until submitted: the slot cannot be emptied in between */
	slot = ipu_regions_find(&k->dev->regions, buf, len);
	if (slot >= 0 && k->bo[slot].handle) {
		c.flags = IPU_URING_F_BO;
		c.handle = k->bo[slot].handle;
		c.addr = (uintptr_t)buf - (uintptr_t)k->bo[slot].map;
	}
	pthread_mutex_lock(&k->sq_lock);
	sqe = io_uring_get_sqe(&k->ring);
	if (!sqe) {
		io_uring_submit(&k->ring);
		sqe = io_uring_get_sqe(&k->ring);
	}
	if (!sqe) {
		pthread_mutex_unlock(&k->sq_lock);
		ipu_regions_put(&k->dev->regions);
		return IPU_E_BUSY;
	}
	memset(sqe, 0, 128);	/* SQE128: the command area runs past 64 bytes */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = k->fd;
	sqe->cmd_op = dir == IPU_STREAM_H2D ? IPU_URING_CMD_SEND : IPU_URING_CMD_RECV;
	sqe->user_data = KUD_STREAM | (seq & KUD_SEQ_MASK) << 16 | stream;
	if (slot >= 0 && !c.flags) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = (uint16_t)slot;
	}
	memcpy(sqe->cmd, &c, sizeof(c));
	rc = io_uring_submit(&k->ring);
	pthread_mutex_unlock(&k->sq_lock);
	ipu_regions_put(&k->dev->regions);
	return rc < 0 ? IPU_E_IO : 0;
}

/* Post a completion for a buffer the driver never saw. */
static void post_local(struct kernel_dev *k, uint32_t stream, uint64_t tag, int status)
{
	struct ipu_completion c = { tag, stream, status, 0, 0 };

	ipu_cq_post(&k->dev->cq, &c);
}

/*
 * Room for one more buffer of a stream in the driver.  Completions of one
 * stream can reach the reaper out of order (each is posted by task work of
 * the thread that submitted it), and early ones wait in KHOLD slots indexed
 * by seq: so besides the driver's ring, the window of seqs not yet
 * delivered must stay under KHOLD, or a held completion would be
 * overwritten and the stream would stall for ever.
 */
static int may_issue(const struct kernel_dev *k, const struct kstream *st)
{
	return st->inflight < k->per_stream_max && st->next_issue - st->next_deliver < KHOLD;
}

/*
 * Give stream s's waiting buffers to the driver while it has room.
 * Called with k->lock held (seqs are taken and used under it).
 */
static void feed_pending(struct kernel_dev *k, uint32_t s)
{
	while (k->streams && s < k->nstreams) {
		struct kstream *st = &k->streams[s];
		struct kpending p;
		uint32_t dir = st->dir, len = st->bytes;
		uint64_t seq;
		int rc;

		if (!st->pq_count || !may_issue(k, st))
			return;
		p = st->pq[st->pq_head];
		st->pq_head = (st->pq_head + 1) % st->pq_cap;
		st->pq_count--;
		st->inflight++;
		k->inflight++;
		seq = st->next_issue++;
		rc = issue(k, s, dir, p.buf, len, p.tag, seq);	/* under k->lock: in seq order */
		if (rc) {
			/* never reached the driver: nobody took a seq since (k->lock) */
			k->inflight--;
			st->inflight--;
			st->next_issue = seq;
			pthread_mutex_unlock(&k->lock);
			post_local(k, s, p.tag, rc);
			pthread_mutex_lock(&k->lock);
			return;
		}
	}
}

/* Complete every waiting buffer as cancelled (abort, reset, load). */
static void cancel_pending(struct kernel_dev *k)
{
	struct kpending *all = NULL;
	uint32_t *streams = NULL, n = 0, total = 0, s;

	pthread_mutex_lock(&k->lock);
	for (s = 0; k->streams && s < k->nstreams; s++)
		total += k->streams[s].pq_count;
	if (total) {
		all = malloc(total * sizeof(*all));
		streams = malloc(total * sizeof(*streams));
	}
	for (s = 0; all && streams && s < k->nstreams; s++) {
		struct kstream *st = &k->streams[s];

		while (st->pq_count) {
			streams[n] = s;
			all[n++] = st->pq[st->pq_head];
			st->pq_head = (st->pq_head + 1) % st->pq_cap;
			st->pq_count--;
		}
	}
	pthread_mutex_unlock(&k->lock);
	for (s = 0; s < n; s++)
		post_local(k, streams[s], all[s].tag, IPU_E_CANCELLED);
	free(all);
	free(streams);
}

static void *reaper_main(void *arg)
{
	struct kernel_dev *k = arg;
	static __thread struct ipu_completion out[KHOLD + 1];

	for (;;) {
		struct io_uring_cqe *cqe;
		struct ipu_completion c;
		uint64_t ud, seq;
		uint32_t n, i;
		int rc = io_uring_wait_cqe(&k->ring, &cqe);

		if (rc == -EINTR)
			continue;
		if (rc < 0) {
			fprintf(stderr, "libipu: %s: io_uring wait failed: %s\n", k->name,
				strerror(-rc));
			return NULL;
		}
		ud = cqe->user_data;
		if (ud & KUD_STOP) {
			io_uring_cqe_seen(&k->ring, cqe);
			return NULL;
		}
		memset(&c, 0, sizeof(c));
		c.stream = (uint32_t)(ud & 0xffff);
		seq = (ud >> 16) & KUD_SEQ_MASK;
		c.tag = cqe->big_cqe[0];
		if (cqe->res >= 0) {
			c.bytes = (uint32_t)cqe->res;
		} else {
			c.status = cqe->res == -ECANCELED ? IPU_E_CANCELLED :
				   cqe->res == -EINVAL ? IPU_E_INVAL : IPU_E_IO;
		}
		io_uring_cqe_seen(&k->ring, cqe);
		n = 0;
		pthread_mutex_lock(&k->lock);
		if (k->streams && c.stream < k->nstreams) {
			struct kstream *st = &k->streams[c.stream];

			if (st->inflight)
				st->inflight--;
			if (seq == (st->next_deliver & KUD_SEQ_MASK)) {
				out[n++] = c;
				st->next_deliver++;
				while (st->held_ok && st->held_ok[st->next_deliver % KHOLD]) {
					st->held_ok[st->next_deliver % KHOLD] = 0;
					out[n++] = st->held[st->next_deliver % KHOLD];
					st->next_deliver++;
				}
			} else {
				if (!st->held) {
					st->held = calloc(KHOLD, sizeof(*st->held));
					st->held_ok = calloc(KHOLD, 1);
				}
				if (st->held && st->held_ok) {
					st->held[seq % KHOLD] = c;
					st->held_ok[seq % KHOLD] = 1;
				} else {
					out[n++] = c;	/* no memory: deliver out of order */
				}
			}
			if (c.status != IPU_E_CANCELLED)
				feed_pending(k, c.stream);
		} else {
			out[n++] = c;
		}
		pthread_mutex_unlock(&k->lock);
		/* deliver before counting them done: when abort returns, every
		 * cancellation is out */
		for (i = 0; i < n; i++)
			ipu_cq_post(&k->dev->cq, &out[i]);
		pthread_mutex_lock(&k->lock);
		k->inflight = k->inflight > n ? k->inflight - n : 0;
		pthread_cond_broadcast(&k->cv);
		pthread_mutex_unlock(&k->lock);
	}
}

static void kernel_close(struct ipu_device *d);

static int kernel_open(struct ipu_device *d, const char *spec, char *err, size_t errlen)
{
	struct kernel_dev *k = calloc(1, sizeof(*k));
	drmVersionPtr ver;
	const char *base;
	int rc;

	if (!k) {
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	k->dev = d;
	d->priv = k;
	k->fd = -1;
	pthread_mutex_init(&k->sq_lock, NULL);
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->cv, NULL);
	pthread_mutex_init(&k->rlock, NULL);
	pthread_cond_init(&k->rcv, NULL);
	base = strrchr(spec, '/');
	snprintf(k->name, sizeof(k->name), "%s", base ? base + 1 : spec);
	k->fd = open(spec, O_RDWR | O_CLOEXEC);
	if (k->fd < 0) {
		rc = errno;
		ipu_errorf(err, errlen, rc == ENOENT || rc == ENODEV ? IPU_E_INVAL : IPU_E_IO, "cannot open %s: %s%s", spec, strerror(rc),
			 rc == ENOENT ? " (is ipu.ko loaded? see Documentation/driver/)" : "");
		kernel_close(d);
		return rc == ENOENT || rc == ENODEV ? IPU_E_INVAL : IPU_E_IO;
	}
	ver = drmGetVersion(k->fd);
	if (!ver || strcmp(ver->name, IPU_DRM_DRIVER_NAME)) {
		ipu_errorf(err, errlen, IPU_E_INVAL, "%s is not an IPU device (DRM driver '%s', expected '%s')",
			   spec, ver ? ver->name : "none", IPU_DRM_DRIVER_NAME);
		drmFreeVersion(ver);
		kernel_close(d);
		return IPU_E_INVAL;
	}
	drmFreeVersion(ver);
	rc = kioctl(k, DRM_IOCTL_IPU_INFO, &k->info);
	if (rc) {
		ipu_errorf(err, errlen, IPU_E_INVAL, "%s is not an IPU device (INFO: %s)", spec, strerror(-rc));
		kernel_close(d);
		return IPU_E_INVAL;
	}
	k->per_stream_max = k->info.stream_ring ? k->info.stream_ring : 255;
	rc = io_uring_queue_init(KRING_ENTRIES, &k->ring,
				 IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (rc) {
		ipu_errorf(err, errlen, IPU_E_IO, "cannot set up io_uring (SQE128/CQE32) for %s: %s",
			 spec, strerror(-rc));
		close(k->fd);
		k->fd = -1;
		kernel_close(d);
		return IPU_E_IO;
	}
	/* slots for ipu_register_memory; without them every buffer is pinned per request */
	k->fixed_ok = io_uring_register_buffers_sparse(&k->ring, IPU_MAX_REGISTERED) == 0;
	if (ipu_thread_create(&k->reaper, reaper_main, k)) {
		ipu_errorf(err, errlen, IPU_E_NOMEM, "cannot start the completion thread");
		io_uring_queue_exit(&k->ring);
		close(k->fd);
		k->fd = -1;
		kernel_close(d);
		return IPU_E_NOMEM;
	}
	k->reaper_started = 1;
	return 0;
}

static void kernel_close(struct ipu_device *d)
{
	struct kernel_dev *k = K(d);

	if (!k)
		return;
	if (k->reaper_started) {
		struct io_uring_sqe *sqe;
		struct ipu_reset_args r = { .mode = IPU_RESET_ABORT };

		/* nothing may stay in flight: abort if buffers are queued */
		cancel_pending(k);
		pthread_mutex_lock(&k->lock);
		if (k->inflight) {
			pthread_mutex_unlock(&k->lock);
			kioctl(k, DRM_IOCTL_IPU_RESET, &r);
			pthread_mutex_lock(&k->lock);
			while (k->inflight)
				pthread_cond_wait(&k->cv, &k->lock);
		}
		pthread_mutex_unlock(&k->lock);
		pthread_mutex_lock(&k->sq_lock);
		sqe = io_uring_get_sqe(&k->ring);
		while (!sqe) {
			io_uring_submit(&k->ring);
			sqe = io_uring_get_sqe(&k->ring);
		}
		io_uring_prep_nop(sqe);
		sqe->user_data = KUD_STOP;
		io_uring_submit(&k->ring);
		pthread_mutex_unlock(&k->sq_lock);
		pthread_join(k->reaper, NULL);
		io_uring_queue_exit(&k->ring);
	}
	if (k->runner_started) {
		pthread_mutex_lock(&k->rlock);
		__atomic_store_n(&k->runner_stop, 1, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&k->rcv);
		pthread_mutex_unlock(&k->rlock);
		pthread_join(k->runner, NULL);
	}
	/* closing the fd drops the handles; the mappings are ours to undo */
	for (int i = 0; i < IPU_MAX_REGISTERED; i++)
		if (k->bo[i].handle)
			munmap(k->bo[i].map, k->bo[i].len);
	if (k->fd >= 0)
		close(k->fd);
	free(k->rq);
	pthread_mutex_destroy(&k->rlock);
	pthread_cond_destroy(&k->rcv);
	free_streams(k->streams, k->nstreams);
	pthread_mutex_destroy(&k->sq_lock);
	pthread_mutex_destroy(&k->lock);
	pthread_cond_destroy(&k->cv);
	free(k);
	d->priv = NULL;
}

static int kernel_info(struct ipu_device *d, struct ipu_device_info *info)
{
	struct kernel_dev *k = K(d);
	struct ipu_info_args a = { 0 };
	int rc = kioctl(k, DRM_IOCTL_IPU_INFO, &a);

	if (rc)
		return kerr(rc);
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", k->name);
	snprintf(info->path, sizeof(info->path), "%s", d->spec);
	info->backend = IPU_BACKEND_KERNEL;
	info->num_tiles = a.tiles;
	info->tile_mem = a.tile_mem;
	info->version = a.hw_version;
	snprintf(info->version_name, sizeof(info->version_name), "ipu%u", a.hw_version);
	snprintf(info->serial, sizeof(info->serial), "%016llx", (unsigned long long)a.serial);
	info->max_streams = a.max_streams;
	info->owner_pid = a.owner_pid;
	info->state = a.state == IPU_DEV_STATE_RESETTING ? IPU_STATE_BUSY : a.state;
	return 0;
}

static int kernel_attach(struct ipu_device *d)
{
	struct ipu_attach_args a = { 0 };

	return kerr(kioctl(K(d), DRM_IOCTL_IPU_ATTACH, &a));
}

static int kernel_detach(struct ipu_device *d)
{
	struct ipu_attach_args a = { 0 };
	int rc = kioctl(K(d), DRM_IOCTL_IPU_DETACH, &a);

	return rc == -EPERM ? 0 : kerr(rc);
}

static int kernel_attach_group(struct ipu_device *const *devs, unsigned n)
{
	struct ipu_group_attach_args a = { 0 };
	int32_t fds[KGROUP_MAX];
	unsigned i;

	if (n > KGROUP_MAX)
		return IPU_E_INVAL;
	for (i = 0; i < n; i++)
		fds[i] = K(devs[i])->fd;
	a.fds = (uintptr_t)fds;
	a.count = n;
	return kerr(kioctl(K(devs[0]), DRM_IOCTL_IPU_GROUP_ATTACH, &a));
}

static int kernel_link_stream(struct ipu_device *d, uint32_t stream, uint32_t peer_ipu,
			      uint32_t peer_stream)
{
	struct ipu_link_stream_args a = { .stream = stream, .peer_ipu = peer_ipu,
					  .peer_stream = peer_stream };
	int rc = kioctl(K(d), DRM_IOCTL_IPU_LINK_STREAM, &a);

	/* a pair the device refused, or no group: the arguments do not fit */
	return rc == -ENOLINK || rc == -ENOENT ? IPU_E_INVAL : kerr(rc);
}

static int kernel_link_counters(struct ipu_device *d, struct ipu_link_counters *out)
{
	struct ipu_counters_args a = { 0 };
	int rc = kioctl(K(d), DRM_IOCTL_IPU_COUNTERS, &a);

	if (rc)
		return kerr(rc);
	out->out_bytes = a.link_out_bytes;
	out->in_bytes = a.link_in_bytes;
	out->cycles = a.link_cycles;
	return 0;
}

static void wait_no_inflight(struct kernel_dev *k)
{
	pthread_mutex_lock(&k->lock);
	while (k->inflight)
		pthread_cond_wait(&k->cv, &k->lock);
	pthread_mutex_unlock(&k->lock);
}

static int kernel_abort(struct ipu_device *d)
{
	struct kernel_dev *k = K(d);
	struct ipu_reset_args r = { .mode = IPU_RESET_ABORT };
	int rc;

	cancel_pending(k);
	rc = kioctl(k, DRM_IOCTL_IPU_RESET, &r);
	if (rc)
		return kerr(rc);
	wait_no_inflight(k);
	return 0;
}

static int kernel_load(struct ipu_device *d, const void *image, size_t len, char *err,
		       size_t errlen)
{
	struct kernel_dev *k = K(d);
	struct ipu_load_args a = { 0 };
	struct ipu_wait_args w = { 0 };
	struct kstream *st;
	uint32_t i;
	int rc;

	if (len > k->info.max_image) {
		return ipu_errorf(err, errlen, IPU_E_INVAL, "executable of %zu bytes is larger than the device's %u",
			 len, k->info.max_image);
	}
	/* like the model: wait for runs, cancel buffers still queued */
	if (k->last_seq) {
		w.seq = k->last_seq;
		w.timeout_ns = -1;
		kioctl(k, DRM_IOCTL_IPU_WAIT, &w);
	}
	pthread_mutex_lock(&k->lock);
	rc = k->inflight != 0;
	for (i = 0; k->streams && i < k->nstreams; i++)
		rc |= k->streams[i].pq_count != 0;
	pthread_mutex_unlock(&k->lock);
	if (rc)
		kernel_abort(d);
	a.image = (uintptr_t)image;
	a.size = (uint32_t)len;
	rc = kioctl(k, DRM_IOCTL_IPU_LOAD_EXECUTABLE, &a);
	if (rc) {
		if (a.verifier_error) {
			return ipu_errorf(err, errlen, a.verifier_error, "%s refused the executable: %s (%d)", k->name,
				 ipu_err_name(a.verifier_error), a.verifier_error);
		}
		return ipu_errorf(err, errlen, kerr(rc), "%s: LOAD_EXECUTABLE failed: %s (device: %s, status %u)%s",
			 k->name, strerror(-rc), dev_status_str(a.dev_status), a.dev_status,
			 rc == -EPERM ? ": attach first" : "");
	}
	st = calloc(a.num_streams ? a.num_streams : 1, sizeof(*st));
	if (!st) {
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	for (i = 0; i < a.num_streams; i++) {
		struct ipu_stream_info_args si = { .stream = i };

		rc = kioctl(k, DRM_IOCTL_IPU_STREAM_INFO, &si);
		if (rc) {
			free(st);
			return ipu_errorf(err, errlen, kerr(rc), "STREAM_INFO %u: %s", i, strerror(-rc));
		}
		st[i].dir = si.dir;
		st[i].bytes = si.buffer_bytes;
	}
	rc = kioctl(k, DRM_IOCTL_IPU_INFO, &k->info);
	if (!rc && k->info.stream_ring)
		k->per_stream_max = k->info.stream_ring;
	pthread_mutex_lock(&k->lock);
	free_streams(k->streams, k->nstreams);
	k->streams = st;
	k->nstreams = a.num_streams;
	pthread_mutex_unlock(&k->lock);
	return 0;
}

static int kernel_stream_count(struct ipu_device *d)
{
	struct kernel_dev *k = K(d);
	int n;

	pthread_mutex_lock(&k->lock);
	n = k->streams ? (int)k->nstreams : IPU_E_NOT_LOADED;
	pthread_mutex_unlock(&k->lock);
	return n;
}

static int kernel_stream_info(struct ipu_device *d, uint32_t stream, uint32_t *dir,
			      uint32_t *bytes)
{
	struct kernel_dev *k = K(d);
	int rc = 0;

	pthread_mutex_lock(&k->lock);
	if (!k->streams)
		rc = IPU_E_NOT_LOADED;
	else if (stream >= k->nstreams)
		rc = IPU_E_INVAL;
	else {
		*dir = k->streams[stream].dir;
		*bytes = k->streams[stream].bytes;
	}
	pthread_mutex_unlock(&k->lock);
	return rc;
}

static int queue_run(struct kernel_dev *k, uint64_t seq);

static int kernel_run(struct ipu_device *d, uint32_t prog, uint64_t *seq)
{
	struct kernel_dev *k = K(d);
	struct ipu_run_args a = { .program = prog };
	int rc = kioctl(k, DRM_IOCTL_IPU_RUN, &a);

	if (rc == -EINVAL)
		return IPU_E_PROGRAM;
	if (rc)
		return kerr(rc);
	*seq = a.seq;
	k->last_seq = a.seq;
	return queue_run(k, a.seq);
}

/* A finished WAIT -> ipu_err + message. */
static int wait_result(struct kernel_dev *k, const struct ipu_wait_args *a, int64_t timeout_ns,
		       char *err, size_t errlen)
{
	unsigned long long seq = (unsigned long long)a->seq;
	int rc;

	switch (a->status) {
	case IPU_WAIT_TIMEDOUT:
		return ipu_errorf(err, errlen, IPU_E_TIMEOUT, "run %llu not finished after %lld ns", seq,
			 (long long)timeout_ns);
	case IPU_WAIT_ABORTED:
		return ipu_errorf(err, errlen, IPU_E_CANCELLED, "run %llu was cancelled (abort, reset or watchdog)", seq);
	default:
		break;
	}
	switch (a->dev_status) {
	case 0:
		return 0;
	case 7:		/* NOT_LOADED */
		rc = IPU_E_NOT_LOADED;
		break;
	case 8:		/* BAD_PROGRAM */
		rc = IPU_E_PROGRAM;
		break;
	case 10:	/* STREAM_ERROR */
		rc = IPU_E_STREAM;
		break;
	case 11:	/* FAULT */
	case 18:	/* ENGINE */
		rc = (int32_t)a->result < 0 ? (int32_t)a->result : IPU_E_FAULT;
		break;
	default:
		rc = IPU_E_IO;
		break;
	}
	if ((int32_t)a->result < 0)
		return ipu_errorf(err, errlen, rc, "run %llu failed on %s: %s: %s (%s; device status %u)", seq,
			 k->name, dev_status_str(a->dev_status), ipu_strerror((int32_t)a->result),
			 ipu_err_name((int32_t)a->result), a->dev_status);
	return ipu_errorf(err, errlen, rc, "run %llu failed on %s: %s (device status %u, result %d)", seq,
		 k->name, dev_status_str(a->dev_status), a->dev_status, (int32_t)a->result);
}

static int kernel_wait(struct ipu_device *d, uint64_t seq, int64_t timeout_ns, char *err,
		       size_t errlen)
{
	struct kernel_dev *k = K(d);
	struct ipu_wait_args a = { .seq = seq, .timeout_ns = timeout_ns };
	int rc = kioctl(k, DRM_IOCTL_IPU_WAIT, &a);

	if (rc) {
		return ipu_errorf(err, errlen, kerr(rc), "wait for run %llu: %s", (unsigned long long)seq,
			 rc == -ESTALE ? "too old, its status was dropped" : strerror(-rc));
	}
	return wait_result(k, &a, timeout_ns, err, errlen);
}

/* The run handler's thread: waits for each queued run in order. */
static void *runner_main(void *arg)
{
	struct kernel_dev *k = arg;
	char msg[256];

	pthread_mutex_lock(&k->rlock);
	for (;;) {
		struct ipu_wait_args a;
		ipu_run_fn fn;
		void *ctx;
		uint64_t seq;
		int rc;

		while (!k->rq_count && !k->runner_stop)
			pthread_cond_wait(&k->rcv, &k->rlock);
		if (k->runner_stop)
			break;
		seq = k->rq[k->rq_head];
		k->rq_head = (k->rq_head + 1) % k->rq_cap;
		k->rq_count--;
		pthread_mutex_unlock(&k->rlock);
		do {
			memset(&a, 0, sizeof(a));
			a.seq = seq;
			a.timeout_ns = 200000000;	/* look at runner_stop now and then */
			rc = kioctl(k, DRM_IOCTL_IPU_WAIT, &a);
		} while (!rc && a.status == IPU_WAIT_TIMEDOUT && !READ_STOP(k));
		msg[0] = 0;
		if (rc) {
			snprintf(msg, sizeof(msg), "wait for run %llu: %s",
				 (unsigned long long)seq, strerror(-rc));
			rc = kerr(rc);
		} else {
			rc = wait_result(k, &a, -1, msg, sizeof(msg));
		}
		pthread_mutex_lock(&k->rlock);
		fn = k->run_fn;
		ctx = k->run_ctx;
		pthread_mutex_unlock(&k->rlock);
		if (fn)
			fn(ctx, seq, rc, msg);
		pthread_mutex_lock(&k->rlock);
	}
	pthread_mutex_unlock(&k->rlock);
	return NULL;
}

static int kernel_set_run_handler(struct ipu_device *d, ipu_run_fn fn, void *ctx)
{
	struct kernel_dev *k = K(d);
	int rc = 0;

	pthread_mutex_lock(&k->rlock);
	k->run_fn = fn;
	k->run_ctx = ctx;
	if (fn && !k->runner_started) {
		if (ipu_thread_create(&k->runner, runner_main, k))
			rc = IPU_E_NOMEM;
		else
			k->runner_started = 1;
	}
	pthread_mutex_unlock(&k->rlock);
	return rc;
}

/* After RUN: hand the sequence number to the run handler's thread. */
static int queue_run(struct kernel_dev *k, uint64_t seq)
{
	pthread_mutex_lock(&k->rlock);
	if (!k->run_fn) {
		pthread_mutex_unlock(&k->rlock);
		return 0;
	}
	if (k->rq_count == k->rq_cap) {
		uint32_t ncap = k->rq_cap ? k->rq_cap * 2 : 64, i;
		uint64_t *n = malloc(ncap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&k->rlock);
			return IPU_E_NOMEM;
		}
		for (i = 0; i < k->rq_count; i++)
			n[i] = k->rq[(k->rq_head + i) % k->rq_cap];
		free(k->rq);
		k->rq = n;
		k->rq_cap = ncap;
		k->rq_head = 0;
	}
	k->rq[(k->rq_head + k->rq_count) % k->rq_cap] = seq;
	k->rq_count++;
	pthread_cond_signal(&k->rcv);
	pthread_mutex_unlock(&k->rlock);
	return 0;
}

static int kernel_submit(struct ipu_device *d, uint32_t stream, void *buf, size_t len,
			 uint64_t tag)
{
	struct kernel_dev *k = K(d);
	struct kstream *st;
	uint32_t dir;
	int rc;

	pthread_mutex_lock(&k->lock);
	if (!k->streams) {
		pthread_mutex_unlock(&k->lock);
		return IPU_E_NOT_LOADED;
	}
	if (stream >= k->nstreams || !buf || len != k->streams[stream].bytes) {
		pthread_mutex_unlock(&k->lock);
		return IPU_E_INVAL;
	}
	st = &k->streams[stream];
	if (st->pq_count || !may_issue(k, st)) {
		/* the driver's ring is full: wait here, in order, for the reaper */
		if (st->pq_count == st->pq_cap) {
			uint32_t ncap = st->pq_cap ? st->pq_cap * 2 : 64, i;
			struct kpending *n = malloc(ncap * sizeof(*n));

			if (!n) {
				pthread_mutex_unlock(&k->lock);
				return IPU_E_NOMEM;
			}
			for (i = 0; i < st->pq_count; i++)
				n[i] = st->pq[(st->pq_head + i) % st->pq_cap];
			free(st->pq);
			st->pq = n;
			st->pq_cap = ncap;
			st->pq_head = 0;
		}
		st->pq[(st->pq_head + st->pq_count) % st->pq_cap] = (struct kpending){ buf, tag };
		st->pq_count++;
		pthread_mutex_unlock(&k->lock);
		return 0;
	}
	st->inflight++;
	k->inflight++;
	dir = st->dir;
	/* under k->lock: buffers reach the driver in the order of their seqs */
	rc = issue(k, stream, dir, buf, (uint32_t)len, tag, st->next_issue);
	if (rc) {
		st->inflight--;
		k->inflight--;
		pthread_cond_broadcast(&k->cv);
	} else {
		st->next_issue++;
	}
	pthread_mutex_unlock(&k->lock);
	return rc;
}

static int kernel_reg_memory(struct ipu_device *d, uint32_t slot, void *addr, size_t len)
{
	struct kernel_dev *k = K(d);
	struct iovec iov = { addr, len };
	int rc;

	if (!k->fixed_ok)
		return IPU_E_IO;	/* io_uring without sparse fixed buffers */
	rc = io_uring_register_buffers_update_tag(&k->ring, slot, &iov, NULL, 1);
	if (rc == 1)
		return 0;
	return rc == -ENOMEM ? IPU_E_NOMEM : rc == -EFAULT ? IPU_E_INVAL : kerr(rc);
}

static int kernel_unreg_memory(struct ipu_device *d, uint32_t slot)
{
	struct kernel_dev *k = K(d);
	struct iovec none = { NULL, 0 };
	int rc;

	/* io_uring keeps the old pages until commands using them complete */
	rc = io_uring_register_buffers_update_tag(&k->ring, slot, &none, NULL, 1);
	return rc == 1 ? 0 : kerr(rc);
}

/* Map buffer object `handle` as slot `slot`; closes the handle on failure. */
static int kbo_map(struct kernel_dev *k, uint32_t slot, uint32_t handle, size_t *len,
		   void **addr)
{
	struct ipu_bo_info_args bi = { .handle = handle };
	void *p = MAP_FAILED;
	int rc;

	rc = kioctl(k, DRM_IOCTL_IPU_BO_INFO, &bi);
	if (!rc && bi.size > IPU_REGION_MAX_BYTES)
		rc = -EFBIG;
	if (!rc) {
		p = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd,
			 (off_t)bi.mmap_offset);
		if (p == MAP_FAILED)
			rc = -errno;
	}
	if (rc) {
		drmCloseBufferHandle(k->fd, handle);
		return rc == -ENOMEM ? IPU_E_NOMEM : IPU_E_IO;
	}
	k->bo[slot].handle = handle;
	k->bo[slot].map = p;
	k->bo[slot].len = bi.size;
	*addr = p;
	*len = bi.size;
	return 0;
}

static int kernel_alloc_memory(struct ipu_device *d, uint32_t slot, size_t len, void **addr)
{
	struct kernel_dev *k = K(d);
	struct ipu_bo_create_args a = { .size = len };
	int rc = kioctl(k, DRM_IOCTL_IPU_BO_CREATE, &a);

	if (rc)
		return rc == -ENOMEM ? IPU_E_NOMEM : rc == -EINVAL ? IPU_E_INVAL : kerr(rc);
	/* the caller's length: the object is rounded up to pages */
	rc = kbo_map(k, slot, a.handle, &(size_t){ 0 }, addr);
	return rc;
}

static int kernel_import_dmabuf(struct ipu_device *d, uint32_t slot, int fd, size_t *len,
				void **addr)
{
	struct kernel_dev *k = K(d);
	uint32_t handle;

	if (drmPrimeFDToHandle(k->fd, fd, &handle))
		return errno == EBADF || errno == EINVAL ? IPU_E_INVAL : IPU_E_IO;
	/* the same object imported twice has one handle: one slot only */
	for (int i = 0; i < IPU_MAX_REGISTERED; i++)
		if (k->bo[i].handle == handle)
			return IPU_E_INVAL;
	return kbo_map(k, slot, handle, len, addr);
}

static int kernel_free_memory(struct ipu_device *d, uint32_t slot)
{
	struct kernel_dev *k = K(d);

	if (!k->bo[slot].handle)
		return IPU_E_INVAL;
	/* buffers already queued keep the object alive in the driver */
	munmap(k->bo[slot].map, k->bo[slot].len);
	drmCloseBufferHandle(k->fd, k->bo[slot].handle);
	memset(&k->bo[slot], 0, sizeof(k->bo[slot]));
	return 0;
}

static int kernel_export_dmabuf(struct ipu_device *d, uint32_t slot, int *fd)
{
	struct kernel_dev *k = K(d);

	if (!k->bo[slot].handle)
		return IPU_E_INVAL;
	if (drmPrimeHandleToFD(k->fd, k->bo[slot].handle, DRM_CLOEXEC | DRM_RDWR, fd))
		return errno == EMFILE || errno == ENFILE ? IPU_E_BUSY : IPU_E_IO;
	return 0;
}

static int kernel_reset(struct ipu_device *d)
{
	struct kernel_dev *k = K(d);
	struct ipu_reset_args r = { .mode = IPU_RESET_ENGINE };
	int rc;

	cancel_pending(k);
	rc = kioctl(k, DRM_IOCTL_IPU_RESET, &r);
	wait_no_inflight(k);
	pthread_mutex_lock(&k->lock);
	free_streams(k->streams, k->nstreams);
	k->streams = NULL;
	k->nstreams = 0;
	pthread_mutex_unlock(&k->lock);
	return kerr(rc);
}

static int kernel_counters(struct ipu_device *d, struct ipu_counters *out)
{
	struct ipu_counters_args a = { 0 };
	int rc = kioctl(K(d), DRM_IOCTL_IPU_COUNTERS, &a);

	if (rc)
		return kerr(rc);
	memset(out, 0, sizeof(*out));
	out->programs_run = a.programs;
	out->cycles = a.cycles;
	out->compute_cycles = a.compute_cycles;
	out->exchange_bytes = a.exchange_bytes;
	out->stream_bytes_in = a.stream_in_bytes;
	out->stream_bytes_out = a.stream_out_bytes;
	out->stream_copies = a.descriptors;
	out->stream_stalls = a.stalls;
	out->stall_ns = a.stall_ns;
	out->errors = a.errors;
	return 0;
}

const struct ipu_backend_ops ipu_kernel_backend = {
	.name = "kernel",
	.open = kernel_open,
	.close = kernel_close,
	.info = kernel_info,
	.attach = kernel_attach,
	.detach = kernel_detach,
	.load = kernel_load,
	.stream_count = kernel_stream_count,
	.stream_info = kernel_stream_info,
	.run = kernel_run,
	.wait = kernel_wait,
	.submit = kernel_submit,
	.abort = kernel_abort,
	.reset = kernel_reset,
	.counters = kernel_counters,
	.cs_profile = NULL,
	.set_run_handler = kernel_set_run_handler,
	.reg_memory = kernel_reg_memory,
	.unreg_memory = kernel_unreg_memory,
	.alloc_memory = kernel_alloc_memory,
	.import_dmabuf = kernel_import_dmabuf,
	.free_memory = kernel_free_memory,
	.export_dmabuf = kernel_export_dmabuf,
	.attach_group = kernel_attach_group,
	.link_stream = kernel_link_stream,
	.link_counters = kernel_link_counters,
};
