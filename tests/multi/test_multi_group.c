// SPDX-License-Identifier: MIT
/*
 * test_multi_group.c - a model split over four in-process IPUs joined by
 * links (ipu/group.h): requests queued on every IPU at once flow through
 * the stages, each link buffer handed from one device's stream to the
 * next's; the outputs are bit-identical to the stages run one after the
 * other, every link carried each request once, and the modelled clock of
 * the overlapped IPUs is below the one-after-the-other sum; every IPU's
 * step events reach ipu_group_set_trace's hook with the IPU's index, and
 * the group's clock counts each run without its link copies.  Links whose
 * ends do not match are refused.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "ipu/passes.h"
#include "mlp_model.h"

#define TILES 16
#define TILE_MEM (64 * 1024)
#define REQUESTS 6

static atomic_int user_done;

static void on_user(void *ctx, uint32_t ipu, const struct ipu_completion *c)
{
	(void)ctx;
	(void)ipu;
	if (!c->status)
		atomic_fetch_add(&user_done, 1);
}

/* Per IPU (each written by its own device thread only): runs of Main, their
 * cycles and the cycles of their stream copies other than the user's. */
struct group_steps {
	const struct mlp_group *mg;
	uint64_t runs[4], cycles[4], link_copy[4];
	atomic_int bad_ipu;
};

static void on_step(void *ctx, uint32_t ipu, const struct ipu_step_event *ev)
{
	struct group_steps *gs = ctx;

	if (ipu >= 4) {
		atomic_fetch_add(&gs->bad_ipu, 1);
		return;
	}
	if (ev->kind == IPU_TRACE_PROGRAM && ev->program == 0 && !ev->status) {
		gs->runs[ipu]++;
		gs->cycles[ipu] += ev->cycles;
	} else if (ev->kind == IPU_STEP_STREAM_COPY &&
		   !(ipu == 0 && ev->stream == gs->mg->x_stream) &&
		   !(ipu == 3 && ev->stream == gs->mg->y_stream)) {
		gs->link_copy[ipu] += ev->cycles;
	}
}

TEST(four_ipus_pipelined_as_the_stages_one_by_one)
{
	static struct group_steps gs;
	struct ir_graph *g = mlp_prepared(8);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct mlp_group mg;
	struct ir_error e = { "" };
	static float x[REQUESTS][MLP_ROWS * MLP_WIDTH], y[REQUESTS][MLP_ROWS * MLP_WIDTH];
	uint64_t seq[4][REQUESTS], pipe = 0, serial = 0, stage[4];
	char err[512];

	REQUIRE(g);
	REQUIRE(ipu_partition_auto(g, 4, &t, &p, &e) == 0);
	CHECK_MSG(mlp_group_build(g, &p, &t, &mg, &e) == 0, "%s", e.msg);
	REQUIRE(mg.g);
	CHECK_EQ_INT(mg.links, 3);
	CHECK_EQ_INT(ipu_group_num_links(mg.g), 3);
	atomic_store(&user_done, 0);
	REQUIRE(ipu_group_start(mg.g, 2, on_user, NULL, err, sizeof(err)) == 0);
	memset(&gs, 0, sizeof(gs));
	gs.mg = &mg;
	ipu_group_set_trace(mg.g, on_step, &gs);
	for (int i = 0; i < REQUESTS; i++) {
		mlp_fill(x[i], 1000u + (uint32_t)i);
		CHECK(ipu_stream_submit(ipu_group_device(mg.g, 0), mg.x_stream, x[i], sizeof(x[i]), (uint64_t)i) == 0);
		CHECK(ipu_stream_submit(ipu_group_device(mg.g, 3), mg.y_stream, y[i], sizeof(y[i]), (uint64_t)i) == 0);
	}
	/* every IPU's runs queued at once: the last stages wait for links */
	for (int k = 3; k >= 0; k--)
		for (int i = 0; i < REQUESTS; i++)
			CHECK(ipu_run(ipu_group_device(mg.g, (uint32_t)k), 0, &seq[k][i]) == 0);
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < REQUESTS; i++)
			CHECK_MSG(ipu_wait(ipu_group_device(mg.g, (uint32_t)k), seq[k][i], 20ll * 1000000000,
					   err, sizeof(err)) == 0, "IPU %d run %d: %s", k, i, err);
	for (int l = 0; l < 3; l++) {
		struct ipu_link_stats st;

		REQUIRE(ipu_group_link_stats(mg.g, (uint32_t)l, &st) == 0);
		CHECK_EQ_INT(st.transfers, REQUESTS);
		CHECK_EQ_INT(st.bytes, REQUESTS * MLP_ROWS * MLP_WIDTH * 4);
		CHECK_EQ_INT(st.cycles, REQUESTS * (IPU_LINK_LATENCY_CYCLES + MLP_ROWS * MLP_WIDTH * 4 / 240 + 1));
		CHECK_EQ_INT(st.src_ipu + 1, st.dst_ipu);
	}
	CHECK_EQ_INT(ipu_group_modelled(mg.g, &pipe, &serial, stage), REQUESTS);
	printf("# %d requests on 4 IPUs: modelled %llu cycles overlapped, %llu one after the other (%.2fx); stages %llu %llu %llu %llu\n",
	       REQUESTS, (unsigned long long)pipe, (unsigned long long)serial,
	       (double)serial / (double)(pipe ? pipe : 1), (unsigned long long)stage[0],
	       (unsigned long long)stage[1], (unsigned long long)stage[2], (unsigned long long)stage[3]);
	CHECK(pipe > 0 && pipe < serial);
	ipu_group_set_trace(mg.g, NULL, NULL);
	CHECK_EQ_INT(atomic_load(&gs.bad_ipu), 0);
	for (int k = 0; k < 4; k++) {
		CHECK_EQ_INT(gs.runs[k], REQUESTS);
		/* links into and out of every IPU: its clock is below its runs' cycles */
		CHECK(gs.link_copy[k] > 0);
		CHECK_EQ_INT(stage[k], gs.cycles[k] - gs.link_copy[k]);
	}
	/* the user's buffers only: REQUESTS inputs, REQUESTS outputs */
	for (int spin = 0; spin < 1000 && atomic_load(&user_done) < 2 * REQUESTS; spin++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	CHECK_EQ_INT(atomic_load(&user_done), 2 * REQUESTS);
	ipu_group_close(mg.g);

	/* the same requests through the stages one by one */
	for (int i = 0; i < REQUESTS; i++) {
		struct mlp_store s = { 0 };
		int64_t d[] = { MLP_ROWS, MLP_WIDTH };
		const struct ir_tensor *out;
		int bad = 0;

		s.names[0] = strdup("x");
		REQUIRE(ir_tensor_alloc(&s.t[0], IR_F32, 2, d, NULL) == 0);
		memcpy(s.t[0].data, x[i], sizeof(x[i]));
		s.n = 1;
		for (int k = 0; k < 4 && !bad; k++) {
			struct ir_graph *sg = ipu_partition_stage(g, &p, k, &e);

			bad = !sg || mlp_run(sg, &t, &s, &e);
			ir_graph_free(sg);
		}
		CHECK_MSG(!bad, "%s", e.msg);
		out = mlp_store_find(&s, g->vals[g->outputs[0]].name);
		CHECK_MSG(out && !memcmp(out->data, y[i], sizeof(y[i])), "request %d differs", i);
		mlp_store_free(&s);
	}
	ir_graph_free(g);
}

