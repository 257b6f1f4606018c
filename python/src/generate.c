// SPDX-License-Identifier: MIT
/*
 * generate.c - _ipu.Generation: Runner.generate()'s loop, run by the C
 * runtime's ipurt_generate on a thread of its own, so that Python gets
 * what C callers get (the tokens-only program when greedy without logits,
 * the runtime's sampler) and the device works with the GIL released.
 *
 * ipurt_generate calls back once per token; Python pulls tokens one by
 * one.  The two meet in lockstep: the callback hands token i over and
 * waits until Python asks for token i + 1 (or the generation is stopped),
 * so between two tokens the device is idle, as it was when Python drove
 * each step itself: the caller may read the counters or the state.
 *
 * Everything the thread and Python share lives under the Runner's lock and
 * is signalled on its cv (broadcast: several kinds of waiters share it).
 * A generation holds the Runner busy for its whole life, so close() waits
 * for it; close() sets `closing` and broadcasts, which the callback takes
 * as "stop", so a generation Python never pulls again cannot hold close()
 * up.  One generation runs per Runner (one cache, one sequence): a new
 * generate() stops the one before and waits for its thread.
 */
#include "ipu_py.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ipu/ipuef.h"

/* Why a generation ended before its loop did. */
enum gen_end {
	GEN_RUNNING = 0,
	GEN_LEFT,		/* Python closed it (left the loop) */
	GEN_SUPERSEDED,		/* a later generate() on the same Runner */
	GEN_RUNNER_CLOSED,	/* Runner.close() */
};

struct ipupy_generation {
	PyObject_HEAD
	struct ipupy_runner *runner;	/* strong reference */
	pthread_t thread;
	int started, joined;		/* the thread (touched with the GIL held) */
	/* the loop's arguments, read by the thread only */
	int64_t *prompt, *stop_ids;
	uint32_t nprompt;
	struct ipurt_generate_opts opts;
	/* under runner->lock */
	uint64_t asked;			/* tokens Python has asked for */
	uint64_t made;			/* tokens handed over */
	uint64_t taken;			/* tokens returned to Python (GIL held) */
	int64_t token;			/* token made - 1 */
	int has_logits;			/* logits holds its logits */
	int done;			/* ipurt_generate returned */
	enum gen_end end;
	int rc;
	char err[IPUPY_ERRLEN];
	/* want_logits: the row of the token handed over */
	float *logits;
	uint64_t vocab;
};

static struct ipupy_state *state(PyObject *self)
{
	return ipupy_state_of_type(Py_TYPE(self));
}

/* Stopped from outside (runner->lock held): records why, once. */
static int stopped(struct ipupy_generation *g)
{
	if (g->end == GEN_RUNNING && g->runner->closing)
		g->end = GEN_RUNNER_CLOSED;
	return g->end != GEN_RUNNING;
}

/* ipurt_generate's callback, on the generation's thread. */
static int on_token(void *ctx, uint32_t index, int64_t token, const float *logits, uint64_t vocab)
{
	struct ipupy_generation *g = ctx;
	struct ipupy_runner *rn = g->runner;
	int stop;

	(void)index;
	pthread_mutex_lock(&rn->lock);
	stop = stopped(g);
	if (!stop) {
		g->token = token;
		g->has_logits = logits && g->logits;
		if (g->has_logits)
			memcpy(g->logits, logits, (vocab < g->vocab ? vocab : g->vocab) * sizeof(float));
		g->made++;
		pthread_cond_broadcast(&rn->cv);
		/* Python holds this token: the device waits until it asks again */
		while (g->asked <= g->made && !(stop = stopped(g)))
			pthread_cond_wait(&rn->cv, &rn->lock);
	}
	pthread_mutex_unlock(&rn->lock);
	return stop;
}

static void *run(void *arg)
{
	struct ipupy_generation *g = arg;
	struct ipupy_runner *rn = g->runner;
	char err[IPUPY_ERRLEN] = "";
	int rc;

	rc = ipurt_generate(rn->r, g->prompt, g->nprompt, &g->opts, on_token, g, NULL, err,
			    sizeof(err));
	pthread_mutex_lock(&rn->lock);
	g->rc = rc;
	memcpy(g->err, err, sizeof(err));
	g->done = 1;
	if (rn->gen == g)
		rn->gen = NULL;
	rn->busy--;		/* the runner's handle is no longer used */
	pthread_cond_broadcast(&rn->cv);
	pthread_mutex_unlock(&rn->lock);
	return NULL;
}

/* Stop the thread (if it still runs) and wait for it; GIL held. */
static void stop_and_join(struct ipupy_generation *g, enum gen_end why)
{
	struct ipupy_runner *rn = g->runner;

	if (!g->started || g->joined)
		return;
	pthread_mutex_lock(&rn->lock);
	if (g->end == GEN_RUNNING && !g->done)
		g->end = why;
	pthread_cond_broadcast(&rn->cv);
	pthread_mutex_unlock(&rn->lock);
	Py_BEGIN_ALLOW_THREADS
	pthread_join(g->thread, NULL);
	Py_END_ALLOW_THREADS
	g->joined = 1;
}

