// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_ioctl.c - the control ioctls, in the DRM driver's ioctl table.
 *
 * drm_ioctl() matches commands by number, so the size in the command is
 * the caller's struct size: it copies the caller's bytes in, zero-fills
 * up to ours, and copies the caller's size back out, also on failure
 * (LOAD's verifier_error and dev_status say why it failed).
 */
#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>
#include <linux/dma-mapping.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ipu_drv.h"

#define IPU_CMD_TIMEOUT_MS	60000

typedef int (*ipu_ioctl_fn)(struct ipu_file *f, void *data);

static int ipu_ioctl_info(struct ipu_file *f, void *data)
{
	struct ipu_info_args *a = data;
	struct ipu_device *idev = f->idev;
	struct pci_dev *pdev = idev->pdev;

	if (a->flags || a->pad)
		return -EINVAL;
	a->if_version = idev->if_version;
	a->hw_version = idev->hw_version;
	a->serial = idev->serial;
	a->tiles = idev->tiles;
	a->tile_mem = idev->tile_mem;
	a->max_streams = idev->max_streams;
	a->caps = idev->caps;
	a->driver_caps = IPU_DRV_CAP_URING_CMD | IPU_DRV_CAP_FIXED_BUFS |
			 IPU_DRV_CAP_NETLINK | IPU_DRV_CAP_GEM;
	/* a snapshot without the device lock: INFO must not wait for a LOAD */
	a->state = ipu_state(idev);
	a->owner_pid = READ_ONCE(idev->owner_pid);
	a->minor = idev->minor;
	a->pci_domain = pci_domain_nr(pdev->bus);
	a->pci_bus = pdev->bus->number;
	a->pci_dev = PCI_SLOT(pdev->devfn);
	a->pci_fn = PCI_FUNC(pdev->devfn);
	a->pad2 = 0;
	a->num_programs = idev->loaded ? idev->num_programs : 0;
	a->num_streams = idev->loaded ? idev->nstreams : 0;
	a->max_image = idev->max_image;
	a->stream_ring = idev->loaded ? idev->stream_ring_size - 1 : IPU_STREAM_RING_MAX - 1;
	a->link_index = idev->link_index;
	a->group_size = ipu_group_info(idev, &a->group_id, &a->group_ipu, NULL);
	return 0;
}

static int ipu_ioctl_attach(struct ipu_file *f, void *data)
{
	struct ipu_attach_args *a = data;
	struct ipu_device *idev = f->idev;

	if (a->flags || a->pad)
		return -EINVAL;
	if (idev->owner == f)
		return 0;
	if (idev->owner)
		return -EBUSY;
	ipu_attach_locked(f);
	return 0;
}

/**
 * ipu_attach_locked() - make a file the owner of its device
 * @f: the file; the caller holds its device's lock and found no owner
 */
void ipu_attach_locked(struct ipu_file *f)
{
	struct ipu_device *idev = f->idev;

	lockdep_assert_held(&idev->lock);
	if (idev->owner == f)
		return;
	idev->owner = f;
	idev->owner_pid = current->tgid;
	f->pid = current->tgid;
	WRITE_ONCE(f->attached, true);
	ipu_event(idev, IPU_EVENT_ATTACH, current->tgid, 0, 0, 0);
}

/**
 * ipu_do_abort() - ABORT the owner's work
 * @idev: the device; the caller holds @idev->lock
 * @owner: the attached file
 *
 * Cancels the running program, queued runs and every queued stream buffer;
 * the device completes them all before the ABORT itself.  A device that
 * does not answer is reset.
 *
 * Return: 0, or a negative errno.
 */
int ipu_do_abort(struct ipu_device *idev, struct ipu_file *owner)
{
	struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_ABORT };
	struct ipu_cmd_ctx res;
	int ret;

	lockdep_assert_held(&idev->lock);
	ret = ipu_cmd_exec(idev, &cmd, owner, 5000, &res);
	if (ret == -ETIMEDOUT) {
		dev_warn(&idev->pdev->dev, "ABORT not answered: resetting the device\n");
		return ipu_hw_reset(idev, IPU_RESET_REASON_WATCHDOG);
	}
	if (ret)
		return ret;
	/*
	 * The device posted every flushed buffer's completion before the
	 * ABORT's, but on another vector: collect them now, so that nothing
	 * refers to the stream rings when the caller frees them.
	 */
	ipu_scq_drain(idev);
	return 0;
}

