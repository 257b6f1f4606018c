// SPDX-License-Identifier: MIT
/*
 * ipuef_read.c - the .ipuef reader: load the bytes, check the header and
 * checksums, walk the blobs, decode each, check them against each other.
 * Nothing is handed out until the whole file has passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipu/crc32.h"
#include "ipuef_internal.h"

struct ipuef_file {
	uint8_t *buf;
	size_t len;
	uint16_t major, minor;
	uint32_t checksum;
	uint32_t nblobs;
	struct ipuef_blob_info *blobs;
	struct ipuef_meta_owned meta;
	int have_meta;
	const uint8_t *exe;
	size_t exe_len;
	const uint8_t **exes;		/* per IPU, in file order */
	size_t *exe_lens;
	uint32_t nexes;
	uint32_t ntensors, nopaques;
	struct ipuef_tensor *tensors;
	struct ipuef_opaque *opaques;
	char **names;			/* tensor/opaque name copies */
	uint32_t nnames;
	const struct ipuef_anchor **anchor_index;	/* sorted by name */
	const struct ipuef_tensor **tensor_index;	/* sorted by name */
};

void ipuef_close(struct ipuef_file *f)
{
	if (!f)
		return;
	for (uint32_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->blobs);
	free(f->exes);
	free(f->exe_lens);
	free(f->tensors);
	free(f->opaques);
	free(f->anchor_index);
	free(f->tensor_index);
	ipuef_meta_free(&f->meta);
	free(f->buf);
	free(f);
}

/* A name from the file, for messages: printable ASCII, at most 48 chars. */
static void safe_name(char *out, size_t outlen, const uint8_t *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < outlen && i < 48; i++)
		out[o++] = (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\'') ?
				   (char)s[i] : '?';
	if (len > 48 && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = 0;
}

/*
 * "TensorData 'w1'" (or just the type) for messages about blob payload p
 * of which avail bytes are inside the file.
 */
static void blob_label(char *out, size_t outlen, uint32_t type,
		       const uint8_t *p, uint64_t avail)
{
	char name[64] = "";
	size_t off = 0, nl = 0;

	if (type == IPUEF_BLOB_TENSOR_DATA && avail >= IPUEF_TENSOR_FIXED &&
	    p[1] <= IPUEF_MAX_RANK) {
		off = IPUEF_TENSOR_FIXED + 8u * p[1];
		nl = get_le16(p + 2);
	} else if (type == IPUEF_BLOB_OPAQUE && avail >= IPUEF_OPAQUE_FIXED) {
		off = IPUEF_OPAQUE_FIXED;
		nl = get_le16(p);
	}
	if (nl && off + nl <= avail)
		safe_name(name, sizeof(name), p + off, nl);
	if (name[0])
		snprintf(out, outlen, "%s '%s'", ipuef_blob_type_name(type),
			 name);
	else
		snprintf(out, outlen, "%s", ipuef_blob_type_name(type));
}

static char *keep_name(struct ipuef_file *f, const uint8_t *s, size_t len)
{
	char *n = malloc(len + 1);

	if (!n)
		return NULL;
	memcpy(n, s, len);
	n[len] = 0;
	f->names[f->nnames++] = n;
	return n;
}

