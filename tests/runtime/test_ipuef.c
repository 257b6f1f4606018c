// SPDX-License-Identifier: MIT
/*
 * test_ipuef.c - the .ipuef container: round trips, and corrupted files
 * refused with the error that names what is wrong (never a crash).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/ipuef.h"
#include "ipuef_internal.h"
#include "ipuef_sample.h"

static char err[1024];

static int open_bytes(const void *b, size_t n, struct ipuef_file **f)
{
	err[0] = 0;
	return ipuef_open_mem(b, n, f, err, sizeof(err));
}

/* Expect `code` and a message containing `msg` (if not NULL). */
#define EXPECT_REFUSED(buf, len, code, msg)                                  \
	do {                                                                 \
		struct ipuef_file *f_ = (struct ipuef_file *)1;              \
		int rc_ = open_bytes(buf, len, &f_);                         \
		CHECK_MSG(rc_ == (code), "got %s (%s), want %s",            \
			  ipu_err_name(rc_), err, ipu_err_name(code));   \
		CHECK((code) == 0 ? f_ != NULL : f_ == NULL);              \
		if (msg)                                                     \
			CHECK_MSG(strstr(err, msg ? msg : "") != NULL,       \
				  "message '%s' lacks '%s'", err,            \
				  msg ? msg : "");                           \
		if (rc_ == 0)                                                \
			ipuef_close(f_);                                     \
	} while (0)

static int same_anchor(const struct ipuef_anchor *a,
		       const struct ipuef_anchor *b)
{
	return !strcmp(a->name, b->name) && a->dtype == b->dtype &&
	       a->direction == b->direction && a->kind == b->kind &&
	       a->rank == b->rank &&
	       !memcmp(a->dims, b->dims, a->rank * sizeof(a->dims[0])) &&
	       a->batch_dim == b->batch_dim && a->stream_id == b->stream_id &&
	       a->programs == b->programs;
}

static void check_sample(const struct ipuef_file *f)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	const struct ipuef_metadata *s = &sample_meta;
	const void *exe;
	size_t exe_len;

	CHECK(!strcmp(m->ipu_version, s->ipu_version));
	CHECK_EQ_INT(m->num_tiles, s->num_tiles);
	CHECK_EQ_INT(m->tile_mem, s->tile_mem);
	CHECK_EQ_INT(m->batch_size, s->batch_size);
	CHECK_EQ_INT(m->exe_format_major, 1);
	REQUIRE(m->num_programs == s->num_programs);
	for (uint32_t i = 0; i < m->num_programs; i++) {
		CHECK(!strcmp(m->programs[i].name, s->programs[i].name));
		CHECK_EQ_INT(m->programs[i].index, s->programs[i].index);
	}
	REQUIRE(m->num_anchors == s->num_anchors);
	for (uint32_t i = 0; i < m->num_anchors; i++) {
		CHECK_MSG(same_anchor(&m->anchors[i], &s->anchors[i]),
			  "anchor %u", i);
		CHECK(ipuef_find_anchor(f, s->anchors[i].name) ==
		      &m->anchors[i]);
	}
	CHECK(ipuef_find_anchor(f, "nope") == NULL);
	CHECK(ipuef_find_anchor(f, "") == NULL);
	CHECK_EQ_INT(ipuef_anchor_bytes(ipuef_find_anchor(f, "X")), 24);
	CHECK_EQ_INT(ipuef_anchor_bytes(ipuef_find_anchor(f, "index")), 4);
	CHECK_EQ_INT(ipuef_find_program(f, "main")->index, 1);
	CHECK(ipuef_find_program(f, "train") == NULL);
	exe = ipuef_executable(f, &exe_len);
	REQUIRE(exe_len == sizeof(sample_exe));
	CHECK(!memcmp(exe, sample_exe, exe_len));
	CHECK(((uintptr_t)exe & 7) == 0);
	REQUIRE(ipuef_num_tensors(f) == SAMPLE_NTENSORS);
	for (uint32_t i = 0; i < SAMPLE_NTENSORS; i++) {
		const struct ipuef_tensor *t = ipuef_tensor(f, i);
		const struct ipuef_tensor *e = &sample_tensors[i];

		CHECK(!strcmp(t->name, e->name));
		CHECK_EQ_INT(t->dtype, e->dtype);
		CHECK_EQ_INT(t->rank, e->rank);
		CHECK(!memcmp(t->dims, e->dims, e->rank * 8));
		CHECK_EQ_INT(t->flags, e->flags);
		CHECK_EQ_INT(t->size, e->size);
		CHECK(!memcmp(t->data, e->data, e->size));
		CHECK(((uintptr_t)t->data & 7) == 0);
		CHECK(ipuef_find_tensor(f, e->name) == t);
	}
	CHECK(ipuef_find_tensor(f, "X") == NULL);
	REQUIRE(ipuef_num_opaques(f) == 1);
	CHECK(!strcmp(ipuef_opaque(f, 0)->name, "ipu-compile"));
	CHECK(!strcmp(ipuef_opaque(f, 0)->version, "0.1.0"));
	CHECK_EQ_INT(ipuef_opaque(f, 0)->size, 20);
	CHECK_EQ_INT(ipuef_num_blobs(f), 5);
	CHECK_EQ_INT(ipuef_blob(f, 0)->type, IPUEF_BLOB_METADATA);
	CHECK_EQ_INT(ipuef_blob(f, 1)->type, IPUEF_BLOB_EXECUTABLE);
	CHECK(!strcmp(ipuef_blob(f, 2)->name, "w1"));
	CHECK(ipuef_blob(f, 5) == NULL);
	CHECK(ipuef_tensor(f, 2) == NULL && ipuef_opaque(f, 1) == NULL);
}

