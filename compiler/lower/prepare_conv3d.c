/* SPDX-License-Identifier: MIT */
/*
 * prepare_conv3d.c - 3-D convolution and pooling rewritten into the 2-D
 * ones the lowering has (the decompose hooks of Conv, MaxPool and
 * AveragePool on rank-5 inputs; MaxPool of 8-bit integers goes through
 * float32 here too):
 *
 *   Conv  x [N,C,D,H,W], W [M,C/g,kd,kh,kw] (constant):
 *         depth padded, moved next to the batch (Transpose), then for each
 *         depth tap k the planes it reads (Gather at k*dd + o*sd) folded
 *         into the batch and convolved in 2-D with W[:,:,k]; the kd partial
 *         results summed, unfolded and moved back.
 *   Pool  a 3-D window is a box: max and average are separable, so a 2-D
 *         pool over (H, W) with depth folded into the channels, then a 2-D
 *         pool with a (kd, 1) window over (D, H*W).  Average divisors stay
 *         right because the count of a box's valid elements is the product
 *         of the counts along its axes (count_include_pad either way).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/opgeom.h"
#include "lower_internal.h"

static int const_ints(struct ir_graph *g, const char *base, const int64_t *v, int64_t n,
		      struct ir_error *e)
{
	struct ir_tensor t;
	int x = ir_value_add_unique(g, base, e);

	if (x < 0 || ir_tensor_alloc(&t, IR_I64, 1, &n, e))
		return -1;
	memcpy(t.data, v, (size_t)n * sizeof(int64_t));
	ir_value_set_const(&g->vals[x], &t);
	return x;
}

static int reshape(struct ir_graph *g, int *pos, const char *name, int x, const int64_t *dims,
		   int rank, struct ir_error *e)
{
	int in[2] = { x, const_ints(g, "c3_shape", dims, rank, e) };

	return in[1] < 0 ? -1 : lp_add_node(g, pos, name, "Reshape", in, 2, e);
}

static int transpose_d(struct ir_graph *g, int *pos, const char *name, int x, struct ir_error *e)
{
	static const int64_t perm[5] = { 0, 2, 1, 3, 4 };
	int y = lp_add_node(g, pos, name, "Transpose", &x, 1, e);

	if (y < 0 || ir_attr_set_ints(&g->nodes[*pos - 1], "perm", perm, 5, e))
		return -1;
	return y;
}

/* The original node n (at pos) becomes an Identity of v. */
static int finish(struct ir_graph *g, int pos, int v, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[pos];
	int *ni = realloc(n->in, sizeof(int));

	if (!ni)
		return ir_err(e, "out of memory");
	n->in = ni;
	n->in[0] = v;
	n->nin = 1;
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	return ir_node_set_op(n, "Identity", e);
}

/* A 2-D window's attributes on the node just added (at *pos - 1). */
static int window_attrs(struct ir_graph *g, int pos, const int64_t *k, const int64_t *s,
			const int64_t *d, const int64_t *pads, int with_kernel, struct ir_error *e)
{
	struct ir_node *m = &g->nodes[pos - 1];

	return (with_kernel && ir_attr_set_ints(m, "kernel_shape", k, 2, e)) ||
	       ir_attr_set_ints(m, "strides", s, 2, e) || ir_attr_set_ints(m, "dilations", d, 2, e) ||
	       ir_attr_set_ints(m, "pads", pads, 4, e) ? -1 : 0;
}

