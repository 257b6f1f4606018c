/* SPDX-License-Identifier: MIT */
/*
 * ipu.h - libipu, userspace access to IPU devices.
 *
 * One small API over two backends:
 *   "model[:opts]"  the tile engine in-process (like Poplar's IPUModel), the
 *                   default; opts: tiles=N, tile_mem=SIZE (k/m suffix),
 *                   workers=N, version=ipu2|ipu21, serial=STR,
 *                   custom-ops=PATH (a custom-operator plugin, repeatable;
 *                   ipu/custom_ops.h)
 *   "/dev/accel/accelN" the kernel driver (ioctls for control, io_uring for
 *                   stream buffers)
 *
 * Model of use:
 *   ipu_open -> ipu_attach -> ipu_load (executable image) -> for each
 *   request: ipu_stream_submit the input buffers and output buffers (they
 *   queue, FIFO per stream), ipu_run a program (returns a sequence number
 *   at once), then ipu_wait for it and/or collect buffer completions
 *   (ipu_stream_poll or a completion handler).  A program that reaches a
 *   stream copy with no buffer queued waits for one, like Poplar's blocking
 *   stream callbacks, so buffers may also be submitted after ipu_run.
 *
 * All functions return 0 (or a count) on success and a negative code of
 * ipu/error.h on failure (ipu_err_name() and ipu_strerror() name it).
 * Functions that can fail for reasons a user must read take an `err`
 * buffer that receives a one-line message; ipu_load, whose failures have a
 * precise cause below their class, fills a struct ipu_error instead.
 * A device handle may be used from several threads; run/wait/stream calls
 * are internally serialised where needed.
 */
#ifndef IPU_IPU_H
#define IPU_IPU_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/error.h"

struct ipu_device;

enum ipu_backend_kind {
	IPU_BACKEND_MODEL = 1,
	IPU_BACKEND_KERNEL = 2,
};

struct ipu_device_info {
	char name[64];		/* "model0" or "accel0" */
	char path[64];		/* spec it was opened with */
	uint32_t backend;	/* enum ipu_backend_kind */
	uint32_t num_tiles;
	uint32_t tile_mem;	/* bytes per tile */
	uint32_t version;	/* 2 = ipu2, 21 = ipu21 */
	char version_name[16];	/* "ipu2" */
	char serial[32];
	uint32_t workers;	/* engine threads (model) */
	uint32_t max_streams;
	int32_t owner_pid;	/* attached process, 0 if none */
	uint32_t state;		/* enum ipu_dev_state */
};

enum ipu_dev_state {
	IPU_STATE_IDLE = 0,	/* no executable */
	IPU_STATE_READY = 1,	/* executable loaded */
	IPU_STATE_BUSY = 2,	/* running a program */
	IPU_STATE_ERROR = 3,	/* needs a reset */
};

/* Open a device (see the spec syntax above). */
int ipu_open(const char *spec, struct ipu_device **out, char *err, size_t errlen);
void ipu_close(struct ipu_device *d);
int ipu_info(struct ipu_device *d, struct ipu_device_info *info);

/* Take / release exclusive use: IPU_E_BUSY if another owner holds it. */
int ipu_attach(struct ipu_device *d);
int ipu_detach(struct ipu_device *d);

/*
 * Devices joined by IPU-Links (kernel devices of one ipu-link, the
 * driver's device group: Documentation/uapi/ipu.md, "Device groups").
 * ipu_attach_group attaches devs[0..n-1] (2..16, all of one backend) as
 * one group, devs[k] its IPU k, all or none: IPU_E_BUSY when one is owned
 * elsewhere, IPU_E_INVAL on a backend or device without links.  Detaching
 * or closing any member then releases every member, a device reset of any
 * member resets every member.  ipu_link_stream joins d's device-to-host
 * `stream` to host-to-device `peer_stream` of group IPU `peer_ipu`, after
 * every ipu_load: that stream's StreamCopy then moves its buffer device to
 * device, and neither end takes submitted buffers.
 */
int ipu_attach_group(struct ipu_device *const *devs, unsigned n);
int ipu_link_stream(struct ipu_device *d, uint32_t stream, uint32_t peer_ipu,
		    uint32_t peer_stream);

