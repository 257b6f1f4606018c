// SPDX-License-Identifier: MIT
/*
 * test_programs.c - every program step kind, streams (including a stream
 * copy that blocks until a buffer is queued), exchanges with BSP read-
 * before-write semantics, frozen initial values, faults, abort and
 * counters, run end to end: graph builder -> image -> libipu model device.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/codelet.h"
#include "harness.h"
#include "load_image.h"
#include "ipu/graph.h"
#include "ipu/ipu.h"

#define TILES 16
#define TILE_MEM (64 * 1024)

static struct ipu_device *open_dev(void)
{
	struct ipu_device *d = NULL;
	char err[256];
	int rc = ipu_open("model:tiles=16,tile_mem=64k,workers=3", &d, err, sizeof(err));

	if (rc)
		fprintf(stderr, "open: %s\n", err);
	return d;
}

static int load(struct ipu_device *d, struct ipu_graph *g)
{
	void *img;
	size_t len;
	char err[512];
	int rc;

	if (ipu_graph_compile(g, &img, &len, NULL)) {
		fprintf(stderr, "compile: %s\n", ipu_graph_error(g));
		return -1;
	}
	rc = test_load_image(d, img, len, err, sizeof(err));
	if (rc)
		fprintf(stderr, "load: %s (%s)\n", err, ipu_err_name(rc));
	free(img);
	return rc;
}

/* Elementwise binary op on one tile: out = a OP b (same shape, rank 1). */
static void add_binary(struct ipu_graph *g, uint32_t cs, uint32_t op,
		       struct ipu_slice a, struct ipu_slice b, struct ipu_slice out)
{
	struct ipu_slice ops[3] = { a, b, out };
	uint32_t p[5] = { op, 1, (uint32_t)out.count, 1, b.count == 1 ? 0 : 1 };

	ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, ops, 3, p, 5);
}

