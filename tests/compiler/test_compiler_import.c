/* SPDX-License-Identifier: MIT */
/* test_compiler_import.c - ONNX import: tensor encodings of every dtype,
 * external data (bounds, paths), domains and opsets, malformed input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/onnx_io.h"
#include "onnx/onnx.pb-c.h"

static char tmpdir[64];

/* A model: input x [2] float -> Identity -> y, plus initializer `t`
 * feeding a second output through Identity. */
struct mb {
	Onnx__ModelProto m;
	Onnx__GraphProto g;
	Onnx__OperatorSetIdProto ops, *opsp;
	Onnx__NodeProto n0, n1, *nodes[2];
	char *n0_in[1], *n0_out[1], *n1_in[1], *n1_out[1];
	Onnx__TensorProto t, *inits[1];
	Onnx__ValueInfoProto vin, vout[2], *ins[1], *outs[2];
	Onnx__TypeProto tp;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto sh;
	Onnx__TensorShapeProto__Dimension dim, *dims[1];
	int64_t tdims[1];
};

static void mb_init(struct mb *b, int opset)
{
	memset(b, 0, sizeof(*b));
	onnx__model_proto__init(&b->m);
	onnx__graph_proto__init(&b->g);
	onnx__operator_set_id_proto__init(&b->ops);
	b->ops.domain = "";
	b->ops.has_version = 1;
	b->ops.version = opset;
	b->opsp = &b->ops;
	b->m.has_ir_version = 1;
	b->m.ir_version = 8;
	b->m.n_opset_import = 1;
	b->m.opset_import = &b->opsp;
	b->m.graph = &b->g;
	b->g.name = "g";
	onnx__node_proto__init(&b->n0);
	onnx__node_proto__init(&b->n1);
	b->n0.op_type = "Identity";
	b->n0.name = "first";
	b->n0_in[0] = "x";
	b->n0_out[0] = "y";
	b->n0.n_input = b->n0.n_output = 1;
	b->n0.input = b->n0_in;
	b->n0.output = b->n0_out;
	b->n1.op_type = "Identity";
	b->n1.name = "second";
	b->n1_in[0] = "t";
	b->n1_out[0] = "z";
	b->n1.n_input = b->n1.n_output = 1;
	b->n1.input = b->n1_in;
	b->n1.output = b->n1_out;
	b->nodes[0] = &b->n0;
	b->nodes[1] = &b->n1;
	b->g.n_node = 2;
	b->g.node = b->nodes;
	onnx__tensor_proto__init(&b->t);
	b->t.name = "t";
	b->t.has_data_type = 1;
	b->t.n_dims = 1;
	b->t.dims = b->tdims;
	b->inits[0] = &b->t;
	b->g.n_initializer = 1;
	b->g.initializer = b->inits;
	onnx__value_info_proto__init(&b->vin);
	onnx__type_proto__init(&b->tp);
	onnx__type_proto__tensor__init(&b->tt);
	onnx__tensor_shape_proto__init(&b->sh);
	onnx__tensor_shape_proto__dimension__init(&b->dim);
	b->dim.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	b->dim.dim_value = 2;
	b->dims[0] = &b->dim;
	b->sh.n_dim = 1;
	b->sh.dim = b->dims;
	b->tt.has_elem_type = 1;
	b->tt.elem_type = 1;
	b->tt.shape = &b->sh;
	b->tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	b->tp.tensor_type = &b->tt;
	b->vin.name = "x";
	b->vin.type = &b->tp;
	b->ins[0] = &b->vin;
	b->g.n_input = 1;
	b->g.input = b->ins;
	for (int i = 0; i < 2; i++) {
		onnx__value_info_proto__init(&b->vout[i]);
		b->vout[i].name = i ? "z" : "y";
		b->outs[i] = &b->vout[i];
	}
	b->g.n_output = 2;
	b->g.output = b->outs;
}

static struct ir_graph *mb_load(struct mb *b, struct ir_error *e)
{
	size_t len = onnx__model_proto__get_packed_size(&b->m);
	uint8_t *buf = malloc(len);
	char path[128];
	FILE *f;
	struct ir_graph *g;

