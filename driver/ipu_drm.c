// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_drm.c - the device as a DRM compute accelerator: /dev/accel/accelN,
 * its drm_driver, the per-drm_file state and the accel file's operations
 * (DRM's, plus io_uring commands and the flush at exit).
 *
 * Cleanup of a process that dies with work in flight: its io_uring
 * requests hold references to the accel file, so ->release() would wait
 * for them while they wait for the device.  ->flush() runs at every close
 * of the fd, including the implicit ones at exit: when the owner's task is
 * exiting we abort everything there, the device completes the buffers
 * (-ECANCELED), io_uring lets go of the file and drm_release() ends in
 * ->postclose(), which resets and detaches.
 */
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "ipu_drv.h"

static int ipu_drm_open(struct drm_device *drm, struct drm_file *file)
{
	struct ipu_device *idev = drm->dev_private;
	struct ipu_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	ipu_device_get(idev);
	f->idev = idev;
	f->dfile = file;
	f->pid = current->tgid;
	file->driver_priv = f;
	return 0;
}

/* after DRM dropped the file's GEM handles: its contexts go now */
static void ipu_drm_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct ipu_file *f = file->driver_priv;
	struct ipu_device *idev = f->idev;

	/* a group member's close releases the whole group */
	ipu_group_release(f, IPU_RESET_REASON_CLOSE);
	mutex_lock(&idev->lock);
	ipu_file_release_locked(f);
	mutex_unlock(&idev->lock);
	file->driver_priv = NULL;
	kfree(f);
	ipu_device_put(idev);
}

static int ipu_drm_flush(struct file *filp, fl_owner_t id)
{
	struct ipu_file *f = ipu_file_of(filp);
	struct ipu_device *idev;

	if (!f || !(current->flags & PF_EXITING) || !READ_ONCE(f->attached))
		return 0;
	idev = f->idev;
	mutex_lock(&idev->lock);
	if (idev->owner == f && !idev->gone && !idev->failed &&
	    (idev->stream_inflight || ipu_cmds_pending(idev)))
		ipu_do_abort(idev, f);
	mutex_unlock(&idev->lock);
	return 0;
}

static const struct file_operations ipu_accel_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.flush = ipu_drm_flush,
	.uring_cmd = ipu_uring_cmd,
};

static const struct drm_driver ipu_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM,
	.open = ipu_drm_open,
	.postclose = ipu_drm_postclose,
	.gem_create_object = ipu_gem_create_object,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	.ioctls = ipu_drm_ioctls,
	.num_ioctls = IPU_DRM_NUM_IOCTLS,
	.fops = &ipu_accel_fops,
	.name = IPU_DRM_DRIVER_NAME,
	.desc = "Emulated IPU tile accelerator",
	.major = 1,
	.minor = 0,
	.patchlevel = 0,
};

/**
 * ipu_file_of() - the driver's per-open state of an accel file
 * @filp: an open /dev/accel/accelN of this driver
 *
 * Return: the struct ipu_file, NULL before open finished.
 */
struct ipu_file *ipu_file_of(struct file *filp)
{
	struct drm_file *file = filp->private_data;

	return file ? file->driver_priv : NULL;
}

/**
 * ipu_file_of_accel() - the driver's state of any open file, if it is ours
 * @filp: an open file of any kind
 *
 * Return: the struct ipu_file of an open /dev/accel/accelN of this driver,
 * NULL for any other file.
 */
struct ipu_file *ipu_file_of_accel(struct file *filp)
{
	return filp->f_op == &ipu_accel_fops ? ipu_file_of(filp) : NULL;
}

/* The drm_device keeps the ipu_device (GEM objects outlive remove()). */
static void ipu_drm_release_idev(struct drm_device *drm, void *data)
{
	ipu_device_put(data);
}

/**
 * ipu_drm_alloc() - the drm_device of a device being probed; names its minor
 * @idev: the device
 *
 * Return: 0 or a negative errno.
 */
int ipu_drm_alloc(struct ipu_device *idev)
{
	struct drm_device *drm;
	int ret;

	BUILD_BUG_ON(IPU_DRM_IOCTL_BASE != DRM_IOCTL_BASE);
	BUILD_BUG_ON(IPU_DRM_COMMAND_BASE != DRM_COMMAND_BASE);
	drm = drm_dev_alloc(&ipu_drm_driver, &idev->pdev->dev);
	if (IS_ERR(drm))
		return PTR_ERR(drm);
	drm->dev_private = idev;
	ipu_device_get(idev);
	ret = drmm_add_action_or_reset(drm, ipu_drm_release_idev, idev);
	if (ret) {
		drm_dev_put(drm);
		return ret;
	}
	idev->drm = drm;
	idev->minor = drm->accel->index;
	return 0;
}

/**
 * ipu_drm_register() - make /dev/accel/accelN appear
 * @idev: the probed device
 *
 * Return: 0 or a negative errno.
 */
int ipu_drm_register(struct ipu_device *idev)
{
	return drm_dev_register(idev->drm, 0);
}

/**
 * ipu_drm_unplug() - remove /dev/accel/accelN; open files stay valid
 * @idev: the device
 */
void ipu_drm_unplug(struct ipu_device *idev)
{
	drm_dev_unplug(idev->drm);
}

/**
 * ipu_drm_put() - drop the driver's reference on the drm_device
 * @idev: the device
 */
void ipu_drm_put(struct ipu_device *idev)
{
	struct drm_device *drm = idev->drm;

	idev->drm = NULL;
	if (drm)
		drm_dev_put(drm);
}
