/* SPDX-License-Identifier: MIT */
/* eval_seq.c - ReverseSequence (element moves) and Det (LU with partial
 * pivoting, in double). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "seq.h"

int ir_reverse_sequence_src(const struct ir_node *n, int rank, const int64_t *dims, const void *lens,
			    int ldt, int64_t *src)
{
	int b = ir_axis(ir_attr_int(n, "batch_axis", 1), rank), t = ir_axis(ir_attr_int(n, "time_axis", 0), rank);
	int64_t inner = 1, cnt = ir_numel(rank, dims);

	for (int i = 2; i < rank; i++)
		inner *= dims[i];
	for (int64_t i = 0; i < cnt; i++) {
		int64_t r = i / inner, d1 = r % dims[1], d0 = r / dims[1];
		int64_t bi = b == 0 ? d0 : d1, ti = t == 0 ? d0 : d1, len = ir_get_i(lens, ldt, (size_t)bi);

		if (len < 0 || len > dims[t])
			return -1;
		if (ti < len)
			ti = len - 1 - ti;
		src[i] = ((t == 0 ? ti * dims[1] + bi : bi * dims[1] + ti) * inner) + i % inner;
	}
	return 0;
}

int ir_ev_reverse_sequence(const struct ir_graph *g, const struct ir_node *n,
			   const struct ir_tensor *const *in, int nin,
			   struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t cnt = ev_numel(x), *src = malloc((size_t)(cnt ? cnt : 1) * sizeof(int64_t));
	size_t es = ir_dtype_size(x->dtype);

	(void)nin; (void)nout;
	if (!src)
		return ir_err(e, "out of memory");
	if (ir_reverse_sequence_src(n, x->rank, x->dims, in[1]->data, in[1]->dtype, src)) {
		free(src);
		return ir_node_err(e, g, n, "a sequence length is outside [0, the time axis]");
	}
	for (int64_t i = 0; i < cnt; i++)
		memcpy((char *)out->data + (size_t)i * es, (const char *)x->data + (size_t)src[i] * es, es);
	free(src);
	return 0;
}

int ir_ev_det(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t M = x->dims[x->rank - 1], mats = ev_numel(out);
	double *a = malloc((size_t)(M > 0 ? M * M : 1) * sizeof(double));

	(void)g; (void)n; (void)nin; (void)nout;
	if (!a)
		return ir_err(e, "out of memory");
	for (int64_t m = 0; m < mats; m++) {
		double det = 1;

		for (int64_t i = 0; i < M * M; i++)
			a[i] = ir_get_f(x->data, x->dtype, (size_t)(m * M * M + i));
		for (int64_t c = 0; c < M && det != 0; c++) {
			int64_t p = c;

			for (int64_t r = c + 1; r < M; r++)
				if (fabs(a[r * M + c]) > fabs(a[p * M + c]))
					p = r;
			if (a[p * M + c] == 0) {
				det = 0;
				break;
			}
			if (p != c) {
				for (int64_t k = 0; k < M; k++) {
					double t = a[c * M + k];

					a[c * M + k] = a[p * M + k];
					a[p * M + k] = t;
				}
				det = -det;
			}
			det *= a[c * M + c];
			for (int64_t r = c + 1; r < M; r++) {
				double f = a[r * M + c] / a[c * M + c];

				for (int64_t k = c; k < M; k++)
					a[r * M + k] -= f * a[c * M + k];
			}
		}
		ir_set_f(out->data, out->dtype, (size_t)m, det);
	}
	free(a);
	return 0;
}
