// SPDX-License-Identifier: MIT
/*
 * ipuef_group.c - the group table of Metadata version 3: a model split
 * over several IPUs (Documentation/runtime/ipuef-format.md).  Layout,
 * after version 2's state table, all little-endian:
 *
 *   u16 num_ipus (2..64), u16 reserved (0)
 *   u32 num_streams[num_ipus]
 *   u32 num_links, then per link:
 *       str name, u16 src_ipu, u16 dst_ipu, u32 src_stream, u32 dst_stream,
 *       u64 bytes
 *   u8 pipelined (0/1), u8 reserved[3] (0), u32 micro_batches (>= 1)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipuef_internal.h"

#define MIN_LINK_BYTES 22u	/* empty name + fixed fields */

void ipuef_group_free(struct ipuef_meta_owned *o)
{
	free(o->group);
	free(o->group_streams);
	free(o->links);
	free(o->link_names);
	o->group = NULL;
	o->group_streams = NULL;
	o->links = NULL;
	o->link_names = NULL;
}

uint32_t ipuef_anchor_ipu(const struct ipuef_metadata *m, const struct ipuef_anchor *a,
			  uint32_t *stream)
{
	const struct ipuef_group *g = m->group;
	uint32_t s = a->stream_id;

	if (g)
		for (uint32_t k = 0; k < g->num_ipus; k++) {
			if (s < g->num_streams[k]) {
				*stream = s;
				return k;
			}
			s -= g->num_streams[k];
		}
	*stream = a->stream_id;
	return 0;
}

__attribute__((format(printf, 5, 6)))
static int link_err(char *err, size_t errlen, uint32_t i, const struct ipuef_link *l,
		    const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ipu_errorf(err, errlen, IPUEF_E_METADATA,
			  "metadata: link %u '%s' (IPU %u stream %u -> IPU %u stream %u): %s", i,
			  l->name ? l->name : "", l->src_ipu, l->src_stream, l->dst_ipu,
			  l->dst_stream, what);
}

int ipuef_group_validate(const struct ipuef_metadata *m, char *err, size_t errlen)
{
	const struct ipuef_group *g = m->group;
	uint32_t total = 0, *base;
	uint8_t **used;
	int rc = 0;

	if (!g)
		return 0;
	if (g->num_ipus < 2 || g->num_ipus > IPUEF_MAX_GROUP_IPUS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "metadata: a group of %u IPUs: 2 to %u", g->num_ipus,
				  IPUEF_MAX_GROUP_IPUS);
	if (!g->num_streams || (g->num_links && !g->links))
		return ipu_errorf(err, errlen, IPUEF_E_INVAL, "metadata: the group has no arrays");
	if (g->num_links > IPUEF_MAX_LINKS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT, "metadata: %u links, limit %u",
				  g->num_links, IPUEF_MAX_LINKS);
	if (g->pipelined > 1 || !g->micro_batches)
		return ipu_errorf(err, errlen, IPUEF_E_METADATA,
				  "metadata: pipelined %u (0 or 1), micro_batches %u (at least 1)",
				  g->pipelined, g->micro_batches);
	if (m->num_states)
		return ipu_errorf(err, errlen, IPUEF_E_METADATA,
				  "metadata: a group of IPUs with %u states: state is kept on one IPU only",
				  m->num_states);
	for (uint32_t k = 0; k < g->num_ipus; k++) {
		if (g->num_streams[k] > IPUEF_MAX_STREAMS - total)
			return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
					  "metadata: the group's IPUs have more than %u streams (IPU %u)",
					  IPUEF_MAX_STREAMS, k);
		total += g->num_streams[k];
	}
	for (uint32_t i = 0; i < m->num_anchors; i++)
		if (m->anchors[i].stream_id >= total)
			return ipu_errorf(err, errlen, IPUEF_E_ANCHOR_STREAM,
					  "metadata: anchor '%s': stream id %u, the group's IPUs have %u streams",
					  m->anchors[i].name, m->anchors[i].stream_id, total);
	/* Each stream is one end of one link at most, and no anchor's. */
	base = calloc(g->num_ipus, sizeof(*base));
	used = calloc(1, sizeof(*used));
	if (!base || !used || !(*used = calloc((size_t)total + 1, 1))) {
		free(base);
		free(used);
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "metadata: out of memory");
	}
	for (uint32_t k = 1; k < g->num_ipus; k++)
		base[k] = base[k - 1] + g->num_streams[k - 1];
	for (uint32_t i = 0; i < m->num_anchors; i++)
		(*used)[m->anchors[i].stream_id] = 1;
	for (uint32_t i = 0; i < g->num_links && !rc; i++) {
		const struct ipuef_link *l = &g->links[i];

		if (!l->name) {
			rc = ipu_errorf(err, errlen, IPUEF_E_INVAL, "metadata: link %u has no name", i);
			break;
		}
		rc = ipuef_check_string("metadata: link name", (const uint8_t *)l->name,
					strlen(l->name), IPUEF_MAX_NAME, false, err, errlen);
		for (uint32_t j = 0; j < i && !rc; j++)
			if (!strcmp(g->links[j].name, l->name))
				rc = link_err(err, errlen, i, l, "the name of link %u too", j);
		if (rc)
			break;
		if (l->src_ipu >= l->dst_ipu || l->dst_ipu >= g->num_ipus)
			rc = link_err(err, errlen, i, l,
				      "a link goes forward, to a later IPU of the %u",
				      g->num_ipus);
		else if (l->src_stream >= g->num_streams[l->src_ipu])
			rc = link_err(err, errlen, i, l, "the sender has %u streams",
				      g->num_streams[l->src_ipu]);
		else if (l->dst_stream >= g->num_streams[l->dst_ipu])
			rc = link_err(err, errlen, i, l, "the receiver has %u streams",
				      g->num_streams[l->dst_ipu]);
		else if (!l->bytes || l->bytes > UINT32_MAX)
			rc = link_err(err, errlen, i, l, "%llu bytes: 1 to 4 GiB - 1",
				      (unsigned long long)l->bytes);
		else if ((*used)[base[l->src_ipu] + l->src_stream])
			rc = link_err(err, errlen, i, l,
				      "the sender's stream is already an anchor's or a link's");
		else if ((*used)[base[l->dst_ipu] + l->dst_stream])
			rc = link_err(err, errlen, i, l,
				      "the receiver's stream is already an anchor's or a link's");
		if (!rc) {
			(*used)[base[l->src_ipu] + l->src_stream] = 1;
			(*used)[base[l->dst_ipu] + l->dst_stream] = 1;
		}
	}
	free(*used);
	free(used);
	free(base);
	return rc;
}

