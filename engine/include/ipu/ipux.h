/* SPDX-License-Identifier: MIT */
/*
 * ipux_format.h - the binary executable format of the IPU tile engine.
 *
 * This header is the contract between the compiler (graph builder), the
 * device (QEMU model and in-process engine) and the documentation in
 * Documentation/device/executable-format.md.  Everything is little-endian,
 * every record has a fixed size and every count and offset is checked by the
 * verifier before anything runs.  Reserved fields must be zero so that they
 * can be given a meaning in a later minor version.
 *
 * Layout of an image:
 *
 *   struct ipux_header                 (at offset 0)
 *   struct ipux_section[section_count] (at header.section_offset)
 *   section payloads                   (anywhere inside the image, 4-aligned)
 *
 * Each section type appears at most once.  A section's payload is an array of
 * `count` fixed-size records (or bytes / u32 words for DATA, PARAMS, CHILDREN
 * and PROGRAMS).
 */
#ifndef IPUX_FORMAT_H
#define IPUX_FORMAT_H

#include <stdint.h>

#define IPUX_MAGIC 0x58555049u /* "IPUX" read as a little-endian u32 */
#define IPUX_VERSION_MAJOR 1
#define IPUX_VERSION_MINOR 1	/* 1: the CUSTOM section; an image without
				 * one is written as 1.0 */

/* Hard limits the verifier enforces (and the builder respects). */
#define IPUX_MAX_TILES 8192u
#define IPUX_MAX_TILE_MEM (16u << 20)	/* 16 MiB per tile */
#define IPUX_MAX_IMAGE_SIZE 0xffffffffu
#define IPUX_MAX_PROGRAMS 64u
#define IPUX_MAX_STREAMS 4096u
#define IPUX_MAX_DEPTH 64u		/* nesting of program steps */
#define IPUX_MAX_OPERANDS 16u		/* per vertex */
#define IPUX_MAX_PARAMS 64u		/* per vertex */
#define IPUX_MAX_RANK 6u		/* shapes in codelet params */
#define IPUX_MAX_CUSTOM 4096u		/* records of the CUSTOM section */

/* Element types of operand regions. */
enum ipux_dtype {
	IPUX_DT_INVALID = 0,
	IPUX_DT_F32 = 1,
	IPUX_DT_F16 = 2,	/* IEEE binary16, computed in f32 */
	IPUX_DT_I32 = 3,
	IPUX_DT_U8 = 4,		/* also used for bool: 0 false, 1 true */
	IPUX_DT_I8 = 5,
	IPUX_DT_I64 = 6,	/* storage only (cast, copy, gather indices) */
	IPUX_DT_FP8_143 = 7,	/* 8-bit float 1-4-3 (ipu/fp8.h): storage, moved
				 * as bytes, read by the *_FP8 codelets */
	IPUX_DT_FP8_152 = 8,	/* 8-bit float 1-5-2, likewise */
	IPUX_DT_COUNT
};

/* Size in bytes of one element of a dtype, 0 if the dtype is unknown. */
static inline uint32_t ipux_dtype_size(uint32_t dt)
{
	switch (dt) {
	case IPUX_DT_F32: return 4;
	case IPUX_DT_F16: return 2;
	case IPUX_DT_I32: return 4;
	case IPUX_DT_U8: return 1;
	case IPUX_DT_I8: return 1;
	case IPUX_DT_I64: return 8;
	case IPUX_DT_FP8_143: return 1;
	case IPUX_DT_FP8_152: return 1;
	default: return 0;
	}
}

struct ipux_header {		/* 64 bytes */
	uint32_t magic;		/* IPUX_MAGIC */
	uint16_t version_major;	/* must equal IPUX_VERSION_MAJOR */
	uint16_t version_minor;	/* <= IPUX_VERSION_MINOR */
	uint32_t header_size;	/* sizeof(struct ipux_header) */
	uint32_t flags;		/* must be 0 */
	uint32_t total_size;	/* size of the whole image in bytes */
	uint32_t num_tiles;	/* tiles the executable uses: 1..IPUX_MAX_TILES */
	uint32_t tile_mem;	/* bytes of memory needed on each tile */
	uint32_t section_count;
	uint32_t section_offset; /* offset of the section table */
	uint32_t checksum;	/* CRC-32 (IEEE) of the whole image with
				 * this field read as 0: ipu_exe_checksum() */
	uint32_t reserved[6];	/* must be 0 */
};

