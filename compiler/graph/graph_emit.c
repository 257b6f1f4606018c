// SPDX-License-Identifier: MIT
/*
 * graph_emit.c - lay out tile memory and write the executable image.
 *
 * Tile memory is laid out by graph_alloc.c (with or without reuse by
 * liveness).  The image is verified with the engine's own verifier before it is returned,
 * so a builder bug surfaces here with the verifier's message rather than
 * on the device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/engine.h"
#include "graph_alloc.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static int buf_add(struct ipu_graph *g, struct buf *b, const void *data, size_t len)
{
	if (b->n + len > b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		void *np;

		while (ncap < b->n + len)
			ncap *= 2;
		np = realloc(b->p, ncap);
		if (!np)
			return g_fail(g, "out of memory writing the image (%zu bytes)", ncap);
		b->p = np;
		b->cap = ncap;
	}
	if (len)
		memcpy(b->p + b->n, data, len);
	b->n += len;
	return 0;
}

/* Byte location of element `elem` of t (which must be mapped). */
static int locate(struct ipu_graph *g, ipu_tensor ti, uint64_t elem, uint32_t *tile,
		  uint32_t *off, uint64_t *left)
{
	struct g_tensor *t = g_tensor(g, ti);
	const struct g_interval *iv = g_find(t, elem);

	if (!iv)
		return g_fail(g, "tensor '%s': element %llu is not mapped", t->name,
			      (unsigned long long)elem);
	*tile = iv->tile;
	*off = iv->offset + (uint32_t)((elem - iv->begin) * t->esize);
	*left = iv->end - elem;
	return 0;
}

/* Split src -> dst into per-tile copy records. */
static int emit_copy(struct ipu_graph *g, const struct g_copy *c, struct buf *out,
		     uint64_t *bytes)
{
	uint32_t es = g_tensor(g, c->src.t)->esize;
	uint64_t done = 0;

	while (done < c->src.count) {
		struct ipux_copy rec;
		uint64_t ls, ld, n;

		if (locate(g, c->src.t, c->src.begin + done, &rec.src_tile, &rec.src_offset, &ls) ||
		    locate(g, c->dst.t, c->dst.begin + done, &rec.dst_tile, &rec.dst_offset, &ld))
			return -1;
		n = c->src.count - done;
		if (ls < n)
			n = ls;
		if (ld < n)
			n = ld;
		rec.bytes = (uint32_t)(n * es);
		if (rec.src_tile != rec.dst_tile || rec.src_offset != rec.dst_offset) {
			if (buf_add(g, out, &rec, sizeof(rec)))
				return -1;
			*bytes += rec.bytes;
		}
		done += n;
	}
	return 0;
}

static int emit_regions(struct ipu_graph *g, struct ipu_slice s, struct buf *out,
			uint32_t *nregions)
{
	uint32_t es = g_tensor(g, s.t)->esize;
	uint64_t done = 0;

	while (done < s.count) {
		struct ipux_region r;
		uint64_t left, n;

		if (locate(g, s.t, s.begin + done, &r.tile, &r.offset, &left))
			return -1;
		n = s.count - done < left ? s.count - done : left;
		r.bytes = (uint32_t)(n * es);
		if (buf_add(g, out, &r, sizeof(r)))
			return -1;
		(*nregions)++;
		done += n;
	}
	return 0;
}

