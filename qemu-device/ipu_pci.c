/*
 * QEMU emulated IPU: the PCI function, BAR0 registers, interrupts, reset.
 *
 * The register, ring and command contract is in ipu_regs.h and
 * Documentation/device/pci.md of the IPU project.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 * See the COPYING file in the top-level directory.
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "ipu_compat.h"

#include "ipu.h"
#include "ipu_link.h"
#include "trace.h"

static uint32_t ipu_instances;

/* ---------------------------------------------------------------- irqs */

static unsigned ipu_cause_vector(uint32_t cause)
{
    switch (cause) {
    case IPU_INT_CPL:
        return IPU_VEC_CPL;
    case IPU_INT_SCPL:
        return IPU_VEC_SCPL;
    default:
        return IPU_VEC_ERROR;
    }
}

/* Latch interrupt cause(s) and have the BH signal them (s->lock held). */
void ipu_raise_locked(IpuState *s, uint32_t cause)
{
    trace_ipu_irq_raise(cause, s->int_mask);
    s->int_cause |= cause;
    if (cause & ~s->int_mask) {
        s->irq_pending |= cause & ~s->int_mask;
        qemu_bh_schedule(s->irq_bh);
    }
}

static void ipu_update_intx(IpuState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    bool level;

    qemu_mutex_lock(&s->lock);
    level = (s->int_cause & ~s->int_mask) != 0;
    qemu_mutex_unlock(&s->lock);
    trace_ipu_irq_intx(!msix_enabled(pdev) && level);
    pci_set_irq(pdev, !msix_enabled(pdev) && level);
}

/* Main loop, BQL held. */
static void ipu_irq_bh(void *opaque)
{
    IpuState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t pend;
    int i;

    qemu_mutex_lock(&s->lock);
    pend = s->irq_pending;
    s->irq_pending = 0;
    qemu_mutex_unlock(&s->lock);

    if (msix_enabled(pdev)) {
        for (i = 0; i < 3; i++) {
            if (pend & (1u << i)) {
                trace_ipu_irq_msix(ipu_cause_vector(1u << i));
                msix_notify(pdev, ipu_cause_vector(1u << i));
            }
        }
    }
    ipu_update_intx(s);
}

/* Record an error in ERR_* and raise the error interrupt (s->lock held). */
static const char *ipu_status_name(uint32_t code)
{
    static const char *const names[IPU_ST_COUNT] = {
        [IPU_ST_OK] = "ok",
        [IPU_ST_INVALID_OPCODE] = "invalid opcode",
        [IPU_ST_INVALID_FIELD] = "reserved field or unknown flag set",
        [IPU_ST_DMA_FAULT] = "guest address not accessible",
        [IPU_ST_BAD_SG] = "malformed scatter-gather list",
        [IPU_ST_TOO_LARGE] = "length over a device limit",
        [IPU_ST_EXE_INVALID] = "executable refused by the verifier",
        [IPU_ST_NOT_LOADED] = "no executable loaded",
        [IPU_ST_BAD_PROGRAM] = "program index out of range",
        [IPU_ST_ABORTED] = "aborted",
        [IPU_ST_STREAM_ERROR] = "stream transfer failed",
        [IPU_ST_FAULT] = "codelet fault",
        [IPU_ST_RANGE] = "outside tile memory",
        [IPU_ST_BAD_STREAM] = "bad stream id or ring",
        [IPU_ST_RING_CONFIG] = "ring base or size invalid",
        [IPU_ST_RING_INDEX] = "doorbell index out of range",
        [IPU_ST_LENGTH] = "descriptor length does not fit the stream",
        [IPU_ST_NO_MEMORY] = "device out of memory",
        [IPU_ST_ENGINE] = "engine error",
    };

    return code < IPU_ST_COUNT && names[code] ? names[code] : "unknown";
}

