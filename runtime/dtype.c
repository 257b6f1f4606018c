// SPDX-License-Identifier: MIT
/*
 * dtype.c - sizes, names and device mapping of the user-facing dtypes.
 */
#include <string.h>

#include "ipu/dtype.h"
#include "ipu/ipux.h"

static const struct {
	const char *name;
	const char *long_name;
	size_t size;
	uint32_t ipux;
} dtypes[IPURT_DT_COUNT] = {
	[IPURT_DT_F32] = { "f32", "float32", 4, IPUX_DT_F32 },
	[IPURT_DT_F16] = { "f16", "float16", 2, IPUX_DT_F16 },
	[IPURT_DT_I32] = { "i32", "int32", 4, IPUX_DT_I32 },
	[IPURT_DT_I64] = { "i64", "int64", 8, IPUX_DT_I64 },
	[IPURT_DT_U8] = { "u8", "uint8", 1, IPUX_DT_U8 },
	[IPURT_DT_BOOL] = { "bool", "bool", 1, IPUX_DT_U8 },
	[IPURT_DT_I8] = { "i8", "int8", 1, IPUX_DT_I8 },
};

size_t ipurt_dtype_size(uint32_t dt)
{
	return dt < IPURT_DT_COUNT ? dtypes[dt].size : 0;
}

const char *ipurt_dtype_name(uint32_t dt)
{
	return dt > IPURT_DT_INVALID && dt < IPURT_DT_COUNT ? dtypes[dt].name
							     : "invalid";
}

enum ipurt_dtype ipurt_dtype_from_name(const char *name)
{
	for (uint32_t i = 1; i < IPURT_DT_COUNT; i++)
		if (!strcmp(name, dtypes[i].name) ||
		    !strcmp(name, dtypes[i].long_name))
			return (enum ipurt_dtype)i;
	return IPURT_DT_INVALID;
}

uint32_t ipurt_dtype_to_ipux(uint32_t dt)
{
	return dt < IPURT_DT_COUNT ? dtypes[dt].ipux : 0;
}
