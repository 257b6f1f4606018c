// SPDX-License-Identifier: MIT
/*
 * state_model.c - an accumulator with device-resident state, built the way
 * the compiler builds models: graph builder -> image, then the .ipuef
 * writer with the states' regions taken from where the builder put them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/graph.h"
#include "ipu/ipuef.h"
#include "state_model.h"

#define TILES 4
#define TILE_MEM (16 * 1024)
#define MAX_REG 8

/* The regions of tensor t, in element order (pieces were mapped in order). */
static int regions_of(struct ipu_graph *g, ipu_tensor t, uint32_t elem,
		      struct ipuef_region *r, uint32_t *n)
{
	uint32_t tile, off;
	uint64_t b, e;

	for (*n = 0; *n < MAX_REG && !ipu_graph_tensor_location(g, t, *n, &tile, &b, &e, &off);
	     (*n)++)
		r[*n] = (struct ipuef_region){ tile, off, (uint32_t)((e - b) * elem) };
	return *n ? 0 : -1;
}

int sm_make_accumulator(const char *path)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = SM_N, one = 1;
	ipu_tensor x = ipu_graph_add_tensor(g, "X", IPUX_DT_F32, 1, &n);
	ipu_tensor acc = ipu_graph_add_tensor(g, "acc", IPUX_DT_F32, 1, &n);
	ipu_tensor cnt = ipu_graph_add_tensor(g, "count", IPUX_DT_F32, 1, &one);
	ipu_tensor k1 = ipu_graph_add_tensor(g, "one", IPUX_DT_F32, 1, &one);
	struct ipuef_region reg_acc[MAX_REG], reg_cnt[MAX_REG];
	struct ipuef_state states[2];
	struct ipuef_metadata m = { 0 };
	struct ipu_graph_stats st;
	struct ipuef_writer *w = NULL;
	static const float count0 = SM_COUNT0;
	float onev = 1.0f;
	uint32_t sx, sy, sw_acc, sr_acc, sw_cnt, sr_cnt, cs, half = SM_N / 2, nacc, ncnt;
	ipu_step main, wr, rd;
	char err[512];
	void *img = NULL;
	size_t len;
	int rc = -1;
	static const struct ipuef_program progs[3] = {
		{ "main", 0 }, { IPUEF_PROGRAM_STATE_WRITE, 1 }, { IPUEF_PROGRAM_STATE_READ, 2 }
	};
	const struct ipuef_anchor an[2] = {
		{ "X", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 1, { SM_N }, IPUEF_NO_BATCH_DIM, 0, 1 },
		{ "Y", IPURT_DT_F32, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 1, { SM_N }, IPUEF_NO_BATCH_DIM, 1, 1 },
	};
	const struct ipuef_tensor t = { "count", IPURT_DT_F32, 1, { 1 }, 0, &count0, 4 };

	/* liveness reuse on, as the compiler builds: state must survive it */
	ipu_graph_set_memory_reuse(g, 1);
	ipu_graph_map(g, x, 1, 0, half);
	ipu_graph_map(g, x, 2, half, SM_N);
	ipu_graph_map(g, acc, 1, 0, half);
	ipu_graph_map(g, acc, 2, half, SM_N);
	ipu_graph_map_tile(g, cnt, 3);
	ipu_graph_map_tile(g, k1, 3);
	ipu_graph_set_init(g, k1, &onev, 4);
	sx = ipu_graph_add_stream(g, "X", IPUX_STREAM_H2D, SM_N * 4);
	sy = ipu_graph_add_stream(g, "Y", IPUX_STREAM_D2H, SM_N * 4);
	sw_acc = ipu_graph_add_stream(g, "acc/write", IPUX_STREAM_H2D, SM_N * 4);
	sr_acc = ipu_graph_add_stream(g, "acc/read", IPUX_STREAM_D2H, SM_N * 4);
	sw_cnt = ipu_graph_add_stream(g, "count/write", IPUX_STREAM_H2D, 4);
	sr_cnt = ipu_graph_add_stream(g, "count/read", IPUX_STREAM_D2H, 4);
	cs = ipu_graph_add_compute_set(g, "accumulate");
	for (uint32_t p = 0; p < 2; p++) {
		struct ipu_slice ops[3] = { { acc, p * half, half },
					    { x, p * half, half },
					    { acc, p * half, half } };
		uint32_t par[5] = { IPUX_BIN_ADD, 1, half, 1, 1 };

		ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, ops, 3, par, 5);
	}
	{
		struct ipu_slice ops[3] = { { cnt, 0, 1 }, { k1, 0, 1 }, { cnt, 0, 1 } };
		uint32_t par[5] = { IPUX_BIN_ADD, 1, 1, 1, 1 };

		ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, ops, 3, par, 5);
	}
	main = ipu_step_sequence(g);
	ipu_step_append(g, main, ipu_step_stream_copy(g, sx, &(struct ipu_slice){ x, 0, SM_N }, 1));
	ipu_step_append(g, main, ipu_step_execute(g, cs));
	ipu_step_append(g, main, ipu_step_stream_copy(g, sy, &(struct ipu_slice){ acc, 0, SM_N }, 1));
	wr = ipu_step_sequence(g);
	ipu_step_append(g, wr, ipu_step_stream_copy(g, sw_acc, &(struct ipu_slice){ acc, 0, SM_N }, 1));
	ipu_step_append(g, wr, ipu_step_stream_copy(g, sw_cnt, &(struct ipu_slice){ cnt, 0, 1 }, 1));
	rd = ipu_step_sequence(g);
	ipu_step_append(g, rd, ipu_step_stream_copy(g, sr_acc, &(struct ipu_slice){ acc, 0, SM_N }, 1));
	ipu_step_append(g, rd, ipu_step_stream_copy(g, sr_cnt, &(struct ipu_slice){ cnt, 0, 1 }, 1));
	ipu_graph_add_program(g, main);
	ipu_graph_add_program(g, wr);
	ipu_graph_add_program(g, rd);
	if (ipu_graph_compile(g, &img, &len, &st) || regions_of(g, acc, 4, reg_acc, &nacc) ||
	    regions_of(g, cnt, 4, reg_cnt, &ncnt)) {
		fprintf(stderr, "state_model: %s\n", ipu_graph_error(g) ? ipu_graph_error(g) : "no regions");
		goto out;
	}
	states[0] = (struct ipuef_state){ "acc", IPURT_DT_F32, 1, { SM_N }, IPUEF_STATE_INIT_ZEROS,
					  sw_acc, sr_acc, nacc, reg_acc };
	states[1] = (struct ipuef_state){ "count", IPURT_DT_F32, 1, { 1 }, IPUEF_STATE_INIT_DATA,
					  sw_cnt, sr_cnt, ncnt, reg_cnt };
	m.exe_format_major = IPUX_VERSION_MAJOR;
	m.exe_format_minor = IPUX_VERSION_MINOR;
	m.ipu_version = "ipu2";
	m.num_tiles = TILES;
	m.tile_mem = TILE_MEM;
	m.batch_size = 1;
	m.num_programs = 3;
	m.programs = progs;
	m.num_anchors = 2;
	m.anchors = an;
	m.num_states = 2;
	m.states = states;
	rc = ipuef_writer_create(&w, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_set_metadata(w, &m, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_set_executable(w, img, len, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_add_tensor(w, &t, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_write_file(w, path, err, sizeof(err));
	if (rc)
		fprintf(stderr, "state_model: %s: %s\n", path, err);
	rc = rc ? -1 : 0;
out:
	ipuef_writer_destroy(w);
	free(img);
	ipu_graph_destroy(g);
	return rc;
}
