/* SPDX-License-Identifier: MIT */
/*
 * ipu/ipuef.h - the .ipuef model file: reader and writer.
 *
 * An .ipuef file is what the compiler produces and the runtime loads (our
 * PopEF): a header and a sequence of typed, versioned, size-prefixed blobs:
 *
 *   Metadata     exactly one: target, programs, anchors, batch size
 *   Executable   exactly one: the engine's binary image (opaque here);
 *                one per IPU for a model split over a group of IPUs
 *   TensorData   any number: named weights the Load program streams in
 *   Opaque       any number: producer information (compiler name, ...)
 *
 * The byte layout is specified in Documentation/runtime/ipuef-format.md.
 * Files come from disk, the network or a user's cache directory, so the
 * reader trusts nothing: it checks the whole-file CRC, every blob's CRC,
 * every size, count and string, and the consistency between blobs, before
 * anything is handed out.  Each kind of malformation has its own error code
 * and the message names the blob, anchor or field (for example
 * "blob 2 (TensorData 'w1'): size 4096 exceeds file (3000 bytes left)").
 *
 * The writer applies the same rules, so the compiler cannot produce a file
 * the runtime would refuse.
 *
 * Nothing here needs a device.  No global state: every object is owned by
 * its handle; distinct handles may be used from distinct threads, and a
 * reader handle is immutable after ipuef_open*() so it may be shared.
 */
#ifndef IPU_IPUEF_H
#define IPU_IPUEF_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/dtype.h"
#include "ipu/error.h"

#define IPUEF_VERSION_MAJOR 1
#define IPUEF_VERSION_MINOR 0

/* Limits the reader enforces and the writer respects.  They bound the
 * memory a hostile file can make the reader allocate. */
#define IPUEF_MAX_BLOBS 65536u
#define IPUEF_MAX_NAME 1024u		/* bytes of an anchor/tensor/program name */
#define IPUEF_MAX_IPU_VERSION 32u	/* bytes of the target version string */
#define IPUEF_MAX_ANCHORS 4096u
#define IPUEF_MAX_PROGRAMS 64u		/* program indices are 0..63 (bitmask) */
#define IPUEF_MAX_RANK 8u
#define IPUEF_MAX_STREAMS 4096u		/* stream ids are 0..4095 */
#define IPUEF_MAX_TENSOR_BYTES (1ull << 48)
#define IPUEF_MAX_FILE_SIZE (1ull << 34)	/* 16 GiB: files are read into memory */
#define IPUEF_MAX_STATES 4096u
#define IPUEF_MAX_STATE_REGIONS 1048576u	/* tile pieces of one state */

/* batch_dim of an anchor that has no batch dimension. */
#define IPUEF_NO_BATCH_DIM 0xffffffffu

/* Errors: the IPUEF_E_* codes of ipu/error.h (names: ipu_err_name()). */
#define IPUEF_OK IPU_OK

enum ipuef_blob_type {
	IPUEF_BLOB_METADATA = 1,
	IPUEF_BLOB_EXECUTABLE = 2,
	IPUEF_BLOB_TENSOR_DATA = 3,
	IPUEF_BLOB_OPAQUE = 4,
};

/* "Metadata", "Executable", "TensorData", "Opaque" or "unknown". */
const char *ipuef_blob_type_name(uint32_t type);

enum ipuef_direction {
	IPUEF_INPUT = 0,	/* host to device */
	IPUEF_OUTPUT = 1,	/* device to host */
};

/*
 * Who feeds an anchor.  The runtime binds USER anchors to the caller's
 * buffers, TENSOR_DATA anchors to the TensorData blob of the same name
 * (unless the user overrides it), and fills the INDEX anchor of a fused
 * model itself from the subgraph the caller's inputs belong to.
 */
enum ipuef_anchor_kind {
	IPUEF_ANCHOR_USER = 0,
	IPUEF_ANCHOR_TENSOR_DATA = 1,
	IPUEF_ANCHOR_INDEX = 2,
};

/*
 * One model input or output.  The shape is that of one request at the
 * compiled batch size; batch_dim says which dim grows with the batch.
 */
