/* SPDX-License-Identifier: MIT */
/*
 * prepare_gather.c - a Gather of one constant index from run-time data (a
 * vision transformer's class token, x[:, 0]) is a Slice plus a Reshape:
 * the Slice is a strided copy spread over tiles.  A Gather at run-time
 * indices along an axis too long for a tile is cut into chunks of the
 * axis (lw_split_long_gather, below).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/opgeom.h"
#include "ops/registry.h"
#include "prepare_rw.h"

static int const_i64(struct ir_graph *g, const char *base, int64_t v, struct ir_error *e)
{
	struct ir_tensor t;
	int64_t one = 1;
	int x = ir_value_add_unique(g, base, e);

	if (x < 0 || ir_tensor_alloc(&t, IR_I64, 1, &one, e))
		return -1;
	ir_set_i(t.data, IR_I64, 0, v);
	ir_value_set_const(&g->vals[x], &t);
	return x;
}

int lp_gather_slice(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *idx = &g->vals[n->in[1]];
	const struct ir_value *o = &g->vals[n->out[0]];
	int64_t axis = ir_attr_int(n, "axis", 0), i, shape[IR_MAX_RANK], orank;
	int in[5], s, pos = *pi, sh;
	char name[256];

	if (x->data || !idx->data || ir_value_numel(idx) != 1)
		return 0;
	if (axis < 0)
		axis += x->rank;
	i = ir_get_i(idx->data, idx->dtype, 0);
	if (i < 0)
		i += x->dims[axis];
	if (axis < 0 || axis >= x->rank || i < 0 || i >= x->dims[axis])
		return ir_node_err(e, g, n, "index %lld is outside dimension %lld (%lld)",
				   (long long)ir_get_i(idx->data, idx->dtype, 0), (long long)axis,
				   (long long)(axis >= 0 && axis < x->rank ? x->dims[axis] : 0));
	/* x, idx and o point into g->vals, which adding values moves */
	orank = o->rank;
	for (int k = 0; k < orank; k++)
		shape[k] = o->dims[k];
	snprintf(name, sizeof(name), "%s", n->name);
	in[0] = n->in[0];
	if ((in[1] = const_i64(g, "gather_start", i, e)) < 0 ||
	    (in[2] = const_i64(g, "gather_end", i + 1, e)) < 0 ||
	    (in[3] = const_i64(g, "gather_axis", axis, e)) < 0 ||
	    (s = lp_add_node(g, &pos, name, "Slice", in, 4, e)) < 0)
		return -1;
	{
		struct ir_tensor t;
		int64_t r = orank;

		sh = ir_value_add_unique(g, "gather_shape", e);
		if (sh < 0 || ir_tensor_alloc(&t, IR_I64, 1, &r, e))
			return -1;
		memcpy(t.data, shape, (size_t)r * sizeof(int64_t));
		ir_value_set_const(&g->vals[sh], &t);
	}
	/* the Gather node becomes the Reshape writing its output */
	n = &g->nodes[pos];
	n->in[0] = s;
	n->in[1] = sh;
	ir_attr_remove(n, "axis");
	*pi = pos;
	return ir_node_set_op(n, "Reshape", e);
}

/*
 * A Gather at run-time indices from data whose gathered axis is too long
 * for one tile (a 250,000-word vocabulary, GatherElements' flattened
 * data): a block of the output may read any row of the axis, so the axis
 * itself is cut into P chunks, each gathered at its clamped local index,
 * and the chunk an index falls in chosen per index:
 *
 *   n = idx < 0 ? idx + L : idx                            (int32)
 *   g_p = Gather(Slice(x, k_p, k_p+1, axis), Min(Max(n - k_p, 0), C_p - 1))
 *   y = Where(n < k_1, g_0, Where(n < k_2, g_1, ... g_P-1))
 *
 * Each chunk's Gather fits a tile's budget and is split over tiles like
 * any other (lower_gather_split.c).
 */

