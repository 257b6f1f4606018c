// SPDX-License-Identifier: MIT
/*
 * ipuef_state.c - the state table of a version-2 Metadata payload: the
 * device-resident tensors (key/value caches) of a model.  Layout, after
 * the anchors:
 *
 *   u32 num_states, then per state:
 *       str name, u8 dtype, u8 rank, u8 init, u8 reserved (0),
 *       u32 write_stream, u32 read_stream, u64 dims[rank],
 *       u32 num_regions, then per region: u32 tile, u32 offset, u32 bytes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipuef_internal.h"

#define MIN_STATE_BYTES 20u	/* empty name + fixed fields, rank 0, no region */

uint64_t ipuef_state_bytes(const struct ipuef_state *s)
{
	if (!s || s->rank > IPUEF_MAX_RANK)
		return 0;
	uint64_t n = ipuef_shape_bytes(s->dims, s->rank, ipurt_dtype_size(s->dtype));
	return n == UINT64_MAX ? 0 : n;
}

static int validate_one(const struct ipuef_state *s, uint32_t i, char *err, size_t errlen)
{
	char what[64];
	uint64_t bytes, sum = 0;
	int rc;

	if (!s->name)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL, "metadata: state %u: NULL name", i);
	snprintf(what, sizeof(what), "metadata: state %u name", i);
	rc = ipuef_check_string(what, (const uint8_t *)s->name, strlen(s->name), IPUEF_MAX_NAME,
				false, err, errlen);
	if (rc)
		return rc;
	if (s->dtype == IPURT_DT_INVALID || s->dtype >= IPURT_DT_COUNT)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_DTYPE,
				  "metadata: state %u '%s': unknown dtype %u", i, s->name, s->dtype);
	if (s->rank > IPUEF_MAX_RANK)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_RANK,
				  "metadata: state %u '%s': rank %u > %u", i, s->name, s->rank,
				  IPUEF_MAX_RANK);
	for (uint32_t d = 0; d < s->rank; d++)
		if (!s->dims[d])
			return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_SHAPE,
					  "metadata: state %u '%s': dim %u is 0", i, s->name, d);
	bytes = ipuef_shape_bytes(s->dims, s->rank, ipurt_dtype_size(s->dtype));
	if (bytes == UINT64_MAX)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_SHAPE,
				  "metadata: state %u '%s': shape over %llu bytes", i, s->name,
				  (unsigned long long)IPUEF_MAX_TENSOR_BYTES);
	if (s->init > IPUEF_STATE_INIT_DATA)
		return ipu_errorf(err, errlen, IPUEF_E_METADATA,
				  "metadata: state %u '%s': unknown init %u (0 zeros, 1 tensor data)",
				  i, s->name, s->init);
	if (s->write_stream >= IPUEF_MAX_STREAMS || s->read_stream >= IPUEF_MAX_STREAMS)
		return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_STREAM,
				  "metadata: state %u '%s': stream ids %u / %u, limit %u", i,
				  s->name, s->write_stream, s->read_stream, IPUEF_MAX_STREAMS);
	if (!s->num_regions || s->num_regions > IPUEF_MAX_STATE_REGIONS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "metadata: state %u '%s': %u regions, must be 1..%u", i, s->name,
				  s->num_regions, IPUEF_MAX_STATE_REGIONS);
	if (!s->regions)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "metadata: state %u '%s': %u regions but no array", i, s->name,
				  s->num_regions);
	for (uint32_t r = 0; r < s->num_regions; r++)
		sum += s->regions[r].bytes;
	if (sum != bytes)
		return ipu_errorf(err, errlen, IPUEF_E_METADATA,
				  "metadata: state %u '%s': regions hold %llu bytes, the state has %llu",
				  i, s->name, (unsigned long long)sum, (unsigned long long)bytes);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Streams used once among anchors and states; names unique among both. */