/**
 * ipu_quiesce() - ABORT, and make sure the device holds no buffer any more
 * @idev: the device; the caller holds @idev->lock
 * @owner: the attached file
 *
 * One buffer queued by another thread after the ABORT may still be
 * there: the device is reset then.  For callers about to delete the
 * stream rings.
 *
 * Return: 0, or a negative errno.
 */
int ipu_quiesce(struct ipu_device *idev, struct ipu_file *owner)
{
	unsigned long flags;
	u32 left;
	int ret;

	lockdep_assert_held(&idev->lock);
	ret = ipu_do_abort(idev, owner);
	if (ret)
		return ret;
	spin_lock_irqsave(&idev->sq_lock, flags);
	left = idev->stream_inflight;
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	if (left || ipu_cmds_pending(idev)) {
		dev_info(&idev->pdev->dev, "%u stream buffers still queued after ABORT: resetting\n",
			 left);
		return ipu_hw_reset(idev, IPU_RESET_REASON_CLOSE);
	}
	return 0;
}

/**
 * ipu_detach_locked() - release the device from its owner
 * @f: the owner; the caller holds its device's lock
 * @reason: IPU_RESET_REASON_CLOSE at close, else 0
 *
 * Nothing of @f's may stay queued: its work is aborted or the device reset.
 */
void ipu_detach_locked(struct ipu_file *f, u32 reason)
{
	struct ipu_device *idev = f->idev;
	struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_RESET_ENGINE };
	struct ipu_cmd_ctx res;
	bool busy;
	unsigned long flags;

	lockdep_assert_held(&idev->lock);
	spin_lock_irqsave(&idev->sq_lock, flags);
	busy = idev->stream_inflight > 0;
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	busy |= ipu_cmds_pending(idev);
	if (!idev->gone && !idev->failed) {
		if (busy && reason == IPU_RESET_REASON_CLOSE) {
			/* mid-program at close: the device must forget it */
			ipu_hw_reset(idev, reason);
		} else {
			if (busy)
				ipu_quiesce(idev, f);
			ipu_streams_destroy(idev, true);
			if (ipu_cmd_exec(idev, &cmd, f, 5000, &res) == -ETIMEDOUT)
				ipu_hw_reset(idev, IPU_RESET_REASON_WATCHDOG);
			idev->loaded = false;
			idev->num_programs = 0;
		}
	}
	WRITE_ONCE(f->attached, false);
	idev->owner = NULL;
	idev->owner_pid = 0;
	ipu_event(idev, IPU_EVENT_DETACH, f->pid, reason, 0, 0);
}

/**
 * ipu_file_release_locked() - detach a closing file if it owns the device
 * @f: the file; the caller holds its device's lock
 */
void ipu_file_release_locked(struct ipu_file *f)
{
	lockdep_assert_held(&f->idev->lock);
	if (f->idev->owner == f)
		ipu_detach_locked(f, IPU_RESET_REASON_CLOSE);
}

/* unlocked: a group member's DETACH releases every member */
static int ipu_ioctl_detach(struct ipu_file *f, void *data)
{
	struct ipu_attach_args *a = data;
	struct ipu_device *idev = f->idev;
	int ret;

	if (a->flags || a->pad)
		return -EINVAL;
	if (ipu_group_release(f, 0))
		return 0;
	ret = mutex_lock_interruptible(&idev->lock);
	if (ret)
		return ret;
	if (idev->owner == f)
		ipu_detach_locked(f, 0);
	else
		ret = -EPERM;
	mutex_unlock(&idev->lock);
	return ret;
}

