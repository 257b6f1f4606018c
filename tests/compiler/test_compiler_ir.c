/* SPDX-License-Identifier: MIT */
/* test_compiler_ir.c - IR, shape inference errors, passes, fp16. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "harness.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"
#include "ir/opgeom.h"
#include "ops/registry.h"

static int input(struct ir_graph *g, const char *name, int dt, int rank, const int64_t *d)
{
	int v = ir_value_add(g, name, NULL);

	ir_value_set_shape(&g->vals[v], dt, rank, d);
	ir_graph_add_input(g, v, NULL);
	return v;
}

static int cf32(struct ir_graph *g, const char *name, int rank, const int64_t *d, const float *vals)
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);

	ir_tensor_alloc(&t, IR_F32, rank, d, NULL);
	memcpy(t.data, vals, ir_tensor_bytes(&t));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int ci64(struct ir_graph *g, const char *name, int n, const int64_t *vals)
{
	struct ir_tensor t;
	int64_t d = n;
	int v = ir_value_add(g, name, NULL);

	ir_tensor_alloc(&t, IR_I64, 1, &d, NULL);
	memcpy(t.data, vals, (size_t)n * 8);
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int node(struct ir_graph *g, const char *op, const int *in, int nin, const char *out)
{
	int o = ir_value_add(g, out, NULL);

	ir_node_add(g, out, op, in, nin, &o, 1, NULL);
	return o;
}

static void fill(struct ir_tensor *t, unsigned seed)
{
	int64_t n = ir_numel(t->rank, t->dims);

	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		ir_set_f(t->data, t->dtype, (size_t)i, ((seed >> 8) % 2001) / 1000.0 - 1.0);
	}
}

/* Runs g (inputs random) before and after a transformation and compares. */
static double max_diff(const struct ir_tensor *a, const struct ir_tensor *b)
{
	double m = 0;
	int64_t n = ir_numel(a->rank, a->dims);

	if (n != ir_numel(b->rank, b->dims))
		return INFINITY;
	for (int64_t i = 0; i < n; i++) {
		double d = fabs(ir_get_f(a->data, a->dtype, (size_t)i) - ir_get_f(b->data, b->dtype, (size_t)i));

		m = d > m ? d : m;
	}
	return m;
}

TEST(broadcast)
{
	int64_t a[] = { 3, 1, 5 }, b[] = { 4, 1 }, o[IR_MAX_RANK], offs[60];
	int r;

	REQUIRE(ir_broadcast(3, a, 2, b, &r, o) == 0);
	CHECK_EQ_INT(r, 3);
	CHECK_EQ_INT(o[0], 3);
	CHECK_EQ_INT(o[1], 4);
	CHECK_EQ_INT(o[2], 5);
	ir_broadcast_offsets(3, o, 2, b, offs);
	CHECK_EQ_INT(offs[0], 0);
	CHECK_EQ_INT(offs[5], 1);
	CHECK_EQ_INT(offs[19], 3);
	CHECK_EQ_INT(offs[20], 0);
	{
		int64_t c[] = { 2 }, d[] = { 3 };

		CHECK(ir_broadcast(1, c, 1, d, &r, o) == -1);
	}
}

/*
 * An opset-6 model: Add(A[2,3,4], B[3]) with broadcast = 1, axis = 1 lines B
 * up with A's axis 1 (numpy broadcasting would refuse it), Reshape takes
 * its shape as an attribute (opset < 5) and Cast a type name (opset < 6).
 */
