/* SPDX-License-Identifier: MIT */
/*
 * codelet.h - the interface between the engine core and its codelets.
 *
 * A codelet is one entry of the device's instruction set.  Each has
 *  - check(): called once by the verifier at load time with the vertex's
 *    operand regions (already bounds-checked against the tile and aligned to
 *    their dtype) and params.  It must reject every combination for which
 *    run() could touch memory outside its operand regions.  After check()
 *    accepted a vertex, run() is called without any further validation, so
 *    check() is part of the device's security boundary.
 *  - cost(): modelled cycles for one execution (deterministic, documented
 *    in Documentation/device/codelets.md).
 *  - run(): does the work.  Returns 0, or IPU_FAULT_* for a data-dependent
 *    fault (e.g. a gather index out of range) which aborts the program.
 *
 * Operand regions are addressed as tile_base + operand.offset.  Tile memory
 * is 64-byte aligned, offsets are aligned to the element size, so codelets
 * may cast to typed pointers.  f16 is IEEE binary16 stored, f32 computed.
 *
 * Rules for every codelet (decided; Documentation/device/codelets.md has
 * the details and the cost model):
 *  - Operand counts are exact: each must equal what the params imply
 *    (except STRIDED_COPY's in, which must contain the reached indices).
 *  - Shape params (dims, len, outer, inner, kernel sizes, strides of
 *    windows, dilations, groups, nidx) are >= 1; products are computed in
 *    64 bits and every operand must fit 2^32-1 elements; otherwise
 *    IPUX_E_PARAM_VALUE.  Unknown ops, modes and flag bits are refused.
 *  - Operands may overlap without run() ever leaving its regions; results
 *    are defined for exact in-place use of elementwise codelets (COPY, CAST,
 *    UNARY, BINARY, WHERE, SOFTMAX, NORM, CUMSUM).  TOPK refuses overlap.
 *  - Integer arithmetic wraps; float MAX/MIN propagate NaN; MATMUL/CONV2D
 *    may use FMA.  Floats in REDUCE/SOFTMAX/NORM/CUMSUM accumulate in double.
 *
 * Operand/param conventions for every codelet (counts are element counts):
 *
 * COPY      ops [src, dst]; params []. src and dst same dtype and count.
 * FILL      ops [dst]; params [value]: f32 bit pattern for F32/F16, integer
 *           for I32/U8/I8 (I64 sign-extended from the i32 value).
 * CAST      ops [src, dst]; params []. Equal counts, any dtype pair.  Float to
 *           int truncates toward zero and saturates; NaN -> 0; to U8 "bool"
 *           is NOT implied (use BINARY NOT_EQUAL for that).  Int to int
 *           wraps (two's complement), like numpy astype.
 * UNARY     ops [src, dst]; params [op, alpha?, beta?] (alpha/beta f32 bits).
 *           Same count; float dtypes (F32/F16, src and dst equal) except
 *           NEG/ABS/SIGN on I32 and NOT on U8.  See enum ipux_unary_op.
 *           Omitted alpha/beta take ONNX's defaults (LEAKY_RELU 0.01,
 *           HARD_SIGMOID 0.2/0.5, CLIP -inf/+inf, ELU 1, SELU 1.67326.../
 *           1.05070...).  I32 NEG/ABS of INT_MIN wrap.
 * BINARY    ops [a, b, out]; params [op, rank, shape[rank], astride[rank],
 *           bstride[rank]] with rank 1..IPUX_MAX_RANK.  out is dense
 *           row-major of `shape`; a[i] = a.base[sum idx_k*astride_k] (stride 0
 *           broadcasts).  a,b same dtype; out same dtype except comparisons
 *           whose out is U8.  Int division by zero gives 0.  Strides are
 *           u32.  F32/F16: all ops but AND/OR/XOR; I32: all but POW, ADD_RELU and
 *           logic; U8: comparisons and AND/OR/XOR.  I32 wraps,
 *           INT_MIN / -1 = INT_MIN, x % 0 = x % -1 = 0.
 * WHERE     ops [cond(U8), x, y, out]; params [rank, shape[rank],
 *           cstride[rank], xstride[rank], ystride[rank]].  x, y, out any
 *           dtype (the same); cond nonzero is true.
 * MATMUL    ops [A, B, C]; params [batch, M, N, K, flags].  A is
 *           [batch][M][K] (or [M][K] shared if IPUX_MM_A_SHARED), B is
 *           [batch][K][N] ([batch][N][K] with IPUX_MM_TRANS_B; [K][N] shared
 *           with IPUX_MM_B_SHARED), C is [batch][M][N].  A,B both F32 or both
 *           F16; C F32 or F16; accumulation in f32.  IPUX_MM_ACCUMULATE adds
 *           to C instead of overwriting it.  Only the operand counts must
 *           fit 2^32-1 (batch*M*N*K may not).  Activation epilogue on the
 *           final f32 value (after ACCUMULATE's add, before rounding to
 *           F16): IPUX_MM_RELU (x < 0 ? 0 : x) or IPUX_MM_CLIP, which takes
 *           two more params [lo, hi] (f32 bits, not NaN, lo <= hi; x < lo ?
 *           lo : x > hi ? hi : x): UNARY RELU/CLIP's formulas.
 * CONV2D    ops [in, weight, out] or [in, weight, out, bias]; params [N, Cin,
 *           H, W, Cout, kH, kW, strideH, strideW, padTop, padLeft, padBottom,
 *           padRight, dilH, dilW, groups, flags].  in [N][Cin][H][W], weight
 *           [Cout][Cin/groups][kH][kW], out [N][Cout][OH][OW] with
 *           OH = (H + pt + pb - dilH*(kH-1) - 1)/strideH + 1 (likewise OW);
 *           bias [Cout].  IPUX_CONV_ACCUMULATE adds to out.  Float dtypes:
 *           in and weight the same, out and bias any float.  out =
 *           (ACCUMULATE ? out : 0) + bias + conv.  groups divides Cin, Cout;
 *           OH, OW >= 1.  IPUX_CONV_RELU / IPUX_CONV_CLIP (params +
 *           [lo, hi]) apply MATMUL's activation epilogue to that out.
 * REDUCE    ops [in, out]; params [op, outer, len, inner].  in viewed as
 *           [outer][len][inner], out [outer][inner]: reduce the middle axis.
 *           ARGMAX/ARGMIN write I32 (first index of the extreme); others
 *           write the input's float dtype (or I32 for I32 input).  len >= 1.
 *           I32 input: not L2/LOG_SUM_EXP; MEAN truncates.  MAX/MIN
 *           propagate NaN; ARG* take the first NaN as the extreme.
 * SOFTMAX   ops [in, out]; params [outer, len, inner, flags] softmax over the
 *           middle axis; IPUX_SOFTMAX_LOG for log-softmax.  Max-subtracted.
 * NORM      ops [in, scale, bias, out]; params [rows, cols, eps(f32 bits),
 *           scale_mode, period].  Each row of in [rows][cols] is normalised
 *           to zero mean, unit variance (biased), then scaled:
 *           scale_mode 0: scale/bias have `cols` elements (layer norm);
 *           scale_mode 1: scale/bias have `period` elements and row r uses
 *           element r % period (instance/group norm over channels).
 *           scale and bias have in's dtype; period >= 1 in mode 1.
 * POOL2D    ops [in, out]; params [op, NC, H, W, kH, kW, strideH, strideW,
 *           padTop, padLeft, padBottom, padRight, dilH, dilW, flags].
 *           in [NC][H][W], out [NC][OH][OW].  op IPUX_POOL_MAX or _AVG;
 *           IPUX_POOL_COUNT_PAD counts padding in the average (divisor
 *           kH*kW).  Max of a window entirely in padding is -inf; an average
 *           over no input element is 0.
 * GATHER    ops [data, indices, out]; params [outer, len, inner, nidx].
 *           data [outer][len][inner], indices I32 or I64 [nidx],
 *           out [outer][nidx][inner]; negative indices count from the end;
 *           an index outside [-len, len) faults (IPU_FAULT_INDEX).  data
 *           and out any dtype (the same).
 * TRANSPOSE ops [in, out]; params [rank, shape[rank], perm[rank]]: out's
 *           dim k is in's dim perm[k].  Any dtype, same for in and out.
 *           shape is in's shape (out's is shape[perm[k]]).
 * STRIDED_COPY ops [in, out]; params [rank, shape[rank], in_offset,
 *           in_stride[rank]] (strides are i32, may be negative or 0): out is
 *           dense [shape]; out[idx] = in[in_offset + sum idx_k*in_stride_k].
 *           Covers slice, step slices, expand/tile, concat pieces, flips.
 * PAD       ops [in, out]; params [rank, in_shape[rank], begin[rank],
 *           end[rank], mode, value].  mode 0 constant (value as FILL),
 *           1 reflect, 2 edge.  begin/end are i32 and may be negative (crop).
 *           Out dims must be >= 1; reflect needs begin, end <= dim - 1.
 * CUMSUM    ops [in, out]; params [outer, len, inner, flags]
 *           (IPUX_CUMSUM_EXCLUSIVE, IPUX_CUMSUM_REVERSE).
 * TOPK      ops [in, values, indices(I32)]; params [outer, len, inner, k,
 *           flags (IPUX_TOPK_LARGEST)].  Results sorted; ties by lower index.
 *           in F32/F16/I32, values in's dtype; 1 <= k <= len; NaN counts
 *           as the greatest; the three operands must not overlap.
 * IOTA      ops [out]; params [start, delta] (f32 bits for float dtypes, i32
 *           otherwise): out[i] = start + i * delta.  Any dtype; floats
 *           computed in double and rounded once, integers wrap.
 * CAST_FP8  ops [src, dst]; params [scale(i32)]: F32/F16 <-> FP8_143/
 *           FP8_152 (one side fp8, its scale in [-32, 31]), rules of
 *           ipu/fp8.h; equal counts; no overlap.
 * MATMUL_FP8 ops [A, B, C]; params [batch, M, N, K, flags, scaleA,
 *           scaleB]: MATMUL with A and B F32/F16/fp8, at least one fp8
 *           (a scale is 0 unless its operand is fp8), C F32/F16; f32 sums
 *           in k order, never fused.
 * CONV2D_FP8 ops as CONV2D; params CONV2D's + [scaleIn, scaleW]: weight
 *           fp8, in F32/F16/fp8, out and bias F32/F16.
 * NMS       ops [boxes, scores, selected(I64), count(I32), scratch(I32)];
 *           params [B, C, N, max_out, iou_threshold(f32 bits),
 *           score_threshold(f32 bits), flags (IPUX_NMS_CENTER,
 *           IPUX_NMS_SCORE_THRESHOLD)].  ONNX NonMaxSuppression: boxes
 *           [B, N, 4] and scores [B, C, N] F32/F16 (the same); selected
 *           [B*C*min(N, max_out), 3] (batch, class, box) in ONNX's order,
 *           rows past the run-time count -1; count [1]; scratch [2*N].
 *           NaN scores are never selected; no operand overlaps another.
 * SAMPLE    ops [values, ids, params, keys, out]; params [rows, k]: each
 *           row's token drawn from its k candidates (values F32/F16 in
 *           descending order, ids I32/I64) by ipu/sample.h with params
 *           F32 [rows][temperature, top_p] and keys I64 [rows][top_k,
 *           seed, counter]; out I32/I64 [rows]; 1 <= k <= 64.
 * The fp8 dtypes are otherwise only moved as bytes (COPY, GATHER,
 * TRANSPOSE, STRIDED_COPY, PAD, WHERE) or written by FILL (the value's
 * low byte is the code); every other codelet refuses them.
 */
