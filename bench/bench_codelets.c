/* SPDX-License-Identifier: MIT */
/*
 * bench_codelets.c - single-thread throughput of the MATMUL codelet
 * (every instruction-set level the host has) and of a few other codelets,
 * beside single-threaded OpenBLAS sgemm.  Usage: bench_codelets [seconds]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codelet.h"
#include "half.h"
#include "../qemu-device/engine/codelets/matmul.h"

#include <cblas.h>

void openblas_set_num_threads(int num_threads);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bcase {
	uint32_t M, N, K;
	uint32_t dt;
};

static double bench_mm(const struct bcase *c, int level, double secs)
{
	size_t es = c->dt == IPUX_DT_F16 ? 2 : 4;
	size_t na = (size_t)c->M * c->K, nb = (size_t)c->K * c->N,
	       nc = (size_t)c->M * c->N;
	size_t bytes = (na + nb) * es + nc * es + 256;
	uint8_t *mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	struct ipux_operand ops[3];
	uint32_t params[5] = { 1, c->M, c->N, c->K, 0 };
	struct ipu_vertex_ctx v = { mem, ops, params, 3, 5 };
	size_t i, off = 0;
	double t0, t, flops = 2.0 * c->M * c->N * c->K;
	long reps = 0;

	ops[0] = (struct ipux_operand){ 0, (uint32_t)na, (uint8_t)c->dt, { 0 } };
	off = (na * es + 63) & ~(size_t)63;
	ops[1] = (struct ipux_operand){ (uint32_t)off, (uint32_t)nb, (uint8_t)c->dt, { 0 } };
	off = (off + nb * es + 63) & ~(size_t)63;
	ops[2] = (struct ipux_operand){ (uint32_t)off, (uint32_t)nc, (uint8_t)c->dt, { 0 } };
	for (i = 0; i < bytes; i++)
		mem[i] = 0;
	for (i = 0; i < na + nb; i++) {
		float x = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;

		if (c->dt == IPUX_DT_F16)
			((uint16_t *)mem)[i < na ? i : ops[1].offset / 2 + (i - na)] = ipu_f32_to_f16(x);
		else
			((float *)mem)[i < na ? i : ops[1].offset / 4 + (i - na)] = x;
	}
	ipu_mm_run_level(&v, level);
	t0 = now();
	do {
		ipu_mm_run_level(&v, level);
		reps++;
		t = now() - t0;
	} while (t < secs);
	free(mem);
	return flops * reps / t * 1e-9;
}

static double bench_blas(const struct bcase *c, double secs)
{
	float *a = calloc((size_t)c->M * c->K, 4), *b = calloc((size_t)c->K * c->N, 4),
	      *cc = calloc((size_t)c->M * c->N, 4);
	double t0, t, flops = 2.0 * c->M * c->N * c->K;
	long reps = 0;

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->M, c->N, c->K,
		    1, a, c->K, b, c->N, 0, cc, c->N);
	t0 = now();
	do {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->M, c->N,
			    c->K, 1, a, c->K, b, c->N, 0, cc, c->N);
		reps++;
		t = now() - t0;
	} while (t < secs);
	free(a);
	free(b);
	free(cc);
	return flops * reps / t * 1e-9;
}

int main(int argc, char **argv)
{
	static const struct bcase cases[] = {
		{ 64, 64, 64, IPUX_DT_F32 },   { 256, 256, 256, IPUX_DT_F32 },
		{ 512, 512, 512, IPUX_DT_F32 }, { 16, 512, 784, IPUX_DT_F32 },
		{ 256, 256, 256, IPUX_DT_F16 },
	};
	static const char *const lname[] = { "generic", "avx2", "avx512" };
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	int maxl = ipu_mm_max_level(), l;
	size_t i;

	openblas_set_num_threads(1);
	printf("MATMUL single thread, GFLOP/s\n");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bcase *c = &cases[i];

		printf("%4ux%4ux%4u %s:", c->M, c->N, c->K,
		       c->dt == IPUX_DT_F16 ? "f16" : "f32");
		for (l = 0; l <= maxl; l++)
			printf("  %s %6.1f", lname[l], bench_mm(c, l, secs));
		if (c->dt == IPUX_DT_F32)
			printf("  openblas-sgemm %6.1f", bench_blas(c, secs));
		printf("\n");
	}
	return 0;
}
