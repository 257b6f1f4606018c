// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_chardev.c - class "ipu", /dev/ipuN, open/flush/release.
 *
 * Cleanup of a process that dies with work in flight: its io_uring
 * requests hold references to our file, so ->release() would wait for
 * them while they wait for the device.  ->flush() runs at every close of
 * the fd, including the implicit ones at exit: when the owner's task is
 * exiting we abort everything there, the device completes the buffers
 * (-ECANCELED), io_uring lets go of the file and ->release() resets and
 * detaches.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "ipu_drv.h"

struct class *ipu_class;
static dev_t ipu_devt;
static DEFINE_MUTEX(ipu_minor_lock);
static struct ipu_device *ipu_minors[IPU_MAX_DEVICES];

static int ipu_open(struct inode *inode, struct file *filp)
{
	unsigned int minor = iminor(inode);
	struct ipu_device *idev;
	struct ipu_file *f;

	if (minor >= IPU_MAX_DEVICES)
		return -ENODEV;
	mutex_lock(&ipu_minor_lock);
	idev = ipu_minors[minor];
	if (idev)
		ipu_device_get(idev);
	mutex_unlock(&ipu_minor_lock);
	if (!idev)
		return -ENODEV;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		ipu_device_put(idev);
		return -ENOMEM;
	}
	f->idev = idev;
	f->filp = filp;
	f->pid = current->tgid;
	filp->private_data = f;
	return nonseekable_open(inode, filp);
}

static int ipu_flush(struct file *filp, fl_owner_t id)
{
	struct ipu_file *f = filp->private_data;
	struct ipu_device *idev = f->idev;

	if (!(current->flags & PF_EXITING) || !READ_ONCE(f->attached))
		return 0;
	mutex_lock(&idev->lock);
	if (idev->owner == f && !idev->gone && !idev->failed &&
	    (idev->stream_inflight || ipu_cmds_pending(idev)))
		ipu_do_abort(idev, f);
	mutex_unlock(&idev->lock);
	return 0;
}

static int ipu_release(struct inode *inode, struct file *filp)
{
	struct ipu_file *f = filp->private_data;
	struct ipu_device *idev = f->idev;

	mutex_lock(&idev->lock);
	ipu_file_release_locked(f);
	mutex_unlock(&idev->lock);
	kfree(f);
	ipu_device_put(idev);
	return 0;
}

static const struct file_operations ipu_fops = {
	.owner = THIS_MODULE,
	.open = ipu_open,
	.flush = ipu_flush,
	.release = ipu_release,
	.unlocked_ioctl = ipu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.uring_cmd = ipu_uring_cmd,
	.llseek = noop_llseek,
};

/**
 * ipu_chardev_add() - create /dev/ipuN for a probed device
 * @idev: the device, its minor allocated
 *
 * Return: 0, or a negative errno (nothing is left registered then).
 */
int ipu_chardev_add(struct ipu_device *idev)
{
	dev_t devt = MKDEV(MAJOR(ipu_devt), idev->minor);
	int ret;

	cdev_init(&idev->cdev, &ipu_fops);
	idev->cdev.owner = THIS_MODULE;
	ret = cdev_add(&idev->cdev, devt, 1);
	if (ret)
		return ret;
	mutex_lock(&ipu_minor_lock);
	ipu_minors[idev->minor] = idev;
	mutex_unlock(&ipu_minor_lock);
	idev->dev = device_create_with_groups(ipu_class, &idev->pdev->dev, devt, idev,
					      ipu_dev_groups, "ipu%d", idev->minor);
	if (IS_ERR(idev->dev)) {
		ret = PTR_ERR(idev->dev);
		idev->dev = NULL;
		mutex_lock(&ipu_minor_lock);
		ipu_minors[idev->minor] = NULL;
		mutex_unlock(&ipu_minor_lock);
		cdev_del(&idev->cdev);
		return ret;
	}
	return 0;
}

/**
 * ipu_chardev_remove() - remove /dev/ipuN; open files stay valid
 * @idev: the device
 */
void ipu_chardev_remove(struct ipu_device *idev)
{
	mutex_lock(&ipu_minor_lock);
	ipu_minors[idev->minor] = NULL;
	mutex_unlock(&ipu_minor_lock);
	device_destroy(ipu_class, MKDEV(MAJOR(ipu_devt), idev->minor));
	cdev_del(&idev->cdev);
}

/**
 * ipu_chardev_init() - register the char device region and class "ipu"
 *
 * Return: 0, or a negative errno.
 */
int ipu_chardev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&ipu_devt, 0, IPU_MAX_DEVICES, IPU_DRV_NAME);
	if (ret)
		return ret;
	ipu_class = class_create(IPU_DRV_NAME);
	if (IS_ERR(ipu_class)) {
		unregister_chrdev_region(ipu_devt, IPU_MAX_DEVICES);
		return PTR_ERR(ipu_class);
	}
	return 0;
}

/**
 * ipu_chardev_exit() - undo ipu_chardev_init()
 */
void ipu_chardev_exit(void)
{
	class_destroy(ipu_class);
	unregister_chrdev_region(ipu_devt, IPU_MAX_DEVICES);
}
