/* SPDX-License-Identifier: MIT */
/*
 * prepare_decompose.c - rewrites of single nodes into ops the device has:
 *   Dropout's mask output              -> a constant all-true tensor
 *   LayerNormalization with its Mean / InvStdDev outputs used
 *                                      -> ReduceMean, Sub, Mul, Sqrt, ...
 *   integer elementwise ops on int8/uint8/int64 (the device computes
 *   integers in int32)                 -> Cast to int32, op, Cast back
 *   Clip with run-time or integer bounds -> Max / Min
 *   Pow with an exponent of another type -> Cast of the exponent
 *   ReduceLogSum                       -> ReduceSum, Log
 *   Resize (nearest, linear, cubic)    -> per resized axis, one Gather per
 *                                         tap, weighted by constants
 *   ArgMax/ArgMin select_last_index    -> reversed Slice, ArgMax, len-1-r
 *   GatherElements                     -> flat Gather of computed indices
 *   DepthToSpace / SpaceToDepth        -> Reshape, Transpose, Reshape
 *   Trilu (constant k)                 -> Where with a constant mask
 *   Hardmax                            -> ArgMax == iota, Cast
 *   Softsign, ThresholdedRelu, IsNaN, IsInf, Tan, Sinh, Cosh, Celu, Shrink
 *                                      -> elementwise ops the device has
 *   ConvTranspose (constant weights)   -> per spatial axis a Gather + 0/1
 *                                         mask (zero insertion and padding),
 *                                         then a Conv with the flipped,
 *                                         transposed weights
 * Each rewrite is the `decompose` hook of its operator's line in
 * ops/ops.def and keeps the node's output value, so consumers are
 * untouched.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/opgeom.h"
#include "lower_internal.h"

static int cast_to(struct ir_graph *g, int *pos, const char *name, int v, int to,
		   struct ir_error *e)
{
	int c = lp_add_node(g, pos, name, "Cast", &v, 1, e);

	if (c < 0 || ir_attr_set_int(&g->nodes[*pos - 1], "to", to, e))
		return -1;
	ir_value_set_shape(&g->vals[c], to, g->vals[v].rank, g->vals[v].dims);
	return c;
}

/* The node at *pi keeps writing its output; it becomes `op`(in...). */
static int become(struct ir_graph *g, int pi, const char *op, const int *in,
		  int nin, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[pi];
	int *ni = realloc(n->in, (size_t)(nin ? nin : 1) * sizeof(int));

	if (!ni)
		return ir_err(e, "out of memory");
	n->in = ni;
	memcpy(n->in, in, (size_t)nin * sizeof(int));
	n->nin = nin;
	return ir_node_set_op(n, op, e);
}

static int dropout_mask(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *m = &g->vals[n->out[1]];
	struct ir_tensor t;

	if (ir_tensor_alloc(&t, IR_BOOL, m->rank, m->dims, e))
		return -1;
	memset(t.data, 1, ir_tensor_bytes(&t));
	ir_value_set_const(m, &t);
	n->nout = 1;
	return 0;
}