static int zero_bytes(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int decode_tensor(struct ipuef_file *f, uint32_t bi, const uint8_t *p,
			 uint64_t size, struct ipuef_tensor *t, char *err,
			 size_t errlen)
{
	char where[32], what[96];
	uint64_t hdr, data_off;
	uint32_t nl;
	int rc;

	snprintf(where, sizeof(where), "blob %u", bi);
	if (size < IPUEF_TENSOR_FIXED)
		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "blob %u (TensorData): payload of %llu bytes is shorter than its %u-byte fixed part",
				  bi, (unsigned long long)size,
				  IPUEF_TENSOR_FIXED);
	t->dtype = p[0];
	t->rank = p[1];
	nl = get_le16(p + 2);
	t->flags = get_le32(p + 4);
	if (t->rank > IPUEF_MAX_RANK)
		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "blob %u (TensorData): rank %u > %u", bi,
				  t->rank, IPUEF_MAX_RANK);
	hdr = IPUEF_TENSOR_FIXED + 8ull * t->rank + nl;
	if (hdr > size)
		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "blob %u (TensorData): dims and a %u-byte name need %llu bytes, the payload has %llu",
				  bi, nl, (unsigned long long)hdr,
				  (unsigned long long)size);
	for (uint32_t d = 0; d < t->rank; d++)
		t->dims[d] = get_le64(p + IPUEF_TENSOR_FIXED + 8 * d);
	snprintf(what, sizeof(what), "blob %u (TensorData) name", bi);
	rc = ipuef_check_string(what, p + IPUEF_TENSOR_FIXED + 8 * t->rank, nl,
				IPUEF_MAX_NAME, false, err, errlen);
	if (rc)
		return rc;
	t->name = keep_name(f, p + IPUEF_TENSOR_FIXED + 8 * t->rank, nl);
	if (!t->name)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	data_off = ipuef_align8(hdr);
	if (data_off > size)
		return ipu_errorf(err, errlen, IPUEF_E_TENSOR,
				  "blob %u (TensorData '%s'): data offset %llu past the payload end %llu",
				  bi, t->name, (unsigned long long)data_off,
				  (unsigned long long)size);
	if (!zero_bytes(p + hdr, data_off - hdr))
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "blob %u (TensorData '%s'): padding before the data is not zero",
				  bi, t->name);
	t->data = p + data_off;
	t->size = size - data_off;
	return ipuef_tensor_validate(where, t, err, errlen);
}

static int decode_opaque(struct ipuef_file *f, uint32_t bi, const uint8_t *p,
			 uint64_t size, struct ipuef_opaque *o, char *err,
			 size_t errlen)
{
	char what[64];
	uint32_t nl, vl, flags;
	uint64_t hdr, data_off;
	int rc;

	if (size < IPUEF_OPAQUE_FIXED)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE,
				  "blob %u (Opaque): payload of %llu bytes is shorter than its %u-byte fixed part",
				  bi, (unsigned long long)size,
				  IPUEF_OPAQUE_FIXED);
	nl = get_le16(p);
	vl = get_le16(p + 2);
	flags = get_le32(p + 4);
	if (flags)
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "blob %u (Opaque): flags 0x%x, must be 0", bi,
				  flags);
	hdr = IPUEF_OPAQUE_FIXED + (uint64_t)nl + vl;
	if (hdr > size)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE,
				  "blob %u (Opaque): name and version need %llu bytes, the payload has %llu",
				  bi, (unsigned long long)hdr,
				  (unsigned long long)size);
	snprintf(what, sizeof(what), "blob %u (Opaque) name", bi);
	rc = ipuef_check_string(what, p + IPUEF_OPAQUE_FIXED, nl,
				IPUEF_MAX_NAME, false, err, errlen);
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "blob %u (Opaque) version", bi);
	rc = ipuef_check_string(what, p + IPUEF_OPAQUE_FIXED + nl, vl,
				IPUEF_MAX_NAME, true, err, errlen);
	if (rc)
		return rc;
	o->name = keep_name(f, p + IPUEF_OPAQUE_FIXED, nl);
	o->version = o->name ? keep_name(f, p + IPUEF_OPAQUE_FIXED + nl, vl)
			     : NULL;
	if (!o->version)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	data_off = ipuef_align8(hdr);
	if (data_off > size)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE,
				  "blob %u (Opaque '%s'): data offset %llu past the payload end %llu",
				  bi, o->name, (unsigned long long)data_off,
				  (unsigned long long)size);
	if (!zero_bytes(p + hdr, data_off - hdr))
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "blob %u (Opaque '%s'): padding before the data is not zero",
				  bi, o->name);
	o->data = p + data_off;
	o->size = size - data_off;
	return 0;
}

