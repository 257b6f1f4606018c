/* SPDX-License-Identifier: MIT */
/*
 * test_compiler_fp8.c - the fp8 precisions: ir_pass_fp8 (which layers,
 * their scales, the weights rounded onto the fp8 grid, skip names and the
 * layers kept in fp16 by rank), --fp8_params parsing, and fp8_weight
 * executables on the in-process device against the reference evaluator
 * (weights already on the fp8 grid, so only fp16 activations differ), with
 * the weights stored in one byte instead of two.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "cli/options.h"
#include "harness.h"
#include "ipu/fp8.h"
#include "ipu/lower.h"
#include "ipu/passes.h"

static int input(struct ir_graph *g, const char *name, int rank, const int64_t *d)
{
	int v = ir_value_add(g, name, NULL);

	ir_value_set_shape(&g->vals[v], IR_F32, rank, d);
	ir_graph_add_input(g, v, NULL);
	return v;
}

/* Values in [-amp, amp], rounded to fp8 F143 at their absmax scale when
 * on_grid (so that the device's rounding changes nothing). */
static int cconst(struct ir_graph *g, const char *name, int rank, const int64_t *d,
		  unsigned seed, double amp, int on_grid)
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);
	int64_t n = ir_numel(rank, d);
	double m = 0;
	int s;

	ir_tensor_alloc(&t, IR_F32, rank, d, NULL);
	for (int64_t i = 0; i < n; i++) {
		double x;

		seed = seed * 1103515245u + 12345u;
		x = amp * (((seed >> 8) % 2001) / 1000.0 - 1.0);
		ir_set_f(t.data, IR_F32, (size_t)i, x);
		m = fabs(x) > m ? fabs(x) : m;
	}
	s = ipu_fp8_scale_for_absmax(m, IPU_FP8_143);
	for (int64_t i = 0; on_grid && i < n; i++)
		ir_set_f(t.data, IR_F32, (size_t)i,
			 ipu_fp8_to_f32(ipu_fp8_from_f32((float)ir_get_f(t.data, IR_F32, (size_t)i),
							 IPU_FP8_143, s), IPU_FP8_143, s));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static int node(struct ir_graph *g, const char *op, const int *in, int nin, const char *out)
{
	int o = ir_value_add(g, out, NULL);

	ir_node_add(g, out, op, in, nin, &o, 1, NULL);
	return o;
}

/* x -> Conv(w, b) -> Relu -> GlobalAveragePool -> Flatten -> Gemm(fw) ->
 * Relu -> MatMul(mw) -> y; the weights' amplitudes differ so that their
 * fp8 rounding errors rank them. */
static struct ir_graph *net(int on_grid)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { 2, 3, 10, 10 }, dw[] = { 8, 3, 3, 3 }, db[] = { 8 };
	int64_t dfw[] = { 16, 8 }, dmw[] = { 16, 5 };
	int in[3], v;

	in[0] = input(g, "x", 4, dx);
	in[1] = cconst(g, "w", 4, dw, 4, 0.5, on_grid);
	in[2] = cconst(g, "b", 1, db, 6, 0.1, 0);
	v = node(g, "Conv", in, 3, "conv");
	ir_attr_set_ints(&g->nodes[0], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, NULL);
	v = node(g, "Relu", &v, 1, "r1");
	v = node(g, "GlobalAveragePool", &v, 1, "gap");
	in[0] = node(g, "Flatten", &v, 1, "flat");
	in[1] = cconst(g, "fw", 2, dfw, 8, 1.0, on_grid);
	in[2] = cconst(g, "fb", 1, (int64_t[]){ 16 }, 9, 0.1, 0);
	v = node(g, "Gemm", in, 3, "fc");
	ir_attr_set_int(&g->nodes[g->nnodes - 1], "transB", 1, NULL);
	in[0] = node(g, "Relu", &v, 1, "r2");
	in[1] = cconst(g, "mw", 2, dmw, 10, 2.0, on_grid);
	v = node(g, "MatMul", in, 2, "y");
	ir_graph_add_output(g, v, NULL);
	return g;
}

static struct ir_fp8_opts fp8_opts(int mode)
{
	struct ir_fp8_opts o;