TEST(roundtrip_mem)
{
	struct ipuef_file *f;
	void *buf;
	size_t len;

	REQUIRE(sample_bytes(&buf, &len) == 0);
	CHECK(len % 8 == 0);
	REQUIRE(open_bytes(buf, len, &f) == 0);
	CHECK_EQ_INT(ipuef_file_size(f), len);
	check_sample(f);
	ipuef_close(f);
	free(buf);
}

/* read(write(x)) then write again: byte-identical. */
TEST(rewrite_identical)
{
	struct ipuef_writer *w;
	struct ipuef_file *f;
	void *a, *b;
	size_t alen, blen;

	REQUIRE(sample_bytes(&a, &alen) == 0);
	REQUIRE(open_bytes(a, alen, &f) == 0);
	REQUIRE(ipuef_writer_create(&w, err, sizeof(err)) == 0);
	CHECK(ipuef_writer_set_metadata(w, ipuef_metadata(f), err,
					sizeof(err)) == 0);
	{
		size_t n;
		const void *e = ipuef_executable(f, &n);

		CHECK(ipuef_writer_set_executable(w, e, n, err, sizeof(err)) ==
		      0);
	}
	for (uint32_t i = 0; i < ipuef_num_tensors(f); i++)
		CHECK(ipuef_writer_add_tensor(w, ipuef_tensor(f, i), err,
					      sizeof(err)) == 0);
	for (uint32_t i = 0; i < ipuef_num_opaques(f); i++) {
		const struct ipuef_opaque *o = ipuef_opaque(f, i);

		CHECK(ipuef_writer_add_opaque(w, o->name, o->version, o->data,
					      o->size, err, sizeof(err)) == 0);
	}
	REQUIRE(ipuef_writer_write_mem(w, &b, &blen, err, sizeof(err)) == 0);
	CHECK_EQ_INT(alen, blen);
	CHECK(alen == blen && !memcmp(a, b, alen));
	ipuef_writer_destroy(w);
	ipuef_close(f);
	free(a);
	free(b);
}

TEST(roundtrip_file)
{
	char dir[] = "/tmp/ipuef-test-XXXXXX", path[64], path2[80];
	struct ipuef_writer *w;
	struct ipuef_file *f;
	FILE *fp;
	int rc;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/m.ipuef", dir);
	REQUIRE(sample_writer(&w, err, sizeof(err)) == 0);
	rc = ipuef_writer_write_file(w, path, err, sizeof(err));
	CHECK_MSG(rc == 0, "%s", err);
	ipuef_writer_destroy(w);
	rc = ipuef_open(path, &f, err, sizeof(err));
	CHECK_MSG(rc == 0, "%s", err);
	if (!rc) {
		check_sample(f);
		ipuef_close(f);
	}
	/* I/O errors name the file and the reason. */
	snprintf(path2, sizeof(path2), "%s/missing.ipuef", dir);
	f = (struct ipuef_file *)1;
	CHECK_EQ_INT(ipuef_open(path2, &f, err, sizeof(err)), IPUEF_E_IO);
	CHECK(f == NULL);
	CHECK(strstr(err, "missing.ipuef") && strstr(err, "No such file"));
	CHECK_EQ_INT(ipuef_open(dir, &f, err, sizeof(err)), IPUEF_E_IO);
	/* A truncated file on disk. */
	fp = fopen(path2, "wb");
	REQUIRE(fp != NULL);
	fwrite("\x89IPUEF\r\n", 1, 8, fp);
	fclose(fp);
	CHECK_EQ_INT(ipuef_open(path2, &f, err, sizeof(err)),
		     IPUEF_E_TRUNCATED);
	CHECK(strstr(err, "8 bytes") != NULL);
	unlink(path2);
	unlink(path);
	rmdir(dir);
}

