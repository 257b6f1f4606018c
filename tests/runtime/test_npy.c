// SPDX-License-Identifier: MIT
/*
 * test_npy.c - .npy read/write: files written by real NumPy (generated at
 * test time with /usr/bin/python3, which has numpy), files we write read
 * back by NumPy, our own round trip, and hostile headers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/npy.h"
#include "ipu/runtime.h"

static char dir[] = "/tmp/npy-test-XXXXXX";
static char err[512];

/* Python that writes NAME.npy and NAME.bin (the raw C-order bytes). */
static const char *gen_py =
	"import numpy as np, sys, os\n"
	"os.chdir(sys.argv[1])\n"
	"def save(name, a, version=None):\n"
	"    if version is None:\n"
	"        np.save(name + '.npy', a)\n"
	"    else:\n"
	"        with open(name + '.npy', 'wb') as f:\n"
	"            np.lib.format.write_array(f, a, version=version)\n"
	"    open(name + '.bin', 'wb').write(np.ascontiguousarray(a).tobytes())\n"
	"r = np.arange(24)\n"
	"save('f32', (r * 1.5 - 3).astype(np.float32).reshape(2, 3, 4))\n"
	"save('f16', (r * 0.25).astype(np.float16).reshape(4, 6))\n"
	"save('i32', (r - 12).astype(np.int32).reshape(24))\n"
	"save('i64', (r * 10**12).astype(np.int64).reshape(3, 8))\n"
	"save('u8', (r * 11).astype(np.uint8).reshape(2, 12))\n"
	"save('bool', (r % 3 == 0).reshape(6, 4))\n"
	"save('i8', (r - 100).astype(np.int8).reshape(1, 24, 1))\n"
	"save('scalar', np.float32(2.5).reshape(()))\n"
	"save('empty', np.zeros((0, 3), np.int32))\n"
	"save('v2', (r * 2).astype(np.int32).reshape(4, 6), version=(2, 0))\n"
	"save('v3', (r * 3).astype(np.float32).reshape(6, 4), version=(3, 0))\n"
	"save('rank8', np.ones((1, 2, 1, 2, 1, 2, 1, 3), np.float32))\n"
	"np.save('fortran.npy', np.asfortranarray(np.ones((2, 3), np.float32)))\n"
	"np.save('f64.npy', np.ones(3))\n"
	"np.save('big.npy', np.ones(3, '>f4'))\n"
	"np.save('u16.npy', np.ones(3, np.uint16))\n"
	"np.save('struct.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))\n"
	"np.save('obj.npy', np.array([1, 'x'], dtype=object), allow_pickle=True)\n";

static const char *const good[] = {
	"f32", "f16", "i32", "i64", "u8", "bool", "i8", "scalar", "empty",
	"v2", "v3", "rank8",
};

static const struct {
	const char *name;
	uint32_t dtype, rank;
	uint64_t dims[8];
} shapes[] = {
	{ "f32", IPURT_DT_F32, 3, { 2, 3, 4 } },
	{ "f16", IPURT_DT_F16, 2, { 4, 6 } },
	{ "i32", IPURT_DT_I32, 1, { 24 } },
	{ "i64", IPURT_DT_I64, 2, { 3, 8 } },
	{ "u8", IPURT_DT_U8, 2, { 2, 12 } },
	{ "bool", IPURT_DT_BOOL, 2, { 6, 4 } },
	{ "i8", IPURT_DT_I8, 3, { 1, 24, 1 } },
	{ "scalar", IPURT_DT_F32, 0, { 0 } },
	{ "empty", IPURT_DT_I32, 2, { 0, 3 } },
	{ "v2", IPURT_DT_I32, 2, { 4, 6 } },
	{ "v3", IPURT_DT_F32, 2, { 6, 4 } },
	{ "rank8", IPURT_DT_F32, 8, { 1, 2, 1, 2, 1, 2, 1, 3 } },
};

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void path_of(char *out, size_t n, const char *name, const char *ext)
{
	snprintf(out, n, "%s/%s%s", dir, name, ext);
}

