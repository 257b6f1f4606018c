// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_rings.c - the command ring, the two completion rings, run statuses,
 * cancellation and the watchdog.
 *
 * Command tags: bits 0..31 the idr id of the pending command.  Stream
 * descriptor tags: stream << 16 | slot in that stream's ring.
 */
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "ipu_drv.h"
#include "ipu_trace.h"

static const char * const ipu_status_names[IPU_ST_COUNT] = {
	[IPU_ST_OK] = "OK",
	[IPU_ST_INVALID_OPCODE] = "INVALID_OPCODE",
	[IPU_ST_INVALID_FIELD] = "INVALID_FIELD",
	[IPU_ST_DMA_FAULT] = "DMA_FAULT",
	[IPU_ST_BAD_SG] = "BAD_SG",
	[IPU_ST_TOO_LARGE] = "TOO_LARGE",
	[IPU_ST_EXE_INVALID] = "EXE_INVALID",
	[IPU_ST_NOT_LOADED] = "NOT_LOADED",
	[IPU_ST_BAD_PROGRAM] = "BAD_PROGRAM",
	[IPU_ST_ABORTED] = "ABORTED",
	[IPU_ST_STREAM_ERROR] = "STREAM_ERROR",
	[IPU_ST_FAULT] = "FAULT",
	[IPU_ST_RANGE] = "RANGE",
	[IPU_ST_BAD_STREAM] = "BAD_STREAM",
	[IPU_ST_RING_CONFIG] = "RING_CONFIG",
	[IPU_ST_RING_INDEX] = "RING_INDEX",
	[IPU_ST_LENGTH] = "LENGTH",
	[IPU_ST_NO_MEMORY] = "NO_MEMORY",
	[IPU_ST_ENGINE] = "ENGINE",
	[IPU_ST_LINK] = "LINK",
};

/**
 * ipu_status_name() - name of a device status code, for messages
 * @st: IPU_ST_*
 *
 * Return: a static string, "UNKNOWN" for a code we do not know.
 */
const char *ipu_status_name(u32 st)
{
	return st < IPU_ST_COUNT ? ipu_status_names[st] : "UNKNOWN";
}

/**
 * ipu_status_errno() - the errno for a failed command's device status
 * @st: IPU_ST_*
 *
 * Return: a negative errno.
 */
int ipu_status_errno(u32 st)
{
	switch (st) {
	case IPU_ST_OK:
		return 0;
	case IPU_ST_ABORTED:
		return -ECANCELED;
	case IPU_ST_NO_MEMORY:
		return -ENOMEM;
	case IPU_ST_TOO_LARGE:
		return -EFBIG;
	case IPU_ST_DMA_FAULT:
	case IPU_ST_STREAM_ERROR:
	case IPU_ST_FAULT:
	case IPU_ST_ENGINE:
		return -EIO;
	case IPU_ST_NOT_LOADED:
		return -ENOEXEC;
	case IPU_ST_LINK:
		return -ENOLINK;
	default:
		return -EINVAL;
	}
}

/**
 * ipu_rings_alloc() - allocate the command, completion and stream completion rings
 * @idev: the device
 *
 * Coherent memory, plus the DMA pool for SG lists.
 *
 * Return: 0 or -ENOMEM.
 */
int ipu_rings_alloc(struct ipu_device *idev)
{
	struct device *dev = &idev->pdev->dev;

	idev->cmdq = dma_alloc_coherent(dev, IPU_CMDQ_ENTRIES * sizeof(struct ipu_hw_cmd),
					&idev->cmdq_dma, GFP_KERNEL);
	idev->cplq = dma_alloc_coherent(dev, IPU_CPLQ_ENTRIES * sizeof(struct ipu_hw_cpl),
					&idev->cplq_dma, GFP_KERNEL);
	idev->scq = dma_alloc_coherent(dev, IPU_SCQ_ENTRIES * sizeof(struct ipu_hw_cpl),
				       &idev->scq_dma, GFP_KERNEL);
	idev->sg_pool = dma_pool_create("ipu_sg", dev, PAGE_SIZE, 64, 0);
	if (!idev->cmdq || !idev->cplq || !idev->scq || !idev->sg_pool) {
		dev_err(dev, "cannot allocate the device rings\n");
		ipu_rings_free(idev);
		return -ENOMEM;
	}
	return 0;
}

