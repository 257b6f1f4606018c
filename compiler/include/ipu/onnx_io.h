/* SPDX-License-Identifier: MIT */
/*
 * onnx_io.h - ONNX models and tensors in and out of the IR.
 *
 * Decoding uses C code generated at build time by protoc-c from the
 * onnx.proto that Debian's libonnx-dev ships.  Every count, offset and
 * payload size is checked against the declared dtype and shape.
 */
#ifndef IPU_ONNX_IO_H
#define IPU_ONNX_IO_H

#include <stddef.h>

#include "ipu/ir.h"

/* opsets below 7 are converted to the opset-7 form (compiler/ir/legacy.c) */
#define ONNX_OPSET_MIN 1
#define ONNX_OPSET_MAX 17
/* below 7, binary ops broadcast differently: models are written from 7 on */
#define ONNX_EXPORT_OPSET_MIN 7

/* Loads a model file; external data files are resolved relative to the
 * model's directory. */
struct ir_graph *onnx_load_file(const char *path, struct ir_error *e);
/* Loads a model from memory; base_dir (may be NULL: external data refused)
 * is where external data files live. */
struct ir_graph *onnx_load_buffer(const void *buf, size_t len,
				  const char *base_dir, struct ir_error *e);
/* Loads a serialized TensorProto (e.g. test_data_set_0/input_0.pb).  *name
 * (may be NULL) receives a malloc'ed copy of the tensor's name. */
int onnx_load_tensor_file(const char *path, struct ir_tensor *t, char **name,
			  struct ir_error *e);
/* Writes t as a serialized TensorProto named `name` (may be NULL), its
 * data in raw_data; the file is replaced atomically. */
int onnx_save_tensor_file(const char *path, const struct ir_tensor *t, const char *name,
			  struct ir_error *e);
/* Writes the graph as an ONNX model (opset 17, default domain; an op newer
 * than python3-onnx's schemas, such as Gelu, is written as it is). */
int onnx_save_file(const struct ir_graph *g, const char *path,
		   struct ir_error *e);
/* Writes the graph in `opset` (ONNX_EXPORT_OPSET_MIN to ONNX_OPSET_MAX):
 * inputs that are attributes in that opset move back into attributes, and
 * every node must be an operator of that opset with its inputs and
 * attributes, else the node is named in the error. */
int onnx_save_file_opset(const struct ir_graph *g, const char *path, int opset,
			 struct ir_error *e);

#endif /* IPU_ONNX_IO_H */
