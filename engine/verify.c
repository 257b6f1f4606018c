// SPDX-License-Identifier: MIT
/*
 * verify.c - parse and verify an executable image.
 *
 * This is the device's security boundary: the image comes from an untrusted
 * guest (or file).  Every count, index, offset and size is checked here,
 * once, with 64-bit arithmetic, so that the interpreter and the codelets can
 * run without per-access checks.  Each kind of malformation has its own
 * error code and a message naming the offending record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "ipu/crc32.h"

struct sec_desc {
	uint32_t rec_size;	/* bytes per record (1 for DATA) */
	int required;
	const char *name;
};

static const struct sec_desc sec_descs[IPUX_SEC_MAX + 1] = {
	[IPUX_SEC_STREAMS] = { sizeof(struct ipux_stream), 0, "STREAMS" },
	[IPUX_SEC_VERTICES] = { sizeof(struct ipux_vertex), 0, "VERTICES" },
	[IPUX_SEC_OPERANDS] = { sizeof(struct ipux_operand), 0, "OPERANDS" },
	[IPUX_SEC_PARAMS] = { sizeof(uint32_t), 0, "PARAMS" },
	[IPUX_SEC_COMPUTE_SETS] = { sizeof(struct ipux_compute_set), 0, "COMPUTE_SETS" },
	[IPUX_SEC_EXCHANGES] = { sizeof(struct ipux_exchange), 0, "EXCHANGES" },
	[IPUX_SEC_COPIES] = { sizeof(struct ipux_copy), 0, "COPIES" },
	[IPUX_SEC_STREAM_COPIES] = { sizeof(struct ipux_stream_copy), 0, "STREAM_COPIES" },
	[IPUX_SEC_REGIONS] = { sizeof(struct ipux_region), 0, "REGIONS" },
	[IPUX_SEC_STEPS] = { sizeof(struct ipux_step), 1, "STEPS" },
	[IPUX_SEC_CHILDREN] = { sizeof(uint32_t), 0, "CHILDREN" },
	[IPUX_SEC_PROGRAMS] = { sizeof(uint32_t), 1, "PROGRAMS" },
	[IPUX_SEC_INITS] = { sizeof(struct ipux_init), 0, "INITS" },
	[IPUX_SEC_DATA] = { 1, 0, "DATA" },
	[IPUX_SEC_CUSTOM] = { sizeof(struct ipux_custom), 0, "CUSTOM" },
};

_Static_assert(sizeof(struct ipux_header) == 64, "header layout");
_Static_assert(sizeof(struct ipux_section) == 16, "section layout");
_Static_assert(sizeof(struct ipux_stream) == 8, "stream layout");
_Static_assert(sizeof(struct ipux_vertex) == 20, "vertex layout");
_Static_assert(sizeof(struct ipux_operand) == 12, "operand layout");
_Static_assert(sizeof(struct ipux_copy) == 20, "copy layout");
_Static_assert(sizeof(struct ipux_stream_copy) == 12, "stream copy layout");
_Static_assert(sizeof(struct ipux_region) == 12, "region layout");
_Static_assert(sizeof(struct ipux_step) == 20, "step layout");
_Static_assert(sizeof(struct ipux_init) == 16, "init layout");

/* Is [off, off + bytes) inside a tile of the executable? */
static int in_tile(const struct ipu_exe *x, uint64_t off, uint64_t bytes)
{
	return off <= x->hdr->tile_mem && bytes <= x->hdr->tile_mem - off;
}

