/* SPDX-License-Identifier: MIT */
/* eval_elementwise.c - unary, binary, variadic, logic, cast, clip, where. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

int64_t *ev_bcast(const struct ir_tensor *out, const struct ir_tensor *in,
		  struct ir_error *e)
{
	int64_t n = ev_numel(out);
	int64_t *o = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));

	if (!o) {
		ir_err(e, "out of memory");
		return NULL;
	}
	ir_broadcast_offsets(out->rank, out->dims, in->rank, in->dims, o);
	return o;
}

static double gelu(double x, int tanh_approx)
{
	if (tanh_approx)
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

int ir_ev_unary(const struct ir_graph *g, const struct ir_node *n,
		const struct ir_tensor *const *in, int nin,
		struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t cnt = ev_numel(x);
	double alpha = ir_attr_float(n, "alpha", NAN);
	double beta = ir_attr_float(n, "beta", NAN);
	int isint = ir_dtype_is_int(x->dtype);
	int gelu_tanh = !strcmp(ir_attr_str(n, "approximate", "none"), "tanh");

	(void)nin;
	(void)nout;
	if (n->opid == IR_OP_Identity || n->opid == IR_OP_Dropout) {
		memcpy(out[0].data, x->data, ir_tensor_bytes(x));
		if (nout > 1)
			memset(out[1].data, 1, ir_tensor_bytes(&out[1]));
		return 0;
	}
	if (isint && (n->opid == IR_OP_Abs || n->opid == IR_OP_Neg ||
		      n->opid == IR_OP_Sign || n->opid == IR_OP_Relu)) {
		for (int64_t i = 0; i < cnt; i++) {
			int64_t v = ir_get_i(x->data, x->dtype, (size_t)i), r;

			if (n->opid == IR_OP_Abs)
				r = v < 0 ? -v : v;
			else if (n->opid == IR_OP_Neg)
				r = -v;
			else if (n->opid == IR_OP_Sign)
				r = (v > 0) - (v < 0);
			else
				r = v < 0 ? 0 : v;
			ir_set_i(out->data, out->dtype, (size_t)i, r);
		}
		return 0;
	}
	for (int64_t i = 0; i < cnt; i++) {
		double v = ir_get_f(x->data, x->dtype, (size_t)i), r;

		switch (n->opid) {
		case IR_OP_Abs: r = fabs(v); break;
		case IR_OP_Neg: r = -v; break;
		case IR_OP_Sign: r = v > 0 ? 1 : v < 0 ? -1 : v; break;
		case IR_OP_Relu: r = v < 0 ? 0 : v; break;
		case IR_OP_Sqrt: r = sqrt(v); break;
		case IR_OP_Exp: r = exp(v); break;
		case IR_OP_Log: r = log(v); break;
		case IR_OP_Reciprocal: r = 1 / v; break;
		case IR_OP_LeakyRelu: r = v < 0 ? v * (isnan(alpha) ? 0.01 : alpha) : v; break;
		case IR_OP_Sigmoid: r = 1 / (1 + exp(-v)); break;
		case IR_OP_Tanh: r = tanh(v); break;
		case IR_OP_Erf: r = erf(v); break;
		case IR_OP_Gelu: r = gelu(v, gelu_tanh); break;
		case IR_OP_HardSigmoid: {
			r = (isnan(alpha) ? 0.2 : alpha) * v + (isnan(beta) ? 0.5 : beta);
			r = r < 0 ? 0 : r > 1 ? 1 : r;
			break;
		}
		case IR_OP_HardSwish: {
			r = v / 6 + 0.5;
			r = v * (r < 0 ? 0 : r > 1 ? 1 : r);
			break;
		}
		case IR_OP_Floor: r = floor(v); break;
		case IR_OP_Ceil: r = ceil(v); break;
		case IR_OP_Round: r = nearbyint(v); break;
		case IR_OP_Sin: r = sin(v); break;
		case IR_OP_Cos: r = cos(v); break;
		case IR_OP_Tan: r = tan(v); break;
		case IR_OP_Asin: r = asin(v); break;
		case IR_OP_Acos: r = acos(v); break;
		case IR_OP_Atan: r = atan(v); break;
		case IR_OP_Sinh: r = sinh(v); break;
		case IR_OP_Cosh: r = cosh(v); break;
		case IR_OP_Asinh: r = asinh(v); break;
		case IR_OP_Acosh: r = acosh(v); break;
		case IR_OP_Atanh: r = atanh(v); break;
		case IR_OP_Elu: {
			double a = isnan(alpha) ? 1.0 : alpha;

			r = v < 0 ? a * (exp(v) - 1) : v;
			break;
		}
		case IR_OP_Selu: {
			double a = isnan(alpha) ? 1.67326319217681884765625 : alpha;
			double gm = ir_attr_float(n, "gamma", 1.05070102214813232421875);

			r = v > 0 ? gm * v : gm * (a * exp(v) - a);
			break;
		}
		case IR_OP_Celu: {
			double a = isnan(alpha) ? 1.0 : alpha;

			r = (v > 0 ? v : 0) + fmin(0, a * (exp(v / a) - 1));
			break;
		}
		case IR_OP_Softplus: r = log(exp(v) + 1); break;
		case IR_OP_Softsign: r = v / (1 + fabs(v)); break;
		case IR_OP_ThresholdedRelu: r = v > (isnan(alpha) ? 1.0 : alpha) ? v : 0; break;
		case IR_OP_Shrink: {
			double l = ir_attr_float(n, "lambd", 0.5), b = ir_attr_float(n, "bias", 0);

			r = v < -l ? v + b : v > l ? v - b : 0;
			break;
		}
		case IR_OP_IsNaN: r = isnan(v); break;
		case IR_OP_IsInf: {
			r = isinf(v) && ((v > 0 && ir_attr_int(n, "detect_positive", 1)) ||
					 (v < 0 && ir_attr_int(n, "detect_negative", 1)));
			break;
		}
		case IR_OP_Not: r = v == 0; break;
		default:
			return ir_node_err(e, g, n, "no evaluator for %s", n->op);
		}
		ir_set_f(out->data, out->dtype, (size_t)i, r);
	}
	return 0;
}

enum bop { B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MOD, B_MAX, B_MIN, B_SUM,
	   B_MEAN, B_SHL, B_SHR, B_PRELU, B_EQ, B_LT, B_GT, B_LE, B_GE, B_AND,
	   B_OR, B_XOR, B_NONE };

static enum bop bop_of(const struct ir_node *n)
{
	switch (n->opid) {
	case IR_OP_Add: return B_ADD;
	case IR_OP_Sub: return B_SUB;
	case IR_OP_Mul: return B_MUL;
	case IR_OP_Div: return B_DIV;
	case IR_OP_Pow: return B_POW;
	case IR_OP_Mod: return B_MOD;
	case IR_OP_Max: return B_MAX;
	case IR_OP_Min: return B_MIN;
	case IR_OP_Sum: return B_SUM;
	case IR_OP_Mean: return B_MEAN;
	case IR_OP_BitShift:
		return strcmp(ir_attr_str(n, "direction", ""), "LEFT") ? B_SHR : B_SHL;
	case IR_OP_PRelu: return B_PRELU;
	case IR_OP_Equal: return B_EQ;
	case IR_OP_Less: return B_LT;
	case IR_OP_Greater: return B_GT;
	case IR_OP_LessOrEqual: return B_LE;
	case IR_OP_GreaterOrEqual: return B_GE;
	case IR_OP_And: return B_AND;
	case IR_OP_Or: return B_OR;
	case IR_OP_Xor: return B_XOR;
	default: return B_NONE;
	}
}

static double fop(enum bop op, double a, double b, int fmod_attr)
{
	switch (op) {
	case B_ADD: case B_SUM: case B_MEAN: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	case B_DIV: return a / b;
	case B_POW: return pow(a, b);
	case B_MOD:
		if (fmod_attr)
			return fmod(a, b);
		{
			double r = fmod(a, b);

			if (r != 0 && ((r < 0) != (b < 0)))
				r += b;
			return r;
		}
	case B_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
	case B_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
	case B_PRELU: return a < 0 ? a * b : a;
	case B_EQ: return a == b;
	case B_LT: return a < b;
	case B_GT: return a > b;
	case B_LE: return a <= b;
	case B_GE: return a >= b;
	case B_AND: return a != 0 && b != 0;
	case B_OR: return a != 0 || b != 0;
	case B_XOR: return (a != 0) != (b != 0);
	default: return 0;
	}
}

static int64_t iop(enum bop op, int64_t a, int64_t b, int fmod_attr)
{
	switch (op) {
	case B_ADD: case B_SUM: case B_MEAN: return (int64_t)((uint64_t)a + (uint64_t)b);
	case B_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
	case B_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
	case B_DIV: return b == 0 || (a == INT64_MIN && b == -1) ? 0 : a / b;
	case B_MOD: {
		int64_t r;

		if (b == 0 || (a == INT64_MIN && b == -1))
			return 0;
		r = a % b;
		if (!fmod_attr && r != 0 && ((r < 0) != (b < 0)))
			r += b;
		return r;
	}
	case B_MAX: return a > b ? a : b;
	case B_MIN: return a < b ? a : b;
	case B_SHL: return b >= 64 || b < 0 ? 0 : (int64_t)((uint64_t)a << b);
	case B_SHR: return b >= 64 || b < 0 ? 0 : (int64_t)((uint64_t)a >> b);
	case B_PRELU: return a < 0 ? a * b : a;
	case B_EQ: return a == b;
	case B_LT: return a < b;
	case B_GT: return a > b;
	case B_LE: return a <= b;
	case B_GE: return a >= b;
	default: return (int64_t)fop(op, (double)a, (double)b, fmod_attr);
	}
}

int ir_ev_binary(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	enum bop op = bop_of(n);
	int64_t cnt = ev_numel(out);
	int fm = (int)ir_attr_int(n, "fmod", 0);
	int idt = in[0]->dtype;
	int intpath = ir_dtype_is_int(idt) && op != B_POW &&
		      (nin < 2 || ir_dtype_is_int(in[1]->dtype));
	int64_t *offs[64] = { 0 };
	int r = -1;
	double *facc = NULL;
	int64_t *iacc = NULL;

	(void)nout;
	if (op == B_NONE)
		return ir_node_err(e, g, n, "no evaluator for %s", n->op);
	if (nin > 64)
		return ir_node_err(e, g, n, "too many inputs");
	for (int k = 0; k < nin; k++)
		if (!(offs[k] = ev_bcast(out, in[k], e)))
			goto out;
	facc = malloc((size_t)(cnt ? cnt : 1) * sizeof(double));
	iacc = malloc((size_t)(cnt ? cnt : 1) * sizeof(int64_t));
	if (!facc || !iacc) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int64_t i = 0; i < cnt; i++) {
		if (intpath)
			iacc[i] = ir_get_i(in[0]->data, idt, (size_t)offs[0][i]);
		else
			facc[i] = ir_get_f(in[0]->data, idt, (size_t)offs[0][i]);
	}
	for (int k = 1; k < nin; k++) {
		const struct ir_tensor *b = in[k];

		for (int64_t i = 0; i < cnt; i++) {
			if (intpath)
				iacc[i] = iop(op, iacc[i], ir_get_i(b->data, b->dtype, (size_t)offs[k][i]), fm);
			else
				facc[i] = fop(op, facc[i], ir_get_f(b->data, b->dtype, (size_t)offs[k][i]), fm);
		}
	}
	for (int64_t i = 0; i < cnt; i++) {
		if (op == B_MEAN) {
			if (intpath)
				iacc[i] /= nin;
			else
				facc[i] /= nin;
		}
		if (intpath)
			ir_set_i(out->data, out->dtype, (size_t)i, iacc[i]);
		else
			ir_set_f(out->data, out->dtype, (size_t)i, facc[i]);
	}
	r = 0;
out:
	for (int k = 0; k < nin; k++)
		free(offs[k]);
	free(facc);
	free(iacc);
	return r;
}

int ir_ev_where(const struct ir_graph *g, const struct ir_node *n,
		const struct ir_tensor *const *in, int nin,
		struct ir_tensor *out, int nout, struct ir_error *e)
{
	int64_t *o[3] = { 0 };
	int64_t cnt = ev_numel(out);
	size_t es = ir_dtype_size(out->dtype);
	int r = -1;

	(void)g; (void)n; (void)nin; (void)nout;
	for (int k = 0; k < 3; k++)
		if (!(o[k] = ev_bcast(out, in[k], e)))
			goto out;
	for (int64_t i = 0; i < cnt; i++) {
		const struct ir_tensor *src = ((uint8_t *)in[0]->data)[o[0][i]] ? in[1] : in[2];
		int64_t off = src == in[1] ? o[1][i] : o[2][i];

		memcpy((char *)out->data + (size_t)i * es, (char *)src->data + (size_t)off * es, es);
	}
	r = 0;
out:
	for (int k = 0; k < 3; k++)
		free(o[k]);
	return r;
}

int ir_ev_cast(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t cnt = ev_numel(x);

	(void)g; (void)n; (void)nin; (void)nout; (void)e;
	for (int64_t i = 0; i < cnt; i++) {
		if (ir_dtype_is_float(x->dtype) || ir_dtype_is_float(out->dtype))
			ir_set_f(out->data, out->dtype, (size_t)i, ir_get_f(x->data, x->dtype, (size_t)i));
		else
			ir_set_i(out->data, out->dtype, (size_t)i, ir_get_i(x->data, x->dtype, (size_t)i));
	}
	return 0;
}

int ir_ev_clip(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	const struct ir_tensor *lo = nin > 1 ? in[1] : NULL, *hi = nin > 2 ? in[2] : NULL;
	int64_t cnt = ev_numel(x);

	(void)g; (void)n; (void)nout; (void)e;
	if (ir_dtype_is_int(x->dtype)) {
		int64_t l = lo ? ir_get_i(lo->data, lo->dtype, 0) : INT64_MIN;
		int64_t h = hi ? ir_get_i(hi->data, hi->dtype, 0) : INT64_MAX;

		for (int64_t i = 0; i < cnt; i++) {
			int64_t v = ir_get_i(x->data, x->dtype, (size_t)i);

			v = v < l ? l : v;
			v = v > h ? h : v;
			ir_set_i(out->data, out->dtype, (size_t)i, v);
		}
		return 0;
	}
	for (int64_t i = 0; i < cnt; i++) {
		double v = ir_get_f(x->data, x->dtype, (size_t)i);

		if (lo && v < ir_get_f(lo->data, lo->dtype, 0))
			v = ir_get_f(lo->data, lo->dtype, 0);
		if (hi && v > ir_get_f(hi->data, hi->dtype, 0))
			v = ir_get_f(hi->data, hi->dtype, 0);
		ir_set_f(out->data, out->dtype, (size_t)i, v);
	}
	return 0;
}
