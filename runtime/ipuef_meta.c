// SPDX-License-Identifier: MIT
/*
 * ipuef_meta.c - the Metadata blob: validation, deep copy, decoding and
 * encoding.  Layout (all little-endian, strings are u16 length + bytes,
 * no NUL):
 *
 *   u16 exe_format_major, u16 exe_format_minor, u32 flags (0)
 *   str ipu_version
 *   u32 num_tiles, u32 tile_mem, u32 batch_size
 *   u32 num_programs, then per program: str name, u32 index
 *   u32 num_anchors, then per anchor:
 *       str name, u8 dtype, u8 direction, u8 kind, u8 rank,
 *       u32 batch_dim, u32 stream_id, u64 programs, u64 dims[rank]
 *   version 2 and 3: the state table (ipuef_state.c)
 *   version 3 only: the group table (ipuef_group.c)
 *
 * The payload must be consumed exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipuef_internal.h"

#define MIN_PROGRAM_BYTES 6u	/* empty name + index */
#define MIN_ANCHOR_BYTES 22u	/* empty name + fixed fields, rank 0 */

void ipuef_meta_free(struct ipuef_meta_owned *o)
{
	if (!o)
		return;
	free(o->programs);
	free(o->anchors);
	free(o->strings);
	free(o->states);
	free(o->regions);
	free(o->state_names);
	ipuef_group_free(o);
	memset(o, 0, sizeof(*o));
}

static int cmp_anchor_name(const void *a, const void *b)
{
	const struct ipuef_anchor *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int cmp_anchor_stream(const void *a, const void *b)
{
	const struct ipuef_anchor *const *x = a, *const *y = b;

	return ((*x)->stream_id > (*y)->stream_id) -
	       ((*x)->stream_id < (*y)->stream_id);
}

static int validate_programs(const struct ipuef_metadata *m, uint64_t *mask,
			     char *err, size_t errlen)
{
	char what[64];
	int rc;

	*mask = 0;
	if (m->num_programs > IPUEF_MAX_PROGRAMS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "metadata: %u programs, limit %u",
				  m->num_programs, IPUEF_MAX_PROGRAMS);
	if (m->num_programs && !m->programs)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "metadata: %u programs but no array",
				  m->num_programs);
	for (uint32_t i = 0; i < m->num_programs; i++) {
		const struct ipuef_program *p = &m->programs[i];

		snprintf(what, sizeof(what), "metadata: program %u name", i);
		if (!p->name)
			return ipu_errorf(err, errlen, IPUEF_E_INVAL,
					  "%s: NULL", what);
		rc = ipuef_check_string(what, (const uint8_t *)p->name,
					strlen(p->name), IPUEF_MAX_NAME, false,
					err, errlen);
		if (rc)
			return rc;
		if (p->index >= IPUEF_MAX_PROGRAMS)
			return ipu_errorf(err, errlen, IPUEF_E_PROGRAM,
					  "metadata: program %u '%s': index %u >= %u",
					  i, p->name, p->index,
					  IPUEF_MAX_PROGRAMS);
		if (*mask & (1ull << p->index))
			return ipu_errorf(err, errlen, IPUEF_E_PROGRAM,
					  "metadata: program %u '%s': index %u used twice",
					  i, p->name, p->index);
		*mask |= 1ull << p->index;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(m->programs[j].name, p->name))
				return ipu_errorf(err, errlen, IPUEF_E_PROGRAM,
						  "metadata: duplicate program name '%s' (programs %u and %u)",
						  p->name, j, i);
	}
	return 0;
}

