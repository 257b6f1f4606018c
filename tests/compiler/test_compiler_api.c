/* SPDX-License-Identifier: MIT */
/*
 * test_compiler_api.c - ipu/compiler.h: a model compiled from its bytes
 * and from its file gives the same .ipuef as the file ipu_compile writes;
 * threads compiling at once get the serial bytes; the summary, progress,
 * messages, diagnostics and errno classes; an older caller's smaller
 * options struct.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/compiler.h"
#include "ipu/onnx_io.h"

static char dir[] = "/tmp/ipuc-apiXXXXXX";
static char model_path[256];
static void *model;
static size_t model_len;

/* Y = Relu(X W + B), X [2, 8], W [8, n], weights from a fixed sequence;
 * op `op` for the activation (an unknown one makes a model the compiler
 * refuses). */
static int write_model(const char *path, const char *op, int64_t n)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_tensor w, b;
	int64_t dx[] = { 2, 8 }, dw[] = { 8, n }, db[] = { n }, dy[] = { 2, n };
	int x, wv, bv, m, a, y, in[2], r;

	if (!g)
		return -1;
	x = ir_value_add(g, "X", NULL);
	ir_value_set_shape(&g->vals[x], IR_F32, 2, dx);
	ir_graph_add_input(g, x, NULL);
	ir_tensor_alloc(&w, IR_F32, 2, dw, NULL);
	for (int64_t i = 0; i < 8 * n; i++)
		ir_set_f(w.data, IR_F32, (size_t)i, (double)((i * 7) % 11 - 5) / 8.0);
	wv = ir_value_add(g, "W", NULL);
	ir_value_set_const(&g->vals[wv], &w);
	ir_tensor_alloc(&b, IR_F32, 1, db, NULL);
	for (int64_t i = 0; i < n; i++)
		ir_set_f(b.data, IR_F32, (size_t)i, 0.25 * (double)(i % 4));
	bv = ir_value_add(g, "B", NULL);
	ir_value_set_const(&g->vals[bv], &b);
	m = ir_value_add(g, "M", NULL);
	a = ir_value_add(g, "A", NULL);
	y = ir_value_add(g, "Y", NULL);
	ir_value_set_shape(&g->vals[y], IR_F32, 2, dy);
	in[0] = x;
	in[1] = wv;
	ir_node_add(g, "matmul", "MatMul", in, 2, &m, 1, NULL);
	in[0] = m;
	in[1] = bv;
	ir_node_add(g, "bias", "Add", in, 2, &a, 1, NULL);
	ir_node_add(g, "act", op, &a, 1, &y, 1, NULL);
	ir_graph_add_output(g, y, NULL);
	r = onnx_save_file(g, path, NULL);
	ir_graph_free(g);
	return r;
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (p = malloc((size_t)n)) && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = p ? (size_t)n : 0;
	return p;
}

/* Compiles the in-memory model in fp16 (with an output path or not;
 * check: also run it once on an in-process device against the reference). */
static int compile_mem(const char *output, int check, struct ipu_compile_result **r)
{
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .data = model, .size = model_len, .name = "mlp" };

	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	o.precision = "fp16";
	o.output = output;
	o.check = check;
	return ipu_compile(&o, r);
}

TEST(bytes_file_and_output_agree)
{
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .path = model_path };
	struct ipu_compile_result *a = NULL, *b = NULL;
	char out[300];
	void *written;
	size_t len;

	snprintf(out, sizeof(out), "%s/out.ipuef", dir);
	CHECK_EQ_INT(compile_mem(NULL, 0, &a), 0);
	REQUIRE(a && a->executable && a->executable_size > 0);
	CHECK(a->output == NULL && a->stage == IPU_COMPILE_STAGE_DONE && a->error[0] == 0);
	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	o.precision = "fp16";
	o.output = out;
	o.keep_executable = 0;
	CHECK_EQ_INT(ipu_compile(&o, &b), 0);
	REQUIRE(b);
	CHECK(b->executable == NULL && b->output && !strcmp(b->output, out));
	written = read_all(out, &len);
	REQUIRE(written);
	CHECK_MSG(len == a->executable_size && !memcmp(written, a->executable, len),
		  "file %zu bytes, memory %zu", len, a->executable_size);
	CHECK(b->summary.stats.file_bytes == len && a->summary.stats.file_bytes == len);
	/* the summary: what --json prints */
	CHECK(a->summary.num_models == 1 && !strcmp(a->summary.models[0].model, "mlp"));
	CHECK(!strcmp(b->summary.models[0].model, model_path));
	CHECK(a->summary.models[0].num_inputs == 1 &&
	      !strcmp(a->summary.models[0].inputs[0].name, "X") &&
	      !strcmp(a->summary.models[0].inputs[0].dtype, "float16") &&
	      a->summary.models[0].inputs[0].rank == 2 && a->summary.models[0].inputs[0].dims[1] == 8);
	CHECK(!strcmp(a->summary.models[0].precision, "fp16"));
	CHECK(a->summary.has_stats && a->summary.stats.tiles_used >= 1 &&
	      a->summary.stats.tiles == 1472 && a->summary.stats.image_bytes > 0 &&
	      a->summary.stats.image_bytes < len);
	CHECK(!strcmp(a->summary.ipu_version, "ipu2") && !a->summary.custom && a->summary.check == -1);
	free(written);
	remove(out);
	ipu_compile_result_free(a);
	ipu_compile_result_free(b);
}

