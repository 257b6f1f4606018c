// SPDX-License-Identifier: MIT
/*
 * test_replication.c - one model on several in-process devices: results
 * bit-identical to one device and to the model's arithmetic, each request
 * gets its own results whatever order they finish in, dynamic batches and
 * fused models keep working, a device reset mid-run is taken out of
 * rotation with its runs moved, all devices failing fails requests
 * cleanly, and the DeviceManager's "N devices" and "these devices" policy.
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

static char affine_path[256], fused_path[256];

static struct ipurt_tensor T(const char *name, uint32_t dt, uint32_t rank, const uint64_t *dims,
			     void *data)
{
	struct ipurt_tensor t = { name, dt, rank, { 0 }, data };

	memcpy(t.dims, dims, rank * sizeof(*dims));
	return t;
}

static struct ipurt_runner *runner(const char *path, const char *device, uint32_t ndev,
				   struct ipurt_config *base)
{
	struct ipurt_runner *r = NULL;
	struct ipurt_config c;
	char err[512];
	int rc;

	if (base)
		c = *base;
	else
		ipurt_config_init(&c);
	c.device = device;
	c.num_devices = ndev;
	rc = ipurt_runner_create(path, &c, &r, err, sizeof(err));
	if (rc)
		fprintf(stderr, "runner: %s (%s)\n", err, ipu_err_name(rc));
	return r;
}

/* The model's arithmetic, independently: Y = X * 2 + W, W = {10, 20, 30}. */
static int affine_ok(const float *x, const float *y, uint64_t rows)
{
	static const float w[3] = { 10, 20, 30 };
	uint64_t i;

	for (i = 0; i < rows * 3; i++)
		if (y[i] != x[i] * 2 + w[i % 3])
			return 0;
	return 1;
}

/* Seeded inputs that are not exact in binary (x * 2 + w rounds). */
static void fill(float *x, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = (float)(seed >> 8) / (float)(1u << 20) - 7.3f;
	}
}

enum { NREQ = 96, MAXROWS = 11 };

struct batch {
	float x[NREQ][MAXROWS * 3];
	float y[NREQ][MAXROWS * 3];
	uint64_t rows[NREQ];
};

/* NREQ requests of 1..MAXROWS rows in flight at once, waited newest first. */
static int run_batch(struct ipurt_runner *r, struct batch *b, uint32_t seed)
{
	struct ipurt_future *f[NREQ];
	char err[256];
	int i, bad = 0;

	for (i = 0; i < NREQ; i++) {
		uint64_t d[2];
		struct ipurt_tensor in, out;

		b->rows[i] = 1 + (uint64_t)(i * 7 + seed) % MAXROWS;
		d[0] = b->rows[i];
		d[1] = 3;
		fill(b->x[i], b->rows[i] * 3, seed + (uint32_t)i);
		memset(b->y[i], 0xff, sizeof(b->y[i]));
		in = T("X", IPURT_DT_F32, 2, d, b->x[i]);
		out = T("Y", IPURT_DT_F32, 2, d, b->y[i]);
		if (ipurt_runner_execute_async(r, &in, 1, &out, 1, &f[i], err, sizeof(err))) {
			fprintf(stderr, "request %d: %s\n", i, err);
			f[i] = NULL;
			bad++;
		}
	}
	for (i = NREQ - 1; i >= 0; i--) {
		if (!f[i])
			continue;
		if (ipurt_future_wait(f[i], -1, err, sizeof(err))) {
			fprintf(stderr, "request %d: %s\n", i, err);
			bad++;
		}
		ipurt_future_free(f[i]);
	}
	return bad;
}

