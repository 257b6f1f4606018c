/*
 * QEMU emulated IPU: the command ring, the executor and completion rings.
 *
 * The fetch thread reads command entries as the guest rings CMDQ_TAIL,
 * checks their fixed fields and either acts at once (ABORT, RESET_ENGINE,
 * CREATE/DELETE_STREAM, malformed entries) or queues them for the exec
 * thread, which owns the engine and runs LOAD/WRITE/READ/RUN/NOP in order.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 * See the COPYING file in the top-level directory.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci.h"
#include "ipu_compat.h"

#include "ipu.h"
#include "ipu_link.h"
#include "trace.h"

int ipu_engine_new(IpuState *s, struct ipu_engine **out)
{
    struct ipu_engine_config cfg = {
        .num_tiles = s->tiles,
        .tile_mem = s->tile_mem,
        .workers = s->workers,
    };
    struct ipu_stream_ops ops = {
        .transfer = ipu_stream_transfer,
        .ctx = s,
    };
    char err[256];
    int rc;

    rc = ipu_engine_create(&cfg, &ops, out, err, sizeof(err));
    if (rc == 0) {
        /* PROGRESS and the hang/slow faults live in the step hook */
        ipu_engine_set_trace(*out, ipu_fault_step, s);
        ipu_engine_set_custom(*out, s->custom);
    }
    return rc;
}

/* ---------------------------------------------------------- completions */

static void ipu_cpl_to_le(struct ipu_cpl *c)
{
    c->tag = cpu_to_le64(c->tag);
    c->detail = cpu_to_le64(c->detail);
    c->result = cpu_to_le32(c->result);
    c->head = cpu_to_le16(c->head);
    c->queue = cpu_to_le16(c->queue);
    c->status = cpu_to_le16(c->status);
    c->rsvd = 0;
}

/*
 * Post one completion on `q` (the command or the stream completion ring)
 * and raise `cause`.  Waits while the ring is full.  Returns false (and
 * posts nothing) if the device was reset since `gen` or is going away.
 * Called without s->lock.
 */
bool ipu_post_cpl(IpuState *s, IpuRing *q, uint32_t cause,
                  struct ipu_cpl *cpl, uint32_t gen)
{
    QemuMutex *post_lock = &s->post_lock[q == &s->scq];
    uint64_t addr;
    uint32_t slot;
    MemTxResult r;
    bool ok = true;

    qemu_mutex_lock(post_lock);
    qemu_mutex_lock(&s->lock);
    while (!s->stopping && s->gen == gen && (s->status & IPU_STS_READY) &&
           !(s->status & IPU_STS_FATAL) &&
           (s->hung || (q->tail + 1) % q->size == q->head)) {
        qemu_cond_wait(&s->cond, &s->lock);
    }
    if (s->stopping || s->gen != gen || !(s->status & IPU_STS_READY) ||
        (s->status & IPU_STS_FATAL)) {
        qemu_mutex_unlock(&s->lock);
        qemu_mutex_unlock(post_lock);
        return false;
    }
    slot = q->tail;
    addr = q->base + (uint64_t)slot * sizeof(*cpl);
    cpl->flags = q->phase ? IPU_CPL_PHASE : 0;
    qemu_mutex_unlock(&s->lock);

    ipu_cpl_to_le(cpl);
    r = pci_dma_write(PCI_DEVICE(s), addr, cpl, sizeof(*cpl));

    qemu_mutex_lock(&s->lock);
    if (s->gen == gen) {
        if (r != MEMTX_OK) {
            s->status |= IPU_STS_FATAL;
            ipu_error_locked(s, IPU_ST_DMA_FAULT,
                             q == &s->cplq ? IPU_RING_CPLQ : IPU_RING_SCQ,
                             addr);
            ok = false;
        } else {
            q->tail = (slot + 1) % q->size;
            if (q->tail == 0) {
                q->phase ^= 1;
            }
            if (cause) {
                ipu_raise_locked(s, cause);
            }
        }
        qemu_cond_broadcast(&s->cond);
    } else {
        ok = false;
    }
    qemu_mutex_unlock(&s->lock);
    qemu_mutex_unlock(post_lock);
    return ok;
}