static int ipu_ioctl_load(struct ipu_file *f, void *data)
{
	struct ipu_load_args *a = data;
	struct ipu_device *idev = f->idev;
	struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_LOAD_EXE };
	struct ipu_cmd_ctx res;
	struct ipu_dma_buf img;
	unsigned long flags;
	bool busy;
	int ret;

	if ((a->flags & ~IPU_LOAD_F_BO) || a->pad)
		return -EINVAL;
	if (!a->size || a->size > idev->max_image)
		return -EINVAL;
	if ((a->flags & IPU_LOAD_F_BO) && a->image > U32_MAX)
		return -EINVAL;
	spin_lock_irqsave(&idev->sq_lock, flags);
	busy = idev->stream_inflight > 0;
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	if (busy || ipu_cmds_pending(idev))
		return -EBUSY;
	ipu_streams_destroy(idev, true);
	idev->loaded = false;
	idev->num_programs = 0;
	if (a->flags & IPU_LOAD_F_BO)
		ret = ipu_dma_copy_bo(idev, &img, f->dfile, a->image, a->size);
	else
		ret = ipu_dma_copy_user(idev, &img, a->image, a->size);
	if (ret)
		goto out;
	cmd.addr = cpu_to_le64(img.addr);
	cmd.len = cpu_to_le32(img.len);
	cmd.sg_count = cpu_to_le32(img.sg_count);
	cmd.flags = img.sg_count ? 0 : IPU_F_DIRECT;
	ret = ipu_cmd_exec(idev, &cmd, f, IPU_CMD_TIMEOUT_MS, &res);
	if (ret == -ETIMEDOUT)
		ipu_hw_reset(idev, IPU_RESET_REASON_WATCHDOG);
	if (ret)
		goto out;
	a->dev_status = res.status;
	if (res.status) {
		if (res.status == IPU_ST_EXE_INVALID)
			a->verifier_error = (s32)res.result;
		/* dev_status and verifier_error say why (copied back) */
		ret = ipu_status_errno(res.status);
		if (ret == -EFBIG)
			ret = -EINVAL;
		goto out;
	}
	a->num_programs = res.result;
	a->num_streams = upper_32_bits(res.detail);
	a->tiles_used = lower_32_bits(res.detail);
	a->verifier_error = 0;
	ret = ipu_streams_create(idev, &img);
	if (ret) {
		dev_err(&idev->pdev->dev, "cannot set up the executable's streams: %d\n", ret);
		goto out;
	}
	idev->num_programs = a->num_programs;
	idev->loaded = true;
out:
	ipu_dma_release(idev, &img);
	return ret;
}

static int ipu_ioctl_tensor(struct ipu_file *f, void *data)
{
	struct ipu_tensor_args *a = data;
	struct ipu_device *idev = f->idev;
	struct ipu_hw_cmd cmd = { };
	struct ipu_cmd_ctx res;
	struct ipu_dma_buf b;
	bool rd = a->flags & IPU_TENSOR_F_READ;
	int ret;

	if ((a->flags & ~IPU_TENSOR_F_READ) || a->pad || !a->size)
		return -EINVAL;
	if (rd && !(idev->caps & IPU_INFO_CAP_READ_TENSOR))
		return -EOPNOTSUPP;
	if (!idev->loaded)
		return -ENOEXEC;
	/* it would queue behind runs that may wait for stream buffers */
	if (ipu_cmds_pending(idev))
		return -EBUSY;
	if (rd)
		ret = ipu_dma_alloc_kernel(idev, &b, a->size, DMA_FROM_DEVICE);
	else
		ret = ipu_dma_copy_user(idev, &b, a->data, a->size);
	if (ret)
		goto out;
	cmd.opcode = rd ? IPU_CMD_READ_TENSOR : IPU_CMD_WRITE_TENSOR;
	cmd.arg0 = cpu_to_le32(a->tile);
	cmd.arg1 = cpu_to_le32(a->offset);
	cmd.addr = cpu_to_le64(b.addr);
	cmd.len = cpu_to_le32(a->size);
	cmd.sg_count = cpu_to_le32(b.sg_count);
	cmd.flags = b.sg_count ? 0 : IPU_F_DIRECT;
	ret = ipu_cmd_exec(idev, &cmd, f, IPU_CMD_TIMEOUT_MS, &res);
	if (ret == -ETIMEDOUT)
		ipu_hw_reset(idev, IPU_RESET_REASON_WATCHDOG);
	if (ret)
		goto out;
	a->dev_status = res.status;
	ret = ipu_status_errno(res.status);
	if (!ret && rd) {
		dma_sync_sgtable_for_cpu(&idev->pdev->dev, &b.sgt, b.dir);
		ret = ipu_dma_copy_to_user(&b, a->data);
	}
	if (ret == -EINVAL && res.status == IPU_ST_RANGE)
		ret = -ERANGE;
out:
	ipu_dma_release(idev, &b);
	return ret;
}

