/* SPDX-License-Identifier: MIT */
/*
 * ipu_py.h - what the parts of the _ipu extension module share.
 *
 * The module is a thin layer over libipurt and the compiler: every object
 * wraps one C handle, arrays are passed to the runtime as views of the
 * caller's memory (buffer protocol, never copied), and every wait on the
 * device happens with the GIL released.
 */
#ifndef IPU_PY_H
#define IPU_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdint.h>

#include "ipu/runtime.h"

/* Message buffer size for the C libraries' one-line errors. */
#define IPUPY_ERRLEN 1024

/* Per-module state: the exception classes and the Python-side types. */
struct ipupy_state {
	PyObject *error;		/* ipu.Error(Exception) */
	PyObject *value_error;		/* ipu.IpuValueError(Error, ValueError) */
	PyObject *timeout_error;	/* ipu.IpuTimeoutError(Error, TimeoutError) */
	PyObject *compile_error;	/* ipu.CompileError(Error) */
	PyObject *file_error;		/* ipu.IpuefError(Error, ValueError) */
	PyObject *closed_error;		/* ipu.RunnerClosedError(Error, RuntimeError) */
	PyTypeObject *runner_type;
	PyTypeObject *future_type;
	PyTypeObject *dm_type;
	PyTypeObject *dm_device_type;
	PyTypeObject *generation_type;
};

struct ipupy_state *ipupy_state_of(PyObject *module);
/* The state of the module an object's type was defined in. */
struct ipupy_state *ipupy_state_of_type(PyTypeObject *tp);

/*
 * The exception that fits a C library code, by its class (ipu_err_errno):
 * MemoryError for every layer's NOMEM, IpuTimeoutError (a TimeoutError)
 * for every timeout, IpuValueError (a ValueError) for bad arguments and
 * tensors, IpuefError for a malformed .ipuef, RunnerClosedError for a
 * closing runner, else Error; it carries .code (int), .code_name
 * ("IPURT_E_SHAPE") and the message (the code's name when msg is empty).
 * A new reference, or NULL with an exception set.
 */
PyObject *ipupy_error_for(struct ipupy_state *st, int code, const char *msg);
/* Raise ipupy_error_for(st, code, msg).  Returns NULL. */
PyObject *ipupy_raise(struct ipupy_state *st, int code, const char *msg);
/* The same with a printf-style message. */
PyObject *ipupy_raisef(struct ipupy_state *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* numpy's dtype name of a runtime dtype ("float32", "float16", ...). */
const char *ipupy_dtype_numpy(uint32_t dt);

/*
 * The tensors of one request, as views of the caller's arrays: the
 * Py_buffers stay acquired (so an array cannot be resized or freed) until
 * ipupy_io_release.
 */
struct ipupy_io {
	struct ipurt_tensor *t;		/* inputs then outputs */
	Py_buffer *views;
	PyObject **names;		/* UTF-8 bytes objects owning t[i].name */
	uint32_t nin, nout, nviews;
};

/* Fill io from two mappings name -> array (outputs must be writable). */
int ipupy_io_acquire(struct ipupy_state *st, PyObject *inputs, PyObject *outputs,
		     struct ipupy_io *io);
void ipupy_io_release(struct ipupy_io *io);

/*
 * A Runner.  `busy` counts calls that use `r` with the GIL released
 * (execute, execute_async's submission, waits that may recover the
 * pipeline), so the handle is never destroyed under another thread.
 * close() wins against threads that keep submitting: it sets `closing`
 * first, after which every new call is refused (RunnerClosedError), then
 * waits, with the GIL released, for `busy` to drain to 0 (the calls
 * already in flight finish; a request that never could fails at the
 * runner's timeout_ns), then destroys the handle, which cancels every
 * request still queued by execute_async.  `busy`, `closing`, `closed` and
 * `gen` change under `lock`, with the GIL held except on a generation's
 * thread (generate.c), which holds the runner busy while it runs and
 * leaves when its loop returns; `cv` wakes close() when busy drains, other
 * closers when the handle is gone, and a generation's thread and its
 * Python side (broadcasts: all of them wait on it; close() broadcasts too,
 * so a generation waiting for Python stops).
 */
struct ipupy_runner {
	PyObject_HEAD
	struct ipurt_runner *r;
	struct ipuef_file *file;	/* the model, when the runner owns it */
	long busy;
	int closing;			/* close() started: no new calls */
	int closed;			/* close() destroyed the handle */
	int sync_ready;			/* lock and cv initialised */
	pthread_mutex_t lock;
	pthread_cond_t cv;
	uint64_t timeout_ns;		/* the config's, for Future.wait */
	PyObject *dm;			/* the DeviceManager it took its device from */
	PyObject *weakrefs;
	struct ipupy_generation *gen;	/* the generation running, or NULL */
};

/*
 * Enter a call that uses the runner's handle with the GIL released: 0, or
 * -1 with RunnerClosedError (closed, or close() has started) set.  Every
 * successful enter is paired with ipupy_runner_leave, GIL held.
 */
int ipupy_runner_enter(struct ipupy_runner *self);
void ipupy_runner_leave(struct ipupy_runner *self);

/* The Future of execute_async: takes ownership of f and io's views. */
PyObject *ipupy_future_new(struct ipupy_state *st, struct ipupy_runner *runner,
			   struct ipurt_future *f, struct ipupy_io *io);

/*
 * Runner._generate (generate.c): ipurt_generate on a thread of its own,
 * its tokens pulled one by one from the Generation it returns.
 */
struct ipupy_generation;
PyObject *ipupy_runner_generate(PyObject *obj, PyObject *args, PyObject *kwargs);

/* Runner methods for device-resident state (state.c). */
PyObject *ipupy_runner_states(PyObject *obj, PyObject *unused);
PyObject *ipupy_runner_reset_state(PyObject *obj, PyObject *unused);
PyObject *ipupy_runner_read_state(PyObject *obj, PyObject *args);
PyObject *ipupy_runner_write_state(PyObject *obj, PyObject *args);

/* Module-level functions defined in the parts. */
PyObject *ipupy_read_ipuef(PyObject *module, PyObject *args);
/* compile.c: ipu_compile() on a model; compile_args.c: the command line. */
PyObject *ipupy_compile(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *ipupy_compile_args(PyObject *module, PyObject *args, PyObject *kwargs);

/* The handle of a DeviceManager object (checked to be of dm_type). */
struct ipurt_device_manager *ipupy_dm_handle(PyObject *obj);

int ipupy_add_runner_type(PyObject *module, struct ipupy_state *st);
int ipupy_add_future_type(PyObject *module, struct ipupy_state *st);
int ipupy_add_dm_type(PyObject *module, struct ipupy_state *st);
int ipupy_add_generation_type(PyObject *module, struct ipupy_state *st);

#endif /* IPU_PY_H */