static void ipu_complete(IpuState *s, const IpuQueued *e, uint32_t status,
                         uint32_t result, uint64_t detail, uint32_t gen)
{
    struct ipu_cpl c = {
        .tag = e->cmd.tag,
        .detail = detail,
        .result = result,
        .head = e->head,
        .queue = 0,
        .status = status,
        .opcode = e->cmd.opcode,
    };

    uint32_t cause = IPU_INT_CPL;

    trace_ipu_cmd_complete(e->cmd.tag, e->cmd.opcode, status, result);
    if (e->fault == IPU_FAULT_DROP_IRQ) {
        cause = 0;
    } else if (e->fault == IPU_FAULT_CORRUPT_CPL) {
        c.tag = ~c.tag;
    }
    if (ipu_post_cpl(s, &s->cplq, cause, &c, gen)) {
        qemu_mutex_lock(&s->lock);
        if (s->gen == gen) {
            s->cnt[IPU_CNT_COMMANDS]++;
        }
        qemu_mutex_unlock(&s->lock);
    }
}

/* Complete a command with an error: latch it, raise the error vector. */
static void ipu_fail(IpuState *s, const IpuQueued *e, uint32_t status,
                     uint32_t result, uint64_t detail, uint32_t gen)
{
    qemu_mutex_lock(&s->lock);
    if (s->gen == gen) {
        ipu_error_locked(s, status, result, detail);
    }
    qemu_mutex_unlock(&s->lock);
    ipu_complete(s, e, status, result, detail, gen);
}

/* --------------------------------------------------------------- fetch */

static void ipu_cmd_from_le(struct ipu_cmd *c)
{
    int i;

    c->rsvd0 = le16_to_cpu(c->rsvd0);
    c->arg0 = le32_to_cpu(c->arg0);
    c->tag = le64_to_cpu(c->tag);
    c->addr = le64_to_cpu(c->addr);
    c->len = le32_to_cpu(c->len);
    c->sg_count = le32_to_cpu(c->sg_count);
    c->arg1 = le32_to_cpu(c->arg1);
    for (i = 0; i < ARRAY_SIZE(c->rsvd1); i++) {
        c->rsvd1[i] = le32_to_cpu(c->rsvd1[i]);
    }
}

static bool ipu_cmd_reserved_ok(const struct ipu_cmd *c)
{
    int i;

    if (c->rsvd0) {
        return false;
    }
    for (i = 0; i < ARRAY_SIZE(c->rsvd1); i++) {
        if (c->rsvd1[i]) {
            return false;
        }
    }
    switch (c->opcode) {
    case IPU_CMD_LOAD_EXE:
    case IPU_CMD_WRITE_TENSOR:
    case IPU_CMD_READ_TENSOR:
        return (c->flags & ~IPU_F_DIRECT) == 0;
    default:
        return c->flags == 0;
    }
}

/* Queue for the executor (s->lock held; the caller checked for room). */
static void ipu_enqueue_locked(IpuState *s, const IpuQueued *e)
{
    s->queue[(s->q_head + s->q_count) % IPU_QUEUE_CAP] = *e;
    s->q_count++;
    qemu_cond_broadcast(&s->cond);
}

/* ABORT / RESET_ENGINE: cancel everything queued and the running program. */
static void ipu_abort_locked(IpuState *s)
{
    uint32_t i;

    for (i = 0; i < s->q_count; i++) {
        IpuQueued *q = &s->queue[(s->q_head + i) % IPU_QUEUE_CAP];

        if (q->op == IPU_OP_CMD) {
            q->cancelled = true;
        }
    }
    if (s->run_active && s->engine) {
        ipu_engine_abort(s->engine);
    }
    s->abort_pending = true;
    ipu_link_cancel_locked(s, false);
    qemu_cond_broadcast(&s->cond);
}

