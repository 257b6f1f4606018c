/* SPDX-License-Identifier: MIT */
/*
 * test_compiler_lower.c - the lowering on the in-process device against
 * the reference evaluator (ipu-compile --check's machinery), on targets
 * small enough to force the partitioning paths: matmul split over M, N
 * and K with partial sums reduced, elementwise ops spread over many tiles
 * with broadcasting, row ops split over tiles, float16 (a bias added inside
 * the product's sum), model fusion, and
 * the error for a model that cannot fit.
 */
#include <math.h>
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

static int cconst(struct ir_graph *g, const char *name, int rank, const int64_t *d, unsigned seed)
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);
	int64_t n;

	ir_tensor_alloc(&t, IR_F32, rank, d, NULL);
	n = ir_numel(rank, d);
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		ir_set_f(t.data, IR_F32, (size_t)i, ((seed >> 8) % 2001) / 1000.0 - 1.0);
	}
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int node(struct ir_graph *g, const char *op, const int *in, int nin, const char *out)
{
	int o = ir_value_add(g, out, NULL);

	ir_node_add(g, out, op, in, nin, &o, 1, NULL);
	return o;
}

/* Runs the pipeline then --check on the target, constant folds limited to
 * fold_limit bytes (0: the default); returns ipuc_check's result. */
static int check_limit(struct ir_graph *g, int fp16, uint32_t tiles, uint32_t mem,
		       int64_t fold_limit, char *report, size_t len)
{
	return lower_check(g, fp16, tiles, mem, fold_limit, report, len);
}

static int check(struct ir_graph *g, int fp16, uint32_t tiles, uint32_t mem, char *report, size_t len)
{
	return check_limit(g, fp16, tiles, mem, 0, report, len);
}

static struct ir_graph *matmul_graph(int64_t M, int64_t K, int64_t N, int const_b)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t da[] = { M, K }, db[] = { K, N };
	int in[2], y;

	in[0] = input(g, "a", IR_F32, 2, da);
	in[1] = const_b ? cconst(g, "b", 2, db, 3) : input(g, "b", IR_F32, 2, db);
	y = node(g, "MatMul", in, 2, "y");
	ir_graph_add_output(g, y, NULL);
	return g;
}

