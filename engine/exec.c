// SPDX-License-Identifier: MIT
/*
 * exec.c - the BSP interpreter: runs a verified program.
 *
 * Everything here trusts the verifier: indices, regions and codelet
 * operands were checked at load, so the hot paths have no bounds checks.
 * A compute set runs as a parallel-for over its tile groups (each tile's
 * vertices in order on one worker, so tiles never share memory between
 * threads), an exchange as a parallel-for over destination tiles, and
 * stream copies call back into the embedding, which may block.
 */
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"

struct cs_job {
	struct ipu_engine *e;
	const struct ipu_cs_plan *plan;
	atomic_uint fault_vertex;	/* UINT32_MAX = none */
	atomic_int fault_code;
};

static void cs_item(void *ctxp, uint32_t item, uint32_t worker)
{
	struct cs_job *job = ctxp;
	const struct ipu_tile_group *g = &job->plan->groups[item];
	const struct ipu_exe *x = job->e->exe;
	const uint32_t *order = job->plan->order + g->first;
	uint32_t i;

	(void)worker;
	for (i = 0; i < g->count; i++) {
		uint32_t v = order[i];
		int f = x->vcodelet[v]->run(&job->e->vctx[v]);

		if (f) {
			unsigned none = UINT32_MAX;

			if (atomic_compare_exchange_strong(&job->fault_vertex, &none, v))
				atomic_store(&job->fault_code, f);
			return;
		}
	}
}

/* Pool item i is the i-th group of the cost-ordered schedule. */
static void cs_sched_item(void *ctxp, uint32_t item, uint32_t worker)
{
	struct cs_job *job = ctxp;

	cs_item(ctxp, job->plan->sched[item], worker);
}

/* Counters of one execution of compute set cs, and its fault if any. */
static int cs_finish(struct ipu_engine *e, uint32_t cs, struct cs_job *job, char *err,
		     size_t errlen)
{
	const struct ipu_cs_plan *plan = &e->exe->csplan[cs];
	uint32_t fv;

	atomic_fetch_add_explicit(&e->cs_exec[cs], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_CS], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_VERTICES], plan->nvertices, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_COMPUTE_CYCLES], plan->cycles, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_CYCLES], plan->cycles, memory_order_relaxed);
	fv = atomic_load(&job->fault_vertex);
	if (fv != UINT32_MAX) {
		const struct ipux_vertex *v = &e->exe->vertices[fv];

		return ipu_errorf(err, errlen, IPU_E_FAULT, "compute set %u: vertex %u (%s) on tile %u faulted (%s)",
			 cs, fv, e->exe->vcodelet[fv]->name, v->tile,
			 atomic_load(&job->fault_code) == IPU_FAULT_INDEX ?
				 "index out of range" : "codelet fault");
	}
	return 0;
}

static void learn(struct ipu_engine *e, struct ipu_dispatch *d, int inline_run, uint64_t t0)
{
	if (e->learn)
		ipu_dispatch_learn(d, inline_run, ipu_now_ns() - t0, e->wake_ns, e->cfg.workers);
}

static int run_compute_set(struct ipu_engine *e, uint32_t cs, char *err, size_t errlen)
{
	const struct ipu_cs_plan *plan = &e->exe->csplan[cs];
	struct cs_job job = { .e = e, .plan = plan };

	struct ipu_dispatch *d = &e->dsp[cs];
	int inline_run = d->mode ? d->mode == IPU_DISPATCH_INLINE : plan->work < IPU_INLINE_WORK_CYCLES;
	uint64_t t0 = d->mode ? 0 : ipu_now_ns();

	atomic_init(&job.fault_vertex, UINT32_MAX);
	atomic_init(&job.fault_code, 0);
	if (inline_run) {
		uint32_t g;

		for (g = 0; g < plan->ngroups; g++)
			cs_item(&job, g, 0);
	} else {
		ipu_pool_run(e->pool, plan->ngroups, cs_sched_item, &job);
	}
	if (!d->mode)
		learn(e, d, inline_run, t0);
	return cs_finish(e, cs, &job, err, errlen);
}

struct xch_job {
	struct ipu_engine *e;
	const struct ipu_xch_plan *plan;
	const struct ipu_bound_group *bgroup;	/* the exchange's, unless staged */
	uint32_t first_copy;
	int phase;			/* staged: 0 gather into stage, 1 scatter */
};

static inline uint8_t *tile_ptr(const struct ipu_engine *e, uint32_t tile, uint32_t off)
{
	return e->mem + (size_t)tile * e->stride + off;
}

