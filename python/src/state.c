// SPDX-License-Identifier: MIT
/*
 * state.c - a Runner's device-resident state (a decoder's key/value
 * cache): the states the model declares, reset, read into and write from
 * the caller's arrays (ipurt_runner_*_state), the GIL released meanwhile.
 */
#include "ipu_py.h"

#include "ipu/ipuef.h"

static struct ipupy_state *state_of(PyObject *self)
{
	return ipupy_state_of_type(Py_TYPE(self));
}

PyObject *ipupy_runner_states(PyObject *obj, PyObject *unused)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	const struct ipuef_metadata *m;
	PyObject *list;

	(void)unused;
	if (ipupy_runner_enter(self))
		return NULL;
	m = ipuef_metadata(ipurt_runner_file(self->r));
	list = PyList_New(0);
	for (uint32_t i = 0; list && i < m->num_states; i++) {
		const struct ipuef_state *s = &m->states[i];
		PyObject *shape = PyTuple_New(s->rank), *d;

		for (uint32_t k = 0; shape && k < s->rank; k++)
			PyTuple_SET_ITEM(shape, k, PyLong_FromUnsignedLongLong(s->dims[k]));
		d = shape ? Py_BuildValue("{s:s,s:N,s:s,s:K}", "name", s->name, "shape", shape,
					  "dtype", ipupy_dtype_numpy(s->dtype), "size_in_bytes",
					  (unsigned long long)ipuef_state_bytes(s))
			  : NULL;
		if (!d || PyList_Append(list, d)) {
			Py_XDECREF(d);
			Py_CLEAR(list);
			break;
		}
		Py_DECREF(d);
	}
	ipupy_runner_leave(self);
	return list;
}

PyObject *ipupy_runner_reset_state(PyObject *obj, PyObject *unused)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	char err[IPUPY_ERRLEN] = "";
	int rc;

	(void)unused;
	if (ipupy_runner_enter(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = ipurt_runner_reset_state(self->r, err, sizeof(err));
	Py_END_ALLOW_THREADS
	ipupy_runner_leave(self);
	if (rc)
		return ipupy_raise(state_of(obj), rc, err);
	Py_RETURN_NONE;
}

/* read_state(name, out) / write_state(name, data): exactly the state's bytes. */
static PyObject *move_state(PyObject *obj, PyObject *args, int write)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	char err[IPUPY_ERRLEN] = "";
	const char *name;
	PyObject *arr;
	Py_buffer v;
	int rc;

	if (!PyArg_ParseTuple(args, write ? "sO:write_state" : "sO:read_state", &name, &arr))
		return NULL;
	if (PyObject_GetBuffer(arr, &v, write ? PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE))
		return NULL;
	if (ipupy_runner_enter(self)) {
		PyBuffer_Release(&v);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	if (write)
		rc = ipurt_runner_write_state(self->r, name, v.buf, (uint64_t)v.len, err, sizeof(err));
	else
		rc = ipurt_runner_read_state(self->r, name, v.buf, (uint64_t)v.len, err, sizeof(err));
	Py_END_ALLOW_THREADS
	ipupy_runner_leave(self);
	PyBuffer_Release(&v);
	if (rc)
		return ipupy_raise(state_of(obj), rc, err);
	Py_RETURN_NONE;
}

PyObject *ipupy_runner_read_state(PyObject *obj, PyObject *args)
{
	return move_state(obj, args, 0);
}

PyObject *ipupy_runner_write_state(PyObject *obj, PyObject *args)
{
	return move_state(obj, args, 1);
}