/**
 * ipu_rings_free() - free what ipu_rings_alloc() allocated
 * @idev: the device, reset (it writes no ring any more)
 */
void ipu_rings_free(struct ipu_device *idev)
{
	struct device *dev = &idev->pdev->dev;

	if (idev->cmdq)
		dma_free_coherent(dev, IPU_CMDQ_ENTRIES * sizeof(struct ipu_hw_cmd),
				  idev->cmdq, idev->cmdq_dma);
	if (idev->cplq)
		dma_free_coherent(dev, IPU_CPLQ_ENTRIES * sizeof(struct ipu_hw_cpl),
				  idev->cplq, idev->cplq_dma);
	if (idev->scq)
		dma_free_coherent(dev, IPU_SCQ_ENTRIES * sizeof(struct ipu_hw_cpl),
				  idev->scq, idev->scq_dma);
	dma_pool_destroy(idev->sg_pool);
	idev->cmdq = NULL;
	idev->cplq = NULL;
	idev->scq = NULL;
	idev->sg_pool = NULL;
}

/**
 * ipu_rings_program() - empty the rings and program their registers (not enabled)
 * @idev: the device, just reset; the caller holds @idev->lock
 */
void ipu_rings_program(struct ipu_device *idev)
{
	unsigned long flags;

	lockdep_assert_held(&idev->lock);
	spin_lock_irqsave(&idev->cmd_lock, flags);
	memset(idev->cmdq, 0, IPU_CMDQ_ENTRIES * sizeof(struct ipu_hw_cmd));
	memset(idev->cplq, 0, IPU_CPLQ_ENTRIES * sizeof(struct ipu_hw_cpl));
	idev->cmd_tail = 0;
	idev->cpl_head = 0;
	idev->cpl_phase = 1;
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
	spin_lock_irqsave(&idev->sq_lock, flags);
	memset(idev->scq, 0, IPU_SCQ_ENTRIES * sizeof(struct ipu_hw_cpl));
	idev->scq_head = 0;
	idev->scq_phase = 1;
	spin_unlock_irqrestore(&idev->sq_lock, flags);

	ipu_wr(idev, IPU_REG_CMDQ_BASE_LO, lower_32_bits(idev->cmdq_dma));
	ipu_wr(idev, IPU_REG_CMDQ_BASE_HI, upper_32_bits(idev->cmdq_dma));
	ipu_wr(idev, IPU_REG_CMDQ_SIZE, IPU_CMDQ_ENTRIES);
	ipu_wr(idev, IPU_REG_CPLQ_BASE_LO, lower_32_bits(idev->cplq_dma));
	ipu_wr(idev, IPU_REG_CPLQ_BASE_HI, upper_32_bits(idev->cplq_dma));
	ipu_wr(idev, IPU_REG_CPLQ_SIZE, IPU_CPLQ_ENTRIES);
	ipu_wr(idev, IPU_REG_SCQ_BASE_LO, lower_32_bits(idev->scq_dma));
	ipu_wr(idev, IPU_REG_SCQ_BASE_HI, upper_32_bits(idev->scq_dma));
	ipu_wr(idev, IPU_REG_SCQ_SIZE, IPU_SCQ_ENTRIES);
}

/**
 * ipu_cmds_pending() - does the device hold commands not yet completed?
 * @idev: the device
 *
 * Return: true if any command is outstanding.
 */
bool ipu_cmds_pending(struct ipu_device *idev)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&idev->cmd_lock, flags);
	ret = !list_empty(&idev->cmd_pending);
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
	return ret;
}

/*
 * Put one command on the ring.  Sleeps while the ring is full.  On
 * success the context is pending and owned by the completion path until
 * ctx->done fires (sync) or it is freed (runs).
 */
static int ipu_cmd_submit(struct ipu_device *idev, struct ipu_hw_cmd *cmd,
			  struct ipu_cmd_ctx *ctx, u64 *seq)
{
	unsigned long flags;
	int id, ret;