/* x (n floats over `ntiles` tiles) in, y = x * 2 + 1 out. */
TEST(stream_compute_stream)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = 1000, one = 1;
	ipu_tensor x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	ipu_tensor y = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &n);
	uint32_t in, out, cs, t;
	ipu_step seq;
	struct ipu_device *d;
	float xs[1000], ys[1000];
	char err[256];
	int ntiles, i, ok = 1;
	ipu_tensor ones[8];

	REQUIRE(g);
	ntiles = ipu_graph_map_linear(g, x, 0, 8, 4);
	ipu_graph_map_linear(g, y, 0, 8, 4);
	CHECK_EQ_INT(ntiles, 8);
	cs = ipu_graph_add_compute_set(g, "affine");
	for (t = 0; t < (uint32_t)ntiles; t++) {
		uint64_t b, e;
		uint32_t tile, off;
		char name[32];
		ipu_tensor two, c1;
		struct ipu_slice xs_, ys_;

		ipu_graph_tensor_location(g, x, t, &tile, &b, &e, &off);
		snprintf(name, sizeof(name), "two%u", t);
		two = ipu_graph_add_tensor(g, name, IPUX_DT_F32, 1, &one);
		snprintf(name, sizeof(name), "one%u", t);
		c1 = ipu_graph_add_tensor(g, name, IPUX_DT_F32, 1, &one);
		ipu_graph_map_tile(g, two, tile);
		ipu_graph_map_tile(g, c1, tile);
		ones[t] = c1;
		{
			float v2 = 2.0f, v1 = 1.0f;

			ipu_graph_set_init(g, two, &v2, 4);
			ipu_graph_set_init(g, c1, &v1, 4);
		}
		xs_ = (struct ipu_slice){ x, b, e - b };
		ys_ = (struct ipu_slice){ y, b, e - b };
		add_binary(g, cs, IPUX_BIN_MUL, xs_, (struct ipu_slice){ two, 0, 1 }, ys_);
		/* second compute set would be cleaner; in-place add on y is allowed */
	}
	{
		uint32_t cs2 = ipu_graph_add_compute_set(g, "bias");

		for (t = 0; t < (uint32_t)ntiles; t++) {
			uint64_t b, e;
			uint32_t tile, off;

			ipu_graph_tensor_location(g, y, t, &tile, &b, &e, &off);
			add_binary(g, cs2, IPUX_BIN_ADD, (struct ipu_slice){ y, b, e - b },
				   (struct ipu_slice){ ones[t], 0, 1 },
				   (struct ipu_slice){ y, b, e - b });
		}
		in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, 4000);
		out = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, 4000);
		seq = ipu_step_sequence(g);
		ipu_step_append(g, seq, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, n }, 1));
		ipu_step_append(g, seq, ipu_step_execute(g, cs));
		ipu_step_append(g, seq, ipu_step_sync(g, IPUX_SYNC_INTERNAL));
		ipu_step_append(g, seq, ipu_step_execute(g, cs2));
		ipu_step_append(g, seq, ipu_step_stream_copy(g, out, &(struct ipu_slice){ y, 0, n }, 1));
		ipu_graph_add_program(g, seq);
	}
	d = open_dev();
	REQUIRE(d);
	REQUIRE(load(d, g) == 0);
	for (i = 0; i < 1000; i++)
		xs[i] = (float)i * 0.5f - 100.0f;
	CHECK_EQ_INT(ipu_stream_count(d), 2);
	CHECK_EQ_INT(ipu_stream_submit(d, 0, xs, sizeof(xs), 11), 0);
	CHECK_EQ_INT(ipu_stream_submit(d, 1, ys, sizeof(ys), 22), 0);
	CHECK_EQ_INT(ipu_stream_submit(d, 1, ys, 12, 23), IPU_E_INVAL); /* wrong size */
	CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), 0);
	for (i = 0; i < 1000; i++)
		if (ys[i] != xs[i] * 2.0f + 1.0f)
			ok = 0;
	CHECK(ok);
	{
		struct ipu_completion c[4];
		int nc = ipu_stream_poll(d, c, 4, 0);

		CHECK_EQ_INT(nc, 2);
		CHECK(c[0].tag == 11 && c[0].stream == 0 && c[0].status == 0 && c[0].bytes == 4000);
		CHECK(c[1].tag == 22 && c[1].stream == 1 && c[1].status == 0);
	}
	{
		struct ipu_counters k;

		ipu_counters(d, &k);
		CHECK_EQ_INT(k.programs_run, 1);
		CHECK_EQ_INT(k.compute_sets, 2);
		CHECK_EQ_INT(k.vertices, 16);
		CHECK_EQ_INT(k.stream_bytes_in, 4000);
		CHECK_EQ_INT(k.stream_bytes_out, 4000);
		CHECK(k.sync_cycles > 0);
		CHECK(k.compute_cycles > 0 && k.cycles >= k.compute_cycles + k.stream_cycles);
	}
	{
		struct ipu_cs_profile p;

		CHECK_EQ_INT(ipu_cs_profile(d, 0, &p), 0);
		CHECK_EQ_INT(p.executions, 1);
		CHECK_EQ_INT(p.tiles, 8);
		CHECK(p.cycles_per_run > 0);
	}
	ipu_close(d);
	ipu_graph_destroy(g);
}

/*
 * A single exchange that rotates data around 4 tiles (each tile's block
 * goes to the next tile): only correct if all sources are read before any
 * destination is written.
 */
TEST(exchange_rotation_reads_before_writes)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = 4 * 37;
	ipu_tensor a = ipu_graph_add_tensor(g, "a", IPUX_DT_F32, 1, &n);
	ipu_tensor b = ipu_graph_add_tensor(g, "b", IPUX_DT_F32, 1, &n);
	uint32_t sin, sout, t;
	ipu_step seq, xch;
	struct ipu_device *d;
	float in[148], out[148];
	char err[256];
	int i, ok = 1;

	ipu_graph_map_linear(g, a, 4, 4, 1);
	ipu_graph_map_linear(g, b, 0, 4, 1);
	xch = ipu_step_exchange(g);
	for (t = 0; t < 4; t++)
		ipu_exchange_add(g, xch, (struct ipu_slice){ a, t * 37, 37 },
				 (struct ipu_slice){ a, ((t + 1) % 4) * 37, 37 });
	sin = ipu_graph_add_stream(g, "in", IPUX_STREAM_H2D, sizeof(in));
	sout = ipu_graph_add_stream(g, "out", IPUX_STREAM_D2H, sizeof(out));
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sin, &(struct ipu_slice){ a, 0, n }, 1));
	ipu_step_append(g, seq, xch);
	/* plain cross-tile copy too: a (tiles 4..7) -> b (tiles 0..3) */
	ipu_step_append(g, seq, ipu_step_copy(g, (struct ipu_slice){ a, 0, n },
					      (struct ipu_slice){ b, 0, n }));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sout, &(struct ipu_slice){ b, 0, n }, 1));
	ipu_graph_add_program(g, seq);
	d = open_dev();
	REQUIRE(d);
	REQUIRE(load(d, g) == 0);
	for (i = 0; i < 148; i++)
		in[i] = (float)i;
	ipu_stream_submit(d, 0, in, sizeof(in), 0);
	ipu_stream_submit(d, 1, out, sizeof(out), 0);
	CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), 0);
	for (i = 0; i < 148; i++) {
		int src = ((i / 37 + 3) % 4) * 37 + i % 37;

		if (out[i] != in[src])
			ok = 0;
	}
	CHECK(ok);
	{
		struct ipu_counters k;

		ipu_counters(d, &k);
		CHECK_EQ_INT(k.exchange_bytes, 2 * sizeof(in));
	}
	ipu_close(d);
	ipu_graph_destroy(g);
}