TEST(truncated_everywhere)
{
	uint8_t *buf;
	size_t len;

	REQUIRE(sample_bytes((void **)&buf, &len) == 0);
	for (size_t n = 0; n < len; n++) {
		struct ipuef_file *f = NULL;
		int rc = open_bytes(buf, n, &f);

		CHECK_MSG(rc == IPUEF_E_TRUNCATED, "length %zu: %s (%s)", n,
			  ipu_err_name(rc), err);
		CHECK(f == NULL);
	}
	EXPECT_REFUSED(buf, 31, IPUEF_E_TRUNCATED,
		       "31 bytes, shorter than the 32-byte header");
	EXPECT_REFUSED(buf, 100, IPUEF_E_TRUNCATED, "but it is 100");
	free(buf);
}

TEST(trailing_bytes)
{
	uint8_t *buf;
	size_t len;

	REQUIRE(sample_bytes((void **)&buf, &len) == 0);
	buf = realloc(buf, len + 3);
	REQUIRE(buf != NULL);
	memset(buf + len, 0, 3);
	EXPECT_REFUSED(buf, len + 3, IPUEF_E_SIZE, "3 unexpected bytes");
	free(buf);
}

/* Every single-bit flip is refused; past the header fields the checks
 * before the CRC read, it is always the checksum that catches it. */
TEST(bit_flips_everywhere)
{
	uint8_t *buf;
	size_t len;

	REQUIRE(sample_bytes((void **)&buf, &len) == 0);
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct ipuef_file *f = NULL;
			int rc;

			buf[i] ^= (uint8_t)(1u << bit);
			rc = open_bytes(buf, len, &f);
			buf[i] ^= (uint8_t)(1u << bit);
			CHECK_MSG(rc < 0 && f == NULL, "flip %zu.%d accepted",
				  i, bit);
			if (i >= IPUEF_HDR_OFF_COUNT || i == IPUEF_HDR_OFF_MINOR ||
			    i == IPUEF_HDR_OFF_MINOR + 1)
				CHECK_MSG(rc == IPUEF_E_CHECKSUM,
					  "flip at %zu.%d: %s (%s)", i, bit,
					  ipu_err_name(rc), err);
			else if (i < IPUEF_MAGIC_LEN)
				CHECK_EQ_INT(rc, IPUEF_E_MAGIC);
			else if (i < IPUEF_HDR_OFF_MINOR)
				CHECK_EQ_INT(rc, IPUEF_E_VERSION);
			else
				CHECK_MSG(rc == IPUEF_E_HEADER ||
						  rc == IPUEF_E_CHECKSUM ||
						  rc == IPUEF_E_TRUNCATED ||
						  rc == IPUEF_E_SIZE,
					  "flip at %zu.%d: %s", i, bit,
					  ipu_err_name(rc));
			if (rc == 0)
				ipuef_close(f);
		}
	}
	/* The message gives both values. */
	buf[len - 1] ^= 1;
	EXPECT_REFUSED(buf, len, IPUEF_E_CHECKSUM, "checksum mismatch: stored 0x");
	CHECK(strstr(err, "computed 0x") != NULL);
	free(buf);
}

TEST(header_fields)
{
	uint8_t *buf;
	size_t len;

	REQUIRE(sample_bytes((void **)&buf, &len) == 0);
	buf[1] = 'X';
	EXPECT_REFUSED(buf, len, IPUEF_E_MAGIC, "not an .ipuef file");
	buf[1] = 'I';
	put_le16(buf + IPUEF_HDR_OFF_MAJOR, 2);
	EXPECT_REFUSED(buf, len, IPUEF_E_VERSION, "format version 2.0");
	put_le16(buf + IPUEF_HDR_OFF_MAJOR, 1);
	put_le32(buf + IPUEF_HDR_OFF_HSIZE, 36);
	EXPECT_REFUSED(buf, len, IPUEF_E_HEADER, "header_size 36");
	put_le32(buf + IPUEF_HDR_OFF_HSIZE, 32);
	put_le32(buf + IPUEF_HDR_OFF_COUNT, 0xffffffffu);
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_LIMIT, "4294967295 blobs, limit");
	put_le32(buf + IPUEF_HDR_OFF_COUNT, 60000);
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_BLOB_BOUNDS, "60000 blobs need");
	put_le32(buf + IPUEF_HDR_OFF_COUNT, 4);
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_SIZE, "after the last blob");
	put_le32(buf + IPUEF_HDR_OFF_COUNT, 6);
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_BLOB_BOUNDS, "blob 5: header at offset");
	put_le32(buf + IPUEF_HDR_OFF_COUNT, 5);
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, 0, NULL);
	free(buf);
}

/* Offset of blob i's header in a well-formed file. */
static size_t blob_off(const uint8_t *buf, uint32_t i)
{
	size_t o = IPUEF_HEADER_SIZE;

	while (i--)
		o += IPUEF_BLOB_HEADER_SIZE + ipuef_align8(get_le64(buf + o + 8));
	return o;
}

