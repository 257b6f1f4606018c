/* SPDX-License-Identifier: MIT */
/*
 * onnx_device_runner.c - one ONNX node test compiled for a small target,
 * run on the in-process device, outputs compared with the test's expected
 * outputs.  Shape parameters fed as graph inputs (integer inputs the
 * static-shape compiler needs as constants) are frozen when the first
 * attempt asks for them.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipu/ipu.h"
#include "load_image.h"
#include "ipu/lower.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"
#include "onnx_node_runner.h"

#define MAXT 32

static int load_set(const char *dir, const char *kind, struct ir_tensor *t, int *count,
		    struct ir_error *e)
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

static int matches(const struct ir_tensor *got, const struct ir_tensor *want, char *msg, size_t len)
{
	int64_t n = ir_numel(want->rank, want->dims);
	int lowp = want->dtype == IR_F16 || want->dtype == IR_BF16;
	double rtol = lowp ? 1e-2 : 1e-3, atol = lowp ? 1e-2 : 1e-4;

	for (int64_t i = 0; i < n; i++) {
		if (ir_dtype_is_float(want->dtype)) {
			double a = ir_get_f(got->data, got->dtype, (size_t)i);
			double b = ir_get_f(want->data, want->dtype, (size_t)i);

			if ((isnan(a) && isnan(b)) || (isinf(b) && a == b))
				continue;
			if (!(fabs(a - b) <= atol + rtol * fabs(b))) {
				snprintf(msg, len, "element %lld: got %.9g, expected %.9g", (long long)i, a, b);
				return 0;
			}
		} else if (ir_get_i(got->data, got->dtype, (size_t)i) != ir_get_i(want->data, want->dtype, (size_t)i)) {
			snprintf(msg, len, "element %lld: got %lld, expected %lld", (long long)i,
				 (long long)ir_get_i(got->data, got->dtype, (size_t)i),
				 (long long)ir_get_i(want->data, want->dtype, (size_t)i));
			return 0;
		}
	}
	return 1;
}

/* Compiles g (inputs bound to the test's shapes, `freeze` inputs made
 * constants) and runs it. */
static int compile(struct ir_graph *g, struct ir_tensor *in, int nin, int freeze,
		   struct ir_error *e)
{
	struct ir_shape_binding b[MAXT];
	struct ir_pipeline_opts po;
	int nb = 0, k = 0;

	memset(&po, 0, sizeof(po));
	for (int i = 0; i < nin; i++) {
		struct ir_value *v = &g->vals[g->inputs[i]];

		if (freeze && (ir_dtype_is_int(v->dtype) || (freeze > 1 && i > 0)) && i < nin) {
			struct ir_tensor t;

			if (ir_tensor_alloc(&t, in[i].dtype, in[i].rank, in[i].dims, e))
				return -1;
			memcpy(t.data, in[i].data, ir_tensor_bytes(&t));
			ir_value_set_const(v, &t);
			v->is_input = 0;
			continue;
		}
		b[nb].name = v->name;
		b[nb].rank = in[i].rank;
		memcpy(b[nb].dims, in[i].dims, sizeof(b[nb].dims));
		nb++;
	}
	for (int i = 0; i < g->ninputs; i++)
		if (g->vals[g->inputs[i]].is_input)
			g->inputs[k++] = g->inputs[i];
	g->ninputs = k;
	po.infer.shapes = b;
	po.infer.nshapes = nb;
	return ir_pipeline_run(g, &po, e);
}

/* The type the compiler gives a value of type dt (the wide-types pass:
 * float64 -> float32, int16/uint16 -> int32). */
static int device_type(int dt)
{
	return dt == IR_F64 ? IR_F32 : dt == IR_I16 || dt == IR_U16 ? IR_I32 : dt;
}

/* Converts t to dtype dt, as a caller does at the host boundary; 1 if a
 * value does not fit dt (the test then cannot run converted). */
