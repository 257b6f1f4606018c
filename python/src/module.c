// SPDX-License-Identifier: MIT
/*
 * module.c - the _ipu extension module: its state, exception classes and
 * the mapping from the C libraries' codes to them.
 */
#include "ipu_py.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "ipu/ipuef.h"

static struct PyModuleDef ipupy_module;

struct ipupy_state *ipupy_state_of(PyObject *module)
{
	return (struct ipupy_state *)PyModule_GetState(module);
}

struct ipupy_state *ipupy_state_of_type(PyTypeObject *tp)
{
	PyObject *m = PyType_GetModuleByDef(tp, &ipupy_module);

	return m ? ipupy_state_of(m) : NULL;
}

const char *ipupy_dtype_numpy(uint32_t dt)
{
	switch (dt) {
	case IPURT_DT_F32: return "float32";
	case IPURT_DT_F16: return "float16";
	case IPURT_DT_I32: return "int32";
	case IPURT_DT_I64: return "int64";
	case IPURT_DT_U8: return "uint8";
	case IPURT_DT_BOOL: return "bool";
	case IPURT_DT_I8: return "int8";
	default: return "invalid";
	}
}

/*
 * The one mapping from a code's class (ipu_err_errno) to a Python
 * exception class: every layer's NOMEM is a MemoryError, every timeout an
 * IpuTimeoutError, every bad argument or malformed tensor an IpuValueError.
 */
static PyObject *class_of(struct ipupy_state *st, int code)
{
	int cls = ipu_err_errno(code);

	if (cls == -ENOMEM)
		return PyExc_MemoryError;
	if (cls == -ETIMEDOUT)
		return st->timeout_error;
	if (cls == -ESHUTDOWN)
		return st->closed_error;
	/* an .ipuef file's own codes keep their class, a ValueError too */
	if (code <= IPUEF_E_IO && code > IPUEF_E_IO - 60)
		return st->file_error;
	if (cls == -EINVAL || cls == -EPROTO || cls == -EOVERFLOW)
		return st->value_error;
	return st->error;
}

PyObject *ipupy_error_for(struct ipupy_state *st, int code, const char *msg)
{
	PyObject *exc, *v;

	exc = PyObject_CallFunction(class_of(st, code), "s", msg && msg[0] ? msg : ipu_err_name(code));
	if (!exc)
		return NULL;
	v = PyLong_FromLong(code);
	if (!v || PyObject_SetAttrString(exc, "code", v))
		goto fail;
	Py_DECREF(v);
	v = PyUnicode_FromString(ipu_err_name(code));
	if (!v || PyObject_SetAttrString(exc, "code_name", v))
		goto fail;
	Py_DECREF(v);
	return exc;
fail:
	Py_XDECREF(v);
	Py_DECREF(exc);
	return NULL;
}

PyObject *ipupy_raise(struct ipupy_state *st, int code, const char *msg)
{
	PyObject *exc = ipupy_error_for(st, code, msg);

	if (exc) {
		PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
		Py_DECREF(exc);
	}
	return NULL;
}

static PyObject *error_for_code(PyObject *module, PyObject *args)
{
	const char *msg = "";
	int code;

	if (!PyArg_ParseTuple(args, "i|s", &code, &msg))
		return NULL;
	return ipupy_error_for(ipupy_state_of(module), code, msg);
}