static int validate_anchor(const struct ipuef_anchor *a, uint32_t i,
			   uint64_t prog_mask, char *err, size_t errlen)
{
	char what[64];
	uint64_t bytes;
	int rc;

	if (!a->name)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "metadata: anchor %u: NULL name", i);
	if (!a->name[0])
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_NAME,
				  "metadata: anchor %u: empty name", i);
	snprintf(what, sizeof(what), "metadata: anchor %u name", i);
	rc = ipuef_check_string(what, (const uint8_t *)a->name,
				strlen(a->name), IPUEF_MAX_NAME, false, err,
				errlen);
	if (rc)
		return rc;
	if (a->dtype == IPURT_DT_INVALID || a->dtype >= IPURT_DT_COUNT)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_DTYPE,
				  "metadata: anchor %u '%s': unknown dtype %u",
				  i, a->name, a->dtype);
	if (a->rank > IPUEF_MAX_RANK)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_RANK,
				  "metadata: anchor %u '%s': rank %u > %u", i,
				  a->name, a->rank, IPUEF_MAX_RANK);
	for (uint32_t d = 0; d < a->rank; d++)
		if (!a->dims[d])
			return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_SHAPE,
					  "metadata: anchor %u '%s': dim %u is 0",
					  i, a->name, d);
	bytes = ipuef_shape_bytes(a->dims, a->rank, ipurt_dtype_size(a->dtype));
	if (bytes == UINT64_MAX)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_SHAPE,
				  "metadata: anchor %u '%s': shape over %llu bytes",
				  i, a->name,
				  (unsigned long long)IPUEF_MAX_TENSOR_BYTES);
	if (a->direction != IPUEF_INPUT && a->direction != IPUEF_OUTPUT)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_DIR,
				  "metadata: anchor %u '%s': unknown direction %u",
				  i, a->name, a->direction);
	if (a->kind > IPUEF_ANCHOR_INDEX)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_KIND,
				  "metadata: anchor %u '%s': unknown kind %u", i,
				  a->name, a->kind);
	if (a->kind != IPUEF_ANCHOR_USER && a->direction != IPUEF_INPUT)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_DIR,
				  "metadata: anchor %u '%s': a %s anchor must be an input",
				  i, a->name,
				  a->kind == IPUEF_ANCHOR_INDEX ? "index"
								: "tensor-data");
	if (a->kind == IPUEF_ANCHOR_INDEX &&
	    (a->dtype == IPURT_DT_F32 || a->dtype == IPURT_DT_F16 ||
	     a->dtype == IPURT_DT_BOOL))
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_DTYPE,
				  "metadata: anchor %u '%s': the index anchor must have an integer dtype, not %s",
				  i, a->name, ipurt_dtype_name(a->dtype));
	if (a->batch_dim != IPUEF_NO_BATCH_DIM && a->batch_dim >= a->rank)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_BATCH,
				  "metadata: anchor %u '%s': batch dim %u >= rank %u",
				  i, a->name, a->batch_dim, a->rank);
	if (a->stream_id >= IPUEF_MAX_STREAMS)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_STREAM,
				  "metadata: anchor %u '%s': stream id %u >= %u",
				  i, a->name, a->stream_id, IPUEF_MAX_STREAMS);
	if (a->programs & ~prog_mask) {
		uint64_t bad = a->programs & ~prog_mask;

		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_PROGRAMS,
				  "metadata: anchor %u '%s': used by program index %d, which the metadata does not declare",
				  i, a->name, __builtin_ctzll(bad));
	}
	return 0;
}