	for (;;) {
		idr_preload(GFP_KERNEL);
		spin_lock_irqsave(&idev->cmd_lock, flags);
		/* checked under cmd_lock: remove sets gone under it too */
		if (idev->gone || idev->failed) {
			spin_unlock_irqrestore(&idev->cmd_lock, flags);
			idr_preload_end();
			return -ENODEV;
		}
		/* only a RUN races a reset: the reset unloads its executable */
		if (idev->resetting) {
			spin_unlock_irqrestore(&idev->cmd_lock, flags);
			idr_preload_end();
			return -ENOEXEC;
		}
		if (idev->cmd_inflight < IPU_CMDQ_ENTRIES - 1)
			break;
		spin_unlock_irqrestore(&idev->cmd_lock, flags);
		idr_preload_end();
		ret = wait_event_interruptible(idev->cmd_space,
					       READ_ONCE(idev->cmd_inflight) <
					       IPU_CMDQ_ENTRIES - 1 ||
					       READ_ONCE(idev->gone) || READ_ONCE(idev->failed));
		if (ret)
			return ret;
	}
	id = idr_alloc(&idev->cmd_idr, ctx, 1, 0, GFP_NOWAIT);
	if (id < 0) {
		spin_unlock_irqrestore(&idev->cmd_lock, flags);
		idr_preload_end();
		return id;
	}
	ctx->id = id;
	ctx->submitted = jiffies;
	if (ctx->is_run) {
		ctx->seq = ++idev->next_seq;
		idev->runs[ctx->seq % IPU_RUN_STATUS_RING] =
			(struct ipu_run_status){ .seq = ctx->seq };
		*seq = ctx->seq;
	}
	if (list_empty(&idev->cmd_pending))
		idev->last_progress = jiffies;
	list_add_tail(&ctx->node, &idev->cmd_pending);
	cmd->tag = cpu_to_le64(id);
	trace_ipu_cmd_submit(idev->minor, id, cmd->opcode, ctx->is_run ? ctx->seq : 0);
	idev->cmdq[idev->cmd_tail] = *cmd;
	idev->cmd_tail = (idev->cmd_tail + 1) % IPU_CMDQ_ENTRIES;
	idev->cmd_inflight++;
	/* the entry is visible before the doorbell (writel orders it) */
	ipu_wr(idev, IPU_REG_CMDQ_TAIL, idev->cmd_tail);
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
	idr_preload_end();
	return 0;
}

/* Finish one pending command.  cmd_lock held. */
static void ipu_cmd_finish(struct ipu_device *idev, struct ipu_cmd_ctx *ctx,
			   u16 status, u32 result, u64 detail)
{
	lockdep_assert_held(&idev->cmd_lock);
	trace_ipu_cmd_done(idev->minor, ctx->id, status, result, detail);
	idr_remove(&idev->cmd_idr, ctx->id);
	list_del_init(&ctx->node);
	idev->cmd_inflight--;
	ctx->status = status;
	ctx->result = result;
	ctx->detail = detail;
	if (ctx->is_run) {
		struct ipu_run_status *rs = &idev->runs[ctx->seq % IPU_RUN_STATUS_RING];

		rs->seq = ctx->seq;
		rs->dev_status = status;
		rs->result = result;
		rs->cycles = status == IPU_ST_OK ? detail : 0;
		rs->wait_status = status == IPU_ST_ABORTED ? IPU_WAIT_ABORTED :
				  IPU_WAIT_COMPLETED;
		if (ctx->seq > idev->done_seq)
			idev->done_seq = ctx->seq;
		if (status == IPU_ST_OK)
			atomic64_inc(&idev->st_programs_run);
		kfree(ctx);
		wake_up_all(&idev->run_wq);
	} else {
		complete(&ctx->done);
	}
	wake_up(&idev->cmd_space);
}

/**
 * ipu_cmd_exec() - execute one command and wait for its completion
 * @idev: the device
 * @cmd: the command (its tag is set here)
 * @owner: the file it is for, or NULL
 * @timeout_ms: how long to wait for the device
 * @out: the command's status, result and detail
 *
 * Return: 0 when the device answered (whatever the status), -ETIMEDOUT,
 * -EINTR or -ENODEV.
 */
