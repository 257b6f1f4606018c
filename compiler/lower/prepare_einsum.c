/* SPDX-License-Identifier: MIT */
/*
 * prepare_einsum.c - Einsum of one or two inputs rewritten into ReduceSum,
 * Transpose, Reshape and MatMul (a batched matrix product):
 *   labels only one input has and the output lacks -> ReduceSum first
 *   A -> Transpose to (batch, A's kept, contracted) -> Reshape (Bt, M, K)
 *   B -> Transpose to (batch, contracted, B's kept) -> Reshape (Bt, K, N)
 *   MatMul -> Reshape (batch, A's kept, B's kept) -> Transpose to the output
 * One input: ReduceSum, then Transpose.  A diagonal (a label twice in one
 * input) is gathered out of the pair's axes flattened first.  Broadcast
 * "..." axes of extent 1 and three or more inputs are refused with a
 * message (the evaluator folds them when constant).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/einsum.h"
#include "prepare_rw.h"

#define R IR_MAX_RANK

struct term {
	int v;			/* the value */
	int rank;
	int lab[R];
};

static int transpose(struct lp_rw *r, struct term *t, const int *order, int n)
{
	int64_t perm[R];
	int ident = 1;

	for (int i = 0; i < n; i++) {
		for (int k = 0; k < t->rank; k++)
			if (t->lab[k] == order[i])
				perm[i] = k;
		ident &= perm[i] == i;
	}
	if (ident)
		return 0;
	if ((t->v = lp_rw_add(r, "Transpose", t->v, -1)) < 0 ||
	    ir_attr_set_ints(&r->g->nodes[r->pos - 1], "perm", perm, (size_t)n, r->e))
		return -1;
	memcpy(t->lab, order, sizeof(int) * (size_t)n);
	return 0;
}

/* Sums the axes of t whose label `keep` rejects. */
static int reduce(struct lp_rw *r, struct term *t, const int *keep)
{
	int64_t axes[R];
	int na = 0, c = 0, ax;

	for (int k = 0; k < t->rank; k++)
		if (!keep[t->lab[k]])
			axes[na++] = k;
	if (!na)
		return 0;
	if ((ax = lp_rw_shape(r, axes, na)) < 0)
		return -1;
	if ((t->v = lp_rw_add(r, "ReduceSum", t->v, ax)) < 0 || lp_rw_int(r, "keepdims", 0))
		return -1;
	for (int k = 0; k < t->rank; k++)
		if (keep[t->lab[k]])
			t->lab[c++] = t->lab[k];
	t->rank = c;
	return 0;
}

static int reshape(struct lp_rw *r, int v, const int64_t *d, int n)
{
	int c = lp_rw_shape(r, d, n);

	return c < 0 ? -1 : lp_rw_add(r, "Reshape", v, c);
}

/* A label twice in t: its two axes moved last, flattened, and the
 * diagonal gathered out (indices 0, n + 1, 2n + 2, ...), until every
 * label of t is once there. */
static int diagonals(struct lp_rw *r, struct term *t, const int64_t *size)
{
	for (int i = 0; i < t->rank; i++)
		for (int j = i + 1; j < t->rank; j++) {
			int order[R], no = 0, l = t->lab[i], ix;
			int64_t d[R], n = size[l], *idx;

			if (t->lab[j] != l)
				continue;
			for (int k = 0; k < t->rank; k++)
				if (k != i && k != j) {
					d[no] = size[t->lab[k]];
					order[no++] = t->lab[k];
				}
			/* transpose() finds axes by label: give the pair distinct
			 * positions by placing them last explicitly */
			{
				int64_t perm[R];
				int np = 0;

				for (int k = 0; k < t->rank; k++)
					if (k != i && k != j)
						perm[np++] = k;
				perm[np++] = i;
				perm[np++] = j;
				if ((t->v = lp_rw_add(r, "Transpose", t->v, -1)) < 0 ||
				    ir_attr_set_ints(&r->g->nodes[r->pos - 1], "perm", perm, (size_t)np, r->e))
					return -1;
			}
			d[no] = n * n;
			if ((t->v = reshape(r, t->v, d, no + 1)) < 0)
				return -1;
			if (!(idx = malloc((size_t)n * sizeof(*idx))))
				return ir_err(r->e, "out of memory");
			for (int64_t k = 0; k < n; k++)
				idx[k] = k * (n + 1);
			ix = lp_rw_ints(r, "einsum_diag", IR_I64, 1, &n, idx);
			free(idx);
			if (ix < 0 || (t->v = lp_rw_add(r, "Gather", t->v, ix)) < 0 ||
			    lp_rw_int(r, "axis", no))
				return -1;
			order[no++] = l;
			memcpy(t->lab, order, sizeof(int) * (size_t)no);
			t->rank = no;
			i = -1;	/* start over on the new axes */
			break;
		}
	return 0;
}

