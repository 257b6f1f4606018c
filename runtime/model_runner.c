// SPDX-License-Identifier: MIT
/*
 * model_runner.c - the ModelRunner: validate a request's tensors against
 * the model's anchors, split it into device runs of the compiled batch
 * (dynamic batch sizing), fill a fused model's index, queue the runs on
 * the QueueManager and complete the request's future when they are done.
 *
 * Tensors go to the device in place whenever a run's slice of them is
 * contiguous and whole; only a partial last batch or a batch dimension
 * other than the outermost goes through a scratch buffer (inputs gathered
 * and zero-padded before, outputs scattered back after).
 *
 * Replication: with several devices each holds its own Session and
 * QueueManager, and every device run goes to the device with the fewest
 * runs outstanding (ties in turn, so an idle set is used evenly).  Runs
 * are independent (each reads and writes only its own slices), so a
 * request may span devices and its future still completes only when all
 * of its runs are done.  A run that fails takes its device out of
 * rotation; a failover thread flushes that device's queue (which reports
 * every run it held as cancelled) and moves each such run to another
 * device, at most once per run, so a request that fails on two devices
 * is taken to be at fault itself rather than taking every device out.
 * A runner with one device keeps it: after a reset unloaded the model, the
 * next run loads it again first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/thread.h"
#include "rt_group.h"
#include "rt_internal.h"

struct ipurt_runner;

/* One device the model is loaded on. */
struct replica {
	struct ipurt_runner *r;
	struct ipu_device *dev;
	struct ipurt_session *s;
	struct ipurt_queue_manager *qm;
	char name[64];			/* the spec it was opened with */
	_Atomic uint32_t outstanding;	/* runs queued or running */
	_Atomic uint64_t runs_ok;
	_Atomic int out;		/* taken out of rotation */
	int recovered;			/* its queue flushed since (r->lock) */
	_Atomic int unloaded;		/* a run met the device without the model */
	char why[256];			/* why it was taken out (r->lock) */
	uint32_t reg_ids[IPU_MAX_REGISTERED];
};

/* One device run of a request: the QueueManager's tag. */
struct run_ref {
	struct ipurt_future *f;
	struct replica *rep;		/* where it was last queued (f->lock) */
	struct run_ref *next;		/* failover list (r->lock) */
	uint32_t run;
	uint8_t moves;
	uint8_t done;			/* (f->lock) */
	int32_t first;			/* replica of a failed first attempt, or -1 */
};

struct ipurt_runner {
	struct ipurt_config cfg;
	struct ipuef_file *own_file;
	const struct ipuef_file *f;
	const struct ipuef_metadata *m;
	struct ipurt_device_manager *dm, *own_dm;
	struct replica *reps;
	uint32_t nrep;
	_Atomic uint32_t turn;		/* where the next tie-break starts */
	uint32_t main_prog;
	int index_anchor;		/* anchor of kind INDEX, or -1 */
	_Atomic uint64_t next_id;	/* of the next request (on_request) */
	pthread_mutex_t lock;		/* failover list, reasons, registrations */
	pthread_mutex_t reload_lock;	/* one reload of a device at a time */
	pthread_cond_t cv;		/* work for the failover thread */
	struct run_ref *fo_head, *fo_tail;
	_Atomic int closing;
	pthread_t fo_thread;
	int fo_started;
	uint8_t reg_used[IPU_MAX_REGISTERED];
	struct rt_group *grp;		/* a model split over IPUs (else NULL) */
};

/* How one tensor maps onto its anchor's runs. */
struct binding {
	uint32_t anchor;
	const struct ipuef_anchor *a;
	uint8_t *data;
	int output;
	uint64_t outer, bu, bc, inner;	/* bytes of inner; bu/bc rows along bd */
	int staged;			/* goes through scratch */
	uint64_t scratch_off;		/* of run 0; run r at + r * run_bytes */
};

struct ipurt_future {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct ipurt_runner *r;
	uint32_t remaining;
	int status;
	int done;
	char msg[256];
	struct binding *b;
	uint32_t nb, nruns;
	uint8_t *scratch;
	int32_t index;
	uint64_t id;			/* for on_request */
	int started;
	struct run_ref *refs;		/* one per run */
};

void ipurt_config_init(struct ipurt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->validate_io_params = 1;
	c->batching_dim = IPURT_NO_BATCHING_DIM;
	c->ring_buffer_size = 16;
	c->wait_policy = IPURT_WAIT_NONE;
}

