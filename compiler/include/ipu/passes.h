/* SPDX-License-Identifier: MIT */
/*
 * passes.h - graph passes of the compiler's front end.  Each pass takes an
 * inferred graph (every value typed and shaped), keeps it valid, and
 * returns the number of rewrites it made (or -1 with a message).
 */
#ifndef IPU_PASSES_H
#define IPU_PASSES_H

#include "ipu/ir.h"

/* Folds every node whose inputs are all constant (results up to `limit`
 * elements). */
int ir_pass_fold(struct ir_graph *g, int64_t limit, struct ir_error *e);
/* Removes nodes whose outputs nothing reads, then compacts the graph. */
int ir_pass_dce(struct ir_graph *g, struct ir_error *e);
/* Removes Identity and inference-mode Dropout. */
int ir_pass_identity(struct ir_graph *g, struct ir_error *e);
/* MatMul(A[M,K], const B[K,N]) + const C -> Gemm. */
int ir_pass_fuse_matmul_add(struct ir_graph *g, struct ir_error *e);
/* Conv(const W, const B?) -> BatchNormalization(const params) -> Conv with
 * folded weights. */
int ir_pass_fuse_conv_bn(struct ir_graph *g, struct ir_error *e);
/* int64 constants used as gather indices become int32 (when they fit). */
int ir_pass_int64_to_int32(struct ir_graph *g, struct ir_error *e);
/* wide_types.c: float64 -> float32, int16/uint16 -> int32 everywhere
 * (anchors included); returns the number of rewrites. */
int ir_pass_wide_types(struct ir_graph *g, struct ir_error *e);

struct ir_fp16_opts {
	const char *const *skip_ops;	/* op types kept in float32 */
	int nskip;
};

/* float32 -> float16 everywhere except skipped ops (Casts at their
 * boundaries) and shape parameters (Resize scales/roi).  Softmax, norms
 * and reductions get the attribute accumulate_f32 = 1. */
int ir_pass_fp16(struct ir_graph *g, const struct ir_fp16_opts *o,
		 struct ir_error *e);

/* The front-end pipeline. */
struct ir_pipeline_opts {
	struct ir_infer_opts infer;
	int precision_fp16;
	struct ir_fp16_opts fp16;
	int no_fusion;			/* skip fusions (debugging) */
	/* If not NULL, receives a copy of the optimised graph before the
	 * precision conversion (the float32 reference of --check). */
	struct ir_graph **fp32_copy;
	int verbose;			/* per-pass statistics on stderr */
};

int ir_pipeline_run(struct ir_graph *g, const struct ir_pipeline_opts *o,
		    struct ir_error *e);

#endif /* IPU_PASSES_H */
