// SPDX-License-Identifier: MIT
/*
 * test_custom_engine.c - custom codelets in the engine: a plugin's table
 * is checked (ABI version, struct sizes, duplicates), an executable's
 * CUSTOM section binds to it by name and library hash, the codelet's
 * check() runs on every vertex at load and its run() computes; refusals
 * name the operator and the hash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/custom_ops.h"
#include "ipu/custom_table.h"
#include "ipu/engine.h"
#include "ipu/graph.h"

#define DEV_TILES 4
#define DEV_MEM 4096
#define N 8

/* ops [x, y]; params [rows, cols, factor(f32 bits)]: y = x * factor */
static int scale_check(const struct ipu_vertex_ctx *v, char *why, size_t whylen)
{
	if (v->num_ops != 2 || v->num_params != 3)
		return snprintf(why, whylen, "2 operands, 3 params"), IPUX_E_OPERAND_COUNT;
	if (v->ops[0].dtype != IPUX_DT_F32 || v->ops[1].dtype != IPUX_DT_F32)
		return snprintf(why, whylen, "F32 only"), IPUX_E_OPERAND_TYPE;
	if ((uint64_t)v->params[0] * v->params[1] != v->ops[0].count || v->ops[1].count != v->ops[0].count)
		return snprintf(why, whylen, "counts"), IPUX_E_OPERAND_SHAPE;
	return 0;
}

static uint64_t scale_cost(const struct ipu_vertex_ctx *v)
{
	return 10 + v->ops[0].count;
}

static int scale_run(const struct ipu_vertex_ctx *v)
{
	const float *x = IPU_OP_PTR(v, 0, const float);
	float *y = IPU_OP_PTR(v, 1, float), f;

	memcpy(&f, &v->params[2], sizeof(f));
	for (uint32_t i = 0; i < v->ops[0].count; i++)
		y[i] = x[i] * f;
	return 0;
}

static int reject_check(const struct ipu_vertex_ctx *v, char *why, size_t whylen)
{
	(void)v;
	snprintf(why, whylen, "this plugin refuses every vertex");
	return IPUX_E_PARAM_VALUE;
}

static int infer(const struct ipu_custom_shape *in, uint32_t nin, const double *attrs,
		 struct ipu_custom_shape *out, uint32_t nout, char *why, size_t whylen)
{
	(void)nin; (void)attrs; (void)nout; (void)why; (void)whylen;
	out[0] = in[0];
	return 0;
}

static int reference(const struct ipu_custom_shape *is, const float *const *in, uint32_t nin,
		     const double *attrs, const struct ipu_custom_shape *os, float *const *out,
		     uint32_t nout, char *why, size_t whylen)
{
	(void)is; (void)in; (void)nin; (void)attrs; (void)os; (void)out; (void)nout; (void)why; (void)whylen;
	return 0;
}

static const struct ipu_custom_attr attrs[] = { { "factor", IPU_CUSTOM_ATTR_FLOAT, 0, 2.0 } };

#define OP(nm, chk) {							\
	.struct_size = sizeof(struct ipu_custom_op), .domain = "test", .name = nm,	\
	.opset_min = 1, .opset_max = 1, .min_inputs = 1, .max_inputs = 1,	\
	.num_outputs = 1, .split = IPU_CUSTOM_SPLIT_ROWS, .attrs = attrs,	\
	.num_attrs = 1, .infer = infer, .reference = reference,		\
	.codelet = { nm, chk, scale_cost, scale_run } }

static const struct ipu_custom_op ops[] = { OP("Scale", scale_check), OP("Reject", reject_check) };
static const struct ipu_custom_op_library lib = {
	IPU_CUSTOM_OP_ABI_VERSION, sizeof(struct ipu_custom_op_library), "test", ops, 2
};
static const uint8_t hash_a[32] = { 0xaa, 1, 2, 3 };
static const uint8_t hash_b[32] = { 0xbb, 1, 2, 3 };

static int stream_fail(void *ctx, uint32_t stream, uint32_t dir, const struct ipu_stream_seg *segs,
		       uint32_t nsegs, uint32_t total, int *stalled)
{
	(void)ctx; (void)stream; (void)dir; (void)segs; (void)nsegs; (void)total; (void)stalled;
	return IPU_E_STREAM;
}

