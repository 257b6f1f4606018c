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
 * Each rewrite keeps the node's output value, so consumers are untouched.
 */
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
	return lp_set_op(n, op, e);
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

static int int_op(const char *op)
{
	static const char *const ops[] = {
		"Add", "Sub", "Mul", "Div", "Max", "Min", "Neg", "Abs", "Sign",
		"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Pow",
		"Mod", NULL,
	};

	for (int i = 0; ops[i]; i++)
		if (!strcmp(ops[i], op))
			return 1;
	return 0;
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

static int resize(struct ir_graph *g, int *pi, struct ir_error *e)
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

int lp_decompose(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int dt0 = n->nin > 0 && n->in[0] >= 0 ? g->vals[n->in[0]].dtype : 0;

	if (!strcmp(n->op, "Dropout") && n->nout > 1 && n->out[1] >= 0)
		return dropout_mask(g, n, e);
	if (!strcmp(n->op, "LayerNormalization") && n->nout > 1 &&
	    ((n->out[1] >= 0 && (ir_value_uses(g, n->out[1]) || g->vals[n->out[1]].is_output)) ||
	     (n->nout > 2 && n->out[2] >= 0 && (ir_value_uses(g, n->out[2]) || g->vals[n->out[2]].is_output))))
		return layernorm(g, pi, e);
	if (!strcmp(n->op, "LayerNormalization") && n->nout > 1)
		n->nout = 1;
	if (!strcmp(n->op, "Clip")) {
		int need = ir_dtype_is_int(dt0);

		for (int k = 1; k < n->nin; k++)
			if (n->in[k] >= 0 && !g->vals[n->in[k]].data)
				need = 1;
		if (need)
			return clip(g, pi, e);
	}
	if (!strcmp(n->op, "Pow") && n->nin == 2 && g->vals[n->in[1]].dtype != dt0) {
		int pos = *pi, c;
		char name[256];

		snprintf(name, sizeof(name), "%s", n->name);
		if ((c = cast_to(g, &pos, name, n->in[1], dt0, e)) < 0)
			return -1;
		g->nodes[pos].in[1] = c;
		*pi = pos;
		n = &g->nodes[pos];
	}
	if (int_op(n->op) && ir_dtype_is_int(dt0) && dt0 != IR_I32 &&
	    (strcmp(n->op, "Mod") || ir_attr_int(n, "fmod", 0)))
		return via_i32(g, pi, e);
	if (!strcmp(n->op, "Resize"))
		return resize(g, pi, e);
	if ((!strcmp(n->op, "ArgMax") || !strcmp(n->op, "ArgMin")) &&
	    ir_attr_int(n, "select_last_index", 0))
		return argmax_last(g, pi, e);
	if (!strcmp(n->op, "ReduceLogSum")) {
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
	return 0;
}