static void xch_item(void *ctxp, uint32_t item, uint32_t worker)
{
	struct xch_job *job = ctxp;
	const struct ipu_tile_group *g = &job->plan->groups[item];
	const struct ipux_copy *copies = job->e->exe->copies;
	const uint32_t *order = job->plan->order + g->first;
	uint32_t i;

	(void)worker;
	if (!job->plan->staged) {
		const struct ipu_bound_group *bg = &job->bgroup[item];
		const struct ipu_bound_copy *b = job->e->bcopy + bg->first;
		uint8_t *mem = job->e->mem;

		for (i = 0; i < bg->count; i++)
			memcpy(mem + b[i].dst, mem + b[i].src, b[i].bytes);
		return;
	}
	for (i = 0; i < g->count; i++) {
		uint32_t ci = order[i];
		const struct ipux_copy *c = &copies[ci];
		uint8_t *stage = job->e->stage + job->plan->stage_off[ci - job->first_copy];

		if (job->phase == 0)
			memcpy(stage, tile_ptr(job->e, c->src_tile, c->src_offset), c->bytes);
		else
			memcpy(tile_ptr(job->e, c->dst_tile, c->dst_offset), stage, c->bytes);
	}
}

static void xch_finish(struct ipu_engine *e, const struct ipu_xch_plan *plan)
{
	atomic_fetch_add_explicit(&e->ctr[C_EXCHANGE_BYTES], plan->bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_EXCHANGE_CYCLES], plan->cycles, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_CYCLES], plan->cycles, memory_order_relaxed);
}

static void run_exchange(struct ipu_engine *e, uint32_t xi)
{
	const struct ipu_xch_plan *plan = &e->exe->xchplan[xi];
	struct xch_job job = { .e = e, .plan = plan, .bgroup = e->bgroup + e->bgroup_first[xi],
			       .first_copy = e->exe->xchs[xi].first_copy };
	struct ipu_dispatch *d = &e->dsp[e->exe->ncss + xi];
	int inline_run = d->mode ? d->mode == IPU_DISPATCH_INLINE
				 : e->xch_host_bytes[xi] < IPU_INLINE_XCH_BYTES;
	uint64_t t0 = d->mode ? 0 : ipu_now_ns();
	uint32_t g;

	for (job.phase = 0; job.phase <= (int)plan->staged; job.phase++) {
		if (!inline_run) {
			ipu_pool_run(e->pool, plan->ngroups, xch_item, &job);
			continue;
		}
		for (g = 0; g < plan->ngroups; g++)
			xch_item(&job, g, 0);
	}
	if (!d->mode)
		learn(e, d, inline_run, t0);
	xch_finish(e, plan);
}

static void add_sync(struct ipu_engine *e)
{
	atomic_fetch_add_explicit(&e->ctr[C_SYNC_CYCLES], IPU_COST_SYNC, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_CYCLES], IPU_COST_SYNC, memory_order_relaxed);
}


static int run_stream_copy(struct ipu_engine *e, uint32_t sci, int *was_stalled,
			   char *err, size_t errlen)
{
	const struct ipu_exe *x = e->exe;
	const struct ipux_stream_copy *sc = &x->scs[sci];
	const struct ipux_stream *st = &x->streams[sc->stream];
	int stalled = 0, rc;
	uint64_t t0, t1;

	if (!e->sops.transfer) {
		return ipu_errorf(err, errlen, IPU_E_STREAM, "stream copy %u on stream %u: no host stream handler",
			 sci, sc->stream);
	}
	t0 = ipu_now_ns();
	rc = e->sops.transfer(e->sops.ctx, sc->stream, st->dir,
			      &e->segs[x->sc_seg_first[sci]], sc->num_regions,
			      st->buffer_bytes, &stalled);
	t1 = ipu_now_ns();
	*was_stalled = stalled;
	if (stalled) {
		atomic_fetch_add_explicit(&e->ctr[C_STALLS], 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->ctr[C_STALL_NS], t1 - t0, memory_order_relaxed);
	}
	if (rc) {
		if (rc == IPU_E_CANCELLED)
			return ipu_errorf(err, errlen, rc, "aborted while waiting on stream %u",
					sc->stream);
		return ipu_errorf(err, errlen, rc < 0 ? rc : IPU_E_STREAM,
				"host failed transfer on stream %u (%s)", sc->stream,
				ipu_err_name(rc));
	}
	atomic_fetch_add_explicit(&e->ctr[st->dir == IPUX_STREAM_H2D ? C_STREAM_IN : C_STREAM_OUT],
				  st->buffer_bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_STREAM_COPIES], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_STREAM_CYCLES], x->sc_cycles[sci], memory_order_relaxed);
	atomic_fetch_add_explicit(&e->ctr[C_CYCLES], x->sc_cycles[sci], memory_order_relaxed);
	return 0;
}