/* x (init 1..N) on tile 0 and 1, y = custom(x) per tile. */
static void *build(const struct ipu_custom_table *t, const char *op, const uint8_t *hash,
		   size_t *len, uint32_t *yoff)
{
	struct ipu_graph *g = ipu_graph_create(DEV_TILES, DEV_MEM);
	uint64_t n = N;
	ipu_tensor x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n);
	ipu_tensor y = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &n);
	float xv[N], f = 3.0f;
	uint32_t cs, cl, params[3] = { 1, N / 2, 0 };
	void *img = NULL;
	uint32_t tile;
	uint64_t b0, b1;

	memcpy(&params[2], &f, 4);
	for (int i = 0; i < N; i++)
		xv[i] = (float)(i + 1);
	ipu_graph_map(g, x, 0, 0, N / 2);
	ipu_graph_map(g, x, 1, N / 2, N);
	ipu_graph_map(g, y, 0, 0, N / 2);
	ipu_graph_map(g, y, 1, N / 2, N);
	ipu_graph_set_init(g, x, xv, sizeof(xv));
	ipu_graph_set_custom_table(g, t);
	cl = ipu_graph_custom_codelet(g, "test", op, hash);
	cs = ipu_graph_add_compute_set(g, "custom");
	for (uint64_t k = 0; k < 2; k++) {
		struct ipu_slice s[2] = { { x, k * N / 2, N / 2 }, { y, k * N / 2, N / 2 } };

		ipu_graph_add_vertex(g, cs, (enum ipux_codelet)cl, s, 2, params, 3);
	}
	ipu_graph_add_program(g, ipu_step_execute(g, cs));
	if (ipu_graph_compile(g, &img, len, NULL))
		img = NULL;
	if (yoff)
		ipu_graph_tensor_location(g, y, 0, &tile, &b0, &b1, yoff);
	ipu_graph_destroy(g);
	return img;
}

TEST(table_checks_the_plugin)
{
	struct ipu_custom_table *t;
	struct ipu_custom_op_library bad = lib;
	struct ipu_custom_op badop[1] = { ops[0] };
	char err[512];
	uint32_t idx = 9;

	REQUIRE(ipu_custom_table_create(&t) == 0);
	CHECK(ipu_custom_table_add(t, &lib, hash_a, "a.so", err, sizeof(err)) == 0);
	CHECK(ipu_custom_table_count(t) == 2);
	CHECK(ipu_custom_table_find(t, "test", "Reject", 1, &idx) == &ops[1] && idx == 1);
	CHECK(ipu_custom_table_find(t, "test", "Reject", 2, NULL) == NULL);
	/* the same operator twice */
	CHECK(ipu_custom_table_add(t, &lib, hash_b, "b.so", err, sizeof(err)) == IPU_E_INVAL);
	CHECK_MSG(strstr(err, "test::Scale is already loaded"), "%s", err);
	bad.abi_version = IPU_CUSTOM_OP_ABI_VERSION + 1;
	CHECK(ipu_custom_table_add(t, &bad, hash_b, "new.so", err, sizeof(err)) == IPU_E_INVAL);
	CHECK_MSG(strstr(err, "new.so: plugin built for custom-op ABI version 3, this stack speaks version 2"),
		  "%s", err);
	bad = lib;
	bad.struct_size -= 8;
	CHECK(ipu_custom_table_add(t, &bad, hash_b, "old.so", err, sizeof(err)) == IPU_E_INVAL);
	CHECK_MSG(strstr(err, "struct_size"), "%s", err);
	bad = lib;
	badop[0].struct_size = 16;
	badop[0].name = "Other";
	bad.ops = badop;
	bad.num_ops = 1;
	CHECK(ipu_custom_table_add(t, &bad, hash_b, "op.so", err, sizeof(err)) == IPU_E_INVAL);
	CHECK_MSG(strstr(err, "operator 0 has struct_size 16"), "%s", err);
	badop[0].struct_size = sizeof(badop[0]);
	badop[0].split = 9;
	CHECK(ipu_custom_table_add(t, &bad, hash_b, "op.so", err, sizeof(err)) == IPU_E_INVAL);
	CHECK_MSG(strstr(err, "unknown split 9"), "%s", err);
	CHECK(ipu_custom_table_count(t) == 2);
	ipu_custom_table_destroy(t);
}