TEST(bad_blobs)
{
	uint8_t *buf;
	size_t len, o;

	REQUIRE(sample_bytes((void **)&buf, &len) == 0);
	/* Blob 2 is TensorData 'w1': make it claim more than the file. */
	o = blob_off(buf, 2);
	put_le64(buf + o + 8, 4096);
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_BLOB_BOUNDS,
		       "blob 2 (TensorData 'w1'): size 4096 exceeds file (");
	put_le64(buf + o + 8, UINT64_MAX);
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_BLOB_BOUNDS,
		       "size 18446744073709551615 exceeds file");
	free(buf);

	REQUIRE(sample_bytes((void **)&buf, &len) == 0);
	o = blob_off(buf, 2);
	buf[o + IPUEF_BLOB_HEADER_SIZE + 30] ^= 0x40; /* inside w1's data */
	raw_fix_file_crc(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_BLOB_CHECKSUM,
		       "blob 2 (TensorData 'w1'): checksum mismatch: stored");
	buf[o + IPUEF_BLOB_HEADER_SIZE + 30] ^= 0x40;
	put_le32(buf + o, 9);
	raw_fix_crcs(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_BLOB_TYPE, "blob 2: unknown type 9");
	/* A newer minor version may add blob types: skipped. */
	put_le16(buf + IPUEF_HDR_OFF_MINOR, 1);
	raw_fix_crcs(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_TENSOR_MISSING, "anchor 2 'w1'");
	put_le16(buf + IPUEF_HDR_OFF_MINOR, 0);
	put_le32(buf + o, IPUEF_BLOB_TENSOR_DATA);
	put_le16(buf + o + 4, 2);
	raw_fix_crcs(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_BLOB_VERSION,
		       "blob 2 (TensorData 'w1'): payload version 2");
	put_le16(buf + o + 4, 1);
	put_le16(buf + o + 6, 1);
	raw_fix_crcs(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_RESERVED, "flags 0x1");
	put_le16(buf + o + 6, 0);
	put_le32(buf + o + 20, 5);
	raw_fix_crcs(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_RESERVED, "reserved 0x5");
	put_le32(buf + o + 20, 0);
	raw_fix_crcs(buf, len);
	EXPECT_REFUSED(buf, len, 0, NULL);
	/* Opaque (blob 4) payload padding: 20 bytes of data + 4 padding. */
	o = blob_off(buf, 4);
	buf[len - 1] = 7;
	raw_fix_crcs(buf, len);
	EXPECT_REFUSED(buf, len, IPUEF_E_RESERVED,
		       "blob 4 (Opaque 'ipu-compile'): padding after the payload");
	free(buf);
}

/* Files assembled from raw blobs reach the semantic checks. */
static void expect_meta(const struct ipuef_metadata *m, int code,
			const char *msg, int also_writer)
{
	uint8_t *meta, *file;
	size_t mlen, flen;
	struct raw_blob b[3] = {
		{ IPUEF_BLOB_METADATA, 1, NULL, 0 },
		{ IPUEF_BLOB_EXECUTABLE, 1, sample_exe, sizeof(sample_exe) },
		{ IPUEF_BLOB_TENSOR_DATA, 1, NULL, 0 },
	};

	mlen = raw_meta(m, &meta);
	b[0].payload = meta;
	b[0].size = mlen;
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, code, msg);
	if (also_writer) {
		struct ipuef_writer *w;

		REQUIRE(ipuef_writer_create(&w, err, sizeof(err)) == 0);
		CHECK_EQ_INT(ipuef_writer_set_metadata(w, m, err, sizeof(err)),
			     code);
		CHECK_MSG(strstr(err, msg) != NULL, "writer: '%s' lacks '%s'",
			  err, msg);
		ipuef_writer_destroy(w);
	}
	free(meta);
	free(file);
}

/* The sample's metadata without the tensor-data anchor (so files need no
 * TensorData blob), into caller storage. */
static struct ipuef_anchor an[8];
static struct ipuef_program pr[3];
static struct ipuef_metadata base(void)
{
	struct ipuef_metadata m = sample_meta;
	uint32_t n = 0;

	for (uint32_t i = 0; i < sample_meta.num_anchors; i++)
		if (sample_meta.anchors[i].kind != IPUEF_ANCHOR_TENSOR_DATA)
			an[n++] = sample_meta.anchors[i];
	memcpy(pr, sample_meta.programs, sizeof(pr));
	m.anchors = an;
	m.num_anchors = n;
	m.programs = pr;
	return m;
}

