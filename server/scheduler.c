// SPDX-License-Identifier: MIT
/*
 * scheduler.c - one loaded model version: its instances (a ModelRunner
 * each, on its own device) and the queue in front of them.
 *
 * Each instance has one worker thread that takes requests off the queue.
 * With dynamic batching the worker that takes the oldest request keeps
 * adding compatible requests (same subgraph, rows fitting max_batch_size,
 * equal unbatched inputs) until the batch is full or reaches a preferred
 * size, or max_queue_delay_microseconds after the oldest one was queued;
 * only one worker gathers at a time, so instances do not split a batch
 * between them.  A batch runs as one ModelRunner request on a merged copy
 * of the inputs; its outputs are copied back into each request's own
 * buffers.  A lone request runs on its own buffers, without copies.
 *
 * A model that packs (pack.h) gathers the same way but places each
 * request's sequence first-fit into the rows of the batch instead of
 * giving it rows of its own; a request that does not fit is left queued
 * for the next batch, which it then leads, and ends the gathering (more
 * waiting would not make room for it).
 *
 * A generation (the generate extension) waits in the same queue, in
 * arrival order with the infer requests.  The worker that takes one runs
 * the generation loop (gen_batch.c) on its instance: the decoder's cache
 * slots step together, and the generations that reach the head of the
 * queue meanwhile join the running ones at the next step (continuous
 * batching) until no slot holds a sequence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "cli.h"
#include "pack.h"
#include "serve.h"

struct srv_instance {
	struct srv_model *m;
	struct ipurt_runner *r;
	pthread_t thread;
	int started;
	uint32_t index;
};

const double srv_hist_bounds[SRV_HIST_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
	0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
};

uint64_t srv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void complete(struct srv_request *q, int status, const char *msg)
{
	pthread_mutex_lock(&q->lock);
	q->status = status;
	if (status && msg)
		snprintf(q->err, sizeof(q->err), "%s", msg);
	q->t_done_ns = srv_now_ns();
	q->done = 1;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

/* Can q join a batch led by lead (same subgraph, same unbatched inputs)? */
static int compatible(const struct srv_request *lead, const struct srv_request *q)
{
	uint32_t i;

	if (q->gen || q->subgraph != lead->subgraph || q->nin != lead->nin)
		return 0;
	for (i = 0; i < q->nin; i++) {
		if (q->in_bdim[i] != IPUEF_NO_BATCH_DIM)
			continue;
		if (memcmp(q->in[i].data, lead->in[i].data, srv_tensor_bytes(&q->in[i])))
			return 0;
	}
	return 1;
}

static int preferred(const struct srv_model *m, uint64_t rows)
{
	uint32_t i;

	for (i = 0; i < m->cfg.num_preferred; i++)
		if (m->cfg.preferred[i] == rows)
			return 1;
	return 0;
}

/*
 * Move the requests that fit from the queue into the batch (in queue
 * order; stops at the first compatible request that would overflow
 * max_batch_size so that a large request is not overtaken forever).
 */
static void gather(struct srv_model *m, struct srv_request **batch, uint32_t *n, uint64_t *rows,
		   uint32_t cap)
{
	struct srv_request **pp = &m->head, *prev = NULL;

	while (*pp && *n < cap && *rows < m->max_batch && !preferred(m, *rows)) {
		struct srv_request *q = *pp;

		if (!compatible(batch[0], q)) {
			prev = q;
			pp = &q->next;
			continue;
		}
		if (*rows + q->rows > m->max_batch)
			break;
		*pp = q->next;
		if (m->tail == q)
			m->tail = prev;
		q->next = NULL;
		m->queued--;
		batch[(*n)++] = q;
		*rows += q->rows;
	}
}

/*
 * Move the queued sequences that fit into the plan (in queue order).
 * Returns the number of requests left queued because they did not fit.
 */
static uint32_t gather_packed(struct srv_model *m, struct srv_request **batch, uint32_t *n,
			      struct srv_pack_plan *plan, uint32_t cap)
{
	struct srv_request **pp = &m->head, *prev = NULL;
	uint32_t skipped = 0;