#ifndef IPU_CODELET_H
#define IPU_CODELET_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ipux.h"

enum ipux_unary_op {
	IPUX_UN_RELU = 0,
	IPUX_UN_SIGMOID = 1,
	IPUX_UN_TANH = 2,
	IPUX_UN_EXP = 3,
	IPUX_UN_LOG = 4,
	IPUX_UN_SQRT = 5,
	IPUX_UN_ERF = 6,
	IPUX_UN_GELU = 7,	/* exact: x * 0.5 * (1 + erf(x / sqrt 2)),
				 * erf approximated to 5e-7 absolute */
	IPUX_UN_GELU_TANH = 8,	/* tanh approximation */
	IPUX_UN_NEG = 9,
	IPUX_UN_ABS = 10,
	IPUX_UN_RECIPROCAL = 11,
	IPUX_UN_LEAKY_RELU = 12, /* alpha */
	IPUX_UN_HARD_SIGMOID = 13, /* alpha, beta: max(0, min(1, a*x + b)) */
	IPUX_UN_HARD_SWISH = 14,
	IPUX_UN_CLIP = 15,	/* alpha = min, beta = max */
	IPUX_UN_NOT = 16,	/* U8 only */
	IPUX_UN_FLOOR = 17,
	IPUX_UN_CEIL = 18,
	IPUX_UN_ROUND = 19,	/* half to even */
	IPUX_UN_SIGN = 20,
	IPUX_UN_SIN = 21,
	IPUX_UN_COS = 22,
	IPUX_UN_ELU = 23,	/* alpha */
	IPUX_UN_SOFTPLUS = 24,
	IPUX_UN_SELU = 25,	/* alpha, beta = gamma */
	IPUX_UN_SQUARE = 26,
	IPUX_UN_RSQRT = 27,
	IPUX_UN_COUNT
};

