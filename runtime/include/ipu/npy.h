/* SPDX-License-Identifier: MIT */
/*
 * ipu/npy.h - NumPy .npy files: the way users hand tensors to ipu-run and
 * get results back (np.save / np.load on the Python side).
 *
 * Supported: format versions 1.0, 2.0 and 3.0; C-order arrays of the
 * runtime's dtypes (f32 '<f4', f16 '<f2', i32 '<i4', i64 '<i8', u8 '|u1',
 * bool '|b1', i8 '|i1'; single-byte types with any byte-order mark).
 * Everything else (float64, big-endian, Fortran order, structured dtypes,
 * pickled objects) is refused with a message saying what to change on the
 * NumPy side, rather than converted behind the user's back.
 *
 * The header is untrusted input: it is parsed by a strict tokenizer with
 * bounded lengths, ranks and sizes, never by anything resembling eval.
 * No global state.
 */
#ifndef IPU_NPY_H
#define IPU_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/dtype.h"
#include "ipu/error.h"

/* NumPy's own limit on dimensions (NPY_MAXDIMS of NumPy 1.x). */
#define IPURT_NPY_MAX_RANK 32u
/* Longest header accepted; NumPy writes a few hundred bytes at most. */
#define IPURT_NPY_MAX_HEADER (1u << 20)

/* Errors: the IPURT_NPY_E_* codes of ipu/error.h (names: ipu_err_name()). */
#define IPURT_NPY_OK IPU_OK

/* An array: C order, little-endian elements. */
struct ipurt_npy {
	uint32_t dtype;			/* enum ipurt_dtype */
	uint32_t rank;			/* 0 (scalar) .. IPURT_NPY_MAX_RANK */
	uint64_t dims[IPURT_NPY_MAX_RANK];
	void *data;			/* owned when filled by read/parse */
	size_t size;			/* bytes: product(dims) * dtype size */
};

/*
 * Read a file / parse a buffer into *out (data malloc'd, release with
 * ipurt_npy_free).  On error *out is left empty and err says what is wrong
 * and, where it helps, what to do (e.g. "dtype '<f8' (float64) is not
 * supported: save it with a.astype(np.float32)").
 */
int ipurt_npy_read(const char *path, struct ipurt_npy *out, char *err,
		   size_t errlen);
int ipurt_npy_parse(const void *buf, size_t len, struct ipurt_npy *out,
		    char *err, size_t errlen);

/*
 * Write a as a version 1.0 file (2.0 if the header needs it), in the
 * layout np.save uses (header padded to 64 bytes).  a->size must equal
 * product(dims) * dtype size.  The file is replaced atomically.
 */
int ipurt_npy_write(const char *path, const struct ipurt_npy *a, char *err,
		    size_t errlen);
/* Same into a malloc'd buffer. */
int ipurt_npy_encode(const struct ipurt_npy *a, void **out, size_t *len,
		     char *err, size_t errlen);

/* Free the data of an array filled by read/parse; safe on an empty one. */
void ipurt_npy_free(struct ipurt_npy *a);


#endif /* IPU_NPY_H */