TEST(links_whose_ends_differ_are_refused)
{
	struct ir_graph *g = mlp_prepared(4);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct mlp_group mg;
	struct ir_error e = { "" };
	char err[512];
	uint32_t dir = 0, bytes = 0, out0 = UINT32_MAX, in1 = UINT32_MAX;
	struct ipu_device *d0, *d1;

	REQUIRE(g);
	REQUIRE(ipu_partition_auto(g, 2, &t, &p, &e) == 0);
	CHECK_MSG(mlp_group_build(g, &p, &t, &mg, &e) == 0, "%s", e.msg);
	REQUIRE(mg.g);
	d0 = ipu_group_device(mg.g, 0);
	d1 = ipu_group_device(mg.g, 1);
	for (uint32_t s = 0; s < (uint32_t)ipu_stream_count(d0); s++)
		if (!ipu_stream_info(d0, s, &dir, &bytes) && dir == IPU_STREAM_D2H)
			out0 = s;
	for (uint32_t s = 0; s < (uint32_t)ipu_stream_count(d1); s++)
		if (!ipu_stream_info(d1, s, &dir, &bytes) && dir == IPU_STREAM_H2D)
			in1 = s;
	REQUIRE(out0 != UINT32_MAX && in1 != UINT32_MAX);
	/* the one boundary is linked already */
	CHECK(ipu_group_link(mg.g, 0, out0, 1, in1, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "is already an end of link 0"), "%s", err);
	CHECK(ipu_group_link(mg.g, 1, in1, 0, out0, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "the sender first"), "%s", err);
	CHECK(ipu_group_link(mg.g, 0, mg.x_stream, 1, in1, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "is host-to-device: a link leaves its sender from a device-to-host stream"), "%s", err);
	CHECK(ipu_group_link(mg.g, 0, 999, 1, in1, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "IPU 0 has no stream 999"), "%s", err);
	CHECK(ipu_group_link(mg.g, 0, out0, 7, in1, err, sizeof(err)) < 0);
	ipu_group_close(mg.g);
	ir_graph_free(g);
}

/* A group of no IPUs, and links before anything is loaded. */
TEST(group_refusals)
{
	struct ipu_group *gr = NULL;
	char err[512];

	CHECK(ipu_group_open("model:tiles=4", 0, &gr, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "a group has 1 to 64 IPUs, not 0"), "%s", err);
	CHECK(ipu_group_open("model:tiles=4", 2, &gr, err, sizeof(err)) == 0);
	REQUIRE(gr);
	CHECK_EQ_INT(ipu_group_size(gr), 2);
	/* nothing loaded: no streams to link */
	CHECK(ipu_group_link(gr, 0, 0, 1, 0, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "no executable loaded"), "%s", err);
	ipu_group_close(gr);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(four_ipus_pipelined_as_the_stages_one_by_one);
	RUN(links_whose_ends_differ_are_refused);
	RUN(group_refusals);
	return TH_DONE();
}
