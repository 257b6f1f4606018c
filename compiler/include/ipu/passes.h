/* SPDX-License-Identifier: MIT */
/*
 * passes.h - graph passes of the compiler's front end.  Each pass takes an
 * inferred graph (every value typed and shaped), keeps it valid, and
 * returns the number of rewrites it made (or -1 with a message).
 */
#ifndef IPU_PASSES_H
#define IPU_PASSES_H

#include "ipu/ir.h"

struct ir_fp8_opts;

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

/*
 * fp8.c: 8-bit float weights, and activations, for Conv and MatMul (PopRT's
 * --precision fp8_weight / fp8).  Run on the lowering's prepared graph
 * (Gemm already a MatMul, 1x1 convolutions MatMuls with the weight first),
 * after the fp16 conversion.  Each eligible layer (a Conv whose weight is a
 * constant, or a MatMul with exactly one constant 2-D operand, read by that
 * node only) not skipped by name and not among the keep_fp16 most
 * sensitive ones gets its weight rounded to the fp8 grid in place and the
 * attributes the lowering reads:
 *   fp8_weight_input  index of the weight input,
 *   fp8_weight_format IPU_FP8_143/152, fp8_weight_scale its scale,
 *   fp8_weight_scales, fp8_weight_axis (per_channel): one scale per index
 *     of the weight's output-channel axis (fp8_weight_scale is then 0),
 *   fp8_input_format, fp8_input_scale (mode fp8 only): the other operand is
 *     converted to fp8 on the device before the product.
 * Returns the number of layers converted.
 */
enum ir_fp8_mode { IR_FP8_OFF = 0, IR_FP8_WEIGHT = 1, IR_FP8_FULL = 2 };

/* How much a layer suffers from fp8 (larger: kept in fp16 first). */
typedef double (*ir_fp8_rank_fn)(void *ctx, const struct ir_graph *g,
				 int node, const struct ir_fp8_opts *o);

struct ir_fp8_opts {
	int mode;			/* enum ir_fp8_mode */
	uint32_t input_format;		/* IPU_FP8_143 or IPU_FP8_152 */
	uint32_t weight_format;
	int input_scale;		/* activations' scale */
	int weight_scale_auto;		/* 1: per tensor, from its absmax */
	int weight_scale;		/* otherwise this one for all */
	/*
	 * With weight_scale_auto: 1 gives each output channel of a weight
	 * its own scale from that channel's absmax (attribute
	 * fp8_weight_scales), 0 one scale a tensor (PopRT's mode).
	 */
	int per_channel;
	const char *const *skip_names;	/* layers kept in fp16 by name */
	int nskip;
	int keep_fp16;			/* the N most sensitive stay fp16 */
	ir_fp8_rank_fn rank;		/* NULL: ir_fp8_weight_error */
	void *rank_ctx;
	/*
	 * Mode fp8: the scale of one layer's activation input (from
	 * calibration data), or NULL for input_scale everywhere.  Returns 1
	 * with *scale set, 0 to keep input_scale, -1 on error (e set).
	 */
	int (*input_scale_of)(void *ctx, const struct ir_graph *g, int node, int *scale,
			      struct ir_error *e);
	void *input_scale_ctx;
};

/*
 * The default ranking: relative squared error of the layer's weight
 * rounded to fp8, sum (w - q(w))^2 / sum w^2, at the scale the pass would
 * use.  0 for a node that is not an eligible layer.
 */
double ir_fp8_weight_error(void *ctx, const struct ir_graph *g, int node,
			   const struct ir_fp8_opts *o);
/*
 * The output-channel axis of eligible layer node's weight (input k): 0 for
 * a Conv's [Cout, ...] and a MatMul's left [M, K], 1 for a right [K, N].
 */
int ir_fp8_weight_axis(const struct ir_graph *g, int node, int k);
/* The weight input of an eligible layer, or -1. */
int ir_fp8_weight_input(const struct ir_graph *g, int node);
/* Does node n fall under a layer name (itself or a node derived from it,
 * named "NAME/...")? */
int ir_fp8_name_matches(const char *node_name, const char *layer);
int ir_pass_fp8(struct ir_graph *g, const struct ir_fp8_opts *o,
		struct ir_error *e);

/* The front-end pipeline. */
/* Quantize/Dequantize nodes of a QDQ model: those in the model, and those
 * left after the pipeline (computed on the device); the others, a
 * weight's QDQ, were folded into float constants at compile time. */
struct ir_qdq_stats {
	int q, dq;			/* QuantizeLinear, DequantizeLinear in the model */
	int q_left, dq_left;		/* of those, still computed at run time */
};

struct ir_pipeline_opts {
	struct ir_infer_opts infer;
	int precision_fp16;
	struct ir_fp16_opts fp16;
	int no_fusion;			/* skip fusions (debugging) */
	/* If not NULL, receives a copy of the optimised graph before the
	 * precision conversion (the float32 reference of --check). */
	struct ir_graph **fp32_copy;
	int verbose;			/* per-pass statistics on stderr */
	/* If not NULL, receives the QDQ counts (all 0 for a float model). */
	struct ir_qdq_stats *qdq;
	/* If not NULL, called after each pass instead of the verbose line
	 * (rewrites it made, live nodes after it). */
	void (*on_pass)(void *ctx, const char *pass, int rewrites, int nodes);
	void *on_pass_ctx;
};

int ir_pipeline_run(struct ir_graph *g, const struct ir_pipeline_opts *o,
		    struct ir_error *e);

#endif /* IPU_PASSES_H */
