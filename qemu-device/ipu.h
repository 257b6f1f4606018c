/*
 * QEMU emulated IPU (Graphcore-like accelerator): device-internal state
 * shared by ipu_pci.c (PCI function, BAR0, interrupts, reset),
 * ipu_rings.c (command fetch/execute, completion rings) and ipu_streams.c
 * (stream descriptor rings, scatter-gather DMA).
 *
 * Threads and locks
 * -----------------
 *  - vCPU / main loop (BQL held): BAR0 accesses, qdev reset, the irq BH.
 *  - "ipu-fetch": reads the command ring, handles ABORT/RESET_ENGINE and
 *    stream ring create/delete at once, queues the rest for the executor.
 *  - "ipu-exec": owns the engine; executes queued commands one at a time;
 *    the engine calls ipu_stream_transfer() in this thread (or one of its
 *    workers) for StreamCopy steps.
 *  s->lock protects all mutable state below; it is never held across DMA
 *  or an engine call.  s->post_lock[0/1] serialise the DMA writes of
 *  entries of the completion / stream completion ring (taken without
 *  s->lock held; never taken by BQL-holding code).
 *  The device threads never take the BQL: they set bits in s->irq_pending
 *  and schedule a bottom half that raises MSI-X/INTx in the main loop.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 */
#ifndef HW_MISC_IPU_H
#define HW_MISC_IPU_H

#include "hw/pci/pci.h"
#if QEMU_VERSION_MAJOR >= 8
#include "hw/pci/pci_device.h"      /* PCIDevice, since 8.0 */
#endif
#include "qemu/atomic.h"
#include "qemu/thread.h"
#include "qom/object.h"

#include "ipu_regs.h"
#include "ipu/engine.h"

#define TYPE_IPU_PCI "ipu"
OBJECT_DECLARE_SIMPLE_TYPE(IpuState, IPU_PCI)

typedef struct IpuRing {
    uint64_t base;
    uint32_t size;          /* entries; 0 = not configured */
    uint32_t head;          /* consumer index */
    uint32_t tail;          /* producer index */
    uint8_t phase;          /* completion rings: phase of the next entry */
} IpuRing;

typedef struct IpuStreamRing {
    bool active;
    uint32_t seq;           /* bumped on create/delete */
    IpuRing r;              /* head: device, tail: doorbell */
} IpuStreamRing;

enum IpuInternalOp {
    IPU_OP_CMD = 0,         /* a guest command */
    IPU_OP_ABORT_DONE,      /* tail of ABORT: flush streams, complete ABORT */
    IPU_OP_ENGINE_RESET,    /* tail of RESET_ENGINE */
};

typedef struct IpuQueued {
    struct ipu_cmd cmd;     /* host-endian copy */
    uint16_t head;          /* command ring head after this entry */
    uint8_t op;             /* enum IpuInternalOp */
    uint8_t fault;          /* IPU_FAULT_* injected into this command */
    bool cancelled;
} IpuQueued;

enum IpuCounter {
    IPU_CNT_PROGRAMS,
    IPU_CNT_CYCLES,
    IPU_CNT_COMPUTE_CYC,
    IPU_CNT_EXCH_BYTES,
    IPU_CNT_STREAM_IN,
    IPU_CNT_STREAM_OUT,
    IPU_CNT_STALLS,
    IPU_CNT_STALL_NS,
    IPU_CNT_ERRORS,
    IPU_CNT_COMMANDS,
    IPU_CNT_DESCS,
    IPU_CNT_RESETS,
    IPU_CNT_LINK_OUT,
    IPU_CNT_LINK_IN,
    IPU_CNT_LINK_CYC,
    IPU_CNT_NUM
};

#define IPU_QUEUE_CAP IPU_MAX_RING_ENTRIES

struct IpuState {
    PCIDevice parent_obj;
    MemoryRegion mmio;

    /* properties */
    uint32_t tiles;
    uint32_t tile_mem;
    uint32_t hw_version;
    uint32_t workers;
    uint64_t serial;
    char *fault_spec;       /* `fault` property, see ipu_fault_parse() */
    char *custom_ops;       /* `custom-ops` property: plugin paths, ':'-separated */
    struct ipu_custom_table *custom;    /* their codelets (ipu_custom.c) */
    struct IpuLink *link;   /* `link` property: the ipu-link it is a member of */
    uint32_t link_index;    /* `link-index` property: its index on the link */
    void **custom_handles;
    unsigned ncustom_handles;

    QemuThread fetch_thread;
    QemuThread exec_thread;
    QemuMutex lock;
    QemuCond cond;          /* broadcast on every state change */
    QemuMutex post_lock[2];  /* [0] CPLQ, [1] SCQ */
    QEMUBH *irq_bh;
    bool stopping;

