// SPDX-License-Identifier: MIT
/*
 * ipuef_debug.c - the optional debug blob of an .ipuef: which model node
 * each compute set and exchange came from.  Readers check every count
 * against the bytes left before allocating, like the container's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipuef_internal.h"

static int put_str(uint8_t **p, const char *what, uint32_t i, const char *s, char *err,
		   size_t errlen)
{
	size_t n = s ? strlen(s) : 0;
	char w[64];

	snprintf(w, sizeof(w), "debug: node %u %s", i, what);
	if (ipuef_check_string(w, (const uint8_t *)s, n, IPUEF_MAX_NAME, false, err, errlen))
		return IPUEF_E_STRING;
	if (*p) {
		put_le16(*p, (uint16_t)n);
		memcpy(*p + 2, s, n);
		*p += 2 + n;
	}
	return 0;
}

static int check_index(const char *what, uint32_t i, uint32_t node, uint32_t nodes, char *err,
		       size_t errlen)
{
	if (node != IPUEF_DEBUG_NONE && node >= nodes)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE, "debug: %s %u: node %u of %u",
				  what, i, node, nodes);
	return 0;
}

int ipuef_debug_encode(const struct ipuef_debug *d, void **out, size_t *len, char *err,
		       size_t errlen)
{
	uint64_t size = 12 + 4 * ((uint64_t)d->num_compute_sets + d->num_exchanges);
	uint8_t *buf, *p = NULL;
	uint32_t i;
	int rc;

	*out = NULL;
	*len = 0;
	if (d->num_nodes > IPUEF_DEBUG_MAX || d->num_compute_sets > IPUEF_DEBUG_MAX ||
	    d->num_exchanges > IPUEF_DEBUG_MAX)
		return ipu_errorf(err, errlen, IPUEF_E_LIMIT, "debug: more than %u entries",
				  IPUEF_DEBUG_MAX);
	/* pass 1 checks and sizes, pass 2 writes */
	for (i = 0; i < d->num_nodes; i++) {
		if ((rc = put_str(&p, "name", i, d->nodes[i].name, err, errlen)) ||
		    (rc = put_str(&p, "op", i, d->nodes[i].op, err, errlen)))
			return rc;
		size += 4 + strlen(d->nodes[i].name) + strlen(d->nodes[i].op);
	}
	for (i = 0; i < d->num_compute_sets; i++)
		if ((rc = check_index("compute set", i, d->cs_node[i], d->num_nodes, err, errlen)))
			return rc;
	for (i = 0; i < d->num_exchanges; i++)
		if ((rc = check_index("exchange", i, d->xch_node[i], d->num_nodes, err, errlen)))
			return rc;
	buf = malloc(size);
	if (!buf)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	p = buf;
	put_le32(p, d->num_nodes);
	p += 4;
	for (i = 0; i < d->num_nodes; i++) {
		put_str(&p, "name", i, d->nodes[i].name, NULL, 0);
		put_str(&p, "op", i, d->nodes[i].op, NULL, 0);
	}
	put_le32(p, d->num_compute_sets);
	p += 4;
	for (i = 0; i < d->num_compute_sets; i++, p += 4)
		put_le32(p, d->cs_node[i]);
	put_le32(p, d->num_exchanges);
	p += 4;
	for (i = 0; i < d->num_exchanges; i++, p += 4)
		put_le32(p, d->xch_node[i]);
	*out = buf;
	*len = (size_t)size;
	return 0;
}

/* The decoded form owns its strings in one block after the arrays. */
struct debug_owned {
	struct ipuef_debug pub;
	struct ipuef_debug_node *nodes;
	uint32_t *cs, *xch;
	char *strings;
};

struct cursor {
	const uint8_t *p;
	size_t left;
};

static int get_u32(struct cursor *c, const char *what, uint32_t *v, char *err, size_t errlen)
{
	if (c->left < 4)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE, "debug: truncated at %s", what);
	*v = get_le32(c->p);
	c->p += 4;
	c->left -= 4;
	return 0;
}

static int get_str(struct cursor *c, const char *what, uint32_t i, char **dst, char *err,
		   size_t errlen)
{
	char w[64];
	uint16_t n;

	snprintf(w, sizeof(w), "debug: node %u %s", i, what);
	if (c->left < 2)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE, "%s: truncated", w);
	n = get_le16(c->p);
	if (c->left - 2 < n)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE, "%s: %u bytes, %zu left", w, n,
				  c->left - 2);
	if (ipuef_check_string(w, c->p + 2, n, IPUEF_MAX_NAME, false, err, errlen))
		return IPUEF_E_STRING;
	memcpy(*dst, c->p + 2, n);
	(*dst)[n] = 0;
	*dst += n + 1;
	c->p += 2 + n;
	c->left -= 2 + (size_t)n;
	return 0;
}

