/* SPDX-License-Identifier: MIT */
/*
 * error.h - the one error vocabulary of the IPU stack's libraries.
 *
 * Every library function that can fail returns 0 (or a count) on success
 * and a negative code from this enum on failure.  The codes are grouped by
 * the layer that detects them, so a code keeps its meaning wherever it
 * surfaces:
 *
 *     -1 ..  -59  IPUX_E_*     the executable verifier's precise findings;
 *                              each is a detail of IPU_E_VERIFY
 *    -60 ..  -99  IPU_E_*      the device (engine, libipu, driver)
 *   -100 .. -159  IPUEF_E_*    the .ipuef container
 *   -160 .. -199  IPURT_NPY_E_*  .npy files
 *   -300 .. -399  IPURT_E_*    the Model Runtime
 *
 * ipu_err_name() is the one name table for all of them, ipu_strerror() the
 * one table of descriptions, ipu_err_errno() the one table of classes (the
 * kind of failure as a negative errno, the same for every layer's spelling
 * of it: IPU_E_NOMEM, IPUEF_E_NOMEM, IPURT_NPY_E_NOMEM and IPURT_E_NOMEM
 * are all -ENOMEM), and ipu_errorf() the one helper that formats a
 * caller's message buffer.  Functions that can fail for reasons a user must
 * read take `char *err, size_t errlen` and write one line there; where a
 * failure has a precise cause below its class (the verifier's finding in a
 * refused executable, as the uapi's `verifier_error`), the call returns the
 * class and reports the cause in a struct ipu_error.
 */
#ifndef IPU_ERROR_H
#define IPU_ERROR_H

#include <stddef.h>
#include <stdint.h>

