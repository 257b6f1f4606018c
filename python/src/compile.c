// SPDX-License-Identifier: MIT
/*
 * compile.c - _ipu.compile: ipu_compile() on one ONNX model (its bytes or
 * a path) with the options as keyword arguments; the executable's bytes,
 * the summary and the diagnostics come back as Python objects.  The GIL
 * is released while the compiler runs; the progress callback takes it back
 * for each pass.
 */
#include "ipu_py.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/compiler.h"

/* The messages, gathered without the GIL; the progress callable. */
struct py_compile {
	char *text;
	size_t len, cap;
	int oom;
	PyObject *progress;		/* callable or NULL */
	int failed;			/* the callable raised */
};

static void on_message(void *ctx, enum ipu_compile_message_kind kind, const char *line)
{
	struct py_compile *c = ctx;
	size_t n = strlen(line);

	(void)kind;
	if (c->oom)
		return;
	if (c->len + n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 1024;
		char *p;

		while (cap < c->len + n + 1)
			cap *= 2;
		if (!(p = realloc(c->text, cap))) {
			c->oom = 1;
			return;
		}
		c->text = p;
		c->cap = cap;
	}
	memcpy(c->text + c->len, line, n + 1);
	c->len += n;
}

static void on_progress(void *ctx, const struct ipu_compile_progress *p)
{
	struct py_compile *c = ctx;
	PyGILState_STATE g;
	PyObject *r;

	if (!c->progress || c->failed)
		return;
	g = PyGILState_Ensure();
	r = PyObject_CallFunction(c->progress, "isii", p->model, p->pass, p->rewrites, p->nodes);
	if (r)
		Py_DECREF(r);
	else
		c->failed = 1;	/* raised once the compiler returns */
	PyGILState_Release(g);
}

/* A list of str -> a NULL-terminated array of borrowed UTF-8 pointers. */
static int str_list(PyObject *list, const char *what, const char ***out, size_t *n)
{
	PyObject *seq;
	Py_ssize_t len;

	*out = NULL;
	*n = 0;
	if (list == Py_None)
		return 0;
	if (!(seq = PySequence_Fast(list, "")))
		goto type;
	len = PySequence_Fast_GET_SIZE(seq);
	*out = calloc((size_t)len + 1, sizeof(**out));
	if (!*out) {
		Py_DECREF(seq);
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t i = 0; i < len; i++) {
		PyObject *s = PySequence_Fast_GET_ITEM(seq, i);

		if (!PyUnicode_Check(s) || !((*out)[i] = PyUnicode_AsUTF8(s))) {
			Py_DECREF(seq);
			free(*out);
			*out = NULL;
			goto type;
		}
	}
	/* the strings live as long as the list's items, which the caller holds */
	Py_DECREF(seq);
	*n = (size_t)len;
	return 0;
type:
	if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s must be a list of str", what);
	}
	return -1;
}

/* {"X": [4, 3, 224, 224], ...} -> shapes (dims malloc'd in one block). */
static int shapes_of(PyObject *dict, struct ipu_compile_shape **out, int64_t **dims, size_t *n)
{
	Py_ssize_t pos = 0, k = 0, count;
	PyObject *key, *val;

	*out = NULL;
	*dims = NULL;
	*n = 0;
	if (dict == Py_None)
		return 0;
	if (!PyDict_Check(dict)) {
		PyErr_SetString(PyExc_TypeError, "input_shape must be a dict of name -> list of int");
		return -1;
	}
	count = PyDict_Size(dict);
	*out = calloc((size_t)count + 1, sizeof(**out));
	*dims = calloc((size_t)count * 8 + 1, sizeof(**dims));
	if (!*out || !*dims) {
		PyErr_NoMemory();
		return -1;
	}
	while (PyDict_Next(dict, &pos, &key, &val)) {
		PyObject *seq;
		Py_ssize_t r;

		if (!PyUnicode_Check(key) || !((*out)[k].name = PyUnicode_AsUTF8(key))) {
			PyErr_SetString(PyExc_TypeError, "input_shape's keys must be str (input names)");
			return -1;
		}
		if (!(seq = PySequence_Fast(val, "input_shape's values must be lists of int")))
			return -1;
		r = PySequence_Fast_GET_SIZE(seq);
		if (r > 8) {
			Py_DECREF(seq);
			PyErr_Format(PyExc_ValueError, "input_shape of '%s': rank %zd (at most 8)",
				     (*out)[k].name, r);
			return -1;
		}
		for (Py_ssize_t i = 0; i < r; i++) {
			long long d = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));

			if (d == -1 && PyErr_Occurred()) {
				Py_DECREF(seq);
				return -1;
			}
			(*dims)[k * 8 + i] = d;
		}
		Py_DECREF(seq);
		(*out)[k].rank = (size_t)r;
		(*out)[k].dims = &(*dims)[k * 8];
		k++;
	}
	*n = (size_t)k;
	return 0;
}