	memset(&o, 0, sizeof(o));
	o.mode = mode;
	o.input_format = IPU_FP8_143;
	o.weight_format = IPU_FP8_143;
	o.weight_scale_auto = 1;
	return o;
}

static int pipeline(struct ir_graph *g)
{
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { .precision_fp16 = 1 };

	return ir_pipeline_run(g, &po, &e);
}

static int count_attr(const struct ir_graph *g, const char *attr)
{
	int c = 0;

	for (int i = 0; i < g->nnodes; i++)
		c += !g->nodes[i].dead && ir_attr_find(&g->nodes[i], attr) != NULL;
	return c;
}

TEST(pass_marks_layers_and_rounds_weights)
{
	struct ir_graph *g = net(0);
	struct ir_fp8_opts o = fp8_opts(IR_FP8_WEIGHT);
	struct ir_error e = { "" };
	int conv = -1;

	REQUIRE(pipeline(g) == 0);
	/* Conv and MatMul: before the lowering's Gemm -> MatMul, two layers */
	CHECK_EQ_INT(ir_pass_fp8(g, &o, &e), 2);
	CHECK_EQ_INT(count_attr(g, "fp8_weight_scale"), 2);
	CHECK_EQ_INT(count_attr(g, "fp8_input_scale"), 0);
	for (int i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].op, "Conv"))
			conv = i;
	REQUIRE(conv >= 0);
	{
		const struct ir_node *n = &g->nodes[conv];
		const struct ir_value *w = &g->vals[n->in[1]];
		int s = (int)ir_attr_int(n, "fp8_weight_scale", 99);
		double m = 0;
		int bad = 0;

		CHECK_EQ_INT(ir_attr_int(n, "fp8_weight_input", -1), 1);
		for (int64_t i = 0; i < ir_value_numel(w); i++) {
			double x = ir_get_f(w->data, w->dtype, (size_t)i);

			m = fabs(x) > m ? fabs(x) : m;
			/* on the grid: encoding and decoding changes nothing */
			bad += ipu_fp8_to_f32(ipu_fp8_from_f32((float)x, IPU_FP8_143, s),
					      IPU_FP8_143, s) != (float)x;
		}
		CHECK_EQ_INT(bad, 0);
		/* absmax 0.5 -> the smallest s with 0.5 <= 240 * 2^s is -8 */
		CHECK_EQ_INT(s, -8);
		CHECK(m <= 240.0 * ldexp(1, s));
	}
	ir_graph_free(g);
}

TEST(pass_full_mode_skip_and_keep)
{
	struct ir_graph *g = net(0);
	struct ir_fp8_opts o = fp8_opts(IR_FP8_FULL);
	const char *skip[] = { "conv" };
	struct ir_error e = { "" };

	REQUIRE(pipeline(g) == 0);
	o.input_scale = -2;
	o.skip_names = skip;
	o.nskip = 1;
	CHECK_EQ_INT(ir_pass_fp8(g, &o, &e), 1);
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		if (!strcmp(n->op, "Conv"))
			CHECK(ir_attr_find(n, "fp8_weight_scale") == NULL);
		if (!strcmp(n->op, "MatMul")) {
			CHECK_EQ_INT(ir_attr_int(n, "fp8_input_scale", 0), -2);
			CHECK_EQ_INT(ir_attr_int(n, "fp8_input_format", -1), IPU_FP8_143);
		}
	}
	ir_graph_free(g);

	/* keep 1 in fp16: the layer with the largest weight rounding error */
	g = net(0);
	REQUIRE(pipeline(g) == 0);
	o = fp8_opts(IR_FP8_WEIGHT);
	o.keep_fp16 = 1;
	{
		double worst = -1;
		int wi = -1;

		for (int i = 0; i < g->nnodes; i++) {
			double r = ir_fp8_weight_error(NULL, g, i, &o);

			if (ir_fp8_weight_input(g, i) >= 0 && r > worst) {
				worst = r;
				wi = i;
			}
		}
		REQUIRE(wi >= 0);
		CHECK(worst > 0 && worst < 0.01);
		CHECK_EQ_INT(ir_pass_fp8(g, &o, &e), 1);
		CHECK(ir_attr_find(&g->nodes[wi], "fp8_weight_scale") == NULL);
	}
	ir_graph_free(g);
	/* names cover the nodes derived from a layer, not others */
	CHECK(ir_fp8_name_matches("fc/MatMul", "fc"));
	CHECK(ir_fp8_name_matches("fc", "fc"));
	CHECK(!ir_fp8_name_matches("fc2", "fc"));
}