int ipuef_group_copy(struct ipuef_meta_owned *dst, const struct ipuef_metadata *src,
		     char *err, size_t errlen)
{
	const struct ipuef_group *g = src->group;
	size_t names = 1;
	char *p;

	if (!g)
		return 0;
	for (uint32_t i = 0; i < g->num_links; i++)
		names += strlen(g->links[i].name) + 1;
	dst->group = calloc(1, sizeof(*dst->group));
	dst->group_streams = calloc(g->num_ipus, sizeof(*dst->group_streams));
	dst->links = calloc((size_t)g->num_links + 1, sizeof(*dst->links));
	dst->link_names = p = malloc(names);
	if (!dst->group || !dst->group_streams || !dst->links || !p)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM,
				  "metadata: out of memory copying the group of %u IPUs", g->num_ipus);
	*dst->group = *g;
	memcpy(dst->group_streams, g->num_streams, g->num_ipus * sizeof(*g->num_streams));
	for (uint32_t i = 0; i < g->num_links; i++) {
		size_t len = strlen(g->links[i].name) + 1;

		dst->links[i] = g->links[i];
		memcpy(p, g->links[i].name, len);
		dst->links[i].name = p;
		p += len;
	}
	dst->group->num_streams = dst->group_streams;
	dst->group->links = dst->links;
	dst->m.group = dst->group;
	return 0;
}

uint64_t ipuef_group_size(const struct ipuef_metadata *m)
{
	const struct ipuef_group *g = m->group;
	uint64_t n = 4 + 4ull * g->num_ipus + 4 + 8;

	for (uint32_t i = 0; i < g->num_links; i++)
		n += 2 + strlen(g->links[i].name) + 20;
	return n;
}

uint8_t *ipuef_group_encode(const struct ipuef_metadata *m, uint8_t *o)
{
	const struct ipuef_group *g = m->group;

	put_le16(o, (uint16_t)g->num_ipus);
	put_le16(o + 2, 0);
	o += 4;
	for (uint32_t k = 0; k < g->num_ipus; k++, o += 4)
		put_le32(o, g->num_streams[k]);
	put_le32(o, g->num_links);
	o += 4;
	for (uint32_t i = 0; i < g->num_links; i++) {
		const struct ipuef_link *l = &g->links[i];
		size_t len = strlen(l->name);

		put_le16(o, (uint16_t)len);
		memcpy(o + 2, l->name, len);
		o += 2 + len;
		put_le16(o, (uint16_t)l->src_ipu);
		put_le16(o + 2, (uint16_t)l->dst_ipu);
		put_le32(o + 4, l->src_stream);
		put_le32(o + 8, l->dst_stream);
		put_le64(o + 12, l->bytes);
		o += 20;
	}
	o[0] = (uint8_t)g->pipelined;
	o[1] = o[2] = o[3] = 0;
	put_le32(o + 4, g->micro_batches);
	return o + 8;
}

