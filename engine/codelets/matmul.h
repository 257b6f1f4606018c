/* SPDX-License-Identifier: MIT */
/*
 * matmul.h - internal entry points of the MATMUL and CONV2D codelets, for
 * tests and benchmarks that exercise every instruction-set level.
 */
#ifndef IPU_CL_MATMUL_H
#define IPU_CL_MATMUL_H

#include "ipu/codelet.h"

/* Highest level the host supports: 0 generic, 1 AVX2+FMA, 2 AVX-512. */
int ipu_mm_max_level(void);
/* The level of v->isa (enum ipu_isa; AUTO: the host's best), clamped. */
int ipu_mm_level(const struct ipu_vertex_ctx *v);
/* Run a checked MATMUL vertex with the kernels of `level` (clamped). */
int ipu_mm_run_level(const struct ipu_vertex_ctx *v, int level);
/*
 * Run a checked CONV2D vertex with the kernels of `level`: the direct
 * engine, or with im2col != 0 the matmul engine's im2col path (which the
 * direct engine falls back to for rows too wide for its scratch).
 */
int ipu_conv_run_level(const struct ipu_vertex_ctx *v, int level, int im2col);

#endif /* IPU_CL_MATMUL_H */
