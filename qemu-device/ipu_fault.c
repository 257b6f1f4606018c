/*
 * QEMU emulated IPU: fault injection and the progress counter.
 *
 * A driver's recovery paths (watchdog, lost interrupts, corrupt
 * completions, failed transfers) are only trustworthy if they can be
 * exercised on demand, so the device can be told to misbehave on the Nth
 * command it fetches: through the `fault` property (armed from power-on)
 * or the FAULT_* registers.  The configuration survives device resets,
 * because a reset is how a driver recovers from most of these faults.
 *
 * PROGRESS counts program steps through the engine's step hook, so that a
 * watchdog can tell a long program that keeps executing from a device
 * that stopped.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 * See the COPYING file in the top-level directory.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "qemu/cutils.h"
#include "qapi/error.h"

#include "ipu.h"
#include "trace.h"

static const char *const ipu_fault_names[IPU_FAULT_KIND_MAX + 1] = {
    [IPU_FAULT_NONE] = "none",
    [IPU_FAULT_HANG] = "hang",
    [IPU_FAULT_DROP_IRQ] = "drop-irq",
    [IPU_FAULT_CORRUPT_CPL] = "corrupt-cpl",
    [IPU_FAULT_DMA] = "dma",
    [IPU_FAULT_SLOW] = "slow",
};

static const char *const ipu_opcode_names[IPU_CMD_MAX + 1] = {
    [IPU_CMD_NOP] = "nop",
    [IPU_CMD_LOAD_EXE] = "load",
    [IPU_CMD_WRITE_TENSOR] = "write",
    [IPU_CMD_READ_TENSOR] = "read",
    [IPU_CMD_RUN] = "run",
    [IPU_CMD_ABORT] = "abort",
    [IPU_CMD_RESET_ENGINE] = "reset-engine",
    [IPU_CMD_CREATE_STREAM] = "create-stream",
    [IPU_CMD_DELETE_STREAM] = "delete-stream",
};

static int ipu_name_index(const char *const *names, int n, const char *name)
{
    int i;

    for (i = 0; i < n; i++) {
        if (names[i] && !strcmp(names[i], name)) {
            return i;
        }
    }
    return -1;
}

/*
 * `fault=KIND:N[:OPCODE][:repeat][:arg=MS]`, e.g. `fault=hang:3`,
 * `fault=drop-irq:1:run:repeat`, `fault=slow:1:run:arg=20`.
 */
bool ipu_fault_parse(IpuState *s, const char *spec, Error **errp)
{
    g_auto(GStrv) parts = g_strsplit(spec, ":", -1);
    uint64_t n, arg = 0;
    uint32_t ctrl;
    int kind, op, i;

    if (!parts[0] || !parts[1]) {
        error_setg(errp, "ipu: fault '%s': expected KIND:N[:OPCODE][:repeat]"
                   "[:arg=MS] (KIND hang, drop-irq, corrupt-cpl, dma, slow)",
                   spec);
        return false;
    }
    kind = ipu_name_index(ipu_fault_names, IPU_FAULT_KIND_MAX + 1, parts[0]);
    if (kind <= 0) {
        error_setg(errp, "ipu: fault '%s': unknown kind '%s' (hang, drop-irq, "
                   "corrupt-cpl, dma, slow)", spec, parts[0]);
        return false;
    }
    if (qemu_strtou64(parts[1], NULL, 0, &n) || n == 0 || n > UINT32_MAX) {
        error_setg(errp, "ipu: fault '%s': N must be a command count of at "
                   "least 1, not '%s'", spec, parts[1]);
        return false;
    }
    ctrl = kind;
    for (i = 2; parts[i]; i++) {
        if (!strcmp(parts[i], "repeat")) {
            ctrl |= IPU_FAULT_REPEAT;
        } else if (g_str_has_prefix(parts[i], "arg=")) {
            if (qemu_strtou64(parts[i] + 4, NULL, 0, &arg) ||
                arg > IPU_FAULT_MAX_SLOW_MS) {
                error_setg(errp, "ipu: fault '%s': arg must be 0..%u ms",
                           spec, IPU_FAULT_MAX_SLOW_MS);
                return false;
            }
        } else {
            op = ipu_name_index(ipu_opcode_names, IPU_CMD_MAX + 1, parts[i]);
            if (op < 0) {
                error_setg(errp, "ipu: fault '%s': '%s' is neither an opcode "
                           "(nop, load, write, read, run, abort, "
                           "reset-engine, create-stream, delete-stream), "
                           "'repeat' nor 'arg=MS'", spec, parts[i]);
                return false;
            }
            ctrl |= IPU_FAULT_MATCH_OPCODE |
                    ((uint32_t)op << IPU_FAULT_OPCODE_SHIFT);
        }
    }
    s->fault_ctrl = ctrl;
    s->fault_count = n;
    s->fault_arg = arg;
    s->fault_seen = 0;
    trace_ipu_fault_arm(ctrl, s->fault_count, s->fault_arg);
    return true;
}

