/* SPDX-License-Identifier: MIT */
/* eval_loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the
 * latter: LogSoftmax over axis 1, then the former), in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

/* loss over log-probabilities lp (N, C, D flattened), targets t (N, D);
 * written to out (N, D) or reduced to a scalar. */
static int nll(const struct ir_graph *g, const struct ir_node *n, const double *lp,
	       const struct ir_tensor *t, const struct ir_tensor *w, int64_t N, int64_t C,
	       int64_t D, struct ir_tensor *out, struct ir_error *e)
{
	const char *red = ir_attr_str(n, "reduction", "mean");
	int has_ii = ir_attr_find(n, "ignore_index") != NULL;
	int64_t ii = ir_attr_int(n, "ignore_index", 0);
	double sum = 0, wsum = 0;
	int none = !strcmp(red, "none");

	for (int64_t i = 0; i < N; i++)
		for (int64_t d = 0; d < D; d++) {
			int64_t k = ir_get_i(t->data, t->dtype, (size_t)(i * D + d));
			double wt = 0, l = 0;

			if (!has_ii || k != ii) {
				if (k < 0 || k >= C)
					return ir_node_err(e, g, n, "target %lld is outside the %lld classes",
							   (long long)k, (long long)C);
				wt = w ? ir_get_f(w->data, w->dtype, (size_t)k) : 1.0;
				l = -lp[(i * C + k) * D + d] * wt;
			}
			if (none)
				ir_set_f(out->data, out->dtype, (size_t)(i * D + d), l);
			sum += l;
			wsum += wt;
		}
	if (!none)
		ir_set_f(out->data, out->dtype, 0, !strcmp(red, "sum") ? sum : sum / wsum);
	return 0;
}

int ir_ev_loss(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t N = x->dims[0], C = x->dims[1], D = N > 0 && C > 0 ? ev_numel(x) / (N * C) : 0;
	int64_t cnt = ev_numel(x);
	int sce = n->opid == IR_OP_SoftmaxCrossEntropyLoss;
	double *lp = malloc((size_t)(cnt ? cnt : 1) * sizeof(double));
	int r;

	if (!lp)
		return ir_err(e, "out of memory");
	for (int64_t i = 0; i < cnt; i++)
		lp[i] = ir_get_f(x->data, x->dtype, (size_t)i);
	for (int64_t i = 0; sce && i < N; i++)
		for (int64_t d = 0; d < D; d++) {
			double mx = -INFINITY, s = 0;

			for (int64_t c = 0; c < C; c++)
				mx = fmax(mx, lp[(i * C + c) * D + d]);
			for (int64_t c = 0; c < C; c++)
				s += exp(lp[(i * C + c) * D + d] - mx);
			for (int64_t c = 0; c < C; c++)
				lp[(i * C + c) * D + d] -= mx + log(s);
		}
	if (sce && nout > 1)
		for (int64_t i = 0; i < cnt; i++)
			ir_set_f(out[1].data, out[1].dtype, (size_t)i, lp[i]);
	r = nll(g, n, lp, in[1], nin > 2 ? in[2] : NULL, N, C, D, &out[0], e);
	free(lp);
	return r;
}
