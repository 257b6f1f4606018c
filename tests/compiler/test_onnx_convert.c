/* SPDX-License-Identifier: MIT */
/*
 * test_onnx_convert.c - the exporter's opset conversion (--convert-version)
 * against ONNX's own test data: every test of the node, pytorch-converted
 * and pytorch-operator suites of Debian's libonnx-testdata that the front
 * end takes is optimised, written in opsets 7, 11, 13 and 17, and the
 * written model is run again through the node runner (import, which
 * converts the opset's forms back, inference, reference evaluator) against
 * the test's expected outputs.  A model the exporter cannot write in an
 * opset is refused with a message; a written model must give the expected
 * outputs.  Per-case table: $LOGDIR/onnx-convert.txt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"
#include "onnx_node_runner.h"

#define DATA_DIR "/usr/share/libonnx-testdata/data"

static const char *const suites[] = { "node", "pytorch-converted", "pytorch-operator" };
static const int opsets[] = { 7, 11, 13, 17 };
#define NOPSETS (sizeof(opsets) / sizeof(opsets[0]))

/* Recorded: written and passing per opset; a drop is a failure. */
static const int min_pass[NOPSETS] = { 474, 558, 617, 648 };

static int written_pass[NOPSETS], refused[NOPSETS], wrong[NOPSETS], other[NOPSETS];
static int have_data, silent;
static char tmpdir[64];

/* The test's model optimised at the test's input shapes (NULL: the front
 * end does not take it). */
static struct ir_graph *optimised(const char *dir)
{
	struct ir_shape_binding b[32];
	struct ir_pipeline_opts po = { 0 };
	struct ir_error e = { "" };
	char path[4096];
	struct ir_graph *g;
	int nb = 0;

	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	g = onnx_load_file(path, &e);
	if (!g)
		return NULL;
	/* float64 and int16 anchors are computed in float32 and int32 by the
	 * pipeline: the written model no longer has the test's types */
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		int dt = g->vals[i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs]].dtype;

		if (dt == IR_F64 || dt == IR_I16 || dt == IR_U16) {
			ir_graph_free(g);
			return NULL;
		}
	}
	for (int i = 0; i < g->ninputs && i < 32; i++) {
		struct ir_tensor t;

		snprintf(path, sizeof(path), "%s/test_data_set_0/input_%d.pb", dir, i);
		if (onnx_load_tensor_file(path, &t, NULL, &e))
			break;
		b[nb].name = g->vals[g->inputs[i]].name;
		b[nb].rank = t.rank;
		memcpy(b[nb].dims, t.dims, sizeof(b[nb].dims));
		nb++;
		ir_tensor_free(&t);
	}
	po.infer.shapes = b;
	po.infer.nshapes = nb;
	if (ir_pipeline_run(g, &po, &e)) {
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

static void run_one(const char *suite, const char *name, FILE *table)
{
	char dir[4096], model[4096], data[4096], link[4096];
	struct ir_graph *g;

	snprintf(dir, sizeof(dir), "%s/%s/%s", DATA_DIR, suite, name);
	g = optimised(dir);
	if (!g)
		return;
	snprintf(model, sizeof(model), "%s/model.onnx", tmpdir);
	snprintf(data, sizeof(data), "%s/test_data_set_0", dir);
	snprintf(link, sizeof(link), "%s/test_data_set_0", tmpdir);
	unlink(link);
	if (symlink(data, link)) {
		ir_graph_free(g);
		return;
	}
	for (size_t k = 0; k < NOPSETS; k++) {
		struct ir_error e = { "" };
		struct node_outcome o;

		if (onnx_save_file_opset(g, model, opsets[k], &e)) {
			refused[k]++;
			silent += !e.msg[0];
			if (table)
				fprintf(table, "refused      %-18s %-56s %2d %s\n", suite, name, opsets[k], e.msg);
			continue;
		}
		run_node_test(tmpdir, &o);
		if (o.result == NODE_PASS)
			written_pass[k]++;
		else if (o.result == NODE_WRONG_SHAPE || o.result == NODE_WRONG_VALUE)
			wrong[k]++;
		else
			other[k]++;
		if (table)
			fprintf(table, "%-12s %-18s %-56s %2d %s\n", node_result_name(o.result), suite, name,
				opsets[k], o.msg);
		if (o.result == NODE_WRONG_SHAPE || o.result == NODE_WRONG_VALUE)
			fprintf(stderr, "  %s/%s in opset %d: %s: %s\n", suite, name, opsets[k],
				node_result_name(o.result), o.msg);
		remove(model);
	}
	unlink(link);
	ir_graph_free(g);
}

static void run_all(void)
{
	const char *logdir = getenv("LOGDIR") ? getenv("LOGDIR") : "build/test-logs";
	char path[4096];
	FILE *table;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ipuc-convertXXXXXX");
	if (!mkdtemp(tmpdir))
		return;
	snprintf(path, sizeof(path), "%s/onnx-convert.txt", logdir);
	table = fopen(path, "w");
	for (size_t s = 0; s < sizeof(suites) / sizeof(suites[0]); s++) {
		char top[512], **names;
		long n;

		snprintf(top, sizeof(top), "%s/%s", DATA_DIR, suites[s]);
		n = node_list_dir(top, &names);
		if (n < 0)
			continue;
		have_data++;
		for (long i = 0; i < n; i++) {
			if (names[i])
				run_one(suites[s], names[i], table);
			free(names[i]);
		}
		free(names);
	}
	if (table)
		fclose(table);
	rmdir(tmpdir);
	for (size_t k = 0; k < NOPSETS; k++)
		printf("# opset %2d: written and passing %d, refused %d, wrong %d, not run %d\n",
		       opsets[k], written_pass[k], refused[k], wrong[k], other[k]);
}

TEST(written_models_compute_the_same)
{
	for (size_t k = 0; k < NOPSETS; k++)
		CHECK_MSG(!wrong[k], "opset %d: %d written models give other results", opsets[k], wrong[k]);
}

TEST(refusals_say_why)
{
	CHECK_EQ_INT(silent, 0);
}

TEST(pass_count_not_below_record)
{
	for (size_t k = 0; k < NOPSETS; k++)
		CHECK_MSG(written_pass[k] >= min_pass[k], "opset %d: %d pass, recorded %d",
			  opsets[k], written_pass[k], min_pass[k]);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	run_all();
	if (have_data != (int)(sizeof(suites) / sizeof(suites[0]))) {
		printf("# %s incomplete: install libonnx-testdata (make deps)\n0 passed, 1 failed\n", DATA_DIR);
		return 1;
	}
	RUN(written_models_compute_the_same);
	RUN(refusals_say_why);
	RUN(pass_count_not_below_record);
	return TH_DONE();
}
