// SPDX-License-Identifier: MIT
/*
 * runner.c - _ipu.Runner: one ModelRunner (libipurt) with its model.
 *
 * execute() passes views of the caller's arrays straight to
 * ipurt_runner_execute and waits with the GIL released, so several Python
 * threads can keep the device busy and the request path makes no copies.
 */
#include "ipu_py.h"

#include <string.h>
#include <structmember.h>

#include "ipu/ipuef.h"

static struct ipupy_state *state(PyObject *self)
{
	return ipupy_state_of_type(Py_TYPE(self));
}

static int closed(struct ipupy_runner *self)
{
	if (self->r)
		return 0;
	PyErr_SetString(state((PyObject *)self)->closed_error, "the Runner is closed");
	return 1;
}

int ipupy_runner_enter(struct ipupy_runner *self)
{
	int closing;

	if (closed(self))
		return -1;
	pthread_mutex_lock(&self->lock);
	closing = self->closing;
	if (!closing)
		self->busy++;
	pthread_mutex_unlock(&self->lock);
	if (closing) {
		PyErr_SetString(state((PyObject *)self)->closed_error,
				"the Runner is closing: close() was called, no new requests are taken");
		return -1;
	}
	return 0;
}

void ipupy_runner_leave(struct ipupy_runner *self)
{
	pthread_mutex_lock(&self->lock);
	if (--self->busy == 0 && self->closing)
		pthread_cond_broadcast(&self->cv);
	pthread_mutex_unlock(&self->lock);
}

/* Open the model from a path (str, bytes path, os.PathLike) or its bytes. */
static int open_model(struct ipupy_state *st, PyObject *model, struct ipuef_file **f)
{
	char err[IPUPY_ERRLEN] = "";
	int rc;

	if (PyUnicode_Check(model) || PyObject_HasAttrString(model, "__fspath__")) {
		PyObject *path = NULL;

		if (!PyUnicode_FSConverter(model, &path))
			return -1;
		Py_BEGIN_ALLOW_THREADS
		rc = ipuef_open(PyBytes_AS_STRING(path), f, err, sizeof(err));
		Py_END_ALLOW_THREADS
		Py_DECREF(path);
	} else if (PyObject_CheckBuffer(model)) {
		Py_buffer v;

		if (PyObject_GetBuffer(model, &v, PyBUF_SIMPLE))
			return -1;
		Py_BEGIN_ALLOW_THREADS
		rc = ipuef_open_mem(v.buf, (size_t)v.len, f, err, sizeof(err));
		Py_END_ALLOW_THREADS
		PyBuffer_Release(&v);
	} else {
		PyErr_Format(PyExc_TypeError,
			     "model must be a path or the bytes of an .ipuef file, not %.100s",
			     Py_TYPE(model)->tp_name);
		return -1;
	}
	if (rc) {
		ipupy_raise(st, rc, err);
		return -1;
	}
	return 0;
}

