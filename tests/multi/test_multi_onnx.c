// SPDX-License-Identifier: MIT
/*
 * test_multi_onnx.c - a BERT-shaped encoder exported by torch
 * (tiny_encoder.py) split over IPUs: on IPUs of 64 tiles x 64 KiB, where
 * it fits one, split over 2 and 4 the output is bit-identical to one IPU's;
 * on IPUs of 16 tiles x 56 KiB, which refuse it whole, it runs split over 4
 * (stages one by one and pipelined on a group) within 1e-5 of torch's
 * output scale.  A manual split inside the layers, where the residual
 * connections cross the boundaries beside the layer's values, gives the
 * same bits too.
 *
 * Usage: test_multi_onnx DIR   (DIR/encoder.onnx, DIR/x.npy, DIR/y.npy)
 *        test_multi_onnx DIR --full N,...
 *            the model (tiny_encoder.py --large: BERT-large-shaped) on one
 *            full-size IPU (1472 tiles x 624 KiB, refused when it does not
 *            fit) and split over N of them, within 1e-3 of torch's output
 *            scale (minutes; not part of make check)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/npy.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"
#include "mlp_model.h"

static char dir[512];
static const char *full_list;
static struct ipurt_npy xin, yref;

static struct ir_graph *load(void)
{
	char path[600];
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { 0 };
	struct ir_graph *g;

	snprintf(path, sizeof(path), "%s/encoder.onnx", dir);
	g = onnx_load_file(path, &e);
	if (!g || ir_pipeline_run(g, &po, &e)) {
		fprintf(stderr, "  %s: %s\n", path, e.msg);
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

static void put_x(struct mlp_store *s)
{
	int64_t d[IR_MAX_RANK];

	for (uint32_t i = 0; i < xin.rank; i++)
		d[i] = (int64_t)xin.dims[i];
	s->names[s->n] = strdup("x");
	ir_tensor_alloc(&s->t[s->n], IR_F32, (int)xin.rank, d, NULL);
	memcpy(s->t[s->n].data, xin.data, xin.size);
	s->n++;
}

/* The model's output y after the stages of p (nstages 1: whole). */
static int run(const struct ir_graph *g, const struct ipu_partition *p, const struct ipu_target *t,
	       float *y, char *msg, size_t len)
{
	struct mlp_store s = { 0 };
	const struct ir_tensor *out;
	int r = 0;

	put_x(&s);
	for (int k = 0; k < p->nstages && !r; k++) {
		struct ir_error e = { "" };
		struct ir_graph *sg = ipu_partition_stage(g, p, k, &e);

		if (!sg || mlp_run(sg, t, &s, &e)) {
			snprintf(msg, len, "stage %d of %d: %s", k, p->nstages, e.msg);
			r = -1;
		}
		ir_graph_free(sg);
	}
	out = r ? NULL : mlp_store_find(&s, "y");
	if (!r && (!out || ir_tensor_bytes(out) != yref.size)) {
		snprintf(msg, len, "no output y of %zu bytes", yref.size);
		r = -1;
	}
	if (!r)
		memcpy(y, out->data, yref.size);
	mlp_store_free(&s);
	return r;
}

static double err_of(const float *y)
{
	const float *ref = yref.data;
	size_t n = yref.size / 4;
	double scale = 0, m = 0;

	for (size_t i = 0; i < n; i++)
		scale = fmax(scale, fabs(ref[i]));
	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs((double)y[i] - ref[i]));
	return m / scale;
}

static int count_boundary_inputs(const struct ir_graph *g, const struct ipu_partition *p, int k)
{
	struct ir_error e = { "" };
	struct ir_graph *sg = ipu_partition_stage(g, p, k, &e);
	int n = sg ? sg->ninputs : -1;

	ir_graph_free(sg);
	return n;
}