static int short_by(size_t have, uint64_t want, const char *what, char *err, size_t errlen)
{
	if (have >= want)
		return 0;
	return ipu_errorf(err, errlen, IPUEF_E_METADATA,
			  "metadata: the group table's %s needs %llu bytes, only %zu left", what,
			  (unsigned long long)want, have);
}

/* Decoded here; the rules between fields are ipuef_group_validate's, which
 * the Metadata's validation runs once the whole payload is read. */
int ipuef_group_decode(struct ipuef_meta_owned *o, const uint8_t *p, size_t len,
		       size_t *used, char *err, size_t errlen)
{
	struct ipuef_group *g;
	size_t pos = 0, names = 1;
	uint32_t n, nl;
	char *sp;
	int rc;

	if ((rc = short_by(len, 4, "IPU count", err, errlen)))
		return rc;
	n = get_le16(p);
	if (get_le16(p + 2))
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "metadata: the group table's reserved field is not 0");
	if (n < 2 || n > IPUEF_MAX_GROUP_IPUS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT,
				  "metadata: a group of %u IPUs: 2 to %u", n, IPUEF_MAX_GROUP_IPUS);
	pos = 4;
	if ((rc = short_by(len - pos, 4ull * n + 4, "stream counts", err, errlen)))
		return rc;
	o->group = g = calloc(1, sizeof(*g));
	o->group_streams = calloc(n, sizeof(*o->group_streams));
	if (!g || !o->group_streams)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "metadata: out of memory");
	g->num_ipus = n;
	for (uint32_t k = 0; k < n; k++, pos += 4)
		o->group_streams[k] = get_le32(p + pos);
	g->num_streams = o->group_streams;
	g->num_links = get_le32(p + pos);
	pos += 4;
	if (g->num_links > IPUEF_MAX_LINKS)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT, "metadata: %u links, limit %u",
				  g->num_links, IPUEF_MAX_LINKS);
	if ((rc = short_by(len - pos, (uint64_t)g->num_links * MIN_LINK_BYTES, "link table", err,
			   errlen)))
		return rc;
	/* First pass: bounds and the names' bytes. */
	for (uint32_t i = 0, q = (uint32_t)pos; i < g->num_links; i++) {
		if ((rc = short_by(len - q, 2, "link name", err, errlen)))
			return rc;
		nl = get_le16(p + q);
		if ((rc = short_by(len - q - 2, nl + 20u, "link", err, errlen)))
			return rc;
		rc = ipuef_check_string("metadata: link name", p + q + 2, nl, IPUEF_MAX_NAME, false,
					err, errlen);
		if (rc)
			return rc;
		names += nl + 1;
		q += 2 + nl + 20;
	}
	o->links = calloc((size_t)g->num_links + 1, sizeof(*o->links));
	o->link_names = sp = malloc(names);
	if (!o->links || !sp)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "metadata: out of memory for %u links",
				  g->num_links);
	for (uint32_t i = 0; i < g->num_links; i++) {
		struct ipuef_link *l = &o->links[i];

		nl = get_le16(p + pos);
		memcpy(sp, p + pos + 2, nl);
		sp[nl] = 0;
		l->name = sp;
		sp += nl + 1;
		pos += 2 + nl;
		l->src_ipu = get_le16(p + pos);
		l->dst_ipu = get_le16(p + pos + 2);
		l->src_stream = get_le32(p + pos + 4);
		l->dst_stream = get_le32(p + pos + 8);
		l->bytes = get_le64(p + pos + 12);
		pos += 20;
	}
	g->links = o->links;
	if ((rc = short_by(len - pos, 8, "pipelining fields", err, errlen)))
		return rc;
	if (p[pos + 1] || p[pos + 2] || p[pos + 3])
		return ipu_errorf(err, errlen, IPUEF_E_RESERVED,
				  "metadata: the group table's reserved bytes are not 0");
	g->pipelined = p[pos];
	g->micro_batches = get_le32(p + pos + 4);
	pos += 8;
	o->m.group = g;
	*used = pos;
	return 0;
}
