// SPDX-License-Identifier: MIT
/*
 * test_graph_alloc.c - tile memory reuse by liveness (compiler/graph/
 * graph_live.c, graph_alloc.c): the placement of live ranges, the
 * liveness rules on small programs (where each tensor lands), and a
 * property test: seeded random programs (elementwise compute sets,
 * exchanges, stream copies, Repeat and Switch, in-place updates, reads of
 * tensors no step wrote, tensors written by many small copies, constants)
 * compiled with and without reuse and
 * run on the in-process device must give bit-identical outputs over
 * several runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_alloc.h"
#include "harness.h"
#include "load_image.h"
#include "ipu/codelet.h"
#include "ipu/graph.h"
#include "ipu/ipu.h"

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64: a fixed sequence per seed */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd(uint64_t *s, uint32_t n)
{
	return (uint32_t)(rng_next(s) % n);
}

static int blocks_meet(const struct ga_block *a, const struct ga_block *b)
{
	return a->first <= b->last && b->first <= a->last;
}

/* Blocks live at the same time never share a byte; offsets are aligned. */
static int placement_ok(const struct ga_block *b, uint32_t n, uint64_t peak)
{
	uint64_t top = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (b[i].offset % b[i].align)
			return 0;
		if (b[i].offset + b[i].bytes > top)
			top = b[i].offset + b[i].bytes;
		for (uint32_t j = 0; j < i; j++)
			if (blocks_meet(&b[i], &b[j]) && b[i].offset < b[j].offset + b[j].bytes &&
			    b[j].offset < b[i].offset + b[i].bytes)
				return 0;
	}
	return top == peak;
}

TEST(place_chain_shares)
{
	struct ga_block b[3] = {
		{ 100, 16, 0, 1, 0 }, { 100, 16, 1, 2, 0 }, { 100, 16, 2, 3, 0 },
	};
	uint64_t peak = ga_place(b, 3);
	uint32_t at;

	CHECK(placement_ok(b, 3, peak));
	CHECK_EQ_INT(peak, 212);
	CHECK_EQ_INT(b[0].offset, b[2].offset);
	CHECK_EQ_INT(ga_max_live(b, 3, &at), 200);
	CHECK(at == 1 || at == 2);
}

TEST(place_pinned_first_in_order)
{
	struct ga_block b[4] = {
		{ 40, 16, 5, 6, 0 },
		{ 10, 16, GA_PINNED_FIRST, GA_PINNED_LAST, 0 },
		{ 8, 8, GA_PINNED_FIRST, GA_PINNED_LAST, 0 },
		{ 40, 16, 7, 9, 0 },
	};
	uint64_t peak = ga_place(b, 4);

	CHECK(placement_ok(b, 4, peak));
	CHECK_EQ_INT(b[1].offset, 0);
	CHECK_EQ_INT(b[2].offset, 16);
	/* the two disjoint blocks share the memory above the pinned ones */
	CHECK_EQ_INT(b[0].offset, 32);
	CHECK_EQ_INT(b[3].offset, 32);
	CHECK_EQ_INT(peak, 72);
}

TEST(place_fills_gaps)
{
	/* a long-lived small block between two big ones that are live
	 * one after the other: the later big one reuses the first's bytes */
	struct ga_block b[3] = {
		{ 1024, 16, 0, 3, 0 }, { 64, 16, 0, 9, 0 }, { 1024, 16, 4, 9, 0 },
	};
	uint64_t peak = ga_place(b, 3);

	CHECK(placement_ok(b, 3, peak));
	CHECK_EQ_INT(peak, 1088);
}

TEST(place_random_never_overlaps)
{
	uint64_t seed = 12345;
	struct ga_block b[80];

	for (int iter = 0; iter < 400; iter++) {
		uint32_t n = 1 + rnd(&seed, 80), at;
		uint64_t sum = 0, peak, live;

		for (uint32_t i = 0; i < n; i++) {
			uint32_t f = rnd(&seed, 100), len = rnd(&seed, 30);

			b[i].bytes = 1 + rnd(&seed, iter % 2 ? 5000 : 64);
			b[i].align = 16u << rnd(&seed, 3);
			if (rnd(&seed, 8) == 0) {
				b[i].first = GA_PINNED_FIRST;
				b[i].last = GA_PINNED_LAST;
			} else {
				b[i].first = f;
				b[i].last = f + len;
			}
			b[i].offset = 0;
			sum += (b[i].bytes + b[i].align - 1) / b[i].align * b[i].align + b[i].align;
		}
		peak = ga_place(b, n);
		live = ga_max_live(b, n, &at);
		CHECK_MSG(placement_ok(b, n, peak), "iteration %d", iter);
		CHECK_MSG(peak >= live && peak <= sum, "iteration %d: peak %llu, live %llu, sum %llu",
			  iter, (unsigned long long)peak, (unsigned long long)live,
			  (unsigned long long)sum);
	}
}

