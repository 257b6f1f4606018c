/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the IPU tile engine: load (parse + verify) and run executables.
 *
 * The same engine runs inside the QEMU device model and inside libipu's
 * in-process "model" backend.  It has no global state: everything lives in
 * a struct ipu_engine.  Host streams are served through callbacks so that
 * each embedding moves data its own way (memcpy from user buffers, or DMA
 * from guest scatter-gather lists).
 *
 * Threading: one thread calls load/run/read/write at a time (the embedding
 * serialises them).  ipu_engine_abort() may be called from any thread.
 * Inside run the engine uses its own worker pool.
 */
#ifndef IPU_ENGINE_H
#define IPU_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/error.h"	/* IPUX_E_* from the verifier, IPU_E_* at run time */
#include "ipu/ipux.h"

struct ipu_engine_config {
	uint32_t num_tiles;	/* tiles of the device */
	uint32_t tile_mem;	/* bytes of memory per tile */
	uint32_t workers;	/* worker threads; 0 = online CPUs */
};

/* One contiguous piece of tile memory a stream transfer reads or writes. */
struct ipu_stream_seg {
	uint8_t *ptr;
	uint32_t len;
};

/*
 * Host side of the streams.  transfer() is called when a StreamCopy step
 * runs: for an H2D stream it must fill the segments (in order) with the next
 * queued host buffer of that stream, for D2H it must drain them into the
 * next queued host buffer.  It blocks until a buffer is available and
 * returns 0, IPU_E_CANCELLED if it was woken by an abort, or another
 * negative ipu_err if the host could not complete the transfer.
 * *stalled must be set to 1 if it had to wait for a buffer.
 */
struct ipu_stream_ops {
	int (*transfer)(void *ctx, uint32_t stream, uint32_t dir,
			const struct ipu_stream_seg *segs, uint32_t nsegs,
			uint32_t total_bytes, int *stalled);
	void *ctx;
};

struct ipu_engine_counters {
	uint64_t programs_run;
	uint64_t steps;			/* program steps executed */
	uint64_t compute_sets;		/* Execute steps */
	uint64_t vertices;		/* vertex executions */
	uint64_t cycles;		/* modelled cycles, all kinds */
	uint64_t compute_cycles;
	uint64_t exchange_cycles;
	uint64_t sync_cycles;
	uint64_t stream_cycles;
	uint64_t exchange_bytes;
	uint64_t stream_bytes_in;	/* H2D */
	uint64_t stream_bytes_out;	/* D2H */
	uint64_t stream_copies;
	uint64_t stream_stalls;		/* transfers that had to wait */
	uint64_t stall_ns;		/* wall time spent waiting for the host */
	uint64_t errors;
};

/* Profile of one compute set, accumulated over runs. */
struct ipu_engine_cs_profile {
	uint64_t executions;
	uint64_t cycles;		/* modelled, all executions */
	uint32_t cycles_per_run;	/* modelled cycles of one execution */
	uint32_t tiles;			/* tiles with at least one vertex */
	uint32_t vertices;
};

/*
 * One superstep as it ran, for profiles (ipu_engine_set_trace).  Leaf
 * steps only (Execute, Exchange, StreamCopy, Sync); Sequence, Repeat and
 * Switch are visible through the leaves they run.  After the last step of
 * a program one more event with kind IPU_ENGINE_TRACE_PROGRAM covers the whole
 * run.
 */
#define IPU_ENGINE_TRACE_PROGRAM 0u		/* kind of the end-of-program event */
#define IPU_ENGINE_TRACE_STALLED 1u		/* flags: a stream copy waited for the host */

struct ipu_engine_step_event {
	uint32_t program;		/* program index */
	uint32_t step;			/* index in STEPS (the root for a program) */
	uint16_t kind;			/* IPUX_STEP_* or IPU_ENGINE_TRACE_PROGRAM */
	uint16_t flags;			/* IPU_ENGINE_TRACE_STALLED */
	uint32_t index;			/* compute set, exchange, stream copy, sync kind */
	uint32_t stream;		/* stream copies: the stream */
	int32_t status;			/* program event: its result (0 or ipu_err) */
	uint64_t cycles;		/* modelled, exactly as added to the counters */
	uint64_t bytes;			/* exchange / stream copy: bytes moved */
	uint64_t start_ns, end_ns;	/* host CLOCK_MONOTONIC wall time */
};

/*
 * Called on the thread running the program, after each traced step; must
 * not call into the engine.  Costs two clock reads per step while set.
 */
typedef void (*ipu_engine_trace_fn)(void *ctx, const struct ipu_engine_step_event *ev);

/* Modelled cost of one superstep of the loaded executable, whether or not it ran. */
struct ipu_engine_superstep_cost {
	uint64_t cycles;		/* as a run adds to the counters */
	uint64_t bytes;			/* exchange / stream copy: bytes moved */
};

/* Information about the loaded executable. */
struct ipu_exe_info {
	uint32_t num_tiles;
	uint32_t tile_mem;
	uint32_t num_programs;
	uint32_t num_streams;
	uint32_t num_compute_sets;
	uint32_t num_vertices;
	uint32_t num_exchanges;
	uint32_t num_steps;
};

struct ipu_engine;

