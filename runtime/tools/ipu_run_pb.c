// SPDX-License-Identifier: MIT
/*
 * ipu_run_pb.c - TensorProto files in and out of ipu-run (ipu_run_pb.h).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ir.h"
#include "ipu/onnx_io.h"
#include "ipu_run_pb.h"

int run_pb_path(const char *path)
{
	size_t n = strlen(path);

	return n >= 3 && !strcmp(path + n - 3, ".pb");
}

/* The runtime's type of an ONNX element type; INVALID if it has none. */
static uint32_t rt_type(int dt)
{
	switch (dt) {
	case IR_F32: return IPURT_DT_F32;
	case IR_F16: return IPURT_DT_F16;
	case IR_I32: return IPURT_DT_I32;
	case IR_I64: return IPURT_DT_I64;
	case IR_U8: return IPURT_DT_U8;
	case IR_I8: return IPURT_DT_I8;
	case IR_BOOL: return IPURT_DT_BOOL;
	default: return IPURT_DT_INVALID;
	}
}

static int ir_type(uint32_t dt)
{
	switch (dt) {
	case IPURT_DT_F32: return IR_F32;
	case IPURT_DT_F16: return IR_F16;
	case IPURT_DT_I32: return IR_I32;
	case IPURT_DT_I64: return IR_I64;
	case IPURT_DT_U8: return IR_U8;
	case IPURT_DT_I8: return IR_I8;
	case IPURT_DT_BOOL: return IR_BOOL;
	default: return IR_UNDEFINED;
	}
}

/* The runtime type a type without one is carried in: the nearest one
 * that holds its values (float64 rounded, the integers widened). */
static int carrier(int dt)
{
	switch (dt) {
	case IR_F64: return IR_F32;
	case IR_I16: case IR_U16: return IR_I32;
	case IR_U32: return IR_I64;
	default: return IR_UNDEFINED;
	}
}

/* Converts t to dt in place; -1 with err if a value does not fit. */
static int widen(struct ir_tensor *t, int dt, const char *path, char *err, size_t errlen)
{
	int64_t n = ir_numel(t->rank, t->dims);
	struct ir_error e = { "" };
	struct ir_tensor c;

	if (ir_tensor_alloc(&c, dt, t->rank, t->dims, &e)) {
		snprintf(err, errlen, "%s: %s", path, e.msg);
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		if (dt == IR_F32) {
			double v = ir_get_f(t->data, t->dtype, (size_t)i);

			if (isfinite(v) && fabs(v) > FLT_MAX) {
				snprintf(err, errlen,
					 "%s: element %lld is %g, beyond float32's range (float64 is computed in float32)",
					 path, (long long)i, v);
				ir_tensor_free(&c);
				return -1;
			}
			ir_set_f(c.data, dt, (size_t)i, v);
		} else {
			ir_set_i(c.data, dt, (size_t)i, ir_get_i(t->data, t->dtype, (size_t)i));
		}
	}
	ir_tensor_free(t);
	*t = c;
	return 0;
}

int run_pb_read(const char *path, struct ipurt_npy *a, char *note, size_t notelen, char *err,
		size_t errlen)
{
	struct ir_error e = { "" };
	struct ir_tensor t;
	int from;

	memset(a, 0, sizeof(*a));
	note[0] = 0;
	if (onnx_load_tensor_file(path, &t, NULL, &e)) {
		snprintf(err, errlen, "%s", e.msg);
		return -1;
	}
	from = t.dtype;
	if (rt_type(t.dtype) == IPURT_DT_INVALID) {
		if (carrier(t.dtype) == IR_UNDEFINED) {
			snprintf(err, errlen, "%s: element type %s has no runtime type (float32, float16, int32, int64, uint8, int8, bool; float64, int16, uint16 and uint32 are converted)",
				 path, ir_dtype_name(t.dtype));
			ir_tensor_free(&t);
			return -1;
		}
		if (widen(&t, carrier(t.dtype), path, err, errlen)) {
			ir_tensor_free(&t);
			return -1;
		}
		snprintf(note, notelen, "%s: %s %s to %s", path, ir_dtype_name(from),
			 from == IR_F64 ? "rounded" : "widened", ir_dtype_name(t.dtype));
	}
	a->dtype = rt_type(t.dtype);
	a->rank = (uint32_t)t.rank;
	for (int i = 0; i < t.rank; i++)
		a->dims[i] = (uint64_t)t.dims[i];
	a->size = ir_tensor_bytes(&t);
	a->data = t.data;
	return 0;
}

int run_pb_write(const char *path, const struct ipurt_npy *a, const char *name, char *err,
		 size_t errlen)
{
	struct ir_error e = { "" };
	struct ir_tensor t;

	memset(&t, 0, sizeof(t));
	t.dtype = ir_type(a->dtype);
	if (t.dtype == IR_UNDEFINED || a->rank > IR_MAX_RANK) {
		snprintf(err, errlen, "%s: a %s tensor of rank %u cannot be written as a TensorProto",
			 path, ipurt_dtype_name(a->dtype), a->rank);
		return -1;
	}
	t.rank = (int)a->rank;
	for (uint32_t i = 0; i < a->rank; i++)
		t.dims[i] = (int64_t)a->dims[i];
	t.data = a->data;
	if (onnx_save_tensor_file(path, &t, name, &e)) {
		snprintf(err, errlen, "%s", e.msg);
		return -1;
	}
	return 0;
}
