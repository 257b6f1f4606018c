// SPDX-License-Identifier: MIT
/*
 * test_runner.c - the Model Runtime end to end on the in-process device:
 * Session (TensorData binding, predicates), DeviceManager (requirements,
 * wait policies), ModelRunner (execute vs execute_async, concurrent
 * callers, dynamic batch sizing, timeouts, I/O validation, fused models,
 * a device reset).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipu/half.h"
#include "harness.h"
#include "ipu/runtime.h"
#include "rt_models.h"

static char affine_path[256], scale_path[256], fused_path[256];

static struct ipurt_tensor T(const char *name, uint32_t dt, uint32_t rank, const uint64_t *dims,
			     void *data)
{
	struct ipurt_tensor t = { name, dt, rank, { 0 }, data };

	memcpy(t.dims, dims, rank * sizeof(*dims));
	return t;
}

static struct ipurt_runner *runner(const char *path, struct ipurt_config *c)
{
	struct ipurt_runner *r = NULL;
	char err[512];
	int rc = ipurt_runner_create(path, c, &r, err, sizeof(err));

	if (rc)
		fprintf(stderr, "runner: %s (%s)\n", err, ipu_err_name(rc));
	return r;
}

static int affine_ok(const float *x, const float *y, uint64_t rows)
{
	static const float w[3] = { 10, 20, 30 };
	uint64_t i;

	for (i = 0; i < rows * 3; i++)
		if (y[i] != x[i] * 2 + w[i % 3])
			return 0;
	return 1;
}

TEST(execute_and_async_agree)
{
	struct ipurt_runner *r = runner(affine_path, NULL);
	uint64_t d[2] = { 4, 3 };
	float x[12], y1[12], y2[12];
	struct ipurt_tensor in, out;
	struct ipurt_future *f;
	char err[256];
	int i;

	REQUIRE(r);
	for (i = 0; i < 12; i++)
		x[i] = (float)i - 3.5f;
	in = T("X", IPURT_DT_F32, 2, d, x);
	out = T("Y", IPURT_DT_F32, 2, d, y1);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
	CHECK(affine_ok(x, y1, 4));
	out.data = y2;
	CHECK_EQ_INT(ipurt_runner_execute_async(r, &in, 1, &out, 1, &f, err, sizeof(err)), 0);
	CHECK_EQ_INT(ipurt_future_wait(f, -1, err, sizeof(err)), 0);
	CHECK_EQ_INT(ipurt_future_wait(f, 0, err, sizeof(err)), 0); /* waits again */
	ipurt_future_free(f);
	CHECK(memcmp(y1, y2, sizeof(y1)) == 0);
	ipurt_runner_destroy(r);
}

struct thr {
	struct ipurt_runner *r;
	int id, ok;
};

static void *worker(void *arg)
{
	struct thr *t = arg;
	uint64_t d[2] = { 4, 3 };
	float x[12], y[12];
	char err[256];
	int it, i;

	t->ok = 1;
	for (it = 0; it < 200; it++) {
		struct ipurt_tensor in, out;

		for (i = 0; i < 12; i++)
			x[i] = (float)(t->id * 1000 + it * 13 + i);
		in = T("X", IPURT_DT_F32, 2, d, x);
		out = T("Y", IPURT_DT_F32, 2, d, y);
		if (ipurt_runner_execute(t->r, &in, 1, &out, 1, err, sizeof(err)) || !affine_ok(x, y, 4))
			t->ok = 0;
	}
	return NULL;
}

