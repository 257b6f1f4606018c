/* SPDX-License-Identifier: MIT */
/* eval_einsum.c - Einsum: every combination of the labels, the product of
 * the inputs' elements summed in double (int64 for integers). */
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "ir/einsum.h"

int ir_ev_einsum(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	int rank[EINSUM_MAX_IN], sum[EINSUM_MAX_LABELS], nsum = 0, isint = ir_dtype_is_int(out->dtype);
	int64_t dims[EINSUM_MAX_IN][IR_MAX_RANK], st[EINSUM_MAX_IN][EINSUM_MAX_LABELS];
	int64_t val[EINSUM_MAX_LABELS] = { 0 }, cnt = ev_numel(out), inner = 1;
	struct einsum es;
	char msg[200];
	int in_out[EINSUM_MAX_LABELS] = { 0 };

	(void)nout;
	for (int k = 0; k < nin; k++) {
		rank[k] = in[k]->rank;
		memcpy(dims[k], in[k]->dims, sizeof(dims[k]));
	}
	if (einsum_parse(ir_attr_str(n, "equation", ""), nin, rank,
			 (const int64_t (*)[IR_MAX_RANK])dims, &es, msg, sizeof(msg)))
		return ir_node_err(e, g, n, "equation: %s", msg);
	/* each input's stride per label (0 for a broadcast axis of 1, and
	 * summed for a repeated label: a diagonal) */
	memset(st, 0, sizeof(st));
	for (int k = 0; k < nin; k++) {
		int64_t s = 1;

		for (int i = rank[k] - 1; i >= 0; i--) {
			if (dims[k][i] != 1 || es.size[es.lab[k][i]] == 1)
				st[k][es.lab[k][i]] += s;
			s *= dims[k][i];
		}
	}
	for (int i = 0; i < es.out_rank; i++)
		in_out[es.out_lab[i]] = 1;
	for (int l = 0; l < es.nlabels; l++)
		if (es.size[l] > 0 && !in_out[l]) {
			sum[nsum++] = l;
			inner *= es.size[l];
		} else if (es.size[l] == 0 && !in_out[l]) {
			inner = 0;
		}
	for (int64_t o = 0; o < cnt; o++) {
		double acc = 0;
		int64_t iacc = 0, r = o;

		for (int i = es.out_rank - 1; i >= 0; i--) {
			val[es.out_lab[i]] = r % out->dims[i];
			r /= out->dims[i];
		}
		for (int64_t j = 0; j < inner; j++) {
			double p = 1;
			int64_t ip = 1, q = j;

			for (int s = nsum - 1; s >= 0; s--) {
				val[sum[s]] = q % es.size[sum[s]];
				q /= es.size[sum[s]];
			}
			for (int k = 0; k < nin; k++) {
				int64_t off = 0;

				for (int l = 0; l < es.nlabels; l++)
					off += st[k][l] * val[l];
				if (isint)
					ip *= ir_get_i(in[k]->data, in[k]->dtype, (size_t)off);
				else
					p *= ir_get_f(in[k]->data, in[k]->dtype, (size_t)off);
			}
			acc += p;
			iacc += ip;
		}
		if (isint)
			ir_set_i(out->data, out->dtype, (size_t)o, iacc);
		else
			ir_set_f(out->data, out->dtype, (size_t)o, acc);
	}
	return 0;
}