PyObject *ipupy_raisef(struct ipupy_state *st, int code, const char *fmt, ...)
{
	char msg[IPUPY_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ipupy_raise(st, code, msg);
}

static PyObject *new_error(PyObject *module, const char *name, PyObject *bases, const char *doc)
{
	/* errors raised by Python code (or Python itself) have no C code */
	PyObject *dict = Py_BuildValue("{s:O,s:O}", "code", Py_None, "code_name", Py_None);
	PyObject *cls = dict ? PyErr_NewExceptionWithDoc(name, doc, bases, dict) : NULL;

	Py_XDECREF(bases);
	Py_XDECREF(dict);
	if (cls && PyModule_AddObjectRef(module, strrchr(name, '.') + 1, cls)) {
		Py_DECREF(cls);
		return NULL;
	}
	return cls;
}

static int add_errors(PyObject *m, struct ipupy_state *st)
{
	st->error = new_error(m, "ipu.Error", Py_NewRef(PyExc_Exception),
			      "An error of the IPU stack.\n\n"
			      "Attributes: code (the C library's negative code) and code_name\n"
			      "(its stable name, e.g. 'IPURT_E_DEVICE').");
	if (!st->error)
		return -1;
	st->value_error = new_error(m, "ipu.IpuValueError",
				    PyTuple_Pack(2, st->error, PyExc_ValueError),
				    "A tensor does not fit its anchor (name, dtype, shape, batch), "
				    "or an argument is out of range.");
	st->timeout_error = new_error(m, "ipu.IpuTimeoutError",
				      PyTuple_Pack(2, st->error, PyExc_TimeoutError),
				      "A request did not finish within its timeout.");
	st->compile_error = new_error(m, "ipu.CompileError", PyTuple_Pack(1, st->error),
				      "The compiler refused the model or an option.");
	st->file_error = new_error(m, "ipu.IpuefError",
				   PyTuple_Pack(2, st->error, PyExc_ValueError),
				   "An .ipuef file is malformed or cannot be read.");
	st->closed_error = new_error(m, "ipu.RunnerClosedError",
				     PyTuple_Pack(2, st->error, PyExc_RuntimeError),
				     "The Runner is closed, or close() has started: it takes no new "
				     "requests.");
	if (!st->value_error || !st->timeout_error || !st->compile_error || !st->file_error ||
	    !st->closed_error)
		return -1;
	return 0;
}

static int module_exec(PyObject *m)
{
	struct ipupy_state *st = ipupy_state_of(m);

	if (add_errors(m, st) || ipupy_add_runner_type(m, st) || ipupy_add_future_type(m, st) ||
	    ipupy_add_dm_type(m, st) || ipupy_add_generation_type(m, st))
		return -1;
	if (PyModule_AddIntConstant(m, "NO_BATCHING_DIM", (long)IPURT_NO_BATCHING_DIM) ||
	    PyModule_AddIntConstant(m, "WAIT_NONE", IPURT_WAIT_NONE) ||
	    PyModule_AddIntConstant(m, "WAIT_TIMEOUT", IPURT_WAIT_TIMEOUT) ||
	    PyModule_AddIntConstant(m, "WAIT_FOREVER", IPURT_WAIT_FOREVER))
		return -1;
	return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
	struct ipupy_state *st = ipupy_state_of(m);

	Py_VISIT(st->error);
	Py_VISIT(st->value_error);
	Py_VISIT(st->timeout_error);
	Py_VISIT(st->compile_error);
	Py_VISIT(st->file_error);
	Py_VISIT(st->closed_error);
	Py_VISIT(st->runner_type);
	Py_VISIT(st->future_type);
	Py_VISIT(st->dm_type);
	Py_VISIT(st->dm_device_type);
	Py_VISIT(st->generation_type);
	return 0;
}

static int module_clear(PyObject *m)
{
	struct ipupy_state *st = ipupy_state_of(m);

	Py_CLEAR(st->error);
	Py_CLEAR(st->value_error);
	Py_CLEAR(st->timeout_error);
	Py_CLEAR(st->compile_error);
	Py_CLEAR(st->file_error);
	Py_CLEAR(st->closed_error);
	Py_CLEAR(st->runner_type);
	Py_CLEAR(st->future_type);
	Py_CLEAR(st->dm_type);
	Py_CLEAR(st->dm_device_type);
	Py_CLEAR(st->generation_type);
	return 0;
}

static void module_free(void *m)
{
	module_clear((PyObject *)m);
}

static PyMethodDef module_methods[] = {
	{ "error_for_code", error_for_code, METH_VARARGS,
	  "error_for_code(code, message='') -> exception\n\n"
	  "The exception the package raises for a C library code (ipu/error.h), by\n"
	  "its class: MemoryError for every NOMEM, IpuTimeoutError, IpuValueError,\n"
	  "IpuefError, RunnerClosedError or Error, with .code and .code_name." },
	{ "read_ipuef", ipupy_read_ipuef, METH_VARARGS,
	  "read_ipuef(path_or_bytes) -> dict\n\n"
	  "Read and check an .ipuef file; return its metadata, anchors, programs,\n"
	  "tensors, producer information and blobs (what ipuef-dump --json shows)." },
	{ "compile_args", (PyCFunction)(void (*)(void))ipupy_compile_args, METH_VARARGS | METH_KEYWORDS,
	  "compile_args(args) -> (exit_code, json_text, messages)\n\n"
	  "Run ipu-compile's command line in this process (a list of str); the\n"
	  "GIL is released while it compiles." },
	{ "compile", (PyCFunction)(void (*)(void))ipupy_compile, METH_VARARGS | METH_KEYWORDS,
	  "compile(model, output=None, **options) -> (executable, path, summary, messages, diagnostics)\n\n"
	  "Compile an ONNX model (bytes or a path) with ipu_compile(); the GIL is\n"
	  "released while it runs." },
	{ NULL, NULL, 0, NULL },
};

static PyModuleDef_Slot module_slots[] = {
	{ Py_mod_exec, (void *)module_exec },
	{ 0, NULL },
};

static struct PyModuleDef ipupy_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "ipu._ipu",
	.m_doc = "The C layer of the ipu package (use ipu.runtime, ipu.compiler, ipu.ipuef).",
	.m_size = sizeof(struct ipupy_state),
	.m_methods = module_methods,
	.m_slots = module_slots,
	.m_traverse = module_traverse,
	.m_clear = module_clear,
	.m_free = module_free,
};

PyMODINIT_FUNC PyInit__ipu(void);
PyMODINIT_FUNC PyInit__ipu(void)
{
	return PyModuleDef_Init(&ipupy_module);
}