/* --- liveness on built programs --------------------------------------- */

#define N 64			/* elements of every tensor */
#define TILES 4
#define TILE_MEM (64 * 1024)

/* Does any byte of t share memory with any byte of u? */
static int share(struct ipu_graph *g, ipu_tensor t, ipu_tensor u)
{
	for (uint32_t i = 0;; i++) {
		uint32_t ta, oa;
		uint64_t ba, ea;

		if (ipu_graph_tensor_location(g, t, i, &ta, &ba, &ea, &oa))
			return 0;
		for (uint32_t j = 0;; j++) {
			uint32_t tb, ob;
			uint64_t bb, eb;

			if (ipu_graph_tensor_location(g, u, j, &tb, &bb, &eb, &ob))
				break;
			if (ta == tb && oa < ob + (eb - bb) * 4 && ob < oa + (ea - ba) * 4)
				return 1;
		}
	}
}

/* out = a OP b elementwise, one vertex per piece (all on the same tiles). */
static void binary(struct ipu_graph *g, uint32_t cs, uint32_t op, ipu_tensor a, ipu_tensor b,
		   ipu_tensor out)
{
	for (uint32_t k = 0; k < TILES; k++) {
		uint64_t s = (uint64_t)k * (N / TILES), c = N / TILES;
		struct ipu_slice ops[3] = { { a, s, c }, { b, s, c }, { out, s, c } };
		uint32_t p[5] = { op, 1, (uint32_t)c, 1, 1 };

		ipu_graph_add_vertex(g, cs, IPUX_CL_BINARY, ops, 3, p, 5);
	}
}

static void unary(struct ipu_graph *g, uint32_t cs, uint32_t op, ipu_tensor a, ipu_tensor out)
{
	for (uint32_t k = 0; k < TILES; k++) {
		uint64_t s = (uint64_t)k * (N / TILES), c = N / TILES;
		struct ipu_slice ops[2] = { { a, s, c }, { out, s, c } };
		uint32_t p[1] = { op };

		ipu_graph_add_vertex(g, cs, IPUX_CL_UNARY, ops, 2, p, 1);
	}
}

static ipu_tensor tensor(struct ipu_graph *g, const char *name, uint32_t shift)
{
	uint64_t n = N;
	ipu_tensor t = ipu_graph_add_tensor(g, name, IPUX_DT_F32, 1, &n);

	for (uint32_t k = 0; k < TILES; k++)
		ipu_graph_map(g, t, (k + shift) % TILES, (uint64_t)k * (N / TILES),
			      (uint64_t)(k + 1) * (N / TILES));
	return t;
}

static ipu_step exec_new(struct ipu_graph *g, ipu_step seq, const char *name, uint32_t *cs)
{
	*cs = ipu_graph_add_compute_set(g, name);
	return ipu_step_append(g, seq, ipu_step_execute(g, *cs));
}

static int compile(struct ipu_graph *g, void **img, size_t *len, struct ipu_graph_stats *st)
{
	if (ipu_graph_compile(g, img, len, st)) {
		fprintf(stderr, "  compile: %s\n", ipu_graph_error(g));
		return -1;
	}
	return 0;
}

