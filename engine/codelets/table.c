/* SPDX-License-Identifier: MIT */
/*
 * table.c - the codelet table: codelet id -> implementation.
 */
#include "cl_opt.h"
#include "cl_common.h"

static const struct ipu_codelet *const cl_table[IPUX_CL_COUNT] = {
	[IPUX_CL_COPY] = &ipu_cl_copy,
	[IPUX_CL_FILL] = &ipu_cl_fill,
	[IPUX_CL_CAST] = &ipu_cl_cast,
	[IPUX_CL_UNARY] = &ipu_cl_unary,
	[IPUX_CL_BINARY] = &ipu_cl_binary,
	[IPUX_CL_WHERE] = &ipu_cl_where,
	[IPUX_CL_MATMUL] = &ipu_cl_matmul,
	[IPUX_CL_CONV2D] = &ipu_cl_conv2d,
	[IPUX_CL_REDUCE] = &ipu_cl_reduce,
	[IPUX_CL_SOFTMAX] = &ipu_cl_softmax,
	[IPUX_CL_NORM] = &ipu_cl_norm,
	[IPUX_CL_POOL2D] = &ipu_cl_pool2d,
	[IPUX_CL_GATHER] = &ipu_cl_gather,
	[IPUX_CL_TRANSPOSE] = &ipu_cl_transpose,
	[IPUX_CL_STRIDED_COPY] = &ipu_cl_strided_copy,
	[IPUX_CL_PAD] = &ipu_cl_pad,
	[IPUX_CL_CUMSUM] = &ipu_cl_cumsum,
	[IPUX_CL_TOPK] = &ipu_cl_topk,
	[IPUX_CL_IOTA] = &ipu_cl_iota,
	[IPUX_CL_CAST_FP8] = &ipu_cl_cast_fp8,
	[IPUX_CL_MATMUL_FP8] = &ipu_cl_matmul_fp8,
	[IPUX_CL_CONV2D_FP8] = &ipu_cl_conv2d_fp8,
	[IPUX_CL_NMS] = &ipu_cl_nms,
	[IPUX_CL_SAMPLE] = &ipu_cl_sample,
};

const struct ipu_codelet *ipu_codelet_get(uint32_t id)
{
	if (id >= IPUX_CL_COUNT)
		return NULL;
	return cl_table[id];
}
