/* SPDX-License-Identifier: MIT */
/* fuse.c - MatMul+Add -> Gemm and Conv+BatchNormalization folding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/passes.h"
#include "ops/registry.h"

/* The only live node reading value v (and v is not a graph output), or -1. */
static int sole_consumer(const struct ir_graph *g, int v)
{
	int who = -1;

	if (g->vals[v].is_output)
		return -1;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++) {
			if (n->in[k] != v)
				continue;
			if (who >= 0 && who != i)
				return -1;
			who = i;
		}
	}
	return who;
}

int ir_pass_fuse_matmul_add(struct ir_graph *g, struct ir_error *e)
{
	int fused = 0;

	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *mm = &g->nodes[i], *add;
		struct ir_value *a, *b, *c, *y;
		int ai, other;
		int *nin;

		if (mm->dead || mm->opid != IR_OP_MatMul)
			continue;
		a = &g->vals[mm->in[0]];
		b = &g->vals[mm->in[1]];
		y = &g->vals[mm->out[0]];
		if (a->rank != 2 || b->rank != 2 || !b->data || !ir_dtype_is_float(a->dtype))
			continue;
		ai = sole_consumer(g, mm->out[0]);
		if (ai < 0)
			continue;
		add = &g->nodes[ai];
		if (add->opid != IR_OP_Add)
			continue;
		other = add->in[0] == mm->out[0] ? add->in[1] : add->in[0];
		c = &g->vals[other];
		if (!c->data || c->dtype != y->dtype || c->rank > 2 || other == mm->out[0])
			continue;
		{
			struct ir_value *z = &g->vals[add->out[0]];

			if (z->rank != 2 || z->dims[0] != y->dims[0] || z->dims[1] != y->dims[1])
				continue; /* the bias would broadcast the result */
		}
		nin = realloc(mm->in, 3 * sizeof(int));
		if (!nin)
			return ir_err(e, "out of memory");
		mm->in = nin;
		mm->in[2] = other;
		mm->nin = 3;
		mm->out[0] = add->out[0];
		if (ir_node_set_op(mm, "Gemm", e))
			return -1;
		add->dead = 1;
		fused++;
		ir_graph_link(g);
	}
	return fused;
}

int ir_pass_fuse_conv_bn(struct ir_graph *g, struct ir_error *e)
{
	int fused = 0;

	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *cv = &g->nodes[i], *bn;
		struct ir_value *w, *b = NULL, *p[4];
		int bi, nb;
		int64_t M, per;
		double eps;
		struct ir_tensor nw, nbias;

		if (cv->dead || cv->opid != IR_OP_Conv)
			continue;
		w = &g->vals[cv->in[1]];
		if (!w->data || !ir_dtype_is_float(w->dtype))
			continue;
		if (cv->nin > 2 && cv->in[2] >= 0) {
			b = &g->vals[cv->in[2]];
			if (!b->data)
				continue;
		}
		bi = sole_consumer(g, cv->out[0]);
		if (bi < 0)
			continue;
		bn = &g->nodes[bi];
		if (bn->opid != IR_OP_BatchNormalization || bn->in[0] != cv->out[0] || bn->nout != 1)
			continue;
		for (int k = 0; k < 4; k++) {
			p[k] = &g->vals[bn->in[k + 1]];
			if (!p[k]->data)
				break;
		}
		if (!p[0]->data || !p[1]->data || !p[2]->data || !p[3]->data)
			continue;
		M = w->dims[0];
		per = ir_value_numel(w) / (M ? M : 1);
		eps = ir_attr_float(bn, "epsilon", 1e-5);
		if (ir_tensor_alloc(&nw, w->dtype, w->rank, w->dims, e))
			return -1;
		if (ir_tensor_alloc(&nbias, w->dtype, 1, &M, e)) {
			ir_tensor_free(&nw);
			return -1;
		}
		for (int64_t m = 0; m < M; m++) {
			double sc = ir_get_f(p[0]->data, p[0]->dtype, (size_t)m);
			double bb = ir_get_f(p[1]->data, p[1]->dtype, (size_t)m);
			double mean = ir_get_f(p[2]->data, p[2]->dtype, (size_t)m);
			double var = ir_get_f(p[3]->data, p[3]->dtype, (size_t)m);
			double f = sc / sqrt(var + eps);
			double ob = b ? ir_get_f(b->data, b->dtype, (size_t)m) : 0;

			for (int64_t j = 0; j < per; j++)
				ir_set_f(nw.data, nw.dtype, (size_t)(m * per + j),
					 ir_get_f(w->data, w->dtype, (size_t)(m * per + j)) * f);
			ir_set_f(nbias.data, nbias.dtype, (size_t)m, (ob - mean) * f + bb);
		}
		{
			char base[300];
			int wv, bv;

			snprintf(base, sizeof(base), "%s_bn_weight", cv->name);
			wv = ir_value_add_unique(g, base, e);
			if (wv < 0) {
				ir_tensor_free(&nw);
				ir_tensor_free(&nbias);
				return -1;
			}
			ir_value_set_const(&g->vals[wv], &nw);
			snprintf(base, sizeof(base), "%s_bn_bias", cv->name);
			bv = ir_value_add_unique(g, base, e);
			if (bv < 0) {
				ir_tensor_free(&nbias);
				return -1;
			}
			ir_value_set_const(&g->vals[bv], &nbias);
			cv = &g->nodes[i]; /* vals may have moved; nodes did not */
			bn = &g->nodes[bi];
			if (cv->nin < 3) {
				int *ni = realloc(cv->in, 3 * sizeof(int));

				if (!ni)
					return ir_err(e, "out of memory");
				cv->in = ni;
				cv->nin = 3;
			}
			cv->in[1] = wv;
			cv->in[2] = bv;
			nb = bn->out[0];
			cv->out[0] = nb;
		}
		bn->dead = 1;
		fused++;
		ir_graph_link(g);
	}
	return fused;
}