/*
 * An exchange and the compute set after it: tiles 4..7 double what the
 * exchange brought them (the engine may run the copies into a tile just
 * before its vertices), while tiles 0..3 double twice, in place, the very
 * data the exchange reads (so the two must not overlap: every copy reads
 * the old values, though tiles 0..3 have more work and would be run
 * first).  Run three times, with the exchange counters checked.
 */
TEST(exchange_then_compute)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = 4 * 37;
	ipu_tensor a = ipu_graph_add_tensor(g, "a", IPUX_DT_F32, 1, &n);
	ipu_tensor b = ipu_graph_add_tensor(g, "b", IPUX_DT_F32, 1, &n);
	ipu_tensor c = ipu_graph_add_tensor(g, "c", IPUX_DT_F32, 1, &n);
	uint32_t sin, sa, sb, sc, t, cs, run;
	ipu_step seq, xch;
	struct ipu_device *d;
	float in[148], oa[148], ob[148], oc[148];
	char err[256];
	int i, ok = 1;

	ipu_graph_map_linear(g, a, 0, 4, 1);
	ipu_graph_map_linear(g, b, 4, 4, 1);
	ipu_graph_map_linear(g, c, 4, 4, 1);
	xch = ipu_step_exchange(g);
	cs = ipu_graph_add_compute_set(g, "double");
	for (t = 0; t < 4; t++) {
		struct ipu_slice at = { a, t * 37, 37 }, bt = { b, t * 37, 37 };

		ipu_exchange_add(g, xch, at, bt);
		add_binary(g, cs, IPUX_BIN_ADD, bt, bt, (struct ipu_slice){ c, t * 37, 37 });
		add_binary(g, cs, IPUX_BIN_ADD, at, at, at);
		add_binary(g, cs, IPUX_BIN_ADD, at, at, at);
	}
	sin = ipu_graph_add_stream(g, "in", IPUX_STREAM_H2D, sizeof(in));
	sa = ipu_graph_add_stream(g, "a", IPUX_STREAM_D2H, sizeof(oa));
	sb = ipu_graph_add_stream(g, "b", IPUX_STREAM_D2H, sizeof(ob));
	sc = ipu_graph_add_stream(g, "c", IPUX_STREAM_D2H, sizeof(oc));
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sin, &(struct ipu_slice){ a, 0, n }, 1));
	ipu_step_append(g, seq, xch);
	ipu_step_append(g, seq, ipu_step_execute(g, cs));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sa, &(struct ipu_slice){ a, 0, n }, 1));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sb, &(struct ipu_slice){ b, 0, n }, 1));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sc, &(struct ipu_slice){ c, 0, n }, 1));
	ipu_graph_add_program(g, seq);
	d = open_dev();
	REQUIRE(d);
	REQUIRE(load(d, g) == 0);
	for (run = 0; run < 3; run++) {
		for (i = 0; i < 148; i++)
			in[i] = (float)(i + 1000 * run);
		ipu_stream_submit(d, sin, in, sizeof(in), 0);
		ipu_stream_submit(d, sa, oa, sizeof(oa), 0);
		ipu_stream_submit(d, sb, ob, sizeof(ob), 0);
		ipu_stream_submit(d, sc, oc, sizeof(oc), 0);
		CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), 0);
		for (i = 0; i < 148; i++)
			if (ob[i] != in[i] || oc[i] != 2 * in[i] || oa[i] != 4 * in[i])
				ok = 0;
	}
	CHECK(ok);
	{
		struct ipu_counters k;

		ipu_counters(d, &k);
		CHECK_EQ_INT(k.exchange_bytes, 3 * sizeof(in));
		CHECK_EQ_INT(k.vertices, 3 * 12);
	}
	ipu_close(d);
	ipu_graph_destroy(g);
}

