// SPDX-License-Identifier: MIT
/*
 * test_alloc_fail.c - every allocation on the way through an operation
 * fails once, in turn (SQLite's allocation-failure loops): the .ipuef
 * reader and writer, the .npy reader, libipu's in-process device, the
 * ModelRunner (create, execute, execute_async, close) and the compiler
 * from ONNX to an executable image.  Each failure must come back as a
 * negative code with a message (or be absorbed: the operation then
 * succeeds), must leak nothing (LeakSanitizer in the ASan build of `make
 * check`) and must not hang (a watchdog ends the test).  The number of
 * failure points of each operation is printed as a "#" line.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_inject.h"
#include "harness.h"
#include "load_image.h"
#include "ipu/ipu.h"
#include "ipu/ipuef.h"
#include "ipu/lower.h"
#include "ipu/npy.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"
#include "ipu/runtime.h"
#include "ipuef_sample.h"
#include "rt_models.h"

#define NODE_DATA "/usr/share/libonnx-testdata/data/node/"
#define HANG_SECONDS 120

typedef int (*op_fn)(void *ctx, char *err, size_t errlen);

static const char *current_op;
static long current_n;

static void on_hang(int sig)
{
	char msg[256];
	int len;

	(void)sig;
	len = snprintf(msg, sizeof(msg),
		       "not ok - %s hangs when allocation %ld fails (no answer after %d s)\n",
		       current_op, current_n, HANG_SECONDS);
	if (len > 0 && write(STDOUT_FILENO, msg, (size_t)len) < 0)
		_exit(3);
	_exit(3);
}

/*
 * Runs op with allocation n failing, for n = 1, 2, ... until op completes
 * without reaching n.  Checks every failure's code and message.
 */
static void sweep(const char *name, op_fn op, void *ctx)
{
	long n, refused = 0, absorbed = 0;
	char err[512];
	int rc, injected;

	current_op = name;
	for (n = 1; n < 10000000; n++) {
		current_n = n;
		err[0] = 0;
		alarm(HANG_SECONDS);
		alloc_fail_at(n);
		rc = op(ctx, err, sizeof(err));
		injected = alloc_injected();
		alloc_fail_at(0);
		alarm(0);
		if (!injected) {
			CHECK_MSG(rc == 0, "%s without a failure: %d (%s)", name, rc, err);
			break;
		}
		if (rc == 0) {
			absorbed++;
			continue;
		}
		refused++;
		CHECK_MSG(rc < 0, "%s, allocation %ld failed: returned %d", name, n, rc);
		CHECK_MSG(err[0] != 0, "%s, allocation %ld failed: no message (code %d)", name, n, rc);
	}
	printf("# %s: %ld allocation points: %ld refused with an error, %ld absorbed\n",
	       name, n - 1, refused, absorbed);
}

/* ---- .ipuef reader and writer ---- */

struct bytes {
	void *p;
	size_t len;
};

static int op_ipuef_read(void *ctx, char *err, size_t errlen)
{
	const struct bytes *b = ctx;
	struct ipuef_file *f = NULL;
	int rc = ipuef_open_mem(b->p, b->len, &f, err, errlen);

	if (rc)
		return rc;
	rc = ipuef_num_tensors(f) == SAMPLE_NTENSORS ? 0 : -1;
	if (rc)
		snprintf(err, errlen, "read back %u tensors", ipuef_num_tensors(f));
	ipuef_close(f);
	return rc;
}

static int op_ipuef_write(void *ctx, char *err, size_t errlen)
{
	struct ipuef_writer *w = NULL;
	void *out = NULL;
	size_t len = 0;
	int rc;

	(void)ctx;
	rc = sample_writer(&w, err, errlen);
	if (!rc)
		rc = ipuef_writer_write_mem(w, &out, &len, err, errlen);
	ipuef_writer_destroy(w);
	free(out);
	return rc;
}

TEST(ipuef_reader)
{
	struct bytes b = { NULL, 0 };

	REQUIRE(sample_bytes(&b.p, &b.len) == 0);
	sweep("ipuef_open_mem", op_ipuef_read, &b);
	free(b.p);
}