	onnx__model_proto__pack(&b->m, buf);
	snprintf(path, sizeof(path), "%s/model.onnx", tmpdir);
	f = fopen(path, "wb");
	fwrite(buf, 1, len, f);
	fclose(f);
	free(buf);
	g = onnx_load_file(path, e);
	return g;
}

static const struct ir_value *tval(const struct ir_graph *g)
{
	int v = ir_value_find(g, "t");

	return v >= 0 ? &g->vals[v] : NULL;
}

TEST(typed_fields_every_dtype)
{
	struct mb b;
	struct ir_error e;
	struct ir_graph *g;
	float fl[3] = { 1.5f, -2, 3 };
	double db[3] = { 0.25, -1e300, 7 };
	int64_t i64[3] = { INT64_MIN, 0, INT64_MAX };
	uint64_t u64[3] = { 0, 1, UINT64_MAX };
	int32_t i32[3] = { -7, 0, 200 };
	static const int small[] = { IR_I8, IR_U8, IR_I16, IR_U16, IR_I32, IR_BOOL };

	mb_init(&b, 13);
	b.tdims[0] = 3;
	b.t.data_type = IR_F32;
	b.t.n_float_data = 3;
	b.t.float_data = fl;
	REQUIRE((g = mb_load(&b, &e)));
	CHECK(ir_get_f(tval(g)->data, IR_F32, 1) == -2);
	ir_graph_free(g);

	mb_init(&b, 13);
	b.tdims[0] = 3;
	b.t.data_type = IR_F64;
	b.t.n_double_data = 3;
	b.t.double_data = db;
	REQUIRE((g = mb_load(&b, &e)));
	CHECK(ir_get_f(tval(g)->data, IR_F64, 1) == -1e300);
	ir_graph_free(g);

	mb_init(&b, 13);
	b.tdims[0] = 3;
	b.t.data_type = IR_I64;
	b.t.n_int64_data = 3;
	b.t.int64_data = i64;
	REQUIRE((g = mb_load(&b, &e)));
	CHECK(ir_get_i(tval(g)->data, IR_I64, 0) == INT64_MIN);
	ir_graph_free(g);

	mb_init(&b, 13);
	b.tdims[0] = 3;
	b.t.data_type = IR_U64;
	b.t.n_uint64_data = 3;
	b.t.uint64_data = u64;
	REQUIRE((g = mb_load(&b, &e)));
	CHECK(((uint64_t *)tval(g)->data)[2] == UINT64_MAX);
	ir_graph_free(g);

	for (size_t k = 0; k < sizeof(small) / sizeof(small[0]); k++) {
		mb_init(&b, 13);
		b.tdims[0] = 3;
		b.t.data_type = small[k];
		b.t.n_int32_data = 3;
		b.t.int32_data = i32;
		REQUIRE((g = mb_load(&b, &e)));
		CHECK_EQ_INT(tval(g)->dtype, small[k]);
		CHECK_EQ_INT(ir_get_i(tval(g)->data, small[k], 0),
			     small[k] == IR_BOOL ? 1 : small[k] == IR_U8 ? 249 :
			     small[k] == IR_U16 ? 65529 : -7);
		ir_graph_free(g);
	}
	/* float16 bits in int32_data */
	{
		int32_t h[3] = { 0x3c00, 0xc000, 0x3800 };

		mb_init(&b, 13);
		b.tdims[0] = 3;
		b.t.data_type = IR_F16;
		b.t.n_int32_data = 3;
		b.t.int32_data = h;
		REQUIRE((g = mb_load(&b, &e)));
		CHECK(ir_get_f(tval(g)->data, IR_F16, 1) == -2.0);
		CHECK(ir_get_f(tval(g)->data, IR_F16, 2) == 0.5);
		ir_graph_free(g);
	}
}

