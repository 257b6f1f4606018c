/* SPDX-License-Identifier: MIT */
/*
 * prepare_scatter.c - ScatterElements (Scatter), ScatterND and GatherND
 * with compile-time constant indices, rewritten into Gather and Where:
 *   GatherND  -> Gather of the flattened data at constant offsets
 *   Scatter*  -> per round r (the r-th update of an element, in index
 *                order: duplicates take several rounds), acc = Where(hit_r,
 *                u_r or reduce(acc, u_r), acc), u_r = Gather of the
 *                flattened updates; reduction none keeps the last update,
 *                add/mul/max/min combine them in index order, as the
 *                reference evaluator does.
 * The constant tensors (offsets, hit masks) have the output's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/opgeom.h"
#include "ops/registry.h"
#include "prepare_rw.h"

#define R IR_MAX_RANK

static int need_const(struct ir_graph *g, const struct ir_node *n, int k, struct ir_error *e)
{
	if (!g->vals[n->in[k]].data)
		return ir_node_err(e, g, n, "input %d ('indices') must be a compile-time constant to be lowered (it is computed at run time)", k);
	return 0;
}

static void strides(const struct ir_value *v, int64_t *s)
{
	int64_t acc = 1;

	for (int i = v->rank - 1; i >= 0; i--) {
		s[i] = acc;
		acc *= v->dims[i];
	}
}

static int64_t idx_at(const struct ir_value *iv, int64_t j, int64_t len)
{
	int64_t k = ir_get_i(iv->data, iv->dtype, (size_t)j);

	if (k < 0)
		k += len;
	return k < 0 || k >= len ? -1 : k;
}

static int flat(struct lp_rw *r, int v)
{
	int64_t m1 = -1;
	int c = lp_rw_shape(r, &m1, 1);

	return c < 0 ? -1 : lp_rw_add(r, "Reshape", v, c);
}

int lp_prep_gather_nd(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *iv = &g->vals[n->in[1]], *ov = &g->vals[n->out[0]];
	int64_t b = ir_attr_int(n, "batch_dims", 0), k = iv->dims[iv->rank - 1];
	int64_t xs[R], batches = 1, per = 1, slice = 1, cnt = ir_value_numel(ov), *off;
	int64_t odims[R];
	int orank = ov->rank, xf, c, in[2];
	struct lp_rw r = { g, *pi, "", e };

	if (need_const(g, n, 1, e))
		return -1;
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	strides(x, xs);
	for (int i = 0; i < b; i++)
		batches *= x->dims[i];
	for (int i = (int)b; i < iv->rank - 1; i++)
		per *= iv->dims[i];
	for (int64_t i = b + k; i < x->rank; i++)
		slice *= x->dims[i];
	if (!(off = malloc((size_t)(cnt ? cnt : 1) * sizeof(int64_t))))
		return ir_err(e, "out of memory");
	for (int64_t bi = 0; bi < batches; bi++)
		for (int64_t t = 0; t < per; t++) {
			int64_t o = b ? bi * xs[b - 1] : 0;

			for (int64_t j = 0; j < k; j++) {
				int64_t v = idx_at(iv, (bi * per + t) * k + j, x->dims[b + j]);

				if (v < 0) {
					free(off);
					return ir_node_err(e, g, n, "index tuple %lld out of range", (long long)(bi * per + t));
				}
				o += v * xs[b + j];
			}
			for (int64_t s = 0; s < slice; s++)
				off[(bi * per + t) * slice + s] = o + s;
		}
	memcpy(odims, ov->dims, sizeof(odims));
	c = lp_rw_ints(&r, "rw_const", IR_I32, orank, odims, off);
	free(off);
	if (c < 0 || (xf = flat(&r, g->nodes[r.pos].in[0])) < 0)
		return -1;
	in[0] = xf;
	in[1] = c;
	*pi = r.pos;
	return lp_rw_become(&r, "Gather", in, 2);
}

/* target[i]: the flat data offset update i goes to. */
static int targets(struct ir_graph *g, const struct ir_node *n, int64_t *tg, struct ir_error *e)
{
	const struct ir_value *x = &g->vals[n->in[0]], *iv = &g->vals[n->in[1]];
	int64_t xs[R], id[R] = { 0 };

	strides(x, xs);
	if (n->opid != IR_OP_ScatterND) {
		int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
		int64_t cnt = ir_value_numel(iv);

		for (int64_t i = 0; i < cnt; i++) {
			int64_t k = idx_at(iv, i, x->dims[a]), off = 0;

			if (k < 0)
				return ir_node_err(e, g, n, "index %lld out of range",
						   (long long)ir_get_i(iv->data, iv->dtype, (size_t)i));
			for (int d = 0; d < x->rank; d++)
				off += (d == a ? k : id[d]) * xs[d];
			tg[i] = off;
			for (int d = iv->rank - 1; d >= 0; d--) {
				if (++id[d] < iv->dims[d])
					break;
				id[d] = 0;
			}
		}
		return 0;
	}
	int64_t k = iv->dims[iv->rank - 1], tuples = ir_numel(iv->rank - 1, iv->dims), slice = 1;

	for (int d = (int)k; d < x->rank; d++)
		slice *= x->dims[d];
	for (int64_t t = 0; t < tuples; t++) {
		int64_t off = 0;

		for (int64_t j = 0; j < k; j++) {
			int64_t v = idx_at(iv, t * k + j, x->dims[j]);

			if (v < 0)
				return ir_node_err(e, g, n, "index tuple %lld out of range", (long long)t);
			off += v * xs[j];
		}
		for (int64_t s = 0; s < slice; s++)
			tg[t * slice + s] = off + s;
	}
	return 0;
}

