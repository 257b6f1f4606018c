/* SPDX-License-Identifier: MIT */
/*
 * prepare_quant.c - the quantisation operators rewritten into float ops
 * the device has (the prepare hooks of their ops.def lines):
 *   QuantizeLinear     -> Div by the scale, Round (half to even), Add the
 *                         zero point, Max/Min to the type's range, Cast
 *   DequantizeLinear   -> Cast, Sub the zero point, Mul by the scale
 *   DynamicQuantizeLinear -> ReduceMin/ReduceMax (with 0), the scale and
 *                         zero point as ONNX computes them, then as above
 *   MatMulInteger, ConvInteger -> Cast to float32, Sub the zero points,
 *                         MatMul/Conv, Cast to int32
 *   QLinearMatMul, QLinearConv -> the same product (plus QLinearConv's
 *                         bias), times sa * sb / sy, then quantised as above
 * Per-axis scales and zero points are reshaped to broadcast along their
 * axis.  The integer products are exact while every sum stays below 2^24
 * (float32's integers); they stay in float32 under --precision fp16.
 * A node whose inputs are all constant (weights) is folded by the
 * reference evaluator before these run.
 */
#include <stdio.h>
#include <string.h>

#include "ir/opgeom.h"
#include "ops/registry.h"
#include "prepare_rw.h"

#define R IR_MAX_RANK

static int in_k(const struct ir_node *n, int k)
{
	return k < n->nin ? n->in[k] : -1;
}

/* Parameter p (a scalar, or a vector along axis a of a rank-`rank`
 * tensor) shaped to broadcast against that tensor, as dtype dt. */
static int along(struct lp_rw *r, int p, int a, int rank, int dt)
{
	const struct ir_value *v = &r->g->vals[p];
	int64_t d[R];
	int c, vdt = v->dtype;

	if (ir_value_numel(v) > 1 && a >= 0 && a < rank) {
		for (int i = 0; i < rank; i++)
			d[i] = 1;
		d[a] = ir_value_numel(v);
		if ((c = lp_rw_shape(r, d, rank)) < 0 || (p = lp_rw_add(r, "Reshape", p, c)) < 0)
			return -1;
	}
	if (vdt == dt)
		return p;
	if ((p = lp_rw_add(r, "Cast", p, -1)) < 0 || lp_rw_int(r, "to", dt))
		return -1;
	return p;
}

static int cast(struct lp_rw *r, int v, int dt)
{
	if (r->g->vals[v].dtype == dt)
		return v;
	if ((v = lp_rw_add(r, "Cast", v, -1)) < 0 || lp_rw_int(r, "to", dt))
		return -1;
	return v;
}

/* Round(y) [+ zp], to qdt's range, into `out` as qdt (out < 0: the
 * rewritten node's own output). */
static int quantize(struct lp_rw *r, int y, int zp, int qdt, int fdt, int out)
{
	double lo = qdt == IR_I8 ? -128 : 0, hi = qdt == IR_I8 ? 127 : 255;
	int clo = lp_rw_scalar(r, fdt, lo), chi = lp_rw_scalar(r, fdt, hi);

	if (clo < 0 || chi < 0 || (y = lp_rw_add(r, "Round", y, -1)) < 0 ||
	    (zp >= 0 && (y = lp_rw_add(r, "Add", y, zp)) < 0) ||
	    (y = lp_rw_add(r, "Max", y, clo)) < 0 || (y = lp_rw_add(r, "Min", y, chi)) < 0)
		return -1;
	if (out >= 0)
		return lp_rw_add_to(r, "Cast", &y, 1, out) < 0 || lp_rw_int(r, "to", qdt) ? -1 : 0;
	if (lp_rw_become(r, "Cast", &y, 1))
		return -1;
	return ir_attr_set_int(&r->g->nodes[r->pos], "to", qdt, r->e);
}

static void rw_init(struct lp_rw *r, struct ir_graph *g, int pi, struct ir_error *e)
{
	r->g = g;
	r->pos = pi;
	r->e = e;
	snprintf(r->name, sizeof(r->name), "%s", g->nodes[pi].name);
}

