/* SPDX-License-Identifier: MIT */
/* rt_internal.h - helpers the Model Runtime's files share. */
#ifndef IPU_RT_INTERNAL_H
#define IPU_RT_INTERNAL_H

#include <stdio.h>

#include "ipu/runtime.h"

/* "f32[16,784]" */
/*
 * custom_spec.c: the custom codelets an executable image names (its
 * CUSTOM section: "domain::name (library sha256 HEX)", comma-separated)
 * into buf; 0 when it has none or the image is malformed.  A device behind
 * the driver reports only the error code: this names what it lacked.
 */
int rt_custom_codelets(const void *image, size_t len, char *buf, size_t buflen);

void rt_shape_str(uint32_t dtype, uint32_t rank, const uint64_t *dims, char *buf, size_t len);

/*
 * A QueueManager that also reports each run as it is handed to the device
 * (from its feeder thread, before the run can be reported done).
 */
typedef void (*rt_run_dispatched_fn)(void *ctx, void *run_tag);
int rt_qm_create(struct ipurt_session *s, uint32_t depth, ipurt_run_done_fn done,
		 rt_run_dispatched_fn dispatched, void *done_ctx,
		 struct ipurt_queue_manager **out, char *err, size_t errlen);

/*
 * ipurt_qm_enqueue, except that when nothing else is queued or running on
 * the device the run is made on the calling thread (ipu_run_here): `done`
 * is then called for run_tag, on this thread, before this returns.  Only
 * for a caller about to wait for the run anyway, with no timeout to
 * recover from (a run waiting for a buffer nobody queues holds this
 * thread and the QueueManager's producers' lock).
 */
int rt_qm_enqueue_here(struct ipurt_queue_manager *qm, const uint32_t *anchors,
		       void *const *buffers, uint32_t n, void *run_tag);

/*
 * Give up on a QueueManager's device (replication takes it out of
 * rotation): later enqueues fail with IPURT_E_CLOSED, producers asleep on
 * a full ring wake with it, queued and running runs are reported
 * cancelled.  Thread-safe; ipurt_qm_destroy still frees it.
 */
void rt_qm_fail(struct ipurt_queue_manager *qm);

/*
 * Load the model again on a QueueManager's device (after a reset unloaded
 * it): with producers held off, everything queued is cancelled and the
 * session reloads (ipurt_session_reload).  Thread-safe.
 */
int rt_qm_reload(struct ipurt_queue_manager *qm, struct ipurt_session *s, char *err,
		 size_t errlen);

/* model_runner.c: runs a named program once on the runner's first device,
 * synchronously, with no request in flight (generate.c's tokens-only
 * steps: IPUEF_PROGRAM_TOKENS). */
int rt_runner_run_program(struct ipurt_runner *r, const char *program,
			  const struct ipurt_tensor *tensors, uint32_t n, char *err, size_t errlen);

/*
 * Length of the first device spec of a list ("model:tiles=16,tile_mem=64KiB,
 * /dev/accel/accel0;model:"): a ',' ends a model spec only when what
 * follows is not a key=value setting of it (device_manager.c).
 */
size_t rt_spec_len(const char *p);

#endif /* IPU_RT_INTERNAL_H */
