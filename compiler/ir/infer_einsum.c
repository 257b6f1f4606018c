/* SPDX-License-Identifier: MIT */
/* infer_einsum.c - shape inference of Einsum (einsum.h parses the
 * equation). */
#include "einsum.h"
#include "infer_internal.h"

int ir_infer_einsum(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	int rank[EINSUM_MAX_IN], dt = ir_in(g, n, 0)->dtype;
	int64_t dims[EINSUM_MAX_IN][IR_MAX_RANK], d[IR_MAX_RANK];
	struct einsum es;
	char msg[200];

	if (n->nin > EINSUM_MAX_IN)
		return ir_node_err(e, g, n, "%d inputs; at most %d are supported", n->nin, EINSUM_MAX_IN);
	for (int k = 0; k < n->nin; k++) {
		struct ir_value *v = ir_in(g, n, k);

		if (!v)
			return ir_node_err(e, g, n, "input %d is missing", k);
		if (v->dtype != dt)
			return ir_node_err(e, g, n, "inputs 0 and %d differ in type", k);
		rank[k] = v->rank;
		for (int i = 0; i < v->rank && i < IR_MAX_RANK; i++)
			dims[k][i] = v->dims[i];
	}
	if (einsum_parse(ir_attr_str(n, "equation", ""), n->nin, rank,
			 (const int64_t (*)[IR_MAX_RANK])dims, &es, msg, sizeof(msg)))
		return ir_node_err(e, g, n, "equation '%s': %s", ir_attr_str(n, "equation", ""), msg);
	for (int i = 0; i < es.out_rank; i++)
		d[i] = es.size[es.out_lab[i]];
	return ir_set_out(g, n, 0, dt, es.out_rank, d);
}
