/* SPDX-License-Identifier: MIT */
/*
 * error.h - the one error vocabulary of the IPU stack's libraries.
 *
 * Every library function that can fail returns 0 (or a count) on success
 * and a negative value on failure: a code from this enum, or a plain
 * -errno (libipu's kernel backend hands some of the driver's up).  The
 * two never collide: the codes all lie below -IPU_ERRNO_MAX, where no
 * -errno can be, grouped by the layer that detects them so that a code
 * keeps its meaning wherever it surfaces:
 *
 *   IPU_ERR_BASE - (1 .. 59)     IPUX_E_*       the executable verifier's
 *                                              findings; each is a detail
 *                                              of IPU_E_VERIFY
 *   IPU_ERR_BASE - (60 .. 99)    IPU_E_*        the device (engine, libipu,
 *                                              driver)
 *   IPU_ERR_BASE - (100 .. 159)  IPUEF_E_*      the .ipuef container
 *   IPU_ERR_BASE - (160 .. 199)  IPURT_NPY_E_*  .npy files
 *   IPU_ERR_BASE - (300 .. 399)  IPURT_E_*      the Model Runtime
 *
 * ipu_err_name() is the one name table for all of them, ipu_strerror() the
 * one table of descriptions, ipu_err_errno() the one table of classes (the
 * kind of failure as a negative errno, the same for every layer's spelling
 * of it: IPU_E_NOMEM, IPUEF_E_NOMEM, IPURT_NPY_E_NOMEM and IPURT_E_NOMEM
 * are all -ENOMEM; a plain -errno is its own class), and ipu_errorf() the
 * one helper that formats a caller's message buffer.  Functions that can
 * fail for reasons a user must read take `char *err, size_t errlen` and
 * write one line there; where a failure has a precise cause below its
 * class (the verifier's finding in a refused executable, as the uapi's
 * `verifier_error`), the call returns the class and reports the cause in a
 * struct ipu_error.
 */
#ifndef IPU_ERROR_H
#define IPU_ERROR_H

#include <stddef.h>
#include <stdint.h>

/* The largest errno a plain -errno can carry (the kernel's MAX_ERRNO). */
#define IPU_ERRNO_MAX 4095
/* The codes below count down from here, clear of every -errno. */
#define IPU_ERR_BASE (-IPU_ERRNO_MAX - 1)