/* A device's IPU-Link counters since its last device reset (they add up
 * over every process that used it): IPU_E_INVAL on a device without
 * links (the in-process device: ipu/group.h counts its links). */
struct ipu_link_counters {
	uint64_t out_bytes;	/* sent to peers */
	uint64_t in_bytes;	/* received from peers */
	uint64_t cycles;	/* modelled cycles of the sends */
};
int ipu_link_counters(struct ipu_device *d, struct ipu_link_counters *out);

/*
 * Load (verify + upload) an executable image; waits for running programs.
 * An image the device's verifier refuses fails with IPU_E_VERIFY, its
 * precise finding (IPUX_E_*) in e->detail, as the driver reports it.  e
 * may be NULL; on success e->code is 0 and e->msg empty.
 */
int ipu_load(struct ipu_device *d, const void *image, size_t len, struct ipu_error *e);

/*
 * Stream directions, numbered as the executable format and the driver's
 * uapi number them (the same definitions as linux/ipu.h).
 */
#define IPU_STREAM_H2D 0	/* host to device (model input, weights) */
#define IPU_STREAM_D2H 1	/* device to host (model output) */

/* Number and directions (IPU_STREAM_*)/sizes of the loaded executable's streams. */
int ipu_stream_count(struct ipu_device *d);
int ipu_stream_info(struct ipu_device *d, uint32_t stream, uint32_t *dir,
		    uint32_t *buffer_bytes);

/*
 * Called once per finished run (in the order the runs were queued, also
 * for runs cancelled by an abort) from a libipu thread; must not block and
 * must not call back into the device except ipu_stream_submit / ipu_run.
 * ipu_wait keeps working with a handler set.
 */
typedef void (*ipu_run_fn)(void *ctx, uint64_t seq, int status, const char *msg);
int ipu_set_run_handler(struct ipu_device *d, ipu_run_fn fn, void *ctx);

/* Queue program `prog` to run; *seq identifies it for ipu_wait. */
int ipu_run(struct ipu_device *d, uint32_t prog, uint64_t *seq);
/*
 * Run program `prog` on the calling thread, if the device is idle (no run
 * queued or running): it saves the hand-off to the device's thread and
 * back, which for a short program is a good part of a request.  *seq is
 * set before the program starts; when this returns 0 the run has finished,
 * its run handler was called (on this thread) and ipu_wait(seq) has its
 * status.  The program's stream copies take buffers as for ipu_run, so
 * every buffer it needs must be queued before (or by another thread, or a
 * completion handler).  Returns IPU_E_BUSY, having done nothing, when the
 * device is not idle or its backend runs programs only on its own (the
 * kernel driver): use ipu_run then.
 */
int ipu_run_here(struct ipu_device *d, uint32_t prog, uint64_t *seq);
/*
 * Wait for run `seq` to finish, up to timeout_ns (< 0: forever, 0: poll).
 * Returns the run's status (0, IPU_E_CANCELLED, IPU_E_FAULT, ...), or
 * IPU_E_TIMEOUT if it has not finished (it keeps running).  The run's
 * error message, if any, is copied to err.
 */
int ipu_wait(struct ipu_device *d, uint64_t seq, int64_t timeout_ns, char *err,
	     size_t errlen);
/* ipu_run + ipu_wait(forever). */
int ipu_run_sync(struct ipu_device *d, uint32_t prog, char *err, size_t errlen);

/* A finished stream buffer. */
struct ipu_completion {
	uint64_t tag;		/* as given to ipu_stream_submit */
	uint32_t stream;
	int32_t status;		/* 0 or IPU_E_CANCELLED / IPU_E_IO */
	uint32_t bytes;		/* bytes moved */
	uint32_t reserved;
};

/*
 * Called once per finished buffer, from a libipu thread; must not block
 * and must not call back into the device except ipu_stream_submit.
 * With a handler set, completions are not queued for ipu_stream_poll.
 */
typedef void (*ipu_completion_fn)(void *ctx, const struct ipu_completion *c);
int ipu_set_completion_handler(struct ipu_device *d, ipu_completion_fn fn, void *ctx);