enum ipux_section_type {
	IPUX_SEC_STREAMS = 1,	/* struct ipux_stream[] */
	IPUX_SEC_VERTICES = 2,	/* struct ipux_vertex[] */
	IPUX_SEC_OPERANDS = 3,	/* struct ipux_operand[] */
	IPUX_SEC_PARAMS = 4,	/* uint32_t[] */
	IPUX_SEC_COMPUTE_SETS = 5, /* struct ipux_compute_set[] */
	IPUX_SEC_EXCHANGES = 6,	/* struct ipux_exchange[] */
	IPUX_SEC_COPIES = 7,	/* struct ipux_copy[] */
	IPUX_SEC_STREAM_COPIES = 8, /* struct ipux_stream_copy[] */
	IPUX_SEC_REGIONS = 9,	/* struct ipux_region[] */
	IPUX_SEC_STEPS = 10,	/* struct ipux_step[] */
	IPUX_SEC_CHILDREN = 11,	/* uint32_t[]: step indices */
	IPUX_SEC_PROGRAMS = 12,	/* uint32_t[]: root step of program i */
	IPUX_SEC_INITS = 13,	/* struct ipux_init[] */
	IPUX_SEC_DATA = 14,	/* bytes referenced by INITS */
	IPUX_SEC_CUSTOM = 15,	/* struct ipux_custom[] (format 1.1) */
	IPUX_SEC_MAX = 15
};

struct ipux_section {		/* 16 bytes */
	uint32_t type;		/* enum ipux_section_type */
	uint32_t count;		/* number of records (bytes for DATA) */
	uint32_t offset;	/* from the start of the image, 4-aligned */
	uint32_t size;		/* bytes; must equal count * record size */
};

enum ipux_stream_dir {
	IPUX_STREAM_H2D = 0,	/* host to device (model input, weights) */
	IPUX_STREAM_D2H = 1,	/* device to host (model output) */
};

struct ipux_stream {		/* 8 bytes */
	uint32_t dir;		/* enum ipux_stream_dir */
	uint32_t buffer_bytes;	/* every buffer of this stream has this size */
};

/*
 * A vertex: one codelet instance on one tile.  Its operands are regions of
 * that tile's memory, its params are u32 scalars whose meaning the codelet
 * defines (shapes, op selectors, f32 constants as their bit pattern).
 */
struct ipux_vertex {		/* 20 bytes */
	uint32_t tile;
	uint16_t codelet;	/* enum ipux_codelet */
	uint16_t reserved;	/* must be 0 */
	uint32_t first_operand;	/* index into OPERANDS */
	uint16_t num_operands;	/* <= IPUX_MAX_OPERANDS */
	uint16_t num_params;	/* <= IPUX_MAX_PARAMS */
	uint32_t first_param;	/* index into PARAMS */
};

struct ipux_operand {		/* 12 bytes: a region of the vertex's tile */
	uint32_t offset;	/* byte offset in tile memory, aligned to dtype size */
	uint32_t count;		/* number of elements */
	uint8_t dtype;		/* enum ipux_dtype */
	uint8_t reserved[3];	/* must be 0 */
};

struct ipux_compute_set {	/* 8 bytes: vertices [first, first + count) */
	uint32_t first_vertex;
	uint32_t num_vertices;
};

struct ipux_exchange {		/* 8 bytes: copies [first, first + count) */
	uint32_t first_copy;
	uint32_t num_copies;
};

/*
 * One exchange copy.  All copies of an exchange read their sources before
 * any destination is written (BSP semantics); where two copies write the same
 * bytes, the later one in the list wins.
 */
struct ipux_copy {		/* 20 bytes */
	uint32_t src_tile;
	uint32_t src_offset;
	uint32_t dst_tile;
	uint32_t dst_offset;
	uint32_t bytes;
};