void ipu_error_locked(IpuState *s, uint32_t code, uint32_t detail,
                      uint64_t addr)
{
    trace_ipu_error(code, ipu_status_name(code), detail, addr);
    /* everything but the device's own limits is the guest's mistake */
    qemu_log_mask(code == IPU_ST_NO_MEMORY || code == IPU_ST_ABORTED ?
                  LOG_UNIMP : LOG_GUEST_ERROR,
                  "ipu: %s (status %u, detail %u, address 0x%" PRIx64 ")\n",
                  ipu_status_name(code), code, detail, addr);
    s->err_code = code;
    s->err_detail = detail;
    s->err_addr = addr;
    s->status |= IPU_STS_ERROR;
    s->cnt[IPU_CNT_ERRORS]++;
    ipu_raise_locked(s, IPU_INT_ERROR);
}

void ipu_error(IpuState *s, uint32_t code, uint32_t detail, uint64_t addr)
{
    qemu_mutex_lock(&s->lock);
    ipu_error_locked(s, code, detail, addr);
    qemu_mutex_unlock(&s->lock);
}

/* --------------------------------------------------------------- reset */

static void ipu_ring_clear(IpuRing *r)
{
    memset(r, 0, sizeof(*r));
}

/*
 * Device reset, from any state (s->lock held).  Everything guest-visible
 * returns to its default at once; the executor finishes the job (stops a
 * running program, recreates the engine) and then clears RESETTING.
 * Nothing submitted before the reset is completed.
 */
static void ipu_reset_locked(IpuState *s)
{
    uint32_t i;

    trace_ipu_reset();
    qatomic_set(&s->gen, s->gen + 1);
    s->q_count = 0;
    s->q_head = 0;
    if (s->run_active && s->engine) {
        ipu_engine_abort(s->engine);
    }
    s->abort_pending = true;
    s->reset_pending = true;
    /* the peers' transfers with this member end too (ipu_link.c) */
    ipu_link_cancel_locked(s, true);
    s->control = 0;
    s->status = IPU_STS_RESETTING;
    s->err_code = 0;
    s->err_detail = 0;
    s->err_addr = 0;
    s->int_cause = 0;
    s->int_mask = 0;
    s->irq_pending = 0;
    s->stall_stream = UINT32_MAX;
    s->cur_program = UINT32_MAX;
    s->hung = false;
    s->slow_ms = 0;
    s->fault_dma = false;
    ipu_ring_clear(&s->cmdq);
    ipu_ring_clear(&s->cplq);
    ipu_ring_clear(&s->scq);
    s->cmdq_db = s->cplq_db = s->scq_db = 0;
    for (i = 0; i < IPU_MAX_STREAMS; i++) {
        s->streams[i].active = false;
        s->streams[i].seq++;
        ipu_ring_clear(&s->streams[i].r);
    }
    for (i = 0; i < IPU_CNT_NUM; i++) {
        if (i != IPU_CNT_RESETS) {
            s->cnt[i] = 0;
        }
    }
    s->cnt[IPU_CNT_RESETS]++;
    qemu_cond_broadcast(&s->cond);
}

/* Validate the three rings and go READY (s->lock held). */
static void ipu_try_enable(IpuState *s)
{
    static const struct {
        size_t off;
        uint32_t entry, id;
        bool dev_writes;
    } rings[] = {
        { offsetof(IpuState, cmdq), sizeof(struct ipu_cmd), IPU_RING_CMDQ,
          false },
        { offsetof(IpuState, cplq), sizeof(struct ipu_cpl), IPU_RING_CPLQ,
          true },
        { offsetof(IpuState, scq), sizeof(struct ipu_cpl), IPU_RING_SCQ,
          true },
    };
    size_t i;

    if (!(s->control & IPU_CTRL_ENABLE) || (s->status & IPU_STS_RESETTING) ||
        (s->status & IPU_STS_READY)) {
        return;
    }
    for (i = 0; i < ARRAY_SIZE(rings); i++) {
        IpuRing *r = (IpuRing *)((uint8_t *)s + rings[i].off);

        if (!ipu_ring_config_ok(s, r, rings[i].entry, rings[i].dev_writes)) {
            s->control &= ~IPU_CTRL_ENABLE;
            ipu_error_locked(s, IPU_ST_RING_CONFIG, rings[i].id, r->base);
            return;
        }
    }
    s->cmdq.head = s->cmdq.tail = 0;
    s->cplq.head = s->cplq.tail = 0;
    s->scq.head = s->scq.tail = 0;
    s->cplq.phase = s->scq.phase = 1;
    s->status |= IPU_STS_READY;
    trace_ipu_enable(s->status);
    qemu_cond_broadcast(&s->cond);
}