/* Two devices give the bits one device gives, for every request, in any order. */
TEST(results_identical_to_one_device)
{
	static struct batch one, two, any2;
	struct ipurt_config c;
	struct ipurt_runner *r1, *r2, *r3;
	uint64_t ok0 = 0, ok1 = 0;
	int i, same = 1, right = 1;

	ipurt_config_init(&c);
	c.batching_dim = 0;	/* 1..11 rows over a compiled batch of 4: partial runs */
	r1 = runner(affine_path, NULL, 1, &c);
	r2 = runner(affine_path, "model,model", IPURT_ALL_LISTED, &c);
	r3 = runner(affine_path, NULL, 2, &c);	/* "any 2": made to match the model */
	REQUIRE(r1 && r2 && r3);
	CHECK_EQ_INT(ipurt_runner_num_devices(r1), 1);
	CHECK_EQ_INT(ipurt_runner_num_devices(r2), 2);
	CHECK_EQ_INT(ipurt_runner_num_devices(r3), 2);
	CHECK(ipurt_runner_device_at(r2, 0) != ipurt_runner_device_at(r2, 1));
	CHECK(ipurt_runner_device_at(r2, 2) == NULL);
	CHECK_EQ_INT(run_batch(r1, &one, 5), 0);
	CHECK_EQ_INT(run_batch(r2, &two, 5), 0);
	CHECK_EQ_INT(run_batch(r3, &any2, 5), 0);
	for (i = 0; i < NREQ; i++) {
		same &= !memcmp(one.y[i], two.y[i], one.rows[i] * 3 * sizeof(float));
		same &= !memcmp(one.y[i], any2.y[i], one.rows[i] * 3 * sizeof(float));
		right &= affine_ok(two.x[i], two.y[i], two.rows[i]);
	}
	CHECK(same);
	CHECK(right);
	/* both devices did work, and every run is accounted for */
	CHECK_EQ_INT(ipurt_runner_device_status(r2, 0, &ok0, NULL, 0), 1);
	CHECK_EQ_INT(ipurt_runner_device_status(r2, 1, &ok1, NULL, 0), 1);
	CHECK_MSG(ok0 > 0 && ok1 > 0, "runs per device %llu, %llu", (unsigned long long)ok0,
		  (unsigned long long)ok1);
	{
		uint64_t runs = 0;

		for (i = 0; i < NREQ; i++)
			runs += (two.rows[i] + 3) / 4;
		CHECK_EQ_INT((int)(ok0 + ok1), (int)runs);
	}
	CHECK_EQ_INT(ipurt_runner_device_status(r2, 2, NULL, NULL, 0), -1);
	ipurt_runner_destroy(r1);
	ipurt_runner_destroy(r2);
	ipurt_runner_destroy(r3);
}

struct life {
	_Atomic int queued[NREQ], started[NREQ], done[NREQ];
	_Atomic int order_bad;
};

static void on_request(void *ctx, uint64_t id, enum ipurt_request_event ev, uint64_t t_ns,
		       int status)
{
	struct life *l = ctx;

	(void)t_ns;
	(void)status;
	if (id >= NREQ) {
		atomic_store(&l->order_bad, 1);
		return;
	}
	if (ev == IPURT_REQ_QUEUED)
		atomic_fetch_add(&l->queued[id], 1);
	else if (ev == IPURT_REQ_STARTED)
		atomic_fetch_add(&l->started[id], 1);
	else if (!atomic_load(&l->queued[id]) || !atomic_load(&l->started[id]))
		atomic_store(&l->order_bad, 1);	/* done before it started */
	else
		atomic_fetch_add(&l->done[id], 1);
}

/* Each request's life is reported once, in order, whichever device ran it. */
TEST(request_events_once_each)
{
	static struct batch b;
	static struct life l;
	struct ipurt_config c;
	struct ipurt_runner *r;
	int i, once = 1;

	ipurt_config_init(&c);
	c.batching_dim = 0;
	c.on_request = on_request;
	c.on_request_ctx = &l;
	r = runner(affine_path, "model,model", IPURT_ALL_LISTED, &c);
	REQUIRE(r);
	CHECK_EQ_INT(run_batch(r, &b, 9), 0);
	for (i = 0; i < NREQ; i++)
		once &= l.queued[i] == 1 && l.started[i] == 1 && l.done[i] == 1 &&
			affine_ok(b.x[i], b.y[i], b.rows[i]);
	CHECK(once);
	CHECK(!l.order_bad);
	ipurt_runner_destroy(r);
}