int ipuef_meta_validate(const struct ipuef_metadata *m, char *err,
			size_t errlen)
{
	const struct ipuef_anchor **sorted = NULL;
	uint64_t prog_mask;
	uint32_t n = m->num_anchors, index_anchors = 0;
	int rc;

	if (!m->ipu_version)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "metadata: no ipu_version");
	rc = ipuef_check_string("metadata: ipu_version",
				(const uint8_t *)m->ipu_version,
				strlen(m->ipu_version), IPUEF_MAX_IPU_VERSION,
				false, err, errlen);
	if (rc)
		return rc;
	if (!m->num_tiles || !m->tile_mem || !m->batch_size)
		return ipu_errorf(err, errlen, IPUEF_E_TARGET,
				  "metadata: num_tiles %u, tile_mem %u, batch_size %u: each must be at least 1",
				  m->num_tiles, m->tile_mem, m->batch_size);
	rc = validate_programs(m, &prog_mask, err, errlen);
	if (rc)
		return rc;
	if (n > IPUEF_MAX_ANCHORS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "metadata: %u anchors, limit %u", n,
				  IPUEF_MAX_ANCHORS);
	if (n && !m->anchors)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "metadata: %u anchors but no array", n);
	for (uint32_t i = 0; i < n; i++) {
		rc = validate_anchor(&m->anchors[i], i, prog_mask, err, errlen);
		if (rc)
			return rc;
		if (m->anchors[i].kind == IPUEF_ANCHOR_INDEX &&
		    ++index_anchors > 1)
			return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_KIND,
					  "metadata: anchor %u '%s': a second index anchor",
					  i, m->anchors[i].name);
	}
	rc = ipuef_states_validate(m, err, errlen);
	if (!rc)
		rc = ipuef_group_validate(m, err, errlen);
	if (rc || n < 2)
		return rc;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "metadata: out of memory checking %u anchors",
				  n);
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = &m->anchors[i];
	qsort(sorted, n, sizeof(*sorted), cmp_anchor_name);
	for (uint32_t i = 1; i < n && !rc; i++)
		if (!strcmp(sorted[i - 1]->name, sorted[i]->name)) {
			uint32_t x = (uint32_t)(sorted[i - 1] - m->anchors);
			uint32_t y = (uint32_t)(sorted[i] - m->anchors);

			rc = ipu_errorf(err, errlen, IPUEF_E_ANCHOR_NAME,
					"metadata: duplicate anchor name '%s' (anchors %u and %u)",
					sorted[i]->name, x < y ? x : y,
					x < y ? y : x);
		}
	if (!rc) {
		qsort(sorted, n, sizeof(*sorted), cmp_anchor_stream);
		for (uint32_t i = 1; i < n && !rc; i++)
			if (sorted[i - 1]->stream_id == sorted[i]->stream_id)
				rc = ipu_errorf(err, errlen,
						IPUEF_E_ANCHOR_STREAM,
						"metadata: anchors '%s' and '%s' share stream id %u",
						sorted[i - 1]->name,
						sorted[i]->name,
						sorted[i]->stream_id);
	}
	free(sorted);
	return rc;
}

/* Arena for the NUL-terminated copies of the strings. */
struct arena {
	char *p;
	size_t used, size;
};

static char *arena_put(struct arena *a, const void *s, size_t len)
{
	char *r = a->p + a->used;

	/* Callers size the arena so this cannot fail; keep it checked. */
	if (len + 1 > a->size - a->used)
		return NULL;
	memcpy(r, s, len);
	r[len] = 0;
	a->used += len + 1;
	return r;
}

