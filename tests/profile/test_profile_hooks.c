// SPDX-License-Identifier: MIT
/*
 * test_profile_hooks.c - the hooks profiles stand on, on the in-process
 * device: the engine's per-step events (ipu_set_trace) against its
 * counters and its static costs (ipu_superstep_cost), and the ModelRunner's
 * request events (on_request) for requests of one and of several device
 * runs, synchronous and in flight together.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/runtime.h"
#include "rt_models.h"

#define MAXEV 4096

struct collected {
	pthread_mutex_t lock;
	struct ipu_step_event steps[MAXEV];
	uint32_t nsteps;
	struct { uint64_t id, t; int ev, status; } req[MAXEV];
	uint32_t nreq;
};

static void on_step(void *ctx, const struct ipu_step_event *ev)
{
	struct collected *c = ctx;

	pthread_mutex_lock(&c->lock);
	if (c->nsteps < MAXEV)
		c->steps[c->nsteps++] = *ev;
	pthread_mutex_unlock(&c->lock);
}

static void on_request(void *ctx, uint64_t id, enum ipurt_request_event ev, uint64_t t, int status)
{
	struct collected *c = ctx;

	pthread_mutex_lock(&c->lock);
	if (c->nreq < MAXEV) {
		c->req[c->nreq].id = id;
		c->req[c->nreq].t = t;
		c->req[c->nreq].ev = (int)ev;
		c->req[c->nreq].status = status;
		c->nreq++;
	}
	pthread_mutex_unlock(&c->lock);
}

static char affine_path[256];

TEST(steps_and_requests)
{
	static struct collected c;
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	struct ipu_device *dev;
	struct ipu_counters c0, c1;
	float x[12 * 3] = { 0 }, y[12 * 3], y4[4][4 * 3];
	struct ipurt_tensor in = { "X", IPURT_DT_F32, 2, { 12, 3 }, x };
	struct ipurt_tensor out = { "Y", IPURT_DT_F32, 2, { 12, 3 }, y };
	struct ipurt_future *f[4];
	uint64_t leaf_cycles = 0, prog_cycles = 0, sum = 0, t_start = 0;
	uint32_t i, k, programs = 0, first = 0;
	char err[256];

	pthread_mutex_init(&c.lock, NULL);
	ipurt_config_init(&cfg);
	cfg.on_request = on_request;
	cfg.on_request_ctx = &c;
	REQUIRE(ipurt_runner_create(affine_path, &cfg, &r, err, sizeof(err)) == 0);
	dev = ipurt_runner_device(r);
	REQUIRE(ipu_counters(dev, &c0) == 0);
	REQUIRE(ipu_set_trace(dev, on_step, &c) == 0);
	/* 12 rows = 3 runs of the compiled 4, then 4 requests of 4 in flight */
	CHECK(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)) == 0);
	in.dims[0] = out.dims[0] = 4;
	for (k = 0; k < 4; k++) {
		out.data = y4[k];
		CHECK(ipurt_runner_execute_async(r, &in, 1, &out, 1, &f[k], err, sizeof(err)) == 0);
	}
	for (k = 0; k < 4; k++) {
		CHECK(ipurt_future_wait(f[k], -1, err, sizeof(err)) == 0);
		ipurt_future_free(f[k]);
	}
	REQUIRE(ipu_counters(dev, &c1) == 0);
	CHECK(ipu_set_trace(dev, NULL, NULL) == 0);

	/* steps: each program event closes the leaves before it and sums them */
	for (i = 0; i < c.nsteps; i++) {
		const struct ipu_step_event *e = &c.steps[i];

		CHECK(e->end_ns >= e->start_ns);
		if (e->kind != IPU_TRACE_PROGRAM) {
			struct ipu_superstep_cost sc;

			leaf_cycles += e->cycles;
			sum += e->cycles;
			if (!t_start)
				t_start = e->start_ns;
			CHECK(e->kind == IPU_STEP_EXECUTE || e->kind == IPU_STEP_EXCHANGE ||
			      e->kind == IPU_STEP_STREAM_COPY || e->kind == IPU_STEP_SYNC);
			if (e->kind != IPU_STEP_SYNC) {
				CHECK(ipu_superstep_cost(dev, e->kind, e->index, &sc) == 0);
				CHECK(sc.cycles == e->cycles && sc.bytes == e->bytes);
			}
			continue;
		}
		programs++;
		prog_cycles += e->cycles;
		CHECK(e->cycles == sum);
		CHECK(e->status == 0);
		CHECK(i > first);
		for (k = first; k < i; k++)
			CHECK(c.steps[k].start_ns >= e->start_ns && c.steps[k].end_ns <= e->end_ns);
		sum = 0;
		first = i + 1;
	}
	CHECK_EQ_INT(programs, 7);
	CHECK(c1.programs_run - c0.programs_run == 7);
	CHECK(leaf_cycles == c1.cycles - c0.cycles);
	CHECK(prog_cycles == c1.cycles - c0.cycles);

	/* requests 0..4: queued, started, done once each, in time order */
	for (uint64_t id = 0; id < 5; id++) {
		uint64_t t[3] = { 0 };
		int seen[3] = { 0 };

		for (i = 0; i < c.nreq; i++) {
			if (c.req[i].id != id)
				continue;
			seen[c.req[i].ev]++;
			t[c.req[i].ev] = c.req[i].t;
			CHECK(c.req[i].status == 0);
		}
		CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
		CHECK(t[0] <= t[1] && t[1] <= t[2]);
	}
	CHECK_EQ_INT(c.nreq, 15);

	/* no hook: no events */
	k = c.nsteps;
	CHECK(ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err)) == 0);
	CHECK(c.nsteps == k);
	ipurt_runner_destroy(r);
	pthread_mutex_destroy(&c.lock);
}

TEST(superstep_cost_refuses)
{
	struct ipurt_runner *r = NULL;
	struct ipu_superstep_cost sc;
	char err[256];

	REQUIRE(ipurt_runner_create(affine_path, NULL, &r, err, sizeof(err)) == 0);
	CHECK(ipu_superstep_cost(ipurt_runner_device(r), IPU_STEP_SYNC, 0, &sc) == IPU_E_INVAL);
	CHECK(ipu_superstep_cost(ipurt_runner_device(r), IPU_STEP_EXECUTE, 1u << 30, &sc) == IPU_E_INVAL);
	CHECK(ipu_superstep_cost(ipurt_runner_device(r), IPU_STEP_EXECUTE, 0, &sc) == 0 && sc.cycles > 0);
	ipurt_runner_destroy(r);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/ipu-profile-XXXXXX";
	int rc;

	TH_INIT(argc, argv);
	if (!mkdtemp(dir) || snprintf(affine_path, sizeof(affine_path), "%s/affine.ipuef", dir) < 0 ||
	    rt_make_affine(affine_path)) {
		fprintf(stderr, "cannot make the test model in %s\n", dir);
		return 1;
	}
	RUN(steps_and_requests);
	RUN(superstep_cost_refuses);
	unlink(affine_path);
	rmdir(dir);
	rc = TH_DONE();
	return rc;
}
