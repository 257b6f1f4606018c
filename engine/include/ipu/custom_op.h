/* SPDX-License-Identifier: MIT */
/*
 * custom_op.h - the plugin ABI of custom operators: a shared library of a
 * user's own operators, from an ONNX node of the user's domain down to a
 * codelet on the tiles.
 *
 * A plugin exports one function, IPU_CUSTOM_OP_ENTRY
 * ("ipu_custom_op_library"), returning a table of operators that lives as
 * long as the library is loaded.  The compiler (ipu-compile
 * --custom_library_so_paths), the in-process device (libipu) and the QEMU
 * device (-device ipu,custom-ops=PATH) load the same library; each host
 * checks abi_version and the struct sizes before it reads anything else,
 * so a plugin built against another version of this header is refused
 * with a message, never misread.
 *
 * One operator is (domain, name, opset range) and brings:
 *  - its attribute schema: float and int attributes, each with a default
 *    unless required;
 *  - infer(): output dtypes and shapes from the inputs' (and the
 *    attributes); a refusal's message reaches the user with the node's name;
 *  - reference(): the operator on the host in float (inputs converted to
 *    f32 whatever their dtype, outputs converted back), used by the
 *    compiler's reference evaluator and --check;
 *  - a tile codelet with the engine's own signature (struct ipu_codelet of
 *    ipu/codelet.h): check() runs once per vertex when an executable is
 *    loaded and must refuse every vertex run() could not run inside its
 *    operand regions, cost() gives the modelled cycles, run() the work;
 *  - how the compiler splits one node over tiles (enum ipu_custom_split).
 *
 * A vertex of a custom codelet has the node's inputs as operands 0..nin-1,
 * in order, then its outputs, and the params
 *   [rows, cols, attr_0, ..., attr_{num_attrs-1}]
 * where the vertex computes `rows` rows of `cols` elements of the output
 * (ELEMENTWISE: cols = 1), and each attribute is the u32 bit pattern of
 * its f32 value (FLOAT) or its value as i32 (INT), in schema order.  An
 * input with as many elements as the output is split like the output;
 * any other input comes whole to every vertex (a weight of `cols`
 * elements, a scalar).  Operand dtypes are the node's (F32, or F16 for an
 * operator with IPU_CUSTOM_F16 under --precision fp16).
 *
 * Trust: a plugin is native code run with the full privileges of the
 * process that loads it (the compiler, the runtime, the QEMU process).
 * Only whoever starts that process chooses it; never a model file or a
 * guest.  See Documentation/compiler/custom-ops.md.
 */
#ifndef IPU_CUSTOM_OP_H
#define IPU_CUSTOM_OP_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/codelet.h"
#include "ipu/error.h"	/* IPUX_E_* for check() */

/*
 * Bumped on any change of the structs below or of the values check()
 * returns (2: the IPUX_E_* codes moved below every -errno); hosts accept
 * only their own.
 */
#define IPU_CUSTOM_OP_ABI_VERSION 2u

/* The symbol a plugin exports, and its type. */
#define IPU_CUSTOM_OP_ENTRY "ipu_custom_op_library"
struct ipu_custom_op_library;
typedef const struct ipu_custom_op_library *(*ipu_custom_op_entry_fn)(void);

/* Limits of the names (NUL included) and shapes. */
#define IPU_CUSTOM_NAME_MAX 32u
#define IPU_CUSTOM_MAX_RANK 8u
#define IPU_CUSTOM_MAX_ATTRS 16u
#define IPU_CUSTOM_MAX_INPUTS 8u

enum ipu_custom_attr_type {
	IPU_CUSTOM_ATTR_FLOAT = 1,
	IPU_CUSTOM_ATTR_INT = 2,
};

struct ipu_custom_attr {
	const char *name;
	uint32_t type;		/* enum ipu_custom_attr_type */
	uint32_t required;	/* 1: a node without it is refused */
	double default_value;	/* when not required and absent */
};

enum ipu_custom_split {
	/* any element anywhere: output blocks of cols = 1 */
	IPU_CUSTOM_SPLIT_ELEMENTWISE = 1,
	/* whole rows of the output's last dimension per vertex */
	IPU_CUSTOM_SPLIT_ROWS = 2,
	/* one vertex on one tile computes the whole output */
	IPU_CUSTOM_SPLIT_ONE_TILE = 3,
};

/* flags */
#define IPU_CUSTOM_F16 0x1u	/* the codelet computes F16 operands too:
				 * --precision fp16 converts the node; without
				 * it the node stays in f32 between casts */

/* A tensor's type and shape; dtype is enum ipux_dtype (ipu/ipux.h). */
struct ipu_custom_shape {
	uint32_t dtype;
	uint32_t rank;
	int64_t dims[IPU_CUSTOM_MAX_RANK];
};

/*
 * Output types from input types: in[0..nin) (an omitted optional input
 * has rank 0 and dtype 0), attrs[] in schema order (ints as doubles),
 * out[0..nout) to fill.  0, or -1 with a one-line reason in why.
 */
typedef int (*ipu_custom_infer_fn)(const struct ipu_custom_shape *in, uint32_t nin,
				   const double *attrs, struct ipu_custom_shape *out,
				   uint32_t nout, char *why, size_t whylen);
/*
 * The operator on the host: in[k] holds the elements of input k (shape
 * in_shapes[k]) as f32, out[k] receives output k's.  0, or -1 with a
 * reason in why.
 */
typedef int (*ipu_custom_reference_fn)(const struct ipu_custom_shape *in_shapes,
				       const float *const *in, uint32_t nin,
				       const double *attrs,
				       const struct ipu_custom_shape *out_shapes,
				       float *const *out, uint32_t nout,
				       char *why, size_t whylen);

struct ipu_custom_op {
	uint32_t struct_size;		/* sizeof(struct ipu_custom_op) */
	uint32_t flags;			/* IPU_CUSTOM_F16 */
	const char *domain;		/* ONNX domain, e.g. "com.example" */
	const char *name;		/* op_type; both < IPU_CUSTOM_NAME_MAX */
	int32_t opset_min, opset_max;	/* versions of the domain it serves */
	uint32_t min_inputs, max_inputs; /* <= IPU_CUSTOM_MAX_INPUTS */
	uint32_t num_outputs;		/* 1 */
	uint32_t split;			/* enum ipu_custom_split */
	const struct ipu_custom_attr *attrs;
	uint32_t num_attrs;		/* <= IPU_CUSTOM_MAX_ATTRS */
	ipu_custom_infer_fn infer;
	ipu_custom_reference_fn reference;
	struct ipu_codelet codelet;	/* name, check, cost, run */
};

struct ipu_custom_op_library {
	uint32_t abi_version;		/* IPU_CUSTOM_OP_ABI_VERSION */
	uint32_t struct_size;		/* sizeof(struct ipu_custom_op_library) */
	const char *name;		/* the library's own name, for messages */
	const struct ipu_custom_op *ops;
	uint32_t num_ops;
};

#endif /* IPU_CUSTOM_OP_H */