static int check_unique(const struct ipuef_metadata *m, char *err, size_t errlen)
{
	uint32_t n = m->num_anchors + m->num_states;
	uint8_t *used = calloc(IPUEF_MAX_STREAMS, 1);
	const char **names = malloc(n * sizeof(*names));
	int rc = 0;

	if (!used || !names) {
		free(used);
		free(names);
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "metadata: out of memory checking %u states",
				  m->num_states);
	}
	for (uint32_t i = 0; i < m->num_anchors; i++) {
		used[m->anchors[i].stream_id] = 1;
		names[i] = m->anchors[i].name;
	}
	for (uint32_t i = 0; i < m->num_states && !rc; i++) {
		const struct ipuef_state *s = &m->states[i];

		names[m->num_anchors + i] = s->name;
		if (used[s->write_stream] || used[s->read_stream] || s->write_stream == s->read_stream)
			rc = ipu_errorf(err, errlen, IPUEF_E_ANCHOR_STREAM,
					"metadata: state %u '%s': stream %u or %u is used twice", i,
					s->name, s->write_stream, s->read_stream);
		used[s->write_stream] = used[s->read_stream] = 1;
	}
	if (!rc) {
		qsort(names, n, sizeof(*names), cmp_str);
		for (uint32_t i = 1; i < n && !rc; i++)
			if (!strcmp(names[i - 1], names[i]))
				rc = ipu_errorf(err, errlen, IPUEF_E_ANCHOR_NAME,
						"metadata: the name '%s' is used twice among anchors and states",
						names[i]);
	}
	free(used);
	free(names);
	return rc;
}

int ipuef_states_validate(const struct ipuef_metadata *m, char *err, size_t errlen)
{
	int have_write = 0, have_read = 0, rc;

	if (!m->num_states)
		return 0;
	if (m->num_states > IPUEF_MAX_STATES)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT, "metadata: %u states, limit %u",
				  m->num_states, IPUEF_MAX_STATES);
	if (!m->states)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL, "metadata: %u states but no array",
				  m->num_states);
	for (uint32_t i = 0; i < m->num_states; i++) {
		rc = validate_one(&m->states[i], i, err, errlen);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < m->num_programs; i++) {
		have_write |= !strcmp(m->programs[i].name, IPUEF_PROGRAM_STATE_WRITE);
		have_read |= !strcmp(m->programs[i].name, IPUEF_PROGRAM_STATE_READ);
	}
	if (!have_write || !have_read)
		return ipu_errorf(err, errlen, IPUEF_E_PROGRAM,
				  "metadata: %u states but no '%s' program",
				  m->num_states,
				  have_write ? IPUEF_PROGRAM_STATE_READ : IPUEF_PROGRAM_STATE_WRITE);
	return check_unique(m, err, errlen);
}

int ipuef_states_copy(struct ipuef_meta_owned *dst, const struct ipuef_metadata *src,
		      char *err, size_t errlen)
{
	uint64_t nreg = 0;
	size_t names = 0;
	char *p;

	if (!src->num_states)
		return 0;
	for (uint32_t i = 0; i < src->num_states; i++) {
		nreg += src->states[i].num_regions;
		names += strlen(src->states[i].name) + 1;
	}
	dst->states = calloc(src->num_states, sizeof(*dst->states));
	dst->regions = calloc(nreg, sizeof(*dst->regions));
	dst->state_names = p = malloc(names);
	if (!dst->states || !dst->regions || !p)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "metadata: out of memory copying %u states", src->num_states);
	nreg = 0;
	for (uint32_t i = 0; i < src->num_states; i++) {
		const struct ipuef_state *s = &src->states[i];
		size_t len = strlen(s->name) + 1;

		dst->states[i] = *s;
		for (uint32_t d = s->rank; d < IPUEF_MAX_RANK; d++)
			dst->states[i].dims[d] = 0;
		memcpy(p, s->name, len);
		dst->states[i].name = p;
		p += len;
		memcpy(dst->regions + nreg, s->regions, s->num_regions * sizeof(*s->regions));
		dst->states[i].regions = dst->regions + nreg;
		nreg += s->num_regions;
	}
	dst->m.num_states = src->num_states;
	dst->m.states = dst->states;
	return 0;
}

uint64_t ipuef_states_size(const struct ipuef_metadata *m)
{
	uint64_t n = 4;

	for (uint32_t i = 0; i < m->num_states; i++)
		n += 2 + strlen(m->states[i].name) + 12 + 8ull * m->states[i].rank + 4 +
		     12ull * m->states[i].num_regions;
	return n;
}

uint8_t *ipuef_states_encode(const struct ipuef_metadata *m, uint8_t *o)
{
	put_le32(o, m->num_states);
	o += 4;
	for (uint32_t i = 0; i < m->num_states; i++) {
		const struct ipuef_state *s = &m->states[i];
		size_t len = strlen(s->name);

		put_le16(o, (uint16_t)len);
		memcpy(o + 2, s->name, len);
		o += 2 + len;
		o[0] = (uint8_t)s->dtype;
		o[1] = (uint8_t)s->rank;
		o[2] = (uint8_t)s->init;
		o[3] = 0;
		put_le32(o + 4, s->write_stream);
		put_le32(o + 8, s->read_stream);
		o += 12;
		for (uint32_t d = 0; d < s->rank; d++, o += 8)
			put_le64(o, s->dims[d]);
		put_le32(o, s->num_regions);
		o += 4;
		for (uint32_t r = 0; r < s->num_regions; r++, o += 12) {
			put_le32(o, s->regions[r].tile);
			put_le32(o + 4, s->regions[r].offset);
			put_le32(o + 8, s->regions[r].bytes);
		}
	}
	return o;
}