/* Per layer: -4 for the Conv, none for the MatMul (it keeps input_scale). */
static int conv_scale(void *ctx, const struct ir_graph *g, int node, int *scale,
		      struct ir_error *e)
{
	int *calls = ctx;

	(void)e;
	(*calls)++;
	if (strcmp(g->nodes[node].op, "Conv"))
		return 0;
	*scale = -4;
	return 1;
}

TEST(pass_full_mode_per_layer_input_scales)
{
	struct ir_graph *g = net(0);
	struct ir_fp8_opts o = fp8_opts(IR_FP8_FULL);
	struct ir_error e = { "" };
	int calls = 0;

	REQUIRE(pipeline(g) == 0);
	o.input_scale = -2;
	o.input_scale_of = conv_scale;
	o.input_scale_ctx = &calls;
	CHECK_EQ_INT(ir_pass_fp8(g, &o, &e), 2);
	CHECK_EQ_INT(calls, 2);
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		if (!strcmp(n->op, "Conv"))
			CHECK_EQ_INT(ir_attr_int(n, "fp8_input_scale", 0), -4);
		if (!strcmp(n->op, "MatMul"))
			CHECK_EQ_INT(ir_attr_int(n, "fp8_input_scale", 0), -2);
	}
	ir_graph_free(g);
}

TEST(fp8_params_parsing)
{
	struct ipuc_options o;
	struct ir_fp8_opts f;
	struct ir_error e = { "" };

	ipuc_options_init(&o);
	CHECK(ipuc_set_fp8_params(&o, "F152,F143,-3,auto", &e) == 0);
	CHECK(ipuc_fp8_opts(&o, "fp8", &f, &e) == 0);
	CHECK(f.mode == IR_FP8_FULL && f.input_format == IPU_FP8_152 &&
	      f.weight_format == IPU_FP8_143 && f.input_scale == -3 && f.weight_scale_auto);
	CHECK(ipuc_set_fp8_params(&o, "F143,F152,0,5", &e) == 0);
	CHECK(ipuc_fp8_opts(&o, "fp8_weight", &f, &e) == 0);
	CHECK(f.mode == IR_FP8_WEIGHT && f.weight_format == IPU_FP8_152 &&
	      !f.weight_scale_auto && f.weight_scale == 5);
	CHECK(ipuc_set_fp8_params(&o, "F144", &e) != 0 && strstr(e.msg, "F143"));
	CHECK(ipuc_set_fp8_params(&o, "F143,F143,40", &e) != 0 && strstr(e.msg, "-32"));
	CHECK(ipuc_set_fp8_params(&o, "F143,F143,0,0,1", &e) != 0);
	CHECK(ipuc_fp8_opts(&o, "fp16", &f, &e) == 0 && f.mode == IR_FP8_OFF);
	CHECK(ipuc_set_precision(&o.model.precision, "fp8_weight", &e) == 0);
	CHECK(ipuc_set_precision(&o.model.precision, "fp4", &e) != 0);
	/* --fp8-auto-skip TARGET[,BUDGET] */
	CHECK(ipuc_set_fp8_auto_skip(&o, "0.05", &e) == 0 && o.fp8_auto_target == 0.05 &&
	      o.fp8_auto_budget == 0.65 && !strcmp(o.fp8_auto_skip, "0.05"));
	CHECK(ipuc_set_fp8_auto_skip(&o, "0.1,0.6", &e) == 0 && o.fp8_auto_target == 0.1 &&
	      o.fp8_auto_budget == 0.6);
	CHECK(ipuc_set_fp8_auto_skip(&o, "x", &e) != 0 && strstr(e.msg, "TARGET"));
	CHECK(ipuc_set_fp8_auto_skip(&o, "-1", &e) != 0 && strstr(e.msg, "TARGET"));
	CHECK(ipuc_set_fp8_auto_skip(&o, "0.05,2", &e) != 0 && strstr(e.msg, "BUDGET"));
	CHECK(ipuc_set_fp8_auto_skip(&o, "0.05,0.6,1", &e) != 0);
	CHECK(o.fp8_auto_target == 0.1 && o.fp8_auto_budget == 0.6);	/* kept */
	ipuc_options_free(&o);
}