TEST(matmul_split_k_with_partial_sums)
{
	char rep[2048];
	/* 16 KiB budget per tile: [8 x 512] x [512 x 64] must split K */
	struct ir_graph *g = matmul_graph(8, 512, 64, 1);

	CHECK_MSG(check(g, 0, 16, 32 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	g = matmul_graph(8, 512, 64, 1);
	CHECK_MSG(check(g, 1, 16, 32 * 1024, rep, sizeof(rep)) == 0, "fp16: %s", rep);
	ir_graph_free(g);
}

static int lower_stats(struct ir_graph *g, uint32_t tiles, uint32_t mem,
		       struct ipu_graph_stats *st, char *report, size_t len);

/* A constant A kept once ([256 x 512], the weights of a 1x1 conv) times
 * a run-time B ([512 x 32]) on tiles giving an op 32 KiB: K is split and
 * the output rows are whole, so each block's partial sums are added in
 * row pieces on several tiles straight into the output kept there: two
 * exchanges (the operand blocks, the partials), none placing the result. */
TEST(matmul_split_k_sums_whole_rows_in_place)
{
	for (int fp16 = 0; fp16 < 2; fp16++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t da[] = { 256, 512 }, db[] = { 512, 32 };
		int in[2], y;
		char rep[2048];

		in[0] = cconst(g, "a", 2, da, 5);
		in[1] = input(g, "b", IR_F32, 2, db);
		y = node(g, "MatMul", in, 2, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, fp16, 64, 64 * 1024, rep, sizeof(rep)) == 0, "fp16 %d: %s", fp16, rep);
		ir_graph_free(g);
	}
	{
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t da[] = { 256, 512 }, db[] = { 512, 32 };
		struct ipu_graph_stats st;
		int in[2], y;
		char rep[2048];

		in[0] = cconst(g, "a", 2, da, 5);
		in[1] = input(g, "b", IR_F32, 2, db);
		y = node(g, "MatMul", in, 2, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(lower_stats(g, 64, 64 * 1024, &st, rep, sizeof(rep)) == 0, "%s", rep);
		CHECK_MSG(st.exchanges == 2, "%u exchanges", st.exchanges);
		ir_graph_free(g);
	}
}

TEST(matmul_split_mn_runtime_b)
{
	char rep[2048];
	struct ir_graph *g = matmul_graph(64, 32, 48, 0);

	CHECK_MSG(check(g, 0, 32, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	g = matmul_graph(33, 17, 65, 1);	/* uneven blocks */
	CHECK_MSG(check(g, 0, 7, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* Two run-time operands whose blocks, all computed at once, would need
 * more than a tile gives (each block's rows of A and columns of B beside
 * it): the output rows are computed in chunks, one after another, with
 * and without batches, in both precisions; the results are the reference
 * evaluator's. */
TEST(matmul_in_row_chunks)
{
	char rep[2048];
	struct ir_graph *g = matmul_graph(256, 256, 256, 0);

	CHECK_MSG(check(g, 0, 16, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	g = matmul_graph(250, 256, 200, 0);	/* uneven chunks */
	CHECK_MSG(check(g, 1, 16, 64 * 1024, rep, sizeof(rep)) == 0, "fp16: %s", rep);
	ir_graph_free(g);
	{
		int64_t da[] = { 2, 160, 192 }, db[] = { 2, 192, 160 };
		int in[2], y;

		g = ir_graph_new(NULL);
		in[0] = input(g, "a", IR_F32, 3, da);
		in[1] = input(g, "b", IR_F32, 3, db);
		y = node(g, "MatMul", in, 2, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, 0, 16, 64 * 1024, rep, sizeof(rep)) == 0, "batch 2: %s", rep);
		ir_graph_free(g);
	}
	for (int fp16 = 0; fp16 < 2; fp16++) {	/* a bias joining each chunk's sum */
		int64_t da[] = { 250, 256 }, db[] = { 256, 200 }, dc[] = { 200 };
		int in[2], y;

		g = ir_graph_new(NULL);
		in[0] = input(g, "a", IR_F32, 2, da);
		in[1] = input(g, "b", IR_F32, 2, db);
		y = node(g, "MatMul", in, 2, "t");
		in[0] = y;
		in[1] = cconst(g, "c", 1, dc, 5);
		y = node(g, "Add", in, 2, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, fp16, 16, 64 * 1024, rep, sizeof(rep)) == 0, "bias, fp16 %d: %s", fp16, rep);
		ir_graph_free(g);
	}
}

/* [64 x 1 x 64] x a [64 x 96] weight (a seq-first transformer's
 * projection): 64 copies of the weight would not fit the device; lowered
 * as one [64 x 64] x [64 x 96] product they need not. */
TEST(matmul_shared_weight_is_one_product)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t da[] = { 64, 1, 64 }, db[] = { 64, 96 };
	int in[2], y;
	char rep[2048];

	in[0] = input(g, "a", IR_F32, 3, da);
	in[1] = cconst(g, "w", 2, db, 21);
	y = node(g, "MatMul", in, 2, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 48 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* Three weights of 512 KiB on a device of 32 tiles x 64 KiB: 3/4 of the
 * device, so each of their blocks may be kept once only (copies of blocks
 * for more tiles, or a whole copy to copy blocks from, do not fit: tile 0
 * then needed 70656 bytes), and the small activations travel to them. */
TEST(weights_filling_most_of_the_device_kept_once)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t da[] = { 8, 256 }, d1[] = { 256, 512 }, d2[] = { 512, 256 };
	int in[2], h, y;
	char rep[2048];

	in[0] = input(g, "a", IR_F32, 2, da);
	in[1] = cconst(g, "w1", 2, d1, 5);
	h = node(g, "MatMul", in, 2, "h");
	in[0] = h;
	in[1] = cconst(g, "w2", 2, d2, 6);
	h = node(g, "MatMul", in, 2, "h2");
	in[0] = h;
	in[1] = cconst(g, "w3", 2, d1, 7);
	y = node(g, "MatMul", in, 2, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 32, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(elementwise_broadcast_spread)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 4, 16, 8, 8 }, dc[] = { 16, 1, 1 }, dr[] = { 8 };
	int in[2], a, b, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "c", 3, dc, 5);
	a = node(g, "Mul", in, 2, "a");
	in[0] = a;
	in[1] = cconst(g, "r", 1, dr, 9);
	b = node(g, "Add", in, 2, "b");
	y = node(g, "Sigmoid", &b, 1, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 64, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(rows_split_softmax_layernorm)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 64, 40 }, ds[] = { 40 };
	int in[3], s, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 2, dx);
	s = node(g, "Softmax", in, 1, "s");
	in[0] = s;
	in[1] = cconst(g, "gamma", 1, ds, 1);
	in[2] = cconst(g, "beta", 1, ds, 2);
	y = node(g, "LayerNormalization", in, 3, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 8 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(conv_pool_gemm)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 3, 10, 10 }, dw[] = { 6, 3, 3, 3 }, db[] = { 6 }, dfw[] = { 5, 6 };
	int in[3], c, r, p, f, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w", 4, dw, 4);
	in[2] = cconst(g, "b", 1, db, 6);
	c = node(g, "Conv", in, 3, "c");
	ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
	r = node(g, "Relu", &c, 1, "r");
	p = node(g, "GlobalAveragePool", &r, 1, "p");
	f = node(g, "Flatten", &p, 1, "f");
	in[0] = f;
	in[1] = cconst(g, "fw", 2, dfw, 8);
	in[2] = cconst(g, "fb", 1, (int64_t[]){ 5 }, 9);
	y = node(g, "Gemm", in, 3, "y");
	ir_attr_set_int(&g->nodes[g->nnodes - 1], "transB", 1, NULL);
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/*
 * A Gemm with transB on a weight larger than a tile and than the fold
 * limit: the weight's Transpose moves data only, so it is folded whatever
 * the limit (lowered, the whole weight would be read by one tile), while an
 * arithmetic fold that grows a constant past the limit is left to the
 * device.
 */
TEST(layout_folds_ignore_the_size_limit)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 4, 256 }, dw[] = { 64, 256 }, dc[] = { 1, 64 }, dr[] = { 64, 1 };
	int in[3], y, grow, out;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 2, dx);
	in[1] = cconst(g, "w", 2, dw, 11);
	in[2] = cconst(g, "b", 1, (int64_t[]){ 64 }, 12);
	y = node(g, "Gemm", in, 3, "y");
	ir_attr_set_int(&g->nodes[g->nnodes - 1], "transB", 1, NULL);
	in[0] = cconst(g, "c", 2, dc, 13);
	in[1] = cconst(g, "r", 2, dr, 14);
	grow = node(g, "Add", in, 2, "grow");	/* [64 x 64] from 64 + 64 */
	in[0] = y;
	in[1] = grow;
	out = node(g, "MatMul", in, 2, "out");
	ir_graph_add_output(g, out, NULL);
	/* the 64 KiB weight on tiles of 16 KiB, folds limited to 1 KiB */
	CHECK_MSG(check_limit(g, 0, 16, 16 * 1024, 1024, rep, sizeof(rep)) == 0, "%s", rep);
	CHECK_MSG(!g->vals[grow].data, "the growing Add was folded past the limit");
	ir_graph_free(g);
}

/* A grouped conv (6 groups of 8 channels) whose every output row needs all
 * 48 input channels of 3 rows of 128: only blocks of whole groups fit. */
TEST(grouped_conv_split_by_groups)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 48, 3, 128 }, dw[] = { 48, 8, 3, 3 }, db[] = { 48 };
	int in[3], y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w", 4, dw, 31);
	in[2] = cconst(g, "b", 1, db, 32);
	y = node(g, "Conv", in, 3, "y");
	ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
	ir_attr_set_int(&g->nodes[0], "group", 6, NULL);
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 32, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* An image larger than a tile's budget: the conv is split over output
 * rows (with halo rows and per-block padding) as well as channels. */
TEST(conv_row_split)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 8, 48, 40 }, dw[] = { 12, 8, 3, 3 }, db[] = { 12 };
	int in[3], c, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w", 4, dw, 4);
	in[2] = cconst(g, "b", 1, db, 6);
	c = node(g, "Conv", in, 3, "c");
	ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 2, 0, 1 }, 4, NULL);
	ir_attr_set_ints(&g->nodes[0], "strides", (int64_t[]){ 2, 1 }, 2, NULL);
	y = node(g, "Relu", &c, 1, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* A convolution whose single output row over all 256 input channels (256
 * x 3 rows x 64 x 4 bytes) is more than a tile gives an op: the input
 * channels are split in parts whose float32 partial sums are added on a
 * home tile (float32, float16, run-time weights). */
TEST(conv_input_channel_parts)
{
	int64_t dx[] = { 2, 256, 6, 64 }, dw[] = { 6, 256, 3, 3 }, db[] = { 6 };
	char rep[2048];

	for (int k = 0; k < 3; k++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int in[3], y;

		in[0] = input(g, "x", IR_F32, 4, dx);
		in[1] = k == 2 ? input(g, "w", IR_F32, 4, dw) : cconst(g, "w", 4, dw, 17);
		in[2] = cconst(g, "b", 1, db, 19);
		y = node(g, "Conv", in, 3, "y");
		ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 0, 1 }, 4, NULL);
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, k == 1, 64, 128 * 1024, rep, sizeof(rep)) == 0, "case %d: %s", k, rep);
		ir_graph_free(g);
	}
}

