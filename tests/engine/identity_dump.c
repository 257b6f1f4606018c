/* SPDX-License-Identifier: MIT */
/*
 * identity_dump.c - run a fixed set of vertices (MATMUL and CONV2D at
 * every kernel variant the host has, and the elementwise, reduction and
 * pooling codelets) on seeded inputs and write every output to stdout.
 *
 * Linked twice: with the engine as this tree builds it and as QEMU's meson
 * build compiles it (check-qemu-flags-identity.sh compares the two dumps
 * byte for byte), because the in-process device and the QEMU device must
 * give bit-identical results from the same engine sources.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/half.h"

uint32_t ipu_isa_host(void);

struct vx {
	uint32_t id, nops, nparams;
	uint32_t dt[5], count[5];
	uint32_t params[20];
};

static uint64_t rng_state;

static float rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (float)(rng_state >> 40) / (float)(1u << 24) * 2.0f - 1.0f;
}

/* Runs v with isa; writes its output (CONV2D, *_FP8 products: operand 2,
 * else the last). */
static int run(const struct vx *x, uint32_t isa, uint64_t seed)
{
	const struct ipu_codelet *c = ipu_codelet_get(x->id);
	struct ipux_operand ops[5];
	struct ipu_vertex_ctx v;
	size_t off = 0, i, j;
	uint8_t *mem;
	char why[256];

	for (i = 0; i < x->nops; i++) {
		ops[i] = (struct ipux_operand){ (uint32_t)off, x->count[i], (uint8_t)x->dt[i], { 0 } };
		off += ((size_t)x->count[i] * ipux_dtype_size(x->dt[i]) + 63) & ~(size_t)63;
	}
	mem = aligned_alloc(64, off + 64);
	if (!mem) {
		fprintf(stderr, "identity_dump: out of memory\n");
		return 1;
	}
	rng_state = seed;
	for (i = 0; i < x->nops; i++)
		for (j = 0; j < x->count[i]; j++) {
			uint8_t *p = mem + ops[i].offset;

			if (x->dt[i] == IPUX_DT_FP8_143 || x->dt[i] == IPUX_DT_FP8_152)
				p[j] = (uint8_t)(rnd() * 127.0f + 128.0f);
			else if (x->dt[i] == IPUX_DT_I8) /* fp8 channel scales */
				((int8_t *)p)[j] = (int8_t)(rnd() * 12.0f);
			else if (x->dt[i] == IPUX_DT_F16)
				((uint16_t *)p)[j] = ipu_f32_to_f16(rnd() * 2.0f);
			else if (x->dt[i] == IPUX_DT_I64) /* SAMPLE's ids and keys */
				((int64_t *)p)[j] = (int64_t)(rnd() * 1000.0f);
			else
				((float *)p)[j] = rnd() * 2.0f;
		}
	v = (struct ipu_vertex_ctx){ NULL, ops, x->params, x->nops, x->nparams, isa };
	if (c->check(&v, why, sizeof(why))) {
		fprintf(stderr, "identity_dump: %s refused: %s\n", c->name, why);
		free(mem);
		return 1;
	}
	v.mem = mem;
	c->run(&v);
	i = (x->id == IPUX_CL_CONV2D || x->id == IPUX_CL_CONV2D_FP8 ||
	     x->id == IPUX_CL_MATMUL_FP8) ? 2 : x->nops - 1;
	fwrite(mem + ops[i].offset, ipux_dtype_size(x->dt[i]), x->count[i], stdout);
	free(mem);
	return 0;
}

