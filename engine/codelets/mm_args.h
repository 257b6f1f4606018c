/* SPDX-License-Identifier: MIT */
/*
 * mm_args.h - the blocked matrix-multiply engine shared by MATMUL and
 * CONV2D (which runs as a matmul over an implicit im2col matrix).
 */
#ifndef IPU_CL_MM_ARGS_H
#define IPU_CL_MM_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "cl_act.h"

/* Implicit im2col B for one image and group of a convolution. */
struct mm_conv {
	size_t H, W, kH, kW, sH, sW, pt, pl, dH, dW, OW;
};

/*
 * C[bt] (+)= A[bt % a_mod] x B[bt % b_mod] for bt < batch; A [M][K], B
 * [K][N] ([N][K] if trans_b, or the im2col of `conv`), C [M][N], with
 * batch strides a_bs, b_bs, c_bs in elements.
 */
struct mm_args {
	const void *a, *b;
	void *c;
	size_t batch, M, N, K;
	size_t a_mod, b_mod, a_bs, b_bs, c_bs;
	int f16;		/* A and B are F16 (else F32) */
	int c_f16;		/* C is F16 (else F32) */
	int trans_b, accumulate;
	const struct mm_conv *conv;
	struct cl_act act;	/* on each final value of C, before rounding */
};

/* Run with the kernels of `level` (see matmul.h). */
void ipu_mm_exec(const struct mm_args *g, int level);

#endif /* IPU_CL_MM_ARGS_H */