int lp_prep_scatter(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *uv = &g->vals[n->in[2]];
	const char *red = ir_attr_str(n, "reduction", "none");
	const char *op = !strcmp(red, "add") ? "Add" : !strcmp(red, "mul") ? "Mul" :
			 !strcmp(red, "max") ? "Max" : !strcmp(red, "min") ? "Min" : NULL;
	int64_t nx = ir_value_numel(x), nu = ir_value_numel(uv), *tg, *hits, *src, rounds = 0;
	int64_t xd[R];
	int xrank = x->rank, acc = n->in[0], uf;
	struct lp_rw r = { g, *pi, "", e };

	if (need_const(g, n, 1, e))
		return -1;
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	memcpy(xd, x->dims, sizeof(xd));
	tg = malloc((size_t)(nu ? nu : 1) * sizeof(int64_t));
	hits = calloc((size_t)(nx ? nx : 1), sizeof(int64_t));
	src = malloc((size_t)(nx ? nx : 1) * sizeof(int64_t));
	if (!tg || !hits || !src) {
		free(tg);
		free(hits);
		free(src);
		return ir_err(e, "out of memory");
	}
	if (targets(g, n, tg, e))
		goto fail;
	for (int64_t i = 0; i < nu; i++)
		if (++hits[tg[i]] > rounds)
			rounds = hits[tg[i]];
	/* without a reduction only the last update of an element counts */
	if (!op && rounds > 1)
		rounds = 1;
	if ((uf = flat(&r, g->nodes[r.pos].in[2])) < 0)
		goto fail;
	for (int64_t rd = 0; rd < rounds; rd++) {
		int m, s, u, in[3];

		/* src: the rd-th update of each element (the last, without a
		 * reduction); hits doubles as the mask */
		memset(hits, 0, (size_t)nx * sizeof(int64_t));
		for (int64_t i = 0; i < nx; i++)
			src[i] = 0;
		for (int64_t i = 0, seen; i < nu; i++) {
			seen = hits[tg[i]] >> 1;
			if (op ? seen == rd : 1) {
				src[tg[i]] = i;
				hits[tg[i]] |= 1;
			}
			hits[tg[i]] += 2;
		}
		for (int64_t i = 0; i < nx; i++)
			hits[i] &= 1;
		if ((m = lp_rw_ints(&r, "rw_const", IR_BOOL, xrank, xd, hits)) < 0 ||
		    (s = lp_rw_ints(&r, "rw_const", IR_I32, xrank, xd, src)) < 0 ||
		    (u = lp_rw_add(&r, "Gather", uf, s)) < 0)
			goto fail;
		if (op && (u = lp_rw_add(&r, op, acc, u)) < 0)
			goto fail;
		in[0] = m;
		in[1] = u;
		in[2] = acc;
		if (rd + 1 < rounds) {
			if ((acc = lp_rw_add_to(&r, "Where", in, 3, -1)) < 0)
				goto fail;
		} else {
			free(tg);
			free(hits);
			free(src);
			*pi = r.pos;
			return lp_rw_become(&r, "Where", in, 3);
		}
	}
	free(tg);
	free(hits);
	free(src);
	/* no updates at all: the data as is */
	*pi = r.pos;
	return lp_rw_become(&r, "Identity", &acc, 1);
fail:
	free(tg);
	free(hits);
	free(src);
	return -1;
}