TEST(bad_anchors)
{
	struct ipuef_metadata m = base();
	uint8_t *meta, *file;
	size_t mlen, flen, at;
	struct raw_blob b[2] = {
		{ IPUEF_BLOB_METADATA, 1, NULL, 0 },
		{ IPUEF_BLOB_EXECUTABLE, 1, sample_exe, 8 },
	};

	expect_meta(&m, 0, NULL, 0);
	/* rank 9: the encoder cannot hold 9 dims, so patch the rank byte
	 * of anchor 0 ('X', rank 2) and insert nothing: the decoder must
	 * stop at the rank. */
	mlen = raw_meta(&m, &meta);
	at = 0;
	for (size_t i = 0; i + 3 < mlen; i++)
		if (meta[i] == 1 && meta[i + 1] == 0 && meta[i + 2] == 'X') {
			at = i + 3 + 3;
			break;
		}
	REQUIRE(at && meta[at] == 2);
	meta[at] = 9;
	b[0].payload = meta;
	b[0].size = mlen;
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_ANCHOR_RANK,
		       "anchor 0 'X': rank 9 > 8");
	free(file);
	meta[at] = 255;
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_ANCHOR_RANK, "rank 255 > 8");
	free(file);
	/* rank 3 with only 2 dims present: the dims overrun into the next
	 * anchor, which then fails somewhere; never a crash. */
	meta[at] = 3;
	flen = raw_assemble(b, 2, &file);
	{
		struct ipuef_file *f = NULL;

		CHECK(open_bytes(file, flen, &f) < 0);
		CHECK(f == NULL);
	}
	free(file);
	free(meta);

	m = base(); an[0].rank = 9;
	{
		struct ipuef_writer *w;

		REQUIRE(ipuef_writer_create(&w, err, sizeof(err)) == 0);
		CHECK_EQ_INT(ipuef_writer_set_metadata(w, &m, err, sizeof(err)),
			     IPUEF_E_ANCHOR_RANK);
		CHECK(strstr(err, "anchor 0 'X': rank 9 > 8") != NULL);
		ipuef_writer_destroy(w);
	}
	m = base(); an[1].dtype = 0;
	expect_meta(&m, IPUEF_E_ANCHOR_DTYPE, "anchor 1 'graph0/Y': unknown dtype 0", 1);
	m = base(); an[1].dtype = IPURT_DT_COUNT;
	expect_meta(&m, IPUEF_E_ANCHOR_DTYPE, "unknown dtype 8", 1);
	m = base(); an[2].name = "X";
	expect_meta(&m, IPUEF_E_ANCHOR_NAME,
		    "metadata: duplicate anchor name 'X' (anchors 0 and 2)", 1);
	m = base(); an[3].name = "";
	expect_meta(&m, IPUEF_E_ANCHOR_NAME, "anchor 3: empty name", 1);
	m = base(); an[3].name = "bad\xff";
	expect_meta(&m, IPUEF_E_STRING, "anchor 3 name: invalid UTF-8 at byte 3", 1);
	m = base(); an[3].name = "\xc0\xaf"; /* overlong '/' */
	expect_meta(&m, IPUEF_E_STRING, "invalid UTF-8 at byte 0", 1);
	m = base(); an[3].name = "a\nb";
	expect_meta(&m, IPUEF_E_STRING, "control character 0x0a at byte 1", 1);
	m = base(); an[0].dims[1] = 0;
	expect_meta(&m, IPUEF_E_ANCHOR_SHAPE, "anchor 0 'X': dim 1 is 0", 1);
	m = base(); an[0].dims[1] = 1ull << 62;
	expect_meta(&m, IPUEF_E_ANCHOR_SHAPE, "shape over", 1);
	m = base(); an[0].direction = 7;
	expect_meta(&m, IPUEF_E_ANCHOR_DIR, "unknown direction 7", 1);
	m = base(); an[2].kind = IPUEF_ANCHOR_INDEX;
	expect_meta(&m, IPUEF_E_ANCHOR_DIR, "must be an input", 1);
	m = base(); an[0].kind = 3;
	expect_meta(&m, IPUEF_E_ANCHOR_KIND, "unknown kind 3", 1);
	m = base(); an[0].kind = IPUEF_ANCHOR_INDEX;
	expect_meta(&m, IPUEF_E_ANCHOR_DTYPE, "integer dtype", 1);
	m = base(); an[1].kind = IPUEF_ANCHOR_INDEX; an[1].dtype = IPURT_DT_I32;
	expect_meta(&m, IPUEF_E_ANCHOR_KIND, "a second index anchor", 1);
	m = base(); an[0].batch_dim = 2;
	expect_meta(&m, IPUEF_E_ANCHOR_BATCH, "batch dim 2 >= rank 2", 1);
	m = base(); an[0].stream_id = 4096;
	expect_meta(&m, IPUEF_E_ANCHOR_STREAM, "stream id 4096 >= 4096", 1);
	m = base(); an[3].stream_id = an[0].stream_id;
	expect_meta(&m, IPUEF_E_ANCHOR_STREAM, "share stream id 0", 1);
	m = base(); an[0].programs |= 1ull << 10;
	expect_meta(&m, IPUEF_E_ANCHOR_PROGRAMS, "program index 10", 1);
	m = base(); pr[2].name = "main";
	expect_meta(&m, IPUEF_E_PROGRAM, "duplicate program name 'main'", 1);
	m = base(); pr[2].index = 1;
	expect_meta(&m, IPUEF_E_PROGRAM, "index 1 used twice", 1);
	m = base(); pr[2].index = 64;
	expect_meta(&m, IPUEF_E_PROGRAM, "index 64 >= 64", 1);
	m = base(); m.num_tiles = 0;
	expect_meta(&m, IPUEF_E_TARGET, "num_tiles 0", 1);
	m = base(); m.batch_size = 0;
	expect_meta(&m, IPUEF_E_TARGET, "batch_size 0", 1);
	m = base(); m.ipu_version = "";
	expect_meta(&m, IPUEF_E_STRING, "ipu_version: empty", 1);
	m = base(); m.ipu_version = "ipu21-with-a-very-long-version-string";
	expect_meta(&m, IPUEF_E_STRING, "ipu_version: 37 bytes long, limit 32", 1);
}

