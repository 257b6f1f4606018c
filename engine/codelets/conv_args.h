/* SPDX-License-Identifier: MIT */
/*
 * conv_args.h - the direct convolution engine of CONV2D (conv_direct.c).
 *
 * The input of one band of output rows is copied once into zero-padded
 * "phase planes" (for stride s, s*s planes that each hold every s-th row
 * and column), so that for every kernel tap (ic, kh, kw) the input values
 * of consecutive outputs are consecutive floats of one plane.  The
 * register-blocked micro-kernel then reads them in place: no im2col
 * matrix, no per-tap packing.  Outputs are computed in a "wide" row layout
 * (plane width >= OW; the extra columns are computed and dropped) into f32
 * accumulators, and written to `out` once with the bias and the
 * activation epilogue.
 */
#ifndef IPU_CL_CONV_ARGS_H
#define IPU_CL_CONV_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "cl_act.h"

struct conv_args {
	const void *in, *w;
	void *out;
	const void *bias;	/* NULL: none */
	int in_f16, out_f16, bias_f16;
	int accumulate;		/* add to out's content */
	size_t N, G, cin_g, cout_g, H, W, OH, OW;
	size_t kH, kW, sH, sW, pt, pl, dH, dW;
	struct cl_act act;	/* on each final out value, before rounding */
};

/*
 * Run the convolution with the kernels of `level` (0 generic, 1 AVX2,
 * 2 AVX-512; clamped to what was built).  Returns 0, or -1 without
 * touching out when the shape does not fit the engine's fixed scratch
 * (a single row band too large): the caller then runs the im2col path.
 */
int ipu_conv_direct(const struct conv_args *c, int level);

#endif /* IPU_CL_CONV_ARGS_H */