static int runner_init(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kw[] = { "model", "timeout_ns", "validate_io_params", "batching_dim",
			      "ring_buffer_size", "wait_policy", "wait_timeout_ns", "device",
			      "device_manager", "custom_ops", NULL };
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	struct ipupy_state *st = state(obj);
	unsigned long long timeout_ns = 0, batching_dim = IPURT_NO_BATCHING_DIM;
	unsigned int ring = 16;
	int validate = 1, policy = IPURT_WAIT_NONE, rc;
	long long wait_ns = 0;
	const char *device = NULL, *custom_ops = NULL;
	char err[IPUPY_ERRLEN] = "", *spec = NULL;
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	struct ipuef_file *f = NULL;
	PyObject *model, *dm = Py_None;

	if (self->r || self->closing) {
		PyErr_SetString(PyExc_RuntimeError, "Runner.__init__ called twice");
		return -1;
	}
	if (!self->sync_ready) {
		if (pthread_mutex_init(&self->lock, NULL))
			return PyErr_NoMemory(), -1;
		if (pthread_cond_init(&self->cv, NULL)) {
			pthread_mutex_destroy(&self->lock);
			return PyErr_NoMemory(), -1;
		}
		self->sync_ready = 1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$KpKIiLzOz", kw, &model, &timeout_ns,
					 &validate, &batching_dim, &ring, &policy, &wait_ns,
					 &device, &dm, &custom_ops))
		return -1;
	if (dm != Py_None && !PyObject_TypeCheck(dm, st->dm_type)) {
		PyErr_Format(PyExc_TypeError, "device_manager must be an ipu.runtime.DeviceManager, not %.100s",
			     Py_TYPE(dm)->tp_name);
		return -1;
	}
	if (batching_dim > IPURT_NO_BATCHING_DIM ||
	    (batching_dim != IPURT_NO_BATCHING_DIM && batching_dim >= IPUEF_MAX_RANK)) {
		ipupy_raisef(st, IPURT_E_INVAL, "batching_dim %llu: must be < %u (or NO_BATCHING_DIM)",
			     batching_dim, IPUEF_MAX_RANK);
		return -1;
	}
	if (policy < IPURT_WAIT_NONE || policy > IPURT_WAIT_FOREVER || wait_ns < 0) {
		ipupy_raisef(st, IPURT_E_INVAL, "device wait: policy %d, timeout %lld ns out of range",
			     policy, wait_ns);
		return -1;
	}
	if (timeout_ns > INT64_MAX) {
		ipupy_raisef(st, IPURT_E_INVAL, "timeout_ns %llu exceeds %lld", timeout_ns,
			     (long long)INT64_MAX);
		return -1;
	}
	if (open_model(st, model, &f))
		return -1;
	ipurt_config_init(&cfg);
	cfg.timeout_ns = timeout_ns;
	cfg.validate_io_params = validate;
	cfg.batching_dim = (uint32_t)batching_dim;
	cfg.ring_buffer_size = ring;
	cfg.wait_policy = (enum ipurt_wait_policy)policy;
	cfg.wait_timeout_ns = wait_ns;
	cfg.device = device && device[0] ? device : NULL;
	cfg.dm = dm != Py_None ? ipupy_dm_handle(dm) : NULL;
	if (custom_ops && custom_ops[0]) {
		/* the plugins go to the in-process devices (ipu/custom_ops.h) */
		rc = ipurt_custom_ops_spec(cfg.device, f, custom_ops, &spec, err, sizeof(err));
		if (rc) {
			ipuef_close(f);
			ipupy_raise(st, rc, err);
			return -1;
		}
		cfg.device = spec;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = ipurt_runner_create_from(f, &cfg, &r, err, sizeof(err));
	Py_END_ALLOW_THREADS
	free(spec);
	if (rc) {
		ipuef_close(f);
		ipupy_raise(st, rc, err);
		return -1;
	}
	self->r = r;
	self->file = f;
	self->timeout_ns = timeout_ns;
	if (dm != Py_None)
		self->dm = Py_NewRef(dm);
	return 0;
}

static void runner_close_handle(struct ipupy_runner *self)
{
	struct ipurt_runner *r = self->r;
	struct ipuef_file *f = self->file;

	self->r = NULL;
	self->file = NULL;
	/* cancels what is queued: every Future of this runner is then done */
	Py_BEGIN_ALLOW_THREADS
	ipurt_runner_destroy(r);
	ipuef_close(f);
	Py_END_ALLOW_THREADS
}

static void runner_dealloc(PyObject *obj)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	PyTypeObject *tp = Py_TYPE(obj);

	PyObject_GC_UnTrack(obj);
	if (self->weakrefs)
		PyObject_ClearWeakRefs(obj);
	if (self->r)
		runner_close_handle(self);
	if (self->sync_ready) {
		pthread_cond_destroy(&self->cv);
		pthread_mutex_destroy(&self->lock);
	}
	Py_CLEAR(self->dm);
	tp->tp_free(obj);
	Py_DECREF(tp);
}

static int runner_traverse(PyObject *obj, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(obj));
	Py_VISIT(((struct ipupy_runner *)obj)->dm);
	return 0;
}

/*
 * close(): from the moment it starts, new calls are refused, so threads
 * that keep submitting cannot starve it; it waits (GIL released) only for
 * the calls already inside the runtime, then destroys the handle, which
 * cancels what execute_async queued.  A second close() waits for the first.
 */