TEST(custom_codelet_runs)
{
	struct ipu_custom_table *t;
	struct ipu_engine_config cfg = { DEV_TILES, DEV_MEM, 2 };
	struct ipu_stream_ops so = { stream_fail, NULL };
	struct ipu_engine *e = NULL;
	const struct ipux_header *h;
	char err[512] = "";
	size_t len = 0;
	uint32_t yoff = 0;
	void *img;
	float y[N / 2];

	REQUIRE(ipu_custom_table_create(&t) == 0);
	REQUIRE(ipu_custom_table_add(t, &lib, hash_a, "a.so", err, sizeof(err)) == 0);
	img = build(t, "Scale", hash_a, &len, &yoff);
	REQUIRE(img);
	h = img;
	CHECK(h->version_minor == 1);
	REQUIRE(ipu_engine_create(&cfg, &so, &e, err, sizeof(err)) == 0);
	ipu_engine_set_custom(e, t);
	CHECK_MSG(ipu_engine_load(e, img, len, err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(ipu_engine_run(e, 0, err, sizeof(err)) == 0, "%s", err);
	CHECK(ipu_engine_read(e, 1, yoff, y, sizeof(y)) == 0);
	for (int i = 0; i < N / 2; i++)
		CHECK_MSG(y[i] == 3.0f * (float)(N / 2 + i + 1), "y[%d] = %g", N / 2 + i, y[i]);
	/* the same engine without the plugins refuses the image */
	ipu_engine_set_custom(e, NULL);
	CHECK(ipu_engine_load(e, img, len, err, sizeof(err)) == IPUX_E_CODELET_UNKNOWN);
	CHECK_MSG(strstr(err, "custom codelet test::Scale (library sha256 aa010203000000") &&
		  strstr(err, "is not loaded on this device"), "%s", err);
	ipu_engine_destroy(e);
	free(img);
	ipu_custom_table_destroy(t);
}

TEST(refusals_name_operator_and_hash)
{
	struct ipu_custom_table *t, *other;
	char err[512] = "";
	size_t len = 0;
	void *img;

	REQUIRE(ipu_custom_table_create(&t) == 0 && ipu_custom_table_create(&other) == 0);
	REQUIRE(ipu_custom_table_add(t, &lib, hash_a, "a.so", err, sizeof(err)) == 0);
	REQUIRE(ipu_custom_table_add(other, &lib, hash_b, "b.so", err, sizeof(err)) == 0);
	img = build(t, "Scale", hash_a, &len, NULL);
	REQUIRE(img);
	CHECK(ipu_exe_verify_custom(img, len, DEV_TILES, DEV_MEM, t, err, sizeof(err)) == 0);
	/* a device that loaded another build of the library */
	CHECK(ipu_exe_verify_custom(img, len, DEV_TILES, DEV_MEM, other, err, sizeof(err)) ==
	      IPUX_E_CODELET_UNKNOWN);
	CHECK_MSG(strstr(err, "compiled with library sha256 aa01") && strstr(err, "the device loaded sha256 bb01"),
		  "%s", err);
	/* an old-format reader's view: a CUSTOM section in a 1.0 image */
	((struct ipux_header *)img)->version_minor = 0;
	((struct ipux_header *)img)->checksum = ipu_exe_checksum(img, len);
	CHECK(ipu_exe_verify_custom(img, len, DEV_TILES, DEV_MEM, t, err, sizeof(err)) ==
	      IPUX_E_SECTION_UNKNOWN);
	free(img);
	/* the codelet's check() runs on every vertex at load: the builder's
	 * own verification already refuses */
	img = build(t, "Reject", hash_a, &len, NULL);
	CHECK(img == NULL);
	free(img);
	ipu_custom_table_destroy(t);
	ipu_custom_table_destroy(other);
}

TEST(check_rejects_at_device_load)
{
	/* built against a permissive plugin, loaded where the same name
	 * (and hash) has a check that refuses: the device's verifier runs it */
	static const struct ipu_custom_op strict[] = { OP("Scale", reject_check) };
	static const struct ipu_custom_op_library slib = {
		IPU_CUSTOM_OP_ABI_VERSION, sizeof(struct ipu_custom_op_library), "strict", strict, 1
	};
	struct ipu_custom_table *t, *s;
	char err[512] = "";
	size_t len = 0;
	void *img;

	REQUIRE(ipu_custom_table_create(&t) == 0 && ipu_custom_table_create(&s) == 0);
	REQUIRE(ipu_custom_table_add(t, &lib, hash_a, "a.so", err, sizeof(err)) == 0);
	REQUIRE(ipu_custom_table_add(s, &slib, hash_a, "a.so", err, sizeof(err)) == 0);
	img = build(t, "Scale", hash_a, &len, NULL);
	REQUIRE(img);
	CHECK(ipu_exe_verify_custom(img, len, DEV_TILES, DEV_MEM, s, err, sizeof(err)) == IPUX_E_PARAM_VALUE);
	CHECK_MSG(strstr(err, "vertex 0 (Scale) on tile 0: this plugin refuses every vertex"), "%s", err);
	free(img);
	ipu_custom_table_destroy(t);
	ipu_custom_table_destroy(s);
}

TEST(loader_refusals)
{
	struct ipu_custom_set *s = NULL;
	char err[512] = "";
	uint8_t h[32];

	CHECK(ipu_custom_set_open(NULL, &s, err, sizeof(err)) == 0 && s);
	CHECK(ipu_custom_table_count(ipu_custom_set_table(s)) == 0);
	ipu_custom_set_close(s);
	CHECK(ipu_custom_set_open("libfoo.so", &s, err, sizeof(err)) == IPU_E_INVAL && !s);
	CHECK_MSG(strstr(err, "give a path"), "%s", err);
	CHECK(ipu_custom_set_open("/nonexistent/lib.so", &s, err, sizeof(err)) == IPU_E_IO);
	CHECK_MSG(strstr(err, "/nonexistent/lib.so: No such file"), "%s", err);
	/* a file that is not a shared library */
	CHECK(ipu_custom_set_open("/etc/hostname", &s, err, sizeof(err)) == IPU_E_INVAL);
	CHECK_MSG(strstr(err, "custom-op library /etc/hostname:"), "%s", err);
	/* SHA-256 of an empty file */
	CHECK(ipu_custom_file_hash("/dev/null", h, err, sizeof(err)) == 0);
	CHECK(h[0] == 0xe3 && h[1] == 0xb0 && h[31] == 0x55);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(table_checks_the_plugin);
	RUN(custom_codelet_runs);
	RUN(refusals_name_operator_and_hash);
	RUN(check_rejects_at_device_load);
	RUN(loader_refusals);
	return TH_DONE();
}