	while (*pp && *n < cap && !srv_pack_full(plan)) {
		struct srv_request *q = *pp;

		if (q->gen || !q->seq_len ||
		    srv_pack_place(plan, q->seq_len, &q->pack_row, &q->pack_off, &q->pack_seg)) {
			skipped += !q->gen;
			prev = q;
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		if (m->tail == q)
			m->tail = prev;
		q->next = NULL;
		m->queued--;
		batch[(*n)++] = q;
	}
	return skipped;
}

/* ti0..ti1: the device's run, between the merge of the inputs and the split of the outputs */
static int run_merged(struct srv_instance *in, struct srv_request **batch, uint32_t n,
		      uint64_t rows, uint64_t *ti0, uint64_t *ti1, char *err, size_t errlen)
{
	const struct srv_request *lead = batch[0];
	struct ipurt_tensor ti[SRV_MAX_IO], to[SRV_MAX_IO];
	void *bufs[2 * SRV_MAX_IO] = { 0 };
	uint32_t i, j, nb = 0;
	uint64_t off;
	int rc = IPURT_E_NOMEM;

	for (i = 0; i < lead->nin + lead->nout; i++) {
		int is_in = i < lead->nin;
		uint32_t k = is_in ? i : i - lead->nin;
		const struct ipurt_tensor *src = is_in ? &lead->in[k] : &lead->out[k];
		uint32_t bd = is_in ? lead->in_bdim[k] : lead->out_bdim[k];
		struct ipurt_tensor *t = is_in ? &ti[k] : &to[k];

		*t = *src;
		if (bd == IPUEF_NO_BATCH_DIM)
			continue; /* equal in every request (inputs) or copied to each (outputs) */
		t->dims[bd] = rows;
		t->data = bufs[nb++] = malloc(srv_tensor_bytes(t) ? srv_tensor_bytes(t) : 1);
		if (!t->data) {
			snprintf(err, errlen, "out of memory for a batch of %llu rows",
				 (unsigned long long)rows);
			goto out;
		}
		if (!is_in)
			continue;
		for (j = 0, off = 0; j < n; off += batch[j]->in[k].dims[bd], j++)
			srv_batch_gather(t->data, rows, off, &batch[j]->in[k], bd);
	}
	*ti0 = srv_now_ns();
	rc = ipurt_runner_execute(in->r, ti, lead->nin, to, lead->nout, err, errlen);
	*ti1 = srv_now_ns();
	if (rc)
		goto out;
	for (i = 0; i < lead->nout; i++) {
		uint32_t bd = lead->out_bdim[i];

		for (j = 0, off = 0; j < n; j++) {
			if (bd == IPUEF_NO_BATCH_DIM) {
				if (j)
					memcpy(batch[j]->out[i].data, to[i].data, srv_tensor_bytes(&to[i]));
				continue;
			}
			srv_batch_scatter(to[i].data, rows, off, &batch[j]->out[i], bd);
			off += batch[j]->out[i].dims[bd];
		}
	}
out:
	for (i = 0; i < nb; i++)
		free(bufs[i]);
	return rc;
}

/* t0..t1: the execution, ti0..ti1: the device's run within it */
static void account(struct srv_model *m, struct srv_request **batch, uint32_t n, uint64_t rows,
		    uint64_t t0, uint64_t ti0, uint64_t ti1, uint64_t t1, uint64_t cycles, int rc)
{
	/* a packed row holds several requests: each is one inference */
	uint64_t inferences = m->batch_dim != IPURT_NO_BATCHING_DIM && m->max_batch &&
			      !m->cfg.packing.enabled ? rows : n;
	uint32_t j;

	m->executing -= n;
	m->met.executions++;
	m->met.compute_ns += t1 - t0;
	m->met.modelled_cycles += cycles;
	if (!rc) {
		m->met.inferences += inferences;
		srv_stats_batch(&m->stats, inferences, ti0 - t0, ti1 - ti0, t1 - ti1);
	}
	if (rows > m->met.batch_rows_max)
		m->met.batch_rows_max = rows;
	for (j = 0; j < n; j++) {
		m->met.queue_ns += batch[j]->t_start_ns - batch[j]->t_enqueue_ns;
		batch[j]->t_infer_ns = ti0;
		batch[j]->t_infer_end_ns = ti1;
	}
}

struct srv_request *srv_model_take_gen(struct srv_model *m)
{
	struct srv_request *q = m->head;

