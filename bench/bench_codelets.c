/* SPDX-License-Identifier: MIT */
/*
 * bench_codelets.c - single-thread throughput of the MATMUL and CONV2D
 * codelets (every instruction-set level the host has) and of a few other
 * codelets, beside single-threaded OpenBLAS sgemm (for CONV2D: im2col +
 * sgemm on the same shape, per group when grouped).
 * Usage: bench_codelets [seconds [NAME]]: with NAME, only the CONV2D cases
 * whose name contains it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/codelet.h"
#include "ipu/half.h"
#include "../engine/codelets/matmul.h"

#include <cblas.h>

void openblas_set_num_threads(int num_threads);

/*
 * Thread CPU time, not wall time: the figures stay meaningful on a machine
 * shared with other jobs (everything here runs in this one thread).
 */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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


/* ------------------------------------------------------------ CONV2D */

struct cbench {
	const char *name;
	uint32_t p[17];	/* CONV2D params */
};

static uint32_t conv_od(uint32_t in, uint32_t pa, uint32_t pb, uint32_t k,
			uint32_t s, uint32_t d)
{
	return (in + pa + pb - d * (k - 1) - 1) / s + 1;
}

/* GFLOP/s of one CONV2D vertex (with bias) at `level`, direct or im2col. */
static double bench_conv(const struct cbench *b, int level, int im2col,
			 double secs)
{
	const uint32_t *p = b->p;
	uint32_t OH = conv_od(p[2], p[9], p[11], p[5], p[7], p[13]);
	uint32_t OW = conv_od(p[3], p[10], p[12], p[6], p[8], p[14]);
	uint32_t cin_g = p[1] / p[15];
	uint32_t cnt[4] = { p[0] * p[1] * p[2] * p[3], p[4] * cin_g * p[5] * p[6],
			    p[0] * p[4] * OH * OW, p[4] };
	const struct ipu_codelet *c = ipu_codelet_get(IPUX_CL_CONV2D);
	struct ipux_operand ops[4];
	struct ipu_vertex_ctx v;
	size_t off = 0, i;
	uint8_t *mem;
	char why[256];
	double t0, t, flops = 2.0 * cnt[2] * cin_g * p[5] * p[6];
	long reps = 0;
	size_t batch = 1;

	for (i = 0; i < 4; i++) {
		ops[i] = (struct ipux_operand){ (uint32_t)off, cnt[i], IPUX_DT_F32, { 0 } };
		off += ((size_t)cnt[i] * 4 + 63) & ~(size_t)63;
	}
	mem = aligned_alloc(64, off);
	for (i = 0; i < off / 4; i++)
		((float *)mem)[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
	v = (struct ipu_vertex_ctx){ NULL, ops, p, 4, 17 };
	if (c->check(&v, why, sizeof(why))) {
		printf("%s: check failed: %s\n", b->name, why);
		free(mem);
		return 0;
	}
	v.mem = mem;
	ipu_conv_run_level(&v, level, im2col);
	t0 = now();
	/* the thread CPU clock is a system call: read it every `batch` runs */
	do {
		for (i = 0; i < batch; i++)
			ipu_conv_run_level(&v, level, im2col);
		reps += (long)batch;
		t = now() - t0;
		if (t < secs / 64 && batch < 4096)
			batch *= 2;
	} while (t < secs);
	free(mem);
	return flops * reps / t * 1e-9;
}

/*
 * The same convolution as im2col (timed) + OpenBLAS sgemm, as MLAS does;
 * grouped: one im2col and sgemm per group.
 */
static double bench_conv_blas(const struct cbench *b, double secs)
{
	const uint32_t *p = b->p;
	uint32_t OH = conv_od(p[2], p[9], p[11], p[5], p[7], p[13]);
	uint32_t OW = conv_od(p[3], p[10], p[12], p[6], p[8], p[14]);
	size_t G = p[15], K = (size_t)p[1] / G * p[5] * p[6], N = (size_t)OH * OW, M = p[4] / G;
	float *in = calloc((size_t)p[1] * p[2] * p[3], 4), *w = calloc(G * M * K, 4);
	float *col = calloc(K * N, 4), *out = calloc(G * M * N, 4);
	double t0 = 0, t, flops = 2.0 * G * M * N * K;
	long reps = 0;

	do {
		size_t k, oh, ow, g;

		if (reps == 1)
			t0 = now();
		for (g = 0; g < G; g++) {
		/* row by row, the output columns inside the input found once */
		for (k = 0; k < K; k++) {
			size_t ic = g * (K / (p[5] * p[6])) + k / (p[5] * p[6]);
			size_t kh = k / p[6] % p[5], kw = k % p[6];
			long woff = (long)(kw * p[14]) - (long)p[10];
			size_t lo = 0, hi = OW;

			while (lo < OW && (long)(lo * p[8]) + woff < 0)
				lo++;
			while (hi > lo && (long)((hi - 1) * p[8]) + woff >= (long)p[3])
				hi--;
			for (oh = 0; oh < OH; oh++) {
				long ih = (long)(oh * p[7] + kh * p[13]) - (long)p[9];
				float *d = col + k * N + oh * OW;

				if (ih < 0 || ih >= (long)p[2]) {
					memset(d, 0, OW * sizeof(float));
					continue;
				}
				{
					const float *r = in + (ic * p[2] + (size_t)ih) * p[3];

					for (ow = 0; ow < lo; ow++)
						d[ow] = 0;
					for (; ow < hi; ow++)
						d[ow] = r[(long)(ow * p[8]) + woff];
					for (; ow < OW; ow++)
						d[ow] = 0;
				}
			}
		}
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N,
			    (int)K, 1, w + g * M * K, (int)K, col, (int)N, 0, out + g * M * N, (int)N);
		}
		reps++;
		t = reps > 1 ? now() - t0 : 0;
	} while (t < secs);
	free(in);
	free(w);
	free(col);
	free(out);
	return flops * (reps - 1) / t * 1e-9;
}

