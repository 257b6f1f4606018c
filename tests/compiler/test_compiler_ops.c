/* SPDX-License-Identifier: MIT */
/*
 * test_compiler_ops.c - the rewritten operator families (Einsum, the
 * quantisation operators, the losses, the scatters; NonMaxSuppression's
 * run-time selection) on the in-process
 * device against the reference evaluator (ipu-compile --check's
 * machinery), each larger than one tile of the 16-tile target so that the
 * work is split, in float32 and float16.  Data is seeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "harness.h"
#include "lower_check.h"
#include "ipu/passes.h"

static int input(struct ir_graph *g, const char *name, int dt, int rank, const int64_t *d)
{
	int v = ir_value_add(g, name, NULL);

	ir_value_set_shape(&g->vals[v], dt, rank, d);
	ir_graph_add_input(g, v, NULL);
	return v;
}

/* A constant of dtype dt; element i is f(i, seed). */
static int cconst(struct ir_graph *g, const char *name, int dt, int rank, const int64_t *d,
		  double (*f)(int64_t, unsigned *), unsigned seed)
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);
	int64_t n = ir_numel(rank, d);

	ir_tensor_alloc(&t, dt, rank, d, NULL);
	for (int64_t i = 0; i < n; i++)
		ir_set_f(t.data, dt, (size_t)i, f(i, &seed));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int node(struct ir_graph *g, const char *op, const int *in, int nin, const char *out)
{
	int o = ir_value_add(g, out, NULL);

	ir_node_add(g, out, op, in, nin, &o, 1, NULL);
	return o;
}

static struct ir_node *last(struct ir_graph *g)
{
	return &g->nodes[g->nnodes - 1];
}

/* The pipeline then --check on 16 tiles of mem bytes. */
static int check(struct ir_graph *g, int fp16, uint32_t mem, char *report, size_t len)
{
	return lower_check(g, fp16, 16, mem, 0, report, len);
}

/* attention scores: 2 x 4 x 64 x 32 operands of 64 KiB each */
static struct ir_graph *einsum_graph(void)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t d[] = { 2, 4, 64, 32 };
	int in[2], y;

	in[0] = input(g, "q", IR_F32, 4, d);
	in[1] = input(g, "k", IR_F32, 4, d);
	y = node(g, "Einsum", in, 2, "scores");
	ir_attr_set_str(last(g), "equation", "bhqd,bhkd->bhqk", NULL);
	ir_graph_add_output(g, y, NULL);
	return g;
}

TEST(einsum_batched_product_split)
{
	char rep[4096];

	for (int fp16 = 0; fp16 < 2; fp16++) {
		struct ir_graph *g = einsum_graph();

		CHECK_MSG(check(g, fp16, 32 * 1024, rep, sizeof(rep)) == 0, "fp16 %d: %s", fp16, rep);
		ir_graph_free(g);
	}
}

TEST(einsum_sum_and_transpose)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t d[] = { 16, 32, 48 };
	int x, y;
	char rep[4096];

	x = input(g, "x", IR_F32, 3, d);
	y = node(g, "Einsum", &x, 1, "y");
	ir_attr_set_str(last(g), "equation", "abc->ca", NULL);
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* A diagonal with broadcast dims lowers and matches the reference. */
TEST(einsum_diagonal)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t d[] = { 3, 5, 5 };
	int x, y;
	char rep[4096];

	x = input(g, "x", IR_F32, 3, d);
	y = node(g, "Einsum", &x, 1, "y");
	ir_attr_set_str(last(g), "equation", "...ii->...i", NULL);
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

static double scale(int64_t i, unsigned *seed)
{
	(void)seed;
	return 0.01 + 0.005 * (double)(i % 7);
}

static double zp(int64_t i, unsigned *seed)
{
	(void)seed;
	return (double)(100 + i % 50);
}

/* x (64 x 96 x 16, 384 KiB) -> QuantizeLinear per channel (axis 1) ->
 * DequantizeLinear: a fake-quantised activation. */
