// SPDX-License-Identifier: MIT
/*
 * rt_models.c - small .ipuef models for the Model Runtime tests, built the
 * way the compiler builds them: graph builder -> executable image, wrapped
 * with metadata, anchors and TensorData by the .ipuef writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/half.h"
#include "ipu/graph.h"
#include "rt_models.h"

#define TILES 8
#define TILE_MEM (64 * 1024)

static int wrap(struct ipu_graph *g, const struct ipuef_anchor *anchors, uint32_t nanchors,
		const struct ipuef_program *progs, uint32_t nprogs, uint32_t batch,
		const struct ipuef_tensor *tensors, uint32_t ntensors, const char *path)
{
	struct ipuef_metadata m = { 0 };
	struct ipu_graph_stats st;
	struct ipuef_writer *w = NULL;
	char err[512];
	void *img;
	size_t len;
	uint32_t i;
	int rc;

	if (ipu_graph_compile(g, &img, &len, &st)) {
		fprintf(stderr, "rt_models: %s\n", ipu_graph_error(g));
		return -1;
	}
	m.exe_format_major = IPUX_VERSION_MAJOR;
	m.exe_format_minor = IPUX_VERSION_MINOR;
	m.ipu_version = "ipu2";
	m.num_tiles = ((const struct ipux_header *)img)->num_tiles;
	m.tile_mem = ((const struct ipux_header *)img)->tile_mem;
	m.batch_size = batch;
	m.num_programs = nprogs;
	m.programs = progs;
	m.num_anchors = nanchors;
	m.anchors = anchors;
	rc = ipuef_writer_create(&w, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_set_metadata(w, &m, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_set_executable(w, img, len, err, sizeof(err));
	for (i = 0; !rc && i < ntensors; i++)
		rc = ipuef_writer_add_tensor(w, &tensors[i], err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_add_opaque(w, "rt-tests", "1", "", 0, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_write_file(w, path, err, sizeof(err));
	if (rc)
		fprintf(stderr, "rt_models: %s: %s\n", path, err);
	ipuef_writer_destroy(w);
	free(img);
	return rc ? -1 : 0;
}

/* Y = X * 2 + W, X/Y [4, 3] (batch dim 0), W [3] TensorData fed by Load. */
int rt_make_affine(const char *path)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t dx[2] = { 4, 3 }, d3 = 3, one = 1;
	ipu_tensor x = ipu_graph_add_tensor(g, "X", IPUX_DT_F32, 2, dx);
	ipu_tensor y = ipu_graph_add_tensor(g, "Y", IPUX_DT_F32, 2, dx);
	ipu_tensor w = ipu_graph_add_tensor(g, "W", IPUX_DT_F32, 1, &d3);
	ipu_tensor two = ipu_graph_add_tensor(g, "two", IPUX_DT_F32, 1, &one);
	float twov = 2.0f;
	static const float wv[3] = { 10.0f, 20.0f, 30.0f };
	uint32_t sw, sx, sy, cs;
	ipu_step load, main;
	static const struct ipuef_program progs[2] = { { "load", 0 }, { "main", 1 } };
	struct ipuef_anchor an[3] = {
		{ "W", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_TENSOR_DATA, 1, { 3 },
		  IPUEF_NO_BATCH_DIM, 0, 1u << 0 },
		{ "X", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 2, { 4, 3 }, 0, 1, 1u << 1 },
		{ "Y", IPURT_DT_F32, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 2, { 4, 3 }, 0, 2, 1u << 1 },
	};
	struct ipuef_tensor t = { "W", IPURT_DT_F32, 1, { 3 }, 0, wv, sizeof(wv) };
	int rc;

	ipu_graph_map_tile(g, x, 1);
	ipu_graph_map_tile(g, y, 1);
	ipu_graph_map_tile(g, w, 2);
	ipu_graph_map_tile(g, two, 1);
	ipu_graph_set_init(g, two, &twov, 4);
	sw = ipu_graph_add_stream(g, "W", IPUX_STREAM_H2D, 12);
	sx = ipu_graph_add_stream(g, "X", IPUX_STREAM_H2D, 48);
	sy = ipu_graph_add_stream(g, "Y", IPUX_STREAM_D2H, 48);
	load = ipu_step_stream_copy(g, sw, &(struct ipu_slice){ w, 0, 3 }, 1);
	cs = ipu_graph_add_compute_set(g, "affine");
	{
		/* W lives on tile 2: bring a copy next to X each time (an exchange) */
		uint64_t d3b = 3;
		ipu_tensor wl = ipu_graph_add_tensor(g, "W_local", IPUX_DT_F32, 1, &d3b);
		struct ipu_slice m_ops[3] = { { x, 0, 12 }, { two, 0, 1 }, { y, 0, 12 } };
		uint32_t m_p[5] = { IPUX_BIN_MUL, 1, 12, 1, 0 };
		struct ipu_slice a_ops[3] = { { y, 0, 12 }, { wl, 0, 3 }, { y, 0, 12 } };
		uint32_t a_p[8] = { IPUX_BIN_ADD, 2, 4, 3, 3, 1, 0, 1 };

		ipu_graph_map_tile(g, wl, 1);
		ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, m_ops, 3, m_p, 5);
		ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, a_ops, 3, a_p, 8);
		main = ipu_step_sequence(g);
		ipu_step_append(g, main, ipu_step_stream_copy(g, sx, &(struct ipu_slice){ x, 0, 12 }, 1));
		ipu_step_append(g, main, ipu_step_copy(g, (struct ipu_slice){ w, 0, 3 },
						       (struct ipu_slice){ wl, 0, 3 }));
		ipu_step_append(g, main, ipu_step_execute(g, cs));
		ipu_step_append(g, main, ipu_step_stream_copy(g, sy, &(struct ipu_slice){ y, 0, 12 }, 1));
	}
	ipu_graph_add_program(g, load);
	ipu_graph_add_program(g, main);
	rc = wrap(g, an, 3, progs, 2, 4, &t, 1, path);
	ipu_graph_destroy(g);
	return rc;
}

