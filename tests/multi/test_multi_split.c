// SPDX-License-Identifier: MIT
/*
 * test_multi_split.c - a model split over several IPUs: the automatic
 * split (memory within each IPU, modelled work balanced), the manual one
 * from a sharding YAML and its refusals, and the stages lowered each for
 * its own small IPU and run one after the other on in-process devices,
 * the tensors at the boundaries handed on: the outputs are the reference
 * evaluator's, and bit-identical to the model on one IPU where it fits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "harness.h"
#include "ipu/partition.h"
#include "ipu/passes.h"
#include "mlp_model.h"

#define TILES 16
#define TILE_MEM (64 * 1024)

static void seeded_input(struct mlp_store *s)
{
	int64_t d[] = { MLP_ROWS, MLP_WIDTH };
	uint32_t seed = 977;

	s->names[s->n] = strdup("x");
	ir_tensor_alloc(&s->t[s->n], IR_F32, 2, d, NULL);
	for (int i = 0; i < MLP_ROWS * MLP_WIDTH; i++) {
		seed = seed * 1664525u + 1013904223u;
		((float *)s->t[s->n].data)[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
	}
	s->n++;
}

/* Runs the stages of p in order on their own devices; the store ends with
 * every stage's outputs. */
static int run_stages(const struct ir_graph *g, const struct ipu_partition *p,
		      const struct ipu_target *t, struct mlp_store *s, char *msg, size_t len)
{
	for (int k = 0; k < p->nstages; k++) {
		struct ir_error e = { "" };
		struct ir_graph *sg = ipu_partition_stage(g, p, k, &e);
		int r = !sg || mlp_run(sg, t, s, &e);

		ir_graph_free(sg);
		if (r) {
			snprintf(msg, len, "stage %d: %s", k, e.msg);
			return -1;
		}
	}
	return 0;
}

static double max_rel(const struct ir_tensor *a, const struct ir_tensor *b)
{
	double m = 0, scale = 1e-30;
	int64_t n = ir_numel(b->rank, b->dims);

	for (int64_t i = 0; i < n; i++)
		scale = fmax(scale, fabs(ir_get_f(b->data, b->dtype, (size_t)i)));
	for (int64_t i = 0; i < n; i++)
		m = fmax(m, fabs(ir_get_f(a->data, a->dtype, (size_t)i) -
				 ir_get_f(b->data, b->dtype, (size_t)i)) / scale);
	return m;
}

static int count_op(const struct ir_graph *g, int lo, int hi, const char *op)
{
	int n = 0;

	for (int i = lo; i < hi; i++)
		n += !strcmp(g->nodes[i].op, op);
	return n;
}

/* Eight layers (2 MiB of weights) do not fit one IPU of 16 x 64 KiB
 * (test_multi_fit: about 4 IPUs); split automatically over 4 they run,
 * two layers an IPU, and give the reference evaluator's output. */
TEST(auto_split_runs_where_one_ipu_refuses)
{
	struct ir_graph *g = mlp_prepared(8);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct ipu_stage_estimate est[4];
	struct mlp_store s = { 0 };
	struct ir_tensor ref = { 0 };
	struct ir_error e = { "" };
	char msg[2048];
	const struct ir_tensor *y;

	REQUIRE(g);
	REQUIRE(ipu_partition_auto(g, 4, &t, &p, &e) == 0);
	CHECK_EQ_INT(p.nstages, 4);
	ipu_partition_estimate(g, &p, est);
	for (int k = 0; k < 4; k++) {
		CHECK_MSG(count_op(g, p.first[k], p.first[k + 1], "MatMul") == 2, "stage %d: nodes %d..%d",
			  k, p.first[k], p.first[k + 1] - 1);
		printf("# stage %d: nodes %d..%d, %llu bytes, work %llu\n", k, p.first[k],
		       p.first[k + 1] - 1, (unsigned long long)est[k].bytes,
		       (unsigned long long)est[k].work);
	}
	seeded_input(&s);
	CHECK_MSG(run_stages(g, &p, &t, &s, msg, sizeof(msg)) == 0, "%s", msg);
	y = mlp_store_find(&s, g->vals[g->outputs[0]].name);
	REQUIRE(y);
	REQUIRE(ir_eval_graph(g, mlp_store_find(&s, "x"), &ref, &e) == 0);
	printf("# 4 IPUs against the evaluator: max error %.3g of the output's scale\n", max_rel(y, &ref));
	CHECK(max_rel(y, &ref) < 1e-5);
	ir_tensor_free(&ref);
	mlp_store_free(&s);
	ir_graph_free(g);
}