void *ipu_fetch_thread(void *opaque)
{
    IpuState *s = opaque;
    IpuQueued e;
    uint32_t gen, idx, st, detail;
    uint64_t addr, fault;
    MemTxResult r;

    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (!(s->status & IPU_STS_READY) || (s->status & IPU_STS_FATAL) ||
            s->hung || s->cmdq.head == s->cmdq.tail ||
            s->q_count >= IPU_QUEUE_CAP - 1) {
            qemu_cond_wait(&s->cond, &s->lock);
            continue;
        }
        gen = s->gen;
        idx = s->cmdq.head;
        addr = s->cmdq.base + (uint64_t)idx * sizeof(struct ipu_cmd);
        qemu_mutex_unlock(&s->lock);

        memset(&e, 0, sizeof(e));
        r = pci_dma_read(PCI_DEVICE(s), addr, &e.cmd, sizeof(e.cmd));
        ipu_cmd_from_le(&e.cmd);
        trace_ipu_cmd_fetch(idx, e.cmd.opcode, e.cmd.tag);

        qemu_mutex_lock(&s->lock);
        if (s->gen != gen || s->stopping) {
            continue;
        }
        if (r != MEMTX_OK) {
            s->status |= IPU_STS_FATAL;
            ipu_error_locked(s, IPU_ST_DMA_FAULT, IPU_RING_CMDQ, addr);
            continue;
        }
        s->cmdq.head = (idx + 1) % s->cmdq.size;
        e.head = s->cmdq.head;
        e.op = IPU_OP_CMD;
        e.fault = ipu_fault_match_locked(s, &e.cmd);
        if (e.fault == IPU_FAULT_HANG) {
            continue;
        }

        st = IPU_ST_OK;
        detail = 0;
        fault = 0;
        if (e.cmd.opcode > IPU_CMD_MAX) {
            st = IPU_ST_INVALID_OPCODE;
        } else if (!ipu_cmd_reserved_ok(&e.cmd)) {
            st = IPU_ST_INVALID_FIELD;
        }
        if (st == IPU_ST_OK) {
            switch (e.cmd.opcode) {
            case IPU_CMD_ABORT:
                ipu_abort_locked(s);
                e.op = IPU_OP_ABORT_DONE;
                ipu_enqueue_locked(s, &e);
                continue;
            case IPU_CMD_RESET_ENGINE:
                ipu_abort_locked(s);
                e.op = IPU_OP_ENGINE_RESET;
                ipu_enqueue_locked(s, &e);
                continue;
            case IPU_CMD_CREATE_STREAM:
                st = ipu_stream_create_locked(s, e.cmd.arg0, e.cmd.addr,
                                              e.cmd.len, &fault);
                detail = e.cmd.arg0;
                break;
            case IPU_CMD_DELETE_STREAM:
                st = ipu_stream_delete_locked(s, e.cmd.arg0);
                detail = e.cmd.arg0;
                break;
            default:
                ipu_enqueue_locked(s, &e);
                continue;
            }
        }
        if (e.fault == IPU_FAULT_DMA) {
            /* nothing to transfer here: the next data DMA fails instead */
            qatomic_set(&s->fault_dma, true);
        }
        qemu_mutex_unlock(&s->lock);
        /* completed here: malformed entries and stream ring management */
        if (st == IPU_ST_OK) {
            ipu_complete(s, &e, st, 0, 0, gen);
        } else {
            ipu_fail(s, &e, st, detail, e.cmd.addr, gen);
        }
        qemu_mutex_lock(&s->lock);
    }
    qemu_mutex_unlock(&s->lock);
    return NULL;
}

/* ------------------------------------------------------------- execute */

