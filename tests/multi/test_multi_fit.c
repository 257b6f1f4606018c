// SPDX-License-Identifier: MIT
/*
 * test_multi_fit.c - a model that does not fit one IPU is refused at the
 * chip's level first (its memory plan against the IPU's bytes, and the
 * IPUs it needs), the first tile's detail after: graph-builder plans whose
 * estimate is known exactly (with and without memory reuse), and a
 * lowered MLP whose weights fill several small IPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/codelet.h"
#include "ipu/graph.h"
#include "ipu/lower.h"
#include "ipu/passes.h"
#include "mlp_model.h"

/* A constant of `elems` f32 spread over tiles [0, spread), relu'd into
 * an output streamed out; the builder's error, or "compiled". */
static const char *refuse(uint32_t tiles, uint32_t mem, uint64_t elems, uint32_t spread, int reuse)
{
	static char msg[2048];
	struct ipu_graph *g = ipu_graph_create(tiles, mem);
	float *w = calloc(elems, sizeof(*w));
	void *img = NULL;
	size_t len;

	msg[0] = 0;
	if (!g || !w) {
		free(w);
		ipu_graph_destroy(g);
		return "setup failed";
	}
	ipu_graph_set_memory_reuse(g, reuse);
	{
		ipu_tensor a = ipu_graph_add_tensor(g, "w", IPUX_DT_F32, 1, &elems);
		ipu_tensor b = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &elems);
		uint32_t cs = ipu_graph_add_compute_set(g, "relu");
		uint32_t out = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, (uint32_t)(elems * 4));
		ipu_step seq = ipu_step_sequence(g);
		uint32_t p[1] = { IPUX_UN_RELU };
		uint64_t chunk = elems / spread < 128 ? elems / spread : 128;

		/* pieces of 512 bytes at most (a piece is never larger than a
		 * tile), dealt round the tiles */
		for (uint64_t i = 0; i * chunk < elems; i++) {
			uint64_t b0 = i * chunk, e = b0 + chunk < elems ? b0 + chunk : elems;
			uint32_t tile = (uint32_t)(i % spread);

			ipu_graph_map(g, a, tile, b0, e);
			ipu_graph_map(g, b, tile, b0, e);
			ipu_graph_add_vertex(g, cs, IPUX_CL_UNARY,
					     (struct ipu_slice[]){ { a, b0, e - b0 }, { b, b0, e - b0 } },
					     2, p, 1);
		}
		ipu_graph_set_init(g, a, w, elems * sizeof(*w));
		ipu_step_append(g, seq, ipu_step_execute(g, cs));
		ipu_step_append(g, seq, ipu_step_stream_copy(g, out, &(struct ipu_slice){ b, 0, elems }, 1));
		ipu_graph_add_program(g, seq);
	}
	if (ipu_graph_compile(g, &img, &len, NULL) == 0)
		snprintf(msg, sizeof(msg), "compiled");
	else
		snprintf(msg, sizeof(msg), "%s", ipu_graph_error(g) ? ipu_graph_error(g) : "no error");
	free(img);
	free(w);
	ipu_graph_destroy(g);
	return msg;
}

/* The chip's sentence comes first, the tile's detail after it. */
static int chip_then_tile(const char *m, const char *ipus)
{
	const char *chip = strstr(m, "model does not fit one IPU: its memory plan needs ");
	const char *n = strstr(m, ipus);
	const char *tile = strstr(m, "; tile 0 out of memory: ");

	return chip == m && n && tile && n < tile;
}

/* 4 tiles x 1 KiB; the constant (3 KiB a tile) and its relu (3 KiB a
 * tile, live with it) fill 6 KiB a tile: 24 KiB over 4 KiB, 6 IPUs. */
TEST(spread_constant_needs_its_share_of_ipus)
{
	const char *m = refuse(4, 1024, 3072, 4, 1);

	CHECK_MSG(chip_then_tile(m, "it needs at least 6 IPUs"), "%s", m);
	CHECK_MSG(strstr(m, "needs 24576 bytes with memory reuse (600% of the IPU's 4 tiles x 1024 = 4096 bytes; 4 of its tiles over their 1024 bytes, the fullest, tile 0, needs 6144)"),
		  "%s", m);
	CHECK_MSG(strstr(m, "tile 0 out of memory: 6144 bytes needed with memory reuse, tile has 1024"), "%s", m);
}