int lp_prep_quantize(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	struct lp_rw r;
	int x = n->in[0], s = n->in[1], zp = in_k(n, 2), rank = g->vals[x].rank;
	int a = rank ? ir_axis(ir_attr_int(n, "axis", 1), rank) : 0;
	int q = n->opid == IR_OP_QuantizeLinear, odt = g->vals[n->out[0]].dtype;
	/* quantising rounds x / s: in float32 whatever the precision, as ONNX
	 * does, so that a float16 quotient does not move a value by one step */
	int fdt = q ? IR_F32 : odt;
	int y;

	rw_init(&r, g, *pi, e);
	if ((x = cast(&r, x, fdt)) < 0 || (s = along(&r, s, a, rank, fdt)) < 0 ||
	    (zp >= 0 && (zp = along(&r, zp, a, rank, fdt)) < 0))
		return -1;
	*pi = r.pos;
	if (q) {
		if ((y = lp_rw_add(&r, "Div", x, s)) < 0)
			return -1;
		*pi = r.pos;
		return quantize(&r, y, zp, odt, fdt, -1);
	}
	if (zp >= 0 && (x = lp_rw_add(&r, "Sub", x, zp)) < 0)
		return -1;
	int in[2] = { x, s };

	*pi = r.pos;
	return lp_rw_become(&r, "Mul", in, 2);
}

int lp_prep_dyn_quantize(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	struct lp_rw r;
	int x = n->in[0], fdt = IR_F32;
	int out1 = n->nout > 1 ? n->out[1] : -1, out2 = n->nout > 2 ? n->out[2] : -1;
	int zero, c255, mn, mx, s, z, y, in[2];

	rw_init(&r, g, *pi, e);
	/* in float32 under --precision fp16 too (see lp_prep_quantize) */
	if ((x = cast(&r, x, fdt)) < 0 || (zero = lp_rw_scalar(&r, fdt, 0)) < 0 || (c255 = lp_rw_scalar(&r, fdt, 255)) < 0 ||
	    (mn = lp_rw_add(&r, "ReduceMin", x, -1)) < 0 || lp_rw_int(&r, "keepdims", 0) ||
	    (mn = lp_rw_add(&r, "Min", mn, zero)) < 0 ||
	    (mx = lp_rw_add(&r, "ReduceMax", x, -1)) < 0 || lp_rw_int(&r, "keepdims", 0) ||
	    (mx = lp_rw_add(&r, "Max", mx, zero)) < 0 || (s = lp_rw_add(&r, "Sub", mx, mn)) < 0)
		return -1;
	in[0] = s;
	in[1] = c255;
	if ((s = lp_rw_add(&r, "Div", in[0], in[1])) < 0 ||
	    (out1 >= 0 && (lp_rw_add_to(&r, "Cast", &s, 1, out1) < 0 ||
			   lp_rw_int(&r, "to", g->vals[out1].dtype))) ||
	    (z = lp_rw_add(&r, "Neg", mn, -1)) < 0 ||
	    (z = lp_rw_add(&r, "Div", z, s)) < 0 || (z = lp_rw_add(&r, "Round", z, -1)) < 0 ||
	    (z = lp_rw_add(&r, "Max", z, zero)) < 0 || (z = lp_rw_add(&r, "Min", z, c255)) < 0 ||
	    (out2 >= 0 && (lp_rw_add_to(&r, "Cast", &z, 1, out2) < 0 || lp_rw_int(&r, "to", IR_U8))) ||
	    (y = lp_rw_add(&r, "Div", x, s)) < 0)
		return -1;
	*pi = r.pos;
	return quantize(&r, y, z, IR_U8, fdt, -1);
}

/* a - zp (zp along axis a, or scalar) in float32. */
static int shifted(struct lp_rw *r, int v, int zp, int a)
{
	int rank = r->g->vals[v].rank;

	if ((v = cast(r, v, IR_F32)) < 0)
		return -1;
	if (zp < 0)
		return v;
	if ((zp = along(r, zp, a, rank, IR_F32)) < 0)
		return -1;
	return lp_rw_add(r, "Sub", v, zp);
}