struct worker {
	pthread_t t;
	int check;			/* each compile also runs --check */
	int checked[3];
	int rc[3];
	void *exe[3];
	size_t len[3];
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 3; i++) {
		struct ipu_compile_result *r = NULL;

		w->rc[i] = compile_mem(NULL, w->check, &r);
		w->checked[i] = r ? r->summary.check : -2;
		if (r && r->executable) {
			w->exe[i] = r->executable;
			w->len[i] = r->executable_size;
			r->executable = NULL;	/* kept: the result frees the rest */
		}
		ipu_compile_result_free(r);
	}
	return NULL;
}

TEST(threads_compile_at_once)
{
	struct ipu_compile_result *ref = NULL;
	struct worker w[4];
	int same = 0;

	memset(w, 0, sizeof(w));
	REQUIRE(compile_mem(NULL, 0, &ref) == 0);
	/* two of them run their executables on in-process devices meanwhile */
	w[1].check = w[3].check = 1;
	for (int i = 0; i < 4; i++)
		REQUIRE(pthread_create(&w[i].t, NULL, work, &w[i]) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(w[i].t, NULL);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 3; k++) {
			same += w[i].rc[k] == 0 && w[i].len[k] == ref->executable_size &&
				!memcmp(w[i].exe[k], ref->executable, ref->executable_size) &&
				w[i].checked[k] == (w[i].check ? 1 : -1);
			free(w[i].exe[k]);
		}
	CHECK_MSG(same == 12, "%d of 12 concurrent compilations (6 checked on the device) gave the serial bytes",
		  same);
	ipu_compile_result_free(ref);
}

struct seen {
	int normalize, lower, load, other;
	char log[8192];
	size_t len;
};

static void on_progress(void *ctx, const struct ipu_compile_progress *p)
{
	struct seen *s = ctx;

	s->normalize += !strcmp(p->pass, "normalize") && p->nodes > 0 && p->model == 0;
	s->lower += !strcmp(p->pass, "lower") && p->rewrites == -1;
	s->load += !strcmp(p->pass, "load");
	s->other++;
}

static void on_message(void *ctx, enum ipu_compile_message_kind kind, const char *text)
{
	struct seen *s = ctx;
	size_t n = strlen(text);

	if (kind == IPU_COMPILE_MESSAGE_LOG && s->len + n < sizeof(s->log)) {
		memcpy(s->log + s->len, text, n + 1);
		s->len += n;
	}
}

TEST(progress_and_messages)
{
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .data = model, .size = model_len };
	struct ipu_compile_result *r = NULL;
	struct seen s;

	memset(&s, 0, sizeof(s));
	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	o.verbose = 1;
	o.check = 1;
	o.progress = on_progress;
	o.message = on_message;
	o.callback_ctx = &s;
	CHECK_EQ_INT(ipu_compile(&o, &r), 0);
	REQUIRE(r);
	CHECK(s.normalize == 1 && s.lower == 1 && s.load == 1 && s.other > 8);
	CHECK_MSG(strstr(s.log, "ipu-compile: normalize ") && strstr(s.log, "check:"), "%s", s.log);
	CHECK(r->summary.check == 1);
	CHECK(!strcmp(r->summary.models[0].model, "<memory>"));
	ipu_compile_result_free(r);
}

TEST(warnings_are_diagnostics)
{
	static const int64_t dims[] = { 4, 8 };
	struct ipu_compile_shape shape = { "X", 2, dims };
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .data = model, .size = model_len, .input_shapes = &shape,
				       .num_input_shapes = 1 };
	struct ipu_compile_result *r = NULL;
	struct seen s;

	memset(&s, 0, sizeof(s));
	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	o.message = on_message;
	o.callback_ctx = &s;
	CHECK_EQ_INT(ipu_compile(&o, &r), 0);
	REQUIRE(r);
	CHECK_MSG(r->num_diagnostics == 1 && r->diagnostics[0].severity == IPU_COMPILE_WARNING &&
		  r->diagnostics[0].model == 0 &&
		  !strcmp(r->diagnostics[0].message, "--input-shape X overrides dimension 0 (2 -> 4)"),
		  "%zu: %s", r->num_diagnostics, r->num_diagnostics ? r->diagnostics[0].message : "");
	CHECK_MSG(strstr(s.log, "ipu-compile: warning: --input-shape X overrides") != NULL, "%s", s.log);
	CHECK(r->summary.models[0].inputs[0].dims[0] == 4);
	ipu_compile_result_free(r);
}