TEST(raw_data_checked)
{
	struct mb b;
	struct ir_error e;
	struct ir_graph *g;
	float fl[2] = { 1, 2 };

	mb_init(&b, 13);
	b.tdims[0] = 3;
	b.t.data_type = IR_F32;
	b.t.has_raw_data = 1;
	b.t.raw_data.data = (uint8_t *)fl;
	b.t.raw_data.len = 8; /* 3 floats need 12 */
	g = mb_load(&b, &e);
	CHECK(!g);
	CHECK_MSG(strstr(e.msg, "tensor 't'") && strstr(e.msg, "raw_data has 8 bytes"), "%s", e.msg);
	ir_graph_free(g);

	mb_init(&b, 13);
	b.tdims[0] = 3;
	b.t.data_type = IR_F32;
	b.t.n_float_data = 2;
	b.t.float_data = fl;
	g = mb_load(&b, &e);
	CHECK(!g);
	CHECK_MSG(strstr(e.msg, "tensor 't'") != NULL, "%s", e.msg);
	ir_graph_free(g);

	mb_init(&b, 13);
	b.tdims[0] = 1;
	b.t.data_type = 42;
	g = mb_load(&b, &e);
	CHECK(!g && strstr(e.msg, "unknown data type 42"));
	ir_graph_free(g);
}

static void set_external(struct mb *b, Onnx__StringStringEntryProto *kv,
			 Onnx__StringStringEntryProto **kvp, int n)
{
	b->t.has_data_location = 1;
	b->t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	b->t.n_external_data = (size_t)n;
	b->t.external_data = kvp;
	for (int i = 0; i < n; i++)
		kvp[i] = &kv[i];
}

TEST(external_data)
{
	struct mb b;
	struct ir_error e;
	struct ir_graph *g;
	char path[128];
	float data[6] = { 9, 9, 1, 2, 3, 4 };
	FILE *f;
	Onnx__StringStringEntryProto kv[3], *kvp[3];

	snprintf(path, sizeof(path), "%s/weights.bin", tmpdir);
	f = fopen(path, "wb");
	REQUIRE(f);
	fwrite(data, sizeof(float), 6, f);
	fclose(f);
	for (int i = 0; i < 3; i++)
		onnx__string_string_entry_proto__init(&kv[i]);
	kv[0].key = "location";
	kv[0].value = "weights.bin";
	kv[1].key = "offset";
	kv[1].value = "8";
	kv[2].key = "length";
	kv[2].value = "16";

	mb_init(&b, 13);
	b.tdims[0] = 4;
	b.t.data_type = IR_F32;
	set_external(&b, kv, kvp, 3);
	REQUIRE((g = mb_load(&b, &e)));
	CHECK(ir_get_f(tval(g)->data, IR_F32, 0) == 1);
	CHECK(ir_get_f(tval(g)->data, IR_F32, 3) == 4);
	ir_graph_free(g);

	/* past the end of the file */
	kv[1].value = "12";
	kv[2].value = "16";
	mb_init(&b, 13);
	b.tdims[0] = 4;
	b.t.data_type = IR_F32;
	set_external(&b, kv, kvp, 3);
	g = mb_load(&b, &e);
	CHECK(!g);
	CHECK_MSG(strstr(e.msg, "is outside") != NULL, "%s", e.msg);
	ir_graph_free(g);

	/* length that does not match the shape */
	kv[1].value = "0";
	kv[2].value = "12";
	mb_init(&b, 13);
	b.tdims[0] = 4;
	b.t.data_type = IR_F32;
	set_external(&b, kv, kvp, 3);
	g = mb_load(&b, &e);
	CHECK(!g && strstr(e.msg, "does not match"));
	ir_graph_free(g);

	/* escaping the model directory */
	kv[0].value = "../weights.bin";
	kv[2].value = "16";
	mb_init(&b, 13);
	b.tdims[0] = 4;
	b.t.data_type = IR_F32;
	set_external(&b, kv, kvp, 3);
	g = mb_load(&b, &e);
	CHECK(!g && strstr(e.msg, "relative path inside"));
	ir_graph_free(g);

	kv[0].value = "missing.bin";
	mb_init(&b, 13);
	b.tdims[0] = 4;
	b.t.data_type = IR_F32;
	set_external(&b, kv, kvp, 3);
	g = mb_load(&b, &e);
	CHECK(!g && strstr(e.msg, "cannot open external data"));
	ir_graph_free(g);
	remove(path);
}