static PyObject *anchors_list(const struct ipu_compile_anchor *a, size_t n)
{
	PyObject *l = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; l && i < n; i++) {
		PyObject *shape = PyList_New(a[i].rank), *d;

		for (int k = 0; shape && k < a[i].rank; k++)
			PyList_SET_ITEM(shape, k, PyLong_FromLongLong(a[i].dims[k]));
		d = shape ? Py_BuildValue("{s:s,s:s,s:N}", "name", a[i].name, "dtype", a[i].dtype,
					  "shape", shape) : NULL;
		if (!d) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, d);
	}
	return l;
}

/* What ipu-compile --json prints, as Python objects. */
static PyObject *summary_dict(const struct ipu_compile_result *r)
{
	const struct ipu_compile_summary *s = &r->summary;
	PyObject *models = PyList_New((Py_ssize_t)s->num_models), *d;

	for (size_t i = 0; models && i < s->num_models; i++) {
		const struct ipu_compile_model_summary *m = &s->models[i];
		PyObject *ops = PyDict_New(), *md;

		for (size_t k = 0; ops && k < m->num_ops; k++) {
			PyObject *c = PyLong_FromLong(m->ops[k].count);

			if (!c || PyDict_SetItemString(ops, m->ops[k].op, c)) {
				Py_XDECREF(c);
				Py_CLEAR(ops);
				break;
			}
			Py_DECREF(c);
		}
		md = ops ? Py_BuildValue("{s:s,s:i,s:s,s:i,s:i,s:L,s:N,s:N,s:N}", "model", m->model,
					 "opset", m->opset, "precision", m->precision, "nodes", m->nodes,
					 "constants", m->constants, "constant_bytes",
					 (long long)m->constant_bytes, "inputs",
					 anchors_list(m->inputs, m->num_inputs), "outputs",
					 anchors_list(m->outputs, m->num_outputs), "ops", ops) : NULL;
		if (!md) {
			Py_DECREF(models);
			return NULL;
		}
		PyList_SET_ITEM(models, (Py_ssize_t)i, md);
	}
	if (!models)
		return NULL;
	d = Py_BuildValue("{s:{s:s,s:I,s:I,s:O},s:N,s:O,s:z}", "target", "ipu_version",
			  s->ipu_version, "tiles", s->tiles, "tile_mem", s->tile_mem, "custom",
			  s->custom ? Py_True : Py_False, "models", models, "check",
			  s->check < 0 ? Py_None : s->check ? Py_True : Py_False, "executable", r->output);
	if (d && s->has_stats) {
		const struct ipu_compile_stats *t = &s->stats;
		PyObject *st = Py_BuildValue(
			"{s:I,s:I,s:K,s:I,s:K,s:K,s:O,s:K,s:I,s:K,s:I,s:I,s:I,s:I,s:K,s:I,s:K}",
			"tiles", t->tiles, "tiles_used", t->tiles_used, "mem_max",
			(unsigned long long)t->mem_max, "mem_max_tile", t->mem_max_tile, "mem_mean",
			(unsigned long long)t->mem_mean, "mem_total", (unsigned long long)t->mem_total,
			"memory_reuse", t->memory_reuse ? Py_True : Py_False, "mem_max_no_reuse",
			(unsigned long long)t->mem_max_no_reuse, "mem_max_no_reuse_tile",
			t->mem_max_no_reuse_tile, "mem_total_no_reuse",
			(unsigned long long)t->mem_total_no_reuse, "compute_sets", t->compute_sets,
			"vertices", t->vertices, "exchanges", t->exchanges, "copies", t->copies,
			"exchange_bytes", (unsigned long long)t->exchange_bytes, "streams", t->streams,
			"image_bytes", (unsigned long long)t->image_bytes);
		PyObject *fb = PyLong_FromUnsignedLongLong(t->file_bytes);

		if (!st || !fb || PyDict_SetItemString(d, "summary", st) ||
		    PyDict_SetItemString(d, "file_bytes", fb))
			Py_CLEAR(d);
		Py_XDECREF(st);
		Py_XDECREF(fb);
	}
	return d;
}