TEST(legacy_opsets_converted)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t da[] = { 2, 3, 4 }, db[] = { 3 }, shape[] = { 6, 4 };
	float bv[] = { 10, 20, 30 };
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { 0 };
	struct ir_tensor in, out;
	int x[2], y, r, c, ok;

	g->opset = 6;
	x[0] = input(g, "a", IR_F32, 3, da);
	x[1] = cf32(g, "b", 1, db, bv);
	y = node(g, "Add", x, 2, "y");
	ir_attr_set_int(&g->nodes[0], "broadcast", 1, NULL);
	ir_attr_set_int(&g->nodes[0], "axis", 1, NULL);
	ir_attr_set_ints(&g->nodes[0], "consumed_inputs", (int64_t[]){ 0, 0 }, 2, NULL);
	r = node(g, "Reshape", &y, 1, "r");
	ir_attr_set_ints(&g->nodes[1], "shape", shape, 2, NULL);
	c = node(g, "Cast", &r, 1, "c");
	ir_attr_set_str(&g->nodes[2], "to", "DOUBLE", NULL);
	ir_graph_add_output(g, c, NULL);
	ok = ir_pipeline_run(g, &po, &e) == 0;
	CHECK_MSG(ok, "%s", e.msg);
	REQUIRE(ok);
	ir_tensor_alloc(&in, IR_F32, 3, da, NULL);
	fill(&in, 7);
	ok = ir_eval_graph(g, &in, &out, &e) == 0;
	CHECK_MSG(ok, "%s", e.msg);
	REQUIRE(ok);
	/* DOUBLE, computed in float32 (the wide-types pass) */
	CHECK_EQ_INT(out.dtype, IR_F32);
	CHECK_EQ_INT(out.rank, 2);
	CHECK_EQ_INT(out.dims[0], 6);
	for (int64_t i = 0; i < 24; i++)
		CHECK_MSG(ir_get_f(out.data, IR_F32, (size_t)i) ==
			  (double)(float)(ir_get_f(in.data, IR_F32, (size_t)i) + bv[(i / 4) % 3]),
			  "element %lld", (long long)i);
	ir_tensor_free(&in);
	ir_tensor_free(&out);
	ir_graph_free(g);

	/* the same axis in an opset-7 model is not an opset-7 attribute:
	 * numpy broadcasting of [2,3,4] with [3] is refused */
	g = ir_graph_new(NULL);
	g->opset = 7;
	x[0] = input(g, "a", IR_F32, 3, da);
	x[1] = cf32(g, "b", 1, db, bv);
	y = node(g, "Add", x, 2, "y");
	ir_attr_set_int(&g->nodes[0], "legacy_axis", 1, NULL);
	ir_graph_add_output(g, y, NULL);
	CHECK(ir_pipeline_run(g, &po, &e) == -1);
	ir_graph_free(g);
}

/* float64 and int16 have no device arithmetic: the pipeline computes them
 * in float32 and int32, anchors included; Cast targets and constants
 * follow. */
TEST(wide_types_converted)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t d[] = { 4 };
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { 0 };
	struct ir_tensor in, out, c;
	int x[2], y, z, ok;

	x[0] = input(g, "x", IR_F64, 1, d);
	ir_tensor_alloc(&c, IR_F64, 1, d, NULL);
	for (int i = 0; i < 4; i++)
		ir_set_f(c.data, IR_F64, (size_t)i, 1.5 * i);
	x[1] = ir_value_add(g, "c", NULL);
	ir_value_set_const(&g->vals[x[1]], &c);
	y = node(g, "Mul", x, 2, "y");
	z = node(g, "Cast", &y, 1, "z");
	ir_attr_set_int(&g->nodes[1], "to", IR_I16, NULL);
	ir_graph_add_output(g, z, NULL);
	ir_graph_add_output(g, y, NULL);
	ok = ir_pipeline_run(g, &po, &e) == 0;
	CHECK_MSG(ok, "%s", e.msg);
	REQUIRE(ok);
	CHECK_EQ_INT(g->vals[g->inputs[0]].dtype, IR_F32);
	CHECK_EQ_INT(g->vals[g->outputs[0]].dtype, IR_I32);
	CHECK_EQ_INT(g->vals[g->outputs[1]].dtype, IR_F32);
	ir_tensor_alloc(&in, IR_F32, 1, d, NULL);
	for (int i = 0; i < 4; i++)
		ir_set_f(in.data, IR_F32, (size_t)i, 2.0 + i);
	{
		struct ir_tensor outs[2];

		ok = ir_eval_graph(g, &in, outs, &e) == 0;
		CHECK_MSG(ok, "%s", e.msg);
		REQUIRE(ok);
		for (int i = 0; i < 4; i++) {
			CHECK_EQ_INT(ir_get_i(outs[0].data, outs[0].dtype, (size_t)i), (int)((2.0 + i) * 1.5 * i));
			CHECK(ir_get_f(outs[1].data, outs[1].dtype, (size_t)i) == (2.0 + i) * 1.5 * i);
		}
		out = outs[0];
		ir_tensor_free(&outs[1]);
	}
	ir_tensor_free(&in);
	ir_tensor_free(&out);
	ir_graph_free(g);
}