enum ipux_binary_op {
	IPUX_BIN_ADD = 0,
	IPUX_BIN_SUB = 1,
	IPUX_BIN_MUL = 2,
	IPUX_BIN_DIV = 3,
	IPUX_BIN_POW = 4,
	IPUX_BIN_MAX = 5,
	IPUX_BIN_MIN = 6,
	IPUX_BIN_MOD = 7,	/* fmod semantics for floats, C % for ints */
	IPUX_BIN_EQUAL = 8,	/* comparisons: out U8 */
	IPUX_BIN_NOT_EQUAL = 9,
	IPUX_BIN_LESS = 10,
	IPUX_BIN_LESS_EQUAL = 11,
	IPUX_BIN_GREATER = 12,
	IPUX_BIN_GREATER_EQUAL = 13,
	IPUX_BIN_AND = 14,	/* logical, U8 */
	IPUX_BIN_OR = 15,
	IPUX_BIN_XOR = 16,
	IPUX_BIN_PRELU = 17,	/* a >= 0 ? a : a * b */
	IPUX_BIN_ADD_RELU = 18,	/* s = a + b in f32, s < 0 ? 0 : s; F32/F16 */
	IPUX_BIN_COUNT
};

enum ipux_reduce_op {
	IPUX_RED_SUM = 0,
	IPUX_RED_MEAN = 1,
	IPUX_RED_MAX = 2,
	IPUX_RED_MIN = 3,
	IPUX_RED_PROD = 4,
	IPUX_RED_ARGMAX = 5,
	IPUX_RED_ARGMIN = 6,
	IPUX_RED_SUM_SQUARE = 7,
	IPUX_RED_L1 = 8,
	IPUX_RED_L2 = 9,
	IPUX_RED_LOG_SUM_EXP = 10,
	IPUX_RED_COUNT
};