static int ipu_ioctl_run(struct ipu_file *f, void *data)
{
	struct ipu_run_args *a = data;
	struct ipu_device *idev = f->idev;

	if (a->flags)
		return -EINVAL;
	/*
	 * Without the device lock: a RUN may sleep for room on the command
	 * ring, and the watchdog needs the lock to reset a device that does
	 * not make room.  A reset racing with this leaves the device without
	 * an executable: the RUN is refused while it resets, or completes as
	 * NOT_LOADED after.
	 */
	if (!READ_ONCE(idev->loaded))
		return -ENOEXEC;
	if (a->program >= READ_ONCE(idev->num_programs))
		return -EINVAL;
	return ipu_cmd_run(idev, f, a->program, &a->seq);
}

static int ipu_ioctl_wait(struct ipu_file *f, void *data)
{
	struct ipu_wait_args *a = data;

	if (a->flags)
		return -EINVAL;
	return ipu_run_wait(f->idev, a);
}

static int ipu_reset_locked(struct ipu_file *f, struct ipu_reset_args *a)
{
	struct ipu_device *idev = f->idev;
	struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_RESET_ENGINE };
	struct ipu_cmd_ctx res;
	int ret;

	/* the owner, or (nobody attached / admin) for recovery tools */
	if (idev->owner && idev->owner != f && !capable(CAP_SYS_ADMIN))
		return -EBUSY;
	if (idev->failed && a->mode != IPU_RESET_DEVICE)
		return -EIO;
	switch (a->mode) {
	case IPU_RESET_ABORT:
		return ipu_do_abort(idev, f);
	case IPU_RESET_ENGINE:
		ret = ipu_quiesce(idev, f);
		if (ret || !idev->loaded)
			return ret;	/* a device reset has unloaded it already */
		ipu_streams_destroy(idev, true);
		idev->loaded = false;
		idev->num_programs = 0;
		ret = ipu_cmd_exec(idev, &cmd, f, 5000, &res);
		if (ret == -ETIMEDOUT)
			return ipu_hw_reset(idev, IPU_RESET_REASON_WATCHDOG);
		return ret;
	default:
		return ipu_hw_reset(idev, IPU_RESET_REASON_USER);
	}
}

/* unlocked: a device reset of a group member resets every member */
static int ipu_ioctl_reset(struct ipu_file *f, void *data)
{
	struct ipu_reset_args *a = data;
	struct ipu_device *idev = f->idev;
	int ret;

	if (a->flags || a->mode > IPU_RESET_DEVICE)
		return -EINVAL;
	if (a->mode == IPU_RESET_DEVICE && READ_ONCE(idev->owner) == f) {
		ret = ipu_group_reset(f, IPU_RESET_REASON_USER);
		if (ret != -ENOENT)
			return ret;
	}
	ret = mutex_lock_interruptible(&idev->lock);
	if (ret)
		return ret;
	ret = ipu_reset_locked(f, a);
	mutex_unlock(&idev->lock);
	return ret;
}

