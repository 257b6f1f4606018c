// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_gem.c - buffer objects: GEM shmem objects with the device's counters
 * (objects alive, pages pinned for the device), BO_CREATE and BO_INFO.
 *
 * An object's pages are pinned and mapped for the device the first time
 * the device uses them (drm_gem_shmem_get_pages_sgt()) and stay so until
 * the object is freed: a stream buffer in an object costs no pinning.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <linux/slab.h>

#include "ipu_drv.h"

/* an executable of the device's largest size fits in one object */
#define IPU_BO_MAX_BYTES	IPU_MAX_IMAGE_BYTES

struct ipu_bo {
	struct drm_gem_shmem_object base;
	atomic_t pinned;	/* its pages are counted in st_gem_pages */
};

static struct ipu_bo *to_ipu_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct ipu_bo, base);
}

static void ipu_gem_free(struct drm_gem_object *obj)
{
	struct ipu_device *idev = obj->dev->dev_private;
	struct ipu_bo *bo = to_ipu_bo(obj);

	if (atomic_read(&bo->pinned))
		atomic64_sub(obj->size >> PAGE_SHIFT, &idev->st_gem_pages);
	atomic64_dec(&idev->st_gem_objects);
	drm_gem_shmem_free(&bo->base);
}

static const struct drm_gem_object_funcs ipu_gem_funcs = {
	.free = ipu_gem_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/**
 * ipu_gem_create_object() - drm_driver.gem_create_object: a counted object
 * @drm: the device
 * @size: bytes
 *
 * Used for created and imported objects alike.
 *
 * Return: the object, or ERR_PTR(-ENOMEM).
 */
struct drm_gem_object *ipu_gem_create_object(struct drm_device *drm, size_t size)
{
	struct ipu_device *idev = drm->dev_private;
	struct ipu_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &ipu_gem_funcs;
	atomic64_inc(&idev->st_gem_objects);
	return &bo->base.base;
}

/**
 * ipu_gem_sgt() - an object's pages, pinned and mapped for the device
 * @obj: a buffer object of this device (created or imported)
 * @sgt: its SG table, DMA-mapped; owned by the object
 *
 * Return: 0 or a negative errno.
 */
int ipu_gem_sgt(struct drm_gem_object *obj, struct sg_table **sgt)
{
	struct ipu_device *idev = obj->dev->dev_private;
	struct ipu_bo *bo = to_ipu_bo(obj);
	struct sg_table *t;

	t = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(t))
		return PTR_ERR(t);
	/* an imported object's pages are pinned by its exporter */
	if (!obj->import_attach && !atomic_xchg(&bo->pinned, 1))
		atomic64_add(obj->size >> PAGE_SHIFT, &idev->st_gem_pages);
	*sgt = t;
	return 0;
}

/**
 * ipu_ioctl_bo_create() - DRM_IOCTL_IPU_BO_CREATE
 * @drm: the device
 * @data: struct ipu_bo_create_args
 * @file: the caller's file, which gets the handle
 *
 * Return: 0, -EINVAL (flags, size) or -ENOMEM.
 */
int ipu_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct ipu_bo_create_args *a = data;
	struct drm_gem_shmem_object *shmem;
	u32 handle;
	int ret;

	if (a->flags || !a->size || a->size > IPU_BO_MAX_BYTES)
		return -EINVAL;
	shmem = drm_gem_shmem_create(drm, PAGE_ALIGN(a->size));
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	/* the handle holds the object now (or nothing does) */
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;
	a->handle = handle;
	return 0;
}

/**
 * ipu_ioctl_bo_info() - DRM_IOCTL_IPU_BO_INFO: size and mmap offset
 * @drm: the device
 * @data: struct ipu_bo_info_args
 * @file: the caller's file, whose handle is looked up
 *
 * Return: 0, -EINVAL (flags), -ENOENT (no such handle) or -ENOMEM.
 */
int ipu_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct ipu_bo_info_args *a = data;
	struct drm_gem_object *obj;
	int ret;

	if (a->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, a->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		a->size = obj->size;
		a->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}
