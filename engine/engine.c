// SPDX-License-Identifier: MIT
/*
 * engine.c - engine lifetime: create, load (verify, then lay out tile
 * memory and bind the plans to it), run, abort, host memory access and
 * counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine_internal.h"

/* IPU_ENGINE_ISA, if set, else the host's best variant. */
static int pick_isa(uint32_t *isa, char *err, size_t errlen)
{
	const char *want = getenv("IPU_ENGINE_ISA");
	uint32_t host = ipu_isa_host(), i;

	*isa = host;
	if (!want || !*want)
		return 0;
	for (i = 0; i < IPU_ISA_COUNT; i++)
		if (!strcmp(want, ipu_isa_name(i)))
			break;
	if (i == IPU_ISA_COUNT || i > host) {
		char have[64] = "auto";
		uint32_t j;

		for (j = IPU_ISA_GENERIC; j <= host; j++) {
			strcat(have, ", ");
			strcat(have, ipu_isa_name(j));
		}
		return ipu_errorf(err, errlen, IPU_E_INVAL, "IPU_ENGINE_ISA=%.32s: %s; this host supports %s",
			 want, i == IPU_ISA_COUNT ? "unknown kernel variant"
						  : "the CPU lacks it", have);
	}
	if (i != IPU_ISA_AUTO)
		*isa = i;
	return 0;
}

int ipu_engine_create(const struct ipu_engine_config *cfg,
		      const struct ipu_stream_ops *streams,
		      struct ipu_engine **out, char *err, size_t errlen)
{
	struct ipu_engine *e;
	uint32_t isa;
	int rc;