TEST(fp8_yaml_keys)
{
	static const char y[] = "precision: fp8\nfp8_skip_op_names: [conv, fc]\n"
				"fp8_params: F152,F143,-1,auto\nnum_of_layers_keep_fp16: 3\n"
				"fp8_auto_skip: 0.1,0.5\n";
	static const char bad[] = "fp8_params: F9\n";
	struct ipuc_options o;
	struct ir_fp8_opts f;
	struct ir_error e = { "" };

	ipuc_options_init(&o);
	CHECK_MSG(ipuc_parse_yaml(y, sizeof(y) - 1, "t.yaml", &o, &e) == 0, "%s", e.msg);
	CHECK(o.nfp8_skip == 2 && !strcmp(o.fp8_skip[1], "fc") && o.keep_fp16 == 3);
	CHECK(o.fp8_auto_target == 0.1 && o.fp8_auto_budget == 0.5);
	CHECK(o.model.precision && !strcmp(o.model.precision, "fp8"));
	CHECK(ipuc_fp8_opts(&o, o.model.precision, &f, &e) == 0);
	CHECK(f.mode == IR_FP8_FULL && f.input_format == IPU_FP8_152 && f.input_scale == -1 &&
	      f.nskip == 2 && f.keep_fp16 == 3);
	CHECK(ipuc_parse_yaml(bad, sizeof(bad) - 1, "bad.yaml", &o, &e) != 0 &&
	      strstr(e.msg, "F143"));
	ipuc_options_free(&o);
}

static size_t image_len(struct ir_graph *g, const struct ir_fp8_opts *f8)
{
	struct ir_error e = { "" };
	struct ipu_target t = { "ipu2", 16, 64 * 1024, .fp8 = f8 };
	struct ipu_lower_info info;
	void *img = NULL;
	size_t len = 0;

	if (ipu_lower_image(&g, 1, &t, &img, &len, &info, &e)) {
		fprintf(stderr, "  lowering: %s\n", e.msg);
		return 0;
	}
	ipu_lower_info_free(&info);
	free(img);
	return len;
}

TEST(fp8_weight_on_the_device)
{
	struct ir_graph *g = net(1);
	struct ir_fp8_opts o = fp8_opts(IR_FP8_WEIGHT);
	struct ir_error e = { "" };
	struct ipu_target t = { "ipu2", 16, 64 * 1024, .fp8 = &o };
	char rep[4096] = "";
	FILE *f = fmemopen(rep, sizeof(rep) - 1, "w");
	static const struct {
		const char *name;
		size_t weights;
	} layer[] = { { "conv", 216 }, { "fc", 128 }, { "y", 80 } };
	size_t l16, l8;

	REQUIRE(pipeline(g) == 0);
	/* weights on the fp8 grid: the device's fp8 layers compute what the
	 * reference does with them, up to fp16 activations */
	CHECK_MSG(ipuc_check(&g, 1, &t, f, &e) == 0, "%s %s", rep, e.msg);
	fclose(f);
	/* The sizes below compare the weights' encodings.  A Relu fused into
	 * its producer's store (fp8 vertices take none) would make a layer's
	 * image differ by its Relu's vertices too, so they are lowered apart. */
	REQUIRE(setenv("IPU_LOWER_FUSE_ACT", "0", 1) == 0);
	l16 = image_len(g, NULL);
	l8 = image_len(g, &o);
	/* Each layer's weights (conv 216, fc 128, y 80 elements) are a byte
	 * less each in fp8, less the two more params of its fp8 vertices;
	 * blocks padded to 16 bytes make the saving per layer differ from
	 * its weights (the conv's eight blocks save 352), so the total is no
	 * measure.  Each layer kept in fp16 by name must cost at least half
	 * its weights' element count, which it does only when that layer is
	 * fp8 on the device. */
	CHECK_MSG(l8 > 0 && l16 > l8, "fp16 %zu fp8 %zu", l16, l8);
	for (size_t k = 0; k < sizeof(layer) / sizeof(layer[0]); k++) {
		struct ir_fp8_opts kept = o;
		size_t lk;

		kept.skip_names = &layer[k].name;
		kept.nskip = 1;
		lk = image_len(g, &kept);
		CHECK_MSG(lk >= l8 + layer[k].weights / 2 && lk <= l16,
			  "%s kept in fp16: %zu bytes, all fp8 %zu, all fp16 %zu",
			  layer[k].name, lk, l8, l16);
	}
	unsetenv("IPU_LOWER_FUSE_ACT");
	ir_graph_free(g);
}