TEST(errors_and_diagnostics)
{
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .data = model, .size = model_len };
	struct ipu_compile_result *r = NULL;
	char bad_path[300];
	void *bad;
	size_t bad_len;

	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	o.precision = "fp7";
	CHECK_EQ_INT(ipu_compile(&o, &r), -EINVAL);
	REQUIRE(r);
	CHECK_MSG(strstr(r->error, "precision 'fp7'") && r->stage == IPU_COMPILE_STAGE_OPTIONS,
		  "%s", r->error);
	CHECK(r->num_diagnostics == 1 && r->diagnostics[0].severity == IPU_COMPILE_ERROR);
	ipu_compile_result_free(r);

	o.precision = NULL;
	o.size = 0;
	CHECK_EQ_INT(ipu_compile(&o, &r), -EINVAL);
	CHECK(r && strstr(r->error, "ipu_compile_options_init"));
	ipu_compile_result_free(r);
	o.size = sizeof(o);

	m.data = NULL;
	m.path = "/nonexistent/model.onnx";
	CHECK_EQ_INT(ipu_compile(&o, &r), -ENOENT);
	CHECK(r && r->stage == IPU_COMPILE_STAGE_MODEL && strstr(r->error, "/nonexistent/model.onnx"));
	ipu_compile_result_free(r);

	m.path = NULL;
	m.data = "\x01\x02junk";
	m.size = 6;
	CHECK_EQ_INT(ipu_compile(&o, &r), -EINVAL);
	CHECK(r && r->stage == IPU_COMPILE_STAGE_MODEL);
	ipu_compile_result_free(r);

	/* an operator the compiler does not have: the node and op named */
	snprintf(bad_path, sizeof(bad_path), "%s/bad.onnx", dir);
	REQUIRE(write_model(bad_path, "NoSuchOperator", 4) == 0);
	bad = read_all(bad_path, &bad_len);
	REQUIRE(bad);
	m.data = bad;
	m.size = bad_len;
	CHECK_EQ_INT(ipu_compile(&o, &r), -ENOTSUP);
	REQUIRE(r);
	CHECK_MSG(r->num_diagnostics == 1 && r->diagnostics[0].node &&
		  !strcmp(r->diagnostics[0].node, "act") && r->diagnostics[0].op &&
		  !strcmp(r->diagnostics[0].op, "NoSuchOperator") && r->diagnostics[0].model == 0,
		  "%s", r->error);
	ipu_compile_result_free(r);
	free(bad);
	remove(bad_path);

	/* the output is the model itself: refused before any work */
	m.data = NULL;
	m.path = model_path;
	o.output = model_path;
	CHECK_EQ_INT(ipu_compile(&o, &r), -EINVAL);
	CHECK(r && r->stage == IPU_COMPILE_STAGE_OPTIONS);
	ipu_compile_result_free(r);
	o.output = NULL;

	/* too small a target: the memory class (16 KiB of weights, 1 KiB) */
	REQUIRE(write_model(bad_path, "Relu", 512) == 0);
	m.path = bad_path;
	o.tiles = 1;
	o.tile_mem = 1024;
	CHECK_EQ_INT(ipu_compile(&o, &r), -ENOSPC);
	CHECK_MSG(r && r->stage == IPU_COMPILE_STAGE_LOWER, "%s", r ? r->error : "");
	ipu_compile_result_free(r);
	remove(bad_path);
}

TEST(older_callers_options)
{
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .data = model, .size = model_len };
	struct ipu_compile_result *r = NULL, *ref = NULL;

	REQUIRE(compile_mem(NULL, 0, &ref) == 0);
	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	o.precision = "fp16";
	/* fields past the size are not read: they take their defaults */
	o.executable = 0;
	o.keep_executable = 0;
	o.size = offsetof(struct ipu_compile_options, executable);
	CHECK_EQ_INT(ipu_compile(&o, &r), 0);
	CHECK(r && r->executable_size == ref->executable_size &&
	      !memcmp(r->executable, ref->executable, ref->executable_size));
	ipu_compile_result_free(r);
	/* the front end only */
	o.size = sizeof(o);
	CHECK_EQ_INT(ipu_compile(&o, &r), 0);
	CHECK(r && !r->executable && !r->summary.has_stats && r->summary.num_models == 1 &&
	      r->stage == IPU_COMPILE_STAGE_DONE);
	ipu_compile_result_free(r);
	ipu_compile_result_free(ref);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	if (!mkdtemp(dir))
		return 1;
	snprintf(model_path, sizeof(model_path), "%s/mlp.onnx", dir);
	if (write_model(model_path, "Relu", 4) || !(model = read_all(model_path, &model_len)))
		return 1;
	RUN(bytes_file_and_output_agree);
	RUN(threads_compile_at_once);
	RUN(progress_and_messages);
	RUN(warnings_are_diagnostics);
	RUN(errors_and_diagnostics);
	RUN(older_callers_options);
	free(model);
	remove(model_path);
	rmdir(dir);
	return TH_DONE();
}
