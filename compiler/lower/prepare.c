/* SPDX-License-Identifier: MIT */
/*
 * prepare.c - IR rewrites that reduce the ops the lowering must know:
 *   Gemm -> [Transpose] MatMul [Mul alpha] [Add beta*C]
 *   BatchNormalization (constant parameters) -> Mul + Add per channel
 *   Sum/Max/Min/Mean with n inputs -> chains of two-input ops
 *   Cast to bool -> Not(Equal(x, 0))
 *   LayerNormalization without bias -> zero bias
 *   Reduce with empty axes and noop_with_empty_axes -> Identity
 *   Gather of one constant index from run-time data -> Slice + Reshape
 *   LSTM, GRU, RNN -> their time steps unrolled (prepare_rnn.c)
 * each the `prepare` hook of its operator's line in ops/ops.def, then the
 * `decompose` hooks (prepare_decompose.c) over every node twice, around a
 * refold of the constants (transposed weights, scaled biases); then dead
 * nodes are dropped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/passes.h"
#include "lower_internal.h"

int lp_prep_gemm(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	char name[256];
	int a = n->in[0], b = n->in[1], c = n->nin > 2 ? n->in[2] : -1, out = n->out[0];
	int ta = (int)ir_attr_int(n, "transA", 0), tb = (int)ir_attr_int(n, "transB", 0);
	double alpha = ir_attr_float(n, "alpha", 1), beta = ir_attr_float(n, "beta", 1);
	int dt = g->vals[a].dtype, pos = *pi, in[2], y;

	snprintf(name, sizeof(name), "%s", n->name);
	if (ta && (a = lp_add_node(g, &pos, name, "Transpose", &a, 1, e)) < 0)
		return -1;
	if (tb && (b = lp_add_node(g, &pos, name, "Transpose", &b, 1, e)) < 0)
		return -1;
	in[0] = a;
	in[1] = b;
	if ((y = lp_add_node(g, &pos, name, "MatMul", in, 2, e)) < 0)
		return -1;
	if (alpha != 1) {
		in[0] = y;
		if ((in[1] = lp_const_scalar(g, "alpha", dt, alpha, 0, e)) < 0 ||
		    (y = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
			return -1;
	}
	if (c >= 0 && beta != 0) {
		if (beta != 1) {
			in[0] = c;
			if ((in[1] = lp_const_scalar(g, "beta", dt, beta, 0, e)) < 0 ||
			    (c = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
				return -1;
		}
		in[0] = y;
		in[1] = c;
		if ((y = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
			return -1;
	}
	/* the Gemm node becomes an Identity writing the original output */
	n = &g->nodes[pos];
	n->in[0] = y;
	n->nin = 1;
	(void)out;
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	*pi = pos;
	return ir_node_set_op(n, "Identity", e);
}

