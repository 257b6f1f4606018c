/* SPDX-License-Identifier: MIT */
/* eval_quant.c - the quantisation operators, as ONNX defines them: round
 * half to even, saturate to the output type; the integer products go
 * through the MatMul and Conv evaluators on the zero-point-shifted values
 * (exact in double). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

/* Index of element i along axis a of t. */
static int64_t chan(const struct ir_tensor *t, int a, int64_t i)
{
	int64_t stride = 1;

	if (a < 0 || a >= t->rank)
		return 0;
	for (int d = a + 1; d < t->rank; d++)
		stride *= t->dims[d];
	return (i / stride) % t->dims[a];
}

/* A scale or zero point (scalar or per channel c); 0 when omitted. */
static double param(const struct ir_tensor *p, int64_t c)
{
	if (!p)
		return 0;
	return ir_get_f(p->data, p->dtype, ev_numel(p) == 1 ? 0 : (size_t)c);
}

static double saturate(int dt, double v)
{
	double lo = dt == IR_I8 ? -128 : dt == IR_U8 ? 0 : dt == IR_I16 ? -32768 : 0;
	double hi = dt == IR_I8 ? 127 : dt == IR_U8 ? 255 : dt == IR_I16 ? 32767 : 65535;

	if (dt == IR_I32) {
		lo = -2147483648.0;
		hi = 2147483647.0;
	}
	return v < lo ? lo : v > hi ? hi : v;
}

/* x / s rounded half to even, in float32 when both are (as ONNX's
 * reference computes it). */
static double qdiv(double x, double s, int xdt)
{
	if (xdt == IR_F32)
		return nearbyint((double)((float)x / (float)s));
	return nearbyint(x / s);
}

int ir_ev_quantize(const struct ir_graph *g, const struct ir_node *n,
		   const struct ir_tensor *const *in, int nin,
		   struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *s = in[1], *zp = nin > 2 ? in[2] : NULL;
	int a = x->rank ? ir_axis(ir_attr_int(n, "axis", 1), x->rank) : 0;
	int q = n->opid == IR_OP_QuantizeLinear;
	int64_t cnt = ev_numel(x);

	(void)nout;
	for (int64_t i = 0; i < cnt; i++) {
		int64_t c = chan(x, a, i);
		double v = ir_get_f(x->data, x->dtype, (size_t)i), sc = param(s, c), z = param(zp, c);

		if (q && sc == 0)
			return ir_node_err(e, g, n, "scale 0 at index %lld", (long long)c);
		v = q ? saturate(out->dtype, qdiv(v, sc, x->dtype) + z) : (v - z) * sc;
		ir_set_f(out->data, out->dtype, (size_t)i, v);
	}
	return 0;
}

