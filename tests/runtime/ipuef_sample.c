// SPDX-License-Identifier: MIT
/*
 * ipuef_sample.c - see ipuef_sample.h.
 */
#include <stdlib.h>
#include <string.h>

#include "ipu/crc32.h"
#include "ipuef_internal.h"
#include "ipuef_sample.h"

static const struct ipuef_program programs[] = {
	{ "load", 0 }, { "main", 1 }, { "save", 2 },
};

#define MAIN (1ull << 1)
static const struct ipuef_anchor anchors[] = {
	{ "X", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 2, { 2, 3 }, 0, 0, MAIN },
	{ "graph0/Y", IPURT_DT_F16, IPUEF_INPUT, IPUEF_ANCHOR_USER, 1, { 2 }, 0, 1, MAIN },
	{ "w1", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_TENSOR_DATA, 2, { 3, 4 },
	  IPUEF_NO_BATCH_DIM, 2, 1ull << 0 },
	{ "out", IPURT_DT_I32, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 2, { 2, 4 }, 0, 3, MAIN },
	{ "mask", IPURT_DT_BOOL, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 1, { 2 }, 0, 4, MAIN },
	{ "index", IPURT_DT_I32, IPUEF_INPUT, IPUEF_ANCHOR_INDEX, 0, { 0 },
	  IPUEF_NO_BATCH_DIM, 5, MAIN },
	{ "q\"uot\xc3\xa9\\", IPURT_DT_U8, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 1, { 4 },
	  IPUEF_NO_BATCH_DIM, 6, MAIN | (1ull << 2) },
};

const struct ipuef_metadata sample_meta = {
	.exe_format_major = 1,
	.exe_format_minor = 0,
	.ipu_version = "ipu21",
	.num_tiles = 16,
	.tile_mem = 262144,
	.batch_size = 2,
	.num_programs = 3,
	.programs = programs,
	.num_anchors = sizeof(anchors) / sizeof(anchors[0]),
	.anchors = anchors,
};

#define R(i) (uint8_t)((i) * 37 + 11)
#define R10(i) R(i), R(i + 1), R(i + 2), R(i + 3), R(i + 4), R(i + 5), \
	R(i + 6), R(i + 7), R(i + 8), R(i + 9)
#define R50(i) R10(i), R10(i + 10), R10(i + 20), R10(i + 30), R10(i + 40)
const uint8_t sample_exe[200] = { R50(0), R50(50), R50(100), R50(150) };

static const float w1_data[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12.5f };
static const uint8_t c0_data[5] = { 1, 0, 255, 3, 4 };

const struct ipuef_tensor sample_tensors[2] = {
	{ "w1", IPURT_DT_F32, 2, { 3, 4 }, 0, w1_data, sizeof(w1_data) },
	{ "c0", IPURT_DT_U8, 1, { 5 }, IPUEF_TENSOR_FROZEN, c0_data, 5 },
};

static const char opaque_data[] = "{\"passes\": [\"fold\"]}";

int sample_writer(struct ipuef_writer **out, char *err, size_t errlen)
{
	struct ipuef_writer *w;
	int rc = ipuef_writer_create(&w, err, errlen);

	if (rc)
		return rc;
	rc = ipuef_writer_set_metadata(w, &sample_meta, err, errlen);
	if (!rc)
		rc = ipuef_writer_set_executable(w, sample_exe,
						 sizeof(sample_exe), err,
						 errlen);
	for (uint32_t i = 0; !rc && i < SAMPLE_NTENSORS; i++)
		rc = ipuef_writer_add_tensor(w, &sample_tensors[i], err,
					     errlen);
	if (!rc)
		rc = ipuef_writer_add_opaque(w, "ipu-compile", "0.1.0",
					     opaque_data, strlen(opaque_data),
					     err, errlen);
	if (rc) {
		ipuef_writer_destroy(w);
		return rc;
	}
	*out = w;
	return 0;
}

int sample_bytes(void **buf, size_t *len)
{
	struct ipuef_writer *w;
	int rc = sample_writer(&w, NULL, 0);

	if (rc)
		return rc;
	rc = ipuef_writer_write_mem(w, buf, len, NULL, 0);
	ipuef_writer_destroy(w);
	return rc;
}

size_t raw_assemble(const struct raw_blob *blobs, uint32_t n, uint8_t **out)
{
	size_t total = IPUEF_HEADER_SIZE, o;
	uint8_t *b;

	for (uint32_t i = 0; i < n; i++)
		total += IPUEF_BLOB_HEADER_SIZE + ipuef_align8(blobs[i].size);
	b = calloc(1, total);
	if (!b)
		abort();
	memcpy(b, IPUEF_MAGIC, IPUEF_MAGIC_LEN);
	put_le16(b + IPUEF_HDR_OFF_MAJOR, IPUEF_VERSION_MAJOR);
	put_le16(b + IPUEF_HDR_OFF_MINOR, IPUEF_VERSION_MINOR);
	put_le32(b + IPUEF_HDR_OFF_HSIZE, IPUEF_HEADER_SIZE);
	put_le64(b + IPUEF_HDR_OFF_FSIZE, total);
	put_le32(b + IPUEF_HDR_OFF_COUNT, n);
	o = IPUEF_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++) {
		put_le32(b + o, blobs[i].type);
		put_le16(b + o + 4, (uint16_t)blobs[i].version);
		put_le64(b + o + 8, blobs[i].size);
		if (blobs[i].size)
			memcpy(b + o + IPUEF_BLOB_HEADER_SIZE,
			       blobs[i].payload, blobs[i].size);
		put_le32(b + o + 16, ipu_crc32(0, b + o + IPUEF_BLOB_HEADER_SIZE,
					       blobs[i].size));
		o += IPUEF_BLOB_HEADER_SIZE + ipuef_align8(blobs[i].size);
	}
	raw_fix_file_crc(b, total);
	*out = b;
	return total;
}

size_t raw_meta(const struct ipuef_metadata *m, uint8_t **out)
{
	size_t n = (size_t)ipuef_meta_size(m);

	*out = calloc(1, n + 1);
	if (!*out)
		abort();
	ipuef_meta_encode(m, *out);
	return n;
}

void raw_fix_file_crc(uint8_t *buf, size_t len)
{
	uint32_t crc;

	if (len < IPUEF_HEADER_SIZE)
		return;
	crc = ipu_crc32(0, buf, IPUEF_HDR_OFF_CRC);
	crc = ipu_crc32(crc, buf + IPUEF_HEADER_SIZE, len - IPUEF_HEADER_SIZE);
	put_le32(buf + IPUEF_HDR_OFF_CRC, crc);
}

void raw_fix_crcs(uint8_t *buf, size_t len)
{
	size_t o = IPUEF_HEADER_SIZE;

	while (len >= IPUEF_BLOB_HEADER_SIZE &&
	       o <= len - IPUEF_BLOB_HEADER_SIZE) {
		uint64_t size = get_le64(buf + o + 8);

		if (size > len - o - IPUEF_BLOB_HEADER_SIZE)
			break;
		put_le32(buf + o + 16,
			 ipu_crc32(0, buf + o + IPUEF_BLOB_HEADER_SIZE, size));
		o += IPUEF_BLOB_HEADER_SIZE + ipuef_align8(size);
	}
	raw_fix_file_crc(buf, len);
}
