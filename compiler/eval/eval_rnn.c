/* SPDX-License-Identifier: MIT */
/* eval_rnn.c - LSTM, GRU and RNN in float64, step by step as the ONNX
 * specification writes them (sequence lengths, clip and input_forget
 * included). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

static double act(const char *f, double x)
{
	if (!strcmp(f, "Sigmoid"))
		return 1 / (1 + exp(-x));
	if (!strcmp(f, "Tanh"))
		return tanh(x);
	if (!strcmp(f, "Relu"))
		return x > 0 ? x : 0;
	if (!strcmp(f, "Softsign"))
		return x / (1 + fabs(x));
	return log1p(exp(x));	/* Softplus */
}

static int act_names(const struct ir_graph *g, const struct ir_node *n, int D, int per,
		     const char **f, struct ir_error *e)
{
	const struct ir_attr *a = ir_attr_find(n, "activations");
	static const char *const dflt_lstm[] = { "Sigmoid", "Tanh", "Tanh" };
	static const char *const ok[] = { "Sigmoid", "Tanh", "Relu", "Softsign", "Softplus", NULL };

	for (int k = 0; k < D * per; k++) {
		const char *s = per == 1 ? "Tanh" : dflt_lstm[k % per];
		int good = 0;

		if (a && a->type == IR_ATTR_STRINGS && k < (int)a->n)
			s = a->strings[k];
		for (int i = 0; ok[i]; i++)
			if (!strcmp(ok[i], s)) {
				f[k] = ok[i];
				good = 1;
			}
		if (!good)
			return ir_node_err(e, g, n, "activation '%s' is not evaluated", s);
	}
	return 0;
}

