/*
 * QEMU emulated IPU: stream descriptor rings and scatter-gather DMA.
 *
 * When a running program's StreamCopy needs a host buffer, the engine calls
 * ipu_stream_transfer() (in the exec thread or one of its workers).  It
 * takes the next descriptor of that stream's ring, waiting for a doorbell
 * if there is none, moves the data between the guest's SG list and the
 * engine's tile segments with pci_dma_read/pci_dma_write, and posts a
 * completion on the stream completion ring.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 * See the COPYING file in the top-level directory.
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/host-utils.h"
#include "hw/pci/pci.h"
#include "ipu_compat.h"

#include "ipu.h"
#include "ipu_link.h"
#include "trace.h"

bool ipu_ring_config_ok(IpuState *s, const IpuRing *r, uint32_t entry_size,
                        bool device_writes)
{
    uint64_t bytes;

    if (r->size < IPU_MIN_RING_ENTRIES || r->size > IPU_MAX_RING_ENTRIES ||
        !is_power_of_2(r->size) || (r->base % IPU_RING_ALIGN)) {
        return false;
    }
    bytes = (uint64_t)r->size * entry_size;
    if (r->base + bytes < r->base) {
        return false;
    }
    return dma_memory_valid(pci_get_address_space(PCI_DEVICE(s)), r->base,
                            bytes, device_writes ? DMA_DIRECTION_FROM_DEVICE :
                            DMA_DIRECTION_TO_DEVICE, MEMTXATTRS_UNSPECIFIED);
}

/* ------------------------------------------------------------ SG lists */

typedef struct IpuPiece {
    uint64_t addr;
    uint32_t len;
} IpuPiece;

/*
 * Move `bytes` bytes between the guest buffer described by (addr,
 * sg_count, flags, len) and the host segments `segs`, towards the device
 * (to_device) or towards the guest.  The whole SG list is copied and
 * checked before any data moves.  Stops (IPU_ST_ABORTED) between two
 * pieces if the device was reset since `gen`.  Returns an IPU_ST_* code;
 * on error *detail and *fault_addr say what and where.
 */