/* An embedding table larger than a tile: column blocks on many tiles. */
TEST(embedding_columns)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t de[] = { 500, 64 }, di[] = { 2, 7 };
	int in[2], y, e;
	char rep[2048];

	in[0] = cconst(g, "emb", 2, de, 11);
	in[1] = input(g, "ids", IR_I64, 2, di);
	e = node(g, "Gather", in, 2, "e");
	y = node(g, "Tanh", &e, 1, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 32, 32 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* Transposes split over the output's first dim. */
TEST(transpose_split)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 6, 40, 24 };
	int x, y, t;
	char rep[2048];

	x = input(g, "x", IR_F32, 3, dx);
	t = node(g, "Transpose", &x, 1, "t");
	ir_attr_set_ints(&g->nodes[0], "perm", (int64_t[]){ 0, 2, 1 }, 3, NULL);
	y = node(g, "Neg", &t, 1, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 16 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* A Pad too large for one tile: split over the unpadded leading dims. */
/* NCHW -> NHWC of 2 x 24 x 16 x 16 on tiles giving an op 8 KiB: one
 * output row (a pixel's 24 channels) touches the whole image, so blocks
 * gather the channel runs they need; in fp32 and fp16, and NHWC -> NCHW. */
TEST(transpose_gathers_runs)
{
	static const int64_t perms[2][4] = { { 0, 2, 3, 1 }, { 0, 3, 1, 2 } };
	int64_t dx[] = { 2, 24, 16, 16 };
	char rep[2048];

	for (int fp16 = 0; fp16 < 2; fp16++)
		for (int k = 0; k < 2; k++) {
			struct ir_graph *g = ir_graph_new(NULL);
			int x, y, t;

			x = input(g, "x", IR_F32, 4, dx);
			t = node(g, "Transpose", &x, 1, "t");
			ir_attr_set_ints(&g->nodes[0], "perm", perms[k], 4, NULL);
			y = node(g, "Neg", &t, 1, "y");
			ir_graph_add_output(g, y, NULL);
			CHECK_MSG(check(g, fp16, 16, 16 * 1024, rep, sizeof(rep)) == 0, "perm %d fp16 %d: %s",
				  k, fp16, rep);
			ir_graph_free(g);
		}
}

/* A stride-2 3x3 conv of an even height without padding never reads the
 * last input row: one row block takes the rows it reads, not the image. */
TEST(conv_skips_unread_rows)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 4, 12, 12 }, dw[] = { 6, 4, 3, 3 };
	int in[2], y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w", 4, dw, 51);
	y = node(g, "Conv", in, 2, "y");
	ir_attr_set_ints(&g->nodes[0], "strides", (int64_t[]){ 2, 2 }, 2, NULL);
	ir_graph_add_output(g, y, NULL);
	/* one tile: a single block of all rows */
	CHECK_MSG(check(g, 0, 1, 1 << 20, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

/* Images of 160 x 160 on tiles giving an op 32 KiB: pooling splits each
 * image over output rows (max with padding, average counting the padding,
 * ceil_mode). */
TEST(pool_rows_of_large_images)
{
	int64_t dx[] = { 1, 2, 160, 160 };
	char rep[2048];

	for (int k = 0; k < 3; k++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int x, y;

		x = input(g, "x", IR_F32, 4, dx);
		y = node(g, k == 1 ? "AveragePool" : "MaxPool", &x, 1, "y");
		ir_attr_set_ints(&g->nodes[0], "kernel_shape", (int64_t[]){ 3, 3 }, 2, NULL);
		ir_attr_set_ints(&g->nodes[0], "strides", (int64_t[]){ 2, 2 }, 2, NULL);
		if (k < 2)
			ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
		if (k == 1)
			ir_attr_set_int(&g->nodes[0], "count_include_pad", 1, NULL);
		if (k == 2)
			ir_attr_set_int(&g->nodes[0], "ceil_mode", 1, NULL);
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, k == 2, 16, 64 * 1024, rep, sizeof(rep)) == 0, "case %d: %s", k, rep);
		ir_graph_free(g);
	}
}

/* The class token of a 40-token sequence of 256 (x[:, 0], a Gather of one
 * constant index) on tiles giving an op 8 KiB, and the last token as a
 * 1-element index vector: slices, not the whole sequence on one tile. */
TEST(gather_one_index_of_runtime_data)
{
	int64_t dx[] = { 1, 40, 256 }, one = 1;
	char rep[2048];

	for (int k = 0; k < 2; k++) {
		struct ir_graph *g = ir_graph_new(NULL);
		struct ir_tensor t;
		int in[2], y, z;

		in[0] = input(g, "x", IR_F32, 3, dx);
		in[1] = ir_value_add(g, "i", NULL);
		ir_tensor_alloc(&t, IR_I64, k, &one, NULL);
		ir_set_i(t.data, IR_I64, 0, k ? -1 : 0);
		ir_value_set_const(&g->vals[in[1]], &t);
		y = node(g, "Gather", in, 2, "y");
		ir_attr_set_int(&g->nodes[0], "axis", 1, NULL);
		z = node(g, "Neg", &y, 1, "z");
		ir_graph_add_output(g, z, NULL);
		CHECK_MSG(check(g, 0, 16, 16 * 1024, rep, sizeof(rep)) == 0, "case %d: %s", k, rep);
		ir_graph_free(g);
	}
}

static int ints_const(struct ir_graph *g, const char *name, const int64_t *v, int64_t n)
{
	struct ir_tensor t;
	int c = ir_value_add(g, name, NULL);

	ir_tensor_alloc(&t, IR_I64, 1, &n, NULL);
	memcpy(t.data, v, (size_t)n * sizeof(int64_t));
	ir_value_set_const(&g->vals[c], &t);
	return c;
}

/* Tensors whose rows of the first dim are each larger than a tile: a batch
 * of 2 images of 48 x 40 x 40 plus a per-channel bias (the Add after a
 * convolution lowered as a matmul), and a strided Slice of a batch of 4
 * (a strided 1x1 convolution's input), on tiles giving an op 32 KiB. */