	*out = NULL;
	if (!cfg || cfg->num_tiles == 0 || cfg->num_tiles > IPUX_MAX_TILES ||
	    cfg->tile_mem == 0 || cfg->tile_mem % IPU_TILE_ALIGN ||
	    cfg->tile_mem > IPUX_MAX_TILE_MEM) {
		return ipu_errorf(err, errlen, IPU_E_INVAL,
			 "bad device config: %u tiles (1..%u) of %u bytes (a non-zero multiple of %u up to %u)",
			 cfg ? cfg->num_tiles : 0, IPUX_MAX_TILES, cfg ? cfg->tile_mem : 0,
			 IPU_TILE_ALIGN, IPUX_MAX_TILE_MEM);
	}
	rc = pick_isa(&isa, err, errlen);
	if (rc)
		return rc;
	e = calloc(1, sizeof(*e));
	if (!e) {
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	e->cfg = *cfg;
	e->isa = isa;
	{
		/* off for A/B measurements: the results are the same either way */
		const char *f = getenv("IPU_ENGINE_FUSE");

		e->fuse = !f || strcmp(f, "0");
	}
	if (streams)
		e->sops = *streams;
	rc = ipu_pool_create(cfg->workers, &e->pool);
	if (rc) {
		ipu_errorf(err, errlen, rc, "cannot start %u worker threads", cfg->workers);
		free(e);
		return rc;
	}
	e->cfg.workers = ipu_pool_size(e->pool);
	{
		/* IPU_ENGINE_DISPATCH=model: the modelled rule only, for A/B measurements */
		const char *f = getenv("IPU_ENGINE_DISPATCH");

		e->learn = !f || strcmp(f, "model");
	}
	*out = e;
	return 0;
}

static void unload(struct ipu_engine *e)
{
	ipu_exe_free(e->exe);
	e->exe = NULL;
	if (e->mem)
		munmap(e->mem, e->mem_bytes);
	e->mem = NULL;
	e->mem_bytes = 0;
	free(e->vctx);
	e->vctx = NULL;
	free(e->segs);
	e->segs = NULL;
	free(e->bcopy);
	e->bcopy = NULL;
	free(e->bgroup);
	e->bgroup = NULL;
	free(e->bgroup_first);
	e->bgroup_first = NULL;
	free(e->xch_host_bytes);
	e->xch_host_bytes = NULL;
	free(e->vops);
	e->vops = NULL;
	free(e->dsp);
	e->dsp = NULL;
	ipu_alias_free(&e->alias);
	free(e->stage);
	e->stage = NULL;
	free((void *)e->cs_exec);
	e->cs_exec = NULL;
}

void ipu_engine_destroy(struct ipu_engine *e)
{
	if (!e)
		return;
	unload(e);
	ipu_pool_destroy(e->pool);
	free(e);
}

/* Byte offset from mem of [off, +len) on tile, read in place if elided. */
static uint64_t bound_src(const struct ipu_engine *e, uint32_t tile, uint32_t off, uint32_t len)
{
	const struct ipu_alias_span *a;
	int ov;

	if (e->alias.n && (a = ipu_alias_find(&e->alias, tile, off, len, &ov)))
		return (uint64_t)a->stile * e->stride + a->soff + (off - a->doff);
	return (uint64_t)tile * e->stride + off;
}

/*
 * The copies of each non-staged exchange as tile memory offsets, in plan
 * order: a worker then walks one array instead of looking each copy up in
 * the COPIES table through the plan's order and adding up its tile bases.
 * Elided copies are left out; a copy reading an elided destination reads
 * its source.
 */
static int bind_copies(struct ipu_engine *e)
{
	const struct ipu_exe *x = e->exe;
	uint64_t n = 0, k = 0, ng = 0, gk = 0;
	uint32_t xi, i, g;

	e->bgroup_first = calloc(x->nxchs ? x->nxchs : 1, sizeof(*e->bgroup_first));
	e->xch_host_bytes = calloc(x->nxchs ? x->nxchs : 1, sizeof(*e->xch_host_bytes));
	if (!e->bgroup_first || !e->xch_host_bytes)
		return IPU_E_NOMEM;
	for (xi = 0; xi < x->nxchs; xi++)
		if (!x->xchplan[xi].staged) {
			n += x->xchs[xi].num_copies;
			ng += x->xchplan[xi].ngroups;
		}
	e->bcopy = malloc((n ? n : 1) * sizeof(*e->bcopy));
	e->bgroup = malloc((ng ? ng : 1) * sizeof(*e->bgroup));
	if (!e->bcopy || !e->bgroup)
		return IPU_E_NOMEM;
	for (xi = 0; xi < x->nxchs; xi++) {
		const struct ipu_xch_plan *p = &x->xchplan[xi];

		e->bgroup_first[xi] = gk;
		if (p->staged) {
			e->xch_host_bytes[xi] = p->bytes;
			continue;
		}
		for (g = 0; g < p->ngroups; g++) {
			const struct ipu_tile_group *tg = &p->groups[g];
			struct ipu_bound_group *bg = &e->bgroup[gk++];

			bg->first = k;
			for (i = tg->first; i < tg->first + tg->count; i++) {
				uint32_t ci = p->order[i];
				const struct ipux_copy *c = &x->copies[ci];

				if (e->alias.elided && e->alias.elided[ci])
					continue;
				e->bcopy[k++] = (struct ipu_bound_copy){
					.dst = (uint64_t)c->dst_tile * e->stride + c->dst_offset,
					.src = bound_src(e, c->src_tile, c->src_offset, c->bytes),
					.bytes = c->bytes,
				};
				e->xch_host_bytes[xi] += c->bytes;
			}
			bg->count = (uint32_t)(k - bg->first);
		}
	}
	return 0;
}

/*
 * Vertices with an operand inside an elided destination get their own
 * operand list: every offset from the start of tile memory (which fits
 * 32 bits, checked at load) and mem the start of tile memory, so
 * IPU_OP_PTR reaches the source on another tile.
 */
static int bind_vertex_operands(struct ipu_engine *e)
{
	const struct ipu_exe *x = e->exe;
	uint64_t n = 0, k = 0;
	uint32_t i, j;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			if (!n)
				return 0;
			e->vops = malloc(n * sizeof(*e->vops));
			if (!e->vops)
				return IPU_E_NOMEM;
		}
		for (i = 0; i < x->nvertices; i++) {
			const struct ipux_vertex *v = &x->vertices[i];
			const struct ipux_operand *ops = &x->operands[v->first_operand];
			int redirect = 0;

			for (j = 0; j < v->num_operands && !redirect; j++) {
				int ov;

				redirect = ipu_alias_find(&e->alias, v->tile, ops[j].offset,
							  (uint64_t)ops[j].count *
								  ipux_dtype_size(ops[j].dtype),
							  &ov) != NULL;
			}
			if (!redirect)
				continue;
			if (pass == 0) {
				n += v->num_operands;
				continue;
			}
			for (j = 0; j < v->num_operands; j++) {
				e->vops[k + j] = ops[j];
				e->vops[k + j].offset = (uint32_t)bound_src(
					e, v->tile, ops[j].offset,
					(uint32_t)((uint64_t)ops[j].count * ipux_dtype_size(ops[j].dtype)));
			}
			e->vctx[i].mem = e->mem;
			e->vctx[i].ops = &e->vops[k];
			k += v->num_operands;
		}
	}
	return 0;
}

