// SPDX-License-Identifier: MIT
/*
 * graph.c - the graph builder's tensors, tile mapping and compute sets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

int g_fail(struct ipu_graph *g, const char *fmt, ...)
{
	va_list ap;
	char buf[2048];

	if (g->error)
		return -1;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	g->error = strdup(buf);
	if (!g->error)
		g->error = (char *)"out of memory (while reporting an error)";
	return -1;
}

int g_grow(struct ipu_graph *g, void **arr, uint32_t *cap, uint64_t need, size_t esize)
{
	uint64_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	if (need > UINT32_MAX - 1)
		return g_fail(g, "graph too large: more than 2^32 entries in one table");
	ncap = *cap ? (uint64_t)*cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX - 1)
		ncap = UINT32_MAX - 1;
	p = realloc(*arr, ncap * esize);
	if (!p)
		return g_fail(g, "out of memory growing a graph table to %llu entries",
			      (unsigned long long)ncap);
	*arr = p;
	*cap = (uint32_t)ncap;
	return 0;
}

char *g_strdup(struct ipu_graph *g, const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		g_fail(g, "out of memory");
	return d;
}

struct ipu_graph *ipu_graph_create(uint32_t num_tiles, uint32_t tile_mem)
{
	struct ipu_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->num_tiles = num_tiles;
	g->tile_mem = tile_mem;
	g->origin = IPU_GRAPH_INVALID;
	if (num_tiles == 0 || num_tiles > IPUX_MAX_TILES || tile_mem == 0 ||
	    tile_mem % 64 || tile_mem > IPUX_MAX_TILE_MEM)
		g_fail(g, "bad target: %u tiles (1..%u) of %u bytes (multiple of 64, <= %u)",
		       num_tiles, IPUX_MAX_TILES, tile_mem, IPUX_MAX_TILE_MEM);
	return g;
}

void ipu_graph_destroy(struct ipu_graph *g)
{
	uint32_t i;

	if (!g)
		return;
	for (i = 0; i < g->n_tensors; i++) {
		free(g->tensors[i].name);
		free(g->tensors[i].iv);
		free(g->tensors[i].init);
	}
	for (i = 0; i < g->n_cs_names; i++)
		free(g->cs_names[i]);
	for (i = 0; i < g->n_exchanges; i++)
		free(g->exchanges[i].idx);
	for (i = 0; i < g->n_streams; i++)
		free(g->streams[i].name);
	for (i = 0; i < g->n_steps; i++)
		free(g->steps[i].kids);
	for (i = 0; i < g->n_origins; i++) {
		free(g->origins[i].node);
		free(g->origins[i].op);
	}
	free(g->origins);
	free(g->cs_origin);
	free(g->customs);
	free(g->tensors);
	free(g->cs_names);
	free(g->vertices);
	free(g->ops);
	free(g->params);
	free(g->copies);
	free(g->exchanges);
	free(g->streams);
	free(g->scs);
	free(g->sc_slices);
	free(g->steps);
	free(g->programs);
	if (g->error && strcmp(g->error, "out of memory (while reporting an error)"))
		free(g->error);
	free(g);
}

void ipu_graph_target(const struct ipu_graph *g, uint32_t *num_tiles, uint32_t *tile_mem)
{
	*num_tiles = g->num_tiles;
	*tile_mem = g->tile_mem;
}

int ipu_graph_fail(struct ipu_graph *g, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return g_fail(g, "%s", buf);
}

void ipu_graph_set_memory_reuse(struct ipu_graph *g, int on)
{
	g->reuse = !!on;
}

const char *ipu_graph_error(const struct ipu_graph *g)
{
	return g ? g->error : "no graph (out of memory)";
}

struct g_tensor *g_tensor(const struct ipu_graph *g, ipu_tensor t)
{
	return t < g->n_tensors ? &g->tensors[t] : NULL;
}

ipu_tensor ipu_graph_add_tensor(struct ipu_graph *g, const char *name,
				enum ipux_dtype dtype, uint32_t rank, const uint64_t *dims)
{
	struct g_tensor *t;
	uint64_t elems = 1;
	uint32_t i;

	if (g->error)
		return IPU_GRAPH_INVALID;
	if (!ipux_dtype_size(dtype)) {
		g_fail(g, "tensor '%s': unknown dtype %d", name ? name : "", (int)dtype);
		return IPU_GRAPH_INVALID;
	}
	if (rank > IPU_GRAPH_MAX_RANK) {
		g_fail(g, "tensor '%s': rank %u > %u", name ? name : "", rank, IPU_GRAPH_MAX_RANK);
		return IPU_GRAPH_INVALID;
	}
	for (i = 0; i < rank; i++) {
		if (dims[i] && elems > UINT64_MAX / 16 / dims[i]) {
			g_fail(g, "tensor '%s': element count overflows", name ? name : "");
			return IPU_GRAPH_INVALID;
		}
		elems *= dims[i];
	}
	if (G_PUSH(g, tensors))
		return IPU_GRAPH_INVALID;
	t = &g->tensors[g->n_tensors];
	memset(t, 0, sizeof(*t));
	t->name = g_strdup(g, name);
	if (!t->name)
		return IPU_GRAPH_INVALID;
	t->dtype = dtype;
	t->esize = ipux_dtype_size(dtype);
	t->rank = rank;
	for (i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->elems = elems;
	t->sorted = 1;
	return g->n_tensors++;
}

uint64_t ipu_graph_tensor_elems(const struct ipu_graph *g, ipu_tensor t)
{
	const struct g_tensor *x = g_tensor(g, t);

	return x ? x->elems : 0;
}

enum ipux_dtype ipu_graph_tensor_dtype(const struct ipu_graph *g, ipu_tensor t)
{
	const struct g_tensor *x = g_tensor(g, t);

	return x ? x->dtype : IPUX_DT_INVALID;
}

static int cmp_iv(const void *a, const void *b)
{
	const struct g_interval *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

const struct g_interval *g_find(struct g_tensor *t, uint64_t elem)
{
	uint32_t lo = 0, hi = t->niv;

	if (!t->sorted) {
		qsort(t->iv, t->niv, sizeof(*t->iv), cmp_iv);
		t->sorted = 1;
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->iv[mid].end <= elem)
			lo = mid + 1;
		else if (t->iv[mid].begin > elem)
			hi = mid;
		else
			return &t->iv[mid];
	}
	return NULL;
}

int ipu_graph_map(struct ipu_graph *g, ipu_tensor ti, uint32_t tile, uint64_t begin,
		  uint64_t end)
{
	struct g_tensor *t = g_tensor(g, ti);
	uint32_t i;

	if (g->error)
		return -1;
	if (!t)
		return g_fail(g, "map: no tensor %u", ti);
	if (tile >= g->num_tiles)
		return g_fail(g, "tensor '%s': tile %u >= %u tiles", t->name, tile, g->num_tiles);
	if (begin >= end || end > t->elems)
		return g_fail(g, "tensor '%s': interval [%llu, %llu) empty or outside %llu elements",
			      t->name, (unsigned long long)begin, (unsigned long long)end,
			      (unsigned long long)t->elems);
	if ((end - begin) * t->esize > g->tile_mem)
		return g_fail(g, "tensor '%s': %llu bytes on tile %u exceed tile memory (%u)",
			      t->name, (unsigned long long)((end - begin) * t->esize), tile,
			      g->tile_mem);
	/* overlap check: intervals are kept sorted lazily, so scan */
	for (i = 0; i < t->niv; i++)
		if (begin < t->iv[i].end && t->iv[i].begin < end)
			return g_fail(g, "tensor '%s': [%llu, %llu) overlaps mapped [%llu, %llu)",
				      t->name, (unsigned long long)begin,
				      (unsigned long long)end,
				      (unsigned long long)t->iv[i].begin,
				      (unsigned long long)t->iv[i].end);
	if (g_grow(g, (void **)&t->iv, &t->cap_iv, t->niv + 1, sizeof(*t->iv)))
		return -1;
	if (t->niv && t->iv[t->niv - 1].begin > begin)
		t->sorted = 0;
	t->iv[t->niv++] = (struct g_interval){ begin, end, tile, 0 };
	return 0;
}

