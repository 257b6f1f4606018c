/* SPDX-License-Identifier: MIT */
/* onnx_node_runner.c - see onnx_node_runner.h. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipu/onnx_io.h"
#include "onnx_node_runner.h"

#define MAXT 32

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

long node_list_dir(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	*out = NULL;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char **nn;

		if (de->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			while (n)
				free(names[--n]);
			free(names);
			closedir(d);
			return -1;
		}
		names = nn;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	return (long)n;
}

const char *node_result_name(enum node_result r)
{
	static const char *const n[] = { "pass", "unsupported", "wrong-shape",
					  "wrong-value", "no-data" };

	return n[r];
}

static int load_set(const char *dir, const char *kind, struct ir_tensor *t,
		    int *count, struct ir_error *e)
{
	char path[4096];

	*count = 0;
	for (int i = 0; i < MAXT; i++) {
		snprintf(path, sizeof(path), "%s/test_data_set_0/%s_%d.pb", dir, kind, i);
		if (access(path, R_OK))
			break;
		if (onnx_load_tensor_file(path, &t[i], NULL, e))
			return -1;
		(*count)++;
	}
	return 0;
}

static int close_enough(const struct ir_tensor *got, const struct ir_tensor *want,
			char *msg, size_t len)
{
	int64_t n = ir_numel(want->rank, want->dims);
	double rtol = want->dtype == IR_F16 || want->dtype == IR_BF16 ? 1e-2 : 1e-3;
	double atol = want->dtype == IR_F16 || want->dtype == IR_BF16 ? 1e-2 : 1e-4;

	for (int64_t i = 0; i < n; i++) {
		if (ir_dtype_is_float(want->dtype)) {
			double a = ir_get_f(got->data, got->dtype, (size_t)i);
			double b = ir_get_f(want->data, want->dtype, (size_t)i);

			if (isnan(a) && isnan(b))
				continue;
			if (isinf(b) && a == b)
				continue;
			if (!(fabs(a - b) <= atol + rtol * fabs(b))) {
				snprintf(msg, len, "element %lld: got %.9g, expected %.9g",
					 (long long)i, a, b);
				return 0;
			}
		} else {
			int64_t a = ir_get_i(got->data, got->dtype, (size_t)i);
			int64_t b = ir_get_i(want->data, want->dtype, (size_t)i);

			if (a != b) {
				snprintf(msg, len, "element %lld: got %lld, expected %lld",
					 (long long)i, (long long)a, (long long)b);
				return 0;
			}
		}
	}
	return 1;
}

static void fmt_shape(char *buf, size_t len, int dt, int rank, const int64_t *d)
{
	size_t o = (size_t)snprintf(buf, len, "%s[", ir_dtype_name(dt));

	for (int i = 0; i < rank && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "", (long long)d[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/* The old test data stores bfloat16 tensors as uint16: same bits. */
static void fix_bf16(struct ir_tensor *t, int model_dtype)
{
	if (t->dtype == IR_U16 && model_dtype == IR_BF16)
		t->dtype = IR_BF16;
}

static int shapes_match(const struct ir_graph *g, const struct ir_tensor *out,
			int nout, struct node_outcome *o)
{
	for (int i = 0; i < nout; i++) {
		const struct ir_value *v = &g->vals[g->outputs[i]];

		if (v->dtype != out[i].dtype || v->rank != out[i].rank ||
		    memcmp(v->dims, out[i].dims, (size_t)v->rank * sizeof(int64_t))) {
			char a[128], w[128];

			fmt_shape(a, sizeof(a), v->dtype, v->rank, v->dims);
			fmt_shape(w, sizeof(w), out[i].dtype, out[i].rank, out[i].dims);
			o->result = NODE_WRONG_SHAPE;
			snprintf(o->msg, sizeof(o->msg), "output %d '%s': inferred %s, expected %s",
				 i, v->name, a, w);
			return 0;
		}
	}
	return 1;
}

