/* SPDX-License-Identifier: MIT */
/*
 * custom_ops.h - loading custom-operator plugins (ipu/custom_op.h) into a
 * host: the compiler, the in-process device, a QEMU device.
 *
 * A set opens each library (dlopen), hashes its file (SHA-256: the hash an
 * executable names its custom codelets by), checks its ABI version and
 * adds its operators to one table (ipu/custom_table.h) that engines and
 * the compiler read.  Closing the set unloads the libraries: close it only
 * after every engine and graph using its table is gone.
 *
 * The in-process device takes plugins in its spec:
 * "model:custom-ops=/path/a.so,custom-ops=/path/b.so" (one each).
 * A plugin is native code run with the process's privileges: only the
 * user who starts the process may choose it (never a model file).
 */
#ifndef IPU_CUSTOM_OPS_H
#define IPU_CUSTOM_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/custom_table.h"

struct ipu_custom_set;

/*
 * Open the libraries of `paths` (separated by ':'; NULL or "" makes an
 * empty set).  0, or a negative ipu_err with a message naming the library
 * (cannot open, no entry point, another ABI version, a bad operator, an
 * operator loaded twice); nothing stays loaded on failure.
 */
int ipu_custom_set_open(const char *paths, struct ipu_custom_set **out, char *err,
			size_t errlen);
void ipu_custom_set_close(struct ipu_custom_set *s);
/* The operators of every library of the set. */
const struct ipu_custom_table *ipu_custom_set_table(const struct ipu_custom_set *s);
/* SHA-256 of a file: 0, or IPU_E_IO with a message. */
int ipu_custom_file_hash(const char *path, uint8_t hash[IPU_CUSTOM_HASH_BYTES], char *err,
			 size_t errlen);

#endif /* IPU_CUSTOM_OPS_H */