TEST(slice_resolve)
{
	int64_t dims[] = { 10 }, st[] = { -3 }, en[] = { INT64_MAX }, start[1], step[1], cnt[1];
	int64_t st2[] = { 8 }, en2[] = { INT64_MIN }, sp2[] = { -3 };

	REQUIRE(ir_slice_resolve(1, dims, st, en, NULL, NULL, 1, start, step, cnt, NULL) == 0);
	CHECK_EQ_INT(start[0], 7);
	CHECK_EQ_INT(cnt[0], 3);
	REQUIRE(ir_slice_resolve(1, dims, st2, en2, NULL, sp2, 1, start, step, cnt, NULL) == 0);
	CHECK_EQ_INT(start[0], 8);
	CHECK_EQ_INT(cnt[0], 3); /* 8, 5, 2 */
}

TEST(shape_binding_parse)
{
	struct ir_shape_binding b;
	struct ir_error e;

	REQUIRE(ir_parse_shape_binding("input.1=8,3,224,224", &b, &e) == 0);
	CHECK(!strcmp(b.name, "input.1"));
	CHECK_EQ_INT(b.rank, 4);
	CHECK_EQ_INT(b.dims[3], 224);
	free(b.name);
	CHECK(ir_parse_shape_binding("X=1,a", &b, &e) == -1);
	CHECK(strstr(e.msg, "X=1,a") != NULL);
	CHECK(ir_parse_shape_binding("=1", &b, &e) == -1);
}

/* Unsupported ops and bad shapes name the node (name, op, index). */
TEST(errors_name_the_node)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_error e;
	int64_t d[] = { 2, 3 };
	struct ir_infer_opts o = { 0 };
	int x = input(g, "x", IR_F32, 2, d);

	node(g, "Relu", &x, 1, "r");
	node(g, "NonMaxSuppression", &x, 1, "nms");
	REQUIRE(ir_infer(g, &o, &e) == -1);
	CHECK(strstr(e.msg, "node 'nms'") != NULL);
	CHECK(strstr(e.msg, "NonMaxSuppression") != NULL);
	CHECK(strstr(e.msg, "#1") != NULL);
	ir_graph_free(g);

	g = ir_graph_new(NULL);
	x = input(g, "x", IR_F32, 2, d);
	{
		int64_t d2[] = { 4, 5 };
		int y = input(g, "y", IR_F32, 2, d2), mm[2] = { x, y };

		node(g, "MatMul", mm, 2, "mm");
	}
	REQUIRE(ir_infer(g, &o, &e) == -1);
	CHECK(strstr(e.msg, "node 'mm' (MatMul, #0): inner dimensions differ") != NULL);
	ir_graph_free(g);
}

TEST(dynamic_input_needs_shape)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_error e;
	int64_t d[] = { -1, 3 };
	struct ir_infer_opts o = { 0 };
	int x = input(g, "x", IR_F32, 2, d);

	g->vals[x].dim_param[0] = strdup("N");
	node(g, "Relu", &x, 1, "r");
	ir_graph_add_output(g, ir_value_find(g, "r"), NULL);
	REQUIRE(ir_infer(g, &o, &e) == -1);
	CHECK(strstr(e.msg, "--input-shape x=") != NULL);
	o.batch_size = 8;
	REQUIRE(ir_infer(g, &o, &e) == 0);
	CHECK_EQ_INT(g->vals[ir_value_find(g, "r")].dims[0], 8);
	ir_graph_free(g);
}