TEST(ipuef_writer)
{
	sweep("ipuef writer (create, metadata, executable, tensors, write_mem)", op_ipuef_write, NULL);
}

/* ---- .npy ---- */

static int op_npy_parse(void *ctx, char *err, size_t errlen)
{
	const struct bytes *b = ctx;
	struct ipurt_npy a;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = ipurt_npy_parse(b->p, b->len, &a, err, errlen);
	if (!rc)
		ipurt_npy_free(&a);
	return rc;
}

TEST(npy_reader)
{
	float v[24];
	struct ipurt_npy a;
	struct bytes b = { NULL, 0 };
	char err[256];
	int i;

	for (i = 0; i < 24; i++)
		v[i] = (float)i * 0.5f;
	memset(&a, 0, sizeof(a));
	a.dtype = IPURT_DT_F32;
	a.rank = 3;
	a.dims[0] = 2;
	a.dims[1] = 3;
	a.dims[2] = 4;
	a.data = v;
	a.size = sizeof(v);
	REQUIRE(ipurt_npy_encode(&a, &b.p, &b.len, err, sizeof(err)) == 0);
	sweep("ipurt_npy_parse", op_npy_parse, &b);
	free(b.p);
}

/* ---- libipu, in-process device ---- */

static int op_libipu(void *ctx, char *err, size_t errlen)
{
	const struct bytes *exe = ctx;
	struct ipu_device *d = NULL;
	int rc = ipu_open("model:tiles=16,tile_mem=64k,workers=2", &d, err, errlen);

	if (rc)
		return rc;
	rc = ipu_attach(d);
	if (rc)
		snprintf(err, errlen, "attach: %d", rc);
	if (!rc)
		rc = test_load_image(d, exe->p, exe->len, err, errlen);
	ipu_close(d);
	return rc;
}

/* ---- Model Runtime ---- */

static char model_path[256];

static int op_runner_create(void *ctx, char *err, size_t errlen)
{
	struct ipurt_runner *r = NULL;
	int rc = ipurt_runner_create(model_path, NULL, &r, err, errlen);

	(void)ctx;
	if (rc)
		return rc;
	ipurt_runner_destroy(r);
	return 0;
}

static struct ipurt_tensor tensor(const char *name, uint64_t rows, float *data)
{
	struct ipurt_tensor t;

	memset(&t, 0, sizeof(t));
	t.name = name;
	t.dtype = IPURT_DT_F32;
	t.rank = 2;
	t.dims[0] = rows;
	t.dims[1] = 3;
	t.data = data;
	return t;
}

static int affine_ok(const float *x, const float *y, uint64_t rows, char *err, size_t errlen)
{
	static const float w[3] = { 10, 20, 30 };
	uint64_t i;

	for (i = 0; i < rows * 3; i++)
		if (y[i] != x[i] * 2 + w[i % 3]) {
			snprintf(err, errlen, "wrong result at %llu", (unsigned long long)i);
			return -1;
		}
	return 0;
}

/* 8 rows: two runs of the model's batch of 4. */
static int op_execute(void *ctx, char *err, size_t errlen)
{
	struct ipurt_runner *r = ctx;
	float x[24], y[24];
	struct ipurt_tensor in, out;
	int i, rc;

	for (i = 0; i < 24; i++)
		x[i] = (float)i - 7;
	in = tensor("X", 8, x);
	out = tensor("Y", 8, y);
	rc = ipurt_runner_execute(r, &in, 1, &out, 1, err, errlen);
	return rc ? rc : affine_ok(x, y, 8, err, errlen);
}