int ipu_graph_map_tile(struct ipu_graph *g, ipu_tensor t, uint32_t tile)
{
	struct g_tensor *x = g_tensor(g, t);

	if (!x)
		return g_fail(g, "map: no tensor %u", t);
	return ipu_graph_map(g, t, tile, 0, x->elems);
}

int ipu_graph_map_linear(struct ipu_graph *g, ipu_tensor ti, uint32_t first_tile,
			 uint32_t ntiles, uint64_t grain)
{
	struct g_tensor *t = g_tensor(g, ti);
	uint64_t chunks, per, pos = 0;
	uint32_t used = 0;

	if (!t)
		return g_fail(g, "map: no tensor %u", ti);
	if (!grain)
		grain = 1;
	if (ntiles == 0 || (uint64_t)first_tile + ntiles > g->num_tiles)
		return g_fail(g, "tensor '%s': tiles [%u, +%u) outside %u tiles", t->name,
			      first_tile, ntiles, g->num_tiles);
	chunks = (t->elems + grain - 1) / grain;
	per = (chunks + ntiles - 1) / ntiles;
	if (!per)
		per = 1;
	while (pos < t->elems) {
		uint64_t end = pos + per * grain;

		if (end > t->elems)
			end = t->elems;
		if (ipu_graph_map(g, ti, first_tile + used, pos, end))
			return -1;
		used++;
		pos = end;
	}
	return (int)used;
}