static void bench_convs(double secs, int maxl, const char *only)
{
	/* per-tile vertices of ResNet-18 b1 as ipu-compile splits it, and whole layers */
	static const struct cbench cb[] = {
		{ "r18 512x7x7 ->4 3x3", { 1, 512, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 } },
		{ "r18 256x14x14 ->8 3x3", { 1, 256, 14, 14, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 } },
		{ "r18 256x14x14 ->8 3x3 s2", { 1, 256, 14, 14, 8, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1, 1, 0 } },
		{ "r18 3x19x224 ->16 7x7 s2", { 1, 3, 19, 224, 16, 7, 7, 2, 2, 0, 3, 0, 3, 1, 1, 1, 0 } },
		{ "r18 128x9x28 ->16 3x3", { 1, 128, 9, 28, 16, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 } },
		{ "r18 64x9x56 ->32 3x3", { 1, 64, 9, 56, 32, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 } },
		{ "layer 64x56x56 ->64 3x3", { 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 } },
		{ "layer 256x14x14 ->256 3x3", { 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 } },
		/* MobileNetV2 b1 depthwise vertices (one output row of a few channels) and layers */
		{ "mnv2 dw 1x3x112 3x3", { 1, 1, 3, 112, 1, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 } },
		{ "mnv2 dw 4x3x14 3x3", { 1, 4, 3, 14, 4, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 4, 0 } },
		{ "mnv2 dw 4x3x112 3x3 s2", { 1, 4, 3, 112, 4, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1, 4, 0 } },
		{ "mnv2 dw 3x3x14 3x3 s2", { 1, 3, 3, 14, 3, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1, 3, 0 } },
		{ "mnv2 dw 5x3x7 3x3", { 1, 5, 3, 7, 5, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 5, 0 } },
		{ "mnv2 dw 1x8x14 3x3", { 1, 1, 8, 14, 1, 3, 3, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0 } },
		/* MobileNetV2 b1 depthwise vertices of whole channel planes (since the blocked products) */
		{ "mnv2 dw 4x14x14 3x3", { 1, 4, 14, 14, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 0 } },
		{ "mnv2 dw 12x7x7 3x3", { 1, 12, 7, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 12, 0 } },
		{ "mnv2 dw 2x28x28 3x3", { 1, 2, 28, 28, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0 } },
		{ "mnv2 dw 1x56x56 3x3", { 1, 1, 56, 56, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 } },
		{ "mnv2 dw 1x30x112 3x3", { 1, 1, 30, 112, 1, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 } },
		{ "mnv2 dw 1x56x56 3x3 s2", { 1, 1, 56, 56, 1, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 1, 0 } },
		{ "mnv2 dw 6x14x14 3x3 s2", { 1, 6, 14, 14, 6, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 6, 0 } },
		{ "mnv2 dw 1x57x112 3x3 s2", { 1, 1, 57, 112, 1, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1, 1, 0 } },
		{ "dw layer 32x112x112 3x3", { 1, 32, 112, 112, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 0 } },
		{ "dw layer 144x56x56 3x3 s2", { 1, 144, 56, 56, 144, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 144, 0 } },
	};
	static const char *const lname[] = { "generic", "avx2", "avx512" };
	size_t i;
	int l;

	printf("\nCONV2D f32 with bias, single thread, GFLOP/s: direct engine per level, "
	       "im2col path (best level), im2col + OpenBLAS sgemm\n");
	for (i = 0; i < sizeof(cb) / sizeof(cb[0]); i++) {
		if (only && !strstr(cb[i].name, only))
			continue;
		printf("%-27s", cb[i].name);
		for (l = 0; l <= maxl; l++)
			printf("  %s %6.1f", lname[l], bench_conv(&cb[i], l, 0, secs));
		printf("  im2col %6.1f", bench_conv(&cb[i], maxl, 1, secs));
		printf("  openblas %6.1f\n", bench_conv_blas(&cb[i], secs));
	}
}

