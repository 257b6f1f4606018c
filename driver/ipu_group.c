// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_group.c - devices joined by IPU-Links, acquired as one group.
 *
 * DRM_IOCTL_IPU_GROUP_ATTACH takes the accel files of N devices on one
 * ipu-link (IPU k of the group the k-th) and attaches each to its file,
 * all or none.  From then on the group is released as one (DETACH or the
 * close of any member's file detaches every member) and a device reset of
 * any member resets every member, so that a request running over the
 * links never finds half its devices with a fresh state; a member's reset
 * of its own (the watchdog, a function-level reset, AER, a fatal error)
 * resets the others from a work item.  A member's own
 * device-to-host stream is joined to a peer's host-to-device stream by
 * DRM_IOCTL_IPU_LINK_STREAM (IPU_CMD_LINK_STREAM of the device).
 *
 * Locking: ipu_groups_lock, a module-wide mutex, is taken before any
 * member's idev->lock and guards every idev->group; a path holding a
 * device's lock never takes it.  idev->group changes only under both, so
 * either one is enough to read it.
 */
#include <linux/file.h>
#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ipu_drv.h"

static DEFINE_MUTEX(ipu_groups_lock);
static DEFINE_IDA(ipu_group_ida);

/* Take every member's lock, in group order (ipu_groups_lock held). */
static void ipu_group_lock_all(struct ipu_group *g)
{
	u32 k;

	lockdep_assert_held(&ipu_groups_lock);
	for (k = 0; k < g->count; k++)
		mutex_lock_nest_lock(&g->members[k]->lock, &ipu_groups_lock);
}

static void ipu_group_unlock_all(struct ipu_group *g)
{
	u32 k;

	for (k = g->count; k-- > 0;)
		mutex_unlock(&g->members[k]->lock);
}

/* Detach every member and forget the group (ipu_groups_lock, all locks held). */
static void ipu_group_dissolve_locked(struct ipu_group *g, u32 reason)
{
	u32 k;

	for (k = 0; k < g->count; k++) {
		struct ipu_device *idev = g->members[k];

		if (idev->owner == g->files[k])
			ipu_detach_locked(g->files[k], reason);
		idev->group = NULL;
		idev->group_ipu = 0;
	}
}

static void ipu_group_free(struct ipu_group *g)
{
	u32 k;

	ida_free(&ipu_group_ida, g->id);
	for (k = 0; k < g->count; k++)
		ipu_device_put(g->members[k]);
	kfree(g);
}

/**
 * ipu_group_release() - release the group a file's device belongs to
 * @f: a member's file (its device lock not held)
 * @reason: IPU_RESET_REASON_CLOSE at close, 0 for DETACH
 *
 * Return: true if @f's device was in a group (every member is detached
 * now), false if it was not (nothing done).
 */
bool ipu_group_release(struct ipu_file *f, u32 reason)
{
	struct ipu_group *g;

	mutex_lock(&ipu_groups_lock);
	g = f->idev->group;
	if (!g || g->files[f->idev->group_ipu] != f) {
		mutex_unlock(&ipu_groups_lock);
		return false;
	}
	ipu_group_lock_all(g);
	ipu_group_dissolve_locked(g, reason);
	ipu_group_unlock_all(g);
	mutex_unlock(&ipu_groups_lock);
	ipu_group_free(g);
	return true;
}

/**
 * ipu_group_reset() - device reset of every member of a file's group
 * @f: a member's file (its device lock not held)
 * @reason: IPU_RESET_REASON_*
 *
 * Return: -ENOENT if @f's device is in no group (or @f does not own it
 * there), else 0 or the first
 * member's failure (every member is reset all the same).
 */
int ipu_group_reset(struct ipu_file *f, u32 reason)
{
	struct ipu_group *g;
	int ret = 0, r;
	u32 k;

	mutex_lock(&ipu_groups_lock);
	g = f->idev->group;
	if (!g || g->files[f->idev->group_ipu] != f) {
		mutex_unlock(&ipu_groups_lock);
		return -ENOENT;
	}
	ipu_group_lock_all(g);
	for (k = 0; k < g->count; k++) {
		g->members[k]->group_resetting = true;
		r = ipu_hw_reset(g->members[k], reason);
		g->members[k]->group_resetting = false;
		if (r && !ret)
			ret = r;
	}
	ipu_group_unlock_all(g);
	mutex_unlock(&ipu_groups_lock);
	return ret;
}

/**
 * ipu_group_reset_peers_fn() - reset the other members after one member's
 * own reset (watchdog, function-level reset, AER, a fatal error)
 * @work: that member's peer_reset_work
 *
 * Runs without any lock, so it takes ipu_groups_lock and then every
 * member's lock as the ioctls do.  A group released (or another one
 * formed) since the reset is left alone.
 */
void ipu_group_reset_peers_fn(struct work_struct *work)
{
	struct ipu_device *idev = container_of(work, struct ipu_device, peer_reset_work);
	struct ipu_group *g;
	u32 k;

	mutex_lock(&ipu_groups_lock);
	g = idev->group;
	if (g) {
		ipu_group_lock_all(g);
		if (g->id == idev->peer_reset_group) {
			for (k = 0; k < g->count; k++) {
				struct ipu_device *m = g->members[k];

				if (m == idev || m->gone)
					continue;
				m->group_resetting = true;
				ipu_hw_reset(m, idev->peer_reset_reason);
				m->group_resetting = false;
			}
		}
		ipu_group_unlock_all(g);
	}
	mutex_unlock(&ipu_groups_lock);
}

/* The ipu_file of an accel fd of this driver, with a file reference. */
static struct ipu_file *ipu_group_file(int fd, struct file **filp)
{
	struct file *fl = fget(fd);
	struct ipu_file *f;

	if (!fl)
		return ERR_PTR(-EBADF);
	f = ipu_file_of_accel(fl);
	if (!f) {
		fput(fl);
		return ERR_PTR(-EINVAL);
	}
	*filp = fl;
	return f;
}

/**
 * ipu_ioctl_group_attach() - DRM_IOCTL_IPU_GROUP_ATTACH
 * @f: the caller's file, which must be the first of the fds
 * @data: struct ipu_group_attach_args
 *
 * Return: 0, or -EINVAL (malformed, a member twice, the caller's file not
 * first), -EBADF, -EOPNOTSUPP (a device on no ipu-link), -EBUSY (a
 * device owned by another file or in a group), -ENODEV, -ENOMEM.
 */
int ipu_ioctl_group_attach(struct ipu_file *f, void *data)
{
	struct ipu_group_attach_args *a = data;
	struct file *filps[IPU_LINK_MAX_MEMBERS] = { };
	struct ipu_group *g;
	s32 fds[IPU_LINK_MAX_MEMBERS];
	int ret = 0;
	u32 k, j;

	if (a->flags || a->pad || a->count < 2 || a->count > IPU_LINK_MAX_MEMBERS)
		return -EINVAL;
	if (copy_from_user(fds, u64_to_user_ptr(a->fds), a->count * sizeof(fds[0])))
		return -EFAULT;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	g->count = a->count;
	for (k = 0; k < a->count; k++) {
		struct ipu_file *m = ipu_group_file(fds[k], &filps[k]);

		if (IS_ERR(m)) {
			ret = PTR_ERR(m);
			goto out;
		}
		g->files[k] = m;
		g->members[k] = m->idev;
		for (j = 0; j < k; j++)
			if (g->members[j] == m->idev)
				ret = -EINVAL;
		if (!(m->idev->caps & IPU_CAP_LINK) && !ret)
			ret = -EOPNOTSUPP;
		if (ret)
			goto out;
	}
	if (g->files[0] != f) {
		ret = -EINVAL;
		goto out;
	}
	ret = ida_alloc_min(&ipu_group_ida, 1, GFP_KERNEL);
	if (ret < 0)
		goto out;
	g->id = ret;
	ret = 0;

	mutex_lock(&ipu_groups_lock);
	ipu_group_lock_all(g);
	for (k = 0; k < g->count && !ret; k++) {
		struct ipu_device *idev = g->members[k];

		if (READ_ONCE(idev->gone) || idev->failed)
			ret = -ENODEV;
		else if (idev->group || (idev->owner && idev->owner != g->files[k]))
			ret = -EBUSY;
	}
	if (!ret) {
		for (k = 0; k < g->count; k++) {
			struct ipu_device *idev = g->members[k];

			ipu_device_get(idev);
			ipu_attach_locked(g->files[k]);
			idev->group = g;
			idev->group_ipu = k;
		}
	}
	ipu_group_unlock_all(g);
	mutex_unlock(&ipu_groups_lock);
	if (!ret) {
		a->group_id = g->id;
		g = NULL;
	} else {
		ida_free(&ipu_group_ida, g->id);
	}
out:
	for (k = 0; k < IPU_LINK_MAX_MEMBERS; k++)
		if (filps[k])
			fput(filps[k]);
	kfree(g);
	return ret;
}

/**
 * ipu_ioctl_link_stream() - DRM_IOCTL_IPU_LINK_STREAM
 * @f: the owner of a group member; its device lock held
 * @data: struct ipu_link_stream_args
 *
 * Return: 0, -ENOENT (no group), -EINVAL (a stream or IPU out of range,
 * not a device-to-host stream), -ENOEXEC (nothing loaded), -ENOLINK (the
 * device refused the pair: dev_status, dev_detail say why).
 */
int ipu_ioctl_link_stream(struct ipu_file *f, void *data)
{
	struct ipu_link_stream_args *a = data;
	struct ipu_device *idev = f->idev;
	struct ipu_group *g = idev->group;
	struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_LINK_STREAM };
	struct ipu_cmd_ctx res;
	struct ipu_device *peer;
	int ret;

	lockdep_assert_held(&idev->lock);
	if (a->flags || a->pad)
		return -EINVAL;
	if (!g)
		return -ENOENT;
	if (!idev->loaded)
		return -ENOEXEC;
	if (a->peer_ipu >= g->count || a->peer_ipu == idev->group_ipu ||
	    a->stream >= idev->nstreams || a->peer_stream >= IPU_HW_MAX_STREAMS ||
	    idev->streams[a->stream].dir != IPU_STREAM_D2H)
		return -EINVAL;
	peer = g->members[a->peer_ipu];
	cmd.arg0 = cpu_to_le32(a->stream);
	cmd.arg1 = cpu_to_le32(peer->link_index << 16 | a->peer_stream);
	cmd.len = cpu_to_le32(idev->streams[a->stream].bytes);
	ret = ipu_cmd_exec(idev, &cmd, f, 5000, &res);
	if (ret == -ETIMEDOUT)
		ipu_hw_reset(idev, IPU_RESET_REASON_WATCHDOG);
	if (ret)
		return ret;
	a->dev_status = res.status;
	a->dev_detail = res.result;
	a->bytes = idev->streams[a->stream].bytes;
	return ipu_status_errno(res.status);
}

/**
 * ipu_group_info() - a device's group, for INFO and sysfs
 * @idev: the device
 * @id: its group's id, 0 if none
 * @ipu: its IPU index in the group
 * @minors: if not NULL, the members' accel indices, IPU order (room for
 *          IPU_LINK_MAX_MEMBERS)
 *
 * Return: the number of members, 0 if the device is in no group.
 */
u32 ipu_group_info(struct ipu_device *idev, u32 *id, u32 *ipu, int *minors)
{
	struct ipu_group *g;
	u32 n = 0, k;

	mutex_lock(&ipu_groups_lock);
	g = idev->group;
	*id = 0;
	*ipu = 0;
	if (g) {
		n = g->count;
		*id = g->id;
		*ipu = idev->group_ipu;
		for (k = 0; minors && k < n; k++)
			minors[k] = g->members[k]->minor;
	}
	mutex_unlock(&ipu_groups_lock);
	return n;
}