TEST(domains_and_opsets)
{
	struct mb b;
	struct ir_error e;
	struct ir_graph *g;
	float fl[1] = { 1 };

	mb_init(&b, 13);
	b.tdims[0] = 1;
	b.t.data_type = IR_F32;
	b.t.n_float_data = 1;
	b.t.float_data = fl;
	/* another domain imports as a custom operator; without a plugin
	 * serving it, shape inference names the node and the option */
	b.n1.domain = "com.microsoft";
	g = mb_load(&b, &e);
	REQUIRE(g);
	CHECK(g->nnodes == 2 && !strcmp(g->nodes[1].op, "com.microsoft::Identity"));
	CHECK(ir_infer_node(g, 1, &e) == -1);
	CHECK_MSG(strstr(e.msg, "node 'second' (com.microsoft::Identity, #1): operator Identity of domain 'com.microsoft' is not loaded") &&
		  strstr(e.msg, "--custom_library_so_paths"), "%s", e.msg);
	ir_graph_free(g);

	for (int opset = 0; opset <= 18; opset += 18) {
		mb_init(&b, opset);
		b.tdims[0] = 1;
		b.t.data_type = IR_F32;
		b.t.n_float_data = 1;
		b.t.float_data = fl;
		g = mb_load(&b, &e);
		CHECK(!g);
		CHECK_MSG(strstr(e.msg, "opset") && strstr(e.msg, "1 to 17"), "%s", e.msg);
		ir_graph_free(g);
	}
	/* opsets 1 to 6 are converted by ir_normalize */
	for (int opset = 1; opset <= 17; opset++) {
		mb_init(&b, opset);
		b.tdims[0] = 1;
		b.t.data_type = IR_F32;
		b.t.n_float_data = 1;
		b.t.float_data = fl;
		g = mb_load(&b, &e);
		CHECK_MSG(g && g->opset == opset, "opset %d: %s", opset, g ? "" : e.msg);
		ir_graph_free(g);
	}
}

TEST(not_a_model)
{
	struct ir_error e;
	char path[128];
	FILE *f;
	struct ir_graph *g;

	snprintf(path, sizeof(path), "%s/junk.onnx", tmpdir);
	f = fopen(path, "wb");
	REQUIRE(f);
	fputs("\xff\xff\xff\xff this is not protobuf", f);
	fclose(f);
	g = onnx_load_file(path, &e);
	CHECK(!g && strstr(e.msg, "not a valid ONNX model"));
	remove(path);
	g = onnx_load_file("/nonexistent/model.onnx", &e);
	CHECK(!g && strstr(e.msg, "cannot open model"));
}

/* Every model.onnx of the node tests imports or fails with a message. */
TEST(node_models_import_or_explain)
{
	char path[512];
	static const char *const some[] = {
		"test_conv_with_strides_padding", "test_resize_upsample_scales_nearest",
		"test_slice_neg_steps", "test_layer_normalization_4d_axis0",
		"test_clip_default_inbounds", "test_upsample_nearest", NULL,
	};

	for (int i = 0; some[i]; i++) {
		struct ir_error e = { "" };
		struct ir_graph *g;

		snprintf(path, sizeof(path), "/usr/share/libonnx-testdata/data/node/%s/model.onnx", some[i]);
		if (access(path, R_OK))
			continue;
		g = onnx_load_file(path, &e);
		CHECK_MSG(g != NULL, "%s: %s", some[i], e.msg);
		if (g)
			CHECK(ir_normalize(g, &e) == 0);
		ir_graph_free(g);
	}
}

int main(int argc, char **argv)
{
	int rc;

	TH_INIT(argc, argv);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ipuc-importXXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(typed_fields_every_dtype);
	RUN(raw_data_checked);
	RUN(external_data);
	RUN(domains_and_opsets);
	RUN(not_a_model);
	RUN(node_models_import_or_explain);
	{
		char p[128];

		snprintf(p, sizeof(p), "%s/model.onnx", tmpdir);
		remove(p);
	}
	rmdir(tmpdir);
	rc = TH_DONE();
	return rc;
}
