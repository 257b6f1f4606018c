/* SPDX-License-Identifier: MIT */
/*
 * prepare_rnn.c - LSTM, GRU and RNN unrolled over their time steps into
 * ops the device has.  Per direction: the input projection of every step
 * at once (one MatMul of X [T*B, I] by W^T, plus the biases), then per
 * step the recurrent MatMul of the hidden state by R^T, the gates
 * (Slice, Sigmoid, Tanh, Mul, Add) and the new state.  W, R, B, the
 * initial states and the peepholes may be constants (their slices and
 * transposes fold at compile time, so the weights stay frozen on the
 * tiles that use them) or run-time inputs.  The per-step hidden states
 * are concatenated into Y; Y_h and Y_c are the last states.
 *
 * Not lowered (refused naming the node): activations other than Sigmoid,
 * Tanh, Relu, Softsign and Softplus (or ones with alpha/beta), clip,
 * input_forget, and sequence_lens that are not a constant equal to the
 * sequence length for every batch entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

struct rb {
	struct ir_graph *g;
	int pos;
	char name[256];
	struct ir_error *e;
	int dt;
};

/*
 * Time steps unrolled per node (sequence length x directions).  Each step
 * adds a few dozen ops, and the lowering's passes grow faster than
 * linearly with them; past this a sequence must be split.
 */
#define RNN_MAX_UNROLLED 256

static int cint(struct rb *b, const int64_t *v, int64_t n)
{
	struct ir_tensor t;
	char nm[48];
	int x;

	/* the value count makes the name new at the first try */
	snprintf(nm, sizeof(nm), "rnn_i64_%d", b->g->nvals);
	x = ir_value_add_unique(b->g, nm, b->e);

	if (x < 0 || ir_tensor_alloc(&t, IR_I64, 1, &n, b->e))
		return -1;
	memcpy(t.data, v, (size_t)n * 8);
	ir_value_set_const(&b->g->vals[x], &t);
	return x;
}

static int op1(struct rb *b, const char *op, int a)
{
	return a < 0 ? -1 : lp_add_node(b->g, &b->pos, b->name, op, &a, 1, b->e);
}

static int op2(struct rb *b, const char *op, int a, int c)
{
	int in[2] = { a, c };

	return a < 0 || c < 0 ? -1 : lp_add_node(b->g, &b->pos, b->name, op, in, 2, b->e);
}

/* v[..., start:end, ...] along axis */
static int slice(struct rb *b, int v, int axis, int64_t start, int64_t end)
{
	int64_t ax = axis;
	int in[4];

	in[0] = v;
	if (v < 0 || (in[1] = cint(b, &start, 1)) < 0 || (in[2] = cint(b, &end, 1)) < 0 ||
	    (in[3] = cint(b, &ax, 1)) < 0)
		return -1;
	return lp_add_node(b->g, &b->pos, b->name, "Slice", in, 4, b->e);
}

static int reshape(struct rb *b, int v, int rank, const int64_t *dims)
{
	int s = v < 0 ? -1 : cint(b, dims, rank);

	return s < 0 ? -1 : op2(b, "Reshape", v, s);
}

static int transpose(struct rb *b, int v, int rank, const int64_t *perm)
{
	int t = op1(b, "Transpose", v);

	if (t < 0 || ir_attr_set_ints(&b->g->nodes[b->pos - 1], "perm", perm, rank, b->e))
		return -1;
	return t;
}

static int concat(struct rb *b, const int *in, int n, int axis, int out)
{
	int v = out;

	if (out >= 0) {
		if (ir_node_insert(b->g, b->pos, b->g->vals[out].name, "Concat", in, n, &out, 1, b->e) < 0)
			return -1;
		b->pos++;
	} else if ((v = lp_add_node(b->g, &b->pos, b->name, "Concat", in, n, b->e)) < 0) {
		return -1;
	}
	if (ir_attr_set_int(&b->g->nodes[b->pos - 1], "axis", axis, b->e))
		return -1;
	return v;
}

