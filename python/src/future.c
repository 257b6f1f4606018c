// SPDX-License-Identifier: MIT
/*
 * future.c - _ipu.Future: a request started by Runner.execute_async.
 *
 * It keeps the request's array views (and the Runner) alive until the
 * request is done: the device writes into the caller's output arrays, so
 * they must not be freed or resized before.  Dropping a Future that is not
 * done waits for it (with the GIL released).
 */
#include "ipu_py.h"

#include <math.h>
#include <stdio.h>

struct ipupy_future {
	PyObject_HEAD
	struct ipupy_runner *runner;	/* strong reference */
	struct ipurt_future *f;
	struct ipupy_io io;
	int finished;			/* status read once: views released */
	int status;
	char msg[IPUPY_ERRLEN];
};

static struct ipupy_state *state(PyObject *self)
{
	return ipupy_state_of_type(Py_TYPE(self));
}

PyObject *ipupy_future_new(struct ipupy_state *st, struct ipupy_runner *runner,
			   struct ipurt_future *f, struct ipupy_io *io)
{
	struct ipupy_future *self = PyObject_GC_New(struct ipupy_future, st->future_type);

	if (!self) {
		/* nobody can wait for it: wait here, then give everything back */
		Py_BEGIN_ALLOW_THREADS
		ipurt_future_free(f);
		Py_END_ALLOW_THREADS
		ipupy_io_release(io);
		return NULL;
	}
	self->runner = (struct ipupy_runner *)Py_NewRef((PyObject *)runner);
	self->f = f;
	self->io = *io;
	self->finished = 0;
	self->status = 0;
	self->msg[0] = 0;
	PyObject_GC_Track((PyObject *)self);
	return (PyObject *)self;
}

/* Record the status and let the arrays go (the request is done). */
static void finish(struct ipupy_future *self, int rc, const char *err)
{
	self->finished = 1;
	self->status = rc;
	snprintf(self->msg, sizeof(self->msg), "%s", err);
	ipupy_io_release(&self->io);
}

/* Waits that touch only the future are taken in slices of this length. */
#define WAIT_SLICE_NS 100000000LL

/*
 * Wait up to timeout_ns (< 0: the runner's timeout, which recovers a stuck
 * pipeline; forever if it has none).  Only a wait that may recover goes
 * through the runner (counted as busy, so close() waits for it); any other
 * touches the future alone, so close() may destroy the runner meanwhile
 * (which cancels the request and ends the wait).  Such a wait runs in
 * slices so that a signal (Ctrl-C) is seen when `interruptible`.  Returns 1
 * when done, 0 when still running, -1 on a Python error.
 */
static int wait_for(struct ipupy_future *self, int64_t timeout_ns, int interruptible)
{
	char err[IPUPY_ERRLEN] = "";
	struct ipupy_runner *runner = self->runner;
	int64_t left = timeout_ns, slice;
	int rc;

	if (self->finished)
		return 1;
	if (timeout_ns < 0 && runner->timeout_ns) {
		if (!ipupy_runner_enter(runner)) {
			Py_BEGIN_ALLOW_THREADS
			rc = ipurt_future_wait(self->f, -1, err, sizeof(err));
			Py_END_ALLOW_THREADS
			ipupy_runner_leave(runner);
			if (!ipurt_future_done(self->f))
				return 0;
			finish(self, rc, err);
			return 1;
		}
		/* closed or closing: the request is done or about to be cancelled */
		PyErr_Clear();
	}
	for (;;) {
		slice = left < 0 || left > WAIT_SLICE_NS ? WAIT_SLICE_NS : left;
		Py_BEGIN_ALLOW_THREADS
		rc = ipurt_future_wait(self->f, slice, err, sizeof(err));
		Py_END_ALLOW_THREADS
		if (ipurt_future_done(self->f))
			break;
		if (left >= 0 && (left -= slice) <= 0)
			return 0;	/* only the caller's deadline passed */
		if (interruptible && PyErr_CheckSignals())
			return -1;
	}
	/* done: its own status (a slice may have ended just before it finished) */
	rc = ipurt_future_wait(self->f, 0, err, sizeof(err));
	finish(self, rc, err);
	return 1;
}

