/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipu_drv.h - internal state of ipu.ko.
 *
 * Locking, outermost first:
 *   idev->lock (mutex)    owner, executable, stream table, resets; taken by
 *                         ioctls, release and the watchdog, never in IRQs
 *   idev->cmd_lock        command ring, pending commands, run statuses
 *   idev->sq_lock         stream rings and in-flight stream requests
 *   idev->ev_lock         event ring
 * The spinlocks are taken with interrupts disabled; they nest cmd_lock ->
 * sq_lock only in the reset path.
 */
#ifndef _IPU_DRV_H
#define _IPU_DRV_H

#include <drm/drm_ioctl.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/dmapool.h>
#include <linux/idr.h>
#include <linux/io_uring/cmd.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <uapi/linux/ipu.h>

#include "ipu_hw.h"

struct drm_device;
struct drm_file;
struct drm_gem_object;

#define IPU_DRV_NAME		"ipu"
#define IPU_CMDQ_ENTRIES	256
#define IPU_CPLQ_ENTRIES	256
#define IPU_SCQ_ENTRIES		1024
#define IPU_STREAM_RING_MAX	256
#define IPU_RUN_STATUS_RING	1024
#define IPU_EVENT_RING		256

/* a user or kernel buffer mapped for the device */
struct ipu_dma_buf {
	struct page **pages;
	unsigned int npages;
	bool pinned;		/* user pages we pinned (else fixed or kernel) */
	bool kernel;		/* pages we allocated (bounce copy) */
	bool mapped;
	enum dma_data_direction dir;
	struct sg_table sgt;
	struct ipu_hw_sg *sgl;	/* device SG list */
	dma_addr_t sgl_dma;
	size_t sgl_bytes;
	bool sgl_pool;
	u32 sg_count;		/* 0: direct */
	u64 addr;		/* SG list or direct buffer */
	u32 len;
	struct drm_gem_object *bo;	/* a buffer object's pages: its reference */
};

struct ipu_device;
struct ipu_file;

/* devices on one ipu-link acquired as one (ipu_group.c) */
struct ipu_group {
	u32 id;				/* > 0, sysfs and INFO */
	u32 count;
	struct ipu_device *members[IPU_LINK_MAX_MEMBERS];	/* IPU k */
	struct ipu_file *files[IPU_LINK_MAX_MEMBERS];		/* their owners */
};

/* one pending command on the command ring */
struct ipu_cmd_ctx {
	u32 id;			/* idr id, the low tag bits */
	bool is_run;
	u64 seq;		/* RUN: sequence number */
	struct ipu_file *owner;
	struct completion done;
	u16 status;
	u32 result;
	u64 detail;
	unsigned long submitted;	/* jiffies */
	struct list_head node;
};

struct ipu_run_status {
	u64 seq;
	u32 wait_status;	/* IPU_WAIT_* */
	u32 dev_status;
	u32 result;
	u64 cycles;
};

/* one stream buffer queued through io_uring */
struct ipu_stream_req {
	struct io_uring_cmd *ioucmd;
	struct ipu_device *idev;
	struct ipu_file *owner;
	struct ipu_dma_buf buf;
	u32 stream;
	u32 slot;
	u64 utag;
	int res;
	u32 dev_status;
	struct list_head node;
};

struct ipu_stream_ring {
	struct ipu_hw_desc *desc;
	dma_addr_t dma;
	u32 size;
	u32 tail;
	u32 inflight;
	u32 dir;
	u32 bytes;
	bool created;
	struct ipu_stream_req **slots;
};

/* the driver's part of one open /dev/accel/accelN (drm_file.driver_priv) */
struct ipu_file {
	struct ipu_device *idev;
	struct drm_file *dfile;
	pid_t pid;
	bool attached;
};

struct ipu_device {
	struct pci_dev *pdev;
	void __iomem *regs;
	struct kref ref;
	int minor;		/* N of /dev/accel/accelN */
	struct drm_device *drm;
	bool gone;
	int nvec;

	/* identity */
	u32 if_version, hw_version, caps, tiles, tile_mem, max_streams;
	u32 max_image, max_sg;
	u64 serial;
	u32 link_index;		/* on its ipu-link, U32_MAX if on none */

	struct ipu_group *group;	/* see ipu_group.c for its locking */
	u32 group_ipu;		/* its IPU index in the group */
	/*
	 * a reset of this device alone (watchdog, FLR, AER, a fatal error)
	 * resets the group's other members from peer_reset_work; none is
	 * queued while the group itself resets it (group_resetting)
	 */
	bool group_resetting;
	u32 peer_reset_reason, peer_reset_group;
	struct work_struct peer_reset_work;

