/* SPDX-License-Identifier: MIT */
/*
 * lower_act.c - a Relu, or a Clip with constant bounds, whose input is a
 * convolution's or a product's result read by nothing else is lowered
 * with that producer: the vertices that write the result's final values
 * apply it as they store them (IPUX_CONV_RELU/CLIP, IPUX_MM_RELU/CLIP),
 * and the activation's output is the producer's tensor.  Lowered apart,
 * the activation was a compute set of its own, a vertex per 8 KiB piece
 * of the result and one more pass over it.  The epilogue uses UNARY's
 * formulas on the float32 sum: a float32 result has the same bits, a
 * float16 one is rounded once after it (unfused, a sum rounding to -0
 * stayed -0 through Relu; fused it is +0).  A float Add read only by a
 * Relu (a residual connection's) runs as BINARY ADD_RELU the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

static int fuse_off(void)
{
	const char *e = getenv("IPU_LOWER_FUSE_ACT");

	return e && !strcmp(e, "0");
}

/* 1 with the activation of node r (reading v of dtype dt) in *a. */
static int act_of(const struct ir_graph *g, int r, int v, struct lw_act *a)
{
	const struct ir_node *n = &g->nodes[r];
	const struct ir_value *x = &g->vals[v], *o;
	double lo = -3.4028234663852886e38, hi = 3.4028234663852886e38;

	if (n->nout != 1 || n->out[0] < 0 || n->nin < 1 || n->in[0] != v)
		return 0;
	o = &g->vals[n->out[0]];
	if (o->dtype != x->dtype || ir_value_numel(o) != ir_value_numel(x))
		return 0;
	switch (n->opid) {
	case IR_OP_Relu:
		if (n->nin != 1)
			return 0;
		a->kind = 1;
		return 1;
	case IR_OP_Clip:
		/* bounds as UNARY CLIP takes them (lower_elementwise.c) */
		for (int k = 1; k < 3 && k < n->nin; k++) {
			const struct ir_value *b = n->in[k] >= 0 ? &g->vals[n->in[k]] : NULL;

			if (!b)
				continue;
			if (!b->data || ir_value_numel(b) != 1)
				return 0;
			if (k == 1)
				lo = ir_get_f(b->data, b->dtype, 0);
			else
				hi = ir_get_f(b->data, b->dtype, 0);
		}
		if (n->nin > 3)
			return 0;
		a->kind = 2;
		a->lo = lw_f32bits(lo);
		a->hi = lw_f32bits(hi);
		{
			float fl, fh;

			memcpy(&fl, &a->lo, sizeof(fl));
			memcpy(&fh, &a->hi, sizeof(fh));
			/* the codelet takes numbers with lo <= hi only */
			return fl <= fh;
		}
	default:
		return 0;
	}
}

/* 1 with the activation in *a (not absorbed yet). */
static int act_find(const struct lw *l, int v, int never, int relu_only, struct lw_act *a)
{
	const struct ir_graph *g = l->g;
	const struct ir_value *x = &g->vals[v];
	int r;

	memset(a, 0, sizeof(*a));
	a->node = -1;
	if (never || fuse_off() || x->is_output || (x->dtype != IR_F32 && x->dtype != IR_F16))
		return 0;
	/*
	 * Through views (a 1x1 convolution is Reshape, MatMul, Add, Reshape):
	 * they alias their input's tensor, which then holds the activation's
	 * values, so no view on the way may be read by anything else.
	 */
	for (int hop = 0; hop < 8; hop++) {
		const struct ir_node *rn;
		const struct lw_op_hooks *h;

		r = lw_only_reader(g, v);
		if (r < 0)
			break;
		rn = &g->nodes[r];
		h = lw_node_hooks(rn);
		if (!h || h->lower != lw_alias || rn->nin < 1 || rn->in[0] != v ||
		    rn->out[0] < 0 || (rn->nout > 1 && rn->out[1] >= 0) ||
		    g->vals[rn->out[0]].is_output)
			break;
		v = rn->out[0];
	}
	if (r < 0 || !act_of(g, r, v, a) || (relu_only && a->kind != 1)) {
		memset(a, 0, sizeof(*a));
		a->node = -1;
		return 0;
	}
	a->node = r;
	return 1;
}

void lw_act_absorb(struct lw *l, int v, ipu_tensor t, const struct lw_act *a)
{
	const struct ir_graph *g = l->g;

	if (a->node < 0)
		return;
	l->absorbed[a->node] = 1;
	/* a value kept in its column blocks (lower_blocked.c): the
	 * activation's output is the same blocks */
	if (t == IPU_GRAPH_INVALID && lw_is_blocked(l, v))
		lw_blocked_alias(l, g->nodes[a->node].out[0], v);
	else
		l->vt[g->nodes[a->node].out[0]] = t;
}

int lw_act_take(struct lw *l, int v, ipu_tensor t, int never, struct lw_act *a)
{
	if (act_find(l, v, never, 0, a))
		lw_act_absorb(l, v, t, a);
	return 0;
}

int lw_act_find_relu(const struct lw *l, int v, int never, struct lw_act *a)
{
	return act_find(l, v, never, 1, a);
}

int lw_mm_vertex(struct lw *l, uint32_t cs, const struct ipu_slice *ops, const uint32_t *p5,
		 const struct lw_act *a)
{
	uint32_t p[7];
	uint32_t np = 5;

	memcpy(p, p5, 5 * sizeof(*p));
	if (a && a->kind == 1) {
		p[4] |= IPUX_MM_RELU;
	} else if (a && a->kind == 2) {
		p[4] |= IPUX_MM_CLIP;
		p[5] = a->lo;
		p[6] = a->hi;
		np = 7;
	}
	return ipu_graph_add_vertex(l->gb, cs, IPUX_CL_MATMUL, ops, 3, p, np);
}