TEST(eight_threads_concurrently)
{
	struct ipurt_config c;
	struct ipurt_runner *r;
	pthread_t th[8];
	struct thr t[8];
	int i, ok = 1;

	ipurt_config_init(&c);
	c.ring_buffer_size = 4; /* small rings: producers block and wake */
	r = runner(affine_path, &c);
	REQUIRE(r);
	for (i = 0; i < 8; i++) {
		t[i].r = r;
		t[i].id = i;
		pthread_create(&th[i], NULL, worker, &t[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ok &= t[i].ok;
	}
	CHECK(ok);
	ipurt_runner_destroy(r);
}

TEST(many_async_in_flight)
{
	struct ipurt_runner *r = runner(affine_path, NULL);
	enum { N = 64 };
	static float x[N][12], y[N][12];
	struct ipurt_future *f[N];
	uint64_t d[2] = { 4, 3 };
	char err[256];
	int i, j, ok = 1;

	REQUIRE(r);
	for (i = 0; i < N; i++) {
		struct ipurt_tensor in, out;

		for (j = 0; j < 12; j++)
			x[i][j] = (float)(i * 12 + j);
		in = T("X", IPURT_DT_F32, 2, d, x[i]);
		out = T("Y", IPURT_DT_F32, 2, d, y[i]);
		CHECK_EQ_INT(ipurt_runner_execute_async(r, &in, 1, &out, 1, &f[i], err, sizeof(err)), 0);
	}
	for (i = N - 1; i >= 0; i--) {
		CHECK_EQ_INT(ipurt_future_wait(f[i], -1, err, sizeof(err)), 0);
		ok &= affine_ok(x[i], y[i], 4);
		ipurt_future_free(f[i]);
	}
	CHECK(ok);
	ipurt_runner_destroy(r);
}

/* Without batching_dim only N x the compiled batch (dynamic batch sizing off). */
TEST(batch_multiples_without_batching_dim)
{
	struct ipurt_runner *r = runner(affine_path, NULL);
	float x[36], y[36];
	char err[256];
	uint64_t b;
	int i;

	REQUIRE(r);
	for (i = 0; i < 36; i++)
		x[i] = (float)i * 0.25f;
	for (b = 1; b <= 12; b++) {
		uint64_t d[2] = { b, 3 };
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y);
		int rc = ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));

		if (b % 4 == 0) {
			CHECK_MSG(rc == 0, "batch %llu: %s", (unsigned long long)b, err);
			CHECK(affine_ok(x, y, b));
		} else {
			CHECK_MSG(rc == IPURT_E_BATCH, "batch %llu: %s", (unsigned long long)b,
				  ipu_err_name(rc));
			CHECK(strstr(err, "multiple of 4") != NULL);
		}
	}
	ipurt_runner_destroy(r);
}

/* With batching_dim: any batch size 1 .. 3x compiled, split and padded. */
TEST(dynamic_batch_sizes)
{
	struct ipurt_config c;
	struct ipurt_runner *r;
	float x[36], y[36 + 3];
	char err[256];
	uint64_t b;
	int i;

	ipurt_config_init(&c);
	c.batching_dim = 0;
	r = runner(affine_path, &c);
	REQUIRE(r);
	for (i = 0; i < 36; i++)
		x[i] = (float)i - 7.0f;
	for (b = 1; b <= 12; b++) {
		uint64_t d[2] = { b, 3 };
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y);

		y[b * 3] = -12345.0f; /* must not be written past the user's batch */
		CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
		CHECK_MSG(affine_ok(x, y, b), "batch %llu", (unsigned long long)b);
		CHECK(y[b * 3] == -12345.0f);
	}
	ipurt_runner_destroy(r);
}

/* Batch along dim 1 of [2, B, 3]: strided gather and scatter. */
TEST(dynamic_batch_inner_dim)
{
	struct ipurt_config c;
	struct ipurt_runner *r;
	float x[2 * 11 * 3], y[2 * 11 * 3];
	char err[256];
	uint64_t b;
	int i, ok;

	ipurt_config_init(&c);
	c.batching_dim = 1;
	r = runner(scale_path, &c);
	REQUIRE(r);
	for (b = 1; b <= 11; b++) {
		uint64_t d[3] = { 2, b, 3 };
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 3, d, x);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 3, d, y);

		for (i = 0; i < (int)(6 * b); i++)
			x[i] = (float)(i + 1);
		CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
		ok = 1;
		for (i = 0; i < (int)(6 * b); i++)
			ok &= y[i] == 2 * x[i];
		CHECK_MSG(ok, "batch %llu along dim 1", (unsigned long long)b);
	}
	ipurt_runner_destroy(r);
}