TEST(quantize_dequantize_per_axis_split)
{
	char rep[4096];

	for (int fp16 = 0; fp16 < 2; fp16++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t d[] = { 64, 96, 16 }, c = 96;
		int in[3], q, y;

		in[0] = input(g, "x", IR_F32, 3, d);
		in[1] = cconst(g, "s", IR_F32, 1, &c, scale, 0);
		in[2] = cconst(g, "z", IR_U8, 1, &c, zp, 0);
		q = node(g, "QuantizeLinear", in, 3, "q");
		in[0] = q;
		y = node(g, "DequantizeLinear", in, 3, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, fp16, 64 * 1024, rep, sizeof(rep)) == 0, "fp16 %d: %s", fp16, rep);
		ir_graph_free(g);
	}
}

static double int8ish(int64_t i, unsigned *seed)
{
	(void)i;
	*seed = *seed * 1103515245u + 12345u;
	return (double)((int)((*seed >> 8) % 255) - 127);
}

/* QLinearMatMul of a run-time uint8 A (96 x 128, 48 KiB in float32) and an
 * int8 weight: the product is split.  (A's Cast to float32 follows the
 * uint8 input's tiles, 4 times its bytes: 128 rows put 64 KiB on one.) */
TEST(qlinear_matmul_split)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t da[] = { 96, 128 }, db[] = { 128, 64 }, one = 1;
	int in[8], y;
	char rep[4096];

	in[0] = input(g, "a", IR_U8, 2, da);
	in[1] = cconst(g, "as", IR_F32, 1, &one, scale, 0);
	in[2] = cconst(g, "az", IR_U8, 1, &one, zp, 0);
	in[3] = cconst(g, "b", IR_I8, 2, db, int8ish, 5);
	in[4] = cconst(g, "bs", IR_F32, 1, &one, scale, 0);
	in[5] = cconst(g, "bz", IR_I8, 1, &one, scale, 0);
	in[6] = cconst(g, "ys", IR_F32, 1, &one, zp, 0);
	in[7] = cconst(g, "yz", IR_U8, 1, &one, zp, 0);
	y = node(g, "QLinearMatMul", in, 8, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

static double target(int64_t i, unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	/* class 999, the ignored index, now and then */
	return i % 13 == 0 ? 999 : (double)((*seed >> 8) % 1000);
}

/* Softmax cross-entropy over 1000 classes for 64 samples (256 KiB of
 * scores), class weights, ignore_index, mean. */
TEST(softmax_cross_entropy_split)
{
	char rep[4096];

	for (int fp16 = 0; fp16 < 2; fp16++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t dx[] = { 64, 1000 }, dt = 64, dw = 1000;
		int in[3], y;

		in[0] = input(g, "scores", IR_F32, 2, dx);
		in[1] = cconst(g, "labels", IR_I64, 1, &dt, target, 9);
		in[2] = cconst(g, "w", IR_F32, 1, &dw, scale, 0);
		y = node(g, "SoftmaxCrossEntropyLoss", in, 3, "loss");
		ir_attr_set_int(last(g), "ignore_index", 999, NULL);
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, fp16, 64 * 1024, rep, sizeof(rep)) == 0, "fp16 %d: %s", fp16, rep);
		ir_graph_free(g);
	}
}

static double row_index(int64_t i, unsigned *seed)
{
	(void)seed;
	/* rows 3, 10, 17, ... and a duplicate of the first */
	return i == 40 ? 3 : (double)((3 + 7 * i) % 200);
}

/* ScatterND of 41 rows (one duplicated) into 200 x 256 data (200 KiB),
 * with reduction add, then none. */
TEST(scatter_nd_rows_split)
{
	char rep[4096];

	for (int red = 0; red < 2; red++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t dx[] = { 200, 256 }, di[] = { 41, 1 }, du[] = { 41, 256 };
		int in[3], y;

		in[0] = input(g, "data", IR_F32, 2, dx);
		in[1] = cconst(g, "idx", IR_I64, 2, di, row_index, 0);
		in[2] = input(g, "upd", IR_F32, 2, du);
		y = node(g, "ScatterND", in, 3, "y");
		if (red)
			ir_attr_set_str(last(g), "reduction", "add", NULL);
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, 0, 64 * 1024, rep, sizeof(rep)) == 0, "reduction %d: %s", red, rep);
		ir_graph_free(g);
	}
}