static int parse_sections(struct ipu_exe *x, char *err, size_t errlen)
{
	const struct ipux_header *h = x->hdr;
	const struct ipux_section *tab;
	const void *payload[IPUX_SEC_MAX + 1] = { 0 };
	uint32_t counts[IPUX_SEC_MAX + 1] = { 0 };
	int seen[IPUX_SEC_MAX + 1] = { 0 };
	uint32_t i;

	if (h->section_offset % 4 || h->section_offset < h->header_size ||
	    h->section_offset > x->len ||
	    (uint64_t)h->section_count * sizeof(*tab) >
		    (uint64_t)x->len - h->section_offset) {
		return ipu_errorf(err, errlen, IPUX_E_SECTION_TABLE,
			 "section table (%u entries at offset %u) outside the %zu-byte image or misaligned",
			 h->section_count, h->section_offset, x->len);
	}
	tab = (const struct ipux_section *)(x->image + h->section_offset);
	for (i = 0; i < h->section_count; i++) {
		const struct ipux_section *s = &tab[i];
		const struct sec_desc *d;

		if (s->type == 0 || s->type > IPUX_SEC_MAX) {
			return ipu_errorf(err, errlen, IPUX_E_SECTION_UNKNOWN, "section %u: unknown type %u", i, s->type);
		}
		d = &sec_descs[s->type];
		if (seen[s->type]) {
			return ipu_errorf(err, errlen, IPUX_E_SECTION_DUP, "section %u: second %s section", i, d->name);
		}
		seen[s->type] = 1;
		if (s->offset % 4) {
			return ipu_errorf(err, errlen, IPUX_E_SECTION_ALIGN, "section %u (%s): offset %u not 4-aligned",
				 i, d->name, s->offset);
		}
		if ((uint64_t)s->count * d->rec_size != s->size) {
			return ipu_errorf(err, errlen, IPUX_E_SECTION_SIZE,
				 "section %u (%s): size %u != %u records x %u bytes",
				 i, d->name, s->size, s->count, d->rec_size);
		}
		if (s->offset < h->header_size ||
		    (uint64_t)s->offset + s->size > x->len) {
			return ipu_errorf(err, errlen, IPUX_E_SECTION_BOUNDS,
				 "section %u (%s): [%u, %llu) outside the image of %zu bytes",
				 i, d->name, s->offset,
				 (unsigned long long)s->offset + s->size, x->len);
		}
		payload[s->type] = x->image + s->offset;
		counts[s->type] = s->count;
	}
	for (i = 1; i <= IPUX_SEC_MAX; i++) {
		if (sec_descs[i].required && !seen[i]) {
			return ipu_errorf(err, errlen, IPUX_E_SECTION_MISSING, "no %s section", sec_descs[i].name);
		}
	}
	x->streams = payload[IPUX_SEC_STREAMS];
	x->nstreams = counts[IPUX_SEC_STREAMS];
	x->vertices = payload[IPUX_SEC_VERTICES];
	x->nvertices = counts[IPUX_SEC_VERTICES];
	x->operands = payload[IPUX_SEC_OPERANDS];
	x->noperands = counts[IPUX_SEC_OPERANDS];
	x->params = payload[IPUX_SEC_PARAMS];
	x->nparams = counts[IPUX_SEC_PARAMS];
	x->css = payload[IPUX_SEC_COMPUTE_SETS];
	x->ncss = counts[IPUX_SEC_COMPUTE_SETS];
	x->xchs = payload[IPUX_SEC_EXCHANGES];
	x->nxchs = counts[IPUX_SEC_EXCHANGES];
	x->copies = payload[IPUX_SEC_COPIES];
	x->ncopies = counts[IPUX_SEC_COPIES];
	x->scs = payload[IPUX_SEC_STREAM_COPIES];
	x->nscs = counts[IPUX_SEC_STREAM_COPIES];
	x->regions = payload[IPUX_SEC_REGIONS];
	x->nregions = counts[IPUX_SEC_REGIONS];
	x->steps = payload[IPUX_SEC_STEPS];
	x->nsteps = counts[IPUX_SEC_STEPS];
	x->children = payload[IPUX_SEC_CHILDREN];
	x->nchildren = counts[IPUX_SEC_CHILDREN];
	x->programs = payload[IPUX_SEC_PROGRAMS];
	x->nprograms = counts[IPUX_SEC_PROGRAMS];
	x->inits = payload[IPUX_SEC_INITS];
	x->ninits = counts[IPUX_SEC_INITS];
	x->data = payload[IPUX_SEC_DATA];
	x->ndata = counts[IPUX_SEC_DATA];
	x->customs = payload[IPUX_SEC_CUSTOM];
	x->ncustom = counts[IPUX_SEC_CUSTOM];
	if (x->ncustom && h->version_minor < 1)
		return ipu_errorf(err, errlen, IPUX_E_SECTION_UNKNOWN,
				  "a CUSTOM section in a format 1.%u image (custom codelets need 1.1)",
				  h->version_minor);
	return 0;
}

uint32_t ipu_exe_checksum(const void *image, size_t len)
{
	struct ipux_header h;
	uint32_t crc;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, image, sizeof(h));
	h.checksum = 0;
	crc = ipu_crc32(0, &h, sizeof(h));
	return ipu_crc32(crc, (const uint8_t *)image + sizeof(h), len - sizeof(h));
}

static int check_header(struct ipu_exe *x, uint32_t dev_tiles,
			uint32_t dev_tile_mem, char *err, size_t errlen)
{
	const struct ipux_header *h;
	uint32_t crc;
	unsigned i;

	if (x->len < sizeof(*h)) {
		return ipu_errorf(err, errlen, IPUX_E_TRUNCATED, "image of %zu bytes is shorter than the %zu-byte header",
			 x->len, sizeof(*h));
	}
	h = x->hdr = (const struct ipux_header *)x->image;
	if (h->magic != IPUX_MAGIC) {
		return ipu_errorf(err, errlen, IPUX_E_BAD_MAGIC, "bad magic 0x%08x (want 0x%08x, \"IPUX\")",
			 h->magic, IPUX_MAGIC);
	}
	if (h->version_major != IPUX_VERSION_MAJOR ||
	    h->version_minor > IPUX_VERSION_MINOR) {
		return ipu_errorf(err, errlen, IPUX_E_BAD_VERSION, "format version %u.%u not supported (device speaks %u.%u)",
			 h->version_major, h->version_minor,
			 IPUX_VERSION_MAJOR, IPUX_VERSION_MINOR);
	}
	if (h->header_size != sizeof(*h) || h->flags) {
		return ipu_errorf(err, errlen, IPUX_E_BAD_HEADER, "header_size %u (want %zu) or flags 0x%x (want 0)",
			 h->header_size, sizeof(*h), h->flags);
	}
	for (i = 0; i < sizeof(h->reserved) / sizeof(h->reserved[0]); i++) {
		if (h->reserved[i]) {
			return ipu_errorf(err, errlen, IPUX_E_BAD_HEADER, "header reserved word %u is 0x%x, must be 0",
				 i, h->reserved[i]);
		}
	}
	if (h->total_size > x->len) {
		return ipu_errorf(err, errlen, IPUX_E_TRUNCATED, "image truncated: header says %u bytes, got %zu",
			 h->total_size, x->len);
	}
	if (h->total_size < x->len) {
		return ipu_errorf(err, errlen, IPUX_E_BAD_HEADER, "image has %zu trailing bytes after its %u bytes",
			 x->len - h->total_size, h->total_size);
	}
	crc = ipu_exe_checksum(x->image, x->len);
	if (crc != h->checksum) {
		return ipu_errorf(err, errlen, IPUX_E_CHECKSUM, "checksum mismatch: header says 0x%08x, content is 0x%08x",
			 h->checksum, crc);
	}
	if (h->num_tiles == 0 || h->num_tiles > IPUX_MAX_TILES ||
	    h->num_tiles > dev_tiles) {
		return ipu_errorf(err, errlen, IPUX_E_TILES, "executable needs %u tiles, device has %u (limit %u)",
			 h->num_tiles, dev_tiles, IPUX_MAX_TILES);
	}
	if (h->tile_mem == 0 || h->tile_mem % IPU_TILE_ALIGN ||
	    h->tile_mem > IPUX_MAX_TILE_MEM || h->tile_mem > dev_tile_mem) {
		return ipu_errorf(err, errlen, IPUX_E_TILE_MEM,
			 "executable needs %u bytes per tile, device has %u (must be a non-zero multiple of %u, limit %u)",
			 h->tile_mem, dev_tile_mem, IPU_TILE_ALIGN, IPUX_MAX_TILE_MEM);
	}
	return 0;
}