/* Counts and sizes in the Metadata payload that lie. */
TEST(bad_counts)
{
	struct ipuef_metadata m = base();
	uint8_t *meta, *file;
	size_t mlen, flen, cnt;
	struct raw_blob b[2] = {
		{ IPUEF_BLOB_METADATA, 1, NULL, 0 },
		{ IPUEF_BLOB_EXECUTABLE, 1, sample_exe, 8 },
	};

	mlen = raw_meta(&m, &meta);
	b[0].payload = meta;
	b[0].size = mlen;
	/* ipu_version "ipu21" at 8: u16 length. */
	put_le16(meta + 8, 0xffff);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_STRING, "ipu_version: 65535 bytes long");
	free(file);
	put_le16(meta + 8, 5);
	/* num_programs at 8 + 2 + 5 + 12. */
	cnt = 8 + 2 + 5 + 12;
	REQUIRE(get_le32(meta + cnt) == 3);
	put_le32(meta + cnt, 0xffffffffu);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_LIMIT, "metadata: 4294967295 programs, limit 64");
	free(file);
	put_le32(meta + cnt, 64);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_METADATA, NULL);
	free(file);
	put_le32(meta + cnt, 3);
	/* num_anchors follows the 3 programs. */
	cnt += 4 + (2 + 4 + 4) * 3;
	REQUIRE(get_le32(meta + cnt) == m.num_anchors);
	put_le32(meta + cnt, 0xffffffffu);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_LIMIT, "4294967295 anchors, limit 4096");
	free(file);
	put_le32(meta + cnt, 4096);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_METADATA, "the anchor table needs");
	free(file);
	put_le32(meta + cnt, m.num_anchors - 1);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_METADATA, "trailing bytes after the last anchor");
	free(file);
	put_le32(meta + cnt, m.num_anchors);
	put_le32(meta + 4, 1);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_RESERVED, "metadata: flags 0x1");
	free(file);
	put_le32(meta + 4, 0);
	/* Cut the payload short at every length. */
	for (size_t n = 0; n < mlen; n++) {
		struct ipuef_file *f = NULL;
		int rc;

		b[0].size = n;
		flen = raw_assemble(b, 2, &file);
		rc = open_bytes(file, flen, &f);
		CHECK_MSG(rc == IPUEF_E_METADATA || rc == IPUEF_E_STRING,
			  "metadata cut at %zu: %s (%s)", n,
			  ipu_err_name(rc), err);
		free(file);
	}
	free(meta);
}

TEST(blob_counts)
{
	struct ipuef_metadata m = base();
	uint8_t *meta, *file;
	size_t mlen, flen;
	struct raw_blob b[3] = {
		{ IPUEF_BLOB_METADATA, 1, NULL, 0 },
		{ IPUEF_BLOB_EXECUTABLE, 1, sample_exe, 8 },
		{ IPUEF_BLOB_METADATA, 1, NULL, 0 },
	};

	mlen = raw_meta(&m, &meta);
	b[0].payload = b[2].payload = meta;
	b[0].size = b[2].size = mlen;
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_BLOB_COUNT,
		       "blob 2: a second Metadata blob (the first is blob 0)");
	free(file);
	b[2] = b[1];
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_BLOB_COUNT, "a second Executable");
	free(file);
	flen = raw_assemble(b, 1, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_BLOB_COUNT, "no Executable blob");
	free(file);
	flen = raw_assemble(b + 1, 1, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_BLOB_COUNT, "no Metadata blob");
	free(file);
	flen = raw_assemble(b, 0, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_BLOB_COUNT, "no Metadata blob");
	free(file);
	free(meta);
}