static void deadline(struct timespec *ts, int64_t ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ns / 1000000000;
	ts->tv_nsec += ns % 1000000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* Copy run `run`'s rows between the user's tensor and its device chunk. */
static void move_rows(const struct binding *b, uint32_t run, uint8_t *chunk, int to_user)
{
	uint64_t r0 = (uint64_t)run * b->bc, rows, o;

	rows = r0 >= b->bu ? 0 : (b->bu - r0 < b->bc ? b->bu - r0 : b->bc);
	for (o = 0; o < b->outer; o++) {
		uint8_t *dev = chunk + o * b->bc * b->inner;
		uint8_t *usr = b->data + (o * b->bu + r0) * b->inner;

		if (to_user) {
			memcpy(usr, dev, rows * b->inner);
		} else {
			memcpy(dev, usr, rows * b->inner);
			memset(dev + rows * b->inner, 0, (b->bc - rows) * b->inner);
		}
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Batch dimension of an anchor under the config, or NONE. */
static uint32_t batch_dim(const struct ipurt_runner *r, const struct ipuef_anchor *a)
{
	uint32_t bd = r->cfg.batching_dim != IPURT_NO_BATCHING_DIM ? r->cfg.batching_dim
								      : a->batch_dim;

	return a->kind == IPUEF_ANCHOR_USER && bd < a->rank ? bd : IPUEF_NO_BATCH_DIM;
}

static int bind_tensor(const struct ipurt_runner *r, const struct ipurt_tensor *t, int output,
		       struct binding *b, char *err, size_t errlen)
{
	char want[160], got[160];
	const struct ipuef_anchor *a;
	uint32_t i, bd;
	int idx = -1;

	for (i = 0; i < r->m->num_anchors; i++)
		if (t->name && !strcmp(r->m->anchors[i].name, t->name))
			idx = (int)i;
	if (idx < 0) {
		return ipu_errorf(err, errlen, IPURT_E_NAME, "the model has no anchor '%s'", t->name ? t->name : "(null)");
	}
	a = &r->m->anchors[idx];
	if ((a->direction == IPUEF_OUTPUT) != output || a->kind == IPUEF_ANCHOR_TENSOR_DATA ||
	    !(a->programs & (1ull << r->main_prog))) {
		return ipu_errorf(err, errlen, IPURT_E_NAME, "'%s' is %s, not %s of the main program", a->name,
			a->kind == IPUEF_ANCHOR_TENSOR_DATA ? "a weight (TensorData) anchor" :
			a->direction == IPUEF_OUTPUT ? "an output" : "an input",
			output ? "an output" : "an input");
	}
	/* shapes as text only for a message: it was most of the instructions a request spent here */
	if (t->dtype != a->dtype) {
		rt_shape_str(a->dtype, a->rank, a->dims, want, sizeof(want));
		rt_shape_str(t->dtype, t->rank, t->dims, got, sizeof(got));
		return ipu_errorf(err, errlen, IPURT_E_DTYPE, "'%s': got %s, the model needs %s", a->name, got, want);
	}
	if (!t->data) {
		return ipu_errorf(err, errlen, IPURT_E_INVAL, "'%s': no data", a->name);
	}
	bd = batch_dim(r, a);
	if (t->rank != a->rank)
		goto bad_shape;
	for (i = 0; i < a->rank; i++)
		if (i != bd && t->dims[i] != a->dims[i])
			goto bad_shape;
	memset(b, 0, sizeof(*b));
	b->anchor = (uint32_t)idx;
	b->a = a;
	b->data = t->data;
	b->output = output;
	b->outer = 1;
	b->inner = ipurt_dtype_size(a->dtype);
	if (bd == IPUEF_NO_BATCH_DIM) {
		b->bu = b->bc = 1;
		for (i = 0; i < a->rank; i++)
			b->inner *= a->dims[i];
		return 0;
	}
	for (i = 0; i < bd; i++)
		b->outer *= a->dims[i];
	for (i = bd + 1; i < a->rank; i++)
		b->inner *= a->dims[i];
	b->bc = a->dims[bd];
	b->bu = t->dims[bd];
	if (b->bu == 0 || (r->cfg.batching_dim == IPURT_NO_BATCHING_DIM && b->bu % b->bc)) {
		rt_shape_str(t->dtype, t->rank, t->dims, got, sizeof(got));
		return ipu_errorf(err, errlen, IPURT_E_BATCH,
			"'%s': got %s; dimension %u must be %s %llu (the compiled batch)%s", a->name,
			got, bd, r->cfg.batching_dim == IPURT_NO_BATCHING_DIM ? "a multiple of" :
			"at least 1, compiled", (unsigned long long)b->bc,
			r->cfg.batching_dim == IPURT_NO_BATCHING_DIM ?
				"; set batching_dim for other batch sizes" : "");
	}
	return 0;
bad_shape:
	rt_shape_str(a->dtype, a->rank, a->dims, want, sizeof(want));
	rt_shape_str(t->dtype, t->rank, t->dims, got, sizeof(got));
	return ipu_errorf(err, errlen, IPURT_E_SHAPE, "'%s': got %s, the model needs %s%s", a->name, got, want,
		bd != IPUEF_NO_BATCH_DIM ? " (any batch along the batch dimension)" : "");
}

/* The subgraph K of "graphK/name", or -1. */
static int graph_of(const char *name)
{
	char *end;
	long k;

	if (strncmp(name, "graph", 5))
		return -1;
	k = strtol(name + 5, &end, 10);
	return end != name + 5 && *end == '/' && k >= 0 && k < 1 << 20 ? (int)k : -1;
}

int ipurt_anchor_subgraph(const char *name)
{
	return name ? graph_of(name) : -1;
}

int ipurt_runner_io(const struct ipurt_runner *r, int subgraph, uint64_t rows,
		    struct ipurt_tensor *t, uint32_t *batch_dims, uint32_t max, uint32_t *nin)
{
	uint64_t ref = 0;
	uint32_t pass, i, k, n = 0;

	*nin = 0;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < r->m->num_anchors; i++) {
			const struct ipuef_anchor *a = &r->m->anchors[i];
			uint32_t bd = batch_dim(r, a);

			if (a->kind != IPUEF_ANCHOR_USER || (a->direction == IPUEF_OUTPUT) != pass ||
			    !(a->programs & (1ull << r->main_prog)) ||
			    (subgraph >= 0 && graph_of(a->name) != subgraph))
				continue;
			if (n == max)
				return IPURT_E_INVAL;
			memset(&t[n], 0, sizeof(t[n]));
			t[n].name = a->name;
			t[n].dtype = a->dtype;
			t[n].rank = a->rank;
			for (k = 0; k < a->rank; k++)
				t[n].dims[k] = a->dims[k];
			if (batch_dims)
				batch_dims[n] = bd;
			if (bd != IPUEF_NO_BATCH_DIM) {
				/* the first batched input is the reference */
				if (!ref)
					ref = a->dims[bd];
				if (rows)
					t[n].dims[bd] = (rows * a->dims[bd] + ref - 1) / ref;
			}
			n++;
			*nin += !pass;
		}
	}
	return (int)n;
}

static int prepare(struct ipurt_runner *r, const struct ipurt_tensor *in, uint32_t nin,
		   const struct ipurt_tensor *out, uint32_t nout, struct ipurt_future *f,
		   char *err, size_t errlen)
{
	uint32_t i, j, n = nin + nout;
	uint64_t runs = 0, scratch = 0;
	const struct binding *first = NULL;
	int rc, graph = -1, have_index = 0;

	f->b = calloc(n ? n : 1, sizeof(*f->b));
	if (!f->b)
		return IPURT_E_NOMEM;
	for (i = 0; i < n; i++) {
		const struct ipurt_tensor *t = i < nin ? &in[i] : &out[i - nin];
		struct binding *b = &f->b[i];
		uint64_t nr;

		rc = bind_tensor(r, t, i >= nin, b, err, errlen);
		if (rc)
			return rc;
		for (j = 0; j < i; j++) {
			if (f->b[j].anchor == b->anchor) {
				return ipu_errorf(err, errlen, IPURT_E_INVAL, "'%s' is given twice", b->a->name);
			}
		}
		if ((int)b->anchor == r->index_anchor) {
			have_index = 1;
			continue;
		}
		if (r->index_anchor >= 0) {
			int k = graph_of(b->a->name);

			if (graph >= 0 && k != graph) {
				return ipu_errorf(err, errlen, IPURT_E_INVAL,
					"'%s' and an earlier tensor belong to different subgraphs: one request runs one subgraph",
					b->a->name);
			}
			graph = k;
		}
		/* an unbatched tensor fits any run count */
		nr = batch_dim(r, b->a) == IPUEF_NO_BATCH_DIM ? 0 : (b->bu + b->bc - 1) / b->bc;
		if (nr) {
			if (first && (nr != runs || b->bu * first->bc != first->bu * b->bc)) {
				return ipu_errorf(err, errlen, IPURT_E_BATCH,
					"'%s' has batch %llu, but '%s' has %llu (compiled batches %llu and %llu)",
					b->a->name, (unsigned long long)b->bu, first->a->name,
					(unsigned long long)first->bu, (unsigned long long)b->bc,
					(unsigned long long)first->bc);
			}
			runs = nr;
			first = b;
		}
	}
	if (!runs)
		runs = 1;
	for (i = 0; i < n; i++) {
		struct binding *b = &f->b[i];

		if (batch_dim(r, b->a) == IPUEF_NO_BATCH_DIM && runs > 1 && b->output) {
			return ipu_errorf(err, errlen, IPURT_E_BATCH, "output '%s' has no batch dimension but the request spans %llu runs",
				b->a->name, (unsigned long long)runs);
		}
		/* in place when every run's slice is contiguous and whole */
		b->staged = b->bu % b->bc != 0 || (b->outer > 1 && runs > 1);
		if (b->staged) {
			b->scratch_off = scratch;
			scratch += runs * b->outer * b->bc * b->inner;
			scratch = (scratch + 63) & ~63ull;
		}
	}
	if (r->cfg.validate_io_params) {
		char missing[512] = "";

		for (i = 0; i < r->m->num_anchors; i++) {
			const struct ipuef_anchor *a = &r->m->anchors[i];
			int found = 0;

			if (a->kind != IPUEF_ANCHOR_USER || !(a->programs & (1ull << r->main_prog)))
				continue;
			for (j = 0; j < n && !found; j++)
				found = f->b[j].anchor == i;
			if (!found) {
				size_t l = strlen(missing);

				snprintf(missing + l, sizeof(missing) - l, "%s'%s'", l ? ", " : "",
					 a->name);
			}
		}
		if (missing[0]) {
			return ipu_errorf(err, errlen, IPURT_E_MISSING,
				"missing %s (validate_io_params is on: every input and output must be given%s)",
				missing, r->index_anchor >= 0 ?
				"; turn it off to run one subgraph of a fused model" : "");
		}
	}
	if (r->index_anchor >= 0 && !have_index) {
		if (graph < 0) {
			return ipu_errorf(err, errlen, IPURT_E_MISSING,
				"fused model: give 'index' or tensors named graphK/... so the subgraph is known");
		}
		f->index = graph;
	}
	f->nb = n;
	f->nruns = (uint32_t)runs;
	if (scratch) {
		f->scratch = aligned_alloc(64, scratch);
		if (!f->scratch)
			return IPURT_E_NOMEM;
	}
	return 0;
}

/* The QueueManager handed one of f's runs to the device. */
static void run_dispatched(void *ctx, void *tag)
{
	struct replica *rep = ctx;
	struct ipurt_runner *r = rep->r;
	struct ipurt_future *f = ((struct run_ref *)tag)->f;
	int first;

	pthread_mutex_lock(&f->lock);
	first = !f->started;
	f->started = 1;
	pthread_mutex_unlock(&f->lock);
	if (first)
		r->cfg.on_request(r->cfg.on_request_ctx, f->id, IPURT_REQ_STARTED, now_ns(), 0);
}

/* The final status of one run: the future is done with its last. */
static void complete_run(struct run_ref *ref, int status, const char *msg)
{
	struct ipurt_future *f = ref->f;
	struct ipurt_runner *r = f->r;
	char first[400] = "";
	uint32_t i, run;

	if (status && ref->first >= 0) {
		/* name both devices: the caller cannot tell which one ran it */
		const struct replica *a = &r->reps[ref->first];

		pthread_mutex_lock(&r->lock);
		snprintf(first, sizeof(first), "%s (%s)", a->name, a->why);
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_lock(&f->lock);
	ref->done = 1;
	if (status && !f->status) {
		f->status = status;
		if (*first && ref->rep)
			snprintf(f->msg, sizeof(f->msg), "device run failed on %s, then on %s: %s",
				 first, ref->rep->name, msg && *msg ? msg : ipu_err_name(status));
		else
			snprintf(f->msg, sizeof(f->msg), "%s",
				 msg && *msg ? msg : ipu_err_name(status));
	}
	if (--f->remaining == 0) {
		if (!f->status) {
			for (i = 0; i < f->nb; i++) {
				const struct binding *b = &f->b[i];

				if (!b->output || !b->staged)
					continue;
				for (run = 0; run < f->nruns; run++)
					move_rows(b, run, f->scratch + b->scratch_off +
							  run * b->outer * b->bc * b->inner, 1);
			}
		}
		/* before done: a waiter may free f as soon as it sees it */
		if (r->cfg.on_request)
			r->cfg.on_request(r->cfg.on_request_ctx, f->id, IPURT_REQ_DONE, now_ns(),
					  f->status);
		f->done = 1;
		pthread_cond_broadcast(&f->cv);
	}
	pthread_mutex_unlock(&f->lock);
}

/* Take a device out of rotation; the failover thread flushes its queue. */
static void take_out(struct replica *rep, const char *reason)
{
	struct ipurt_runner *r = rep->r;

	pthread_mutex_lock(&r->lock);
	if (!atomic_load(&rep->out)) {
		snprintf(rep->why, sizeof(rep->why), "%s", reason);
		atomic_store(&rep->out, 1);
	}
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->lock);
}

static void run_done(void *ctx, void *tag, int status, const char *msg)
{
	struct replica *rep = ctx;
	struct ipurt_runner *r = rep->r;
	struct run_ref *ref = tag;

	atomic_fetch_sub(&rep->outstanding, 1);
	if (!status)
		atomic_fetch_add(&rep->runs_ok, 1);
	if (status == IPU_E_NOT_LOADED && r->nrep == 1) {
		/* a reset unloaded the model: the next request loads it again */
		atomic_store(&rep->unloaded, 1);
		complete_run(ref, status, "the device no longer holds the model (was it reset?); it is loaded again for the next request");
		return;
	}
	if (status && r->nrep > 1 && !ref->moves && !atomic_load(&r->closing)) {
		char why[256];

		snprintf(why, sizeof(why), "a run failed: %s",
			 msg && *msg ? msg : ipu_err_name(status));
		/* a run cancelled by the flush of a device already out says so */
		if (!atomic_load(&rep->out))
			take_out(rep, why);
		pthread_mutex_lock(&r->lock);
		ref->next = NULL;
		if (r->fo_tail)
			r->fo_tail->next = ref;
		else
			r->fo_head = ref;
		r->fo_tail = ref;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->lock);
		return;
	}
	complete_run(ref, status, msg);
}