/* Map an engine error of a RUN to a completion status. */
static uint32_t ipu_run_status(int rc)
{
    switch (rc) {
    case IPU_OK:
        return IPU_ST_OK;
    case IPU_E_NOT_LOADED:
        return IPU_ST_NOT_LOADED;
    case IPU_E_PROGRAM:
        return IPU_ST_BAD_PROGRAM;
    case IPU_E_CANCELLED:
        return IPU_ST_ABORTED;
    case IPU_E_STREAM:
        return IPU_ST_STREAM_ERROR;
    case IPU_E_FAULT:
        return IPU_ST_FAULT;
    case IPU_E_NOMEM:
        return IPU_ST_NO_MEMORY;
    default:
        return IPU_ST_ENGINE;
    }
}

static void ipu_exec_load(IpuState *s, IpuQueued *e, uint32_t gen)
{
    struct ipu_cmd *c = &e->cmd;
    struct ipu_xfer_seg seg;
    uint32_t detail = 0;
    uint64_t fault = 0;
    char err[256];
    uint8_t *img;
    int st, rc;

    if (c->len == 0 || c->len > IPU_MAX_IMAGE_BYTES) {
        ipu_fail(s, e, IPU_ST_TOO_LARGE, c->len, c->addr, gen);
        return;
    }
    img = g_try_malloc(c->len);
    if (!img) {
        ipu_fail(s, e, IPU_ST_NO_MEMORY, c->len, 0, gen);
        return;
    }
    seg.ptr = img;
    seg.len = c->len;
    st = ipu_sg_dma(s, c->addr, c->sg_count, c->flags, c->len, &seg, 1,
                    c->len, true, gen, &detail, &fault);
    if (st != IPU_ST_OK) {
        g_free(img);
        ipu_fail(s, e, st, detail, fault, gen);
        return;
    }
    /* the pairs this member sends on named the streams of the last one */
    qemu_mutex_lock(&s->lock);
    ipu_link_cancel_locked(s, true);
    qemu_mutex_unlock(&s->lock);
    rc = ipu_engine_load(s->engine, img, c->len, err, sizeof(err));
    trace_ipu_load(c->len, rc);
    if (rc) {
        qemu_log_mask(LOG_GUEST_ERROR, "ipu: executable refused: %s\n", err);
    }
    g_free(img);
    qemu_mutex_lock(&s->lock);
    s->loaded = rc == 0;
    qemu_mutex_unlock(&s->lock);
    if (rc == 0) {
        struct ipu_exe_info info;

        ipu_engine_exe_info(s->engine, &info);
        ipu_complete(s, e, IPU_ST_OK, info.num_programs,
                     ((uint64_t)info.num_streams << 32) | info.num_tiles, gen);
    } else if (rc == IPU_E_NOMEM) {
        ipu_fail(s, e, IPU_ST_NO_MEMORY, (uint32_t)rc, 0, gen);
    } else {
        ipu_fail(s, e, IPU_ST_EXE_INVALID, (uint32_t)rc, 0, gen);
    }
}

static void ipu_exec_tensor(IpuState *s, IpuQueued *e, uint32_t gen,
                            bool write)
{
    struct ipu_cmd *c = &e->cmd;
    struct ipu_xfer_seg seg;
    uint32_t detail = 0;
    uint64_t fault = 0;
    uint8_t *buf;
    int st, rc;

    if (c->arg0 >= s->tiles || c->len == 0 || c->len > s->tile_mem ||
        c->arg1 > s->tile_mem - c->len) {
        ipu_fail(s, e, IPU_ST_RANGE, c->arg0, c->arg1, gen);
        return;
    }
    if (!s->loaded) {
        ipu_fail(s, e, IPU_ST_NOT_LOADED, 0, 0, gen);
        return;
    }
    buf = g_try_malloc(c->len);
    if (!buf) {
        ipu_fail(s, e, IPU_ST_NO_MEMORY, c->len, 0, gen);
        return;
    }
    seg.ptr = buf;
    seg.len = c->len;
    if (write) {
        st = ipu_sg_dma(s, c->addr, c->sg_count, c->flags, c->len, &seg, 1,
                        c->len, true, gen, &detail, &fault);
        if (st == IPU_ST_OK) {
            rc = ipu_engine_write(s->engine, c->arg0, c->arg1, buf, c->len);
            if (rc) {
                /* outside the loaded executable's tiles */
                st = IPU_ST_RANGE;
                detail = c->arg0;
                fault = c->arg1;
            }
        }
    } else {
        rc = ipu_engine_read(s->engine, c->arg0, c->arg1, buf, c->len);
        if (rc) {
            st = IPU_ST_RANGE;
            detail = c->arg0;
            fault = c->arg1;
        } else {
            st = ipu_sg_dma(s, c->addr, c->sg_count, c->flags, c->len, &seg,
                            1, c->len, false, gen, &detail, &fault);
        }
    }
    g_free(buf);
    if (st == IPU_ST_OK) {
        ipu_complete(s, e, IPU_ST_OK, c->len, 0, gen);
    } else {
        ipu_fail(s, e, st, detail, fault, gen);
    }
}