TEST(chain_shares_dead_tensors)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	ipu_tensor x, y, z, w;
	uint32_t in, out, cs;
	ipu_step seq;
	void *img = NULL;
	size_t len;
	struct ipu_graph_stats st;

	REQUIRE(g);
	ipu_graph_set_memory_reuse(g, 1);
	x = tensor(g, "x", 0);
	y = tensor(g, "y", 0);
	z = tensor(g, "z", 0);
	w = tensor(g, "w", 0);
	in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, N * 4);
	out = ipu_graph_add_stream(g, "w", IPUX_STREAM_D2H, N * 4);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, N }, 1));
	exec_new(g, seq, "y", &cs);
	binary(g, cs, IPUX_BIN_ADD, x, x, y);
	exec_new(g, seq, "z", &cs);
	unary(g, cs, IPUX_UN_TANH, y, z);
	exec_new(g, seq, "w", &cs);
	binary(g, cs, IPUX_BIN_MUL, z, z, w);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, out, &(struct ipu_slice){ w, 0, N }, 1));
	ipu_graph_add_program(g, seq);
	REQUIRE(compile(g, &img, &len, &st) == 0);
	/* x dies at "y", z is born at "z": they share; so do y and w */
	CHECK(share(g, x, z));
	CHECK(share(g, y, w));
	CHECK(!share(g, x, y) && !share(g, y, z) && !share(g, z, w));
	CHECK_EQ_INT(st.memory_reuse, 1);
	CHECK_EQ_INT(st.mem_max, 2 * (N / TILES) * 4);
	CHECK_EQ_INT(st.mem_max_no_reuse, 4 * (N / TILES) * 4);
	free(img);
	ipu_graph_destroy(g);
}

/* Which tensors must keep their memory: constants, tensors read before
 * written (an accumulator across runs; in the second program too), a value
 * written in a Switch case and read after it; tensors used in a loop live
 * through it; tensors of different Switch cases share. */
TEST(pinned_and_scoped_tensors)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	ipu_tensor x, c, acc, shared, q, t1, t2, late, idx, v1, v2, u1, u2;
	uint32_t in, sel, cs;
	ipu_step seq, seq2, cases[2], body, dflt;
	float ones[N];
	uint64_t one = 1;
	void *img = NULL;
	size_t len;

	REQUIRE(g);
	ipu_graph_set_memory_reuse(g, 1);
	for (int i = 0; i < N; i++)
		ones[i] = 1.0f;
	x = tensor(g, "x", 0);
	c = tensor(g, "c", 0);
	ipu_graph_set_init(g, c, ones, sizeof(ones));
	acc = tensor(g, "acc", 0);
	shared = tensor(g, "shared", 0);
	q = tensor(g, "q", 0);
	t1 = tensor(g, "t1", 0);
	t2 = tensor(g, "t2", 0);
	late = tensor(g, "late", 0);
	v1 = tensor(g, "v1", 0);
	v2 = tensor(g, "v2", 0);
	u1 = tensor(g, "u1", 0);
	u2 = tensor(g, "u2", 0);
	idx = ipu_graph_add_tensor(g, "idx", IPUX_DT_I32, 1, &one);
	ipu_graph_map_tile(g, idx, 0);
	in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, N * 4);
	sel = ipu_graph_add_stream(g, "idx", IPUX_STREAM_H2D, 4);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, N }, 1));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sel, &(struct ipu_slice){ idx, 0, 1 }, 1));
	exec_new(g, seq, "acc", &cs);
	binary(g, cs, IPUX_BIN_ADD, acc, x, acc);	/* reads last run's acc */
	exec_new(g, seq, "shared", &cs);
	binary(g, cs, IPUX_BIN_ADD, x, c, shared);
	/* q is written only in case 0 and read after the switch */
	cases[0] = ipu_step_sequence(g);
	exec_new(g, cases[0], "q", &cs);
	unary(g, cs, IPUX_UN_TANH, x, q);
	/* v1, v2 only in case 0, u1, u2 only in case 1: one of them runs */
	exec_new(g, cases[0], "v1", &cs);
	binary(g, cs, IPUX_BIN_ADD, x, x, v1);
	exec_new(g, cases[0], "v2", &cs);
	binary(g, cs, IPUX_BIN_MUL, v1, v1, v2);
	cases[1] = ipu_step_sequence(g);
	exec_new(g, cases[1], "u1", &cs);
	binary(g, cs, IPUX_BIN_MUL, x, x, u1);
	exec_new(g, cases[1], "u2", &cs);
	binary(g, cs, IPUX_BIN_ADD, u1, x, u2);
	dflt = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_switch(g, idx, cases, 2, dflt));
	exec_new(g, seq, "read q", &cs);
	binary(g, cs, IPUX_BIN_ADD, q, x, t2);
	/* t1 is used in a loop whose body also writes t2 */
	body = ipu_step_sequence(g);
	exec_new(g, body, "t1", &cs);
	binary(g, cs, IPUX_BIN_MUL, t2, t2, t1);
	exec_new(g, body, "t2", &cs);
	binary(g, cs, IPUX_BIN_ADD, t1, x, t2);
	ipu_step_append(g, seq, ipu_step_repeat(g, 3, body));
	exec_new(g, seq, "late", &cs);
	binary(g, cs, IPUX_BIN_ADD, t2, t2, late);
	ipu_graph_add_program(g, seq);
	seq2 = ipu_step_sequence(g);
	exec_new(g, seq2, "second program", &cs);
	unary(g, cs, IPUX_UN_RELU, shared, shared);
	ipu_graph_add_program(g, seq2);
	REQUIRE(compile(g, &img, &len, NULL) == 0);
	{
		ipu_tensor all[] = { x, c, acc, shared, q, t1, t2, late };
		const ipu_tensor pinned[] = { c, acc, shared, q };

		/* nothing shares with the pinned tensors */
		for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++)
			for (size_t j = 0; j < sizeof(all) / sizeof(all[0]); j++)
				if (pinned[i] != all[j])
					CHECK_MSG(!share(g, pinned[i], all[j]), "%zu, %zu", i, j);
		/* t1 lives through the whole loop, so it cannot take x's or t2's
		 * memory; late is born after both x and t1 died */
		CHECK(!share(g, t1, x) && !share(g, t1, t2));
		CHECK(share(g, late, x) || share(g, late, t1));
		CHECK(share(g, v1, u1) || share(g, v1, u2) || share(g, v2, u1) || share(g, v2, u2));
		CHECK(!share(g, v1, x) && !share(g, u1, x) && !share(g, v1, v2) && !share(g, u1, u2));
	}
	free(img);
	ipu_graph_destroy(g);
}