static int get_nodes(struct cursor *c, const char *what, uint32_t nodes, uint32_t *n,
		     uint32_t **arr, char *err, size_t errlen)
{
	uint32_t i;
	int rc;

	if ((rc = get_u32(c, what, n, err, errlen)))
		return rc;
	if (*n > IPUEF_DEBUG_MAX || (uint64_t)*n * 4 > c->left)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE, "debug: %u %s entries, %zu bytes left",
				  *n, what, c->left);
	*arr = malloc((*n ? *n : 1) * sizeof(**arr));
	if (!*arr)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	for (i = 0; i < *n; i++) {
		(*arr)[i] = get_le32(c->p + 4 * (size_t)i);
		if ((rc = check_index(what, i, (*arr)[i], nodes, err, errlen)))
			return rc;
	}
	c->p += 4 * (size_t)*n;
	c->left -= 4 * (size_t)*n;
	return 0;
}

int ipuef_debug_decode(const void *data, size_t len, struct ipuef_debug **out, char *err,
		       size_t errlen)
{
	struct cursor c = { data, len };
	struct debug_owned *o;
	uint32_t n, i;
	char *sp;
	int rc;

	*out = NULL;
	if ((rc = get_u32(&c, "node count", &n, err, errlen)))
		return rc;
	/* each node takes at least 2 + 1 + 2 + 1 bytes */
	if (n > IPUEF_DEBUG_MAX || (uint64_t)n * 6 > c.left)
		return ipu_errorf(err, errlen, IPUEF_E_OPAQUE, "debug: %u nodes, %zu bytes left", n,
				  c.left);
	o = calloc(1, sizeof(*o));
	if (!o)
		return ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
	o->nodes = calloc(n ? n : 1, sizeof(*o->nodes));
	/* the strings are shorter than their bytes plus a NUL each */
	o->strings = malloc(c.left + 1);
	if (!o->nodes || !o->strings) {
		rc = ipu_errorf(err, errlen, IPUEF_E_NOMEM, "out of memory");
		goto fail;
	}
	sp = o->strings;
	for (i = 0; i < n; i++) {
		o->nodes[i].name = sp;
		if ((rc = get_str(&c, "name", i, &sp, err, errlen)))
			goto fail;
		o->nodes[i].op = sp;
		if ((rc = get_str(&c, "op", i, &sp, err, errlen)))
			goto fail;
	}
	o->pub.num_nodes = n;
	o->pub.nodes = o->nodes;
	if ((rc = get_nodes(&c, "compute set", n, &o->pub.num_compute_sets, &o->cs, err, errlen)) ||
	    (rc = get_nodes(&c, "exchange", n, &o->pub.num_exchanges, &o->xch, err, errlen)))
		goto fail;
	if (c.left) {
		rc = ipu_errorf(err, errlen, IPUEF_E_OPAQUE, "debug: %zu bytes after the last entry",
				c.left);
		goto fail;
	}
	o->pub.cs_node = o->cs;
	o->pub.xch_node = o->xch;
	*out = &o->pub;
	return 0;
fail:
	ipuef_debug_free(&o->pub);
	return rc;
}

int ipuef_debug_read(const struct ipuef_file *f, struct ipuef_debug **out, char *err,
		     size_t errlen)
{
	uint32_t i;

	*out = NULL;
	for (i = 0; i < ipuef_num_opaques(f); i++) {
		const struct ipuef_opaque *op = ipuef_opaque(f, i);

		if (strcmp(op->name, IPUEF_DEBUG_BLOB))
			continue;
		/* a later layout is someone else's: ignore rather than misread */
		if (strcmp(op->version, IPUEF_DEBUG_VERSION))
			return 0;
		return ipuef_debug_decode(op->data, (size_t)op->size, out, err, errlen);
	}
	return 0;
}

void ipuef_debug_free(struct ipuef_debug *d)
{
	struct debug_owned *o = (struct debug_owned *)d;

	if (!o)
		return;
	free(o->nodes);
	free(o->cs);
	free(o->xch);
	free(o->strings);
	free(o);
}