int lp_prep_einsum(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int rank[EINSUM_MAX_IN], nin = n->nin;
	int64_t dims[EINSUM_MAX_IN][R];
	struct einsum es;
	struct term t[2];
	struct lp_rw r = { g, *pi, "", e };
	int inA[EINSUM_MAX_LABELS] = { 0 }, inB[EINSUM_MAX_LABELS] = { 0 }, inO[EINSUM_MAX_LABELS] = { 0 };
	int keep[EINSUM_MAX_LABELS], order[R], no = 0;
	char msg[200];

	if (nin > 2)
		return ir_node_err(e, g, n, "Einsum of %d inputs is not lowered (1 or 2 are)", nin);
	for (int k = 0; k < nin; k++) {
		const struct ir_value *v = &g->vals[n->in[k]];

		rank[k] = v->rank;
		memcpy(dims[k], v->dims, sizeof(dims[k]));
	}
	if (einsum_parse(ir_attr_str(n, "equation", ""), nin, rank, (const int64_t (*)[R])dims, &es,
			 msg, sizeof(msg)))
		return ir_node_err(e, g, n, "equation: %s", msg);
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	for (int k = 0; k < nin; k++) {
		/* a diagonal inserts nodes before n: g->nodes moves */
		n = &g->nodes[r.pos];
		t[k].v = n->in[k];
		t[k].rank = rank[k];
		memcpy(t[k].lab, es.lab[k], sizeof(t[k].lab));
		for (int i = 0; i < rank[k]; i++)
			if (dims[k][i] != es.size[es.lab[k][i]])
				return ir_node_err(e, g, n, "broadcasting an axis of extent 1 is not lowered");
		if (diagonals(&r, &t[k], es.size))
			return -1;
		n = &g->nodes[r.pos];
		for (int i = 0; i < t[k].rank; i++)
			(k ? inB : inA)[t[k].lab[i]] = 1;
	}
	for (int i = 0; i < es.out_rank; i++)
		inO[es.out_lab[i]] = 1;
	/* labels one input alone has and the output lacks are summed first */
	for (int l = 0; l < EINSUM_MAX_LABELS; l++)
		keep[l] = inO[l] || (inA[l] && inB[l]);
	for (int k = 0; k < nin; k++)
		if (reduce(&r, &t[k], keep))
			return -1;
	if (nin == 2) {
		int batch[R], ak[R], bk[R], ct[R], nb = 0, na = 0, nbk = 0, nc = 0, oa[R], ob[R];
		int64_t Bt = 1, M = 1, K = 1, N = 1, d3[3], od[R];
		int p, nd = 0;

		for (int i = 0; i < t[0].rank; i++) {
			int l = t[0].lab[i];

			if (inB[l] && inO[l])
				batch[nb++] = l, Bt *= es.size[l];
			else if (inB[l])
				ct[nc++] = l, K *= es.size[l];
			else
				ak[na++] = l, M *= es.size[l];
		}
		for (int i = 0; i < t[1].rank; i++)
			if (!inA[t[1].lab[i]])
				bk[nbk++] = t[1].lab[i], N *= es.size[t[1].lab[i]];
		memcpy(oa, batch, sizeof(int) * (size_t)nb);
		memcpy(oa + nb, ak, sizeof(int) * (size_t)na);
		memcpy(oa + nb + na, ct, sizeof(int) * (size_t)nc);
		memcpy(ob, batch, sizeof(int) * (size_t)nb);
		memcpy(ob + nb, ct, sizeof(int) * (size_t)nc);
		memcpy(ob + nb + nc, bk, sizeof(int) * (size_t)nbk);
		if (transpose(&r, &t[0], oa, t[0].rank) || transpose(&r, &t[1], ob, t[1].rank))
			return -1;
		d3[0] = Bt, d3[1] = M, d3[2] = K;
		if ((t[0].v = reshape(&r, t[0].v, d3, 3)) < 0)
			return -1;
		d3[1] = K, d3[2] = N;
		if ((t[1].v = reshape(&r, t[1].v, d3, 3)) < 0 ||
		    (p = lp_rw_add(&r, "MatMul", t[0].v, t[1].v)) < 0)
			return -1;
		for (int i = 0; i < nb; i++)
			order[nd] = batch[i], od[nd++] = es.size[batch[i]];
		for (int i = 0; i < na; i++)
			order[nd] = ak[i], od[nd++] = es.size[ak[i]];
		for (int i = 0; i < nbk; i++)
			order[nd] = bk[i], od[nd++] = es.size[bk[i]];
		if (nd > R)
			return ir_node_err(e, g, &g->nodes[r.pos], "result rank too large");
		if ((p = reshape(&r, p, od, nd)) < 0)
			return -1;
		t[0].v = p;
		t[0].rank = nd;
		memcpy(t[0].lab, order, sizeof(int) * (size_t)nd);
	}
	for (int i = 0; i < es.out_rank; i++)
		order[no++] = es.out_lab[i];
	if (transpose(&r, &t[0], order, no))
		return -1;
	*pi = r.pos;
	return lp_rw_become(&r, "Identity", &t[0].v, 1);
}