TEST(validation_errors)
{
	struct ipurt_runner *r = runner(affine_path, NULL);
	uint64_t d[2] = { 4, 3 }, bad[2] = { 4, 2 };
	float x[12] = { 0 }, y[12];
	int32_t xi[12];
	struct ipurt_tensor in, out;
	char err[256];

	REQUIRE(r);
	out = T("Y", IPURT_DT_F32, 2, d, y);
	in = T("Z", IPURT_DT_F32, 2, d, x);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), IPURT_E_NAME);
	CHECK(strstr(err, "'Z'") != NULL);
	in = T("X", IPURT_DT_I32, 2, d, xi);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), IPURT_E_DTYPE);
	CHECK(strstr(err, "i32[4,3]") && strstr(err, "f32[4,3]"));
	in = T("X", IPURT_DT_F32, 2, bad, x);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), IPURT_E_SHAPE);
	in = T("X", IPURT_DT_F32, 2, d, x);
	CHECK_EQ_INT(ipurt_runner_execute(r, NULL, 0, &out, 1, err, sizeof(err)), IPURT_E_MISSING);
	CHECK(strstr(err, "'X'") != NULL);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, NULL, 0, err, sizeof(err)), IPURT_E_MISSING);
	/* an output given as an input, a weight given as an input */
	CHECK_EQ_INT(ipurt_runner_execute(r, &out, 1, &out, 1, err, sizeof(err)), IPURT_E_NAME);
	in = T("W", IPURT_DT_F32, 1, d + 1, x);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), IPURT_E_NAME);
	/* still works */
	in = T("X", IPURT_DT_F32, 2, d, x);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
	ipurt_runner_destroy(r);
}

/* Seed 004: run each subgraph by giving only its inputs; index is filled. */
TEST(fused_model_subgraphs)
{
	struct ipurt_config c;
	struct ipurt_runner *r;
	uint64_t d12[2] = { 1, 2 }, d2 = 2, d11[2] = { 1, 1 }, d13[2] = { 1, 3 };
	float g0x[2] = { 1, 1 }, g0y[2] = { 2, 2 }, g0o[2] = { 0, 0 };
	uint16_t g1x[1] = { 0 }, g1o[3] = { 0x7e00, 0x7e00, 0x7e00 };
	struct ipurt_tensor in[2], out;
	char err[256];
	int k;

	ipurt_config_init(&c);
	r = runner(fused_path, &c);
	REQUIRE(r);
	/* validate_io_params on: a fused model's request misses the other subgraph */
	in[0] = T("graph0/X", IPURT_DT_F32, 2, d12, g0x);
	in[1] = T("graph0/Y", IPURT_DT_F32, 2, d12, g0y);
	out = T("graph0/O", IPURT_DT_F32, 1, &d2, g0o);
	CHECK_EQ_INT(ipurt_runner_execute(r, in, 2, &out, 1, err, sizeof(err)), IPURT_E_MISSING);
	CHECK(strstr(err, "graph1/X") != NULL);
	ipurt_runner_destroy(r);

	c.validate_io_params = 0;
	c.timeout_ns = 0;
	r = runner(fused_path, &c);
	REQUIRE(r);
	for (k = 0; k < 3; k++) {
		CHECK_EQ_INT(ipurt_runner_execute(r, in, 2, &out, 1, err, sizeof(err)), 0);
		CHECK(g0o[0] == 3.0f && g0o[1] == 3.0f);
		in[0] = T("graph1/X", IPURT_DT_F16, 2, d11, g1x);
		out = T("graph1/O", IPURT_DT_F16, 2, d13, g1o);
		CHECK_EQ_INT(ipurt_runner_execute(r, in, 1, &out, 1, err, sizeof(err)), 0);
		CHECK(ipu_f16_to_f32(g1o[0]) == 0.0f && ipu_f16_to_f32(g1o[1]) == 1.5f &&
		      ipu_f16_to_f32(g1o[2]) == 2.0f);
		in[0] = T("graph0/X", IPURT_DT_F32, 2, d12, g0x);
		out = T("graph0/O", IPURT_DT_F32, 1, &d2, g0o);
		g0o[0] = g0o[1] = 0;
	}
	/* mixing subgraphs in one request is refused */
	in[1] = T("graph1/X", IPURT_DT_F16, 2, d11, g1x);
	CHECK_EQ_INT(ipurt_runner_execute(r, in, 2, &out, 1, err, sizeof(err)), IPURT_E_INVAL);
	ipurt_runner_destroy(r);
}