TEST(without_reuse_the_same_plan)
{
	const char *m = refuse(4, 1024, 3072, 4, 0);

	CHECK_MSG(chip_then_tile(m, "it needs at least 6 IPUs"), "%s", m);
	CHECK_MSG(strstr(m, "needs 24576 bytes without memory reuse"), "%s", m);
	CHECK_MSG(strstr(m, "(without memory reuse)"), "%s", m);
}

/* One tile over by half, the device mostly empty: the fullest tile sets
 * the estimate (2), not the plan's total (under one IPU). */
TEST(one_full_tile_needs_two)
{
	const char *m = refuse(8, 1024, 192, 1, 1);

	CHECK_MSG(chip_then_tile(m, "it needs at least 2 IPUs"), "%s", m);
	CHECK_MSG(strstr(m, "needs 1536 bytes with memory reuse (19% of the IPU's 8 tiles x 1024 = 8192 bytes; 1 of its tiles over"),
		  "%s", m);
}

TEST(fitting_plan_compiles)
{
	const char *m = refuse(4, 8192, 3072, 4, 1);

	CHECK_MSG(!strcmp(m, "compiled"), "%s", m);
}

/* --- a lowered model ----------------------------------------------------- */

static int lower(int layers, uint32_t tiles, uint32_t mem, char *msg, size_t len)
{
	struct ir_graph *g = mlp_graph(layers);
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { 0 };
	struct ipu_target t = { "ipu2", tiles, mem };
	struct ipu_lower_info info;
	void *image = NULL;
	size_t n = 0;
	int r = 0;

	memset(&info, 0, sizeof(info));
	if (ir_pipeline_run(g, &po, &e) || ipu_lower_image(&g, 1, &t, &image, &n, &info, &e)) {
		snprintf(msg, len, "%s", e.msg);
		r = -1;
	}
	free(image);
	ipu_lower_info_free(&info);
	ir_graph_free(g);
	return r;
}

/* 8 weights of 256 KiB (2 MiB) on 16 tiles x 64 KiB (1 MiB): refused with
 * the IPUs it needs (4: each tile keeps an eighth for live values and the
 * first product's 23552 bytes beside its share of the weights), the node's
 * detail after; the model fits a device of that many times the tiles. */
TEST(mlp_refused_with_the_ipus_it_needs)
{
	char msg[4096];
	unsigned long long need = 0, ipus = 0;
	const char *p;

	CHECK(lower(8, 16, 64 * 1024, msg, sizeof(msg)) < 0);
	printf("# %s\n", msg);
	/* refused while lowering, the constants against the IPU */
	p = strstr(msg, "model does not fit one IPU: its constants take ");
	REQUIRE(p == msg);
	CHECK(sscanf(p, "model does not fit one IPU: its constants take %llu bytes", &need) == 1);
	CHECK_EQ_INT(need, 8ull * 256 * 256 * 4);
	p = strstr(msg, "it needs about ");
	REQUIRE(p);
	CHECK(sscanf(p, "it needs about %llu IPUs", &ipus) == 1);
	CHECK_MSG(ipus >= 2 && ipus * 16 * 64 * 1024 >= need, "%llu IPUs for %llu bytes", ipus, need);
	CHECK_MSG(strstr(msg, "IPUs; node 'mm0' (MatMul, #0): "), "%s", msg);
	CHECK_MSG(lower(8, (uint32_t)(16 * ipus), 64 * 1024, msg, sizeof(msg)) == 0,
		  "%llu x the tiles: %s", ipus, msg);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(spread_constant_needs_its_share_of_ipus);
	RUN(without_reuse_the_same_plan);
	RUN(one_full_tile_needs_two);
	RUN(fitting_plan_compiles);
	RUN(mlp_refused_with_the_ipus_it_needs);
	return TH_DONE();
}
