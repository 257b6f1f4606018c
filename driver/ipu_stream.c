// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_stream.c - stream rings and IORING_OP_URING_CMD stream buffers.
 *
 * A buffer's life: ipu_uring_cmd() pins it (or imports the registered
 * buffer), builds its SG list, writes a descriptor at the stream ring's
 * tail, rings the doorbell and returns -EIOCBQUEUED.  The stream completion
 * interrupt (ipu_scq_drain) or a reset (ipu_cancel_all) calls
 * ipu_stream_complete(), which defers to the submitter's task: there the
 * pages are unmapped and unpinned and io_uring_cmd_done() posts the CQE.
 */
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/slab.h>

#include "ipu_drv.h"
#include "ipu_trace.h"

struct ipu_uring_pdu {
	struct ipu_stream_req *req;
};

static struct ipu_stream_req *ipu_pdu_req(struct io_uring_cmd *ioucmd)
{
	return io_uring_cmd_to_pdu(ioucmd, struct ipu_uring_pdu)->req;
}

static void ipu_stream_task_cb(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct ipu_stream_req *req = ipu_pdu_req(ioucmd);
	struct ipu_device *idev = req->idev;
	int res = req->res;
	u64 tag = req->utag;

	ipu_dma_release(idev, &req->buf);
	kfree(req);
	io_uring_cmd_done(ioucmd, res, tag, issue_flags);
	if (atomic_dec_and_test(&idev->reqs_alive))
		wake_up_all(&idev->reqs_wq);
	ipu_device_put(idev);
}

/**
 * ipu_stream_complete() - complete one stream buffer's io_uring command
 * @idev: the device; the caller holds @idev->sq_lock (IRQ or reset context)
 * @req: the request
 * @res: bytes moved, or a negative errno
 * @dev_status: the device's status for it
 *
 * The pages are released and the CQE posted in the submitter's task.
 */
void ipu_stream_complete(struct ipu_device *idev, struct ipu_stream_req *req,
			 int res, u32 dev_status)
{
	lockdep_assert_held(&idev->sq_lock);
	req->res = res;
	req->dev_status = dev_status;
	trace_ipu_stream_done(idev->minor, req->stream, req->slot, res, dev_status);
	if (res >= 0) {
		atomic64_inc(&idev->st_stream_cmds);
		atomic64_add(res, &idev->st_stream_bytes);
	}
	io_uring_cmd_complete_in_task(req->ioucmd, ipu_stream_task_cb);
}

/**
 * ipu_uring_cmd() - IORING_OP_URING_CMD: queue a buffer on a stream
 * @ioucmd: the command; its SQE128 holds a struct ipu_uring_cmd
 * @issue_flags: io_uring's
 *
 * The buffer is pinned (or imported from a registered buffer), described
 * to the device and completed from the stream completion interrupt.
 *
 * Return: -EIOCBQUEUED when queued, else a negative errno (the CQE's res).
 */