/*
 * net() with each weight's output channels 2^-3 apart (channel c times
 * 2^-3c: the conv's 8 span 2^-21, more than F143's 2^-18 below its top at
 * one scale), as BatchNorm folded into a convolution makes them.
 */
static void skew_channels(struct ir_graph *g)
{
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];
		int k = ir_fp8_weight_input(g, i);
		struct ir_value *w;
		int64_t nch, inner = 1, axis;

		if (k < 0)
			continue;
		w = &g->vals[n->in[k]];
		axis = ir_fp8_weight_axis(g, i, k);
		nch = w->dims[axis];
		for (int d = (int)axis + 1; d < w->rank; d++)
			inner *= w->dims[d];
		for (int64_t j = 0; j < ir_value_numel(w); j++)
			ir_set_f(w->data, w->dtype, (size_t)j,
				 ir_get_f(w->data, w->dtype, (size_t)j) *
				 ldexp(1, -3 * (int)((j / inner) % nch)));
	}
}

TEST(per_channel_scales)
{
	struct ir_graph *g = net(0);
	struct ir_fp8_opts o = fp8_opts(IR_FP8_WEIGHT), pt = o;
	struct ir_error e = { "" };
	int conv = -1;
	double m[8] = { 0 };

	o.per_channel = 1;
	REQUIRE(pipeline(g) == 0);
	skew_channels(g);
	for (int i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].op, "Conv"))
			conv = i;
	REQUIRE(conv >= 0);
	{
		const struct ir_value *w = &g->vals[g->nodes[conv].in[1]];
		double num[2] = { 0, 0 }, den = 0;
		int s[2];

		for (int64_t j = 0; j < ir_value_numel(w); j++) {
			double a = fabs(ir_get_f(w->data, w->dtype, (size_t)j));

			if (a > m[j / 27])
				m[j / 27] = a;
		}
		/* the smallest channel's own relative error: per tensor it
		 * falls below the grid, per channel it keeps F143's 3 bits */
		s[0] = ipu_fp8_scale_for_absmax(m[0], IPU_FP8_143);
		s[1] = ipu_fp8_scale_for_absmax(m[7], IPU_FP8_143);
		for (int64_t j = 7 * 27; j < 8 * 27; j++) {
			double x = ir_get_f(w->data, w->dtype, (size_t)j);

			for (int k = 0; k < 2; k++) {
				double d = x - ipu_fp8_to_f32(ipu_fp8_from_f32((float)x, IPU_FP8_143, s[k]),
							      IPU_FP8_143, s[k]);

				num[k] += d * d;
			}
			den += x * x;
		}
		CHECK_MSG(num[0] / den > 0.01 && num[1] / den < 1e-3,
			  "channel 7: per tensor %g, per channel %g", num[0] / den, num[1] / den);
		/* the default ranking weighs the channels by their norms */
		CHECK(ir_fp8_weight_error(NULL, g, conv, &o) <= ir_fp8_weight_error(NULL, g, conv, &pt));
	}
	CHECK_EQ_INT(ir_pass_fp8(g, &o, &e), 2);
	CHECK_EQ_INT(count_attr(g, "fp8_weight_scales"), 2);
	{
		const struct ir_node *n = &g->nodes[conv];
		const struct ir_value *w = &g->vals[n->in[1]];
		size_t cnt = 0;
		const int64_t *sc = ir_attr_ints(n, "fp8_weight_scales", &cnt);
		int bad = 0;

		REQUIRE(sc && cnt == 8);
		CHECK_EQ_INT(ir_attr_int(n, "fp8_weight_scale", 99), 0);
		CHECK_EQ_INT(ir_attr_int(n, "fp8_weight_axis", 99), 0);
		for (int c = 0; c < 8; c++)
			CHECK_EQ_INT(sc[c], ipu_fp8_scale_for_absmax(m[c], IPU_FP8_143));
		CHECK(sc[0] - sc[7] >= 19);
		for (int64_t j = 0; j < ir_value_numel(w); j++) {
			double x = ir_get_f(w->data, w->dtype, (size_t)j);
			int s = (int)sc[j / 27];

			bad += ipu_fp8_to_f32(ipu_fp8_from_f32((float)x, IPU_FP8_143, s),
					      IPU_FP8_143, s) != (float)x;
		}
		CHECK_EQ_INT(bad, 0);
	}
	ir_graph_free(g);
}

