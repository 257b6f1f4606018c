/* SPDX-License-Identifier: MIT */
/*
 * prepare_gridsample.c - GridSample (4-D, float32) in ops the device has
 * (its decompose hook), computing what the reference evaluator does
 * (compiler/eval/eval_gridsample.c): the grid's x and y sliced out and
 * unnormalised (align_corners or not), the padding mode applied to each
 * coordinate (border clips; reflection folds it into the image first),
 * and each tap read with GatherElements from the image flattened to
 * [N, C, H*W] at index y*W + x (clamped), weighted and masked to 0 where
 * the tap falls outside the image.  nearest: 1 tap (Round, half to even
 * as nearbyint), bilinear: 4, bicubic: 16 (A = -0.75).
 */
#include <stdio.h>
#include <string.h>

#include "prepare_rw.h"

enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECT };

struct gs {
	struct lp_rw r;
	int64_t N, C, H, W, P;	/* P = Ho * Wo */
	int pad, align, xflat;
};

static int sc(struct gs *s, double v)
{
	return lp_rw_scalar(&s->r, IR_F32, v);
}

/* op(a, constant v) */
static int opc(struct gs *s, const char *op, int a, double v)
{
	int c = sc(s, v);

	return c < 0 || a < 0 ? -1 : lp_rw_add(&s->r, op, a, c);
}

static int op1(struct gs *s, const char *op, int a)
{
	return a < 0 ? -1 : lp_rw_add(&s->r, op, a, -1);
}

static int op2(struct gs *s, const char *op, int a, int b)
{
	return a < 0 || b < 0 ? -1 : lp_rw_add(&s->r, op, a, b);
}

static int reshape(struct gs *s, int x, const int64_t *dims, int rank)
{
	int sh = lp_rw_shape(&s->r, dims, rank);

	return op2(s, "Reshape", x, sh);
}

/* The reference's reflect(c, twice_lo / 2, ...) of a coordinate tensor. */
static int reflect(struct gs *s, int c, double twice_lo, double twice_hi)
{
	double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
	int a, q, extra, par, eq, lo_v, hi_v, in[3];

	if (twice_lo == twice_hi)
		return opc(s, "Mul", c, 0);
	a = op1(s, "Abs", opc(s, "Sub", c, lo));
	q = op1(s, "Floor", opc(s, "Div", a, span));
	extra = op2(s, "Sub", a, opc(s, "Mul", q, span));
	par = op1(s, "Floor", opc(s, "Mul", q, 0.5));
	par = op2(s, "Sub", q, opc(s, "Mul", par, 2));
	eq = op2(s, "Equal", par, sc(s, 0));
	lo_v = opc(s, "Add", extra, lo);
	hi_v = opc(s, "Sub", opc(s, "Mul", extra, -1), -(span + lo));
	if (eq < 0 || lo_v < 0 || hi_v < 0)
		return -1;
	in[0] = eq;
	in[1] = lo_v;
	in[2] = hi_v;
	return lp_rw_add_to(&s->r, "Where", in, 3, -1);
}

static int pad_coord(struct gs *s, int c, int64_t size)
{
	if (s->pad == PAD_REFLECT)
		c = s->align ? reflect(s, c, 0, 2.0 * (double)(size - 1)) :
			       reflect(s, c, -1, 2.0 * (double)size - 1);
	if (s->pad != PAD_ZEROS)
		c = opc(s, "Min", opc(s, "Max", c, 0), (double)(size - 1));
	return c;
}

/* The image at integer-valued coordinates (ty, tx) [N, P], times w
 * (w < 0: 1), 0 outside the image: [N, C, P]. */
