/* SPDX-License-Identifier: MIT */
/*
 * ops.h - tile-partitioned operations built on the graph builder (what
 * poplin/popops are to Poplar).  Each op chooses a partition of its work
 * over a range of tiles, creates per-tile temporaries, and appends the
 * exchanges and compute sets that implement it to a sequence step.
 */
#ifndef IPU_OPS_H
#define IPU_OPS_H

#include <stdint.h>

#include "ipu/graph.h"

/* How a matmul is split: blocks of M, N and K over mp * np * kp tiles. */
struct ipu_mm_plan {
	uint32_t mp, np, kp;
	uint32_t mb, nb, kb;		/* block sizes (the last block may be smaller) */
	uint64_t bytes_per_tile;	/* worst tile, operands + partials */
	uint64_t macs_per_tile;
};

/*
 * Best split of an [M,K] x [K,N] matmul over at most `ntiles` tiles with at
 * most `budget` bytes per tile (elements of `es` bytes, f32 partials):
 * least per-tile work plus exchange, first fitting.  0 or -1 (no split
 * fits: the message says how much the smallest split needs).
 */
int ipu_mm_plan(uint64_t M, uint64_t N, uint64_t K, uint32_t es, uint32_t ntiles,
		uint64_t budget, struct ipu_mm_plan *plan, char *err, size_t errlen);

struct ipu_mm_args {
	ipu_tensor a;		/* [M, K], any mapping */
	ipu_tensor b;		/* [K, N] tensor, or IPU_GRAPH_INVALID with b_data */
	const void *b_data;	/* frozen weights [K, N] (dtype of a) or NULL */
	ipu_tensor bias;	/* [N] or IPU_GRAPH_INVALID */
	const void *bias_data;	/* frozen bias [N] (dtype of output) or NULL */
	int32_t act;		/* enum ipux_unary_op applied last, or -1 */
	uint64_t M, N, K;
	uint32_t first_tile, ntiles;
	uint64_t budget;	/* bytes per tile the op may use (0: 3/4 tile) */
	const char *name;	/* prefix of the names it creates */
};

/*
 * C = act(A x B + bias) appended to `seq`.  Returns C ([M, N], dtype of A,
 * f32 accumulation), mapped by blocks on the tiles that reduce them, or
 * IPU_GRAPH_INVALID (see ipu_graph_error).  *plan_out may be NULL.
 */
ipu_tensor ipu_ops_matmul(struct ipu_graph *g, ipu_step seq, const struct ipu_mm_args *args,
			  struct ipu_mm_plan *plan_out);

#endif /* IPU_OPS_H */
