// SPDX-License-Identifier: MIT
/*
 * ipuef_group_verify.c - a group model checked against the device it will
 * run on before any IPU loads: both ends of every link, read from the
 * executables themselves (their stream tables and the tile pieces their
 * stream copies touch), so that a link the compiler got wrong is refused
 * naming the link rather than faulting or waiting forever on the device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/engine.h"
#include "ipu/ipux.h"
#include "ipuef_internal.h"

struct exe_view {
	const uint8_t *img;
	size_t len;
	uint32_t nstreams, ncopies, nregions;
	const uint8_t *streams, *copies, *regions;	/* records, read with memcpy */
};

static int section(const uint8_t *img, size_t len, const struct ipux_header *h, uint32_t type,
		   size_t rec, const uint8_t **out, uint32_t *count)
{
	*out = NULL;
	*count = 0;
	for (uint32_t i = 0; i < h->section_count; i++) {
		struct ipux_section s;
		uint64_t at = (uint64_t)h->section_offset + 16ull * i;

		if (at + sizeof(s) > len)
			return -1;
		memcpy(&s, img + at, sizeof(s));
		if (s.type != type)
			continue;
		if ((uint64_t)s.offset + s.size > len || (uint64_t)s.count * rec != s.size)
			return -1;
		*out = img + s.offset;
		*count = s.count;
		return 0;
	}
	return 0;
}

static int view(uint32_t ipu, const void *img, size_t len, struct exe_view *v, char *err,
		size_t errlen)
{
	struct ipux_header h;

	memset(v, 0, sizeof(*v));
	v->img = img;
	v->len = len;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, img, sizeof(h));
	if (h.magic != IPUX_MAGIC || h.version_major != IPUX_VERSION_MAJOR ||
	    (uint64_t)h.section_offset + 16ull * h.section_count > len)
		goto bad;
	if (section(img, len, &h, IPUX_SEC_STREAMS, sizeof(struct ipux_stream), &v->streams,
		    &v->nstreams) ||
	    section(img, len, &h, IPUX_SEC_STREAM_COPIES, sizeof(struct ipux_stream_copy),
		    &v->copies, &v->ncopies) ||
	    section(img, len, &h, IPUX_SEC_REGIONS, sizeof(struct ipux_region), &v->regions,
		    &v->nregions))
		goto bad;
	return 0;
bad:
	return ipu_errorf(err, errlen, IPUEF_E_METADATA,
			  "IPU %u: its Executable is not an engine executable of format %u.x with a valid section table",
			  ipu, IPUX_VERSION_MAJOR);
}

static struct ipux_stream stream_at(const struct exe_view *v, uint32_t s)
{
	struct ipux_stream st;

	memcpy(&st, v->streams + (size_t)s * sizeof(st), sizeof(st));
	return st;
}

/*
 * Every tile piece a stream copy of stream s moves lies within the
 * device's tiles and tile memory; *tile etc. name the first that does not.
 */
static int pieces_inside(const struct exe_view *v, uint32_t s, uint32_t tiles, uint32_t mem,
			 struct ipux_region *bad)
{
	for (uint32_t c = 0; c < v->ncopies; c++) {
		struct ipux_stream_copy sc;

		memcpy(&sc, v->copies + (size_t)c * sizeof(sc), sizeof(sc));
		if (sc.stream != s)
			continue;
		if ((uint64_t)sc.first_region + sc.num_regions > v->nregions) {
			*bad = (struct ipux_region){ UINT32_MAX, 0, 0 };
			return -1;
		}
		for (uint32_t r = 0; r < sc.num_regions; r++) {
			struct ipux_region rg;

			memcpy(&rg, v->regions + (size_t)(sc.first_region + r) * sizeof(rg),
			       sizeof(rg));
			if (rg.tile >= tiles || (uint64_t)rg.offset + rg.bytes > mem) {
				*bad = rg;
				return -1;
			}
		}
	}
	return 0;
}