static int cmp_vertex_cs(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

enum { NSEC = IPUX_SEC_MAX };

int ipu_graph_compile(struct ipu_graph *g, void **image, size_t *len,
		      struct ipu_graph_stats *stats)
{
	struct buf sec[NSEC + 1] = { { 0 } };
	struct buf img = { 0 };
	struct ipu_graph_stats st = { 0 };
	uint32_t *vorder = NULL;
	uint32_t i, j, max_tile = 0, nsec = 0;
	uint64_t tile_mem;
	int rc = -1;

	*image = NULL;
	*len = 0;
	if (g->error)
		return -1;
	if (!g->n_programs)
		return g_fail(g, "no programs: add at least one with ipu_graph_add_program");
	vorder = malloc((g->n_vertices ? g->n_vertices : 1) * 2 * sizeof(*vorder));
	if (!vorder) {
		g_fail(g, "out of memory");
		goto out;
	}
	if (g_layout(g, &st))
		goto out;
	for (i = 0; i < g->n_tensors; i++)
		for (j = 0; j < g->tensors[i].niv; j++)
			if (g->tensors[i].iv[j].tile > max_tile)
				max_tile = g->tensors[i].iv[j].tile;

	/* streams */
	for (i = 0; i < g->n_streams; i++) {
		struct ipux_stream s = { g->streams[i].dir, g->streams[i].bytes };

		if (buf_add(g, &sec[IPUX_SEC_STREAMS], &s, sizeof(s)))
			goto out;
	}
	/* vertices grouped by compute set, creation order within a set */
	for (i = 0; i < g->n_vertices; i++) {
		vorder[2 * i] = g->vertices[i].cs;
		vorder[2 * i + 1] = i;
	}
	qsort(vorder, g->n_vertices, 2 * sizeof(*vorder), cmp_vertex_cs);
	{
		uint32_t nops = 0, cs = 0, k = 0;

		for (cs = 0; cs < g->n_cs_names; cs++) {
			struct ipux_compute_set rec = { k, 0 };

			while (k < g->n_vertices && vorder[2 * k] == cs) {
				const struct g_vertex *v = &g->vertices[vorder[2 * k + 1]];
				struct ipux_vertex vr = { 0 };

				vr.tile = v->tile;
				vr.codelet = v->codelet;
				vr.first_operand = nops;
				vr.num_operands = (uint16_t)v->nops;
				vr.num_params = (uint16_t)v->nparams;
				vr.first_param = v->first_param;
				for (j = 0; j < v->nops; j++) {
					const struct ipu_slice *s = &g->ops[v->first_op + j].s;
					struct ipux_operand o = { 0 };
					uint64_t left;
					uint32_t tile;

					if (locate(g, s->t, s->begin, &tile, &o.offset, &left))
						goto out;
					o.count = (uint32_t)s->count;
					o.dtype = (uint8_t)g_tensor(g, s->t)->dtype;
					if (buf_add(g, &sec[IPUX_SEC_OPERANDS], &o, sizeof(o)))
						goto out;
					nops++;
				}
				if (buf_add(g, &sec[IPUX_SEC_VERTICES], &vr, sizeof(vr)))
					goto out;
				rec.num_vertices++;
				k++;
			}
			if (buf_add(g, &sec[IPUX_SEC_COMPUTE_SETS], &rec, sizeof(rec)))
				goto out;
		}
		if (buf_add(g, &sec[IPUX_SEC_PARAMS], g->params, (size_t)g->n_params * 4))
			goto out;
	}
	/* exchanges */
	for (i = 0; i < g->n_exchanges; i++) {
		struct ipux_exchange rec;

		rec.first_copy = (uint32_t)(sec[IPUX_SEC_COPIES].n / sizeof(struct ipux_copy));
		for (j = 0; j < g->exchanges[i].n; j++)
			if (emit_copy(g, &g->copies[g->exchanges[i].idx[j]], &sec[IPUX_SEC_COPIES],
				      &st.exchange_bytes))
				goto out;
		rec.num_copies = (uint32_t)(sec[IPUX_SEC_COPIES].n / sizeof(struct ipux_copy)) -
				 rec.first_copy;
		if (buf_add(g, &sec[IPUX_SEC_EXCHANGES], &rec, sizeof(rec)))
			goto out;
	}
	/* stream copies */
	for (i = 0; i < g->n_scs; i++) {
		struct ipux_stream_copy rec = { g->scs[i].stream, 0, 0 };

		rec.first_region = (uint32_t)(sec[IPUX_SEC_REGIONS].n / sizeof(struct ipux_region));
		for (j = 0; j < g->scs[i].nslices; j++)
			if (emit_regions(g, g->sc_slices[g->scs[i].first_slice + j],
					 &sec[IPUX_SEC_REGIONS], &rec.num_regions))
				goto out;
		if (buf_add(g, &sec[IPUX_SEC_STREAM_COPIES], &rec, sizeof(rec)))
			goto out;
	}
	/* steps and their children */
	for (i = 0; i < g->n_steps; i++) {
		const struct g_step *s = &g->steps[i];
		struct ipux_step rec = { 0 };
		uint32_t first = (uint32_t)(sec[IPUX_SEC_CHILDREN].n / 4);

		rec.kind = s->kind;
		switch (s->kind) {
		case IPUX_STEP_SEQUENCE:
			rec.a = first;
			rec.b = s->nkids;
			break;
		case IPUX_STEP_SWITCH: {
			uint64_t left;

			if (locate(g, s->selector, 0, &rec.a, &rec.b, &left))
				goto out;
			rec.c = first;
			rec.d = s->nkids;
			break;
		}
		default:
			rec.a = s->a;
			rec.b = s->b;
		}
		if (buf_add(g, &sec[IPUX_SEC_CHILDREN], s->kids, (size_t)s->nkids * 4) ||
		    buf_add(g, &sec[IPUX_SEC_STEPS], &rec, sizeof(rec)))
			goto out;
	}
	if (buf_add(g, &sec[IPUX_SEC_PROGRAMS], g->programs, (size_t)g->n_programs * 4))
		goto out;
	/* initial values */
	for (i = 0; i < g->n_tensors; i++) {
		const struct g_tensor *t = &g->tensors[i];

		if (!t->init)
			continue;
		for (j = 0; j < t->niv; j++) {
			const struct g_interval *iv = &t->iv[j];
			struct ipux_init rec;
			static const uint8_t zero[4];
			size_t pad = (4 - sec[IPUX_SEC_DATA].n % 4) % 4;

			if (buf_add(g, &sec[IPUX_SEC_DATA], zero, pad))
				goto out;
			rec.tile = iv->tile;
			rec.offset = iv->offset;
			rec.bytes = (uint32_t)((iv->end - iv->begin) * t->esize);
			rec.data_offset = (uint32_t)sec[IPUX_SEC_DATA].n;
			if (buf_add(g, &sec[IPUX_SEC_DATA], t->init + iv->begin * t->esize, rec.bytes) ||
			    buf_add(g, &sec[IPUX_SEC_INITS], &rec, sizeof(rec)))
				goto out;
		}
	}

	if (buf_add(g, &sec[IPUX_SEC_CUSTOM], g->customs, (size_t)g->n_customs * sizeof(*g->customs)))
		goto out;
	/* assemble: header, section table, payloads (4-aligned) */
	{
		static const uint32_t recsize[NSEC + 1] = {
			[IPUX_SEC_STREAMS] = sizeof(struct ipux_stream),
			[IPUX_SEC_VERTICES] = sizeof(struct ipux_vertex),
			[IPUX_SEC_OPERANDS] = sizeof(struct ipux_operand),
			[IPUX_SEC_PARAMS] = 4,
			[IPUX_SEC_COMPUTE_SETS] = sizeof(struct ipux_compute_set),
			[IPUX_SEC_EXCHANGES] = sizeof(struct ipux_exchange),
			[IPUX_SEC_COPIES] = sizeof(struct ipux_copy),
			[IPUX_SEC_STREAM_COPIES] = sizeof(struct ipux_stream_copy),
			[IPUX_SEC_REGIONS] = sizeof(struct ipux_region),
			[IPUX_SEC_STEPS] = sizeof(struct ipux_step),
			[IPUX_SEC_CHILDREN] = 4,
			[IPUX_SEC_PROGRAMS] = 4,
			[IPUX_SEC_INITS] = sizeof(struct ipux_init),
			[IPUX_SEC_DATA] = 1,
			[IPUX_SEC_CUSTOM] = sizeof(struct ipux_custom),
		};
		struct ipux_header h = { 0 };
		struct ipux_section tab[NSEC];
		uint64_t off;

		for (i = 1; i <= NSEC; i++)
			if (sec[i].n || i == IPUX_SEC_STEPS || i == IPUX_SEC_PROGRAMS)
				nsec++;
		off = sizeof(h) + (uint64_t)nsec * sizeof(struct ipux_section);
		for (i = 1, j = 0; i <= NSEC; i++) {
			if (!(sec[i].n || i == IPUX_SEC_STEPS || i == IPUX_SEC_PROGRAMS))
				continue;
			off = (off + 3) & ~(uint64_t)3;
			tab[j].type = i;
			tab[j].count = (uint32_t)(sec[i].n / recsize[i]);
			tab[j].offset = (uint32_t)off;
			tab[j].size = (uint32_t)sec[i].n;
			off += sec[i].n;
			j++;
		}
		if (off > IPUX_MAX_IMAGE_SIZE) {
			g_fail(g, "image of %llu bytes exceeds the 4 GiB format limit",
			       (unsigned long long)off);
			goto out;
		}
		tile_mem = (st.mem_max + 63) / 64 * 64;
		if (!tile_mem)
			tile_mem = 64;
		h.magic = IPUX_MAGIC;
		h.version_major = IPUX_VERSION_MAJOR;
		/* 1.0 unless the image needs 1.1's CUSTOM section: devices of
		 * 1.0 keep running what they can */
		h.version_minor = g->n_customs ? 1 : 0;
		h.header_size = sizeof(h);
		h.total_size = (uint32_t)off;
		h.num_tiles = max_tile + 1;
		h.tile_mem = (uint32_t)tile_mem;
		h.section_count = nsec;
		h.section_offset = sizeof(h);
		if (buf_add(g, &img, &h, sizeof(h)) ||
		    buf_add(g, &img, tab, (size_t)nsec * sizeof(*tab)))
			goto out;
		for (i = 0; i < nsec; i++) {
			static const uint8_t zero[4];

			if (buf_add(g, &img, zero, tab[i].offset - img.n) ||
			    buf_add(g, &img, sec[tab[i].type].p, sec[tab[i].type].n))
				goto out;
		}
		((struct ipux_header *)img.p)->checksum = ipu_exe_checksum(img.p, img.n);
	}
	{
		char err[512];
		int vr = ipu_exe_verify_custom(img.p, img.n, g->num_tiles, g->tile_mem, g->custom,
					       err, sizeof(err));

		if (vr) {
			g_fail(g, "the built executable does not verify: %s: %s",
			       ipu_err_name(vr), err);
			goto out;
		}
	}
	st.compute_sets = g->n_cs_names;
	st.vertices = g->n_vertices;
	st.exchanges = g->n_exchanges;
	st.copies = (uint32_t)(sec[IPUX_SEC_COPIES].n / sizeof(struct ipux_copy));
	st.steps = g->n_steps;
	st.streams = g->n_streams;
	st.image_bytes = img.n;
	if (stats)
		*stats = st;
	*image = img.p;
	*len = img.n;
	img.p = NULL;
	rc = 0;
out:
	for (i = 0; i <= NSEC; i++)
		free(sec[i].p);
	free(img.p);
	free(vorder);
	return rc;
}

int ipu_graph_tensor_location(const struct ipu_graph *g, ipu_tensor ti, uint32_t k,
			      uint32_t *tile, uint64_t *begin, uint64_t *end,
			      uint32_t *offset)
{
	struct g_tensor *t = g_tensor(g, ti);

	if (!t || k >= t->niv)
		return -1;
	if (!t->sorted)
		g_find(t, 0);
	*tile = t->iv[k].tile;
	*begin = t->iv[k].begin;
	*end = t->iv[k].end;
	*offset = t->iv[k].offset;
	return 0;
}