int lp_prep_batchnorm(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]];
	int64_t C = x->dims[1], d[IR_MAX_RANK];
	double eps = ir_attr_float(n, "epsilon", 1e-5);
	struct ir_tensor s, b;
	int sv, bv, pos = *pi, in[2], y, dt = x->dtype, rank = x->rank;
	char name[256];

	for (int k = 1; k < 5; k++)
		if (!g->vals[n->in[k]].data)
			return ir_node_err(e, g, n, "parameters must be constants to lower");
	for (int i = 0; i < rank - 1; i++)
		d[i] = i == 0 ? C : 1;
	if (ir_tensor_alloc(&s, dt, rank - 1, d, e))
		return -1;
	if (ir_tensor_alloc(&b, dt, rank - 1, d, e)) {
		ir_tensor_free(&s);
		return -1;
	}
	for (int64_t c = 0; c < C; c++) {
		const struct ir_value *p[4];
		double f;

		for (int k = 0; k < 4; k++)
			p[k] = &g->vals[n->in[k + 1]];
		f = ir_get_f(p[0]->data, p[0]->dtype, (size_t)c) /
		    sqrt(ir_get_f(p[3]->data, p[3]->dtype, (size_t)c) + eps);
		ir_set_f(s.data, dt, (size_t)c, f);
		ir_set_f(b.data, dt, (size_t)c, ir_get_f(p[1]->data, p[1]->dtype, (size_t)c) -
			 ir_get_f(p[2]->data, p[2]->dtype, (size_t)c) * f);
	}
	snprintf(name, sizeof(name), "%s", n->name);
	sv = ir_value_add_unique(g, "bn_scale", e);
	bv = sv < 0 ? -1 : ir_value_add_unique(g, "bn_shift", e);
	if (bv < 0) {
		ir_tensor_free(&s);
		ir_tensor_free(&b);
		return -1;
	}
	ir_value_set_const(&g->vals[sv], &s);
	ir_value_set_const(&g->vals[bv], &b);
	in[0] = g->nodes[*pi].in[0];
	in[1] = sv;
	if ((y = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
		return -1;
	n = &g->nodes[pos];
	n->in[0] = y;
	n->in[1] = bv;
	n->nin = 2;
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	*pi = pos;
	return ir_node_set_op(n, "Add", e);
}

static int variadic(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int mean = n->opid == IR_OP_Mean, pos = *pi, acc = n->in[0], in[2];
	const char *bin = mean || n->opid == IR_OP_Sum ? "Add" : n->op;
	char name[256], op[16];
	int nin = n->nin, last[2];

	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(op, sizeof(op), "%s", bin);
	for (int k = 1; k < nin - (mean ? 0 : 1); k++) {
		in[0] = acc;
		in[1] = g->nodes[pos].in[k];
		if ((acc = lp_add_node(g, &pos, name, op, in, 2, e)) < 0)
			return -1;
	}
	n = &g->nodes[pos];
	if (mean) {
		last[0] = acc;
		if ((last[1] = lp_const_scalar(g, "mean_scale", g->vals[g->nodes[pos].in[0]].dtype,
					       1.0 / nin, 0, e)) < 0)
			return -1;
		n = &g->nodes[pos];
		if (n->nin < 2) {
			int *ni = realloc(n->in, 2 * sizeof(int));

			if (!ni)
				return ir_err(e, "out of memory");
			n->in = ni;
		}
		n->in[0] = last[0];
		n->in[1] = last[1];
		n->nin = 2;
		*pi = pos;
		return ir_node_set_op(n, "Mul", e);
	}
	if (nin == 1) {
		*pi = pos;
		return ir_node_set_op(n, "Identity", e);
	}
	n->in[0] = acc;
	n->in[1] = n->in[nin - 1];
	n->nin = 2;
	*pi = pos;
	return ir_node_set_op(n, op, e);
}

static int cast_bool(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int pos = *pi, in[2], y;
	char name[256];

	snprintf(name, sizeof(name), "%s", n->name);
	in[0] = n->in[0];
	if ((in[1] = lp_const_scalar(g, "zero", g->vals[in[0]].dtype, 0, 0, e)) < 0 ||
	    (y = lp_add_node(g, &pos, name, "Equal", in, 2, e)) < 0)
		return -1;
	n = &g->nodes[pos];
	n->in[0] = y;
	ir_attr_remove(n, "to");
	*pi = pos;
	return ir_node_set_op(n, "Not", e);
}

static int layernorm_bias(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *sc = &g->vals[n->in[1]];
	struct ir_tensor t;
	int v, *ni;

	if (ir_tensor_alloc(&t, sc->dtype, sc->rank, sc->dims, e))
		return -1;
	v = ir_value_add_unique(g, "ln_zero_bias", e);
	if (v < 0) {
		ir_tensor_free(&t);
		return -1;
	}
	ir_value_set_const(&g->vals[v], &t);
	n = &g->nodes[*pi];
	ni = realloc(n->in, 3 * sizeof(int));
	if (!ni)
		return ir_err(e, "out of memory");
	n->in = ni;
	n->in[2] = v;
	n->nin = 3;
	return 0;
}

/* Sum, Max, Min of one or more than two inputs and Mean: chains of
 * two-input ops; a two-input Sum is an Add. */
int lp_prep_variadic(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];

	if (n->nin != 2 || n->opid == IR_OP_Mean)
		return variadic(g, pi, e);
	if (n->opid == IR_OP_Sum)
		return ir_node_set_op(n, "Add", e);
	return 0;
}

int lp_prep_cast(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];

	if (ir_attr_int(n, "to", 0) == IR_BOOL && g->vals[n->in[0]].dtype != IR_BOOL)
		return cast_bool(g, pi, e);
	return 0;
}

int lp_prep_layernorm(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];

	if (n->nin < 3 || n->in[2] < 0)
		return layernorm_bias(g, pi, e);
	return 0;
}

/* A reduction over no axes with noop_with_empty_axes passes its input on. */
int lp_prep_reduce(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];

	if (!ir_attr_int(n, "noop_with_empty_axes", 0) ||
	    !(n->nin < 2 || n->in[1] < 0 || ir_value_numel(&g->vals[n->in[1]]) == 0))
		return 0;
	n->nin = 1;
	return ir_node_set_op(n, "Identity", e);
}

int ipu_lower_prepare(struct ir_graph *g, int64_t fold_limit, struct ir_error *e)
{
	struct ir_infer_opts io = { .fold = 1, .fold_limit = fold_limit };

	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];
		const struct lw_op_hooks *h;
		int r = 0;

		if (n->dead)
			continue;
		h = lw_node_hooks(n);
		if (h && h->prepare)
			r = h->prepare(g, &i, e);
		/* the rewrites above may insert nodes (g->nodes moves): re-read */
		if (!r && !g->nodes[i].dead)
			r = lp_decompose(g, &i, e);
		if (r)
			return -1;
	}
	ir_graph_link(g);
	if (ir_infer(g, &io, e))
		return -1;
	/* second round: nodes the first round created (e.g. an int64 Sub) */
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && lp_decompose(g, &i, e))
			return -1;
	ir_graph_link(g);
	if (ir_infer(g, &io, e) || ir_pass_identity(g, e) < 0 || ir_pass_dce(g, e) < 0)
		return -1;
	return 0;
}