int ipu_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct ipu_file *f = ipu_file_of(ioucmd->file);
	struct ipu_device *idev;
	struct ipu_uring_pdu *pdu = io_uring_cmd_to_pdu(ioucmd, struct ipu_uring_pdu);
	const u8 *raw = io_uring_sqe_cmd(ioucmd->sqe);
	struct ipu_uring_cmd c;
	enum dma_data_direction dir;
	struct ipu_stream_ring *r;
	struct ipu_stream_req *req;
	struct ipu_hw_desc *d;
	unsigned long flags;
	u32 want_dir, i;
	int ret;

	if (!f)
		return -EBADF;
	idev = f->idev;
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	switch (ioucmd->cmd_op) {
	case IPU_URING_CMD_SEND:
		dir = DMA_TO_DEVICE;
		want_dir = IPU_STREAM_H2D;
		break;
	case IPU_URING_CMD_RECV:
		dir = DMA_FROM_DEVICE;
		want_dir = IPU_STREAM_D2H;
		break;
	default:
		return -ENOTTY;
	}
	/* the SQE is shared with userspace: read it once */
	memcpy(&c, raw, sizeof(c));
	if ((c.flags & ~IPU_URING_F_BO) || !c.len)
		return -EINVAL;
	if (!(c.flags & IPU_URING_F_BO) && c.handle)
		return -EINVAL;
	for (i = sizeof(c); i < 80; i++)
		if (READ_ONCE(raw[i]))
			return -EINVAL;
	if (ioucmd->flags & ~IORING_URING_CMD_FIXED)
		return -EINVAL;
	/* a buffer object is no registered buffer */
	if ((c.flags & IPU_URING_F_BO) && (ioucmd->flags & IORING_URING_CMD_FIXED))
		return -EINVAL;
	if (!READ_ONCE(f->attached))
		return -EPERM;
	if (READ_ONCE(idev->gone))
		return -ENODEV;
	/* cheap checks before pinning anything (repeated under the lock) */
	spin_lock_irqsave(&idev->sq_lock, flags);
	ret = 0;
	if (!idev->loaded || !idev->streams)
		ret = -ENOEXEC;
	else if (c.stream >= idev->nstreams || idev->streams[c.stream].dir != want_dir ||
		 c.len < idev->streams[c.stream].bytes ||
		 (want_dir == IPU_STREAM_H2D && c.len != idev->streams[c.stream].bytes))
		ret = -EINVAL;
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	if (ret)
		return ret;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	INIT_LIST_HEAD(&req->node);
	req->ioucmd = ioucmd;
	req->idev = idev;
	req->owner = f;
	req->stream = c.stream;
	req->utag = c.tag;
	if (c.flags & IPU_URING_F_BO)
		ret = ipu_dma_import_bo(idev, &req->buf, f->dfile, c.handle, c.addr, c.len, dir);
	else if (ioucmd->flags & IORING_URING_CMD_FIXED)
		ret = ipu_dma_import_fixed(idev, &req->buf, ioucmd, c.addr, c.len, dir);
	else
		ret = ipu_dma_pin_user(idev, &req->buf, c.addr, c.len, dir);
	if (ret)
		goto err;

	spin_lock_irqsave(&idev->sq_lock, flags);
	ret = -ENOEXEC;
	if (!idev->loaded || !idev->streams)
		goto err_unlock;
	ret = -EINVAL;
	if (c.stream >= idev->nstreams)
		goto err_unlock;
	r = &idev->streams[c.stream];
	if (r->dir != want_dir)
		goto err_unlock;
	if (want_dir == IPU_STREAM_H2D ? c.len != r->bytes : c.len < r->bytes)
		goto err_unlock;
	ret = -EIO;
	if (!r->created || idev->failed)
		goto err_unlock;
	ret = -EAGAIN;
	if (r->inflight >= r->size - 1 || READ_ONCE(idev->inject_hang))
		goto err_unlock;
	req->slot = r->tail;
	d = &r->desc[r->tail];
	d->addr = cpu_to_le64(req->buf.addr);
	d->len = cpu_to_le32(c.len);
	d->sg_count = cpu_to_le32(req->buf.sg_count);
	d->tag = cpu_to_le64((u64)c.stream << 16 | req->slot);
	d->flags = cpu_to_le32(req->buf.sg_count ? 0 : IPU_F_DIRECT);
	d->rsvd = 0;
	r->slots[req->slot] = req;
	r->tail = (r->tail + 1) % r->size;
	r->inflight++;
	idev->stream_inflight++;
	list_add_tail(&req->node, &idev->stream_reqs);
	pdu->req = req;
	ipu_device_get(idev);
	atomic_inc(&idev->reqs_alive);
	if (list_empty(&idev->cmd_pending))
		idev->last_progress = jiffies;
	trace_ipu_stream_submit(idev->minor, c.stream, req->slot, c.len, req->buf.sg_count,
				ioucmd->flags & IORING_URING_CMD_FIXED);
	ipu_wr(idev, IPU_REG_STREAM_DB(c.stream), r->tail);
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	return -EIOCBQUEUED;

err_unlock:
	spin_unlock_irqrestore(&idev->sq_lock, flags);
err:
	ipu_dma_release(idev, &req->buf);
	kfree(req);
	return ret;
}

/* Read len bytes at off of a kernel buffer (the executable's copy). */
static int ipu_buf_read(struct ipu_dma_buf *b, u32 off, void *dst, u32 len)
{
	u8 *out = dst;

	if (off > b->len || len > b->len - off)
		return -EINVAL;
	while (len) {
		u32 pg = off >> PAGE_SHIFT, po = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - po);
		void *p = kmap_local_page(b->pages[pg]);

		memcpy(out, p + po, n);
		kunmap_local(p);
		out += n;
		off += n;
		len -= n;
	}
	return 0;
}

static void ipu_ring_free(struct ipu_device *idev, struct ipu_stream_ring *r)
{
	if (r->desc)
		dma_free_coherent(&idev->pdev->dev, r->size * sizeof(*r->desc),
				  r->desc, r->dma);
	kfree(r->slots);
	r->desc = NULL;
	r->slots = NULL;
}

/**
 * ipu_streams_create() - a descriptor ring for every stream of a loaded image
 * @idev: the device; the caller holds @idev->lock
 * @img: the verified image, whose stream table is read
 *
 * Return: 0 or a negative errno.
 */