int ipu_cmd_exec(struct ipu_device *idev, struct ipu_hw_cmd *cmd,
		 struct ipu_file *owner, unsigned int timeout_ms,
		 struct ipu_cmd_ctx *out)
{
	struct ipu_cmd_ctx *ctx;
	unsigned long flags;
	long left;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	init_completion(&ctx->done);
	INIT_LIST_HEAD(&ctx->node);
	ctx->owner = owner;
	ret = ipu_cmd_submit(idev, cmd, ctx, NULL);
	if (ret) {
		kfree(ctx);
		return ret;
	}
	left = wait_for_completion_timeout(&ctx->done,
					   timeout_ms ? msecs_to_jiffies(timeout_ms) :
					   MAX_SCHEDULE_TIMEOUT);
	if (!left) {
		/* still pending: withdraw it; a reset will follow */
		spin_lock_irqsave(&idev->cmd_lock, flags);
		if (!list_empty(&ctx->node)) {
			idr_remove(&idev->cmd_idr, ctx->id);
			list_del_init(&ctx->node);
			idev->cmd_inflight--;
			ret = -ETIMEDOUT;
		}
		spin_unlock_irqrestore(&idev->cmd_lock, flags);
		if (ret) {
			kfree(ctx);
			return ret;
		}
	}
	*out = *ctx;
	kfree(ctx);
	return 0;
}

/**
 * ipu_cmd_run() - queue a RUN of a program without waiting for it
 * @idev: the device
 * @owner: the attached file
 * @prog: program index
 * @seq: the run's sequence number, for ipu_run_wait()
 *
 * Refused while the device resets (a RUN in a ring that the reset
 * reprograms would never complete).
 *
 * Return: 0 or a negative errno.
 */
int ipu_cmd_run(struct ipu_device *idev, struct ipu_file *owner, u32 prog,
		u64 *seq)
{
	struct ipu_hw_cmd cmd = { .opcode = IPU_CMD_RUN, .arg0 = cpu_to_le32(prog) };
	struct ipu_cmd_ctx *ctx;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	INIT_LIST_HEAD(&ctx->node);
	ctx->is_run = true;
	ctx->owner = owner;
	/* on success ctx belongs to the completion path (which frees it) */
	ret = ipu_cmd_submit(idev, &cmd, ctx, seq);
	if (ret)
		kfree(ctx);
	return ret;
}

static bool ipu_run_done(struct ipu_device *idev, u64 seq, struct ipu_run_status *st)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&idev->cmd_lock, flags);
	done = idev->done_seq >= seq;
	if (done)
		*st = idev->runs[seq % IPU_RUN_STATUS_RING];
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
	return done;
}

/**
 * ipu_run_wait() - WAIT: the status of a run, waiting up to a timeout
 * @idev: the device
 * @a: the WAIT arguments: seq and timeout_ns in, status and counters out
 *
 * Return: 0 (a->status says completed, failed, aborted or timed out),
 * -EINVAL for a sequence number never issued, -ESTALE for one whose
 * status was overwritten, -ERESTARTSYS on a signal.
 */
int ipu_run_wait(struct ipu_device *idev, struct ipu_wait_args *a)
{
	struct ipu_run_status st;
	long ret;

	if (!a->seq || a->seq > READ_ONCE(idev->next_seq))
		return -EINVAL;
	if (a->timeout_ns == 0) {
		ret = ipu_run_done(idev, a->seq, &st);
	} else if (a->timeout_ns < 0) {
		ret = wait_event_interruptible(idev->run_wq,
					       ipu_run_done(idev, a->seq, &st));
		if (ret)
			return ret;
		ret = 1;
	} else {
		u64 ms = div_u64(a->timeout_ns + NSEC_PER_MSEC - 1, NSEC_PER_MSEC);

		ret = wait_event_interruptible_timeout(idev->run_wq,
						       ipu_run_done(idev, a->seq, &st),
						       msecs_to_jiffies(min_t(u64, ms, INT_MAX)));
		if (ret < 0)
			return ret;
	}
	if (!ret) {
		a->status = IPU_WAIT_TIMEDOUT;
		return 0;
	}
	if (st.seq != a->seq)
		return -ESTALE;	/* too old: its status was overwritten */
	a->status = st.wait_status;
	a->dev_status = st.dev_status;
	a->result = st.result;
	a->cycles = st.cycles;
	return 0;
}

