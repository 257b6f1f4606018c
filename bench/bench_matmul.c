// SPDX-License-Identifier: MIT
/*
 * bench_matmul.c - engine matmul throughput for a large partitioned matmul
 * (weights frozen and spread over all tiles, A streamed in, C streamed out)
 * on the in-process device, beside OpenBLAS sgemm on the same machine with
 * the same number of threads, in the same run.
 *
 * usage: bench_matmul [M N K [iterations]]   (default 512 1024 1024 10)
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipu/ipu.h"
#include "load_image.h"
#include "ipu/ops.h"

void openblas_set_num_threads(int num_threads);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	uint64_t M = 512, N = 1024, K = 1024;
	int iters = 10, i, threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	struct ipu_graph *g;
	struct ipu_device *d;
	struct ipu_mm_args a = { 0 };
	struct ipu_mm_plan plan;
	struct ipu_graph_stats st;
	struct ipu_counters k;
	float *A, *B, *C, *C2;
	void *img;
	size_t len;
	char err[512];
	double t = 0, ipu_s, blas_s, maxdiff = 0;
	uint64_t dims[2];
	ipu_tensor x, y;
	ipu_step seq;

	if (argc >= 4) {
		M = strtoull(argv[1], NULL, 0);
		N = strtoull(argv[2], NULL, 0);
		K = strtoull(argv[3], NULL, 0);
	}
	if (argc >= 5)
		iters = atoi(argv[4]);
	A = malloc(M * K * 4);
	B = malloc(K * N * 4);
	C = malloc(M * N * 4);
	C2 = malloc(M * N * 4);
	if (!A || !B || !C || !C2)
		return 1;
	for (i = 0; i < (int)(M * K); i++)
		A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
	for (i = 0; i < (int)(K * N); i++)
		B[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;

	g = ipu_graph_create(1472, 624 * 1024);
	dims[0] = M;
	dims[1] = K;
	x = ipu_graph_add_tensor(g, "A", IPUX_DT_F32, 2, dims);
	ipu_graph_map_linear(g, x, 0, 1472, K);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, ipu_graph_add_stream(g, "A", IPUX_STREAM_H2D,
									       (uint32_t)(M * K * 4)),
						      &(struct ipu_slice){ x, 0, M * K }, 1));
	a.a = x;
	a.b = IPU_GRAPH_INVALID;
	a.b_data = B;
	a.bias = IPU_GRAPH_INVALID;
	a.act = -1;
	a.M = M;
	a.N = N;
	a.K = K;
	a.ntiles = 1472;
	a.name = "mm";
	y = ipu_ops_matmul(g, seq, &a, &plan);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, ipu_graph_add_stream(g, "C", IPUX_STREAM_D2H,
									       (uint32_t)(M * N * 4)),
						      &(struct ipu_slice){ y, 0, M * N }, 1));
	ipu_graph_add_program(g, seq);
	if (ipu_graph_compile(g, &img, &len, &st)) {
		fprintf(stderr, "bench_matmul: %s\n", ipu_graph_error(g));
		return 1;
	}
	ipu_graph_destroy(g);
	if (ipu_open("model", &d, err, sizeof(err)) || test_load_image(d, img, len, err, sizeof(err))) {
		fprintf(stderr, "bench_matmul: %s\n", err);
		return 1;
	}
	free(img);
	/* warm-up, then timed runs */
	for (i = -1; i < iters; i++) {
		if (i == 0)
			t = now();
		ipu_stream_submit(d, 0, A, M * K * 4, 0);
		ipu_stream_submit(d, 1, C, M * N * 4, 0);
		if (ipu_run_sync(d, 0, err, sizeof(err))) {
			fprintf(stderr, "bench_matmul: %s\n", err);
			return 1;
		}
	}
	ipu_s = (now() - t) / iters;
	ipu_counters(d, &k);
	ipu_close(d);

	openblas_set_num_threads(threads);
	for (i = -1; i < iters; i++) {
		if (i == 0)
			t = now();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, A,
			    (int)K, B, (int)N, 0.0f, C2, (int)N);
	}
	blas_s = (now() - t) / iters;
	for (i = 0; i < (int)(M * N); i++) {
		double dd = C[i] > C2[i] ? C[i] - C2[i] : C2[i] - C[i];

		if (dd > maxdiff)
			maxdiff = dd;
	}
	printf("matmul [%llu x %llu] x [%llu x %llu], f32, %d threads\n", (unsigned long long)M,
	       (unsigned long long)K, (unsigned long long)K, (unsigned long long)N, threads);
	printf("  split M/N/K %u/%u/%u over %u tiles, %llu MACs on the busiest tile\n", plan.mp,
	       plan.np, plan.kp, plan.mp * plan.np * plan.kp, (unsigned long long)plan.macs_per_tile);
	printf("  engine (in-process device, whole program incl. streams and exchanges): %8.2f ms  %7.2f GFLOP/s\n",
	       ipu_s * 1e3, 2.0 * M * N * K / ipu_s * 1e-9);
	printf("  OpenBLAS cblas_sgemm:                                               %8.2f ms  %7.2f GFLOP/s\n",
	       blas_s * 1e3, 2.0 * M * N * K / blas_s * 1e-9);
	printf("  ratio engine/OpenBLAS: %.2f   max |diff| %.3g   modelled IPU time %.1f us/run\n",
	       blas_s / ipu_s, maxdiff, (double)k.cycles / (iters + 1) / 1330.0);
	free(A);
	free(B);
	free(C);
	free(C2);
	return 0;
}
