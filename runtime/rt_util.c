// SPDX-License-Identifier: MIT
/* rt_util.c - small helpers of the Model Runtime. */
#include <string.h>

#include "ipu/npy.h"
#include "rt_internal.h"

void rt_shape_str(uint32_t dtype, uint32_t rank, const uint64_t *dims, char *buf, size_t len)
{
	size_t n;
	uint32_t i;

	n = (size_t)snprintf(buf, len, "%s[", ipurt_dtype_name(dtype));
	for (i = 0; i < rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%llu", i ? "," : "",
				      (unsigned long long)dims[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