struct ipuef_anchor {
	const char *name;		/* UTF-8, e.g. "X", "graph0/X", "index" */
	uint32_t dtype;			/* enum ipurt_dtype */
	uint32_t direction;		/* enum ipuef_direction */
	uint32_t kind;			/* enum ipuef_anchor_kind */
	uint32_t rank;			/* 0 (scalar) .. IPUEF_MAX_RANK */
	uint64_t dims[IPUEF_MAX_RANK];	/* each >= 1 */
	uint32_t batch_dim;		/* < rank, or IPUEF_NO_BATCH_DIM */
	uint32_t stream_id;		/* device stream carrying it */
	uint64_t programs;		/* bit i set: program index i uses it */
};

/* A named program of the executable ("load", "main", "save", ...). */
struct ipuef_program {
	const char *name;
	uint32_t index;			/* < IPUEF_MAX_PROGRAMS */
};

/*
 * Device-resident state (a key/value cache): a tensor that stays in tile
 * memory from run to run and that the programs read and write in place.
 * The host reaches it only through two programs the executable has when
 * it declares any state: IPUEF_PROGRAM_STATE_WRITE fills every state from
 * its H2D stream (the Session runs it after Load with each state's initial
 * value, and again to reset or write state), IPUEF_PROGRAM_STATE_READ
 * drains every state into its D2H stream.  The regions say where the
 * state lies on the tiles, in element order; the stream copies of the two
 * programs cover exactly these regions.
 */
#define IPUEF_PROGRAM_STATE_WRITE "state_write"
#define IPUEF_PROGRAM_STATE_READ "state_read"
/*
 * A decoder's Main without its logits' stream (compiler/lower/lower_tokens.c):
 * the same steps and state updates, streaming only the token ids, for a
 * caller that wants tokens and not the logits.  Its anchors have its bit
 * in `programs`.
 */
#define IPUEF_PROGRAM_TOKENS "main_tokens"
/*
 * A decoder's prefill (ipu-compile --prefill-model): T prompt tokens in one
 * run, written into the same state, with the same weights, as Main's one
 * token.  Its anchors are named "prefill/NAME" (input_ids and position_ids
 * [.., T], next_token [.., T]: each token's greedy successor) and have its
 * bit in `programs`.
 */
#define IPUEF_PROGRAM_PREFILL "prefill"
#define IPUEF_PREFILL_PREFIX "prefill/"
/*
 * A decoder's sampling on the device (compiler/lower/lower_sample.c):
 * Main's steps, then each row's token drawn from its top-k logits by the
 * sampler of ipu/sample.h.  Its anchors: Main's inputs, IPUEF_SAMPLE_PARAMS
 * (f32 [rows, 2]: temperature, top_p), IPUEF_SAMPLE_KEYS (i64 [rows, 3]:
 * top_k, seed, counter: the position of the step's token) and
 * IPUEF_SAMPLED_TOKEN (i64, next_token's shape).  A row of temperature 0
 * or top_k 1 gets the greedy token; top_k outside 1..k (k: the candidates
 * kept, min(IPU_SAMPLE_MAX_K, vocab)) means all k.
 */
#define IPUEF_PROGRAM_SAMPLE "main_sample"
#define IPUEF_SAMPLE_PARAMS "sample_params"
#define IPUEF_SAMPLE_KEYS "sample_keys"
#define IPUEF_SAMPLED_TOKEN "sampled_token"

enum ipuef_state_init {
	IPUEF_STATE_INIT_ZEROS = 0,	/* starts (and resets) as zeros */
	IPUEF_STATE_INIT_DATA = 1,	/* as the TensorData blob of its name */
};

/* One contiguous piece of a state in one tile's memory. */
struct ipuef_region {
	uint32_t tile;
	uint32_t offset;
	uint32_t bytes;
};

struct ipuef_state {
	const char *name;		/* unique among states and anchors */
	uint32_t dtype;			/* enum ipurt_dtype */
	uint32_t rank;
	uint64_t dims[IPUEF_MAX_RANK];	/* each >= 1 */
	uint32_t init;			/* enum ipuef_state_init */
	uint32_t write_stream;		/* H2D stream of the state_write program */
	uint32_t read_stream;		/* D2H stream of the state_read program */
	uint32_t num_regions;		/* 1 .. IPUEF_MAX_STATE_REGIONS */
	const struct ipuef_region *regions;	/* bytes add up to the state's */
};