static int layernorm(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int x = n->in[0], sc = n->in[1], b = n->nin > 2 ? n->in[2] : -1;
	int mean_out = n->out[1], inv_out = n->nout > 2 ? n->out[2] : -1;
	const struct ir_value *xv = &g->vals[x];
	int a = (int)ir_attr_int(n, "axis", -1), rank = xv->rank, dt = xv->dtype;
	double eps = ir_attr_float(n, "epsilon", 1e-5);
	int64_t axes[IR_MAX_RANK];
	int pos = *pi, ax, mean, d, sq, var, ve, sd, inv, y, in[2];
	char name[256];
	struct ir_tensor t;
	int64_t na;

	if (a < 0)
		a += rank;
	na = rank - a;
	for (int i = a; i < rank; i++)
		axes[i - a] = i;
	snprintf(name, sizeof(name), "%s", n->name);
	ax = ir_value_add_unique(g, "ln_axes", e);
	if (ax < 0 || ir_tensor_alloc(&t, IR_I64, 1, &na, e))
		return -1;
	memcpy(t.data, axes, (size_t)na * 8);
	ir_value_set_const(&g->vals[ax], &t);
	in[0] = x;
	in[1] = ax;
	if ((mean = lp_add_node(g, &pos, name, "ReduceMean", in, 2, e)) < 0)
		return -1;
	in[1] = mean;
	if ((d = lp_add_node(g, &pos, name, "Sub", in, 2, e)) < 0)
		return -1;
	in[0] = d;
	in[1] = d;
	if ((sq = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
		return -1;
	in[0] = sq;
	in[1] = ax;
	if ((var = lp_add_node(g, &pos, name, "ReduceMean", in, 2, e)) < 0)
		return -1;
	in[0] = var;
	if ((in[1] = lp_const_scalar(g, "ln_eps", dt, eps, 0, e)) < 0 ||
	    (ve = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0 ||
	    (sd = lp_add_node(g, &pos, name, "Sqrt", &ve, 1, e)) < 0 ||
	    (inv = lp_add_node(g, &pos, name, "Reciprocal", &sd, 1, e)) < 0)
		return -1;
	in[0] = d;
	in[1] = inv;
	if ((y = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
		return -1;
	in[0] = y;
	in[1] = sc;
	if (b >= 0 && (y = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
		return -1;
	/* the stats outputs: Identity nodes writing the original values */
	if (mean_out >= 0) {
		int one = mean;

		if (ir_node_insert(g, pos, g->vals[mean_out].name, "Identity", &one, 1, &mean_out, 1, e) < 0)
			return -1;
		pos++;
	}
	if (inv_out >= 0) {
		int one = inv;

		if (ir_node_insert(g, pos, g->vals[inv_out].name, "Identity", &one, 1, &inv_out, 1, e) < 0)
			return -1;
		pos++;
	}
	n = &g->nodes[pos];
	n->nout = 1;
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	in[0] = y;
	in[1] = b >= 0 ? b : sc;
	*pi = pos;
	return become(g, pos, b >= 0 ? "Add" : "Mul", in, 2, e);
}

/* Integer op on int8/uint8/int16/uint16/int64: through int32. */
static int via_i32(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int pos = *pi, in[2], nin = n->nin, out = n->out[0], r, cmp;
	int odt = g->vals[out].dtype;
	char name[256];

	snprintf(name, sizeof(name), "%s", n->name);
	cmp = odt == IR_BOOL;
	for (int k = 0; k < nin; k++)
		if ((in[k] = cast_to(g, &pos, name, g->nodes[pos].in[k], IR_I32, e)) < 0)
			return -1;
	if ((r = lp_add_node(g, &pos, name, g->nodes[pos].op, in, nin, e)) < 0)
		return -1;
	{
		struct ir_node *cp = &g->nodes[pos - 1], *orig = &g->nodes[pos];

		for (int k = 0; k < orig->nattrs; k++) {
			if (orig->attrs[k].type == IR_ATTR_INT &&
			    ir_attr_set_int(cp, orig->attrs[k].name, orig->attrs[k].i, e))
				return -1;
		}
	}
	n = &g->nodes[pos];
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	*pi = pos;
	if (cmp)
		return become(g, pos, "Identity", &r, 1, e);
	if (become(g, pos, "Cast", &r, 1, e))
		return -1;
	return ir_attr_set_int(&g->nodes[pos], "to", odt, e);
}

static int clip(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int pos = *pi, x = n->in[0], lo = n->nin > 1 ? n->in[1] : -1, hi = n->nin > 2 ? n->in[2] : -1;
	int in[2];
	char name[256];

	snprintf(name, sizeof(name), "%s", n->name);
	if (lo >= 0 && hi >= 0) {
		in[0] = x;
		in[1] = lo;
		if ((x = lp_add_node(g, &pos, name, "Max", in, 2, e)) < 0)
			return -1;
		in[0] = x;
		in[1] = hi;
		*pi = pos;
		return become(g, pos, "Min", in, 2, e);
	}
	in[0] = x;
	in[1] = lo >= 0 ? lo : hi;
	*pi = pos;
	if (lo < 0 && hi < 0)
		return become(g, pos, "Identity", in, 1, e);
	return become(g, pos, lo >= 0 ? "Max" : "Min", in, 2, e);
}

static int const_i64(struct ir_graph *g, const char *base, const int64_t *v,
		     int64_t n, struct ir_error *e)
{
	struct ir_tensor t;
	int x = ir_value_add_unique(g, base, e);

	if (x < 0 || ir_tensor_alloc(&t, IR_I64, 1, &n, e))
		return -1;
	memcpy(t.data, v, (size_t)n * 8);
	ir_value_set_const(&g->vals[x], &t);
	return x;
}

int lp_dec_resize(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *ov = &g->vals[n->out[0]];
	const struct ir_value *sc = n->nin > 2 && n->in[2] >= 0 ? &g->vals[n->in[2]] : NULL;
	const char *mode = ir_attr_str(n, "mode", "nearest");
	int taps = !strcmp(mode, "cubic") ? 4 : !strcmp(mode, "linear") ? 2 : 1;
	int rank = xv->rank, dt = xv->dtype, cur = n->in[0], pos = *pi;
	int64_t xdims[IR_MAX_RANK], odims[IR_MAX_RANK];
	char name[256];
	int r = -1;

	if (!strcmp(ir_attr_str(n, "coordinate_transformation_mode", "half_pixel"), "tf_crop_and_resize"))
		return ir_node_err(e, g, n, "tf_crop_and_resize is not lowered");
	snprintf(name, sizeof(name), "%s", n->name);
	memcpy(xdims, xv->dims, sizeof(xdims));
	memcpy(odims, ov->dims, sizeof(odims));
	for (int d = 0; d < rank; d++) {
		int64_t L = xdims[d], lo = odims[d];
		double s = sc && ir_value_numel(sc) ? ir_get_f(sc->data, sc->dtype, (size_t)d) : 0;
		int64_t *idx = malloc((size_t)(lo ? lo : 1) * (size_t)taps * sizeof(int64_t));
		double *w = malloc((size_t)(lo ? lo : 1) * (size_t)taps * sizeof(double));
		char *oob = calloc((size_t)(lo ? lo : 1), 1);
		int64_t *col = malloc((size_t)(lo ? lo : 1) * sizeof(int64_t));
		int ident = lo == L, acc = -1;

		if (!idx || !w || !oob || !col) {
			ir_err(e, "out of memory");
			goto axis_out;
		}
		ir_resize_taps(&g->nodes[pos], L, lo, s, 0, 1, taps, idx, w, oob);
		for (int64_t o = 0; o < lo && ident; o++) {
			ident = idx[o * taps] == o && w[o * taps] == 1;
			for (int t = 1; t < taps; t++)
				ident &= w[o * taps + t] == 0;
		}
		if (ident) {
			free(idx); free(w); free(oob); free(col);
			continue;
		}
		for (int t = 0; t < taps; t++) {
			int any = 0, in[2], gt;

			for (int64_t o = 0; o < lo; o++) {
				col[o] = idx[o * taps + t];
				any |= w[o * taps + t] != 0;
			}
			if (!any)
				continue;
			in[0] = cur;
			if ((in[1] = const_i64(g, "resize_idx", col, lo, e)) < 0 ||
			    (gt = lp_add_node(g, &pos, name, "Gather", in, 2, e)) < 0 ||
			    ir_attr_set_int(&g->nodes[pos - 1], "axis", d, e))
				goto axis_out;
			if (taps > 1) {
				struct ir_tensor wt;
				int64_t wd[IR_MAX_RANK];
				int wv;

				for (int k = 0; k < rank; k++)
					wd[k] = k == d ? lo : 1;
				wv = ir_value_add_unique(g, "resize_w", e);
				if (wv < 0 || ir_tensor_alloc(&wt, dt, rank, wd, e))
					goto axis_out;
				for (int64_t o = 0; o < lo; o++)
					ir_set_f(wt.data, dt, (size_t)o, w[o * taps + t]);
				ir_value_set_const(&g->vals[wv], &wt);
				in[0] = gt;
				in[1] = wv;
				if ((gt = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
					goto axis_out;
				if (acc >= 0) {
					in[0] = acc;
					in[1] = gt;
					if ((gt = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
						goto axis_out;
				}
			}
			acc = gt;
		}
		cur = acc;
		xdims[d] = lo;
		free(idx); free(w); free(oob); free(col);
		continue;
axis_out:
		free(idx); free(w); free(oob); free(col);
		return -1;
	}
	n = &g->nodes[pos];
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	*pi = pos;
	r = become(g, pos, "Identity", &cur, 1, e);
	return r;
}

static int argmax_last(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	int a = ir_axis(ir_attr_int(n, "axis", 0), xv->rank), pos = *pi, in[5], rev, am;
	int64_t st = -1, en = INT64_MIN, ax = a, step = -1, len = xv->dims[a];
	char name[256], op[16];
	int keep = (int)ir_attr_int(n, "keepdims", 1);

	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(op, sizeof(op), "%s", n->op);
	in[0] = n->in[0];
	if ((in[1] = const_i64(g, "rev_start", &st, 1, e)) < 0 ||
	    (in[2] = const_i64(g, "rev_end", &en, 1, e)) < 0 ||
	    (in[3] = const_i64(g, "rev_axis", &ax, 1, e)) < 0 ||
	    (in[4] = const_i64(g, "rev_step", &step, 1, e)) < 0 ||
	    (rev = lp_add_node(g, &pos, name, "Slice", in, 5, e)) < 0 ||
	    (am = lp_add_node(g, &pos, name, op, &rev, 1, e)) < 0 ||
	    ir_attr_set_int(&g->nodes[pos - 1], "axis", a, e) ||
	    ir_attr_set_int(&g->nodes[pos - 1], "keepdims", keep, e))
		return -1;
	in[0] = lp_const_scalar(g, "rev_len", IR_I64, (double)(len - 1), 0, e);
	in[1] = am;
	if (in[0] < 0)
		return -1;
	n = &g->nodes[pos];
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	*pi = pos;
	return become(g, pos, "Sub", in, 2, e);
}

int lp_dec_convtranspose(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *wv = &g->vals[n->in[1]];
	int nsp = xv->rank - 2, pos = *pi, cur = n->in[0], dt = xv->dtype, rank = xv->rank;
	int64_t G = ir_attr_int(n, "group", 1), C = xv->dims[1], Mg = wv->dims[1], Cg, ksz = 1;
	int64_t xdims[IR_MAX_RANK];
	struct ir_window win;
	struct ir_tensor nw;
	char name[256];
	int w2, in[3];

	if (!wv->data)
		return ir_node_err(e, g, n, "weights must be constant to lower ConvTranspose");
	if (ir_window_convtranspose(g, n, nsp, xv->dims + 2, wv->dims + 2, &win, e))
		return -1;
	snprintf(name, sizeof(name), "%s", n->name);
	memcpy(xdims, xv->dims, sizeof(xdims));
	Cg = C / G;
	for (int i = 0; i < nsp; i++)
		ksz *= win.k[i];
	/* zero insertion + padding, one spatial axis at a time */
	for (int i = 0; i < nsp; i++) {
		int64_t ext = win.d[i] * (win.k[i] - 1) + 1, PB = ext - 1 - win.pb[i];
		int64_t Lz = win.out[i] + ext - 1, L = win.in[i];
		int64_t *idx = malloc((size_t)Lz * sizeof(int64_t));
		struct ir_tensor mk;
		int64_t md[IR_MAX_RANK];
		int mv, gv, ok = idx != NULL;

		for (int k = 0; k < rank; k++)
			md[k] = k == i + 2 ? Lz : 1;
		if (ok && ir_tensor_alloc(&mk, dt, rank, md, e))
			ok = 0;
		if (!ok) {
			free(idx);
			return ir_err(e, "out of memory");
		}
		for (int64_t o = 0; o < Lz; o++) {
			int64_t q = o - PB;
			int valid = q >= 0 && q % win.s[i] == 0 && q / win.s[i] < L;

			idx[o] = valid ? q / win.s[i] : 0;
			ir_set_f(mk.data, dt, (size_t)o, valid ? 1 : 0);
		}
		in[0] = cur;
		in[1] = const_i64(g, "ct_idx", idx, Lz, e);
		free(idx);
		mv = ir_value_add_unique(g, "ct_mask", e);
		if (in[1] < 0 || mv < 0) {
			ir_tensor_free(&mk);
			return -1;
		}
		ir_value_set_const(&g->vals[mv], &mk);
		if ((gv = lp_add_node(g, &pos, name, "Gather", in, 2, e)) < 0 ||
		    ir_attr_set_int(&g->nodes[pos - 1], "axis", i + 2, e))
			return -1;
		in[0] = gv;
		in[1] = mv;
		if ((cur = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
			return -1;
		xdims[i + 2] = Lz;
	}
	/* W [C][M/g][k] -> W' [M][C/g][flipped k] */
	n = &g->nodes[pos];
	wv = &g->vals[n->in[1]];
	{
		int64_t d[IR_MAX_RANK];

		d[0] = Mg * G;
		d[1] = Cg;
		for (int i = 0; i < nsp; i++)
			d[i + 2] = win.k[i];
		if (ir_tensor_alloc(&nw, wv->dtype, rank, d, e))
			return -1;
	}
	for (int64_t gi = 0; gi < G; gi++)
		for (int64_t m = 0; m < Mg; m++)
			for (int64_t c = 0; c < Cg; c++)
				for (int64_t k = 0; k < ksz; k++)
					ir_set_f(nw.data, nw.dtype, (size_t)(((gi * Mg + m) * Cg + c) * ksz + k),
						 ir_get_f(wv->data, wv->dtype,
							  (size_t)(((gi * Cg + c) * Mg + m) * ksz + (ksz - 1 - k))));
	w2 = ir_value_add_unique(g, "ct_weight", e);
	if (w2 < 0) {
		ir_tensor_free(&nw);
		return -1;
	}
	ir_value_set_const(&g->vals[w2], &nw);
	n = &g->nodes[pos];
	in[0] = cur;
	in[1] = w2;
	in[2] = n->nin > 2 ? n->in[2] : -1;
	{
		int64_t dil[IR_MAX_RANK];

		for (int i = 0; i < nsp; i++)
			dil[i] = win.d[i];
		for (int k = n->nattrs - 1; k >= 0; k--)
			ir_attr_remove(n, n->attrs[k].name);
		if (ir_attr_set_ints(n, "dilations", dil, (size_t)nsp, e) ||
		    ir_attr_set_int(n, "group", G, e))
			return -1;
	}
	*pi = pos;
	return become(g, pos, "Conv", in, in[2] >= 0 ? 3 : 2, e);
}

/* A constant tensor of dtype dt and the given shape, filled by f(i). */
static int const_fill(struct ir_graph *g, const char *base, int dt, int rank,
		      const int64_t *dims, double (*f)(int64_t, const void *),
		      const void *ctx, struct ir_error *e)
{
	struct ir_tensor t;
	int v = ir_value_add_unique(g, base, e);
	int64_t n = ir_numel(rank, dims);

	if (v < 0 || ir_tensor_alloc(&t, dt, rank, dims, e))
		return -1;
	for (int64_t i = 0; i < n; i++)
		ir_set_f(t.data, dt, (size_t)i, f(i, ctx));
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

static double iota(int64_t i, const void *ctx)
{
	(void)ctx;
	return (double)i;
}

static int strip(struct ir_graph *g, int pos)
{
	struct ir_node *n = &g->nodes[pos];

	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	return 0;
}

struct ge_ctx {
	int rank, axis;
	const int64_t *dims;	/* of indices */
	const int64_t *xdims;	/* of data */
};

/* Flat offset of element i of the indices with its `axis` coordinate 0. */
static double ge_base(int64_t i, const void *p)
{
	const struct ge_ctx *c = p;
	int64_t xs = 1, off = 0;

	for (int d = c->rank - 1; d >= 0; d--) {
		int64_t id = i % c->dims[d];

		i /= c->dims[d];
		if (d != c->axis)
			off += id * xs;
		xs *= c->xdims[d];
	}
	return (double)off;
}

int lp_dec_gather_elements(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *iv = &g->vals[n->in[1]];
	int rank = xv->rank, a = ir_axis(ir_attr_int(n, "axis", 0), rank), pos = *pi;
	int64_t xdims[IR_MAX_RANK], idims[IR_MAX_RANK], stride = 1, len = xv->dims[a];
	int64_t flat = ir_value_numel(xv), minus1 = -1;
	struct ge_ctx c;
	char name[256];
	int in[3], idx, neg, fix, off, base, sh, xf;

	memcpy(xdims, xv->dims, sizeof(xdims));
	memcpy(idims, iv->dims, sizeof(idims));
	for (int d = a + 1; d < rank; d++)
		stride *= xdims[d];
	c = (struct ge_ctx){ rank, a, idims, xdims };
	snprintf(name, sizeof(name), "%s", n->name);
	in[0] = n->in[1];
	if ((idx = cast_to(g, &pos, name, in[0], IR_I32, e)) < 0)
		return -1;
	/* negative indices count from the end */
	in[0] = idx;
	if ((in[1] = lp_const_scalar(g, "zero", IR_I32, 0, 0, e)) < 0 ||
	    (neg = lp_add_node(g, &pos, name, "Less", in, 2, e)) < 0)
		return -1;
	in[0] = idx;
	if ((in[1] = lp_const_scalar(g, "len", IR_I32, (double)len, 0, e)) < 0 ||
	    (fix = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
		return -1;
	in[0] = neg;
	in[1] = fix;
	in[2] = idx;
	if ((idx = lp_add_node(g, &pos, name, "Where", in, 3, e)) < 0)
		return -1;
	in[0] = idx;
	if ((in[1] = lp_const_scalar(g, "stride", IR_I32, (double)stride, 0, e)) < 0 ||
	    (off = lp_add_node(g, &pos, name, "Mul", in, 2, e)) < 0)
		return -1;
	if ((base = const_fill(g, "ge_base", IR_I32, rank, idims, ge_base, &c, e)) < 0)
		return -1;
	in[0] = off;
	in[1] = base;
	if ((off = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
		return -1;
	in[0] = g->nodes[pos].in[0];
	if ((in[1] = const_i64(g, "flat", &minus1, 1, e)) < 0 ||
	    (xf = lp_add_node(g, &pos, name, "Reshape", in, 2, e)) < 0)
		return -1;
	(void)flat;
	in[0] = xf;
	in[1] = off;
	if ((sh = lp_add_node(g, &pos, name, "Gather", in, 2, e)) < 0)
		return -1;
	strip(g, pos);
	*pi = pos;
	return become(g, pos, "Identity", &sh, 1, e);
}

int lp_dec_depth_space(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	int64_t b = ir_attr_int(n, "blocksize", 1), N = xv->dims[0], C = xv->dims[1];
	int64_t H = xv->dims[2], W = xv->dims[3];
	int d2s = n->opid == IR_OP_DepthToSpace;
	int crd = !strcmp(ir_attr_str(n, "mode", "DCR"), "CRD");
	int64_t s1[6], perm[6], s2[4];
	int pos = *pi, in[2], r, t;
	char name[256];

	snprintf(name, sizeof(name), "%s", n->name);
	if (d2s && !crd) {
		int64_t a[6] = { N, b, b, C / (b * b), H, W }, p[6] = { 0, 3, 4, 1, 5, 2 };

		memcpy(s1, a, sizeof(a));
		memcpy(perm, p, sizeof(p));
	} else if (d2s) {
		int64_t a[6] = { N, C / (b * b), b, b, H, W }, p[6] = { 0, 1, 4, 2, 5, 3 };

		memcpy(s1, a, sizeof(a));
		memcpy(perm, p, sizeof(p));
	} else {
		int64_t a[6] = { N, C, H / b, b, W / b, b }, p[6] = { 0, 3, 5, 1, 2, 4 };

		memcpy(s1, a, sizeof(a));
		memcpy(perm, p, sizeof(p));
	}
	if (d2s) {
		int64_t o[4] = { N, C / (b * b), H * b, W * b };

		memcpy(s2, o, sizeof(o));
	} else {
		int64_t o[4] = { N, C * b * b, H / b, W / b };

		memcpy(s2, o, sizeof(o));
	}
	in[0] = n->in[0];
	if ((in[1] = const_i64(g, "ds_shape", s1, 6, e)) < 0 ||
	    (r = lp_add_node(g, &pos, name, "Reshape", in, 2, e)) < 0 ||
	    (t = lp_add_node(g, &pos, name, "Transpose", &r, 1, e)) < 0 ||
	    ir_attr_set_ints(&g->nodes[pos - 1], "perm", perm, 6, e))
		return -1;
	in[0] = t;
	if ((in[1] = const_i64(g, "ds_shape2", s2, 4, e)) < 0)
		return -1;
	strip(g, pos);
	*pi = pos;
	return become(g, pos, "Reshape", in, 2, e);
}

struct tri_ctx {
	int64_t rows, cols, k;
	int upper;
};

static double tri_mask(int64_t i, const void *p)
{
	const struct tri_ctx *c = p;
	int64_t col = i % c->cols, row = (i / c->cols) % c->rows;

	return c->upper ? col - row >= c->k : col - row <= c->k;
}

int lp_dec_trilu(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	const struct ir_value *kv = n->nin > 1 && n->in[1] >= 0 ? &g->vals[n->in[1]] : NULL;
	struct tri_ctx c;
	int64_t md[2];
	int pos = *pi, in[3];
	char name[256];

	if (kv && !kv->data)
		return ir_node_err(e, g, n, "k must be a constant to lower Trilu");
	c.rows = xv->dims[xv->rank - 2];
	c.cols = xv->dims[xv->rank - 1];
	c.k = kv ? ir_get_i(kv->data, kv->dtype, 0) : 0;
	c.upper = (int)ir_attr_int(n, "upper", 1);
	md[0] = c.rows;
	md[1] = c.cols;
	snprintf(name, sizeof(name), "%s", n->name);
	in[1] = n->in[0];
	if ((in[0] = const_fill(g, "tri_mask", IR_BOOL, 2, md, tri_mask, &c, e)) < 0 ||
	    (in[2] = lp_const_scalar(g, "zero", xv->dtype, 0, 0, e)) < 0)
		return -1;
	strip(g, pos);
	return become(g, pos, "Where", in, 3, e);
}

int lp_dec_hardmax(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	int rank = xv->rank, a = ir_axis(ir_attr_int(n, "axis", -1), rank), pos = *pi;
	int64_t d[IR_MAX_RANK];
	int in[2], am, eq;
	char name[256];

	if (ir_attr_int(n, "coerce2d", 0))
		return ir_node_err(e, g, n, "Hardmax over flattened axes (opset < 13) is not lowered");
	for (int i = 0; i < rank; i++)
		d[i] = i == a ? xv->dims[a] : 1;
	snprintf(name, sizeof(name), "%s", n->name);
	in[0] = n->in[0];
	if ((am = lp_add_node(g, &pos, name, "ArgMax", in, 1, e)) < 0 ||
	    ir_attr_set_int(&g->nodes[pos - 1], "axis", a, e))
		return -1;
	in[0] = am;
	if ((in[1] = const_fill(g, "iota", IR_I64, rank, d, iota, NULL, e)) < 0 ||
	    (eq = lp_add_node(g, &pos, name, "Equal", in, 2, e)) < 0)
		return -1;
	strip(g, pos);
	*pi = pos;
	if (become(g, pos, "Cast", &eq, 1, e))
		return -1;
	return ir_attr_set_int(&g->nodes[pos], "to", xv->dtype, e);
}

/*
 * A softmax over an axis other than the last one reads rows of len x inner
 * elements, which the row lowering cannot split: a large inner extent made
 * the row larger than a tile.  Moving the axis last with a transpose (split
 * like any layout op) leaves rows of len elements.
 */
int lp_dec_softmax(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	int rank = xv->rank, pos = *pi, t, s, log = n->opid == IR_OP_LogSoftmax;
	int a = rank ? ir_axis(ir_attr_int(n, "axis", -1), rank) : 0;
	int64_t perm[IR_MAX_RANK], inv[IR_MAX_RANK], inner = 1;
	char name[256];

	if (ir_attr_int(n, "coerce2d", 0))
		return 0;
	for (int i = a + 1; i < rank; i++)
		inner *= xv->dims[i];
	if (inner <= 1)
		return 0;
	for (int i = 0, k = 0; i < rank; i++)
		if (i != a)
			perm[k++] = i;
	perm[rank - 1] = a;
	for (int i = 0; i < rank; i++)
		inv[perm[i]] = i;
	snprintf(name, sizeof(name), "%s", n->name);
	if ((t = lp_add_node(g, &pos, name, "Transpose", &n->in[0], 1, e)) < 0 ||
	    ir_attr_set_ints(&g->nodes[pos - 1], "perm", perm, (size_t)rank, e) ||
	    (s = lp_add_node(g, &pos, name, log ? "LogSoftmax" : "Softmax", &t, 1, e)) < 0 ||
	    ir_attr_set_int(&g->nodes[pos - 1], "axis", -1, e))
		return -1;
	strip(g, pos);
	*pi = pos;
	if (become(g, pos, "Transpose", &s, 1, e))
		return -1;
	return ir_attr_set_ints(&g->nodes[pos], "perm", inv, (size_t)rank, e);
}

/*
 * A global pool reduces rows of H x W elements, which the row lowering does
 * not split over tiles: a large image made one row larger than a tile.  The
 * last axis is reduced first (rows of W), the pool then reduces rows of H;
 * the mean of equal-sized means is the mean.  Small images keep one step.
 */
#define GLOBAL_POOL_ROW 16384

int lp_dec_global_pool(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]];
	int rank = xv->rank, pos = *pi, in[2], r;
	int64_t ax = rank - 1, row = 1;
	char name[256];

	for (int i = 2; i < rank; i++)
		row *= xv->dims[i];
	if (rank < 4 || row <= GLOBAL_POOL_ROW || xv->dims[rank - 1] == 1 || xv->dims[rank - 1] == row)
		return 0;
	snprintf(name, sizeof(name), "%s", n->name);
	in[0] = n->in[0];
	if ((in[1] = const_i64(g, "pool_axis", &ax, 1, e)) < 0 ||
	    (r = lp_add_node(g, &pos, name, n->opid == IR_OP_GlobalAveragePool ? "ReduceMean" : "ReduceMax", in, 2, e)) < 0 ||
	    ir_attr_set_int(&g->nodes[pos - 1], "keepdims", 1, e))
		return -1;
	g->nodes[pos].in[0] = r;
	*pi = pos;
	return 0;
}

/* Unary ops without a codelet, from ops the device has. */
static int unary_extra(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int op = n->opid;
	int x = n->in[0], dt = g->vals[x].dtype, pos = *pi, in[3], a, b, c;
	double alpha = ir_attr_float(n, "alpha", 1.0);
	char name[256];

#define NODE2(res, o, p, q) do { in[0] = (p); in[1] = (q); \
		if (((res) = lp_add_node(g, &pos, name, o, in, 2, e)) < 0) return -1; } while (0)
#define NODE1(res, o, p) do { in[0] = (p); \
		if (((res) = lp_add_node(g, &pos, name, o, in, 1, e)) < 0) return -1; } while (0)
#define CONST(res, v) do { if (((res) = lp_const_scalar(g, "k", dt, (v), 0, e)) < 0) return -1; } while (0)
	snprintf(name, sizeof(name), "%s", n->name);
	if (op == IR_OP_Softsign) {		/* x / (1 + |x|) */
		NODE1(a, "Abs", x);
		CONST(b, 1);
		NODE2(c, "Add", a, b);
		in[0] = x;
		in[1] = c;
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Div", in, 2, e);
	}
	if (op == IR_OP_ThresholdedRelu) {	/* x > alpha ? x : 0 */
		CONST(a, alpha);
		NODE2(b, "Greater", x, a);
		CONST(c, 0);
		in[0] = b;
		in[1] = x;
		in[2] = c;
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Where", in, 3, e);
	}
	if (op == IR_OP_IsNaN) {		/* !(x == x) */
		NODE2(a, "Equal", x, x);
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Not", &a, 1, e);
	}
	if (op == IR_OP_IsInf) {
		int pos_ok = (int)ir_attr_int(n, "detect_positive", 1), neg_ok = (int)ir_attr_int(n, "detect_negative", 1);

		if (pos_ok && neg_ok) {
			NODE1(a, "Abs", x);
			CONST(b, INFINITY);
			in[0] = a;
			in[1] = b;
		} else {
			CONST(b, pos_ok ? INFINITY : -INFINITY);
			in[0] = x;
			in[1] = b;
			if (!pos_ok && !neg_ok) {
				NODE2(a, "Equal", x, x);
				NODE2(c, "Xor", a, a);
				strip(g, pos);
				*pi = pos;
				return become(g, pos, "Identity", &c, 1, e);
			}
		}
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Equal", in, 2, e);
	}
	if (op == IR_OP_Tan) {
		NODE1(a, "Sin", x);
		NODE1(b, "Cos", x);
		in[0] = a;
		in[1] = b;
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Div", in, 2, e);
	}
	if (op == IR_OP_Sinh || op == IR_OP_Cosh) {	/* (e^x -/+ e^-x) / 2 */
		int nx, ex, enx, s, half;

		NODE1(ex, "Exp", x);
		NODE1(nx, "Neg", x);
		NODE1(enx, "Exp", nx);
		NODE2(s, op == IR_OP_Sinh ? "Sub" : "Add", ex, enx);
		CONST(half, 0.5);
		in[0] = s;
		in[1] = half;
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Mul", in, 2, e);
	}
	if (op == IR_OP_Celu) {	/* max(0,x) + min(0, a*(exp(x/a)-1)) */
		int r, xa, ex, m1, t, z, mn;

		NODE1(r, "Relu", x);
		CONST(a, alpha);
		NODE2(xa, "Div", x, a);
		NODE1(ex, "Exp", xa);
		CONST(b, 1);
		NODE2(m1, "Sub", ex, b);
		NODE2(t, "Mul", m1, a);
		CONST(z, 0);
		NODE2(mn, "Min", t, z);
		in[0] = r;
		in[1] = mn;
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Add", in, 2, e);
	}
	if (op == IR_OP_Shrink) {
		double l = ir_attr_float(n, "lambd", 0.5), bias = ir_attr_float(n, "bias", 0);
		int lo, hi, cl, ch, xp, xm, z, inner;

		CONST(a, -l);
		NODE2(lo, "Less", x, a);
		CONST(b, l);
		NODE2(hi, "Greater", x, b);
		CONST(c, bias);
		NODE2(xp, "Add", x, c);
		NODE2(xm, "Sub", x, c);
		CONST(z, 0);
		in[0] = hi;
		in[1] = xm;
		in[2] = z;
		if ((inner = lp_add_node(g, &pos, name, "Where", in, 3, e)) < 0)
			return -1;
		(void)cl;
		(void)ch;
		in[0] = lo;
		in[1] = xp;
		in[2] = inner;
		strip(g, pos);
		*pi = pos;
		return become(g, pos, "Where", in, 3, e);
	}
#undef NODE1
#undef NODE2
#undef CONST
	return 0;
}

/* Reduction over non-adjacent axes: one axis at a time (keepdims), then a
 * Reshape when the original drops them.  Only for decomposable ops. */
static int reduce_split(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *av = &g->vals[n->in[1]];
	const struct ir_value *ov = &g->vals[n->out[0]];
	int red[IR_MAX_RANK] = { 0 }, rank = xv->rank, pos = *pi, cur = n->in[0], in[2];
	int keep = (int)ir_attr_int(n, "keepdims", 1);
	int64_t od[IR_MAX_RANK];
	char name[256], op[32];
	int orank = ov->rank;

	memcpy(od, ov->dims, sizeof(od));
	for (int64_t i = 0; i < ir_value_numel(av); i++)
		red[ir_axis(ir_get_i(av->data, av->dtype, (size_t)i), rank)] = 1;
	snprintf(name, sizeof(name), "%s", n->name);
	snprintf(op, sizeof(op), "%s", n->op);
	for (int a = rank - 1; a >= 0; a--) {
		int64_t ax = a;

		if (!red[a] || xv->dims[a] == 1)
			continue;
		in[0] = cur;
		if ((in[1] = const_i64(g, "red_axis", &ax, 1, e)) < 0 ||
		    (cur = lp_add_node(g, &pos, name, op, in, 2, e)) < 0 ||
		    ir_attr_set_int(&g->nodes[pos - 1], "keepdims", 1, e))
			return -1;
		xv = &g->vals[g->nodes[pos].in[0]];
	}
	strip(g, pos);
	*pi = pos;
	if (keep)
		return become(g, pos, "Identity", &cur, 1, e);
	in[0] = cur;
	if ((in[1] = const_i64(g, "red_shape", od, orank, e)) < 0)
		return -1;
	return become(g, pos, "Reshape", in, 2, e);
}

/* Integer Mod with Python semantics (fmod = 0): C remainder, then add the
 * divisor where the remainder is non-zero and its sign differs. */
static int mod_python(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int a = n->in[0], b = n->in[1], dt = g->vals[a].dtype, pos = *pi, in[3];
	int r, z, rn, bn, diff, rz, nz, cond, fix;
	char name[256];

	snprintf(name, sizeof(name), "%s", n->name);
	in[0] = a;
	in[1] = b;
	if ((r = lp_add_node(g, &pos, name, "Mod", in, 2, e)) < 0 ||
	    ir_attr_set_int(&g->nodes[pos - 1], "fmod", 1, e) ||
	    (z = lp_const_scalar(g, "zero", dt, 0, 0, e)) < 0)
		return -1;
	in[0] = r;
	in[1] = z;
	if ((rn = lp_add_node(g, &pos, name, "Less", in, 2, e)) < 0 ||
	    (rz = lp_add_node(g, &pos, name, "Equal", in, 2, e)) < 0)
		return -1;
	in[0] = b;
	if ((bn = lp_add_node(g, &pos, name, "Less", in, 2, e)) < 0)
		return -1;
	in[0] = rn;
	in[1] = bn;
	if ((diff = lp_add_node(g, &pos, name, "Xor", in, 2, e)) < 0 ||
	    (nz = lp_add_node(g, &pos, name, "Not", &rz, 1, e)) < 0)
		return -1;
	in[0] = nz;
	in[1] = diff;
	if ((cond = lp_add_node(g, &pos, name, "And", in, 2, e)) < 0)
		return -1;
	in[0] = r;
	in[1] = b;
	if ((fix = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
		return -1;
	in[0] = cond;
	in[1] = fix;
	in[2] = r;
	strip(g, pos);
	*pi = pos;
	return become(g, pos, "Where", in, 3, e);
}

/* OneHot(indices, depth, values) -> Where(Equal(idx', iota), on, off) with
 * idx' = indices (negative ones + depth) unsqueezed at `axis`. */
int lp_dec_onehot(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *iv = &g->vals[n->in[0]], *vv = &g->vals[n->in[2]];
	const struct ir_value *ov = &g->vals[n->out[0]];
	int rank = ov->rank, a = ir_axis(ir_attr_int(n, "axis", -1), rank), pos = *pi;
	int64_t depth = ov->dims[a], d[IR_MAX_RANK], ax = a;
	int in[3], idx, neg, fix, un, eq, on, off;
	char name[256];
	int64_t one = 1, zero = 0;

	if (!vv->data)
		return ir_node_err(e, g, n, "values must be constant to lower OneHot");
	snprintf(name, sizeof(name), "%s", n->name);
	for (int i = 0; i < rank; i++)
		d[i] = i == a ? depth : 1;
	if ((idx = cast_to(g, &pos, name, n->in[0], IR_I32, e)) < 0)
		return -1;
	(void)iv;
	in[0] = idx;
	if ((in[1] = lp_const_scalar(g, "zero", IR_I32, 0, 0, e)) < 0 ||
	    (neg = lp_add_node(g, &pos, name, "Less", in, 2, e)) < 0)
		return -1;
	in[0] = idx;
	if ((in[1] = lp_const_scalar(g, "depth", IR_I32, (double)depth, 0, e)) < 0 ||
	    (fix = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
		return -1;
	in[0] = neg;
	in[1] = fix;
	in[2] = idx;
	if ((idx = lp_add_node(g, &pos, name, "Where", in, 3, e)) < 0)
		return -1;
	in[0] = idx;
	if ((in[1] = const_i64(g, "axis", &ax, 1, e)) < 0 ||
	    (un = lp_add_node(g, &pos, name, "Unsqueeze", in, 2, e)) < 0)
		return -1;
	in[0] = un;
	if ((in[1] = const_fill(g, "iota", IR_I32, rank, d, iota, NULL, e)) < 0 ||
	    (eq = lp_add_node(g, &pos, name, "Equal", in, 2, e)) < 0)
		return -1;
	{
		struct ir_tensor t1, t0;
		const struct ir_value *vals = &g->vals[g->nodes[pos].in[2]];

		on = ir_value_add_unique(g, "on", e);
		off = on < 0 ? -1 : ir_value_add_unique(g, "off", e);
		if (off < 0 || ir_tensor_alloc(&t1, vals->dtype, 0, NULL, e))
			return -1;
		if (ir_tensor_alloc(&t0, vals->dtype, 0, NULL, e)) {
			ir_tensor_free(&t1);
			return -1;
		}
		memcpy(t0.data, vals->data, ir_dtype_size(vals->dtype));
		memcpy(t1.data, (const char *)vals->data + ir_dtype_size(vals->dtype), ir_dtype_size(vals->dtype));
		ir_value_set_const(&g->vals[on], &t1);
		ir_value_set_const(&g->vals[off], &t0);
	}
	(void)one;
	(void)zero;
	in[0] = eq;
	in[1] = on;
	in[2] = off;
	strip(g, pos);
	*pi = pos;
	return become(g, pos, "Where", in, 3, e);
}

/* 1x1 Conv (group 1, no padding, constant weights): a MatMul of the
 * weights [M][C] with the image as [N][C][H*W] (strided first when the
 * stride is not 1), so the input channels become a reduction dimension the
 * matmul can split with partial sums instead of copying whole images. */
static int conv1x1(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *wv = &g->vals[n->in[1]];
	const struct ir_value *ov = &g->vals[n->out[0]];
	int bias = n->nin > 2 && n->in[2] >= 0 ? n->in[2] : -1;
	int64_t N = xv->dims[0], C = xv->dims[1], M = wv->dims[0];
	int64_t OH = ov->dims[2], OW = ov->dims[3];
	size_t cnt;
	const int64_t *st = ir_attr_ints(n, "strides", &cnt);
	int64_t sh = st ? st[0] : 1, sw = st ? st[1] : 1;
	int pos = *pi, cur = n->in[0], in[5], wm, bm = -1, mm;
	char name[256];
	struct ir_tensor t;

	snprintf(name, sizeof(name), "%s", n->name);
	if (sh != 1 || sw != 1) {
		int64_t starts[2] = { 0, 0 }, ends[2] = { INT64_MAX, INT64_MAX }, axes[2] = { 2, 3 };
		int64_t steps[2] = { sh, sw };

		in[0] = cur;
		if ((in[1] = const_i64(g, "c1_starts", starts, 2, e)) < 0 ||
		    (in[2] = const_i64(g, "c1_ends", ends, 2, e)) < 0 ||
		    (in[3] = const_i64(g, "c1_axes", axes, 2, e)) < 0 ||
		    (in[4] = const_i64(g, "c1_steps", steps, 2, e)) < 0 ||
		    (cur = lp_add_node(g, &pos, name, "Slice", in, 5, e)) < 0)
			return -1;
	}
	{
		int64_t shp[3] = { N, C, OH * OW };

		in[0] = cur;
		if ((in[1] = const_i64(g, "c1_shape", shp, 3, e)) < 0 ||
		    (cur = lp_add_node(g, &pos, name, "Reshape", in, 2, e)) < 0)
			return -1;
	}
	{
		int64_t d[2] = { M, C };
		int wi = g->nodes[pos].in[1];

		/* adding a value may move g->vals: index it afresh after */
		wm = ir_value_add_unique(g, "c1_weight", e);
		wv = &g->vals[wi];
		if (wm < 0 || ir_tensor_alloc(&t, wv->dtype, 2, d, e))
			return -1;
		memcpy(t.data, wv->data, ir_tensor_bytes(&t));
		ir_value_set_const(&g->vals[wm], &t);
	}
	in[0] = wm;
	in[1] = cur;
	if ((mm = lp_add_node(g, &pos, name, "MatMul", in, 2, e)) < 0)
		return -1;
	if (bias >= 0) {
		int64_t d[2] = { M, 1 };

		bm = ir_value_add_unique(g, "c1_bias", e);
		if (bm < 0 || ir_tensor_alloc(&t, g->vals[bias].dtype, 2, d, e))
			return -1;
		memcpy(t.data, g->vals[bias].data, ir_tensor_bytes(&t));
		ir_value_set_const(&g->vals[bm], &t);
		in[0] = mm;
		in[1] = bm;
		if ((mm = lp_add_node(g, &pos, name, "Add", in, 2, e)) < 0)
			return -1;
	}
	{
		int64_t shp[4] = { N, M, OH, OW };

		in[0] = mm;
		if ((in[1] = const_i64(g, "c1_out", shp, 4, e)) < 0)
			return -1;
	}
	strip(g, pos);
	*pi = pos;
	return become(g, pos, "Reshape", in, 2, e);
}

static int is_conv1x1(const struct ir_graph *g, const struct ir_node *n)
{
	const struct ir_value *x = &g->vals[n->in[0]], *w = &g->vals[n->in[1]];
	size_t cnt;
	const int64_t *p = ir_attr_ints(n, "pads", &cnt);
	const int64_t *d = ir_attr_ints(n, "dilations", &cnt);

	if (x->rank != 4 || w->rank != 4 || !w->data || w->dims[2] != 1 || w->dims[3] != 1 ||
	    ir_attr_int(n, "group", 1) != 1 ||
	    strcmp(ir_attr_str(n, "auto_pad", "NOTSET"), "NOTSET") ||
	    (n->nin > 2 && n->in[2] >= 0 && !g->vals[n->in[2]].data) ||
	    (x->dtype != IR_F32 && x->dtype != IR_F16))
		return 0;
	(void)d;
	for (int i = 0; p && i < 4; i++)
		if (p[i])
			return 0;
	return 1;
}

/* The dtype of the node's first input (0 when it has none). */
static int dtype0(const struct ir_graph *g, const struct ir_node *n)
{
	return n->nin > 0 && n->in[0] >= 0 ? g->vals[n->in[0]].dtype : 0;
}

int lp_dec_dropout(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];

	if (n->nout > 1 && n->out[1] >= 0)
		return dropout_mask(g, n, e);
	return 0;
}

/* Stats outputs in use: the whole computation in ops; else they go. */
int lp_dec_layernorm(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];

	if (n->nout > 1 &&
	    ((n->out[1] >= 0 && (ir_value_uses(g, n->out[1]) || g->vals[n->out[1]].is_output)) ||
	     (n->nout > 2 && n->out[2] >= 0 && (ir_value_uses(g, n->out[2]) || g->vals[n->out[2]].is_output))))
		return layernorm(g, pi, e);
	if (n->nout > 1)
		n->nout = 1;
	return 0;
}

int lp_dec_clip(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int need = ir_dtype_is_int(dtype0(g, n));

	for (int k = 1; k < n->nin; k++)
		if (n->in[k] >= 0 && !g->vals[n->in[k]].data)
			need = 1;
	return need ? clip(g, pi, e) : 0;
}

int lp_dec_pow(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int dt0 = dtype0(g, n);

	if (n->nin == 2 && ir_dtype_is_int(dt0)) {
		/* integer powers through float32 (exact below 2^24) */
		int pos = *pi, a, b, p2, in[2], odt = g->vals[n->out[0]].dtype;
		char name[256];

		snprintf(name, sizeof(name), "%s", n->name);
		if ((a = cast_to(g, &pos, name, n->in[0], IR_F32, e)) < 0 ||
		    (b = cast_to(g, &pos, name, g->nodes[pos].in[1], IR_F32, e)) < 0)
			return -1;
		in[0] = a;
		in[1] = b;
		if ((p2 = lp_add_node(g, &pos, name, "Pow", in, 2, e)) < 0)
			return -1;
		*pi = pos;
		if (become(g, pos, "Cast", &p2, 1, e))
			return -1;
		return ir_attr_set_int(&g->nodes[pos], "to", odt, e);
	}
	if (n->nin == 2 && g->vals[n->in[1]].dtype != dt0) {
		int pos = *pi, c;
		char name[256];

		snprintf(name, sizeof(name), "%s", n->name);
		if ((c = cast_to(g, &pos, name, n->in[1], dt0, e)) < 0)
			return -1;
		g->nodes[pos].in[1] = c;
		*pi = pos;
	}
	return 0;
}

/* The device computes integers in int32. */
int lp_dec_int(struct ir_graph *g, int *pi, struct ir_error *e)
{
	int dt0 = dtype0(g, &g->nodes[*pi]);

	if (ir_dtype_is_int(dt0) && dt0 != IR_I32)
		return via_i32(g, pi, e);
	return 0;
}

int lp_dec_mod(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int dt0 = dtype0(g, n);

	if (!ir_dtype_is_int(dt0))
		return 0;
	if (ir_attr_int(n, "fmod", 0))
		return dt0 != IR_I32 ? via_i32(g, pi, e) : 0;
	return mod_python(g, pi, e);
}

/* Constant axes that are not adjacent (ignoring axes of size 1): one
 * reduction per axis. */
int lp_dec_reduce(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv, *av;
	int red[IR_MAX_RANK] = { 0 }, last = -1, gap = 0;

	if (n->nin < 2 || n->in[1] < 0 || !g->vals[n->in[1]].data)
		return 0;
	xv = &g->vals[n->in[0]];
	av = &g->vals[n->in[1]];
	for (int64_t i = 0; i < ir_value_numel(av); i++)
		red[ir_axis(ir_get_i(av->data, av->dtype, (size_t)i), xv->rank)] = 1;
	for (int i = 0; i < xv->rank; i++) {
		if (!red[i] || xv->dims[i] == 1)
			continue;
		for (int k = last + 1; last >= 0 && k < i; k++)
			gap |= xv->dims[k] != 1;
		last = i;
	}
	return gap ? reduce_split(g, pi, e) : 0;
}

int lp_dec_conv(struct ir_graph *g, int *pi, struct ir_error *e)
{
	if (g->vals[g->nodes[*pi].in[0]].rank == 5)
		return lp_dec_conv3d(g, pi, e);
	return is_conv1x1(g, &g->nodes[*pi]) ? conv1x1(g, pi, e) : 0;
}

/* Float unary ops the device has no codelet for. */
int lp_dec_unary(struct ir_graph *g, int *pi, struct ir_error *e)
{
	if (!ir_dtype_is_float(dtype0(g, &g->nodes[*pi])))
		return 0;
	return unary_extra(g, pi, e) ? -1 : 0;
}

int lp_dec_argmax(struct ir_graph *g, int *pi, struct ir_error *e)
{
	if (ir_attr_int(&g->nodes[*pi], "select_last_index", 0))
		return argmax_last(g, pi, e);
	return 0;
}

int lp_dec_reduce_log_sum(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int pos = *pi, in[2] = { n->in[0], n->nin > 1 ? n->in[1] : -1 }, s;
	char name[256];

	snprintf(name, sizeof(name), "%s", n->name);
	if ((s = lp_add_node(g, &pos, name, "ReduceSum", in, in[1] >= 0 ? 2 : 1, e)) < 0)
		return -1;
	{
		struct ir_node *o = &g->nodes[pos], *cp = &g->nodes[pos - 1];

		if (ir_attr_set_int(cp, "keepdims", ir_attr_int(o, "keepdims", 1), e))
			return -1;
	}
	n = &g->nodes[pos];
	for (int k = n->nattrs - 1; k >= 0; k--)
		ir_attr_remove(n, n->attrs[k].name);
	*pi = pos;
	return become(g, pos, "Log", &s, 1, e);
}

int lp_decompose(struct ir_graph *g, int *pi, struct ir_error *e)
{
	const struct lw_op_hooks *h = lw_node_hooks(&g->nodes[*pi]);

	return h && h->decompose ? h->decompose(g, pi, e) : 0;
}
