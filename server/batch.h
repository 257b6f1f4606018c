/* SPDX-License-Identifier: MIT */
/*
 * batch.h - copying requests' rows into one batch along the batch
 * dimension and back (server/batch.c).  Pure functions, no allocation,
 * so the unit tests can check them against a reference loop.
 */
#ifndef IPU_SERVE_BATCH_H
#define IPU_SERVE_BATCH_H

#include <stdint.h>

#include "ipu/runtime.h"

/* product(dims) * dtype size */
uint64_t srv_tensor_bytes(const struct ipurt_tensor *t);

/*
 * Copy `part` (its own rows along bdim, data in part->data) into `merged`,
 * a tensor of the same shape but total_rows along bdim, at row `offset`.
 */
void srv_batch_gather(void *merged, uint64_t total_rows, uint64_t offset,
		      const struct ipurt_tensor *part, uint32_t bdim);
/* The reverse: rows [offset, offset + part rows) of merged into part->data. */
void srv_batch_scatter(const void *merged, uint64_t total_rows, uint64_t offset,
		       const struct ipurt_tensor *part, uint32_t bdim);

#endif
