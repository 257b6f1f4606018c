/* SPDX-License-Identifier: MIT */
/*
 * test_argmax_split.c - an ArgMax/ArgMin whose row is longer than a tile
 * can reduce (a language model's vocabulary) is split into per-chunk
 * partials and a reduction of the partials: on the in-process device
 * against the reference evaluator (ipu-compile --check), float32 and
 * float16, with ties across chunks (first index, as ONNX), the extreme in
 * the padded last chunk, keepdims and a trailing unit axis.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/check.h"
#include "harness.h"
#include "ipu/passes.h"

#define L 3001	/* not a multiple of any chunk: the last one is padded */

static int input(struct ir_graph *g, const char *name, int rank, const int64_t *d)
{
	int v = ir_value_add(g, name, NULL);

	ir_value_set_shape(&g->vals[v], IR_F32, rank, d);
	ir_graph_add_input(g, v, NULL);
	return v;
}

static int node(struct ir_graph *g, const char *op, const int *in, int nin, const char *out)
{
	int o = ir_value_add(g, out, NULL);

	ir_node_add(g, out, op, in, nin, &o, 1, NULL);
	return o;
}

static int fconst(struct ir_graph *g, const char *name, int rank, const int64_t *d,
		  double (*f)(int64_t i))
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);
	int64_t n = ir_numel(rank, d);

	ir_tensor_alloc(&t, IR_F32, rank, d, NULL);
	for (int64_t i = 0; i < n; i++)
		ir_set_f(t.data, IR_F32, (size_t)i, f(i));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

/* Row 0 unchanged (the extreme many times, in the first chunk), row 1
 * pushed down then up before 700 (ties in later chunks only), row 2 only
 * its last 3 elements left (in the padded chunk), row 3 all infinite (ties
 * with the padding: index 0). */
static double shift(int64_t i)
{
	int64_t row = i / L, col = i % L;

	if (row == 3)
		return -INFINITY;
	if (row == 1)
		return col < 700 ? -10 : 0;
	if (row == 2)
		return col < L - 3 ? -10 : 0;
	return 0;
}

static double two(int64_t i)
{
	(void)i;
	return 2;
}

/* y = op(Floor(2x) + shift) over the long axis: small integers, so the
 * extreme is tied many times */
static struct ir_graph *model(const char *op, int keepdims, int trailing)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t d[3] = { 4, L, 1 };
	int in[2], m, f, s, y;

	in[0] = input(g, "x", trailing ? 3 : 2, d);
	in[1] = fconst(g, "two", 1, (int64_t[]){ 1 }, two);
	m = node(g, "Mul", in, 2, "m");
	f = node(g, "Floor", &m, 1, "f");
	in[0] = f;
	in[1] = fconst(g, "shift", trailing ? 3 : 2, d, shift);
	s = node(g, "Add", in, 2, "s");
	y = node(g, op, &s, 1, "y");
	ir_attr_set_int(&g->nodes[g->nnodes - 1], "axis", 1, NULL);
	ir_attr_set_int(&g->nodes[g->nnodes - 1], "keepdims", keepdims, NULL);
	ir_graph_add_output(g, y, NULL);
	return g;
}

/* 1 if the lowering's graph still has a long-row op of that name */
static int has_whole_row(const struct ir_graph *g, const char *op)
{
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, op) &&
		    g->vals[g->nodes[i].in[0]].dims[1] == L)
			return 1;
	return 0;
}

static int check(struct ir_graph *g, int fp16, uint32_t mem, char *report, size_t len,
		 int *split)
{
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { .precision_fp16 = fp16 };
	struct ipu_target t = { "ipu2", 64, mem };
	FILE *f = fmemopen(report, len - 1, "w");
	struct ir_graph *p;
	int r;

	memset(report, 0, len);
	if (ir_pipeline_run(g, &po, &e)) {
		fclose(f);
		snprintf(report, len, "pipeline: %s", e.msg);
		return -1;
	}
	p = ipu_lower_prepared_graph(g, &t, &e);
	*split = p && !has_whole_row(p, "ArgMax") && !has_whole_row(p, "ArgMin");
	ir_graph_free(p);
	r = ipuc_check(&g, 1, &t, f, &e);
	if (r < 0)
		fprintf(f, "error: %s\n", e.msg);
	fclose(f);
	return r;
}

/* tiles of 32 KiB (chunks of 512, 6 of them) and 64 KiB (1024, 3) */
TEST(argmax_split_matches_the_evaluator)
{
	static const uint32_t mems[] = { 32 * 1024, 64 * 1024 };
	char rep[2048];

	for (int fp16 = 0; fp16 < 2; fp16++)
		for (int m = 0; m < 2; m++)
			for (int keep = 0; keep < 2; keep++) {
				struct ir_graph *g = model("ArgMax", keep, 0);
				int split = 0;

				CHECK_MSG(check(g, fp16, mems[m], rep, sizeof(rep), &split) == 0,
					  "fp16 %d, %u bytes, keepdims %d: %s", fp16, mems[m], keep, rep);
				CHECK_MSG(split, "the ArgMax row was not split");
				ir_graph_free(g);
			}
}

TEST(argmin_split_trailing_unit_axis)
{
	char rep[2048];

	for (int fp16 = 0; fp16 < 2; fp16++) {
		struct ir_graph *g = model("ArgMin", 1, 1);
		int split = 0;

		CHECK_MSG(check(g, fp16, 32 * 1024, rep, sizeof(rep), &split) == 0, "fp16 %d: %s", fp16, rep);
		CHECK_MSG(split, "the ArgMin row was not split");
		ir_graph_free(g);
	}
}

/* a row that fits a tile is left whole */
TEST(short_rows_are_not_split)
{
	char rep[2048];
	struct ir_graph *g = model("ArgMax", 0, 0);
	int split = 1;

	CHECK_MSG(check(g, 0, 256 * 1024, rep, sizeof(rep), &split) == 0, "%s", rep);
	CHECK_MSG(!split, "a row of %d elements was split on tiles of 256 KiB", L);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(argmax_split_matches_the_evaluator);
	RUN(argmin_split_trailing_unit_axis);
	RUN(short_rows_are_not_split);
	return TH_DONE();
}
