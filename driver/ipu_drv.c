// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_drv.c - module entry, PCI probe/remove, BAR, MSI-X, device reset.
 */
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "ipu_drv.h"
#include "ipu_trace.h"

static unsigned int watchdog_ms = 10000;
module_param(watchdog_ms, uint, 0644);
MODULE_PARM_DESC(watchdog_ms,
		 "reset a device with commands outstanding that neither completed anything nor executed a program step for this long, unless it waits on a stream (0: off; per device in sysfs)");

static unsigned int run_limit_ms = 60000;
module_param(run_limit_ms, uint, 0644);
MODULE_PARM_DESC(run_limit_ms,
		 "reset a device whose current run has computed (not waited on a stream) for longer than this, even while it progresses (0: off; per device in sysfs)");

static bool msix = true;
module_param(msix, bool, 0444);
MODULE_PARM_DESC(msix, "use MSI-X (3 vectors); 0: one shared INTx/MSI interrupt");

/**
 * ipu_device_get() - take a reference on the device (open files, requests)
 * @idev: the device
 */
void ipu_device_get(struct ipu_device *idev)
{
	kref_get(&idev->ref);
}

static void ipu_device_free(struct kref *ref)
{
	struct ipu_device *idev = container_of(ref, struct ipu_device, ref);

	pci_dev_put(idev->pdev);
	kfree(idev);
}

/**
 * ipu_device_put() - drop a reference; the last one frees the device
 * @idev: the device
 */
void ipu_device_put(struct ipu_device *idev)
{
	kref_put(&idev->ref, ipu_device_free);
}

/**
 * ipu_state() - the device state userspace sees (INFO, sysfs)
 * @idev: the device
 *
 * Return: IPU_DEV_STATE_ERROR, _BUSY, _READY or _IDLE.
 */
u32 ipu_state(struct ipu_device *idev)
{
	if (idev->failed)
		return IPU_DEV_STATE_ERROR;
	if (ipu_cmds_pending(idev))
		return IPU_DEV_STATE_BUSY;
	return idev->loaded ? IPU_DEV_STATE_READY : IPU_DEV_STATE_IDLE;
}

/*
 * Request a device reset and wait until it is done: only then does the
 * device hold no host buffer any more (pci.md, "Reset").
 */
static int ipu_hw_reset_wait(struct ipu_device *idev)
{
	u32 sts;
	int ret;

	ipu_wr(idev, IPU_REG_CONTROL, IPU_CTRL_RESET);
	ret = readl_poll_timeout(idev->regs + IPU_REG_STATUS, sts,
				 !(sts & IPU_STS_RESETTING), 10, 5000000);
	if (ret)
		dev_err(&idev->pdev->dev, "device stays in reset (status %#x)\n", sts);
	return ret;
}

/* Program the rings of a device that was just reset and enable it. */
static int ipu_hw_enable(struct ipu_device *idev)
{
	u32 sts;

	lockdep_assert_held(&idev->lock);
	ipu_rings_program(idev);
	ipu_wr(idev, IPU_REG_INT_MASK, 0);
	ipu_wr(idev, IPU_REG_CONTROL, IPU_CTRL_ENABLE);
	sts = ipu_rd(idev, IPU_REG_STATUS);
	if (!(sts & IPU_STS_READY)) {
		dev_err(&idev->pdev->dev,
			"device refused the rings: error %u, ring %u (status %#x)\n",
			ipu_rd(idev, IPU_REG_ERR_CODE),
			ipu_rd(idev, IPU_REG_ERR_DETAIL), sts);
		return -EIO;
	}
	return 0;
}

/*
 * The three parts of every reset, whoever resets the function (our
 * CONTROL.RESET, or the PCI core's FLR or slot reset between them).
 * Begin: no RUN may enter the ring from now on.  A RUN is submitted
 * without idev->lock: one that entered the ring between the cancellations
 * and the rings being programmed again would wait forever for a device
 * that never saw it.
 */
static void ipu_reset_begin(struct ipu_device *idev)
{
	unsigned long flags;

	lockdep_assert_held(&idev->lock);
	/* counted before anyone is woken by the cancellations */
	atomic64_inc(&idev->st_resets);
	spin_lock_irqsave(&idev->cmd_lock, flags);
	idev->resetting = true;
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
}

