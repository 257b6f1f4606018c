/* SPDX-License-Identifier: MIT */
/*
 * prepare_atrig.c - the inverse trigonometric functions in ops the device
 * has (the decompose hook of Atan, Asin and Acos):
 *   Atan(x) = sign(x) * (|x| <= 1 ? p(|x|) : pi/2 - p(1/|x|)), p the
 *             minimax polynomial of Abramowitz and Stegun 4.4.49 on
 *             [0, 1] (absolute error 2e-8, relative as good near 0:
 *             p(t) = t * (1 + a2 t^2 + ... + a16 t^16))
 *   Asin(x) = Atan(x / sqrt((1 - x)(1 + x)))   (+-inf at +-1: +-pi/2)
 *   Acos(x) = 2 Atan(sqrt((1 - x) / (1 + x)))  (no cancellation near 1)
 * computed in float32 (float16 inputs cast in and the result back).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "prepare_rw.h"

static const double atan_poly[] = {	/* a16 down to a2 */
	0.0028662257, -0.0161657367, 0.0429096138, -0.0752896400,
	0.1065626393, -0.1420889944, 0.1999355085, -0.3333314528,
};

/* atan(x) of a float32 value x. */
static int atan_of(struct lp_rw *r, int x)
{
	int a, inv, t, s, q, c, p, one, big, hp, sg;

	if ((one = lp_rw_scalar(r, IR_F32, 1)) < 0 || (a = lp_rw_add(r, "Abs", x, -1)) < 0 ||
	    (inv = lp_rw_add(r, "Div", one, a)) < 0 || (t = lp_rw_add(r, "Min", a, inv)) < 0 ||
	    (s = lp_rw_add(r, "Mul", t, t)) < 0 || (q = lp_rw_scalar(r, IR_F32, atan_poly[0])) < 0)
		return -1;
	for (size_t i = 1; i < sizeof(atan_poly) / sizeof(atan_poly[0]); i++)
		if ((q = lp_rw_add(r, "Mul", q, s)) < 0 ||
		    (c = lp_rw_scalar(r, IR_F32, atan_poly[i])) < 0 || (q = lp_rw_add(r, "Add", q, c)) < 0)
			return -1;
	if ((q = lp_rw_add(r, "Mul", q, s)) < 0 || (q = lp_rw_add(r, "Add", q, one)) < 0 ||
	    (p = lp_rw_add(r, "Mul", t, q)) < 0 || (hp = lp_rw_scalar(r, IR_F32, M_PI / 2)) < 0 ||
	    (hp = lp_rw_add(r, "Sub", hp, p)) < 0 || (big = lp_rw_add(r, "Greater", a, one)) < 0)
		return -1;
	{
		int in[3] = { big, hp, p };

		if ((p = lp_rw_add_to(r, "Where", in, 3, -1)) < 0)
			return -1;
	}
	if ((sg = lp_rw_add(r, "Sign", x, -1)) < 0)
		return -1;
	return lp_rw_add(r, "Mul", sg, p);
}

int lp_dec_atrig(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int x = n->in[0], dt = g->vals[x].dtype, one, s, t, u;
	struct lp_rw r = { g, *pi, "", e };
	int op = n->opid;

	if (!ir_dtype_is_float(dt) || (op != IR_OP_Atan && op != IR_OP_Asin && op != IR_OP_Acos))
		return 0;
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	if (dt != IR_F32 && ((x = lp_rw_add(&r, "Cast", x, -1)) < 0 || lp_rw_int(&r, "to", IR_F32)))
		return -1;
	if ((one = lp_rw_scalar(&r, IR_F32, 1)) < 0)
		return -1;
	if (op == IR_OP_Atan) {
		u = atan_of(&r, x);
	} else if (op == IR_OP_Asin) {
		if ((s = lp_rw_add(&r, "Sub", one, x)) < 0 || (t = lp_rw_add(&r, "Add", one, x)) < 0 ||
		    (s = lp_rw_add(&r, "Mul", s, t)) < 0 || (s = lp_rw_add(&r, "Sqrt", s, -1)) < 0 ||
		    (s = lp_rw_add(&r, "Div", x, s)) < 0)
			return -1;
		u = atan_of(&r, s);
	} else {
		int two;

		if ((s = lp_rw_add(&r, "Sub", one, x)) < 0 || (t = lp_rw_add(&r, "Add", one, x)) < 0 ||
		    (s = lp_rw_add(&r, "Div", s, t)) < 0 || (s = lp_rw_add(&r, "Sqrt", s, -1)) < 0 ||
		    (s = atan_of(&r, s)) < 0 || (two = lp_rw_scalar(&r, IR_F32, 2)) < 0)
			return -1;
		u = lp_rw_add(&r, "Mul", s, two);
	}
	if (u < 0)
		return -1;
	*pi = r.pos;
	if (dt == IR_F32)
		return lp_rw_become(&r, "Identity", &u, 1);
	if (lp_rw_become(&r, "Cast", &u, 1))
		return -1;
	return ir_attr_set_int(&g->nodes[r.pos], "to", dt, e);
}