/* Inputs for another subgraph than the index selects: a timeout, then recovery. */
TEST(timeout_surfaces_and_recovers)
{
	struct ipurt_config c;
	struct ipurt_runner *r;
	uint64_t d12[2] = { 1, 2 }, d2 = 2, d1 = 1, d11[2] = { 1, 1 }, d13[2] = { 1, 3 };
	float g0x[2] = { 1, 1 }, g0y[2] = { 2, 2 }, g0o[2];
	uint16_t g1x[1] = { 0 }, g1o[3];
	int32_t wrong = 0;
	struct ipurt_tensor in[2], out;
	char err[256];

	ipurt_config_init(&c);
	c.validate_io_params = 0;
	c.timeout_ns = 100 * 1000000ull;
	r = runner(fused_path, &c);
	REQUIRE(r);
	in[0] = T("graph1/X", IPURT_DT_F16, 2, d11, g1x);
	in[1] = T("index", IPURT_DT_I32, 1, &d1, &wrong); /* selects graph0 */
	out = T("graph1/O", IPURT_DT_F16, 2, d13, g1o);
	CHECK_EQ_INT(ipurt_runner_execute(r, in, 2, &out, 1, err, sizeof(err)), IPURT_E_TIMEOUT);
	CHECK(strstr(err, "timed out") != NULL);
	in[0] = T("graph0/X", IPURT_DT_F32, 2, d12, g0x);
	in[1] = T("graph0/Y", IPURT_DT_F32, 2, d12, g0y);
	out = T("graph0/O", IPURT_DT_F32, 1, &d2, g0o);
	CHECK_EQ_INT(ipurt_runner_execute(r, in, 2, &out, 1, err, sizeof(err)), 0);
	CHECK(g0o[0] == 3.0f && g0o[1] == 3.0f);
	ipurt_runner_destroy(r);
}


struct reset_at {
	struct ipu_device *dev;
	_Atomic int *submitted;
	int after;
};

static void *reset_when_submitted(void *arg)
{
	struct reset_at *z = arg;

	while (atomic_load(z->submitted) < z->after)
		usleep(100);
	ipu_reset(z->dev);
	return NULL;
}

/*
 * One device, reset: the request that meets it fails with a reason, the
 * model is loaded again and later requests give the right results; more
 * failures than the rings hold never block a caller; a reset with many
 * requests in flight fails some of them and none hangs.
 */