static void ipu_exec_run(IpuState *s, IpuQueued *e, uint32_t gen)
{
    struct ipu_engine_counters c0, c1;
    char err[256];
    uint32_t st;
    int rc;

    ipu_engine_counters(s->engine, &c0);
    err[0] = 0;
    rc = ipu_engine_run(s->engine, e->cmd.arg0, err, sizeof(err));
    trace_ipu_run(e->cmd.arg0, rc);
    ipu_engine_counters(s->engine, &c1);

    qemu_mutex_lock(&s->lock);
    if (s->gen == gen) {
        if (rc == 0) {
            s->cnt[IPU_CNT_PROGRAMS]++;
        }
        s->cnt[IPU_CNT_CYCLES] += c1.cycles - c0.cycles;
        s->cnt[IPU_CNT_COMPUTE_CYC] += c1.compute_cycles - c0.compute_cycles;
        s->cnt[IPU_CNT_EXCH_BYTES] += c1.exchange_bytes - c0.exchange_bytes;
    }
    qemu_mutex_unlock(&s->lock);

    st = ipu_run_status(rc);
    if (st == IPU_ST_OK) {
        ipu_complete(s, e, IPU_ST_OK, 0, c1.cycles - c0.cycles, gen);
    } else if (st == IPU_ST_ABORTED) {
        /* not a device error: the guest asked for it */
        ipu_complete(s, e, st, (uint32_t)rc, c1.cycles - c0.cycles, gen);
    } else {
        ipu_fail(s, e, st, (uint32_t)rc, e->cmd.arg0, gen);
    }
}

static void ipu_exec_link(IpuState *s, IpuQueued *e, uint32_t gen)
{
    const struct ipu_cmd *c = &e->cmd;
    uint32_t detail, st;

    st = ipu_link_stream(s, c->arg0, c->arg1 >> 16, c->arg1 & 0xffff, c->len,
                         &detail);
    if (st == IPU_ST_OK) {
        ipu_complete(s, e, IPU_ST_OK, c->len, 0, gen);
    } else {
        ipu_fail(s, e, st, detail, c->arg1, gen);
    }
}

static void ipu_exec_engine_reset(IpuState *s)
{
    struct ipu_engine *ne = NULL;

    ipu_engine_destroy(s->engine);
    s->engine = NULL;
    /* the pairs this member sends on named streams of that executable */
    qemu_mutex_lock(&s->lock);
    ipu_link_cancel_locked(s, true);
    qemu_mutex_unlock(&s->lock);
    if (ipu_engine_new(s, &ne) == 0) {
        s->engine = ne;
    }
    qemu_mutex_lock(&s->lock);
    s->loaded = false;
    qemu_mutex_unlock(&s->lock);
}

