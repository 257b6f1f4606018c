// SPDX-License-Identifier: MIT
/*
 * error.c - the one table of the stack's error codes: stable name,
 * description and class (a negative errno) of every code in ipu/error.h,
 * and the one helper that formats a caller's message buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* strerrorname_np, strerrordesc_np */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ipu/error.h"

struct err_entry {
	int code;
	int errno_class;	/* a negative errno: the kind of failure, across layers */
	const char *name;
	const char *what;
};

#define E(c, k, w) { c, k, #c, w }
static const struct err_entry err_table[] = {
	E(IPU_OK, 0, "success"),
	E(IPUX_E_TRUNCATED, -ENOEXEC, "executable shorter than its header says"),
	E(IPUX_E_BAD_MAGIC, -ENOEXEC, "not an IPU executable image"),
	E(IPUX_E_BAD_VERSION, -ENOEXEC, "executable format version not supported"),
	E(IPUX_E_BAD_HEADER, -ENOEXEC, "malformed executable header"),
	E(IPUX_E_CHECKSUM, -ENOEXEC, "executable checksum mismatch"),
	E(IPUX_E_SECTION_TABLE, -ENOEXEC, "executable section table outside the image or misaligned"),
	E(IPUX_E_SECTION_BOUNDS, -ENOEXEC, "executable section outside the image"),
	E(IPUX_E_SECTION_SIZE, -ENOEXEC, "executable section size inconsistent with its records"),
	E(IPUX_E_SECTION_DUP, -ENOEXEC, "executable section repeated"),
	E(IPUX_E_SECTION_UNKNOWN, -ENOEXEC, "unknown executable section"),
	E(IPUX_E_SECTION_MISSING, -ENOEXEC, "required executable section missing"),
	E(IPUX_E_SECTION_ALIGN, -ENOEXEC, "executable section misaligned"),
	E(IPUX_E_TILES, -ENOEXEC, "executable needs more tiles than the device has"),
	E(IPUX_E_TILE_MEM, -ENOEXEC, "executable needs more tile memory than the device has"),
	E(IPUX_E_RESERVED, -ENOEXEC, "reserved executable field not zero"),
	E(IPUX_E_TILE_RANGE, -ENOEXEC, "executable names a tile outside the device"),
	E(IPUX_E_REGION_BOUNDS, -ENOEXEC, "executable region outside tile memory"),
	E(IPUX_E_REGION_ALIGN, -ENOEXEC, "executable region misaligned for its dtype"),
	E(IPUX_E_DTYPE, -ENOEXEC, "unknown dtype in executable"),
	E(IPUX_E_CODELET_UNKNOWN, -ENOEXEC, "executable uses a codelet this device lacks"),
	E(IPUX_E_OPERAND_RANGE, -ENOEXEC, "vertex operand index out of range"),
	E(IPUX_E_PARAM_RANGE, -ENOEXEC, "vertex parameter index out of range"),
	E(IPUX_E_OPERAND_COUNT, -ENOEXEC, "wrong number of vertex operands"),
	E(IPUX_E_PARAM_COUNT, -ENOEXEC, "wrong number of vertex parameters"),
	E(IPUX_E_OPERAND_TYPE, -ENOEXEC, "vertex operand dtype not accepted by its codelet"),
	E(IPUX_E_OPERAND_SHAPE, -ENOEXEC, "vertex operand size inconsistent with its parameters"),
	E(IPUX_E_PARAM_VALUE, -ENOEXEC, "vertex parameter out of range"),
	E(IPUX_E_VERTEX_RANGE, -ENOEXEC, "compute set vertices outside the vertex table"),
	E(IPUX_E_COPY_RANGE, -ENOEXEC, "exchange copies outside the copy table"),
	E(IPUX_E_COPY_BOUNDS, -ENOEXEC, "exchange copy outside tile memory"),
	E(IPUX_E_STREAM_DIR, -ENOEXEC, "bad stream direction"),
	E(IPUX_E_STREAM_ID, -ENOEXEC, "stream copy names no stream"),
	E(IPUX_E_STREAM_SIZE, -ENOEXEC, "stream regions do not add up to the buffer size"),
	E(IPUX_E_REGION_RANGE, -ENOEXEC, "stream copy regions outside the region table"),
	E(IPUX_E_STEP_KIND, -ENOEXEC, "unknown program step kind"),
	E(IPUX_E_STEP_REF, -ENOEXEC, "program step refers to something missing"),
	E(IPUX_E_STEP_FLAGS, -ENOEXEC, "bad program step flags"),
	E(IPUX_E_CHILD_RANGE, -ENOEXEC, "program step children out of range"),
	E(IPUX_E_STEP_RANGE, -ENOEXEC, "program step index out of range"),
	E(IPUX_E_PROGRAM_CYCLE, -ENOEXEC, "program step contains itself"),
	E(IPUX_E_PROGRAM_DEPTH, -ENOEXEC, "programs nested too deeply"),
	E(IPUX_E_PROGRAM_COUNT, -ENOEXEC, "no programs, or too many"),
	E(IPUX_E_SWITCH, -ENOEXEC, "malformed switch step"),
	E(IPUX_E_INIT_BOUNDS, -ENOEXEC, "initial data outside tile memory or the image"),
	E(IPUX_E_LIMIT, -ENOEXEC, "executable exceeds a device limit"),
	E(IPUX_E_SIZE_OVERFLOW, -ENOEXEC, "executable offset plus size overflows"),
	E(IPU_E_NOMEM, -ENOMEM, "out of memory"),
	E(IPU_E_NOT_LOADED, -ENOEXEC, "no executable loaded"),
	E(IPU_E_PROGRAM, -EINVAL, "no such program"),
	E(IPU_E_CANCELLED, -ECANCELED, "cancelled (device aborted or reset)"),
	E(IPU_E_STREAM, -EIO, "stream transfer failed"),
	E(IPU_E_FAULT, -EIO, "a codelet faulted"),
	E(IPU_E_INVAL, -EINVAL, "invalid argument"),
	E(IPU_E_BUSY, -EBUSY, "device busy (attached by another process)"),
	E(IPU_E_TIMEOUT, -ETIMEDOUT, "timed out"),
	E(IPU_E_IO, -EIO, "device I/O error"),
	E(IPU_E_VERIFY, -ENOEXEC, "executable refused by the device's verifier"),
	E(IPUEF_E_IO, -EIO, "cannot read or write the model file"),
	E(IPUEF_E_NOMEM, -ENOMEM, "out of memory"),
	E(IPUEF_E_INVAL, -EINVAL, "invalid argument"),
	E(IPUEF_E_TRUNCATED, -ENOEXEC, "model file truncated"),
	E(IPUEF_E_MAGIC, -ENOEXEC, "not an .ipuef model file"),
	E(IPUEF_E_VERSION, -ENOEXEC, "model file version not supported"),
	E(IPUEF_E_HEADER, -ENOEXEC, "malformed model file header"),
	E(IPUEF_E_SIZE, -ENOEXEC, "model file size inconsistent with its contents"),
	E(IPUEF_E_CHECKSUM, -ENOEXEC, "model file checksum mismatch"),
	E(IPUEF_E_LIMIT, -EOVERFLOW, "model file exceeds a format limit"),
	E(IPUEF_E_BLOB_BOUNDS, -ENOEXEC, "model file blob past the end of the file"),
	E(IPUEF_E_BLOB_CHECKSUM, -ENOEXEC, "model file blob checksum mismatch"),
	E(IPUEF_E_BLOB_TYPE, -ENOEXEC, "unknown model file blob type"),
	E(IPUEF_E_BLOB_VERSION, -ENOEXEC, "model file blob version not supported"),
	E(IPUEF_E_BLOB_COUNT, -ENOEXEC, "model file lacks or repeats a required blob"),
	E(IPUEF_E_RESERVED, -ENOEXEC, "reserved model file field not zero"),
	E(IPUEF_E_METADATA, -ENOEXEC, "malformed model metadata"),
	E(IPUEF_E_STRING, -ENOEXEC, "malformed string in model file"),
	E(IPUEF_E_TARGET, -ENOEXEC, "bad target in model file"),
	E(IPUEF_E_PROGRAM, -ENOEXEC, "bad program in model file"),
	E(IPUEF_E_ANCHOR_NAME, -ENOEXEC, "bad or duplicate anchor name"),
	E(IPUEF_E_ANCHOR_DTYPE, -ENOEXEC, "bad anchor dtype"),
	E(IPUEF_E_ANCHOR_RANK, -ENOEXEC, "anchor rank over the limit"),
	E(IPUEF_E_ANCHOR_SHAPE, -ENOEXEC, "bad anchor shape"),
	E(IPUEF_E_ANCHOR_DIR, -ENOEXEC, "bad anchor direction"),
	E(IPUEF_E_ANCHOR_KIND, -ENOEXEC, "bad anchor kind"),
	E(IPUEF_E_ANCHOR_BATCH, -ENOEXEC, "anchor batch dimension out of range"),
	E(IPUEF_E_ANCHOR_STREAM, -ENOEXEC, "bad or shared anchor stream"),
	E(IPUEF_E_ANCHOR_PROGRAMS, -ENOEXEC, "anchor uses a program that does not exist"),
	E(IPUEF_E_TENSOR, -ENOEXEC, "malformed tensor data"),
	E(IPUEF_E_TENSOR_MISSING, -ENOEXEC, "tensor data missing"),
	E(IPUEF_E_TENSOR_MISMATCH, -ENOEXEC, "tensor data differs from its anchor"),
	E(IPUEF_E_OPAQUE, -ENOEXEC, "malformed opaque blob"),
	E(IPURT_NPY_E_IO, -EIO, "cannot read or write the .npy file"),
	E(IPURT_NPY_E_NOMEM, -ENOMEM, "out of memory"),
	E(IPURT_NPY_E_INVAL, -EINVAL, "invalid argument"),
	E(IPURT_NPY_E_FORMAT, -EPROTO, "not a .npy file, or a malformed header"),
	E(IPURT_NPY_E_DTYPE, -EPROTO, "a .npy dtype the runtime does not take"),
	E(IPURT_NPY_E_ORDER, -EPROTO, ".npy array in Fortran order"),
	E(IPURT_NPY_E_SHAPE, -EOVERFLOW, ".npy shape over the limits"),
	E(IPURT_NPY_E_SIZE, -EPROTO, ".npy data size does not match its shape"),
	E(IPURT_NPY_E_VALUE, -EPROTO, ".npy bool element that is not 0 or 1"),
	E(IPURT_E_NOMEM, -ENOMEM, "out of memory"),
	E(IPURT_E_INVAL, -EINVAL, "invalid argument"),
	E(IPURT_E_NO_DEVICE, -ENODEV, "no device satisfies the model"),
	E(IPURT_E_BUSY, -EBUSY, "all suitable devices are in use"),
	E(IPURT_E_TIMEOUT, -ETIMEDOUT, "timed out"),
	E(IPURT_E_NAME, -EINVAL, "no anchor of that name"),
	E(IPURT_E_DTYPE, -EINVAL, "tensor dtype differs from the anchor's"),
	E(IPURT_E_SHAPE, -EINVAL, "tensor shape incompatible with the anchor"),
	E(IPURT_E_MISSING, -EINVAL, "a required anchor was not provided"),
	E(IPURT_E_BATCH, -EINVAL, "batch sizes disagree or are not a multiple"),
	E(IPURT_E_MODEL, -ENOEXEC, "model unusable"),
	E(IPURT_E_DEVICE, -EIO, "the device failed the request"),
	E(IPURT_E_CANCELLED, -ECANCELED, "cancelled"),
	E(IPURT_E_CLOSED, -ESHUTDOWN, "runner is shutting down"),
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

/* A plain -errno: no code of the table lies in its range. */
static int is_errno(int err)
{
	return err < 0 && err >= -IPU_ERRNO_MAX;
}

const char *ipu_err_name(int err)
{
	const struct err_entry *e = err_find(err);
	const char *n;

	if (e)
		return e->name;
	n = is_errno(err) ? strerrorname_np(-err) : NULL;
	return n ? n : "IPU_E_UNKNOWN";
}

const char *ipu_strerror(int err)
{
	const struct err_entry *e = err_find(err);
	const char *d;

	if (e)
		return e->what;
	/* strerrordesc_np, unlike strerror, is thread-safe: a constant string */
	d = is_errno(err) ? strerrordesc_np(-err) : NULL;
	return d ? d : "unknown error";
}

int ipu_err_class(int err)
{
	return err <= IPUX_E_TRUNCATED && err > IPU_E_NOMEM ? IPU_E_VERIFY : err;
}

int ipu_err_errno(int err)
{
	const struct err_entry *e = err_find(err);

	if (e)
		return e->errno_class;
	/* the kernel backend hands the driver's -errno up unchanged */
	if (is_errno(err))
		return err;
	return err > 0 ? -EINVAL : -EIO;
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
