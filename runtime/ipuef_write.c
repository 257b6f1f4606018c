// SPDX-License-Identifier: MIT
/*
 * ipuef_write.c - the .ipuef writer: collect validated copies of the
 * blobs, then lay them out, checksum them and write the file atomically.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipu/crc32.h"
#include "ipu/file_atomic.h"
#include "ipuef_internal.h"

struct wr_opaque {
	char *name, *version;
	void *data;
	size_t size;
};

struct wr_exe {
	void *data;
	size_t len;
};

struct ipuef_writer {
	struct ipuef_meta_owned meta;
	int have_meta;
	void *exe;
	size_t exe_len;
	int have_exe;
	struct wr_exe *more;		/* IPU 1, 2, ... of a group */
	uint32_t nmore, more_cap;
	struct ipuef_tensor *tensors;	/* name and data owned */
	uint32_t ntensors, tensors_cap;
	struct wr_opaque *opaques;
	uint32_t nopaques, opaques_cap;
};

int ipuef_writer_create(struct ipuef_writer **out, char *err, size_t errlen)
{
	if (!out)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_create: NULL argument");
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	return 0;
}

void ipuef_writer_destroy(struct ipuef_writer *w)
{
	if (!w)
		return;
	ipuef_meta_free(&w->meta);
	free(w->exe);
	for (uint32_t i = 0; i < w->nmore; i++)
		free(w->more[i].data);
	free(w->more);
	for (uint32_t i = 0; i < w->ntensors; i++) {
		free((void *)w->tensors[i].name);
		free((void *)w->tensors[i].data);
	}
	free(w->tensors);
	for (uint32_t i = 0; i < w->nopaques; i++) {
		free(w->opaques[i].name);
		free(w->opaques[i].version);
		free(w->opaques[i].data);
	}
	free(w->opaques);
	free(w);
}

int ipuef_writer_set_metadata(struct ipuef_writer *w,
			      const struct ipuef_metadata *m, char *err,
			      size_t errlen)
{
	struct ipuef_meta_owned o;
	int rc;

	if (!w || !m)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_set_metadata: NULL argument");
	rc = ipuef_meta_copy(&o, m, err, errlen);
	if (rc)
		return rc;
	ipuef_meta_free(&w->meta);
	w->meta = o;
	w->have_meta = 1;
	return 0;
}

static void *dup_bytes(const void *p, size_t n)
{
	void *d = malloc(n ? n : 1);

	if (d && n)
		memcpy(d, p, n);
	return d;
}

int ipuef_writer_set_executable(struct ipuef_writer *w, const void *data,
				size_t len, char *err, size_t errlen)
{
	void *copy;

	if (!w || (!data && len))
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_set_executable: NULL argument");
	if (len > IPUEF_MAX_TENSOR_BYTES)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "executable of %zu bytes is too large", len);
	copy = dup_bytes(data, len);
	if (!copy)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "out of memory copying a %zu-byte executable",
				  len);
	free(w->exe);
	w->exe = copy;
	w->exe_len = len;
	w->have_exe = 1;
	return 0;
}

/* Make room for one more element of size `elem` in *arr. */
static int grow(void **arr, uint32_t n, uint32_t *cap, size_t elem)
{
	void *na;
	uint32_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 8;
	na = realloc(*arr, (size_t)nc * elem);
	if (!na)
		return -1;
	*arr = na;
	*cap = nc;
	return 0;
}

static uint32_t blob_count(const struct ipuef_writer *w)
{
	return 2 + w->nmore + w->ntensors + w->nopaques;
}

int ipuef_writer_add_executable(struct ipuef_writer *w, const void *data,
				size_t len, char *err, size_t errlen)
{
	void *copy;

	if (!w || (!data && len))
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_add_executable: NULL argument");
	if (!w->have_exe)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "no Executable of IPU 0: call ipuef_writer_set_executable() first");
	if (w->nmore + 1 >= IPUEF_MAX_GROUP_IPUS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT, "more than %u executables",
				  IPUEF_MAX_GROUP_IPUS);
	if (len > IPUEF_MAX_TENSOR_BYTES)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "executable of %zu bytes is too large", len);
	if (grow((void **)&w->more, w->nmore, &w->more_cap, sizeof(*w->more)))
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	copy = dup_bytes(data, len);
	if (!copy)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "out of memory copying a %zu-byte executable", len);
	w->more[w->nmore++] = (struct wr_exe){ copy, len };
	return 0;
}

