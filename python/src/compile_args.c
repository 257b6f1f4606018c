// SPDX-License-Identifier: MIT
/*
 * compile_args.c - _ipu.compile_args: ipu-compile's command line run in
 * this process (ipu.compiler.compile_args: a command line as is, PopRT
 * spellings, --config-yaml, --list-ops).  Its option parser is getopt's,
 * whose state is process-wide: it runs with the GIL held.  The compilation
 * itself is ipu_compile() with the GIL released; ipu.compiler.compile()
 * calls ipu_compile() directly (compile.c).
 */
#include "ipu_py.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "options.h"

/* A str list -> a NULL-terminated argv (argv[0] "ipu-compile"), GIL held. */
static char **make_argv(PyObject *list, int *argc)
{
	Py_ssize_t i, n = PyList_GET_SIZE(list);
	char **argv = calloc((size_t)n + 2, sizeof(*argv));

	if (!argv) {
		PyErr_NoMemory();
		return NULL;
	}
	argv[0] = strdup("ipu-compile");
	for (i = 0; argv[0] && i < n; i++) {
		PyObject *s = PyList_GET_ITEM(list, i);
		const char *u;

		if (!PyUnicode_Check(s)) {
			PyErr_Format(PyExc_TypeError, "compiler arguments must be str, not %.100s",
				     Py_TYPE(s)->tp_name);
			break;
		}
		u = PyUnicode_AsUTF8(s);
		if (!u)
			break;
		argv[i + 1] = strdup(u);
		if (!argv[i + 1]) {
			PyErr_NoMemory();
			break;
		}
	}
	if (!argv[0] && !PyErr_Occurred())
		PyErr_NoMemory();
	if (PyErr_Occurred()) {
		for (i = 0; i <= n; i++)
			free(argv[i]);
		free(argv);
		return NULL;
	}
	*argc = (int)n + 1;
	return argv;
}

PyObject *ipupy_compile_args(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kw[] = { "args", NULL };
	struct ipupy_state *st = ipupy_state_of(module);
	struct ipuc_options o;
	struct ir_error e = { "" };
	char *out_text = NULL, *err_text = NULL, **argv;
	size_t out_len = 0, err_len = 0;
	FILE *out, *err;
	PyObject *list, *res = NULL;
	int argc = 0, rc, i;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!:compile_args", kw, &PyList_Type, &list))
		return NULL;
	argv = make_argv(list, &argc);
	if (!argv)
		return NULL;
	ipuc_options_init(&o);
	/* getopt's state is process-wide: parse with the GIL held */
	if (ipuc_parse_args(argc, argv, &o, &e)) {
		PyErr_SetString(st->compile_error, e.msg);
		goto out;
	}
	out = open_memstream(&out_text, &out_len);
	err = open_memstream(&err_text, &err_len);
	if (!out || !err) {
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		PyErr_NoMemory();
		goto out;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = ipuc_run(&o, out, err);
	Py_END_ALLOW_THREADS
	if (fclose(out) | fclose(err)) {
		PyErr_NoMemory();
		goto out;
	}
	/* names from the model are escaped, but a path may be in any encoding */
	res = Py_BuildValue("(iNN)", rc,
			    PyUnicode_DecodeUTF8(out_text ? out_text : "", (Py_ssize_t)out_len,
						 "replace"),
			    PyUnicode_DecodeUTF8(err_text ? err_text : "", (Py_ssize_t)err_len,
						 "replace"));
out:
	ipuc_options_free(&o);
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(out_text);
	free(err_text);
	return res;
}