static int bind_memory(struct ipu_engine *e)
{
	const struct ipu_exe *x = e->exe;
	uint32_t i, j, s = 0;
	size_t total;
	int rc;

	e->stride = ((size_t)x->hdr->tile_mem + IPU_TILE_ALIGN - 1) & ~(size_t)(IPU_TILE_ALIGN - 1);
	total = e->stride * x->hdr->num_tiles;
	/*
	 * Anonymous pages read as zero and are only backed once written: a
	 * device's tile memory (about 900 MiB on ipu2) is mostly untouched by
	 * one program, and clearing it all up front was a quarter of the time
	 * of a short run.  Page aligned, so IPU_TILE_ALIGN holds.
	 */
	e->mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->mem == MAP_FAILED) {
		e->mem = NULL;
		return IPU_E_NOMEM;
	}
	e->mem_bytes = total;
	/* operands read in place are offsets from mem: 32 bits must reach every tile */
	if (e->elide && total <= UINT32_MAX) {
		rc = ipu_alias_plan(x, &e->alias);
		if (rc)
			return rc;
	}
	e->vctx = calloc(x->nvertices ? x->nvertices : 1, sizeof(*e->vctx));
	e->cs_exec = calloc(x->ncss ? x->ncss : 1, sizeof(*e->cs_exec));
	{
		uint64_t nseg = 0;

		for (i = 0; i < x->nscs; i++)
			nseg += x->scs[i].num_regions;
		e->segs = calloc(nseg ? nseg : 1, sizeof(*e->segs));
	}
	if (x->stage_bytes)
		e->stage = malloc(x->stage_bytes);
	e->dsp = calloc((size_t)x->ncss + x->nxchs + x->nfplans + 1, sizeof(*e->dsp));
	if (!e->dsp || !e->vctx || !e->cs_exec || !e->segs || (x->stage_bytes && !e->stage))
		return IPU_E_NOMEM;
	for (i = 0; i < x->nvertices; i++) {
		const struct ipux_vertex *v = &x->vertices[i];

		e->vctx[i].mem = e->mem + (size_t)v->tile * e->stride;
		e->vctx[i].ops = x->noperands ? &x->operands[v->first_operand] : NULL;
		e->vctx[i].params = x->nparams ? &x->params[v->first_param] : NULL;
		e->vctx[i].num_ops = v->num_operands;
		e->vctx[i].num_params = v->num_params;
		e->vctx[i].isa = e->isa;
	}
	for (i = 0; i < x->nscs; i++) {
		const struct ipux_stream_copy *sc = &x->scs[i];

		for (j = 0; j < sc->num_regions; j++, s++) {
			const struct ipux_region *r = &x->regions[sc->first_region + j];

			e->segs[s].ptr = e->mem + bound_src(e, r->tile, r->offset, r->bytes);
			e->segs[s].len = r->bytes;
		}
	}
	rc = bind_copies(e);
	if (!rc && e->alias.n)
		rc = bind_vertex_operands(e);
	if (rc)
		return rc;
	for (i = 0; i < x->ninits; i++) {
		const struct ipux_init *in = &x->inits[i];

		memcpy(e->mem + (size_t)in->tile * e->stride + in->offset,
		       x->data + in->data_offset, in->bytes);
	}
	return 0;
}