static PyObject *diagnostics_list(const struct ipu_compile_result *r)
{
	PyObject *l = PyList_New((Py_ssize_t)r->num_diagnostics);

	for (size_t i = 0; l && i < r->num_diagnostics; i++) {
		const struct ipu_compile_diagnostic *g = &r->diagnostics[i];
		PyObject *d = Py_BuildValue("{s:s,s:i,s:z,s:z,s:s}", "severity",
					    g->severity == IPU_COMPILE_ERROR ? "error" : "warning",
					    "model", g->model, "node", g->node, "op", g->op,
					    "message", g->message);

		if (!d) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, d);
	}
	return l;
}

/* CompileError(message) with .status (negative errno), .node and .op. */
static void raise_compile_error(struct ipupy_state *st, const struct ipu_compile_result *r,
				int rc)
{
	const struct ipu_compile_diagnostic *last = NULL;
	PyObject *e;

	for (size_t i = 0; i < r->num_diagnostics; i++)
		if (r->diagnostics[i].severity == IPU_COMPILE_ERROR)
			last = &r->diagnostics[i];
	e = PyObject_CallFunction(st->compile_error, "s", r->error);
	if (!e)
		return;
	{
		PyObject *v[3] = { PyLong_FromLong(rc),
				   last && last->node ? PyUnicode_FromString(last->node) : Py_NewRef(Py_None),
				   last && last->op ? PyUnicode_FromString(last->op) : Py_NewRef(Py_None) };
		int bad = !v[0] || !v[1] || !v[2] || PyObject_SetAttrString(e, "status", v[0]) ||
			  PyObject_SetAttrString(e, "node", v[1]) || PyObject_SetAttrString(e, "op", v[2]);

		for (int i = 0; i < 3; i++)
			Py_XDECREF(v[i]);
		if (bad) {
			Py_DECREF(e);
			return;
		}
	}
	PyErr_SetObject(st->compile_error, e);
	Py_DECREF(e);
}