enum ipu_err {
	IPU_OK = 0,
	/* executable verifier (details of IPU_E_VERIFY): image */
	IPUX_E_TRUNCATED = -1,		/* shorter than its header says */
	IPUX_E_BAD_MAGIC = -2,
	IPUX_E_BAD_VERSION = -3,
	IPUX_E_BAD_HEADER = -4,		/* header_size, flags, reserved */
	IPUX_E_CHECKSUM = -5,
	IPUX_E_SECTION_TABLE = -6,	/* table outside image or misaligned */
	IPUX_E_SECTION_BOUNDS = -7,	/* payload outside image */
	IPUX_E_SECTION_SIZE = -8,	/* size != count * record size */
	IPUX_E_SECTION_DUP = -9,
	IPUX_E_SECTION_UNKNOWN = -10,
	IPUX_E_SECTION_MISSING = -11,
	IPUX_E_SECTION_ALIGN = -12,
	/* target */
	IPUX_E_TILES = -13,		/* 0, over the limit or over the device */
	IPUX_E_TILE_MEM = -14,		/* 0, over the limit or over the device */
	/* tables */
	IPUX_E_RESERVED = -15,		/* a reserved field is not zero */
	IPUX_E_TILE_RANGE = -16,	/* a tile index >= num_tiles */
	IPUX_E_REGION_BOUNDS = -17,	/* region outside tile memory */
	IPUX_E_REGION_ALIGN = -18,	/* region misaligned for its dtype */
	IPUX_E_DTYPE = -19,		/* unknown dtype */
	IPUX_E_CODELET_UNKNOWN = -20,
	IPUX_E_OPERAND_RANGE = -21,	/* operand index outside OPERANDS */
	IPUX_E_PARAM_RANGE = -22,	/* param index outside PARAMS */
	IPUX_E_OPERAND_COUNT = -23,	/* wrong number of operands */
	IPUX_E_PARAM_COUNT = -24,	/* wrong number of params */
	IPUX_E_OPERAND_TYPE = -25,	/* operand dtype not accepted */
	IPUX_E_OPERAND_SHAPE = -26,	/* operand size inconsistent with params */
	IPUX_E_PARAM_VALUE = -27,	/* a param out of its range */
	IPUX_E_VERTEX_RANGE = -28,	/* compute set vertex range outside table */
	IPUX_E_COPY_RANGE = -29,	/* exchange copy range outside table */
	IPUX_E_COPY_BOUNDS = -30,	/* copy source/destination outside tile */
	IPUX_E_STREAM_DIR = -31,
	IPUX_E_STREAM_ID = -32,		/* stream copy names no stream */
	IPUX_E_STREAM_SIZE = -33,	/* regions do not add up to buffer_bytes */
	IPUX_E_REGION_RANGE = -34,	/* stream copy region range outside table */
	IPUX_E_STEP_KIND = -35,
	IPUX_E_STEP_REF = -36,		/* step refers to a missing cs/exchange/... */
	IPUX_E_STEP_FLAGS = -37,
	IPUX_E_CHILD_RANGE = -38,	/* children range outside CHILDREN */
	IPUX_E_STEP_RANGE = -39,	/* a step index outside STEPS */
	IPUX_E_PROGRAM_CYCLE = -40,	/* a step contains itself */
	IPUX_E_PROGRAM_DEPTH = -41,	/* nesting deeper than IPUX_MAX_DEPTH */
	IPUX_E_PROGRAM_COUNT = -42,	/* 0 or more than IPUX_MAX_PROGRAMS */
	IPUX_E_SWITCH = -43,		/* selector misplaced or no cases */
	IPUX_E_INIT_BOUNDS = -44,	/* init outside tile or DATA */
	IPUX_E_LIMIT = -45,		/* a count over an engine limit */
	IPUX_E_SIZE_OVERFLOW = -46,	/* offset + size overflows */
	/* the device */
	IPU_E_NOMEM = -60,
	IPU_E_NOT_LOADED = -61,
	IPU_E_PROGRAM = -62,		/* program index out of range */
	IPU_E_CANCELLED = -63,		/* aborted or reset */
	IPU_E_STREAM = -64,		/* host side failed a stream transfer */
	IPU_E_FAULT = -65,		/* a codelet faulted (see fault detail) */
	IPU_E_INVAL = -66,		/* bad argument */
	IPU_E_BUSY = -67,
	IPU_E_TIMEOUT = -68,
	IPU_E_IO = -69,			/* device or transport failure */
	IPU_E_VERIFY = -70,		/* executable refused; detail IPUX_E_* */
	/* the .ipuef container */
	IPUEF_E_IO = -100,		/* open/read/write failed (errno in message) */
	IPUEF_E_NOMEM = -101,
	IPUEF_E_INVAL = -102,		/* bad argument to an API call */
	IPUEF_E_TRUNCATED = -103,	/* shorter than the header says */
	IPUEF_E_MAGIC = -104,		/* not an .ipuef file */
	IPUEF_E_VERSION = -105,		/* major version we cannot read */
	IPUEF_E_HEADER = -106,		/* header_size wrong */
	IPUEF_E_SIZE = -107,		/* bytes beyond the declared end/last blob */
	IPUEF_E_CHECKSUM = -108,	/* whole-file CRC mismatch */
	IPUEF_E_LIMIT = -109,		/* a count over its IPUEF_MAX_* limit */
	IPUEF_E_BLOB_BOUNDS = -110,	/* blob header or payload past the end */
	IPUEF_E_BLOB_CHECKSUM = -111,	/* blob payload CRC mismatch */
	IPUEF_E_BLOB_TYPE = -112,	/* unknown blob type */
	IPUEF_E_BLOB_VERSION = -113,	/* blob payload version not supported */
	IPUEF_E_BLOB_COUNT = -114,	/* Metadata/Executable missing or repeated */
	IPUEF_E_RESERVED = -115,	/* reserved field, flag or padding not 0 */
	IPUEF_E_METADATA = -116,	/* Metadata payload overrun or trailing bytes */
	IPUEF_E_STRING = -117,		/* empty, too long, NUL or invalid UTF-8 */
	IPUEF_E_TARGET = -118,		/* tiles/tile_mem/batch size 0 */
	IPUEF_E_PROGRAM = -119,		/* program index/name bad or duplicate */
	IPUEF_E_ANCHOR_NAME = -120,	/* anchor name empty or duplicate */
	IPUEF_E_ANCHOR_DTYPE = -121,
	IPUEF_E_ANCHOR_RANK = -122,	/* rank > IPUEF_MAX_RANK */
	IPUEF_E_ANCHOR_SHAPE = -123,	/* a dim 0 or size over the limit */
	IPUEF_E_ANCHOR_DIR = -124,	/* unknown direction, or kind needs input */
	IPUEF_E_ANCHOR_KIND = -125,
	IPUEF_E_ANCHOR_BATCH = -126,	/* batch dim >= rank */
	IPUEF_E_ANCHOR_STREAM = -127,	/* stream id over limit or shared */
	IPUEF_E_ANCHOR_PROGRAMS = -128,	/* uses a program that does not exist */
	IPUEF_E_TENSOR = -129,		/* TensorData malformed or duplicate name */
	IPUEF_E_TENSOR_MISSING = -130,	/* tensor-data anchor without its blob */
	IPUEF_E_TENSOR_MISMATCH = -131,	/* blob dtype/shape differs from anchor */
	IPUEF_E_OPAQUE = -132,		/* Opaque blob malformed */
	/* .npy files */
	IPURT_NPY_E_IO = -160,		/* open/read/write failed */
	IPURT_NPY_E_NOMEM = -161,
	IPURT_NPY_E_INVAL = -162,	/* bad argument */
	IPURT_NPY_E_FORMAT = -163,	/* not .npy, bad version or header syntax */
	IPURT_NPY_E_DTYPE = -164,	/* a dtype the runtime does not take */
	IPURT_NPY_E_ORDER = -165,	/* fortran_order True */
	IPURT_NPY_E_SHAPE = -166,	/* rank or size over the limits */
	IPURT_NPY_E_SIZE = -167,	/* data bytes do not match the shape */
	IPURT_NPY_E_VALUE = -168,	/* a bool element that is not 0 or 1 */
	/* the Model Runtime */
	IPURT_E_NOMEM = -300,
	IPURT_E_INVAL = -301,		/* bad argument */
	IPURT_E_NO_DEVICE = -302,	/* no device satisfies the model */
	IPURT_E_BUSY = -303,		/* all suitable devices in use (no wait) */
	IPURT_E_TIMEOUT = -304,		/* request or device wait timed out */
	IPURT_E_NAME = -305,		/* no anchor of that name */
	IPURT_E_DTYPE = -306,		/* tensor dtype differs from the anchor's */
	IPURT_E_SHAPE = -307,		/* tensor shape incompatible with the anchor */
	IPURT_E_MISSING = -308,		/* a required anchor was not provided */
	IPURT_E_BATCH = -309,		/* batch sizes disagree or not a multiple */
	IPURT_E_MODEL = -310,		/* model file unusable (no main program, ...) */
	IPURT_E_DEVICE = -311,		/* the device failed a request */
	IPURT_E_CANCELLED = -312,	/* dropped by a timeout recovery or close */
	IPURT_E_CLOSED = -313,		/* runner is shutting down */
};