    /* registers */
    uint32_t control;
    uint32_t status;
    uint32_t err_code;
    uint32_t err_detail;
    uint64_t err_addr;
    uint32_t int_cause;
    uint32_t int_mask;
    uint32_t irq_pending;   /* IPU_INT_* to signal from the BH */
    uint32_t stall_stream;
    uint32_t cur_program;
    uint64_t cnt[IPU_CNT_NUM];

    IpuRing cmdq;
    IpuRing cplq;
    IpuRing scq;
    uint32_t cmdq_db;       /* last CMDQ_TAIL written */
    uint32_t cplq_db;
    uint32_t scq_db;
    IpuStreamRing *streams; /* IPU_MAX_STREAMS */

    /* fault injection: the configuration survives device resets */
    uint32_t fault_ctrl;    /* IPU_REG_FAULT_CTRL; kind 0 = disarmed */
    uint32_t fault_count;   /* fire on the Nth matching command */
    uint32_t fault_arg;     /* IPU_FAULT_SLOW: ms per step */
    uint32_t fault_seen;    /* matching commands fetched since armed */
    uint32_t fault_fired;
    bool hung;              /* IPU_FAULT_HANG fired: only a reset ends it */
    bool fault_dma;         /* the next data DMA fails */
    uint32_t slow_ms;       /* delay per program step of the running command */
    uint64_t progress;      /* program steps executed (atomic) */

    uint32_t gen;           /* bumped by each device reset */
    bool reset_pending;     /* executor must recreate the engine */
    bool abort_pending;     /* stream waits return IPU_E_CANCELLED */
    bool running;           /* executor is inside a command */
    bool run_active;        /* ... and it is a RUN (engine may be aborted) */

    IpuQueued *queue;       /* ring buffer of IPU_QUEUE_CAP */
    uint32_t q_head;
    uint32_t q_count;

    struct ipu_engine *engine; /* used by the exec thread only */
    bool loaded;
};

/* ipu_pci.c */
void ipu_raise_locked(IpuState *s, uint32_t cause);
void ipu_error_locked(IpuState *s, uint32_t code, uint32_t detail,
                      uint64_t addr);
void ipu_error(IpuState *s, uint32_t code, uint32_t detail, uint64_t addr);
void ipu_finish_reset(IpuState *s);

/* ipu_fault.c */
bool ipu_fault_parse(IpuState *s, const char *spec, Error **errp);
void ipu_fault_write_locked(IpuState *s, hwaddr addr, uint32_t val);
uint8_t ipu_fault_match_locked(IpuState *s, const struct ipu_cmd *cmd);
bool ipu_fault_wait_hung_locked(IpuState *s, uint32_t gen);
void ipu_fault_step(void *ctx, const struct ipu_engine_step_event *ev);
bool ipu_fault_take_dma(IpuState *s);

/* ipu_custom.c */
bool ipu_custom_load(IpuState *s, Error **errp);
void ipu_custom_unload(IpuState *s);

/* ipu_link.c: see ipu_link.h */

/* ipu_rings.c */
void *ipu_fetch_thread(void *opaque);
void *ipu_exec_thread(void *opaque);
bool ipu_post_cpl(IpuState *s, IpuRing *q, uint32_t cause,
                  struct ipu_cpl *cpl, uint32_t gen);
int ipu_engine_new(IpuState *s, struct ipu_engine **out);

/* ipu_streams.c */
struct ipu_xfer_seg {
    uint8_t *ptr;
    uint32_t len;
};
int ipu_sg_dma(IpuState *s, uint64_t addr, uint32_t sg_count, uint32_t flags,
               uint32_t len, const struct ipu_xfer_seg *segs, uint32_t nsegs,
               uint32_t bytes, bool to_device, uint32_t gen,
               uint32_t *detail, uint64_t *fault_addr);
int ipu_stream_transfer(void *ctx, uint32_t stream, uint32_t dir,
                        const struct ipu_stream_seg *segs, uint32_t nsegs,
                        uint32_t total_bytes, int *stalled);
uint32_t ipu_stream_create_locked(IpuState *s, uint32_t stream,
                                  uint64_t base, uint32_t entries,
                                  uint64_t *fault_addr);
uint32_t ipu_stream_delete_locked(IpuState *s, uint32_t stream);
void ipu_streams_flush(IpuState *s, uint32_t gen);
bool ipu_ring_config_ok(IpuState *s, const IpuRing *r, uint32_t entry_size,
                        bool device_writes);

#endif