int ipuef_meta_copy(struct ipuef_meta_owned *dst,
		    const struct ipuef_metadata *src, char *err, size_t errlen)
{
	struct ipuef_meta_owned o = { 0 };
	struct arena ar = { 0 };
	int rc = ipuef_meta_validate(src, err, errlen);

	if (rc)
		return rc;
	ar.size = strlen(src->ipu_version) + 1;
	for (uint32_t i = 0; i < src->num_programs; i++)
		ar.size += strlen(src->programs[i].name) + 1;
	for (uint32_t i = 0; i < src->num_anchors; i++)
		ar.size += strlen(src->anchors[i].name) + 1;
	o.strings = ar.p = malloc(ar.size);
	o.programs = calloc(src->num_programs + 1, sizeof(*o.programs));
	o.anchors = calloc(src->num_anchors + 1, sizeof(*o.anchors));
	if (!o.strings || !o.programs || !o.anchors) {
		ipuef_meta_free(&o);
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "metadata: out of memory copying %u anchors",
				  src->num_anchors);
	}
	o.m = *src;
	o.m.ipu_version = arena_put(&ar, src->ipu_version,
				    strlen(src->ipu_version));
	for (uint32_t i = 0; i < src->num_programs; i++) {
		o.programs[i] = src->programs[i];
		o.programs[i].name = arena_put(&ar, src->programs[i].name,
					       strlen(src->programs[i].name));
	}
	for (uint32_t i = 0; i < src->num_anchors; i++) {
		o.anchors[i] = src->anchors[i];
		for (uint32_t d = o.anchors[i].rank; d < IPUEF_MAX_RANK; d++)
			o.anchors[i].dims[d] = 0;
		o.anchors[i].name = arena_put(&ar, src->anchors[i].name,
					      strlen(src->anchors[i].name));
	}
	o.m.programs = o.programs;
	o.m.anchors = o.anchors;
	o.m.num_states = 0;
	o.m.states = NULL;
	o.m.group = NULL;
	rc = ipuef_states_copy(&o, src, err, errlen);
	if (!rc)
		rc = ipuef_group_copy(&o, src, err, errlen);
	if (rc) {
		ipuef_meta_free(&o);
		return rc;
	}
	*dst = o;
	return 0;
}

/* Bounds-checked cursor over the payload. */
struct cur {
	const uint8_t *p;
	size_t len, pos;
	char *err;
	size_t errlen;
};

static int need(struct cur *c, size_t n, const char *what)
{
	if (c->len - c->pos >= n)
		return 0;
	return ipu_errorf(c->err, c->errlen, IPUEF_E_METADATA,
			  "metadata: %s needs %zu bytes at offset %zu, only %zu left",
			  what, n, c->pos, c->len - c->pos);
}

static uint8_t rd8(struct cur *c)
{
	return c->p[c->pos++];
}

static uint16_t rd16(struct cur *c)
{
	uint16_t v = get_le16(c->p + c->pos);

	c->pos += 2;
	return v;
}

static uint32_t rd32(struct cur *c)
{
	uint32_t v = get_le32(c->p + c->pos);

	c->pos += 4;
	return v;
}

static uint64_t rd64(struct cur *c)
{
	uint64_t v = get_le64(c->p + c->pos);

	c->pos += 8;
	return v;
}

/* A length-prefixed string, copied into the arena. */
static int rdstr(struct cur *c, struct arena *ar, const char *what,
		 size_t max, const char **out)
{
	uint16_t len;
	int rc = need(c, 2, what);

	if (rc)
		return rc;
	len = rd16(c);
	if (len > max)
		return ipu_errorf(c->err, c->errlen, IPUEF_E_STRING,
				  "%s: %u bytes long, limit %zu", what, len,
				  max);
	rc = need(c, len, what);
	if (!rc)
		rc = ipuef_check_string(what, c->p + c->pos, len, max, true,
					c->err, c->errlen);
	if (rc)
		return rc;
	*out = arena_put(ar, c->p + c->pos, len);
	if (!*out)
		return ipu_errorf(c->err, c->errlen, IPUEF_E_METADATA,
				  "%s: string arena overflow", what);
	c->pos += len;
	return 0;
}

static int decode_anchor(struct cur *c, struct arena *ar, uint32_t i,
			 struct ipuef_anchor *a)
{
	char what[96];
	int rc;

	snprintf(what, sizeof(what), "metadata: anchor %u name", i);
	rc = rdstr(c, ar, what, IPUEF_MAX_NAME, &a->name);
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "anchor %u '%.40s' fields", i, a->name);
	rc = need(c, 20, what);
	if (rc)
		return rc;
	a->dtype = rd8(c);
	a->direction = rd8(c);
	a->kind = rd8(c);
	a->rank = rd8(c);
	a->batch_dim = rd32(c);
	a->stream_id = rd32(c);
	a->programs = rd64(c);
	if (a->rank > IPUEF_MAX_RANK)
		return ipu_errorf(c->err, c->errlen, IPUEF_E_ANCHOR_RANK,
				  "metadata: anchor %u '%s': rank %u > %u", i,
				  a->name, a->rank, IPUEF_MAX_RANK);
	snprintf(what, sizeof(what), "anchor %u '%.40s' dims", i, a->name);
	rc = need(c, (size_t)a->rank * 8, what);
	if (rc)
		return rc;
	for (uint32_t d = 0; d < a->rank; d++)
		a->dims[d] = rd64(c);
	return 0;
}

