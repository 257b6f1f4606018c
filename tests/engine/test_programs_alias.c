// SPDX-License-Identifier: MIT
/*
 * test_programs_alias.c - copy elision (ipu_engine_set_elide): programs
 * built so that an exchange copy may or may not be read from its source
 * in place, run on two engines, one keeping every copy and one eliding;
 * the results and the modelled counters must be the same, and the host
 * read of the destination says whether the copy was elided.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/codelet.h"
#include "ipu/engine.h"
#include "ipu/graph.h"

#define TILES 4
#define TILE_MEM (64 * 1024)
#define N 300
#define RUNS 3

struct tensors {
	ipu_tensor x, y, z, w;
};

struct result {
	float z[N], w[N];
	int y_read;		/* rc of the host read of y */
	struct ipu_engine_counters k;
};

static struct ipu_graph *base_graph(struct tensors *t)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	uint64_t n = N;
	float init[N];
	int i;

	if (!g)
		return NULL;
	ipu_graph_set_memory_reuse(g, 0);
	t->x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	t->y = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &n);
	t->z = ipu_graph_add_tensor(g, "z", IPUX_DT_F32, 1, &n);
	t->w = ipu_graph_add_tensor(g, "w", IPUX_DT_F32, 1, &n);
	ipu_graph_map_tile(g, t->x, 0);
	ipu_graph_map_tile(g, t->y, 1);
	ipu_graph_map_tile(g, t->z, 1);
	ipu_graph_map_tile(g, t->w, 2);
	for (i = 0; i < N; i++)
		init[i] = (float)(i % 17) * 0.5f - 3.0f;
	ipu_graph_set_init(g, t->x, init, sizeof(init));
	return g;
}

static struct ipu_slice all(ipu_tensor t)
{
	return (struct ipu_slice){ t, 0, N };
}

/* A compute step with one vertex: out = a + b on out's tile. */
static ipu_step add_step(struct ipu_graph *g, ipu_tensor a, ipu_tensor b, ipu_tensor out)
{
	uint32_t cs = ipu_graph_add_compute_set(g, "add");
	struct ipu_slice ops[3] = { all(a), all(b), all(out) };
	uint32_t p[5] = { IPUX_BIN_ADD, 1, N, 1, 1 };

	ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, ops, 3, p, 5);
	return ipu_step_execute(g, cs);
}

static int tensor_at(struct ipu_graph *g, ipu_tensor t, uint32_t *tile, uint32_t *off)
{
	uint64_t b, e;

	return ipu_graph_tensor_location(g, t, 0, tile, &b, &e, off);
}

/* Run program 0 RUNS times on an engine eliding or not. */
static int run(struct ipu_graph *g, const struct tensors *t, const void *img, size_t len,
	       int elide, struct result *r)
{
	struct ipu_engine_config cfg = { TILES, TILE_MEM, 2 };
	struct ipu_engine *e;
	uint32_t tile, off;
	char err[256];
	float y[N];
	int i, rc;

	memset(r, 0, sizeof(*r));
	rc = ipu_engine_create(&cfg, NULL, &e, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "create: %s\n", err);
		return rc;
	}
	ipu_engine_set_elide(e, elide);
	rc = ipu_engine_load(e, img, len, err, sizeof(err));
	for (i = 0; i < RUNS && !rc; i++)
		rc = ipu_engine_run(e, 0, err, sizeof(err));
	if (rc)
		fprintf(stderr, "load/run: %s\n", err);
	if (!rc)
		rc = tensor_at(g, t->z, &tile, &off) ? -1 : ipu_engine_read(e, tile, off, r->z, sizeof(r->z));
	if (!rc)
		rc = tensor_at(g, t->w, &tile, &off) ? -1 : ipu_engine_read(e, tile, off, r->w, sizeof(r->w));
	if (!rc && !tensor_at(g, t->y, &tile, &off))
		r->y_read = ipu_engine_read(e, tile, off, y, sizeof(y));
	ipu_engine_counters(e, &r->k);
	ipu_engine_destroy(e);
	return rc;
}

/*
 * Program `root` of g: the same results and counters with and without
 * elision; y's copy elided (its host read refused) iff want_elided.
 */
static void check_same(struct ipu_graph *g, const struct tensors *t, ipu_step root,
		       int want_elided, const char *what)
{
	struct result a, b;
	void *img = NULL;
	size_t len = 0;

	ipu_graph_add_program(g, root);
	CHECK_MSG(ipu_graph_compile(g, &img, &len, NULL) == 0, "%s: compile: %s", what,
		  ipu_graph_error(g));
	if (!img)
		return;
	CHECK_MSG(run(g, t, img, len, 0, &a) == 0, "%s: run keeping copies", what);
	CHECK_MSG(run(g, t, img, len, 1, &b) == 0, "%s: run eliding", what);
	CHECK_MSG(!memcmp(a.z, b.z, sizeof(a.z)) && !memcmp(a.w, b.w, sizeof(a.w)),
		  "%s: results differ", what);
	CHECK_MSG(a.k.cycles == b.k.cycles && a.k.exchange_bytes == b.k.exchange_bytes &&
			  a.k.exchange_cycles == b.k.exchange_cycles && a.k.steps == b.k.steps,
		  "%s: counters differ (cycles %llu/%llu, exchange bytes %llu/%llu)", what,
		  (unsigned long long)a.k.cycles, (unsigned long long)b.k.cycles,
		  (unsigned long long)a.k.exchange_bytes, (unsigned long long)b.k.exchange_bytes);
	CHECK_MSG(a.y_read == 0, "%s: y unreadable without elision", what);
	CHECK_MSG((b.y_read != 0) == want_elided, "%s: y's copy %s", what,
		  want_elided ? "kept" : "elided");
	free(img);
}