int ipu_sg_dma(IpuState *s, uint64_t addr, uint32_t sg_count, uint32_t flags,
               uint32_t len, const struct ipu_xfer_seg *segs, uint32_t nsegs,
               uint32_t bytes, bool to_device, uint32_t gen,
               uint32_t *detail, uint64_t *fault_addr)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    g_autofree IpuPiece *pieces = NULL;
    g_autofree struct ipu_sg *list = NULL;
    IpuPiece one;
    uint32_t npieces, i, pi = 0, si = 0, poff = 0, soff = 0;
    uint64_t sum = 0;

    *detail = 0;
    *fault_addr = addr;
    if (flags & IPU_F_DIRECT) {
        if (sg_count != 0) {
            *detail = IPU_SGE_DIRECT;
            return IPU_ST_BAD_SG;
        }
        if (addr + len < addr) {
            *detail = IPU_SGE_OVERFLOW;
            return IPU_ST_BAD_SG;
        }
        one.addr = addr;
        one.len = len;
        npieces = 1;
    } else {
        if (addr % IPU_SG_ALIGN) {
            *detail = IPU_SGE_ALIGN;
            return IPU_ST_BAD_SG;
        }
        if (sg_count == 0 || sg_count > IPU_MAX_SG_ENTRIES) {
            *detail = IPU_SGE_COUNT;
            return IPU_ST_BAD_SG;
        }
        if (addr + (uint64_t)sg_count * sizeof(struct ipu_sg) < addr) {
            *detail = IPU_SGE_OVERFLOW;
            return IPU_ST_BAD_SG;
        }
        list = g_try_new(struct ipu_sg, sg_count);
        pieces = g_try_new(IpuPiece, sg_count);
        if (!list || !pieces) {
            return IPU_ST_NO_MEMORY;
        }
        if (pci_dma_read(pdev, addr, list,
                         (dma_addr_t)sg_count * sizeof(*list)) != MEMTX_OK) {
            return IPU_ST_DMA_FAULT;
        }
        for (i = 0; i < sg_count; i++) {
            uint64_t a = le64_to_cpu(list[i].addr);
            uint32_t l = le32_to_cpu(list[i].len);

            *fault_addr = addr + (uint64_t)i * sizeof(*list);
            if (list[i].rsvd) {
                *detail = IPU_SGE_RESERVED;
                return IPU_ST_BAD_SG;
            }
            if (l == 0) {
                *detail = IPU_SGE_ZERO_LEN;
                return IPU_ST_BAD_SG;
            }
            if (a + l < a) {
                *detail = IPU_SGE_OVERFLOW;
                return IPU_ST_BAD_SG;
            }
            sum += l;
            if (sum > len) {
                *detail = IPU_SGE_SUM;
                return IPU_ST_BAD_SG;
            }
            pieces[i].addr = a;
            pieces[i].len = l;
        }
        if (sum != len) {
            *detail = IPU_SGE_SUM;
            *fault_addr = addr;
            return IPU_ST_BAD_SG;
        }
        npieces = sg_count;
    }

    /* walk both lists */
    while (bytes > 0) {
        const IpuPiece *p;
        uint32_t n;
        MemTxResult r;

        if (pi >= npieces || si >= nsegs) {
            /* callers guarantee len >= bytes and segs >= bytes */
            *fault_addr = addr;
            return IPU_ST_LENGTH;
        }
        p = pieces ? &pieces[pi] : &one;
        n = MIN(p->len - poff, segs[si].len - soff);
        n = MIN(n, bytes);
        if (qatomic_read(&s->gen) != gen) {
            return IPU_ST_ABORTED;
        }
        if (n > 0 && ipu_fault_take_dma(s)) {
            trace_ipu_fault_dma(p->addr + poff);
            qemu_log_mask(LOG_GUEST_ERROR, "ipu: injected DMA failure at "
                          "0x%" PRIx64 "\n", p->addr + poff);
            *fault_addr = p->addr + poff;
            return IPU_ST_DMA_FAULT;
        }
        if (n > 0) {
            if (to_device) {
                r = pci_dma_read(pdev, p->addr + poff, segs[si].ptr + soff, n);
            } else {
                r = pci_dma_write(pdev, p->addr + poff, segs[si].ptr + soff, n);
            }
            trace_ipu_dma(p->addr + poff, n, to_device, r);
            if (r != MEMTX_OK) {
                *fault_addr = p->addr + poff;
                return IPU_ST_DMA_FAULT;
            }
        }
        poff += n;
        soff += n;
        bytes -= n;
        if (poff == p->len) {
            pi++;
            poff = 0;
        }
        if (soff == segs[si].len) {
            si++;
            soff = 0;
        }
    }
    return IPU_ST_OK;
}

/* --------------------------------------------------------- stream rings */

uint32_t ipu_stream_create_locked(IpuState *s, uint32_t stream,
                                  uint64_t base, uint32_t entries,
                                  uint64_t *fault_addr)
{
    IpuStreamRing *sr;
    IpuRing r = { .base = base, .size = entries };

    *fault_addr = base;
    if (stream >= IPU_MAX_STREAMS || s->streams[stream].active) {
        return IPU_ST_BAD_STREAM;
    }
    if (!ipu_ring_config_ok(s, &r, sizeof(struct ipu_stream_desc), false)) {
        return IPU_ST_RING_CONFIG;
    }
    sr = &s->streams[stream];
    sr->active = true;
    sr->seq++;
    sr->r = r;
    qemu_cond_broadcast(&s->cond);
    return IPU_ST_OK;
}

uint32_t ipu_stream_delete_locked(IpuState *s, uint32_t stream)
{
    IpuStreamRing *sr;

    if (stream >= IPU_MAX_STREAMS || !s->streams[stream].active) {
        return IPU_ST_BAD_STREAM;
    }
    sr = &s->streams[stream];
    sr->active = false;
    sr->seq++;
    memset(&sr->r, 0, sizeof(sr->r));
    qemu_cond_broadcast(&s->cond);
    return IPU_ST_OK;
}