/* Waits for the thread are taken in slices of this length, to see Ctrl-C. */
#define WAIT_SLICE_NS 100000000L

static void deadline_in(struct timespec *ts, long ns)
{
	clock_gettime(CLOCK_REALTIME, ts);	/* the cv's clock */
	ts->tv_nsec += ns;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/*
 * Claim the runner for a new generation: busy (close() waits for it) and
 * the runner's one generation, after stopping and waiting for the one
 * before.  0, or -1 with RunnerClosedError set.
 */
static int claim(struct ipupy_runner *rn, struct ipupy_generation *g)
{
	int closing;

	if (ipupy_runner_enter(rn))
		return -1;
	Py_BEGIN_ALLOW_THREADS
	pthread_mutex_lock(&rn->lock);
	while (rn->gen && !rn->closing) {
		if (rn->gen->end == GEN_RUNNING && !rn->gen->done)
			rn->gen->end = GEN_SUPERSEDED;
		pthread_cond_broadcast(&rn->cv);
		pthread_cond_wait(&rn->cv, &rn->lock);
	}
	closing = rn->closing;
	if (!closing)
		rn->gen = g;
	pthread_mutex_unlock(&rn->lock);
	Py_END_ALLOW_THREADS
	if (closing) {
		ipupy_runner_leave(rn);
		PyErr_SetString(state((PyObject *)rn)->closed_error,
				"the Runner is closing: close() was called, no new requests are taken");
		return -1;
	}
	return 0;
}

static int64_t *int_list(PyObject *seq, uint32_t *n, const char *what)
{
	PyObject *fast = PySequence_Fast(seq, what);
	Py_ssize_t len;
	int64_t *v;

	if (!fast)
		return NULL;
	len = PySequence_Fast_GET_SIZE(fast);
	if (len > (Py_ssize_t)UINT32_MAX) {
		Py_DECREF(fast);
		PyErr_Format(PyExc_ValueError, "%s: too many tokens", what);
		return NULL;
	}
	v = PyMem_RawMalloc(((size_t)len ? (size_t)len : 1) * sizeof(*v));
	if (!v) {
		Py_DECREF(fast);
		PyErr_NoMemory();
		return NULL;
	}
	for (Py_ssize_t i = 0; i < len; i++) {
		v[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
		if (v[i] == -1 && PyErr_Occurred()) {
			Py_DECREF(fast);
			PyMem_RawFree(v);
			return NULL;
		}
	}
	Py_DECREF(fast);
	*n = (uint32_t)len;
	return v;
}

/*
 * Runner._generate(prompt, *, max_new_tokens, stop_ids, want_logits,
 * temperature, top_k, top_p, seed, host_sampling) -> Generation, its thread
 * started.
 */
PyObject *ipupy_runner_generate(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kw[] = { "prompt", "max_new_tokens", "stop_ids", "want_logits",
			      "temperature", "top_k", "top_p", "seed", "host_sampling", NULL };
	struct ipupy_runner *rn = (struct ipupy_runner *)obj;
	struct ipupy_state *st = state(obj);
	struct ipupy_generation *g;
	PyObject *prompt, *stop = NULL;
	unsigned int max_new = 16, top_k = 0;
	unsigned long long seed = 1;
	int want_logits = 0, host_sampling = 0, rc;
	float temperature = 0, top_p = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$IOpfIfKp:_generate", kw, &prompt,
					 &max_new, &stop, &want_logits, &temperature, &top_k,
					 &top_p, &seed, &host_sampling))
		return NULL;
	if (!rn->r) {
		PyErr_SetString(st->closed_error, "the Runner is closed");
		return NULL;
	}
	g = PyObject_GC_New(struct ipupy_generation, st->generation_type);
	if (!g)
		return NULL;
	memset((char *)g + sizeof(PyObject), 0, sizeof(*g) - sizeof(PyObject));
	g->runner = (struct ipupy_runner *)Py_NewRef(obj);
	PyObject_GC_Track((PyObject *)g);
	g->prompt = int_list(prompt, &g->nprompt, "the prompt must be a sequence of token ids");
	if (!g->prompt)
		goto fail;
	if (stop && stop != Py_None) {
		g->stop_ids = int_list(stop, &g->opts.num_stop,
				       "stop_ids must be a sequence of token ids");
		if (!g->stop_ids)
			goto fail;
	}
	g->opts.max_new_tokens = max_new ? max_new : 1;
	g->opts.stop_ids = g->stop_ids;
	g->opts.want_logits = want_logits;
	g->opts.temperature = temperature;
	g->opts.top_k = top_k;
	g->opts.top_p = top_p;
	g->opts.seed = seed;
	g->opts.host_sampling = host_sampling;
	if (want_logits) {
		const struct ipuef_anchor *a = ipuef_find_anchor(ipurt_runner_file(rn->r), "logits");

		if (a && a->rank) {
			g->vocab = a->dims[a->rank - 1];
			g->logits = PyMem_RawMalloc(g->vocab * sizeof(float));
			if (!g->logits) {
				PyErr_NoMemory();
				goto fail;
			}
		}
	}
	if (claim(rn, g))
		goto fail;
	rc = pthread_create(&g->thread, NULL, run, g);
	if (rc) {
		pthread_mutex_lock(&rn->lock);
		rn->gen = NULL;
		pthread_cond_broadcast(&rn->cv);
		pthread_mutex_unlock(&rn->lock);
		ipupy_runner_leave(rn);
		ipupy_raisef(st, IPURT_E_NOMEM, "cannot start the generation's thread: %s",
			     strerror(rc));
		goto fail;
	}
	g->started = 1;
	return (PyObject *)g;
fail:
	Py_DECREF(g);
	return NULL;
}