PyObject *ipupy_compile(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kw[] = { "model", "output", "input_shape", "batch_size", "batch_axis",
			      "precision", "fp16_skip_op_types", "fp8_skip_op_names", "fp8_params",
			      "num_of_layers_keep_fp16", "ipu_version", "tiles", "tile_mem",
			      "max_tensor_size", "export_onnx", "check", "fusion", "verbose",
			      "calibration_with_data", "calibration_loss_type", "precision_compare",
			      "precision_compare_json", "keep_executable", "progress",
			      "custom_library_so_paths", "fp8_scale", "fp8_auto_skip", NULL };
	struct ipupy_state *st = ipupy_state_of(module);
	struct ipu_compile_options o;
	struct ipu_compile_model m;
	struct ipu_compile_result *r = NULL;
	struct py_compile c;
	PyObject *model, *shape = Py_None, *fp16skip = Py_None, *fp8skip = Py_None;
	PyObject *progress = Py_None, *res = NULL;
	const char **l16 = NULL, **l8 = NULL;
	struct ipu_compile_shape *shapes = NULL;
	int64_t *dims = NULL;
	long long batch_size = 0, max_tensor = 0;
	unsigned int tiles, tile_mem;
	int fusion = 1, keep = 1, rc;
	Py_buffer buf = { 0 };

	memset(&c, 0, sizeof(c));
	ipu_compile_options_init(&o);
	tiles = o.tiles;
	tile_mem = o.tile_mem;
	memset(&m, 0, sizeof(m));
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|z$OLizOOzizIILzpppzzpzpOzzz:compile", kw,
					 &model, &o.output, &shape, &batch_size, &o.batch_axis,
					 &o.precision, &fp16skip, &fp8skip, &o.fp8_params,
					 &o.num_of_layers_keep_fp16, &o.ipu_version, &tiles, &tile_mem,
					 &max_tensor, &m.export_onnx, &o.check, &fusion, &o.verbose,
					 &o.calibration_data, &o.calibration_loss_type,
					 &o.precision_compare, &o.precision_compare_json, &keep,
					 &progress, &o.custom_library_so_paths, &o.fp8_scale,
					 &o.fp8_auto_skip))
		return NULL;
	if (progress != Py_None && !PyCallable_Check(progress)) {
		PyErr_SetString(PyExc_TypeError, "progress must be callable");
		return NULL;
	}
	if (PyUnicode_Check(model)) {
		if (!(m.path = PyUnicode_AsUTF8(model)))
			return NULL;
	} else if (PyObject_GetBuffer(model, &buf, PyBUF_SIMPLE)) {
		PyErr_Clear();
		return PyErr_Format(PyExc_TypeError, "model must be bytes or a path, not %.100s",
				    Py_TYPE(model)->tp_name);
	} else {
		m.data = buf.buf;
		m.size = (size_t)buf.len;
	}
	if (str_list(fp16skip, "fp16_skip_op_types", &l16, &o.num_fp16_skip_op_types) ||
	    str_list(fp8skip, "fp8_skip_op_names", &l8, &o.num_fp8_skip_op_names) ||
	    shapes_of(shape, &shapes, &dims, &m.num_input_shapes))
		goto out;
	m.input_shapes = shapes;
	o.models = &m;
	o.num_models = 1;
	o.batch_size = batch_size;
	o.tiles = tiles;
	o.tile_mem = tile_mem;
	o.max_tensor_size = max_tensor;
	o.fp16_skip_op_types = l16;
	o.fp8_skip_op_names = l8;
	o.no_fusion = !fusion;
	o.keep_executable = keep || !o.output;
	o.message = on_message;
	o.progress = on_progress;
	o.callback_ctx = &c;
	c.progress = progress == Py_None ? NULL : progress;
	Py_BEGIN_ALLOW_THREADS
	rc = ipu_compile(&o, &r);
	Py_END_ALLOW_THREADS
	if (c.failed)
		goto out;	/* the progress callable's exception */
	if (!r || c.oom) {
		PyErr_NoMemory();
		goto out;
	}
	if (rc < 0) {
		raise_compile_error(st, r, rc);
		goto out;
	}
	res = Py_BuildValue("(NzNNN)",
			    r->executable ? PyBytes_FromStringAndSize(r->executable,
								      (Py_ssize_t)r->executable_size) :
					    Py_NewRef(Py_None),
			    r->output, summary_dict(r),
			    PyUnicode_DecodeUTF8(c.text ? c.text : "", (Py_ssize_t)c.len, "replace"),
			    diagnostics_list(r));
out:
	ipu_compile_result_free(r);
	if (buf.obj)
		PyBuffer_Release(&buf);
	free(l16);
	free(l8);
	free(shapes);
	free(dims);
	free(c.text);
	return res;
}