static PyObject *future_wait(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kw[] = { "timeout", NULL };
	struct ipupy_future *self = (struct ipupy_future *)obj;
	PyObject *timeout = Py_None;
	int64_t ns = -1;
	int done;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:wait", kw, &timeout))
		return NULL;
	if (timeout != Py_None) {
		double s = PyFloat_AsDouble(timeout);

		if (s == -1.0 && PyErr_Occurred())
			return NULL;
		if (!(s >= 0) || s > 9.2e9) {
			ipupy_raisef(state(obj), IPURT_E_INVAL,
				     "timeout must be a number of seconds >= 0 (or None)");
			return NULL;
		}
		ns = (int64_t)llround(s * 1e9);
	}
	done = wait_for(self, ns, 1);
	if (done < 0)
		return NULL;
	if (!done) {
		ipupy_raisef(state(obj), IPURT_E_TIMEOUT, "the request is still running after %g s",
			     (double)ns * 1e-9);
		return NULL;
	}
	if (self->status)
		return ipupy_raise(state(obj), self->status, self->msg);
	Py_RETURN_NONE;
}

static PyObject *future_done(PyObject *obj, PyObject *unused)
{
	struct ipupy_future *self = (struct ipupy_future *)obj;
	int done;

	(void)unused;
	done = wait_for(self, 0, 1);
	if (done < 0)
		return NULL;
	return PyBool_FromLong(done);
}

static void future_dealloc(PyObject *obj)
{
	struct ipupy_future *self = (struct ipupy_future *)obj;
	PyTypeObject *tp = Py_TYPE(obj);

	PyObject_GC_UnTrack(obj);
	if (!self->finished) {
		PyObject *type, *value, *tb;

		/* an exception may be on its way through the frame that dropped us */
		PyErr_Fetch(&type, &value, &tb);
		wait_for(self, -1, 0);
		PyErr_Restore(type, value, tb);
	}
	Py_BEGIN_ALLOW_THREADS
	ipurt_future_free(self->f);
	Py_END_ALLOW_THREADS
	Py_CLEAR(self->runner);
	PyObject_GC_Del(obj);
	Py_DECREF(tp);
}

static int future_traverse(PyObject *obj, visitproc visit, void *arg)
{
	struct ipupy_future *self = (struct ipupy_future *)obj;

	Py_VISIT(Py_TYPE(obj));
	Py_VISIT((PyObject *)self->runner);
	return 0;
}

static PyMethodDef future_methods[] = {
	{ "wait", (PyCFunction)(void (*)(void))future_wait, METH_VARARGS | METH_KEYWORDS,
	  "wait(timeout=None)\n\n"
	  "Wait for the request (timeout in seconds; None: the runner's timeout_ns,\n"
	  "or forever if that is 0) and raise its error, if any.  The output arrays\n"
	  "hold the results when it returns.  May be called again." },
	{ "done", future_done, METH_NOARGS, "done() -> bool\n\nTrue once the request finished." },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot future_slots[] = {
	{ Py_tp_doc, "A request started by Runner.execute_async; wait() for it." },
	{ Py_tp_dealloc, future_dealloc },
	{ Py_tp_traverse, future_traverse },
	{ Py_tp_methods, future_methods },
	{ 0, NULL },
};

static PyType_Spec future_spec = {
	.name = "ipu._ipu.Future",
	.basicsize = sizeof(struct ipupy_future),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = future_slots,
};

int ipupy_add_future_type(PyObject *module, struct ipupy_state *st)
{
	st->future_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &future_spec, NULL);
	if (!st->future_type)
		return -1;
	return PyModule_AddType(module, st->future_type);
}