TEST(single_device_reset_reloads_the_model)
{
	enum { N = 48 };
	static float x[N][12], y[N][12];
	struct ipurt_future *f[N];
	struct ipurt_config c;
	struct ipurt_runner *r;
	struct reset_at z;
	_Atomic int submitted = 0;
	pthread_t t;
	uint64_t d[2] = { 4, 3 };
	char err[256];
	int i, k, rc, ok = 0, right = 1;

	ipurt_config_init(&c);
	c.timeout_ns = 20000 * 1000000ull;
	r = runner(affine_path, &c);
	REQUIRE(r);
	for (i = 0; i < N; i++)
		for (k = 0; k < 12; k++)
			x[i][k] = (float)(i * 12 + k) / 8.0f - 3.0f;
	/* more resets than the rings have room for */
	for (i = 0; i < 24; i++) {
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x[i]);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y[i]);

		ipu_reset(ipurt_runner_device(r));
		rc = ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));
		CHECK_EQ_INT(rc, IPU_E_NOT_LOADED);
		CHECK_MSG(strstr(err, "no longer holds the model") != NULL, "'%s'", err);
		memset(y[i], 0, sizeof(y[i]));
		CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
		right &= affine_ok(x[i], y[i], 4);
	}
	CHECK(right);
	/* a reset among requests in flight */
	z.dev = ipurt_runner_device(r);
	z.submitted = &submitted;
	z.after = N / 3;
	REQUIRE(pthread_create(&t, NULL, reset_when_submitted, &z) == 0);
	for (i = 0; i < N; i++) {
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x[i]);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y[i]);

		memset(y[i], 0, sizeof(y[i]));
		CHECK_EQ_INT(ipurt_runner_execute_async(r, &in, 1, &out, 1, &f[i], err, sizeof(err)), 0);
		atomic_fetch_add(&submitted, 1);
	}
	pthread_join(t, NULL);
	for (i = 0; i < N; i++) {
		rc = ipurt_future_wait(f[i], -1, err, sizeof(err));
		CHECK_MSG(rc == 0 || rc == IPU_E_NOT_LOADED || rc == IPURT_E_CANCELLED, "request %d: %s (%s)", i,
			  err, ipu_err_name(rc));
		if (!rc) {
			ok++;
			right &= affine_ok(x[i], y[i], 4);
		}
		ipurt_future_free(f[i]);
	}
	/* how many finished before the reset depends on the machine's speed */
	CHECK(right);
	fprintf(stderr, "# %d of %d requests in flight at the reset finished\n", ok, N);
	/* and after it, the model is there again */
	for (i = 0; i < 4; i++) {
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x[i]);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y[i]);

		rc = ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));
		if (rc == IPU_E_NOT_LOADED) /* the reset came after the last run */
			rc = ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));
		CHECK_EQ_INT(rc, 0);
		right &= affine_ok(x[i], y[i], 4);
	}
	CHECK(right);
	ipurt_runner_destroy(r);
}

static int exclude_w(const char *name, void *ctx)
{
	(void)ctx;
	return !strcmp(name, "W");
}

TEST(session_tensor_predicate)
{
	struct ipuef_file *f;
	struct ipurt_device_manager *dm;
	struct ipu_device *dev;
	struct ipurt_session *s = NULL;
	struct ipurt_session_opts o = { 0 };
	struct ipurt_device_req req = { 1, 64, NULL };
	float w[3] = { 100, 200, 300 }, x[12], y[12];
	uint64_t d3 = 3, d[2] = { 4, 3 };
	struct ipurt_tensor ov = T("W", IPURT_DT_F32, 1, &d3, w), io[2];
	char err[256];
	int i, ok = 1;

	REQUIRE(ipuef_open(affine_path, &f, err, sizeof(err)) == 0);
	REQUIRE(ipurt_dm_create("model:tiles=16", &dm, err, sizeof(err)) == 0);
	REQUIRE(ipurt_dm_acquire(dm, &req, IPURT_WAIT_NONE, 0, &dev, err, sizeof(err)) == 0);
	o.exclude = exclude_w;
	CHECK_EQ_INT(ipurt_session_create(dev, f, &o, &s, err, sizeof(err)), IPURT_E_MISSING);
	CHECK(strstr(err, "'W'") != NULL);
	o.overrides = &ov;
	o.num_overrides = 1;
	CHECK_EQ_INT(ipurt_session_create(dev, f, &o, &s, err, sizeof(err)), 0);
	REQUIRE(s);
	for (i = 0; i < 12; i++)
		x[i] = (float)i;
	io[0] = T("X", IPURT_DT_F32, 2, d, x);
	io[1] = T("Y", IPURT_DT_F32, 2, d, y);
	CHECK_EQ_INT(ipurt_session_run_program(s, "main", io, 2, -1, err, sizeof(err)), 0);
	for (i = 0; i < 12; i++)
		ok &= y[i] == x[i] * 2 + w[i % 3];
	CHECK(ok);
	CHECK_EQ_INT(ipurt_session_run_program(s, "save", io, 2, -1, err, sizeof(err)), IPURT_E_MODEL);
	ipurt_session_destroy(s);
	ipurt_dm_release(dm, dev);
	ipurt_dm_destroy(dm);
	ipuef_close(f);
}