int main(void)
{
	enum { F = IPUX_DT_F32, H = IPUX_DT_F16 };
	static const struct vx mm[] = {
		/* blocked, skinny (AXPY, DOT), f16, batch, accumulate */
		{ IPUX_CL_MATMUL, 3, 5, { F, F, F }, { 29 * 342, 342 * 38, 29 * 38 }, { 1, 29, 38, 342, 0 } },
		{ IPUX_CL_MATMUL, 3, 5, { F, F, F }, { 784, 784 * 512, 512 }, { 1, 1, 512, 784, 0 } },
		{ IPUX_CL_MATMUL, 3, 5, { F, F, F }, { 30 * 200, 200 * 5, 30 * 5 }, { 1, 30, 5, 200, 0 } },
		/* skinny with short K and few columns (split 1x1 convolutions), f16 and transposed */
		{ IPUX_CL_MATMUL, 3, 5, { F, F, F }, { 2 * 5 * 10, 2 * 10 * 4, 2 * 5 * 4 }, { 2, 5, 4, 10, 1 } },
		{ IPUX_CL_MATMUL, 3, 5, { H, H, H }, { 9 * 27, 27 * 7, 9 * 7 }, { 1, 9, 7, 27, 2 } },
		{ IPUX_CL_MATMUL, 3, 5, { F, F, F }, { 40, 40 * 8, 8 }, { 1, 1, 8, 40, 0 } },
		{ IPUX_CL_MATMUL, 3, 5, { H, H, H }, { 2 * 70 * 300, 2 * 300 * 90, 2 * 70 * 90 }, { 2, 70, 90, 300, 1 } },
		{ IPUX_CL_MATMUL, 3, 5, { F, F, F }, { 64 * 256, 64 * 256, 64 * 64 }, { 1, 64, 64, 256, 2 } },
		/* direct convolution: few and many channels, strides, groups, f16 */
		{ IPUX_CL_CONV2D, 4, 17, { F, F, F, F }, { 512 * 49, 4 * 512 * 9, 4 * 49, 4 },
		  { 1, 512, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 } },
		{ IPUX_CL_CONV2D, 4, 17, { F, F, F, F }, { 256 * 196, 8 * 256 * 9, 8 * 49, 8 },
		  { 1, 256, 14, 14, 8, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1, 1, 0 } },
		{ IPUX_CL_CONV2D, 4, 17, { F, F, F, F }, { 3 * 19 * 64, 16 * 3 * 49, 16 * 7 * 32, 16 },
		  { 1, 3, 19, 64, 16, 7, 7, 2, 2, 0, 3, 0, 3, 1, 1, 1, 0 } },
		{ IPUX_CL_CONV2D, 3, 17, { H, H, H }, { 2 * 12 * 99, 6 * 4 * 6, 2 * 6 * 4 * 11 },
		  { 2, 12, 9, 11, 6, 3, 2, 2, 1, 1, 0, 1, 1, 2, 1, 3, 1 } },
		/* depthwise rows (one output row: their own path), f32 and f16, stride 2 */
		{ IPUX_CL_CONV2D, 4, 17, { F, F, F, F }, { 4 * 3 * 112, 4 * 9, 4 * 112, 4 },
		  { 1, 4, 3, 112, 4, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 4, 0 } },
		{ IPUX_CL_CONV2D, 4, 17, { H, H, H, H }, { 5 * 3 * 29, 5 * 9, 5 * 15, 5 },
		  { 1, 5, 3, 29, 5, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1, 5, 1 } },
		/* im2col fallback (a row too wide for the direct engine) */
		{ IPUX_CL_CONV2D, 3, 17, { F, F, F }, { 2 * 3 * 3000, 9 * 2 * 3, 9 * 3 * 3000 },
		  { 1, 2, 3, 3000, 9, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 } },
	};
	static const struct vx other[] = {
		{ IPUX_CL_BINARY, 3, 5, { F, F, F }, { 4096, 4096, 4096 }, { IPUX_BIN_MUL, 1, 4096, 1, 1 } },
		{ IPUX_CL_SOFTMAX, 2, 4, { F, F }, { 4096, 4096 }, { 16, 256, 1, 0 } },
		{ IPUX_CL_NORM, 4, 5, { F, F, F, F }, { 4096, 256, 256, 4096 }, { 16, 256, 0x3727c5ac, 0, 0 } },
		{ IPUX_CL_REDUCE, 2, 4, { F, F }, { 4096, 128 }, { IPUX_RED_SUM, 128, 32, 1 } },
		{ IPUX_CL_POOL2D, 2, 15, { F, F }, { 8 * 32 * 32, 8 * 16 * 16 },
		  { IPUX_POOL_AVG, 8, 32, 32, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 0 } },
		{ IPUX_CL_POOL2D, 2, 15, { F, F }, { 8 * 32 * 32, 8 * 16 * 16 },
		  { IPUX_POOL_MAX, 8, 32, 32, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 0 } },
		{ IPUX_CL_CAST_FP8, 2, 1, { F, IPUX_DT_FP8_143 }, { 4096, 4096 }, { (uint32_t)-2 } },
		{ IPUX_CL_CAST_FP8, 2, 1, { IPUX_DT_FP8_152, H }, { 4096, 4096 }, { 3 } },
		{ IPUX_CL_MATMUL_FP8, 3, 7, { H, IPUX_DT_FP8_143, F }, { 29 * 342, 342 * 38, 29 * 38 },
		  { 1, 29, 38, 342, 0, 0, (uint32_t)-5 } },
		{ IPUX_CL_MATMUL_FP8, 3, 7, { IPUX_DT_FP8_143, IPUX_DT_FP8_152, H }, { 2 * 30 * 200, 300 * 200, 2 * 30 * 300 },
		  { 2, 30, 300, 200, IPUX_MM_TRANS_B | IPUX_MM_B_SHARED, 1, (uint32_t)-3 } },
		{ IPUX_CL_CONV2D_FP8, 4, 19, { F, IPUX_DT_FP8_143, F, F }, { 256 * 196, 8 * 256 * 9, 8 * 49, 8 },
		  { 1, 256, 14, 14, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, (uint32_t)-6 } },
		{ IPUX_CL_CONV2D_FP8, 3, 19, { IPUX_DT_FP8_152, IPUX_DT_FP8_143, H }, { 2 * 12 * 99, 6 * 4 * 6, 2 * 6 * 4 * 11 },
		  { 2, 12, 9, 11, 6, 3, 2, 2, 1, 1, 0, 1, 1, 2, 1, 3, 1, 2, (uint32_t)-4 } },
		/* per-channel weight scales: B's columns, A's rows, a conv's channels */
		{ IPUX_CL_MATMUL_FP8, 4, 7, { H, IPUX_DT_FP8_143, F, IPUX_DT_I8 }, { 29 * 342, 342 * 38, 29 * 38, 38 },
		  { 1, 29, 38, 342, IPUX_MM_SCALES_B, 0, 0 } },
		{ IPUX_CL_MATMUL_FP8, 4, 7, { IPUX_DT_FP8_143, IPUX_DT_FP8_152, H, IPUX_DT_I8 }, { 30 * 200, 2 * 300 * 200, 2 * 30 * 300, 30 },
		  { 2, 30, 300, 200, IPUX_MM_TRANS_B | IPUX_MM_A_SHARED | IPUX_MM_SCALES_A, 0, 1 } },
		{ IPUX_CL_CONV2D_FP8, 5, 19, { F, IPUX_DT_FP8_143, F, F, IPUX_DT_I8 }, { 256 * 196, 8 * 256 * 9, 8 * 49, 8, 8 },
		  { 1, 256, 14, 14, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, IPUX_CONV_CHANNEL_SCALES, 0, 0 } },
		/* a generation step's draw: exp() in double on both builds */
		{ IPUX_CL_SAMPLE, 5, 2, { H, IPUX_DT_I64, F, IPUX_DT_I64, IPUX_DT_I64 },
		  { 64 * 64, 64 * 64, 64 * 2, 64 * 3, 64 }, { 64, 64 } },
	};
	uint32_t isa, op, host = ipu_isa_host();
	size_t i;
	int rc = 0;

	for (isa = IPU_ISA_GENERIC; isa <= host; isa++)
		for (i = 0; i < sizeof(mm) / sizeof(mm[0]); i++)
			rc |= run(&mm[i], isa, 1000 + i);
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		rc |= run(&other[i], IPU_ISA_AUTO, 2000 + i);
	for (op = 0; op < IPUX_UN_COUNT; op++) {
		struct vx u = { IPUX_CL_UNARY, 2, 1, { F, F }, { 4096, 4096 }, { op } };

		if (op == IPUX_UN_NOT)
			continue;
		rc |= run(&u, IPU_ISA_AUTO, 3000 + op);
	}
	return rc;
}
