/* SPDX-License-Identifier: MIT */
/*
 * lower_custom.c - a custom operator's node on the tiles: its output in
 * blocks of rows (the plugin's split), one vertex of the plugin's codelet
 * per block, with params [rows, cols, attrs...] (ipu/custom_op.h).
 */
#include <string.h>

#include "custom/custom.h"
#include "lower_internal.h"

#define MIN_BLOCK 1024	/* elements per vertex before spreading wider */

int lw_custom(struct lw *l, const struct ir_node *n)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *o = &g->vals[n->out[0]];
	uint32_t odt = lw_dtype(o->dtype), cs, codelet, params[2 + IPU_CUSTOM_MAX_ATTRS];
	struct ipu_slice ops[IPU_CUSTOM_MAX_INPUTS + 1];
	double attrs[IPU_CUSTOM_MAX_ATTRS];
	const struct ipu_custom_op *op;
	const uint8_t *hash = NULL;
	int64_t total = ir_value_numel(o), cols, rows, nb;
	uint64_t rb, whole = 0;
	ipu_step xch = IPU_GRAPH_INVALID;
	struct ir_error e;
	ipu_tensor out;
	const char *sep = strstr(n->op, "::");
	char domain[IPU_CUSTOM_NAME_MAX];

	op = ir_custom_op(g, n, &hash, &e);
	if (!op)
		return lw_fail(l, "%s", e.msg);
	if (ir_custom_attrs(g, n, op, attrs, &e))
		return lw_fail(l, "%s", e.msg);
	if (!odt)
		return lw_fail(l, "output type %s is not supported by the device", ir_dtype_name(o->dtype));
	if ((size_t)(sep - n->op) >= sizeof(domain))
		return lw_fail(l, "domain of %s too long", n->op);
	memcpy(domain, n->op, (size_t)(sep - n->op));
	domain[sep - n->op] = 0;
	cols = op->split == IPU_CUSTOM_SPLIT_ELEMENTWISE || o->rank == 0 ? 1 : o->dims[o->rank - 1];
	rows = total / cols;
	rb = (uint64_t)cols * ipux_dtype_size(odt);
	for (int k = 0; k < n->nin; k++) {
		const struct ir_value *v;
		int64_t cnt;

		if (n->in[k] < 0)
			return lw_fail(l, "omitted input %d: custom operators are lowered with every input present", k);
		v = &g->vals[n->in[k]];
		if (!lw_dtype(v->dtype))
			return lw_fail(l, "input %d has type %s, which the device does not support",
				       k, ir_dtype_name(v->dtype));
		cnt = ir_value_numel(v);
		if (cnt == total && op->split != IPU_CUSTOM_SPLIT_ONE_TILE)
			rb += (uint64_t)cols * ir_dtype_size(v->dtype);
		else
			whole += (uint64_t)cnt * ir_dtype_size(v->dtype);
	}
	for (uint32_t a = 0; a < op->num_attrs; a++)
		params[2 + a] = op->attrs[a].type == IPU_CUSTOM_ATTR_FLOAT ?
				lw_f32bits(attrs[a]) : (uint32_t)(int32_t)attrs[a];
	ipu_graph_set_custom_table(l->gb, g->custom);
	codelet = ipu_graph_custom_codelet(l->gb, domain, sep + 2, hash);
	out = lw_tensor(l, o->name, odt, (uint64_t)total);
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (codelet == IPU_GRAPH_INVALID || out == IPU_GRAPH_INVALID || cs == IPU_GRAPH_INVALID)
		return lw_check(l);
	l->vt[n->out[0]] = out;
	if (op->split == IPU_CUSTOM_SPLIT_ONE_TILE) {
		nb = 1;
		if (rb * (uint64_t)rows + whole > l->budget)
			return lw_fail_mem(l, rb * (uint64_t)rows + whole, "the whole custom operator");
	} else {
		if (whole + rb > l->budget)
			return lw_fail_mem(l, whole + rb, "one row of the custom operator with its whole inputs");
		nb = (total + MIN_BLOCK - 1) / MIN_BLOCK;
		if (nb > (int64_t)l->tiles)
			nb = l->tiles;
		if ((uint64_t)nb < (uint64_t)rows * rb / (l->budget - whole) + 1)
			nb = (int64_t)((uint64_t)rows * rb / (l->budget - whole) + 1);
		if (nb > rows)
			nb = rows;
		if (nb < 1)
			nb = 1;
	}
	for (int64_t b = 0; b < nb; b++) {
		int64_t r0 = rows * b / nb, r1 = rows * (b + 1) / nb;
		uint32_t tile = lw_pick_tile(l);

		if (r1 <= r0)
			continue;
		if (ipu_graph_map(l->gb, out, tile, (uint64_t)(r0 * cols), (uint64_t)(r1 * cols)))
			return lw_check(l);
		lw_account(l, tile, (uint64_t)(r1 - r0) * rb + whole);
		for (int k = 0; k < n->nin; k++) {
			int64_t cnt = ir_value_numel(&g->vals[n->in[k]]);
			int split = cnt == total && op->split != IPU_CUSTOM_SPLIT_ONE_TILE;

			if (lw_piece(l, n->in[k], split ? (uint64_t)(r0 * cols) : 0,
				     split ? (uint64_t)((r1 - r0) * cols) : (uint64_t)cnt, tile, &xch, &ops[k]))
				return -1;
		}
		ops[n->nin] = (struct ipu_slice){ out, (uint64_t)(r0 * cols), (uint64_t)((r1 - r0) * cols) };
		params[0] = (uint32_t)(r1 - r0);
		params[1] = (uint32_t)cols;
		if (ipu_graph_add_vertex(l->gb, cs, (enum ipux_codelet)codelet, ops, (uint32_t)n->nin + 1,
					 params, 2 + op->num_attrs))
			return lw_check(l);
	}
	if (lw_emit(l, xch, cs))
		return -1;
	return 1;
}