	if (!q || !q->gen)
		return NULL;
	m->head = q->next;
	if (!m->head)
		m->tail = NULL;
	q->next = NULL;
	m->queued--;
	return q;
}

void srv_model_gen_done(struct srv_model *m, struct srv_request *q, uint64_t t0, int rc,
			const char *err)
{
	uint64_t t1 = srv_now_ns();

	pthread_mutex_lock(&m->lock);
	account(m, &q, 1, 1, t0, t0, t1, t1, 0, rc);
	m->met.gen_tokens += q->gen->ntokens;
	pthread_mutex_unlock(&m->lock);
	complete(q, rc, err);
}

static void *worker(void *arg)
{
	struct srv_instance *in = arg;
	struct srv_model *m = in->m;
	struct srv_request *batch[256];
	char err[SRV_ERR];

	pthread_mutex_lock(&m->lock);
	for (;;) {
		uint32_t n = 0, j;
		uint64_t rows, t0, ti0, ti1, t1, cycles = 0;
		struct ipu_counters c0, c1;
		struct srv_pack_plan plan;
		int rc, have, packing = m->cfg.packing.enabled;

		while ((!m->head || m->forming) && !m->stopping)
			pthread_cond_wait(&m->cond, &m->lock);
		if (!m->head) {
			if (m->stopping)
				break;
			continue;
		}
		batch[n++] = m->head;
		m->head = m->head->next;
		if (!m->head)
			m->tail = NULL;
		batch[0]->next = NULL;
		m->queued--;
		rows = batch[0]->rows;
		if (batch[0]->gen) {
			srv_gen_batch(m, in->r, in->index, batch[0]);
			continue;
		}
		if (packing) {
			srv_pack_plan_init(&plan, (uint32_t)m->max_batch, m->cfg.packing.max_sequence_length,
					   (uint32_t)m->cfg.packing.max_sequences_per_row);
			/* checked when it was prepared: it fits an empty row */
			srv_pack_place(&plan, batch[0]->seq_len, &batch[0]->pack_row, &batch[0]->pack_off,
				       &batch[0]->pack_seg);
		}
		if (packing || (m->cfg.dynamic_batching && m->mergeable && m->max_batch)) {
			uint64_t deadline = batch[0]->t_enqueue_ns + m->cfg.max_queue_delay_us * 1000;

			m->forming = 1;
			for (;;) {
				struct timespec ts;
				uint64_t now;
				int full;

				if (packing) {
					full = gather_packed(m, batch, &n, &plan, sizeof(batch) / sizeof(batch[0])) ||
					       srv_pack_full(&plan);
					rows = plan.rows;
				} else {
					gather(m, batch, &n, &rows, sizeof(batch) / sizeof(batch[0]));
					full = rows >= m->max_batch || preferred(m, rows);
				}
				m->forming_n = n;
				now = srv_now_ns();
				if (full || now >= deadline || m->stopping ||
				    n == sizeof(batch) / sizeof(batch[0]))
					break;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_sec += (time_t)((deadline - now) / 1000000000ull);
				ts.tv_nsec += (long)((deadline - now) % 1000000000ull);
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&m->cond, &m->lock, &ts);
			}
			m->forming = 0;
			m->forming_n = 0;
			/* another instance may start gathering the next batch */
			pthread_cond_broadcast(&m->cond);
		}
		m->executing += n;
		t0 = srv_now_ns();
		for (j = 0; j < n; j++)
			batch[j]->t_start_ns = t0;
		pthread_mutex_unlock(&m->lock);

		have = !ipu_counters(ipurt_runner_device(in->r), &c0);
		err[0] = 0;
		if (packing) {
			ti0 = ti1 = t0; /* a merge that fails before the run */
			rc = srv_pack_run(in->r, &m->cfg.packing, batch, n, (uint32_t)rows, &ti0, &ti1, err,
					  sizeof(err));
		} else if (n == 1) {
			ti0 = srv_now_ns();
			rc = ipurt_runner_execute(in->r, batch[0]->in, batch[0]->nin, batch[0]->out,
						  batch[0]->nout, err, sizeof(err));
			ti1 = srv_now_ns();
		} else {
			ti0 = ti1 = t0; /* a merge that fails before the run */
			rc = run_merged(in, batch, n, rows, &ti0, &ti1, err, sizeof(err));
		}
		if (have && !ipu_counters(ipurt_runner_device(in->r), &c1))
			cycles = c1.cycles - c0.cycles;
		t1 = srv_now_ns();
		if (m->log_verbose > 1) {
			char sn[1024], se[SRV_ERR * 4];

			fprintf(stderr, "ipu-serve: %s v%lld instance %u: batch of %u requests, %llu rows: %s\n",
				cli_safe(m->name, sn, sizeof(sn)), (long long)m->version, in->index, n,
				(unsigned long long)rows, rc ? cli_safe(err, se, sizeof(se)) : "ok");
		}

		pthread_mutex_lock(&m->lock);
		account(m, batch, n, rows, t0, ti0, ti1, t1, cycles, rc);
		pthread_mutex_unlock(&m->lock);
		for (j = 0; j < n; j++)
			complete(batch[j], rc, err);
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

int srv_model_submit(struct srv_model *m, struct srv_request *req, char *err, size_t errlen)
{
	pthread_mutex_lock(&m->lock);
	if (m->stopping) {
		pthread_mutex_unlock(&m->lock);
		snprintf(err, errlen, "model '%s' version %lld is being unloaded", m->name,
			 (long long)m->version);
		return 503;
	}
	if (m->queued >= m->max_queue) {
		pthread_mutex_unlock(&m->lock);
		snprintf(err, errlen,
			 "model '%s' version %lld: the queue is full (%llu requests waiting); retry later",
			 m->name, (long long)m->version, (unsigned long long)m->max_queue);
		return 503;
	}
	req->next = NULL;
	req->t_enqueue_ns = srv_now_ns();
	if (m->tail)
		m->tail->next = req;
	else
		m->head = req;
	m->tail = req;
	m->queued++;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

void srv_model_withdraw(struct srv_model *m, struct srv_request *req)
{
	struct srv_request **pp, *prev = NULL;
	int found = 0;

	pthread_mutex_lock(&m->lock);
	for (pp = &m->head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp != req)
			continue;
		*pp = req->next;
		if (m->tail == req)
			m->tail = prev;
		req->next = NULL;
		m->queued--;
		found = 1;
		break;
	}
	pthread_mutex_unlock(&m->lock);
	if (found)
		complete(req, IPURT_E_CANCELLED, "withdrawn before it started");
}

void srv_model_wait(struct srv_model *m, struct srv_request *req)
{
	uint64_t total;
	uint32_t b;

	pthread_mutex_lock(&req->lock);
	while (!req->done)
		pthread_cond_wait(&req->cond, &req->lock);
	pthread_mutex_unlock(&req->lock);
	total = req->t_done_ns - req->t_enqueue_ns;
	pthread_mutex_lock(&m->lock);
	if (req->status) {
		m->met.failure++;
		srv_stats_failure(&m->stats, req->status == IPURT_E_CANCELLED ? SRV_FAIL_CANCELED
									      : SRV_FAIL_BACKEND, total);
	} else {
		m->met.success++;
		/* the phases of the execution it ran in: its own share is all of them */
		srv_stats_success(&m->stats, total, req->t_start_ns - req->t_enqueue_ns,
				  req->t_infer_ns - req->t_start_ns, req->t_infer_end_ns - req->t_infer_ns,
				  req->t_done_ns - req->t_infer_end_ns);
	}
	m->met.request_ns += total;
	for (b = 0; b < SRV_HIST_BUCKETS && (double)total * 1e-9 > srv_hist_bounds[b]; b++)
		;
	m->met.hist[b]++;
	m->met.hist_sum_s += (double)total * 1e-9;
	pthread_mutex_unlock(&m->lock);
}

void srv_model_metrics(struct srv_model *m, struct srv_metrics *out, uint32_t *queued,
		       uint32_t *executing)
{
	pthread_mutex_lock(&m->lock);
	*out = m->met;
	*queued = m->queued + m->forming_n; /* waiting for a device, in the queue or a forming batch */
	*executing = m->executing;
	pthread_mutex_unlock(&m->lock);
}

int srv_model_stats(struct srv_model *m, struct srv_metrics *out, struct srv_stats *st,
		    uint32_t *queued, uint32_t *executing)
{
	int rc;

	pthread_mutex_lock(&m->lock);
	*out = m->met;
	rc = srv_stats_copy(st, &m->stats);
	*queued = m->queued + m->forming_n;
	*executing = m->executing;
	pthread_mutex_unlock(&m->lock);
	return rc;
}

void srv_model_refused(struct srv_model *m, int status, uint64_t t0)
{
	uint64_t now = srv_now_ns();

	pthread_mutex_lock(&m->lock);
	srv_stats_failure(&m->stats, status == 503 ? SRV_FAIL_REJECTED : SRV_FAIL_OTHER,
			  now > t0 ? now - t0 : 0);
	pthread_mutex_unlock(&m->lock);
}

struct ipurt_runner *srv_model_runner(struct srv_model *m)
{
	return m->inst[0].r;
}

/* The batch dimension and compiled rows of the model's user anchors. */
static int batch_geometry(struct srv_model *m, char *err, size_t errlen)
{
	const struct ipuef_metadata *md = ipuef_metadata(m->file);
	uint32_t a;
	int first = 1;

	m->batch_dim = IPURT_NO_BATCHING_DIM;
	m->mergeable = 1;
	for (a = 0; a < md->num_anchors; a++) {
		const struct ipuef_anchor *an = &md->anchors[a];

		m->fused |= an->kind == IPUEF_ANCHOR_INDEX;
		if (an->kind != IPUEF_ANCHOR_USER)
			continue;
		if (an->batch_dim == IPUEF_NO_BATCH_DIM) {
			/* the runner would scale it along the batching dim all the same */
			m->mergeable = 0;
			continue;
		}
		if (first) {
			m->batch_dim = an->batch_dim;
			m->compiled_batch = an->dims[an->batch_dim];
			first = 0;
		} else if (an->batch_dim != m->batch_dim) {
			snprintf(err, errlen,
				 "anchors '%s' and others are batched along different dimensions (%u, %u); "
				 "ipu-serve needs one batch dimension",
				 an->name, an->batch_dim, m->batch_dim);
			return -1;
		} else if (an->dims[an->batch_dim] != m->compiled_batch) {
			m->mergeable = 0;
		}
	}
	return 0;
}

/* A packing config against the model it packs for (pack.h). */
static int check_packing(struct srv_model *m, char *err, size_t errlen)
{
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], nin;
	int nio;

	if (m->fused || m->batch_dim != 0 || !m->max_batch || !m->mergeable) {
		snprintf(err, errlen, "packing needs a model batched along dimension 0 with "
			 "max_batch_size > 0, not fused, all its inputs and outputs batched alike");
		return -1;
	}
	if (m->max_batch > SRV_PACK_MAX_ROWS) {
		snprintf(err, errlen, "packing: max_batch_size %llu, at most %d rows",
			 (unsigned long long)m->max_batch, SRV_PACK_MAX_ROWS);
		return -1;
	}
	nio = ipurt_runner_io(m->inst[0].r, -1, 0, io, bdim, SRV_MAX_IO, &nin);
	if (nio <= 0) {
		snprintf(err, errlen, "the model has more than %d inputs and outputs", SRV_MAX_IO);
		return -1;
	}
	return srv_pack_check(&m->cfg.packing, io, bdim, nin, (uint32_t)nio, err, errlen);
}

int srv_model_create(const char *name, int64_t version, const char *path,
		     const struct srv_model_config *cfg, const struct srv_load_opts *o,
		     struct srv_model **out, char *err, size_t errlen)
{
	return srv_model_create_from(name, version, path, NULL, cfg, o, out, err, errlen);
}

int srv_model_create_from(const char *name, int64_t version, const char *path,
			  struct ipuef_file *file, const struct srv_model_config *cfg,
			  const struct srv_load_opts *o, struct srv_model **out, char *err,
			  size_t errlen)
{
	struct srv_model *m = calloc(1, sizeof(*m));
	struct ipurt_config rc_cfg;
	char msg[SRV_ERR], *spec = NULL;
	uint32_t i;
	int rc;

	*out = NULL;
	if (!m || !(m->name = strdup(name)) || !(m->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		ipuef_close(file);
		goto fail_early;
	}
	m->version = version;
	m->cfg = *cfg;
	m->log_verbose = o->log_verbose;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	m->file = file;
	rc = file ? 0 : ipuef_open(path, &m->file, msg, sizeof(msg));
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, msg);
		goto fail;
	}
	if (batch_geometry(m, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", path, msg);
		goto fail;
	}
	if (cfg->has_max_batch_size) {
		if (cfg->max_batch_size > 0 && m->batch_dim == IPURT_NO_BATCHING_DIM) {
			snprintf(err, errlen,
				 "max_batch_size %lld, but %s has no batch dimension (set max_batch_size: 0)",
				 (long long)cfg->max_batch_size, path);
			goto fail;
		}
		m->max_batch = (uint64_t)cfg->max_batch_size;
	} else {
		/* as Triton's auto-complete: what the model says, here its compiled batch */
		m->max_batch = m->batch_dim == IPURT_NO_BATCHING_DIM ? 0 : m->compiled_batch;
	}
	if (cfg->dynamic_batching && !m->max_batch) {
		snprintf(err, errlen, "dynamic_batching needs max_batch_size > 0%s",
			 m->batch_dim == IPURT_NO_BATCHING_DIM ? " and a model with a batch dimension" : "");
		goto fail;
	}
	if (cfg->dynamic_batching && !m->mergeable) {
		snprintf(err, errlen,
			 "dynamic_batching: %s has batched anchors of different compiled sizes, "
			 "requests cannot be merged", path);
		goto fail;
	}
	for (i = 0; i < cfg->num_preferred; i++) {
		if (cfg->preferred[i] > m->max_batch) {
			snprintf(err, errlen, "preferred_batch_size %llu exceeds max_batch_size %llu",
				 (unsigned long long)cfg->preferred[i], (unsigned long long)m->max_batch);
			goto fail;
		}
	}
	m->max_queue = cfg->has_max_queue_size && cfg->max_queue_size ? cfg->max_queue_size
								       : o->default_max_queue;
	ipurt_config_init(&rc_cfg);
	rc_cfg.batching_dim = m->max_batch ? m->batch_dim : IPURT_NO_BATCHING_DIM;
	rc_cfg.validate_io_params = !m->fused; /* a fused model's request is one subgraph */
	rc_cfg.timeout_ns = o->exec_timeout_ns;
	rc_cfg.device = o->device;
	/* a model split over IPUs opens its own group of --device's spec
	 * (the shared devices are one IPU each) */
	rc_cfg.dm = ipuef_num_ipus(m->file) > 1 ? NULL : o->dm;
	if (!o->device && o->custom_ops) {
		/* a device sized to the model, with the plugins */
		rc = ipurt_custom_ops_spec(NULL, m->file, o->custom_ops, &spec, msg, sizeof(msg));
		if (rc) {
			snprintf(err, errlen, "%s: --custom-ops: %s", path, msg);
			goto fail;
		}
		rc_cfg.device = spec;
	}
	m->num_instances = cfg->instance_count ? cfg->instance_count : 1;
	m->inst = calloc(m->num_instances, sizeof(*m->inst));
	if (!m->inst) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < m->num_instances; i++) {
		m->inst[i].m = m;
		m->inst[i].index = i;
		rc = ipurt_runner_create_from(m->file, &rc_cfg, &m->inst[i].r, msg, sizeof(msg));
		if (rc) {
			snprintf(err, errlen, "%s: instance %u of %u: %s%s", path, i + 1, m->num_instances,
				 msg, rc == IPURT_E_BUSY ? " (fewer free devices than instance_group count)" : "");
			goto fail;
		}
	}
	free(spec);
	spec = NULL;
	if (cfg->packing.enabled && check_packing(m, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", path, msg);
		goto fail;
	}
	for (i = 0; i < m->num_instances; i++) {
		if (pthread_create(&m->inst[i].thread, NULL, worker, &m->inst[i])) {
			snprintf(err, errlen, "cannot start a worker thread");
			goto fail;
		}
		m->inst[i].started = 1;
	}
	*out = m;
	return 0;
fail:
	free(spec);
	srv_model_destroy(m);
	return -1;
fail_early:
	if (m) {
		free(m->name);
		free(m->path);
		free(m);
	}
	return -1;
}

void srv_model_destroy(struct srv_model *m)
{
	uint32_t i;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stopping = 1;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	for (i = 0; m->inst && i < m->num_instances; i++)
		if (m->inst[i].started)
			pthread_join(m->inst[i].thread, NULL);
	for (i = 0; m->inst && i < m->num_instances; i++)
		ipurt_runner_destroy(m->inst[i].r);
	free(m->inst);
	srv_stats_fini(&m->stats);
	ipuef_close(m->file);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m->name);
	free(m->path);
	free(m);
}