int ipuef_meta_decode(struct ipuef_meta_owned *dst, const uint8_t *p,
		      size_t len, uint32_t version, char *err, size_t errlen)
{
	struct cur c = { p, len, 0, err, errlen };
	struct ipuef_meta_owned o = { 0 };
	struct arena ar = { 0 };
	uint32_t flags;
	int rc;

	memset(dst, 0, sizeof(*dst));
	/* Every string costs its u16 prefix in the payload, so len + 1
	 * bytes hold all the NUL-terminated copies. */
	ar.size = len + 1;
	o.strings = ar.p = malloc(ar.size);
	if (!o.strings)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "metadata: out of memory (%zu bytes)", len);
	rc = need(&c, 8, "header fields");
	if (rc)
		goto fail;
	o.m.exe_format_major = rd16(&c);
	o.m.exe_format_minor = rd16(&c);
	flags = rd32(&c);
	if (flags) {
		rc = ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				"metadata: flags 0x%x, must be 0", flags);
		goto fail;
	}
	rc = rdstr(&c, &ar, "metadata: ipu_version", IPUEF_MAX_IPU_VERSION,
		   &o.m.ipu_version);
	if (rc)
		goto fail;
	rc = need(&c, 16, "target fields and program count");
	if (rc)
		goto fail;
	o.m.num_tiles = rd32(&c);
	o.m.tile_mem = rd32(&c);
	o.m.batch_size = rd32(&c);
	o.m.num_programs = rd32(&c);
	if (o.m.num_programs > IPUEF_MAX_PROGRAMS) {
		rc = ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				"metadata: %u programs, limit %u",
				o.m.num_programs, IPUEF_MAX_PROGRAMS);
		goto fail;
	}
	rc = need(&c, (size_t)o.m.num_programs * MIN_PROGRAM_BYTES,
		  "the program table");
	if (rc)
		goto fail;
	o.programs = calloc(o.m.num_programs + 1, sizeof(*o.programs));
	if (!o.programs) {
		rc = ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				"metadata: out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < o.m.num_programs; i++) {
		char what[48];

		snprintf(what, sizeof(what), "metadata: program %u name", i);
		rc = rdstr(&c, &ar, what, IPUEF_MAX_NAME, &o.programs[i].name);
		if (!rc)
			rc = need(&c, 4, "program index");
		if (rc)
			goto fail;
		o.programs[i].index = rd32(&c);
	}
	rc = need(&c, 4, "anchor count");
	if (rc)
		goto fail;
	o.m.num_anchors = rd32(&c);
	if (o.m.num_anchors > IPUEF_MAX_ANCHORS) {
		rc = ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				"metadata: %u anchors, limit %u",
				o.m.num_anchors, IPUEF_MAX_ANCHORS);
		goto fail;
	}
	rc = need(&c, (size_t)o.m.num_anchors * MIN_ANCHOR_BYTES,
		  "the anchor table");
	if (rc)
		goto fail;
	o.anchors = calloc(o.m.num_anchors + 1, sizeof(*o.anchors));
	if (!o.anchors) {
		rc = ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				"metadata: out of memory for %u anchors",
				o.m.num_anchors);
		goto fail;
	}
	for (uint32_t i = 0; i < o.m.num_anchors; i++) {
		rc = decode_anchor(&c, &ar, i, &o.anchors[i]);
		if (rc)
			goto fail;
	}
	if (version == IPUEF_METADATA_VERSION_STATES || version == IPUEF_METADATA_VERSION_GROUP) {
		size_t used = 0;

		rc = ipuef_states_decode(&o, p + c.pos, len - c.pos, &used, err, errlen);
		if (rc)
			goto fail;
		c.pos += used;
	}
	if (version == IPUEF_METADATA_VERSION_GROUP) {
		size_t used = 0;

		rc = ipuef_group_decode(&o, p + c.pos, len - c.pos, &used, err, errlen);
		if (rc)
			goto fail;
		c.pos += used;
	}
	if (c.pos != len) {
		rc = ipu_errorf(err, errlen, IPUEF_E_METADATA,
				"metadata: %zu trailing bytes after the last anchor",
				len - c.pos);
		goto fail;
	}
	o.m.programs = o.programs;
	o.m.anchors = o.anchors;
	rc = ipuef_meta_validate(&o.m, err, errlen);
	if (rc)
		goto fail;
	*dst = o;
	return 0;