/* Called by the executor when it has finished a reset (s->lock held). */
void ipu_finish_reset(IpuState *s)
{
    s->reset_pending = false;
    s->abort_pending = false;
    s->status &= ~IPU_STS_RESETTING;
    if (!s->engine) {
        s->status |= IPU_STS_FATAL;
    }
    ipu_try_enable(s);
    qemu_cond_broadcast(&s->cond);
}

/*
 * A reset from outside the device (machine reset, PCIe FLR, the PCI core's
 * bus reset), in Resettable's three phases.  enter: every guest-visible
 * register back to its default at once (ipu_reset_locked), which tells the
 * executor to drop its work.  hold: wait until the executor has done so
 * (its engine reset finished, RESETTING cleared), so that no DMA of work
 * from before the reset happens once the reset returns.  exit: the
 * interrupt line low.  A guest's own CONTROL.RESET stays asynchronous: the
 * guest polls RESETTING (pci.md, "Reset").
 */
static void ipu_reset_enter(Object *obj, ResetType type)
{
    IpuState *s = IPU_PCI(obj);

    qemu_mutex_lock(&s->lock);
    ipu_reset_locked(s);
    qemu_mutex_unlock(&s->lock);
}

static void ipu_reset_hold(IPU_RESET_PHASE_ARGS)
{
    IpuState *s = IPU_PCI(obj);

    qemu_mutex_lock(&s->lock);
    while (s->reset_pending && !s->stopping) {
        qemu_cond_wait(&s->cond, &s->lock);
    }
    qemu_mutex_unlock(&s->lock);
    trace_ipu_reset_quiesced();
}

static void ipu_reset_exit(IPU_RESET_PHASE_ARGS)
{
    pci_set_irq(PCI_DEVICE(obj), 0);
}

/* ---------------------------------------------------------------- BAR0 */

static uint64_t ipu_cnt_value(IpuState *s, hwaddr addr)
{
    return s->cnt[(addr - IPU_REG_CNT_FIRST) / 8];
}

/* The ring configuration registers: base (low, high) and size of each ring. */
enum { IPU_RING_BASE_LO, IPU_RING_BASE_HI, IPU_RING_SIZE };
static const struct {
    hwaddr addr;
    size_t ring;            /* offsetof(IpuState, ring) */
    int field;
    const char *name;
} ipu_ring_regs[] = {
    { IPU_REG_CMDQ_BASE_LO, offsetof(IpuState, cmdq), IPU_RING_BASE_LO, "CMDQ_BASE_LO" },
    { IPU_REG_CMDQ_BASE_HI, offsetof(IpuState, cmdq), IPU_RING_BASE_HI, "CMDQ_BASE_HI" },
    { IPU_REG_CMDQ_SIZE, offsetof(IpuState, cmdq), IPU_RING_SIZE, "CMDQ_SIZE" },
    { IPU_REG_CPLQ_BASE_LO, offsetof(IpuState, cplq), IPU_RING_BASE_LO, "CPLQ_BASE_LO" },
    { IPU_REG_CPLQ_BASE_HI, offsetof(IpuState, cplq), IPU_RING_BASE_HI, "CPLQ_BASE_HI" },
    { IPU_REG_CPLQ_SIZE, offsetof(IpuState, cplq), IPU_RING_SIZE, "CPLQ_SIZE" },
    { IPU_REG_SCQ_BASE_LO, offsetof(IpuState, scq), IPU_RING_BASE_LO, "SCQ_BASE_LO" },
    { IPU_REG_SCQ_BASE_HI, offsetof(IpuState, scq), IPU_RING_BASE_HI, "SCQ_BASE_HI" },
    { IPU_REG_SCQ_SIZE, offsetof(IpuState, scq), IPU_RING_SIZE, "SCQ_SIZE" },
};

