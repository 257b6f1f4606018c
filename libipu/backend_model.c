// SPDX-License-Identifier: MIT
/*
 * backend_model.c - the in-process device: the tile engine behind libipu's
 * API, with a device thread that runs queued programs and per-stream FIFOs
 * of user buffers that the engine's stream copies consume.
 *
 * Locking: one mutex per device protects the run queue, the stream FIFOs
 * and the run statuses.  The engine runs without it held.  Completions are
 * posted with no lock held, so a completion handler may submit buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ipu/custom_ops.h"
#include "ipu/engine.h"
#include "ipu/thread.h"
#include "backend.h"

#define STATUS_RING 1024u	/* statuses of the last runs kept for ipu_wait */
#define MSG_LEN 256

struct sbuf {
	void *buf;
	uint64_t tag;
	uint32_t len;
};

struct sfifo {
	struct sbuf *q;
	uint32_t cap, head, count;
	uint32_t dir, bytes;
};

struct run_req {
	uint64_t seq;
	uint32_t prog;
};

struct run_status {
	uint64_t seq;
	int status;
	char msg[MSG_LEN];
};

struct model_dev {
	struct ipu_device *dev;
	struct ipu_engine *eng;
	ipu_trace_fn trace_fn;		/* the user's hook, fed by trace_bridge */
	void *trace_ctx;
	struct ipu_engine_config cfg;
	uint32_t version;
	char serial[32];
	char *custom_paths;		/* spec's custom-ops=, or NULL */
	struct ipu_custom_set *custom;	/* their plugins, given to the engine */

	pthread_mutex_t lock;
	pthread_cond_t work;	/* device thread: runs, buffers, abort, stop */
	pthread_cond_t done;	/* waiters: run finished, abort finished */
	pthread_t thread;
	int stop;
	int aborting;
	int resetting;			/* resets under way: loads wait for them */
	int busy;
	int notifying;			/* a run handler is being called */
	int xfer_waiters;		/* stream copies waiting for a buffer */
	int loaded;
	int attached;

	struct run_req *runs;
	uint32_t runs_cap, runs_head, runs_count;
	uint64_t next_seq, done_seq;
	struct run_status *status;	/* STATUS_RING entries */

	struct sfifo *streams;
	uint32_t nstreams;

	ipu_run_fn run_fn;
	void *run_ctx;
};

static struct model_dev *M(struct ipu_device *d)
{
	return d->priv;
}

/* Parse "123", "64k", "1m" into bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{ "", 0 }, { "k", 10 }, { "K", 10 }, { "KiB", 10 }, { "m", 20 }, { "M", 20 },
		{ "MiB", 20 }, { "g", 30 }, { "G", 30 }, { "GiB", 30 },
	};
	size_t i;

	if (*s < '0' || *s > '9')	/* strtoull would take "-1" and " 1" */
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v > (UINT64_MAX >> units[i].shift))
			return -1;
		*out = (uint64_t)v << units[i].shift;
		return 0;
	}
	return -1;
}

