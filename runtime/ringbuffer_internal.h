/* SPDX-License-Identifier: MIT */
/*
 * ringbuffer_internal.h - test hook: start the 32-bit indices at `start`
 * so that tests reach the index wrap-around without 2^32 operations, and
 * force the symmetric-barrier mode (used where membarrier is missing) so
 * that tests cover it on every machine.
 */
#ifndef RINGBUFFER_INTERNAL_H
#define RINGBUFFER_INTERNAL_H

#include <stdint.h>

struct ipurt_ring;

int ipurt_ring_create_at(uint32_t capacity, uint32_t start, int symmetric,
			 struct ipurt_ring **out);

#endif /* RINGBUFFER_INTERNAL_H */
