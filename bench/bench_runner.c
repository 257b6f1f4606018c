// SPDX-License-Identifier: MIT
/*
 * bench_runner.c - ModelRunner host overhead on a tiny model (the affine
 * test model: 12 floats in, 12 out): per-request latency p50/p99 with one
 * request at a time, and requests/s with 1 and 16 in flight; beside the
 * same work done directly on libipu (submit + run + wait), so the ratio is
 * what the runtime's layers (validation, QueueManager threads) cost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipu/runtime.h"
#include "rt_models.h"

#define N 20000

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

int main(void)
{
	char path[256], err[512];
	struct ipurt_runner *r;
	struct ipurt_future *fs[16] = { 0 };
	float x[12] = { 1, 2, 3 }, y[12];
	struct ipurt_tensor in = { "X", IPURT_DT_F32, 2, { 4, 3 }, x };
	struct ipurt_tensor out = { "Y", IPURT_DT_F32, 2, { 4, 3 }, y };
	static double lat[N];
	double t0, rps1, rps16, raw_p50, raw_rps;
	struct ipu_device *dev;
	int i;

	snprintf(path, sizeof(path), "/tmp/bench-runner-%d.ipuef", (int)getpid());
	if (rt_make_affine(path) || ipurt_runner_create(path, NULL, &r, err, sizeof(err))) {
		fprintf(stderr, "bench_runner: %s\n", err);
		return 1;
	}
	unlink(path);
	for (i = 0; i < 1000; i++)
		ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));
	t0 = now();
	for (i = 0; i < N; i++) {
		double s = now();

		if (ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err))) {
			fprintf(stderr, "bench_runner: %s\n", err);
			return 1;
		}
		lat[i] = now() - s;
	}
	rps1 = N / (now() - t0);
	qsort(lat, N, sizeof(lat[0]), cmp);
	printf("ModelRunner, tiny model (12 f32 in/out), in-process device\n");
	printf("  execute latency      p50 %7.1f us  p99 %7.1f us\n", lat[N / 2] * 1e6,
	       lat[N * 99 / 100] * 1e6);
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
	rps16 = N / (now() - t0);
	printf("  requests/s           %9.0f with 1 in flight, %9.0f with 16 in flight\n", rps1, rps16);
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
	       1e6 / rps1 - 1e6 / raw_rps, raw_rps / rps1);
	ipurt_runner_destroy(r);
	return 0;
}
