/* SPDX-License-Identifier: MIT */
/* prepare_rw.c - helpers of the multi-node rewrites (prepare_rw.h). */
#include <stdlib.h>
#include <string.h>

#include "prepare_rw.h"

int lp_rw_add(struct lp_rw *r, const char *op, int a, int b)
{
	int in[2] = { a, b };

	return lp_add_node(r->g, &r->pos, r->name, op, in, b >= 0 ? 2 : 1, r->e);
}

int lp_rw_add_to(struct lp_rw *r, const char *op, const int *in, int nin, int out)
{
	if (out < 0)
		return lp_add_node(r->g, &r->pos, r->name, op, in, nin, r->e);
	if (ir_node_insert(r->g, r->pos, r->name, op, in, nin, &out, 1, r->e) < 0)
		return -1;
	r->pos++;
	return out;
}

int lp_rw_int(struct lp_rw *r, const char *attr, int64_t v)
{
	return ir_attr_set_int(&r->g->nodes[r->pos - 1], attr, v, r->e);
}

int lp_rw_shape(struct lp_rw *r, const int64_t *dims, int64_t rank)
{
	struct ir_tensor t;
	int x = ir_value_add_unique(r->g, "rw_shape", r->e);

	if (x < 0 || ir_tensor_alloc(&t, IR_I64, 1, &rank, r->e))
		return -1;
	memcpy(t.data, dims, (size_t)rank * sizeof(int64_t));
	ir_value_set_const(&r->g->vals[x], &t);
	return x;
}

int lp_rw_ints(struct lp_rw *r, const char *name, int dt, int rank, const int64_t *dims,
	       const int64_t *v)
{
	struct ir_tensor t;
	int x = ir_value_add_unique(r->g, name, r->e);
	int64_t n = ir_numel(rank, dims);

	if (x < 0 || ir_tensor_alloc(&t, dt, rank, dims, r->e))
		return -1;
	for (int64_t i = 0; i < n; i++)
		ir_set_i(t.data, dt, (size_t)i, v[i]);
	ir_value_set_const(&r->g->vals[x], &t);
	return x;
}

int lp_rw_scalar(struct lp_rw *r, int dt, double v)
{
	return lp_const_scalar(r->g, "rw_const", dt, v, 0, r->e);
}

int lp_rw_become(struct lp_rw *r, const char *op, const int *in, int nin)
{
	struct ir_node *n = &r->g->nodes[r->pos];
	int *ni = realloc(n->in, (size_t)nin * sizeof(int));

	if (!ni)
		return ir_err(r->e, "out of memory");
	n->in = ni;
	memcpy(n->in, in, (size_t)nin * sizeof(int));
	n->nin = nin;
	n->nout = 1;
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	return ir_node_set_op(n, op, r->e);
}

/* The bytes one op may use on a tile as the lowering will give them
 * (op_budget in lower.c): half a tile, less what the model's constants
 * keep on an average tile and an eighth for the live values. */
uint64_t lp_op_budget(const struct ir_graph *g, const struct ipu_target *t)
{
	uint64_t consts = 0, room, half = t->tile_mem / 2, others;

	for (int i = 0; i < g->nvals; i++)
		if (g->vals[i].data)
			consts += (uint64_t)ir_value_numel(&g->vals[i]) * ir_dtype_size(g->vals[i].dtype);
	others = consts / (t->tiles ? t->tiles : 1);
	room = others + t->tile_mem / 8 < t->tile_mem ? t->tile_mem - others - t->tile_mem / 8 : 0;
	if (room < t->tile_mem / 8)
		room = t->tile_mem / 8;
	return room < half ? room : half;
}