/*
 * A model split over a group of IPUs (Documentation/compiler/sharding.md):
 * IPU k runs the k-th Executable blob of the file, and a link carries a
 * tensor from a device-to-host stream of one IPU to a host-to-device
 * stream of a later one, IPU to IPU, never through the host.  Stream ids
 * of the anchors are group-wide: IPU k's streams are numbered from the
 * sum of num_streams[0 .. k) (ipuef_anchor_ipu() gives the IPU and its
 * own stream).  Every stream of every IPU is an anchor's or one end of
 * exactly one link.
 */
#define IPUEF_MAX_GROUP_IPUS 64u
#define IPUEF_MAX_LINKS 65536u

struct ipuef_link {
	const char *name;		/* "link:<tensor>", unique among links */
	uint32_t src_ipu, dst_ipu;	/* src_ipu < dst_ipu: forward only */
	uint32_t src_stream;		/* device-to-host stream of src_ipu */
	uint32_t dst_stream;		/* host-to-device stream of dst_ipu */
	uint64_t bytes;			/* one transfer, the same at both ends */
};

struct ipuef_group {
	uint32_t num_ipus;		/* 2 .. IPUEF_MAX_GROUP_IPUS */
	const uint32_t *num_streams;	/* per IPU: its executable's streams */
	uint32_t num_links;		/* <= IPUEF_MAX_LINKS */
	const struct ipuef_link *links;
	uint32_t pipelined;		/* 0 or 1: micro-batches pipelined */
	uint32_t micro_batches;		/* >= 1 */
};

/*
 * The Metadata blob.  exe_format_* is the version of the engine
 * executable format the Executable blob is in, so that a runtime can refuse
 * a newer executable with a clear message before the device sees it.
 */
struct ipuef_metadata {
	uint16_t exe_format_major;
	uint16_t exe_format_minor;
	const char *ipu_version;	/* target generation: "ipu2", "ipu21" */
	uint32_t num_tiles;		/* tiles the model needs, >= 1 */
	uint32_t tile_mem;		/* bytes per tile it needs, >= 1 */
	uint32_t batch_size;		/* compiled batch size, >= 1 */
	uint32_t num_programs;
	const struct ipuef_program *programs;
	uint32_t num_anchors;
	const struct ipuef_anchor *anchors;
	uint32_t num_states;		/* 0: a model without state */
	const struct ipuef_state *states;
	/* NULL: one IPU.  Else the group (Metadata version 3); num_tiles and
	 * tile_mem are then what each IPU of the group needs. */
	const struct ipuef_group *group;
};

/*
 * The value is also compiled into the executable: the blob is a copy kept
 * for inspection, the Session does not stream it and the user cannot
 * override it.  Without the flag the Load program streams the blob in
 * through the input anchor of the same name (kind TENSOR_DATA).
 */
#define IPUEF_TENSOR_FROZEN 0x1u

/* A TensorData blob: a named weight tensor. */
struct ipuef_tensor {
	const char *name;
	uint32_t dtype;			/* enum ipurt_dtype */
	uint32_t rank;
	uint64_t dims[IPUEF_MAX_RANK];
	uint32_t flags;			/* IPUEF_TENSOR_* */
	const void *data;		/* 8-aligned when read from a file */
	uint64_t size;			/* bytes == product(dims) * dtype size */
};

/* An Opaque blob: producer information no runtime component interprets. */
struct ipuef_opaque {
	const char *name;		/* producer, e.g. "ipu-compile" */
	const char *version;		/* producer version, may be "" */
	const void *data;
	uint64_t size;
};

/* Where a blob lies in the file (for dumps and diagnostics). */
struct ipuef_blob_info {
	uint32_t type;			/* enum ipuef_blob_type */
	uint32_t version;
	uint64_t offset;		/* of the blob header */
	uint64_t size;			/* payload bytes */
	uint32_t crc;
	const char *name;		/* TensorData/Opaque name, else NULL */
};

