/* SPDX-License-Identifier: MIT */
/* infer_loss.c - shape inference of NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss: scores (N, C, d1..dk), targets (N, d1..dk). */
#include <string.h>

#include "infer_internal.h"

int ir_infer_loss(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *t = ir_in(g, n, 1), *w = ir_in(g, n, 2);
	const char *red = ir_attr_str(n, "reduction", "mean");
	int64_t d[IR_MAX_RANK];

	if (ir_need_float(g, n, 0, e))
		return -1;
	if (!ir_dtype_is_int(t->dtype))
		return ir_node_err(e, g, n, "input 1 (the targets) must be int32 or int64");
	if (x->rank < 2)
		return ir_node_err(e, g, n, "input 0 must be (N, C, d1, ..., dk), of rank 2 or more");
	if (t->rank != x->rank - 1 || t->dims[0] != x->dims[0])
		return ir_node_err(e, g, n, "input 1 (the targets) must be (N, d1, ..., dk) for scores (N, C, d1, ..., dk)");
	for (int i = 1; i < t->rank; i++)
		if (t->dims[i] != x->dims[i + 1])
			return ir_node_err(e, g, n, "targets' dimension %d is %lld, the scores' %d is %lld",
					   i, (long long)t->dims[i], i + 1, (long long)x->dims[i + 1]);
	if (w && (w->rank != 1 || w->dims[0] != x->dims[1] || w->dtype != x->dtype))
		return ir_node_err(e, g, n, "input 2 (the class weights) must be a vector of C = %lld of the scores' type",
				   (long long)x->dims[1]);
	if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
		return ir_node_err(e, g, n, "reduction '%s' is not none, sum or mean", red);
	memcpy(d, t->dims, sizeof(int64_t) * (size_t)t->rank);
	if (ir_set_out(g, n, 0, x->dtype, strcmp(red, "none") ? 0 : t->rank, d))
		return -1;
	/* SoftmaxCrossEntropyLoss's optional log_prob has the scores' shape */
	return n->nout > 1 ? ir_same_as(g, n, 1, 0) : 0;
}