static int is_pinned(const struct ga_live *lv, ipu_tensor t, uint32_t k)
{
	uint32_t p = lv->base[t] + k;

	return lv->first[p] == GA_PINNED_FIRST && lv->last[p] == GA_PINNED_LAST;
}

/* Two programs (one runs at a time, each from position 0): a value each
 * writes before it reads is live only within a run, so the tensors of
 * both programs share memory like those of one; a value one program
 * leaves for the other keeps its memory. */
TEST(programs_share_their_temporaries)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	ipu_tensor x, tmp, b, d, carry;
	uint32_t in, out, cs;
	ipu_step p0, p1;
	void *img = NULL;
	size_t len;
	struct ipu_graph_stats st;
	struct ga_live lv;

	REQUIRE(g);
	ipu_graph_set_memory_reuse(g, 1);
	x = tensor(g, "x", 0);
	tmp = tensor(g, "tmp", 0);
	b = tensor(g, "b", 0);
	d = tensor(g, "d", 0);
	carry = tensor(g, "carry", 0);
	in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, N * 4);
	out = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, N * 4);
	/* program 0: tmp = x + x; b = tanh(tmp); carry = b * b; out b */
	p0 = ipu_step_sequence(g);
	ipu_step_append(g, p0, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, N }, 1));
	exec_new(g, p0, "tmp0", &cs);
	binary(g, cs, IPUX_BIN_ADD, x, x, tmp);
	exec_new(g, p0, "b", &cs);
	unary(g, cs, IPUX_UN_TANH, tmp, b);
	exec_new(g, p0, "carry", &cs);
	binary(g, cs, IPUX_BIN_MUL, b, b, carry);
	ipu_step_append(g, p0, ipu_step_stream_copy(g, out, &(struct ipu_slice){ b, 0, N }, 1));
	ipu_graph_add_program(g, p0);
	/* program 1: tmp = x * x; d = tmp + carry (program 0's); out d */
	p1 = ipu_step_sequence(g);
	ipu_step_append(g, p1, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, N }, 1));
	exec_new(g, p1, "tmp1", &cs);
	binary(g, cs, IPUX_BIN_MUL, x, x, tmp);
	exec_new(g, p1, "d", &cs);
	binary(g, cs, IPUX_BIN_ADD, tmp, carry, d);
	ipu_step_append(g, p1, ipu_step_stream_copy(g, out, &(struct ipu_slice){ d, 0, N }, 1));
	ipu_graph_add_program(g, p1);
	REQUIRE(ga_liveness(g, &lv) == 0);
	CHECK_EQ_INT(lv.npositions, 5);	/* the longer program's steps */
	for (uint32_t k = 0; k < TILES; k++) {
		CHECK_MSG(!is_pinned(&lv, x, k) && !is_pinned(&lv, tmp, k), "piece %u", k);
		CHECK_MSG(is_pinned(&lv, carry, k), "piece %u", k);
		/* tmp: positions 1..2 in both programs */
		CHECK_EQ_INT(lv.first[lv.base[tmp] + k], 1);
		CHECK_EQ_INT(lv.last[lv.base[tmp] + k], 2);
	}
	ga_live_free(&lv);
	REQUIRE(compile(g, &img, &len, &st) == 0);
	/* x dies at step 1 of both, d and b are born at step 2 */
	CHECK(share(g, x, b) || share(g, x, d));
	CHECK(!share(g, x, tmp) && !share(g, tmp, b) && !share(g, tmp, d));
	CHECK(!share(g, carry, x) && !share(g, carry, tmp) && !share(g, carry, b) &&
	      !share(g, carry, d));
	CHECK(st.mem_max < st.mem_max_no_reuse);
	free(img);
	ipu_graph_destroy(g);
}