int ipuef_writer_add_tensor(struct ipuef_writer *w,
			    const struct ipuef_tensor *t, char *err,
			    size_t errlen)
{
	struct ipuef_tensor c;
	char where[48];
	int rc;

	if (!w || !t)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_add_tensor: NULL argument");
	snprintf(where, sizeof(where), "tensor %u", w->ntensors);
	rc = ipuef_tensor_validate(where, t, err, errlen);
	if (rc)
		return rc;
	if (blob_count(w) >= IPUEF_MAX_BLOBS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "more than %u blobs", IPUEF_MAX_BLOBS);
	for (uint32_t i = 0; i < w->ntensors; i++)
		if (!strcmp(w->tensors[i].name, t->name))
			return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
					  "duplicate TensorData name '%s'",
					  t->name);
	c = *t;
	for (uint32_t d = c.rank; d < IPUEF_MAX_RANK; d++)
		c.dims[d] = 0;
	c.name = strdup(t->name);
	c.data = dup_bytes(t->data, t->size);
	if (!c.name || !c.data ||
	    grow((void **)&w->tensors, w->ntensors, &w->tensors_cap,
		 sizeof(*w->tensors))) {
		free((void *)c.name);
		free((void *)c.data);
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "out of memory copying tensor '%s' (%llu bytes)",
				  t->name, (unsigned long long)t->size);
	}
	w->tensors[w->ntensors++] = c;
	return 0;
}

int ipuef_writer_add_opaque(struct ipuef_writer *w, const char *name,
			    const char *version, const void *data, size_t len,
			    char *err, size_t errlen)
{
	struct wr_opaque o;
	int rc;

	if (!w || !name || (!data && len))
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_add_opaque: NULL argument");
	if (!version)
		version = "";
	rc = ipuef_check_string("opaque name", (const uint8_t *)name,
				strlen(name), IPUEF_MAX_NAME, false, err,
				errlen);
	if (!rc)
		rc = ipuef_check_string("opaque version",
					(const uint8_t *)version,
					strlen(version), IPUEF_MAX_NAME, true,
					err, errlen);
	if (rc)
		return rc;
	if (len > IPUEF_MAX_TENSOR_BYTES)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "opaque '%s' of %zu bytes is too large", name,
				  len);
	if (blob_count(w) >= IPUEF_MAX_BLOBS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "more than %u blobs", IPUEF_MAX_BLOBS);
	o.name = strdup(name);
	o.version = strdup(version);
	o.data = dup_bytes(data, len);
	o.size = len;
	if (!o.name || !o.version || !o.data ||
	    grow((void **)&w->opaques, w->nopaques, &w->opaques_cap,
		 sizeof(*w->opaques))) {
		free(o.name);
		free(o.version);
		free(o.data);
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "out of memory copying opaque '%s'", name);
	}
	w->opaques[w->nopaques++] = o;
	return 0;
}

static uint64_t tensor_payload(const struct ipuef_tensor *t)
{
	return ipuef_align8(IPUEF_TENSOR_FIXED + 8ull * t->rank +
			    strlen(t->name)) +
	       t->size;
}

static uint64_t opaque_payload(const struct wr_opaque *o)
{
	return ipuef_align8(IPUEF_OPAQUE_FIXED + strlen(o->name) +
			    strlen(o->version)) +
	       o->size;
}

static uint64_t blob_span(uint64_t payload)
{
	return IPUEF_BLOB_HEADER_SIZE + ipuef_align8(payload);
}

/* Write the blob header for the payload already placed after it. */
static uint8_t *finish_blob(uint8_t *h, uint32_t type, uint32_t version,
			    uint64_t size)
{
	const uint8_t *p = h + IPUEF_BLOB_HEADER_SIZE;

	put_le32(h, type);
	put_le16(h + 4, (uint16_t)version);
	put_le16(h + 6, 0);
	put_le64(h + 8, size);
	put_le32(h + 16, ipu_crc32(0, p, size));
	put_le32(h + 20, 0);
	return h + blob_span(size);
}