/* Repeat(n, x += 1) and Repeat(0, ...) */
TEST(repeat)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = 5, one = 1;
	ipu_tensor x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	ipu_tensor c = ipu_graph_add_tensor(g, "c", IPUX_DT_F32, 1, &one);
	float cv = 1.0f, xs[5] = { 0, 1, 2, 3, 4 }, ys[5];
	uint32_t cs, sin, sout;
	ipu_step body, seq;
	struct ipu_device *d;
	char err[256];
	int i, p;

	ipu_graph_map_tile(g, x, 3);
	ipu_graph_map_tile(g, c, 3);
	ipu_graph_set_init(g, c, &cv, 4);
	cs = ipu_graph_add_compute_set(g, "inc");
	add_binary(g, cs, IPUX_BIN_ADD, (struct ipu_slice){ x, 0, 5 }, (struct ipu_slice){ c, 0, 1 },
		   (struct ipu_slice){ x, 0, 5 });
	body = ipu_step_execute(g, cs);
	sin = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, 20);
	sout = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, 20);
	for (p = 0; p < 2; p++) {
		seq = ipu_step_sequence(g);
		ipu_step_append(g, seq, ipu_step_stream_copy(g, sin, &(struct ipu_slice){ x, 0, 5 }, 1));
		ipu_step_append(g, seq, ipu_step_repeat(g, p ? 0 : 7, body));
		ipu_step_append(g, seq, ipu_step_stream_copy(g, sout, &(struct ipu_slice){ x, 0, 5 }, 1));
		ipu_graph_add_program(g, seq);
	}
	d = open_dev();
	REQUIRE(d && load(d, g) == 0);
	for (p = 0; p < 2; p++) {
		ipu_stream_submit(d, 0, xs, sizeof(xs), 0);
		ipu_stream_submit(d, 1, ys, sizeof(ys), 0);
		CHECK_EQ_INT(ipu_run_sync(d, (uint32_t)p, err, sizeof(err)), 0);
		for (i = 0; i < 5; i++)
			CHECK(ys[i] == xs[i] + (p ? 0.0f : 7.0f));
	}
	ipu_close(d);
	ipu_graph_destroy(g);
}

/* Switch on a selector streamed from the host: cases add 10/20, default 99. */
TEST(switch_cases_and_default)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = 4, one = 1;
	ipu_tensor x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	ipu_tensor sel = ipu_graph_add_tensor(g, "sel", IPUX_DT_I32, 1, &one);
	ipu_tensor k[3];
	const float kv[3] = { 10, 20, 99 };
	uint32_t ssel, sin, sout, i;
	ipu_step cases[2], dflt = 0, seq;
	struct ipu_device *d;
	char err[256];
	int32_t sv;
	const int32_t sels[6] = { 0, 1, 2, -1, 1000, 1 };
	const float expect_add[6] = { 10, 20, 99, 99, 99, 20 };

	ipu_graph_map_tile(g, x, 1);
	ipu_graph_map_tile(g, sel, 2);
	for (i = 0; i < 3; i++) {
		char name[8];
		uint32_t cs;

		snprintf(name, sizeof(name), "k%u", i);
		k[i] = ipu_graph_add_tensor(g, name, IPUX_DT_F32, 1, &one);
		ipu_graph_map_tile(g, k[i], 1);
		ipu_graph_set_init(g, k[i], &kv[i], 4);
		cs = ipu_graph_add_compute_set(g, name);
		add_binary(g, cs, IPUX_BIN_ADD, (struct ipu_slice){ x, 0, 4 },
			   (struct ipu_slice){ k[i], 0, 1 }, (struct ipu_slice){ x, 0, 4 });
		if (i < 2)
			cases[i] = ipu_step_execute(g, cs);
		else
			dflt = ipu_step_execute(g, cs);
	}
	ssel = ipu_graph_add_stream(g, "sel", IPUX_STREAM_H2D, 4);
	sin = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, 16);
	sout = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, 16);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, ssel, &(struct ipu_slice){ sel, 0, 1 }, 1));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sin, &(struct ipu_slice){ x, 0, 4 }, 1));
	ipu_step_append(g, seq, ipu_step_switch(g, sel, cases, 2, dflt));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sout, &(struct ipu_slice){ x, 0, 4 }, 1));
	ipu_graph_add_program(g, seq);
	d = open_dev();
	REQUIRE(d && load(d, g) == 0);
	for (i = 0; i < 6; i++) {
		float xs[4] = { 1, 2, 3, 4 }, ys[4];
		int j;

		sv = sels[i];
		ipu_stream_submit(d, 0, &sv, 4, 0);
		ipu_stream_submit(d, 1, xs, sizeof(xs), 0);
		ipu_stream_submit(d, 2, ys, sizeof(ys), 0);
		CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), 0);
		for (j = 0; j < 4; j++)
			CHECK_MSG(ys[j] == xs[j] + expect_add[i], "selector %d: got %g want %g",
				  sels[i], ys[j], xs[j] + expect_add[i]);
	}
	ipu_close(d);
	ipu_graph_destroy(g);
}

