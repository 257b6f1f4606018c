// SPDX-License-Identifier: MIT
/*
 * ipu_run_pb.h - ONNX TensorProto files (.pb) as ipu-run's inputs and
 * outputs: the format of every ONNX test set's test_data_set_N/input_K.pb
 * and output_K.pb, read and written with the compiler's protobuf-c
 * decoder and encoder.
 */
#ifndef IPU_RUN_PB_H
#define IPU_RUN_PB_H

#include <stddef.h>

#include "ipu/npy.h"

/* 1 if path names a TensorProto file (it ends in ".pb"), else 0 (.npy). */
int run_pb_path(const char *path);

/*
 * Reads a TensorProto file into a (data malloc'd, ipurt_npy_free).  Types
 * the runtime has are kept; float64 is rounded to float32 (a value beyond
 * float32's range is refused), int16/uint16 widen to int32 and uint32 to
 * int64, each with a line in note (empty when nothing changed).  Returns
 * -1 with err naming the file on a failure.
 */
int run_pb_read(const char *path, struct ipurt_npy *a, char *note, size_t notelen, char *err,
		size_t errlen);

/* Writes a as a TensorProto named `name`, its data in raw_data. */
int run_pb_write(const char *path, const struct ipurt_npy *a, const char *name, char *err,
		 size_t errlen);

#endif /* IPU_RUN_PB_H */
