/* SPDX-License-Identifier: MIT */
/*
 * custom_table.h - the custom codelets a host hands to the engine.
 *
 * The engine never loads code: the host (libipu's in-process device, the
 * QEMU device, the compiler) opens a plugin library (ipu/custom_op.h),
 * hashes its file (SHA-256), calls its entry point and adds the table it
 * returns here.  The table checks the plugin's ABI version and struct
 * sizes and every operator's fields, then the engine binds an
 * executable's CUSTOM section (ipu/ipux.h: domain, name, library hash per
 * custom codelet) to it at load: a codelet the table lacks, or one from a
 * library of another hash, refuses the executable naming both.
 *
 * A table is filled once, then only read (by any number of engines at
 * once); it must outlive every engine it was given to.
 */
#ifndef IPU_CUSTOM_TABLE_H
#define IPU_CUSTOM_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/custom_op.h"

#define IPU_CUSTOM_HASH_BYTES 32u	/* SHA-256 of the library file */

struct ipu_custom_table;

/* An empty table: 0 or IPU_E_NOMEM. */
int ipu_custom_table_create(struct ipu_custom_table **out);
/* Frees the table (not the libraries: the host closes them after). */
void ipu_custom_table_destroy(struct ipu_custom_table *t);

/*
 * Add the operators of one library, as its entry point returned them, with
 * the hash of its file; `path` names it in messages.  Refuses (IPU_E_INVAL,
 * message in err) a library of another ABI version or struct size, an
 * operator with an empty or over-long name, no codelet functions, an
 * unknown split or attribute type, and an operator (domain, name) already
 * in the table.  Nothing is added on failure.
 */
int ipu_custom_table_add(struct ipu_custom_table *t, const struct ipu_custom_op_library *lib,
			 const uint8_t hash[IPU_CUSTOM_HASH_BYTES], const char *path,
			 char *err, size_t errlen);

/* Number of operators in the table. */
uint32_t ipu_custom_table_count(const struct ipu_custom_table *t);
/* Operator i (< count) and, if hash is not NULL, its library's hash. */
const struct ipu_custom_op *ipu_custom_table_op(const struct ipu_custom_table *t, uint32_t i,
						const uint8_t **hash);
/*
 * The operator (domain, name) serving opset `opset` of its domain (-1:
 * any), or NULL; *index receives its position if index is not NULL.
 */
const struct ipu_custom_op *ipu_custom_table_find(const struct ipu_custom_table *t,
						  const char *domain, const char *name,
						  int opset, uint32_t *index);

/* The hash as 64 lowercase hex digits and a NUL (buf of >= 65 bytes). */
void ipu_custom_hash_hex(const uint8_t hash[IPU_CUSTOM_HASH_BYTES], char *buf);

#endif /* IPU_CUSTOM_TABLE_H */