static struct ipu_graph *copy_graph(uint32_t bytes_elems)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = bytes_elems;
	ipu_tensor x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	uint32_t sin, sout;
	ipu_step seq;

	ipu_graph_map_linear(g, x, 0, 2, 1);
	sin = ipu_graph_add_stream(g, "in", IPUX_STREAM_H2D, bytes_elems * 4);
	sout = ipu_graph_add_stream(g, "out", IPUX_STREAM_D2H, bytes_elems * 4);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sin, &(struct ipu_slice){ x, 0, n }, 1));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sout, &(struct ipu_slice){ x, 0, n }, 1));
	ipu_graph_add_program(g, seq);
	return g;
}

/* A stream copy with no buffer queued waits; it proceeds once one is. */
TEST(stream_copy_blocks_until_buffer_queued)
{
	struct ipu_graph *g = copy_graph(64);
	struct ipu_device *d = open_dev();
	float in[64], out[64];
	uint64_t seq;
	char err[256];
	int i;

	REQUIRE(d && load(d, g) == 0);
	for (i = 0; i < 64; i++)
		in[i] = (float)i + 0.25f;
	CHECK_EQ_INT(ipu_run(d, 0, &seq), 0);
	/* nothing queued: still running after 50 ms */
	CHECK_EQ_INT(ipu_wait(d, seq, 50 * 1000000LL, err, sizeof(err)), IPU_E_TIMEOUT);
	{
		struct ipu_device_info info;

		ipu_info(d, &info);
		CHECK_EQ_INT(info.state, IPU_STATE_BUSY);
	}
	CHECK_EQ_INT(ipu_stream_submit(d, 0, in, sizeof(in), 1), 0);
	/* input consumed, now blocked on the output stream */
	CHECK_EQ_INT(ipu_wait(d, seq, 30 * 1000000LL, err, sizeof(err)), IPU_E_TIMEOUT);
	CHECK_EQ_INT(ipu_stream_submit(d, 1, out, sizeof(out), 2), 0);
	CHECK_EQ_INT(ipu_wait(d, seq, -1, err, sizeof(err)), 0);
	CHECK(memcmp(in, out, sizeof(in)) == 0);
	{
		struct ipu_counters k;

		/*
		 * Each stream copy stalled if the device reached it before its
		 * buffer came, which depends on scheduling (a loaded machine may
		 * start the run late): at most one stall per copy, and a stall
		 * has a duration.  That the run could not finish without the
		 * buffers is what the waits above prove.
		 */
		ipu_counters(d, &k);
		CHECK(k.stream_stalls <= 2);
		CHECK(k.stream_stalls == 0 || k.stall_ns > 0);
	}
	ipu_close(d);
	ipu_graph_destroy(g);
}