static int check_streams(struct ipu_exe *x, char *err, size_t errlen)
{
	uint32_t i;

	if (x->nstreams > IPUX_MAX_STREAMS) {
		return ipu_errorf(err, errlen, IPUX_E_LIMIT, "%u streams, limit %u", x->nstreams, IPUX_MAX_STREAMS);
	}
	for (i = 0; i < x->nstreams; i++) {
		if (x->streams[i].dir > IPUX_STREAM_D2H) {
			return ipu_errorf(err, errlen, IPUX_E_STREAM_DIR, "stream %u: direction %u is neither H2D (0) nor D2H (1)",
				 i, x->streams[i].dir);
		}
	}
	return 0;
}

static int check_vertex(struct ipu_exe *x, uint32_t vi, char *err, size_t errlen)
{
	const struct ipux_vertex *v = &x->vertices[vi];
	const struct ipu_codelet *cl;
	struct ipu_vertex_ctx ctx;
	char why[160];
	uint32_t j;
	int rc;

	if (v->tile >= x->hdr->num_tiles) {
		return ipu_errorf(err, errlen, IPUX_E_TILE_RANGE, "vertex %u: tile %u >= %u tiles", vi, v->tile,
			 x->hdr->num_tiles);
	}
	if (v->reserved) {
		return ipu_errorf(err, errlen, IPUX_E_RESERVED, "vertex %u: reserved field 0x%x, must be 0", vi, v->reserved);
	}
	if (v->codelet >= IPUX_CL_CUSTOM_BASE)
		cl = (uint32_t)v->codelet - IPUX_CL_CUSTOM_BASE < x->ncustom ?
		     x->custom_cl[v->codelet - IPUX_CL_CUSTOM_BASE] : NULL;
	else
		cl = ipu_codelet_get(v->codelet);
	if (!cl) {
		return ipu_errorf(err, errlen, IPUX_E_CODELET_UNKNOWN, "vertex %u: unknown codelet %u", vi, v->codelet);
	}
	if (v->num_operands > IPUX_MAX_OPERANDS || v->num_params > IPUX_MAX_PARAMS) {
		return ipu_errorf(err, errlen, IPUX_E_LIMIT, "vertex %u (%s): %u operands / %u params over the limits %u / %u",
			 vi, cl->name, v->num_operands, v->num_params,
			 IPUX_MAX_OPERANDS, IPUX_MAX_PARAMS);
	}
	if ((uint64_t)v->first_operand + v->num_operands > x->noperands) {
		return ipu_errorf(err, errlen, IPUX_E_OPERAND_RANGE, "vertex %u (%s): operands [%u, +%u) outside the %u-entry table",
			 vi, cl->name, v->first_operand, v->num_operands, x->noperands);
	}
	if ((uint64_t)v->first_param + v->num_params > x->nparams) {
		return ipu_errorf(err, errlen, IPUX_E_PARAM_RANGE, "vertex %u (%s): params [%u, +%u) outside the %u-entry table",
			 vi, cl->name, v->first_param, v->num_params, x->nparams);
	}
	for (j = 0; j < v->num_operands; j++) {
		const struct ipux_operand *op = &x->operands[v->first_operand + j];
		uint32_t es = ipux_dtype_size(op->dtype);

		if (!es) {
			return ipu_errorf(err, errlen, IPUX_E_DTYPE, "vertex %u (%s): operand %u has unknown dtype %u",
				 vi, cl->name, j, op->dtype);
		}
		if (op->reserved[0] || op->reserved[1] || op->reserved[2]) {
			return ipu_errorf(err, errlen, IPUX_E_RESERVED, "vertex %u (%s): operand %u reserved bytes not 0",
				 vi, cl->name, j);
		}
		if (op->offset % es) {
			return ipu_errorf(err, errlen, IPUX_E_REGION_ALIGN, "vertex %u (%s): operand %u offset %u not aligned to %u",
				 vi, cl->name, j, op->offset, es);
		}
		if (!in_tile(x, op->offset, (uint64_t)op->count * es)) {
			return ipu_errorf(err, errlen, IPUX_E_REGION_BOUNDS,
				 "vertex %u (%s): operand %u region [%u, %llu) outside tile memory of %u bytes",
				 vi, cl->name, j, op->offset,
				 (unsigned long long)op->offset + (uint64_t)op->count * es,
				 x->hdr->tile_mem);
		}
	}
	ctx.mem = NULL;
	ctx.ops = &x->operands[v->first_operand];
	ctx.params = x->nparams ? &x->params[v->first_param] : NULL;
	ctx.num_ops = v->num_operands;
	ctx.num_params = v->num_params;
	ctx.isa = IPU_ISA_AUTO;
	why[0] = 0;
	rc = cl->check(&ctx, why, sizeof(why));
	if (rc) {
		return ipu_errorf(err, errlen, rc < 0 ? rc : IPUX_E_OPERAND_SHAPE, "vertex %u (%s) on tile %u: %s", vi, cl->name, v->tile, why);
	}
	x->vcodelet[vi] = cl;
	{
		uint64_t c = cl->cost(&ctx);

		x->vcost[vi] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	}
	return 0;
}