/* Two layers fit one IPU of 16 x 64 KiB: split over two such IPUs (each
 * stage lowered for its own) they give the same bits. */
TEST(two_ipus_bit_identical_to_one)
{
	struct ir_graph *g = mlp_prepared(2);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct mlp_store one = { 0 }, two = { 0 };
	struct ir_error e = { "" };
	char msg[2048];
	const struct ir_tensor *a, *b;
	const char *out;

	REQUIRE(g);
	out = g->vals[g->outputs[0]].name;
	seeded_input(&one);
	seeded_input(&two);
	CHECK_MSG(mlp_run(g, &t, &one, &e) == 0, "one IPU: %s", e.msg);
	REQUIRE(ipu_partition_auto(g, 2, &t, &p, &e) == 0);
	CHECK_EQ_INT(count_op(g, p.first[0], p.first[1], "MatMul"), 1);
	CHECK_MSG(run_stages(g, &p, &t, &two, msg, sizeof(msg)) == 0, "%s", msg);
	a = mlp_store_find(&one, out);
	b = mlp_store_find(&two, out);
	REQUIRE(a && b);
	CHECK_MSG(!memcmp(a->data, b->data, ir_tensor_bytes(a)), "max difference %.3g of the scale",
		  max_rel(b, a));
	mlp_store_free(&one);
	mlp_store_free(&two);
	ir_graph_free(g);
}

TEST(too_few_ipus_refused_with_the_number_needed)
{
	struct ir_graph *g = mlp_prepared(8);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct ir_error e = { "" };

	REQUIRE(g);
	CHECK(ipu_partition_auto(g, 2, &t, &p, &e) < 0);
	CHECK_MSG(strstr(e.msg, "--num_ipus 2: the model needs at least 4 IPUs of 16 tiles x 65536"),
		  "%s", e.msg);
	CHECK(ipu_partition_auto(g, 17, &t, &p, &e) < 0);
	CHECK_MSG(strstr(e.msg, "fewer than the IPUs"), "%s", e.msg);
	ir_graph_free(g);
}

static int yaml(const struct ir_graph *g, const char *text, int n, struct ipu_partition *p,
		char *msg)
{
	struct ir_error e = { "" };
	int r = ipu_partition_yaml_text(g, text, strlen(text), "shard.yaml", n, p, &e);

	snprintf(msg, IR_ERROR_LEN, "%s", e.msg);
	return r;
}

/* The manual split: the listed nodes start their IPUs; it runs as the
 * automatic one does. */