/* Shape -> Gather -> Reshape chains fold at inference time. */
TEST(fold_shape_chain)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_error e;
	int64_t d[] = { 2, 3, 4 }, idx0 = 0, m1 = -1;
	struct ir_infer_opts o = { .fold = 1 };
	int x = input(g, "x", IR_F32, 3, d), s, gi[2], cat[2], rs[2], y;

	s = node(g, "Shape", &x, 1, "s");
	gi[0] = s;
	gi[1] = ci64(g, "i0", 1, &idx0);
	cat[0] = node(g, "Gather", gi, 2, "n");
	cat[1] = ci64(g, "m1", 1, &m1);
	rs[1] = node(g, "Concat", cat, 2, "shape");
	ir_attr_set_int(&g->nodes[g->nnodes - 1], "axis", 0, NULL);
	rs[0] = x;
	y = node(g, "Reshape", rs, 2, "y");
	ir_graph_add_output(g, y, NULL);
	REQUIRE(ir_infer(g, &o, &e) == 0);
	CHECK_EQ_INT(g->vals[y].rank, 2);
	CHECK_EQ_INT(g->vals[y].dims[1], 12);
	REQUIRE(ir_pass_dce(g, &e) >= 0);
	CHECK_EQ_INT(g->nnodes, 1); /* only the Reshape is left */
	ir_graph_free(g);
}

static struct ir_graph *mlp(void)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 4, 3 }, dw[] = { 3, 2 }, db[] = { 2 };
	float w[6] = { 0.5f, -1, 2, 0.25f, -0.5f, 1 }, b[2] = { 0.1f, -0.2f };
	int x = input(g, "x", IR_F32, 2, dx), mm[2], ad[2], y, id;

	mm[0] = x;
	mm[1] = cf32(g, "w", 2, dw, w);
	ad[0] = node(g, "MatMul", mm, 2, "mm");
	ad[1] = cf32(g, "b", 1, db, b);
	y = node(g, "Add", ad, 2, "add");
	id = node(g, "Identity", &y, 1, "id");
	y = node(g, "Relu", &id, 1, "y");
	ir_graph_add_output(g, y, NULL);
	return g;
}

TEST(matmul_add_to_gemm)
{
	struct ir_graph *g = mlp(), *ref;
	struct ir_error e;
	struct ir_pipeline_opts po = { 0 };
	struct ir_tensor in, a, b;
	int64_t dx[] = { 4, 3 };

	REQUIRE(g);
	ref = ir_graph_clone(g, &e);
	REQUIRE(ref);
	REQUIRE(ir_infer(ref, &po.infer, &e) == 0);
	REQUIRE(ir_pipeline_run(g, &po, &e) == 0);
	CHECK_EQ_INT(g->nnodes, 2);
	CHECK(!strcmp(g->nodes[0].op, "Gemm"));
	CHECK(!strcmp(g->nodes[1].op, "Relu"));
	ir_tensor_alloc(&in, IR_F32, 2, dx, NULL);
	fill(&in, 7);
	REQUIRE(ir_eval_graph(ref, &in, &a, &e) == 0);
	REQUIRE(ir_eval_graph(g, &in, &b, &e) == 0);
	CHECK(max_diff(&a, &b) < 1e-6);
	ir_tensor_free(&in);
	ir_tensor_free(&a);
	ir_tensor_free(&b);
	ir_graph_free(g);
	ir_graph_free(ref);
}