static int filled(struct ir_graph *g, const char *name, int rank, const int64_t *d, double v)
{
	struct ir_tensor t;
	int x = ir_value_add(g, name, NULL);
	int64_t n = ir_numel(rank, d);

	ir_tensor_alloc(&t, IR_F32, rank, d, NULL);
	for (int64_t i = 0; i < n; i++)
		ir_set_f(t.data, IR_F32, (size_t)i, v);
	ir_value_set_const(&g->vals[x], &t);
	return x;
}

/*
 * float16 1x1 convolution (lowered as a matmul) and Gemm whose bias
 * cancels most of the product, as a folded BatchNorm's does: inputs near 8,
 * weights 64, so the products are about 2048 and 3072 (float16 steps of
 * 2) and the biases -2048 and -3072 leave results of tens.  Rounding the
 * product before adding the bias loses up to 1; the reference rounds once,
 * and so must the device.
 */
TEST(fp16_bias_joins_the_sum)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 4, 6, 6 }, dw[] = { 3, 4, 1, 1 }, db[] = { 3 };
	int64_t one[] = { 1 };
	int in[3], x, c, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = filled(g, "s", 1, one, 0.25);
	x = node(g, "Mul", in, 2, "xs");
	in[0] = x;
	in[1] = filled(g, "eight", 1, one, 8.0);
	x = node(g, "Add", in, 2, "xe");
	in[0] = x;
	in[1] = filled(g, "w", 4, dw, 64.0);
	in[2] = filled(g, "b", 1, db, -2048.0);
	c = node(g, "Conv", in, 3, "c");
	ir_graph_add_output(g, c, NULL);
	/* the shifted input's rows as a [48 x 6] matrix times [6 x 5] */
	in[0] = x;
	in[1] = ints_const(g, "shape", (int64_t[]){ 48, 6 }, 2);
	x = node(g, "Reshape", in, 2, "rows");
	in[0] = x;
	in[1] = filled(g, "gw", 2, (int64_t[]){ 6, 5 }, 64.0);
	in[2] = filled(g, "gb", 1, (int64_t[]){ 5 }, -3072.0);
	y = node(g, "Gemm", in, 3, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 1, 16, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);

	/* K = 512 split into partial sums on 32 KiB tiles: the bias is one
	 * more float32 partial */
	g = ir_graph_new(NULL);
	in[0] = input(g, "x", IR_F32, 2, (int64_t[]){ 8, 512 });
	in[1] = filled(g, "s", 1, one, 0.25);
	x = node(g, "Mul", in, 2, "xs");
	in[0] = x;
	in[1] = filled(g, "eight", 1, one, 8.0);
	x = node(g, "Add", in, 2, "xe");
	in[0] = x;
	in[1] = filled(g, "gw", 2, (int64_t[]){ 512, 64 }, 0.5);
	in[2] = filled(g, "gb", 1, (int64_t[]){ 64 }, -2048.0);
	y = node(g, "Gemm", in, 3, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 1, 16, 32 * 1024, rep, sizeof(rep)) == 0, "split K: %s", rep);
	ir_graph_free(g);
}

/*
 * A float32 product takes the bias its only reader adds (a 1x1
 * convolution's per row, a Gemm's per column) into its sum: the block is
 * filled with the bias and the product accumulated onto it, or with K
 * split (K = 512 on 32 KiB tiles) the bias is one more partial.
 */
TEST(fp32_bias_joins_the_sum)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 4, 6, 6 }, dw[] = { 3, 4, 1, 1 }, db[] = { 3 };
	int in[3], c, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w", 4, dw, 3);
	in[2] = cconst(g, "b", 1, db, 7);
	c = node(g, "Conv", in, 3, "c");
	ir_graph_add_output(g, c, NULL);
	in[0] = input(g, "r", IR_F32, 2, (int64_t[]){ 48, 6 });
	in[1] = cconst(g, "gw", 2, (int64_t[]){ 6, 5 }, 11);
	in[2] = cconst(g, "gb", 1, (int64_t[]){ 5 }, 13);
	y = node(g, "Gemm", in, 3, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);

	g = ir_graph_new(NULL);
	in[0] = input(g, "x", IR_F32, 2, (int64_t[]){ 8, 512 });
	in[1] = cconst(g, "gw", 2, (int64_t[]){ 512, 64 }, 17);
	in[2] = cconst(g, "gb", 1, (int64_t[]){ 64 }, 19);
	y = node(g, "Gemm", in, 3, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 32 * 1024, rep, sizeof(rep)) == 0, "split K: %s", rep);
	ir_graph_free(g);
}

/*
 * A 1x1 convolution's product, [24 x 40] weights x a [40 x 1300] image
 * plus a bias per row, fp32 and fp16 on 16 tiles: a run-time B cut into
 * column blocks, evenly or (float16 here: 14 blocks of 96 columns, the
 * last 52) a whole number of the host kernel's register tiles wide.
 */
TEST(matmul_column_blocks_of_whole_register_tiles)
{
	for (int fp16 = 0; fp16 < 2; fp16++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int in[2], y;
		char rep[2048];

		in[0] = cconst(g, "w", 2, (int64_t[]){ 24, 40 }, 23);
		in[1] = input(g, "x", IR_F32, 2, (int64_t[]){ 40, 1300 });
		y = node(g, "MatMul", in, 2, "t");
		in[0] = y;
		in[1] = cconst(g, "b", 2, (int64_t[]){ 24, 1 }, 29);
		y = node(g, "Add", in, 2, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, fp16, 16, 64 * 1024, rep, sizeof(rep)) == 0, "fp16 %d: %s", fp16, rep);
		ir_graph_free(g);
	}
}

TEST(rows_larger_than_a_tile)
{
	int64_t dx[] = { 2, 48, 40, 40 }, db[] = { 48, 1, 1 }, ds[] = { 4, 16, 40, 40 };
	static const int64_t st[] = { 0, 0 }, en[] = { 40, 40 }, ax[] = { 2, 3 }, sp[] = { 2, 2 };
	struct ir_graph *g = ir_graph_new(NULL);
	int in[5], a, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "b", 3, db, 41);
	a = node(g, "Add", in, 2, "a");
	y = node(g, "Relu", &a, 1, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 128, 64 * 1024, rep, sizeof(rep)) == 0, "add: %s", rep);
	ir_graph_free(g);

	g = ir_graph_new(NULL);
	in[0] = input(g, "x", IR_F32, 4, ds);
	in[1] = ints_const(g, "starts", st, 2);
	in[2] = ints_const(g, "ends", en, 2);
	in[3] = ints_const(g, "axes", ax, 2);
	in[4] = ints_const(g, "steps", sp, 2);
	a = node(g, "Slice", in, 5, "s");
	y = node(g, "Neg", &a, 1, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 64, 64 * 1024, rep, sizeof(rep)) == 0, "slice: %s", rep);
	ir_graph_free(g);
}

