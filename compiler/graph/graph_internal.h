/* SPDX-License-Identifier: MIT */
/* graph_internal.h - the builder's data structures, shared by its files. */
#ifndef IPU_GRAPH_INTERNAL_H
#define IPU_GRAPH_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "ipu/graph.h"

struct g_interval {
	uint64_t begin, end;	/* elements */
	uint32_t tile;
	uint32_t offset;	/* byte offset on the tile, set by compile */
};

struct g_tensor {
	char *name;
	enum ipux_dtype dtype;
	uint32_t esize;
	uint32_t rank;
	uint64_t dims[IPU_GRAPH_MAX_RANK];
	uint64_t elems;
	struct g_interval *iv;
	uint32_t niv, cap_iv;
	int sorted;
	uint8_t *init;		/* elems * esize bytes, or NULL */
};

struct g_operand {
	struct ipu_slice s;
};

struct g_vertex {
	uint32_t cs;
	uint32_t tile;
	uint16_t codelet;
	uint32_t first_op, nops;	/* into g->ops */
	uint32_t first_param, nparams;	/* into g->params */
};

struct g_copy {
	struct ipu_slice src, dst;
};

struct g_exchange {
	uint32_t *idx;		/* indices into g->copies, in order */
	uint32_t n, cap;
	uint32_t origin;	/* into g->origins, or IPU_GRAPH_INVALID */
};

/* A node of the user's model that supersteps came from (profiles). */
struct g_origin {
	char *node, *op;
};

struct g_stream {
	char *name;
	uint32_t dir;
	uint32_t bytes;
};

struct g_stream_copy {
	uint32_t stream;
	uint32_t first_slice, nslices;	/* into g->sc_slices */
};

struct g_step {
	uint16_t kind;
	uint32_t a, b;
	uint32_t *kids;		/* sequence children / switch cases + default */
	uint32_t nkids, cap;
	ipu_tensor selector;
};

#define G_ARRAY(type, name) type *name; uint32_t n_##name, cap_##name

struct ipu_graph {
	uint32_t num_tiles, tile_mem;
	int reuse;		/* ipu_graph_set_memory_reuse */
	char *error;

	G_ARRAY(struct g_tensor, tensors);
	G_ARRAY(char *, cs_names);
	G_ARRAY(struct g_vertex, vertices);
	G_ARRAY(struct g_operand, ops);
	G_ARRAY(uint32_t, params);
	G_ARRAY(struct g_copy, copies);
	G_ARRAY(struct g_exchange, exchanges);
	G_ARRAY(struct g_stream, streams);
	G_ARRAY(struct g_stream_copy, scs);
	G_ARRAY(struct ipu_slice, sc_slices);
	G_ARRAY(struct g_step, steps);
	G_ARRAY(uint32_t, programs);
	G_ARRAY(struct g_origin, origins);
	G_ARRAY(uint32_t, cs_origin);	/* per compute set */
	uint32_t origin;		/* of new supersteps, or IPU_GRAPH_INVALID */
	/* custom codelets (graph_custom.c): the CUSTOM section's records and
	 * the table the built image is verified against */
	G_ARRAY(struct ipux_custom, customs);
	const struct ipu_custom_table *custom;
};

/* Grow a G_ARRAY to hold one more element; 0 or -1 (error recorded). */
#define G_PUSH(g, arr) \
	g_grow((g), (void **)&(g)->arr, &(g)->cap_##arr, (g)->n_##arr + 1, sizeof(*(g)->arr))

int g_grow(struct ipu_graph *g, void **arr, uint32_t *cap, uint64_t need, size_t esize);
int g_fail(struct ipu_graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *g_strdup(struct ipu_graph *g, const char *s);
struct g_tensor *g_tensor(const struct ipu_graph *g, ipu_tensor t);
/* Sort t's intervals; find the one holding elem (NULL if none). */
const struct g_interval *g_find(struct g_tensor *t, uint64_t elem);
int g_check_slice(struct ipu_graph *g, struct ipu_slice s, const char *what);

#endif /* IPU_GRAPH_INTERNAL_H */