/* The device in rotation with the fewest runs outstanding, or NULL. */
static struct replica *pick(struct ipurt_runner *r)
{
	uint32_t i, start = atomic_fetch_add(&r->turn, 1) % r->nrep, best_o = 0;
	struct replica *best = NULL;

	for (i = 0; i < r->nrep; i++) {
		struct replica *rep = &r->reps[(start + i) % r->nrep];
		uint32_t o = atomic_load(&rep->outstanding);

		if (atomic_load(&rep->out))
			continue;
		if (!best || o < best_o) {
			best = rep;
			best_o = o;
		}
	}
	return best;
}

/* Anchors and buffers of one run; staging copies a staged input's rows. */
static uint32_t run_buffers(struct ipurt_runner *r, struct ipurt_future *f, uint32_t run,
			    int stage, uint32_t *anchors, void **bufs)
{
	uint32_t i, k = 0;
	int have_index = 0;

	for (i = 0; i < f->nb; i++) {
		struct binding *b = &f->b[i];
		uint64_t chunk = b->outer * b->bc * b->inner;

		have_index |= (int)b->anchor == r->index_anchor;
		anchors[k] = b->anchor;
		if (b->staged) {
			bufs[k] = f->scratch + b->scratch_off + run * chunk;
			if (!b->output && stage)
				move_rows(b, run, bufs[k], 0);
		} else if (batch_dim(r, b->a) == IPUEF_NO_BATCH_DIM) {
			bufs[k] = b->data;	/* same for every run (inputs only) */
		} else {
			bufs[k] = b->data + run * chunk;
		}
		k++;
	}
	if (r->index_anchor >= 0 && !have_index) {
		anchors[k] = (uint32_t)r->index_anchor;
		bufs[k] = &f->index;
		k++;
	}
	return k;
}