/* The event of leaf step si, which ran from t0 until now. */
static void trace_step(struct ipu_engine *e, uint32_t si, uint64_t t0, int stalled)
{
	const struct ipu_exe *x = e->exe;
	const struct ipux_step *s = &x->steps[si];
	struct ipu_engine_step_event ev = {
		.program = e->trace_prog, .step = si, .kind = s->kind,
		.flags = stalled ? IPU_ENGINE_TRACE_STALLED : 0, .index = s->a, .start_ns = t0,
	};

	switch (s->kind) {
	case IPUX_STEP_EXECUTE:
		ev.cycles = x->csplan[s->a].cycles;
		break;
	case IPUX_STEP_EXCHANGE:
		ev.cycles = x->xchplan[s->a].cycles;
		ev.bytes = x->xchplan[s->a].bytes;
		break;
	case IPUX_STEP_STREAM_COPY:
		ev.cycles = x->sc_cycles[s->a];
		ev.stream = x->scs[s->a].stream;
		ev.bytes = x->streams[ev.stream].buffer_bytes;
		break;
	default:
		ev.cycles = IPU_COST_SYNC;
		break;
	}
	ev.end_ns = ipu_now_ns();
	e->trace(e->trace_ctx, &ev);
}

struct fused_job {
	const struct ipu_fuse_plan *fp;
	struct xch_job x;
	struct cs_job c;
};

/* Tile item's incoming copies, then its vertices (on the same worker). */
static void fused_item(void *ctxp, uint32_t item, uint32_t worker)
{
	struct fused_job *job = ctxp;
	const struct ipu_fused_item *it = &job->fp->items[item];

	if (it->xch_group != IPU_FUSE_NONE)
		xch_item(&job->x, it->xch_group, worker);
	if (it->cs_group != IPU_FUSE_NONE)
		cs_item(&job->c, it->cs_group, worker);
}

/*
 * The exchange step children[p] and the compute step children[p + 1],
 * planned together as fplan[fi].  Traced, the exchange's event is empty
 * and the compute set's (which starts after it) covers both.
 */
static int run_fused(struct ipu_engine *e, uint32_t fi, uint32_t p, char *err, size_t errlen)
{
	const struct ipu_exe *x = e->exe;
	const struct ipu_fuse_plan *fp = &x->fplan[fi];
	const struct ipu_xch_plan *xp = &x->xchplan[fp->xch];
	const struct ipu_cs_plan *cp = &x->csplan[fp->cs];
	struct fused_job job = {
		.fp = fp,
		.x = { .e = e, .plan = xp, .bgroup = e->bgroup + e->bgroup_first[fp->xch],
		       .first_copy = x->xchs[fp->xch].first_copy },
		.c = { .e = e, .plan = cp },
	};
	struct ipu_dispatch *d = &e->dsp[x->ncss + x->nxchs + fi];
	uint32_t i;
	uint64_t t0 = 0, tl;
	int rc, inline_run;

	/* what run_step does for each of the two */
	if (atomic_load_explicit(&e->abort_req, memory_order_relaxed))
		return ipu_errorf(err, errlen, IPU_E_CANCELLED, "aborted at step %u", x->children[p]);
	atomic_fetch_add_explicit(&e->ctr[C_STEPS], 2, memory_order_relaxed);
	if (e->trace) {
		trace_step(e, x->children[p], ipu_now_ns(), 0);
		t0 = ipu_now_ns();	/* after the exchange's event: events nest */
	}
	atomic_init(&job.c.fault_vertex, UINT32_MAX);
	atomic_init(&job.c.fault_code, 0);
	inline_run = d->mode ? d->mode == IPU_DISPATCH_INLINE
			     : cp->work < IPU_INLINE_WORK_CYCLES &&
				       e->xch_host_bytes[fp->xch] < IPU_INLINE_XCH_BYTES;
	tl = d->mode ? 0 : ipu_now_ns();
	if (inline_run) {
		for (i = 0; i < fp->nitems; i++)
			fused_item(&job, i, 0);
	} else {
		ipu_pool_run(e->pool, fp->nitems, fused_item, &job);
	}
	if (!d->mode)
		learn(e, d, inline_run, tl);
	xch_finish(e, xp);
	rc = cs_finish(e, fp->cs, &job.c, err, errlen);
	if (!rc && e->trace)
		trace_step(e, x->children[p + 1], t0, 0);
	return rc;
}

