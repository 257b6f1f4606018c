// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_dma.c - buffers for the device: pinned user pages (streams),
 * registered io_uring buffers, parts of buffer objects (streams), kernel
 * bounce copies (executables, tensors); their SG tables and the device's
 * SG lists (struct ipu_hw_sg).
 */
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <linux/bvec.h>
#include <linux/iosys-map.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "ipu_drv.h"
#include "ipu_trace.h"

/*
 * Write the device's view of the bytes [skip, skip + b->len) of a mapped
 * SG table: the address itself when they are one segment, else an SG list
 * (first pass: count the segments; second: fill the list).
 */
static int ipu_dma_describe(struct ipu_device *idev, struct ipu_dma_buf *b,
			    struct sg_table *sgt, u64 skip)
{
	struct device *dev = &idev->pdev->dev;
	struct scatterlist *sg;
	unsigned int i, n, pass;
	u64 off, left;

	for (pass = 0; pass < 2; pass++) {
		off = skip;
		left = b->len;
		n = 0;
		for_each_sgtable_dma_sg(sgt, sg, i) {
			u64 seg = sg_dma_len(sg), take;

			if (!left)
				break;
			if (off >= seg) {
				off -= seg;
				continue;
			}
			take = min(seg - off, left);
			if (pass && b->sgl) {
				b->sgl[n].addr = cpu_to_le64(sg_dma_address(sg) + off);
				b->sgl[n].len = cpu_to_le32(take);
				b->sgl[n].rsvd = 0;
			} else if (pass) {
				b->addr = sg_dma_address(sg) + off;
			}
			n++;
			off = 0;
			left -= take;
		}
		if (left || !n)
			return -EFAULT;
		if (pass)
			break;
		trace_ipu_dma_map(idev->minor, b->len, n, !b->pinned && !b->kernel);
		if (n == 1)
			continue;
		if (n > idev->max_sg)
			return -E2BIG;
		b->sgl_bytes = n * sizeof(struct ipu_hw_sg);
		if (b->sgl_bytes <= PAGE_SIZE) {
			b->sgl = dma_pool_zalloc(idev->sg_pool, GFP_KERNEL, &b->sgl_dma);
			b->sgl_pool = true;
		} else {
			b->sgl = dma_alloc_coherent(dev, b->sgl_bytes, &b->sgl_dma, GFP_KERNEL);
		}
		if (!b->sgl)
			return -ENOMEM;
	}
	if (b->sgl) {
		b->sg_count = n;
		b->addr = b->sgl_dma;
	} else {
		b->sg_count = 0;
	}
	return 0;
}

/* Map b->sgt and write the device's view of it (direct or SG list). */
static int ipu_dma_map(struct ipu_device *idev, struct ipu_dma_buf *b)
{
	int ret;

	ret = dma_map_sgtable(&idev->pdev->dev, &b->sgt, b->dir, 0);
	if (ret)
		return ret;
	b->mapped = true;
	return ipu_dma_describe(idev, b, &b->sgt, 0);
}

static int ipu_dma_table(struct ipu_device *idev, struct ipu_dma_buf *b,
			 unsigned int offset, u32 len)
{
	int ret;

	ret = sg_alloc_table_from_pages_segment(&b->sgt, b->pages, b->npages, offset,
						len, UINT_MAX & PAGE_MASK, GFP_KERNEL);
	if (ret)
		return ret;
	b->len = len;
	return ipu_dma_map(idev, b);
}

/**
 * ipu_dma_pin_user() - pin a user buffer and map it for the device
 * @idev: the device
 * @b: filled with the pages, SG table and device SG list
 * @uaddr: user address of the buffer
 * @len: its length in bytes
 * @dir: DMA_TO_DEVICE (the device reads it) or DMA_FROM_DEVICE
 *
 * Return: 0, or a negative errno (-EFAULT for an unmapped range); @b holds
 * nothing then.
 */