/* ------------------------------------------------------------------ */
/* Reader                                                               */
/* ------------------------------------------------------------------ */

struct ipuef_file;

/*
 * Read and validate a whole file.  On success *out owns a private copy of
 * the bytes and every pointer the accessors return stays valid until
 * ipuef_close().  On failure returns a negative ipuef_err, *out is NULL and
 * err (if not NULL) holds a message naming what is wrong.
 */
int ipuef_open(const char *path, struct ipuef_file **out, char *err,
	       size_t errlen);

/* Same from memory; the bytes are copied, the caller keeps `data`. */
int ipuef_open_mem(const void *data, size_t len, struct ipuef_file **out,
		   char *err, size_t errlen);

void ipuef_close(struct ipuef_file *f);

/* The file's format version and whole-file checksum. */
void ipuef_version(const struct ipuef_file *f, uint16_t *major,
		   uint16_t *minor);
uint32_t ipuef_checksum(const struct ipuef_file *f);
uint64_t ipuef_file_size(const struct ipuef_file *f);

uint32_t ipuef_num_blobs(const struct ipuef_file *f);
/* Blob i in file order; NULL if out of range. */
const struct ipuef_blob_info *ipuef_blob(const struct ipuef_file *f,
					 uint32_t i);

const struct ipuef_metadata *ipuef_metadata(const struct ipuef_file *f);

/* Lookups by exact (byte-wise) name; NULL if there is none. */
const struct ipuef_anchor *ipuef_find_anchor(const struct ipuef_file *f,
					     const char *name);
const struct ipuef_program *ipuef_find_program(const struct ipuef_file *f,
					       const char *name);
const struct ipuef_tensor *ipuef_find_tensor(const struct ipuef_file *f,
					     const char *name);
const struct ipuef_state *ipuef_find_state(const struct ipuef_file *f,
					   const char *name);

/* The Executable blob's bytes (8-aligned); IPU 0's of a group. */
const void *ipuef_executable(const struct ipuef_file *f, size_t *len);

/* IPUs the model runs on: 1, or the group's num_ipus. */
uint32_t ipuef_num_ipus(const struct ipuef_file *f);
/* IPU ipu's Executable (8-aligned); NULL if out of range. */
const void *ipuef_group_executable(const struct ipuef_file *f, uint32_t ipu, size_t *len);
/* The IPU an anchor's stream is on and its stream in that IPU's
 * executable (0 and the stream id for a one-IPU model). */
uint32_t ipuef_anchor_ipu(const struct ipuef_metadata *m, const struct ipuef_anchor *a,
			  uint32_t *stream);

/*
 * The load-time verification of a group against the device it will run
 * on (dev_tiles x dev_tile_mem per IPU), beside the device's own
 * verification of each executable: every IPU's executable is verified for
 * the device (ipu_exe_verify), has num_streams[k] streams, and every link
 * has both ends: the sender's stream device-to-host, the receiver's
 * host-to-device, both of the link's bytes, and every tile piece either
 * end copies inside its IPU's tiles and memory; every stream is an
 * anchor's of the right direction and size or one end of exactly one
 * link.  A one-IPU file passes.  Returns IPUEF_E_METADATA (or the
 * executable's own code) with a message naming the IPU, link and stream.
 */
int ipuef_group_verify(const struct ipuef_file *f, uint32_t dev_tiles, uint32_t dev_tile_mem,
		       char *err, size_t errlen);

uint32_t ipuef_num_tensors(const struct ipuef_file *f);
const struct ipuef_tensor *ipuef_tensor(const struct ipuef_file *f,
					uint32_t i);
uint32_t ipuef_num_opaques(const struct ipuef_file *f);
const struct ipuef_opaque *ipuef_opaque(const struct ipuef_file *f,
					uint32_t i);

/* Bytes of one request of an anchor: product(dims) * dtype size. */
uint64_t ipuef_anchor_bytes(const struct ipuef_anchor *a);
/* Bytes of a state: product(dims) * dtype size. */
uint64_t ipuef_state_bytes(const struct ipuef_state *s);

/* ------------------------------------------------------------------ */
/* Debug information (optional)                                         */
/* ------------------------------------------------------------------ */