/*
 * Fail everything in flight (the device posts nothing for it) and forget
 * the executable and stream rings.  Only once the device is quiet
 * (RESETTING read 0, or the function cannot reach memory) may the pages
 * be unpinned.
 */
static void ipu_reset_drop_work(struct ipu_device *idev)
{
	lockdep_assert_held(&idev->lock);
	ipu_cancel_all(idev);
	ipu_streams_destroy(idev, false);
	idev->loaded = false;
	idev->num_programs = 0;
	idev->inject_hang = false;
	WRITE_ONCE(idev->cpl_corrupt, false);
}

/* Program the rings again (unless @ret says the reset failed) and report. */
static int ipu_reset_finish(struct ipu_device *idev, u32 reason, int ret)
{
	unsigned long flags;

	lockdep_assert_held(&idev->lock);
	if (!ret)
		ret = ipu_hw_enable(idev);
	spin_lock_irqsave(&idev->cmd_lock, flags);
	idev->resetting = false;
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
	idev->failed = ret != 0;
	idev->last_progress = jiffies;
	idev->wd_run_seq = 0;
	idev->wd_run_ms = 0;
	idev->wd_cpl_seen = 0;
	idev->wd_scq_seen = 0;
	ipu_event(idev, IPU_EVENT_RESET,
		  reason == IPU_RESET_REASON_USER || reason == IPU_RESET_REASON_CLOSE ?
		  current->tgid : 0, reason, -ret, 0);
	trace_ipu_reset(idev->minor, reason, ret);
	dev_info(&idev->pdev->dev, "device reset (reason %u)%s\n", reason,
		 ret ? ": device failed to come back" : "");
	/*
	 * A member reset alone: its peers' runs lost their link (the device
	 * ended their waits) and would keep executables that no longer match
	 * it, so the whole group is reset.  Not at close (the group is being
	 * released) nor when the group resets every member itself.
	 */
	if (idev->group && !idev->group_resetting && !idev->gone &&
	    reason != IPU_RESET_REASON_CLOSE) {
		idev->peer_reset_reason = reason;
		idev->peer_reset_group = idev->group->id;
		schedule_work(&idev->peer_reset_work);
	}
	return ret;
}

/**
 * ipu_hw_reset() - reset the device and recover the driver's state
 * @idev: the device; the caller holds @idev->lock
 * @reason: IPU_RESET_REASON_*, reported in the RESET event
 *
 * Everything in flight is failed by the driver (the device posts nothing
 * for it); the executable and the stream rings are gone.  Even if the
 * device never leaves reset the requests are failed, so that their owners
 * do not wait forever; the device is then marked failed.
 *
 * Return: 0, or a negative errno if the device did not come back.
 */
int ipu_hw_reset(struct ipu_device *idev, u32 reason)
{
	int ret;

	ipu_reset_begin(idev);
	ret = ipu_hw_reset_wait(idev);
	ipu_reset_drop_work(idev);
	return ipu_reset_finish(idev, reason, ret);
}

/*
 * A function reset by the PCI core (/sys/bus/pci/devices/.../reset, an
 * FLR, VFIO): prepare quiesces the device with our own reset first, so
 * that it holds no host buffer when the pages are given back, and keeps
 * idev->lock until done, which the PCI core always calls after prepare:
 * nothing but a RUN (refused while resetting) reaches the device meanwhile.
 */
static void ipu_reset_prepare(struct pci_dev *pdev)
{
	struct ipu_device *idev = pci_get_drvdata(pdev);

	mutex_lock(&idev->lock);
	ipu_reset_begin(idev);
	if (ipu_hw_reset_wait(idev))
		dev_warn(&pdev->dev, "function reset of a device that does not answer\n");
	ipu_reset_drop_work(idev);
}

static void ipu_reset_done(struct pci_dev *pdev)
{
	struct ipu_device *idev = pci_get_drvdata(pdev);

	/* the FLR left the device resetting, like CONTROL.RESET: wait it out */
	ipu_reset_finish(idev, IPU_RESET_REASON_PCI, ipu_hw_reset_wait(idev));
	mutex_unlock(&idev->lock);
}

/*
 * AER.  A frozen link cannot be reached: nothing is reset through it.
 * The work in flight is failed at once (the link is down, no DMA gets
 * through), the slot reset brings the device back, resume restarts
 * nothing because nothing was kept.  A RUN is refused meanwhile
 * (resetting), other calls see a failed device.
 */
