// SPDX-License-Identifier: MIT
/*
 * test_ipuef_dump.c - the ipuef-dump tool: text and JSON output of the
 * sample model (the JSON checked by Python's json module), errors on
 * stderr with exit status 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/ipuef.h"
#include "ipuef_sample.h"

#define DUMP IPURT_TEST_BUILD "/bin/ipuef-dump"

static char dir[] = "/tmp/ipuef-dump-XXXXXX";
static char model[64], bad[64], outp[64], errp[64];

/* Run a shell command; return its exit status and its stdout text. */
static int run(const char *cmd, char **out)
{
	char full[1024];
	FILE *f;
	long n;
	int st;

	snprintf(full, sizeof(full), "%s >%s 2>%s", cmd, outp, errp);
	st = system(full);
	f = fopen(outp, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*out = calloc(1, (size_t)n + 1);
	if (!*out || fread(*out, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = calloc(1, 65537);

	if (f && s && fread(s, 1, 65536, f) == 0 && ferror(f))
		s[0] = 0;
	if (f)
		fclose(f);
	return s;
}

TEST(text)
{
	char cmd[256], *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s %s", DUMP, model);
	REQUIRE(run(cmd, &out) == 0);
	CHECK(strstr(out, "Format: .ipuef 1.0") != NULL);
	CHECK(strstr(out, "Target:            ipu21, 16 tiles, 262144 bytes per tile") != NULL);
	CHECK(strstr(out, "Batch size:        2") != NULL);
	CHECK(strstr(out, "  1   main") != NULL);
	CHECK(strstr(out, "  X\n    input f32 [2, 3] (24 bytes), batch dim 0, user, stream 0, programs: main") != NULL);
	CHECK(strstr(out, "  w1\n    input f32 [3, 4] (48 bytes), no batch dim, tensor-data, stream 2, programs: load") != NULL);
	CHECK(strstr(out, "  mask\n    output bool [2]") != NULL);
	CHECK(strstr(out, "  index\n    input i32 [] (4 bytes), no batch dim, index") != NULL);
	CHECK(strstr(out, "c0 u8 [5] (5 bytes) frozen") != NULL);
	CHECK(strstr(out, "ipu-compile 0.1.0 (20 bytes)") != NULL);
	CHECK(strstr(out, "TensorData") != NULL);
	free(out);
}

TEST(json)
{
	char cmd[1024], *out = NULL;

	snprintf(cmd, sizeof(cmd),
		 "%s --json %s | /usr/bin/python3 -c '"
		 "import json,sys; d=json.load(sys.stdin); m=d[\"metadata\"]; "
		 "a={x[\"name\"]: x for x in m[\"anchors\"]}; "
		 "assert m[\"ipu_version\"]==\"ipu21\" and m[\"batch_size\"]==2, m; "
		 "assert a[\"X\"][\"shape\"]==[2,3] and a[\"X\"][\"dtype\"]==\"f32\"; "
		 "assert a[\"X\"][\"batch_dim\"]==0 and a[\"w1\"][\"batch_dim\"] is None; "
		 "assert a[\"q\\\"uot\\u00e9\\\\\"][\"programs\"]==[\"main\",\"save\"]; "
		 "assert a[\"out\"][\"direction\"]==\"output\"; "
		 "assert a[\"index\"][\"kind\"]==\"index\" and a[\"index\"][\"shape\"]==[]; "
		 "assert [b[\"type\"] for b in d[\"blobs\"]]==[\"Metadata\",\"Executable\",\"TensorData\",\"TensorData\",\"Opaque\"]; "
		 "assert d[\"tensors\"][1][\"frozen\"] is True; "
		 "assert d[\"opaques\"][0][\"name\"]==\"ipu-compile\"; "
		 "print(\"json ok\")'",
		 DUMP, model);
	CHECK_EQ_INT(run(cmd, &out), 0);
	CHECK(out && strstr(out, "json ok") != NULL);
	if (out && !strstr(out, "json ok")) {
		char *e = slurp(errp);

		fprintf(stderr, "%s\n", e);
		free(e);
	}
	free(out);
}

/* A file name that is not UTF-8 still gives valid JSON. */
TEST(json_odd_path)
{
	char odd[96], cmd[512], *out = NULL;

	snprintf(odd, sizeof(odd), "%s/m\xff\"x.ipuef", dir);
	REQUIRE(link(model, odd) == 0);
	snprintf(cmd, sizeof(cmd),
		 "%s --json '%s' | /usr/bin/python3 -c 'import json,sys; "
		 "d=json.loads(sys.stdin.buffer.read().decode(\"utf-8\")); "
		 "assert d[\"file\"].endswith(\"m\\ufffd\\\"x.ipuef\"), d[\"file\"]; print(\"ok\")'",
		 DUMP, odd);
	CHECK_EQ_INT(run(cmd, &out), 0);
	CHECK(out && !strcmp(out, "ok\n"));
	free(out);
	unlink(odd);
}

TEST(errors)
{
	char cmd[256], *out = NULL, *e;

	snprintf(cmd, sizeof(cmd), "%s %s", DUMP, bad);
	CHECK_EQ_INT(run(cmd, &out), 1);
	CHECK(out && out[0] == 0);
	free(out);
	e = slurp(errp);
	CHECK_MSG(strstr(e, "checksum mismatch: stored 0x") != NULL, "%s", e);
	CHECK(strstr(e, "IPUEF_E_CHECKSUM") != NULL);
	free(e);
	snprintf(cmd, sizeof(cmd), "%s %s/none.ipuef", DUMP, dir);
	CHECK_EQ_INT(run(cmd, &out), 1);
	free(out);
	e = slurp(errp);
	CHECK(strstr(e, "No such file") != NULL);
	free(e);
	snprintf(cmd, sizeof(cmd), "%s --help", DUMP);
	CHECK_EQ_INT(run(cmd, &out), 0);
	CHECK(out && strstr(out, "usage: ipuef-dump") != NULL);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s --bogus %s", DUMP, model);
	CHECK_EQ_INT(run(cmd, &out), 2);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s", DUMP);
	CHECK_EQ_INT(run(cmd, &out), 2);
	free(out);
}

static int setup(void)
{
	struct ipuef_writer *w;
	uint8_t *buf;
	size_t len;
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(model, sizeof(model), "%s/m.ipuef", dir);
	snprintf(bad, sizeof(bad), "%s/bad.ipuef", dir);
	snprintf(outp, sizeof(outp), "%s/out", dir);
	snprintf(errp, sizeof(errp), "%s/err", dir);
	if (sample_writer(&w, NULL, 0) ||
	    ipuef_writer_write_file(w, model, NULL, 0))
		return -1;
	ipuef_writer_destroy(w);
	if (sample_bytes((void **)&buf, &len))
		return -1;
	buf[len / 2] ^= 4;
	f = fopen(bad, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		return -1;
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	char cmd[128];
	int rc;

	TH_INIT(argc, argv);
	if (setup()) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	RUN(text);
	RUN(json);
	RUN(json_odd_path);
	RUN(errors);
	rc = TH_DONE();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return rc;
}