static int short_of(size_t have, size_t want, const char *what, uint32_t i, char *err,
		    size_t errlen)
{
	if (have >= want)
		return 0;
	return ipu_errorf(err, errlen, IPUEF_E_METADATA,
			  "metadata: state %u: %s needs %zu bytes, only %zu left", i, what, want,
			  have);
}

int ipuef_states_decode(struct ipuef_meta_owned *o, const uint8_t *p, size_t len,
			size_t *used, char *err, size_t errlen)
{
	size_t pos = 0, names = 0;
	uint64_t nreg = 0;
	uint32_t n;
	char *sp;
	int rc;

	if (len < 4)
		return ipu_errorf(err, errlen, IPUEF_E_METADATA, "metadata: no state count");
	n = get_le32(p);
	if (n > IPUEF_MAX_STATES)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT, "metadata: %u states, limit %u", n,
				  IPUEF_MAX_STATES);
	if ((uint64_t)n * MIN_STATE_BYTES > len - 4)
		return ipu_errorf(err, errlen, IPUEF_E_METADATA,
				  "metadata: %u states need at least %llu bytes, %zu left", n,
				  (unsigned long long)n * MIN_STATE_BYTES, len - 4);
	/* First pass: bounds, and the sizes of the arrays to allocate. */
	pos = 4;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nl, rank, nr;

		if ((rc = short_of(len - pos, 2, "its name", i, err, errlen)))
			return rc;
		nl = get_le16(p + pos);
		if ((rc = short_of(len - pos - 2, nl + 12u, "its fields", i, err, errlen)))
			return rc;
		rc = ipuef_check_string("metadata: state name", p + pos + 2, nl, IPUEF_MAX_NAME,
					false, err, errlen);
		if (rc)
			return rc;
		names += nl + 1;
		pos += 2 + nl;
		rank = p[pos + 1];
		if (p[pos + 3])
			return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
					  "metadata: state %u: reserved byte not 0", i);
		if (rank > IPUEF_MAX_RANK)
			return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_RANK,
					  "metadata: state %u: rank %u > %u", i, rank, IPUEF_MAX_RANK);
		pos += 12;
		if ((rc = short_of(len - pos, 8u * rank + 4, "its dims", i, err, errlen)))
			return rc;
		pos += 8u * rank;
		nr = get_le32(p + pos);
		pos += 4;
		if (nr > IPUEF_MAX_STATE_REGIONS)
			return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
					  "metadata: state %u: %u regions, limit %u", i, nr,
					  IPUEF_MAX_STATE_REGIONS);
		if ((rc = short_of(len - pos, 12ull * nr, "its regions", i, err, errlen)))
			return rc;
		pos += 12ull * nr;
		nreg += nr;
	}
	*used = pos;
	o->states = calloc(n + 1, sizeof(*o->states));
	o->regions = calloc(nreg + 1, sizeof(*o->regions));
	o->state_names = sp = malloc(names + 1);
	if (!o->states || !o->regions || !sp)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "metadata: out of memory for %u states", n);
	pos = 4;
	nreg = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct ipuef_state *s = &o->states[i];
		uint32_t nl = get_le16(p + pos);

		memcpy(sp, p + pos + 2, nl);
		sp[nl] = 0;
		s->name = sp;
		sp += nl + 1;
		pos += 2 + nl;
		s->dtype = p[pos];
		s->rank = p[pos + 1];
		s->init = p[pos + 2];
		s->write_stream = get_le32(p + pos + 4);
		s->read_stream = get_le32(p + pos + 8);
		pos += 12;
		for (uint32_t d = 0; d < s->rank; d++, pos += 8)
			s->dims[d] = get_le64(p + pos);
		s->num_regions = get_le32(p + pos);
		pos += 4;
		s->regions = o->regions + nreg;
		for (uint32_t r = 0; r < s->num_regions; r++, pos += 12) {
			o->regions[nreg + r].tile = get_le32(p + pos);
			o->regions[nreg + r].offset = get_le32(p + pos + 4);
			o->regions[nreg + r].bytes = get_le32(p + pos + 8);
		}
		nreg += s->num_regions;
	}
	o->m.num_states = n;
	o->m.states = o->states;
	return 0;
}
