/* SPDX-License-Identifier: MIT */
/*
 * prepare_ahyp.c - the inverse hyperbolic functions in ops the device has:
 *   Asinh(x) = sign(x) * log(|x| + sqrt(x^2 + 1))   (no cancellation for
 *              negative x)
 *   Acosh(x) = log(x + sqrt(x^2 - 1))
 *   Atanh(x) = 0.5 * log((1 + x) / (1 - x))
 */
#include <stdio.h>
#include <string.h>

#include "prepare_rw.h"

int lp_dec_ahyp(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int x = n->in[0], dt = g->vals[x].dtype, one, s, t, u;
	struct lp_rw r = { g, *pi, "", e };
	int op = n->opid;

	if (!ir_dtype_is_float(dt) || (op != IR_OP_Asinh && op != IR_OP_Acosh && op != IR_OP_Atanh))
		return 0;
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	/* x * x overflows float16 from 256 on: float32 inside */
	if (dt != IR_F32 && ((x = lp_rw_add(&r, "Cast", x, -1)) < 0 || lp_rw_int(&r, "to", IR_F32)))
		return -1;
	if ((one = lp_rw_scalar(&r, IR_F32, 1)) < 0)
		return -1;
	if (op == IR_OP_Atanh) {
		int half;

		if ((s = lp_rw_add(&r, "Add", one, x)) < 0 || (t = lp_rw_add(&r, "Sub", one, x)) < 0 ||
		    (s = lp_rw_add(&r, "Div", s, t)) < 0 || (s = lp_rw_add(&r, "Log", s, -1)) < 0 ||
		    (half = lp_rw_scalar(&r, IR_F32, 0.5)) < 0 || (u = lp_rw_add(&r, "Mul", s, half)) < 0)
			return -1;
	} else if (op == IR_OP_Asinh) {
		int sg, a;

		if ((sg = lp_rw_add(&r, "Sign", x, -1)) < 0 || (a = lp_rw_add(&r, "Abs", x, -1)) < 0 ||
		    (s = lp_rw_add(&r, "Mul", a, a)) < 0 || (s = lp_rw_add(&r, "Add", s, one)) < 0 ||
		    (s = lp_rw_add(&r, "Sqrt", s, -1)) < 0 || (s = lp_rw_add(&r, "Add", a, s)) < 0 ||
		    (s = lp_rw_add(&r, "Log", s, -1)) < 0 || (u = lp_rw_add(&r, "Mul", sg, s)) < 0)
			return -1;
	} else if ((s = lp_rw_add(&r, "Mul", x, x)) < 0 || (s = lp_rw_add(&r, "Sub", s, one)) < 0 ||
		   (s = lp_rw_add(&r, "Sqrt", s, -1)) < 0 || (s = lp_rw_add(&r, "Add", x, s)) < 0 ||
		   (u = lp_rw_add(&r, "Log", s, -1)) < 0) {
		return -1;
	}
	*pi = r.pos;
	if (dt == IR_F32)
		return lp_rw_become(&r, "Identity", &u, 1);
	if (lp_rw_become(&r, "Cast", &u, 1))
		return -1;
	return ir_attr_set_int(&g->nodes[r.pos], "to", dt, e);
}