static int zeros(struct rb *b, int64_t rows, int64_t cols)
{
	struct ir_tensor t;
	int64_t d[2] = { rows, cols };
	int x = ir_value_add_unique(b->g, "rnn_zero", b->e);

	if (x < 0 || ir_tensor_alloc(&t, b->dt, 2, d, b->e))
		return -1;
	ir_value_set_const(&b->g->vals[x], &t);
	return x;
}

/* Activation k of the node (ONNX names), or its default. */
static int act(struct rb *b, const struct ir_node *n, int k, const char *dflt, const char **op)
{
	const struct ir_attr *a = ir_attr_find(n, "activations");
	static const char *const ok[] = { "Sigmoid", "Tanh", "Relu", "Softsign", "Softplus", NULL };

	*op = a && a->type == IR_ATTR_STRINGS && k < (int)a->n ? a->strings[k] : dflt;
	for (int i = 0; ok[i]; i++)
		if (!strcmp(ok[i], *op)) {
			*op = ok[i];
			return 0;
		}
	return ir_node_err(b->e, b->g, n, "activation '%s' is not lowered (Sigmoid, Tanh, Relu, Softsign and Softplus are; a parameterised one needs its alpha/beta)",
			   *op);
}

/* Rows [d] of a [D, ...] tensor as [rows, cols]. */
static int dir_mat(struct rb *b, int v, int64_t d, int64_t rows, int64_t cols)
{
	int64_t sh[2] = { rows, cols };

	return reshape(b, slice(b, v, 0, d, d + 1), 2, sh);
}