static double *f64(const struct ir_tensor *t, struct ir_error *e)
{
	int64_t n = t ? ev_numel(t) : 0;
	double *d = malloc((size_t)(n ? n : 1) * sizeof(double));

	if (!d) {
		ir_err(e, "out of memory");
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		d[i] = ir_get_f(t->data, t->dtype, (size_t)i);
	return d;
}

int ir_ev_rnn(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	int gates = n->opid == IR_OP_LSTM ? 4 : n->opid == IR_OP_GRU ? 3 : 1;
	int per = gates == 4 ? 3 : gates == 3 ? 2 : 1;
	const char *dir = ir_attr_str(n, "direction", "forward"), *f[6];
	int layout = (int)ir_attr_int(n, "layout", 0), lbr = (int)ir_attr_int(n, "linear_before_reset", 0);
	int forget = (int)ir_attr_int(n, "input_forget", 0);
	const struct ir_attr *ca = ir_attr_find(n, "clip");
	double clip = ca ? ir_attr_float(n, "clip", 0) : 0;
	const struct ir_tensor *X = in[0], *Wt = in[1], *Rt = in[2];
	const struct ir_tensor *Bt = nin > 3 ? in[3] : NULL, *SL = nin > 4 ? in[4] : NULL;
	const struct ir_tensor *H0 = nin > 5 ? in[5] : NULL, *C0 = nin > 6 ? in[6] : NULL;
	const struct ir_tensor *Pt = nin > 7 ? in[7] : NULL;
	int D = strcmp(dir, "bidirectional") ? 1 : 2;
	int64_t T = layout ? X->dims[1] : X->dims[0], Bn = layout ? X->dims[0] : X->dims[1];
	int64_t I = X->dims[2], H = Rt->dims[2], G = gates * H;
	double *x = f64(X, e), *w = x ? f64(Wt, e) : NULL, *r = w ? f64(Rt, e) : NULL;
	double *h = NULL, *c = NULL, *gt = NULL, *y = NULL, *hn = NULL;
	int res = -1;

	if (!r || act_names(g, n, D, per, f, e))
		goto out;
	h = calloc((size_t)(Bn * H), sizeof(double));
	c = calloc((size_t)(Bn * H), sizeof(double));
	hn = calloc((size_t)(Bn * H), sizeof(double));
	gt = calloc((size_t)G, sizeof(double));
	y = calloc((size_t)(T * D * Bn * H), sizeof(double));
	if (!h || !c || !hn || !gt || !y) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int d = 0; d < D; d++) {
		int rev = !strcmp(dir, "reverse") || d == 1;
		const double *wd = w + (int64_t)d * G * I, *rd = r + (int64_t)d * G * H;
		const char *fa = f[d * per], *ga = f[d * per + (per > 1)], *ha = f[d * per + (per > 2 ? 2 : 0)];

		for (int64_t b = 0; b < Bn; b++) {
			int64_t len = SL ? ir_get_i(SL->data, SL->dtype, (size_t)b) : T;

			for (int64_t k = 0; k < H; k++) {
				/* initial states: [D, B, H], layout 1: [B, D, H] */
				int64_t at = layout ? (b * D + d) * H + k : ((int64_t)d * Bn + b) * H + k;

				h[b * H + k] = H0 ? ir_get_f(H0->data, H0->dtype, (size_t)at) : 0;
				c[b * H + k] = C0 ? ir_get_f(C0->data, C0->dtype, (size_t)at) : 0;
			}
			for (int64_t s = 0; s < len; s++) {
				int64_t t = rev ? len - 1 - s : s;
				const double *xt = x + (layout ? b * T + t : t * Bn + b) * I;
				double *hb = h + b * H, *cb = c + b * H;

				for (int64_t j = 0; j < G; j++) {
					double a = 0, rr = 0;

					for (int64_t i = 0; i < I; i++)
						a += xt[i] * wd[j * I + i];
					for (int64_t i = 0; i < H; i++)
						rr += hb[i] * rd[j * H + i];
					if (Bt) {
						a += ir_get_f(Bt->data, Bt->dtype, (size_t)((int64_t)d * 2 * G + j));
						rr += ir_get_f(Bt->data, Bt->dtype, (size_t)((int64_t)d * 2 * G + G + j));
					}
					/* GRU's h gate: X part and R part kept apart */
					gt[j] = gates == 3 && j >= 2 * H ? a : a + rr;
					if (gates == 3 && j >= 2 * H)
						hn[j - 2 * H] = rr;
				}
				for (int64_t k = 0; k < H; k++) {
					if (gates == 4) {
						double P_i = Pt ? ir_get_f(Pt->data, Pt->dtype, (size_t)(d * 3 * H + k)) : 0;
						double P_o = Pt ? ir_get_f(Pt->data, Pt->dtype, (size_t)(d * 3 * H + H + k)) : 0;
						double P_f = Pt ? ir_get_f(Pt->data, Pt->dtype, (size_t)(d * 3 * H + 2 * H + k)) : 0;
						double gi = gt[k] + P_i * cb[k], gf = gt[2 * H + k] + P_f * cb[k];
						double gc = gt[3 * H + k], ii, ff, cc, oo, go;

						if (ca) {
							gi = fmin(fmax(gi, -clip), clip);
							gf = fmin(fmax(gf, -clip), clip);
							gc = fmin(fmax(gc, -clip), clip);
						}
						ii = act(fa, gi);
						ff = forget ? 1 - ii : act(fa, gf);
						cc = act(ga, gc);
						cb[k] = ff * cb[k] + ii * cc;
						go = gt[H + k] + P_o * cb[k];
						if (ca)
							go = fmin(fmax(go, -clip), clip);
						oo = act(fa, go);
						hn[k] = oo * act(ha, cb[k]);
					} else if (gates == 3) {
						double gz = gt[k], gr = gt[H + k];

						if (ca) {
							gz = fmin(fmax(gz, -clip), clip);
							gr = fmin(fmax(gr, -clip), clip);
						}
						gt[k] = act(fa, gz);
						gt[H + k] = act(fa, gr);
					} else {
						double gg = gt[k];

						if (ca)
							gg = fmin(fmax(gg, -clip), clip);
						hn[k] = act(fa, gg);
					}
				}
				if (gates == 3) {
					/* the h gate needs every r first (r * h, without
					 * linear_before_reset) */
					for (int64_t k = 0; k < H; k++) {
						double a = gt[2 * H + k], z = gt[k];

						if (lbr) {
							a += gt[H + k] * hn[k];
						} else {
							double rr = Bt ? ir_get_f(Bt->data, Bt->dtype, (size_t)((int64_t)d * 2 * G + G + 2 * H + k)) : 0;

							for (int64_t i = 0; i < H; i++)
								rr += gt[H + i] * hb[i] * rd[(2 * H + k) * H + i];
							a += rr;
						}
						if (ca)
							a = fmin(fmax(a, -clip), clip);
						a = act(ga, a);
						hn[k] = (1 - z) * a + z * hb[k];
					}
				}
				memcpy(hb, hn, (size_t)H * sizeof(double));
				for (int64_t k = 0; k < H; k++)
					y[layout ? ((b * T + t) * D + d) * H + k : ((t * D + d) * Bn + b) * H + k] = hb[k];
			}
			for (int64_t k = 0; k < H; k++) {
				int64_t at = layout ? (b * D + d) * H + k : ((int64_t)d * Bn + b) * H + k;

				if (nout > 1 && out[1].data)
					ir_set_f(out[1].data, out[1].dtype, (size_t)at, h[b * H + k]);
				if (nout > 2 && out[2].data && gates == 4)
					ir_set_f(out[2].data, out[2].dtype, (size_t)at, c[b * H + k]);
			}
		}
	}
	if (nout > 0 && out[0].data)
		for (int64_t i = 0; i < T * D * Bn * H; i++)
			ir_set_f(out[0].data, out[0].dtype, (size_t)i, y[i]);
	res = 0;
out:
	free(x);
	free(w);
	free(r);
	free(h);
	free(c);
	free(hn);
	free(gt);
	free(y);
	return res;
}