fail:
	ipuef_meta_free(&o);
	return rc;
}

uint64_t ipuef_meta_size(const struct ipuef_metadata *m)
{
	uint64_t n = 8 + 2 + strlen(m->ipu_version) + 16;

	for (uint32_t i = 0; i < m->num_programs; i++)
		n += 2 + strlen(m->programs[i].name) + 4;
	n += 4;
	for (uint32_t i = 0; i < m->num_anchors; i++)
		n += 2 + strlen(m->anchors[i].name) + 20 +
		     8ull * m->anchors[i].rank;
	if (m->num_states || m->group)
		n += ipuef_states_size(m);
	if (m->group)
		n += ipuef_group_size(m);
	return n;
}

uint32_t ipuef_meta_version(const struct ipuef_metadata *m)
{
	/* The lowest version that holds the model: files without state or
	 * group stay version 1, readable by older readers. */
	if (m->group)
		return IPUEF_METADATA_VERSION_GROUP;
	return m->num_states ? IPUEF_METADATA_VERSION_STATES : IPUEF_METADATA_VERSION;
}

static uint8_t *wrstr(uint8_t *o, const char *s)
{
	size_t len = strlen(s);

	put_le16(o, (uint16_t)len);
	memcpy(o + 2, s, len);
	return o + 2 + len;
}

void ipuef_meta_encode(const struct ipuef_metadata *m, uint8_t *o)
{
	put_le16(o, m->exe_format_major);
	put_le16(o + 2, m->exe_format_minor);
	put_le32(o + 4, 0);
	o = wrstr(o + 8, m->ipu_version);
	put_le32(o, m->num_tiles);
	put_le32(o + 4, m->tile_mem);
	put_le32(o + 8, m->batch_size);
	put_le32(o + 12, m->num_programs);
	o += 16;
	for (uint32_t i = 0; i < m->num_programs; i++) {
		o = wrstr(o, m->programs[i].name);
		put_le32(o, m->programs[i].index);
		o += 4;
	}
	put_le32(o, m->num_anchors);
	o += 4;
	for (uint32_t i = 0; i < m->num_anchors; i++) {
		const struct ipuef_anchor *a = &m->anchors[i];

		o = wrstr(o, a->name);
		o[0] = (uint8_t)a->dtype;
		o[1] = (uint8_t)a->direction;
		o[2] = (uint8_t)a->kind;
		o[3] = (uint8_t)a->rank;
		put_le32(o + 4, a->batch_dim);
		put_le32(o + 8, a->stream_id);
		put_le64(o + 12, a->programs);
		o += 20;
		for (uint32_t d = 0; d < a->rank; d++, o += 8)
			put_le64(o, a->dims[d]);
	}
	if (m->num_states || m->group)
		o = ipuef_states_encode(m, o);
	if (m->group)
		ipuef_group_encode(m, o);
}