static pci_ers_result_t ipu_error_detected(struct pci_dev *pdev, pci_channel_state_t state)
{
	struct ipu_device *idev = pci_get_drvdata(pdev);

	dev_warn(&pdev->dev, "PCI error (channel state %d)\n", state);
	if (state == pci_channel_io_normal)
		return PCI_ERS_RESULT_CAN_RECOVER;
	mutex_lock(&idev->lock);
	ipu_reset_begin(idev);
	ipu_reset_drop_work(idev);
	idev->failed = true;
	mutex_unlock(&idev->lock);
	return state == pci_channel_io_perm_failure ? PCI_ERS_RESULT_DISCONNECT :
		PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t ipu_slot_reset(struct pci_dev *pdev)
{
	struct ipu_device *idev = pci_get_drvdata(pdev);
	int ret;

	pci_restore_state(pdev);
	pci_set_master(pdev);
	mutex_lock(&idev->lock);
	ret = ipu_reset_finish(idev, IPU_RESET_REASON_PCI, ipu_hw_reset_wait(idev));
	mutex_unlock(&idev->lock);
	return ret ? PCI_ERS_RESULT_DISCONNECT : PCI_ERS_RESULT_RECOVERED;
}

static void ipu_resume(struct pci_dev *pdev)
{
	dev_info(&pdev->dev, "recovered from a PCI error\n");
}

/**
 * ipu_aer_recover() - run the AER recovery a frozen link gets, in order
 * @idev: the device
 *
 * error_detected(frozen), slot_reset, resume, as the PCI core's
 * pcie_do_recovery() calls them: for the debugfs knob "aer", since the
 * emulated device offers no AER capability to inject an error through.
 *
 * Return: 0 when recovered, -EIO otherwise.
 */
int ipu_aer_recover(struct ipu_device *idev)
{
	struct pci_dev *pdev = idev->pdev;

	if (ipu_error_detected(pdev, pci_channel_io_frozen) != PCI_ERS_RESULT_NEED_RESET)
		return -EIO;
	if (ipu_slot_reset(pdev) != PCI_ERS_RESULT_RECOVERED)
		return -EIO;
	ipu_resume(pdev);
	return 0;
}

static const struct pci_error_handlers ipu_err_handlers = {
	.error_detected = ipu_error_detected,
	.slot_reset = ipu_slot_reset,
	.resume = ipu_resume,
	.reset_prepare = ipu_reset_prepare,
	.reset_done = ipu_reset_done,
};

static irqreturn_t ipu_irq_cpl(int irq, void *data)
{
	struct ipu_device *idev = data;

	ipu_cpl_drain(idev);
	return IRQ_HANDLED;
}

static irqreturn_t ipu_irq_scpl(int irq, void *data)
{
	struct ipu_device *idev = data;

	ipu_scq_drain(idev);
	return IRQ_HANDLED;
}

static irqreturn_t ipu_irq_error(int irq, void *data)
{
	struct ipu_device *idev = data;
	u32 code, detail, sts;
	u64 addr;

	code = ipu_rd(idev, IPU_REG_ERR_CODE);
	if (!code)
		return IRQ_HANDLED;
	detail = ipu_rd(idev, IPU_REG_ERR_DETAIL);
	addr = ipu_rd64(idev, IPU_REG_ERR_ADDR_LO);
	sts = ipu_rd(idev, IPU_REG_STATUS);
	ipu_wr(idev, IPU_REG_ERR_CODE, 0);
	atomic64_inc(&idev->st_errors);
	dev_dbg(&idev->pdev->dev, "device error %s (%u), detail %u, address %#llx\n",
		ipu_status_name(code), code, detail, addr);
	ipu_event(idev, IPU_EVENT_ERROR, 0, code, detail, addr);
	if (sts & IPU_STS_FATAL)
		schedule_work(&idev->fatal_work);
	return IRQ_HANDLED;
}

/* single vector (INTx or one MSI): look at the cause register */
static irqreturn_t ipu_irq_shared(int irq, void *data)
{
	struct ipu_device *idev = data;
	u32 cause = ipu_rd(idev, IPU_REG_INT_CAUSE);

	if (!cause || cause == ~0u)
		return IRQ_NONE;
	ipu_wr(idev, IPU_REG_INT_CAUSE, cause);
	if (cause & IPU_INT_ERROR)
		ipu_irq_error(irq, data);
	if (cause & IPU_INT_CPL)
		ipu_cpl_drain(idev);
	if (cause & IPU_INT_SCPL)
		ipu_scq_drain(idev);
	return IRQ_HANDLED;
}

static void ipu_fatal_work(struct work_struct *work)
{
	struct ipu_device *idev = container_of(work, struct ipu_device, fatal_work);

	mutex_lock(&idev->lock);
	if (!idev->gone && (ipu_rd(idev, IPU_REG_STATUS) & IPU_STS_FATAL)) {
		dev_warn(&idev->pdev->dev, "ring unusable (FATAL): resetting\n");
		ipu_hw_reset(idev, IPU_RESET_REASON_FATAL);
	} else if (!idev->gone && READ_ONCE(idev->cpl_corrupt)) {
		dev_warn(&idev->pdev->dev, "corrupt completion: resetting\n");
		ipu_hw_reset(idev, IPU_RESET_REASON_FATAL);
	}
	mutex_unlock(&idev->lock);
}

static int ipu_setup_irqs(struct ipu_device *idev)
{
	struct pci_dev *pdev = idev->pdev;
	static irq_handler_t handlers[IPU_NUM_VECTORS] = {
		ipu_irq_cpl, ipu_irq_scpl, ipu_irq_error,
	};
	int i, ret;

	ret = msix ? pci_alloc_irq_vectors(pdev, IPU_NUM_VECTORS, IPU_NUM_VECTORS,
					   PCI_IRQ_MSIX) : -ENOSPC;
	if (ret == IPU_NUM_VECTORS) {
		idev->nvec = ret;
		for (i = 0; i < IPU_NUM_VECTORS; i++) {
			ret = request_irq(pci_irq_vector(pdev, i), handlers[i], 0,
					  IPU_DRV_NAME, idev);
			if (ret)
				goto err_free;
		}
		return 0;
	}
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_INTX | PCI_IRQ_MSI);
	if (ret < 0) {
		dev_err(&pdev->dev, "no interrupt available: %d\n", ret);
		return ret;
	}
	idev->nvec = 1;
	if (msix)
		dev_info(&pdev->dev, "MSI-X unavailable: using one shared interrupt\n");
	ret = request_irq(pci_irq_vector(pdev, 0), ipu_irq_shared, IRQF_SHARED,
			  IPU_DRV_NAME, idev);
	if (ret) {
		pci_free_irq_vectors(pdev);
		return ret;
	}
	return 0;

err_free:
	while (--i >= 0)
		free_irq(pci_irq_vector(pdev, i), idev);
	pci_free_irq_vectors(pdev);
	return ret;
}