static PyObject *runner_close(PyObject *obj, PyObject *unused)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	int first;

	(void)unused;
	if (!self->sync_ready)
		Py_RETURN_NONE;		/* never opened */
	pthread_mutex_lock(&self->lock);
	first = !self->closing;
	self->closing = 1;
	pthread_cond_broadcast(&self->cv);	/* a generation waiting for Python stops */
	pthread_mutex_unlock(&self->lock);
	Py_BEGIN_ALLOW_THREADS
	pthread_mutex_lock(&self->lock);
	if (first) {
		while (self->busy)
			pthread_cond_wait(&self->cv, &self->lock);
	} else {
		while (!self->closed)
			pthread_cond_wait(&self->cv, &self->lock);
	}
	pthread_mutex_unlock(&self->lock);
	Py_END_ALLOW_THREADS
	if (!first)
		Py_RETURN_NONE;
	if (self->r)
		runner_close_handle(self);
	pthread_mutex_lock(&self->lock);
	self->closed = 1;
	pthread_cond_broadcast(&self->cv);
	pthread_mutex_unlock(&self->lock);
	Py_RETURN_NONE;
}

static PyObject *runner_enter(PyObject *obj, PyObject *unused)
{
	(void)unused;
	if (closed((struct ipupy_runner *)obj))
		return NULL;
	return Py_NewRef(obj);
}

static PyObject *runner_exit(PyObject *obj, PyObject *args)
{
	(void)args;
	return runner_close(obj, NULL);
}

static PyObject *runner_execute(PyObject *obj, PyObject *args)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	struct ipupy_state *st = state(obj);
	PyObject *inputs, *outputs;
	char err[IPUPY_ERRLEN] = "";
	struct ipupy_io io;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:execute", &inputs, &outputs) || closed(self))
		return NULL;
	if (ipupy_io_acquire(st, inputs, outputs, &io))
		return NULL;
	if (ipupy_runner_enter(self)) {
		ipupy_io_release(&io);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = ipurt_runner_execute(self->r, io.t, io.nin, io.t + io.nin, io.nout, err,
				  sizeof(err));
	Py_END_ALLOW_THREADS
	ipupy_runner_leave(self);
	ipupy_io_release(&io);
	if (rc)
		return ipupy_raise(st, rc, err);
	Py_RETURN_NONE;
}

static PyObject *runner_execute_async(PyObject *obj, PyObject *args)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	struct ipupy_state *st = state(obj);
	PyObject *inputs, *outputs;
	char err[IPUPY_ERRLEN] = "";
	struct ipurt_future *f = NULL;
	struct ipupy_io io;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:execute_async", &inputs, &outputs) || closed(self))
		return NULL;
	if (ipupy_io_acquire(st, inputs, outputs, &io))
		return NULL;
	if (ipupy_runner_enter(self)) {
		ipupy_io_release(&io);
		return NULL;
	}
	/* may block while the rings are full */
	Py_BEGIN_ALLOW_THREADS
	rc = ipurt_runner_execute_async(self->r, io.t, io.nin, io.t + io.nin, io.nout, &f, err,
					sizeof(err));
	Py_END_ALLOW_THREADS
	ipupy_runner_leave(self);
	if (rc) {
		ipupy_io_release(&io);
		return ipupy_raise(st, rc, err);
	}
	return ipupy_future_new(st, self, f, &io);
}

/* [{name, shape, dtype, batch_dim, size_in_bytes}] of inputs or outputs. */
static PyObject *io_list(PyObject *obj, PyObject *args, PyObject *kwargs, int outputs)
{
	static char *kw[] = { "subgraph", "batch", NULL };
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	struct ipurt_tensor *t;
	uint32_t *bd, nin, i, k;
	int subgraph = -1, n;
	unsigned long long rows = 0;
	PyObject *list = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$iK", kw, &subgraph, &rows) ||
	    closed(self))
		return NULL;
	t = PyMem_Calloc(IPUEF_MAX_ANCHORS, sizeof(*t));
	bd = PyMem_Calloc(IPUEF_MAX_ANCHORS, sizeof(*bd));
	if (!t || !bd) {
		PyErr_NoMemory();
		goto out;
	}
	n = ipurt_runner_io(self->r, subgraph, rows, t, bd, IPUEF_MAX_ANCHORS, &nin);
	if (n < 0) {
		ipupy_raise(state(obj), n, "cannot list the model's anchors");
		goto out;
	}
	list = PyList_New(0);
	for (i = outputs ? nin : 0; list && i < (outputs ? (uint32_t)n : nin); i++) {
		PyObject *shape = PyTuple_New(t[i].rank), *d;
		uint64_t bytes = ipurt_dtype_size(t[i].dtype);

		for (k = 0; shape && k < t[i].rank; k++) {
			PyTuple_SET_ITEM(shape, k, PyLong_FromUnsignedLongLong(t[i].dims[k]));
			bytes *= t[i].dims[k];
		}
		d = shape ? Py_BuildValue("{s:s,s:N,s:s,s:O,s:K}", "name", t[i].name, "shape",
					  shape, "dtype", ipupy_dtype_numpy(t[i].dtype),
					  "batch_dim",
					  bd[i] == IPUEF_NO_BATCH_DIM ? Py_None
								      : PyLong_FromUnsignedLong(bd[i]),
					  "size_in_bytes", (unsigned long long)bytes)
			  : NULL;
		if (!d || PyList_Append(list, d))
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
out:
	PyMem_Free(t);
	PyMem_Free(bd);
	return list;
}

