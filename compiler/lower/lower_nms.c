/* SPDX-License-Identifier: MIT */
/*
 * lower_nms.c - NonMaxSuppression with run-time boxes or scores: one NMS
 * vertex on one tile (its greedy selection is sequential within a class),
 * writing the selection into the value's static upper bound and the true
 * count into a tensor of its own, which lower.c streams to the host beside
 * the value ("NAME:count", Documentation/runtime/ipuef-format.md).
 */
#include <string.h>

#include "lower_internal.h"

/* A constant scalar input as a double, `def` when omitted or empty. */
static double const_scalar(const struct ir_graph *g, const struct ir_node *n, int k, double def)
{
	const struct ir_value *v = k < n->nin && n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;

	if (!v || !v->data || !ir_value_numel(v))
		return def;
	return ir_get_f(v->data, v->dtype, 0);
}

int lw_nms(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *bx = &g->vals[n->in[0]], *sc = &g->vals[n->in[1]];
	const struct ir_value *o = &g->vals[n->out[0]];
	int64_t B = sc->dims[0], C = sc->dims[1], N = sc->dims[2], per = o->dims[0] / (B * C);
	uint32_t dt = lw_dtype(bx->dtype), tile, cs, p[7];
	uint64_t bytes;
	ipu_step xch = IPU_GRAPH_INVALID;
	struct ipu_slice ops[5];
	ipu_tensor sel, cnt;
	int has_st = n->nin > 4 && n->in[4] >= 0 && ir_value_numel(&g->vals[n->in[4]]);

	if (!o->bounded)
		return lw_fail(l, "the selection's size is not bounded (its inputs should have been folded)");
	if (ir_value_uses(g, n->out[0]))
		return lw_fail(l, "the selection '%s' is read by another node: only a graph output carries its run-time count to the host yet",
			       o->name);
	if (bx->dtype != sc->dtype || (dt != IPUX_DT_F32 && dt != IPUX_DT_F16))
		return lw_fail(l, "boxes and scores must both be float32 or both float16, got %s and %s",
			       ir_dtype_name(bx->dtype), ir_dtype_name(sc->dtype));
	if (N > INT32_MAX || per < 1)
		return lw_fail(l, "%lld boxes with at most %lld per class: between 1 and 2^31-1 each",
			       (long long)N, (long long)per);
	bytes = (uint64_t)(B * N * 4 + B * C * N) * ir_dtype_size(bx->dtype) +
		(uint64_t)ir_value_numel(o) * 8 + 4 + (uint64_t)N * 8;
	if (bytes > l->budget)
		return lw_fail_mem(l, bytes, "the selection (boxes, scores, the bound of the selection; it is not split over tiles)");
	tile = lw_pick_tile(l);
	if (lw_piece(l, n->in[0], 0, (uint64_t)ir_value_numel(bx), tile, &xch, &ops[0]) ||
	    lw_piece(l, n->in[1], 0, (uint64_t)ir_value_numel(sc), tile, &xch, &ops[1]))
		return -1;
	sel = lw_tensor(l, o->name, IPUX_DT_I64, (uint64_t)ir_value_numel(o));
	cnt = lw_tensor(l, "count", IPUX_DT_I32, 1);
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (sel == IPU_GRAPH_INVALID || cnt == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID ||
	    ipu_graph_map_tile(l->gb, sel, tile) || ipu_graph_map_tile(l->gb, cnt, tile))
		return lw_check(l);
	if (lw_temp(l, "scratch", IPUX_DT_I32, (uint64_t)N * 2, tile, &ops[4]))
		return -1;
	lw_account(l, tile, bytes);
	ops[2] = (struct ipu_slice){ sel, 0, (uint64_t)ir_value_numel(o) };
	ops[3] = (struct ipu_slice){ cnt, 0, 1 };
	p[0] = (uint32_t)B;
	p[1] = (uint32_t)C;
	p[2] = (uint32_t)N;
	p[3] = (uint32_t)per;
	p[4] = lw_f32bits(const_scalar(g, n, 3, 0));
	p[5] = lw_f32bits(const_scalar(g, n, 4, 0));
	p[6] = (ir_attr_int(n, "center_point_box", 0) ? IPUX_NMS_CENTER : 0) |
	       (has_st ? IPUX_NMS_SCORE_THRESHOLD : 0);
	if (ipu_graph_add_vertex(l->gb, cs, IPUX_CL_NMS, ops, 5, p, 7))
		return lw_check(l);
	l->vt[n->out[0]] = sel;
	l->count[n->out[0]] = cnt;
	return lw_emit(l, xch, cs) ? -1 : 1;
}
