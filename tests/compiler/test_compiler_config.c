/* SPDX-License-Identifier: MIT */
/* test_compiler_config.c - YAML config (the seed's config.yaml verbatim,
 * unknown keys), command-line options, targets, and the driver end to end
 * on the seed's two fusion models. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/driver.h"
#include "cli/options.h"
#include "harness.h"
#include "ipu/lower.h"
#include "ipu/onnx_io.h"

/* Seed 004, Listing 5.5, as written. */
static const char seed_yaml[] =
	"output_dir: './'\n"
	"output_model: 'model_fusion.onnx'\n"
	"export_popef: True\n"
	"max_tensor_size: -1\n"
	"ipu_version: 'ipu21'\n"
	"model_fusion:\n"
	"  - input_model: 'model0.onnx'\n"
	"    input_shape: ['X=1,2', 'Y=1,2']\n"
	"    precision: 'fp32'\n"
	"\n"
	"  - input_model: 'model1.onnx'\n"
	"    input_shape: ['X=1,1']\n"
	"    precision: 'fp16'\n";

TEST(seed_config_verbatim)
{
	struct ipuc_options o;
	struct ir_error e;

	ipuc_options_init(&o);
	REQUIRE(ipuc_parse_yaml(seed_yaml, strlen(seed_yaml), "config.yaml", &o, &e) == 0);
	CHECK(!strcmp(o.output_dir, "./"));
	CHECK(!strcmp(o.output_model, "model_fusion.onnx"));
	CHECK_EQ_INT(o.export_popef, 1);
	CHECK_EQ_INT(o.max_tensor_size, -1);
	CHECK(!strcmp(o.ipu_version, "ipu21"));
	CHECK_EQ_INT(o.tiles, 1472);
	CHECK_EQ_INT(o.tile_mem, 624 * 1024);
	REQUIRE(o.nfusion == 2);
	CHECK(!strcmp(o.fusion[0].input_model, "model0.onnx"));
	CHECK_EQ_INT(o.fusion[0].nshapes, 2);
	CHECK(!strcmp(o.fusion[0].shapes[1].name, "Y"));
	CHECK_EQ_INT(o.fusion[0].shapes[1].dims[1], 2);
	CHECK(!strcmp(o.fusion[0].precision, "fp32"));
	CHECK(!strcmp(o.fusion[1].input_model, "model1.onnx"));
	CHECK_EQ_INT(o.fusion[1].nshapes, 1);
	CHECK(!strcmp(o.fusion[1].precision, "fp16"));
	ipuc_options_free(&o);
}

static void expect_yaml_error(const char *text, const char *needle)
{
	struct ipuc_options o;
	struct ir_error e = { "" };

	ipuc_options_init(&o);
	CHECK_MSG(ipuc_parse_yaml(text, strlen(text), "c.yaml", &o, &e) == -1, "accepted: %s", text);
	CHECK_MSG(strstr(e.msg, needle) != NULL, "'%s' not in '%s'", needle, e.msg);
	ipuc_options_free(&o);
}

TEST(bad_configs)
{
	expect_yaml_error("output_dir: x\nbatchsize: 4\n", "c.yaml:2: unknown key batchsize");
	expect_yaml_error("output_dir: x\npopart_options: a=b\n",
			  "c.yaml:2: PopRT's key is not supported by ipu-compile (see ipu-compile --help for what is): popart_options");
	expect_yaml_error("model_fusion:\n  - input_model: a.onnx\n    precison: fp16\n",
			  "c.yaml:3: unknown key in a model_fusion entry");
	expect_yaml_error("model_fusion:\n  - input_shape: ['X=1']\n", "without input_model");
	expect_yaml_error("ipu_version: ipu3\n", "ipu version 'ipu3' is unknown");
	expect_yaml_error("precision: fp64\n", "precision 'fp64'");
	expect_yaml_error("export_popef: maybe\n", "True or False");
	expect_yaml_error("max_tensor_size: lots\n", "integer");
	expect_yaml_error("convert_version: 6\n", "c.yaml:1: convert_version takes an opset from 7 to 17");
	expect_yaml_error("input_shape: ['X=1,b']\n", "c.yaml:1:");
	expect_yaml_error("a: [1, 2\n", "YAML syntax error");
	expect_yaml_error("- 1\n- 2\n", "must be a mapping");
	expect_yaml_error("model_fusion: model0.onnx\n", "must be a list");
}