/* Abort while waiting on a stream: the run and queued runs are cancelled. */
TEST(abort_while_stalled)
{
	struct ipu_graph *g = copy_graph(16);
	struct ipu_device *d = open_dev();
	float in[16] = { 0 }, out[16];
	uint64_t s1, s2;
	char err[256];

	REQUIRE(d && load(d, g) == 0);
	CHECK_EQ_INT(ipu_run(d, 0, &s1), 0);
	CHECK_EQ_INT(ipu_run(d, 0, &s2), 0);
	CHECK_EQ_INT(ipu_wait(d, s1, 20 * 1000000LL, err, sizeof(err)), IPU_E_TIMEOUT);
	CHECK_EQ_INT(ipu_abort(d), 0);
	CHECK_EQ_INT(ipu_wait(d, s1, -1, err, sizeof(err)), IPU_E_CANCELLED);
	CHECK_EQ_INT(ipu_wait(d, s2, -1, err, sizeof(err)), IPU_E_CANCELLED);
	/* the device still works afterwards */
	ipu_stream_submit(d, 0, in, sizeof(in), 0);
	ipu_stream_submit(d, 1, out, sizeof(out), 0);
	CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), 0);
	/* queued buffers are completed as cancelled by an abort */
	ipu_stream_submit(d, 0, in, sizeof(in), 77);
	CHECK_EQ_INT(ipu_abort(d), 0);
	{
		struct ipu_completion c[8];
		int n = ipu_stream_poll(d, c, 8, 0), found = 0, i;

		for (i = 0; i < n; i++)
			if (c[i].tag == 77 && c[i].status == IPU_E_CANCELLED)
				found = 1;
		CHECK(found);
	}
	/* reset unloads */
	CHECK_EQ_INT(ipu_reset(d), 0);
	CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), IPU_E_NOT_LOADED);
	ipu_close(d);
	ipu_graph_destroy(g);
}

/* ipu_run_here: on the caller's thread when idle, else IPU_E_BUSY; aborts reach it. */
struct here_ctx {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pthread_t caller;
	int on_caller, calls;		/* under lock */
	uint64_t seq;
	int status;
	struct ipu_device *d;
};

static void here_handler(void *ctx, uint64_t seq, int status, const char *msg)
{
	struct here_ctx *h = ctx;

	(void)msg;
	pthread_mutex_lock(&h->lock);
	h->on_caller = pthread_equal(pthread_self(), h->caller);
	h->calls++;
	h->seq = seq;
	h->status = status;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->lock);
}

/* Wait for the n-th report (ipu_wait may return before a run's handler ran). */
static void wait_calls(struct here_ctx *h, int n)
{
	pthread_mutex_lock(&h->lock);
	while (h->calls < n)
		pthread_cond_wait(&h->cv, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

/* ipu_run_here once the device is idle (a handler may still be returning). */
static int run_here_when_idle(struct ipu_device *d, uint64_t *seq)
{
	struct timespec ts = { 0, 100000L };
	int rc;

	while ((rc = ipu_run_here(d, 0, seq)) == IPU_E_BUSY)
		nanosleep(&ts, NULL);
	return rc;
}

/* Abort once the device runs (the caller's run here, stalled on a buffer). */
static void *abort_when_busy(void *arg)
{
	struct here_ctx *h = arg;
	struct timespec ts = { 0, 1000000L };
	struct ipu_device_info info;

	do {
		nanosleep(&ts, NULL);
		ipu_info(h->d, &info);
	} while (info.state != IPU_STATE_BUSY);
	ipu_abort(h->d);
	return NULL;
}

TEST(run_here)
{
	struct ipu_graph *g = copy_graph(16);
	struct ipu_device *d = open_dev();
	struct here_ctx h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
			      .caller = pthread_self() };
	float in[16], out[16];
	uint64_t seq, s1;
	char err[256];
	pthread_t th;
	int i;

	REQUIRE(d && load(d, g) == 0);
	h.d = d;
	ipu_set_run_handler(d, here_handler, &h);
	for (i = 0; i < 16; i++)
		in[i] = (float)i * 3;
	ipu_stream_submit(d, 0, in, sizeof(in), 0);
	ipu_stream_submit(d, 1, out, sizeof(out), 0);
	CHECK_EQ_INT(ipu_run_here(d, 0, &seq), 0);
	/* done when it returns, reported on this thread */
	CHECK_EQ_INT(h.calls, 1);
	CHECK(h.on_caller);
	CHECK_EQ_INT(h.seq, seq);
	CHECK_EQ_INT(h.status, 0);
	CHECK(memcmp(in, out, sizeof(in)) == 0);
	CHECK_EQ_INT(ipu_wait(d, seq, 0, err, sizeof(err)), 0);
	/* a queued run (waiting for its buffers) makes the device busy */
	CHECK_EQ_INT(ipu_run(d, 0, &s1), 0);
	CHECK_EQ_INT(ipu_run_here(d, 0, &seq), IPU_E_BUSY);
	ipu_stream_submit(d, 0, in, sizeof(in), 0);
	ipu_stream_submit(d, 1, out, sizeof(out), 0);
	CHECK_EQ_INT(ipu_wait(d, s1, -1, err, sizeof(err)), 0);
	wait_calls(&h, 2);
	CHECK(!h.on_caller);
	/* a run here waiting for a buffer is cancelled by an abort from another thread */
	REQUIRE(pthread_create(&th, NULL, abort_when_busy, &h) == 0);
	CHECK_EQ_INT(run_here_when_idle(d, &seq), 0);
	pthread_join(th, NULL);
	CHECK_EQ_INT(h.calls, 3);
	CHECK_EQ_INT(h.status, IPU_E_CANCELLED);
	CHECK_EQ_INT(ipu_wait(d, seq, -1, err, sizeof(err)), IPU_E_CANCELLED);
	/* and the device works afterwards, here and queued */
	ipu_stream_submit(d, 0, in, sizeof(in), 0);
	ipu_stream_submit(d, 1, out, sizeof(out), 0);
	CHECK_EQ_INT(ipu_run_here(d, 0, &seq), 0);
	CHECK_EQ_INT(h.status, 0);
	ipu_stream_submit(d, 0, in, sizeof(in), 0);
	ipu_stream_submit(d, 1, out, sizeof(out), 0);
	CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), 0);
	wait_calls(&h, 5);
	ipu_set_run_handler(d, NULL, NULL);
	CHECK_EQ_INT(ipu_reset(d), 0);
	CHECK_EQ_INT(ipu_run_here(d, 0, &seq), IPU_E_NOT_LOADED);
	ipu_close(d);
	ipu_graph_destroy(g);
}

