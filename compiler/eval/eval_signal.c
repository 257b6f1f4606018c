/* SPDX-License-Identifier: MIT */
/* eval_signal.c - the window functions: a0 - a1 cos(2 pi n / N) + a2 cos(4
 * pi n / N), N the size (periodic) or size - 1 (symmetric). */
#include <math.h>
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