TEST(pad_split)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 16, 30, 30 }, pads[] = { 0, 0, 1, 2, 0, 0, 3, 1 };
	int in[3], p, y;
	char rep[2048];

	in[0] = input(g, "x", IR_F32, 4, dx);
	{
		struct ir_tensor t;
		int64_t d8 = 8;
		int v = ir_value_add(g, "pads", NULL);

		ir_tensor_alloc(&t, IR_I64, 1, &d8, NULL);
		memcpy(t.data, pads, sizeof(pads));
		ir_value_set_const(&g->vals[v], &t);
		in[1] = v;
	}
	p = node(g, "Pad", in, 2, "p");
	ir_attr_set_str(&g->nodes[0], "mode", "reflect", NULL);
	y = node(g, "Neg", &p, 1, "y");
	ir_graph_add_output(g, y, NULL);
	CHECK_MSG(check(g, 0, 16, 64 * 1024, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
}

TEST(fusion_switch)
{
	struct ir_graph *g[2];
	struct ir_error e;
	struct ir_pipeline_opts po = { 0 };
	struct ipu_target t = { "ipu21", 8, 64 * 1024 };
	char rep[2048] = "";
	FILE *f;
	int64_t d[] = { 3, 5 };

	for (int k = 0; k < 2; k++) {
		int x;

		g[k] = ir_graph_new(NULL);
		x = input(g[k], "X", IR_F32, 2, d);
		ir_graph_add_output(g[k], node(g[k], k ? "Exp" : "Neg", &x, 1, "O"), NULL);
		REQUIRE(ir_pipeline_run(g[k], &po, &e) == 0);
	}
	f = fmemopen(rep, sizeof(rep) - 1, "w");
	CHECK(ipuc_check(g, 2, &t, f, &e) == 0);
	fclose(f);
	CHECK_MSG(strstr(rep, "graph0/O: ok") && strstr(rep, "graph1/O: ok"), "%s", rep);
	ir_graph_free(g[0]);
	ir_graph_free(g[1]);
}

/* The compile summary of g (after the pipeline) on `tiles` tiles of mem
 * bytes; 0 or -1 (message in report). */
static int lower_stats(struct ir_graph *g, uint32_t tiles, uint32_t mem,
		       struct ipu_graph_stats *st, char *report, size_t len)
{
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { 0 };
	struct ipu_target t = { "ipu2", tiles, mem };
	struct ipu_lower_info info;
	void *image = NULL;
	size_t n = 0;

	memset(&info, 0, sizeof(info));
	if (ir_pipeline_run(g, &po, &e) || ipu_lower_image(&g, 1, &t, &image, &n, &info, &e)) {
		snprintf(report, len, "%s", e.msg);
		return -1;
	}
	*st = info.stats;
	free(image);
	ipu_lower_info_free(&info);
	return 0;
}

/* Conv(x [1, C, 7, 7], 3 x 3, pads 1, group G, M outputs) + Relu. */
static struct ir_graph *conv_relu_graph(int64_t C, int64_t M, int64_t G, unsigned seed)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, C, 7, 7 }, dw[] = { M, C / G, 3, 3 }, db[] = { M };
	int in[3], c, y;

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w", 4, dw, seed);
	in[2] = cconst(g, "b", 1, db, seed + 1);
	c = node(g, "Conv", in, 3, "c");
	ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
	if (G > 1)
		ir_attr_set_int(&g->nodes[0], "group", G, NULL);
	y = node(g, "Relu", &c, 1, "y");
	ir_graph_add_output(g, y, NULL);
	return g;
}

/* Checks conv_relu_graph(C, M, G) against the reference on the whole
 * device and returns its lowering's statistics in *st. */
static void conv_relu_on_device(int64_t C, int64_t M, int64_t G, unsigned seed,
				struct ipu_graph_stats *st)
{
	struct ir_graph *g = conv_relu_graph(C, M, G, seed);
	char rep[2048];

