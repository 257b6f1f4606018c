/* SPDX-License-Identifier: MIT */
/*
 * test_lower_rewrites.c - the rewrites of ops the device has no lowering
 * for (3-D Conv and pooling as 2-D ones, Tile in two-axis steps, Det,
 * GridSample, DFT, BitShift, the inverse trigonometric functions, Einsum
 * diagonals) on the
 * in-process device against the reference evaluator (ipu-compile
 * --check's machinery, seeded random inputs: floats in [-1, 1), integers
 * in [0, 10)), at settings the ONNX test suites leave out: padding,
 * strides, dilations and groups together, ceil_mode with pads not counted,
 * 3 x 3 determinants, bicubic reflection, shifts that wrap.
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

static int cconst(struct ir_graph *g, const char *name, int dt, int rank, const int64_t *d,
		  unsigned seed)
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);
	int64_t n;

	ir_tensor_alloc(&t, dt, rank, d, NULL);
	n = ir_numel(rank, d);
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		if (dt == IR_I64)
			ir_set_i(t.data, dt, (size_t)i, 1 + (seed >> 8) % 3);
		else
			ir_set_f(t.data, dt, (size_t)i, ((seed >> 8) % 2001) / 1000.0 - 1.0);
	}
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static struct ir_node *node(struct ir_graph *g, const char *op, const int *in, int nin)
{
	int o = ir_value_add(g, "y", NULL);

	ir_node_add(g, "y", op, in, nin, &o, 1, NULL);
	ir_graph_add_output(g, o, NULL);
	return &g->nodes[g->nnodes - 1];
}

/* The pipeline, then the device against the reference on a 16-tile target. */
static int check(struct ir_graph *g, char *report, size_t len)
{
	return lower_check(g, 0, 16, 1u << 20, 0, report, len);
}

TEST(conv3d_pads_strides_dilations_groups_bias)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 4, 7, 6, 5 }, dw[] = { 6, 2, 3, 2, 3 }, db[] = { 6 };
	int in[3];
	struct ir_node *n;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 5, dx);
	in[1] = cconst(g, "w", IR_F32, 5, dw, 3);
	in[2] = cconst(g, "b", IR_F32, 1, db, 5);
	n = node(g, "Conv", in, 3);
	ir_attr_set_ints(n, "pads", (int64_t[]){ 2, 1, 0, 1, 0, 2 }, 6, NULL);
	ir_attr_set_ints(n, "strides", (int64_t[]){ 2, 1, 2 }, 3, NULL);
	ir_attr_set_ints(n, "dilations", (int64_t[]){ 2, 1, 1 }, 3, NULL);
	ir_attr_set_int(n, "group", 2, NULL);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

static void pool3d(const char *op, int ceil_mode, int count_pad)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 3, 6, 7, 5 };
	int x = input(g, "x", IR_F32, 5, dx);
	struct ir_node *n = node(g, op, &x, 1);
	char rep[2048];

	ir_attr_set_ints(n, "kernel_shape", (int64_t[]){ 3, 2, 3 }, 3, NULL);
	ir_attr_set_ints(n, "pads", (int64_t[]){ 1, 0, 1, 1, 1, 0 }, 6, NULL);
	ir_attr_set_ints(n, "strides", (int64_t[]){ 2, 2, 1 }, 3, NULL);
	ir_attr_set_int(n, "ceil_mode", ceil_mode, NULL);
	if (count_pad >= 0)
		ir_attr_set_int(n, "count_include_pad", count_pad, NULL);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s ceil_mode %d count_include_pad %d: %s", op,
		  ceil_mode, count_pad, rep);
	ir_graph_free(g);
}

TEST(pool3d_ceil_mode_and_pads)
{
	pool3d("MaxPool", 1, -1);
	pool3d("AveragePool", 1, 0);
	pool3d("AveragePool", 0, 1);
}

