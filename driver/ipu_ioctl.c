// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_ioctl.c - the control ioctls.
 *
 * The dispatcher matches commands by number (_IOC_NR) and type, like
 * drm_ioctl(): the size in the command is the caller's struct size.  It
 * copies min(user, kernel) bytes in, zero-fills the rest, refuses non-zero
 * bytes beyond the kernel's struct (-E2BIG), and copies min() bytes out.
 */
#include <linux/dma-mapping.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ipu_drv.h"

#define IPU_CMD_TIMEOUT_MS	60000

typedef int (*ipu_ioctl_fn)(struct ipu_file *f, void *data);

struct ipu_ioctl_desc {
	unsigned int cmd;
	ipu_ioctl_fn fn;
	bool owner_only;	/* needs ATTACH */
	bool locked;		/* runs under idev->lock */
};

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
			 IPU_DRV_CAP_NETLINK;
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
	idev->owner = f;
	idev->owner_pid = current->tgid;
	f->pid = current->tgid;
	WRITE_ONCE(f->attached, true);
	ipu_event(idev, IPU_EVENT_ATTACH, current->tgid, 0, 0, 0);
	return 0;
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

/* Release the device from its owner f: nothing of f's may stay queued. */
static void ipu_detach_locked(struct ipu_file *f, u32 reason)
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

static int ipu_ioctl_detach(struct ipu_file *f, void *data)
{
	struct ipu_attach_args *a = data;

	if (a->flags || a->pad)
		return -EINVAL;
	ipu_detach_locked(f, 0);
	return 0;
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

	if (a->flags || a->pad)
		return -EINVAL;
	if (!a->size || a->size > idev->max_image)
		return -EINVAL;
	spin_lock_irqsave(&idev->sq_lock, flags);
	busy = idev->stream_inflight > 0;
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	if (busy || ipu_cmds_pending(idev))
		return -EBUSY;
	ipu_streams_destroy(idev, true);
	idev->loaded = false;
	idev->num_programs = 0;
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

static int ipu_ioctl_reset(struct ipu_file *f, void *data)
{
	struct ipu_reset_args *a = data;
	struct ipu_device *idev = f->idev;
	struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_RESET_ENGINE };
	struct ipu_cmd_ctx res;
	int ret;

	if (a->flags || a->mode > IPU_RESET_DEVICE)
		return -EINVAL;
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

static const struct ipu_ioctl_desc ipu_ioctls[] = {
	[_IOC_NR(IPU_IOCTL_INFO)] = { IPU_IOCTL_INFO, ipu_ioctl_info, false, false },
	[_IOC_NR(IPU_IOCTL_ATTACH)] = { IPU_IOCTL_ATTACH, ipu_ioctl_attach, false, true },
	[_IOC_NR(IPU_IOCTL_DETACH)] = { IPU_IOCTL_DETACH, ipu_ioctl_detach, true, true },
	[_IOC_NR(IPU_IOCTL_LOAD_EXECUTABLE)] = { IPU_IOCTL_LOAD_EXECUTABLE, ipu_ioctl_load,
						 true, true },
	[_IOC_NR(IPU_IOCTL_WRITE_TENSOR)] = { IPU_IOCTL_WRITE_TENSOR, ipu_ioctl_tensor,
					      true, true },
	[_IOC_NR(IPU_IOCTL_RUN)] = { IPU_IOCTL_RUN, ipu_ioctl_run, true, false },
	[_IOC_NR(IPU_IOCTL_WAIT)] = { IPU_IOCTL_WAIT, ipu_ioctl_wait, true, false },
	[_IOC_NR(IPU_IOCTL_RESET)] = { IPU_IOCTL_RESET, ipu_ioctl_reset, false, true },
	[_IOC_NR(IPU_IOCTL_COUNTERS)] = { IPU_IOCTL_COUNTERS, ipu_ioctl_counters,
					  false, true },
	[_IOC_NR(IPU_IOCTL_GET_EVENTS)] = { IPU_IOCTL_GET_EVENTS, ipu_ioctl_events,
					    false, false },
	[_IOC_NR(IPU_IOCTL_STREAM_INFO)] = { IPU_IOCTL_STREAM_INFO, ipu_ioctl_stream_info,
					     false, true },
};

#define IPU_IOCTL_MAX_SIZE	256

/**
 * ipu_ioctl() - the ioctl entry: table lookup, size-tolerant copy in and out
 * @filp: an open /dev/ipuN
 * @cmd: IPU_IOCTL_*
 * @arg: user pointer to the argument struct
 *
 * A shorter struct than ours is zero-extended; a longer one must have a
 * zero tail.
 *
 * Return: 0 or a negative errno.
 */
long ipu_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct ipu_file *f = filp->private_data;
	struct ipu_device *idev = f->idev;
	const struct ipu_ioctl_desc *d;
	void __user *uarg = (void __user *)arg;
	u8 kdata[IPU_IOCTL_MAX_SIZE];
	unsigned int nr = _IOC_NR(cmd), usize = _IOC_SIZE(cmd), ksize;
	int ret;

	if (_IOC_TYPE(cmd) != IPU_IOCTL_BASE || nr >= ARRAY_SIZE(ipu_ioctls))
		return -ENOTTY;
	d = &ipu_ioctls[nr];
	if (!d->fn || _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;
	ksize = _IOC_SIZE(d->cmd);
	BUILD_BUG_ON(sizeof(struct ipu_counters_args) > IPU_IOCTL_MAX_SIZE);
	/* the oldest struct of every call is at least 8 bytes */
	if (usize < 8)
		return -EINVAL;
	memset(kdata, 0, ksize);
	if (copy_from_user(kdata, uarg, min(usize, ksize)))
		return -EFAULT;
	if (usize > ksize) {
		ret = check_zeroed_user(uarg + ksize, usize - ksize);
		if (ret < 0)
			return ret;
		if (!ret)
			return -E2BIG;
	}

	if (d->locked) {
		ret = mutex_lock_interruptible(&idev->lock);
		if (ret)
			return ret;
	}
	if (idev->gone)
		ret = -ENODEV;
	else if (d->owner_only && idev->owner != f)
		ret = -EPERM;
	else
		ret = d->fn(f, kdata);
	if (d->locked)
		mutex_unlock(&idev->lock);

	/* outputs also when the call failed (verifier error of LOAD, ...) */
	if ((ret == 0 || nr == _IOC_NR(IPU_IOCTL_LOAD_EXECUTABLE)) &&
	    copy_to_user(uarg, kdata, min(usize, ksize)))
		return -EFAULT;
	return ret;
}