static int tap(struct gs *s, int ty, int tx, int w)
{
	int64_t d3[3] = { s->N, 1, s->P }, e3[3] = { s->N, s->C, s->P };
	int in_y, in_x, ok, mask, cy, cx, idx, g, ex;

	in_y = op2(s, "And", op1(s, "Not", opc(s, "Less", ty, 0)), opc(s, "Less", ty, (double)s->H));
	in_x = op2(s, "And", op1(s, "Not", opc(s, "Less", tx, 0)), opc(s, "Less", tx, (double)s->W));
	ok = op2(s, "And", in_y, in_x);
	if (ok < 0 || (mask = op1(s, "Cast", ok)) < 0 || lp_rw_int(&s->r, "to", IR_F32))
		return -1;
	cy = opc(s, "Min", opc(s, "Max", ty, 0), (double)(s->H - 1));
	cx = opc(s, "Min", opc(s, "Max", tx, 0), (double)(s->W - 1));
	idx = op2(s, "Add", opc(s, "Mul", cy, (double)s->W), cx);
	if (idx < 0 || (idx = op1(s, "Cast", idx)) < 0 || lp_rw_int(&s->r, "to", IR_I32))
		return -1;
	idx = reshape(s, idx, d3, 3);
	ex = lp_rw_shape(&s->r, e3, 3);
	idx = op2(s, "Expand", idx, ex);
	g = op2(s, "GatherElements", s->xflat, idx);
	if (g < 0 || lp_rw_int(&s->r, "axis", 2))
		return -1;
	if (w >= 0)
		mask = op2(s, "Mul", mask, w);
	return op2(s, "Mul", g, reshape(s, mask, d3, 3));
}

/* ((a3 u + a2) u + a1) u + a0 */
static int cubic_poly(struct gs *s, int u, double a3, double a2, double a1, double a0)
{
	int p = opc(s, "Mul", u, a3);

	p = op2(s, "Mul", opc(s, "Add", p, a2), u);
	p = op2(s, "Mul", opc(s, "Add", p, a1), u);
	return opc(s, "Add", p, a0);
}

/* The four bicubic weights of the fraction t. */
static int cubic_weights(struct gs *s, int t, int *w)
{
	const double A = -0.75;
	int u1 = opc(s, "Add", t, 1), u2 = opc(s, "Sub", opc(s, "Mul", t, -1), -1);
	int u3 = opc(s, "Sub", opc(s, "Mul", t, -1), -2);

	w[0] = cubic_poly(s, u1, A, -5 * A, 8 * A, -4 * A);
	w[1] = cubic_poly(s, t, A + 2, -(A + 3), 0, 1);
	w[2] = cubic_poly(s, u2, A + 2, -(A + 3), 0, 1);
	w[3] = cubic_poly(s, u3, A, -5 * A, 8 * A, -4 * A);
	return w[0] < 0 || w[1] < 0 || w[2] < 0 || w[3] < 0 ? -1 : 0;
}

/* Coordinate k of the grid [N, P, 2], unnormalised to an image axis of
 * `size`. */
static int coord(struct gs *s, int grid, int k, int64_t size)
{
	int64_t st = k, en = k + 1, ax = 2, d2[2] = { s->N, s->P };
	int in[4], c;

	in[0] = grid;
	if ((in[1] = lp_rw_ints(&s->r, "gs_start", IR_I64, 1, (int64_t[]){ 1 }, &st)) < 0 ||
	    (in[2] = lp_rw_ints(&s->r, "gs_end", IR_I64, 1, (int64_t[]){ 1 }, &en)) < 0 ||
	    (in[3] = lp_rw_ints(&s->r, "gs_axis", IR_I64, 1, (int64_t[]){ 1 }, &ax)) < 0 ||
	    (c = lp_rw_add_to(&s->r, "Slice", in, 4, -1)) < 0)
		return -1;
	c = opc(s, "Add", reshape(s, c, d2, 2), 1);
	if (s->align)
		return opc(s, "Mul", c, (double)(size - 1) / 2);
	return opc(s, "Sub", opc(s, "Mul", c, (double)size / 2), 0.5);
}