/* ------------------------------------------------------------ others */

struct vbench {
	const char *name;
	uint32_t id;
	uint32_t nops;
	uint32_t dt[4];
	uint32_t count[4];
	uint32_t nparams;
	uint32_t params[20];
};

/* Elements of operand 0 processed per nanosecond. */
static double bench_vertex(const struct vbench *b, double secs)
{
	const struct ipu_codelet *c = ipu_codelet_get(b->id);
	struct ipux_operand ops[4];
	size_t off = 0, i;
	uint8_t *mem;
	struct ipu_vertex_ctx v;
	char why[256];
	double t0, t;
	long reps = 0;

	for (i = 0; i < b->nops; i++) {
		ops[i] = (struct ipux_operand){ (uint32_t)off, b->count[i],
						(uint8_t)b->dt[i], { 0 } };
		off += ((size_t)b->count[i] * ipux_dtype_size(b->dt[i]) + 63) & ~(size_t)63;
	}
	mem = aligned_alloc(64, off + 64);
	for (i = 0; i < off; i += 2) { /* small positive f16/f32-ish values */
		mem[i] = (uint8_t)(i * 13);
		mem[i + 1] = 0x3c;
	}
	v = (struct ipu_vertex_ctx){ NULL, ops, b->params, b->nops, b->nparams };
	if (c->check(&v, why, sizeof(why))) {
		printf("%-28s check failed: %s\n", b->name, why);
		free(mem);
		return 0;
	}
	v.mem = mem;
	c->run(&v);
	t0 = now();
	do {
		c->run(&v);
		reps++;
		t = now() - t0;
	} while (t < secs);
	free(mem);
	return (double)b->count[0] * reps / t * 1e-9;
}