static uint32_t expected_version(uint32_t type)
{
	switch (type) {
	case IPUEF_BLOB_METADATA: return IPUEF_METADATA_VERSION;
	case IPUEF_BLOB_EXECUTABLE: return IPUEF_EXECUTABLE_VERSION;
	case IPUEF_BLOB_TENSOR_DATA: return IPUEF_TENSOR_VERSION;
	case IPUEF_BLOB_OPAQUE: return IPUEF_OPAQUE_VERSION;
	}
	return 0;
}

/* Check the header; on success *hsize is where blob 0 starts. */
static int check_header(struct ipuef_file *f, uint64_t *hsize_out, char *err,
			size_t errlen)
{
	const uint8_t *b = f->buf;
	uint32_t hsize, stored, crc;
	uint64_t fsize;

	if (f->len < IPUEF_HEADER_SIZE)
		return ipu_errorf(err, errlen, IPUEF_E_TRUNCATED,
				  "file is %zu bytes, shorter than the %u-byte header",
				  f->len, IPUEF_HEADER_SIZE);
	if (memcmp(b, IPUEF_MAGIC, IPUEF_MAGIC_LEN))
		return ipu_errorf(err, errlen, IPUEF_E_MAGIC,
				  "not an .ipuef file (bad magic %02x %02x %02x %02x %02x %02x %02x %02x)",
				  b[0], b[1], b[2], b[3], b[4], b[5], b[6],
				  b[7]);
	f->major = get_le16(b + IPUEF_HDR_OFF_MAJOR);
	f->minor = get_le16(b + IPUEF_HDR_OFF_MINOR);
	if (f->major != IPUEF_VERSION_MAJOR)
		return ipu_errorf(err, errlen, IPUEF_E_VERSION,
				  "format version %u.%u, this reader reads %u.x",
				  f->major, f->minor, IPUEF_VERSION_MAJOR);
	hsize = get_le32(b + IPUEF_HDR_OFF_HSIZE);
	fsize = get_le64(b + IPUEF_HDR_OFF_FSIZE);
	if (fsize > f->len)
		return ipu_errorf(err, errlen, IPUEF_E_TRUNCATED,
				  "header says the file is %llu bytes, but it is %zu (truncated?)",
				  (unsigned long long)fsize, f->len);
	if (fsize < f->len)
		return ipu_errorf(err, errlen, IPUEF_E_SIZE,
				  "%llu unexpected bytes after the end the header declares (%llu)",
				  (unsigned long long)(f->len - fsize),
				  (unsigned long long)fsize);
	if (hsize < IPUEF_HEADER_SIZE || hsize % IPUEF_BLOB_ALIGN ||
	    hsize > fsize)
		return ipu_errorf(err, errlen, IPUEF_E_HEADER,
				  "header_size %u: must be a multiple of 8, at least %u and inside the file",
				  hsize, IPUEF_HEADER_SIZE);
	stored = get_le32(b + IPUEF_HDR_OFF_CRC);
	crc = ipu_crc32(0, b, IPUEF_HDR_OFF_CRC);
	crc = ipu_crc32(crc, b + IPUEF_HEADER_SIZE,
			f->len - IPUEF_HEADER_SIZE);
	if (crc != stored)
		return ipu_errorf(err, errlen, IPUEF_E_CHECKSUM,
				  "checksum mismatch: stored 0x%08x, computed 0x%08x (file corrupted)",
				  stored, crc);
	f->checksum = stored;
	f->nblobs = get_le32(b + IPUEF_HDR_OFF_COUNT);
	if (f->nblobs > IPUEF_MAX_BLOBS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "%u blobs, limit %u", f->nblobs,
				  IPUEF_MAX_BLOBS);
	if ((uint64_t)f->nblobs * IPUEF_BLOB_HEADER_SIZE > fsize - hsize)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_BOUNDS,
				  "%u blobs need at least %llu bytes, the file has %llu after its header",
				  f->nblobs,
				  (unsigned long long)f->nblobs *
					  IPUEF_BLOB_HEADER_SIZE,
				  (unsigned long long)(fsize - hsize));
	*hsize_out = hsize;
	return 0;
}