/* "a: why; b: why" of the devices taken out. */
static void out_reasons(struct ipurt_runner *r, char *buf, size_t len)
{
	uint32_t i;
	size_t n = 0;

	buf[0] = 0;
	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->nrep && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s: %s", i ? "; " : "", r->reps[i].name,
				      r->reps[i].why);
	pthread_mutex_unlock(&r->lock);
}

/*
 * One device that lost the model (a reset): load it again before the run
 * goes there.  Returns non-zero, with the run finished, if that failed.
 */
static int reload(struct replica *rep, struct run_ref *ref)
{
	struct ipurt_runner *r = rep->r;
	char err[256], msg[320];
	int rc = 0;

	pthread_mutex_lock(&r->reload_lock);
	if (atomic_load(&rep->unloaded)) {
		rc = rt_qm_reload(rep->qm, rep->s, err, sizeof(err));
		if (!rc)
			atomic_store(&rep->unloaded, 0);
	}
	pthread_mutex_unlock(&r->reload_lock);
	if (rc) {
		snprintf(msg, sizeof(msg), "the device lost the model and loading it again failed: %s", err);
		complete_run(ref, rc, msg);
	}
	return rc;
}

/*
 * Queue one run on a device in rotation, or finish it with the reason it
 * cannot run; `here`: on this thread when the device is idle (rt_qm_enqueue_here).
 */
static void dispatch_run(struct ipurt_runner *r, struct run_ref *ref, int stage,
			 uint32_t *anchors, void **bufs, int here)
{
	struct ipurt_future *f = ref->f;
	struct replica *rep;
	uint32_t k;
	int rc;

	for (;;) {
		rep = pick(r);
		if (!rep) {
			char why[200], msg[256];

			out_reasons(r, why, sizeof(why));
			pthread_mutex_lock(&f->lock);
			ref->rep = NULL;
			pthread_mutex_unlock(&f->lock);
			snprintf(msg, sizeof(msg), "no device left in rotation (%s)", why);
			complete_run(ref, IPURT_E_DEVICE, msg);
			return;
		}
		if (atomic_load(&rep->unloaded) && reload(rep, ref))
			return;
		pthread_mutex_lock(&f->lock);
		ref->rep = rep;
		pthread_mutex_unlock(&f->lock);
		k = run_buffers(r, f, ref->run, stage, anchors, bufs);
		atomic_fetch_add(&rep->outstanding, 1);
		rc = here ? rt_qm_enqueue_here(rep->qm, anchors, bufs, k, ref)
			  : ipurt_qm_enqueue(rep->qm, anchors, bufs, k, ref);
		if (!rc)
			break;
		atomic_fetch_sub(&rep->outstanding, 1);
		/* the device was taken out while we queued: another one (it is out of pick's way) */
		if (rc == IPURT_E_CLOSED && atomic_load(&rep->out) && !atomic_load(&r->closing))
			continue;
		complete_run(ref, rc, rc == IPURT_E_NOMEM ? "out of memory queuing the request" :
			     "the runner is closing");
		return;
	}
	/*
	 * Taken out just after we queued: its flush may have come before the
	 * run reached the queue, so flush again and the run comes back to move.
	 */
	if (atomic_load(&rep->out))
		rt_qm_fail(rep->qm);
}