static void bench_others(double secs)
{
	enum { F = IPUX_DT_F32, H = IPUX_DT_F16, N = 32768 };
	static const struct vbench vb[] = {
		{ "COPY f32", IPUX_CL_COPY, 2, { F, F }, { N, N }, 0, { 0 } },
		{ "CAST f32->f16", IPUX_CL_CAST, 2, { F, H }, { N, N }, 0, { 0 } },
		{ "CAST f16->f32", IPUX_CL_CAST, 2, { H, F }, { N, N }, 0, { 0 } },
		{ "UNARY relu f32", IPUX_CL_UNARY, 2, { F, F }, { N, N }, 1, { IPUX_UN_RELU } },
		{ "UNARY relu f16", IPUX_CL_UNARY, 2, { H, H }, { N, N }, 1, { IPUX_UN_RELU } },
		{ "UNARY exp f32", IPUX_CL_UNARY, 2, { F, F }, { N, N }, 1, { IPUX_UN_EXP } },
		{ "UNARY gelu f32", IPUX_CL_UNARY, 2, { F, F }, { N, N }, 1, { IPUX_UN_GELU } },
		{ "UNARY sigmoid f16", IPUX_CL_UNARY, 2, { H, H }, { N, N }, 1, { IPUX_UN_SIGMOID } },
		{ "BINARY add f32", IPUX_CL_BINARY, 3, { F, F, F }, { N, N, N }, 5,
		  { IPUX_BIN_ADD, 1, N, 1, 1 } },
		{ "BINARY add f16", IPUX_CL_BINARY, 3, { H, H, H }, { N, N, N }, 5,
		  { IPUX_BIN_ADD, 1, N, 1, 1 } },
		{ "BINARY mul f32 bcast row", IPUX_CL_BINARY, 3, { F, F, F }, { N, 256, N }, 8,
		  { IPUX_BIN_MUL, 2, N / 256, 256, 256, 1, 0, 1 } },
		{ "BINARY add f32 bcast col", IPUX_CL_BINARY, 3, { F, F, F }, { N, 128, N }, 8,
		  { IPUX_BIN_ADD, 2, 128, N / 128, N / 128, 1, 1, 0 } },
		{ "REDUCE sum f32 last", IPUX_CL_REDUCE, 2, { F, F }, { N, 128 }, 4,
		  { IPUX_RED_SUM, 128, 256, 1 } },
		{ "REDUCE max f32 mid", IPUX_CL_REDUCE, 2, { F, F }, { N, 256 }, 4,
		  { IPUX_RED_MAX, 1, 128, 256 } },
		{ "SOFTMAX f32 last", IPUX_CL_SOFTMAX, 2, { F, F }, { N, N }, 4, { 128, 256, 1, 0 } },
		{ "SOFTMAX f16 last", IPUX_CL_SOFTMAX, 2, { H, H }, { N, N }, 4, { 128, 256, 1, 0 } },
		{ "NORM f32", IPUX_CL_NORM, 4, { F, F, F, F }, { N, 256, 256, N }, 5,
		  { 128, 256, 0x3727c5ac, 0, 0 } },
		{ "TRANSPOSE f32 256x128", IPUX_CL_TRANSPOSE, 2, { F, F }, { N, N }, 5,
		  { 2, 256, 128, 1, 0 } },
		{ "CONV2D f32 16->16 3x3 32x32", IPUX_CL_CONV2D, 3, { F, F, F },
		  { 16 * 32 * 32, 16 * 16 * 9, 16 * 32 * 32 }, 17,
		  { 1, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 } },
		{ "POOL2D max f32 3x3s2", IPUX_CL_POOL2D, 2, { F, F }, { N, 32 * 16 * 16 }, 15,
		  { 0, 32, 32, 32, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 0 } },
	};
	size_t i;

	printf("\nother codelets, single thread, G elements of operand 0 per second\n");
	for (i = 0; i < sizeof(vb) / sizeof(vb[0]); i++) {
		double r = bench_vertex(&vb[i], secs);

		if (vb[i].id == IPUX_CL_CONV2D)
			printf("%-28s %8.3f  (%.1f GFLOP/s)\n", vb[i].name, r,
			       r * 2.0 * 16 * 9);
		else
			printf("%-28s %8.3f\n", vb[i].name, r);
	}
}

int main(int argc, char **argv)
{
	static const struct bcase cases[] = {
		{ 64, 64, 64, IPUX_DT_F32 },   { 256, 256, 256, IPUX_DT_F32 },
		{ 512, 512, 512, IPUX_DT_F32 }, { 16, 512, 784, IPUX_DT_F32 }, { 1024, 1024, 1024, IPUX_DT_F32 }, { 128, 1024, 1024, IPUX_DT_F32 }, { 1, 1024, 1024, IPUX_DT_F32 }, { 1024, 1, 1024, IPUX_DT_F32 },
		{ 256, 256, 256, IPUX_DT_F16 },
	};
	static const char *const lname[] = { "generic", "avx2", "avx512" };
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	const char *only = argc > 2 ? argv[2] : NULL;
	int maxl = ipu_mm_max_level(), l;
	size_t i;

	openblas_set_num_threads(1);
	if (only) {
		bench_convs(secs, maxl, only);
		return 0;
	}
	printf("MATMUL single thread, GFLOP/s (per CPU-second of this thread)\n");
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
	bench_convs(secs, maxl, NULL);
	bench_others(secs);
	return 0;
}