#define IPUX_MM_ACCUMULATE 0x1u
#define IPUX_MM_TRANS_B 0x2u
#define IPUX_MM_B_SHARED 0x4u
#define IPUX_MM_A_SHARED 0x8u
/* activation epilogues; CLIP appends params [lo, hi] (f32 bits) */
#define IPUX_MM_RELU 0x10u
#define IPUX_MM_CLIP 0x20u
/*
 * MATMUL_FP8 only: a fourth operand, I8 exponents, scales the fp8 weight
 * per output channel: per row of A ([M], SCALES_A) or per column of B
 * ([N], SCALES_B); that operand's scale param must then be 0.
 */
#define IPUX_MM_SCALES_A 0x40u
#define IPUX_MM_SCALES_B 0x80u
#define IPUX_CONV_ACCUMULATE 0x1u
#define IPUX_CONV_RELU 0x2u
#define IPUX_CONV_CLIP 0x4u
/* CONV2D_FP8 only: a last operand, I8 exponents [Cout], scales the fp8
 * weight per output channel (scaleW must then be 0). */
#define IPUX_CONV_CHANNEL_SCALES 0x8u
#define IPUX_SOFTMAX_LOG 0x1u
#define IPUX_POOL_MAX 0u
#define IPUX_POOL_AVG 1u
#define IPUX_POOL_COUNT_PAD 0x1u
#define IPUX_CUMSUM_EXCLUSIVE 0x1u
#define IPUX_CUMSUM_REVERSE 0x2u
#define IPUX_TOPK_LARGEST 0x1u
/* NMS flags: boxes are (x_center, y_center, width, height); a score
 * threshold applies (params[5]). */
