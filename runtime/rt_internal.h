/* SPDX-License-Identifier: MIT */
/* rt_internal.h - helpers the Model Runtime's files share. */
#ifndef IPU_RT_INTERNAL_H
#define IPU_RT_INTERNAL_H

#include <stdio.h>

#include "ipu/runtime.h"

#define rt_errf(err, errlen, ...) \
	do { if ((err) && (errlen)) snprintf((err), (errlen), __VA_ARGS__); } while (0)

/* "f32[16,784]" */
void rt_shape_str(uint32_t dtype, uint32_t rank, const uint64_t *dims, char *buf, size_t len);

#endif /* IPU_RT_INTERNAL_H */