static void ipu_free_irqs(struct ipu_device *idev)
{
	int i;

	for (i = 0; i < idev->nvec; i++)
		free_irq(pci_irq_vector(idev->pdev, i), idev);
	pci_free_irq_vectors(idev->pdev);
}

/* Probe step 1: the driver's own state; nothing touches the device yet. */
static void ipu_init_sw(struct ipu_device *idev, struct pci_dev *pdev)
{
	/* open files and their buffers may outlive remove(): keep the pci_dev */
	idev->pdev = pci_dev_get(pdev);
	kref_init(&idev->ref);
	mutex_init(&idev->lock);
	spin_lock_init(&idev->cmd_lock);
	spin_lock_init(&idev->sq_lock);
	spin_lock_init(&idev->ev_lock);
	init_waitqueue_head(&idev->cmd_space);
	init_waitqueue_head(&idev->run_wq);
	init_waitqueue_head(&idev->reqs_wq);
	atomic_set(&idev->reqs_alive, 0);
	idr_init(&idev->cmd_idr);
	INIT_LIST_HEAD(&idev->cmd_pending);
	INIT_LIST_HEAD(&idev->stream_reqs);
	INIT_DELAYED_WORK(&idev->watchdog, ipu_watchdog_fn);
	INIT_WORK(&idev->fatal_work, ipu_fatal_work);
	INIT_WORK(&idev->peer_reset_work, ipu_group_reset_peers_fn);
	idev->watchdog_ms = watchdog_ms;
	idev->run_limit_ms = run_limit_ms;
	atomic64_set(&idev->st_stream_cmds, 0);
	pci_set_drvdata(pdev, idev);
}