int ipu_engine_load(struct ipu_engine *e, const void *image, size_t len,
		    char *err, size_t errlen)
{
	int rc;

	unload(e);
	rc = ipu_exe_parse(image, len, e->cfg.num_tiles, e->cfg.tile_mem, e->custom, &e->exe,
			   err, errlen);
	if (rc) {
		atomic_fetch_add_explicit(&e->ctr[C_ERRORS], 1, memory_order_relaxed);
		return rc;
	}
	rc = bind_memory(e);
	if (!rc && e->learn)
		ipu_dispatch_relearn(e);
	if (rc) {
		ipu_errorf(err, errlen, rc, "out of memory laying out %u tiles of %u bytes",
			 e->exe->hdr->num_tiles, e->exe->hdr->tile_mem);
		unload(e);
	}
	return rc;
}

void ipu_engine_set_elide(struct ipu_engine *e, int on)
{
	/* off for A/B measurements: the results are the same either way */
	const char *f = getenv("IPU_ENGINE_ELIDE");

	e->elide = on && !(f && !strcmp(f, "0"));
}

void ipu_engine_set_custom(struct ipu_engine *e, const struct ipu_custom_table *t)
{
	e->custom = t;
}

int ipu_engine_exe_info(const struct ipu_engine *e, struct ipu_exe_info *info)
{
	const struct ipu_exe *x = e->exe;

	if (!x)
		return IPU_E_NOT_LOADED;
	info->num_tiles = x->hdr->num_tiles;
	info->tile_mem = x->hdr->tile_mem;
	info->num_programs = x->nprograms;
	info->num_streams = x->nstreams;
	info->num_compute_sets = x->ncss;
	info->num_vertices = x->nvertices;
	info->num_exchanges = x->nxchs;
	info->num_steps = x->nsteps;
	return 0;
}

int ipu_engine_stream_info(const struct ipu_engine *e, uint32_t s, uint32_t *dir,
			   uint32_t *buffer_bytes)
{
	if (!e->exe)
		return IPU_E_NOT_LOADED;
	if (s >= e->exe->nstreams)
		return IPU_E_INVAL;
	*dir = e->exe->streams[s].dir;
	*buffer_bytes = e->exe->streams[s].buffer_bytes;
	return 0;
}

void ipu_engine_unload(struct ipu_engine *e)
{
	unload(e);
}

int ipu_engine_run(struct ipu_engine *e, uint32_t prog, char *err, size_t errlen)
{
	return ipu_exec_program(e, prog, err, errlen);
}

void ipu_engine_abort(struct ipu_engine *e)
{
	atomic_store(&e->abort_req, 1);
}

void ipu_engine_clear_abort(struct ipu_engine *e)
{
	atomic_store(&e->abort_req, 0);
}

static int host_range(const struct ipu_engine *e, uint32_t tile, uint32_t offset,
		      uint32_t len)
{
	if (!e->exe)
		return IPU_E_NOT_LOADED;
	if (tile >= e->exe->hdr->num_tiles || offset > e->exe->hdr->tile_mem ||
	    len > e->exe->hdr->tile_mem - offset)
		return IPU_E_INVAL;
	return 0;
}

int ipu_engine_read(struct ipu_engine *e, uint32_t tile, uint32_t offset,
		    void *dst, uint32_t len)
{
	int rc = host_range(e, tile, offset, len);
	int elided = 0;

	if (!rc && e->alias.n)
		ipu_alias_find(&e->alias, tile, offset, len, &elided);
	if (elided)
		return IPU_E_INVAL;	/* never written on the host */
	if (!rc && len)
		memcpy(dst, e->mem + (size_t)tile * e->stride + offset, len);
	return rc;
}