/* Flush devices taken out; move their runs (and failed ones) elsewhere. */
static void *failover_main(void *arg)
{
	struct ipurt_runner *r = arg;
	uint32_t n = r->m->num_anchors + 1, i;
	uint32_t *anchors = malloc(n * sizeof(*anchors));
	void **bufs = malloc(n * sizeof(*bufs));

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct replica *flush = NULL;
		struct run_ref *ref;

		for (i = 0; i < r->nrep && !flush; i++) {
			if (atomic_load(&r->reps[i].out) && !r->reps[i].recovered) {
				flush = &r->reps[i];
				flush->recovered = 1;
			}
		}
		if (flush) {
			pthread_mutex_unlock(&r->lock);
			rt_qm_fail(flush->qm);
			pthread_mutex_lock(&r->lock);
			continue;
		}
		ref = r->fo_head;
		if (ref) {
			r->fo_head = ref->next;
			if (!r->fo_head)
				r->fo_tail = NULL;
			pthread_mutex_unlock(&r->lock);
			if (atomic_load(&r->closing)) {
				complete_run(ref, IPURT_E_CLOSED, "the runner is closing");
			} else if (!anchors || !bufs) {
				complete_run(ref, IPURT_E_NOMEM, "out of memory moving a run to another device");
			} else {
				pthread_mutex_lock(&ref->f->lock);
				ref->first = (int32_t)(ref->rep - r->reps);
				pthread_mutex_unlock(&ref->f->lock);
				ref->moves++;
				dispatch_run(r, ref, 0, anchors, bufs, 0);
			}
			pthread_mutex_lock(&r->lock);
			continue;
		}
		if (atomic_load(&r->closing))
			break;
		pthread_cond_wait(&r->cv, &r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	free(anchors);
	free(bufs);
	return NULL;
}

static int open_replica(struct ipurt_runner *r, struct replica *rep, struct ipu_device *dev,
			char *err, size_t errlen)
{
	struct ipurt_session_opts so;
	struct ipu_device_info info;
	int rc;

	rep->r = r;
	rep->dev = dev;
	memset(&info, 0, sizeof(info));
	ipu_info(dev, &info);
	snprintf(rep->name, sizeof(rep->name), "%s", info.path[0] ? info.path : info.name);
	/* the request timeout bounds the Load program too */
	memset(&so, 0, sizeof(so));
	so.load_timeout_ns = r->cfg.timeout_ns ? (int64_t)r->cfg.timeout_ns : -1;
	rc = ipurt_session_create(dev, r->f, &so, &rep->s, err, errlen);
	if (rc) {
		if (r->nrep > 1) {
			char e[256];

			snprintf(e, sizeof(e), "%s", err ? err : "");
			ipu_errorf(err, errlen, rc, "%s: %s", rep->name, e);
		}
		return rc;
	}
	return rt_qm_create(rep->s, r->cfg.ring_buffer_size, run_done,
			    r->cfg.on_request ? run_dispatched : NULL, rep, &rep->qm, err, errlen);
}

static int open_runner(struct ipurt_runner *r, char *err, size_t errlen)
{
	struct ipurt_device_req req;
	struct ipu_device **devs;
	const char *only = NULL;
	uint32_t i, n = r->cfg.num_devices ? r->cfg.num_devices : 1, got;
	int rc, prog;

	r->m = ipuef_metadata(r->f);
	req.num_tiles = r->m->num_tiles;
	req.tile_mem = r->m->tile_mem;
	req.ipu_version = r->m->ipu_version;
	if (n == IPURT_ALL_LISTED) {
		if (!r->cfg.device || !*r->cfg.device) {
			return ipu_errorf(err, errlen, IPURT_E_INVAL,
				"num_devices IPURT_ALL_LISTED needs a device list (e.g. \"/dev/accel/accel0,/dev/accel/accel1\")");
		}
		only = r->cfg.device;
		n = 0;
	} else if (n > 1024) {
		return ipu_errorf(err, errlen, IPURT_E_INVAL, "num_devices %u: at most 1024", n);
	}
	if (r->cfg.dm) {
		r->dm = r->cfg.dm;
	} else {
		/*
		 * No device named: the in-process device is software, so it is
		 * made to match the model's target (tiles, tile memory,
		 * version), one per replica; /dev/accel/accelN nodes are listed after.
		 */
		char one[128], *spec = NULL;
		const char *v = r->m->ipu_version;

		if (!r->cfg.device || !*r->cfg.device) {
			size_t l, k;

			snprintf(one, sizeof(one), "model:tiles=%u,tile_mem=%u%s%s", r->m->num_tiles,
				 r->m->tile_mem, v && (!strcmp(v, "ipu2") || !strcmp(v, "ipu21")) ?
				 ",version=" : "", v && (!strcmp(v, "ipu2") || !strcmp(v, "ipu21")) ? v : "");
			l = strlen(one);
			spec = malloc(n * (l + 1));
			if (!spec) {
				return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
			}
			for (k = 0; k < n; k++) {
				memcpy(spec + k * (l + 1), one, l);
				spec[k * (l + 1) + l] = k + 1 < n ? ';' : 0;
			}
		}
		rc = ipurt_dm_create(spec ? spec : r->cfg.device, &r->own_dm, err, errlen);
		free(spec);
		if (rc)
			return rc;
		r->dm = r->own_dm;
	}
	devs = calloc(ipurt_dm_count(r->dm) + 1, sizeof(*devs));
	if (!devs) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	rc = ipurt_dm_acquire_n(r->dm, &req, n, only, r->cfg.wait_policy, r->cfg.wait_timeout_ns,
				devs, err, errlen);
	for (got = 0; !rc && devs[got]; got++)
		;
	if (!rc) {
		r->reps = calloc(got, sizeof(*r->reps));
		if (!r->reps) {
			for (i = 0; i < got; i++)
				ipurt_dm_release(r->dm, devs[i]);
			ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
			rc = IPURT_E_NOMEM;
		}
	}
	if (rc) {
		free(devs);
		return rc;
	}
	r->nrep = got;
	for (i = 0; i < got; i++)
		r->reps[i].dev = devs[i];	/* released by destroy from here on */
	free(devs);
	prog = ipuef_find_program(r->f, "main") ? (int)ipuef_find_program(r->f, "main")->index : -1;
	for (i = 0; i < r->nrep; i++) {
		rc = open_replica(r, &r->reps[i], r->reps[i].dev, err, errlen);
		if (rc)
			return rc;
		if (!i)
			prog = ipurt_executable_program(ipurt_session_executable(r->reps[0].s), "main");
	}
	r->main_prog = (uint32_t)prog;
	r->index_anchor = -1;
	for (i = 0; i < r->m->num_anchors; i++)
		if (r->m->anchors[i].kind == IPUEF_ANCHOR_INDEX)
			r->index_anchor = (int)i;
	if (r->nrep > 1) {
		if (ipu_thread_create(&r->fo_thread, failover_main, r)) {
			return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory starting the failover thread");
		}
		r->fo_started = 1;
	}
	return 0;
}

static void group_done(void *ctx, void *tag, int status, const char *msg)
{
	(void)ctx;
	complete_run(tag, status, msg);
}

/* A model split over IPUs: a group of in-process devices of its own. */
static int open_group(struct ipurt_runner *r, char *err, size_t errlen)
{
	r->m = ipuef_metadata(r->f);
	r->index_anchor = -1;
	if (r->cfg.dm || (r->cfg.num_devices > 1 && r->cfg.num_devices != IPURT_ALL_LISTED))
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "the model is split over %u IPUs: it opens its own group of devices (no device manager, no replication yet)",
				  ipuef_num_ipus(r->f));
	return rt_group_open(r->f, r->cfg.device, r->cfg.ring_buffer_size, group_done, r, &r->grp,
			     err, errlen);
}

