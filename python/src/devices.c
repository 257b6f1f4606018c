// SPDX-License-Identifier: MIT
/*
 * devices.c - _ipu.DeviceManager and _ipu.Device: the runtime's
 * DeviceManager (in-process devices by spec, plus every /dev/accel/accelN) and a
 * device taken from it for exclusive use.
 */
#include "ipu_py.h"

#include <string.h>

struct ipupy_dm {
	PyObject_HEAD
	struct ipurt_device_manager *dm;
	long taken;			/* Devices not yet released */
};

struct ipupy_device {
	PyObject_HEAD
	struct ipupy_dm *owner;		/* strong reference */
	struct ipu_device *dev;		/* NULL once released */
};

static struct ipupy_state *state(PyObject *self)
{
	return ipupy_state_of_type(Py_TYPE(self));
}

struct ipurt_device_manager *ipupy_dm_handle(PyObject *obj)
{
	return ((struct ipupy_dm *)obj)->dm;
}

static PyObject *device_info(struct ipupy_state *st, struct ipu_device *dev)
{
	struct ipu_device_info info;
	int rc = ipu_info(dev, &info);

	if (rc)
		return ipupy_raise(st, rc, "cannot read the device's information");
	return Py_BuildValue("{s:s,s:s,s:s,s:I,s:I,s:s,s:s,s:I}", "name", info.name, "spec",
			     info.path, "backend", info.backend ? "kernel" : "model",
			     "num_tiles", info.num_tiles, "tile_mem", info.tile_mem,
			     "ipu_version", info.version_name, "serial", info.serial, "workers",
			     info.workers);
}

/* ---- Device ---- */

static void device_release_handle(struct ipupy_device *self)
{
	if (!self->dev)
		return;
	ipurt_dm_release(self->owner->dm, self->dev);
	self->dev = NULL;
	self->owner->taken--;
}

static PyObject *device_release(PyObject *obj, PyObject *unused)
{
	(void)unused;
	device_release_handle((struct ipupy_device *)obj);
	Py_RETURN_NONE;
}

static PyObject *device_enter(PyObject *obj, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(obj);
}

static PyObject *device_exit(PyObject *obj, PyObject *args)
{
	(void)args;
	return device_release(obj, NULL);
}

static PyObject *device_get_info(PyObject *obj, void *unused)
{
	struct ipupy_device *self = (struct ipupy_device *)obj;

	(void)unused;
	if (!self->dev) {
		PyErr_SetString(state(obj)->error, "the Device was released");
		return NULL;
	}
	return device_info(state(obj), self->dev);
}

static void device_dealloc(PyObject *obj)
{
	struct ipupy_device *self = (struct ipupy_device *)obj;
	PyTypeObject *tp = Py_TYPE(obj);

	PyObject_GC_UnTrack(obj);
	device_release_handle(self);
	Py_CLEAR(self->owner);
	PyObject_GC_Del(obj);
	Py_DECREF(tp);
}

static int device_traverse(PyObject *obj, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(obj));
	Py_VISIT((PyObject *)((struct ipupy_device *)obj)->owner);
	return 0;
}