TEST(split_bit_identical_where_one_ipu_fits)
{
	struct ir_graph *g = load();
	struct ipu_target t = { "ipu2", 64, 64 * 1024 };
	struct ipu_partition whole = { 1, { 0 } }, p;
	struct ir_error e = { "" };
	float *y1 = malloc(yref.size), *yn = malloc(yref.size);
	char msg[2048];

	REQUIRE(g && y1 && yn);
	whole.first[1] = g->nnodes;
	CHECK_MSG(run(g, &whole, &t, y1, msg, sizeof(msg)) == 0, "%s", msg);
	printf("# one IPU of 64 x 64 KiB: %.3g of torch's output scale\n", err_of(y1));
	CHECK(err_of(y1) < 1e-5);
	for (int n = 2; n <= 4; n += 2) {
		CHECK_MSG(ipu_partition_auto(g, n, &t, &p, &e) == 0, "%s", e.msg);
		CHECK_MSG(run(g, &p, &t, yn, msg, sizeof(msg)) == 0, "%s", msg);
		CHECK_MSG(!memcmp(y1, yn, yref.size), "%d IPUs differ from one: %.3g", n, err_of(yn));
		printf("# %d IPUs: stages start at nodes", n);
		for (int k = 0; k < n; k++)
			printf(" %d (%d inputs)", p.first[k], count_boundary_inputs(g, &p, k));
		printf(" of %d; bit-identical to one IPU\n", g->nnodes);
	}
	/* cut inside layers: a stage then takes more than one tensor */
	{
		char text[1024];
		int at[3] = { 33, 66, 130 }, most = 0;

		snprintf(text, sizeof(text), "- {node: '%s', ipu: 1}\n- {node: '%s', ipu: 2}\n- {node: '%s', ipu: 3}\n",
			 g->nodes[at[0]].name, g->nodes[at[1]].name, g->nodes[at[2]].name);
		CHECK_MSG(ipu_partition_yaml_text(g, text, strlen(text), "inside.yaml", 4, &p, &e) == 0,
			  "%s", e.msg);
		for (int k = 0; k < 4; k++) {
			int n = count_boundary_inputs(g, &p, k);

			most = n > most ? n : most;
		}
		CHECK_MSG(run(g, &p, &t, yn, msg, sizeof(msg)) == 0, "%s", msg);
		CHECK_MSG(!memcmp(y1, yn, yref.size), "split inside layers differs: %.3g", err_of(yn));
		printf("# 4 IPUs cut inside layers (nodes 33, 66, 130): up to %d tensors into a stage; bit-identical\n",
		       most);
		CHECK(most >= 2);
	}
	free(y1);
	free(yn);
	ir_graph_free(g);
}

TEST(four_small_ipus_run_what_one_refuses)
{
	struct ir_graph *g = load();
	struct ipu_target t = { "ipu2", 16, 56 * 1024 };
	struct ipu_partition whole = { 1, { 0 } }, p;
	struct mlp_group mg;
	struct ir_error e = { "" };
	float *y = malloc(yref.size), *yg = malloc(3 * yref.size);
	uint64_t seq[4][3], pipe = 0, serial = 0;
	char msg[2048], err[512];

	REQUIRE(g && y && yg);
	whole.first[1] = g->nnodes;
	CHECK(run(g, &whole, &t, y, msg, sizeof(msg)) < 0);
	CHECK_MSG(strstr(msg, "model does not fit one IPU"), "%s", msg);
	printf("# one IPU of 16 x 56 KiB: %.200s...\n", msg);
	REQUIRE(ipu_partition_auto(g, 4, &t, &p, &e) == 0);
	CHECK_MSG(run(g, &p, &t, y, msg, sizeof(msg)) == 0, "%s", msg);
	printf("# 4 IPUs of 16 x 56 KiB: %.3g of torch's output scale\n", err_of(y));
	CHECK(err_of(y) < 1e-5);

	/* the same stages as a group, three requests pipelined */
	CHECK_MSG(mlp_group_build(g, &p, &t, &mg, &e) == 0, "%s", e.msg);
	REQUIRE(mg.g);
	CHECK_EQ_INT(mg.ninputs, 1);
	CHECK_EQ_INT(mg.noutputs, 1);
	REQUIRE(ipu_group_start(mg.g, 2, NULL, NULL, err, sizeof(err)) == 0);
	for (int i = 0; i < 3; i++) {
		CHECK(ipu_stream_submit(ipu_group_device(mg.g, mg.inputs[0].ipu), mg.inputs[0].stream,
					xin.data, xin.size, (uint64_t)i) == 0);
		CHECK(ipu_stream_submit(ipu_group_device(mg.g, mg.outputs[0].ipu), mg.outputs[0].stream,
					(char *)yg + i * yref.size, yref.size, (uint64_t)i) == 0);
	}
	for (int k = 3; k >= 0; k--)
		for (int i = 0; i < 3; i++)
			CHECK(ipu_run(ipu_group_device(mg.g, (uint32_t)k), 0, &seq[k][i]) == 0);
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 3; i++)
			CHECK_MSG(ipu_wait(ipu_group_device(mg.g, (uint32_t)k), seq[k][i], 60ll * 1000000000,
					   err, sizeof(err)) == 0, "IPU %d run %d: %s", k, i, err);
	for (int i = 0; i < 3; i++)
		CHECK_MSG(!memcmp((char *)yg + i * yref.size, y, yref.size), "request %d differs", i);
	CHECK_EQ_INT(ipu_group_modelled(mg.g, &pipe, &serial, NULL), 3);
	printf("# group of 4, %u links, 3 requests: %llu modelled cycles pipelined, %llu one after the other\n",
	       ipu_group_num_links(mg.g), (unsigned long long)pipe, (unsigned long long)serial);
	CHECK(pipe < serial);
	ipu_group_close(mg.g);
	free(y);
	free(yg);
	ir_graph_free(g);
}