/* The ring configuration register at addr, or -1. */
static int ipu_ring_reg(hwaddr addr)
{
    int i;

    for (i = 0; i < ARRAY_SIZE(ipu_ring_regs); i++) {
        if (ipu_ring_regs[i].addr == addr) {
            return i;
        }
    }
    return -1;
}

static IpuRing *ipu_ring_of(IpuState *s, int reg)
{
    return (IpuRing *)((char *)s + ipu_ring_regs[reg].ring);
}

static uint32_t ipu_read32(IpuState *s, hwaddr addr)
{
    int reg = ipu_ring_reg(addr);

    if (reg >= 0) {
        IpuRing *r = ipu_ring_of(s, reg);

        switch (ipu_ring_regs[reg].field) {
        case IPU_RING_BASE_LO:
            return (uint32_t)r->base;
        case IPU_RING_BASE_HI:
            return r->base >> 32;
        default:
            return r->size;
        }
    }
    if (addr >= IPU_REG_CNT_FIRST && addr < IPU_REG_CNT_LAST + 8) {
        uint64_t v = ipu_cnt_value(s, addr & ~7ULL);

        return (addr & 4) ? v >> 32 : (uint32_t)v;
    }
    if (addr >= IPU_REG_STREAM_DB(0) &&
        addr < IPU_REG_STREAM_DB(IPU_MAX_STREAMS)) {
        return s->streams[(addr - IPU_REG_STREAM_DB(0)) / 4].r.tail;
    }
    switch (addr) {
    case IPU_REG_ID:
        return IPU_ID_MAGIC;
    case IPU_REG_IF_VERSION:
        return IPU_IF_VERSION;
    case IPU_REG_HW_VERSION:
        return s->hw_version;
    case IPU_REG_CAPS:
        return IPU_CAP_MSIX | IPU_CAP_INTX | IPU_CAP_SG | IPU_CAP_DIRECT |
               IPU_CAP_READ_TENSOR | IPU_CAP_PROGRESS | IPU_CAP_FAULT |
               (s->link ? IPU_CAP_LINK : 0);
    case IPU_REG_SERIAL_LO:
        return (uint32_t)s->serial;
    case IPU_REG_SERIAL_HI:
        return s->serial >> 32;
    case IPU_REG_TILES:
        return s->tiles;
    case IPU_REG_TILE_MEM:
        return s->tile_mem;
    case IPU_REG_MAX_STREAMS:
        return IPU_MAX_STREAMS;
    case IPU_REG_MAX_RING:
        return IPU_MAX_RING_ENTRIES;
    case IPU_REG_MAX_SG:
        return IPU_MAX_SG_ENTRIES;
    case IPU_REG_MAX_IMAGE:
        return IPU_MAX_IMAGE_BYTES;
    case IPU_REG_NUM_VECTORS:
        return IPU_NUM_VECTORS;
    case IPU_REG_WORKERS:
        return s->workers;
    case IPU_REG_LINK_INDEX:
        return s->link ? s->link_index : UINT32_MAX;
    case IPU_REG_CONTROL:
        return s->control;
    case IPU_REG_STATUS:
        return s->status | (s->loaded ? IPU_STS_LOADED : 0);
    case IPU_REG_ERR_CODE:
        return s->err_code;
    case IPU_REG_ERR_DETAIL:
        return s->err_detail;
    case IPU_REG_ERR_ADDR_LO:
        return (uint32_t)s->err_addr;
    case IPU_REG_ERR_ADDR_HI:
        return s->err_addr >> 32;
    case IPU_REG_STALL_STREAM:
        return s->stall_stream;
    case IPU_REG_PROGRAM:
        return s->cur_program;
    case IPU_REG_INT_CAUSE:
        return s->int_cause;
    case IPU_REG_INT_MASK:
        return s->int_mask;
    case IPU_REG_CMDQ_HEAD:
        return s->cmdq.head;
    case IPU_REG_CPLQ_TAIL:
        return s->cplq.tail;
    case IPU_REG_SCQ_TAIL:
        return s->scq.tail;
    case IPU_REG_CMDQ_TAIL:
        return s->cmdq_db;
    case IPU_REG_CPLQ_HEAD:
        return s->cplq_db;
    case IPU_REG_SCQ_HEAD:
        return s->scq_db;
    case IPU_REG_FAULT_CTRL:
        return s->fault_ctrl;
    case IPU_REG_FAULT_COUNT:
        return s->fault_count;
    case IPU_REG_FAULT_ARG:
        return s->fault_arg;
    case IPU_REG_FAULT_FIRED:
        return s->fault_fired;
    case IPU_REG_PROGRESS_LO:
        return (uint32_t)qatomic_read(&s->progress);
    case IPU_REG_PROGRESS_HI:
        return qatomic_read(&s->progress) >> 32;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "ipu: read of unknown register 0x%"
                      HWADDR_PRIx " (reads 0)\n", addr);
        return 0;
    }
}

