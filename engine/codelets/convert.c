/* SPDX-License-Identifier: MIT */
/*
 * convert.c - block conversions between f16 and f32 used by every codelet
 * that computes f16 data in f32 (bit-identical to half.h).
 */
#include "cl_opt.h"
#include "cl_common.h"

CL_CLONES void ipu_cl_h2f_block(float *dst, const uint16_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = cl_h2f(src[i]);
}

CL_CLONES void ipu_cl_f2h_block(uint16_t *dst, const float *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = cl_f2h(src[i]);
}