uint32_t ipu_graph_tile_of(const struct ipu_graph *g, ipu_tensor ti, uint64_t elem)
{
	struct g_tensor *t = g_tensor(g, ti);
	const struct g_interval *iv;

	if (!t)
		return IPU_GRAPH_INVALID;
	iv = g_find(t, elem);
	return iv ? iv->tile : IPU_GRAPH_INVALID;
}

int ipu_graph_set_init(struct ipu_graph *g, ipu_tensor ti, const void *data, size_t bytes)
{
	struct g_tensor *t = g_tensor(g, ti);

	if (g->error)
		return -1;
	if (!t)
		return g_fail(g, "set_init: no tensor %u", ti);
	if (bytes != t->elems * t->esize)
		return g_fail(g, "tensor '%s': initial value of %zu bytes, tensor has %llu",
			      t->name, bytes, (unsigned long long)(t->elems * t->esize));
	free(t->init);
	t->init = malloc(bytes ? bytes : 1);
	if (!t->init)
		return g_fail(g, "out of memory for the initial value of '%s'", t->name);
	memcpy(t->init, data, bytes);
	return 0;
}

int g_check_slice(struct ipu_graph *g, struct ipu_slice s, const char *what)
{
	struct g_tensor *t = g_tensor(g, s.t);

	if (!t)
		return g_fail(g, "%s: no tensor %u", what, s.t);
	if (s.begin > t->elems || s.count > t->elems - s.begin)
		return g_fail(g, "%s: elements [%llu, +%llu) outside tensor '%s' of %llu", what,
			      (unsigned long long)s.begin, (unsigned long long)s.count, t->name,
			      (unsigned long long)t->elems);
	return 0;
}

uint32_t ipu_graph_add_compute_set(struct ipu_graph *g, const char *name)
{
	if (g->error || G_PUSH(g, cs_names) || G_PUSH(g, cs_origin))
		return IPU_GRAPH_INVALID;
	g->cs_origin[g->n_cs_origin++] = g->origin;
	g->cs_names[g->n_cs_names] = g_strdup(g, name);
	if (!g->cs_names[g->n_cs_names])
		return IPU_GRAPH_INVALID;
	return g->n_cs_names++;
}