int ipurt_runner_create_from(const struct ipuef_file *f, const struct ipurt_config *cfg,
			     struct ipurt_runner **out, char *err, size_t errlen)
{
	struct ipurt_runner *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	int rc;

	*out = NULL;
	if (!r) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	if (cfg)
		r->cfg = *cfg;
	else
		ipurt_config_init(&r->cfg);
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->reload_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	r->f = f;
	rc = ipuef_num_ipus(f) > 1 ? open_group(r, err, errlen) : open_runner(r, err, errlen);
	if (rc) {
		ipurt_runner_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

int ipurt_runner_create(const char *path, const struct ipurt_config *cfg,
			struct ipurt_runner **out, char *err, size_t errlen)
{
	struct ipuef_file *f;
	int rc = ipuef_open(path, &f, err, errlen);

	*out = NULL;
	if (rc)
		return rc;
	rc = ipurt_runner_create_from(f, cfg, out, err, errlen);
	if (rc) {
		ipuef_close(f);
		return rc;
	}
	(*out)->own_file = f;
	return 0;
}

void ipurt_runner_destroy(struct ipurt_runner *r)
{
	uint32_t i;

	if (!r)
		return;
	/* no more moves: what fails from here on is reported as it is */
	pthread_mutex_lock(&r->lock);
	atomic_store(&r->closing, 1);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->lock);
	if (r->fo_started)
		pthread_join(r->fo_thread, NULL);
	rt_group_close(r->grp);
	for (i = 0; i < r->nrep; i++)
		ipurt_qm_destroy(r->reps[i].qm);
	for (i = 0; i < r->nrep; i++) {
		uint32_t k;

		for (k = 0; k < IPU_MAX_REGISTERED; k++)
			if (r->reg_used[k] && r->reps[i].s)
				ipu_unregister_memory(r->reps[i].dev, r->reps[i].reg_ids[k]);
		ipurt_session_destroy(r->reps[i].s);
		if (r->reps[i].dev)
			ipurt_dm_release(r->dm, r->reps[i].dev);
	}
	free(r->reps);
	ipurt_dm_destroy(r->own_dm);
	ipuef_close(r->own_file);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->reload_lock);
	pthread_cond_destroy(&r->cv);
	free(r);
}

const struct ipuef_file *ipurt_runner_file(const struct ipurt_runner *r)
{
	return r->f;
}

struct ipu_device *ipurt_runner_device(const struct ipurt_runner *r)
{
	if (r->grp)
		return ipu_group_device(rt_group_ipus(r->grp), 0);
	return r->nrep ? r->reps[0].dev : NULL;
}

uint32_t ipurt_runner_num_devices(const struct ipurt_runner *r)
{
	return r->grp ? ipu_group_size(rt_group_ipus(r->grp)) : r->nrep;
}

struct ipu_device *ipurt_runner_device_at(const struct ipurt_runner *r, uint32_t i)
{
	if (r->grp)
		return ipu_group_device(rt_group_ipus(r->grp), i);
	return i < r->nrep ? r->reps[i].dev : NULL;
}

struct ipu_group *ipurt_runner_group(const struct ipurt_runner *r)
{
	return r->grp ? rt_group_ipus(r->grp) : NULL;
}

int ipurt_runner_device_status(struct ipurt_runner *r, uint32_t i, uint64_t *runs_ok,
			       char *why, size_t whylen)
{
	int in;

	if (r->grp) {
		uint64_t ok, failed;

		if (i >= ipu_group_size(rt_group_ipus(r->grp)))
			return -1;
		/* the IPUs run every request together: the group's count */
		rt_group_counts(r->grp, &ok, &failed);
		if (runs_ok)
			*runs_ok = ok;
		if (why && whylen)
			*why = 0;
		return 1;
	}
	if (i >= r->nrep)
		return -1;
	if (runs_ok)
		*runs_ok = atomic_load(&r->reps[i].runs_ok);
	pthread_mutex_lock(&r->lock);
	in = !atomic_load(&r->reps[i].out);
	if (why && whylen)
		snprintf(why, whylen, "%s", in ? "" : r->reps[i].why);
	pthread_mutex_unlock(&r->lock);
	return in;
}