static int parse_spec(struct model_dev *m, const char *spec, char *err, size_t errlen)
{
	char buf[4096], *save = NULL, *tok;

	m->cfg.num_tiles = 1472;
	m->cfg.tile_mem = 624 * 1024;
	m->cfg.workers = 0;
	m->version = 2;
	snprintf(m->serial, sizeof(m->serial), "model-%d", (int)getpid());
	if (strncmp(spec, "model", 5) || (spec[5] && spec[5] != ':')) {
		return ipu_errorf(err, errlen, IPU_E_INVAL, "'%s' is not a model device spec (model[:key=value,...])", spec);
	}
	if (!spec[5])
		return 0;
	if (strlen(spec + 6) >= sizeof(buf)) {
		return ipu_errorf(err, errlen, IPU_E_INVAL, "device spec too long");
	}
	strcpy(buf, spec + 6);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v = 0;

		if (!eq) {
			return ipu_errorf(err, errlen, IPU_E_INVAL, "device option '%s' needs a value (key=value)", tok);
		}
		*eq++ = 0;
		if (!strcmp(tok, "version")) {
			if (!strcmp(eq, "ipu2"))
				m->version = 2;
			else if (!strcmp(eq, "ipu21"))
				m->version = 21;
			else {
				return ipu_errorf(err, errlen, IPU_E_INVAL, "unknown device version '%s' (ipu2 or ipu21)", eq);
			}
			continue;
		}
		if (!strcmp(tok, "serial")) {
			snprintf(m->serial, sizeof(m->serial), "%s", eq);
			continue;
		}
		if (!strcmp(tok, "custom-ops") || !strcmp(tok, "custom_ops")) {
			/* repeatable: one library each, kept ':'-joined */
			size_t old = m->custom_paths ? strlen(m->custom_paths) : 0;
			char *p = realloc(m->custom_paths, old + strlen(eq) + 2);

			if (!p)
				return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
			if (old)
				p[old++] = ':';
			strcpy(p + old, eq);
			m->custom_paths = p;
			continue;
		}
		if (parse_size(eq, &v) || v > UINT32_MAX) {
			return ipu_errorf(err, errlen, IPU_E_INVAL,
				 "device option %s: '%s' is not a number below 2^32 (suffixes k, M, G, KiB, MiB, GiB)",
				 tok, eq);
		}
		if (!strcmp(tok, "tiles"))
			m->cfg.num_tiles = (uint32_t)v;
		else if (!strcmp(tok, "tile_mem") || !strcmp(tok, "tile-mem"))
			m->cfg.tile_mem = (uint32_t)v;
		else if (!strcmp(tok, "workers"))
			m->cfg.workers = (uint32_t)v;
		else {
			return ipu_errorf(err, errlen, IPU_E_INVAL,
				 "unknown device option '%s' (tiles, tile_mem, workers, version, serial, custom-ops)",
				 tok);
		}
	}
	return 0;
}

/* Collect every queued buffer (to be completed as cancelled). Lock held. */
static int drain_streams(struct model_dev *m, struct ipu_completion **out, uint32_t *n)
{
	uint32_t s, total = 0, k = 0;

	for (s = 0; s < m->nstreams; s++)
		total += m->streams[s].count;
	*out = NULL;
	*n = 0;
	if (!total)
		return 0;
	*out = malloc(total * sizeof(**out));
	if (!*out)
		return IPU_E_NOMEM;
	for (s = 0; s < m->nstreams; s++) {
		struct sfifo *f = &m->streams[s];

		while (f->count) {
			struct sbuf *b = &f->q[f->head];

			(*out)[k++] = (struct ipu_completion){ b->tag, s, IPU_E_CANCELLED, 0, 0 };
			f->head = (f->head + 1) % f->cap;
			f->count--;
		}
	}
	*n = k;
	return 0;
}

static void post_all(struct model_dev *m, struct ipu_completion *c, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		ipu_cq_post(&m->dev->cq, &c[i]);
	free(c);
}

/* Engine callback: move the next queued buffer of `stream`. */
static int model_transfer(void *ctx, uint32_t stream, uint32_t dir,
			  const struct ipu_stream_seg *segs, uint32_t nsegs,
			  uint32_t total, int *stalled)
{
	struct model_dev *m = ctx;
	struct sfifo *f;
	struct sbuf b;
	struct ipu_completion c;
	uint32_t i;
	uint8_t *p;

	pthread_mutex_lock(&m->lock);
	if (stream >= m->nstreams) {
		pthread_mutex_unlock(&m->lock);
		return IPU_E_STREAM;
	}
	f = &m->streams[stream];
	while (!f->count && !m->aborting && !m->stop) {
		*stalled = 1;
		m->xfer_waiters++;
		pthread_cond_wait(&m->work, &m->lock);
		m->xfer_waiters--;
	}
	if (m->aborting || m->stop) {
		pthread_mutex_unlock(&m->lock);
		return IPU_E_CANCELLED;
	}
	b = f->q[f->head];
	f->head = (f->head + 1) % f->cap;
	f->count--;
	pthread_mutex_unlock(&m->lock);

	/* the buffer is ours until its completion: copy with no lock held */
	p = b.buf;
	for (i = 0; i < nsegs; i++) {
		if (dir == IPUX_STREAM_H2D)
			memcpy(segs[i].ptr, p, segs[i].len);
		else
			memcpy(p, segs[i].ptr, segs[i].len);
		p += segs[i].len;
	}
	c = (struct ipu_completion){ b.tag, stream, 0, total, 0 };
	ipu_cq_post(&m->dev->cq, &c);
	return 0;
}