TEST(conv_bn_folding)
{
	struct ir_graph *g = ir_graph_new(NULL), *ref;
	struct ir_error e;
	int64_t dx[] = { 1, 2, 5, 5 }, dw[] = { 3, 2, 3, 3 }, dc[] = { 3 };
	float w[54], sc[3] = { 1.5f, 0.5f, -1 }, bb[3] = { 0.1f, 0.2f, 0.3f };
	float mean[3] = { 0.3f, -0.1f, 0 }, var[3] = { 1, 2, 0.5f };
	struct ir_pipeline_opts po = { 0 };
	struct ir_tensor in, a, b;
	int x, cv[2], bn[5], y;

	for (int i = 0; i < 54; i++)
		w[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
	x = input(g, "x", IR_F32, 4, dx);
	cv[0] = x;
	cv[1] = cf32(g, "w", 4, dw, w);
	bn[0] = node(g, "Conv", cv, 2, "conv");
	ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
	bn[1] = cf32(g, "scale", 1, dc, sc);
	bn[2] = cf32(g, "bias", 1, dc, bb);
	bn[3] = cf32(g, "mean", 1, dc, mean);
	bn[4] = cf32(g, "var", 1, dc, var);
	y = node(g, "BatchNormalization", bn, 5, "y");
	ir_graph_add_output(g, y, NULL);
	ref = ir_graph_clone(g, &e);
	REQUIRE(ref && ir_infer(ref, &po.infer, &e) == 0);
	REQUIRE(ir_pipeline_run(g, &po, &e) == 0);
	CHECK_EQ_INT(g->nnodes, 1);
	CHECK(!strcmp(g->nodes[0].op, "Conv"));
	CHECK_EQ_INT(g->nodes[0].nin, 3);
	ir_tensor_alloc(&in, IR_F32, 4, dx, NULL);
	fill(&in, 3);
	REQUIRE(ir_eval_graph(ref, &in, &a, &e) == 0);
	REQUIRE(ir_eval_graph(g, &in, &b, &e) == 0);
	CHECK_MSG(max_diff(&a, &b) < 1e-5, "diff %g", max_diff(&a, &b));
	ir_tensor_free(&in);
	ir_tensor_free(&a);
	ir_tensor_free(&b);
	ir_graph_free(g);
	ir_graph_free(ref);
}

TEST(fp16_conversion_and_skip)
{
	struct ir_graph *g = mlp(), *ref;
	struct ir_error e;
	struct ir_pipeline_opts po = { 0 };
	const char *skip[] = { "Relu" };
	struct ir_tensor in, in16, a, b;
	int64_t dx[] = { 4, 3 };
	int casts = 0;

	ref = ir_graph_clone(g, &e);
	REQUIRE(ref && ir_infer(ref, &po.infer, &e) == 0);
	po.precision_fp16 = 1;
	po.fp16.skip_ops = skip;
	po.fp16.nskip = 1;
	REQUIRE(ir_pipeline_run(g, &po, &e) == 0);
	CHECK_EQ_INT(g->vals[g->inputs[0]].dtype, IR_F16);
	CHECK_EQ_INT(g->vals[g->outputs[0]].dtype, IR_F16);
	for (int i = 0; i < g->nnodes; i++) {
		casts += !strcmp(g->nodes[i].op, "Cast");
		if (!strcmp(g->nodes[i].op, "Relu"))
			CHECK_EQ_INT(g->vals[g->nodes[i].in[0]].dtype, IR_F32);
		if (!strcmp(g->nodes[i].op, "Gemm"))
			CHECK_EQ_INT(g->vals[g->nodes[i].in[1]].dtype, IR_F16);
	}
	CHECK_EQ_INT(casts, 2);
	ir_tensor_alloc(&in, IR_F32, 2, dx, NULL);
	ir_tensor_alloc(&in16, IR_F16, 2, dx, NULL);
	fill(&in, 11);
	for (int i = 0; i < 12; i++)
		ir_set_f(in16.data, IR_F16, (size_t)i, ir_get_f(in.data, IR_F32, (size_t)i));
	REQUIRE(ir_eval_graph(ref, &in, &a, &e) == 0);
	REQUIRE(ir_eval_graph(g, &in16, &b, &e) == 0);
	CHECK_MSG(max_diff(&a, &b) < 1e-2, "diff %g", max_diff(&a, &b));
	ir_tensor_free(&in);
	ir_tensor_free(&in16);
	ir_tensor_free(&a);
	ir_tensor_free(&b);
	ir_graph_free(g);
	ir_graph_free(ref);
}

TEST(fp16_marks_sensitive_ops)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_error e;
	struct ir_pipeline_opts po = { .precision_fp16 = 1 };
	int64_t d[] = { 2, 5 };
	int x = input(g, "x", IR_F32, 2, d), y;

	y = node(g, "Softmax", &x, 1, "y");
	ir_graph_add_output(g, y, NULL);
	REQUIRE(ir_pipeline_run(g, &po, &e) == 0);
	CHECK_EQ_INT(ir_attr_int(&g->nodes[0], "accumulate_f32", 0), 1);
	ir_graph_free(g);
}