static void ipu_desc_from_le(struct ipu_stream_desc *d)
{
    d->addr = le64_to_cpu(d->addr);
    d->len = le32_to_cpu(d->len);
    d->sg_count = le32_to_cpu(d->sg_count);
    d->tag = le64_to_cpu(d->tag);
    d->flags = le32_to_cpu(d->flags);
    d->rsvd = le32_to_cpu(d->rsvd);
}

/*
 * Consume the descriptor at the head of `stream` (whose ring was snapshot
 * as `seq`, `snap`): advance the head and post its completion.  Returns
 * false if the ring changed meanwhile (reset, delete).
 */
static bool ipu_stream_consume(IpuState *s, uint32_t stream, uint32_t seq,
                               uint32_t gen, const IpuRing *snap,
                               struct ipu_cpl *cpl)
{
    IpuStreamRing *sr = &s->streams[stream];

    qemu_mutex_lock(&s->lock);
    if (s->gen != gen || !sr->active || sr->seq != seq ||
        sr->r.head != snap->head) {
        qemu_mutex_unlock(&s->lock);
        return false;
    }
    sr->r.head = (snap->head + 1) % snap->size;
    cpl->head = sr->r.head;
    cpl->queue = stream;
    s->cnt[IPU_CNT_DESCS]++;
    if (cpl->status != IPU_ST_OK && cpl->status != IPU_ST_ABORTED) {
        ipu_error_locked(s, cpl->status, cpl->result, cpl->detail);
    }
    qemu_cond_broadcast(&s->cond);
    qemu_mutex_unlock(&s->lock);
    return ipu_post_cpl(s, &s->scq, IPU_INT_SCPL, cpl, gen);
}

int ipu_stream_transfer(void *ctx, uint32_t stream, uint32_t dir,
                        const struct ipu_stream_seg *segs, uint32_t nsegs,
                        uint32_t total_bytes, int *stalled)
{
    IpuState *s = ctx;
    IpuStreamRing *sr;
    IpuRing snap;
    struct ipu_stream_desc d;
    struct ipu_cpl cpl;
    g_autofree struct ipu_xfer_seg *xs = NULL;
    uint32_t gen, seq, i, st = IPU_ST_OK, detail = 0;
    uint64_t desc_addr, fault = 0;
    int64_t t0 = 0;
    bool waited = false;
    int rc;

    trace_ipu_stream_transfer(stream, dir, total_bytes);
    /* a linked stream: to or from a peer device, no descriptor */
    if (ipu_link_transfer(s, stream, dir, segs, nsegs, total_bytes, stalled,
                          &rc)) {
        return rc;
    }
    if (stream >= IPU_MAX_STREAMS) {
        ipu_error(s, IPU_ST_BAD_STREAM, IPU_RING_STREAM,
                  (uint64_t)stream << 32);
        return IPU_E_STREAM;
    }
    sr = &s->streams[stream];

    qemu_mutex_lock(&s->lock);
    gen = s->gen;
    for (;;) {
        if (s->stopping || s->abort_pending || s->reset_pending ||
            s->gen != gen) {
            if (waited) {
                s->status &= ~IPU_STS_STALLED;
                s->stall_stream = UINT32_MAX;
            }
            qemu_mutex_unlock(&s->lock);
            return IPU_E_CANCELLED;
        }
        if (s->hung) {
            /* a hung device is not waiting for the host */
            if (waited) {
                s->status &= ~IPU_STS_STALLED;
                s->stall_stream = UINT32_MAX;
            }
            ipu_fault_wait_hung_locked(s, gen);
            continue;
        }
        if (sr->active && sr->r.head != sr->r.tail &&
            !(s->status & IPU_STS_FATAL)) {
            break;
        }
        if (!waited) {
            waited = true;
            trace_ipu_stream_stall(stream);
            *stalled = 1;
            t0 = g_get_monotonic_time();
        }
        s->status |= IPU_STS_STALLED;
        s->stall_stream = stream;
        qemu_cond_wait(&s->cond, &s->lock);
    }
    if (waited) {
        s->status &= ~IPU_STS_STALLED;
        s->stall_stream = UINT32_MAX;
        s->cnt[IPU_CNT_STALLS]++;
        s->cnt[IPU_CNT_STALL_NS] += (g_get_monotonic_time() - t0) * 1000;
    }
    snap = sr->r;
    seq = sr->seq;
    qemu_mutex_unlock(&s->lock);

    desc_addr = snap.base + (uint64_t)snap.head * sizeof(d);
    memset(&cpl, 0, sizeof(cpl));
    cpl.opcode = dir;
    if (pci_dma_read(PCI_DEVICE(s), desc_addr, &d, sizeof(d)) != MEMTX_OK) {
        /* the ring itself went bad: the stream cannot be used any more */
        qemu_mutex_lock(&s->lock);
        if (s->gen == gen) {
            s->status |= IPU_STS_FATAL;
            ipu_error_locked(s, IPU_ST_DMA_FAULT, IPU_RING_STREAM, desc_addr);
        }
        qemu_mutex_unlock(&s->lock);
        return IPU_E_STREAM;
    }
    ipu_desc_from_le(&d);
    cpl.tag = d.tag;

    if (d.rsvd || (d.flags & ~IPU_F_DIRECT)) {
        st = IPU_ST_INVALID_FIELD;
        fault = desc_addr;
    } else if (dir == IPUX_STREAM_H2D ? d.len != total_bytes :
               d.len < total_bytes) {
        st = IPU_ST_LENGTH;
        detail = total_bytes;
        fault = d.len;
    } else {
        xs = g_new(struct ipu_xfer_seg, nsegs ? nsegs : 1);
        for (i = 0; i < nsegs; i++) {
            xs[i].ptr = segs[i].ptr;
            xs[i].len = segs[i].len;
        }
        st = ipu_sg_dma(s, d.addr, d.sg_count, d.flags, d.len, xs, nsegs,
                        total_bytes, dir == IPUX_STREAM_H2D, gen, &detail,
                        &fault);
    }

    cpl.status = st;
    if (st == IPU_ST_OK) {
        cpl.result = total_bytes;
        qemu_mutex_lock(&s->lock);
        if (s->gen == gen) {
            s->cnt[dir == IPUX_STREAM_H2D ? IPU_CNT_STREAM_IN :
                   IPU_CNT_STREAM_OUT] += total_bytes;
        }
        qemu_mutex_unlock(&s->lock);
    } else {
        cpl.result = detail;
        cpl.detail = fault;
    }
    if (!ipu_stream_consume(s, stream, seq, gen, &snap, &cpl)) {
        /* reset or unplug: cancelled; the ring was deleted: failed */
        return qatomic_read(&s->gen) != gen || s->stopping ?
               IPU_E_CANCELLED : IPU_E_STREAM;
    }
    return st == IPU_ST_OK ? 0 : IPU_E_STREAM;
}