static void ipu_set_lo(uint64_t *v, uint32_t val)
{
    *v = (*v & 0xffffffff00000000ULL) | val;
}

static void ipu_set_hi(uint64_t *v, uint32_t val)
{
    *v = (*v & 0xffffffffULL) | ((uint64_t)val << 32);
}

/* A doorbell: the new index must lie inside the ring. */
static bool ipu_doorbell(IpuState *s, IpuRing *r, uint32_t val, uint32_t ring,
                         uint32_t stream)
{
    trace_ipu_doorbell(ring, stream, val);
    if (!(s->status & IPU_STS_READY) || r->size == 0) {
        ipu_error_locked(s, ring == IPU_RING_STREAM ? IPU_ST_BAD_STREAM :
                         IPU_ST_RING_INDEX, ring,
                         ((uint64_t)stream << 32) | val);
        return false;
    }
    if (val >= r->size) {
        ipu_error_locked(s, IPU_ST_RING_INDEX, ring,
                         ((uint64_t)stream << 32) | val);
        return false;
    }
    qemu_cond_broadcast(&s->cond);
    return true;
}

/* Returns true if the INTx level may have changed. */
static bool ipu_write32(IpuState *s, hwaddr addr, uint32_t val)
{
    bool cfg_ok = !(s->control & IPU_CTRL_ENABLE) &&
                  !(s->status & IPU_STS_READY);
    int reg = ipu_ring_reg(addr);

    if (reg >= 0) {
        IpuRing *r = ipu_ring_of(s, reg);

        if (!cfg_ok) {
            qemu_log_mask(LOG_GUEST_ERROR, "ipu: %s written while the device "
                          "is enabled (ignored: rings are set up before "
                          "CONTROL.ENABLE)\n", ipu_ring_regs[reg].name);
            return false;
        }
        switch (ipu_ring_regs[reg].field) {
        case IPU_RING_BASE_LO:
            ipu_set_lo(&r->base, val);
            break;
        case IPU_RING_BASE_HI:
            ipu_set_hi(&r->base, val);
            break;
        default:
            r->size = val;
            break;
        }
        return false;
    }

    if (addr >= IPU_REG_STREAM_DB(0) &&
        addr < IPU_REG_STREAM_DB(IPU_MAX_STREAMS)) {
        uint32_t id = (addr - IPU_REG_STREAM_DB(0)) / 4;
        IpuStreamRing *sr = &s->streams[id];

        if (!sr->active) {
            ipu_error_locked(s, IPU_ST_BAD_STREAM, IPU_RING_STREAM,
                             ((uint64_t)id << 32) | val);
        } else if (ipu_doorbell(s, &sr->r, val, IPU_RING_STREAM, id)) {
            sr->r.tail = val;
        }
        return false;
    }
    switch (addr) {
    case IPU_REG_CONTROL:
        if (val & IPU_CTRL_RESET) {
            ipu_reset_locked(s);
            return true;
        }
        if ((s->control & IPU_CTRL_ENABLE) && !(val & IPU_CTRL_ENABLE)) {
            ipu_reset_locked(s);
            return true;
        }
        s->control = val & IPU_CTRL_ENABLE;
        ipu_try_enable(s);
        return false;
    case IPU_REG_ERR_CODE:
        s->err_code = 0;
        s->err_detail = 0;
        s->err_addr = 0;
        s->status &= ~IPU_STS_ERROR;
        return false;
    case IPU_REG_INT_CAUSE:
        s->int_cause &= ~val;
        return true;
    case IPU_REG_INT_MASK: {
        uint32_t unmasked = s->int_mask & ~val;

        s->int_mask = val & IPU_INT_ALL;
        if (unmasked & s->int_cause) {
            ipu_raise_locked(s, unmasked & s->int_cause);
        }
        return true;
    }
    case IPU_REG_CMDQ_TAIL:
        s->cmdq_db = val;
        if (ipu_doorbell(s, &s->cmdq, val, IPU_RING_CMDQ, 0)) {
            s->cmdq.tail = val;
        }
        return false;
    case IPU_REG_CPLQ_HEAD:
        s->cplq_db = val;
        if (ipu_doorbell(s, &s->cplq, val, IPU_RING_CPLQ, 0)) {
            s->cplq.head = val;
        }
        return false;
    case IPU_REG_SCQ_HEAD:
        s->scq_db = val;
        if (ipu_doorbell(s, &s->scq, val, IPU_RING_SCQ, 0)) {
            s->scq.head = val;
        }
        return false;
    case IPU_REG_FAULT_CTRL:
    case IPU_REG_FAULT_COUNT:
    case IPU_REG_FAULT_ARG:
        ipu_fault_write_locked(s, addr, val);
        return false;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "ipu: write to unknown register 0x%"
                      HWADDR_PRIx "\n", addr);
        return false;
    }
}

