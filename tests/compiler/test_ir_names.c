/* SPDX-License-Identifier: MIT */
/*
 * test_ir_names.c - the graph's index of value names (compiler/ir/names.c)
 * against the linear search it replaced: ir_value_find gives the latest
 * value of a name, ir_value_add_unique the smallest free "<base>_<k>",
 * through values added by name, generated ones and ir_compact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/ir.h"

/* The oracle: the linear search ir_value_find did. */
static int find_linear(const struct ir_graph *g, const char *name)
{
	for (int i = g->nvals - 1; i >= 0; i--)
		if (!strcmp(g->vals[i].name, name))
			return i;
	return -1;
}

/* The name ir_value_add_unique gave with the linear search. */
static void unique_linear(const struct ir_graph *g, const char *base, char *buf, size_t len)
{
	snprintf(buf, len, "%s", base);
	for (int k = 1; find_linear(g, buf) >= 0; k++)
		snprintf(buf, len, "%s_%d", base, k);
}

static uint64_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Keeps value v alive through ir_compact: the graph's output. */
static void keep(struct ir_graph *g, int v)
{
	CHECK(ir_graph_add_output(g, v, NULL) == 0);
}

TEST(unique_names_match_the_linear_search)
{
	static const char *bases[] = { "c", "c_2", "rw_const", "x", "_v3" };
	struct ir_error e = { "" };
	uint64_t seed = 1;
	int mismatches = 0, compacts = 0;

	for (int round = 0; round < 4; round++) {
		struct ir_graph *g = ir_graph_new(&e);

		REQUIRE(g);
		for (int step = 0; step < 3000; step++) {
			uint64_t r = rng_next(&seed) % 100;
			const char *base = bases[rng_next(&seed) % 5];
			char want[64], name[64];
			int v;

			if (r < 55) {
				unique_linear(g, base, want, sizeof(want));
				v = ir_value_add_unique(g, base, &e);
				REQUIRE(v >= 0);
				if (strcmp(g->vals[v].name, want))
					mismatches++;
			} else if (r < 80) {
				/* a name a later unique one would have picked,
				 * or a duplicate of one already there */
				snprintf(name, sizeof(name), "%s_%d", base, (int)(rng_next(&seed) % 40));
				v = ir_value_add(g, r < 70 ? name : base, &e);
				REQUIRE(v >= 0);
			} else if (r < 82) {
				v = ir_value_add(g, NULL, &e);
				REQUIRE(v >= 0);
			} else if (r < 84 && g->nvals) {
				/* drop about half the values */
				for (int i = 0; i < g->nvals; i++)
					if (rng_next(&seed) & 1)
						keep(g, i);
				REQUIRE(ir_compact(g, &e) == 0);
				free(g->outputs);
				g->outputs = NULL;
				g->noutputs = 0;
				compacts++;
			} else {
				snprintf(name, sizeof(name), "%s_%d", base, (int)(rng_next(&seed) % 60));
				if (ir_value_find(g, name) != find_linear(g, name))
					mismatches++;
				if (ir_value_find(g, base) != find_linear(g, base))
					mismatches++;
			}
		}
		ir_graph_free(g);
	}
	CHECK_EQ_INT(mismatches, 0);
	CHECK(compacts > 10);
}

TEST(many_values_of_one_base)
{
	struct ir_error e = { "" };
	struct ir_graph *g = ir_graph_new(&e);
	struct ir_graph *c;
	char name[32];
	int bad = 0;

	REQUIRE(g);
	for (int k = 0; k < 50000; k++) {
		int v = ir_value_add_unique(g, "rw_const", &e);

		REQUIRE(v == k);
		if (k)
			snprintf(name, sizeof(name), "rw_const_%d", k);
		else
			snprintf(name, sizeof(name), "rw_const");
		bad += strcmp(g->vals[v].name, name) != 0;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(ir_value_find(g, "rw_const_49999"), 49999);
	CHECK_EQ_INT(ir_value_find(g, "rw_const_50000"), -1);
	/* a clone answers the same and goes on where the original stopped */
	c = ir_graph_clone(g, &e);
	REQUIRE(c);
	CHECK_EQ_INT(ir_value_find(c, "rw_const_123"), 123);
	CHECK(!strcmp(c->vals[ir_value_add_unique(c, "rw_const", &e)].name, "rw_const_50000"));
	ir_graph_free(c);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(unique_names_match_the_linear_search);
	RUN(many_values_of_one_base);
	return TH_DONE();
}