static void record_status(struct model_dev *m, uint64_t seq, int status, const char *msg)
{
	struct run_status *st = &m->status[seq % STATUS_RING];

	st->seq = seq;
	st->status = status;
	snprintf(st->msg, sizeof(st->msg), "%s", msg ? msg : "");
}

/* Report a finished run to the run handler; called with the lock held. */
static void notify_run(struct model_dev *m, uint64_t seq, int status)
{
	ipu_run_fn fn = m->run_fn;
	void *ctx = m->run_ctx;

	if (!fn)
		return;
	pthread_mutex_unlock(&m->lock);
	fn(ctx, seq, status, m->status[seq % STATUS_RING].msg);
	pthread_mutex_lock(&m->lock);
}

/*
 * A run finished (lock held): its status, then its handler.  No run starts
 * (on the device thread or a caller's, model_run_here) and no abort is
 * processed while a handler is being called (notifying): handlers are
 * called one at a time, in the order of the runs.  The device is no
 * longer busy meanwhile, as the handler may complete what a waiter then
 * does with the idle device (ipu_set_trace).
 */
static void finish_run(struct model_dev *m, uint64_t seq, int rc, const char *msg)
{
	m->busy = 0;
	record_status(m, seq, rc, msg);
	m->done_seq = seq;
	m->notifying = 1;
	pthread_cond_broadcast(&m->done);
	notify_run(m, seq, rc);
	m->notifying = 0;
	/* the device thread, if it has work now */
	if (m->runs_count || m->aborting)
		pthread_cond_broadcast(&m->work);
}

