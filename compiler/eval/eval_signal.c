/* SPDX-License-Identifier: MIT */
/* eval_signal.c - the window functions (a0 - a1 cos(2 pi n / N) + a2
 * cos(4 pi n / N), N the size (periodic) or size - 1 (symmetric)), DFT and
 * the mel filter bank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

int ir_ev_window(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	int64_t size = out->dims[0];
	double a0 = 0.5, a1 = 0.5, a2 = 0, N;

	(void)g; (void)in; (void)nin; (void)nout; (void)e;
	if (n->opid == IR_OP_HammingWindow) {
		a0 = 25.0 / 46.0;
		a1 = 21.0 / 46.0;
	} else if (n->opid == IR_OP_BlackmanWindow) {
		a0 = 0.42;
		a1 = 0.5;
		a2 = 0.08;
	}
	N = ir_attr_int(n, "periodic", 1) ? (double)size : (double)(size - 1);
	for (int64_t i = 0; i < size; i++) {
		double v = N > 0 ? a0 - a1 * cos(2 * M_PI * (double)i / N) + a2 * cos(4 * M_PI * (double)i / N) : 1;

		ir_set_f(out->data, out->dtype, (size_t)i, v);
	}
	return 0;
}

int ir_ev_dft(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int r = x->rank, a = (int)ir_attr_int(n, "axis", 1), inv = (int)ir_attr_int(n, "inverse", 0);
	int64_t N, K, L, outer = 1, inner = 1, xc = x->dims[r - 1];

	(void)g; (void)nout; (void)e;
	if (a < 0)
		a += r;
	N = x->dims[a];
	K = out->dims[a];
	L = N;
	if (nin > 1 && in[1])
		L = ir_get_i(in[1]->data, in[1]->dtype, 0);
	for (int i = 0; i < a; i++)
		outer *= x->dims[i];
	for (int i = a + 1; i < r - 1; i++)
		inner *= x->dims[i];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++)
			for (int64_t k = 0; k < K; k++) {
				double re = 0, im = 0;

				for (int64_t t = 0; t < N && t < L; t++) {
					size_t xi = (size_t)(((o * N + t) * inner + i) * xc);
					double xr = ir_get_f(x->data, x->dtype, xi);
					double xim = xc == 2 ? ir_get_f(x->data, x->dtype, xi + 1) : 0;
					double ang = (inv ? 2 : -2) * M_PI * (double)(k * t % L) / (double)L;

					re += xr * cos(ang) - xim * sin(ang);
					im += xr * sin(ang) + xim * cos(ang);
				}
				if (inv) {
					re /= (double)L;
					im /= (double)L;
				}
				ir_set_f(out->data, out->dtype, (size_t)(((o * K + k) * inner + i) * 2), re);
				ir_set_f(out->data, out->dtype, (size_t)(((o * K + k) * inner + i) * 2 + 1), im);
			}
	return 0;
}

/*
 * MelWeightMatrix (opset 17), as ONNX's reference computes it: num_mel_bins
 * + 2 points evenly spaced on the mel scale (2595 log10(1 + hz / 700))
 * between the edges, the step dividing by num_mel_bins + 2 as there; each
 * point's DFT bin floor((dft_length + 1) hz / sample_rate); filter i rises
 * from point i to point i + 1 and falls to point i + 2.
 */
int ir_ev_mel(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	int64_t nspec = out->dims[0], bins = out->dims[1], *pt;
	int64_t dft = ir_get_i(in[1]->data, in[1]->dtype, 0), rate = ir_get_i(in[2]->data, in[2]->dtype, 0);
	double lo = ir_get_f(in[3]->data, in[3]->dtype, 0), hi = ir_get_f(in[4]->data, in[4]->dtype, 0);
	double mlo, step;

	(void)nin;
	(void)nout;
	if (rate < 1 || !(lo >= 0) || !(hi >= lo) || !isfinite(hi))
		return ir_node_err(e, g, n, "needs sample_rate >= 1 and 0 <= lower_edge_hertz <= upper_edge_hertz (finite); got %lld, %g, %g",
				   (long long)rate, lo, hi);
	pt = malloc((size_t)(bins + 2) * sizeof(*pt));
	if (!pt)
		return ir_err(e, "out of memory");
	mlo = 2595 * log10(1 + lo / 700);
	step = (2595 * log10(1 + hi / 700) - mlo) / (double)(bins + 2);
	for (int64_t i = 0; i < bins + 2; i++) {
		double hz = 700 * (pow(10, ((double)i * step + mlo) / 2595) - 1);
		double b = floor((double)(dft + 1) * hz / (double)rate);

		if (!(b >= 0 && b < (double)nspec)) {
			free(pt);
			return ir_node_err(e, g, n, "upper_edge_hertz %g lies past the last of the %lld DFT bins of dft_length %lld at sample_rate %lld (at most sample_rate / 2)",
					   hi, (long long)nspec, (long long)dft, (long long)rate);
		}
		pt[i] = (int64_t)b;
	}
	for (int64_t i = 0; i < bins; i++) {
		int64_t l = pt[i], c = pt[i + 1], h = pt[i + 2];

		if (c == l)
			ir_set_f(out->data, out->dtype, (size_t)(c * bins + i), 1);
		for (int64_t j = l; c > l && j <= c; j++)
			ir_set_f(out->data, out->dtype, (size_t)(j * bins + i), (double)(j - l) / (double)(c - l));
		for (int64_t j = c; j < h; j++)
			ir_set_f(out->data, out->dtype, (size_t)(j * bins + i), (double)(h - j) / (double)(h - c));
	}
	free(pt);
	return 0;
}