TEST(tile_every_axis_of_rank_5)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 3, 1, 2, 2 };
	int in[2];
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 5, dx);
	in[1] = cconst(g, "reps", IR_I64, 1, (int64_t[]){ 5 }, 7);
	node(g, "Tile", in, 2);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(det_batched_3x3)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 4, 3, 3 };
	int x = input(g, "x", IR_F32, 4, dx);
	char rep[2048];

	node(g, "Det", &x, 1);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(gridsample_bicubic_reflection)
{
	static const char *modes[] = { "bicubic", "bilinear", "nearest" };

	for (int m = 0; m < 3; m++)
		for (int align = 0; align < 2; align++) {
			struct ir_graph *g = ir_graph_new(NULL);
			int64_t dx[] = { 2, 3, 5, 4 }, dg[] = { 2, 3, 6, 2 };
			int in[2];
			struct ir_node *n;
			char rep[2048];

			in[0] = input(g, "x", IR_F32, 4, dx);
			in[1] = input(g, "grid", IR_F32, 4, dg);
			n = node(g, "GridSample", in, 2);
			ir_attr_set_str(n, "mode", modes[m], NULL);
			ir_attr_set_str(n, "padding_mode", m ? "zeros" : "reflection", NULL);
			ir_attr_set_int(n, "align_corners", align, NULL);
			CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s align_corners %d: %s", modes[m], align,
				  rep);
			ir_graph_free(g);
		}
}

TEST(dft_complex_inverse_middle_axis)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 5, 3, 2 };
	int x = input(g, "x", IR_F32, 4, dx);
	struct ir_node *n = node(g, "DFT", &x, 1);
	char rep[2048];

	ir_attr_set_int(n, "axis", 1, NULL);
	ir_attr_set_int(n, "inverse", 1, NULL);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(bitshift_left_wraps_uint8)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t d[] = { 64 };
	int in[2];
	struct ir_node *n;
	char rep[2048];

	/* x and y in [0, 10): x << 9 wraps at 256 */
	in[0] = input(g, "x", IR_U8, 1, d);
	in[1] = input(g, "s", IR_U8, 1, d);
	n = node(g, "BitShift", in, 2);
	ir_attr_set_str(n, "direction", "LEFT", NULL);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(inverse_trigonometric)
{
	static const char *ops[] = { "Atan", "Asin", "Acos" };

	for (int k = 0; k < 3; k++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t d[] = { 1000 };
		int x = input(g, "x", IR_F32, 1, d);
		char rep[2048];

		node(g, ops[k], &x, 1);
		CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "%s: %s", ops[k], rep);
		ir_graph_free(g);
	}
}

TEST(einsum_diagonals)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t da[] = { 3, 2, 3 }, db[] = { 2, 4 }, dc[] = { 4, 4, 4 };
	int in[2];
	struct ir_node *n;
	char rep[2048];

	/* the pair apart, then a label three times */
	in[0] = input(g, "a", IR_F32, 3, da);
	in[1] = input(g, "b", IR_F32, 2, db);
	n = node(g, "Einsum", in, 2);
	ir_attr_set_str(n, "equation", "iji,jk->ik", NULL);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "iji,jk->ik: %s", rep);
	ir_graph_free(g);
	g = ir_graph_new(NULL);
	in[0] = input(g, "c", IR_F32, 3, dc);
	n = node(g, "Einsum", in, 1);
	ir_attr_set_str(n, "equation", "iii->i", NULL);
	CHECK_MSG(check(g, rep, sizeof(rep)) == 0, "iii->i: %s", rep);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(conv3d_pads_strides_dilations_groups_bias);
	RUN(pool3d_ceil_mode_and_pads);
	RUN(tile_every_axis_of_rank_5);
	RUN(det_batched_3x3);
	RUN(gridsample_bicubic_reflection);
	RUN(dft_complex_inverse_middle_axis);
	RUN(bitshift_left_wraps_uint8);
	RUN(inverse_trigonometric);
	RUN(einsum_diagonals);
	return TH_DONE();
}