TEST(numpy_written)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		char p[128];
		struct ipurt_npy a;
		void *raw;
		size_t rawlen = 0;
		int rc;

		path_of(p, sizeof(p), shapes[i].name, ".npy");
		rc = ipurt_npy_read(p, &a, err, sizeof(err));
		CHECK_MSG(rc == 0, "%s: %s", shapes[i].name, err);
		if (rc)
			continue;
		CHECK_EQ_INT(a.dtype, shapes[i].dtype);
		CHECK_EQ_INT(a.rank, shapes[i].rank);
		CHECK(!memcmp(a.dims, shapes[i].dims, a.rank * 8));
		path_of(p, sizeof(p), shapes[i].name, ".bin");
		raw = slurp(p, &rawlen);
		CHECK(raw != NULL);
		CHECK_EQ_INT(a.size, rawlen);
		CHECK_MSG(raw && a.size == rawlen && !memcmp(raw, a.data, rawlen),
			  "%s: data differ", shapes[i].name);
		free(raw);
		ipurt_npy_free(&a);
	}
	/* Spot values: f32 element [1][2][3] = 23 * 1.5 - 3. */
	{
		char p[128];
		struct ipurt_npy a;

		path_of(p, sizeof(p), "f32", ".npy");
		REQUIRE(ipurt_npy_read(p, &a, err, sizeof(err)) == 0);
		CHECK(((float *)a.data)[23] == 23 * 1.5f - 3);
		ipurt_npy_free(&a);
	}
}

TEST(numpy_refused)
{
	static const struct {
		const char *name;
		int code;
		const char *msg;
	} cases[] = {
		{ "fortran", IPURT_NPY_E_ORDER, "Fortran order" },
		{ "f64", IPURT_NPY_E_DTYPE, "'<f8' (float64) is not supported: save it with a.astype(np.float32)" },
		{ "big", IPURT_NPY_E_DTYPE, "'>f4' is big-endian" },
		{ "u16", IPURT_NPY_E_DTYPE, "uint16" },
		{ "struct", IPURT_NPY_E_DTYPE, "structured dtypes" },
		{ "obj", IPURT_NPY_E_DTYPE, "'|O' is not supported" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char p[128];
		struct ipurt_npy a;
		int rc;

		path_of(p, sizeof(p), cases[i].name, ".npy");
		rc = ipurt_npy_read(p, &a, err, sizeof(err));
		CHECK_MSG(rc == cases[i].code, "%s: %s (%s)", cases[i].name,
			  ipu_err_name(rc), err);
		CHECK_MSG(strstr(err, cases[i].msg) != NULL, "%s: '%s'",
			  cases[i].name, err);
		CHECK(a.data == NULL);
	}
}

/* We write every dtype; NumPy loads them and compares with its own. */
TEST(numpy_reads_ours)
{
	char cmd[2048];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char in[128], out[128];
		struct ipurt_npy a;

		path_of(in, sizeof(in), good[i], ".npy");
		path_of(out, sizeof(out), good[i], ".ours.npy");
		REQUIRE(ipurt_npy_read(in, &a, err, sizeof(err)) == 0);
		CHECK_MSG(ipurt_npy_write(out, &a, err, sizeof(err)) == 0, "%s",
			  err);
		ipurt_npy_free(&a);
	}
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import numpy as np, sys, os\n"
		 "os.chdir(sys.argv[1])\n"
		 "for n in sys.argv[2:]:\n"
		 "    a = np.load(n + \".npy\"); b = np.load(n + \".ours.npy\")\n"
		 "    assert a.dtype == b.dtype and a.shape == b.shape, n\n"
		 "    assert a.tobytes() == b.tobytes(), n\n"
		 "    hl = len(open(n + \".ours.npy\", \"rb\").read()) - a.nbytes\n"
		 "    assert hl %% 64 == 0, (n, hl)\n"
		 "' %s f32 f16 i32 i64 u8 bool i8 scalar empty v2 v3 rank8",
		 dir);
	CHECK_EQ_INT(system(cmd), 0);
}

TEST(roundtrip_mem)
{
	uint16_t h[6] = { 0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x7e00 };
	struct ipurt_npy a = { IPURT_DT_F16, 2, { 2, 3 }, h, sizeof(h) }, b;
	void *buf;
	size_t len;

	REQUIRE(ipurt_npy_encode(&a, &buf, &len, err, sizeof(err)) == 0);
	CHECK_EQ_INT((len - sizeof(h)) % 64, 0);
	{
		const char *want = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }";

		CHECK(!memcmp((char *)buf + 10, want, strlen(want)));
	}
	REQUIRE(ipurt_npy_parse(buf, len, &b, err, sizeof(err)) == 0);
	CHECK_EQ_INT(b.dtype, IPURT_DT_F16);
	CHECK_EQ_INT(b.rank, 2);
	CHECK(!memcmp(b.data, h, sizeof(h)));
	ipurt_npy_free(&b);
	/* Truncated at every length: refused, never a crash. */
	for (size_t n = 0; n < len; n++) {
		int rc = ipurt_npy_parse(buf, n, &b, err, sizeof(err));

		CHECK_MSG(rc == IPURT_NPY_E_FORMAT || rc == IPURT_NPY_E_SIZE,
			  "length %zu: %s", n, ipu_err_name(rc));
		CHECK(b.data == NULL);
	}
	free(buf);
	a.size = 10;
	CHECK_EQ_INT(ipurt_npy_encode(&a, &buf, &len, err, sizeof(err)),
		     IPURT_NPY_E_SIZE);
	a.size = sizeof(h);
	a.dtype = 0;
	CHECK_EQ_INT(ipurt_npy_encode(&a, &buf, &len, err, sizeof(err)),
		     IPURT_NPY_E_DTYPE);
	a.dtype = IPURT_DT_F16;
	a.rank = 33;
	CHECK_EQ_INT(ipurt_npy_encode(&a, &buf, &len, err, sizeof(err)),
		     IPURT_NPY_E_SHAPE);
}