/* Probe step 2: the PCI function (managed: undone by the PCI core). */
static int ipu_init_pci(struct ipu_device *idev)
{
	struct pci_dev *pdev = idev->pdev;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret) {
		dev_err(&pdev->dev, "cannot enable PCI device: %d\n", ret);
		return ret;
	}
	ret = pcim_iomap_regions(pdev, BIT(IPU_BAR_REGS), IPU_DRV_NAME);
	if (ret) {
		dev_err(&pdev->dev, "cannot map BAR0: %d\n", ret);
		return ret;
	}
	idev->regs = pcim_iomap_table(pdev)[IPU_BAR_REGS];
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret) {
		dev_err(&pdev->dev, "no 64-bit DMA: %d\n", ret);
		return ret;
	}
	pci_set_master(pdev);
	dev_dbg(&pdev->dev, "BAR0 mapped, 64-bit DMA, bus master\n");
	return 0;
}

/* Probe step 3: is it our device, in an interface version we speak? */
static int ipu_init_identity(struct ipu_device *idev)
{
	struct device *dev = &idev->pdev->dev;
	u32 ifv;

	if (ipu_rd(idev, IPU_REG_ID) != IPU_ID_MAGIC) {
		dev_err(dev, "not an IPU (ID %#x)\n", ipu_rd(idev, IPU_REG_ID));
		return -ENODEV;
	}
	ifv = ipu_rd(idev, IPU_REG_IF_VERSION);
	if (ifv >> 16 != IPU_IF_VERSION_MAJOR) {
		dev_err(dev, "interface version %u.%u not supported (need %u.x)\n",
			ifv >> 16, ifv & 0xffff, IPU_IF_VERSION_MAJOR);
		return -ENODEV;
	}
	idev->if_version = ifv;
	idev->hw_version = ipu_rd(idev, IPU_REG_HW_VERSION);
	idev->caps = ipu_rd(idev, IPU_REG_CAPS);
	idev->link_index = idev->caps & IPU_CAP_LINK ? ipu_rd(idev, IPU_REG_LINK_INDEX) : U32_MAX;
	idev->serial = ipu_rd64(idev, IPU_REG_SERIAL_LO);
	idev->tiles = ipu_rd(idev, IPU_REG_TILES);
	idev->tile_mem = ipu_rd(idev, IPU_REG_TILE_MEM);
	idev->max_streams = min(ipu_rd(idev, IPU_REG_MAX_STREAMS), IPU_HW_MAX_STREAMS);
	idev->max_image = min(ipu_rd(idev, IPU_REG_MAX_IMAGE), IPU_MAX_IMAGE_BYTES);
	idev->max_sg = min(ipu_rd(idev, IPU_REG_MAX_SG), IPU_MAX_SG_ENTRIES);
	dev_dbg(dev, "interface %u.%u, caps %#x, max %u streams, image %u bytes, %u SG entries\n",
		ifv >> 16, ifv & 0xffff, idev->caps, idev->max_streams, idev->max_image,
		idev->max_sg);
	return 0;
}

/* Probe step 5: reset the function and program the rings into it. */
static int ipu_init_hw(struct ipu_device *idev)
{
	int ret;

	mutex_lock(&idev->lock);
	ret = ipu_hw_reset_wait(idev);
	if (!ret)
		ret = ipu_hw_enable(idev);
	mutex_unlock(&idev->lock);
	if (ret)
		dev_err(&idev->pdev->dev, "device did not come out of reset: %d\n", ret);
	return ret;
}