/* A tensor written by one exchange in many small runs is written when all
 * runs together cover it, and read before written where one run is
 * missing. */
TEST(runs_cover_only_together)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	ipu_tensor x, full, gap, y;
	uint32_t in, out, cs;
	ipu_step seq, xs;
	struct ga_live lv;

	REQUIRE(g);
	x = tensor(g, "x", 0);
	full = tensor(g, "full", 1);
	gap = tensor(g, "gap", 1);
	y = tensor(g, "y", 1);
	in = ipu_graph_add_stream(g, "x", IPUX_STREAM_H2D, N * 4);
	out = ipu_graph_add_stream(g, "y", IPUX_STREAM_D2H, N * 4);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, in, &(struct ipu_slice){ x, 0, N }, 1));
	xs = ipu_step_exchange(g);
	for (uint32_t k = 0; k < N / 2; k++) {
		/* odd runs first, then even ones: no single run or prefix
		 * covers a piece */
		uint32_t r = k < N / 4 ? 2 * k + 1 : 2 * (k - N / 4);

		ipu_exchange_add(g, xs, (struct ipu_slice){ x, r * 2, 2 },
				 (struct ipu_slice){ full, r * 2, 2 });
		if (r != 5)
			ipu_exchange_add(g, xs, (struct ipu_slice){ x, r * 2, 2 },
					 (struct ipu_slice){ gap, r * 2, 2 });
	}
	ipu_step_append(g, seq, xs);
	exec_new(g, seq, "y", &cs);
	binary(g, cs, IPUX_BIN_ADD, full, gap, y);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, out, &(struct ipu_slice){ y, 0, N }, 1));
	ipu_graph_add_program(g, seq);
	REQUIRE(ga_liveness(g, &lv) == 0);
	for (uint32_t k = 0; k < TILES; k++) {
		CHECK_MSG(!is_pinned(&lv, full, k), "piece %u", k);
		/* elements 10 and 11 are in the first piece */
		CHECK_MSG(is_pinned(&lv, gap, k) == (k == 0), "piece %u", k);
		CHECK_EQ_INT(lv.first[lv.base[full] + k], 1);
		CHECK_EQ_INT(lv.last[lv.base[full] + k], 2);
	}
	ga_live_free(&lv);
	ipu_graph_destroy(g);
}

TEST(liveness_refuses_cycles)
{
	struct ipu_graph *g = ipu_graph_create(TILES, TILE_MEM);
	ipu_tensor x;
	ipu_step a, b;
	uint32_t cs;
	void *img = NULL;
	size_t len;

	REQUIRE(g);
	ipu_graph_set_memory_reuse(g, 1);
	x = tensor(g, "x", 0);
	a = ipu_step_sequence(g);
	b = ipu_step_sequence(g);
	exec_new(g, a, "x", &cs);
	unary(g, cs, IPUX_UN_RELU, x, x);
	ipu_step_append(g, a, b);
	ipu_step_append(g, b, a);
	ipu_graph_add_program(g, a);
	CHECK(ipu_graph_compile(g, &img, &len, NULL) < 0);
	CHECK(ipu_graph_error(g) && strstr(ipu_graph_error(g), "contain themselves"));
	free(img);
	ipu_graph_destroy(g);
}