/*
 * Complete every queued descriptor of every stream with IPU_ST_ABORTED
 * (exec thread, after an ABORT stopped the program).
 */
void ipu_streams_flush(IpuState *s, uint32_t gen)
{
    uint32_t id, seq;
    IpuRing snap;
    struct ipu_stream_desc d;
    struct ipu_cpl cpl;
    uint64_t desc_addr;

    for (id = 0; id < IPU_MAX_STREAMS; id++) {
        for (;;) {
            IpuStreamRing *sr = &s->streams[id];

            qemu_mutex_lock(&s->lock);
            if (s->gen != gen || !sr->active || sr->r.head == sr->r.tail ||
                (s->status & IPU_STS_FATAL)) {
                qemu_mutex_unlock(&s->lock);
                break;
            }
            snap = sr->r;
            seq = sr->seq;
            qemu_mutex_unlock(&s->lock);

            desc_addr = snap.base + (uint64_t)snap.head * sizeof(d);
            memset(&cpl, 0, sizeof(cpl));
            cpl.opcode = 0xff;
            cpl.status = IPU_ST_ABORTED;
            if (pci_dma_read(PCI_DEVICE(s), desc_addr, &d, sizeof(d)) ==
                MEMTX_OK) {
                ipu_desc_from_le(&d);
                cpl.tag = d.tag;
            } else {
                cpl.status = IPU_ST_DMA_FAULT;
                cpl.detail = desc_addr;
            }
            if (!ipu_stream_consume(s, id, seq, gen, &snap, &cpl)) {
                break;
            }
        }
    }
}