/* FAULT_CTRL, FAULT_COUNT, FAULT_ARG (s->lock held). */
void ipu_fault_write_locked(IpuState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case IPU_REG_FAULT_CTRL:
        if ((val & ~IPU_FAULT_CTRL_VALID) ||
            (val & IPU_FAULT_KIND_MASK) > IPU_FAULT_KIND_MAX) {
            qemu_log_mask(LOG_GUEST_ERROR, "ipu: FAULT_CTRL 0x%x has an "
                          "unknown kind or reserved bits set (ignored)\n", val);
            return;
        }
        s->fault_ctrl = (val & IPU_FAULT_KIND_MASK) ? val : 0;
        s->fault_seen = 0;
        break;
    case IPU_REG_FAULT_COUNT:
        if (val == 0) {
            qemu_log_mask(LOG_GUEST_ERROR, "ipu: FAULT_COUNT 0 (ignored: the "
                          "first command is 1)\n");
            return;
        }
        s->fault_count = val;
        s->fault_seen = 0;
        break;
    default:
        if (val > IPU_FAULT_MAX_SLOW_MS) {
            qemu_log_mask(LOG_GUEST_ERROR, "ipu: FAULT_ARG %u over %u ms "
                          "(ignored)\n", val, IPU_FAULT_MAX_SLOW_MS);
            return;
        }
        s->fault_arg = val;
        break;
    }
    trace_ipu_fault_arm(s->fault_ctrl, s->fault_count, s->fault_arg);
}

/*
 * The fetch thread has read `cmd`: count it and return the fault it gets
 * (IPU_FAULT_NONE mostly).  A hang takes effect here (s->lock held).
 */
uint8_t ipu_fault_match_locked(IpuState *s, const struct ipu_cmd *cmd)
{
    uint32_t kind = s->fault_ctrl & IPU_FAULT_KIND_MASK;

    if (kind == IPU_FAULT_NONE) {
        return IPU_FAULT_NONE;
    }
    if ((s->fault_ctrl & IPU_FAULT_MATCH_OPCODE) &&
        cmd->opcode != (s->fault_ctrl & IPU_FAULT_OPCODE_MASK) >>
                       IPU_FAULT_OPCODE_SHIFT) {
        return IPU_FAULT_NONE;
    }
    if (++s->fault_seen < MAX(s->fault_count, 1)) {
        return IPU_FAULT_NONE;
    }
    s->fault_seen = 0;
    if (!(s->fault_ctrl & IPU_FAULT_REPEAT)) {
        s->fault_ctrl = 0;
    }
    s->fault_fired++;
    trace_ipu_fault_fire(ipu_fault_names[kind], cmd->opcode, cmd->tag,
                         s->fault_fired);
    qemu_log_mask(LOG_GUEST_ERROR, "ipu: injected fault '%s' on command "
                  "opcode %u tag 0x%" PRIx64 "\n", ipu_fault_names[kind],
                  cmd->opcode, cmd->tag);
    if (kind == IPU_FAULT_HANG) {
        /* a hung device looks busy and waits for nothing the host can give */
        s->hung = true;
        s->status |= IPU_STS_BUSY;
        s->status &= ~IPU_STS_STALLED;
        s->stall_stream = UINT32_MAX;
    }
    return kind;
}

/*
 * Block a device thread while the device is hung, until a reset (new
 * generation) or unplug.  Returns true if it had to wait (s->lock held).
 */
bool ipu_fault_wait_hung_locked(IpuState *s, uint32_t gen)
{
    bool waited = false;

    while (s->hung && s->gen == gen && !s->stopping) {
        waited = true;
        qemu_cond_wait(&s->cond, &s->lock);
    }
    return waited;
}

/*
 * The engine's step hook: runs on the thread executing the program after
 * every leaf step.  Counts progress; a hung device stops here, a slow one
 * sleeps (both give way to a reset at once: the engine then stops at the
 * next step boundary).
 */
void ipu_fault_step(void *ctx, const struct ipu_engine_step_event *ev)
{
    IpuState *s = ctx;
    uint32_t gen, ms;
    int64_t deadline, left;

    if (ev->kind == IPU_ENGINE_TRACE_PROGRAM) {
        return;
    }
    if (qatomic_read(&s->hung)) {
        qemu_mutex_lock(&s->lock);
        ipu_fault_wait_hung_locked(s, s->gen);
        qemu_mutex_unlock(&s->lock);
        return;
    }
    qatomic_inc(&s->progress);
    ms = qatomic_read(&s->slow_ms);
    if (!ms) {
        return;
    }
    qemu_mutex_lock(&s->lock);
    gen = s->gen;
    deadline = qemu_clock_get_ms(QEMU_CLOCK_REALTIME) + ms;
    while (s->gen == gen && !s->stopping && !s->abort_pending) {
        left = deadline - qemu_clock_get_ms(QEMU_CLOCK_REALTIME);
        if (left <= 0) {
            break;
        }
        qemu_cond_timedwait(&s->cond, &s->lock, left);
    }
    qemu_mutex_unlock(&s->lock);
}

/* Whether the data DMA about to start must fail (consumes the fault). */
bool ipu_fault_take_dma(IpuState *s)
{
    return qatomic_read(&s->fault_dma) && qatomic_xchg(&s->fault_dma, false);
}