	CHECK_MSG(check(g, 0, 1472, 638976, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	g = conv_relu_graph(C, M, G, seed);
	CHECK_MSG(lower_stats(g, 1472, 638976, st, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	printf("# conv %lld x 7 x 7 -> %lld, group %lld, + Relu: %u vertices, %u copies, %llu bytes exchanged\n",
	       (long long)C, (long long)M, (long long)G, st->vertices, st->copies,
	       (unsigned long long)st->exchange_bytes);
}

/* A 960-channel 7 x 7 depthwise conv (MobileNetV2's last ones) + Relu on
 * the whole device: blocks of whole channel planes, not one vertex per
 * few channels x one row (1344 conv vertices before the
 * planner counted a vertex's and a copy's overhead). */
TEST(depthwise_conv_grain)
{
	struct ipu_graph_stats st = { 0 };

	conv_relu_on_device(960, 960, 960, 41, &st);
	CHECK_MSG(st.vertices <= 400, "%u vertices", st.vertices);
}

/* ResNet's last 3 x 3 conv (512 -> 512 channels of 7 x 7) on the whole
 * device: its 9.4 MB of weights need about 64 blocks, and blocks of output
 * channels alone copied the 100 KB image to each of 128 tiles (12.8 MB
 * per run); the planner counts the bytes the host copies and splits the
 * input channels too, so each block copies only its part of the image
 * (and a float32 partial sum back). */
TEST(late_conv_copies_parts_of_the_image)
{
	struct ipu_graph_stats st = { 0 };

	conv_relu_on_device(512, 512, 1, 71, &st);
	CHECK_MSG(st.exchange_bytes < 4000000, "%llu bytes exchanged", (unsigned long long)st.exchange_bytes);
}

/* Depthwise convs whose one channel plane (96 x 96 floats) is more than
 * a tile gives an op: blocks of output rows of one channel, each
 * computed in place in the output (its rows are one contiguous range of
 * it), stride 1 and 2. */
TEST(depthwise_row_blocks_in_place)
{
	for (int s2 = 0; s2 < 2; s2++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t dx[] = { 1, 4, 96, 96 }, dw[] = { 4, 1, 3, 3 }, db[] = { 4 };
		int in[3], c, y;
		char rep[2048];

		in[0] = input(g, "x", IR_F32, 4, dx);
		in[1] = cconst(g, "w", 4, dw, 61);
		in[2] = cconst(g, "b", 1, db, 62);
		c = node(g, "Conv", in, 3, "c");
		ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
		ir_attr_set_int(&g->nodes[0], "group", 4, NULL);
		if (s2)
			ir_attr_set_ints(&g->nodes[0], "strides", (int64_t[]){ 2, 2 }, 2, NULL);
		y = node(g, "Relu", &c, 1, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, 0, 16, 64 * 1024, rep, sizeof(rep)) == 0, "stride %d: %s", 1 + s2, rep);
		ir_graph_free(g);
	}
}

/* A bias Add (and Sigmoid) on a MatMul output whose rows (4999 and 2 x
 * 4999 elements) are more than twice the 8 KiB pieces the output is spread
 * in: each piece is computed where it is, cut at the rows' ends (and at
 * the inner rows' ends for the rank-3 view), instead of each row moving
 * to the tile of its first element. */
/*
 * A Relu or Clip read only from a Conv's or a MatMul's (+ bias) result, or
 * a Relu from a float Add's, is lowered into the vertices writing the
 * final values (lower_act.c): each
 * graph matches the reference, and has one compute set fewer than with
 * IPU_LOWER_FUSE_ACT=0 (`fused` 1), or as many (`fused` 0) when the
 * result is read by another node too or is an output.
 */
enum act_kind { ACT_RELU, ACT_CLIP6, ACT_CLIP_NEG };

static int act_node(struct ir_graph *g, int x, enum act_kind k, const char *out)
{
	int in[3];

	if (k == ACT_RELU)
		return node(g, "Relu", &x, 1, out);
	in[0] = x;
	in[1] = filled(g, "lo", 0, NULL, k == ACT_CLIP6 ? 0.0 : -0.5);
	in[2] = filled(g, "hi", 0, NULL, k == ACT_CLIP6 ? 6.0 : 0.25);
	return node(g, "Clip", in, 3, out);
}

/* shape 0: 3 x 3 conv [1, 16, 7, 7] -> 16; 1: 1x1 conv (Reshape, MatMul,
 * Add, Reshape); 2: Gemm [8 x 512] x [512 x 64] (K split on 32 KiB
 * tiles: the ones x partials sum); 3: depthwise 3 x 3 over 24 channels;
 * 4: the conv's result is also an output (not fused); 5: read by a Neg too
 * (not fused); 6: a conv over 512 input channels split into parts (the
 * ones x partials MATMUL sums them); 7: an Add of two inputs [2, 16, 30, 30]
 * and [16, 1, 1] (a residual Add: BINARY ADD_RELU for a Relu, not fused
 * for a Clip). */
static struct ir_graph *act_graph(int shape, enum act_kind k)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int in[3], c, y;

	if (shape == 7) {
		in[0] = input(g, "x", IR_F32, 4, (int64_t[]){ 2, 16, 30, 30 });
		in[1] = input(g, "r", IR_F32, 3, (int64_t[]){ 16, 1, 1 });
		c = node(g, "Add", in, 2, "c");
	} else if (shape >= 8) {
		/* a 1x1 conv over 1600 columns: a product in column blocks
		 * (lower_blocked.c), then (9) a residual Add of the input */
		in[0] = input(g, "x", IR_F32, 4, (int64_t[]){ 1, 16, 40, 40 });
		in[1] = cconst(g, "w", 4, (int64_t[]){ 16, 16, 1, 1 }, 9);
		in[2] = cconst(g, "b", 1, (int64_t[]){ 16 }, 10);
		c = node(g, "Conv", in, 3, "c");
		if (shape == 9) {
			in[1] = c;
			c = node(g, "Add", in, 2, "s");
		}
	} else if (shape == 2) {
		in[0] = input(g, "x", IR_F32, 2, (int64_t[]){ 8, 512 });
		in[1] = cconst(g, "w", 2, (int64_t[]){ 512, 64 }, 5);
		in[2] = cconst(g, "b", 1, (int64_t[]){ 64 }, 6);
		c = node(g, "Gemm", in, 3, "c");
	} else {
		int64_t C = shape == 6 ? 512 : shape == 3 ? 24 : 16, G = shape == 3 ? 24 : 1;
		int64_t kk = shape == 1 ? 1 : 3;

		in[0] = input(g, "x", IR_F32, 4, (int64_t[]){ 1, C, 7, 7 });
		in[1] = cconst(g, "w", 4, (int64_t[]){ shape == 6 ? 8 : C, C / G, kk, kk }, 7);
		in[2] = cconst(g, "b", 1, (int64_t[]){ shape == 6 ? 8 : C }, 8);
		c = node(g, "Conv", in, 3, "c");
		if (kk == 3)
			ir_attr_set_ints(&g->nodes[g->nnodes - 1], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
		if (G > 1)
			ir_attr_set_int(&g->nodes[g->nnodes - 1], "group", G, NULL);
	}
	y = act_node(g, c, k, "y");
	ir_graph_add_output(g, y, NULL);
	if (shape == 4)
		ir_graph_add_output(g, c, NULL);
	if (shape == 5)
		ir_graph_add_output(g, node(g, "Neg", &c, 1, "n"), NULL);
	return g;
}

TEST(activation_fused_into_producer)
{
	static const int fused[] = { 1, 1, 1, 1, 0, 0, 1, 1, 1, 1 };

	for (int shape = 0; shape < 10; shape++)
		for (int k = 0; k < 3; k++)
			for (int fp16 = 0; fp16 < 2; fp16++) {
				/* the K split needs small tiles; the parts too */
				uint32_t tiles = shape == 2 || shape >= 8 ? 16 : 64;
				uint32_t mem = shape == 2 ? 32 * 1024 : shape == 6 || shape >= 8 ? 64 * 1024
											: 128 * 1024;
				struct ipu_graph_stats on = { 0 }, off = { 0 };
				struct ir_graph *g = act_graph(shape, (enum act_kind)k);
				char rep[2048];

				CHECK_MSG(check(g, fp16, tiles, mem, rep, sizeof(rep)) == 0,
					  "shape %d act %d fp16 %d: %s", shape, k, fp16, rep);
				ir_graph_free(g);
				if (fp16)
					continue;
				g = act_graph(shape, (enum act_kind)k);
				CHECK_MSG(lower_stats(g, tiles, mem, &on, rep, sizeof(rep)) == 0, "%s", rep);
				ir_graph_free(g);
				setenv("IPU_LOWER_FUSE_ACT", "0", 1);
				g = act_graph(shape, (enum act_kind)k);
				CHECK_MSG(lower_stats(g, tiles, mem, &off, rep, sizeof(rep)) == 0, "%s", rep);
				ir_graph_free(g);
				unsetenv("IPU_LOWER_FUSE_ACT");
				CHECK_MSG(on.compute_sets + (uint32_t)(fused[shape] && ((shape != 7 && shape != 9) ||
											k == ACT_RELU)) ==
						  off.compute_sets,
					  "shape %d act %d: %u compute sets fused, %u not", shape, k,
					  on.compute_sets, off.compute_sets);
			}
}

TEST(elementwise_follows_pieces_within_rows)
{
	for (int r3 = 0; r3 < 2; r3++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t da[] = { 6, 8 }, db[] = { 8, 4999 }, dc[] = { 6, 1 }, ds[] = { 3, 2, 4999 };
		int64_t dc3[] = { 1, 2, 1 };
		int in[2], m, a, y;
		char rep[2048];

		in[0] = input(g, "a", IR_F32, 2, da);
		in[1] = cconst(g, "b", 2, db, 51);
		m = node(g, "MatMul", in, 2, "m");
		if (r3) {
			in[0] = m;
			in[1] = ir_value_add(g, "shape", NULL);
			{
				struct ir_tensor t;

				ir_tensor_alloc(&t, IR_I64, 1, (int64_t[]){ 3 }, NULL);
				for (int i = 0; i < 3; i++)
					ir_set_i(t.data, IR_I64, (size_t)i, ds[i]);
				ir_value_set_const(&g->vals[in[1]], &t);
			}
			m = node(g, "Reshape", in, 2, "m3");
		}
		in[0] = m;
		in[1] = r3 ? cconst(g, "c", 3, dc3, 52) : cconst(g, "c", 2, dc, 52);
		a = node(g, "Add", in, 2, "a_out");
		y = node(g, "Sigmoid", &a, 1, "y");
		ir_graph_add_output(g, y, NULL);
		CHECK_MSG(check(g, 0, 64, 256 * 1024, rep, sizeof(rep)) == 0, "rank %d: %s", 2 + r3, rep);
		ir_graph_free(g);
	}
}

/* MobileNetV2's first expansion on the whole device: 1x1 conv [96 x 16]
 * x [16 x 3136] + bias (a MatMul in column blocks), Clip, 3 x 3
 * depthwise conv (stride 2, row blocks of the 56 x 56 planes), Clip, 1x1
 * conv back to 16 channels (column blocks again), plus a second input (a
 * residual Add with a standard tensor, copied into the blocks run by
 * run) and a Relu of the projection (on its blocks) as a second output.  The column blocks stay where they
 * were computed and their readers copy from them: fewer bytes exchanged
 * than with the blocks' rows first copied into a standard output
 * (IPU_LOWER_BLOCKED=0), and the same results as the reference. */
static struct ir_graph *expand_chain_graph(void)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 16, 56, 56 }, dw1[] = { 96, 16, 1, 1 }, db1[] = { 96 };
	int64_t dd[] = { 96, 1, 3, 3 }, dw2[] = { 16, 96, 1, 1 }, s1[] = { 1 };
	int x, in[3], a, c, d, e, f, y, z;

	x = input(g, "x", IR_F32, 4, dx);
	in[0] = x;
	in[1] = cconst(g, "w1", 4, dw1, 81);
	in[2] = cconst(g, "b1", 1, db1, 82);
	a = node(g, "Conv", in, 3, "a");
	in[0] = a;
	in[1] = filled(g, "lo", 0, s1, 0.0);
	in[2] = filled(g, "hi", 0, s1, 0.5);
	c = node(g, "Clip", in, 3, "c");
	in[0] = c;
	in[1] = cconst(g, "wd", 4, dd, 83);
	d = node(g, "Conv", in, 2, "d");
	ir_attr_set_ints(&g->nodes[g->nnodes - 1], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
	ir_attr_set_int(&g->nodes[g->nnodes - 1], "group", 96, NULL);
	ir_attr_set_ints(&g->nodes[g->nnodes - 1], "strides", (int64_t[]){ 2, 2 }, 2, NULL);
	in[0] = d;
	in[1] = filled(g, "lo2", 0, s1, 0.0);
	in[2] = filled(g, "hi2", 0, s1, 6.0);
	e = node(g, "Clip", in, 3, "e");
	in[0] = e;
	in[1] = cconst(g, "w2", 4, dw2, 84);
	f = node(g, "Conv", in, 2, "f");
	in[0] = f;
	in[1] = input(g, "skip", IR_F32, 4, (int64_t[]){ 1, 16, 28, 28 });
	y = node(g, "Add", in, 2, "y");
	z = node(g, "Relu", &f, 1, "z");
	ir_graph_add_output(g, y, NULL);
	ir_graph_add_output(g, z, NULL);
	return g;
}

TEST(column_blocks_read_in_place)
{
	struct ipu_graph_stats on = { 0 }, off = { 0 };
	struct ir_graph *g = expand_chain_graph();
	char rep[2048];

	CHECK_MSG(check(g, 0, 1472, 638976, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	/* the counts compare the blocks with the copy, the Clips lowered
	 * apart (fused into the convs, they make no vertices of their own,
	 * which is what the blocks saved here) */
	setenv("IPU_LOWER_FUSE_ACT", "0", 1);
	g = expand_chain_graph();
	CHECK_MSG(lower_stats(g, 1472, 638976, &on, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	setenv("IPU_LOWER_BLOCKED", "0", 1);
	g = expand_chain_graph();
	CHECK_MSG(check(g, 0, 1472, 638976, rep, sizeof(rep)) == 0, "copied: %s", rep);
	ir_graph_free(g);
	g = expand_chain_graph();
	CHECK_MSG(lower_stats(g, 1472, 638976, &off, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	unsetenv("IPU_LOWER_BLOCKED");
	unsetenv("IPU_LOWER_FUSE_ACT");
	printf("# blocks read in place: %u vertices, %u copies, %llu bytes exchanged; copied into the output first: %u vertices, %u copies, %llu bytes\n",
	       on.vertices, on.copies, (unsigned long long)on.exchange_bytes, off.vertices, off.copies,
	       (unsigned long long)off.exchange_bytes);
	/* the expansion's 1.2 MB output is no longer copied once more */
	CHECK_MSG(on.exchange_bytes + 1000000 < off.exchange_bytes, "%llu vs %llu bytes",
		  (unsigned long long)on.exchange_bytes, (unsigned long long)off.exchange_bytes);
	CHECK_MSG(on.vertices < off.vertices, "%u vs %u vertices", on.vertices, off.vertices);
}

/* Two 96 -> 96 channel 1x1 convs over 112 x 112 with a Relu between:
 * both are products in column blocks of the same width, so each block of
 * the second is computed where the block of the first it reads is, and
 * reads it in place (the Relu runs on the blocks too): only the input is
 * exchanged, into the first product's blocks. */
static struct ir_graph *one_by_one_pair_graph(void)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 96, 112, 112 }, dw1[] = { 96, 96, 1, 1 }, dw2[] = { 96, 96, 1, 1 };
	int in[2], a, r, y;

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w1", 4, dw1, 91);
	a = node(g, "Conv", in, 2, "a");
	r = node(g, "Relu", &a, 1, "r");
	in[0] = r;
	in[1] = cconst(g, "w2", 4, dw2, 92);
	y = node(g, "Conv", in, 2, "y");
	ir_graph_add_output(g, y, NULL);
	return g;
}

TEST(column_blocks_feed_the_next_product_in_place)
{
	struct ipu_graph_stats st = { 0 };
	struct ir_graph *g = one_by_one_pair_graph();
	char rep[2048];

	CHECK_MSG(check(g, 0, 1472, 638976, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	g = one_by_one_pair_graph();
	CHECK_MSG(lower_stats(g, 1472, 638976, &st, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	printf("# two 1x1 convs: %u vertices, %u copies, %llu bytes exchanged\n", st.vertices, st.copies,
	       (unsigned long long)st.exchange_bytes);
	/* the input's bytes into the first product's blocks, nothing more */
	CHECK_MSG(st.exchange_bytes <= 96 * 112 * 112 * 4, "%llu bytes exchanged",
		  (unsigned long long)st.exchange_bytes);
}

/* ResNet-50's first bottleneck end: two 64 -> 256 channel 1x1 convs of
 * one 56 x 56 input (the block's last conv and the shortcut's), added
 * and Relu'd (or, for comparison, both outputs of the graph).  Both
 * products are made in the same column blocks, the second one's blocks
 * beside the first one's, so the Add reads both in place: no more is
 * exchanged than for the two products alone (before, the Add copied
 * one of the 3.2 MB outputs). */
static struct ir_graph *residual_pair_graph(int add)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 64, 56, 56 }, dw[] = { 256, 64, 1, 1 }, db[] = { 256 };
	int x, in[3], a, b, s, y;

	x = input(g, "x", IR_F32, 4, dx);
	in[0] = x;
	in[1] = cconst(g, "w1", 4, dw, 95);
	in[2] = cconst(g, "b1", 1, db, 96);
	a = node(g, "Conv", in, 3, "a");
	in[1] = cconst(g, "w2", 4, dw, 97);
	in[2] = cconst(g, "b2", 1, db, 98);
	b = node(g, "Conv", in, 3, "b");
	if (!add) {
		ir_graph_add_output(g, a, NULL);
		ir_graph_add_output(g, b, NULL);
		return g;
	}
	in[0] = a;
	in[1] = b;
	s = node(g, "Add", in, 2, "s");
	y = node(g, "Relu", &s, 1, "y");
	ir_graph_add_output(g, y, NULL);
	return g;
}

TEST(residual_add_of_column_blocks_in_place)
{
	struct ipu_graph_stats st = { 0 }, alone = { 0 };
	struct ir_graph *g = residual_pair_graph(1);
	char rep[2048];

	CHECK_MSG(check(g, 0, 1472, 638976, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	g = residual_pair_graph(1);
	CHECK_MSG(lower_stats(g, 1472, 638976, &st, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	g = residual_pair_graph(0);
	CHECK_MSG(lower_stats(g, 1472, 638976, &alone, rep, sizeof(rep)) == 0, "%s", rep);
	ir_graph_free(g);
	printf("# two 1x1 convs added: %u vertices, %u copies, %llu bytes exchanged (the convs alone: %llu)\n",
	       st.vertices, st.copies, (unsigned long long)st.exchange_bytes,
	       (unsigned long long)alone.exchange_bytes);
	CHECK_MSG(st.exchange_bytes <= alone.exchange_bytes, "%llu bytes exchanged, %llu without the Add",
		  (unsigned long long)st.exchange_bytes, (unsigned long long)alone.exchange_bytes);
}

/* One output row of one input channel of this convolution (3 input rows
 * of 4096) is more than a tile gives an op, and columns are not split. */
TEST(too_big_names_the_op)
{
	char rep[2048];
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 1, 2, 4, 4096 }, dw[] = { 4, 2, 3, 3 };
	int in[2], y;

	in[0] = input(g, "x", IR_F32, 4, dx);
	in[1] = cconst(g, "w", 4, dw, 1);
	y = node(g, "Conv", in, 2, "big_conv");
	ir_graph_add_output(g, y, NULL);
	CHECK(check(g, 0, 64, 64 * 1024, rep, sizeof(rep)) < 0);
	CHECK_MSG(strstr(rep, "node 'big_conv' (Conv") && strstr(rep, "bytes"), "%s", rep);
	printf("# %s", rep);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(matmul_split_k_with_partial_sums);
	RUN(matmul_split_k_sums_whole_rows_in_place);
	RUN(matmul_split_mn_runtime_b);
	RUN(matmul_in_row_chunks);
	RUN(matmul_shared_weight_is_one_product);
	RUN(weights_filling_most_of_the_device_kept_once);
	RUN(elementwise_broadcast_spread);
	RUN(rows_split_softmax_layernorm);
	RUN(conv_pool_gemm);
	RUN(conv_row_split);
	RUN(conv_input_channel_parts);
	RUN(embedding_columns);
	RUN(transpose_split);
	RUN(pad_split);
	RUN(fusion_switch);
	RUN(activation_fused_into_producer);
	RUN(too_big_names_the_op);
	RUN(layout_folds_ignore_the_size_limit);
	RUN(grouped_conv_split_by_groups);
	RUN(transpose_gathers_runs);
	RUN(rows_larger_than_a_tile);
	RUN(conv_skips_unread_rows);
	RUN(pool_rows_of_large_images);
	RUN(gather_one_index_of_runtime_data);
	RUN(fp16_bias_joins_the_sum);
	RUN(depthwise_conv_grain);
	RUN(late_conv_copies_parts_of_the_image);
	RUN(elementwise_follows_pieces_within_rows);
	RUN(fp32_bias_joins_the_sum);
	RUN(depthwise_row_blocks_in_place);
	RUN(matmul_column_blocks_of_whole_register_tiles);
	RUN(column_blocks_read_in_place);
	RUN(column_blocks_feed_the_next_product_in_place);
	RUN(residual_add_of_column_blocks_in_place);
	return TH_DONE();
}
