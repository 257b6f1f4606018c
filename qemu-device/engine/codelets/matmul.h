/* SPDX-License-Identifier: MIT */
/*
 * matmul.h - internal entry points of the MATMUL codelet, for tests and
 * benchmarks that exercise every instruction-set level.
 */
#ifndef IPU_CL_MATMUL_H
#define IPU_CL_MATMUL_H

#include "ipu/codelet.h"

/* Highest level the host supports: 0 generic, 1 AVX2+FMA, 2 AVX-512. */
int ipu_mm_max_level(void);
/* Run a checked MATMUL vertex with the kernels of `level` (clamped). */
int ipu_mm_run_level(const struct ipu_vertex_ctx *v, int level);

#endif /* IPU_CL_MATMUL_H */
