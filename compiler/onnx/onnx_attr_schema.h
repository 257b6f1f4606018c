/* SPDX-License-Identifier: MIT */
/*
 * onnx_attr_schema.h - which attribute types each default-domain operator
 * takes, generated at build time from ONNX's own schemas (python3-onnx),
 * sorted by operator and attribute name; and every operator's versions.
 */
#ifndef IPU_ONNX_ATTR_SCHEMA_H
#define IPU_ONNX_ATTR_SCHEMA_H

struct onnx_attr_schema {
	const char *op;
	const char *attr;
	unsigned types;		/* bit t: AttributeProto type t is accepted */
};

extern const struct onnx_attr_schema onnx_attr_schemas[];
extern const unsigned onnx_attr_schema_count;

/* One version of an operator: the opset that introduced it, how many
 * inputs and outputs it takes, its attribute names as "|a|b|", and the
 * tensor types of each formal input and output (bit t: enum ir_dtype t; 0:
 * not checked; a variadic last formal applies to the rest).  Sorted by
 * operator, then version. */
struct onnx_op_version {
	const char *op;
	int since;
	int min_inputs, max_inputs, min_outputs, max_outputs;
	const char *attrs;
	const unsigned *in_types;
	int n_in_types;
	const unsigned *out_types;
	int n_out_types;
};

extern const struct onnx_op_version onnx_op_versions[];
extern const unsigned onnx_op_version_count;

#endif