/* Programs, bad program index, executable too big for the device. */
TEST(programs_and_device_limits)
{
	struct ipu_graph *g = copy_graph(8);
	struct ipu_device *d, *small = NULL;
	void *img;
	size_t len;
	char err[256];
	int rc;

	d = open_dev();
	REQUIRE(d && load(d, g) == 0);
	CHECK_EQ_INT(ipu_run_sync(d, 5, err, sizeof(err)), IPU_E_PROGRAM);
	CHECK(strstr(err, "program 5") != NULL);
	/* the executable uses 2 tiles: a 1-tile device refuses it */
	REQUIRE(ipu_graph_compile(g, &img, &len, NULL) == 0);
	REQUIRE(ipu_open("model:tiles=1,tile_mem=64k,workers=1", &small, err, sizeof(err)) == 0);
	rc = test_load_image(small, img, len, err, sizeof(err));
	CHECK_EQ_INT(rc, IPUX_E_TILES);
	CHECK(strstr(err, "needs 2 tiles") != NULL);
	ipu_close(small);
	CHECK_EQ_INT(ipu_open("model:tiles=x", &small, err, sizeof(err)), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_open("model:colour=red", &small, err, sizeof(err)), IPU_E_INVAL);
	CHECK(strstr(err, "colour") != NULL);
	CHECK_EQ_INT(ipu_open("tpu0", &small, err, sizeof(err)), IPU_E_INVAL);
	free(img);
	ipu_close(d);
	ipu_graph_destroy(g);
}