TEST(out_of_memory_names_the_live_bytes)
{
	struct ipu_graph *g = ipu_graph_create(1, 1024);
	uint64_t n = 200;
	ipu_tensor a = ipu_graph_add_tensor(g, "a", IPUX_DT_F32, 1, &n);
	ipu_tensor b = ipu_graph_add_tensor(g, "b", IPUX_DT_F32, 1, &n);
	uint32_t cs = ipu_graph_add_compute_set(g, "b");
	uint32_t in = ipu_graph_add_stream(g, "a", IPUX_STREAM_H2D, 800);
	ipu_step seq = ipu_step_sequence(g);
	void *img = NULL;
	size_t len;
	uint32_t p[1] = { IPUX_UN_RELU };

	REQUIRE(g);
	ipu_graph_set_memory_reuse(g, 1);
	ipu_graph_map_tile(g, a, 0);
	ipu_graph_map_tile(g, b, 0);
	ipu_graph_add_vertex(g, cs, IPUX_CL_UNARY,
			     (struct ipu_slice[]){ { a, 0, n }, { b, 0, n } }, 2, p, 1);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, in, &(struct ipu_slice){ a, 0, n }, 1));
	ipu_step_append(g, seq, ipu_step_execute(g, cs));
	ipu_graph_add_program(g, seq);
	CHECK(ipu_graph_compile(g, &img, &len, NULL) < 0);
	CHECK_MSG(ipu_graph_error(g) && strstr(ipu_graph_error(g), "tile 0 out of memory: 1600 bytes") &&
		  strstr(ipu_graph_error(g), "at most 1600 bytes live at once") &&
		  strstr(ipu_graph_error(g), "constants placed on all tiles (the model's and copies of them): 0 bytes"),
		  "%s", ipu_graph_error(g));
	free(img);
	ipu_graph_destroy(g);
}

/* --- property: random programs, with and without reuse ------------------ */

#define NT 14			/* tensors */
#define NIN 2			/* input streams */
#define NOUT 3			/* output streams */
#define RUNS 3
#define PROGRAMS 150

struct gen {
	struct ipu_graph *g;
	uint64_t s;
	ipu_tensor t[NT], idx;
	uint32_t shift[NT];
	int written[NT];	/* some step before wrote it (roughly) */
	int ncs, budget;
};

/* A tensor mapped with `shift`; as a source mostly one already written,
 * so that values flow and die and the allocator has memory to share. */
static ipu_tensor pick_shift(struct gen *x, uint32_t shift, int source)
{
	int want = source && rnd(&x->s, 8) != 0;

	for (int tries = 0; tries < 64; tries++) {
		uint32_t i = rnd(&x->s, NT);

		if (x->shift[i] == shift && (!want || x->written[i]))
			return x->t[i];
	}
	for (int i = 0; i < NT; i++)
		if (x->shift[i] == shift)
			return x->t[i];
	return x->t[0];
}

static void mark_written(struct gen *x, ipu_tensor t)
{
	for (int i = 0; i < NT; i++)
		if (x->t[i] == t)
			x->written[i] = 1;
}