static void ipu_exec_one(IpuState *s, IpuQueued *e, uint32_t gen)
{
    if (!s->engine && e->op == IPU_OP_CMD && e->cmd.opcode != IPU_CMD_NOP) {
        ipu_fail(s, e, IPU_ST_NO_MEMORY, 0, 0, gen);
        return;
    }
    switch (e->op) {
    case IPU_OP_ABORT_DONE:
    case IPU_OP_ENGINE_RESET:
        /* everything before it has stopped: hand the buffers back */
        ipu_streams_flush(s, gen);
        if (e->op == IPU_OP_ENGINE_RESET) {
            ipu_exec_engine_reset(s);
        } else if (s->engine) {
            ipu_engine_clear_abort(s->engine);
        }
        qemu_mutex_lock(&s->lock);
        if (s->gen == gen) {
            s->abort_pending = false;
        }
        qemu_mutex_unlock(&s->lock);
        ipu_complete(s, e, s->engine ? IPU_ST_OK : IPU_ST_NO_MEMORY, 0, 0,
                     gen);
        return;
    default:
        break;
    }
    switch (e->cmd.opcode) {
    case IPU_CMD_NOP:
        ipu_complete(s, e, IPU_ST_OK, 0, 0, gen);
        break;
    case IPU_CMD_LOAD_EXE:
        ipu_exec_load(s, e, gen);
        break;
    case IPU_CMD_WRITE_TENSOR:
        ipu_exec_tensor(s, e, gen, true);
        break;
    case IPU_CMD_READ_TENSOR:
        ipu_exec_tensor(s, e, gen, false);
        break;
    case IPU_CMD_RUN:
        ipu_exec_run(s, e, gen);
        break;
    case IPU_CMD_LINK_STREAM:
        ipu_exec_link(s, e, gen);
        break;
    default:
        ipu_fail(s, e, IPU_ST_INVALID_OPCODE, 0, 0, gen);
        break;
    }
}

void *ipu_exec_thread(void *opaque)
{
    IpuState *s = opaque;
    IpuQueued e;
    uint32_t gen;

    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (s->reset_pending) {
            qemu_mutex_unlock(&s->lock);
            ipu_exec_engine_reset(s);
            /*
             * A completion write the fetcher started before the reset
             * must land before RESETTING clears.
             */
            qemu_mutex_lock(&s->post_lock[0]);
            qemu_mutex_unlock(&s->post_lock[0]);
            qemu_mutex_lock(&s->post_lock[1]);
            qemu_mutex_unlock(&s->post_lock[1]);
            qemu_mutex_lock(&s->lock);
            ipu_finish_reset(s);
            continue;
        }
        if (s->q_count == 0 || s->hung) {
            qemu_cond_wait(&s->cond, &s->lock);
            continue;
        }
        e = s->queue[s->q_head];
        s->q_head = (s->q_head + 1) % IPU_QUEUE_CAP;
        s->q_count--;
        gen = s->gen;
        qemu_cond_broadcast(&s->cond);       /* room for the fetcher */
        if (e.cancelled) {
            qemu_mutex_unlock(&s->lock);
            ipu_complete(s, &e, IPU_ST_ABORTED, 0, 0, gen);
            qemu_mutex_lock(&s->lock);
            continue;
        }
        s->running = true;
        s->run_active = e.op == IPU_OP_CMD && e.cmd.opcode == IPU_CMD_RUN;
        if (s->run_active) {
            s->cur_program = e.cmd.arg0;
        }
        s->status |= IPU_STS_BUSY;
        if (e.fault == IPU_FAULT_DMA) {
            qatomic_set(&s->fault_dma, true);
        } else if (e.fault == IPU_FAULT_SLOW) {
            qatomic_set(&s->slow_ms, s->fault_arg);
        }
        qemu_mutex_unlock(&s->lock);

        ipu_exec_one(s, &e, gen);

        qemu_mutex_lock(&s->lock);
        if (s->gen == gen) {
            qatomic_set(&s->slow_ms, 0);
        }
        s->running = false;
        s->run_active = false;
        s->cur_program = UINT32_MAX;
        s->status &= ~IPU_STS_BUSY;
        qemu_cond_broadcast(&s->cond);
    }
    qemu_mutex_unlock(&s->lock);
    return NULL;
}
