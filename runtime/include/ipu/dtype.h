/* SPDX-License-Identifier: MIT */
/*
 * ipu/dtype.h - the element types users see (anchors, tensor data, .npy).
 *
 * This is deliberately not the engine's enum ipux_dtype: the device stores
 * bool as u8, but a user handing the runtime a bool array must be told that
 * an u8 anchor is a different type, so the user-facing enum keeps them
 * apart and ipurt_dtype_to_ipux() maps both to the same device type.  The
 * numeric values are part of the .ipuef format (they are stored as a u8)
 * and never change; new types get new numbers.
 */
#ifndef IPU_DTYPE_H
#define IPU_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum ipurt_dtype {
	IPURT_DT_INVALID = 0,
	IPURT_DT_F32 = 1,
	IPURT_DT_F16 = 2,	/* IEEE binary16 */
	IPURT_DT_I32 = 3,
	IPURT_DT_I64 = 4,
	IPURT_DT_U8 = 5,
	IPURT_DT_BOOL = 6,	/* one byte: 0 false, 1 true */
	IPURT_DT_I8 = 7,
	IPURT_DT_COUNT
};

/* Bytes per element; 0 for an unknown value (so callers can validate). */
size_t ipurt_dtype_size(uint32_t dt);

/* Short lower-case name as ONNX/numpy users know it ("f32", "bool"), or
 * "invalid" for an unknown value; never NULL. */
const char *ipurt_dtype_name(uint32_t dt);

/* Inverse of ipurt_dtype_name (also accepts "float32", "float16", "int32",
 * "int64", "uint8", "int8"); IPURT_DT_INVALID if unknown. */
enum ipurt_dtype ipurt_dtype_from_name(const char *name);

/* The engine type (enum ipux_dtype) that stores this type; 0 if none. */
uint32_t ipurt_dtype_to_ipux(uint32_t dt);

#endif /* IPU_DTYPE_H */