/*
 * Which node of the user's model each compute set and exchange of the
 * executable came from, so profiles speak in the model's names.  Stored
 * in an Opaque blob named IPUEF_DEBUG_BLOB (payload layout in
 * Documentation/runtime/ipuef-format.md); a file without it is complete.
 */
#define IPUEF_DEBUG_BLOB "ipu-compile/debug"
#define IPUEF_DEBUG_VERSION "1"
#define IPUEF_DEBUG_NONE 0xffffffffu	/* a superstep of no node */
#define IPUEF_DEBUG_MAX 16777216u	/* nodes, compute sets, exchanges */

struct ipuef_debug_node {
	const char *name;		/* the node's name in the model */
	const char *op;			/* its operator type, e.g. "Conv" */
};

struct ipuef_debug {
	uint32_t num_nodes;
	const struct ipuef_debug_node *nodes;
	uint32_t num_compute_sets;
	const uint32_t *cs_node;	/* per compute set: node index or NONE */
	uint32_t num_exchanges;
	const uint32_t *xch_node;	/* per exchange: node index or NONE */
};

/* The payload of the blob (malloc'd, caller frees); checks names and indices. */
int ipuef_debug_encode(const struct ipuef_debug *d, void **out, size_t *len, char *err,
		       size_t errlen);
/* Decode a payload: IPUEF_E_OPAQUE / IPUEF_E_STRING / IPUEF_E_LIMIT if malformed. */
int ipuef_debug_decode(const void *data, size_t len, struct ipuef_debug **out, char *err,
		       size_t errlen);
/* The file's debug information: 0 with *out NULL when it has none. */
int ipuef_debug_read(const struct ipuef_file *f, struct ipuef_debug **out, char *err,
		     size_t errlen);
void ipuef_debug_free(struct ipuef_debug *d);

/* ------------------------------------------------------------------ */
/* Writer                                                               */
/* ------------------------------------------------------------------ */

struct ipuef_writer;

/*
 * The writer copies everything it is given, so callers may free their
 * buffers right after each call.  Each call validates its input with the
 * reader's rules and returns the reader's error code and message; the
 * cross-blob rules (every TENSOR_DATA anchor has its blob with the same
 * dtype and shape, ...) are checked when the file is written.
 * Blobs are written in the order Metadata, Executable, TensorData (in the
 * order added), Opaque (in the order added).
 */
int ipuef_writer_create(struct ipuef_writer **out, char *err, size_t errlen);
void ipuef_writer_destroy(struct ipuef_writer *w);

/* Set (or replace) the Metadata. */
int ipuef_writer_set_metadata(struct ipuef_writer *w,
			      const struct ipuef_metadata *m, char *err,
			      size_t errlen);
/* Set (or replace) the Executable image (IPU 0's of a group). */
int ipuef_writer_set_executable(struct ipuef_writer *w, const void *data,
				size_t len, char *err, size_t errlen);
/* Append the next IPU's Executable of a group (IPU 1, 2, ...): the file is
 * written only when the metadata's group has one per IPU. */
int ipuef_writer_add_executable(struct ipuef_writer *w, const void *data,
				size_t len, char *err, size_t errlen);
/* Add a TensorData blob; t->size must match dtype and dims. */
int ipuef_writer_add_tensor(struct ipuef_writer *w,
			    const struct ipuef_tensor *t, char *err,
			    size_t errlen);
/* Add an Opaque blob; version may be NULL (stored as ""). */
int ipuef_writer_add_opaque(struct ipuef_writer *w, const char *name,
			    const char *version, const void *data, size_t len,
			    char *err, size_t errlen);

/*
 * Serialise to a malloc'd buffer the caller frees.  The result is exactly
 * what ipuef_writer_write_file() stores.
 */
int ipuef_writer_write_mem(struct ipuef_writer *w, void **out, size_t *len,
			   char *err, size_t errlen);

/*
 * Write to `path` atomically: a temporary file in the same directory is
 * written, synced and renamed, so a reader never sees half a model.
 */
int ipuef_writer_write_file(struct ipuef_writer *w, const char *path,
			    char *err, size_t errlen);

#endif /* IPU_IPUEF_H */