/*
 * Drain the command completion ring; returns the entries consumed.
 * polled: the watchdog found them without their interrupt.  That is
 * counted before the first command is finished, under cmd_lock: a waiter
 * woken by its completion may read stats/lost_irqs at once, on another CPU,
 * while this one still writes CPLQ_HEAD.
 */
static unsigned int __ipu_cpl_drain(struct ipu_device *idev, bool polled)
{
	unsigned long flags;
	unsigned int n = 0;
	bool corrupt = false;

	spin_lock_irqsave(&idev->cmd_lock, flags);
	if (idev->inject_hang) {
		spin_unlock_irqrestore(&idev->cmd_lock, flags);
		return 0;
	}
	for (;;) {
		struct ipu_hw_cpl *c = &idev->cplq[idev->cpl_head];
		struct ipu_cmd_ctx *ctx;
		u16 status;
		u64 tag;

		if ((READ_ONCE(c->flags) & IPU_CPL_PHASE) != idev->cpl_phase)
			break;
		dma_rmb();
		if (polled && !n)
			atomic64_inc(&idev->st_lost_irqs);
		tag = le64_to_cpu(c->tag);
		status = le16_to_cpu(c->status);
		ctx = tag <= INT_MAX ? idr_find(&idev->cmd_idr, (int)tag) : NULL;
		if (ctx) {
			ipu_cmd_finish(idev, ctx, status, le32_to_cpu(c->result),
				       le64_to_cpu(c->detail));
		} else {
			/*
			 * The command it was for will never be completed: the
			 * ring cannot be trusted any more (fatal_work resets).
			 */
			dev_warn_ratelimited(&idev->pdev->dev,
					     "completion for unknown tag %#llx (status %u): resetting\n",
					     tag, status);
			atomic64_inc(&idev->st_bad_completions);
			corrupt = true;
		}
		idev->cpl_head = (idev->cpl_head + 1) % IPU_CPLQ_ENTRIES;
		if (!idev->cpl_head)
			idev->cpl_phase ^= 1;
		n++;
	}
	if (n) {
		ipu_wr(idev, IPU_REG_CPLQ_HEAD, idev->cpl_head);
		idev->last_progress = jiffies;
	}
	if (corrupt) {
		WRITE_ONCE(idev->cpl_corrupt, true);
		schedule_work(&idev->fatal_work);
	}
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
	return n;
}

/**
 * ipu_cpl_drain() - consume the command completion ring (interrupt handler)
 * @idev: the device
 *
 * Return: the number of completions consumed.
 */
unsigned int ipu_cpl_drain(struct ipu_device *idev)
{
	return __ipu_cpl_drain(idev, false);
}

/*
 * Drain the stream completion ring; returns the entries consumed.
 * polled: as for the command ring (the buffers' owners are woken here).
 */
static unsigned int __ipu_scq_drain(struct ipu_device *idev, bool polled)
{
	unsigned long flags;
	unsigned int n = 0;

	spin_lock_irqsave(&idev->sq_lock, flags);
	if (idev->inject_hang) {
		spin_unlock_irqrestore(&idev->sq_lock, flags);
		return 0;
	}
	for (;;) {
		struct ipu_hw_cpl *c = &idev->scq[idev->scq_head];
		struct ipu_stream_ring *r;
		struct ipu_stream_req *req = NULL;
		u32 stream, slot, result;
		u16 status;
		u64 tag;

		if ((READ_ONCE(c->flags) & IPU_CPL_PHASE) != idev->scq_phase)
			break;
		dma_rmb();
		if (polled && !n)
			atomic64_inc(&idev->st_lost_irqs);
		tag = le64_to_cpu(c->tag);
		status = le16_to_cpu(c->status);
		result = le32_to_cpu(c->result);
		stream = (tag >> 16) & 0xffff;
		slot = tag & 0xffff;
		if (stream < idev->nstreams && idev->streams) {
			r = &idev->streams[stream];
			if (slot < r->size && r->slots) {
				req = r->slots[slot];
				r->slots[slot] = NULL;
				if (req)
					r->inflight--;
			}
		}
		if (req) {
			list_del_init(&req->node);
			idev->stream_inflight--;
			ipu_stream_complete(idev, req,
					    status == IPU_ST_OK ? (int)result :
					    ipu_status_errno(status), status);
		} else {
			dev_warn_ratelimited(&idev->pdev->dev,
					     "stream completion for unknown tag %#llx\n", tag);
		}
		idev->scq_head = (idev->scq_head + 1) % IPU_SCQ_ENTRIES;
		if (!idev->scq_head)
			idev->scq_phase ^= 1;
		n++;
	}
	if (n) {
		ipu_wr(idev, IPU_REG_SCQ_HEAD, idev->scq_head);
		idev->last_progress = jiffies;
	}
	spin_unlock_irqrestore(&idev->sq_lock, flags);
	return n;
}

