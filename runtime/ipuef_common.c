// SPDX-License-Identifier: MIT
/*
 * ipuef_common.c - rules of the .ipuef format that are not about one blob
 * type: error names and messages, strings, shapes, TensorData and the
 * consistency between blobs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipuef_internal.h"

const char *ipuef_blob_type_name(uint32_t type)
{
	switch (type) {
	case IPUEF_BLOB_METADATA: return "Metadata";
	case IPUEF_BLOB_EXECUTABLE: return "Executable";
	case IPUEF_BLOB_TENSOR_DATA: return "TensorData";
	case IPUEF_BLOB_OPAQUE: return "Opaque";
	}
	return "unknown";
}

/* Length of the UTF-8 sequence at s (<= n bytes), 0 if invalid. */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
	uint32_t c = s[0], min;
	size_t len;

	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		len = 2, c &= 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, c &= 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

int ipuef_check_string(const char *what, const uint8_t *s, size_t len,
		       size_t max, bool allow_empty, char *err, size_t errlen)
{
	if (!len && !allow_empty)
		return ipu_errorf(err, errlen, IPUEF_E_STRING, "%s: empty",
				  what);
	if (len > max)
		return ipu_errorf(err, errlen, IPUEF_E_STRING,
				  "%s: %zu bytes long, limit %zu", what, len,
				  max);
	for (size_t i = 0; i < len;) {
		size_t n;

		if (s[i] < 0x20 || s[i] == 0x7f)
			return ipu_errorf(err, errlen, IPUEF_E_STRING,
					  "%s: control character 0x%02x at byte %zu",
					  what, s[i], i);
		n = utf8_seq(s + i, len - i);
		if (!n)
			return ipu_errorf(err, errlen, IPUEF_E_STRING,
					  "%s: invalid UTF-8 at byte %zu", what,
					  i);
		i += n;
	}
	return 0;
}

uint64_t ipuef_shape_bytes(const uint64_t *dims, uint32_t rank, size_t elem)
{
	uint64_t n = elem;

	for (uint32_t i = 0; i < rank; i++) {
		if (dims[i] && n > IPUEF_MAX_TENSOR_BYTES / dims[i])
			return UINT64_MAX;
		n *= dims[i];
	}
	return n > IPUEF_MAX_TENSOR_BYTES ? UINT64_MAX : n;
}

uint64_t ipuef_anchor_bytes(const struct ipuef_anchor *a)
{
	if (!a || a->rank > IPUEF_MAX_RANK)
		return 0;
	uint64_t n = ipuef_shape_bytes(a->dims, a->rank,
				       ipurt_dtype_size(a->dtype));
	return n == UINT64_MAX ? 0 : n;
}

/* "[2, 3, 4]" into buf. */
static const char *shape_str(char *buf, size_t len, const uint64_t *dims,
			     uint32_t rank)
{
	size_t o = 0;

	o += (size_t)snprintf(buf, len, "[");
	for (uint32_t i = 0; i < rank && i < IPUEF_MAX_RANK && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%llu", i ? ", " : "",
				      (unsigned long long)dims[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
	return buf;
}

int ipuef_tensor_validate(const char *where, const struct ipuef_tensor *t,
			  char *err, size_t errlen)
{
	char what[64 + IPUEF_MAX_NAME];
	size_t esize;
	uint64_t bytes;
	int rc;

	if (!t->name)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "%s: tensor without a name", where);
	snprintf(what, sizeof(what), "%s: tensor name", where);
	rc = ipuef_check_string(what, (const uint8_t *)t->name,
				strlen(t->name), IPUEF_MAX_NAME, false, err,
				errlen);
	if (rc)
		return rc;
	esize = ipurt_dtype_size(t->dtype);
	if (!esize || t->dtype == IPURT_DT_INVALID)
		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "%s (TensorData '%s'): unknown dtype %u",
				  where, t->name, t->dtype);
	if (t->rank > IPUEF_MAX_RANK)
		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "%s (TensorData '%s'): rank %u > %u", where,
				  t->name, t->rank, IPUEF_MAX_RANK);
	for (uint32_t i = 0; i < t->rank; i++)
		if (!t->dims[i])
			return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
					  "%s (TensorData '%s'): dim %u is 0",
					  where, t->name, i);
	if (t->flags & ~IPUEF_TENSOR_FROZEN)
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "%s (TensorData '%s'): unknown flags 0x%x",
				  where, t->name, t->flags);
	bytes = ipuef_shape_bytes(t->dims, t->rank, esize);
	if (bytes == UINT64_MAX)
		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "%s (TensorData '%s'): shape over %llu bytes",
				  where, t->name,
				  (unsigned long long)IPUEF_MAX_TENSOR_BYTES);
	if (bytes != t->size) {
		char s[200];

		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "%s (TensorData '%s'): %llu data bytes, but %s %s needs %llu",
				  where, t->name, (unsigned long long)t->size,
				  ipurt_dtype_name(t->dtype),
				  shape_str(s, sizeof(s), t->dims, t->rank),
				  (unsigned long long)bytes);
	}
	if (t->size && !t->data)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "%s (TensorData '%s'): no data", where,
				  t->name);
	return 0;
}

