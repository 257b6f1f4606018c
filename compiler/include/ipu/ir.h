/* SPDX-License-Identifier: MIT */
/*
 * ir.h - the compiler's intermediate representation.
 *
 * A graph is a list of nodes in topological order and a table of values.
 * Nodes refer to values by index (-1 for an omitted optional input).  Every
 * value has a dtype (ONNX TensorProto numbering, see enum ir_dtype) and, once
 * shape inference ran, a static shape.  A value with `data` is a constant
 * (an initializer, a Constant node's output or a folded result).
 *
 * Ops keep their ONNX op_type names; ir_normalize() rewrites the opset
 * differences (attributes that became inputs, renamed ops) into one
 * internal form, documented in Documentation/compiler/guide.md ("Internal
 * form"), so that later stages never look at the opset again.
 *
 * Errors: every function that can fail takes a `struct ir_error *` and
 * returns -1 (or NULL) after writing a message naming what failed.
 */
#ifndef IPU_IR_H
#define IPU_IR_H

#include <stddef.h>
#include <stdint.h>

#define IR_MAX_RANK 8
#define IR_ERROR_LEN 1024

/* The same numbers as ONNX's TensorProto.DataType. */
enum ir_dtype {
	IR_UNDEFINED = 0,
	IR_F32 = 1,
	IR_U8 = 2,
	IR_I8 = 3,
	IR_U16 = 4,
	IR_I16 = 5,
	IR_I32 = 6,
	IR_I64 = 7,
	IR_STRING = 8,
	IR_BOOL = 9,
	IR_F16 = 10,
	IR_F64 = 11,
	IR_U32 = 12,
	IR_U64 = 13,
	IR_C64 = 14,
	IR_C128 = 15,
	IR_BF16 = 16,
	IR_DTYPE_COUNT
};

struct ir_error {
	char msg[IR_ERROR_LEN];
};