static PyMethodDef device_methods[] = {
	{ "release", device_release, METH_NOARGS,
	  "release()\n\nGive the device back to its DeviceManager." },
	{ "__enter__", device_enter, METH_NOARGS, NULL },
	{ "__exit__", device_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef device_getset[] = {
	{ "info", device_get_info, NULL,
	  "name, spec, backend, num_tiles, tile_mem, ipu_version, serial, workers", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot device_slots[] = {
	{ Py_tp_doc, "A device taken from a DeviceManager (release() or a with block gives it back)." },
	{ Py_tp_dealloc, device_dealloc },
	{ Py_tp_traverse, device_traverse },
	{ Py_tp_methods, device_methods },
	{ Py_tp_getset, device_getset },
	{ 0, NULL },
};

static PyType_Spec device_spec = {
	.name = "ipu._ipu.Device",
	.basicsize = sizeof(struct ipupy_device),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = device_slots,
};

/* ---- DeviceManager ---- */

static int dm_init(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kw[] = { "specs", NULL };
	struct ipupy_dm *self = (struct ipupy_dm *)obj;
	char err[IPUPY_ERRLEN] = "";
	const char *specs = NULL;
	int rc;

	if (self->dm) {
		PyErr_SetString(PyExc_RuntimeError, "DeviceManager.__init__ called twice");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|z", kw, &specs))
		return -1;
	rc = ipurt_dm_create(specs, &self->dm, err, sizeof(err));
	if (rc) {
		ipupy_raise(state(obj), rc, err);
		return -1;
	}
	return 0;
}

static int dm_ready(PyObject *obj)
{
	if (((struct ipupy_dm *)obj)->dm)
		return 1;
	PyErr_SetString(state(obj)->error, "DeviceManager.__init__ was not called");
	return 0;
}

static PyObject *dm_count(PyObject *obj, PyObject *unused)
{
	(void)unused;
	if (!dm_ready(obj))
		return NULL;
	return PyLong_FromUnsignedLong(ipurt_dm_count(((struct ipupy_dm *)obj)->dm));
}

static PyObject *dm_specs(PyObject *obj, PyObject *unused)
{
	struct ipupy_dm *self = (struct ipupy_dm *)obj;
	PyObject *list;
	uint32_t i, n;

	(void)unused;
	if (!dm_ready(obj))
		return NULL;
	n = ipurt_dm_count(self->dm);
	list = PyList_New(n);
	for (i = 0; list && i < n; i++) {
		PyObject *s = PyUnicode_FromString(ipurt_dm_spec(self->dm, i));

		if (!s) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, i, s);
	}
	return list;
}

static PyObject *dm_acquire(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kw[] = { "num_tiles", "tile_mem", "ipu_version", "wait_policy",
			      "wait_timeout_ns", NULL };
	struct ipupy_dm *self = (struct ipupy_dm *)obj;
	struct ipupy_state *st = state(obj);
	struct ipurt_device_req req = { 1, 1, NULL };
	struct ipupy_device *d;
	struct ipu_device *dev = NULL;
	char err[IPUPY_ERRLEN] = "";
	int policy = IPURT_WAIT_NONE, rc;
	long long wait_ns = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$IIziL", kw, &req.num_tiles,
					 &req.tile_mem, &req.ipu_version, &policy, &wait_ns) ||
	    !dm_ready(obj))
		return NULL;
	if (policy < IPURT_WAIT_NONE || policy > IPURT_WAIT_FOREVER || wait_ns < 0) {
		ipupy_raisef(st, IPURT_E_INVAL, "wait_policy %d / wait_timeout_ns %lld out of range",
			     policy, wait_ns);
		return NULL;
	}
	d = PyObject_GC_New(struct ipupy_device, st->dm_device_type);
	if (!d)
		return NULL;
	d->owner = NULL;
	d->dev = NULL;
	PyObject_GC_Track((PyObject *)d);
	Py_BEGIN_ALLOW_THREADS
	rc = ipurt_dm_acquire(self->dm, &req, (enum ipurt_wait_policy)policy, wait_ns, &dev,
			      err, sizeof(err));
	Py_END_ALLOW_THREADS
	if (rc) {
		Py_DECREF(d);
		return ipupy_raise(st, rc, err);
	}
	d->owner = (struct ipupy_dm *)Py_NewRef(obj);
	d->dev = dev;
	self->taken++;
	return (PyObject *)d;
}

static void dm_dealloc(PyObject *obj)
{
	struct ipupy_dm *self = (struct ipupy_dm *)obj;
	PyTypeObject *tp = Py_TYPE(obj);

	PyObject_GC_UnTrack(obj);
	/* every Device holds a reference: none is taken any more */
	ipurt_dm_destroy(self->dm);
	tp->tp_free(obj);
	Py_DECREF(tp);
}

static int dm_traverse(PyObject *obj, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(obj));
	return 0;
}

static PyMethodDef dm_methods[] = {
	{ "get_num_devices", dm_count, METH_NOARGS,
	  "get_num_devices() -> int\n\nDevices this manager knows (listed specs and /dev/accel/accelN)." },
	{ "get_device_specs", dm_specs, METH_NOARGS,
	  "get_device_specs() -> list of str\n\nThe spec of every device, in order." },
	{ "acquire", (PyCFunction)(void (*)(void))dm_acquire, METH_VARARGS | METH_KEYWORDS,
	  "acquire(*, num_tiles=1, tile_mem=1, ipu_version=None, wait_policy=WAIT_NONE,\n"
	  "        wait_timeout_ns=0) -> Device\n\n"
	  "Take a free device with at least num_tiles tiles of tile_mem bytes (and\n"
	  "the IPU version, if given).  Raises ipu.Error naming what each device\n"
	  "lacks when none can, or when all suitable ones stay busy." },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot dm_slots[] = {
	{ Py_tp_doc, "DeviceManager(specs=None)\n\n"
		     "The devices listed in specs (libipu specs separated by ';', e.g.\n"
		     "'model:tiles=64;model:version=ipu21'; None: one in-process device of the\n"
		     "default size) plus every /dev/accel/accelN present.  Pass it to a Runner as\n"
		     "RuntimeConfig.device_manager to choose among them." },
	{ Py_tp_new, PyType_GenericNew },
	{ Py_tp_init, dm_init },
	{ Py_tp_dealloc, dm_dealloc },
	{ Py_tp_traverse, dm_traverse },
	{ Py_tp_methods, dm_methods },
	{ 0, NULL },
};

static PyType_Spec dm_spec = {
	.name = "ipu._ipu.DeviceManager",
	.basicsize = sizeof(struct ipupy_dm),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
	.slots = dm_slots,
};

int ipupy_add_dm_type(PyObject *module, struct ipupy_state *st)
{
	st->dm_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &dm_spec, NULL);
	if (!st->dm_type || PyModule_AddType(module, st->dm_type))
		return -1;
	st->dm_device_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &device_spec, NULL);
	if (!st->dm_device_type)
		return -1;
	return PyModule_AddType(module, st->dm_device_type);
}