TEST(more_yaml_keys)
{
	static const char y[] =
		"input_model: m.onnx\n"
		"input_shape: 'A=1,3 B=2'\n"
		"batch_size: 8\n"
		"batch_axis: 1\n"
		"precision: fp16\n"
		"fp16_skip_op_types: [Softmax, LayerNormalization]\n"
		"target: tiles=16,tile-mem=256KiB\n"
		"export_onnx: out.onnx\n"
		"convert_version: 11\n"
		"output: m.ipuef\n"
		"check: false\n";
	struct ipuc_options o;
	struct ir_error e;

	ipuc_options_init(&o);
	REQUIRE(ipuc_parse_yaml(y, strlen(y), "y", &o, &e) == 0);
	CHECK_EQ_INT(o.model.nshapes, 2);
	CHECK_EQ_INT(o.batch_size, 8);
	CHECK_EQ_INT(o.batch_axis, 1);
	CHECK_EQ_INT(o.nskip, 2);
	CHECK_EQ_INT(o.tiles, 16);
	CHECK_EQ_INT(o.tile_mem, 256 * 1024);
	CHECK(!strcmp(o.output, "m.ipuef"));
	CHECK_EQ_INT(o.convert_version, 11);
	ipuc_options_free(&o);
}

TEST(command_line)
{
	char *argv[] = {
		"ipu-compile", "--input-model", "m.onnx", "--input-shape", "X=8,3,224,224",
		"Y=8,10", "--batch-size=8", "--precision", "fp16", "--fp16_skip_op_types",
		"Softmax,Gemm", "--ipu-version", "ipu2", "--target", "tiles=64,tile-mem=1MiB",
		"--max-tensor-size", "-1", "--export-onnx", "o.onnx", "--convert_version", "13", "-o", "x.ipuef",
		"--json", "--check", NULL,
	};
	struct ipuc_options o;
	struct ir_error e;

	ipuc_options_init(&o);
	REQUIRE(ipuc_parse_args((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv, &o, &e) == 0);
	CHECK(!strcmp(o.model.input_model, "m.onnx"));
	CHECK_EQ_INT(o.model.nshapes, 2);
	CHECK_EQ_INT(o.model.shapes[0].dims[3], 224);
	CHECK_EQ_INT(o.batch_size, 8);
	CHECK(!strcmp(o.model.precision, "fp16"));
	CHECK_EQ_INT(o.nskip, 2);
	CHECK(!strcmp(o.ipu_version, "ipu2"));
	CHECK_EQ_INT(o.tiles, 64);
	CHECK_EQ_INT(o.tile_mem, 1 << 20);
	CHECK_EQ_INT(o.max_tensor_size, -1);
	CHECK_EQ_INT(o.convert_version, 13);
	CHECK(o.json && o.check);
	ipuc_options_free(&o);
}

static void expect_arg_error(int argc, char **argv, const char *needle)
{
	struct ipuc_options o;
	struct ir_error e = { "" };

	ipuc_options_init(&o);
	CHECK(ipuc_parse_args(argc, argv, &o, &e) == -1);
	CHECK_MSG(strstr(e.msg, needle) != NULL, "'%s' not in '%s'", needle, e.msg);
	ipuc_options_free(&o);
}

TEST(bad_arguments)
{
	char *a1[] = { "c", "--frobnicate" };
	char *a2[] = { "c", "--batch-size", "0" };
	char *a3[] = { "c", "--target", "tiles=99999" };
	char *a4[] = { "c", "--target", "cores=4" };
	char *a5[] = { "c", "--fp16-skip-op-types", "Softmax,Frob" };
	char *a6[] = { "c", "--input-shape" };
	char *a7[] = { "c", "--precision", "fp4" };
	char *a8[] = { "c", "--convert-version", "18" };
	char *a9[] = { "c", "--popart_options", "a=b" };
	char *a10[] = { "c", "--logging-level=INFO" };
	char *a11[] = { "c", "--no_fusion=1" };

	expect_arg_error(2, a1, "unknown option '--frobnicate'");
	expect_arg_error(3, a2, "'0' is not a whole number from 1 to");
	expect_arg_error(3, a3, "more than 8192");
	expect_arg_error(3, a4, "unknown key 'cores'");
	expect_arg_error(3, a5, "'Frob' is not a supported op type");
	expect_arg_error(2, a6, "needs a value");
	expect_arg_error(3, a7, "not fp32, fp16, fp8 or fp8_weight");
	expect_arg_error(3, a8, "'18' is not a whole number from 7 to 17");
	expect_arg_error(3, a9, "PopRT's --popart_options is not supported by ipu-compile");
	expect_arg_error(2, a10, "PopRT's --logging_level is not supported");
	expect_arg_error(2, a11, "option '--no_fusion' takes no value");
}

/* The seed's models, built in C: model0 = Reshape(Add(X, Y), C=[2]),
 * model1 = Concat(X, C=[[1.5, 2]]) in float16. */
static void write_seed_models(const char *dir)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_tensor t;
	int64_t d12[] = { 1, 2 }, d1[] = { 1 }, d11[] = { 1, 1 }, d2[] = { 2 };
	int x, y, z, c, o, in[2];
	char path[256];

	x = ir_value_add(g, "X", NULL);
	ir_value_set_shape(&g->vals[x], IR_F32, 2, d12);
	ir_graph_add_input(g, x, NULL);
	y = ir_value_add(g, "Y", NULL);
	ir_value_set_shape(&g->vals[y], IR_F32, 2, d12);
	ir_graph_add_input(g, y, NULL);
	c = ir_value_add(g, "C", NULL);
	ir_tensor_alloc(&t, IR_I64, 1, d1, NULL);
	ir_set_i(t.data, IR_I64, 0, 2);
	ir_value_set_const(&g->vals[c], &t);
	z = ir_value_add(g, "Z", NULL);
	o = ir_value_add(g, "O", NULL);
	ir_value_set_shape(&g->vals[o], IR_F32, 1, d2);
	in[0] = x;
	in[1] = y;
	ir_node_add(g, "add", "Add", in, 2, &z, 1, NULL);
	in[0] = z;
	in[1] = c;
	ir_node_add(g, "reshape", "Reshape", in, 2, &o, 1, NULL);
	ir_graph_add_output(g, o, NULL);
	snprintf(path, sizeof(path), "%s/model0.onnx", dir);
	onnx_save_file(g, path, NULL);
	ir_graph_free(g);

	g = ir_graph_new(NULL);
	x = ir_value_add(g, "X", NULL);
	ir_value_set_shape(&g->vals[x], IR_F16, 2, d11);
	ir_graph_add_input(g, x, NULL);
	c = ir_value_add(g, "C", NULL);
	ir_tensor_alloc(&t, IR_F16, 2, d12, NULL);
	ir_set_f(t.data, IR_F16, 0, 1.5);
	ir_set_f(t.data, IR_F16, 1, 2.0);
	ir_value_set_const(&g->vals[c], &t);
	o = ir_value_add(g, "O", NULL);
	in[0] = x;
	in[1] = c;
	ir_node_add(g, "concat", "Concat", in, 2, &o, 1, NULL);
	ir_attr_set_int(&g->nodes[0], "axis", 1, NULL);
	ir_graph_add_output(g, o, NULL);
	snprintf(path, sizeof(path), "%s/model1.onnx", dir);
	onnx_save_file(g, path, NULL);
	ir_graph_free(g);
}