/* Y = X * 2, X/Y [2, 4, 3] with the batch along dim 1 (no Load program). */
int rt_make_scale_dim1(const char *path)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = 24, one = 1;
	ipu_tensor x = ipu_graph_add_tensor(g, "X", IPUX_DT_F32, 1, &n);
	ipu_tensor y = ipu_graph_add_tensor(g, "Y", IPUX_DT_F32, 1, &n);
	ipu_tensor two = ipu_graph_add_tensor(g, "two", IPUX_DT_F32, 1, &one);
	float twov = 2.0f;
	uint32_t sx, sy, cs;
	ipu_step main;
	static const struct ipuef_program progs[1] = { { "main", 0 } };
	struct ipuef_anchor an[2] = {
		{ "X", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 3, { 2, 4, 3 }, 1, 0, 1 },
		{ "Y", IPURT_DT_F32, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 3, { 2, 4, 3 }, 1, 1, 1 },
	};
	struct ipu_slice ops[3] = { { x, 0, 24 }, { two, 0, 1 }, { y, 0, 24 } };
	uint32_t p[5] = { IPUX_BIN_MUL, 1, 24, 1, 0 };
	int rc;

	ipu_graph_map_tile(g, x, 0);
	ipu_graph_map_tile(g, y, 0);
	ipu_graph_map_tile(g, two, 0);
	ipu_graph_set_init(g, two, &twov, 4);
	sx = ipu_graph_add_stream(g, "X", IPUX_STREAM_H2D, 96);
	sy = ipu_graph_add_stream(g, "Y", IPUX_STREAM_D2H, 96);
	cs = ipu_graph_add_compute_set(g, "scale");
	ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, ops, 3, p, 5);
	main = ipu_step_sequence(g);
	ipu_step_append(g, main, ipu_step_stream_copy(g, sx, &(struct ipu_slice){ x, 0, 24 }, 1));
	ipu_step_append(g, main, ipu_step_execute(g, cs));
	ipu_step_append(g, main, ipu_step_stream_copy(g, sy, &(struct ipu_slice){ y, 0, 24 }, 1));
	ipu_graph_add_program(g, main);
	rc = wrap(g, an, 2, progs, 1, 4, NULL, 0, path);
	ipu_graph_destroy(g);
	return rc;
}

/*
 * The seed's fused model, hand-lowered: graph0: O = reshape(X + Y) (f32
 * [1,2] -> [2]); graph1: O = concat(X, [1.5, 2]) (f16 [1,1] -> [1,3]);
 * an i32 `index` anchor selects the subgraph.
 */