/* TensorData payload: dtype, rank, name_len, flags, dims, name, data. */
static size_t tensor_payload(uint8_t *p, uint32_t dtype, uint32_t rank,
			     const uint64_t *dims, const char *name,
			     uint32_t flags, size_t data_bytes)
{
	size_t nl = strlen(name), off;

	p[0] = (uint8_t)dtype;
	p[1] = (uint8_t)rank;
	put_le16(p + 2, (uint16_t)nl);
	put_le32(p + 4, flags);
	for (uint32_t d = 0; d < rank; d++)
		put_le64(p + 8 + 8 * d, dims[d]);
	memcpy(p + 8 + 8 * rank, name, nl);
	off = ipuef_align8(8 + 8 * rank + nl);
	memset(p + 8 + 8 * rank + nl, 0, off - (8 + 8 * rank + nl));
	memset(p + off, 0x5a, data_bytes);
	return off + data_bytes;
}

TEST(bad_tensors)
{
	uint8_t *meta, *file, t1[256], t2[256];
	size_t mlen, flen;
	const uint64_t dims[2] = { 3, 4 };
	struct raw_blob b[4] = {
		{ IPUEF_BLOB_METADATA, 1, NULL, 0 },
		{ IPUEF_BLOB_EXECUTABLE, 1, sample_exe, 8 },
		{ IPUEF_BLOB_TENSOR_DATA, 1, t1, 0 },
		{ IPUEF_BLOB_TENSOR_DATA, 1, t2, 0 },
	};

	mlen = raw_meta(&sample_meta, &meta);
	b[0].payload = meta;
	b[0].size = mlen;
	b[2].size = tensor_payload(t1, IPURT_DT_F32, 2, dims, "w1", 0, 48);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, 0, NULL);
	free(file);
	flen = raw_assemble(b, 2, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR_MISSING,
		       "anchor 2 'w1': fed from tensor data, but there is no TensorData blob 'w1'");
	free(file);
	b[3].size = tensor_payload(t2, IPURT_DT_F32, 2, dims, "w1", 0, 48);
	flen = raw_assemble(b, 4, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR, "duplicate TensorData name 'w1'");
	free(file);
	b[2].size = tensor_payload(t1, IPURT_DT_F32, 2, dims, "w1", 0, 44);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR,
		       "blob 2 (TensorData 'w1'): 44 data bytes, but f32 [3, 4] needs 48");
	free(file);
	b[2].size = tensor_payload(t1, IPURT_DT_I32, 2, dims, "w1", 0, 48);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR_MISMATCH,
		       "anchor 2 'w1' is f32 [3, 4] but its TensorData is i32 [3, 4]");
	free(file);
	b[2].size = tensor_payload(t1, IPURT_DT_F32, 2, dims, "w1",
				   IPUEF_TENSOR_FROZEN, 48);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR_MISMATCH, "is frozen");
	free(file);
	b[2].size = tensor_payload(t1, IPURT_DT_F32, 2, dims, "w1", 0x80, 48);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_RESERVED, "unknown flags 0x80");
	free(file);
	b[2].size = tensor_payload(t1, 99, 2, dims, "w1", 0, 48);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR, "unknown dtype 99");
	free(file);
	b[2].size = tensor_payload(t1, IPURT_DT_F32, 2, dims, "", 0, 48);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_STRING, "blob 2 (TensorData) name: empty");
	free(file);
	b[2].size = tensor_payload(t1, IPURT_DT_F32, 2, dims, "w1", 0, 48);
	t1[1] = 9;
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR, "rank 9 > 8");
	free(file);
	t1[1] = 2;
	put_le16(t1 + 2, 60000);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR, "60000-byte name need");
	free(file);
	b[2].size = 5;
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_TENSOR, "shorter than its 8-byte fixed part");
	free(file);
	b[2].size = tensor_payload(t1, IPURT_DT_F32, 2, dims, "w1", 0, 48);
	t1[8 + 16 + 2] = 1; /* padding after the name */
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_RESERVED, "padding before the data");
	free(file);
	free(meta);
}

TEST(bad_opaque)
{
	struct ipuef_metadata m = base();
	uint8_t *meta, *file, op[64] = { 0 };
	size_t mlen, flen;
	struct raw_blob b[3] = {
		{ IPUEF_BLOB_METADATA, 1, NULL, 0 },
		{ IPUEF_BLOB_EXECUTABLE, 1, sample_exe, 8 },
		{ IPUEF_BLOB_OPAQUE, 1, op, 0 },
	};

	mlen = raw_meta(&m, &meta);
	b[0].payload = meta;
	b[0].size = mlen;
	put_le16(op, 3);
	memcpy(op + 8, "abc", 3);
	b[2].size = 16;
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, 0, NULL);
	free(file);
	put_le16(op, 0);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_STRING, "blob 2 (Opaque) name: empty");
	free(file);
	put_le16(op, 3);
	put_le16(op + 2, 100);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_OPAQUE, "name and version need 111 bytes");
	free(file);
	put_le16(op + 2, 0);
	put_le32(op + 4, 2);
	flen = raw_assemble(b, 3, &file);
	EXPECT_REFUSED(file, flen, IPUEF_E_RESERVED, "blob 2 (Opaque): flags 0x2");
	free(file);
	free(meta);
}