/*
 * Queue a host buffer on a stream: data to send (H2D) or room for data
 * (D2H).  `len` must equal the stream's buffer size.  The buffer must stay
 * valid until its completion.  No copy is made before the device needs it.
 */
int ipu_stream_submit(struct ipu_device *d, uint32_t stream, void *buf, size_t len,
		      uint64_t tag);
/*
 * Registered memory.  ipu_register_memory() declares [addr, addr + len)
 * as memory the caller will take stream buffers from, and *id names it.
 * On a kernel device its pages are pinned once (an io_uring fixed buffer)
 * and every stream buffer lying wholly inside it skips the pinning and
 * unpinning each request otherwise pays; other buffers work as before.
 * On the in-process device nothing needs pinning and registration only
 * records the range.
 *
 * Registration is explicit because pinning pointers behind the caller's
 * back is unsafe once memory is freed and reused.  Ranges may not overlap
 * (IPU_E_INVAL); at most IPU_MAX_REGISTERED per device handle and 1 GiB
 * each (IPU_E_BUSY / IPU_E_INVAL beyond).  Unregistering while buffers of
 * the range are queued or in flight is allowed: those already with the
 * device keep their pinned pages until they complete, the rest are pinned
 * per request.  Memory freed while still registered stays pinned (not
 * reused by the system) until it is unregistered or the handle is closed.
 */
#define IPU_MAX_REGISTERED 64
int ipu_register_memory(struct ipu_device *d, void *addr, size_t len, uint32_t *id);
int ipu_unregister_memory(struct ipu_device *d, uint32_t id);

/*
 * Device memory shared without copies.  ipu_alloc_memory() maps len bytes
 * at *addr that the device reads and writes directly, registered like
 * ipu_register_memory() memory (*id; stream buffers lying wholly inside
 * it are neither pinned nor copied per request); ipu_free_memory() unmaps
 * and forgets it (ipu_unregister_memory() does too).  On a kernel device
 * it is a buffer object of the driver (a GEM object of
 * /dev/accel/accelN); on the in-process device plain memory.
 *
 * ipu_buffer_export_dmabuf() hands such memory out as a dma-buf file
 * descriptor (*fd; the caller closes it), for another process (pass the
 * fd over a Unix socket) or another device; ipu_import_dmabuf() maps a
 * dma-buf into this handle's device and registers it (*addr, *len its
 * size, *id), so that stream buffers inside it reach the device with no
 * copy.  Both need a kernel device (IPU_E_INVAL on the in-process one,
 * and for memory ipu_register_memory() registered: its pages are the
 * caller's, not a buffer object).  Memory stays valid while a handle, a
 * mapping or a dma-buf refers to it: freeing it here does not take it
 * from the processes it was shared with.
 */
int ipu_alloc_memory(struct ipu_device *d, size_t len, void **addr, uint32_t *id);
int ipu_free_memory(struct ipu_device *d, uint32_t id);
int ipu_buffer_export_dmabuf(struct ipu_device *d, uint32_t id, int *fd);
int ipu_import_dmabuf(struct ipu_device *d, int fd, void **addr, size_t *len, uint32_t *id);

/* Collect up to `max` completions, waiting up to timeout_ns for the first. */
int ipu_stream_poll(struct ipu_device *d, struct ipu_completion *out, unsigned max,
		    int64_t timeout_ns);

/*
 * Stop the running program and all queued runs (status IPU_E_CANCELLED)
 * and complete every queued buffer with IPU_E_CANCELLED.  The executable
 * stays loaded.  Work other threads submit while the abort is under way
 * lands on either side of it, each run and each buffer on its own: a
 * run whose buffers were cancelled but which itself was queued after
 * the abort waits for buffers that never come.  Callers that abort while
 * other threads submit serialise the abort with the submission of a
 * run's buffers and the run (one lock around both, as the Model
 * Runtime's QueueManager does).
 */
int ipu_abort(struct ipu_device *d);
/* Abort, unload the executable, clear counters: back to IPU_STATE_IDLE. */
int ipu_reset(struct ipu_device *d);

