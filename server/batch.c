// SPDX-License-Identifier: MIT
/*
 * batch.c - requests merged along the batch dimension and results split
 * back.  The batch dimension need not be the outermost one: a tensor is
 * seen as [outer, rows, inner] and each request's rows land at its offset
 * inside every outer slice.
 */
#include <string.h>

#include "batch.h"

static void geometry(const struct ipurt_tensor *t, uint32_t bdim, uint64_t *outer, uint64_t *inner)
{
	uint32_t i;

	*outer = 1;
	*inner = ipurt_dtype_size(t->dtype);
	for (i = 0; i < bdim; i++)
		*outer *= t->dims[i];
	for (i = bdim + 1; i < t->rank; i++)
		*inner *= t->dims[i];
}

uint64_t srv_tensor_bytes(const struct ipurt_tensor *t)
{
	uint64_t n = ipurt_dtype_size(t->dtype);
	uint32_t i;

	for (i = 0; i < t->rank; i++)
		n *= t->dims[i];
	return n;
}

void srv_batch_gather(void *merged, uint64_t total_rows, uint64_t offset,
		      const struct ipurt_tensor *part, uint32_t bdim)
{
	uint64_t outer, inner, rows = part->dims[bdim], o;

	geometry(part, bdim, &outer, &inner);
	for (o = 0; o < outer; o++)
		memcpy((char *)merged + (o * total_rows + offset) * inner,
		       (const char *)part->data + o * rows * inner, rows * inner);
}

void srv_batch_scatter(const void *merged, uint64_t total_rows, uint64_t offset,
		       const struct ipurt_tensor *part, uint32_t bdim)
{
	uint64_t outer, inner, rows = part->dims[bdim], o;

	geometry(part, bdim, &outer, &inner);
	for (o = 0; o < outer; o++)
		memcpy((char *)part->data + o * rows * inner,
		       (const char *)merged + (o * total_rows + offset) * inner, rows * inner);
}
