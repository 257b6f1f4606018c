// SPDX-License-Identifier: MIT
/*
 * gen_exe_corpus.c - seed corpus for fuzz_exe: small valid executables
 * built with the graph builder, covering every section and step kind and
 * a spread of codelets.  Usage: gen_exe_corpus DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/graph.h"

static int write_image(struct ipu_graph *g, const char *dir, const char *name)
{
	void *img;
	size_t len;
	char path[512];
	FILE *f;

	if (ipu_graph_compile(g, &img, &len, NULL)) {
		fprintf(stderr, "%s: %s\n", name, ipu_graph_error(g));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(img, 1, len, f) != len) {
		perror(path);
		free(img);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	free(img);
	return 0;
}

/* in -> unary(op) on 2 tiles -> exchange -> out */
static int gen_unary(const char *dir, uint32_t op, const char *name)
{
	struct ipu_graph *g = ipu_graph_create(4, 16384);
	uint64_t n = 24;
	ipu_tensor x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	ipu_tensor y = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &n);
	ipu_tensor z = ipu_graph_add_tensor(g, "z", IPUX_DT_F32, 1, &n);
	uint32_t cs, si, so, t;
	ipu_step seq;
	int rc;

	ipu_graph_map_linear(g, x, 0, 2, 4);
	ipu_graph_map_linear(g, y, 0, 2, 4);
	ipu_graph_map_linear(g, z, 2, 2, 4);
	cs = ipu_graph_add_compute_set(g, "u");
	for (t = 0; t < 2; t++) {
		struct ipu_slice ops[2] = { { x, t * 12, 12 }, { y, t * 12, 12 } };
		uint32_t p[3] = { op, 0x3f000000u, 0x3f800000u };

		ipu_graph_add_vertex(g, cs, IPUX_CL_UNARY, ops, 2, p, 3);
	}
	si = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, 96);
	so = ipu_graph_add_stream(g, "z", IPUX_STREAM_D2H, 96);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, si, &(struct ipu_slice){ x, 0, n }, 1));
	ipu_step_append(g, seq, ipu_step_execute(g, cs));
	ipu_step_append(g, seq, ipu_step_copy(g, (struct ipu_slice){ y, 0, n },
					      (struct ipu_slice){ z, 0, n }));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, so, &(struct ipu_slice){ z, 0, n }, 1));
	ipu_graph_add_program(g, seq);
	rc = write_image(g, dir, name);
	ipu_graph_destroy(g);
	return rc;
}