static int register_error(int rc, void *addr, size_t len, char *err, size_t errlen)
{
	switch (rc) {
	case IPU_E_BUSY:
		return ipu_errorf(err, errlen, IPURT_E_BUSY, "cannot register %zu bytes: all %d slots of the device are in use",
			len, IPU_MAX_REGISTERED);
	case IPU_E_NOMEM:
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "cannot register %zu bytes: out of memory (or over RLIMIT_MEMLOCK)",
			len);
	default:
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
			"cannot register %zu bytes at %p: %s (ranges may not overlap, 1 GiB at most each)",
			len, addr, ipu_strerror(rc));
	}
}

int ipurt_runner_register_memory(struct ipurt_runner *r, void *addr, size_t len,
				 uint32_t *id, char *err, size_t errlen)
{
	uint32_t slot, i;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	for (slot = 0; slot < IPU_MAX_REGISTERED && r->reg_used[slot]; slot++)
		;
	if (slot == IPU_MAX_REGISTERED) {
		pthread_mutex_unlock(&r->lock);
		return register_error(IPU_E_BUSY, addr, len, err, errlen);
	}
	/* on every device: any of them may run a request using the memory */
	for (i = 0; i < r->nrep && !rc; i++)
		rc = ipu_register_memory(r->reps[i].dev, addr, len, &r->reps[i].reg_ids[slot]);
	if (rc) {
		while (--i > 0)
			ipu_unregister_memory(r->reps[i - 1].dev, r->reps[i - 1].reg_ids[slot]);
		pthread_mutex_unlock(&r->lock);
		return register_error(rc, addr, len, err, errlen);
	}
	r->reg_used[slot] = 1;
	pthread_mutex_unlock(&r->lock);
	*id = slot;
	return 0;
}

int ipurt_runner_unregister_memory(struct ipurt_runner *r, uint32_t id)
{
	uint32_t i;

	pthread_mutex_lock(&r->lock);
	if (id >= IPU_MAX_REGISTERED || !r->reg_used[id]) {
		pthread_mutex_unlock(&r->lock);
		return IPURT_E_INVAL;
	}
	for (i = 0; i < r->nrep; i++)
		ipu_unregister_memory(r->reps[i].dev, r->reps[i].reg_ids[id]);
	r->reg_used[id] = 0;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static int enqueue_runs(struct ipurt_runner *r, struct ipurt_future *f, int here)
{
	uint32_t run, n = f->nb + 1;
	uint32_t *anchors = malloc(n * sizeof(*anchors));
	void **bufs = malloc(n * sizeof(*bufs));

	if (!anchors || !bufs) {
		free(anchors);
		free(bufs);
		return IPURT_E_NOMEM;
	}
	if (r->grp) {
		/* every IPU of the group runs each run, in the order queued */
		for (run = 0; run < f->nruns; run++) {
			uint32_t k = run_buffers(r, f, run, 1, anchors, bufs);
			int rc, first;

			/*
			 * Handed to the IPUs' queues is reaching the device (a wait
			 * for room among the requests in flight included): said
			 * before, as the request may be done before the call returns.
			 */
			if (r->cfg.on_request) {
				pthread_mutex_lock(&f->lock);
				first = !f->started;
				f->started = 1;
				pthread_mutex_unlock(&f->lock);
				if (first)
					r->cfg.on_request(r->cfg.on_request_ctx, f->id, IPURT_REQ_STARTED,
							  now_ns(), 0);
			}
			rc = rt_group_enqueue(r->grp, anchors, bufs, k, &f->refs[run]);
			if (rc)
				complete_run(&f->refs[run], rc,
					     rc == IPURT_E_NOMEM ? "the group's devices refused the request's buffers"
								 : "the group of IPUs failed queuing a request");
		}
		free(anchors);
		free(bufs);
		return 0;
	}
	/* a run that cannot be queued reports itself; the rest still go */
	for (run = 0; run < f->nruns; run++)
		dispatch_run(r, &f->refs[run], 1, anchors, bufs, here);
	free(anchors);
	free(bufs);
	return 0;
}

/*
 * `here` (execute, which waits for the request at once): a request of one
 * run, on one device, with no timeout to recover from, runs on the
 * caller's thread when the device is idle, which saves the hand-off to the
 * device's thread and back.
 */
static int execute_async(struct ipurt_runner *r, const struct ipurt_tensor *inputs,
			 uint32_t nin, const struct ipurt_tensor *outputs, uint32_t nout,
			 struct ipurt_future **out, int here, char *err, size_t errlen)
{
	struct ipurt_future *f = calloc(1, sizeof(*f));
	pthread_condattr_t ca;
	uint32_t i;
	int rc;

	*out = NULL;
	if (!f) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cv, &ca);
	pthread_condattr_destroy(&ca);
	f->r = r;
	rc = prepare(r, inputs, nin, outputs, nout, f, err, errlen);
	if (rc) {
		if (rc == IPURT_E_NOMEM)
			ipu_errorf(err, errlen, rc, "out of memory");
		ipurt_future_free(f);
		return rc;
	}
	f->refs = calloc(f->nruns, sizeof(*f->refs));
	if (!f->refs) {
		ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
		ipurt_future_free(f);
		return IPURT_E_NOMEM;
	}
	for (i = 0; i < f->nruns; i++) {
		f->refs[i].f = f;
		f->refs[i].run = i;
		f->refs[i].first = -1;
	}
	f->remaining = f->nruns;
	f->id = atomic_fetch_add(&r->next_id, 1);
	if (r->cfg.on_request)
		r->cfg.on_request(r->cfg.on_request_ctx, f->id, IPURT_REQ_QUEUED, now_ns(), 0);
	rc = enqueue_runs(r, f, here && f->nruns == 1 && r->nrep == 1 && !r->cfg.timeout_ns);
	if (rc) {
		/* nothing was queued: no completion will ever come for it */
		if (r->cfg.on_request)
			r->cfg.on_request(r->cfg.on_request_ctx, f->id, IPURT_REQ_DONE, now_ns(), rc);
		f->remaining = 0;
		ipurt_future_free(f);
		return ipu_errorf(err, errlen, rc, "out of memory queuing the request");
	}
	*out = f;
	return 0;
}