/* Check one blob's header, bounds, padding and CRC; fill its info. */
static int check_blob(struct ipuef_file *f, uint32_t i, uint64_t off,
		      struct ipuef_blob_info *bi, char *err, size_t errlen)
{
	const uint8_t *h = f->buf + off, *p = h + IPUEF_BLOB_HEADER_SIZE;
	uint64_t left = f->len - off, padded;
	uint32_t flags, reserved, crc;
	char label[96];

	if (left < IPUEF_BLOB_HEADER_SIZE)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_BOUNDS,
				  "blob %u: header at offset %llu needs %u bytes, only %llu left",
				  i, (unsigned long long)off,
				  IPUEF_BLOB_HEADER_SIZE,
				  (unsigned long long)left);
	left -= IPUEF_BLOB_HEADER_SIZE;
	bi->offset = off;
	bi->type = get_le32(h);
	bi->version = get_le16(h + 4);
	flags = get_le16(h + 6);
	bi->size = get_le64(h + 8);
	bi->crc = get_le32(h + 16);
	reserved = get_le32(h + 20);
	blob_label(label, sizeof(label), bi->type, p,
		   bi->size < left ? bi->size : left);
	if (bi->size > left)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_BOUNDS,
				  "blob %u (%s): size %llu exceeds file (%llu bytes left)",
				  i, label, (unsigned long long)bi->size,
				  (unsigned long long)left);
	padded = ipuef_align8(bi->size);
	if (padded > left)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_BOUNDS,
				  "blob %u (%s): padding to 8 bytes runs past the end of the file",
				  i, label);
	if (flags || reserved)
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "blob %u (%s): flags 0x%x / reserved 0x%x, must be 0",
				  i, label, flags, reserved);
	if (!zero_bytes(p + bi->size, padded - bi->size))
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "blob %u (%s): padding after the payload is not zero",
				  i, label);
	crc = ipu_crc32(0, p, bi->size);
	if (crc != bi->crc)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_CHECKSUM,
				  "blob %u (%s): checksum mismatch: stored 0x%08x, computed 0x%08x",
				  i, label, bi->crc, crc);
	if (!expected_version(bi->type))
		return 1;	/* unknown type: the caller decides */
	if (bi->version != expected_version(bi->type) &&
	    !(bi->type == IPUEF_BLOB_METADATA && (bi->version == IPUEF_METADATA_VERSION_STATES ||
						  bi->version == IPUEF_METADATA_VERSION_GROUP)))
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_VERSION,
				  "blob %u (%s): payload version %u, this reader reads %u",
				  i, label, bi->version,
				  expected_version(bi->type));
	return 0;
}