static int copy_conv_attrs(struct lp_rw *r)
{
	static const char *const ints[] = { "strides", "pads", "dilations", "kernel_shape" };
	struct ir_node *d = &r->g->nodes[r->pos - 1];
	const struct ir_node *s = &r->g->nodes[r->pos];

	for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
		size_t cnt;
		const int64_t *v = ir_attr_ints(s, ints[k], &cnt);

		if (v && ir_attr_set_ints(d, ints[k], v, cnt, r->e))
			return -1;
	}
	if (ir_attr_set_int(d, "group", ir_attr_int(s, "group", 1), r->e))
		return -1;
	return ir_attr_set_str(d, "auto_pad", ir_attr_str(s, "auto_pad", "NOTSET"), r->e);
}

/* The integer product of (a, zpa) and (b, zpb) in float32: MatMul with
 * zero points per row of A and per column of B, or Conv with a scalar
 * zero point of X and one per output channel of W. */
static int product(struct lp_rw *r, int conv, int a, int za, int b, int zb, int bias)
{
	int ra = r->g->vals[a].rank, rb = r->g->vals[b].rank, in[3];

	if ((a = shifted(r, a, za, conv ? -1 : ra - 2)) < 0 ||
	    (b = shifted(r, b, zb, conv ? 0 : rb - 1)) < 0)
		return -1;
	in[0] = a;
	in[1] = b;
	if (bias >= 0 && (in[2] = cast(r, bias, IR_F32)) < 0)
		return -1;
	if ((a = lp_rw_add_to(r, conv ? "Conv" : "MatMul", in, bias >= 0 ? 3 : 2, -1)) < 0 ||
	    (conv && copy_conv_attrs(r)))
		return -1;
	return a;
}

int lp_prep_integer(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	struct lp_rw r;
	int conv = n->opid == IR_OP_ConvInteger, p;

	rw_init(&r, g, *pi, e);
	if ((p = product(&r, conv, n->in[0], in_k(n, 2), n->in[1], in_k(n, 3), -1)) < 0)
		return -1;
	*pi = r.pos;
	if (lp_rw_become(&r, "Cast", &p, 1))
		return -1;
	return ir_attr_set_int(&g->nodes[r.pos], "to", IR_I32, e);
}

int lp_prep_qlinear(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *ov = &g->vals[n->out[0]];
	int conv = n->opid == IR_OP_QLinearConv, in[9], rank = ov->rank, odt = ov->dtype;
	int ra = g->vals[n->in[0]].rank, rb = g->vals[n->in[3]].rank;
	struct lp_rw r;
	int p, sa, sb, m;

	memcpy(in, n->in, sizeof(int) * (size_t)n->nin);
	rw_init(&r, g, *pi, e);
	if ((p = product(&r, conv, in[0], in[2], in[3], in[5], conv && n->nin > 8 ? in[8] : -1)) < 0)
		return -1;
	/* the scales along the product's rows (A) and columns or channels (B) */
	if ((sa = along(&r, in[1], conv || ra < 2 ? -1 : rank - (rb > 1 ? 2 : 1), rank, IR_F32)) < 0 ||
	    (sb = along(&r, in[4], conv ? 1 : rb > 1 ? rank - 1 : -1, rank, IR_F32)) < 0 ||
	    (m = lp_rw_add(&r, "Mul", sa, sb)) < 0 ||
	    (sa = along(&r, in[6], -1, rank, IR_F32)) < 0 || (m = lp_rw_add(&r, "Div", m, sa)) < 0 ||
	    (p = lp_rw_add(&r, "Mul", p, m)) < 0 || (sb = along(&r, in[7], -1, rank, IR_F32)) < 0)
		return -1;
	*pi = r.pos;
	return quantize(&r, p, sb, odt, IR_F32, -1);
}
