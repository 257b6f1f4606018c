/* SPDX-License-Identifier: MIT */
/*
 * table.c - the codelet table: codelet id -> implementation.
 */
#include "cl_common.h"

static const struct ipu_codelet *const cl_table[IPUX_CL_COUNT] = {
	[IPUX_CL_COPY] = &ipu_cl_copy,
	[IPUX_CL_FILL] = &ipu_cl_fill,
	[IPUX_CL_CAST] = &ipu_cl_cast,
	[IPUX_CL_BINARY] = &ipu_cl_binary,
	[IPUX_CL_WHERE] = &ipu_cl_where,
	[IPUX_CL_MATMUL] = &ipu_cl_matmul,
	[IPUX_CL_IOTA] = &ipu_cl_iota,
};

const struct ipu_codelet *ipu_codelet_get(uint32_t id)
{
	if (id >= IPUX_CL_COUNT)
		return NULL;
	return cl_table[id];
}