static int cmp_anchor(const void *a, const void *b)
{
	const struct ipuef_anchor *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int cmp_tensor(const void *a, const void *b)
{
	const struct ipuef_tensor *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int build_indexes(struct ipuef_file *f, char *err, size_t errlen)
{
	uint32_t na = f->meta.m.num_anchors;

	f->anchor_index = malloc((na + 1) * sizeof(*f->anchor_index));
	f->tensor_index = malloc((f->ntensors + 1) * sizeof(*f->tensor_index));
	if (!f->anchor_index || !f->tensor_index)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < na; i++)
		f->anchor_index[i] = &f->meta.anchors[i];
	for (uint32_t i = 0; i < f->ntensors; i++)
		f->tensor_index[i] = &f->tensors[i];
	qsort(f->anchor_index, na, sizeof(*f->anchor_index), cmp_anchor);
	qsort(f->tensor_index, f->ntensors, sizeof(*f->tensor_index),
	      cmp_tensor);
	return 0;
}

static int parse(struct ipuef_file *f, char *err, size_t errlen)
{
	uint32_t meta_blob = 0, exe_blob = 0, exe_blob2 = 0;
	uint64_t off = 0;
	int rc = check_header(f, &off, err, errlen);

	if (rc)
		return rc;
	f->blobs = calloc(f->nblobs + 1, sizeof(*f->blobs));
	f->tensors = calloc(f->nblobs + 1, sizeof(*f->tensors));
	f->opaques = calloc(f->nblobs + 1, sizeof(*f->opaques));
	f->names = calloc(2 * (size_t)f->nblobs + 1, sizeof(*f->names));
	f->exes = calloc(f->nblobs + 1, sizeof(*f->exes));
	f->exe_lens = calloc(f->nblobs + 1, sizeof(*f->exe_lens));
	if (!f->blobs || !f->tensors || !f->opaques || !f->names || !f->exes || !f->exe_lens)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "out of memory for %u blobs", f->nblobs);
	for (uint32_t i = 0; i < f->nblobs; i++) {
		struct ipuef_blob_info *bi = &f->blobs[i];
		const uint8_t *p = f->buf + off + IPUEF_BLOB_HEADER_SIZE;

		rc = check_blob(f, i, off, bi, err, errlen);
		if (rc < 0)
			return rc;
		off += IPUEF_BLOB_HEADER_SIZE + ipuef_align8(bi->size);
		if (rc == 1) {
			/* Newer minor versions may add blob types that
			 * older readers skip; our own minor has none. */
			if (f->minor > IPUEF_VERSION_MINOR)
				continue;
			return ipu_errorf(err, errlen, IPUEF_E_BLOB_TYPE,
					  "blob %u: unknown type %u", i,
					  bi->type);
		}
		switch (bi->type) {
		case IPUEF_BLOB_METADATA:
			if (f->have_meta)
				return ipu_errorf(err, errlen,
						  IPUEF_E_BLOB_COUNT,
						  "blob %u: a second Metadata blob (the first is blob %u)",
						  i, meta_blob);
			rc = ipuef_meta_decode(&f->meta, p, bi->size, bi->version,
					       err, errlen);
			if (rc)
				return rc;
			f->have_meta = 1;
			meta_blob = i;
			break;
		case IPUEF_BLOB_EXECUTABLE:
			/* A group's IPUs each have one (counted below, once
			 * the Metadata says how many IPUs). */
			if (!f->nexes)
				exe_blob = i;
			else if (f->nexes == 1)
				exe_blob2 = i;
			f->exes[f->nexes] = p;
			f->exe_lens[f->nexes++] = bi->size;
			break;
		case IPUEF_BLOB_TENSOR_DATA: {
			struct ipuef_tensor *t = &f->tensors[f->ntensors];

			rc = decode_tensor(f, i, p, bi->size, t, err, errlen);
			if (rc)
				return rc;
			bi->name = t->name;
			f->ntensors++;
			break;
		}
		case IPUEF_BLOB_OPAQUE: {
			struct ipuef_opaque *o = &f->opaques[f->nopaques];

			rc = decode_opaque(f, i, p, bi->size, o, err, errlen);
			if (rc)
				return rc;
			bi->name = o->name;
			f->nopaques++;
			break;
		}
		}
	}
	if (off != f->len)
		return ipu_errorf(err, errlen, IPUEF_E_SIZE,
				  "%llu bytes after the last blob (blob count %u too small?)",
				  (unsigned long long)(f->len - off), f->nblobs);
	if (!f->have_meta)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "no Metadata blob");
	if (!f->nexes)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "no Executable blob");
	if (f->nexes > 1 && !f->meta.m.group)
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "blob %u: a second Executable blob (the first is blob %u) in a model of one IPU",
				  exe_blob2, exe_blob);
	if (f->nexes != ipuef_num_ipus(f))
		return ipu_errorf(err, errlen, IPUEF_E_BLOB_COUNT,
				  "%u Executable blobs (the first is blob %u) for %u IPU(s): one per IPU",
				  f->nexes, exe_blob, ipuef_num_ipus(f));
	f->exe = f->exes[0];
	f->exe_len = f->exe_lens[0];
	rc = ipuef_check_model(&f->meta.m, f->tensors, f->ntensors, err,
			       errlen);
	if (rc)
		return rc;
	return build_indexes(f, err, errlen);
}