/* A file from a header string and n data bytes. */
static int parse_header_str(int version, const char *hdr, size_t data,
			    struct ipurt_npy *out)
{
	size_t hl = strlen(hdr), pre = version == 1 ? 10 : 12;
	uint8_t *b = calloc(1, pre + hl + data + 1);
	int rc;

	memcpy(b, "\x93NUMPY", 6);
	b[6] = (uint8_t)version;
	b[8] = (uint8_t)hl;
	b[9] = (uint8_t)(hl >> 8);
	memcpy(b + pre, hdr, hl);
	memset(b + pre + hl, 1, data);
	rc = ipurt_npy_parse(b, pre + hl + data, out, err, sizeof(err));
	free(b);
	return rc;
}

TEST(hostile_headers)
{
	static const struct {
		const char *hdr;
		size_t data;
		int code;
		const char *msg;
	} cases[] = {
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, 0, NULL },
		{ "{\"shape\":(2,),\"descr\":\"|u1\",\"fortran_order\":False}", 2, 0, NULL },
		{ "{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 1L)}", 16, 0, NULL },
		{ "{'descr': '<u1', 'fortran_order': False, 'shape': ()}", 1, 0, NULL },
		{ "{'descr': '=i4', 'fortran_order': False, 'shape': (1,)}", 4, 0, NULL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 7, IPURT_NPY_E_SIZE, "truncated: f32 shape needs 8 data bytes, the file has 7" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 9, IPURT_NPY_E_SIZE, "1 unexpected bytes" },
		{ "{'descr': '<f4', 'shape': (2,), }", 8, IPURT_NPY_E_FORMAT, "lacks 'fortran_order'" },
		{ "{'descr': '<f4', 'fortran_order': False}", 8, IPURT_NPY_E_FORMAT, "lacks 'shape'" },
		{ "{'fortran_order': False, 'shape': (2,)}", 8, IPURT_NPY_E_FORMAT, "lacks 'descr'" },
		{ "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, IPURT_NPY_E_FORMAT, "given twice" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, IPURT_NPY_E_FORMAT, "unknown key" },
		{ "{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}", 8, IPURT_NPY_E_ORDER, "Fortran order" },
		{ "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", 8, IPURT_NPY_E_FORMAT, "True or False" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", 8, IPURT_NPY_E_SHAPE, "too large" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16)}", 8, IPURT_NPY_E_SHAPE, "too large" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", 4, IPURT_NPY_E_SHAPE, "more than 32 dimensions" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", 8, IPURT_NPY_E_FORMAT, "expected a dimension" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 8, IPURT_NPY_E_FORMAT, "expected ',' or ')'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, IPURT_NPY_E_FORMAT, "expected ',' or '}'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 8, IPURT_NPY_E_FORMAT, "text after" },
		{ "{'descr': '<f4", 8, IPURT_NPY_E_FORMAT, "unterminated string" },
		{ "{'descr': 'f4', 'fortran_order': False, 'shape': (2,)}", 8, IPURT_NPY_E_DTYPE, "no byte-order mark" },
		{ "{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}", 8, IPURT_NPY_E_DTYPE, "needs a byte order" },
		{ "{'descr': '>u1', 'fortran_order': False, 'shape': (2,)}", 2, 0, NULL },
		{ "{'descr': '<b1', 'fortran_order': False, 'shape': (2,)}", 2, 0, NULL },
		{ "{'descr': 'x\\'', 'fortran_order': False, 'shape': (2,)}", 8, IPURT_NPY_E_FORMAT, "unexpected string" },
		{ "[1, 2]", 8, IPURT_NPY_E_FORMAT, "expected '{'" },
		{ "", 0, IPURT_NPY_E_FORMAT, "expected '{'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ipurt_npy a;
		int rc = parse_header_str(1, cases[i].hdr, cases[i].data, &a);

		CHECK_MSG(rc == cases[i].code, "case %zu: %s (%s)", i,
			  ipu_err_name(rc), err);
		if (cases[i].msg)
			CHECK_MSG(strstr(err, cases[i].msg) != NULL,
				  "case %zu: '%s' lacks '%s'", i, err,
				  cases[i].msg);
		if (!rc)
			ipurt_npy_free(&a);
		else
			CHECK(a.data == NULL);
	}
}

TEST(hostile_preamble)
{
	uint8_t b[64] = "\x93NUMPY\x04\x00";
	struct ipurt_npy a;

	CHECK_EQ_INT(ipurt_npy_parse(b, 16, &a, err, sizeof(err)),
		     IPURT_NPY_E_FORMAT);
	CHECK(strstr(err, "version 4.0 is not supported") != NULL);
	b[6] = 1;
	b[8] = 0xff;
	b[9] = 0xff;
	CHECK_EQ_INT(ipurt_npy_parse(b, 64, &a, err, sizeof(err)),
		     IPURT_NPY_E_FORMAT);
	CHECK(strstr(err, "the header needs 65535 bytes, 54 are left") != NULL);
	b[6] = 2;
	b[10] = 0xff;
	b[11] = 0x7f;
	CHECK_EQ_INT(ipurt_npy_parse(b, 64, &a, err, sizeof(err)),
		     IPURT_NPY_E_FORMAT);
	CHECK(strstr(err, "over the 1048576-byte limit") != NULL);
	memcpy(b, "PK\x03\x04", 4);
	CHECK_EQ_INT(ipurt_npy_parse(b, 64, &a, err, sizeof(err)),
		     IPURT_NPY_E_FORMAT);
	CHECK(strstr(err, "not a .npy file") != NULL);
	/* A NUL inside the header. */
	{
		uint8_t h[32] = "\x93NUMPY\x01\x00\x08\x00{'descr'";

		h[13] = 0;
		CHECK_EQ_INT(ipurt_npy_parse(h, 18, &a, err, sizeof(err)),
			     IPURT_NPY_E_FORMAT);
		CHECK(strstr(err, "not text") != NULL);
	}
	/* bool elements other than 0/1 are refused. */
	{
		uint8_t v[3] = { 0, 1, 2 };
		struct ipurt_npy bad = { IPURT_DT_BOOL, 1, { 3 }, v, 3 };
		void *buf;
		size_t len;

		REQUIRE(ipurt_npy_encode(&bad, &buf, &len, err, sizeof(err)) == 0);
		CHECK_EQ_INT(ipurt_npy_parse(buf, len, &a, err, sizeof(err)),
			     IPURT_NPY_E_VALUE);
		CHECK(strstr(err, "bool element 2 is 2, not 0 or 1") != NULL);
		free(buf);
	}
	CHECK_EQ_INT(ipurt_npy_read("/nonexistent/x.npy", &a, err, sizeof(err)),
		     IPURT_NPY_E_IO);
	CHECK(strstr(err, "/nonexistent/x.npy: No such file") != NULL);
	CHECK_EQ_INT(ipurt_npy_read("/tmp", &a, err, sizeof(err)),
		     IPURT_NPY_E_IO);
}

static int setup(void)
{
	char cmd[4096 + 256], script[128];
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(script, sizeof(script), "%s/gen.py", dir);
	f = fopen(script, "w");
	if (!f || fputs(gen_py, f) < 0 || fclose(f))
		return -1;
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", script, dir);
	if (system(cmd)) {
		fprintf(stderr,
			"cannot generate fixtures: /usr/bin/python3 with numpy is needed (Debian python3-numpy)\n");
		return -1;
	}
	return 0;
}

/* The runtime's one name table covers the .npy codes too. */
TEST(error_names)
{
	CHECK(!strcmp(ipu_err_name(IPURT_NPY_E_FORMAT), ipu_err_name(IPURT_NPY_E_FORMAT)));
	CHECK(strstr(ipu_err_name(IPURT_NPY_E_DTYPE), "UNKNOWN") == NULL);
	CHECK(strstr(ipu_err_name(IPUEF_E_MAGIC), "UNKNOWN") == NULL);
	CHECK(!strcmp(ipu_err_name(IPURT_E_TIMEOUT), "IPURT_E_TIMEOUT"));
}

int main(int argc, char **argv)
{
	char cmd[128];
	int rc;

	TH_INIT(argc, argv);
	if (setup())
		return 1;
	RUN(numpy_written);
	RUN(numpy_refused);
	RUN(numpy_reads_ours);
	RUN(roundtrip_mem);
	RUN(hostile_headers);
	RUN(hostile_preamble);
	RUN(error_names);
	rc = TH_DONE();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return rc;
}