TEST(manual_yaml_split)
{
	struct ir_graph *g = mlp_prepared(8);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct mlp_store s = { 0 };
	struct ir_tensor ref = { 0 };
	struct ir_error e = { "" };
	char msg[IR_ERROR_LEN], names[4][64];
	int at[4] = { 0 }, k = 0;
	char text[1024];

	REQUIRE(g);
	/* the optimised graph's names of the MatMuls of layers 0, 2, 4, 6 */
	for (int i = 0; i < g->nnodes && k < 4; i++)
		if (!strcmp(g->nodes[i].op, "MatMul")) {
			int l = k * 2, seen = 0;

			for (int j = 0; j <= i; j++)
				seen += !strcmp(g->nodes[j].op, "MatMul");
			if (seen - 1 == l) {
				snprintf(names[k], sizeof(names[k]), "%s", g->nodes[i].name);
				at[k++] = i;
			}
		}
	REQUIRE(k == 4);
	snprintf(text, sizeof(text),
		 "# layers two by two\n- node: %s\n  ipu: 1\n- node: %s\n  ipu: 2\n- {node: %s, ipu: 3}\n",
		 names[1], names[2], names[3]);
	CHECK_MSG(yaml(g, text, 4, &p, msg) == 0, "%s", msg);
	CHECK_EQ_INT(p.nstages, 4);
	for (int i = 1; i < 4; i++)
		CHECK_EQ_INT(p.first[i], at[i]);
	CHECK_EQ_INT(p.first[4], g->nnodes);
	seeded_input(&s);
	CHECK_MSG(run_stages(g, &p, &t, &s, msg, sizeof(msg)) == 0, "%s", msg);
	REQUIRE(ir_eval_graph(g, mlp_store_find(&s, "x"), &ref, &e) == 0);
	REQUIRE(mlp_store_find(&s, g->vals[g->outputs[0]].name));
	CHECK(max_rel(mlp_store_find(&s, g->vals[g->outputs[0]].name), &ref) < 1e-5);
	ir_tensor_free(&ref);
	mlp_store_free(&s);

	/* refusals name the file, line and node */
	snprintf(text, sizeof(text), "- node: nosuch\n  ipu: 1\n");
	CHECK(yaml(g, text, 2, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "shard.yaml:1: no node of the (optimised) model is named nosuch"), "%s", msg);
	snprintf(text, sizeof(text), "- node: %s\n  ipu: 2\n- node: %s\n  ipu: 1\n", names[1], names[2]);
	CHECK(yaml(g, text, 3, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "starts IPU 2 after IPU 0"), "%s", msg);
	snprintf(text, sizeof(text), "- node: %s\n  ipu: 4\n", names[1]);
	CHECK(yaml(g, text, 4, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "shard.yaml:2: ipu 4 is not below --num_ipus 4"), "%s", msg);
	snprintf(text, sizeof(text), "- node: %s\n  ipu: 1\n- node: %s\n  ipu: 1\n", names[1], names[1]);
	CHECK(yaml(g, text, 2, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "node listed twice"), "%s", msg);
	snprintf(text, sizeof(text), "- node: %s\n  ipu: 1\n", names[1]);
	CHECK(yaml(g, text, 3, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "IPUs 0 to 1 have nodes, --num_ipus is 3"), "%s", msg);
	CHECK(yaml(g, "node: a\n", 2, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "expected a list"), "%s", msg);
	CHECK(yaml(g, "- node: a\n  ipu: [1]\n", 2, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "shard.yaml:2: a single value is expected for key ipu"), "%s", msg);
	CHECK(yaml(g, "- node: a\n  stage: 1\n", 2, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "unknown key (keys: node, ipu): stage"), "%s", msg);
	CHECK(yaml(g, "- [unclosed\n", 2, &p, msg) < 0);
	CHECK_MSG(strstr(msg, "shard.yaml:"), "%s", msg);
	ir_graph_free(g);
}

/* A stage graph's inputs and outputs: the boundary values by name. */
TEST(stage_graphs_carry_the_boundaries)
{
	struct ir_graph *g = mlp_prepared(4);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct ir_error e = { "" };
	struct ir_graph *a, *b;

	REQUIRE(g);
	REQUIRE(ipu_partition_auto(g, 2, &t, &p, &e) == 0);
	a = ipu_partition_stage(g, &p, 0, &e);
	b = ipu_partition_stage(g, &p, 1, &e);
	REQUIRE(a && b);
	CHECK_EQ_INT(a->ninputs, 1);
	CHECK(!strcmp(a->vals[a->inputs[0]].name, "x"));
	CHECK_EQ_INT(a->noutputs, 1);
	CHECK_EQ_INT(b->ninputs, 1);
	CHECK(!strcmp(a->vals[a->outputs[0]].name, b->vals[b->inputs[0]].name));
	CHECK_EQ_INT(b->noutputs, 1);
	CHECK(!strcmp(b->vals[b->outputs[0]].name, g->vals[g->outputs[0]].name));
	CHECK_EQ_INT(a->nnodes + b->nnodes, g->nnodes);
	ir_graph_free(a);
	ir_graph_free(b);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(auto_split_runs_where_one_ipu_refuses);
	RUN(two_ipus_bit_identical_to_one);
	RUN(too_few_ipus_refused_with_the_number_needed);
	RUN(manual_yaml_split);
	RUN(stage_graphs_carry_the_boundaries);
	return TH_DONE();
}