TEST(device_manager_requirements_and_waits)
{
	struct ipurt_device_manager *dm;
	struct ipu_device *a, *b;
	struct ipurt_device_req small = { 4, 1024, "ipu2" }, huge = { 4096, 1024, NULL },
				v21 = { 4, 1024, "ipu21" };
	char err[512];

	REQUIRE(ipurt_dm_create("model:tiles=8,tile_mem=4096", &dm, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ipurt_dm_acquire(dm, &huge, IPURT_WAIT_NONE, 0, &a, err, sizeof(err)),
		     IPURT_E_NO_DEVICE);
	CHECK(strstr(err, "8 tiles, model needs 4096") != NULL);
	CHECK_EQ_INT(ipurt_dm_acquire(dm, &v21, IPURT_WAIT_NONE, 0, &a, err, sizeof(err)),
		     IPURT_E_NO_DEVICE);
	CHECK(strstr(err, "ipu21") != NULL);
	CHECK_EQ_INT(ipurt_dm_acquire(dm, &small, IPURT_WAIT_NONE, 0, &a, err, sizeof(err)), 0);
	CHECK_EQ_INT(ipurt_dm_acquire(dm, &small, IPURT_WAIT_NONE, 0, &b, err, sizeof(err)),
		     IPURT_E_BUSY);
	CHECK_EQ_INT(ipurt_dm_acquire(dm, &small, IPURT_WAIT_TIMEOUT, 20000000, &b, err,
				      sizeof(err)), IPURT_E_TIMEOUT);
	ipurt_dm_release(dm, a);
	CHECK_EQ_INT(ipurt_dm_acquire(dm, &small, IPURT_WAIT_FOREVER, 0, &b, err, sizeof(err)), 0);
	CHECK(a == b);
	ipurt_dm_release(dm, b);
	ipurt_dm_destroy(dm);
}

/* A list of devices and a model device's own comma-separated settings. */
TEST(device_spec_lists)
{
	static const struct {
		const char *list;
		unsigned n;
		const char *spec[3];
	} cases[] = {
		{ "model:tiles=16,tile_mem=64KiB", 1, { "model:tiles=16,tile_mem=64KiB" } },
		{ "model,model", 2, { "model", "model" } },
		{ "model:tiles=16,tile_mem=64k,model:tiles=8", 2,
		  { "model:tiles=16,tile_mem=64k", "model:tiles=8" } },
		{ "model:tiles=16;model:tiles=4,workers=1", 2,
		  { "model:tiles=16", "model:tiles=4,workers=1" } },
		{ "model:tiles=16,workers=2,/dev/accel/accel7", 2, { "model:tiles=16,workers=2", "/dev/accel/accel7" } },
		{ "/dev/accel/accel0,/dev/accel/accel1", 2, { "/dev/accel/accel0", "/dev/accel/accel1" } },
	};
	struct ipurt_device_manager *dm;
	struct ipu_device *d;
	char err[256];
	size_t i;
	unsigned k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		REQUIRE(ipurt_dm_create(cases[i].list, &dm, err, sizeof(err)) == 0);
		/* /dev/accel/accelN nodes present on the machine come after the list */
		CHECK_MSG(ipurt_dm_count(dm) >= cases[i].n, "%s: %u devices", cases[i].list,
			  ipurt_dm_count(dm));
		for (k = 0; k < cases[i].n && k < ipurt_dm_count(dm); k++)
			CHECK_MSG(!strcmp(ipurt_dm_spec(dm, k), cases[i].spec[k]), "%s: device %u is '%s'",
				  cases[i].list, k, ipurt_dm_spec(dm, k));
		ipurt_dm_destroy(dm);
	}
	/* the sizes --help documents, and numbers that are not sizes */
	REQUIRE(ipu_open("model:tiles=16,tile_mem=64KiB", &d, err, sizeof(err)) == 0);
	ipu_close(d);
	CHECK_EQ_INT(ipu_open("model:tiles=-1", &d, err, sizeof(err)), IPU_E_INVAL);
	CHECK(strstr(err, "tiles") != NULL);
	CHECK_EQ_INT(ipu_open("model:tiles=99999999999", &d, err, sizeof(err)), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_open("model:tile_mem=64KB", &d, err, sizeof(err)), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_open("model:tile_mem=18446744073709551615G", &d, err, sizeof(err)), IPU_E_INVAL);
}