/* next(): (token, logits bytearray or None); StopIteration at the end. */
static PyObject *gen_next(PyObject *obj)
{
	struct ipupy_generation *g = (struct ipupy_generation *)obj;
	struct ipupy_runner *rn = g->runner;
	struct timespec ts;
	int have = 0, done = 0, interrupted = 0;
	int64_t token = 0;
	PyObject *logits;

	if (!g->started || g->joined)
		goto finished;
	/* asking for the next token lets the device make it */
	pthread_mutex_lock(&rn->lock);
	if (g->asked == g->taken) {
		g->asked++;
		pthread_cond_broadcast(&rn->cv);
	}
	pthread_mutex_unlock(&rn->lock);
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		pthread_mutex_lock(&rn->lock);
		if (g->made < g->asked && !g->done) {
			deadline_in(&ts, WAIT_SLICE_NS);
			while (g->made < g->asked && !g->done &&
			       pthread_cond_timedwait(&rn->cv, &rn->lock, &ts) != ETIMEDOUT)
				;
		}
		have = g->made >= g->asked;
		done = g->done;
		token = g->token;
		pthread_mutex_unlock(&rn->lock);
		Py_END_ALLOW_THREADS
		if (have || done)
			break;
		if (PyErr_CheckSignals()) {
			interrupted = 1;
			break;
		}
	}
	if (interrupted) {
		/* the exception leaves the loop: stop the device too */
		stop_and_join(g, GEN_LEFT);
		return NULL;
	}
	if (!have) {
		stop_and_join(g, GEN_LEFT);
		goto finished;
	}
	/* the thread waits for the next ask: the row stays as it is, the device idle */
	if (g->has_logits) {
		logits = PyByteArray_FromStringAndSize((const char *)g->logits,
						       (Py_ssize_t)(g->vocab * sizeof(float)));
		if (!logits)
			return NULL;
	} else {
		logits = Py_NewRef(Py_None);
	}
	g->taken++;
	return Py_BuildValue("(LN)", (long long)token, logits);

finished:
	if (g->rc)
		return ipupy_raise(state(obj), g->rc, g->err);
	if (g->end == GEN_RUNNER_CLOSED) {
		PyErr_SetString(state(obj)->closed_error,
				"the Runner was closed during generate(): the generation stopped");
		return NULL;
	}
	if (g->end == GEN_SUPERSEDED)
		return ipupy_raisef(state(obj), IPURT_E_CANCELLED,
				    "a later generate() on this Runner stopped this one (one cache: one sequence at a time)");
	return NULL;		/* StopIteration */
}

static PyObject *gen_close(PyObject *obj, PyObject *unused)
{
	struct ipupy_generation *g = (struct ipupy_generation *)obj;

	(void)unused;
	stop_and_join(g, GEN_LEFT);
	Py_RETURN_NONE;
}

static void gen_dealloc(PyObject *obj)
{
	struct ipupy_generation *g = (struct ipupy_generation *)obj;
	PyTypeObject *tp = Py_TYPE(obj);

	PyObject_GC_UnTrack(obj);
	stop_and_join(g, GEN_LEFT);
	PyMem_RawFree(g->prompt);
	PyMem_RawFree(g->stop_ids);
	PyMem_RawFree(g->logits);
	Py_CLEAR(g->runner);
	PyObject_GC_Del(obj);
	Py_DECREF(tp);
}

static int gen_traverse(PyObject *obj, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(obj));
	Py_VISIT((PyObject *)((struct ipupy_generation *)obj)->runner);
	return 0;
}

static PyMethodDef gen_methods[] = {
	{ "close", gen_close, METH_NOARGS,
	  "close()\n\nStop the generation (the step under way finishes) and wait for it." },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot gen_slots[] = {
	{ Py_tp_doc, "A generation started by Runner._generate: yields (token, logits or None)." },
	{ Py_tp_dealloc, gen_dealloc },
	{ Py_tp_traverse, gen_traverse },
	{ Py_tp_iter, PyObject_SelfIter },
	{ Py_tp_iternext, gen_next },
	{ Py_tp_methods, gen_methods },
	{ 0, NULL },
};

static PyType_Spec gen_spec = {
	.name = "ipu._ipu.Generation",
	.basicsize = sizeof(struct ipupy_generation),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = gen_slots,
};

int ipupy_add_generation_type(PyObject *module, struct ipupy_state *st)
{
	st->generation_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &gen_spec, NULL);
	if (!st->generation_type)
		return -1;
	return PyModule_AddType(module, st->generation_type);
}