static PyObject *runner_inputs(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	return io_list(obj, args, kwargs, 0);
}

static PyObject *runner_outputs(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	return io_list(obj, args, kwargs, 1);
}

static PyObject *runner_device(PyObject *obj, void *unused)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	struct ipu_device_info info;
	int rc;

	(void)unused;
	if (closed(self))
		return NULL;
	rc = ipu_info(ipurt_runner_device(self->r), &info);
	if (rc)
		return ipupy_raise(state(obj), rc, "cannot read the device's information");
	return Py_BuildValue("{s:s,s:s,s:I,s:I,s:s,s:s,s:I}", "name", info.name, "spec",
			     info.path, "num_tiles", info.num_tiles, "tile_mem", info.tile_mem,
			     "ipu_version", info.version_name, "serial", info.serial, "workers",
			     info.workers);
}

static PyObject *runner_model(PyObject *obj, void *unused)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	const struct ipuef_metadata *m;

	(void)unused;
	if (closed(self))
		return NULL;
	m = ipuef_metadata(ipurt_runner_file(self->r));
	return Py_BuildValue("{s:s,s:I,s:I,s:I}", "ipu_version", m->ipu_version, "num_tiles",
			     m->num_tiles, "tile_mem", m->tile_mem, "batch_size", m->batch_size);
}

static PyObject *runner_counters(PyObject *obj, void *unused)
{
	struct ipupy_runner *self = (struct ipupy_runner *)obj;
	struct ipu_counters c;
	int rc;

	(void)unused;
	if (closed(self))
		return NULL;
	rc = ipu_counters(ipurt_runner_device(self->r), &c);
	if (rc)
		return ipupy_raise(state(obj), rc, "cannot read the device's counters");
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}",
			     "programs_run", (unsigned long long)c.programs_run,
			     "steps", (unsigned long long)c.steps,
			     "compute_sets", (unsigned long long)c.compute_sets,
			     "vertices", (unsigned long long)c.vertices,
			     "cycles", (unsigned long long)c.cycles,
			     "compute_cycles", (unsigned long long)c.compute_cycles,
			     "exchange_cycles", (unsigned long long)c.exchange_cycles,
			     "sync_cycles", (unsigned long long)c.sync_cycles,
			     "stream_cycles", (unsigned long long)c.stream_cycles,
			     "exchange_bytes", (unsigned long long)c.exchange_bytes,
			     "stream_bytes_in", (unsigned long long)c.stream_bytes_in,
			     "stream_bytes_out", (unsigned long long)c.stream_bytes_out,
			     "stream_copies", (unsigned long long)c.stream_copies,
			     "stream_stalls", (unsigned long long)c.stream_stalls,
			     "errors", (unsigned long long)c.errors);
}

static PyObject *runner_is_closed(PyObject *obj, void *unused)
{
	(void)unused;
	return PyBool_FromLong(!((struct ipupy_runner *)obj)->r);
}