int ipu_graph_add_vertex(struct ipu_graph *g, uint32_t cs, enum ipux_codelet codelet,
			 const struct ipu_slice *ops, uint32_t nops,
			 const uint32_t *params, uint32_t nparams)
{
	struct g_vertex *v;
	uint32_t i, tile = IPU_GRAPH_INVALID;

	if (g->error)
		return -1;
	if (cs >= g->n_cs_names)
		return g_fail(g, "vertex: no compute set %u", cs);
	if (nops == 0 || nops > IPUX_MAX_OPERANDS || nparams > IPUX_MAX_PARAMS)
		return g_fail(g, "vertex in '%s': %u operands / %u params (1..%u / 0..%u)",
			      g->cs_names[cs], nops, nparams, IPUX_MAX_OPERANDS, IPUX_MAX_PARAMS);
	for (i = 0; i < nops; i++) {
		struct g_tensor *t;
		const struct g_interval *iv;

		if (g_check_slice(g, ops[i], "vertex operand"))
			return -1;
		t = g_tensor(g, ops[i].t);
		iv = g_find(t, ops[i].begin);
		if (!iv || (ops[i].count && iv->end < ops[i].begin + ops[i].count))
			return g_fail(g, "vertex in '%s': operand %u (tensor '%s' [%llu, +%llu)) is not inside one tile's piece",
				      g->cs_names[cs], i, t->name,
				      (unsigned long long)ops[i].begin,
				      (unsigned long long)ops[i].count);
		if (tile != IPU_GRAPH_INVALID && iv->tile != tile)
			return g_fail(g, "vertex in '%s': operand %u (tensor '%s') is on tile %u, operand 0 on tile %u",
				      g->cs_names[cs], i, t->name, iv->tile, tile);
		tile = iv->tile;
	}
	if (g_grow(g, (void **)&g->ops, &g->cap_ops, (uint64_t)g->n_ops + nops, sizeof(*g->ops)) ||
	    g_grow(g, (void **)&g->params, &g->cap_params, (uint64_t)g->n_params + nparams + 1,
		   sizeof(*g->params)) ||
	    G_PUSH(g, vertices))
		return -1;
	v = &g->vertices[g->n_vertices++];
	v->cs = cs;
	v->tile = tile;
	v->codelet = (uint16_t)codelet;
	v->first_op = g->n_ops;
	v->nops = nops;
	v->first_param = g->n_params;
	v->nparams = nparams;
	for (i = 0; i < nops; i++)
		g->ops[g->n_ops++].s = ops[i];
	for (i = 0; i < nparams; i++)
		g->params[g->n_params++] = params[i];
	return 0;
}

uint32_t ipu_graph_add_stream(struct ipu_graph *g, const char *name,
			      enum ipux_stream_dir dir, uint32_t buffer_bytes)
{
	struct g_stream *s;

	if (g->error)
		return IPU_GRAPH_INVALID;
	if (dir != IPUX_STREAM_H2D && dir != IPUX_STREAM_D2H) {
		g_fail(g, "stream '%s': bad direction %d", name ? name : "", (int)dir);
		return IPU_GRAPH_INVALID;
	}
	if (g->n_streams >= IPUX_MAX_STREAMS) {
		g_fail(g, "stream '%s': more than %u streams", name ? name : "", IPUX_MAX_STREAMS);
		return IPU_GRAPH_INVALID;
	}
	if (G_PUSH(g, streams))
		return IPU_GRAPH_INVALID;
	s = &g->streams[g->n_streams];
	s->name = g_strdup(g, name);
	if (!s->name)
		return IPU_GRAPH_INVALID;
	s->dir = dir;
	s->bytes = buffer_bytes;
	return g->n_streams++;
}