TEST(int64_gather_indices)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_error e;
	struct ir_pipeline_opts po = { 0 };
	int64_t d[] = { 5, 3 }, idx[] = { 4, 0, 2 };
	int x = input(g, "emb", IR_F32, 2, d), gi[2], y;

	gi[0] = x;
	gi[1] = ci64(g, "ids", 3, idx);
	y = node(g, "Gather", gi, 2, "y");
	ir_graph_add_output(g, y, NULL);
	REQUIRE(ir_pipeline_run(g, &po, &e) == 0);
	CHECK_EQ_INT(g->vals[g->nodes[0].in[1]].dtype, IR_I32);
	ir_graph_free(g);
}

TEST(identity_to_output_keeps_name)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_error e;
	struct ir_pipeline_opts po = { 0 };
	int64_t d[] = { 3 };
	int x = input(g, "x", IR_F32, 1, d), r, y;

	r = node(g, "Relu", &x, 1, "r");
	y = node(g, "Identity", &r, 1, "out");
	ir_graph_add_output(g, y, NULL);
	REQUIRE(ir_pipeline_run(g, &po, &e) == 0);
	CHECK_EQ_INT(g->nnodes, 1);
	CHECK(!strcmp(g->vals[g->outputs[0]].name, "out"));
	CHECK(g->nodes[0].out[0] == g->outputs[0]);
	ir_graph_free(g);
}

/* Export then import gives the same graph and the same results. */
TEST(export_roundtrip)
{
	struct ir_graph *g = mlp(), *h;
	struct ir_error e;
	struct ir_pipeline_opts po = { 0 };
	char path[] = "/tmp/ipuc-rtXXXXXX";
	int fd = mkstemp(path);
	struct ir_tensor in, a, b;
	int64_t dx[] = { 4, 3 };

	REQUIRE(fd >= 0);
	REQUIRE(ir_pipeline_run(g, &po, &e) == 0);
	REQUIRE(onnx_save_file(g, path, &e) == 0);
	h = onnx_load_file(path, &e);
	remove(path);
	REQUIRE(h);
	REQUIRE(ir_pipeline_run(h, &po, &e) == 0);
	CHECK_EQ_INT(h->nnodes, g->nnodes);
	ir_tensor_alloc(&in, IR_F32, 2, dx, NULL);
	fill(&in, 5);
	REQUIRE(ir_eval_graph(g, &in, &a, &e) == 0);
	REQUIRE(ir_eval_graph(h, &in, &b, &e) == 0);
	CHECK(max_diff(&a, &b) == 0);
	ir_tensor_free(&in);
	ir_tensor_free(&a);
	ir_tensor_free(&b);
	ir_graph_free(g);
	ir_graph_free(h);
}

/* x -> Relu -> a -> Sigmoid -> b (graph output), shapes inferred; the
 * verifier accepts it as built. */
