/* SPDX-License-Identifier: MIT */
/*
 * engine_internal.h - what the engine's own files share: the parsed and
 * verified executable, the execution plans derived from it at load time,
 * and the worker pool.
 */
#ifndef IPU_ENGINE_INTERNAL_H
#define IPU_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ipu/codelet.h"
#include "ipu/engine.h"
#include "ipu/ipux.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the engine reads the little-endian executable format in place"
#endif

/* Tile memory is laid out with this alignment between tiles. */
#define IPU_TILE_ALIGN 64u

/* Vertices of one tile within a compute set: plan->order[first .. +count). */
struct ipu_tile_group {
	uint32_t tile;
	uint32_t first;
	uint32_t count;
};

struct ipu_cs_plan {
	uint32_t *order;		/* vertex indices grouped by tile */
	struct ipu_tile_group *groups;
	/*
	 * Groups by decreasing modelled cost: the order workers take them in,
	 * so the last items taken are the cheapest and the threads finish
	 * together (longest processing time first).
	 */
	uint32_t *sched;
	uint32_t ngroups;
	uint32_t cycles;		/* modelled cycles of one execution */
	uint32_t nvertices;
	uint64_t work;			/* sum of the vertices' costs */
};

/* Copies of one exchange grouped by destination tile (list order kept). */
struct ipu_xch_plan {
	uint32_t *order;		/* copy indices */
	struct ipu_tile_group *groups;	/* tile = destination tile */
	uint32_t ngroups;
	uint32_t staged;		/* a destination overlaps a source */
	uint64_t bytes;
	uint64_t *stage_off;		/* per copy (list order) if staged */
	uint32_t cycles;
};

/*
 * An exchange and the compute set after it run as one parallel-for
 * (fuse.c): item i copies into tile items[i].tile (exchange group
 * xch_group) and then runs its vertices (compute set group cs_group);
 * either may be IPU_FUSE_NONE.
 */
#define IPU_FUSE_NONE UINT32_MAX
struct ipu_fused_item {
	uint32_t tile;
	uint32_t xch_group;
	uint32_t cs_group;
};

struct ipu_fuse_plan {
	uint32_t xch, cs;
	uint32_t nitems;
	struct ipu_fused_item *items;	/* largest first */
};

struct ipu_exe {
	uint8_t *image;			/* our own copy of the image */
	size_t len;
	const struct ipux_header *hdr;

	const struct ipux_stream *streams;
	const struct ipux_vertex *vertices;
	const struct ipux_operand *operands;
	const uint32_t *params;
	const struct ipux_compute_set *css;
	const struct ipux_exchange *xchs;
	const struct ipux_copy *copies;
	const struct ipux_stream_copy *scs;
	const struct ipux_region *regions;
	const struct ipux_step *steps;
	const uint32_t *children;
	const uint32_t *programs;
	const struct ipux_init *inits;
	const uint8_t *data;
	const struct ipux_custom *customs;
	uint32_t ncustom;
	const struct ipu_codelet **custom_cl;	/* per CUSTOM record, bound at load */

	uint32_t nstreams, nvertices, noperands, nparams, ncss, nxchs;
	uint32_t ncopies, nscs, nregions, nsteps, nchildren, nprograms;
	uint32_t ninits, ndata;

	/* derived at load */
	const struct ipu_codelet **vcodelet;	/* per vertex */
	uint32_t *vcost;			/* per vertex, modelled cycles */
	struct ipu_cs_plan *csplan;
	struct ipu_xch_plan *xchplan;
	uint32_t *sc_seg_first;			/* per stream copy */
	uint32_t *sc_cycles;			/* per stream copy */
	uint64_t stage_bytes;			/* largest staged exchange */
	/* per children[] entry: the fused plan of it and the next child, or IPU_FUSE_NONE */
	uint32_t *child_fuse;
	struct ipu_fuse_plan *fplan;
	uint32_t nfplans;
};

/* Parse + verify `image` against a device whose custom codelets are
 * `custom` (NULL: none); on success *out owns a copy. */
struct ipu_custom_table;
int ipu_exe_parse(const void *image, size_t len, uint32_t dev_tiles,
		  uint32_t dev_tile_mem, const struct ipu_custom_table *custom,
		  struct ipu_exe **out, char *err, size_t errlen);
/* custom.c: binds the CUSTOM records to the table's codelets. */
int ipu_exe_bind_custom(struct ipu_exe *x, const struct ipu_custom_table *t, char *err,
			size_t errlen);
void ipu_exe_free(struct ipu_exe *x);

/* A byte range [start, end) on a tile, of one of two kinds (0 or 1). */
struct ipu_span {
	uint64_t start, end;
	uint32_t tile;
	uint32_t kind;
};

/* 1 if a non-empty span of one kind overlaps one of the other kind on the
 * same tile, else 0; sorts s (verify.c). */
int ipu_spans_overlap(struct ipu_span *s, size_t n);

/* Fused exchange + compute set plans of a verified executable (fuse.c). */
int ipu_plan_fusion(struct ipu_exe *x);
void ipu_fusion_free(struct ipu_exe *x);

/*
 * Until a superstep has been timed (dispatch.c), those smaller than this
 * run on the calling thread: waking the workers costs tens of
 * microseconds, more than the work itself.
 */
#define IPU_INLINE_WORK_CYCLES 20000u	/* modelled cycles of a compute set */
#define IPU_INLINE_XCH_BYTES (128u * 1024u)

/* Where a superstep runs, learnt from its timing (dispatch.c). */
enum { IPU_DISPATCH_UNKNOWN, IPU_DISPATCH_INLINE, IPU_DISPATCH_POOL };
struct ipu_dispatch {
	uint8_t runs;			/* executions timed so far */
	uint8_t mode;			/* IPU_DISPATCH_* */
};