static int ipu_ioctl_counters(struct ipu_file *f, void *data)
{
	struct ipu_counters_args *a = data;
	struct ipu_device *idev = f->idev;

	if (a->flags || a->pad)
		return -EINVAL;
	a->programs = ipu_rd64(idev, IPU_REG_CNT_PROGRAMS);
	a->cycles = ipu_rd64(idev, IPU_REG_CNT_CYCLES);
	a->compute_cycles = ipu_rd64(idev, IPU_REG_CNT_COMPUTE_CYC);
	a->exchange_bytes = ipu_rd64(idev, IPU_REG_CNT_EXCH_BYTES);
	a->stream_in_bytes = ipu_rd64(idev, IPU_REG_CNT_STREAM_IN);
	a->stream_out_bytes = ipu_rd64(idev, IPU_REG_CNT_STREAM_OUT);
	a->stalls = ipu_rd64(idev, IPU_REG_CNT_STALLS);
	a->stall_ns = ipu_rd64(idev, IPU_REG_CNT_STALL_NS);
	a->errors = ipu_rd64(idev, IPU_REG_CNT_ERRORS);
	a->commands = ipu_rd64(idev, IPU_REG_CNT_COMMANDS);
	a->descriptors = ipu_rd64(idev, IPU_REG_CNT_DESCS);
	a->resets = ipu_rd64(idev, IPU_REG_CNT_RESETS);
	a->stream_cmds = atomic64_read(&idev->st_stream_cmds);
	a->stream_bytes = atomic64_read(&idev->st_stream_bytes);
	a->programs_run = atomic64_read(&idev->st_programs_run);
	a->drv_resets = atomic64_read(&idev->st_resets);
	a->drv_errors = atomic64_read(&idev->st_errors);
	a->pinned_pages = atomic64_read(&idev->st_pinned_pages);
	a->gem_objects = atomic64_read(&idev->st_gem_objects);
	a->gem_pages = atomic64_read(&idev->st_gem_pages);
	a->link_out_bytes = ipu_rd64(idev, IPU_REG_CNT_LINK_OUT);
	a->link_in_bytes = ipu_rd64(idev, IPU_REG_CNT_LINK_IN);
	a->link_cycles = ipu_rd64(idev, IPU_REG_CNT_LINK_CYC);
	return 0;
}

static int ipu_ioctl_events(struct ipu_file *f, void *data)
{
	struct ipu_events_args *a = data;
	struct ipu_device *idev = f->idev;
	struct ipu_event *buf;
	unsigned long flags;
	u64 id, first;
	u32 n = 0;
	int ret = 0;

	if (a->flags || a->pad || a->max > IPU_EVENT_RING)
		return -EINVAL;
	buf = kcalloc(max(a->max, 1u), sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	spin_lock_irqsave(&idev->ev_lock, flags);
	first = idev->ev_next > IPU_EVENT_RING ? idev->ev_next - IPU_EVENT_RING + 1 : 1;
	for (id = max(a->after + 1, first); id <= idev->ev_next && n < a->max; id++)
		buf[n++] = idev->events[id % IPU_EVENT_RING];
	a->last_id = idev->ev_next;
	spin_unlock_irqrestore(&idev->ev_lock, flags);
	if (n && copy_to_user(u64_to_user_ptr(a->events), buf, n * sizeof(*buf)))
		ret = -EFAULT;
	a->count = n;
	kfree(buf);
	return ret;
}

static int ipu_ioctl_stream_info(struct ipu_file *f, void *data)
{
	struct ipu_stream_info_args *a = data;
	struct ipu_device *idev = f->idev;

	if (a->flags)
		return -EINVAL;
	if (!idev->loaded)
		return -ENOEXEC;
	if (a->stream >= idev->nstreams)
		return -EINVAL;
	a->dir = idev->streams[a->stream].dir;
	a->buffer_bytes = idev->streams[a->stream].bytes;
	return 0;
}

/*
 * Run a handler for the caller's ipu_file: under the device lock if it
 * needs it, refused after remove (-ENODEV) and for a non-owner (-EPERM)
 * where it needs ATTACH.  drm_ioctl() has copied the argument in at our
 * struct's size (zero-extended) and copies it out afterwards.
 */
static int ipu_ioctl_do(struct drm_file *file, ipu_ioctl_fn fn, void *data,
			bool owner_only, bool locked)
{
	struct ipu_file *f = file->driver_priv;
	struct ipu_device *idev = f->idev;
	int ret;

	if (locked) {
		ret = mutex_lock_interruptible(&idev->lock);
		if (ret)
			return ret;
	}
	if (READ_ONCE(idev->gone))
		ret = -ENODEV;
	else if (owner_only && READ_ONCE(idev->owner) != f)
		ret = -EPERM;
	else
		ret = fn(f, data);
	if (locked)
		mutex_unlock(&idev->lock);
	return ret;
}

/* one drm_ioctl_t per call: the handler, needs ATTACH, runs locked */
#define IPU_DRM_IOCTL_FN(name, fn, owner_only, locked)				\
static int ipu_drm_##name(struct drm_device *drm, void *data,			\
			  struct drm_file *file)				\
{										\
	return ipu_ioctl_do(file, fn, data, owner_only, locked);		\
}

