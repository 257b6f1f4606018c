// SPDX-License-Identifier: MIT
/*
 * bench_runner.c - ModelRunner host overhead on a tiny model (the affine
 * test model: 12 floats in, 12 out): per-request latency p50/p99 with one
 * request at a time, and requests/s with 1 and 16 in flight; beside the
 * same work done directly on libipu (submit + run + wait), so the ratio is
 * what the runtime's layers cost; and the QueueManager with the feeder
 * thread it used to have (IPURT_QM_FEEDER=1) against without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipu/runtime.h"
#include "rt_models.h"

#define N 10000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct qm_figures {
	double p50, p99, rps1, rps16;
};

/* Latency at 1 in flight and throughput at 1 and 16, on a fresh runner. */
static int measure(const char *path, const char *feeder, struct qm_figures *fig,
		   struct ipurt_runner **keep)
{
	char err[512];
	struct ipurt_runner *r;
	struct ipurt_future *fs[16] = { 0 };
	float x[12] = { 1, 2, 3 }, y[12];
	struct ipurt_tensor in = { "X", IPURT_DT_F32, 2, { 4, 3 }, x };
	struct ipurt_tensor out = { "Y", IPURT_DT_F32, 2, { 4, 3 }, y };
	static double lat[N];
	double t0;
	int i;

	/* read when the runner's QueueManager is created */
	setenv("IPURT_QM_FEEDER", feeder, 1);
	if (ipurt_runner_create(path, NULL, &r, err, sizeof(err))) {
		fprintf(stderr, "bench_runner: %s\n", err);
		return -1;
	}
	for (i = 0; i < 1000; i++)
		ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));
	t0 = now();
	for (i = 0; i < N; i++) {
		double s = now();

		if (ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err))) {
			fprintf(stderr, "bench_runner: %s\n", err);
			ipurt_runner_destroy(r);
			return -1;
		}
		lat[i] = now() - s;
	}
	fig->rps1 = N / (now() - t0);
	qsort(lat, N, sizeof(lat[0]), cmp);
	fig->p50 = lat[N / 2] * 1e6;
	fig->p99 = lat[N * 99 / 100] * 1e6;
	t0 = now();
	for (i = 0; i < N; i++) {
		int s = i % 16;

		if (fs[s]) {
			ipurt_future_wait(fs[s], -1, err, sizeof(err));
			ipurt_future_free(fs[s]);
		}
		ipurt_runner_execute_async(r, &in, 1, &out, 1, &fs[s], err, sizeof(err));
	}
	for (i = 0; i < 16; i++) {
		if (fs[i]) {
			ipurt_future_wait(fs[i], -1, err, sizeof(err));
			ipurt_future_free(fs[i]);
		}
	}
	fig->rps16 = N / (now() - t0);
	if (keep)
		*keep = r;
	else
		ipurt_runner_destroy(r);
	return 0;
}

int main(void)
{
	char path[256], err[512];
	struct ipurt_runner *r;
	float x[12] = { 1, 2, 3 }, y[12];
	static double lat[N];
	struct qm_figures direct, fed;
	double t0, raw_p50, raw_rps;
	struct ipu_device *dev;
	int i;

	snprintf(path, sizeof(path), "/tmp/bench-runner-%d.ipuef", (int)getpid());
	if (rt_make_affine(path)) {
		fprintf(stderr, "bench_runner: cannot write %s\n", path);
		return 1;
	}
	if (measure(path, "1", &fed, NULL) || measure(path, "0", &direct, &r)) {
		unlink(path);
		return 1;
	}
	unlink(path);
	printf("ModelRunner, tiny model (12 f32 in/out), in-process device\n");
	printf("  execute latency      p50 %7.1f us  p99 %7.1f us\n", direct.p50, direct.p99);
	printf("  requests/s           %9.0f with 1 in flight, %9.0f with 16 in flight\n",
	       direct.rps1, direct.rps16);
	printf("  with a feeder thread p50 %7.1f us  p99 %7.1f us, %9.0f / %9.0f requests/s\n",
	       fed.p50, fed.p99, fed.rps1, fed.rps16);
	printf("  without / with feeder: p50 %.2fx, requests/s %.2fx (1 in flight) %.2fx (16)\n",
	       direct.p50 / fed.p50, direct.rps1 / fed.rps1, direct.rps16 / fed.rps16);
	/* the same on libipu directly: what the device path alone costs */
	dev = ipurt_runner_device(r);
	t0 = now();
	for (i = 0; i < N; i++) {
		double s = now();

		ipu_stream_submit(dev, 1, x, 48, 0);
		ipu_stream_submit(dev, 2, y, 48, 0);
		ipu_run_sync(dev, 1, err, sizeof(err));
		lat[i] = now() - s;
	}
	raw_rps = N / (now() - t0);
	{
		struct ipu_completion c[64];

		while (ipu_stream_poll(dev, c, 64, 0) > 0)
			;
	}
	qsort(lat, N, sizeof(lat[0]), cmp);
	raw_p50 = lat[N / 2] * 1e6;
	printf("  libipu directly      p50 %7.1f us, %9.0f requests/s\n", raw_p50, raw_rps);
	printf("  runtime cost         %.1f us per request at 1 in flight (libipu/runtime throughput ratio %.2f)\n",
	       1e6 / direct.rps1 - 1e6 / raw_rps, raw_rps / direct.rps1);
	ipurt_runner_destroy(r);
	return 0;
}