/*
 * A stream copy moves exactly one host buffer of `stream` to (H2D) or from
 * (D2H) the concatenation of its regions, in order.  The regions' bytes must
 * add up to the stream's buffer_bytes.
 */
struct ipux_stream_copy {	/* 12 bytes */
	uint32_t stream;
	uint32_t first_region;	/* index into REGIONS */
	uint32_t num_regions;
};

struct ipux_region {		/* 12 bytes */
	uint32_t tile;
	uint32_t offset;
	uint32_t bytes;
};

enum ipux_step_kind {
	IPUX_STEP_SEQUENCE = 1,	   /* a = first CHILDREN index, b = count */
	IPUX_STEP_EXECUTE = 2,	   /* a = compute set */
	IPUX_STEP_EXCHANGE = 3,	   /* a = exchange */
	IPUX_STEP_STREAM_COPY = 4, /* a = stream copy */
	IPUX_STEP_REPEAT = 5,	   /* a = iterations (may be 0), b = body step */
	IPUX_STEP_SWITCH = 6,	   /* a = tile, b = byte offset of an i32 selector,
				    * c = first CHILDREN index, d = count >= 1;
				    * children c..c+d-2 are cases 0..d-2, child
				    * c+d-1 is the default */
	IPUX_STEP_SYNC = 7,	   /* a = enum ipux_sync_kind */
	IPUX_STEP_MAX = 7
};

enum ipux_sync_kind {
	IPUX_SYNC_INTERNAL = 0,	/* all tiles of the device */
	IPUX_SYNC_EXTERNAL = 1,	/* tiles and host */
};

struct ipux_step {		/* 20 bytes */
	uint16_t kind;		/* enum ipux_step_kind */
	uint16_t flags;		/* must be 0 */
	uint32_t a, b, c, d;	/* meaning depends on kind; unused ones 0 */
};

/* Initial contents of tile memory (frozen weights, constants). */
struct ipux_init {		/* 16 bytes */
	uint32_t tile;
	uint32_t offset;
	uint32_t bytes;
	uint32_t data_offset;	/* into the DATA section */
};

/*
 * A custom codelet (format 1.1): a plugin's operator, named by its ONNX
 * domain and op_type and the SHA-256 of the plugin library file it was
 * compiled with.  Vertex codelet IPUX_CL_CUSTOM_BASE + i runs record i;
 * the device binds each record to a loaded plugin at load and refuses the
 * executable when none matches (ipu/custom_table.h).
 */
struct ipux_custom {		/* 96 bytes */
	char domain[32];	/* NUL-terminated, NUL-padded */
	char name[32];
	uint8_t lib_hash[32];
};

/* Codelet identifiers.  Operands and params: Documentation/device/codelets.md. */
enum ipux_codelet {
	IPUX_CL_COPY = 1,
	IPUX_CL_FILL = 2,
	IPUX_CL_CAST = 3,
	IPUX_CL_UNARY = 4,
	IPUX_CL_BINARY = 5,
	IPUX_CL_WHERE = 6,
	IPUX_CL_MATMUL = 7,
	IPUX_CL_CONV2D = 8,
	IPUX_CL_REDUCE = 9,
	IPUX_CL_SOFTMAX = 10,
	IPUX_CL_NORM = 11,
	IPUX_CL_POOL2D = 12,
	IPUX_CL_GATHER = 13,
	IPUX_CL_TRANSPOSE = 14,
	IPUX_CL_STRIDED_COPY = 15,
	IPUX_CL_PAD = 16,
	IPUX_CL_CUMSUM = 17,
	IPUX_CL_TOPK = 18,
	IPUX_CL_IOTA = 19,
	IPUX_CL_CAST_FP8 = 20,
	IPUX_CL_MATMUL_FP8 = 21,
	IPUX_CL_CONV2D_FP8 = 22,
	IPUX_CL_NMS = 23,
	IPUX_CL_SAMPLE = 24,
	IPUX_CL_COUNT,
	IPUX_CL_CUSTOM_BASE = 0x8000	/* + index into the CUSTOM section */
};

#endif /* IPUX_FORMAT_H */