static int ipu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct ipu_device *idev;
	int ret;

	ipu_hw_check_layout();
	idev = kzalloc(sizeof(*idev), GFP_KERNEL);
	if (!idev)
		return -ENOMEM;
	ipu_init_sw(idev, pdev);
	ret = ipu_drm_alloc(idev);	/* names the minor: accelN */
	if (ret) {
		dev_err(&pdev->dev, "cannot allocate the DRM device: %d\n", ret);
		goto err_put;
	}
	ret = ipu_init_pci(idev);
	if (ret)
		goto err_put;
	ret = ipu_init_identity(idev);
	if (ret)
		goto err_put;
	ret = ipu_rings_alloc(idev);	/* step 4 */
	if (ret)
		goto err_put;
	ret = ipu_setup_irqs(idev);
	if (ret)
		goto err_rings;
	ret = ipu_init_hw(idev);
	if (ret)
		goto err_irq;
	ret = ipu_drm_register(idev);
	if (ret) {
		dev_err(&pdev->dev, "cannot register /dev/accel/accel%d: %d\n", idev->minor, ret);
		goto err_stop;
	}
	idev->last_progress = jiffies;
	idev->wd_tick = jiffies;
	ipu_debugfs_add(idev);
	schedule_delayed_work(&idev->watchdog, HZ);
	dev_info(&pdev->dev, "accel%d: %u tiles x %u KiB, version %u, serial %#llx, %d vector(s)\n",
		 idev->minor, idev->tiles, idev->tile_mem / 1024, idev->hw_version,
		 idev->serial, idev->nvec);
	return 0;

err_stop:
	ipu_hw_reset_wait(idev);
err_irq:
	ipu_free_irqs(idev);
err_rings:
	ipu_rings_free(idev);
err_put:
	pci_set_drvdata(pdev, NULL);
	ipu_drm_put(idev);
	ipu_device_put(idev);
	return ret;
}

static void ipu_remove(struct pci_dev *pdev)
{
	struct ipu_device *idev = pci_get_drvdata(pdev);

	ipu_debugfs_remove(idev);
	ipu_drm_unplug(idev);
	mutex_lock(&idev->lock);
	spin_lock_irq(&idev->cmd_lock);
	WRITE_ONCE(idev->gone, true);
	spin_unlock_irq(&idev->cmd_lock);
	ipu_hw_reset_wait(idev);
	ipu_cancel_all(idev);
	ipu_streams_destroy(idev, false);
	mutex_unlock(&idev->lock);
	cancel_delayed_work_sync(&idev->watchdog);
	ipu_free_irqs(idev);
	/* no interrupt can schedule it any more */
	cancel_work_sync(&idev->fatal_work);
	/* nor a reset (gone): the group's peers are the group's to reset now */
	cancel_work_sync(&idev->peer_reset_work);
	/*
	 * The cancelled stream buffers are released in their submitters'
	 * task work, which still uses the SG pool: wait for them.
	 */
	if (!wait_event_timeout(idev->reqs_wq, !atomic_read(&idev->reqs_alive), 10 * HZ)) {
		struct dma_pool *pool = idev->sg_pool;

		dev_warn(&pdev->dev, "%d stream buffers not released: keeping their DMA pool\n",
			 atomic_read(&idev->reqs_alive));
		idev->sg_pool = NULL;
		ipu_rings_free(idev);
		idev->sg_pool = pool;	/* leaked on purpose: still in use */
	} else {
		ipu_rings_free(idev);
	}
	pci_set_drvdata(pdev, NULL);
	ipu_drm_put(idev);
	ipu_device_put(idev);
}

static const struct pci_device_id ipu_pci_ids[] = {
	{ PCI_DEVICE(IPU_PCI_VENDOR_ID, IPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, ipu_pci_ids);

static struct pci_driver ipu_pci_driver = {
	.name = IPU_DRV_NAME,
	.id_table = ipu_pci_ids,
	.probe = ipu_probe,
	.remove = ipu_remove,
	.err_handler = &ipu_err_handlers,
	/* the attributes live on the PCI device: /sys/class/accel/accelN/device/ */
	.dev_groups = ipu_dev_groups,
};

static int __init ipu_init(void)
{
	int ret;

	ret = ipu_netlink_init();
	if (ret)
		return ret;
	ipu_debugfs_init();
	ret = pci_register_driver(&ipu_pci_driver);
	if (ret) {
		ipu_debugfs_exit();
		ipu_netlink_exit();
	}
	return ret;
}

static void __exit ipu_exit(void)
{
	pci_unregister_driver(&ipu_pci_driver);
	ipu_debugfs_exit();
	ipu_netlink_exit();
}

module_init(ipu_init);
module_exit(ipu_exit);

MODULE_DESCRIPTION("Driver for the emulated IPU PCIe accelerator");
MODULE_LICENSE("GPL");
