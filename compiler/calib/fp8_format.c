/* SPDX-License-Identifier: MIT */
/*
 * fp8_format.c - the device's 8-bit float formats (ipu/fp8.h) as
 * calibration formats: the search and the emulation round through the
 * same scalar encoder the device's conversion is tested against.
 */
#include "calib/calib.h"
#include "ipu/fp8.h"

static double quantize(const void *ctx, int scale, double x)
{
	uint32_t fmt = (uint32_t)(uintptr_t)ctx;

	return ipu_fp8_to_f32(ipu_fp8_from_f32((float)x, fmt, scale), fmt, scale);
}

static int for_absmax(const void *ctx, double absmax)
{
	return ipu_fp8_scale_for_absmax(absmax, (uint32_t)(uintptr_t)ctx);
}

int ipu_calib_fp8_format(uint32_t fmt, struct ipu_calib_format *f, struct ir_error *e)
{
	const char *name = ipu_fp8_format_name(fmt);

	if (!name)
		return ir_err(e, "fp8 format %u is unknown", fmt);
	f->quantize = quantize;
	f->ctx = (const void *)(uintptr_t)fmt;
	f->scale_min = IPU_FP8_SCALE_MIN;
	f->scale_max = IPU_FP8_SCALE_MAX;
	f->name = name;
	f->scale_for_absmax = for_absmax;
	return 0;
}