/*
 * A failure with its precise cause: code is the class a caller tests,
 * detail the finding below it (an IPUX_E_* for IPU_E_VERIFY, else 0), msg
 * one line a user can act on.
 */
struct ipu_error {
	int32_t code;
	int32_t detail;
	char msg[256];
};

/* Stable name of any code above ("IPUX_E_CHECKSUM"); "IPU_E_UNKNOWN" for others. */
const char *ipu_err_name(int err);

/* A short description of any code above ("no executable loaded"), never NULL. */
const char *ipu_strerror(int err);

/* The class of a code: IPU_E_VERIFY for a verifier finding, else err itself. */
int ipu_err_class(int err);

/* The largest errno a plain -errno can carry (the kernel's MAX_ERRNO). */
#define IPU_ERRNO_MAX 4095

/*
 * The kind of failure of any code as a negative errno, for callers that
 * answer by kind rather than by code (an HTTP status, a Python exception):
 *
 *   -ENOMEM     out of memory (every layer's NOMEM)
 *   -EINVAL     a bad argument or a tensor that does not fit its anchor
 *   -EBUSY      device or devices in use
 *   -ETIMEDOUT  a run or a wait timed out
 *   -ECANCELED  aborted, reset or dropped by a recovery
 *   -ESHUTDOWN  the runner is closing
 *   -ENODEV     no device satisfies the model
 *   -EIO        device, transport or file I/O failure, a codelet fault
 *   -ENOEXEC    an executable or model file that cannot be used
 *               (every verifier finding, every malformed .ipuef)
 *   -EPROTO     a malformed .npy file
 *   -EOVERFLOW  a count or shape over a format limit
 *
 * 0 gives 0.  A code outside the table in -1 .. -IPU_ERRNO_MAX is taken
 * as a plain -errno (what the kernel backend returns) and given back
 * unchanged; any other code gives -EIO (negative) or -EINVAL (positive).
 * The codes -1 .. -132 of the table overlap -errno values: they are read
 * as the table's codes, so a library returns its own codes there.
 */
int ipu_err_errno(int err);

/*
 * Write a one-line message (printf format) into err when err and errlen
 * are non-zero, and return code, so that a failure path reads
 * `return ipu_errorf(err, errlen, IPU_E_INVAL, "...", ...);`.
 */
int ipu_errorf(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Fill e (if not NULL) with code, detail and a formatted message; returns code. */
int ipu_error_set(struct ipu_error *e, int code, int detail, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* IPU_ERROR_H */