TEST(full_size_ipus)
{
	struct ir_graph *g = load();
	struct ipu_target t = { "ipu2", 1472, 638976 };
	struct ipu_partition whole = { 1, { 0 } }, p;
	struct ipu_stage_estimate est[IPU_PARTITION_MAX_IPUS];
	struct ir_error e = { "" };
	float *y = malloc(yref.size);
	char msg[2048];
	const char *c = full_list;

	REQUIRE(g && y);
	whole.first[1] = g->nnodes;
	if (run(g, &whole, &t, y, msg, sizeof(msg)))
		printf("# one IPU: %.400s\n", msg);
	else
		printf("# one IPU: %.3g of torch's output scale\n", err_of(y));
	while (*c) {
		int n = atoi(c);

		CHECK_MSG(ipu_partition_auto(g, n, &t, &p, &e) == 0, "%d IPUs: %s", n, e.msg);
		if (!e.msg[0]) {
			ipu_partition_estimate(g, &p, est);
			for (int k = 0; k < n; k++)
				printf("# %d IPUs: stage %d nodes %d..%d, about %llu MB\n", n, k, p.first[k],
				       p.first[k + 1] - 1, (unsigned long long)(est[k].bytes / 1000000));
			if (run(g, &p, &t, y, msg, sizeof(msg))) {
				CHECK_MSG(0, "%d IPUs: %s", n, msg);
			} else {
				printf("# %d IPUs: %.3g of torch's output scale\n", n, err_of(y));
				CHECK(err_of(y) < 1e-3);
			}
		}
		e.msg[0] = 0;
		while (*c && *c != ',')
			c++;
		if (*c == ',')
			c++;
	}
	free(y);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	char path[600], err[512];

	if (argc == 4 && !strcmp(argv[2], "--full"))
		full_list = argv[3];
	else if (argc != 2) {
		fprintf(stderr, "usage: test_multi_onnx DIR [--full N,...] (tiny_encoder.py's output)\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	snprintf(path, sizeof(path), "%s/x.npy", dir);
	if (ipurt_npy_read(path, &xin, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/y.npy", dir);
	if (ipurt_npy_read(path, &yref, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	if (full_list) {
		RUN(full_size_ipus);
	} else {
		RUN(split_bit_identical_where_one_ipu_fits);
		RUN(four_small_ipus_run_what_one_refuses);
	}
	ipurt_npy_free(&xin);
	ipurt_npy_free(&yref);
	return TH_DONE();
}
