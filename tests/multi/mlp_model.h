/* SPDX-License-Identifier: MIT */
/*
 * mlp_model.h - the multi-IPU tests' model: x [8, 256] through `layers`
 * seeded random [256 x 256] fp32 weights (MatMul, Relu between), built as
 * the compiler's IR, and running lowered images on the in-process device.
 */
#ifndef MULTI_MLP_MODEL_H
#define MULTI_MLP_MODEL_H

#include "ipu/ir.h"
#include "ipu/lower.h"

#define MLP_ROWS 8
#define MLP_WIDTH 256

/* The IR graph (not yet through the pipeline), NULL when out of memory. */
struct ir_graph *mlp_graph(int layers);
/* The same with `rows` input rows (a micro-batch of the MLP_ROWS batch). */
struct ir_graph *mlp_graph_rows(int layers, int rows);
/* mlp_graph(layers) through the compiler's pipeline; NULL on failure (the
 * pipeline's message on stderr). */
struct ir_graph *mlp_prepared(int layers);
/* Seeded values in [-1, 1] for the MLP_ROWS x MLP_WIDTH input. */
void mlp_fill(float *x, uint32_t seed);

/* Named tensors handed from stage to stage. */
struct mlp_store {
	char *names[64];
	struct ir_tensor t[64];
	int n;
};
const struct ir_tensor *mlp_store_find(const struct mlp_store *s, const char *name);
void mlp_store_free(struct mlp_store *s);

/*
 * Lowers g (through the pipeline already) for target t, runs its Main
 * once on an in-process device of t's size with the inputs from store (by
 * name) and adds its outputs to store.  0, or -1 with the message in e.
 */
int mlp_run(struct ir_graph *g, const struct ipu_target *t, struct mlp_store *store,
	    struct ir_error *e);



#include "ipu/group.h"
#include "ipu/partition.h"

/* Loads IPU k's image of s on the group's device k and declares the
 * links (the group has s->nipus IPUs; not started); 0 or a negative code
 * with the message in err. */
int mlp_shard_load(const struct ipu_shard *s, struct ipu_group *grp, char *err, size_t errlen);

/*
 * The stages of p lowered each for its own IPU of target t
 * (ipu_shard_lower), loaded on a group of in-process devices and linked
 * (mlp_shard_load).  The
 * model's inputs and outputs (IPU, stream, name in g), and for the MLP
 * the first stage's `x` and the last stage's first output, are returned
 * for the caller to feed.  0, or -1 with e set.
 */
#define MLP_GROUP_IO 16
struct mlp_group_io {
	uint32_t ipu, stream;
};
struct mlp_group {
	struct ipu_group *g;
	struct mlp_group_io inputs[MLP_GROUP_IO], outputs[MLP_GROUP_IO];
	uint32_t ninputs, noutputs;
	uint32_t x_stream, y_stream, nstages;
	uint64_t y_bytes;
	uint32_t links;
};
int mlp_group_build(const struct ir_graph *g, const struct ipu_partition *p,
		    const struct ipu_target *t, struct mlp_group *out, struct ir_error *e);
#endif