/* One end of a link: the stream's direction, size and tile pieces. */
static int check_end(const struct ipuef_link *l, uint32_t li, int receiver,
		     const struct exe_view *v, uint32_t tiles, uint32_t mem, char *err,
		     size_t errlen)
{
	uint32_t ipu = receiver ? l->dst_ipu : l->src_ipu;
	uint32_t s = receiver ? l->dst_stream : l->src_stream;
	uint32_t want = receiver ? IPUX_STREAM_H2D : IPUX_STREAM_D2H;
	struct ipux_stream st = stream_at(v, s);
	struct ipux_region bad;

	if (st.dir != want || st.buffer_bytes != l->bytes)
		return ipu_errorf(err, errlen, IPUEF_E_METADATA,
				  "link %u '%s': IPU %u stream %u is %s of %u bytes; the link's %s needs %s of %llu",
				  li, l->name, ipu, s,
				  st.dir == IPUX_STREAM_D2H ? "device-to-host" : "host-to-device",
				  st.buffer_bytes, receiver ? "receiver" : "sender",
				  receiver ? "host-to-device" : "device-to-host",
				  (unsigned long long)l->bytes);
	if (pieces_inside(v, s, tiles, mem, &bad)) {
		if (bad.tile == UINT32_MAX)
			return ipu_errorf(err, errlen, IPUEF_E_METADATA,
					  "link %u '%s': IPU %u stream %u: a stream copy's regions are past the executable's region table",
					  li, l->name, ipu, s);
		return ipu_errorf(err, errlen, IPUEF_E_METADATA,
				  "link %u '%s': the %s, IPU %u, %s tile %u bytes [%u, %llu), outside its %u tiles x %u bytes",
				  li, l->name, receiver ? "receiver" : "sender", ipu,
				  receiver ? "writes" : "reads", bad.tile, bad.offset,
				  (unsigned long long)bad.offset + bad.bytes, tiles, mem);
	}
	return 0;
}

int ipuef_group_verify(const struct ipuef_file *f, uint32_t dev_tiles, uint32_t dev_tile_mem,
		       char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	const struct ipuef_group *g = m->group;
	struct exe_view *v;
	int rc = 0;

	if (!g)
		return 0;
	v = calloc(g->num_ipus, sizeof(*v));
	if (!v)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	for (uint32_t k = 0; k < g->num_ipus && !rc; k++) {
		size_t len;
		const void *img = ipuef_group_executable(f, k, &len);

		rc = view(k, img, len, &v[k], err, errlen);
		if (!rc && v[k].nstreams != g->num_streams[k])
			rc = ipu_errorf(err, errlen, IPUEF_E_METADATA,
					"IPU %u: its executable has %u streams, the group table says %u",
					k, v[k].nstreams, g->num_streams[k]);
	}
	for (uint32_t i = 0; i < g->num_links && !rc; i++) {
		const struct ipuef_link *l = &g->links[i];

		rc = check_end(l, i, 0, &v[l->src_ipu], dev_tiles, dev_tile_mem, err, errlen);
		if (!rc)
			rc = check_end(l, i, 1, &v[l->dst_ipu], dev_tiles, dev_tile_mem, err,
				       errlen);
	}
	for (uint32_t a = 0; a < m->num_anchors && !rc; a++) {
		const struct ipuef_anchor *an = &m->anchors[a];
		uint32_t s, k = ipuef_anchor_ipu(m, an, &s);
		struct ipux_stream st = stream_at(&v[k], s);
		uint32_t want = an->direction == IPUEF_OUTPUT ? IPUX_STREAM_D2H : IPUX_STREAM_H2D;

		if (st.dir != want || st.buffer_bytes != ipuef_anchor_bytes(an))
			rc = ipu_errorf(err, errlen, IPUEF_E_METADATA,
					"anchor '%s' (%s, %llu bytes) does not match IPU %u stream %u (%s, %u bytes)",
					an->name, an->direction == IPUEF_OUTPUT ? "output" : "input",
					(unsigned long long)ipuef_anchor_bytes(an), k, s,
					st.dir == IPUX_STREAM_D2H ? "device to host" : "host to device",
					st.buffer_bytes);
	}
	/* The metadata's rules already give every stream at most one user
	 * (ipuef_group_validate); here every stream has one. */
	for (uint32_t k = 0, base = 0; k < g->num_ipus && !rc; base += g->num_streams[k++])
		for (uint32_t s = 0; s < g->num_streams[k] && !rc; s++) {
			int fed = 0;

			for (uint32_t a = 0; a < m->num_anchors && !fed; a++)
				fed = m->anchors[a].stream_id == base + s;
			for (uint32_t i = 0; i < g->num_links && !fed; i++)
				fed = (g->links[i].src_ipu == k && g->links[i].src_stream == s) ||
				      (g->links[i].dst_ipu == k && g->links[i].dst_stream == s);
			if (!fed)
				rc = ipu_errorf(err, errlen, IPUEF_E_METADATA,
						"IPU %u stream %u is neither an anchor's nor a link's: a program using it would wait forever",
						k, s);
		}
	for (uint32_t k = 0; k < g->num_ipus && !rc; k++) {
		char m2[256];
		int r = ipu_exe_verify(v[k].img, v[k].len, dev_tiles, dev_tile_mem, m2, sizeof(m2));

		if (r)
			rc = ipu_errorf(err, errlen, r, "IPU %u: its executable does not verify for %u tiles x %u bytes: %s",
					k, dev_tiles, dev_tile_mem, m2);
	}
	free(v);
	return rc;
}