int lp_dec_gridsample(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *gv = &g->vals[n->in[1]];
	const char *mode = ir_attr_str(n, "mode", "bilinear"), *ps = ir_attr_str(n, "padding_mode", "zeros");
	struct gs s = { { g, *pi, "", e }, 0, 0, 0, 0, 0, 0, 0, -1 };
	int64_t flat[3], g3[3], d4[4];
	int x = n->in[0], grid = n->in[1], fx, fy, sum = -1, bicubic = !strcmp(mode, "bicubic");

	if (xv->rank != 4 || gv->rank != 4 || xv->dtype != IR_F32 || gv->dtype != IR_F32)
		return 0;
	s.pad = !strcmp(ps, "border") ? PAD_BORDER : !strcmp(ps, "reflection") ? PAD_REFLECT : PAD_ZEROS;
	s.align = (int)ir_attr_int(n, "align_corners", 0);
	s.N = xv->dims[0];
	s.C = xv->dims[1];
	s.H = xv->dims[2];
	s.W = xv->dims[3];
	s.P = gv->dims[1] * gv->dims[2];
	d4[0] = s.N;
	d4[1] = s.C;
	d4[2] = gv->dims[1];
	d4[3] = gv->dims[2];
	snprintf(s.r.name, sizeof(s.r.name), "%s", n->name);
	flat[0] = s.N;
	flat[1] = s.C;
	flat[2] = s.H * s.W;
	g3[0] = s.N;
	g3[1] = s.P;
	g3[2] = 2;
	if ((s.xflat = reshape(&s, x, flat, 3)) < 0 || (grid = reshape(&s, grid, g3, 3)) < 0 ||
	    (fx = coord(&s, grid, 0, s.W)) < 0 || (fy = coord(&s, grid, 1, s.H)) < 0)
		return -1;
	if (bicubic) {
		int x0 = op1(&s, "Floor", fx), y0 = op1(&s, "Floor", fy);
		int wx[4], wy[4];

		if (cubic_weights(&s, op2(&s, "Sub", fx, x0), wx) ||
		    cubic_weights(&s, op2(&s, "Sub", fy, y0), wy))
			return -1;
		for (int j = 0; j < 4; j++)
			for (int i = 0; i < 4; i++) {
				int tx = pad_coord(&s, opc(&s, "Add", x0, i - 1), s.W);
				int ty = pad_coord(&s, opc(&s, "Add", y0, j - 1), s.H);
				int t = tap(&s, ty, tx, op2(&s, "Mul", wx[i], wy[j]));

				sum = sum < 0 ? t : op2(&s, "Add", sum, t);
				if (sum < 0)
					return -1;
			}
	} else {
		int px = pad_coord(&s, fx, s.W), py = pad_coord(&s, fy, s.H);

		if (!strcmp(mode, "nearest")) {
			sum = tap(&s, op1(&s, "Round", py), op1(&s, "Round", px), -1);
		} else {
			int x0 = op1(&s, "Floor", px), y0 = op1(&s, "Floor", py);
			int tx = op2(&s, "Sub", px, x0), ty = op2(&s, "Sub", py, y0);
			int ux = opc(&s, "Sub", opc(&s, "Mul", tx, -1), -1);
			int uy = opc(&s, "Sub", opc(&s, "Mul", ty, -1), -1);
			int x1 = opc(&s, "Add", x0, 1), y1 = opc(&s, "Add", y0, 1);

			sum = tap(&s, y0, x0, op2(&s, "Mul", ux, uy));
			sum = op2(&s, "Add", sum, tap(&s, y0, x1, op2(&s, "Mul", tx, uy)));
			sum = op2(&s, "Add", sum, tap(&s, y1, x0, op2(&s, "Mul", ux, ty)));
			sum = op2(&s, "Add", sum, tap(&s, y1, x1, op2(&s, "Mul", tx, ty)));
		}
	}
	if (sum < 0)
		return -1;
	{
		int in[2] = { sum, lp_rw_shape(&s.r, d4, 4) };

		if (in[1] < 0)
			return -1;
		*pi = s.r.pos;
		return lp_rw_become(&s.r, "Reshape", in, 2);
	}
}