/* What a request passes, as the runtime describes it (ipu-run builds on it). */
TEST(request_tensors)
{
	struct ipurt_tensor t[8];
	uint32_t bd[8], nin;
	struct ipurt_config c;
	struct ipurt_runner *r = runner(affine_path, NULL);
	int n;

	REQUIRE(r);
	n = ipurt_runner_io(r, -1, 0, t, bd, 8, &nin);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(nin, 1);
	CHECK(!strcmp(t[0].name, "X") && !strcmp(t[1].name, "Y"));
	CHECK(t[0].rank == 2 && t[0].dims[0] == 4 && t[0].dims[1] == 3 && !t[0].data);
	CHECK_EQ_INT(bd[0], 0);
	n = ipurt_runner_io(r, -1, 12, t, bd, 8, &nin);
	CHECK(n == 2 && t[0].dims[0] == 12 && t[1].dims[0] == 12 && t[1].dims[1] == 3);
	CHECK_EQ_INT(ipurt_runner_io(r, -1, 0, t, bd, 1, &nin), IPURT_E_INVAL);
	ipurt_runner_destroy(r);

	/* batch along dim 1 under batching_dim */
	ipurt_config_init(&c);
	c.batching_dim = 1;
	r = runner(scale_path, &c);
	REQUIRE(r);
	n = ipurt_runner_io(r, -1, 7, t, bd, 8, &nin);
	CHECK(n == 2 && bd[0] == 1 && t[0].dims[0] == 2 && t[0].dims[1] == 7 && t[0].dims[2] == 3);
	ipurt_runner_destroy(r);

	/* a fused model: one subgraph's anchors, the index is filled by the runner */
	ipurt_config_init(&c);
	c.validate_io_params = 0;
	r = runner(fused_path, &c);
	REQUIRE(r);
	n = ipurt_runner_io(r, 1, 0, t, bd, 8, &nin);
	CHECK_EQ_INT(n, 2);
	CHECK(n == 2 && !strcmp(t[0].name, "graph1/X") && !strcmp(t[1].name, "graph1/O"));
	CHECK_EQ_INT(ipurt_anchor_subgraph("graph12/X"), 12);
	CHECK_EQ_INT(ipurt_anchor_subgraph("graph/X"), -1);
	CHECK_EQ_INT(ipurt_anchor_subgraph("X"), -1);
	CHECK_EQ_INT(ipurt_anchor_subgraph("graphx1/X"), -1);
	ipurt_runner_destroy(r);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	TH_INIT(argc, argv);
	snprintf(affine_path, sizeof(affine_path), "%s/rt-affine-%d.ipuef", dir, (int)getpid());
	snprintf(scale_path, sizeof(scale_path), "%s/rt-scale-%d.ipuef", dir, (int)getpid());
	snprintf(fused_path, sizeof(fused_path), "%s/rt-fused-%d.ipuef", dir, (int)getpid());
	if (rt_make_affine(affine_path) || rt_make_scale_dim1(scale_path) ||
	    rt_make_fused(fused_path)) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	RUN(execute_and_async_agree);
	RUN(eight_threads_concurrently);
	RUN(many_async_in_flight);
	RUN(batch_multiples_without_batching_dim);
	RUN(dynamic_batch_sizes);
	RUN(dynamic_batch_inner_dim);
	RUN(validation_errors);
	RUN(fused_model_subgraphs);
	RUN(timeout_surfaces_and_recovers);
	RUN(single_device_reset_reloads_the_model);
	RUN(session_tensor_predicate);
	RUN(device_manager_requirements_and_waits);
	RUN(device_spec_lists);
	RUN(request_tensors);
	unlink(affine_path);
	unlink(scale_path);
	unlink(fused_path);
	return TH_DONE();
}
