/* SPDX-License-Identifier: MIT */
/*
 * graph.h - the graph builder: the Poplar-like layer between a compiler (or
 * a hand-written test) and the device's executable format.
 *
 * You create tensors, map their elements onto tiles, add vertices (codelet
 * instances whose operands are pieces of tensors living on one tile) to
 * compute sets, describe programs as trees of steps (sequence, execute,
 * copy, stream copy, repeat, switch, sync), then compile: the builder lays
 * out tile memory, splits copies into per-tile exchange records and writes
 * a verified-format executable image (engine/ipux_format.h).
 *
 * Errors are sticky: the first failing call records a message (naming the
 * tensor, vertex or tile) and returns IPU_GRAPH_INVALID or a negative
 * code; later calls keep failing; ipu_graph_error() returns the message.
 * A builder is not thread-safe; use one per thread.
 */
#ifndef IPU_GRAPH_H
#define IPU_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ipux.h"

#define IPU_GRAPH_INVALID UINT32_MAX
#define IPU_GRAPH_MAX_RANK 8

struct ipu_graph;
typedef uint32_t ipu_tensor;	/* handle of a tensor */
typedef uint32_t ipu_step;	/* handle of a program step */

/* A contiguous piece of a tensor: elements [begin, begin + count). */
struct ipu_slice {
	ipu_tensor t;
	uint64_t begin;
	uint64_t count;
};