/*
 * Create an engine for a device of cfg->num_tiles tiles of cfg->tile_mem
 * bytes.  Returns 0 or a negative ipu_err; on error writes a reason to err.
 *
 * The MATMUL/CONV2D kernel variant (enum ipu_isa in ipu/codelet.h) is
 * chosen here, once: the best the host CPU supports, or the one named by
 * the environment variable IPU_ENGINE_ISA (generic, avx2, avx512 or auto),
 * e.g. to compare results with a host that lacks AVX-512.  A name the
 * engine does not know, or a variant the CPU cannot run, is refused
 * (IPU_E_INVAL) with a message listing what this host supports.
 */
int ipu_engine_create(const struct ipu_engine_config *cfg,
		      const struct ipu_stream_ops *streams,
		      struct ipu_engine **out, char *err, size_t errlen);
void ipu_engine_destroy(struct ipu_engine *e);

/*
 * Parse and verify an executable image, then initialise tile memory (zero,
 * then INITS).  The image is copied; the caller keeps ownership of `image`.
 * On failure the previously loaded executable (if any) is unloaded, the
 * return value says what was wrong and err holds a message naming the
 * record (e.g. "vertex 12: operand 1 region [640, 1664) outside tile
 * memory of 1024 bytes").
 */
int ipu_engine_load(struct ipu_engine *e, const void *image, size_t len,
		    char *err, size_t errlen);

/* Verify only: no engine needed.  Same codes and messages as load. */
int ipu_exe_verify(const void *image, size_t len, uint32_t dev_tiles,
		   uint32_t dev_tile_mem, char *err, size_t errlen);

/*
 * The custom codelets (ipu/custom_table.h) executables loaded from now on
 * may use; NULL: none.  The table must outlive the engine or the next call.
 */
struct ipu_custom_table;
void ipu_engine_set_custom(struct ipu_engine *e, const struct ipu_custom_table *t);
/* ipu_exe_verify for a device with these custom codelets (NULL: none). */
int ipu_exe_verify_custom(const void *image, size_t len, uint32_t dev_tiles,
			  uint32_t dev_tile_mem, const struct ipu_custom_table *custom,
			  char *err, size_t errlen);

/* Information about the loaded executable; IPU_E_NOT_LOADED if none. */
int ipu_engine_exe_info(const struct ipu_engine *e, struct ipu_exe_info *info);
/* Direction and buffer size of stream `s` of the loaded executable. */
int ipu_engine_stream_info(const struct ipu_engine *e, uint32_t s, uint32_t *dir,
			   uint32_t *buffer_bytes);
/* The kernel variant the engine runs (never IPU_ISA_AUTO). */
uint32_t ipu_engine_isa(const struct ipu_engine *e);

/* Drop the loaded executable and its tile memory (no-op if none). */
void ipu_engine_unload(struct ipu_engine *e);

/*
 * Run program `prog` to completion (blocking).  Returns 0,
 * IPU_E_CANCELLED after ipu_engine_abort(), IPU_E_FAULT (err names the
 * vertex), IPU_E_STREAM, IPU_E_PROGRAM or IPU_E_NOT_LOADED.
 */
int ipu_engine_run(struct ipu_engine *e, uint32_t prog, char *err,
		   size_t errlen);

/*
 * Ask a running program to stop at the next step boundary.  The embedding
 * must also wake any thread blocked in its stream transfer callback.  The
 * request stays set until ipu_engine_clear_abort().
 */
void ipu_engine_abort(struct ipu_engine *e);
void ipu_engine_clear_abort(struct ipu_engine *e);

/*
 * Copy elision for executables loaded from now on (default off): an
 * exchange copy whose destination is only read, and only while its source
 * still holds the copied bytes, is not made; its readers read the source
 * in place (decided at load, Documentation/device/architecture.md).
 * Results, counters and modelled cycles are the same; the destinations'
 * bytes are then never in host memory, and ipu_engine_read() of them
 * fails.  For an embedding that observes tile memory only through
 * streams.  IPU_ENGINE_ELIDE=0 in the environment keeps every copy.
 */
void ipu_engine_set_elide(struct ipu_engine *e, int on);

/*
 * Host access to tile memory (bounds-checked): 0 or IPU_E_INVAL (also
 * for a read of an elided copy's destination, see ipu_engine_set_elide).
 */
int ipu_engine_read(struct ipu_engine *e, uint32_t tile, uint32_t offset,
		    void *dst, uint32_t len);
int ipu_engine_write(struct ipu_engine *e, uint32_t tile, uint32_t offset,
		     const void *src, uint32_t len);

void ipu_engine_counters(const struct ipu_engine *e,
			 struct ipu_engine_counters *out);
void ipu_engine_reset_counters(struct ipu_engine *e);
/* Profile of compute set `cs`; IPU_E_INVAL if out of range. */
int ipu_engine_cs_profile(const struct ipu_engine *e, uint32_t cs,
			  struct ipu_engine_cs_profile *out);

/*
 * Report every step of the programs that run from now on to fn (NULL:
 * stop).  Set it while no program runs (the run reads it unlocked).
 */
void ipu_engine_set_trace(struct ipu_engine *e, ipu_engine_trace_fn fn, void *ctx);
/*
 * Modelled cost of compute set, exchange or stream copy `index` (kind
 * IPUX_STEP_EXECUTE / EXCHANGE / STREAM_COPY) of the loaded executable;
 * IPU_E_NOT_LOADED, or IPU_E_INVAL for another kind or an index out of
 * range.
 */
int ipu_engine_superstep_cost(const struct ipu_engine *e, uint32_t kind, uint32_t index,
			      struct ipu_engine_superstep_cost *out);

/* The checksum an image's header must hold (len >= header size). */
uint32_t ipu_exe_checksum(const void *image, size_t len);


#endif /* IPU_ENGINE_H */