static void gen_block(struct gen *x, ipu_step seq, int depth)
{
	int n = 1 + (int)rnd(&x->s, 5);

	for (int i = 0; i < n && x->budget > 0; i++) {
		uint32_t kind = rnd(&x->s, depth < 2 ? 10 : 7);
		char name[32];

		x->budget--;
		if (kind < 4) {
			/* elementwise on tensors mapped alike (in place at times) */
			uint32_t shift = x->shift[rnd(&x->s, NT)], cs;
			ipu_tensor a = pick_shift(x, shift, 1), b = pick_shift(x, shift, 1);
			ipu_tensor d = rnd(&x->s, 4) ? pick_shift(x, shift, 0) : a;
			static const uint32_t ops[] = { IPUX_BIN_ADD, IPUX_BIN_SUB, IPUX_BIN_MUL,
							IPUX_BIN_MAX };

			snprintf(name, sizeof(name), "cs%d", x->ncs++);
			exec_new(x->g, seq, name, &cs);
			if (kind == 3)
				unary(x->g, cs, IPUX_UN_TANH, a, d);
			else
				binary(x->g, cs, ops[rnd(&x->s, 4)], a, b, d);
			mark_written(x, d);
		} else if (kind == 6) {
			/* one exchange writing a tensor in runs of 4 elements in a
			 * shuffled order, some runs left out: only all of them
			 * together cover it */
			ipu_step xs = ipu_step_exchange(x->g);
			ipu_tensor src = x->t[rnd(&x->s, NT)], dst = x->t[rnd(&x->s, NT)];
			uint32_t order[N / 4], skip = rnd(&x->s, 2) ? rnd(&x->s, N / 4) : N;

			for (uint32_t k = 0; k < N / 4; k++)
				order[k] = k;
			for (uint32_t k = N / 4 - 1; k > 0; k--) {
				uint32_t j = rnd(&x->s, k + 1), t = order[k];

				order[k] = order[j];
				order[j] = t;
			}
			for (uint32_t k = 0; k < N / 4 && src != dst; k++)
				if (order[k] != skip)
					ipu_exchange_add(x->g, xs, (struct ipu_slice){ src, order[k] * 4, 4 },
							 (struct ipu_slice){ dst, order[k] * 4, 4 });
			ipu_step_append(x->g, seq, xs);
			if (src != dst && skip == N)
				mark_written(x, dst);
		} else if (kind < 6) {
			/* an exchange of one or two whole tensors, any mapping */
			ipu_step xs = ipu_step_exchange(x->g);
			uint32_t ncopies = 1 + rnd(&x->s, 2);

			for (uint32_t k = 0; k < ncopies; k++) {
				ipu_tensor src = x->t[rnd(&x->s, NT)], dst = x->t[rnd(&x->s, NT)];
				uint32_t half = rnd(&x->s, 2) * (N / 2);

				if (src != dst)
					ipu_exchange_add(x->g, xs, (struct ipu_slice){ src, half, N / 2 },
							 (struct ipu_slice){ dst, half, N / 2 });
				if (src != dst && rnd(&x->s, 2))
					mark_written(x, dst);
			}
			ipu_step_append(x->g, seq, xs);
		} else if (kind < 9) {
			ipu_step body = ipu_step_sequence(x->g);

			gen_block(x, body, depth + 1);
			ipu_step_append(x->g, seq, ipu_step_repeat(x->g, rnd(&x->s, 4), body));
		} else {
			ipu_step cases[2], dflt;

			for (int k = 0; k < 2; k++) {
				cases[k] = ipu_step_sequence(x->g);
				gen_block(x, cases[k], depth + 1);
			}
			dflt = ipu_step_sequence(x->g);
			if (rnd(&x->s, 2))
				gen_block(x, dflt, depth + 1);
			ipu_step_append(x->g, seq, ipu_step_switch(x->g, x->idx, cases, 2, dflt));
		}
	}
}

/* The same random program every time for one seed. */
static struct ipu_graph *gen_program(uint64_t seed, int reuse)
{
	struct gen x;
	uint64_t one = 1;
	ipu_step seq;
	float cval[N];
	uint32_t sid;

	memset(&x, 0, sizeof(x));
	x.s = seed;
	x.g = ipu_graph_create(TILES, TILE_MEM);
	if (!x.g)
		return NULL;
	ipu_graph_set_memory_reuse(x.g, reuse);
	for (int i = 0; i < NT; i++) {
		char name[16];

		snprintf(name, sizeof(name), "t%d", i);
		x.shift[i] = rnd(&x.s, 3) ? 0 : 1;
		x.t[i] = tensor(x.g, name, x.shift[i]);
	}
	for (int i = 0; i < N; i++)
		cval[i] = (float)rnd(&x.s, 200) / 100.0f - 1.0f;
	ipu_graph_set_init(x.g, x.t[NT - 1], cval, sizeof(cval));
	x.idx = ipu_graph_add_tensor(x.g, "idx", IPUX_DT_I32, 1, &one);
	ipu_graph_map_tile(x.g, x.idx, 0);
	seq = ipu_step_sequence(x.g);
	x.written[NT - 1] = 1;
	for (int i = 0; i < NIN; i++) {
		uint32_t k = rnd(&x.s, NT - 1);

		sid = ipu_graph_add_stream(x.g, "in", IPUX_STREAM_H2D, N * 4);
		ipu_step_append(x.g, seq, ipu_step_stream_copy(x.g, sid,
			&(struct ipu_slice){ x.t[k], 0, N }, 1));
		x.written[k] = 1;
	}
	sid = ipu_graph_add_stream(x.g, "idx", IPUX_STREAM_H2D, 4);
	ipu_step_append(x.g, seq, ipu_step_stream_copy(x.g, sid, &(struct ipu_slice){ x.idx, 0, 1 }, 1));
	x.budget = 40;
	gen_block(&x, seq, 0);
	for (int i = 0; i < NOUT; i++) {
		/* the first output mid-program, the rest at the end */
		sid = ipu_graph_add_stream(x.g, "out", IPUX_STREAM_D2H, N * 4);
		ipu_step_append(x.g, seq, ipu_step_stream_copy(x.g, sid,
			&(struct ipu_slice){ x.t[rnd(&x.s, NT)], 0, N }, 1));
		if (i == 0) {
			x.budget = 20;
			gen_block(&x, seq, 0);
		}
	}
	ipu_graph_add_program(x.g, seq);
	return x.g;
}