/* Takes ownership of buf (malloc'd). */
static int open_buf(uint8_t *buf, size_t len, struct ipuef_file **out,
		    char *err, size_t errlen)
{
	struct ipuef_file *f = calloc(1, sizeof(*f));
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (!f) {
		free(buf);
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	}
	f->buf = buf;
	f->len = len;
	rc = parse(f, err, errlen);
	if (rc) {
		ipuef_close(f);
		return rc;
	}
	*out = f;
	return 0;
}

int ipuef_open_mem(const void *data, size_t len, struct ipuef_file **out,
		   char *err, size_t errlen)
{
	uint8_t *buf;

	if (!out || (!data && len))
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_open_mem: NULL argument");
	*out = NULL;
	buf = malloc(len ? len : 1);
	if (!buf)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "out of memory for a %zu-byte file", len);
	if (len)
		memcpy(buf, data, len);
	return open_buf(buf, len, out, err, errlen);
}

/* Reads exactly n bytes unless the file ends first; returns what it read, -1 on error. */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, p + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/*
 * The header is read and checked before anything else, so that a file that
 * is not an .ipuef (or /dev/zero) is refused after 32 bytes, and the body
 * is read up to the size the header declares, never more: files, pipes and
 * standard input are each read once.
 */
int ipuef_open(const char *path, struct ipuef_file **out, char *err,
	       size_t errlen)
{
	uint8_t hdr[IPUEF_HEADER_SIZE], extra;
	struct stat st;
	uint64_t fsize;
	uint8_t *buf;
	ssize_t n;
	int fd;

	if (!path || !out)
		return ipu_errorf(err, errlen, IPUEF_E_INVAL,
				  "ipuef_open: NULL argument");
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ipu_errorf(err, errlen, IPUEF_E_IO, "%s: %s", path,
				  strerror(errno));
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : errno;

		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_IO, "%s: %s", path,
				  strerror(e));
	}
	n = read_full(fd, hdr, sizeof(hdr));
	if (n < 0) {
		int e = errno;

		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_IO, "%s: read: %s", path, strerror(e));
	}
	if ((size_t)n < sizeof(hdr)) {
		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_TRUNCATED,
				  "%s: %zd bytes, shorter than the %u-byte header", path, n,
				  IPUEF_HEADER_SIZE);
	}
	if (memcmp(hdr, IPUEF_MAGIC, IPUEF_MAGIC_LEN)) {
		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_MAGIC, "%s: not an .ipuef file (bad magic)",
				  path);
	}
	fsize = get_le64(hdr + IPUEF_HDR_OFF_FSIZE);
	if (fsize < IPUEF_HEADER_SIZE || fsize > IPUEF_MAX_FILE_SIZE || fsize > SIZE_MAX) {
		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "%s: the header declares %llu bytes; files are %u bytes to %llu bytes",
				  path, (unsigned long long)fsize, IPUEF_HEADER_SIZE,
				  (unsigned long long)IPUEF_MAX_FILE_SIZE);
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size != fsize) {
		close(fd);
		return ipu_errorf(err, errlen,
				  (uint64_t)st.st_size < fsize ? IPUEF_E_TRUNCATED : IPUEF_E_SIZE,
				  "%s: the header says the file is %llu bytes, but it is %llu%s", path,
				  (unsigned long long)fsize, (unsigned long long)st.st_size,
				  (uint64_t)st.st_size < fsize ? " (truncated?)" : "");
	}
	buf = malloc((size_t)fsize);
	if (!buf) {
		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "%s: out of memory for %llu bytes", path, (unsigned long long)fsize);
	}
	memcpy(buf, hdr, sizeof(hdr));
	n = read_full(fd, buf + sizeof(hdr), (size_t)fsize - sizeof(hdr));
	if (n >= 0 && (size_t)n == (size_t)fsize - sizeof(hdr) && read_full(fd, &extra, 1) == 1) {
		free(buf);
		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_SIZE,
				  "%s: unexpected bytes after the %llu the header declares", path,
				  (unsigned long long)fsize);
	}
	if (n < 0) {
		int e = errno;

		free(buf);
		close(fd);
		return ipu_errorf(err, errlen, IPUEF_E_IO, "%s: read: %s", path, strerror(e));
	}
	close(fd);
	if ((size_t)n < (size_t)fsize - sizeof(hdr)) {
		free(buf);
		return ipu_errorf(err, errlen, IPUEF_E_TRUNCATED,
				  "%s: the header says the file is %llu bytes, but it ends after %zu (truncated?)",
				  path, (unsigned long long)fsize, (size_t)n + sizeof(hdr));
	}
	return open_buf(buf, (size_t)fsize, out, err, errlen);
}