static int run_step(struct ipu_engine *e, uint32_t si, char *err, size_t errlen)
{
	const struct ipu_exe *x = e->exe;
	const struct ipux_step *s = &x->steps[si];
	uint32_t i;
	int rc = 0;

	if (atomic_load_explicit(&e->abort_req, memory_order_relaxed)) {
		return ipu_errorf(err, errlen, IPU_E_CANCELLED, "aborted at step %u", si);
	}
	atomic_fetch_add_explicit(&e->ctr[C_STEPS], 1, memory_order_relaxed);
	if (e->trace && (s->kind == IPUX_STEP_EXECUTE || s->kind == IPUX_STEP_EXCHANGE ||
			 s->kind == IPUX_STEP_STREAM_COPY || s->kind == IPUX_STEP_SYNC)) {
		uint64_t t0 = ipu_now_ns();
		int stalled = 0;

		if (s->kind == IPUX_STEP_EXECUTE)
			rc = run_compute_set(e, s->a, err, errlen);
		else if (s->kind == IPUX_STEP_EXCHANGE)
			run_exchange(e, s->a);
		else if (s->kind == IPUX_STEP_STREAM_COPY)
			rc = run_stream_copy(e, s->a, &stalled, err, errlen);
		else
			add_sync(e);
		if (!rc)
			trace_step(e, si, t0, stalled);
		return rc;
	}
	switch (s->kind) {
	case IPUX_STEP_SEQUENCE:
		for (i = 0; i < s->b && !rc; i++) {
			uint32_t fi = e->fuse ? x->child_fuse[s->a + i] : IPU_FUSE_NONE;

			if (fi == IPU_FUSE_NONE || i + 1 == s->b) {
				rc = run_step(e, x->children[s->a + i], err, errlen);
				continue;
			}
			rc = run_fused(e, fi, s->a + i, err, errlen);
			i++;
		}
		return rc;
	case IPUX_STEP_EXECUTE:
		return run_compute_set(e, s->a, err, errlen);
	case IPUX_STEP_EXCHANGE:
		run_exchange(e, s->a);
		return 0;
	case IPUX_STEP_STREAM_COPY: {
		int stalled;

		return run_stream_copy(e, s->a, &stalled, err, errlen);
	}
	case IPUX_STEP_REPEAT:
		for (i = 0; i < s->a && !rc; i++)
			rc = run_step(e, s->b, err, errlen);
		return rc;
	case IPUX_STEP_SWITCH: {
		int32_t sel;

		memcpy(&sel, tile_ptr(e, s->a, s->b), sizeof(sel));
		if (sel < 0 || (uint32_t)sel >= s->d - 1)
			sel = (int32_t)(s->d - 1);	/* default */
		return run_step(e, x->children[s->c + (uint32_t)sel], err, errlen);
	}
	case IPUX_STEP_SYNC:
		add_sync(e);
		return 0;
	default: /* unreachable after verification */
		return ipu_errorf(err, errlen, IPUX_E_STEP_KIND, "step %u: unknown kind %u", si, s->kind);
	}
}

int ipu_exec_program(struct ipu_engine *e, uint32_t prog, char *err, size_t errlen)
{
	int rc;

	if (!e->exe) {
		return ipu_errorf(err, errlen, IPU_E_NOT_LOADED, "no executable loaded");
	}
	if (prog >= e->exe->nprograms) {
		return ipu_errorf(err, errlen, IPU_E_PROGRAM, "program %u does not exist (executable has %u)",
			 prog, e->exe->nprograms);
	}
	if (e->learn && ++e->runs_since_learn >= IPU_DISPATCH_RELEARN_RUNS)
		ipu_dispatch_relearn(e);
	if (e->trace) {
		struct ipu_engine_counters c0, c1;
		struct ipu_engine_step_event ev = { .program = prog, .step = e->exe->programs[prog],
					     .kind = IPU_ENGINE_TRACE_PROGRAM };

		e->trace_prog = prog;
		ipu_engine_counters(e, &c0);
		ev.start_ns = ipu_now_ns();
		rc = run_step(e, e->exe->programs[prog], err, errlen);
		ev.end_ns = ipu_now_ns();
		ipu_engine_counters(e, &c1);
		ev.status = rc;
		ev.cycles = c1.cycles - c0.cycles;
		ev.bytes = (c1.exchange_bytes - c0.exchange_bytes) +
			   (c1.stream_bytes_in - c0.stream_bytes_in) +
			   (c1.stream_bytes_out - c0.stream_bytes_out);
		e->trace(e->trace_ctx, &ev);
	} else {
		rc = run_step(e, e->exe->programs[prog], err, errlen);
	}
	if (rc)
		atomic_fetch_add_explicit(&e->ctr[C_ERRORS], 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&e->ctr[C_PROGRAMS], 1, memory_order_relaxed);
	return rc;
}