TEST(writer_rules)
{
	struct ipuef_writer *w;
	struct ipuef_tensor t = sample_tensors[0];
	void *buf;
	size_t len;

	REQUIRE(ipuef_writer_create(&w, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ipuef_writer_write_mem(w, &buf, &len, err, sizeof(err)),
		     IPUEF_E_BLOB_COUNT);
	CHECK(strstr(err, "no Metadata") != NULL);
	CHECK(ipuef_writer_set_metadata(w, &sample_meta, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ipuef_writer_write_mem(w, &buf, &len, err, sizeof(err)),
		     IPUEF_E_BLOB_COUNT);
	CHECK(strstr(err, "no Executable") != NULL);
	CHECK(ipuef_writer_set_executable(w, sample_exe, 8, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ipuef_writer_write_mem(w, &buf, &len, err, sizeof(err)),
		     IPUEF_E_TENSOR_MISSING);
	t.size = 47;
	CHECK_EQ_INT(ipuef_writer_add_tensor(w, &t, err, sizeof(err)),
		     IPUEF_E_TENSOR);
	CHECK(strstr(err, "47 data bytes, but f32 [3, 4] needs 48") != NULL);
	t = sample_tensors[0];
	CHECK(ipuef_writer_add_tensor(w, &t, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ipuef_writer_add_tensor(w, &t, err, sizeof(err)),
		     IPUEF_E_TENSOR);
	CHECK_EQ_INT(ipuef_writer_add_opaque(w, "", NULL, "x", 1, err,
					     sizeof(err)),
		     IPUEF_E_STRING);
	CHECK_EQ_INT(ipuef_writer_set_metadata(w, NULL, err, sizeof(err)),
		     IPUEF_E_INVAL);
	REQUIRE(ipuef_writer_write_mem(w, &buf, &len, err, sizeof(err)) == 0);
	{
		struct ipuef_file *f;

		REQUIRE(open_bytes(buf, len, &f) == 0);
		CHECK_EQ_INT(ipuef_num_tensors(f), 1);
		CHECK_EQ_INT(ipuef_num_opaques(f), 0);
		ipuef_close(f);
	}
	free(buf);
	CHECK_EQ_INT(ipuef_writer_write_file(w, "/nonexistent-dir/m.ipuef", err,
					     sizeof(err)),
		     IPUEF_E_IO);
	CHECK(strstr(err, "/nonexistent-dir/m.ipuef") != NULL);
	ipuef_writer_destroy(w);
	CHECK(!strcmp(ipu_err_name(IPUEF_E_ANCHOR_RANK), "IPUEF_E_ANCHOR_RANK"));
	CHECK(!strcmp(ipu_err_name(12345), "IPU_E_UNKNOWN"));
}

TEST(dtypes)
{
	CHECK_EQ_INT(ipurt_dtype_size(IPURT_DT_F32), 4);
	CHECK_EQ_INT(ipurt_dtype_size(IPURT_DT_F16), 2);
	CHECK_EQ_INT(ipurt_dtype_size(IPURT_DT_I64), 8);
	CHECK_EQ_INT(ipurt_dtype_size(IPURT_DT_BOOL), 1);
	CHECK_EQ_INT(ipurt_dtype_size(0), 0);
	CHECK_EQ_INT(ipurt_dtype_size(200), 0);
	CHECK(!strcmp(ipurt_dtype_name(IPURT_DT_BOOL), "bool"));
	CHECK(!strcmp(ipurt_dtype_name(99), "invalid"));
	CHECK_EQ_INT(ipurt_dtype_from_name("float16"), IPURT_DT_F16);
	CHECK_EQ_INT(ipurt_dtype_from_name("u8"), IPURT_DT_U8);
	CHECK_EQ_INT(ipurt_dtype_from_name("complex"), IPURT_DT_INVALID);
	CHECK_EQ_INT(ipurt_dtype_to_ipux(IPURT_DT_BOOL),
		     ipurt_dtype_to_ipux(IPURT_DT_U8));
	CHECK(ipurt_dtype_to_ipux(IPURT_DT_I64) != 0);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(roundtrip_mem);
	RUN(rewrite_identical);
	RUN(roundtrip_file);
	RUN(truncated_everywhere);
	RUN(trailing_bytes);
	RUN(bit_flips_everywhere);
	RUN(header_fields);
	RUN(bad_blobs);
	RUN(bad_anchors);
	RUN(bad_counts);
	RUN(blob_counts);
	RUN(bad_tensors);
	RUN(bad_opaque);
	RUN(writer_rules);
	RUN(dtypes);
	return TH_DONE();
}