/*
 * Exchange copies whose destination is read from the source in place
 * (alias.c): spans sorted by destination, disjoint.
 */
struct ipu_alias_span {
	uint32_t dtile, doff, bytes;
	uint32_t stile, soff;
	uint32_t copy;
};

struct ipu_alias {
	uint8_t *elided;		/* per copy: 1 if not made */
	struct ipu_alias_span *spans;
	uint32_t n;
	uint64_t bytes;			/* elided bytes per run of every exchange once */
};

int ipu_alias_plan(const struct ipu_exe *x, struct ipu_alias *out);
void ipu_alias_free(struct ipu_alias *a);
/*
 * The elided destination holding all of [off, off + len) on tile, or
 * NULL; *overlaps says whether any elided destination overlaps the range.
 */
const struct ipu_alias_span *ipu_alias_find(const struct ipu_alias *a, uint32_t tile,
					    uint64_t off, uint64_t len, int *overlaps);

/* Worker pool: run fn(ctx, i, worker) for i in [0, n) on all workers. */
struct ipu_pool;
typedef void (*ipu_pool_fn)(void *ctx, uint32_t item, uint32_t worker);
int ipu_pool_create(uint32_t workers, struct ipu_pool **out);
void ipu_pool_destroy(struct ipu_pool *p);
uint32_t ipu_pool_size(const struct ipu_pool *p);
void ipu_pool_run(struct ipu_pool *p, uint32_t n, ipu_pool_fn fn, void *ctx);

uint64_t ipu_now_ns(void);
/* Median delay until every helper has joined a pool run (0 for one worker). */
uint64_t ipu_dispatch_wake_ns(struct ipu_pool *p);
/* Programs run between two measurements of the host (dispatch.c). */
#define IPU_DISPATCH_RELEARN_RUNS 1024u
/* Records an execution of ns (inline or not); decides at the second. */
void ipu_dispatch_learn(struct ipu_dispatch *d, int ran_inline, uint64_t ns, uint64_t wake_ns,
			uint32_t workers);

enum ipu_counter_id {
	C_PROGRAMS, C_STEPS, C_CS, C_VERTICES, C_CYCLES, C_COMPUTE_CYCLES,
	C_EXCHANGE_CYCLES, C_SYNC_CYCLES, C_STREAM_CYCLES, C_EXCHANGE_BYTES,
	C_STREAM_IN, C_STREAM_OUT, C_STREAM_COPIES, C_STALLS, C_STALL_NS,
	C_ERRORS, C_NUM
};

/*
 * One copy of a non-staged exchange, bound to tile memory: byte offsets
 * from the engine's mem, in the exchange plan's order (its groups'
 * order[] ranges), so a worker reads its group's copies in sequence.
 */
struct ipu_bound_copy {
	uint64_t dst, src;
	uint64_t bytes;
};

/* A destination tile's copies of a non-staged exchange: bcopy[first, +count). */
struct ipu_bound_group {
	uint64_t first;
	uint32_t count;
};

struct ipu_engine {
	struct ipu_engine_config cfg;
	uint32_t isa;			/* enum ipu_isa, resolved */
	int fuse;			/* run the fused plans (unless IPU_ENGINE_FUSE=0) */
	struct ipu_stream_ops sops;
	struct ipu_pool *pool;
	struct ipu_exe *exe;
	uint8_t *mem;			/* exe->hdr->num_tiles * stride bytes, mmap'd */
	size_t mem_bytes;
	size_t stride;			/* bytes between tile bases */
	struct ipu_vertex_ctx *vctx;	/* per vertex, mem bound */
	struct ipu_stream_seg *segs;	/* stream copy segments, mem bound */
	struct ipu_bound_copy *bcopy;	/* exchange copies, mem bound */
	struct ipu_bound_group *bgroup;	/* per exchange plan group (non-staged) */
	uint64_t *bgroup_first;		/* per exchange: its first in bgroup */
	uint64_t *xch_host_bytes;	/* per exchange: bytes the host copies */
	int elide;			/* skip copies read in place (ipu_engine_set_elide) */
	struct ipu_alias alias;		/* the copies skipped, if elide */
	struct ipux_operand *vops;	/* operands of vertices reading in place */
	uint64_t wake_ns;		/* cost of a pool run, measured at create */
	int learn;			/* time supersteps to place them (else modelled rule) */
	uint32_t runs_since_learn;
	struct ipu_dispatch *dsp;	/* compute sets, then exchanges, then fused plans */
	uint8_t *stage;			/* staging buffer for exchanges */
	_Atomic uint64_t *cs_exec;	/* per compute set executions */
	atomic_int abort_req;
	_Atomic uint64_t ctr[C_NUM];
	ipu_engine_trace_fn trace;		/* NULL: no per-step events */
	void *trace_ctx;
	uint32_t trace_prog;		/* program being run, for its events */
	const struct ipu_custom_table *custom;	/* the host's, or NULL */
};

/* Measure wake_ns again and forget every superstep's placement. */
void ipu_dispatch_relearn(struct ipu_engine *e);

/* Interpreter entry (exec.c). */
int ipu_exec_program(struct ipu_engine *e, uint32_t prog, char *err,
		     size_t errlen);

/* Modelled costs (documented in Documentation/device/cost-model.md). */
#define IPU_COST_CS_OVERHEAD 50u	/* sync + compute-set dispatch */
#define IPU_COST_SYNC 30u
#define IPU_COST_XCH_LATENCY 100u
#define IPU_COST_XCH_BYTES_PER_CYCLE 8u
#define IPU_COST_STREAM_LATENCY 500u
#define IPU_COST_STREAM_BYTES_PER_CYCLE 16u

#endif /* IPU_ENGINE_INTERNAL_H */
