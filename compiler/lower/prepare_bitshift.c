/* SPDX-License-Identifier: MIT */
/*
 * prepare_bitshift.c - BitShift of uint8 and uint16 (carried in int32 on
 * the device) in float32, where every such value and shift is exact (its
 * decompose hook):
 *   LEFT:  (x * 2^y) mod 2^bits    RIGHT: floor((x + 0.5) / 2^y)
 * x * 2^y keeps x's at most 16 significant bits, so the product, the
 * quotient by 2^bits and the remainder are exact too; the product is
 * rounded and the quotient taken half a unit up, so that a power 2^y one
 * ulp off would still give the exact result.
 */
#include <stdio.h>
#include <string.h>

#include "prepare_rw.h"

int lp_dec_bitshift(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	int x = n->in[0], y = n->in[1], dt = g->vals[x].dtype, left, two, p, v, q, m;
	struct lp_rw r = { g, *pi, "", e };
	/* uint16 reaches the device as int32: BitShift is unsigned-only */
	double mod = dt == IR_U8 ? 256.0 : 65536.0;

	if ((dt != IR_U8 && dt != IR_I32) || g->vals[y].dtype != dt)
		return 0;
	left = !strcmp(ir_attr_str(n, "direction", ""), "LEFT");
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	if ((x = lp_rw_add(&r, "Cast", x, -1)) < 0 || lp_rw_int(&r, "to", IR_F32) ||
	    (y = lp_rw_add(&r, "Cast", y, -1)) < 0 || lp_rw_int(&r, "to", IR_F32) ||
	    (two = lp_rw_scalar(&r, IR_F32, 2)) < 0 || (p = lp_rw_add(&r, "Pow", two, y)) < 0)
		return -1;
	if (left) {
		if ((v = lp_rw_add(&r, "Mul", x, p)) < 0 || (v = lp_rw_add(&r, "Round", v, -1)) < 0 ||
		    (m = lp_rw_scalar(&r, IR_F32, mod)) < 0 ||
		    (q = lp_rw_add(&r, "Div", v, m)) < 0 || (q = lp_rw_add(&r, "Floor", q, -1)) < 0 ||
		    (q = lp_rw_add(&r, "Mul", q, m)) < 0 || (v = lp_rw_add(&r, "Sub", v, q)) < 0)
			return -1;
	} else if ((q = lp_rw_scalar(&r, IR_F32, 0.5)) < 0 || (v = lp_rw_add(&r, "Add", x, q)) < 0 ||
		   (v = lp_rw_add(&r, "Div", v, p)) < 0 || (v = lp_rw_add(&r, "Floor", v, -1)) < 0) {
		return -1;
	}
	*pi = r.pos;
	if (lp_rw_become(&r, "Cast", &v, 1))
		return -1;
	return ir_attr_set_int(&g->nodes[r.pos], "to", dt, e);
}