	struct mutex lock;		/* owner, executable, streams, resets */
	struct ipu_file *owner;
	pid_t owner_pid;
	bool loaded;
	bool failed;
	u32 num_programs;
	u32 nstreams;
	struct ipu_stream_ring *streams;
	u32 stream_ring_size;

	/* rings */
	spinlock_t cmd_lock;		/* command ring, CPLQ, pending, runs */
	bool resetting;			/* no command may enter the ring */
	struct ipu_hw_cmd *cmdq;
	dma_addr_t cmdq_dma;
	u32 cmd_tail;
	u32 cmd_inflight;
	wait_queue_head_t cmd_space;
	struct ipu_hw_cpl *cplq;
	dma_addr_t cplq_dma;
	u32 cpl_head;
	u8 cpl_phase;
	struct idr cmd_idr;
	struct list_head cmd_pending;
	u64 next_seq;
	u64 done_seq;
	struct ipu_run_status runs[IPU_RUN_STATUS_RING];
	wait_queue_head_t run_wq;

	spinlock_t sq_lock;		/* stream rings, stream requests, SCQ */
	struct ipu_hw_cpl *scq;
	dma_addr_t scq_dma;
	u32 scq_head;
	u8 scq_phase;
	struct list_head stream_reqs;
	u32 stream_inflight;
	struct dma_pool *sg_pool;
	atomic_t reqs_alive;		/* stream requests not yet released */
	wait_queue_head_t reqs_wq;

	/* watchdog (Documentation/driver/README.md, "Watchdog") */
	struct delayed_work watchdog;
	unsigned int watchdog_ms;	/* no progress for this long: hung */
	unsigned int run_limit_ms;	/* one run computing this long: runaway */
	unsigned long last_progress;	/* jiffies of the last sign of life */
	u64 wd_progress;		/* PROGRESS at the last tick */
	u64 wd_run_seq;			/* run being timed, 0 none */
	unsigned int wd_run_ms;		/* its computing time so far */
	unsigned long wd_tick;		/* jiffies of the last tick */
	/* unread completion at the last tick: 1 + (phase << 16 | head), or 0 */
	u32 wd_cpl_seen, wd_scq_seen;
	bool cpl_corrupt;		/* a completion named a tag never issued */
	bool inject_hang;		/* debugfs: ignore the device's completions */
	struct work_struct fatal_work;
	struct dentry *debugfs;

	/* events */
	spinlock_t ev_lock;		/* events */
	struct ipu_event events[IPU_EVENT_RING];
	u64 ev_next;

	/* driver statistics */
	atomic64_t st_stream_cmds;
	atomic64_t st_stream_bytes;
	atomic64_t st_programs_run;
	atomic64_t st_resets;
	atomic64_t st_errors;
	atomic64_t st_pinned_pages;
	atomic64_t st_lost_irqs;
	atomic64_t st_bad_completions;
	atomic64_t st_gem_objects;	/* buffer objects alive */
	atomic64_t st_gem_pages;	/* their pages pinned for the device */
};

static inline u32 ipu_rd(struct ipu_device *idev, u32 reg)
{
	return readl(idev->regs + reg);
}

static inline void ipu_wr(struct ipu_device *idev, u32 reg, u32 val)
{
	writel(val, idev->regs + reg);
}

static inline u64 ipu_rd64(struct ipu_device *idev, u32 reg)
{
	u32 lo = ipu_rd(idev, reg);

	return lo | ((u64)ipu_rd(idev, reg + 4) << 32);
}

/* ipu_drv.c */
void ipu_device_put(struct ipu_device *idev);
void ipu_device_get(struct ipu_device *idev);
int ipu_hw_reset(struct ipu_device *idev, u32 reason);
int ipu_aer_recover(struct ipu_device *idev);
u32 ipu_state(struct ipu_device *idev);

/* ipu_rings.c */
int ipu_rings_alloc(struct ipu_device *idev);
void ipu_rings_free(struct ipu_device *idev);
void ipu_rings_program(struct ipu_device *idev);
int ipu_cmd_exec(struct ipu_device *idev, struct ipu_hw_cmd *cmd,
		 struct ipu_file *owner, unsigned int timeout_ms,
		 struct ipu_cmd_ctx *out);
int ipu_cmd_run(struct ipu_device *idev, struct ipu_file *owner, u32 prog,
		u64 *seq);