/* A builder for a device of num_tiles tiles with tile_mem bytes each. */
struct ipu_graph *ipu_graph_create(uint32_t num_tiles, uint32_t tile_mem);
void ipu_graph_destroy(struct ipu_graph *g);
/* The target the builder was created for. */
void ipu_graph_target(const struct ipu_graph *g, uint32_t *num_tiles, uint32_t *tile_mem);
/* Record an error (for layers built on the builder); returns -1. */
int ipu_graph_fail(struct ipu_graph *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Memory reuse by liveness (off by default).  Off, every mapped piece of
 * every tensor has its own bytes for as long as the executable is loaded,
 * so a host may read or write any tensor between runs.  On, pieces whose
 * values are never needed at the same time share memory, and only these
 * keep their bytes from run to run: tensors with an initial value, pieces
 * a program reads before it writes them in the same run (they also keep
 * what the host or a previous run left there), pieces used by more than
 * one program, and pieces no step uses.  Any other piece holds its value
 * only from the step that writes it to the last step that reads it; a
 * program that moves data only through streams computes the same results
 * either way.  Everything used inside a Repeat is live for the whole loop.
 */
void ipu_graph_set_memory_reuse(struct ipu_graph *g, int on);
/* First error message, or NULL if every call so far succeeded. */
const char *ipu_graph_error(const struct ipu_graph *g);

/* --- tensors --------------------------------------------------------- */

ipu_tensor ipu_graph_add_tensor(struct ipu_graph *g, const char *name,
				enum ipux_dtype dtype, uint32_t rank,
				const uint64_t *dims);
uint64_t ipu_graph_tensor_elems(const struct ipu_graph *g, ipu_tensor t);
enum ipux_dtype ipu_graph_tensor_dtype(const struct ipu_graph *g, ipu_tensor t);

/* Place elements [begin, end) of t on `tile`. Intervals must not overlap. */
int ipu_graph_map(struct ipu_graph *g, ipu_tensor t, uint32_t tile,
		  uint64_t begin, uint64_t end);
/* Place the whole tensor on one tile. */
int ipu_graph_map_tile(struct ipu_graph *g, ipu_tensor t, uint32_t tile);
/*
 * Spread t over tiles first_tile .. first_tile + ntiles - 1 in equal
 * contiguous chunks that are multiples of `grain` elements (grain 0 = 1).
 * Returns the number of tiles actually used.
 */
int ipu_graph_map_linear(struct ipu_graph *g, ipu_tensor t, uint32_t first_tile,
			 uint32_t ntiles, uint64_t grain);
/* Tile holding element `elem` of t, IPU_GRAPH_INVALID if unmapped. */
uint32_t ipu_graph_tile_of(const struct ipu_graph *g, ipu_tensor t, uint64_t elem);

/*
 * Give t initial contents (frozen weights, constants): `bytes` must equal
 * elems * dtype size.  The data is copied.
 */
int ipu_graph_set_init(struct ipu_graph *g, ipu_tensor t, const void *data,
		       size_t bytes);

/* --- compute ---------------------------------------------------------- */

uint32_t ipu_graph_add_compute_set(struct ipu_graph *g, const char *name);
/*
 * Add a vertex running `codelet` to compute set cs.  Every operand slice
 * must lie on one tile, the same for all operands; that is the vertex's
 * tile.  Operand dtypes are the tensors' dtypes.  The codelet's own checks
 * run when the image is verified at load (ipu_graph_compile verifies too).
 */
int ipu_graph_add_vertex(struct ipu_graph *g, uint32_t cs, enum ipux_codelet codelet,
			 const struct ipu_slice *ops, uint32_t nops,
			 const uint32_t *params, uint32_t nparams);

/*
 * Custom codelets (ipu/custom_table.h): the table the built image is
 * verified against (NULL: none), and the codelet id of a vertex running
 * operator domain::name of the library with that SHA-256 (the same id for
 * the same three; IPU_GRAPH_INVALID after an error).
 */
struct ipu_custom_table;
void ipu_graph_set_custom_table(struct ipu_graph *g, const struct ipu_custom_table *t);
const struct ipu_custom_table *ipu_graph_custom_table(const struct ipu_graph *g);
uint32_t ipu_graph_custom_codelet(struct ipu_graph *g, const char *domain, const char *name,
				  const uint8_t hash[32]);

/* --- streams ---------------------------------------------------------- */

/* A host stream whose buffers are `buffer_bytes` long; returns its id. */
uint32_t ipu_graph_add_stream(struct ipu_graph *g, const char *name,
			      enum ipux_stream_dir dir, uint32_t buffer_bytes);

/* --- program steps ------------------------------------------------------ */

ipu_step ipu_step_sequence(struct ipu_graph *g);
/* Append `child` to sequence `seq` (child may be used in several places). */
int ipu_step_append(struct ipu_graph *g, ipu_step seq, ipu_step child);
ipu_step ipu_step_execute(struct ipu_graph *g, uint32_t cs);
/*
 * Copy count elements src[src_begin..] to dst[dst_begin..] (same dtype),
 * across tiles as needed: one exchange.  Several copies can share one
 * exchange step: create it with ipu_step_exchange and add copies.
 */
ipu_step ipu_step_exchange(struct ipu_graph *g);
int ipu_exchange_add(struct ipu_graph *g, ipu_step xch, struct ipu_slice src,
		     struct ipu_slice dst);
ipu_step ipu_step_copy(struct ipu_graph *g, struct ipu_slice src, struct ipu_slice dst);
/*
 * Move one host buffer of `stream` into (H2D) or out of (D2H) the
 * concatenation of the slices, in order.  Their bytes must add up to the
 * stream's buffer size.
 */
ipu_step ipu_step_stream_copy(struct ipu_graph *g, uint32_t stream,
			      const struct ipu_slice *slices, uint32_t nslices);
ipu_step ipu_step_repeat(struct ipu_graph *g, uint32_t count, ipu_step body);
/*
 * Run cases[v] where v is the i32 in element 0 of `selector`, or `dflt`
 * when v is outside [0, ncases).
 */
ipu_step ipu_step_switch(struct ipu_graph *g, ipu_tensor selector,
			 const ipu_step *cases, uint32_t ncases, ipu_step dflt);
ipu_step ipu_step_sync(struct ipu_graph *g, enum ipux_sync_kind kind);

/* Register `root` as the next program; returns its index. */
int ipu_graph_add_program(struct ipu_graph *g, ipu_step root);

/* --- provenance ---------------------------------------------------------- */

/*
 * Compute sets and exchanges created from now on come from node `node`
 * (operator `op`) of the user's model; node NULL: from none.  Profiles
 * and reports use it to speak in the model's names.
 */
int ipu_graph_set_origin(struct ipu_graph *g, const char *node, const char *op);
uint32_t ipu_graph_num_origins(const struct ipu_graph *g);
/* Node name of origin i (and its operator in *op), NULL if out of range. */
const char *ipu_graph_origin(const struct ipu_graph *g, uint32_t i, const char **op);
/* Origin of compute set cs / exchange x, or IPU_GRAPH_INVALID. */
uint32_t ipu_graph_cs_origin(const struct ipu_graph *g, uint32_t cs);
uint32_t ipu_graph_exchange_origin(const struct ipu_graph *g, uint32_t x);

/* --- output ------------------------------------------------------------ */

struct ipu_graph_stats {
	uint32_t tiles_used;
	uint64_t mem_max;	/* bytes on the fullest tile */
	uint64_t mem_total;	/* bytes over all tiles (sum of per-tile peaks) */
	uint32_t mem_max_tile;
	/* The same without memory reuse (equal to the above when it is off). */
	uint64_t mem_max_no_reuse, mem_total_no_reuse;
	uint32_t mem_max_no_reuse_tile;
	int memory_reuse;
	uint32_t compute_sets, vertices, exchanges, copies, steps, streams;
	uint64_t exchange_bytes;	/* sum of copy bytes */
	size_t image_bytes;
};

/*
 * Lay out memory and write the executable image (malloc'd, caller frees).
 * Fails with a message if a tensor is unmapped, a tile overflows (naming the
 * tile, the bytes needed and, with reuse, the bytes live at once and the
 * largest tensor live then) or the image does not verify.
 */
int ipu_graph_compile(struct ipu_graph *g, void **image, size_t *len,
		      struct ipu_graph_stats *stats);

/* --- inspection (reports) ------------------------------------------------ */

uint32_t ipu_graph_num_tensors(const struct ipu_graph *g);
/* Name of tensor t, NULL if there is none. */
const char *ipu_graph_tensor_name(const struct ipu_graph *g, ipu_tensor t);
/* After compile: per tile (num_tiles entries) the highest byte used: 0 or -1. */
int ipu_graph_tile_usage(const struct ipu_graph *g, uint64_t *peak);
/*
 * After compile: bytes live on all tiles together at each position of the
 * programs' flattened steps (the allocator's liveness; tensors live for the
 * whole program counted everywhere).  Every program's steps start at
 * position 0 (one program runs at a time): with several programs, a
 * position counts what any of them holds live there.  *bytes is malloc'd (caller frees),
 * *n positions.  0, or -1 with the builder's error set.
 */
int ipu_graph_memory_timeline(struct ipu_graph *g, uint64_t **bytes, uint32_t *n);

/* Where piece k of t's mapping ended up (after compile): 0 or -1. */
int ipu_graph_tensor_location(const struct ipu_graph *g, ipu_tensor t, uint32_t k,
			      uint32_t *tile, uint64_t *begin, uint64_t *end,
			      uint32_t *offset);

#endif /* IPU_GRAPH_H */
