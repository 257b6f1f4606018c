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
	if (!strcmp(n->op, "HammingWindow")) {
		a0 = 25.0 / 46.0;
		a1 = 21.0 / 46.0;
	} else if (!strcmp(n->op, "BlackmanWindow")) {
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