int ipurt_runner_execute_async(struct ipurt_runner *r, const struct ipurt_tensor *inputs,
			       uint32_t nin, const struct ipurt_tensor *outputs, uint32_t nout,
			       struct ipurt_future **out, char *err, size_t errlen)
{
	return execute_async(r, inputs, nin, outputs, nout, out, 0, err, errlen);
}

/*
 * A replicated request not done in time: its devices are taken out and
 * flushed, so its runs move to devices still in rotation.  Returns 0 when
 * there was nothing left to take out.
 */
static int take_out_stuck(struct ipurt_future *f, int64_t timeout_ns)
{
	struct ipurt_runner *r = f->r;
	uint32_t i, k;
	int any = 0;

	for (i = 0; i < r->nrep; i++) {
		struct replica *rep = &r->reps[i];
		int holds = 0;

		pthread_mutex_lock(&f->lock);
		for (k = 0; k < f->nruns && !holds; k++)
			holds = !f->refs[k].done && f->refs[k].rep == rep;
		pthread_mutex_unlock(&f->lock);
		if (!holds)
			continue;
		if (!atomic_load(&rep->out)) {
			char why[128];

			snprintf(why, sizeof(why), "a request timed out after %lld ns on it",
				 (long long)timeout_ns);
			take_out(rep, why);
		}
		rt_qm_fail(rep->qm);
		any = 1;
	}
	return any;
}

int ipurt_future_wait(struct ipurt_future *f, int64_t timeout_ns, char *err, size_t errlen)
{
	int recover = 0, rc, timed_out = 0;

	if (timeout_ns < 0) {
		timeout_ns = (int64_t)f->r->cfg.timeout_ns;
		recover = timeout_ns > 0;
		if (!timeout_ns)
			timeout_ns = -1;
	}
	pthread_mutex_lock(&f->lock);
	if (!f->done && timeout_ns >= 0) {
		struct timespec dl;

		deadline(&dl, timeout_ns);
		while (!f->done && pthread_cond_timedwait(&f->cv, &f->lock, &dl) != ETIMEDOUT)
			;
	}
	while (!f->done && timeout_ns >= 0 && recover && f->r->nrep > 1) {
		struct timespec dl;

		/* each round takes out at least one device, or finds none left */
		pthread_mutex_unlock(&f->lock);
		timed_out = 1;
		if (!take_out_stuck(f, timeout_ns)) {
			pthread_mutex_lock(&f->lock);
			break;
		}
		pthread_mutex_lock(&f->lock);
		deadline(&dl, timeout_ns);
		while (!f->done && pthread_cond_timedwait(&f->cv, &f->lock, &dl) != ETIMEDOUT)
			;
	}
	if (!f->done && timeout_ns >= 0 && !timed_out) {
		pthread_mutex_unlock(&f->lock);
		if (!recover) {
			return ipu_errorf(err, errlen, IPURT_E_TIMEOUT, "request not finished after %lld ns", (long long)timeout_ns);
		}
		/* the pipeline is stuck (e.g. inputs for another subgraph): reset it */
		ipurt_qm_recover(f->r->reps[0].qm);
		pthread_mutex_lock(&f->lock);
		while (!f->done)
			pthread_cond_wait(&f->cv, &f->lock);
		pthread_mutex_unlock(&f->lock);
		return ipu_errorf(err, errlen, IPURT_E_TIMEOUT,
			"request timed out after %lld ns (does the model read inputs that were not given?); queued requests were cancelled",
			(long long)timeout_ns);
	}
	while (!f->done)
		pthread_cond_wait(&f->cv, &f->lock);
	rc = f->status;
	if (rc && timed_out) {
		ipu_errorf(err, errlen, IPURT_E_TIMEOUT,
			"request timed out after %lld ns on every device it was given to (does the model read inputs that were not given?): %s",
			(long long)timeout_ns, f->msg);
		rc = IPURT_E_TIMEOUT;
	} else if (rc) {
		ipu_errorf(err, errlen, rc, "%s", f->msg);
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int ipurt_future_done(struct ipurt_future *f)
{
	int done;

	pthread_mutex_lock(&f->lock);
	done = f->done;
	pthread_mutex_unlock(&f->lock);
	return done;
}

void ipurt_future_free(struct ipurt_future *f)
{
	if (!f)
		return;
	/* a future must not be freed while the device still uses its buffers */
	pthread_mutex_lock(&f->lock);
	while (f->remaining && !f->done && f->b && f->nruns)
		pthread_cond_wait(&f->cv, &f->lock);
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cv);
	free(f->b);
	free(f->scratch);
	free(f->refs);
	free(f);
}

int ipurt_runner_execute(struct ipurt_runner *r, const struct ipurt_tensor *inputs,
			 uint32_t nin, const struct ipurt_tensor *outputs, uint32_t nout,
			 char *err, size_t errlen)
{
	struct ipurt_future *f;
	int rc = execute_async(r, inputs, nin, outputs, nout, &f, 1, err, errlen);

	if (rc)
		return rc;
	rc = ipurt_future_wait(f, -1, err, errlen);
	ipurt_future_free(f);
	return rc;
}

int ipurt_runner_reset_state(struct ipurt_runner *r, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < r->nrep; i++) {
		int rc = ipurt_session_reset_state(r->reps[i].s, err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

int rt_runner_run_program(struct ipurt_runner *r, const char *program,
			  const struct ipurt_tensor *tensors, uint32_t n, char *err, size_t errlen)
{
	return ipurt_session_run_program(r->reps[0].s, program, tensors, n,
					 r->cfg.timeout_ns ? (int64_t)r->cfg.timeout_ns : -1, err, errlen);
}

int ipurt_runner_read_state(struct ipurt_runner *r, const char *name, void *dst,
			    uint64_t bytes, char *err, size_t errlen)
{
	if (!r->nrep)
		return ipu_errorf(err, errlen, IPURT_E_NAME, "the model has no state '%s'", name);
	return ipurt_session_read_state(r->reps[0].s, name, dst, bytes, err, errlen);
}

int ipurt_runner_write_state(struct ipurt_runner *r, const char *name, const void *src,
			     uint64_t bytes, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < r->nrep; i++) {
		int rc = ipurt_session_write_state(r->reps[i].s, name, src, bytes, err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}