static PyMethodDef runner_methods[] = {
	{ "get_states", ipupy_runner_states, METH_NOARGS,
	  "get_states() -> list of dict\n\n"
	  "The model's device-resident states (name, shape, dtype, size_in_bytes)." },
	{ "reset_state", ipupy_runner_reset_state, METH_NOARGS,
	  "reset_state()\n\nEvery state back to its initial value (a new sequence)." },
	{ "read_state", ipupy_runner_read_state, METH_VARARGS,
	  "read_state(name, out)\n\n"
	  "Copy state `name` into the writable C-contiguous array out (its bytes)." },
	{ "write_state", ipupy_runner_write_state, METH_VARARGS,
	  "write_state(name, data)\n\nReplace state `name` with data (its bytes)." },
	{ "_generate", (PyCFunction)(void (*)(void))ipupy_runner_generate,
	  METH_VARARGS | METH_KEYWORDS,
	  "_generate(prompt, *, max_new_tokens=16, stop_ids=None, want_logits=False,\n"
	  "          temperature=0, top_k=0, top_p=0, seed=1) -> Generation\n\n"
	  "Start ipurt_generate on a thread of its own; iterate the Generation for\n"
	  "(token, logits bytearray or None).  Use ipu.runtime.Runner.generate." },
	{ "execute", runner_execute, METH_VARARGS,
	  "execute(inputs, outputs)\n\n"
	  "Run one request and wait for it.  inputs and outputs map anchor names to\n"
	  "C-contiguous arrays (outputs writable); results are written into the\n"
	  "output arrays.  The GIL is released while the device runs." },
	{ "execute_async", runner_execute_async, METH_VARARGS,
	  "execute_async(inputs, outputs) -> Future\n\n"
	  "Start a request; the arrays must not be changed until Future.wait()\n"
	  "returns (the Future keeps them alive)." },
	{ "get_execute_inputs", (PyCFunction)(void (*)(void))runner_inputs,
	  METH_VARARGS | METH_KEYWORDS,
	  "get_execute_inputs(*, subgraph=-1, batch=0) -> list of dict\n\n"
	  "The input anchors a request passes (name, shape, dtype, batch_dim,\n"
	  "size_in_bytes); batch scales the batch dimension, subgraph selects one\n"
	  "model of a fused executable." },
	{ "get_execute_outputs", (PyCFunction)(void (*)(void))runner_outputs,
	  METH_VARARGS | METH_KEYWORDS,
	  "get_execute_outputs(*, subgraph=-1, batch=0) -> list of dict\n\n"
	  "The output anchors a request receives (as get_execute_inputs)." },
	{ "close", runner_close, METH_NOARGS,
	  "close()\n\n"
	  "From the moment it is called, new execute/execute_async calls raise\n"
	  "RunnerClosedError; it waits for the calls already running in other\n"
	  "threads to finish, stops a generation after its current step (its\n"
	  "next token raises RunnerClosedError), cancels the requests\n"
	  "execute_async queued (their Futures raise IPURT_E_CANCELLED), then\n"
	  "releases the device and the model.  Returns once that is done, also\n"
	  "when another thread closes." },
	{ "__enter__", runner_enter, METH_NOARGS, NULL },
	{ "__exit__", runner_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef runner_getset[] = {
	{ "device_info", runner_device, NULL, "The device the model runs on (dict).", NULL },
	{ "model_info", runner_model, NULL,
	  "The model's target and compiled batch size (dict).", NULL },
	{ "device_counters", runner_counters, NULL,
	  "The device's counters (dict): programs run, modelled cycles (all, and\n"
	  "compute, exchange, sync, stream), bytes moved, ...  Since the device was\n"
	  "opened; subtract two readings for the requests between them.", NULL },
	{ "closed", runner_is_closed, NULL, "True after close().", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMemberDef runner_members[] = {
	{ "__weaklistoffset__", T_PYSSIZET, offsetof(struct ipupy_runner, weakrefs), READONLY,
	  NULL },
	{ NULL, 0, 0, 0, NULL },
};

static PyType_Slot runner_slots[] = {
	{ Py_tp_doc, "Runner(model, *, timeout_ns=0, validate_io_params=True, batching_dim=NO_BATCHING_DIM, "
		     "ring_buffer_size=16, wait_policy=WAIT_NONE, wait_timeout_ns=0, device=None)\n\n"
		     "The C ModelRunner; use ipu.runtime.Runner." },
	{ Py_tp_new, PyType_GenericNew },
	{ Py_tp_init, runner_init },
	{ Py_tp_dealloc, runner_dealloc },
	{ Py_tp_traverse, runner_traverse },
	{ Py_tp_methods, runner_methods },
	{ Py_tp_getset, runner_getset },
	{ Py_tp_members, runner_members },
	{ 0, NULL },
};

static PyType_Spec runner_spec = {
	.name = "ipu._ipu.Runner",
	.basicsize = sizeof(struct ipupy_runner),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
	.slots = runner_slots,
};

int ipupy_add_runner_type(PyObject *module, struct ipupy_state *st)
{
	st->runner_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &runner_spec, NULL);
	if (!st->runner_type)
		return -1;
	return PyModule_AddType(module, st->runner_type);
}