int ipuef_writer_write_mem(struct ipuef_writer *w, void **out, size_t *len,
			   char *err, size_t errlen)
{
	uint64_t total = IPUEF_HEADER_SIZE, msize;
	uint8_t *buf, *o, *p;
	uint32_t crc;
	int rc;

	if (!w || !out || !len)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_write_mem: NULL argument");
	if (!w->have_meta)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "no Metadata: call ipuef_writer_set_metadata() first");
	if (!w->have_exe)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "no Executable: call ipuef_writer_set_executable() first");
	if (1 + w->nmore != (w->meta.m.group ? w->meta.m.group->num_ipus : 1))
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "%u Executables for %u IPU(s): one per IPU", 1 + w->nmore,
				  w->meta.m.group ? w->meta.m.group->num_ipus : 1);
	rc = ipuef_check_model(&w->meta.m, w->tensors, w->ntensors, err,
			       errlen);
	if (rc)
		return rc;
	msize = ipuef_meta_size(&w->meta.m);
	total += blob_span(msize) + blob_span(w->exe_len);
	for (uint32_t i = 0; i < w->nmore; i++)
		total += blob_span(w->more[i].len);
	for (uint32_t i = 0; i < w->ntensors; i++)
		total += blob_span(tensor_payload(&w->tensors[i]));
	for (uint32_t i = 0; i < w->nopaques; i++)
		total += blob_span(opaque_payload(&w->opaques[i]));
	if (total > SIZE_MAX)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "file of %llu bytes does not fit in memory",
				  (unsigned long long)total);
	/* calloc: padding and reserved fields are zero. */
	buf = calloc(1, (size_t)total);
	if (!buf)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "out of memory for a %llu-byte file",
				  (unsigned long long)total);
	o = buf + IPUEF_HEADER_SIZE;
	ipuef_meta_encode(&w->meta.m, o + IPUEF_BLOB_HEADER_SIZE);
	o = finish_blob(o, IPUEF_BLOB_METADATA, ipuef_meta_version(&w->meta.m), msize);
	if (w->exe_len)
		memcpy(o + IPUEF_BLOB_HEADER_SIZE, w->exe, w->exe_len);
	o = finish_blob(o, IPUEF_BLOB_EXECUTABLE, IPUEF_EXECUTABLE_VERSION,
			w->exe_len);
	for (uint32_t i = 0; i < w->nmore; i++) {
		if (w->more[i].len)
			memcpy(o + IPUEF_BLOB_HEADER_SIZE, w->more[i].data, w->more[i].len);
		o = finish_blob(o, IPUEF_BLOB_EXECUTABLE, IPUEF_EXECUTABLE_VERSION,
				w->more[i].len);
	}
	for (uint32_t i = 0; i < w->ntensors; i++) {
		const struct ipuef_tensor *t = &w->tensors[i];
		size_t nl = strlen(t->name);

		p = o + IPUEF_BLOB_HEADER_SIZE;
		p[0] = (uint8_t)t->dtype;
		p[1] = (uint8_t)t->rank;
		put_le16(p + 2, (uint16_t)nl);
		put_le32(p + 4, t->flags);
		for (uint32_t d = 0; d < t->rank; d++)
			put_le64(p + IPUEF_TENSOR_FIXED + 8 * d, t->dims[d]);
		memcpy(p + IPUEF_TENSOR_FIXED + 8 * t->rank, t->name, nl);
		if (t->size)
			memcpy(p + ipuef_align8(IPUEF_TENSOR_FIXED +
						8 * t->rank + nl),
			       t->data, t->size);
		o = finish_blob(o, IPUEF_BLOB_TENSOR_DATA, IPUEF_TENSOR_VERSION,
				tensor_payload(t));
	}
	for (uint32_t i = 0; i < w->nopaques; i++) {
		const struct wr_opaque *q = &w->opaques[i];
		size_t nl = strlen(q->name), vl = strlen(q->version);

		p = o + IPUEF_BLOB_HEADER_SIZE;
		put_le16(p, (uint16_t)nl);
		put_le16(p + 2, (uint16_t)vl);
		memcpy(p + IPUEF_OPAQUE_FIXED, q->name, nl);
		memcpy(p + IPUEF_OPAQUE_FIXED + nl, q->version, vl);
		if (q->size)
			memcpy(p + ipuef_align8(IPUEF_OPAQUE_FIXED + nl + vl),
			       q->data, q->size);
		o = finish_blob(o, IPUEF_BLOB_OPAQUE, IPUEF_OPAQUE_VERSION,
				opaque_payload(q));
	}
	memcpy(buf, IPUEF_MAGIC, IPUEF_MAGIC_LEN);
	put_le16(buf + IPUEF_HDR_OFF_MAJOR, IPUEF_VERSION_MAJOR);
	put_le16(buf + IPUEF_HDR_OFF_MINOR, IPUEF_VERSION_MINOR);
	put_le32(buf + IPUEF_HDR_OFF_HSIZE, IPUEF_HEADER_SIZE);
	put_le64(buf + IPUEF_HDR_OFF_FSIZE, total);
	put_le32(buf + IPUEF_HDR_OFF_COUNT, blob_count(w));
	crc = ipu_crc32(0, buf, IPUEF_HDR_OFF_CRC);
	crc = ipu_crc32(crc, buf + IPUEF_HEADER_SIZE,
			(size_t)total - IPUEF_HEADER_SIZE);
	put_le32(buf + IPUEF_HDR_OFF_CRC, crc);
	*out = buf;
	*len = (size_t)total;
	return 0;
}

int ipuef_writer_write_file(struct ipuef_writer *w, const char *path,
			    char *err, size_t errlen)
{
	char msg[512];
	void *buf;
	size_t len;
	int rc;

	if (!path)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_writer_write_file: NULL path");
	rc = ipuef_writer_write_mem(w, &buf, &len, err, errlen);
	if (rc)
		return rc;
	if (ipurt_write_file_atomic(path, buf, len, msg, sizeof(msg)))
		rc = ipu_errorf(err, errlen, IPUEF_E_IO, "%s", msg);
	free(buf);
	return rc;
}