enum ipu_err {
	IPU_OK = 0,
	/* executable verifier (details of IPU_E_VERIFY): image */
	IPUX_E_TRUNCATED = IPU_ERR_BASE - 1,		/* shorter than its header says */
	IPUX_E_BAD_MAGIC = IPU_ERR_BASE - 2,
	IPUX_E_BAD_VERSION = IPU_ERR_BASE - 3,
	IPUX_E_BAD_HEADER = IPU_ERR_BASE - 4,		/* header_size, flags, reserved */
	IPUX_E_CHECKSUM = IPU_ERR_BASE - 5,
	IPUX_E_SECTION_TABLE = IPU_ERR_BASE - 6,	/* table outside image or misaligned */
	IPUX_E_SECTION_BOUNDS = IPU_ERR_BASE - 7,	/* payload outside image */
	IPUX_E_SECTION_SIZE = IPU_ERR_BASE - 8,	/* size != count * record size */
	IPUX_E_SECTION_DUP = IPU_ERR_BASE - 9,
	IPUX_E_SECTION_UNKNOWN = IPU_ERR_BASE - 10,
	IPUX_E_SECTION_MISSING = IPU_ERR_BASE - 11,
	IPUX_E_SECTION_ALIGN = IPU_ERR_BASE - 12,
	/* target */
	IPUX_E_TILES = IPU_ERR_BASE - 13,		/* 0, over the limit or over the device */
	IPUX_E_TILE_MEM = IPU_ERR_BASE - 14,		/* 0, over the limit or over the device */
	/* tables */
	IPUX_E_RESERVED = IPU_ERR_BASE - 15,		/* a reserved field is not zero */
	IPUX_E_TILE_RANGE = IPU_ERR_BASE - 16,	/* a tile index >= num_tiles */
	IPUX_E_REGION_BOUNDS = IPU_ERR_BASE - 17,	/* region outside tile memory */
	IPUX_E_REGION_ALIGN = IPU_ERR_BASE - 18,	/* region misaligned for its dtype */
	IPUX_E_DTYPE = IPU_ERR_BASE - 19,		/* unknown dtype */
	IPUX_E_CODELET_UNKNOWN = IPU_ERR_BASE - 20,
	IPUX_E_OPERAND_RANGE = IPU_ERR_BASE - 21,	/* operand index outside OPERANDS */
	IPUX_E_PARAM_RANGE = IPU_ERR_BASE - 22,	/* param index outside PARAMS */
	IPUX_E_OPERAND_COUNT = IPU_ERR_BASE - 23,	/* wrong number of operands */
	IPUX_E_PARAM_COUNT = IPU_ERR_BASE - 24,	/* wrong number of params */
	IPUX_E_OPERAND_TYPE = IPU_ERR_BASE - 25,	/* operand dtype not accepted */
	IPUX_E_OPERAND_SHAPE = IPU_ERR_BASE - 26,	/* operand size inconsistent with params */
	IPUX_E_PARAM_VALUE = IPU_ERR_BASE - 27,	/* a param out of its range */
	IPUX_E_VERTEX_RANGE = IPU_ERR_BASE - 28,	/* compute set vertex range outside table */
	IPUX_E_COPY_RANGE = IPU_ERR_BASE - 29,	/* exchange copy range outside table */
	IPUX_E_COPY_BOUNDS = IPU_ERR_BASE - 30,	/* copy source/destination outside tile */
	IPUX_E_STREAM_DIR = IPU_ERR_BASE - 31,
	IPUX_E_STREAM_ID = IPU_ERR_BASE - 32,		/* stream copy names no stream */
	IPUX_E_STREAM_SIZE = IPU_ERR_BASE - 33,	/* regions do not add up to buffer_bytes */
	IPUX_E_REGION_RANGE = IPU_ERR_BASE - 34,	/* stream copy region range outside table */
	IPUX_E_STEP_KIND = IPU_ERR_BASE - 35,
	IPUX_E_STEP_REF = IPU_ERR_BASE - 36,		/* step refers to a missing cs/exchange/... */
	IPUX_E_STEP_FLAGS = IPU_ERR_BASE - 37,
	IPUX_E_CHILD_RANGE = IPU_ERR_BASE - 38,	/* children range outside CHILDREN */
	IPUX_E_STEP_RANGE = IPU_ERR_BASE - 39,	/* a step index outside STEPS */
	IPUX_E_PROGRAM_CYCLE = IPU_ERR_BASE - 40,	/* a step contains itself */
	IPUX_E_PROGRAM_DEPTH = IPU_ERR_BASE - 41,	/* nesting deeper than IPUX_MAX_DEPTH */
	IPUX_E_PROGRAM_COUNT = IPU_ERR_BASE - 42,	/* 0 or more than IPUX_MAX_PROGRAMS */
	IPUX_E_SWITCH = IPU_ERR_BASE - 43,		/* selector misplaced or no cases */
	IPUX_E_INIT_BOUNDS = IPU_ERR_BASE - 44,	/* init outside tile or DATA */
	IPUX_E_LIMIT = IPU_ERR_BASE - 45,		/* a count over an engine limit */
	IPUX_E_SIZE_OVERFLOW = IPU_ERR_BASE - 46,	/* offset + size overflows */
	/* the device */
	IPU_E_NOMEM = IPU_ERR_BASE - 60,
	IPU_E_NOT_LOADED = IPU_ERR_BASE - 61,
	IPU_E_PROGRAM = IPU_ERR_BASE - 62,		/* program index out of range */
	IPU_E_CANCELLED = IPU_ERR_BASE - 63,		/* aborted or reset */
	IPU_E_STREAM = IPU_ERR_BASE - 64,		/* host side failed a stream transfer */
	IPU_E_FAULT = IPU_ERR_BASE - 65,		/* a codelet faulted (see fault detail) */
	IPU_E_INVAL = IPU_ERR_BASE - 66,		/* bad argument */
	IPU_E_BUSY = IPU_ERR_BASE - 67,
	IPU_E_TIMEOUT = IPU_ERR_BASE - 68,
	IPU_E_IO = IPU_ERR_BASE - 69,			/* device or transport failure */
	IPU_E_VERIFY = IPU_ERR_BASE - 70,		/* executable refused; detail IPUX_E_* */
	/* the .ipuef container */
	IPUEF_E_IO = IPU_ERR_BASE - 100,		/* open/read/write failed (errno in message) */
	IPUEF_E_NOMEM = IPU_ERR_BASE - 101,
	IPUEF_E_INVAL = IPU_ERR_BASE - 102,		/* bad argument to an API call */
	IPUEF_E_TRUNCATED = IPU_ERR_BASE - 103,	/* shorter than the header says */
	IPUEF_E_MAGIC = IPU_ERR_BASE - 104,		/* not an .ipuef file */
	IPUEF_E_VERSION = IPU_ERR_BASE - 105,		/* major version we cannot read */
	IPUEF_E_HEADER = IPU_ERR_BASE - 106,		/* header_size wrong */
	IPUEF_E_SIZE = IPU_ERR_BASE - 107,		/* bytes beyond the declared end/last blob */
	IPUEF_E_CHECKSUM = IPU_ERR_BASE - 108,	/* whole-file CRC mismatch */
	IPUEF_E_LIMIT = IPU_ERR_BASE - 109,		/* a count over its IPUEF_MAX_* limit */
	IPUEF_E_BLOB_BOUNDS = IPU_ERR_BASE - 110,	/* blob header or payload past the end */
	IPUEF_E_BLOB_CHECKSUM = IPU_ERR_BASE - 111,	/* blob payload CRC mismatch */
	IPUEF_E_BLOB_TYPE = IPU_ERR_BASE - 112,	/* unknown blob type */
	IPUEF_E_BLOB_VERSION = IPU_ERR_BASE - 113,	/* blob payload version not supported */
	IPUEF_E_BLOB_COUNT = IPU_ERR_BASE - 114,	/* Metadata/Executable missing or repeated */
	IPUEF_E_RESERVED = IPU_ERR_BASE - 115,	/* reserved field, flag or padding not 0 */
	IPUEF_E_METADATA = IPU_ERR_BASE - 116,	/* Metadata payload overrun or trailing bytes */
	IPUEF_E_STRING = IPU_ERR_BASE - 117,		/* empty, too long, NUL or invalid UTF-8 */
	IPUEF_E_TARGET = IPU_ERR_BASE - 118,		/* tiles/tile_mem/batch size 0 */
	IPUEF_E_PROGRAM = IPU_ERR_BASE - 119,		/* program index/name bad or duplicate */
	IPUEF_E_ANCHOR_NAME = IPU_ERR_BASE - 120,	/* anchor name empty or duplicate */
	IPUEF_E_ANCHOR_DTYPE = IPU_ERR_BASE - 121,
	IPUEF_E_ANCHOR_RANK = IPU_ERR_BASE - 122,	/* rank > IPUEF_MAX_RANK */
	IPUEF_E_ANCHOR_SHAPE = IPU_ERR_BASE - 123,	/* a dim 0 or size over the limit */
	IPUEF_E_ANCHOR_DIR = IPU_ERR_BASE - 124,	/* unknown direction, or kind needs input */
	IPUEF_E_ANCHOR_KIND = IPU_ERR_BASE - 125,
	IPUEF_E_ANCHOR_BATCH = IPU_ERR_BASE - 126,	/* batch dim >= rank */
	IPUEF_E_ANCHOR_STREAM = IPU_ERR_BASE - 127,	/* stream id over limit or shared */
	IPUEF_E_ANCHOR_PROGRAMS = IPU_ERR_BASE - 128,	/* uses a program that does not exist */
	IPUEF_E_TENSOR = IPU_ERR_BASE - 129,		/* TensorData malformed or duplicate name */
	IPUEF_E_TENSOR_MISSING = IPU_ERR_BASE - 130,	/* tensor-data anchor without its blob */
	IPUEF_E_TENSOR_MISMATCH = IPU_ERR_BASE - 131,	/* blob dtype/shape differs from anchor */
	IPUEF_E_OPAQUE = IPU_ERR_BASE - 132,		/* Opaque blob malformed */
	/* .npy files */
	IPURT_NPY_E_IO = IPU_ERR_BASE - 160,		/* open/read/write failed */
	IPURT_NPY_E_NOMEM = IPU_ERR_BASE - 161,
	IPURT_NPY_E_INVAL = IPU_ERR_BASE - 162,	/* bad argument */
	IPURT_NPY_E_FORMAT = IPU_ERR_BASE - 163,	/* not .npy, bad version or header syntax */
	IPURT_NPY_E_DTYPE = IPU_ERR_BASE - 164,	/* a dtype the runtime does not take */
	IPURT_NPY_E_ORDER = IPU_ERR_BASE - 165,	/* fortran_order True */
	IPURT_NPY_E_SHAPE = IPU_ERR_BASE - 166,	/* rank or size over the limits */
	IPURT_NPY_E_SIZE = IPU_ERR_BASE - 167,	/* data bytes do not match the shape */
	IPURT_NPY_E_VALUE = IPU_ERR_BASE - 168,	/* a bool element that is not 0 or 1 */
	/* the Model Runtime */
	IPURT_E_NOMEM = IPU_ERR_BASE - 300,
	IPURT_E_INVAL = IPU_ERR_BASE - 301,		/* bad argument */
	IPURT_E_NO_DEVICE = IPU_ERR_BASE - 302,	/* no device satisfies the model */
	IPURT_E_BUSY = IPU_ERR_BASE - 303,		/* all suitable devices in use (no wait) */
	IPURT_E_TIMEOUT = IPU_ERR_BASE - 304,		/* request or device wait timed out */
	IPURT_E_NAME = IPU_ERR_BASE - 305,		/* no anchor of that name */
	IPURT_E_DTYPE = IPU_ERR_BASE - 306,		/* tensor dtype differs from the anchor's */
	IPURT_E_SHAPE = IPU_ERR_BASE - 307,		/* tensor shape incompatible with the anchor */
	IPURT_E_MISSING = IPU_ERR_BASE - 308,		/* a required anchor was not provided */
	IPURT_E_BATCH = IPU_ERR_BASE - 309,		/* batch sizes disagree or not a multiple */
	IPURT_E_MODEL = IPU_ERR_BASE - 310,		/* model file unusable (no main program, ...) */
	IPURT_E_DEVICE = IPU_ERR_BASE - 311,		/* the device failed a request */
	IPURT_E_CANCELLED = IPU_ERR_BASE - 312,	/* dropped by a timeout recovery or close */
	IPURT_E_CLOSED = IPU_ERR_BASE - 313,		/* runner is shutting down */
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

/*
 * Stable name of any code above ("IPUX_E_CHECKSUM") or of a plain -errno
 * ("ENOMEM" for -ENOMEM); "IPU_E_UNKNOWN" for others.
 */
const char *ipu_err_name(int err);

/*
 * A short description of any code above ("no executable loaded") or of a
 * plain -errno (the C library's, "Cannot allocate memory"), never NULL.
 */
const char *ipu_strerror(int err);

/* The class of a code: IPU_E_VERIFY for a verifier finding, else err itself. */
int ipu_err_class(int err);

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
 * 0 gives 0.  A plain -errno (-1 .. -IPU_ERRNO_MAX: no code of the table
 * is there) is its own class and given back unchanged; any other value
 * the table lacks gives -EIO (negative) or -EINVAL (positive).
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