void ipuef_version(const struct ipuef_file *f, uint16_t *major,
		   uint16_t *minor)
{
	if (major)
		*major = f->major;
	if (minor)
		*minor = f->minor;
}

uint32_t ipuef_checksum(const struct ipuef_file *f)
{
	return f->checksum;
}

uint64_t ipuef_file_size(const struct ipuef_file *f)
{
	return f->len;
}

uint32_t ipuef_num_blobs(const struct ipuef_file *f)
{
	return f->nblobs;
}

const struct ipuef_blob_info *ipuef_blob(const struct ipuef_file *f,
					 uint32_t i)
{
	return i < f->nblobs ? &f->blobs[i] : NULL;
}

const struct ipuef_metadata *ipuef_metadata(const struct ipuef_file *f)
{
	return &f->meta.m;
}

const struct ipuef_anchor *ipuef_find_anchor(const struct ipuef_file *f,
					     const char *name)
{
	const struct ipuef_anchor key = { .name = name }, *kp = &key;
	const struct ipuef_anchor **hit;

	if (!name || !f->meta.m.num_anchors)
		return NULL;
	hit = bsearch(&kp, f->anchor_index, f->meta.m.num_anchors,
		      sizeof(*f->anchor_index), cmp_anchor);
	return hit ? *hit : NULL;
}

const struct ipuef_program *ipuef_find_program(const struct ipuef_file *f,
					       const char *name)
{
	for (uint32_t i = 0; name && i < f->meta.m.num_programs; i++)
		if (!strcmp(f->meta.programs[i].name, name))
			return &f->meta.programs[i];
	return NULL;
}

const struct ipuef_tensor *ipuef_find_tensor(const struct ipuef_file *f,
					     const char *name)
{
	const struct ipuef_tensor key = { .name = name }, *kp = &key;
	const struct ipuef_tensor **hit;

	if (!name || !f->ntensors)
		return NULL;
	hit = bsearch(&kp, f->tensor_index, f->ntensors,
		      sizeof(*f->tensor_index), cmp_tensor);
	return hit ? *hit : NULL;
}

const struct ipuef_state *ipuef_find_state(const struct ipuef_file *f,
					   const char *name)
{
	for (uint32_t i = 0; name && i < f->meta.m.num_states; i++)
		if (!strcmp(f->meta.m.states[i].name, name))
			return &f->meta.m.states[i];
	return NULL;
}

const void *ipuef_executable(const struct ipuef_file *f, size_t *len)
{
	if (len)
		*len = f->exe_len;
	return f->exe;
}

uint32_t ipuef_num_tensors(const struct ipuef_file *f)
{
	return f->ntensors;
}

const struct ipuef_tensor *ipuef_tensor(const struct ipuef_file *f,
					uint32_t i)
{
	return i < f->ntensors ? &f->tensors[i] : NULL;
}

uint32_t ipuef_num_opaques(const struct ipuef_file *f)
{
	return f->nopaques;
}

const struct ipuef_opaque *ipuef_opaque(const struct ipuef_file *f,
					uint32_t i)
{
	return i < f->nopaques ? &f->opaques[i] : NULL;
}

uint32_t ipuef_num_ipus(const struct ipuef_file *f)
{
	return f->meta.m.group ? f->meta.m.group->num_ipus : 1;
}

const void *ipuef_group_executable(const struct ipuef_file *f, uint32_t ipu, size_t *len)
{
	if (ipu >= f->nexes)
		return NULL;
	if (len)
		*len = f->exe_lens[ipu];
	return f->exes[ipu];
}