int lp_dec_conv3d(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *wv = &g->vals[n->in[1]];
	int64_t N = xv->dims[0], C = xv->dims[1], M = wv->dims[0], Cg = wv->dims[1];
	int64_t G = ir_attr_int(n, "group", 1), OD, d5[5], *idx;
	int64_t H = xv->dims[3], W = xv->dims[4];
	int pos = *pi, cur = n->in[0], bias = n->nin > 2 ? n->in[2] : -1, sum = -1;
	struct ir_window w;
	char name[256];

	if (!wv->data)
		return ir_node_err(e, g, n, "3-D convolution needs constant weights");
	if (ir_window_conv(g, n, 3, xv->dims + 2, wv->dims + 2, 0, &w, e))
		return -1;
	snprintf(name, sizeof(name), "%s", n->name);
	OD = w.out[0];
	if (w.pb[0] || w.pe[0]) {
		int64_t pads[10] = { 0 };
		int in[2];

		pads[2] = w.pb[0];
		pads[7] = w.pe[0];
		in[0] = cur;
		if ((in[1] = const_ints(g, "c3_pads", pads, 10, e)) < 0 ||
		    (cur = lp_add_node(g, &pos, name, "Pad", in, 2, e)) < 0)
			return -1;
	}
	/* [N, Dp, C, H, W]: the depth planes a tap reads are rows of axis 1 */
	if ((cur = transpose_d(g, &pos, name, cur, e)) < 0)
		return -1;
	idx = malloc((size_t)OD * sizeof(int64_t));
	if (!idx)
		return ir_err(e, "out of memory");
	for (int64_t k = 0; k < w.k[0]; k++) {
		int64_t wd[4] = { M, Cg, w.k[1], w.k[2] }, plane = w.k[1] * w.k[2];
		int64_t s2[2] = { w.s[1], w.s[2] }, d2[2] = { w.d[1], w.d[2] };
		int64_t p2[4] = { w.pb[1], w.pb[2], w.pe[1], w.pe[2] }, fold[4];
		struct ir_tensor wk;
		int in[3], wkv, y;

		for (int64_t o = 0; o < OD; o++)
			idx[o] = k * w.d[0] + o * w.s[0];
		in[0] = cur;
		if ((in[1] = const_ints(g, "c3_taps", idx, OD, e)) < 0 ||
		    (y = lp_add_node(g, &pos, name, "Gather", in, 2, e)) < 0 ||
		    ir_attr_set_int(&g->nodes[pos - 1], "axis", 1, e))
			goto fail;
		fold[0] = N * OD;
		fold[1] = C;
		fold[2] = H;
		fold[3] = W;
		if ((y = reshape(g, &pos, name, y, fold, 4, e)) < 0)
			goto fail;
		/* W[:, :, k] */
		wv = &g->vals[g->nodes[pos].in[1]];
		if (ir_tensor_alloc(&wk, wv->dtype, 4, wd, e))
			goto fail;
		for (int64_t m = 0; m < M * Cg; m++)
			for (int64_t q = 0; q < plane; q++)
				ir_set_f(wk.data, wk.dtype, (size_t)(m * plane + q),
					 ir_get_f(wv->data, wv->dtype, (size_t)((m * w.k[0] + k) * plane + q)));
		if ((wkv = ir_value_add_unique(g, "c3_weight", e)) < 0) {
			ir_tensor_free(&wk);
			goto fail;
		}
		ir_value_set_const(&g->vals[wkv], &wk);
		in[0] = y;
		in[1] = wkv;
		in[2] = k == 0 ? bias : -1;
		if ((y = lp_add_node(g, &pos, name, "Conv", in, in[2] >= 0 ? 3 : 2, e)) < 0 ||
		    window_attrs(g, pos, NULL, s2, d2, p2, 0, e) ||
		    ir_attr_set_int(&g->nodes[pos - 1], "group", G, e))
			goto fail;
		if (sum < 0) {
			sum = y;
		} else {
			in[0] = sum;
			in[1] = y;
			if ((sum = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
				goto fail;
		}
	}
	free(idx);
	d5[0] = N;
	d5[1] = OD;
	d5[2] = M;
	d5[3] = w.out[1];
	d5[4] = w.out[2];
	if ((sum = reshape(g, &pos, name, sum, d5, 5, e)) < 0 ||
	    (sum = transpose_d(g, &pos, name, sum, e)) < 0)
		return -1;
	*pi = pos;
	return finish(g, pos, sum, e);
fail:
	free(idx);
	return -1;
}

/* MaxPool of 8-bit integers (the pooling codelets take floats): in
 * float32, every such value exact, cast back after. */
static int maxpool_int8(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int pos = *pi, x = n->in[0], out = n->out[0], dt = g->vals[x].dtype, f, y;
	char name[256];

	snprintf(name, sizeof(name), "%s", n->name);
	if ((f = lp_add_node(g, &pos, name, "Cast", &x, 1, e)) < 0 ||
	    ir_attr_set_int(&g->nodes[pos - 1], "to", IR_F32, e) ||
	    (y = ir_value_add_unique(g, "pool_f32", e)) < 0)
		return -1;
	n = &g->nodes[pos];
	n->in[0] = f;
	n->out[0] = y;
	if (ir_node_insert(g, pos + 1, name, "Cast", &y, 1, &out, 1, e) < 0 ||
	    ir_attr_set_int(&g->nodes[pos + 1], "to", dt, e))
		return -1;
	*pi = pos;
	return 0;
}

int lp_dec_pool3d(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	int64_t N, C, D, ceil_mode, cip, d4[4], d5[5];
	int pos = *pi, cur = n->in[0];
	struct ir_window w;
	char name[256], op[32];
	int avg;

	if ((n->nout > 1 && n->out[1] >= 0))
		return 0;
	if (n->opid == IR_OP_MaxPool && (xv->dtype == IR_U8 || xv->dtype == IR_I8))
		return maxpool_int8(g, pi, e);
	if (xv->rank != 5)
		return 0;
	N = xv->dims[0];
	C = xv->dims[1];
	D = xv->dims[2];
	ceil_mode = ir_attr_int(n, "ceil_mode", 0);
	cip = ir_attr_int(n, "count_include_pad", 0);
	if (ir_window_conv(g, n, 3, xv->dims + 2, NULL, (int)ceil_mode, &w, e))
		return -1;
	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(op, sizeof(op), "%s", n->op);
	avg = n->opid == IR_OP_AveragePool;
	/* over (H, W), depth folded into the channels */
	d4[0] = N;
	d4[1] = C * D;
	d4[2] = xv->dims[3];
	d4[3] = xv->dims[4];
	{
		int64_t k2[2] = { w.k[1], w.k[2] }, s2[2] = { w.s[1], w.s[2] }, dl[2] = { w.d[1], w.d[2] };
		int64_t p2[4] = { w.pb[1], w.pb[2], w.pe[1], w.pe[2] };

		if ((cur = reshape(g, &pos, name, cur, d4, 4, e)) < 0 ||
		    (cur = lp_add_node(g, &pos, name, op, &cur, 1, e)) < 0 ||
		    window_attrs(g, pos, k2, s2, dl, p2, 1, e) ||
		    ir_attr_set_int(&g->nodes[pos - 1], "ceil_mode", ceil_mode, e) ||
		    (avg &&
		     ir_attr_set_int(&g->nodes[pos - 1], "count_include_pad", cip, e)))
			return -1;
	}
	/* over D, each output plane flattened into a row */
	d4[1] = C;
	d4[2] = D;
	d4[3] = w.out[1] * w.out[2];
	{
		int64_t k2[2] = { w.k[0], 1 }, s2[2] = { w.s[0], 1 }, dl[2] = { w.d[0], 1 };
		int64_t p2[4] = { w.pb[0], 0, w.pe[0], 0 };

		if ((cur = reshape(g, &pos, name, cur, d4, 4, e)) < 0 ||
		    (cur = lp_add_node(g, &pos, name, op, &cur, 1, e)) < 0 ||
		    window_attrs(g, pos, k2, s2, dl, p2, 1, e) ||
		    ir_attr_set_int(&g->nodes[pos - 1], "ceil_mode", ceil_mode, e) ||
		    (avg &&
		     ir_attr_set_int(&g->nodes[pos - 1], "count_include_pad", cip, e)))
			return -1;
	}
	d5[0] = N;
	d5[1] = C;
	d5[2] = w.out[0];
	d5[3] = w.out[1];
	d5[4] = w.out[2];
	if ((cur = reshape(g, &pos, name, cur, d5, 5, e)) < 0)
		return -1;
	*pi = pos;
	return finish(g, pos, cur, e);
}