static int op_execute_async(void *ctx, char *err, size_t errlen)
{
	struct ipurt_runner *r = ctx;
	float x[2][12], y[2][12];
	struct ipurt_tensor in, out;
	struct ipurt_future *f[2] = { NULL, NULL };
	int i, k, rc = 0, rc2;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < 12; i++)
			x[k][i] = (float)(i * (k + 1));
		in = tensor("X", 4, x[k]);
		out = tensor("Y", 4, y[k]);
		rc = ipurt_runner_execute_async(r, &in, 1, &out, 1, &f[k], err, errlen);
		if (rc)
			break;
	}
	for (k = 0; k < 2; k++) {
		if (!f[k])
			continue;
		rc2 = ipurt_future_wait(f[k], -1, rc ? NULL : err, rc ? 0 : errlen);
		if (!rc && rc2)
			rc = rc2;
		else if (!rc)
			rc = affine_ok(x[k], y[k], 4, err, errlen);
		ipurt_future_free(f[k]);
	}
	return rc;
}

TEST(libipu_model_backend)
{
	struct ipuef_file *f = NULL;
	struct bytes exe;
	char err[256];

	REQUIRE(ipuef_open(model_path, &f, err, sizeof(err)) == 0);
	exe.p = (void *)ipuef_executable(f, &exe.len);
	REQUIRE(exe.p);
	sweep("ipu_open + ipu_attach + ipu_load + ipu_close", op_libipu, &exe);
	ipuef_close(f);
}

TEST(runner_create_close)
{
	sweep("ipurt_runner_create + ipurt_runner_destroy", op_runner_create, NULL);
}

TEST(runner_execute)
{
	struct ipurt_runner *r = NULL;
	char err[256];

	REQUIRE(ipurt_runner_create(model_path, NULL, &r, err, sizeof(err)) == 0);
	sweep("ipurt_runner_execute", op_execute, r);
	sweep("ipurt_runner_execute_async + ipurt_future_wait", op_execute_async, r);
	/* still serves requests after all those failures */
	CHECK_EQ_INT(op_execute(r, err, sizeof(err)), 0);
	ipurt_runner_destroy(r);
}

/* ---- compiler: ONNX to an executable image ---- */

static int op_compile(void *ctx, char *err, size_t errlen)
{
	const char *path = ctx;
	struct ir_pipeline_opts po;
	struct ipu_target t = { "ipu2", 16, 64 * 1024, 0, 0, NULL };
	struct ipu_lower_info info;
	struct ir_error e = { "" };
	struct ir_graph *g;
	void *image = NULL;
	size_t len = 0;
	int rc;

	memset(&po, 0, sizeof(po));
	memset(&info, 0, sizeof(info));
	g = onnx_load_file(path, &e);
	if (!g) {
		snprintf(err, errlen, "%s", e.msg);
		return -1;
	}
	rc = ir_pipeline_run(g, &po, &e);
	if (!rc)
		rc = ipu_lower_image(&g, 1, &t, &image, &len, &info, &e);
	if (rc)
		snprintf(err, errlen, "%s", e.msg);
	free(image);
	ipu_lower_info_free(&info);
	ir_graph_free(g);
	return rc ? -1 : 0;
}

TEST(compiler)
{
	static const char *const models[] = {
		"test_add", "test_relu", "test_matmul_2d", "test_gemm_default_vector_bias",
		"test_conv_with_strides_padding", "test_averagepool_2d_default",
		"test_softmax_axis_1",
	};
	char path[512], name[600];
	size_t i;

	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		snprintf(path, sizeof(path), NODE_DATA "%s/model.onnx", models[i]);
		if (access(path, R_OK)) {
			CHECK_MSG(0, "%s missing (Debian package libonnx-testdata)", path);
			continue;
		}
		snprintf(name, sizeof(name), "compile %s (import, passes, lowering)", models[i]);
		sweep(name, op_compile, path);
	}
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/ipu-alloc-XXXXXX";

	TH_INIT(argc, argv);
	signal(SIGALRM, on_hang);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(model_path, sizeof(model_path), "%s/affine.ipuef", dir);
	if (rt_make_affine(model_path)) {
		fprintf(stderr, "cannot build the test model\n");
		return 1;
	}
	RUN(ipuef_reader);
	RUN(ipuef_writer);
	RUN(npy_reader);
	RUN(libipu_model_backend);
	RUN(runner_create_close);
	RUN(runner_execute);
	RUN(compiler);
	unlink(model_path);
	rmdir(dir);
	return TH_DONE();
}