/* matmul + binary broadcast + reduce + softmax, repeat and switch */
static int gen_mixed(const char *dir)
{
	struct ipu_graph *g = ipu_graph_create(4, 16384);
	uint64_t da[2] = { 4, 8 }, db[2] = { 8, 6 }, dc[2] = { 4, 6 }, d6 = 6, d4 = 4, one = 1;
	ipu_tensor a = ipu_graph_add_tensor(g, "a", IPUX_DT_F32, 2, da);
	ipu_tensor b = ipu_graph_add_tensor(g, "b", IPUX_DT_F16, 2, db);
	ipu_tensor bf = ipu_graph_add_tensor(g, "bf", IPUX_DT_F32, 2, db);
	ipu_tensor c = ipu_graph_add_tensor(g, "c", IPUX_DT_F32, 2, dc);
	ipu_tensor bias = ipu_graph_add_tensor(g, "bias", IPUX_DT_F32, 1, &d6);
	ipu_tensor r = ipu_graph_add_tensor(g, "r", IPUX_DT_F32, 1, &d4);
	ipu_tensor sel = ipu_graph_add_tensor(g, "sel", IPUX_DT_I32, 1, &one);
	uint32_t cs_cast, cs_mm, cs_bias, cs_sm, cs_red, si, so, ss;
	ipu_step seq, cases[1];
	int rc;

	ipu_graph_map_tile(g, a, 1);
	ipu_graph_map_tile(g, b, 1);
	ipu_graph_map_tile(g, bf, 1);
	ipu_graph_map_tile(g, c, 1);
	ipu_graph_map_tile(g, bias, 1);
	ipu_graph_map_tile(g, r, 1);
	ipu_graph_map_tile(g, sel, 0);
	{
		uint16_t bv[48];
		float biasv[6] = { 1, 2, 3, 4, 5, 6 };
		int i;

		for (i = 0; i < 48; i++)
			bv[i] = (uint16_t)(0x3c00 + i);
		ipu_graph_set_init(g, b, bv, sizeof(bv));
		ipu_graph_set_init(g, bias, biasv, sizeof(biasv));
	}
	cs_cast = ipu_graph_add_compute_set(g, "cast");
	ipu_graph_add_vertex(g, cs_cast, IPUX_CL_CAST,
			     (struct ipu_slice[]){ { b, 0, 48 }, { bf, 0, 48 } }, 2, NULL, 0);
	cs_mm = ipu_graph_add_compute_set(g, "mm");
	ipu_graph_add_vertex(g, cs_mm, IPUX_CL_MATMUL,
			     (struct ipu_slice[]){ { a, 0, 32 }, { bf, 0, 48 }, { c, 0, 24 } }, 3,
			     (uint32_t[]){ 1, 4, 6, 8, 0 }, 5);
	cs_bias = ipu_graph_add_compute_set(g, "bias");
	ipu_graph_add_vertex(g, cs_bias, IPUX_CL_BINARY,
			     (struct ipu_slice[]){ { c, 0, 24 }, { bias, 0, 6 }, { c, 0, 24 } }, 3,
			     (uint32_t[]){ IPUX_BIN_ADD, 2, 4, 6, 6, 1, 0, 1 }, 8);
	cs_sm = ipu_graph_add_compute_set(g, "softmax");
	ipu_graph_add_vertex(g, cs_sm, IPUX_CL_SOFTMAX,
			     (struct ipu_slice[]){ { c, 0, 24 }, { c, 0, 24 } }, 2,
			     (uint32_t[]){ 4, 6, 1, 0 }, 4);
	cs_red = ipu_graph_add_compute_set(g, "reduce");
	ipu_graph_add_vertex(g, cs_red, IPUX_CL_REDUCE,
			     (struct ipu_slice[]){ { c, 0, 24 }, { r, 0, 4 } }, 2,
			     (uint32_t[]){ IPUX_RED_MAX, 4, 6, 1 }, 4);
	ss = ipu_graph_add_stream(g, "sel", IPUX_STREAM_H2D, 4);
	si = ipu_graph_add_stream(g, "a", IPUX_STREAM_H2D, 128);
	so = ipu_graph_add_stream(g, "r", IPUX_STREAM_D2H, 16);
	/* program 0: load (cast weights) */
	ipu_graph_add_program(g, ipu_step_execute(g, cs_cast));
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, ss, &(struct ipu_slice){ sel, 0, 1 }, 1));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, si, &(struct ipu_slice){ a, 0, 32 }, 1));
	ipu_step_append(g, seq, ipu_step_repeat(g, 2, ipu_step_execute(g, cs_mm)));
	cases[0] = ipu_step_execute(g, cs_bias);
	ipu_step_append(g, seq, ipu_step_switch(g, sel, cases, 1, ipu_step_sync(g, IPUX_SYNC_INTERNAL)));
	ipu_step_append(g, seq, ipu_step_execute(g, cs_sm));
	ipu_step_append(g, seq, ipu_step_execute(g, cs_red));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, so, &(struct ipu_slice){ r, 0, 4 }, 1));
	ipu_graph_add_program(g, seq);
	rc = write_image(g, dir, "mixed");
	ipu_graph_destroy(g);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	rc |= gen_unary(argv[1], IPUX_UN_RELU, "relu");
	rc |= gen_unary(argv[1], IPUX_UN_GELU, "gelu");
	rc |= gen_unary(argv[1], IPUX_UN_CLIP, "clip");
	rc |= gen_mixed(argv[1]);
	return rc ? 1 : 0;
}