TEST(driver_seed_fusion)
{
	char dir[] = "/tmp/ipuc-fusionXXXXXX", path[256], outbuf[8192] = "", errbuf[4096] = "";
	struct ipuc_options o;
	struct ir_error e;
	FILE *out, *err, *f;
	int rc;

	REQUIRE(mkdtemp(dir));
	write_seed_models(dir);
	snprintf(path, sizeof(path), "%s/config.yaml", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs(seed_yaml, f);
	fclose(f);
	ipuc_options_init(&o);
	{
		char *argv[] = { "ipu-compile", "--config-yaml", path, "--json" };

		REQUIRE(ipuc_parse_args(4, argv, &o, &e) == 0);
	}
	out = fmemopen(outbuf, sizeof(outbuf) - 1, "w");
	err = fmemopen(errbuf, sizeof(errbuf) - 1, "w");
	rc = ipuc_run(&o, out, err);
	fclose(out);
	fclose(err);
	CHECK_MSG(strstr(outbuf, "\"name\": \"X\", \"dtype\": \"float16\", \"shape\": [1, 1]") != NULL, "%s", outbuf);
	CHECK(strstr(outbuf, "\"ipu_version\": \"ipu21\"") != NULL);
	snprintf(path, sizeof(path), "%s/model_fusion.graph0.onnx", dir);
	CHECK(access(path, R_OK) == 0);
	remove(path);
	snprintf(path, sizeof(path), "%s/model_fusion.graph1.onnx", dir);
	CHECK(access(path, R_OK) == 0);
	remove(path);
	snprintf(path, sizeof(path), "%s/executable.ipuef", dir);
	CHECK_MSG(rc == IPUC_EXIT_OK, "rc %d: %s", rc, errbuf);
	CHECK(access(path, R_OK) == 0);
	remove(path);
	ipuc_options_free(&o);
	for (int i = 0; i < 3; i++) {
		static const char *const names[] = { "model0.onnx", "model1.onnx", "config.yaml" };

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		remove(path);
	}
	rmdir(dir);
}

TEST(driver_errors)
{
	struct ipuc_options o;
	char errbuf[2048] = "";
	FILE *err;
	int rc;

	ipuc_options_init(&o);
	err = fmemopen(errbuf, sizeof(errbuf) - 1, "w");
	rc = ipuc_run(&o, stdout, err);
	fclose(err);
	CHECK_EQ_INT(rc, IPUC_EXIT_USAGE);
	CHECK(strstr(errbuf, "no model") != NULL);
	o.model.input_model = strdup("/nonexistent.onnx");
	o.export_onnx = strdup("/tmp/never.onnx");
	err = fmemopen(errbuf, sizeof(errbuf) - 1, "w");
	rc = ipuc_run(&o, stdout, err);
	fclose(err);
	CHECK_EQ_INT(rc, IPUC_EXIT_ERROR);
	CHECK(strstr(errbuf, "cannot open model /nonexistent.onnx") != NULL);
	free(o.export_onnx);
	o.export_onnx = NULL;
	o.convert_version = 11;
	err = fmemopen(errbuf, sizeof(errbuf) - 1, "w");
	rc = ipuc_run(&o, stdout, err);
	fclose(err);
	CHECK_EQ_INT(rc, IPUC_EXIT_USAGE);
	CHECK_MSG(strstr(errbuf, "--convert-version sets the opset of the exported model") != NULL, "%s", errbuf);
	ipuc_options_free(&o);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(seed_config_verbatim);
	RUN(bad_configs);
	RUN(more_yaml_keys);
	RUN(command_line);
	RUN(bad_arguments);
	RUN(driver_seed_fusion);
	RUN(driver_errors);
	return TH_DONE();
}
