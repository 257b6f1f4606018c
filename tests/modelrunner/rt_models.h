/* SPDX-License-Identifier: MIT */
/* rt_models.h - .ipuef models for the Model Runtime tests and benchmarks. */
#ifndef IPU_RT_MODELS_H
#define IPU_RT_MODELS_H

#include "ipu/ipuef.h"

/* Y = X * 2 + W; X, Y f32 [4, 3] (batch dim 0); W [3] = {10, 20, 30} is
 * TensorData streamed in by the Load program. */
int rt_make_affine(const char *path);
/* Y = X * 2; X, Y f32 [2, 4, 3] with the batch along dim 1. */
int rt_make_scale_dim1(const char *path);
/* The seed-004 fused model: graph0/O = X + Y (f32), graph1/O =
 * concat(X, [1.5, 2]) (f16), selected by the `index` anchor. */
int rt_make_fused(const char *path);

#endif