/**
 * ipu_scq_drain() - consume the stream completion ring (interrupt handler)
 * @idev: the device
 *
 * Return: the number of completions consumed.
 */
unsigned int ipu_scq_drain(struct ipu_device *idev)
{
	return __ipu_scq_drain(idev, false);
}

/**
 * ipu_cancel_all() - fail every pending command and stream buffer
 * @idev: the device, reset or removed (it will post nothing for what was in
 *        flight); the caller holds @idev->lock
 */
void ipu_cancel_all(struct ipu_device *idev)
{
	struct ipu_cmd_ctx *ctx, *tmp;
	struct ipu_stream_req *req, *rtmp;
	unsigned long flags;
	u32 s;

	/* the stream table is idev->lock's */
	lockdep_assert_held(&idev->lock);
	spin_lock_irqsave(&idev->cmd_lock, flags);
	list_for_each_entry_safe(ctx, tmp, &idev->cmd_pending, node)
		ipu_cmd_finish(idev, ctx, IPU_ST_ABORTED, 0, 0);
	idev->cmd_inflight = 0;
	spin_unlock_irqrestore(&idev->cmd_lock, flags);

	spin_lock_irqsave(&idev->sq_lock, flags);
	list_for_each_entry_safe(req, rtmp, &idev->stream_reqs, node) {
		list_del_init(&req->node);
		ipu_stream_complete(idev, req, -ECANCELED, IPU_ST_ABORTED);
	}
	idev->stream_inflight = 0;
	for (s = 0; s < idev->nstreams && idev->streams; s++) {
		struct ipu_stream_ring *r = &idev->streams[s];

		if (r->slots)
			memset(r->slots, 0, r->size * sizeof(*r->slots));
		r->inflight = 0;
		r->tail = 0;
		r->created = false;
	}
	spin_unlock_irqrestore(&idev->sq_lock, flags);
}

/*
 * A completion ring whose next entry was already posted at the previous
 * tick and is still unread: its interrupt was lost (one tick is far longer
 * than any interrupt takes).  Consume it by polling.  *seen remembers the
 * entry (1 + phase << 16 | head; 0: none) between ticks.
 */
static bool ipu_ring_lost_irq(struct ipu_device *idev, spinlock_t *lock,
			      struct ipu_hw_cpl *ring, u32 *head, u8 *phase, u32 *seen)
{
	unsigned long flags;
	u32 now = 0;

	spin_lock_irqsave(lock, flags);
	if ((READ_ONCE(ring[*head].flags) & IPU_CPL_PHASE) == *phase)
		now = 1 + ((u32)*phase << 16 | *head);
	spin_unlock_irqrestore(lock, flags);
	if (now && now == *seen) {
		*seen = 0;
		return true;
	}
	*seen = now;
	return false;
}

static void ipu_poll_lost_irqs(struct ipu_device *idev)
{
	unsigned int n;

	if (READ_ONCE(idev->inject_hang))
		return;
	if (ipu_ring_lost_irq(idev, &idev->cmd_lock, idev->cplq, &idev->cpl_head,
			      &idev->cpl_phase, &idev->wd_cpl_seen)) {
		n = __ipu_cpl_drain(idev, true);
		if (n)
			dev_warn_ratelimited(&idev->pdev->dev,
					     "%u command completion(s) without an interrupt: polled\n",
					     n);
	}
	if (ipu_ring_lost_irq(idev, &idev->sq_lock, idev->scq, &idev->scq_head,
			      &idev->scq_phase, &idev->wd_scq_seen)) {
		n = __ipu_scq_drain(idev, true);
		if (n)
			dev_warn_ratelimited(&idev->pdev->dev,
					     "%u stream completion(s) without an interrupt: polled\n",
					     n);
	}
}