int ipu_dma_pin_user(struct ipu_device *idev, struct ipu_dma_buf *b,
		     unsigned long uaddr, u32 len, enum dma_data_direction dir)
{
	unsigned int offset = offset_in_page(uaddr);
	int npages, pinned;

	memset(b, 0, sizeof(*b));
	b->dir = dir;
	if (!len)
		return -EINVAL;
	if (uaddr + len < uaddr)
		return -EFAULT;
	npages = DIV_ROUND_UP(offset + len, PAGE_SIZE);
	b->pages = kvmalloc_array(npages, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	pinned = pin_user_pages_fast(uaddr & PAGE_MASK, npages,
				     dir == DMA_FROM_DEVICE ? FOLL_WRITE : 0, b->pages);
	if (pinned < 0) {
		kvfree(b->pages);
		b->pages = NULL;
		return pinned;
	}
	b->npages = pinned;
	b->pinned = true;
	atomic64_add(pinned, &idev->st_pinned_pages);
	if (pinned != npages)
		return -EFAULT;
	return ipu_dma_table(idev, b, offset, len);
}

/*
 * Physically contiguous runs of up to 2 MiB: the SG table merges a run
 * into one entry, so a 1 GiB executable needs about 512 of the device's
 * IPU_MAX_SG_ENTRIES where single pages would need 262,144.  When memory
 * is fragmented the runs shrink (down to single pages) instead of failing.
 */
#define IPU_DMA_RUN_ORDER	9

/* Kernel pages for len bytes; mapped for the device unless map is false. */
static int ipu_dma_kernel_pages(struct ipu_device *idev, struct ipu_dma_buf *b,
				u32 len, enum dma_data_direction dir, bool map)
{
	unsigned int i, j, order = IPU_DMA_RUN_ORDER;

	memset(b, 0, sizeof(*b));
	b->dir = dir;
	if (!len)
		return -EINVAL;
	b->npages = DIV_ROUND_UP(len, PAGE_SIZE);
	b->pages = kvcalloc(b->npages, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	b->kernel = true;
	for (i = 0; i < b->npages; i += 1u << order) {
		struct page *run;

		order = min_t(unsigned int, order, ilog2(b->npages - i));
		for (;;) {
			gfp_t gfp = GFP_KERNEL | __GFP_ACCOUNT;

			if (order)
				gfp |= __GFP_NORETRY | __GFP_NOWARN;
			run = alloc_pages(gfp, order);
			if (run || !order)
				break;
			order--;
		}
		if (!run)
			return -ENOMEM;
		/* order-0 pages from here on: ipu_dma_release() frees each alone */
		split_page(run, order);
		for (j = 0; j < (1u << order); j++)
			b->pages[i + j] = run + j;
	}
	b->len = len;
	return map ? ipu_dma_table(idev, b, 0, len) : 0;
}

/**
 * ipu_dma_alloc_kernel() - a kernel buffer the device fills (READ_TENSOR), mapped
 * @idev: the device
 * @b: filled with the pages and mappings
 * @len: bytes
 * @dir: the direction of the transfer
 *
 * Return: 0 or -ENOMEM.
 */
int ipu_dma_alloc_kernel(struct ipu_device *idev, struct ipu_dma_buf *b,
			 u32 len, enum dma_data_direction dir)
{
	return ipu_dma_kernel_pages(idev, b, len, dir, true);
}

/**
 * ipu_dma_copy_user() - a kernel copy of user data, mapped for the device
 * @idev: the device
 * @b: filled with the pages and mappings
 * @uaddr: user address of the data
 * @len: bytes
 *
 * What the device reads cannot change under it.
 *
 * Return: 0, -EFAULT, -EINTR (fatal signal while copying) or -ENOMEM.
 */
int ipu_dma_copy_user(struct ipu_device *idev, struct ipu_dma_buf *b,
		      unsigned long uaddr, u32 len)
{
	unsigned int i;
	int ret;

	ret = ipu_dma_kernel_pages(idev, b, len, DMA_TO_DEVICE, false);
	if (ret)
		return ret;
	for (i = 0; i < b->npages; i++) {
		u32 n = min_t(u32, PAGE_SIZE, len - i * PAGE_SIZE);
		void *p = kmap_local_page(b->pages[i]);

		ret = copy_from_user(p, (void __user *)(uaddr + i * PAGE_SIZE), n);
		kunmap_local(p);
		if (ret)
			return -EFAULT;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return ipu_dma_table(idev, b, 0, len);
}

/**
 * ipu_dma_copy_to_user() - copy a kernel buffer the device filled to user memory
 * @b: the buffer (ipu_dma_alloc_kernel())
 * @uaddr: user destination, @b->len bytes
 *
 * Return: 0 or -EFAULT.
 */
int ipu_dma_copy_to_user(struct ipu_dma_buf *b, unsigned long uaddr)
{
	unsigned int i;
	int ret;

	for (i = 0; i < b->npages; i++) {
		u32 n = min_t(u32, PAGE_SIZE, b->len - i * PAGE_SIZE);
		void *p = kmap_local_page(b->pages[i]);

		ret = copy_to_user((void __user *)(uaddr + i * PAGE_SIZE), p, n);
		kunmap_local(p);
		if (ret)
			return -EFAULT;
	}
	return 0;
}

/**
 * ipu_dma_import_fixed() - map part of a registered io_uring buffer
 * @idev: the device
 * @b: filled with the SG table and device SG list (no pages of our own)
 * @ioucmd: the command, which names the registered buffer
 * @uaddr: user address inside the registered buffer
 * @len: bytes
 * @dir: the direction of the transfer
 *
 * Its pages are pinned by io_uring, not by us.
 *
 * Return: 0, or a negative errno (-EFAULT outside the registered buffer).
 */
int ipu_dma_import_fixed(struct ipu_device *idev, struct ipu_dma_buf *b,
			 struct io_uring_cmd *ioucmd, unsigned long uaddr,
			 u32 len, enum dma_data_direction dir)
{
	struct iov_iter iter;
	const struct bio_vec *bv;
	unsigned long i, count;
	size_t skip, left, seg;
	struct scatterlist *sg, *last;
	phys_addr_t end;
	int ret, pass;

	memset(b, 0, sizeof(*b));
	b->dir = dir;
	ret = io_uring_cmd_import_fixed(uaddr, len,
					dir == DMA_FROM_DEVICE ? READ : WRITE,
					&iter, ioucmd);
	if (ret)
		return ret;
	if (!iov_iter_is_bvec(&iter))
		return -EINVAL;
	/*
	 * First pass: how many pieces, then fill an exact table.  io_uring
	 * keeps one bvec per page; pages that are physically adjacent become
	 * one segment, as sg_alloc_table_from_pages_segment() does for the
	 * pinned path, so the device walks as short an SG list either way.
	 */
	for (pass = 0; pass < 2; pass++) {
		bv = iter.bvec;
		skip = iter.iov_offset;
		left = iov_iter_count(&iter);
		sg = pass ? b->sgt.sgl : NULL;
		last = NULL;
		count = 0;
		seg = 0;
		end = 0;
		for (i = 0; i < iter.nr_segs && left; i++, bv++) {
			size_t off = bv->bv_offset, n = bv->bv_len;
			phys_addr_t start;

			if (skip >= n) {
				skip -= n;
				continue;
			}
			off += skip;
			n = min(n - skip, left);
			skip = 0;
			start = page_to_phys(bv->bv_page) + off;
			if (count && start == end && seg + n <= (UINT_MAX & PAGE_MASK)) {
				seg += n;
				if (last)
					last->length = seg;
			} else {
				seg = n;
				if (sg) {
					sg_set_page(sg, bv->bv_page, n, off);
					last = sg;
					sg = sg_next(sg);
				}
				count++;
			}
			end = start + n;
			left -= n;
		}
		if (left || !count)
			return -EFAULT;
		if (!pass) {
			ret = sg_alloc_table(&b->sgt, count, GFP_KERNEL);
			if (ret)
				return ret;
		}
	}
	b->len = len;
	return ipu_dma_map(idev, b);
}

/* A reference on buffer object @handle of @file with [offset, offset + len). */
static int ipu_dma_bo_get(struct drm_file *file, u32 handle, u64 offset, u32 len,
			  struct drm_gem_object **out)
{
	struct drm_gem_object *obj;

	if (!len)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	if (offset > obj->size || len > obj->size - offset) {
		drm_gem_object_put(obj);
		return -EFAULT;
	}
	*out = obj;
	return 0;
}

/**
 * ipu_dma_import_bo() - describe part of a buffer object to the device
 * @idev: the device
 * @b: filled with the device SG list and a reference on the object
 * @file: the caller's file, whose handle names the object
 * @handle: the object (created here or imported from a dma-buf)
 * @offset: byte offset of the buffer in the object
 * @len: bytes
 * @dir: the direction of the transfer
 *
 * The object's pages stay pinned and mapped for the device as long as the
 * object lives (ipu_gem_sgt()): nothing is pinned or copied per buffer.
 *
 * Return: 0, -ENOENT (no such handle), -EFAULT (outside the object) or
 * another negative errno; @b holds nothing then.
 */
int ipu_dma_import_bo(struct ipu_device *idev, struct ipu_dma_buf *b,
		      struct drm_file *file, u32 handle, u64 offset, u32 len,
		      enum dma_data_direction dir)
{
	struct sg_table *sgt;
	int ret;

	memset(b, 0, sizeof(*b));
	b->dir = dir;
	ret = ipu_dma_bo_get(file, handle, offset, len, &b->bo);
	if (ret)
		return ret;
	ret = ipu_gem_sgt(b->bo, &sgt);
	if (ret)
		return ret;
	b->len = len;
	return ipu_dma_describe(idev, b, sgt, offset);
}

/**
 * ipu_dma_copy_bo() - a kernel copy of a buffer object's first bytes, mapped
 * @idev: the device
 * @b: filled with the pages and mappings
 * @file: the caller's file, whose handle names the object
 * @handle: the object
 * @len: bytes
 *
 * For executables: what the device reads cannot change under it.
 *
 * Return: 0, -ENOENT, -EFAULT (object smaller than @len) or -ENOMEM.
 */
int ipu_dma_copy_bo(struct ipu_device *idev, struct ipu_dma_buf *b,
		    struct drm_file *file, u32 handle, u32 len)
{
	struct drm_gem_object *obj;
	struct iosys_map map;
	unsigned int i;
	int ret;

	ret = ipu_dma_kernel_pages(idev, b, len, DMA_TO_DEVICE, false);
	if (ret)
		return ret;
	ret = ipu_dma_bo_get(file, handle, 0, len, &obj);
	if (ret)
		return ret;
	ret = drm_gem_vmap_unlocked(obj, &map);
	if (!ret) {
		for (i = 0; i < b->npages; i++) {
			u32 n = min_t(u32, PAGE_SIZE, len - i * PAGE_SIZE);
			void *p = kmap_local_page(b->pages[i]);

			iosys_map_memcpy_from(p, &map, i * PAGE_SIZE, n);
			kunmap_local(p);
		}
		drm_gem_vunmap_unlocked(obj, &map);
	}
	drm_gem_object_put(obj);
	return ret ? ret : ipu_dma_table(idev, b, 0, len);
}

/**
 * ipu_dma_release() - unmap, unpin (or free) and forget a buffer
 * @idev: the device
 * @b: the buffer; any state ipu_dma_*() left it in
 */
void ipu_dma_release(struct ipu_device *idev, struct ipu_dma_buf *b)
{
	struct device *dev = &idev->pdev->dev;
	unsigned int i;

	if (b->sgl) {
		if (b->sgl_pool)
			dma_pool_free(idev->sg_pool, b->sgl, b->sgl_dma);
		else
			dma_free_coherent(dev, b->sgl_bytes, b->sgl, b->sgl_dma);
	}
	if (b->mapped)
		dma_unmap_sgtable(dev, &b->sgt, b->dir, 0);
	if (b->sgt.sgl)
		sg_free_table(&b->sgt);
	if (b->pinned) {
		unpin_user_pages_dirty_lock(b->pages, b->npages, b->dir == DMA_FROM_DEVICE);
		atomic64_sub(b->npages, &idev->st_pinned_pages);
	}
	if (b->kernel) {
		for (i = 0; i < b->npages; i++)
			if (b->pages[i])
				__free_page(b->pages[i]);
	}
	kvfree(b->pages);
	if (b->bo)
		drm_gem_object_put(b->bo);
	memset(b, 0, sizeof(*b));
}