static int cmp_tensor_name(const void *a, const void *b)
{
	const struct ipuef_tensor *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

int ipuef_check_model(const struct ipuef_metadata *m,
		      const struct ipuef_tensor *tensors, uint32_t ntensors,
		      char *err, size_t errlen)
{
	const struct ipuef_tensor **sorted = NULL;
	int rc = 0;

	if (ntensors) {
		sorted = malloc(ntensors * sizeof(*sorted));
		if (!sorted)
			return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
					  "out of memory checking %u tensors",
					  ntensors);
		for (uint32_t i = 0; i < ntensors; i++)
			sorted[i] = &tensors[i];
		qsort(sorted, ntensors, sizeof(*sorted), cmp_tensor_name);
		for (uint32_t i = 1; i < ntensors; i++)
			if (!strcmp(sorted[i - 1]->name, sorted[i]->name)) {
				rc = ipu_errorf(err, errlen, IPUEF_E_TENSOR,
						"duplicate TensorData name '%s'",
						sorted[i]->name);
				goto out;
			}
	}
	for (uint32_t i = 0; i < m->num_anchors; i++) {
		const struct ipuef_anchor *a = &m->anchors[i];
		const struct ipuef_tensor key = { .name = a->name }, *kp = &key;
		const struct ipuef_tensor **hit = NULL;
		const struct ipuef_tensor *t;
		char s1[200], s2[200];

		if (a->kind != IPUEF_ANCHOR_TENSOR_DATA)
			continue;
		if (ntensors)
			hit = bsearch(&kp, sorted, ntensors, sizeof(*sorted),
				      cmp_tensor_name);
		if (!hit) {
			rc = ipu_errorf(err, errlen, IPUEF_E_TENSOR_MISSING,
					"anchor %u '%s': fed from tensor data, but there is no TensorData blob '%s'",
					i, a->name, a->name);
			goto out;
		}
		t = *hit;
		if (t->flags & IPUEF_TENSOR_FROZEN) {
			rc = ipu_errorf(err, errlen, IPUEF_E_TENSOR_MISMATCH,
					"anchor %u '%s': fed from tensor data, but TensorData '%s' is frozen",
					i, a->name, t->name);
			goto out;
		}
		if (t->dtype != a->dtype || t->rank != a->rank ||
		    memcmp(t->dims, a->dims, a->rank * sizeof(a->dims[0]))) {
			rc = ipu_errorf(err, errlen, IPUEF_E_TENSOR_MISMATCH,
					"anchor %u '%s' is %s %s but its TensorData is %s %s",
					i, a->name, ipurt_dtype_name(a->dtype),
					shape_str(s1, sizeof(s1), a->dims, a->rank),
					ipurt_dtype_name(t->dtype),
					shape_str(s2, sizeof(s2), t->dims, t->rank));
			goto out;
		}
	}
	for (uint32_t i = 0; i < m->num_states && !rc; i++) {
		const struct ipuef_state *st = &m->states[i];
		const struct ipuef_tensor key = { .name = st->name }, *kp = &key;
		const struct ipuef_tensor **hit = NULL;
		const struct ipuef_tensor *t;

		if (st->init != IPUEF_STATE_INIT_DATA)
			continue;
		if (ntensors)
			hit = bsearch(&kp, sorted, ntensors, sizeof(*sorted), cmp_tensor_name);
		if (!hit) {
			rc = ipu_errorf(err, errlen, IPUEF_E_TENSOR_MISSING,
					"state %u '%s': initialised from tensor data, but there is no TensorData blob '%s'",
					i, st->name, st->name);
			break;
		}
		t = *hit;
		if (t->dtype != st->dtype || t->rank != st->rank ||
		    memcmp(t->dims, st->dims, st->rank * sizeof(st->dims[0])) ||
		    (t->flags & IPUEF_TENSOR_FROZEN))
			rc = ipu_errorf(err, errlen, IPUEF_E_TENSOR_MISMATCH,
					"state %u '%s': its TensorData must be a non-frozen tensor of the state's dtype and shape",
					i, st->name);
	}
out:
	free(sorted);
	return rc;
}
