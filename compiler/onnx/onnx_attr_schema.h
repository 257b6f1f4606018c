/* SPDX-License-Identifier: MIT */
/*
 * onnx_attr_schema.h - which attribute types each default-domain operator
 * takes, generated at build time from ONNX's own schemas (python3-onnx),
 * sorted by operator and attribute name.
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

#endif