/* Conditional execution: each subgraph's requests on either device. */
TEST(fused_model_on_two_devices)
{
	struct ipurt_config c;
	struct ipurt_runner *r;
	uint64_t d12[2] = { 1, 2 }, d2 = 2, d11[2] = { 1, 1 }, d13[2] = { 1, 3 };
	float g0x[2] = { 1, 1 }, g0y[2] = { 2, 0.5f }, g0o[2];
	uint16_t g1x[1] = { 0x3c00 }, g1o[3];
	struct ipurt_tensor in[2], out;
	uint64_t ok0 = 0, ok1 = 0;
	char err[256];
	int k, right = 1;

	ipurt_config_init(&c);
	c.validate_io_params = 0;
	r = runner(fused_path, "model,model", IPURT_ALL_LISTED, &c);
	REQUIRE(r);
	for (k = 0; k < 8; k++) {
		in[0] = T("graph0/X", IPURT_DT_F32, 2, d12, g0x);
		in[1] = T("graph0/Y", IPURT_DT_F32, 2, d12, g0y);
		out = T("graph0/O", IPURT_DT_F32, 1, &d2, g0o);
		g0o[0] = g0o[1] = 0;
		CHECK_EQ_INT(ipurt_runner_execute(r, in, 2, &out, 1, err, sizeof(err)), 0);
		right &= g0o[0] == 3.0f && g0o[1] == 1.5f;
		in[0] = T("graph1/X", IPURT_DT_F16, 2, d11, g1x);
		out = T("graph1/O", IPURT_DT_F16, 2, d13, g1o);
		memset(g1o, 0, sizeof(g1o));
		CHECK_EQ_INT(ipurt_runner_execute(r, in, 1, &out, 1, err, sizeof(err)), 0);
		right &= ipu_f16_to_f32(g1o[0]) == 1.0f && ipu_f16_to_f32(g1o[1]) == 1.5f &&
			 ipu_f16_to_f32(g1o[2]) == 2.0f;
	}
	CHECK(right);
	ipurt_runner_device_status(r, 0, &ok0, NULL, 0);
	ipurt_runner_device_status(r, 1, &ok1, NULL, 0);
	CHECK(ok0 > 0 && ok1 > 0 && ok0 + ok1 == 16);
	ipurt_runner_destroy(r);
}

struct resetter {
	struct ipu_device *dev;
	_Atomic int *submitted;
	int after;
};

/* Reset the device once `after` requests were submitted: a failure mid-run. */
static void *reset_later(void *arg)
{
	struct resetter *z = arg;

	while (atomic_load(z->submitted) < z->after)
		usleep(200);
	ipu_reset(z->dev);
	return NULL;
}

/*
 * Device 1 is reset while requests are in flight on both: every request
 * still completes with the right bits, device 1 is out with a reason,
 * later requests all go to device 0.
 */
TEST(device_reset_mid_run_moves_its_runs)
{
	enum { N = 160 };
	static float x[N][4 * 3], y[N][4 * 3];
	struct ipurt_future *f[N];
	struct ipurt_runner *r;
	struct resetter z;
	_Atomic int submitted = 0;
	pthread_t t;
	uint64_t d[2] = { 4, 3 }, ok0 = 0, ok1 = 0, ok1_later = 0;
	char err[256], why[256];
	int i, right = 1, failed = 0;

	r = runner(affine_path, "model,model", IPURT_ALL_LISTED, NULL);
	REQUIRE(r);
	z.dev = ipurt_runner_device_at(r, 1);
	z.submitted = &submitted;
	z.after = N / 4;
	REQUIRE(pthread_create(&t, NULL, reset_later, &z) == 0);
	for (i = 0; i < N; i++) {
		struct ipurt_tensor in, out;

		fill(x[i], 12, 1000u + (uint32_t)i);
		memset(y[i], 0, sizeof(y[i]));
		in = T("X", IPURT_DT_F32, 2, d, x[i]);
		out = T("Y", IPURT_DT_F32, 2, d, y[i]);
		CHECK_EQ_INT(ipurt_runner_execute_async(r, &in, 1, &out, 1, &f[i], err, sizeof(err)), 0);
		atomic_fetch_add(&submitted, 1);
	}
	pthread_join(t, NULL);
	/* the reset may land after the last run: two more requests meet it */
	for (i = 0; i < 2; i++) {
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x[i]);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y[i]);

		CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
	}
	for (i = 0; i < N; i++) {
		if (ipurt_future_wait(f[i], -1, err, sizeof(err))) {
			fprintf(stderr, "request %d: %s\n", i, err);
			failed++;
		}
		right &= affine_ok(x[i], y[i], 4);
		ipurt_future_free(f[i]);
	}
	CHECK_EQ_INT(failed, 0);
	CHECK(right);
	CHECK_EQ_INT(ipurt_runner_device_status(r, 0, &ok0, why, sizeof(why)), 1);
	CHECK_EQ_INT(ipurt_runner_device_status(r, 1, &ok1, why, sizeof(why)), 0);
	CHECK_MSG(strstr(why, "run failed") != NULL, "reason '%s'", why);
	CHECK_EQ_INT((int)(ok0 + ok1), N + 2);
	/* out of rotation: nothing more goes to device 1 */
	for (i = 0; i < 8; i++) {
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x[i]);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y[i]);

		CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
		right &= affine_ok(x[i], y[i], 4);
	}
	CHECK(right);
	ipurt_runner_device_status(r, 1, &ok1_later, NULL, 0);
	CHECK(ok1_later == ok1);
	ipurt_runner_destroy(r);
}