int ir_ev_dyn_quantize(const struct ir_graph *g, const struct ir_node *n,
		       const struct ir_tensor *const *in, int nin,
		       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t cnt = ev_numel(x);
	float lo = 0, hi = 0, s, z;

	(void)g; (void)n; (void)nin; (void)e;
	for (int64_t i = 0; i < cnt; i++) {
		float v = (float)ir_get_f(x->data, x->dtype, (size_t)i);

		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	s = (hi - lo) / 255.0f;
	/* an all-zero input: every value is the zero point 0 */
	z = s > 0 ? (float)saturate(IR_U8, nearbyint((double)(0.0f - lo / s))) : 0;
	for (int64_t i = 0; i < cnt; i++) {
		double v = s > 0 ? qdiv(ir_get_f(x->data, x->dtype, (size_t)i), s, IR_F32) : 0;

		ir_set_f(out[0].data, IR_U8, (size_t)i, saturate(IR_U8, v + z));
	}
	if (nout > 1)
		ir_set_f(out[1].data, out[1].dtype, 0, s);
	if (nout > 2)
		ir_set_f(out[2].data, out[2].dtype, 0, z);
	return 0;
}

/* t - zp (zp per index along axis a, or scalar) as a new float64 tensor. */
static int shifted(const struct ir_tensor *t, const struct ir_tensor *zp, int a,
		   struct ir_tensor *o, struct ir_error *e)
{
	int64_t cnt = ev_numel(t);

	if (ir_tensor_alloc(o, IR_F64, t->rank, t->dims, e))
		return -1;
	for (int64_t i = 0; i < cnt; i++)
		((double *)o->data)[i] = ir_get_f(t->data, t->dtype, (size_t)i) - param(zp, chan(t, a, i));
	return 0;
}

/* y = saturate(round(acc * sa[row] * sb[col] / sy) + zy). */
static void requantize(const struct ir_tensor *acc, struct ir_tensor *out, const struct ir_tensor *sa,
		       int arow, const struct ir_tensor *sb, int bcol, double sy, double zy)
{
	int64_t cnt = ev_numel(acc);

	for (int64_t i = 0; i < cnt; i++) {
		double m = param(sa, chan(acc, arow, i)) * param(sb, chan(acc, bcol, i)) / sy;
		double v = nearbyint(((double *)acc->data)[i] * m);

		ir_set_f(out->data, out->dtype, (size_t)i, saturate(out->dtype, v + zy));
	}
}

static int product(const struct ir_graph *g, const struct ir_node *n, int conv,
		   const struct ir_tensor *a, const struct ir_tensor *azp, int aax,
		   const struct ir_tensor *b, const struct ir_tensor *bzp, int bax,
		   const struct ir_tensor *bias, struct ir_tensor *acc, struct ir_error *e)
{
	struct ir_tensor t[3] = { { 0 } };
	const struct ir_tensor *pin[3] = { &t[0], &t[1], &t[2] };
	int r = -1;

	if (shifted(a, azp, aax, &t[0], e) || shifted(b, bzp, bax, &t[1], e) ||
	    (bias && shifted(bias, NULL, 0, &t[2], e)))
		goto out;
	r = conv ? ir_ev_conv(g, n, pin, bias ? 3 : 2, acc, 1, e) :
		   ir_ev_matmul(g, n, pin, 2, acc, 1, e);
out:
	for (int k = 0; k < 3; k++)
		ir_tensor_free(&t[k]);
	return r;
}

/* MatMul's per-row axis of A and per-column axis of B. */
static void mm_axes(const struct ir_tensor *a, const struct ir_tensor *b, int *aax, int *bax)
{
	*aax = a->rank > 1 ? a->rank - 2 : -1;
	*bax = b->rank > 1 ? b->rank - 1 : -1;
}

int ir_ev_matmul_integer(const struct ir_graph *g, const struct ir_node *n,
			 const struct ir_tensor *const *in, int nin,
			 struct ir_tensor *out, int nout, struct ir_error *e)
{
	int aax, bax;

	(void)nout;
	mm_axes(in[0], in[1], &aax, &bax);
	return product(g, n, 0, in[0], nin > 2 ? in[2] : NULL, aax, in[1], nin > 3 ? in[3] : NULL,
		       bax, NULL, out, e);
}

int ir_ev_conv_integer(const struct ir_graph *g, const struct ir_node *n,
		       const struct ir_tensor *const *in, int nin,
		       struct ir_tensor *out, int nout, struct ir_error *e)
{
	(void)nout;
	return product(g, n, 1, in[0], nin > 2 ? in[2] : NULL, 0, in[1], nin > 3 ? in[3] : NULL, 0,
		       NULL, out, e);
}

/* QLinearMatMul (a, sa, za, b, sb, zb, sy, zy) and QLinearConv (x, sx, zx,
 * w, sw, zw, sy, zy[, bias]). */
int ir_ev_qlinear(const struct ir_graph *g, const struct ir_node *n,
		  const struct ir_tensor *const *in, int nin,
		  struct ir_tensor *out, int nout, struct ir_error *e)
{
	int conv = n->opid == IR_OP_QLinearConv, aax = -1, bax = 0, arow = -1, bcol = 1;
	struct ir_tensor acc = { 0 };
	int r;

	(void)nout;
	if (!conv) {
		mm_axes(in[0], in[3], &aax, &bax);
		/* A's rows and B's columns in the product */
		bcol = in[3]->rank > 1 ? out->rank - 1 : -1;
		arow = in[0]->rank > 1 ? out->rank - (in[3]->rank > 1 ? 2 : 1) : -1;
	}
	if (param(in[6], 0) == 0)
		return ir_node_err(e, g, n, "Y's scale is 0");
	if (ir_tensor_alloc(&acc, IR_F64, out->rank, out->dims, e))
		return -1;
	r = product(g, n, conv, in[0], in[2], conv ? -1 : aax, in[3], in[5], bax,
		    conv && nin > 8 ? in[8] : NULL, &acc, e);
	if (!r)
		requantize(&acc, out, in[1], arow, in[4], bcol, param(in[6], 0), param(in[7], 0));
	ir_tensor_free(&acc);
	return r;
}