static int cmp_u32_pair(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/*
 * Group items by tile, keeping list order within a tile.  keys[i] is the
 * tile of item first+i.  Fills order/groups (allocated here).
 */
static int group_by_tile(const uint32_t *tiles, uint32_t first, uint32_t n,
			 uint32_t **order, struct ipu_tile_group **groups,
			 uint32_t *ngroups)
{
	uint32_t *pairs, i, g = 0;

	*order = NULL;
	*groups = NULL;
	*ngroups = 0;
	if (!n)
		return 0;
	pairs = malloc((size_t)n * 2 * sizeof(*pairs));
	*order = malloc((size_t)n * sizeof(**order));
	*groups = malloc((size_t)n * sizeof(**groups));
	if (!pairs || !*order || !*groups) {
		free(pairs);
		return IPU_E_NOMEM;
	}
	for (i = 0; i < n; i++) {
		pairs[2 * i] = tiles[i];
		pairs[2 * i + 1] = first + i;
	}
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_u32_pair);
	for (i = 0; i < n; i++) {
		(*order)[i] = pairs[2 * i + 1];
		if (i == 0 || pairs[2 * i] != pairs[2 * i - 2]) {
			(*groups)[g].tile = pairs[2 * i];
			(*groups)[g].first = i;
			(*groups)[g].count = 0;
			g++;
		}
		(*groups)[g - 1].count++;
	}
	*ngroups = g;
	free(pairs);
	return 0;
}

struct group_cost {
	uint64_t cost;
	uint32_t group;
};