static int split_gather(struct ir_graph *g, int *pi, int64_t C, struct ir_error *e)
{
	const struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *iv = &g->vals[n->in[1]];
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank), rank = x->rank;
	int64_t L = x->dims[a], P = (L + C - 1) / C, cdims[IR_MAX_RANK], crank = iv->rank;
	int xv = n->in[0], in[5], idx, neg, norm, sel = -1, *g_p, *lt;
	struct lp_rw r = { g, *pi, "", e };

	snprintf(r.name, sizeof(r.name), "%s", n->name);
	/* the per-index condition broadcast over the gathered rows' columns */
	for (int k = 0; k < iv->rank; k++)
		cdims[k] = iv->dims[k];
	for (int k = a + 1; k < rank; k++)
		cdims[crank++] = 1;
	g_p = calloc((size_t)P, sizeof(int));
	lt = calloc((size_t)P, sizeof(int));
	if (!g_p || !lt) {
		free(g_p);
		free(lt);
		return ir_err(e, "out of memory");
	}
	if ((idx = lp_rw_add(&r, "Cast", n->in[1], -1)) < 0 || lp_rw_int(&r, "to", IR_I32) ||
	    (in[0] = lp_rw_scalar(&r, IR_I32, 0)) < 0 || (neg = lp_rw_add(&r, "Less", idx, in[0])) < 0 ||
	    (in[1] = lp_rw_scalar(&r, IR_I32, (double)L)) < 0 ||
	    (in[1] = lp_rw_add(&r, "Add", idx, in[1])) < 0)
		goto fail;
	in[0] = neg;
	in[2] = idx;
	if ((norm = lp_rw_add_to(&r, "Where", in, 3, -1)) < 0)
		goto fail;
	for (int64_t p = 0; p < P; p++) {
		int64_t k0 = p * C, k1 = k0 + C < L ? k0 + C : L, ax = a;
		int local;

		if ((in[1] = lp_rw_ints(&r, "gather_start", IR_I64, 1, (int64_t[]){ 1 }, &k0)) < 0 ||
		    (in[2] = lp_rw_ints(&r, "gather_end", IR_I64, 1, (int64_t[]){ 1 }, &k1)) < 0 ||
		    (in[3] = lp_rw_ints(&r, "gather_axis", IR_I64, 1, (int64_t[]){ 1 }, &ax)) < 0)
			goto fail;
		in[0] = xv;
		if ((in[0] = lp_rw_add_to(&r, "Slice", in, 4, -1)) < 0 ||
		    (local = lp_rw_scalar(&r, IR_I32, (double)k0)) < 0 ||
		    (local = lp_rw_add(&r, "Sub", norm, local)) < 0 ||
		    (in[1] = lp_rw_scalar(&r, IR_I32, 0)) < 0 ||
		    (local = lp_rw_add(&r, "Max", local, in[1])) < 0 ||
		    (in[1] = lp_rw_scalar(&r, IR_I32, (double)(k1 - k0 - 1))) < 0 ||
		    (in[1] = lp_rw_add(&r, "Min", local, in[1])) < 0 ||
		    (g_p[p] = lp_rw_add_to(&r, "Gather", in, 2, -1)) < 0 || lp_rw_int(&r, "axis", a))
			goto fail;
		if (p + 1 < P) {
			int64_t k = k1;

			if ((in[1] = lp_rw_ints(&r, "gather_bound", IR_I32, 0, NULL, &k)) < 0 ||
			    (lt[p] = lp_rw_add(&r, "Less", norm, in[1])) < 0 ||
			    (in[1] = lp_rw_shape(&r, cdims, crank)) < 0 ||
			    (lt[p] = lp_rw_add(&r, "Reshape", lt[p], in[1])) < 0)
				goto fail;
		}
	}
	/* innermost first: the last chunk, then each earlier one where the
	 * index lies below its end */
	sel = g_p[P - 1];
	for (int64_t p = P - 2; p >= 0; p--) {
		in[0] = lt[p];
		in[1] = g_p[p];
		in[2] = sel;
		if (p > 0) {
			if ((sel = lp_rw_add_to(&r, "Where", in, 3, -1)) < 0)
				goto fail;
		} else {
			free(g_p);
			free(lt);
			*pi = r.pos;
			return lp_rw_become(&r, "Where", in, 3);
		}
	}
	free(g_p);
	free(lt);
	*pi = r.pos;
	in[0] = sel;
	return lp_rw_become(&r, "Identity", in, 1);
fail:
	free(g_p);
	free(lt);
	return -1;
}

int lw_split_long_gather(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
			 struct ir_error *e)
{
	struct ir_infer_opts io = { .fold = 1, .fold_limit = fold_limit };
	uint64_t budget = lp_op_budget(g, t);
	int any = 0;

	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];
		const struct ir_value *x, *iv;
		size_t es;
		int64_t L, C;
		int a;

		if (n->dead || n->opid != IR_OP_Gather)
			continue;
		x = &g->vals[n->in[0]];
		iv = &g->vals[n->in[1]];
		if (!ir_value_has_shape(x) || !ir_value_has_shape(iv) || iv->data || !lw_dtype(x->dtype) ||
		    (iv->dtype != IR_I32 && iv->dtype != IR_I64))
			continue;
		a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
		es = ir_dtype_size(x->dtype);
		L = x->dims[a];
		/* one column of the axis, an index and its result: what the
		 * smallest block of a Gather holds (lower_gather_split.c) */
		if ((uint64_t)L * es + 8 + es <= budget || L > INT32_MAX)
			continue;
		/* chunks of a quarter of the budget leave room for many
		 * columns or indices per block */
		C = (int64_t)(budget / 4 / es);
		if (C < 1)
			C = 1;
		if (split_gather(g, &i, C, e))
			return -1;
		any = 1;
	}
	if (!any)
		return 0;
	ir_graph_link(g);
	return ir_infer(g, &io, e);
}