/* Writes the message and returns -1. */
int ir_err(struct ir_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

size_t ir_dtype_size(int dtype);	/* 0 for strings/unknown */
const char *ir_dtype_name(int dtype);	/* "float32", ... */
int ir_dtype_is_float(int dtype);
int ir_dtype_is_int(int dtype);		/* signed or unsigned integer, not bool */

/* Element access through double / int64 (any numeric dtype). */
double ir_get_f(const void *data, int dtype, size_t i);
void ir_set_f(void *data, int dtype, size_t i, double v);
int64_t ir_get_i(const void *data, int dtype, size_t i);
void ir_set_i(void *data, int dtype, size_t i, int64_t v);

/* A dense tensor: the evaluator's currency, also a constant's payload. */
struct ir_tensor {
	int dtype;
	int rank;
	int64_t dims[IR_MAX_RANK];
	void *data;		/* owned, ir_tensor_numel * elem size bytes */
};

int64_t ir_numel(int rank, const int64_t *dims);
int ir_tensor_alloc(struct ir_tensor *t, int dtype, int rank,
		    const int64_t *dims, struct ir_error *e);
void ir_tensor_free(struct ir_tensor *t);
size_t ir_tensor_bytes(const struct ir_tensor *t);

enum ir_attr_type {
	IR_ATTR_FLOAT = 1,
	IR_ATTR_INT = 2,
	IR_ATTR_STRING = 3,
	IR_ATTR_TENSOR = 4,
	IR_ATTR_GRAPH = 5,
	IR_ATTR_FLOATS = 6,
	IR_ATTR_INTS = 7,
	IR_ATTR_STRINGS = 8,
};

struct ir_attr {
	char *name;
	int type;
	double f;
	int64_t i;
	char *s;
	int64_t *ints;		/* INTS */
	double *floats;		/* FLOATS */
	char **strings;		/* STRINGS */
	size_t n;		/* element count of INTS/FLOATS/STRINGS */
	struct ir_tensor *t;	/* TENSOR */
	/* GRAPH: an If branch or a Loop/Scan body (owned).  Its inputs are
	 * the ONNX formal parameters, then the outer values the subgraph
	 * reads, which the importer appended to the node's inputs as well
	 * (attribute `captures` counts them), so that data flow in the
	 * outer graph is explicit. */
	struct ir_graph *g;
};

struct ir_value {
	char *name;
	int dtype;		/* IR_UNDEFINED until known */
	int rank;		/* -1 until known */
	int64_t dims[IR_MAX_RANK];	/* -1 for a dimension not fixed yet */
	char *dim_param[IR_MAX_RANK];	/* symbolic names from the model */
	void *data;		/* constant payload (owned) or NULL */
	int producer;		/* node index, -1 for inputs/constants */
	int is_input, is_output;
	/* dims[0] is a static upper bound of a size known only at run time
	 * (NonMaxSuppression's selection): the producer also writes the
	 * true count, which the lowering streams to the host beside the
	 * value (the .ipuef's "NAME:count" output). */
	int bounded;
};

struct ir_node {
	char *name;
	char *op;		/* ONNX op_type */
	/* enum ir_op_id of ops/registry.h, IR_OP_COUNT for an operator the
	 * registry lacks (custom domains); set with op by ir_node_add,
	 * ir_node_insert and ir_node_set_op, so passes switch on it instead
	 * of comparing names */
	int opid;
	int index;		/* position in the original model (messages) */
	int *in;
	int nin;
	int *out;
	int nout;
	struct ir_attr *attrs;
	int nattrs;
	int dead;		/* removed by a pass, dropped by ir_compact */
};

/* A graph output's type as the model declared it (-1/IR_UNDEFINED: not
 * declared); checked against inference. */
struct ir_decl {
	int dtype;
	int rank;
	int64_t dims[IR_MAX_RANK];	/* -1: symbolic or not given */
};

/* An ONNX domain other than the default one the model imports. */
#define IR_MAX_CUSTOM_DOMAINS 8
struct ir_domain {
	char name[32];
	int version;
};

struct ipu_custom_table;

struct ir_graph {
	char *name;
	int opset;		/* default-domain opset of the source model */
	/* custom operators (compiler/custom/): nodes of another domain have
	 * op "domain::op_type"; the plugins' operators and the model's
	 * opsets of those domains */
	const struct ipu_custom_table *custom;
	struct ir_domain domains[IR_MAX_CUSTOM_DOMAINS];
	int ndomains;
	int64_t ir_version;
	struct ir_value *vals;
	int nvals, capvals;
	struct ir_node *nodes;
	int nnodes, capnodes;
	int *inputs;
	int ninputs;
	int *outputs;
	int noutputs;
	struct ir_decl *out_decl;	/* [noutputs] from the importer, or NULL */
	struct ir_names *names;		/* index of value names (ir/names.c), or NULL */
};

/* graph.c */
struct ir_graph *ir_graph_new(struct ir_error *e);
void ir_graph_free(struct ir_graph *g);
int ir_value_find(const struct ir_graph *g, const char *name);
/* Adds a value (name copied); returns its index or -1.  A NULL name gets
 * a unique generated one. */
int ir_value_add(struct ir_graph *g, const char *name, struct ir_error *e);
/* A fresh value named "<base>_<n>" that does not clash. */
int ir_value_add_unique(struct ir_graph *g, const char *base,
			struct ir_error *e);
/* Adds a node at the end; returns its index or -1. */
int ir_node_add(struct ir_graph *g, const char *name, const char *op,
		const int *in, int nin, const int *out, int nout,
		struct ir_error *e);
/* Inserts a node before position pos (later indices shift). */
int ir_node_insert(struct ir_graph *g, int pos, const char *name,
		   const char *op, const int *in, int nin, const int *out,
		   int nout, struct ir_error *e);
/* Changes the node's op type (a rewrite in place: inputs, outputs and
 * attributes stay). */
int ir_node_set_op(struct ir_node *n, const char *op, struct ir_error *e);
int ir_graph_add_input(struct ir_graph *g, int v, struct ir_error *e);
int ir_graph_add_output(struct ir_graph *g, int v, struct ir_error *e);
/* Recomputes every value's producer from the node list. */
void ir_graph_link(struct ir_graph *g);
/* Drops dead nodes and values nothing refers to; renumbers. */
int ir_compact(struct ir_graph *g, struct ir_error *e);
/* Sets a value's static shape / makes it a constant (takes t->data). */
void ir_value_set_shape(struct ir_value *v, int dtype, int rank,
			const int64_t *dims);
void ir_value_set_const(struct ir_value *v, struct ir_tensor *t);
/* A constant value's payload as a tensor view (data not owned). */
void ir_value_view(const struct ir_value *v, struct ir_tensor *t);
int64_t ir_value_numel(const struct ir_value *v);
int ir_value_has_shape(const struct ir_value *v);
/* Number of node inputs that read value v. */
int ir_value_uses(const struct ir_graph *g, int v);
/* Replaces every read of value `from` (nodes and graph outputs) by `to`. */
void ir_value_replace_uses(struct ir_graph *g, int from, int to);
/* Error naming a node: "node 'n' (Conv, #3): <msg>". */
int ir_node_err(struct ir_error *e, const struct ir_graph *g,
		const struct ir_node *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Deep copy. */
struct ir_graph *ir_graph_clone(const struct ir_graph *g, struct ir_error *e);

/* verify.c: the invariants every pass keeps.  Every id names a value or
 * node of the graph (-1 only for an omitted input or output); every input
 * of a live node and every graph output is a graph input, a constant or an
 * output of an earlier live node (topological order), each value has at
 * most one live producer, and a node's opid matches its op.  With
 * IR_VERIFY_TYPED (after shape inference) every value a live node reads or
 * writes has an element type and a rank.  0, or -1 naming the first broken
 * invariant.  The pipeline checks after every step in the sanitizer build
 * (ASan), where a rewrite that breaks one fails where it happened. */
#define IR_VERIFY_TYPED 1u
int ir_verify(const struct ir_graph *g, unsigned flags, struct ir_error *e);

/* attr.c */
const struct ir_attr *ir_attr_find(const struct ir_node *n, const char *name);
int64_t ir_attr_int(const struct ir_node *n, const char *name, int64_t def);
double ir_attr_float(const struct ir_node *n, const char *name, double def);
const char *ir_attr_str(const struct ir_node *n, const char *name,
			const char *def);
/* INTS attribute: pointer and count, or NULL/0 if absent. */
const int64_t *ir_attr_ints(const struct ir_node *n, const char *name,
			    size_t *count);
int ir_attr_set_int(struct ir_node *n, const char *name, int64_t v,
		    struct ir_error *e);
int ir_attr_set_float(struct ir_node *n, const char *name, double v,
		      struct ir_error *e);
int ir_attr_set_str(struct ir_node *n, const char *name, const char *s,
		    struct ir_error *e);
int ir_attr_set_ints(struct ir_node *n, const char *name, const int64_t *v,
		     size_t count, struct ir_error *e);
int ir_attr_remove(struct ir_node *n, const char *name);
void ir_attr_clear(struct ir_attr *a);
int ir_attr_copy(struct ir_attr *dst, const struct ir_attr *src,
		 struct ir_error *e);

/* legacy.c: a model of opset 1 to 6 rewritten into the opset-7 form
 * (ir_normalize calls it first). */
int ir_convert_legacy(struct ir_graph *g, struct ir_error *e);
/* legacy.c: a binary op's (or PRelu's) `legacy_axis`, an opset < 7 broadcast
 * lined up from that axis of A, becomes an Unsqueeze of B inserted before
 * the node (shape inference calls it once A's rank is known); returns 1 if
 * a node was inserted at `node`, 0 if none was needed, -1 on error. */
int ir_legacy_broadcast(struct ir_graph *g, int node, struct ir_error *e);
/* normalize.c: opset differences -> internal form (see Documentation/compiler/guide.md). */
int ir_normalize(struct ir_graph *g, struct ir_error *e);

/* Shape bindings given by the user. */
struct ir_shape_binding {
	char *name;
	int rank;
	int64_t dims[IR_MAX_RANK];
};

struct ir_infer_opts {
	const struct ir_shape_binding *shapes;
	int nshapes;
	int64_t batch_size;	/* 0: not given */
	int batch_axis;		/* default 0 */
	int fold;		/* fold nodes whose inputs are all constant */
	int64_t fold_limit;	/* max bytes of a folded result (0: 64 MiB,
				 * -1: no limit) */
	void *log;		/* FILE * for warnings (NULL: stderr) */
};

/* infer.c: fixes input shapes, then infers every node in order. */
int ir_infer(struct ir_graph *g, const struct ir_infer_opts *o,
	     struct ir_error *e);
/* Infers one node's outputs from its inputs' shapes (and constants). */
int ir_infer_node(struct ir_graph *g, int node, struct ir_error *e);
/* 1 if the op is known to shape inference (and the evaluator). */
int ir_op_supported(const char *op);
/* Fills names[0..max) with the supported op types, sorted; returns how
 * many there are (may exceed max). */
int ir_op_names(const char **names, int max);

/* Parses "NAME=d0,d1,..." into a binding. */
int ir_parse_shape_binding(const char *s, struct ir_shape_binding *b,
			   struct ir_error *e);

#endif /* IPU_IR_H */
