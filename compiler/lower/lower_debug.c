// SPDX-License-Identifier: MIT
/*
 * lower_debug.c - the .ipuef debug blob: which model node each compute set
 * and exchange came from (struct ipuef_debug in ipu/ipuef.h), from the
 * graph builder's origins.
 */
#include <stdlib.h>
#include <string.h>

#include "ipu/ipuef.h"
#include "lower_internal.h"

/*
 * A name as the container accepts it: control bytes (and, with ascii,
 * every byte above 0x7f) become '?'; at most IPUEF_MAX_NAME bytes, a cut
 * never leaving half a UTF-8 character; "?" for an empty name.
 */
static char *clean_name(const char *s, int ascii)
{
	size_t n = strlen(s), o;
	char *d = malloc((n < IPUEF_MAX_NAME ? n : IPUEF_MAX_NAME) + 2);

	if (!d)
		return NULL;
	for (o = 0; o < n && o < IPUEF_MAX_NAME; o++) {
		unsigned char c = (unsigned char)s[o];

		d[o] = c < 0x20 || c == 0x7f || (ascii && c >= 0x80) ? '?' : (char)c;
	}
	if (o < n)
		while (o && (unsigned char)d[o - 1] >= 0x80)
			o--;
	if (!o)
		d[o++] = '?';
	d[o] = 0;
	return d;
}

static int encode(const struct ipu_graph *gb, const struct ipu_graph_stats *stp, int ascii,
		  void **out, size_t *len, struct ir_error *e)
{
	uint32_t nn = ipu_graph_num_origins(gb), i;
	struct ipu_graph_stats st = *stp;
	struct ipuef_debug d;
	struct ipuef_debug_node *nodes = calloc(nn ? nn : 1, sizeof(*nodes));
	uint32_t *cs = NULL, *xch = NULL;
	char err[256];
	int r = -1, rc;

	memset(&d, 0, sizeof(d));
	cs = malloc((st.compute_sets ? st.compute_sets : 1) * sizeof(*cs));
	xch = malloc((st.exchanges ? st.exchanges : 1) * sizeof(*xch));
	if (!nodes || !cs || !xch)
		goto nomem;
	for (i = 0; i < nn; i++) {
		const char *op, *name = ipu_graph_origin(gb, i, &op);

		nodes[i].name = clean_name(name, ascii);
		nodes[i].op = clean_name(op, ascii);
		if (!nodes[i].name || !nodes[i].op)
			goto nomem;
	}
	for (i = 0; i < st.compute_sets; i++) {
		uint32_t o = ipu_graph_cs_origin(gb, i);

		cs[i] = o == IPU_GRAPH_INVALID ? IPUEF_DEBUG_NONE : o;
	}
	for (i = 0; i < st.exchanges; i++) {
		uint32_t o = ipu_graph_exchange_origin(gb, i);

		xch[i] = o == IPU_GRAPH_INVALID ? IPUEF_DEBUG_NONE : o;
	}
	d.num_nodes = nn;
	d.nodes = nodes;
	d.num_compute_sets = st.compute_sets;
	d.cs_node = cs;
	d.num_exchanges = st.exchanges;
	d.xch_node = xch;
	rc = ipuef_debug_encode(&d, out, len, err, sizeof(err));
	if (rc == 0)
		r = 0;
	else if (rc == IPUEF_E_STRING && !ascii)
		r = 1;	/* a name is not UTF-8: retry in ASCII */
	else
		ir_err(e, "debug information: %s", err);
	goto out;
nomem:
	ir_err(e, "out of memory");
out:
	for (i = 0; nodes && i < nn; i++) {
		free((char *)nodes[i].name);
		free((char *)nodes[i].op);
	}
	free(nodes);
	free(cs);
	free(xch);
	return r;
}

int lw_debug_blob(const struct ipu_graph *gb, const struct ipu_graph_stats *st, void **out,
		  size_t *len, struct ir_error *e)
{
	int r = encode(gb, st, 0, out, len, e);

	return r == 1 ? encode(gb, st, 1, out, len, e) : r;
}