#define IPUX_NMS_CENTER 0x1u
#define IPUX_NMS_SCORE_THRESHOLD 0x2u

/* Data-dependent faults a codelet's run() may return. */
enum ipu_fault {
	IPU_FAULT_NONE = 0,
	IPU_FAULT_INDEX = 1,	/* gather index out of range */
};

/*
 * Kernel variants of MATMUL and CONV2D.  The engine picks one when it is
 * created (the best the host CPU supports, or IPU_ENGINE_ISA, see
 * ipu_engine_create) and hands it to every vertex; all variants compute
 * the same sums in the same order but may differ in the last bits (FMA).
 */
enum ipu_isa {
	IPU_ISA_AUTO = 0,	/* the best the host CPU supports */
	IPU_ISA_GENERIC = 1,	/* portable C (SSE2-class vectors on x86-64) */
	IPU_ISA_AVX2 = 2,	/* AVX2 + FMA + F16C */
	IPU_ISA_AVX512 = 3,	/* AVX-512F (+ AVX2, FMA, F16C) */
	IPU_ISA_COUNT
};

/* A vertex as the codelet sees it at run time. */
struct ipu_vertex_ctx {
	uint8_t *mem;			/* base of the vertex's tile memory */
	const struct ipux_operand *ops;	/* num_ops operand regions */
	const uint32_t *params;		/* num_params u32 params */
	uint32_t num_ops;
	uint32_t num_params;
	uint32_t isa;			/* enum ipu_isa (AUTO if 0) */
};

/* The best variant the host CPU supports (never IPU_ISA_AUTO). */
uint32_t ipu_isa_host(void);
/* "auto", "generic", "avx2", "avx512"; NULL for an unknown value. */
const char *ipu_isa_name(uint32_t isa);

/* Typed pointer to operand i. */
#define IPU_OP_PTR(ctx, i, type) ((type *)((ctx)->mem + (ctx)->ops[(i)].offset))

/*
 * check() returns 0 or one of IPUX_E_OPERAND_COUNT, IPUX_E_PARAM_COUNT,
 * IPUX_E_OPERAND_TYPE, IPUX_E_OPERAND_SHAPE, IPUX_E_PARAM_VALUE (see
 * engine.h), and writes a one-line reason into why[0..whylen).
 */
typedef int (*ipu_codelet_check_fn)(const struct ipu_vertex_ctx *v,
				    char *why, size_t whylen);
typedef uint64_t (*ipu_codelet_cost_fn)(const struct ipu_vertex_ctx *v);
typedef int (*ipu_codelet_run_fn)(const struct ipu_vertex_ctx *v);

struct ipu_codelet {
	const char *name;
	ipu_codelet_check_fn check;
	ipu_codelet_cost_fn cost;
	ipu_codelet_run_fn run;
};

/* The codelet with this id, or NULL if the id is unknown. */
const struct ipu_codelet *ipu_codelet_get(uint32_t id);

#endif /* IPU_CODELET_H */