static double pair_index(int64_t i, unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	/* (row, column) pairs of a 64 x 64 grid, negative now and then */
	return (double)((int)((*seed >> 8) % 64) - (i % 5 == 0 ? 64 : 0));
}

/* GatherND of 40 (row, column) pairs from 64 x 64 x 16 data (256 KiB): a
 * Gather at constant offsets, exchange copies into a spread output. */
TEST(gather_nd_split)
{
	char rep[4096];

	for (int fp16 = 0; fp16 < 2; fp16++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t dx[] = { 64, 64, 16 }, di[] = { 40, 2 };
		int in[2], y;

		in[0] = input(g, "data", IR_F32, 3, dx);
		in[1] = cconst(g, "idx", IR_I64, 2, di, pair_index, 3);
		y = node(g, "GatherND", in, 2, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, fp16, 32 * 1024, rep, sizeof(rep)) == 0, "fp16 %d: %s", fp16, rep);
		ir_graph_free(g);
	}
}

/* NonMaxSuppression's limits: boxes per class, IoU and score thresholds */
static double c_max(int64_t i, unsigned *seed)
{
	(void)i;
	(void)seed;
	return 20;
}

static double c_iou(int64_t i, unsigned *seed)
{
	(void)i;
	(void)seed;
	return 0.3;
}

static double c_score(int64_t i, unsigned *seed)
{
	(void)i;
	(void)seed;
	return 0.25;
}

/* NonMaxSuppression of run-time boxes and scores: the NMS vertex against
 * the evaluator (selection and its -1 padding), the count streamed beside
 * it; both box formats, with and without a score threshold. */
TEST(nms_runtime_count)
{
	char rep[4096];

	for (int k = 0; k < 4; k++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t db[] = { 2, 50, 4 }, ds[] = { 2, 3, 50 }, d1[] = { 1 };
		int in[5], y, fp16 = k & 1;

		in[0] = input(g, "boxes", IR_F32, 3, db);
		in[1] = input(g, "scores", IR_F32, 3, ds);
		in[2] = cconst(g, "max", IR_I64, 1, d1, c_max, 0);
		in[3] = cconst(g, "iou", IR_F32, 1, d1, c_iou, 0);
		in[4] = cconst(g, "st", IR_F32, 1, d1, c_score, 0);
		y = node(g, "NonMaxSuppression", in, k < 2 ? 5 : 4, "sel");
		if (k & 2)
			ir_attr_set_int(last(g), "center_point_box", 1, NULL);
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, fp16, 64 * 1024, rep, sizeof(rep)) == 0, "case %d: %s", k, rep);
		{
			const char *c = strstr(rep, "sel:count: ok, ");
			int rows = c ? atoi(c + strlen("sel:count: ok, ")) : -1;

			/* some selected; with the score threshold fewer than
			 * the bound of 2 x 3 x 20 */
			CHECK_MSG(rows > 0 && (k >= 2 || rows < 120), "case %d: %d rows: %s", k, rows, rep);
		}
		ir_graph_free(g);
	}
}

/* A selection read by another node would read its padding: refused. */
TEST(nms_selection_read_refused)
{
	char rep[4096];
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t db[] = { 1, 8, 4 }, ds[] = { 1, 1, 8 }, d1[] = { 1 };
	int in[3], y;

	in[0] = input(g, "boxes", IR_F32, 3, db);
	in[1] = input(g, "scores", IR_F32, 3, ds);
	in[2] = cconst(g, "max", IR_I64, 1, d1, c_max, 0);
	y = node(g, "NonMaxSuppression", in, 3, "sel");
	y = node(g, "Neg", &y, 1, "neg");
	ir_graph_add_output(g, y, NULL);
	CHECK(check(g, 0, 64 * 1024, rep, sizeof(rep)) != 0);
	CHECK_MSG(strstr(rep, "read by another node") != NULL, "%s", rep);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(einsum_batched_product_split);
	RUN(einsum_sum_and_transpose);
	RUN(einsum_diagonal);
	RUN(quantize_dequantize_per_axis_split);
	RUN(qlinear_matmul_split);
	RUN(softmax_cross_entropy_split);
	RUN(scatter_nd_rows_split);
	RUN(gather_nd_split);
	RUN(nms_runtime_count);
	RUN(nms_selection_read_refused);
	return TH_DONE();
}
