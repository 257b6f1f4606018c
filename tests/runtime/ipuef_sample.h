/* SPDX-License-Identifier: MIT */
/*
 * ipuef_sample.h - model files for the .ipuef tests, the fuzz corpus and
 * the dump tool test: a valid sample built with the public writer, and a
 * raw assembler that lays out arbitrary (possibly invalid) blobs with
 * correct checksums, so a test reaches the check it aims at instead of
 * stopping at the CRC.
 */
#ifndef IPUEF_SAMPLE_H
#define IPUEF_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ipuef.h"

/* The sample's metadata, executable, tensors and opaque blob. */
extern const struct ipuef_metadata sample_meta;
extern const uint8_t sample_exe[200];
extern const struct ipuef_tensor sample_tensors[2];
#define SAMPLE_NTENSORS 2u

/* A writer holding the sample (0 or ipuef_err; err names the problem). */
int sample_writer(struct ipuef_writer **w, char *err, size_t errlen);
/* The sample serialised (malloc'd). */
int sample_bytes(void **buf, size_t *len);

/* One blob for the raw assembler. */
struct raw_blob {
	uint32_t type, version;
	const void *payload;
	size_t size;
};

/*
 * Header + blobs with correct per-blob and whole-file CRCs (malloc'd).
 * Returns the length.
 */
size_t raw_assemble(const struct raw_blob *blobs, uint32_t n, uint8_t **out);

/* Encode metadata without validating it (so it may be invalid). */
size_t raw_meta(const struct ipuef_metadata *m, uint8_t **out);

/* Recompute every blob CRC (walking the declared sizes while they stay
 * inside the buffer) and the whole-file CRC. */
void raw_fix_crcs(uint8_t *buf, size_t len);
/* Recompute only the whole-file CRC. */
void raw_fix_file_crc(uint8_t *buf, size_t len);

#endif /* IPUEF_SAMPLE_H */