/* Builder errors name what is wrong. */
TEST(builder_errors)
{
	struct ipu_graph *g = ipu_graph_create(4, 1024);
	uint64_t n = 300, m = 10;
	ipu_tensor big = ipu_graph_add_tensor(g, "big", IPUX_DT_F32, 1, &n);
	void *img;
	size_t len;

	/* 1200 bytes do not fit a 1024-byte tile */
	CHECK(ipu_graph_map_tile(g, big, 0) < 0);
	CHECK(strstr(ipu_graph_error(g), "big") != NULL);
	ipu_graph_destroy(g);

	g = ipu_graph_create(4, 1024);
	big = ipu_graph_add_tensor(g, "a", IPUX_DT_F32, 1, &m);
	ipu_graph_add_program(g, ipu_step_sequence(g));
	CHECK(ipu_graph_compile(g, &img, &len, NULL) < 0);
	CHECK(strstr(ipu_graph_error(g), "not mapped") != NULL);
	ipu_graph_destroy(g);

	g = ipu_graph_create(4, 1024);
	{
		ipu_tensor a = ipu_graph_add_tensor(g, "a", IPUX_DT_F32, 1, &m);
		ipu_tensor b = ipu_graph_add_tensor(g, "b", IPUX_DT_F32, 1, &m);
		uint32_t cs = ipu_graph_add_compute_set(g, "cs");
		struct ipu_slice ops[2] = { { a, 0, 10 }, { b, 0, 10 } };

		ipu_graph_map_tile(g, a, 0);
		ipu_graph_map_tile(g, b, 1);
		CHECK(ipu_graph_add_vertex(g, cs, IPUX_CL_COPY, ops, 2, NULL, 0) < 0);
		CHECK(strstr(ipu_graph_error(g), "tile") != NULL);
	}
	ipu_graph_destroy(g);

	/* a vertex whose codelet check fails is caught by compile's verification */
	g = ipu_graph_create(4, 1024);
	{
		ipu_tensor a = ipu_graph_add_tensor(g, "a", IPUX_DT_F32, 1, &m);
		uint64_t five = 5;
		ipu_tensor b = ipu_graph_add_tensor(g, "b", IPUX_DT_F32, 1, &five);
		uint32_t cs = ipu_graph_add_compute_set(g, "cs");
		struct ipu_slice ops[2] = { { a, 0, 10 }, { b, 0, 5 } };

		ipu_graph_map_tile(g, a, 0);
		ipu_graph_map_tile(g, b, 0);
		ipu_graph_add_vertex(g, cs, IPUX_CL_COPY, ops, 2, NULL, 0);
		ipu_graph_add_program(g, ipu_step_execute(g, cs));
		CHECK(ipu_graph_compile(g, &img, &len, NULL) < 0);
		CHECK(strstr(ipu_graph_error(g), "does not verify") != NULL);
	}
	ipu_graph_destroy(g);
}

/* Concurrent submitters and a completion handler. */
struct hctx {
	pthread_mutex_t lock;
	int count;
};

static void handler(void *ctx, const struct ipu_completion *c)
{
	struct hctx *h = ctx;

	if (c->status == 0) {
		pthread_mutex_lock(&h->lock);
		h->count++;
		pthread_mutex_unlock(&h->lock);
	}
}

TEST(many_runs_with_handler)
{
	struct ipu_graph *g = copy_graph(32);
	struct ipu_device *d = open_dev();
	static float in[100][32], out[100][32];
	struct hctx h = { PTHREAD_MUTEX_INITIALIZER, 0 };
	uint64_t seqs[100];
	char err[256];
	int i, j, ok = 1;

	REQUIRE(d && load(d, g) == 0);
	ipu_set_completion_handler(d, handler, &h);
	for (i = 0; i < 100; i++) {
		for (j = 0; j < 32; j++)
			in[i][j] = (float)(i * 100 + j);
		ipu_run(d, 0, &seqs[i]);
	}
	/* submit after the runs were queued: they wait for buffers in order */
	for (i = 0; i < 100; i++) {
		ipu_stream_submit(d, 0, in[i], sizeof(in[i]), (uint64_t)i);
		ipu_stream_submit(d, 1, out[i], sizeof(out[i]), (uint64_t)i);
	}
	for (i = 0; i < 100; i++)
		CHECK_EQ_INT(ipu_wait(d, seqs[i], -1, err, sizeof(err)), 0);
	for (i = 0; i < 100; i++)
		if (memcmp(in[i], out[i], sizeof(in[i])))
			ok = 0;
	CHECK(ok);
	CHECK_EQ_INT(h.count, 200);
	ipu_close(d);
	ipu_graph_destroy(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(stream_compute_stream);
	RUN(exchange_rotation_reads_before_writes);
	RUN(exchange_then_compute);
	RUN(repeat);
	RUN(switch_cases_and_default);
	RUN(stream_copy_blocks_until_buffer_queued);
	RUN(abort_while_stalled);
	RUN(run_here);
	RUN(programs_and_device_limits);
	RUN(builder_errors);
	RUN(many_runs_with_handler);
	return TH_DONE();
}