int ipu_streams_create(struct ipu_device *idev, struct ipu_dma_buf *img)
{
	struct ipu_stream_ring *rings;
	__le32 hdr[16], sec[4], rec[2];
	u32 nsec, secoff, i, n = 0, off = 0, size;
	unsigned long flags;
	int ret;

	lockdep_assert_held(&idev->lock);
	ret = ipu_buf_read(img, 0, hdr, sizeof(hdr));
	if (ret || le32_to_cpu(hdr[0]) != IPUX_MAGIC)
		return -EINVAL;
	nsec = le32_to_cpu(hdr[7]);
	secoff = le32_to_cpu(hdr[8]);
	for (i = 0; i < nsec && i < 64; i++) {
		ret = ipu_buf_read(img, secoff + i * 16, sec, sizeof(sec));
		if (ret)
			return ret;
		if (le32_to_cpu(sec[0]) == IPUX_SEC_STREAMS) {
			n = le32_to_cpu(sec[1]);
			off = le32_to_cpu(sec[2]);
			break;
		}
	}
	if (n > idev->max_streams)
		return -E2BIG;
	/* keep all rings within ~1 MiB: 256 entries each, fewer if many streams */
	size = IPU_STREAM_RING_MAX;
	while (size > 8 && (u64)size * sizeof(struct ipu_hw_desc) * n > SZ_1M)
		size /= 2;
	rings = kcalloc(max(n, 1u), sizeof(*rings), GFP_KERNEL);
	if (!rings)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct ipu_stream_ring *r = &rings[i];
		struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_CREATE_STREAM };
		struct ipu_cmd_ctx res;

		ret = ipu_buf_read(img, off + i * 8, rec, sizeof(rec));
		if (ret)
			goto err;
		r->dir = le32_to_cpu(rec[0]);
		r->bytes = le32_to_cpu(rec[1]);
		r->size = size;
		r->desc = dma_alloc_coherent(&idev->pdev->dev, size * sizeof(*r->desc),
					     &r->dma, GFP_KERNEL);
		r->slots = kcalloc(size, sizeof(*r->slots), GFP_KERNEL);
		ret = -ENOMEM;
		if (!r->desc || !r->slots)
			goto err;
		cmd.arg0 = cpu_to_le32(i);
		cmd.addr = cpu_to_le64(r->dma);
		cmd.len = cpu_to_le32(size);
		ret = ipu_cmd_exec(idev, &cmd, NULL, 5000, &res);
		if (ret)
			goto err;
		if (res.status) {
			dev_err(&idev->pdev->dev, "CREATE_STREAM %u failed: %s\n", i,
				ipu_status_name(res.status));
			ret = -EIO;
			goto err;
		}
		r->created = true;
	}
	spin_lock_irqsave(&idev->sq_lock, flags);
	idev->streams = rings;
	idev->nstreams = n;
	idev->stream_ring_size = size;
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	return 0;
err:
	for (i = 0; i < n; i++) {
		struct ipu_hw_cmd del = { .opcode = IPU_CMD_DELETE_STREAM,
					  .arg0 = cpu_to_le32(i) };
		struct ipu_cmd_ctx res;

		/* the device must forget a ring before its memory goes */
		if (rings[i].created && ipu_cmd_exec(idev, &del, NULL, 5000, &res))
			ipu_hw_reset(idev, IPU_RESET_REASON_FATAL);
		ipu_ring_free(idev, &rings[i]);
	}
	kfree(rings);
	return ret;
}

/**
 * ipu_streams_destroy() - forget the stream rings
 * @idev: the device; the caller holds @idev->lock.  No buffer may be in
 *        flight (after ABORT or a reset)
 * @tell_device: DELETE_STREAM each (not after a device reset)
 */
void ipu_streams_destroy(struct ipu_device *idev, bool tell_device)
{
	struct ipu_stream_ring *rings;
	unsigned long flags;
	u32 i, n;

	lockdep_assert_held(&idev->lock);
	spin_lock_irqsave(&idev->sq_lock, flags);
	rings = idev->streams;
	n = idev->nstreams;
	idev->streams = NULL;
	idev->nstreams = 0;
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	if (!rings)
		return;
	for (i = 0; i < n; i++) {
		struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_DELETE_STREAM,
					  .arg0 = cpu_to_le32(i) };
		struct ipu_cmd_ctx res;

		if (tell_device && rings[i].created &&
		    ipu_cmd_exec(idev, &cmd, NULL, 5000, &res)) {
			/* not answering: a reset makes it forget every ring */
			tell_device = false;
			ipu_hw_reset(idev, IPU_RESET_REASON_FATAL);
		}
		ipu_ring_free(idev, &rings[i]);
	}
	kfree(rings);
}
