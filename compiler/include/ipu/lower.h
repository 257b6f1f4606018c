/* SPDX-License-Identifier: MIT */
/*
 * lower.h - lowering of optimised IR graphs to tiles and the .ipuef
 * executable (through the graph builder, compiler/include/ipu/graph.h).
 */
#ifndef IPU_LOWER_H
#define IPU_LOWER_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ir.h"

struct ipu_graph;
struct ir_fp8_opts;
struct ipu_graph_stats;

/* A cache input and the output that replaces it after each run, kept on
 * the device as state (Documentation/compiler/generation.md). */
struct ipu_state_pair {
	const char *in;
	const char *out;
};

struct ipu_target {
	const char *ipu_version;	/* "ipu2", "ipu21" or NULL (custom) */
	uint32_t tiles;
	uint32_t tile_mem;		/* bytes per tile */
	/* Optional, zero-initialised by default: */
	int batch_axis;			/* anchors' batch dimension */
	uint32_t batch_size;		/* recorded in the metadata (0: from
					 * the first input's batch dim) */
	void *progress;			/* FILE * for progress lines, or NULL */
	int64_t fold_limit;		/* bytes a constant fold of the lowering's
					 * own rewrites may create (0: 64 MiB,
					 * -1: no limit), as --max-tensor-size */
	int no_memory_reuse;		/* 1: every tensor keeps its own tile
					 * memory (ipu_graph_set_memory_reuse) */
	/* Called with the compiled builder, its image and summary before
	 * they are freed (compile reports); non-zero fails the lowering with
	 * the message it put in e.  NULL: none. */
	int (*inspect)(void *ctx, struct ipu_graph *gb, const void *image, size_t len,
		       const struct ipu_graph_stats *st, struct ir_error *e);
	void *inspect_ctx;
	/* fp8 layers (ir_pass_fp8 on the prepared graph), or NULL. */
	const struct ir_fp8_opts *fp8;
	/* Device-resident state: these input/output pairs, and (unless
	 * no_auto_state) every pair named as Hugging Face exports a decoder's
	 * cache, past_key_values.N.key/.value -> present.N.key/.value.  The
	 * input becomes a state (no anchor, no stream in Main), the output is
	 * copied into it at the end of Main (no anchor). */
	const struct ipu_state_pair *state_pairs;
	uint32_t num_state_pairs;
	int no_auto_state;
	/* A decoder's prefill: the same module exported with T tokens a step
	 * (inputs input_ids / position_ids [.., T], the same caches and
	 * weights).  Lowered into program "prefill" over the decode step's
	 * state and constants (one copy of each); NULL: none. */
	const struct ir_graph *prefill;
};

#include "ipu/graph.h"
#include "ipu/ipuef.h"

/*
 * A --state option: "IN=OUT,IN2=OUT2" (pairs), or "none" (no pairs, and
 * none found by name either).  Fills the target's state fields; the
 * strings live in spec until ipu_state_spec_free.
 */
struct ipu_state_spec {
	struct ipu_state_pair *pairs;
	uint32_t n;
	int none;
	char *buf;
};
int ipu_state_spec_parse(const char *text, struct ipu_state_spec *spec, struct ir_error *e);
void ipu_state_spec_free(struct ipu_state_spec *spec);

/* 1 once lowering is implemented. */
int ipu_lower_available(void);
/* 1 if op (after constant folding) can be lowered to tiles. */
int ipu_lower_supported(const char *op);

struct ipu_lower_anchors {
	struct ipuef_anchor *a;
	char **names;
	uint32_t n, cap;
};

/* The states of the executable (regions filled once it is compiled). */
struct ipu_lower_states {
	struct ipuef_state *s;
	char **names;
	ipu_tensor *t;
	struct ipuef_region **regions;
	uint32_t n, cap;
};

/* What ipu_lower_image produced besides the image. */
struct ipu_lower_info {
	struct ipu_graph_stats stats;
	struct ipu_lower_anchors anchors_priv;
	struct ipu_lower_states states_priv;
	/* payload of the .ipuef debug blob (IPUEF_DEBUG_BLOB), malloc'd */
	void *debug;
	size_t debug_len;
	int prefill_program;	/* index of IPUEF_PROGRAM_PREFILL, 0: none */
	int sample_program;	/* index of IPUEF_PROGRAM_SAMPLE, 0: none */
};

/* Lowers to an executable image (malloc'd) without writing a file; the
 * anchors (stream ids, names graphK/NAME for fusions, `index`) are in info.
 * Program 0 is "main"; with state, 1 is "state_write" and 2 "state_read". */
int ipu_lower_image(struct ir_graph *const *graphs, int n,
		    const struct ipu_target *t, void **image, size_t *len,
		    struct ipu_lower_info *info, struct ir_error *e);
const struct ipuef_anchor *ipu_lower_anchors(const struct ipu_lower_info *info,
					     uint32_t *n);
/* The states (none: n == 0).  With states the executable has programs 1
 * "state_write" and 2 "state_read" besides Main. */
const struct ipuef_state *ipu_lower_states(const struct ipu_lower_info *info, uint32_t *n);
void ipu_lower_info_free(struct ipu_lower_info *info);

/* Lowers n graphs (n > 1: model fusion, subgraphs selected by the `index`
 * input, anchors graphK/NAME) and writes the .ipuef to out_path.  stats
 * (may be NULL) receives the compile summary. */
int ipu_lower_write(struct ir_graph *const *graphs, int n,
		    const struct ipu_target *t, const char *out_path,
		    struct ipu_graph_stats *stats, struct ir_error *e);

/* The same .ipuef in memory (*out malloc'd, *out_len bytes): what
 * ipu_lower_write writes, byte for byte. */
int ipu_lower_write_mem(struct ir_graph *const *graphs, int n,
			const struct ipu_target *t, void **out, size_t *out_len,
			struct ipu_graph_stats *stats, struct ir_error *e);

/* The graph the lowering computes for g: a copy after the lowering's
 * rewrites and, with t->fp8, the fp8 pass (what ipu_lower_image builds
 * the program from; the precision report evaluates it).  NULL on error. */
struct ir_graph *ipu_lower_prepared_graph(const struct ir_graph *g,
					  const struct ipu_target *t, struct ir_error *e);

#endif /* IPU_LOWER_H */
