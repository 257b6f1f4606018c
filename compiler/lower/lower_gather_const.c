/* SPDX-License-Identifier: MIT */
/*
 * lower_gather_const.c - a Gather of run-time data at compile-time
 * constant indices (what the rewrites of ScatterND, ScatterElements and
 * GatherND produce, and embedding-style lookups of activations) only moves
 * elements: the output is spread over tiles and filled by exchange copies,
 * one per run of elements consecutive in both the data and the output, so
 * neither the data nor the output has to fit one tile.
 */
#include <stdio.h>

#include "lower_internal.h"

struct run {
	int64_t src, dst, len;
};

static int flush(struct lw *l, ipu_step xch, ipu_tensor src, ipu_tensor out, struct run *r)
{
	if (r->len && ipu_exchange_add(l->gb, xch, (struct ipu_slice){ src, (uint64_t)r->src, (uint64_t)r->len },
				       (struct ipu_slice){ out, (uint64_t)r->dst, (uint64_t)r->len }))
		return lw_check(l);
	r->len = 0;
	return 0;
}

int lw_gather_const(struct lw *l, const struct ir_node *n, int64_t outer, int64_t len, int64_t inner)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *idx = &g->vals[n->in[1]], *o = &g->vals[n->out[0]];
	int64_t ni = ir_value_numel(idx), total = ir_value_numel(o);
	uint32_t dt = lw_dtype(o->dtype);
	size_t es = ir_dtype_size(o->dtype);
	struct run r = { 0, 0, 0 };
	ipu_tensor src = lw_value_tensor(l, n->in[0]), out;
	ipu_step xch;

	if (src == IPU_GRAPH_INVALID)
		return -1;
	out = lw_tensor(l, o->name, dt, (uint64_t)total);
	if (out == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (lw_spread(l, out, (uint64_t)total, (uint32_t)es, (uint32_t)((uint64_t)total * es / 4096 + 1)) < 0)
		return -1;
	l->vt[n->out[0]] = out;
	if ((xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
		return lw_check(l);
	for (int64_t b = 0; b < outer; b++)
		for (int64_t j = 0; j < ni; j++) {
			int64_t k = ir_get_i(idx->data, idx->dtype, (size_t)j);
			int64_t s, d = (b * ni + j) * inner;

			if (k < 0)
				k += len;
			if (k < 0 || k >= len)
				return lw_fail(l, "index %lld is out of range for an axis of %lld",
					       (long long)ir_get_i(idx->data, idx->dtype, (size_t)j), (long long)len);
			s = (b * len + k) * inner;
			if (r.len && r.src + r.len == s && r.dst + r.len == d) {
				r.len += inner;
				continue;
			}
			if (flush(l, xch, src, out, &r))
				return -1;
			r = (struct run){ s, d, inner };
		}
	if (flush(l, xch, src, out, &r))
		return -1;
	return lw_emit(l, xch, IPU_GRAPH_INVALID) ? -1 : 1;
}