static struct ir_graph *verify_graph(void)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t d[] = { 2, 3 };
	struct ir_infer_opts o = { 0 };
	struct ir_error e;
	int x, a, b;

	if (!g)
		return NULL;
	x = input(g, "x", IR_F32, 2, d);
	a = node(g, "Relu", &x, 1, "a");
	b = node(g, "Sigmoid", &a, 1, "b");
	ir_graph_add_output(g, b, NULL);
	if (ir_verify(g, 0, &e) || ir_infer(g, &o, &e) || ir_verify(g, IR_VERIFY_TYPED, &e)) {
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

/* Each invariant broken once, on a fresh graph: caught, with a message
 * naming what is wrong. */
TEST(verify_catches_each_invariant)
{
	static const struct {
		const char *what, *msg;
		int typed_only;
	} cases[] = {
		{ "input read before it is made", "not in topological order", 0 },
		{ "input nothing makes", "neither a graph input", 0 },
		{ "input made by a dead node", "neither a graph input", 0 },
		{ "input id out of range", "outside the graph's", 0 },
		{ "output id out of range", "outside the graph's", 0 },
		{ "graph output id out of range", "outside the graph's", 0 },
		{ "graph output nothing makes", "graph output 'c'", 0 },
		{ "value made twice", "also made by", 0 },
		{ "a node writes a graph input", "graph input or a constant", 0 },
		{ "producer out of range", "names producer", 0 },
		{ "opid not the op's", "does not match op", 0 },
		{ "element type unset", "no element type", 1 },
		{ "shape unset", "no shape", 1 },
	};

	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct ir_graph *g = verify_graph();
		struct ir_node *relu, *sig;
		struct ir_error e = { { 0 } };
		int a, x, t;

		REQUIRE(g != NULL);
		relu = &g->nodes[0];
		sig = &g->nodes[1];
		a = relu->out[0];
		x = relu->in[0];
		switch (c) {
		case 0: {
			struct ir_node tmp = *relu;

			*relu = *sig;
			*sig = tmp;
			break;
		}
		case 1: sig->in[0] = ir_value_add(g, "stray", NULL); break;
		case 2: relu->dead = 1; break;
		case 3: sig->in[0] = g->nvals + 5; break;
		case 4: relu->out[0] = -7; break;
		case 5: g->outputs[0] = g->nvals; break;
		case 6:
			t = ir_value_add(g, "c", NULL);
			ir_graph_add_output(g, t, NULL);
			break;
		case 7: sig->out[0] = a; break;
		case 8: relu->out[0] = x; break;
		case 9: g->vals[a].producer = g->nnodes + 1; break;
		case 10: relu->opid = IR_OP_Abs; break;
		case 11: g->vals[a].dtype = IR_UNDEFINED; break;
		case 12: g->vals[a].rank = -1; break;
		}
		if (cases[c].typed_only)
			CHECK_MSG(ir_verify(g, 0, &e) == 0, "%s: caught without IR_VERIFY_TYPED: %s", cases[c].what,
				  e.msg);
		CHECK_MSG(ir_verify(g, IR_VERIFY_TYPED, &e) == -1, "%s: not caught", cases[c].what);
		CHECK_MSG(strstr(e.msg, cases[c].msg) != NULL, "%s: message '%s' lacks '%s'", cases[c].what, e.msg,
			  cases[c].msg);
		ir_graph_free(g);
	}
}

TEST(op_list_sorted_and_complete)
{
	const char *names[512];
	int n = ir_op_names(names, 512);

	CHECK(n > 100);
	for (int i = 1; i < n && i < 512; i++)
		CHECK(strcmp(names[i - 1], names[i]) < 0);
	for (int i = 0; i < n && i < 512; i++)
		CHECK_MSG(ir_eval_supported(names[i]), "%s has no evaluator", names[i]);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(broadcast);
	RUN(verify_catches_each_invariant);
	RUN(slice_resolve);
	RUN(shape_binding_parse);
	RUN(errors_name_the_node);
	RUN(dynamic_input_needs_shape);
	RUN(fold_shape_chain);
	RUN(matmul_add_to_gemm);
	RUN(conv_bn_folding);
	RUN(fp16_conversion_and_skip);
	RUN(fp16_marks_sensitive_ops);
	RUN(int64_gather_indices);
	RUN(identity_to_output_keeps_name);
	RUN(export_roundtrip);
	RUN(op_list_sorted_and_complete);
	RUN(legacy_opsets_converted);
	RUN(wide_types_converted);
	return TH_DONE();
}
