/* SPDX-License-Identifier: MIT */
/*
 * ipuef_internal.h - what the .ipuef reader and writer share: the byte
 * layout, little-endian helpers, and the validation rules (one copy, so the
 * writer can never produce what the reader refuses).
 */
#ifndef IPUEF_INTERNAL_H
#define IPUEF_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipu/ipuef.h"

/* File header: see Documentation/runtime/ipuef-format.md. */
#define IPUEF_MAGIC "\x89IPUEF\r\n"
#define IPUEF_MAGIC_LEN 8
#define IPUEF_HEADER_SIZE 32u
#define IPUEF_HDR_OFF_MAJOR 8
#define IPUEF_HDR_OFF_MINOR 10
#define IPUEF_HDR_OFF_HSIZE 12
#define IPUEF_HDR_OFF_FSIZE 16
#define IPUEF_HDR_OFF_COUNT 24
#define IPUEF_HDR_OFF_CRC 28

/* Blob header. */
#define IPUEF_BLOB_HEADER_SIZE 24u
#define IPUEF_BLOB_ALIGN 8u
/* Payload versions this reader understands (and the writer emits). */
#define IPUEF_METADATA_VERSION 1u
#define IPUEF_METADATA_VERSION_STATES 2u	/* version 1 + the state table */
#define IPUEF_METADATA_VERSION_GROUP 3u	/* version 2 + the group table */
#define IPUEF_EXECUTABLE_VERSION 1u
#define IPUEF_TENSOR_VERSION 1u
#define IPUEF_OPAQUE_VERSION 1u

/* Fixed parts of the TensorData and Opaque payloads. */
#define IPUEF_TENSOR_FIXED 8u
#define IPUEF_OPAQUE_FIXED 8u

static inline uint64_t ipuef_align8(uint64_t x)
{
	return (x + 7u) & ~(uint64_t)7u;
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/*
 * A name or string field: 1..max bytes (0 allowed if allow_empty), valid
 * UTF-8, no control characters.  `what` prefixes the message.
 */
int ipuef_check_string(const char *what, const uint8_t *s, size_t len,
		       size_t max, bool allow_empty, char *err, size_t errlen);

/* product(dims) * elem, or UINT64_MAX if over IPUEF_MAX_TENSOR_BYTES. */
uint64_t ipuef_shape_bytes(const uint64_t *dims, uint32_t rank, size_t elem);

/* Metadata that owns its arrays and strings. */
struct ipuef_meta_owned {
	struct ipuef_metadata m;
	struct ipuef_program *programs;
	struct ipuef_anchor *anchors;
	char *strings;
	struct ipuef_state *states;
	struct ipuef_region *regions;
	char *state_names;
	struct ipuef_group *group;	/* what m.group points at */
	uint32_t *group_streams;
	struct ipuef_link *links;
	char *link_names;
};

void ipuef_meta_free(struct ipuef_meta_owned *o);
/* Validate (all per-field and cross-field rules of one Metadata). */
int ipuef_meta_validate(const struct ipuef_metadata *m, char *err,
			size_t errlen);
/* Deep copy of valid metadata. */
int ipuef_meta_copy(struct ipuef_meta_owned *dst,
		    const struct ipuef_metadata *src, char *err, size_t errlen);
/* Parse a version-1 or -2 Metadata payload and validate it. */
int ipuef_meta_decode(struct ipuef_meta_owned *dst, const uint8_t *p,
		      size_t len, uint32_t version, char *err, size_t errlen);
/* Encoded payload size and encoding of valid metadata. */
uint64_t ipuef_meta_size(const struct ipuef_metadata *m);
void ipuef_meta_encode(const struct ipuef_metadata *m, uint8_t *out);
/* The payload version valid metadata is written in (2 with states). */
uint32_t ipuef_meta_version(const struct ipuef_metadata *m);

/* The state table (ipuef_state.c): rules, copy, size, coding. */
int ipuef_states_validate(const struct ipuef_metadata *m, char *err, size_t errlen);
int ipuef_states_copy(struct ipuef_meta_owned *dst, const struct ipuef_metadata *src,
		      char *err, size_t errlen);
uint64_t ipuef_states_size(const struct ipuef_metadata *m);
uint8_t *ipuef_states_encode(const struct ipuef_metadata *m, uint8_t *o);
/* Decode the table at p (len bytes left); *used says how many it took. */
int ipuef_states_decode(struct ipuef_meta_owned *o, const uint8_t *p, size_t len,
			size_t *used, char *err, size_t errlen);

/* The group table (ipuef_group.c): rules, copy, size, coding, free. */
int ipuef_group_validate(const struct ipuef_metadata *m, char *err, size_t errlen);
int ipuef_group_copy(struct ipuef_meta_owned *dst, const struct ipuef_metadata *src,
		     char *err, size_t errlen);
uint64_t ipuef_group_size(const struct ipuef_metadata *m);
uint8_t *ipuef_group_encode(const struct ipuef_metadata *m, uint8_t *o);
int ipuef_group_decode(struct ipuef_meta_owned *o, const uint8_t *p, size_t len,
		       size_t *used, char *err, size_t errlen);
void ipuef_group_free(struct ipuef_meta_owned *o);

/* Rules of one TensorData blob (name, dtype, rank, dims, size, flags). */
int ipuef_tensor_validate(const char *where, const struct ipuef_tensor *t,
			  char *err, size_t errlen);

/* Rules between blobs: tensor names unique, every TENSOR_DATA anchor has a
 * non-frozen blob of the same dtype and shape. */
int ipuef_check_model(const struct ipuef_metadata *m,
		      const struct ipuef_tensor *tensors, uint32_t ntensors,
		      char *err, size_t errlen);

#endif /* IPUEF_INTERNAL_H */