static int convert(struct ir_tensor *t, int dt, struct ir_error *e)
{
	struct ir_tensor c;
	int64_t n = ir_numel(t->rank, t->dims);

	if (t->dtype == dt)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		double v = ir_get_f(t->data, t->dtype, (size_t)i);

		if (dt == IR_F32 && isfinite(v) && fabs(v) > FLT_MAX) {
			ir_err(e, "input value %g is outside float32's range (float64 is computed in float32)", v);
			return 1;
		}
	}
	if (ir_tensor_alloc(&c, dt, t->rank, t->dims, e))
		return -1;
	for (int64_t i = 0; i < n; i++) {
		if (ir_dtype_is_float(dt))
			ir_set_f(c.data, dt, (size_t)i, ir_get_f(t->data, t->dtype, (size_t)i));
		else
			ir_set_i(c.data, dt, (size_t)i, ir_get_i(t->data, t->dtype, (size_t)i));
	}
	ir_tensor_free(t);
	*t = c;
	return 0;
}

/* A first attempt failed because a graph input must be a constant. */
static int needs_const(const char *msg)
{
	return strstr(msg, "compile-time constant") || strstr(msg, "must be constant") ||
	       strstr(msg, "must be a constant") || strstr(msg, "must be constants");
}

void run_node_test_device(const char *dir, const struct ipu_target *t, struct node_outcome *o)
{
	struct ir_tensor in[MAXT], want[MAXT], got[MAXT];
	int32_t counts[MAXT] = { 0 };
	int nin = 0, nout = 0;
	struct ir_error e = { "" };
	struct ir_graph *g = NULL;
	char path[4096], spec[128], err[512];
	char *names[MAXT] = { 0 };
	void *image = NULL;
	size_t len = 0;
	struct ipu_lower_info info;
	struct ipu_device *d = NULL;
	int have_info = 0;

	memset(o, 0, sizeof(*o));
	memset(in, 0, sizeof(in));
	memset(want, 0, sizeof(want));
	memset(got, 0, sizeof(got));
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if (load_set(dir, "input", in, &nin, &e) || load_set(dir, "output", want, &nout, &e)) {
		o->result = NODE_NO_DATA;
		snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
		goto done;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		ir_graph_free(g);
		g = onnx_load_file(path, &e);
		if (!g)
			break;
		if (g->ninputs != nin || g->noutputs != nout) {
			snprintf(e.msg, sizeof(e.msg), "test data does not match the model's inputs/outputs");
			ir_graph_free(g);
			g = NULL;
			break;
		}
		for (int i = 0; i < nin; i++) {
			free(names[i]);
			names[i] = strdup(g->vals[g->inputs[i]].name);
			/* the old test data stores bfloat16 as uint16 */
			if (in[i].dtype == IR_U16 && g->vals[g->inputs[i]].dtype == IR_BF16)
				in[i].dtype = IR_BF16;
		}
		for (int i = 0; i < nout; i++)
			if (want[i].dtype == IR_U16 && g->vals[g->outputs[i]].dtype == IR_BF16)
				want[i].dtype = IR_BF16;
		if (compile(g, in, nin, attempt, &e) == 0) {
			if (ipu_lower_image(&g, 1, t, &image, &len, &info, &e) == 0) {
				have_info = 1;
				break;
			}
		}
		o->frozen = 1;
		if (!needs_const(e.msg) || attempt == 2) {
			ir_graph_free(g);
			g = NULL;
			break;
		}
	}
	if (!g) {
		o->result = NODE_UNSUPPORTED;
		snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
		goto done;
	}
	for (int i = 0; i < nout; i++) {
		const struct ir_value *v = &g->vals[g->outputs[i]];

		/* a bounded output's dim 0 is an upper bound of the expected one */
		int b = v->bounded && v->rank && want[i].rank == v->rank && want[i].dims[0] <= v->dims[0];

		if (v->dtype != device_type(want[i].dtype) || v->rank != want[i].rank ||
		    (!b && v->rank && v->dims[0] != want[i].dims[0]) ||
		    (v->rank > 1 && memcmp(v->dims + 1, want[i].dims + 1, (size_t)(v->rank - 1) * sizeof(int64_t)))) {
			o->result = NODE_WRONG_SHAPE;
			snprintf(o->msg, sizeof(o->msg), "output %d: inferred type/shape differs", i);
			goto done;
		}
	}
	snprintf(spec, sizeof(spec), "model:tiles=%u,tile_mem=%u,workers=1", t->tiles, t->tile_mem);
	if (ipu_open(spec, &d, err, sizeof(err)) || ipu_attach(d) ||
	    test_load_image(d, image, len, err, sizeof(err))) {
		o->result = NODE_WRONG_VALUE;
		snprintf(o->msg, sizeof(o->msg), "device refused the executable: %s", err);
		goto done;
	}
	{
		uint32_t na;
		const struct ipuef_anchor *an = ipu_lower_anchors(&info, &na);

		/* test input i feeds the model input named names[i] */
		for (uint32_t a = 0; a < na; a++) {
			if (an[a].direction != IPUEF_INPUT)
				continue;
			for (int i = 0; i < nin; i++)
				if (names[i] && !strcmp(names[i], an[a].name)) {
					int r = convert(&in[i], device_type(in[i].dtype), &e);

					if (r) {
						o->result = r > 0 ? NODE_UNSUPPORTED : NODE_NO_DATA;
						snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
						goto done;
					}
					ipu_stream_submit(d, an[a].stream_id, in[i].data,
							  ir_tensor_bytes(&in[i]), 0);
				}
		}
		for (int i = 0; i < nout; i++) {
			const struct ir_value *v = &g->vals[g->outputs[i]];

			if (ir_tensor_alloc(&got[i], v->dtype, v->rank, v->dims, &e))
				continue;
			for (uint32_t a = 0; a < na; a++) {
				size_t l = strlen(v->name);

				if (!strcmp(an[a].name, v->name) && an[a].direction == IPUEF_OUTPUT)
					ipu_stream_submit(d, an[a].stream_id, got[i].data, ir_tensor_bytes(&got[i]), 0);
				/* a bounded output's run-time count (ipuef-format.md) */
				if (v->bounded && !strncmp(an[a].name, v->name, l) &&
				    !strcmp(an[a].name + l, ":count") && an[a].direction == IPUEF_OUTPUT)
					ipu_stream_submit(d, an[a].stream_id, &counts[i], sizeof(counts[i]), 0);
			}
		}
	}
	if (ipu_run_sync(d, 0, err, sizeof(err))) {
		o->result = NODE_WRONG_VALUE;
		snprintf(o->msg, sizeof(o->msg), "run failed: %s", err);
		goto done;
	}
	for (int i = 0; i < nout; i++) {
		char m[400];

		if (got[i].data && g->vals[g->outputs[i]].bounded && got[i].rank &&
		    counts[i] >= 0 && counts[i] < got[i].dims[0])
			got[i].dims[0] = counts[i];	/* the rows the count says are data */
		if (!got[i].data || !matches(&got[i], &want[i], m, sizeof(m))) {
			o->result = NODE_WRONG_VALUE;
			snprintf(o->msg, sizeof(o->msg), "output %d: %s", i, got[i].data ? m : "missing");
			goto done;
		}
	}
	o->result = NODE_PASS;
done:
	if (d)
		ipu_close(d);
	free(image);
	if (have_info)
		ipu_lower_info_free(&info);
	for (int i = 0; i < MAXT; i++) {
		free(names[i]);
		ir_tensor_free(&in[i]);
		ir_tensor_free(&want[i]);
		ir_tensor_free(&got[i]);
	}
	ir_graph_free(g);
}