/* Runs the program RUNS times on fresh inputs; outputs into out. */
static int run_program(struct ipu_device *d, struct ipu_graph *g, uint64_t seed,
		       uint8_t out[RUNS][NOUT][N * 4], struct ipu_graph_stats *st)
{
	void *img = NULL;
	size_t len;
	char err[512];
	int rc;

	if (compile(g, &img, &len, st))
		return -1;
	rc = test_load_image(d, img, len, err, sizeof(err));
	free(img);
	if (rc) {
		fprintf(stderr, "  load: %s\n", err);
		return -1;
	}
	for (int r = 0; r < RUNS; r++) {
		float in[NIN][N];
		int32_t sel = (int32_t)((seed + (uint64_t)r) % 3);
		uint64_t s = seed * 31 + (uint64_t)r;

		for (int i = 0; i < NIN; i++)
			for (int k = 0; k < N; k++)
				in[i][k] = (float)rnd(&s, 2000) / 1000.0f - 1.0f;
		for (uint32_t i = 0; i < NIN; i++)
			ipu_stream_submit(d, i, in[i], sizeof(in[i]), i);
		ipu_stream_submit(d, NIN, &sel, 4, 99);
		for (uint32_t i = 0; i < NOUT; i++)
			ipu_stream_submit(d, NIN + 1 + i, out[r][i], N * 4, 100 + i);
		rc = ipu_run_sync(d, 0, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "  run: %s\n", err);
			return -1;
		}
	}
	return 0;
}

TEST(random_programs_same_results_with_reuse)
{
	struct ipu_device *d = NULL;
	char err[256];
	static uint8_t a[RUNS][NOUT][N * 4], b[RUNS][NOUT][N * 4];
	uint64_t saved = 0, total = 0;
	int differ = 0, shared = 0;

	REQUIRE(ipu_open("model:tiles=4,tile_mem=64k,workers=2", &d, err, sizeof(err)) == 0);
	for (uint64_t seed = 1; seed <= PROGRAMS; seed++) {
		struct ipu_graph *g0 = gen_program(seed, 0), *g1 = gen_program(seed, 1);
		struct ipu_graph_stats s0, s1;

		REQUIRE(g0 && g1);
		memset(a, 0x5a, sizeof(a));
		memset(b, 0xa5, sizeof(b));
		CHECK_MSG(run_program(d, g0, seed, a, &s0) == 0, "seed %llu", (unsigned long long)seed);
		CHECK_MSG(run_program(d, g1, seed, b, &s1) == 0, "seed %llu", (unsigned long long)seed);
		CHECK_MSG(!memcmp(a, b, sizeof(a)), "seed %llu: outputs differ with memory reuse",
			  (unsigned long long)seed);
		differ += !!memcmp(a, b, sizeof(a));
		CHECK(s1.mem_max <= s0.mem_max && s1.mem_max_no_reuse == s0.mem_max);
		shared += s1.mem_total < s0.mem_total;
		saved += s0.mem_total - s1.mem_total;
		total += s0.mem_total;
		ipu_graph_destroy(g0);
		ipu_graph_destroy(g1);
	}
	printf("# %d random programs: %d differ; reuse saved memory in %d, %llu of %llu bytes\n",
	       PROGRAMS, differ, shared, (unsigned long long)saved, (unsigned long long)total);
	/* the generator must give the allocator something to share */
	CHECK(shared > PROGRAMS / 2);
	ipu_close(d);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(place_chain_shares);
	RUN(place_pinned_first_in_order);
	RUN(place_fills_gaps);
	RUN(place_random_never_overlaps);
	RUN(chain_shares_dead_tensors);
	RUN(pinned_and_scoped_tensors);
	RUN(programs_share_their_temporaries);
	RUN(runs_cover_only_together);
	RUN(liveness_refuses_cycles);
	RUN(out_of_memory_names_the_live_bytes);
	RUN(random_programs_same_results_with_reuse);
	return TH_DONE();
}