static uint64_t ipu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    IpuState *s = opaque;
    uint64_t v;

    if (addr & 3) {
        qemu_log_mask(LOG_GUEST_ERROR, "ipu: unaligned read of 0x%" HWADDR_PRIx
                      " (reads 0)\n", addr);
        return 0;
    }
    qemu_mutex_lock(&s->lock);
    v = ipu_read32(s, addr);
    if (size == 8) {
        v |= (uint64_t)ipu_read32(s, addr + 4) << 32;
    }
    qemu_mutex_unlock(&s->lock);
    trace_ipu_mmio_read(addr, size, v);
    return v;
}

static void ipu_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    IpuState *s = opaque;
    bool irq;

    trace_ipu_mmio_write(addr, size, val);
    if (addr & 3) {
        qemu_log_mask(LOG_GUEST_ERROR, "ipu: unaligned write to 0x%" HWADDR_PRIx
                      " (ignored)\n", addr);
        return;
    }
    qemu_mutex_lock(&s->lock);
    irq = ipu_write32(s, addr, (uint32_t)val);
    if (size == 8) {
        irq |= ipu_write32(s, addr + 4, val >> 32);
    }
    qemu_mutex_unlock(&s->lock);
    if (irq) {
        ipu_update_intx(s);
    }
}

static const MemoryRegionOps ipu_mmio_ops = {
    .read = ipu_mmio_read,
    .write = ipu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

/* ------------------------------------------------------------ lifetime */

static void ipu_realize(PCIDevice *pdev, Error **errp)
{
    IpuState *s = IPU_PCI(pdev);
    char err[256];
    int rc, i;

    if (s->tiles == 0 || s->tiles > IPUX_MAX_TILES) {
        error_setg(errp, "ipu: tiles must be 1..%u", IPUX_MAX_TILES);
        return;
    }
    if (s->tile_mem == 0 || s->tile_mem > IPUX_MAX_TILE_MEM ||
        s->tile_mem % 64) {
        error_setg(errp, "ipu: tile-mem must be a multiple of 64 in 64..%u",
                   IPUX_MAX_TILE_MEM);
        return;
    }
    if (!s->serial) {
        s->serial = 0x4950550000000000ULL | ++ipu_instances;
    }
    s->fault_count = 1;
    if (s->fault_spec && s->fault_spec[0] &&
        !ipu_fault_parse(s, s->fault_spec, errp)) {
        return;
    }
    if (!ipu_custom_load(s, errp)) {
        return;
    }
    if (!ipu_link_attach(s, errp)) {
        ipu_custom_unload(s);
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 1);
    pci_config_set_revision(pdev->config, IPU_IF_VERSION_MAJOR);

    memory_region_init_io(&s->mmio, OBJECT(s), &ipu_mmio_ops, s, "ipu-regs",
                          IPU_BAR0_SIZE);
    pci_register_bar(pdev, IPU_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);
    if (msix_init_exclusive_bar(pdev, IPU_NUM_VECTORS, IPU_BAR_MSIX, errp)) {
        ipu_link_detach(s);
        ipu_custom_unload(s);
        return;
    }
    for (i = 0; i < IPU_NUM_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }
    if (pcie_endpoint_cap_init(pdev, 0x80) < 0) {
        error_setg(errp, "ipu: cannot add the PCIe capability");
        msix_uninit_exclusive_bar(pdev);
        ipu_link_detach(s);
        ipu_custom_unload(s);
        return;
    }
    /* DEVCAP.FLR: a function-level reset is a device reset (ipu_config_write) */
    pcie_cap_flr_init(pdev);

    qemu_mutex_init(&s->lock);
    qemu_mutex_init(&s->post_lock[0]);
    qemu_mutex_init(&s->post_lock[1]);
    qemu_cond_init(&s->cond);
    s->streams = g_new0(IpuStreamRing, IPU_MAX_STREAMS);
    s->queue = g_new0(IpuQueued, IPU_QUEUE_CAP);
    s->stall_stream = UINT32_MAX;
    s->cur_program = UINT32_MAX;

    rc = ipu_engine_new(s, &s->engine);
    if (rc) {
        snprintf(err, sizeof(err), "%s", ipu_err_name(rc));
        error_setg(errp, "ipu: cannot create the engine: %s", err);
        g_free(s->streams);
        g_free(s->queue);
        qemu_cond_destroy(&s->cond);
        qemu_mutex_destroy(&s->post_lock[0]);
        qemu_mutex_destroy(&s->post_lock[1]);
        qemu_mutex_destroy(&s->lock);
        msix_uninit_exclusive_bar(pdev);
        ipu_link_detach(s);
        ipu_custom_unload(s);
        return;
    }

    s->irq_bh = qemu_bh_new_guarded(ipu_irq_bh, s,
                                    &DEVICE(pdev)->mem_reentrancy_guard);
    s->stopping = false;
    qemu_thread_create(&s->fetch_thread, "ipu-fetch", ipu_fetch_thread, s,
                       QEMU_THREAD_JOINABLE);
    qemu_thread_create(&s->exec_thread, "ipu-exec", ipu_exec_thread, s,
                       QEMU_THREAD_JOINABLE);
}

/*
 * Writing DEVCTL.BCR_FLR resets the function: the device as on any PCI
 * reset (ipu_reset_enter/hold/exit) and its config space (BARs, command,
 * MSI-X).
 */
static void ipu_config_write(PCIDevice *pdev, uint32_t addr, uint32_t val,
                             int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

static void ipu_exit(PCIDevice *pdev)
{
    IpuState *s = IPU_PCI(pdev);

    qemu_mutex_lock(&s->lock);
    s->stopping = true;
    qatomic_set(&s->gen, s->gen + 1);
    s->abort_pending = true;
    if (s->run_active && s->engine) {
        ipu_engine_abort(s->engine);
    }
    ipu_link_cancel_locked(s, true);
    qemu_cond_broadcast(&s->cond);
    qemu_mutex_unlock(&s->lock);

    qemu_thread_join(&s->fetch_thread);
    qemu_thread_join(&s->exec_thread);
    ipu_engine_destroy(s->engine);
    s->engine = NULL;
    ipu_custom_unload(s);   /* after the engine that ran the plugins */
    ipu_link_detach(s);
    qemu_bh_delete(s->irq_bh);
    g_free(s->streams);
    g_free(s->queue);
    qemu_cond_destroy(&s->cond);
    qemu_mutex_destroy(&s->post_lock[0]);
    qemu_mutex_destroy(&s->post_lock[1]);
    qemu_mutex_destroy(&s->lock);
    msix_uninit_exclusive_bar(pdev);
}

/* The device state lives in threads and in the engine: not migratable. */
static const VMStateDescription vmstate_ipu = {
    .name = "ipu",
    .unmigratable = 1,
};

static IPU_PROPERTY ipu_properties[] = {
    DEFINE_PROP_UINT32("tiles", IpuState, tiles, 1472),
    DEFINE_PROP_UINT32("tile-mem", IpuState, tile_mem, 624 * KiB),
    DEFINE_PROP_UINT32("version", IpuState, hw_version, 2),
    DEFINE_PROP_UINT64("serial", IpuState, serial, 0),
    DEFINE_PROP_UINT32("workers", IpuState, workers, 0),
    DEFINE_PROP_STRING("fault", IpuState, fault_spec),
    DEFINE_PROP_STRING("custom-ops", IpuState, custom_ops),
    DEFINE_PROP_LINK("link", IpuState, link, TYPE_IPU_LINK, IpuLink *),
    DEFINE_PROP_UINT32("link-index", IpuState, link_index, 0),
#ifdef DEFINE_PROP_END_OF_LIST
    DEFINE_PROP_END_OF_LIST(),  /* 7.2; 10.0 counts the array itself */
#endif
};

static void ipu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = ipu_realize;
    k->exit = ipu_exit;
    k->config_write = ipu_config_write;
    k->vendor_id = IPU_PCI_VENDOR_ID;
    k->device_id = IPU_PCI_DEVICE_ID;
    k->revision = IPU_IF_VERSION_MAJOR;
    k->class_id = IPU_PCI_CLASS;
    k->subsystem_vendor_id = PCI_SUBVENDOR_ID_REDHAT_QUMRANET;
    k->subsystem_id = PCI_SUBDEVICE_ID_QEMU;
    dc->desc = "Emulated IPU (tile accelerator)";
    rc->phases.enter = ipu_reset_enter;
    rc->phases.hold = ipu_reset_hold;
    rc->phases.exit = ipu_reset_exit;
    dc->vmsd = &vmstate_ipu;
    device_class_set_props(dc, ipu_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo ipu_info = {
    .name = TYPE_IPU_PCI,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(IpuState),
    .class_init = ipu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void ipu_register_types(void)
{
    type_register_static(&ipu_info);
}

type_init(ipu_register_types)