/* Every device failed: requests fail at once with a reason per device. */
TEST(all_devices_failed_is_a_clear_error)
{
	static float x[12], y[12];
	struct ipurt_runner *r;
	uint64_t d[2] = { 4, 3 };
	struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, x);
	struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, y);
	char err[512];
	int i, rc = 0;

	r = runner(affine_path, "model,model", IPURT_ALL_LISTED, NULL);
	REQUIRE(r);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
	ipu_reset(ipurt_runner_device_at(r, 0));
	ipu_reset(ipurt_runner_device_at(r, 1));
	/* the first failures move runs; within a few requests none is left */
	for (i = 0; i < 6 && rc != IPURT_E_DEVICE; i++)
		rc = ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));
	CHECK_EQ_INT(rc, IPURT_E_DEVICE);
	CHECK_EQ_INT(ipurt_runner_device_status(r, 0, NULL, NULL, 0), 0);
	CHECK_EQ_INT(ipurt_runner_device_status(r, 1, NULL, NULL, 0), 0);
	CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), IPURT_E_DEVICE);
	CHECK_MSG(strstr(err, "no device left in rotation") && strstr(err, "model"), "'%s'", err);
	ipurt_runner_destroy(r);
}

/* Memory registered with a replicated runner is registered on every device. */
TEST(registered_memory_on_every_device)
{
	static float pool[2][12];
	struct ipurt_runner *r;
	uint64_t d[2] = { 4, 3 };
	uint32_t id, id2;
	char err[256];
	int i, right = 1;

	r = runner(affine_path, "model,model", IPURT_ALL_LISTED, NULL);
	REQUIRE(r);
	CHECK_EQ_INT(ipurt_runner_register_memory(r, pool, sizeof(pool), &id, err, sizeof(err)), 0);
	CHECK_EQ_INT(ipurt_runner_register_memory(r, pool[1], 16, &id2, err, sizeof(err)),
		     IPURT_E_INVAL);	/* overlaps */
	for (i = 0; i < 6; i++) {
		struct ipurt_tensor in = T("X", IPURT_DT_F32, 2, d, pool[0]);
		struct ipurt_tensor out = T("Y", IPURT_DT_F32, 2, d, pool[1]);

		fill(pool[0], 12, (uint32_t)i);
		CHECK_EQ_INT(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)), 0);
		right &= affine_ok(pool[0], pool[1], 4);
	}
	CHECK(right);
	CHECK_EQ_INT(ipurt_runner_unregister_memory(r, id), 0);
	CHECK_EQ_INT(ipurt_runner_unregister_memory(r, id), IPURT_E_INVAL);
	CHECK_EQ_INT(ipurt_runner_register_memory(r, pool, sizeof(pool), &id, err, sizeof(err)), 0);
	ipurt_runner_destroy(r);	/* unregisters what is left */
}