void run_node_test(const char *dir, struct node_outcome *o)
{
	struct ir_tensor in[MAXT], out[MAXT];
	int nin = 0, nout = 0;
	struct ir_error e = { "" };
	struct ir_graph *g = NULL, *c = NULL;
	char path[4096];
	struct ir_shape_binding b[MAXT];
	struct ir_infer_opts opts = { 0 };

	memset(o, 0, sizeof(*o));
	memset(in, 0, sizeof(in));
	memset(out, 0, sizeof(out));
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if (load_set(dir, "input", in, &nin, &e) || load_set(dir, "output", out, &nout, &e)) {
		o->result = NODE_NO_DATA;
		snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
		goto done;
	}
	g = onnx_load_file(path, &e);
	o->old_opset = g && g->opset < 7;
	if (!g || ir_normalize(g, &e)) {
		o->result = NODE_UNSUPPORTED;
		snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
		goto done;
	}
	if (g->ninputs != nin || g->noutputs != nout) {
		o->result = NODE_UNSUPPORTED;
		snprintf(o->msg, sizeof(o->msg), "test data has %d inputs/%d outputs, model %d/%d",
			 nin, nout, g->ninputs, g->noutputs);
		goto done;
	}
	for (int i = 0; i < nin; i++)
		fix_bf16(&in[i], g->vals[g->inputs[i]].dtype);
	for (int i = 0; i < nout; i++)
		fix_bf16(&out[i], g->vals[g->outputs[i]].dtype);
	for (int i = 0; i < nin; i++) {
		b[i].name = g->vals[g->inputs[i]].name;
		b[i].rank = in[i].rank;
		memcpy(b[i].dims, in[i].dims, sizeof(b[i].dims));
	}
	opts.shapes = b;
	opts.nshapes = nin;
	c = ir_graph_clone(g, &e);
	if (!c) {
		o->result = NODE_UNSUPPORTED;
		snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
		goto done;
	}
	if (ir_infer(g, &opts, &e)) {
		/* Shape parameters fed as graph inputs: the static-shape
		 * compiler needs them constant; check inference and folding
		 * with every input frozen instead. */
		if (!strstr(e.msg, "compile-time constant")) {
			o->result = NODE_UNSUPPORTED;
			snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
			goto done;
		}
		o->frozen = 1;
	} else if (!shapes_match(g, out, nout, o)) {
		goto done;
	}
	o->shape_ok = 1;
	/* Constant folding: the inputs become constants, every output must
	 * fold to the expected values. */
	for (int i = 0; i < nin; i++) {
		struct ir_value *v = &c->vals[c->inputs[i]];
		struct ir_tensor t;

		if (ir_tensor_alloc(&t, in[i].dtype, in[i].rank, in[i].dims, &e)) {
			o->result = NODE_NO_DATA;
			goto done;
		}
		memcpy(t.data, in[i].data, ir_tensor_bytes(&t));
		ir_value_set_const(v, &t);
		v->is_input = 0;
	}
	c->ninputs = 0;
	opts.nshapes = 0;
	opts.fold = 1;
	opts.fold_limit = 1 << 26;
	if (ir_infer(c, &opts, &e)) {
		o->result = NODE_UNSUPPORTED;
		snprintf(o->msg, sizeof(o->msg), "folding: %s", e.msg);
		goto done;
	}
	if (!shapes_match(c, out, nout, o))
		goto done;
	for (int i = 0; i < nout; i++) {
		const struct ir_value *v = &c->vals[c->outputs[i]];
		struct ir_tensor got;

		if (!v->data) {
			o->result = NODE_UNSUPPORTED;
			snprintf(o->msg, sizeof(o->msg), "output %d '%s' did not fold", i, v->name);
			goto done;
		}
		ir_value_view(v, &got);
		if (!close_enough(&got, &out[i], o->msg, sizeof(o->msg))) {
			char m[IR_ERROR_LEN];

			snprintf(m, sizeof(m), "%s", o->msg);
			snprintf(o->msg, sizeof(o->msg), "output %d '%.40s': %.400s", i, v->name, m);
			o->result = NODE_WRONG_VALUE;
			goto done;
		}
	}
	o->result = NODE_PASS;
done:
	for (int i = 0; i < MAXT; i++) {
		ir_tensor_free(&in[i]);
		ir_tensor_free(&out[i]);
	}
	ir_graph_free(g);
	ir_graph_free(c);
}