int lp_rnn(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int gates = n->opid == IR_OP_LSTM ? 4 : n->opid == IR_OP_GRU ? 3 : 1;
	const char *dir = ir_attr_str(n, "direction", "forward");
	int layout = (int)ir_attr_int(n, "layout", 0), lbr = (int)ir_attr_int(n, "linear_before_reset", 0);
	int in[8], out[3], nout = n->nout;
	int64_t D = strcmp(dir, "bidirectional") ? 1 : 2, T, B, H, I, G;
	const char *fa[2] = { 0 }, *ga[2] = { 0 }, *ha[2] = { 0 };
	struct rb b = { g, *pi, "", e, 0 };
	int ydir[2], hlast[2], clast[2];
	int *ys = NULL, r = -1;
	char base[200];

	for (int k = 0; k < 8; k++)
		in[k] = k < n->nin ? n->in[k] : -1;
	for (int k = 0; k < 3; k++)
		out[k] = k < n->nout ? n->out[k] : -1;
	snprintf(b.name, sizeof(b.name), "%s", n->name);
	/* n points into g->nodes, which the unrolling reallocates */
	snprintf(base, sizeof(base), "%s", n->name);
	b.dt = g->vals[in[0]].dtype;
	T = g->vals[in[0]].dims[layout ? 1 : 0];
	B = g->vals[in[0]].dims[layout ? 0 : 1];
	I = g->vals[in[0]].dims[2];
	H = g->vals[in[2]].dims[2];
	G = gates * H;
	if (T < 1)
		return ir_node_err(e, g, n, "%s over an empty sequence (0 time steps): empty tensors are not supported on the device",
				   n->op);
	if (T * D > RNN_MAX_UNROLLED)
		return ir_node_err(e, g, n, "%s over %lld time steps%s: its steps are unrolled, and at most %d are lowered (split the sequence into shorter ones)",
				   n->op, (long long)T, D > 1 ? " in both directions" : "",
				   RNN_MAX_UNROLLED / (int)D);
	if (ir_attr_find(n, "clip"))
		return ir_node_err(e, g, n, "clip is not lowered (the cell state would need a Clip per step)");
	if (ir_attr_int(n, "input_forget", 0))
		return ir_node_err(e, g, n, "input_forget is not lowered");
	if (in[4] >= 0) {
		const struct ir_value *sl = &g->vals[in[4]];

		if (!sl->data)
			return ir_node_err(e, g, n, "sequence_lens must be a constant to be lowered (its steps are unrolled at compile time)");
		for (int64_t k = 0; k < ir_value_numel(sl); k++)
			if (ir_get_i(sl->data, sl->dtype, (size_t)k) != T)
				return ir_node_err(e, g, n, "sequence_lens[%lld] is %lld, not the sequence length %lld: shorter sequences in a batch are not lowered",
						   (long long)k, (long long)ir_get_i(sl->data, sl->dtype, (size_t)k),
						   (long long)T);
	}
	/* activations per direction: f (gates), g (candidate), h (output) */
	for (int d = 0; d < (int)D; d++)
		if (act(&b, n, d * (gates == 4 ? 3 : gates == 3 ? 2 : 1), gates == 1 ? "Tanh" : "Sigmoid", &fa[d]) ||
		    (gates > 1 && act(&b, n, d * (gates == 4 ? 3 : 2) + 1, "Tanh", &ga[d])) ||
		    (gates == 4 && act(&b, n, d * 3 + 2, "Tanh", &ha[d])))
			return -1;
	ys = calloc((size_t)T, sizeof(*ys));
	if (!ys)
		return ir_err(e, "out of memory");
	/* detach the outputs: the unrolled ops write them */
	n->nout = 0;
	n->dead = 1;
	{
		int x = in[0];

		if (layout) {
			static const int64_t p[3] = { 1, 0, 2 };

			x = transpose(&b, x, 3, p);
		}
		in[0] = x;
	}
	for (int64_t d = 0; d < D; d++) {
		int rev = !strcmp(dir, "reverse") || d == 1;
		int wt, rt, xw, h, c = -1, pi_ = -1, po = -1, pf = -1, rbh = -1, rzr = -1, rh = -1;
		int64_t sh3[3] = { T, B, G }, shx[2] = { T * B, I }, p2[2] = { 1, 0 };


		/* W^T [I, G], R^T [H, G]; the projection of every step at once */
		wt = transpose(&b, dir_mat(&b, in[1], d, G, I), 2, p2);
		rt = transpose(&b, dir_mat(&b, in[2], d, G, H), 2, p2);
		xw = reshape(&b, op2(&b, "MatMul", reshape(&b, in[0], 2, shx), wt), 3, sh3);
		if (xw < 0)
			goto out;
		if (in[3] >= 0) {
			int bd = dir_mat(&b, in[3], d, 1, 2 * G), wb = slice(&b, bd, 1, 0, G), rb = slice(&b, bd, 1, G, 2 * G);

			/* GRU with linear_before_reset: R's bias stays with H R^T
			 * inside r * (...) */
			xw = op2(&b, "Add", xw, wb);
			if (gates == 3 && lbr)
				rbh = rb;
			else
				xw = op2(&b, "Add", xw, rb);
			if (xw < 0)
				goto out;
		}
		if (gates == 3) {
			if (lbr) {
				rh = rt;
			} else {
				rzr = slice(&b, rt, 1, 0, 2 * H);
				rh = slice(&b, rt, 1, 2 * H, 3 * H);
			}
		}
		h = in[5] >= 0 ? dir_mat(&b, in[5], d, B, H) : zeros(&b, B, H);
		if (gates == 4) {
			c = in[6] >= 0 ? dir_mat(&b, in[6], d, B, H) : zeros(&b, B, H);
			if (in[7] >= 0) {
				int pd = dir_mat(&b, in[7], d, 1, 3 * H);

				pi_ = slice(&b, pd, 1, 0, H);
				po = slice(&b, pd, 1, H, 2 * H);
				pf = slice(&b, pd, 1, 2 * H, 3 * H);
			}
		}
		if (h < 0 || c < -1)
			goto out;
		for (int64_t s = 0; s < T; s++) {
			int64_t t = rev ? T - 1 - s : s, shg[2] = { B, G }, shy[4] = { 1, 1, B, H };
			int xt;

			/* one name per step: few ops of a step share a name to make unique */
			snprintf(b.name, sizeof(b.name), "%s/%s%lld", base, d ? "r" : "t", (long long)t);
			xt = reshape(&b, slice(&b, xw, 0, t, t + 1), 2, shg);

			if (gates == 4) {
				int gt = op2(&b, "Add", xt, op2(&b, "MatMul", h, rt));
				int ig = slice(&b, gt, 1, 0, H), og = slice(&b, gt, 1, H, 2 * H);
				int fg = slice(&b, gt, 1, 2 * H, 3 * H), cg = slice(&b, gt, 1, 3 * H, 4 * H);

				if (pi_ >= 0) {
					ig = op2(&b, "Add", ig, op2(&b, "Mul", pi_, c));
					fg = op2(&b, "Add", fg, op2(&b, "Mul", pf, c));
				}
				ig = op1(&b, fa[d], ig);
				fg = op1(&b, fa[d], fg);
				cg = op1(&b, ga[d], cg);
				c = op2(&b, "Add", op2(&b, "Mul", fg, c), op2(&b, "Mul", ig, cg));
				if (po >= 0)
					og = op2(&b, "Add", og, op2(&b, "Mul", po, c));
				og = op1(&b, fa[d], og);
				h = op2(&b, "Mul", og, op1(&b, ha[d], c));
			} else if (gates == 3) {
				int zr, z, rr, hh;

				if (lbr) {
					int hr = op2(&b, "MatMul", h, rh);

					if (rbh >= 0)
						hr = op2(&b, "Add", hr, rbh);
					zr = op1(&b, fa[d], op2(&b, "Add", slice(&b, xt, 1, 0, 2 * H), slice(&b, hr, 1, 0, 2 * H)));
					z = slice(&b, zr, 1, 0, H);
					rr = slice(&b, zr, 1, H, 2 * H);
					hh = op2(&b, "Mul", rr, slice(&b, hr, 1, 2 * H, 3 * H));
				} else {
					zr = op1(&b, fa[d], op2(&b, "Add", slice(&b, xt, 1, 0, 2 * H), op2(&b, "MatMul", h, rzr)));
					z = slice(&b, zr, 1, 0, H);
					rr = slice(&b, zr, 1, H, 2 * H);
					hh = op2(&b, "MatMul", op2(&b, "Mul", rr, h), rh);
				}
				hh = op1(&b, ga[d], op2(&b, "Add", slice(&b, xt, 1, 2 * H, 3 * H), hh));
				/* h = (1 - z) * hh + z * h = hh + z * (h - hh) */
				h = op2(&b, "Add", hh, op2(&b, "Mul", z, op2(&b, "Sub", h, hh)));
			} else {
				h = op1(&b, fa[d], op2(&b, "Add", xt, op2(&b, "MatMul", h, rt)));
			}
			if (h < 0 || (gates == 4 && c < 0))
				goto out;
			if (out[0] >= 0 && (ys[t] = reshape(&b, h, 4, shy)) < 0)
				goto out;
		}
		snprintf(b.name, sizeof(b.name), "%s", base);
		if (out[0] >= 0) {
			int64_t sh1[4] = { T, 1, B, H };

			ydir[d] = T > 1 ? concat(&b, ys, (int)T, 0, -1) : reshape(&b, ys[0], 4, sh1);
			if (ydir[d] < 0)
				goto out;
		}
		hlast[d] = h;
		clast[d] = c;
	}
	/* the node's outputs, in its layout */
	for (int k = 0; k < 3 && k < nout; k++) {
		int parts[2], v;
		int64_t sh[3] = { 1, B, H };

		if (out[k] < 0 || (k == 2 && gates != 4))
			continue;
		for (int64_t d = 0; d < D; d++)
			parts[d] = k == 0 ? ydir[d] : reshape(&b, k == 1 ? hlast[d] : clast[d], 3, sh);
		if (!layout) {
			if (concat(&b, parts, (int)D, k == 0 ? 1 : 0, out[k]) < 0)
				goto out;
			continue;
		}
		/* layout 1: Y [B, T, D, H], Y_h/Y_c [B, D, H] */
		v = concat(&b, parts, (int)D, k == 0 ? 1 : 0, -1);
		if (k == 0)
			v = transpose(&b, v, 4, (const int64_t[]){ 2, 0, 1, 3 });
		else
			v = transpose(&b, v, 3, (const int64_t[]){ 1, 0, 2 });
		if (v < 0 || ir_node_insert(g, b.pos, g->vals[out[k]].name, "Identity", &v, 1, &out[k], 1, e) < 0)
			goto out;
		b.pos++;
	}
	*pi = b.pos;
	r = 0;
out:
	free(ys);
	return r;
}
