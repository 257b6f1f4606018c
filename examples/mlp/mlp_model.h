/* SPDX-License-Identifier: MIT */
/*
 * mlp_model.h - a 784-512-10 MLP (relu hidden layer) built with the graph
 * builder and the partitioned matmul op, its weights frozen into the
 * executable and spread over the tiles, plus a double-precision reference.
 */
#ifndef IPU_EXAMPLE_MLP_MODEL_H
#define IPU_EXAMPLE_MLP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ops.h"

struct mlp {
	uint32_t batch, in, hidden, out;
	float *w1, *b1, *w2, *b2;	/* [in][hidden], [hidden], [hidden][out], [out] */
	struct ipu_mm_plan plan1, plan2;
};

/* Random weights from a fixed seed (Glorot-like scale). 0 or -1. */
int mlp_init(struct mlp *m, uint32_t batch, uint32_t in, uint32_t hidden, uint32_t out,
	     uint64_t seed);
void mlp_free(struct mlp *m);
/*
 * Build program 0 (stream x in, two layers, stream y out) over `ntiles`
 * tiles of a device of dev_tiles x tile_mem.  Stream 0 = x, stream 1 = y.
 * Returns the image (malloc'd) or NULL with the builder's message in err.
 */
void *mlp_build(struct mlp *m, uint32_t dev_tiles, uint32_t tile_mem, uint32_t ntiles,
		size_t *len, struct ipu_graph_stats *st, char *err, size_t errlen);
/* y = relu(x w1 + b1) w2 + b2 in double precision. */
void mlp_reference(const struct mlp *m, const float *x, double *y);
/* Deterministic test input in [-1, 1). */
void mlp_input(const struct mlp *m, uint64_t seed, float *x);

#endif
