// SPDX-License-Identifier: MIT
/*
 * tensors.c - a request's arrays as runtime tensors: views of the
 * caller's memory through the buffer protocol (numpy arrays, memoryviews,
 * array.array), C-contiguous, never copied.
 */
#include "ipu_py.h"

#include <string.h>

/* The runtime dtype of a buffer's struct format, or IPURT_DT_INVALID. */
static uint32_t format_dtype(const char *fmt, Py_ssize_t itemsize)
{
	if (!fmt)
		fmt = "B";
	/* native or little-endian only: the device is little-endian */
	if (*fmt == '@' || *fmt == '=' || *fmt == '<')
		fmt++;
	if (!fmt[0] || fmt[1])
		return IPURT_DT_INVALID;
	switch (*fmt) {
	case 'f': return itemsize == 4 ? IPURT_DT_F32 : IPURT_DT_INVALID;
	case 'e': return itemsize == 2 ? IPURT_DT_F16 : IPURT_DT_INVALID;
	case 'b': return IPURT_DT_I8;
	case 'B': return IPURT_DT_U8;
	case '?': return IPURT_DT_BOOL;
	case 'i':
	case 'l':
	case 'q':
		return itemsize == 4 ? IPURT_DT_I32 : itemsize == 8 ? IPURT_DT_I64 : IPURT_DT_INVALID;
	default:
		return IPURT_DT_INVALID;
	}
}

/* A readable name for a format the runtime does not take. */
static const char *format_name(const char *fmt, Py_ssize_t itemsize)
{
	if (fmt && (*fmt == '>' || *fmt == '!'))
		return "big-endian";
	if (fmt && (*fmt == '@' || *fmt == '=' || *fmt == '<'))
		fmt++;
	if (fmt && fmt[0] && !fmt[1]) {
		switch (*fmt) {
		case 'd': return "float64";
		case 'h': return "int16";
		case 'H': return "uint16";
		case 'I': return itemsize == 4 ? "uint32" : "unsigned";
		case 'L':
		case 'Q': return "uint64";
		default: break;
		}
	}
	return fmt ? fmt : "?";
}

static int add_tensor(struct ipupy_state *st, PyObject *key, PyObject *value, int output,
		      struct ipupy_io *io)
{
	const char *what = output ? "output" : "input";
	uint32_t i = io->nviews;
	struct ipurt_tensor *t = &io->t[i];
	Py_buffer *v = &io->views[i];
	const char *name;
	int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (output ? PyBUF_WRITABLE : 0);
	int d;

	if (!PyUnicode_Check(key)) {
		PyErr_Format(PyExc_TypeError, "%s names must be str, not %.100s", what,
			     Py_TYPE(key)->tp_name);
		return -1;
	}
	io->names[i] = PyUnicode_AsUTF8String(key);
	if (!io->names[i])
		return -1;
	name = PyBytes_AS_STRING(io->names[i]);
	if (PyObject_GetBuffer(value, v, flags)) {
		PyObject *type, *val, *tb;

		PyErr_Fetch(&type, &val, &tb);
		if (type && PyErr_GivenExceptionMatches(type, PyExc_TypeError) &&
		    !PyObject_CheckBuffer(value)) {
			PyErr_Format(PyExc_TypeError,
				     "%s '%s': expected an array (numpy.ndarray or another buffer), got %.100s",
				     what, name, Py_TYPE(value)->tp_name);
		} else {
			PyObject *s = val ? PyObject_Str(val) : NULL;

			const char *why = s ? PyUnicode_AsUTF8(s) : NULL;

			PyErr_Clear();
			ipupy_raisef(st, IPURT_E_INVAL,
				     "%s '%s': the array cannot be used in place (%s): pass a C-contiguous%s array (numpy.ascontiguousarray)",
				     what, name, why ? why : "not a buffer", output ? ", writable" : "");
			Py_XDECREF(s);
		}
		Py_XDECREF(type);
		Py_XDECREF(val);
		Py_XDECREF(tb);
		return -1;
	}
	io->nviews++;
	if (v->ndim > (int)IPUEF_MAX_RANK) {
		ipupy_raisef(st, IPURT_E_SHAPE, "%s '%s': rank %d exceeds the runtime's limit of %u",
			     what, name, v->ndim, IPUEF_MAX_RANK);
		return -1;
	}
	t->name = name;
	t->dtype = format_dtype(v->format, v->itemsize);
	if (t->dtype == IPURT_DT_INVALID) {
		ipupy_raisef(st, IPURT_E_DTYPE,
			     "%s '%s': arrays of %s are not taken (float32, float16, int32, int64, uint8, int8 and bool are)",
			     what, name, format_name(v->format, v->itemsize));
		return -1;
	}
	t->rank = (uint32_t)v->ndim;
	for (d = 0; d < v->ndim; d++)
		t->dims[d] = (uint64_t)v->shape[d];
	if (!v->ndim && v->len != v->itemsize) {
		/* a flat buffer without shape information (e.g. bytes) */
		t->rank = 1;
		t->dims[0] = (uint64_t)(v->len / v->itemsize);
	}
	t->data = v->buf;
	return 0;
}

