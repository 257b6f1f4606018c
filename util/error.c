// SPDX-License-Identifier: MIT
/*
 * error.c - the one table of the stack's error codes: stable name and
 * description of every code in ipu/error.h, and the one helper that
 * formats a caller's message buffer.
 */
#include <stdarg.h>
#include <stdio.h>

#include "ipu/error.h"

struct err_entry {
	int code;
	const char *name;
	const char *what;
};

#define E(c, w) { c, #c, w }
static const struct err_entry err_table[] = {
	E(IPU_OK, "success"),
	E(IPUX_E_TRUNCATED, "executable shorter than its header says"),
	E(IPUX_E_BAD_MAGIC, "not an IPU executable image"),
	E(IPUX_E_BAD_VERSION, "executable format version not supported"),
	E(IPUX_E_BAD_HEADER, "malformed executable header"),
	E(IPUX_E_CHECKSUM, "executable checksum mismatch"),
	E(IPUX_E_SECTION_TABLE, "executable section table outside the image or misaligned"),
	E(IPUX_E_SECTION_BOUNDS, "executable section outside the image"),
	E(IPUX_E_SECTION_SIZE, "executable section size inconsistent with its records"),
	E(IPUX_E_SECTION_DUP, "executable section repeated"),
	E(IPUX_E_SECTION_UNKNOWN, "unknown executable section"),
	E(IPUX_E_SECTION_MISSING, "required executable section missing"),
	E(IPUX_E_SECTION_ALIGN, "executable section misaligned"),
	E(IPUX_E_TILES, "executable needs more tiles than the device has"),
	E(IPUX_E_TILE_MEM, "executable needs more tile memory than the device has"),
	E(IPUX_E_RESERVED, "reserved executable field not zero"),
	E(IPUX_E_TILE_RANGE, "executable names a tile outside the device"),
	E(IPUX_E_REGION_BOUNDS, "executable region outside tile memory"),
	E(IPUX_E_REGION_ALIGN, "executable region misaligned for its dtype"),
	E(IPUX_E_DTYPE, "unknown dtype in executable"),
	E(IPUX_E_CODELET_UNKNOWN, "executable uses a codelet this device lacks"),
	E(IPUX_E_OPERAND_RANGE, "vertex operand index out of range"),
	E(IPUX_E_PARAM_RANGE, "vertex parameter index out of range"),
	E(IPUX_E_OPERAND_COUNT, "wrong number of vertex operands"),
	E(IPUX_E_PARAM_COUNT, "wrong number of vertex parameters"),
	E(IPUX_E_OPERAND_TYPE, "vertex operand dtype not accepted by its codelet"),
	E(IPUX_E_OPERAND_SHAPE, "vertex operand size inconsistent with its parameters"),
	E(IPUX_E_PARAM_VALUE, "vertex parameter out of range"),
	E(IPUX_E_VERTEX_RANGE, "compute set vertices outside the vertex table"),
	E(IPUX_E_COPY_RANGE, "exchange copies outside the copy table"),
	E(IPUX_E_COPY_BOUNDS, "exchange copy outside tile memory"),
	E(IPUX_E_STREAM_DIR, "bad stream direction"),
	E(IPUX_E_STREAM_ID, "stream copy names no stream"),
	E(IPUX_E_STREAM_SIZE, "stream regions do not add up to the buffer size"),
	E(IPUX_E_REGION_RANGE, "stream copy regions outside the region table"),
	E(IPUX_E_STEP_KIND, "unknown program step kind"),
	E(IPUX_E_STEP_REF, "program step refers to something missing"),
	E(IPUX_E_STEP_FLAGS, "bad program step flags"),
	E(IPUX_E_CHILD_RANGE, "program step children out of range"),
	E(IPUX_E_STEP_RANGE, "program step index out of range"),
	E(IPUX_E_PROGRAM_CYCLE, "program step contains itself"),
	E(IPUX_E_PROGRAM_DEPTH, "programs nested too deeply"),
	E(IPUX_E_PROGRAM_COUNT, "no programs, or too many"),
	E(IPUX_E_SWITCH, "malformed switch step"),
	E(IPUX_E_INIT_BOUNDS, "initial data outside tile memory or the image"),
	E(IPUX_E_LIMIT, "executable exceeds a device limit"),
	E(IPUX_E_SIZE_OVERFLOW, "executable offset plus size overflows"),
	E(IPU_E_NOMEM, "out of memory"),
	E(IPU_E_NOT_LOADED, "no executable loaded"),
	E(IPU_E_PROGRAM, "no such program"),
	E(IPU_E_CANCELLED, "cancelled (device aborted or reset)"),
	E(IPU_E_STREAM, "stream transfer failed"),
	E(IPU_E_FAULT, "a codelet faulted"),
	E(IPU_E_INVAL, "invalid argument"),
	E(IPU_E_BUSY, "device busy (attached by another process)"),
	E(IPU_E_TIMEOUT, "timed out"),
	E(IPU_E_IO, "device I/O error"),
	E(IPU_E_VERIFY, "executable refused by the device's verifier"),
	E(IPUEF_E_IO, "cannot read or write the model file"),
	E(IPUEF_E_NOMEM, "out of memory"),
	E(IPUEF_E_INVAL, "invalid argument"),
	E(IPUEF_E_TRUNCATED, "model file truncated"),
	E(IPUEF_E_MAGIC, "not an .ipuef model file"),
	E(IPUEF_E_VERSION, "model file version not supported"),
	E(IPUEF_E_HEADER, "malformed model file header"),
	E(IPUEF_E_SIZE, "model file size inconsistent with its contents"),
	E(IPUEF_E_CHECKSUM, "model file checksum mismatch"),
	E(IPUEF_E_LIMIT, "model file exceeds a format limit"),
	E(IPUEF_E_BLOB_BOUNDS, "model file blob past the end of the file"),
	E(IPUEF_E_BLOB_CHECKSUM, "model file blob checksum mismatch"),
	E(IPUEF_E_BLOB_TYPE, "unknown model file blob type"),
	E(IPUEF_E_BLOB_VERSION, "model file blob version not supported"),
	E(IPUEF_E_BLOB_COUNT, "model file lacks or repeats a required blob"),
	E(IPUEF_E_RESERVED, "reserved model file field not zero"),
	E(IPUEF_E_METADATA, "malformed model metadata"),
	E(IPUEF_E_STRING, "malformed string in model file"),
	E(IPUEF_E_TARGET, "bad target in model file"),
	E(IPUEF_E_PROGRAM, "bad program in model file"),
	E(IPUEF_E_ANCHOR_NAME, "bad or duplicate anchor name"),
	E(IPUEF_E_ANCHOR_DTYPE, "bad anchor dtype"),
	E(IPUEF_E_ANCHOR_RANK, "anchor rank over the limit"),
	E(IPUEF_E_ANCHOR_SHAPE, "bad anchor shape"),
	E(IPUEF_E_ANCHOR_DIR, "bad anchor direction"),
	E(IPUEF_E_ANCHOR_KIND, "bad anchor kind"),
	E(IPUEF_E_ANCHOR_BATCH, "anchor batch dimension out of range"),
	E(IPUEF_E_ANCHOR_STREAM, "bad or shared anchor stream"),
	E(IPUEF_E_ANCHOR_PROGRAMS, "anchor uses a program that does not exist"),
	E(IPUEF_E_TENSOR, "malformed tensor data"),
	E(IPUEF_E_TENSOR_MISSING, "tensor data missing"),
	E(IPUEF_E_TENSOR_MISMATCH, "tensor data differs from its anchor"),
	E(IPUEF_E_OPAQUE, "malformed opaque blob"),
	E(IPURT_NPY_E_IO, "cannot read or write the .npy file"),
	E(IPURT_NPY_E_NOMEM, "out of memory"),
	E(IPURT_NPY_E_INVAL, "invalid argument"),
	E(IPURT_NPY_E_FORMAT, "not a .npy file, or a malformed header"),
	E(IPURT_NPY_E_DTYPE, "a .npy dtype the runtime does not take"),
	E(IPURT_NPY_E_ORDER, ".npy array in Fortran order"),
	E(IPURT_NPY_E_SHAPE, ".npy shape over the limits"),
	E(IPURT_NPY_E_SIZE, ".npy data size does not match its shape"),
	E(IPURT_NPY_E_VALUE, ".npy bool element that is not 0 or 1"),
	E(IPURT_E_NOMEM, "out of memory"),
	E(IPURT_E_INVAL, "invalid argument"),
	E(IPURT_E_NO_DEVICE, "no device satisfies the model"),
	E(IPURT_E_BUSY, "all suitable devices are in use"),
	E(IPURT_E_TIMEOUT, "timed out"),
	E(IPURT_E_NAME, "no anchor of that name"),
	E(IPURT_E_DTYPE, "tensor dtype differs from the anchor's"),
	E(IPURT_E_SHAPE, "tensor shape incompatible with the anchor"),
	E(IPURT_E_MISSING, "a required anchor was not provided"),
	E(IPURT_E_BATCH, "batch sizes disagree or are not a multiple"),
	E(IPURT_E_MODEL, "model unusable"),
	E(IPURT_E_DEVICE, "the device failed the request"),
	E(IPURT_E_CANCELLED, "cancelled"),
	E(IPURT_E_CLOSED, "runner is shutting down"),
};
#undef E

static const struct err_entry *err_find(int err)
{
	size_t i;

	for (i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
		if (err_table[i].code == err)
			return &err_table[i];
	return NULL;
}

const char *ipu_err_name(int err)
{
	const struct err_entry *e = err_find(err);

	return e ? e->name : "IPU_E_UNKNOWN";
}

const char *ipu_strerror(int err)
{
	const struct err_entry *e = err_find(err);

	return e ? e->what : "unknown error";
}

int ipu_err_class(int err)
{
	return err <= IPUX_E_TRUNCATED && err > IPU_E_NOMEM ? IPU_E_VERIFY : err;
}

int ipu_errorf(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

int ipu_error_set(struct ipu_error *e, int code, int detail, const char *fmt, ...)
{
	if (e) {
		va_list ap;

		e->code = code;
		e->detail = detail;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}
