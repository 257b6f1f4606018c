/* SPDX-License-Identifier: MIT */
/*
 * freeze.h - ipu-compile --freeze NAME=FILE.pb: graph inputs made
 * constants before the compile, so that an input the static-shape
 * compiler needs as a value (a shape, a count, scales) can come from the
 * same TensorProto file a test set feeds it from.
 */
#ifndef IPU_CLI_FREEZE_H
#define IPU_CLI_FREEZE_H

#include <stddef.h>

#include "ipu/ir.h"

/*
 * Reads the ONNX model at path and, for each "NAME=FILE" of freeze, moves
 * graph input NAME to the initializers with FILE's tensor as its value.
 * The input must exist and FILE hold its element type.  *buf (malloc'd)
 * and *len receive the serialized model.  Returns -1 with a message.
 */
int ipuc_freeze_model(const char *path, char *const *freeze, int n, void **buf, size_t *len,
		      struct ir_error *e);

#endif /* IPU_CLI_FREEZE_H */