/* The run the device executes now (runs complete in order), 0 if none. */
static u64 ipu_current_run(struct ipu_device *idev)
{
	unsigned long flags;
	u64 seq;

	spin_lock_irqsave(&idev->cmd_lock, flags);
	seq = idev->next_seq > idev->done_seq ? idev->done_seq + 1 : 0;
	spin_unlock_irqrestore(&idev->cmd_lock, flags);
	return seq;
}

/*
 * One watchdog look at a device with commands outstanding.  Returns why it
 * must be reset, or NULL.  idev->lock held.
 *
 * Hung: nothing completed and PROGRESS did not move for watchdog_ms, and
 * the device is not waiting for host buffers (STALLED: it waits for us).
 * Runaway: the current run has been computing (not stalled) for longer
 * than run_limit_ms, however much it progresses.
 */
static const char *ipu_watchdog_check(struct ipu_device *idev, unsigned int ms,
				      unsigned int limit)
{
	unsigned long now = jiffies;
	u32 sts = ipu_rd(idev, IPU_REG_STATUS);
	u64 seq;

	lockdep_assert_held(&idev->lock);
	if (idev->caps & IPU_CAP_PROGRESS) {
		u64 p = ipu_rd64(idev, IPU_REG_PROGRESS_LO);

		if (p != idev->wd_progress) {
			idev->wd_progress = p;
			idev->last_progress = now;
		}
	}
	if (sts & IPU_STS_STALLED)
		idev->last_progress = now;

	seq = ipu_current_run(idev);
	if (seq != idev->wd_run_seq) {
		idev->wd_run_seq = seq;
		idev->wd_run_ms = 0;
	} else if (seq && !(sts & IPU_STS_STALLED) &&
		   ipu_rd(idev, IPU_REG_PROGRAM) != U32_MAX) {
		idev->wd_run_ms += jiffies_to_msecs(now - idev->wd_tick);
	}
	idev->wd_tick = now;

	if (ms && ipu_cmds_pending(idev) &&
	    time_after(now, READ_ONCE(idev->last_progress) + msecs_to_jiffies(ms)))
		return "no progress";
	if (limit && seq && idev->wd_run_ms > limit)
		return "run over run_limit_ms";
	return NULL;
}

/**
 * ipu_watchdog_fn() - the watchdog's periodic work
 * @work: the device's watchdog work
 *
 * Polls for completions whose interrupt was lost, and resets a device
 * that is hung or runs a runaway program.
 */
void ipu_watchdog_fn(struct work_struct *work)
{
	struct ipu_device *idev = container_of(to_delayed_work(work),
					       struct ipu_device, watchdog);
	unsigned int ms = READ_ONCE(idev->watchdog_ms);
	unsigned int limit = READ_ONCE(idev->run_limit_ms);
	unsigned int period = min_not_zero(ms, limit);
	const char *why = NULL;

	if (mutex_trylock(&idev->lock)) {
		if (!idev->gone && !idev->failed &&
		    (ipu_cmds_pending(idev) || READ_ONCE(idev->stream_inflight))) {
			ipu_poll_lost_irqs(idev);
			why = ipu_watchdog_check(idev, ms, limit);
		} else {
			idev->wd_run_seq = 0;
			idev->wd_tick = jiffies;
		}
		if (why) {
			dev_warn(&idev->pdev->dev,
				 "%s (watchdog_ms %u, run %u ms of run_limit_ms %u, status %#x): watchdog reset\n",
				 why, ms, idev->wd_run_ms, limit, ipu_rd(idev, IPU_REG_STATUS));
			ipu_hw_reset(idev, IPU_RESET_REASON_WATCHDOG);
		}
		mutex_unlock(&idev->lock);
	}
	if (!READ_ONCE(idev->gone))
		schedule_delayed_work(&idev->watchdog,
				      msecs_to_jiffies(clamp(period / 4, 100u, 1000u)));
}