static void *device_thread(void *arg)
{
	struct model_dev *m = arg;
	char msg[MSG_LEN];

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		/* a run on a caller's thread (busy) sees the abort first */
		if (m->aborting && !m->busy && !m->notifying) {
			struct ipu_completion *c;
			uint32_t n;

			while (m->runs_count) {
				struct run_req r = m->runs[m->runs_head];

				record_status(m, r.seq, IPU_E_CANCELLED, "aborted before it started");
				m->done_seq = r.seq;
				m->runs_head = (m->runs_head + 1) % m->runs_cap;
				m->runs_count--;
				notify_run(m, r.seq, IPU_E_CANCELLED);
			}
			drain_streams(m, &c, &n);
			/* deliver before the abort counts as finished */
			pthread_mutex_unlock(&m->lock);
			post_all(m, c, n);
			pthread_mutex_lock(&m->lock);
			ipu_engine_clear_abort(m->eng);
			m->aborting = 0;
			pthread_cond_broadcast(&m->done);
			continue;
		}
		if (!m->runs_count || m->busy || m->notifying || m->aborting) {
			pthread_cond_wait(&m->work, &m->lock);
			continue;
		}
		{
			struct run_req r = m->runs[m->runs_head];
			int rc;

			m->runs_head = (m->runs_head + 1) % m->runs_cap;
			m->runs_count--;
			m->busy = 1;
			pthread_mutex_unlock(&m->lock);
			msg[0] = 0;
			rc = ipu_engine_run(m->eng, r.prog, msg, sizeof(msg));
			pthread_mutex_lock(&m->lock);
			finish_run(m, r.seq, rc, msg);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

static int model_open(struct ipu_device *d, const char *spec, char *err, size_t errlen)
{
	struct model_dev *m = calloc(1, sizeof(*m));
	struct ipu_stream_ops sops;
	pthread_condattr_t ca;
	int rc;

	if (!m) {
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	m->dev = d;
	rc = parse_spec(m, spec, err, errlen);
	if (!rc && m->custom_paths)
		rc = ipu_custom_set_open(m->custom_paths, &m->custom, err, errlen);
	if (rc) {
		free(m->custom_paths);
		free(m);
		return rc;
	}
	m->status = calloc(STATUS_RING, sizeof(*m->status));
	if (!m->status) {
		ipu_custom_set_close(m->custom);
		free(m->custom_paths);
		free(m);
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	sops.transfer = model_transfer;
	sops.ctx = m;
	rc = ipu_engine_create(&m->cfg, &sops, &m->eng, err, errlen);
	if (rc) {
		free(m->status);
		ipu_custom_set_close(m->custom);
		free(m->custom_paths);
		free(m);
		return rc;
	}
	ipu_engine_set_custom(m->eng, ipu_custom_set_table(m->custom));
	/* tile memory is observed only through streams here */
	ipu_engine_set_elide(m->eng, 1);
	m->cfg.workers = 0;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->work, &ca);
	pthread_cond_init(&m->done, &ca);
	pthread_condattr_destroy(&ca);
	d->priv = m;
	if (ipu_thread_create(&m->thread, device_thread, m)) {
		ipu_engine_destroy(m->eng);
		free(m->status);
		ipu_custom_set_close(m->custom);
		free(m->custom_paths);
		free(m);
		d->priv = NULL;
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "cannot start the device thread");
	}
	return 0;
}

static void free_streams(struct model_dev *m)
{
	uint32_t i;

	for (i = 0; i < m->nstreams; i++)
		free(m->streams[i].q);
	free(m->streams);
	m->streams = NULL;
	m->nstreams = 0;
}

static int model_abort(struct ipu_device *d);

static void model_close(struct ipu_device *d)
{
	struct model_dev *m = M(d);

	model_abort(d);
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_broadcast(&m->work);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	ipu_engine_destroy(m->eng);
	free_streams(m);
	free(m->runs);
	free(m->status);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->work);
	pthread_cond_destroy(&m->done);
	/* after the engine: its executable ran the plugins' code */
	ipu_custom_set_close(m->custom);
	free(m->custom_paths);
	free(m);
}

static int model_info(struct ipu_device *d, struct ipu_device_info *info)
{
	struct model_dev *m = M(d);
	struct ipu_engine_config cfg = m->cfg;

	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "model");
	snprintf(info->path, sizeof(info->path), "%s", d->spec);
	info->backend = IPU_BACKEND_MODEL;
	info->num_tiles = cfg.num_tiles;
	info->tile_mem = cfg.tile_mem;
	info->version = m->version;
	snprintf(info->version_name, sizeof(info->version_name), "ipu%u", m->version);
	snprintf(info->serial, sizeof(info->serial), "%s", m->serial);
	{
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		info->workers = m->cfg.workers ? m->cfg.workers : (n > 0 ? (uint32_t)n : 1);
	}
	info->max_streams = IPUX_MAX_STREAMS;
	pthread_mutex_lock(&m->lock);
	info->owner_pid = m->attached ? (int32_t)getpid() : 0;
	info->state = m->busy || m->runs_count ? IPU_STATE_BUSY :
		      m->loaded ? IPU_STATE_READY : IPU_STATE_IDLE;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_attach(struct ipu_device *d)
{
	struct model_dev *m = M(d);

	pthread_mutex_lock(&m->lock);
	m->attached = 1;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_detach(struct ipu_device *d)
{
	struct model_dev *m = M(d);

	pthread_mutex_lock(&m->lock);
	m->attached = 0;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Wait (lock held) until no run is queued or running. */
static void wait_idle(struct model_dev *m)
{
	while (m->busy || m->runs_count || m->aborting)
		pthread_cond_wait(&m->done, &m->lock);
}

static int model_load(struct ipu_device *d, const void *image, size_t len, char *err,
		      size_t errlen)
{
	struct model_dev *m = M(d);
	struct ipu_completion *c = NULL;
	struct ipu_exe_info xi;
	uint32_t n = 0, i;
	int rc;

	pthread_mutex_lock(&m->lock);
	/* a load during a reset would be undone by it */
	while (m->resetting)
		pthread_cond_wait(&m->done, &m->lock);
	wait_idle(m);
	drain_streams(m, &c, &n);
	free_streams(m);
	m->loaded = 0;
	rc = ipu_engine_load(m->eng, image, len, err, errlen);
	if (!rc) {
		ipu_engine_exe_info(m->eng, &xi);
		m->streams = calloc(xi.num_streams ? xi.num_streams : 1, sizeof(*m->streams));
		if (!m->streams) {
			rc = IPU_E_NOMEM;
			ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
		} else {
			m->nstreams = xi.num_streams;
			for (i = 0; i < xi.num_streams; i++)
				ipu_engine_stream_info(m->eng, i, &m->streams[i].dir,
						       &m->streams[i].bytes);
			m->loaded = 1;
		}
	}
	pthread_mutex_unlock(&m->lock);
	post_all(m, c, n);
	return rc;
}

static int model_stream_count(struct ipu_device *d)
{
	struct model_dev *m = M(d);
	int n;

	pthread_mutex_lock(&m->lock);
	n = m->loaded ? (int)m->nstreams : IPU_E_NOT_LOADED;
	pthread_mutex_unlock(&m->lock);
	return n;
}

static int model_stream_info(struct ipu_device *d, uint32_t stream, uint32_t *dir,
			     uint32_t *bytes)
{
	struct model_dev *m = M(d);
	int rc = 0;

	pthread_mutex_lock(&m->lock);
	if (!m->loaded)
		rc = IPU_E_NOT_LOADED;
	else if (stream >= m->nstreams)
		rc = IPU_E_INVAL;
	else {
		*dir = m->streams[stream].dir;
		*bytes = m->streams[stream].bytes;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static int model_run(struct ipu_device *d, uint32_t prog, uint64_t *seq)
{
	struct model_dev *m = M(d);

	pthread_mutex_lock(&m->lock);
	if (!m->loaded) {
		pthread_mutex_unlock(&m->lock);
		return IPU_E_NOT_LOADED;
	}
	if (m->runs_count == m->runs_cap) {
		uint32_t ncap = m->runs_cap ? m->runs_cap * 2 : 16, i;
		struct run_req *n = malloc(ncap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&m->lock);
			return IPU_E_NOMEM;
		}
		for (i = 0; i < m->runs_count; i++)
			n[i] = m->runs[(m->runs_head + i) % m->runs_cap];
		free(m->runs);
		m->runs = n;
		m->runs_cap = ncap;
		m->runs_head = 0;
	}
	m->next_seq++;
	m->runs[(m->runs_head + m->runs_count) % m->runs_cap] =
		(struct run_req){ m->next_seq, prog };
	m->runs_count++;
	*seq = m->next_seq;
	pthread_cond_broadcast(&m->work);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_run_here(struct ipu_device *d, uint32_t prog, uint64_t *seq)
{
	struct model_dev *m = M(d);
	char msg[MSG_LEN];
	uint64_t s;
	int rc;

	pthread_mutex_lock(&m->lock);
	if (!m->loaded) {
		pthread_mutex_unlock(&m->lock);
		return IPU_E_NOT_LOADED;
	}
	if (m->busy || m->notifying || m->runs_count || m->aborting || m->resetting || m->stop) {
		pthread_mutex_unlock(&m->lock);
		return IPU_E_BUSY;
	}
	s = ++m->next_seq;
	*seq = s;
	m->busy = 1;
	pthread_mutex_unlock(&m->lock);
	msg[0] = 0;
	rc = ipu_engine_run(m->eng, prog, msg, sizeof(msg));
	pthread_mutex_lock(&m->lock);
	finish_run(m, s, rc, msg);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_wait(struct ipu_device *d, uint64_t seq, int64_t timeout_ns, char *err,
		      size_t errlen)
{
	struct model_dev *m = M(d);
	struct timespec dl;
	int rc = 0;

	if (timeout_ns > 0)
		ipu_deadline(&dl, timeout_ns);
	pthread_mutex_lock(&m->lock);
	if (seq == 0 || seq > m->next_seq) {
		pthread_mutex_unlock(&m->lock);
		return ipu_errorf(err, errlen, IPU_E_INVAL, "no run with sequence number %llu", (unsigned long long)seq);
	}
	while (m->done_seq < seq) {
		if (timeout_ns == 0 ||
		    (timeout_ns > 0 && pthread_cond_timedwait(&m->done, &m->lock, &dl) == ETIMEDOUT)) {
			if (m->done_seq >= seq)
				break;
			pthread_mutex_unlock(&m->lock);
			return ipu_errorf(err, errlen, IPU_E_TIMEOUT, "run %llu not finished after %lld ns",
				 (unsigned long long)seq, (long long)timeout_ns);
		}
		if (timeout_ns < 0)
			pthread_cond_wait(&m->done, &m->lock);
	}
	{
		const struct run_status *st = &m->status[seq % STATUS_RING];

		if (st->seq != seq) {
			rc = IPU_E_INVAL;
			ipu_errorf(err, errlen, IPU_E_INVAL, "run %llu is too old: its status was dropped",
				 (unsigned long long)seq);
		} else {
			rc = st->status;
			if (rc)
				ipu_errorf(err, errlen, rc, "%s", st->msg);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static int model_submit(struct ipu_device *d, uint32_t stream, void *buf, size_t len,
			uint64_t tag)
{
	struct model_dev *m = M(d);
	struct sfifo *f;

	pthread_mutex_lock(&m->lock);
	if (!m->loaded) {
		pthread_mutex_unlock(&m->lock);
		return IPU_E_NOT_LOADED;
	}
	if (stream >= m->nstreams || !buf || len != m->streams[stream].bytes) {
		pthread_mutex_unlock(&m->lock);
		return IPU_E_INVAL;
	}
	f = &m->streams[stream];
	if (f->count == f->cap) {
		uint32_t ncap = f->cap ? f->cap * 2 : 16, i;
		struct sbuf *n = malloc(ncap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&m->lock);
			return IPU_E_NOMEM;
		}
		for (i = 0; i < f->count; i++)
			n[i] = f->q[(f->head + i) % f->cap];
		free(f->q);
		f->q = n;
		f->cap = ncap;
		f->head = 0;
	}
	f->q[(f->head + f->count) % f->cap] = (struct sbuf){ buf, tag, (uint32_t)len };
	f->count++;
	/*
	 * Only a stream copy waiting for a buffer wants to know: the device
	 * thread waits on the same condition for runs, and waking it for
	 * every buffer cost a context switch each (two per request).
	 */
	if (m->xfer_waiters)
		pthread_cond_broadcast(&m->work);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_abort(struct ipu_device *d)
{
	struct model_dev *m = M(d);

	pthread_mutex_lock(&m->lock);
	m->aborting = 1;
	ipu_engine_abort(m->eng);
	pthread_cond_broadcast(&m->work);
	while (m->aborting || m->busy)
		pthread_cond_wait(&m->done, &m->lock);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_reset(struct ipu_device *d)
{
	struct model_dev *m = M(d);

	/*
	 * Unloaded first: a run or buffer another thread submits while the
	 * abort below is under way is refused, instead of a run starting
	 * after it and waiting forever for a buffer the abort cancelled.
	 */
	pthread_mutex_lock(&m->lock);
	m->resetting++;
	m->loaded = 0;
	pthread_mutex_unlock(&m->lock);
	model_abort(d);
	pthread_mutex_lock(&m->lock);
	wait_idle(m);
	free_streams(m);
	m->loaded = 0;
	ipu_engine_unload(m->eng);
	ipu_engine_reset_counters(m->eng);
	m->resetting--;
	pthread_cond_broadcast(&m->done);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_set_run_handler(struct ipu_device *d, ipu_run_fn fn, void *ctx)
{
	struct model_dev *m = M(d);

	pthread_mutex_lock(&m->lock);
	m->run_fn = fn;
	m->run_ctx = ctx;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int model_counters(struct ipu_device *d, struct ipu_counters *out)
{
	struct ipu_engine_counters k;

	ipu_engine_counters(M(d)->eng, &k);
	*out = (struct ipu_counters){
		.programs_run = k.programs_run, .steps = k.steps,
		.compute_sets = k.compute_sets, .vertices = k.vertices,
		.cycles = k.cycles, .compute_cycles = k.compute_cycles,
		.exchange_cycles = k.exchange_cycles, .sync_cycles = k.sync_cycles,
		.stream_cycles = k.stream_cycles, .exchange_bytes = k.exchange_bytes,
		.stream_bytes_in = k.stream_bytes_in, .stream_bytes_out = k.stream_bytes_out,
		.stream_copies = k.stream_copies, .stream_stalls = k.stream_stalls,
		.stall_ns = k.stall_ns, .errors = k.errors,
	};
	return 0;
}

static int model_cs_profile(struct ipu_device *d, uint32_t cs, struct ipu_cs_profile *out)
{
	struct ipu_engine_cs_profile p;
	int rc = ipu_engine_cs_profile(M(d)->eng, cs, &p);

	if (rc)
		return rc;
	*out = (struct ipu_cs_profile){
		.executions = p.executions, .cycles = p.cycles,
		.cycles_per_run = p.cycles_per_run, .tiles = p.tiles, .vertices = p.vertices,
	};
	return 0;
}

/* libipu numbers directions and step kinds as the executable format does. */
_Static_assert(IPU_STREAM_H2D == IPUX_STREAM_H2D && IPU_STREAM_D2H == IPUX_STREAM_D2H,
	       "stream directions");
_Static_assert((int)IPU_STEP_EXECUTE == (int)IPUX_STEP_EXECUTE &&
	       (int)IPU_STEP_EXCHANGE == (int)IPUX_STEP_EXCHANGE &&
	       (int)IPU_STEP_STREAM_COPY == (int)IPUX_STEP_STREAM_COPY &&
	       (int)IPU_STEP_SYNC == (int)IPUX_STEP_SYNC &&
	       IPU_SYNC_INTERNAL == IPUX_SYNC_INTERNAL && IPU_SYNC_EXTERNAL == IPUX_SYNC_EXTERNAL,
	       "step kinds");

/* The engine's step events, handed on as libipu's own. */
static void trace_bridge(void *ctx, const struct ipu_engine_step_event *ev)
{
	struct model_dev *m = ctx;
	struct ipu_step_event e = {
		.program = ev->program, .step = ev->step,
		.kind = ev->kind == IPU_ENGINE_TRACE_PROGRAM ? IPU_TRACE_PROGRAM : ev->kind,
		.flags = ev->flags & IPU_ENGINE_TRACE_STALLED ? IPU_TRACE_STALLED : 0,
		.index = ev->index, .stream = ev->stream, .status = ev->status,
		.cycles = ev->cycles, .bytes = ev->bytes,
		.start_ns = ev->start_ns, .end_ns = ev->end_ns,
	};

	m->trace_fn(m->trace_ctx, &e);
}

static int model_set_trace(struct ipu_device *d, ipu_trace_fn fn, void *ctx)
{
	struct model_dev *m = M(d);
	int rc = 0;

	/* the device thread reads the hook unlocked: it takes the lock before
	 * each run, so a hook set while idle is seen by the next run whole */
	pthread_mutex_lock(&m->lock);
	if (m->busy || m->runs_count || m->aborting) {
		rc = IPU_E_BUSY;
	} else {
		m->trace_fn = fn;
		m->trace_ctx = ctx;
		ipu_engine_set_trace(m->eng, fn ? trace_bridge : NULL, fn ? m : NULL);
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static int model_superstep_cost(struct ipu_device *d, uint32_t kind, uint32_t index,
				struct ipu_superstep_cost *out)
{
	struct ipu_engine_superstep_cost c;
	int rc = ipu_engine_superstep_cost(M(d)->eng, kind, index, &c);

	if (rc)
		return rc;
	out->cycles = c.cycles;
	out->bytes = c.bytes;
	return 0;
}

/* ipu_alloc_memory: plain memory (nothing to pin, nothing to share) */
static int model_alloc_memory(struct ipu_device *d, uint32_t slot, size_t len, void **addr)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)d;
	(void)slot;
	if (p == MAP_FAILED)
		return IPU_E_NOMEM;
	*addr = p;
	return 0;
}

/* called with the region table locked (or at close) */
static int model_free_memory(struct ipu_device *d, uint32_t slot)
{
	munmap((void *)d->regions.r[slot].base, d->regions.r[slot].len);
	return 0;
}

const struct ipu_backend_ops ipu_model_backend = {
	.name = "model",
	.open = model_open,
	.close = model_close,
	.info = model_info,
	.attach = model_attach,
	.detach = model_detach,
	.load = model_load,
	.stream_count = model_stream_count,
	.stream_info = model_stream_info,
	.run = model_run,
	.run_here = model_run_here,
	.wait = model_wait,
	.submit = model_submit,
	.abort = model_abort,
	.reset = model_reset,
	.counters = model_counters,
	.cs_profile = model_cs_profile,
	.set_trace = model_set_trace,
	.superstep_cost = model_superstep_cost,
	.set_run_handler = model_set_run_handler,
	.alloc_memory = model_alloc_memory,
	.free_memory = model_free_memory,
	.free_memory_at_close = model_free_memory,
};