/* Counters since open or the last reset, all kinds of work the device did. */
struct ipu_counters {
	uint64_t programs_run;
	uint64_t steps;			/* program steps executed */
	uint64_t compute_sets;		/* Execute steps */
	uint64_t vertices;		/* vertex executions */
	uint64_t cycles;		/* modelled cycles, all kinds */
	uint64_t compute_cycles;
	uint64_t exchange_cycles;
	uint64_t sync_cycles;
	uint64_t stream_cycles;
	uint64_t exchange_bytes;
	uint64_t stream_bytes_in;	/* host to device */
	uint64_t stream_bytes_out;	/* device to host */
	uint64_t stream_copies;
	uint64_t stream_stalls;		/* transfers that had to wait for the host */
	uint64_t stall_ns;		/* wall time spent waiting for the host */
	uint64_t errors;
};

int ipu_counters(struct ipu_device *d, struct ipu_counters *out);

/* Profile of one compute set, accumulated over runs. */
struct ipu_cs_profile {
	uint64_t executions;
	uint64_t cycles;		/* modelled, all executions */
	uint32_t cycles_per_run;	/* modelled cycles of one execution */
	uint32_t tiles;			/* tiles with at least one vertex */
	uint32_t vertices;
};

/* Per compute set profile (model backend). */
int ipu_cs_profile(struct ipu_device *d, uint32_t cs, struct ipu_cs_profile *out);

/*
 * One superstep as it ran.  Leaf steps only (enum ipu_step_kind, numbered
 * as the executable format numbers them); after the last step of a
 * program one more event of kind IPU_TRACE_PROGRAM covers the whole run.
 */
enum ipu_step_kind {
	IPU_STEP_EXECUTE = 2,		/* index: compute set */
	IPU_STEP_EXCHANGE = 3,		/* index: exchange */
	IPU_STEP_STREAM_COPY = 4,	/* index: stream copy */
	IPU_STEP_SYNC = 7,		/* index: IPU_SYNC_INTERNAL or IPU_SYNC_EXTERNAL */
};
#define IPU_SYNC_INTERNAL 0u		/* tiles only */
#define IPU_SYNC_EXTERNAL 1u		/* tiles and host */
#define IPU_TRACE_PROGRAM 0u		/* kind of the end-of-program event */
#define IPU_TRACE_STALLED 1u		/* flags: a stream copy waited for the host */

struct ipu_step_event {
	uint32_t program;		/* program index */
	uint32_t step;			/* index in the program steps (the root for a program) */
	uint16_t kind;			/* enum ipu_step_kind or IPU_TRACE_PROGRAM */
	uint16_t flags;			/* IPU_TRACE_STALLED */
	uint32_t index;			/* compute set, exchange, stream copy, sync kind */
	uint32_t stream;		/* stream copies: the stream */
	int32_t status;			/* program event: its result (0 or an error code) */
	uint64_t cycles;		/* modelled, exactly as added to the counters */
	uint64_t bytes;			/* exchange / stream copy: bytes moved */
	uint64_t start_ns, end_ns;	/* host CLOCK_MONOTONIC wall time */
};

/* Called on the device's thread after each traced step; must not call libipu. */
typedef void (*ipu_trace_fn)(void *ctx, const struct ipu_step_event *ev);

/*
 * Per-step events of the programs that run from now on (model backend),
 * delivered on the device's thread; fn NULL stops them.  Costs two clock
 * reads per step while set.  IPU_E_BUSY while a run is queued or running,
 * IPU_E_INVAL on a backend without them (/dev/accel/accelN).
 */
int ipu_set_trace(struct ipu_device *d, ipu_trace_fn fn, void *ctx);

/* Modelled cost of one superstep of the loaded executable, whether or not it ran. */
struct ipu_superstep_cost {
	uint64_t cycles;		/* as a run adds to the counters */
	uint64_t bytes;			/* exchange / stream copy: bytes moved */
};

/*
 * Modelled cost of one superstep (kind IPU_STEP_EXECUTE, _EXCHANGE or
 * _STREAM_COPY, index among them) of the loaded executable (model backend).
 */
int ipu_superstep_cost(struct ipu_device *d, uint32_t kind, uint32_t index,
		       struct ipu_superstep_cost *out);

#endif /* IPU_IPU_H */