/* The DeviceManager's policy: any N free devices, or exactly a list; all or none. */
TEST(device_manager_n_devices)
{
	struct ipurt_device_manager *dm;
	struct ipurt_device_req req = { 4, 1024, NULL };
	struct ipu_device *d[4] = { 0 }, *one;
	char err[512];

	REQUIRE(ipurt_dm_create("model:tiles=8,tile_mem=4096;model:tiles=8,tile_mem=4096;"
				"model:tiles=2,tile_mem=4096", &dm, err, sizeof(err)) == 0);
	/* only two can run a 4-tile model */
	CHECK_EQ_INT(ipurt_dm_acquire_n(dm, &req, 3, NULL, IPURT_WAIT_NONE, 0, d, err, sizeof(err)),
		     IPURT_E_NO_DEVICE);
	CHECK_MSG(strstr(err, "3 devices needed, 2 can run") != NULL, "'%s'", err);
	CHECK(d[0] == NULL);
	CHECK_EQ_INT(ipurt_dm_acquire_n(dm, &req, 2, NULL, IPURT_WAIT_NONE, 0, d, err, sizeof(err)), 0);
	CHECK(d[0] && d[1] && d[0] != d[1]);
	/* none free now; a wait times out, taking nothing */
	CHECK_EQ_INT(ipurt_dm_acquire_n(dm, &req, 2, NULL, IPURT_WAIT_TIMEOUT, 10000000, d + 2, err,
					sizeof(err)), IPURT_E_TIMEOUT);
	ipurt_dm_release(dm, d[1]);
	/* one free is not two: all or none, so the free one stays free */
	CHECK_EQ_INT(ipurt_dm_acquire_n(dm, &req, 2, NULL, IPURT_WAIT_NONE, 0, d + 2, err, sizeof(err)),
		     IPURT_E_BUSY);
	CHECK(d[2] == NULL);
	CHECK_EQ_INT(ipurt_dm_acquire(dm, &req, IPURT_WAIT_NONE, 0, &one, err, sizeof(err)), 0);
	CHECK(one == d[1]);
	ipurt_dm_release(dm, one);
	ipurt_dm_release(dm, d[0]);
	/* a list: exactly those devices; a count that disagrees is refused */
	CHECK_EQ_INT(ipurt_dm_acquire_n(dm, &req, 3, "model:tiles=8,tile_mem=4096", IPURT_WAIT_NONE,
					0, d, err, sizeof(err)), IPURT_E_INVAL);
	CHECK_EQ_INT(ipurt_dm_acquire_n(dm, &req, 0, "model:tiles=2,tile_mem=4096", IPURT_WAIT_NONE,
					0, d, err, sizeof(err)), IPURT_E_NO_DEVICE);
	CHECK_EQ_INT(ipurt_dm_acquire_n(dm, &req, 0, "/dev/accel/accel99", IPURT_WAIT_NONE, 0, d, err,
					sizeof(err)), IPURT_E_NO_DEVICE);
	ipurt_dm_destroy(dm);
	/* more replicas than devices, and a list without a list */
	{
		struct ipurt_config c;
		struct ipurt_runner *r;

		ipurt_config_init(&c);
		c.device = "model,model";
		c.num_devices = 3;
		CHECK_EQ_INT(ipurt_runner_create(affine_path, &c, &r, err, sizeof(err)),
			     IPURT_E_NO_DEVICE);
		CHECK(r == NULL);
		c.device = NULL;
		c.num_devices = IPURT_ALL_LISTED;
		CHECK_EQ_INT(ipurt_runner_create(affine_path, &c, &r, err, sizeof(err)), IPURT_E_INVAL);
		CHECK(strstr(err, "device list") != NULL);
	}
}

/* A request that hangs on every device: a timeout, not a hang, and a clean close. */
TEST(timeout_on_every_device)
{
	struct ipurt_config c;
	struct ipurt_runner *r;
	uint64_t d1 = 1, d11[2] = { 1, 1 }, d13[2] = { 1, 3 };
	uint16_t g1x[1] = { 0 }, g1o[3];
	int32_t wrong = 0;
	struct ipurt_tensor in[2], out;
	char err[512];

	ipurt_config_init(&c);
	c.validate_io_params = 0;
	c.timeout_ns = 100 * 1000000ull;
	r = runner(fused_path, "model,model", IPURT_ALL_LISTED, &c);
	REQUIRE(r);
	in[0] = T("graph1/X", IPURT_DT_F16, 2, d11, g1x);
	in[1] = T("index", IPURT_DT_I32, 1, &d1, &wrong); /* selects graph0: waits forever */
	out = T("graph1/O", IPURT_DT_F16, 2, d13, g1o);
	CHECK_EQ_INT(ipurt_runner_execute(r, in, 2, &out, 1, err, sizeof(err)), IPURT_E_TIMEOUT);
	CHECK_MSG(strstr(err, "timed out") != NULL, "'%s'", err);
	ipurt_runner_destroy(r);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	TH_INIT(argc, argv);
	snprintf(affine_path, sizeof(affine_path), "%s/rt-repl-affine-%d.ipuef", dir, (int)getpid());
	snprintf(fused_path, sizeof(fused_path), "%s/rt-repl-fused-%d.ipuef", dir, (int)getpid());
	if (rt_make_affine(affine_path) || rt_make_fused(fused_path)) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	RUN(results_identical_to_one_device);
	RUN(request_events_once_each);
	RUN(fused_model_on_two_devices);
	RUN(device_reset_mid_run_moves_its_runs);
	RUN(all_devices_failed_is_a_clear_error);
	RUN(registered_memory_on_every_device);
	RUN(device_manager_n_devices);
	RUN(timeout_on_every_device);
	unlink(affine_path);
	unlink(fused_path);
	return TH_DONE();
}