/* y = x, then z = y + y: the copy is read in place. */
TEST(read_only_destination)
{
	struct tensors t;
	struct ipu_graph *g = base_graph(&t);
	ipu_step seq;

	REQUIRE(g);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_copy(g, all(t.x), all(t.y)));
	ipu_step_append(g, seq, add_step(g, t.y, t.y, t.z));
	check_same(g, &t, seq, 1, "read-only destination");
	ipu_graph_destroy(g);
}

/* x changes between the copy and y's reader: the copy is kept. */
TEST(source_written_before_reader)
{
	struct tensors t;
	struct ipu_graph *g = base_graph(&t);
	ipu_step seq;

	REQUIRE(g);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_copy(g, all(t.x), all(t.y)));
	ipu_step_append(g, seq, add_step(g, t.x, t.x, t.x));
	ipu_step_append(g, seq, add_step(g, t.y, t.y, t.z));
	check_same(g, &t, seq, 0, "source written before the reader");
	ipu_graph_destroy(g);
}

/* y is read before the copy (the previous run's value): kept. */
TEST(reader_before_copy)
{
	struct tensors t;
	struct ipu_graph *g = base_graph(&t);
	ipu_step seq;

	REQUIRE(g);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, add_step(g, t.y, t.y, t.z));
	ipu_step_append(g, seq, ipu_step_copy(g, all(t.x), all(t.y)));
	ipu_step_append(g, seq, add_step(g, t.x, t.x, t.x));
	check_same(g, &t, seq, 0, "reader before the copy");
	ipu_graph_destroy(g);
}

/* A vertex writes y after the copy: kept. */
TEST(destination_written)
{
	struct tensors t;
	struct ipu_graph *g = base_graph(&t);
	ipu_step seq;

	REQUIRE(g);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_copy(g, all(t.x), all(t.y)));
	ipu_step_append(g, seq, add_step(g, t.y, t.y, t.y));
	ipu_step_append(g, seq, add_step(g, t.y, t.y, t.z));
	check_same(g, &t, seq, 0, "destination written");
	ipu_graph_destroy(g);
}

/* x -> y -> w, w += w: y's copy elided, w's (reading y) kept. */
TEST(chain)
{
	struct tensors t;
	struct ipu_graph *g = base_graph(&t);
	ipu_step seq;

	REQUIRE(g);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_copy(g, all(t.x), all(t.y)));
	ipu_step_append(g, seq, ipu_step_copy(g, all(t.y), all(t.w)));
	ipu_step_append(g, seq, add_step(g, t.w, t.w, t.w));
	check_same(g, &t, seq, 1, "chain");
	ipu_graph_destroy(g);
}

/* In a loop, x is rewritten after y's last reader: elided. */
TEST(repeat_source_rewritten_after_readers)
{
	struct tensors t;
	struct ipu_graph *g = base_graph(&t);
	ipu_step seq;

	REQUIRE(g);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_copy(g, all(t.x), all(t.y)));
	ipu_step_append(g, seq, add_step(g, t.y, t.y, t.z));
	ipu_step_append(g, seq, add_step(g, t.x, t.x, t.x));
	check_same(g, &t, ipu_step_repeat(g, 3, seq), 1, "repeat");
	ipu_graph_destroy(g);
}

/* The copy's step used twice: nothing is elided. */
TEST(shared_step)
{
	struct tensors t;
	struct ipu_graph *g = base_graph(&t);
	ipu_step seq, cp;

	REQUIRE(g);
	seq = ipu_step_sequence(g);
	cp = ipu_step_copy(g, all(t.x), all(t.y));
	ipu_step_append(g, seq, cp);
	ipu_step_append(g, seq, add_step(g, t.y, t.y, t.z));
	ipu_step_append(g, seq, add_step(g, t.x, t.x, t.x));
	ipu_step_append(g, seq, cp);
	check_same(g, &t, seq, 0, "shared step");
	ipu_graph_destroy(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(read_only_destination);
	RUN(source_written_before_reader);
	RUN(reader_before_copy);
	RUN(destination_written);
	RUN(chain);
	RUN(repeat_source_rewritten_after_readers);
	RUN(shared_step);
	return TH_DONE();
}