static int cmp_group_cost(const void *a, const void *b)
{
	const struct group_cost *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* p->sched: p's groups by decreasing cost (ties in tile order). */
static int plan_schedule(const struct ipu_exe *x, struct ipu_cs_plan *p)
{
	struct group_cost *gc;
	uint32_t g, i;

	p->sched = malloc((p->ngroups ? p->ngroups : 1) * sizeof(*p->sched));
	gc = malloc((p->ngroups ? p->ngroups : 1) * sizeof(*gc));
	if (!p->sched || !gc) {
		free(gc);
		return IPU_E_NOMEM;
	}
	for (g = 0; g < p->ngroups; g++) {
		gc[g].cost = 0;
		gc[g].group = g;
		for (i = 0; i < p->groups[g].count; i++)
			gc[g].cost += x->vcost[p->order[p->groups[g].first + i]];
	}
	qsort(gc, p->ngroups, sizeof(*gc), cmp_group_cost);
	for (g = 0; g < p->ngroups; g++)
		p->sched[g] = gc[g].group;
	free(gc);
	return 0;
}

static int plan_compute_sets(struct ipu_exe *x, char *err, size_t errlen)
{
	uint32_t *tiles = NULL, c;
	int rc = 0;

	x->csplan = calloc(x->ncss ? x->ncss : 1, sizeof(*x->csplan));
	tiles = malloc((x->nvertices ? x->nvertices : 1) * sizeof(*tiles));
	if (!x->csplan || !tiles) {
		free(tiles);
		return IPU_E_NOMEM;
	}
	for (c = 0; c < x->ncss; c++) {
		const struct ipux_compute_set *cs = &x->css[c];
		struct ipu_cs_plan *p = &x->csplan[c];
		uint64_t maxc = 0;
		uint32_t i, g;

		if ((uint64_t)cs->first_vertex + cs->num_vertices > x->nvertices) {
			ipu_errorf(err, errlen, IPUX_E_VERTEX_RANGE,
				 "compute set %u: vertices [%u, +%u) outside the %u-entry table",
				 c, cs->first_vertex, cs->num_vertices, x->nvertices);
			rc = IPUX_E_VERTEX_RANGE;
			break;
		}
		for (i = 0; i < cs->num_vertices; i++)
			tiles[i] = x->vertices[cs->first_vertex + i].tile;
		rc = group_by_tile(tiles, cs->first_vertex, cs->num_vertices,
				   &p->order, &p->groups, &p->ngroups);
		if (rc)
			break;
		for (g = 0; g < p->ngroups; g++) {
			uint64_t sum = 0;

			for (i = 0; i < p->groups[g].count; i++)
				sum += x->vcost[p->order[p->groups[g].first + i]];
			if (sum > maxc)
				maxc = sum;
			p->work += sum;
		}
		rc = plan_schedule(x, p);
		if (rc)
			break;
		maxc += IPU_COST_CS_OVERHEAD;
		p->cycles = maxc > UINT32_MAX ? UINT32_MAX : (uint32_t)maxc;
		p->nvertices = cs->num_vertices;
	}
	free(tiles);
	return rc;
}

static int cmp_span(const void *a, const void *b)
{
	const struct ipu_span *x = a, *y = b;

	if (x->tile != y->tile)
		return x->tile < y->tile ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

int ipu_spans_overlap(struct ipu_span *s, size_t n)
{
	size_t i, j;

	qsort(s, n, sizeof(*s), cmp_span);
	/*
	 * Sweep each tile keeping the furthest end seen so far of each kind;
	 * a span that starts before the other kind's furthest end overlaps it.
	 */
	for (i = 0; i < n;) {
		uint64_t end[2] = { 0, 0 };

		for (j = i; j < n && s[j].tile == s[i].tile; j++) {
			if (s[j].start == s[j].end)
				continue;
			if (s[j].start < end[!s[j].kind])
				return 1;
			if (s[j].end > end[s[j].kind])
				end[s[j].kind] = s[j].end;
		}
		i = j;
	}
	return 0;
}

/* Does any destination of the exchange overlap any source? */
static int exchange_has_hazard(const struct ipux_copy *cp, uint32_t n, int *hazard)
{
	struct ipu_span *s = malloc(((size_t)n * 2 + 1) * sizeof(*s));
	uint32_t i;

	*hazard = 0;
	if (!s)
		return IPU_E_NOMEM;
	for (i = 0; i < n; i++) {
		s[2 * i] = (struct ipu_span){ cp[i].src_offset,
					      (uint64_t)cp[i].src_offset + cp[i].bytes,
					      cp[i].src_tile, 0 };
		s[2 * i + 1] = (struct ipu_span){ cp[i].dst_offset,
						  (uint64_t)cp[i].dst_offset + cp[i].bytes,
						  cp[i].dst_tile, 1 };
	}
	*hazard = ipu_spans_overlap(s, (size_t)n * 2);
	free(s);
	return 0;
}

static int plan_exchanges(struct ipu_exe *x, char *err, size_t errlen)
{
	uint32_t *tiles = NULL, i, e;
	uint64_t *in = NULL, *out = NULL;
	int rc = 0;

	for (i = 0; i < x->ncopies; i++) {
		const struct ipux_copy *c = &x->copies[i];

		if (c->src_tile >= x->hdr->num_tiles || c->dst_tile >= x->hdr->num_tiles) {
			return ipu_errorf(err, errlen, IPUX_E_TILE_RANGE, "copy %u: tile %u -> %u, executable has %u tiles",
				 i, c->src_tile, c->dst_tile, x->hdr->num_tiles);
		}
		if (!in_tile(x, c->src_offset, c->bytes) ||
		    !in_tile(x, c->dst_offset, c->bytes)) {
			return ipu_errorf(err, errlen, IPUX_E_COPY_BOUNDS,
				 "copy %u: %u bytes from offset %u to offset %u run outside tile memory of %u bytes",
				 i, c->bytes, c->src_offset, c->dst_offset, x->hdr->tile_mem);
		}
	}
	x->xchplan = calloc(x->nxchs ? x->nxchs : 1, sizeof(*x->xchplan));
	tiles = malloc((x->ncopies ? x->ncopies : 1) * sizeof(*tiles));
	in = calloc(x->hdr->num_tiles, sizeof(*in));
	out = calloc(x->hdr->num_tiles, sizeof(*out));
	if (!x->xchplan || !tiles || !in || !out) {
		rc = IPU_E_NOMEM;
		goto done;
	}
	for (e = 0; e < x->nxchs; e++) {
		const struct ipux_exchange *xe = &x->xchs[e];
		struct ipu_xch_plan *p = &x->xchplan[e];
		const struct ipux_copy *cp;
		uint64_t maxb = 0, cyc;
		int hazard;

		if ((uint64_t)xe->first_copy + xe->num_copies > x->ncopies) {
			ipu_errorf(err, errlen, IPUX_E_COPY_RANGE, "exchange %u: copies [%u, +%u) outside the %u-entry table",
				 e, xe->first_copy, xe->num_copies, x->ncopies);
			rc = IPUX_E_COPY_RANGE;
			goto done;
		}
		/* An exchange may have no copies, and the table may then be empty (NULL). */
		cp = xe->num_copies ? &x->copies[xe->first_copy] : NULL;
		for (i = 0; i < xe->num_copies; i++) {
			tiles[i] = cp[i].dst_tile;
			p->bytes += cp[i].bytes;
			in[cp[i].dst_tile] += cp[i].bytes;
			out[cp[i].src_tile] += cp[i].bytes;
		}
		for (i = 0; i < xe->num_copies; i++) {
			uint32_t t[2] = { cp[i].dst_tile, cp[i].src_tile };
			unsigned k;

			for (k = 0; k < 2; k++) {
				uint64_t b = in[t[k]] > out[t[k]] ? in[t[k]] : out[t[k]];

				if (b > maxb)
					maxb = b;
			}
		}
		for (i = 0; i < xe->num_copies; i++)
			in[cp[i].dst_tile] = out[cp[i].src_tile] = 0;
		cyc = IPU_COST_XCH_LATENCY + (maxb + IPU_COST_XCH_BYTES_PER_CYCLE - 1) /
					     IPU_COST_XCH_BYTES_PER_CYCLE;
		p->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
		rc = group_by_tile(tiles, xe->first_copy, xe->num_copies, &p->order,
				   &p->groups, &p->ngroups);
		if (rc)
			goto done;
		rc = exchange_has_hazard(cp, xe->num_copies, &hazard);
		if (rc)
			goto done;
		if (hazard) {
			uint64_t off = 0;

			if (p->bytes > (256u << 20)) {
				ipu_errorf(err, errlen, IPUX_E_LIMIT,
					 "exchange %u: %llu bytes with overlapping sources and destinations exceed the 256 MiB staging limit",
					 e, (unsigned long long)p->bytes);
				rc = IPUX_E_LIMIT;
				goto done;
			}
			p->staged = 1;
			p->stage_off = malloc((xe->num_copies ? xe->num_copies : 1) *
					      sizeof(*p->stage_off));
			if (!p->stage_off) {
				rc = IPU_E_NOMEM;
				goto done;
			}
			for (i = 0; i < xe->num_copies; i++) {
				p->stage_off[i] = off;
				off += cp[i].bytes;
			}
			if (off > x->stage_bytes)
				x->stage_bytes = off;
		}
	}
done:
	free(tiles);
	free(in);
	free(out);
	return rc;
}

static int plan_stream_copies(struct ipu_exe *x, char *err, size_t errlen)
{
	uint32_t i, j;
	uint64_t nseg = 0;

	x->sc_seg_first = malloc((x->nscs ? x->nscs : 1) * sizeof(*x->sc_seg_first));
	x->sc_cycles = malloc((x->nscs ? x->nscs : 1) * sizeof(*x->sc_cycles));
	if (!x->sc_seg_first || !x->sc_cycles)
		return IPU_E_NOMEM;
	for (i = 0; i < x->nregions; i++) {
		const struct ipux_region *r = &x->regions[i];

		if (r->tile >= x->hdr->num_tiles) {
			return ipu_errorf(err, errlen, IPUX_E_TILE_RANGE, "region %u: tile %u >= %u tiles", i, r->tile,
				 x->hdr->num_tiles);
		}
		if (!in_tile(x, r->offset, r->bytes)) {
			return ipu_errorf(err, errlen, IPUX_E_REGION_BOUNDS, "region %u: [%u, %llu) outside tile memory of %u bytes",
				 i, r->offset, (unsigned long long)r->offset + r->bytes,
				 x->hdr->tile_mem);
		}
	}
	for (i = 0; i < x->nscs; i++) {
		const struct ipux_stream_copy *sc = &x->scs[i];
		uint64_t total = 0;

		if (sc->stream >= x->nstreams) {
			return ipu_errorf(err, errlen, IPUX_E_STREAM_ID, "stream copy %u: stream %u, executable has %u streams",
				 i, sc->stream, x->nstreams);
		}
		if ((uint64_t)sc->first_region + sc->num_regions > x->nregions) {
			return ipu_errorf(err, errlen, IPUX_E_REGION_RANGE, "stream copy %u: regions [%u, +%u) outside the %u-entry table",
				 i, sc->first_region, sc->num_regions, x->nregions);
		}
		for (j = 0; j < sc->num_regions; j++)
			total += x->regions[sc->first_region + j].bytes;
		if (total != x->streams[sc->stream].buffer_bytes) {
			return ipu_errorf(err, errlen, IPUX_E_STREAM_SIZE,
				 "stream copy %u: regions hold %llu bytes, stream %u buffers are %u bytes",
				 i, (unsigned long long)total, sc->stream,
				 x->streams[sc->stream].buffer_bytes);
		}
		x->sc_seg_first[i] = (uint32_t)nseg;
		nseg += sc->num_regions;
		total = IPU_COST_STREAM_LATENCY +
			(total + IPU_COST_STREAM_BYTES_PER_CYCLE - 1) /
				IPU_COST_STREAM_BYTES_PER_CYCLE;
		x->sc_cycles[i] = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	}
	return 0;
}

static int check_inits(struct ipu_exe *x, char *err, size_t errlen)
{
	uint32_t i;

	for (i = 0; i < x->ninits; i++) {
		const struct ipux_init *in = &x->inits[i];

		if (in->tile >= x->hdr->num_tiles) {
			return ipu_errorf(err, errlen, IPUX_E_TILE_RANGE, "init %u: tile %u >= %u tiles", i, in->tile,
				 x->hdr->num_tiles);
		}
		if (!in_tile(x, in->offset, in->bytes) ||
		    (uint64_t)in->data_offset + in->bytes > x->ndata) {
			return ipu_errorf(err, errlen, IPUX_E_INIT_BOUNDS,
				 "init %u: %u bytes to tile offset %u from data offset %u: outside tile memory (%u) or DATA (%u)",
				 i, in->bytes, in->offset, in->data_offset,
				 x->hdr->tile_mem, x->ndata);
		}
	}
	return 0;
}

static int check_step_fields(const struct ipu_exe *x, uint32_t si, char *err, size_t errlen)
{
	const struct ipux_step *s = &x->steps[si];
	int ok_ref = 1, unused_zero = 1;

	if (s->flags) {
		return ipu_errorf(err, errlen, IPUX_E_STEP_FLAGS, "step %u: flags 0x%x, must be 0", si, s->flags);
	}
	switch (s->kind) {
	case IPUX_STEP_SEQUENCE:
		if ((uint64_t)s->a + s->b > x->nchildren) {
			return ipu_errorf(err, errlen, IPUX_E_CHILD_RANGE, "step %u (Sequence): children [%u, +%u) outside the %u-entry table",
				 si, s->a, s->b, x->nchildren);
		}
		unused_zero = !s->c && !s->d;
		break;
	case IPUX_STEP_EXECUTE:
		ok_ref = s->a < x->ncss;
		unused_zero = !s->b && !s->c && !s->d;
		break;
	case IPUX_STEP_EXCHANGE:
		ok_ref = s->a < x->nxchs;
		unused_zero = !s->b && !s->c && !s->d;
		break;
	case IPUX_STEP_STREAM_COPY:
		ok_ref = s->a < x->nscs;
		unused_zero = !s->b && !s->c && !s->d;
		break;
	case IPUX_STEP_REPEAT:
		if (s->b >= x->nsteps) {
			return ipu_errorf(err, errlen, IPUX_E_STEP_RANGE, "step %u (Repeat): body step %u, only %u steps",
				 si, s->b, x->nsteps);
		}
		unused_zero = !s->c && !s->d;
		break;
	case IPUX_STEP_SWITCH:
		if (s->a >= x->hdr->num_tiles || s->b % 4 || !in_tile(x, s->b, 4) || s->d == 0) {
			return ipu_errorf(err, errlen, IPUX_E_SWITCH,
				 "step %u (Switch): selector at tile %u offset %u (needs an aligned i32 inside a tile) with %u children (needs >= 1)",
				 si, s->a, s->b, s->d);
		}
		if ((uint64_t)s->c + s->d > x->nchildren) {
			return ipu_errorf(err, errlen, IPUX_E_CHILD_RANGE, "step %u (Switch): children [%u, +%u) outside the %u-entry table",
				 si, s->c, s->d, x->nchildren);
		}
		break;
	case IPUX_STEP_SYNC:
		ok_ref = s->a <= IPUX_SYNC_EXTERNAL;
		unused_zero = !s->b && !s->c && !s->d;
		break;
	default:
		return ipu_errorf(err, errlen, IPUX_E_STEP_KIND, "step %u: unknown kind %u", si, s->kind);
	}
	if (!ok_ref) {
		return ipu_errorf(err, errlen, IPUX_E_STEP_REF, "step %u (kind %u): refers to entry %u which does not exist",
			 si, s->kind, s->a);
	}
	if (!unused_zero) {
		return ipu_errorf(err, errlen, IPUX_E_RESERVED, "step %u (kind %u): unused fields must be 0", si, s->kind);
	}
	return 0;
}

/*
 * Height of a step (1 for a leaf), memoised in `height` (0 = unknown,
 * UINT8_MAX = on the current DFS path).  Recursion is bounded by the depth
 * limit, so a hostile image cannot exhaust the stack.
 */
static int step_height(const struct ipu_exe *x, uint8_t *height, uint32_t si,
		       uint32_t depth, char *err, size_t errlen)
{
	const struct ipux_step *s = &x->steps[si];
	uint32_t first = 0, n = 0, i, h = 0;
	uint32_t single;
	const uint32_t *kids = x->children;

	if (height[si] == UINT8_MAX) {
		return ipu_errorf(err, errlen, IPUX_E_PROGRAM_CYCLE, "step %u contains itself", si);
	}
	if (height[si])
		return height[si];
	if (depth > IPUX_MAX_DEPTH) {
		return ipu_errorf(err, errlen, IPUX_E_PROGRAM_DEPTH, "steps nested deeper than %u at step %u", IPUX_MAX_DEPTH, si);
	}
	if (s->kind == IPUX_STEP_SEQUENCE) {
		first = s->a;
		n = s->b;
	} else if (s->kind == IPUX_STEP_SWITCH) {
		first = s->c;
		n = s->d;
	} else if (s->kind == IPUX_STEP_REPEAT) {
		single = s->b;
		kids = &single;
		n = 1;
	}
	height[si] = UINT8_MAX;
	for (i = 0; i < n; i++) {
		uint32_t c = kids == x->children ? x->children[first + i] : kids[i];
		int r;

		if (c >= x->nsteps) {
			return ipu_errorf(err, errlen, IPUX_E_STEP_RANGE, "step %u: child %u is step %u, only %u steps",
				 si, i, c, x->nsteps);
		}
		r = step_height(x, height, c, depth + 1, err, errlen);
		if (r < 0)
			return r;
		if ((uint32_t)r > h)
			h = (uint32_t)r;
	}
	if (h + 1 > IPUX_MAX_DEPTH) {
		return ipu_errorf(err, errlen, IPUX_E_PROGRAM_DEPTH, "steps nested deeper than %u at step %u", IPUX_MAX_DEPTH, si);
	}
	height[si] = (uint8_t)(h + 1);
	return (int)(h + 1);
}

static int check_programs(struct ipu_exe *x, char *err, size_t errlen)
{
	uint8_t *height;
	uint32_t i;
	int rc = 0;

	if (x->nprograms == 0 || x->nprograms > IPUX_MAX_PROGRAMS) {
		return ipu_errorf(err, errlen, IPUX_E_PROGRAM_COUNT, "%u programs (must be 1..%u)", x->nprograms,
			 IPUX_MAX_PROGRAMS);
	}
	for (i = 0; i < x->nsteps; i++) {
		rc = check_step_fields(x, i, err, errlen);
		if (rc)
			return rc;
	}
	for (i = 0; i < x->nprograms; i++) {
		if (x->programs[i] >= x->nsteps) {
			return ipu_errorf(err, errlen, IPUX_E_STEP_RANGE, "program %u: root step %u, only %u steps",
				 i, x->programs[i], x->nsteps);
		}
	}
	height = calloc(x->nsteps ? x->nsteps : 1, 1);
	if (!height)
		return IPU_E_NOMEM;
	for (i = 0; i < x->nsteps; i++) {
		int r = step_height(x, height, i, 1, err, errlen);

		if (r < 0) {
			rc = r;
			break;
		}
	}
	free(height);
	return rc;
}

void ipu_exe_free(struct ipu_exe *x)
{
	uint32_t i;

	if (!x)
		return;
	if (x->csplan) {
		for (i = 0; i < x->ncss; i++) {
			free(x->csplan[i].order);
			free(x->csplan[i].groups);
			free(x->csplan[i].sched);
		}
	}
	if (x->xchplan) {
		for (i = 0; i < x->nxchs; i++) {
			free(x->xchplan[i].order);
			free(x->xchplan[i].groups);
			free(x->xchplan[i].stage_off);
		}
	}
	ipu_fusion_free(x);
	free(x->csplan);
	free(x->xchplan);
	free(x->vcodelet);
	free(x->custom_cl);
	free(x->vcost);
	free(x->sc_seg_first);
	free(x->sc_cycles);
	free(x->image);
	free(x);
}

int ipu_exe_parse(const void *image, size_t len, uint32_t dev_tiles,
		  uint32_t dev_tile_mem, const struct ipu_custom_table *custom,
		  struct ipu_exe **out, char *err, size_t errlen)
{
	struct ipu_exe *x;
	uint32_t i;
	int rc;

	*out = NULL;
	if (!image && len) {
		return ipu_errorf(err, errlen, IPU_E_INVAL, "no image");
	}
	if (len > IPUX_MAX_IMAGE_SIZE) {
		return ipu_errorf(err, errlen, IPUX_E_LIMIT, "image of %zu bytes is over the 4 GiB limit", len);
	}
	x = calloc(1, sizeof(*x));
	if (x)
		/* our own copy: the caller's buffer may change under us (guest memory) */
		x->image = malloc(len ? len : 1);
	if (!x || !x->image) {
		free(x);
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory for a copy of the %zu-byte executable", len);
	}
	if (len)
		memcpy(x->image, image, len);
	x->len = len;

	rc = check_header(x, dev_tiles, dev_tile_mem, err, errlen);
	if (!rc)
		rc = parse_sections(x, err, errlen);
	if (!rc)
		rc = check_streams(x, err, errlen);
	if (!rc)
		rc = ipu_exe_bind_custom(x, custom, err, errlen);
	if (!rc) {
		x->vcodelet = calloc(x->nvertices ? x->nvertices : 1, sizeof(*x->vcodelet));
		x->vcost = calloc(x->nvertices ? x->nvertices : 1, sizeof(*x->vcost));
		if (!x->vcodelet || !x->vcost)
			rc = IPU_E_NOMEM;
	}
	for (i = 0; !rc && i < x->nvertices; i++)
		rc = check_vertex(x, i, err, errlen);
	if (!rc)
		rc = plan_compute_sets(x, err, errlen);
	if (!rc)
		rc = plan_exchanges(x, err, errlen);
	if (!rc)
		rc = plan_stream_copies(x, err, errlen);
	if (!rc)
		rc = check_inits(x, err, errlen);
	if (!rc)
		rc = check_programs(x, err, errlen);
	if (!rc)
		rc = ipu_plan_fusion(x);
	if (rc) {
		if (rc == IPU_E_NOMEM)
			ipu_errorf(err, errlen, rc, "out of memory while verifying the executable");
		ipu_exe_free(x);
		return rc;
	}
	*out = x;
	return 0;
}

int ipu_exe_verify(const void *image, size_t len, uint32_t dev_tiles,
		   uint32_t dev_tile_mem, char *err, size_t errlen)
{
	return ipu_exe_verify_custom(image, len, dev_tiles, dev_tile_mem, NULL, err, errlen);
}

int ipu_exe_verify_custom(const void *image, size_t len, uint32_t dev_tiles,
			  uint32_t dev_tile_mem, const struct ipu_custom_table *custom,
			  char *err, size_t errlen)
{
	struct ipu_exe *x;
	int rc = ipu_exe_parse(image, len, dev_tiles, dev_tile_mem, custom, &x, err, errlen);

	ipu_exe_free(x);
	return rc;
}