static int add_all(struct ipupy_state *st, PyObject *map, int output, struct ipupy_io *io)
{
	PyObject *items, *it;
	Py_ssize_t i, n;

	items = PyMapping_Items(map);
	if (!items)
		return -1;
	n = PyList_GET_SIZE(items);
	for (i = 0; i < n; i++) {
		it = PyList_GET_ITEM(items, i);
		if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 2) {
			PyErr_SetString(PyExc_TypeError, "items() must give (name, array) pairs");
			break;
		}
		if (add_tensor(st, PyTuple_GET_ITEM(it, 0), PyTuple_GET_ITEM(it, 1), output, io))
			break;
	}
	Py_DECREF(items);
	return i == n ? 0 : -1;
}

int ipupy_io_acquire(struct ipupy_state *st, PyObject *inputs, PyObject *outputs,
		     struct ipupy_io *io)
{
	Py_ssize_t nin, nout;

	memset(io, 0, sizeof(*io));
	/* a list passes PyMapping_Check, but has no items() */
	if (!PyMapping_Check(inputs) || !PyObject_HasAttrString(inputs, "items") ||
	    !PyMapping_Check(outputs) || !PyObject_HasAttrString(outputs, "items")) {
		PyErr_SetString(PyExc_TypeError,
				"inputs and outputs must be mappings of anchor name to array");
		return -1;
	}
	nin = PyMapping_Size(inputs);
	nout = PyMapping_Size(outputs);
	if (nin < 0 || nout < 0)
		return -1;
	if (nin + nout > (Py_ssize_t)IPUEF_MAX_ANCHORS) {
		ipupy_raisef(st, IPURT_E_INVAL, "%zd tensors in one request; a model has at most %u anchors",
			     nin + nout, IPUEF_MAX_ANCHORS);
		return -1;
	}
	io->t = PyMem_Calloc((size_t)(nin + nout) + 1, sizeof(*io->t));
	io->views = PyMem_Calloc((size_t)(nin + nout) + 1, sizeof(*io->views));
	io->names = PyMem_Calloc((size_t)(nin + nout) + 1, sizeof(*io->names));
	if (!io->t || !io->views || !io->names) {
		ipupy_io_release(io);
		PyErr_NoMemory();
		return -1;
	}
	if (add_all(st, inputs, 0, io))
		goto fail;
	io->nin = io->nviews;
	if (io->nin != (uint32_t)nin) {
		PyErr_SetString(PyExc_RuntimeError, "inputs changed size while being read");
		goto fail;
	}
	if (add_all(st, outputs, 1, io))
		goto fail;
	io->nout = io->nviews - io->nin;
	return 0;
fail:
	ipupy_io_release(io);
	return -1;
}

void ipupy_io_release(struct ipupy_io *io)
{
	uint32_t i;

	for (i = 0; i < io->nviews; i++)
		PyBuffer_Release(&io->views[i]);
	for (i = 0; io->names && io->names[i]; i++)
		Py_DECREF(io->names[i]);
	PyMem_Free(io->t);
	PyMem_Free(io->views);
	PyMem_Free(io->names);
	memset(io, 0, sizeof(*io));
}
