/* SPDX-License-Identifier: MIT */
/* freeze.c - graph inputs made constants from TensorProto files (freeze.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freeze.h"
#include "onnx/onnx.pb-c.h"

static int read_file(const char *path, unsigned char **buf, size_t *len, struct ir_error *e)
{
	FILE *f = fopen(path, "rb");
	long size;

	*buf = NULL;
	if (!f)
		return ir_err(e, "cannot open %s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return ir_err(e, "cannot size %s", path);
	}
	*buf = malloc(size ? (size_t)size : 1);
	if (!*buf) {
		fclose(f);
		return ir_err(e, "out of memory reading %s", path);
	}
	if (fread(*buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(*buf);
		*buf = NULL;
		return ir_err(e, "short read from %s", path);
	}
	fclose(f);
	*len = (size_t)size;
	return 0;
}

/* The graph inputs, comma-separated, for a message. */
static void input_names(const Onnx__GraphProto *g, char *out, size_t len)
{
	size_t k = 0;

	out[0] = 0;
	for (size_t i = 0; i < g->n_input && k + 1 < len; i++)
		k += (size_t)snprintf(out + k, len - k, "%s'%s'", i ? ", " : "",
				      g->input[i]->name ? g->input[i]->name : "");
}

/* Moves input `name` of g to the initializers with the tensor of file. */
static int freeze_one(Onnx__GraphProto *g, const char *name, const char *file, struct ir_error *e)
{
	unsigned char *data;
	size_t len, i, k;
	Onnx__TensorProto *tp, **inits;
	Onnx__ValueInfoProto *in = NULL;
	char *tname;

	for (i = 0; i < g->n_input; i++)
		if (g->input[i]->name && !strcmp(g->input[i]->name, name)) {
			in = g->input[i];
			break;
		}
	if (!in) {
		char names[1024];

		input_names(g, names, sizeof(names));
		return ir_err(e, "--freeze %s: the model has no input named '%s' (its inputs: %s)",
			      name, name, names);
	}
	if (read_file(file, &data, &len, e))
		return -1;
	tp = onnx__tensor_proto__unpack(NULL, len, data);
	free(data);
	if (!tp)
		return ir_err(e, "--freeze %s: %s is not a serialized ONNX TensorProto", name, file);
	if (in->type && in->type->tensor_type && in->type->tensor_type->has_elem_type &&
	    (!tp->has_data_type || tp->data_type != in->type->tensor_type->elem_type)) {
		int want = in->type->tensor_type->elem_type, got = tp->has_data_type ? tp->data_type : 0;

		onnx__tensor_proto__free_unpacked(tp, NULL);
		return ir_err(e, "--freeze %s: %s holds %s, the input is %s", name, file,
			      ir_dtype_name(got), ir_dtype_name(want));
	}
	tname = strdup(name);
	inits = realloc(g->initializer, (g->n_initializer + 1) * sizeof(*inits));
	if (!tname || !inits) {
		free(tname);
		onnx__tensor_proto__free_unpacked(tp, NULL);
		return ir_err(e, "out of memory freezing input '%s'", name);
	}
	free(tp->name);
	tp->name = tname;
	/* a default value the model gave the input is replaced */
	for (i = k = 0; i < g->n_initializer; i++) {
		if (inits[i]->name && !strcmp(inits[i]->name, name))
			onnx__tensor_proto__free_unpacked(inits[i], NULL);
		else
			inits[k++] = inits[i];
	}
	inits[k++] = tp;
	g->initializer = inits;
	g->n_initializer = k;
	for (i = k = 0; i < g->n_input; i++) {
		if (g->input[i] == in)
			continue;
		g->input[k++] = g->input[i];
	}
	g->n_input = k;
	onnx__value_info_proto__free_unpacked(in, NULL);
	return 0;
}

int ipuc_freeze_model(const char *path, char *const *freeze, int n, void **buf, size_t *len,
		      struct ir_error *e)
{
	unsigned char *data;
	size_t size;
	Onnx__ModelProto *m;
	int r = 0;

	*buf = NULL;
	if (read_file(path, &data, &size, e))
		return -1;
	m = onnx__model_proto__unpack(NULL, size, data);
	free(data);
	if (!m || !m->graph) {
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		return ir_err(e, "%s is not an ONNX model with a graph", path);
	}
	for (int i = 0; i < n && !r; i++) {
		const char *eq = strchr(freeze[i], '=');
		char *name = eq ? strndup(freeze[i], (size_t)(eq - freeze[i])) : NULL;

		if (!name) {
			r = ir_err(e, "--freeze %s: give NAME=FILE.pb", freeze[i]);
			break;
		}
		r = freeze_one(m->graph, name, eq + 1, e);
		free(name);
	}
	if (!r) {
		*len = onnx__model_proto__get_packed_size(m);
		*buf = malloc(*len ? *len : 1);
		if (*buf)
			onnx__model_proto__pack(m, *buf);
		else
			r = ir_err(e, "out of memory writing the frozen model");
	}
	onnx__model_proto__free_unpacked(m, NULL);
	return r;
}