int rt_make_fused(const char *path)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t d2 = 2, d1 = 1, d3 = 3;
	ipu_tensor idx = ipu_graph_add_tensor(g, "index", IPUX_DT_I32, 1, &d1);
	ipu_tensor x0 = ipu_graph_add_tensor(g, "graph0/X", IPUX_DT_F32, 1, &d2);
	ipu_tensor y0 = ipu_graph_add_tensor(g, "graph0/Y", IPUX_DT_F32, 1, &d2);
	ipu_tensor o0 = ipu_graph_add_tensor(g, "graph0/O", IPUX_DT_F32, 1, &d2);
	ipu_tensor o1 = ipu_graph_add_tensor(g, "graph1/O", IPUX_DT_F16, 1, &d3);
	uint32_t si, sx0, sy0, so0, sx1, so1, cs0;
	ipu_step main, c0, c1, cases[2];
	static const struct ipuef_program progs[1] = { { "main", 0 } };
	struct ipuef_anchor an[6] = {
		{ "index", IPURT_DT_I32, IPUEF_INPUT, IPUEF_ANCHOR_INDEX, 1, { 1 }, IPUEF_NO_BATCH_DIM, 0, 1 },
		{ "graph0/X", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 2, { 1, 2 }, 0, 1, 1 },
		{ "graph0/Y", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 2, { 1, 2 }, 0, 2, 1 },
		{ "graph0/O", IPURT_DT_F32, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 1, { 2 }, IPUEF_NO_BATCH_DIM, 3, 1 },
		{ "graph1/X", IPURT_DT_F16, IPUEF_INPUT, IPUEF_ANCHOR_USER, 2, { 1, 1 }, 0, 4, 1 },
		{ "graph1/O", IPURT_DT_F16, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 2, { 1, 3 }, 0, 5, 1 },
	};
	uint16_t consts[2] = { ipu_f32_to_f16(1.5f), ipu_f32_to_f16(2.0f) };
	int rc;

	ipu_graph_map_tile(g, idx, 0);
	ipu_graph_map_tile(g, x0, 1);
	ipu_graph_map_tile(g, y0, 1);
	ipu_graph_map_tile(g, o0, 1);
	ipu_graph_map_tile(g, o1, 2);
	/* concat: O[1:3] are the constants, O[0] is streamed in from X */
	{
		ipu_tensor c = ipu_graph_add_tensor(g, "graph1/C", IPUX_DT_F16, 1, &d2);

		ipu_graph_map_tile(g, c, 2);
		ipu_graph_set_init(g, c, consts, sizeof(consts));
		si = ipu_graph_add_stream(g, "index", IPUX_STREAM_H2D, 4);
		sx0 = ipu_graph_add_stream(g, "graph0/X", IPUX_STREAM_H2D, 8);
		sy0 = ipu_graph_add_stream(g, "graph0/Y", IPUX_STREAM_H2D, 8);
		so0 = ipu_graph_add_stream(g, "graph0/O", IPUX_STREAM_D2H, 8);
		sx1 = ipu_graph_add_stream(g, "graph1/X", IPUX_STREAM_H2D, 2);
		so1 = ipu_graph_add_stream(g, "graph1/O", IPUX_STREAM_D2H, 6);
		cs0 = ipu_graph_add_compute_set(g, "graph0/add");
		{
			struct ipu_slice ops[3] = { { x0, 0, 2 }, { y0, 0, 2 }, { o0, 0, 2 } };
			uint32_t p[5] = { IPUX_BIN_ADD, 1, 2, 1, 1 };

			ipu_graph_add_vertex(g, cs0, IPUX_CL_BINARY, ops, 3, p, 5);
		}
		c0 = ipu_step_sequence(g);
		ipu_step_append(g, c0, ipu_step_stream_copy(g, sx0, &(struct ipu_slice){ x0, 0, 2 }, 1));
		ipu_step_append(g, c0, ipu_step_stream_copy(g, sy0, &(struct ipu_slice){ y0, 0, 2 }, 1));
		ipu_step_append(g, c0, ipu_step_execute(g, cs0));
		ipu_step_append(g, c0, ipu_step_stream_copy(g, so0, &(struct ipu_slice){ o0, 0, 2 }, 1));
		c1 = ipu_step_sequence(g);
		ipu_step_append(g, c1, ipu_step_stream_copy(g, sx1, &(struct ipu_slice){ o1, 0, 1 }, 1));
		ipu_step_append(g, c1, ipu_step_copy(g, (struct ipu_slice){ c, 0, 2 },
						     (struct ipu_slice){ o1, 1, 2 }));
		ipu_step_append(g, c1, ipu_step_stream_copy(g, so1, &(struct ipu_slice){ o1, 0, 3 }, 1));
	}
	cases[0] = c0;
	cases[1] = c1;
	main = ipu_step_sequence(g);
	ipu_step_append(g, main, ipu_step_stream_copy(g, si, &(struct ipu_slice){ idx, 0, 1 }, 1));
	ipu_step_append(g, main, ipu_step_switch(g, idx, cases, 2, ipu_step_sync(g, IPUX_SYNC_INTERNAL)));
	ipu_graph_add_program(g, main);
	rc = wrap(g, an, 6, progs, 1, 1, NULL, 0, path);
	ipu_graph_destroy(g);
	return rc;
}