int ipu_run_wait(struct ipu_device *idev, struct ipu_wait_args *a);
unsigned int ipu_cpl_drain(struct ipu_device *idev);
unsigned int ipu_scq_drain(struct ipu_device *idev);
void ipu_cancel_all(struct ipu_device *idev);
bool ipu_cmds_pending(struct ipu_device *idev);
void ipu_watchdog_fn(struct work_struct *work);
const char *ipu_status_name(u32 st);
int ipu_status_errno(u32 st);

/* ipu_dma.c */
int ipu_dma_pin_user(struct ipu_device *idev, struct ipu_dma_buf *b,
		     unsigned long uaddr, u32 len, enum dma_data_direction dir);
int ipu_dma_copy_user(struct ipu_device *idev, struct ipu_dma_buf *b,
		      unsigned long uaddr, u32 len);
int ipu_dma_alloc_kernel(struct ipu_device *idev, struct ipu_dma_buf *b,
			 u32 len, enum dma_data_direction dir);
int ipu_dma_copy_to_user(struct ipu_dma_buf *b, unsigned long uaddr);
int ipu_dma_import_fixed(struct ipu_device *idev, struct ipu_dma_buf *b,
			 struct io_uring_cmd *ioucmd, unsigned long uaddr,
			 u32 len, enum dma_data_direction dir);
int ipu_dma_copy_bo(struct ipu_device *idev, struct ipu_dma_buf *b,
		    struct drm_file *file, u32 handle, u32 len);
int ipu_dma_import_bo(struct ipu_device *idev, struct ipu_dma_buf *b,
		      struct drm_file *file, u32 handle, u64 offset, u32 len,
		      enum dma_data_direction dir);
void ipu_dma_release(struct ipu_device *idev, struct ipu_dma_buf *b);

/* ipu_stream.c */
int ipu_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);
int ipu_streams_create(struct ipu_device *idev, struct ipu_dma_buf *img);
void ipu_streams_destroy(struct ipu_device *idev, bool tell_device);
void ipu_stream_complete(struct ipu_device *idev, struct ipu_stream_req *req,
			 int res, u32 dev_status);

/* ipu_ioctl.c */
#define IPU_DRM_NUM_IOCTLS	(DRM_IPU_LINK_STREAM + 1)
extern const struct drm_ioctl_desc ipu_drm_ioctls[IPU_DRM_NUM_IOCTLS];
int ipu_do_abort(struct ipu_device *idev, struct ipu_file *owner);
int ipu_quiesce(struct ipu_device *idev, struct ipu_file *owner);
void ipu_file_release_locked(struct ipu_file *f);
void ipu_attach_locked(struct ipu_file *f);
void ipu_detach_locked(struct ipu_file *f, u32 reason);

/* ipu_group.c */
bool ipu_group_release(struct ipu_file *f, u32 reason);
int ipu_group_reset(struct ipu_file *f, u32 reason);
void ipu_group_reset_peers_fn(struct work_struct *work);
int ipu_ioctl_group_attach(struct ipu_file *f, void *data);
int ipu_ioctl_link_stream(struct ipu_file *f, void *data);
u32 ipu_group_info(struct ipu_device *idev, u32 *id, u32 *ipu, int *minors);

/* ipu_drm.c */
int ipu_drm_alloc(struct ipu_device *idev);
int ipu_drm_register(struct ipu_device *idev);
void ipu_drm_unplug(struct ipu_device *idev);
void ipu_drm_put(struct ipu_device *idev);
struct ipu_file *ipu_file_of(struct file *filp);
struct ipu_file *ipu_file_of_accel(struct file *filp);

/* ipu_gem.c */
struct drm_gem_object *ipu_gem_create_object(struct drm_device *drm, size_t size);
int ipu_gem_sgt(struct drm_gem_object *obj, struct sg_table **sgt);
int ipu_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int ipu_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file);

/* ipu_netlink.c */
int ipu_netlink_init(void);
void ipu_netlink_exit(void);
void ipu_event(struct ipu_device *idev, u32 type, pid_t pid, u32 code,
	       u32 detail, u64 addr);

/* ipu_debugfs.c */
void ipu_debugfs_init(void);
void ipu_debugfs_exit(void);
void ipu_debugfs_add(struct ipu_device *idev);
void ipu_debugfs_remove(struct ipu_device *idev);

/* ipu_sysfs.c */
extern const struct attribute_group *ipu_dev_groups[];

#endif /* _IPU_DRV_H */