int ipu_engine_write(struct ipu_engine *e, uint32_t tile, uint32_t offset,
		     const void *src, uint32_t len)
{
	int rc = host_range(e, tile, offset, len);

	if (!rc && len)
		memcpy(e->mem + (size_t)tile * e->stride + offset, src, len);
	return rc;
}

void ipu_engine_counters(const struct ipu_engine *e, struct ipu_engine_counters *o)
{
#define RD(i) atomic_load_explicit(&((struct ipu_engine *)e)->ctr[i], memory_order_relaxed)
	o->programs_run = RD(C_PROGRAMS);
	o->steps = RD(C_STEPS);
	o->compute_sets = RD(C_CS);
	o->vertices = RD(C_VERTICES);
	o->cycles = RD(C_CYCLES);
	o->compute_cycles = RD(C_COMPUTE_CYCLES);
	o->exchange_cycles = RD(C_EXCHANGE_CYCLES);
	o->sync_cycles = RD(C_SYNC_CYCLES);
	o->stream_cycles = RD(C_STREAM_CYCLES);
	o->exchange_bytes = RD(C_EXCHANGE_BYTES);
	o->stream_bytes_in = RD(C_STREAM_IN);
	o->stream_bytes_out = RD(C_STREAM_OUT);
	o->stream_copies = RD(C_STREAM_COPIES);
	o->stream_stalls = RD(C_STALLS);
	o->stall_ns = RD(C_STALL_NS);
	o->errors = RD(C_ERRORS);
#undef RD
}

void ipu_engine_reset_counters(struct ipu_engine *e)
{
	unsigned i;

	for (i = 0; i < C_NUM; i++)
		atomic_store_explicit(&e->ctr[i], 0, memory_order_relaxed);
	if (e->exe)
		for (i = 0; i < e->exe->ncss; i++)
			atomic_store_explicit(&e->cs_exec[i], 0, memory_order_relaxed);
}

int ipu_engine_cs_profile(const struct ipu_engine *e, uint32_t cs,
			  struct ipu_engine_cs_profile *out)
{
	const struct ipu_cs_plan *p;

	if (!e->exe)
		return IPU_E_NOT_LOADED;
	if (cs >= e->exe->ncss)
		return IPU_E_INVAL;
	p = &e->exe->csplan[cs];
	out->executions = atomic_load_explicit(&((struct ipu_engine *)e)->cs_exec[cs],
					       memory_order_relaxed);
	out->cycles = out->executions * p->cycles;
	out->cycles_per_run = p->cycles;
	out->tiles = p->ngroups;
	out->vertices = p->nvertices;
	return 0;
}

void ipu_engine_set_trace(struct ipu_engine *e, ipu_engine_trace_fn fn, void *ctx)
{
	e->trace_ctx = ctx;
	e->trace = fn;
}

int ipu_engine_superstep_cost(const struct ipu_engine *e, uint32_t kind, uint32_t index,
			      struct ipu_engine_superstep_cost *out)
{
	const struct ipu_exe *x = e->exe;

	if (!x)
		return IPU_E_NOT_LOADED;
	out->bytes = 0;
	switch (kind) {
	case IPUX_STEP_EXECUTE:
		if (index >= x->ncss)
			return IPU_E_INVAL;
		out->cycles = x->csplan[index].cycles;
		return 0;
	case IPUX_STEP_EXCHANGE:
		if (index >= x->nxchs)
			return IPU_E_INVAL;
		out->cycles = x->xchplan[index].cycles;
		out->bytes = x->xchplan[index].bytes;
		return 0;
	case IPUX_STEP_STREAM_COPY:
		if (index >= x->nscs)
			return IPU_E_INVAL;
		out->cycles = x->sc_cycles[index];
		out->bytes = x->streams[x->scs[index].stream].buffer_bytes;
		return 0;
	default:
		return IPU_E_INVAL;
	}
}

uint32_t ipu_engine_isa(const struct ipu_engine *e)
{
	return e->isa;
}