TEST(per_channel_on_the_device)
{
	static const int modes[] = { IR_FP8_WEIGHT, IR_FP8_FULL };

	for (size_t k = 0; k < 2; k++) {
		struct ir_graph *g = net(0);
		struct ir_fp8_opts o = fp8_opts(modes[k]);
		struct ir_error e = { "" };
		struct ipu_target t = { "ipu2", 16, 64 * 1024, .fp8 = &o };
		char rep[4096] = "";
		FILE *f = fmemopen(rep, sizeof(rep) - 1, "w");

		o.per_channel = 1;
		REQUIRE(pipeline(g) == 0);
		skew_channels(g);
		/* the device's per-channel epilogue against the reference on
		 * the weights rounded channel by channel */
		CHECK_MSG(ipuc_check(&g, 1, &t, f, &e) == 0, "mode %d: %s %s", modes[k], rep, e.msg);
		fclose(f);
		ir_graph_free(g);
	}
}

/*
 * A 1x1 convolution with a bias, which the preparation writes as MatMul +
 * Add and the device computes as one float32 sum started from the bias,
 * rounded to float16 once: the reference evaluator must round it the same
 * way (it rounded the product, then the sum: one float16 step apart on
 * some outputs, which fp8 inputs downstream amplified).  Exactly equal, in
 * both fp8 modes, with per-tensor and per-channel scales.
 */
TEST(bias_of_a_1x1_conv_rounded_once)
{
	static const int modes[] = { IR_FP8_WEIGHT, IR_FP8_FULL };

	for (size_t k = 0; k < 4; k++) {
		struct ir_graph *g = ir_graph_new(NULL);
		int64_t dx[] = { 2, 16, 8, 8 }, dw[] = { 32, 16, 1, 1 }, db[] = { 32 };
		struct ir_fp8_opts o = fp8_opts(modes[k % 2]);
		struct ir_error e = { "" };
		struct ipu_target t = { "ipu2", 16, 64 * 1024, .fp8 = &o };
		char rep[4096] = "";
		FILE *f = fmemopen(rep, sizeof(rep) - 1, "w");
		int in[3], v;

		o.per_channel = k >= 2;
		in[0] = input(g, "x", 4, dx);
		in[1] = cconst(g, "w", 4, dw, 21, 0.5, 0);
		in[2] = cconst(g, "b", 1, db, 22, 2.0, 0);
		v = node(g, "Conv", in, 3, "y");
		ir_graph_add_output(g, v, NULL);
		REQUIRE(pipeline(g) == 0);
		CHECK_MSG(ipuc_check(&g, 1, &t, f, &e) == 0, "case %zu: %s %s", k, rep, e.msg);
		fclose(f);
		CHECK_MSG(strstr(rep, "check: y: ok, max abs err 0,") != NULL, "case %zu: %s", k, rep);
		ir_graph_free(g);
	}
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(pass_marks_layers_and_rounds_weights);
	RUN(pass_full_mode_skip_and_keep);
	RUN(pass_full_mode_per_layer_input_scales);
	RUN(fp8_params_parsing);
	RUN(fp8_yaml_keys);
	RUN(fp8_weight_on_the_device);
	RUN(per_channel_scales);
	RUN(per_channel_on_the_device);
	RUN(bias_of_a_1x1_conv_rounded_once);
	return TH_DONE();
}