IPU_DRM_IOCTL_FN(info, ipu_ioctl_info, false, false)
IPU_DRM_IOCTL_FN(attach, ipu_ioctl_attach, false, true)
IPU_DRM_IOCTL_FN(detach, ipu_ioctl_detach, false, false)
IPU_DRM_IOCTL_FN(load, ipu_ioctl_load, true, true)
IPU_DRM_IOCTL_FN(tensor, ipu_ioctl_tensor, true, true)
IPU_DRM_IOCTL_FN(run, ipu_ioctl_run, true, false)
IPU_DRM_IOCTL_FN(wait, ipu_ioctl_wait, true, false)
IPU_DRM_IOCTL_FN(reset, ipu_ioctl_reset, false, false)
IPU_DRM_IOCTL_FN(counters, ipu_ioctl_counters, false, true)
IPU_DRM_IOCTL_FN(events, ipu_ioctl_events, false, false)
IPU_DRM_IOCTL_FN(stream_info, ipu_ioctl_stream_info, false, true)
IPU_DRM_IOCTL_FN(group_attach, ipu_ioctl_group_attach, false, false)
IPU_DRM_IOCTL_FN(link_stream, ipu_ioctl_link_stream, true, true)

/* dispatched by drm_ioctl(): no DRM_AUTH/MASTER/RENDER on an accel node */
const struct drm_ioctl_desc ipu_drm_ioctls[IPU_DRM_NUM_IOCTLS] = {
	DRM_IOCTL_DEF_DRV(IPU_INFO, ipu_drm_info, 0),
	DRM_IOCTL_DEF_DRV(IPU_ATTACH, ipu_drm_attach, 0),
	DRM_IOCTL_DEF_DRV(IPU_DETACH, ipu_drm_detach, 0),
	DRM_IOCTL_DEF_DRV(IPU_LOAD_EXECUTABLE, ipu_drm_load, 0),
	DRM_IOCTL_DEF_DRV(IPU_WRITE_TENSOR, ipu_drm_tensor, 0),
	DRM_IOCTL_DEF_DRV(IPU_RUN, ipu_drm_run, 0),
	DRM_IOCTL_DEF_DRV(IPU_WAIT, ipu_drm_wait, 0),
	DRM_IOCTL_DEF_DRV(IPU_RESET, ipu_drm_reset, 0),
	DRM_IOCTL_DEF_DRV(IPU_COUNTERS, ipu_drm_counters, 0),
	DRM_IOCTL_DEF_DRV(IPU_GET_EVENTS, ipu_drm_events, 0),
	DRM_IOCTL_DEF_DRV(IPU_STREAM_INFO, ipu_drm_stream_info, 0),
	DRM_IOCTL_DEF_DRV(IPU_BO_CREATE, ipu_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(IPU_BO_INFO, ipu_ioctl_bo_info, 0),
	DRM_IOCTL_DEF_DRV(IPU_GROUP_ATTACH, ipu_drm_group_attach, 0),
	DRM_IOCTL_DEF_DRV(IPU_LINK_STREAM, ipu_drm_link_stream, 0),
};
