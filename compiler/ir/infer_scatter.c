/* SPDX-License-Identifier: MIT */
/* infer_scatter.c - shape inference of ScatterElements (and its opset-9
 * name Scatter), ScatterND and GatherND. */
#include <string.h>

#include "infer_internal.h"

#define R IR_MAX_RANK

static int need_reduction(struct ir_graph *g, const struct ir_node *n, struct ir_error *e)
{
	const char *red = ir_attr_str(n, "reduction", "none");

	if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") &&
	    strcmp(red, "max") && strcmp(red, "min"))
		return ir_node_err(e, g, n, "reduction '%s' is not none, add, mul, max or min", red);
	return 0;
}

int ir_infer_scatter_elements(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *idx = ir_in(g, n, 1), *u = ir_in(g, n, 2);

	if (ir_axis(ir_attr_int(n, "axis", 0), x->rank) < 0)
		return ir_node_err(e, g, n, "axis %lld out of range for rank %d",
				   (long long)ir_attr_int(n, "axis", 0), x->rank);
	if (!ir_dtype_is_int(idx->dtype))
		return ir_node_err(e, g, n, "indices must be int32 or int64");
	if (idx->rank != x->rank || u->rank != x->rank ||
	    memcmp(idx->dims, u->dims, sizeof(int64_t) * (size_t)idx->rank))
		return ir_node_err(e, g, n, "indices and updates must have one shape, of the data's rank");
	for (int i = 0; i < x->rank; i++)
		if (idx->dims[i] > x->dims[i] && i != ir_axis(ir_attr_int(n, "axis", 0), x->rank))
			return ir_node_err(e, g, n, "indices' dimension %d (%lld) exceeds the data's (%lld)", i,
					   (long long)idx->dims[i], (long long)x->dims[i]);
	if (u->dtype != x->dtype)
		return ir_node_err(e, g, n, "updates must have the data's type");
	if (need_reduction(g, n, e))
		return -1;
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_scatter_nd(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *idx = ir_in(g, n, 1), *u = ir_in(g, n, 2);
	int64_t k;
	int ur;

	if (!ir_dtype_is_int(idx->dtype) || idx->rank < 1)
		return ir_node_err(e, g, n, "indices must be int32 or int64 of rank >= 1");
	k = idx->dims[idx->rank - 1];
	if (k > x->rank)
		return ir_node_err(e, g, n, "index tuples of %lld exceed the data's rank %d", (long long)k, x->rank);
	ur = idx->rank - 1 + x->rank - (int)k;
	if (u->rank != ur || memcmp(u->dims, idx->dims, sizeof(int64_t) * (size_t)(idx->rank - 1)) ||
	    memcmp(u->dims + idx->rank - 1, x->dims + k, sizeof(int64_t) * (size_t)(x->rank - k)))
		return ir_node_err(e, g, n, "updates must be indices.shape[:-1] + data.shape[%lld:]", (long long)k);
	if (u->dtype != x->dtype)
		return ir_node_err(e, g, n, "updates must have the data's type");
	if (need_reduction(g, n, e))
		return -1;
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_gather_nd(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *idx = ir_in(g, n, 1);
	int64_t b = ir_attr_int(n, "batch_dims", 0), k, d[R];
	int r = 0;

	if (!ir_dtype_is_int(idx->dtype) || idx->rank < 1)
		return ir_node_err(e, g, n, "indices must be int32 or int64 of rank >= 1");
	k = idx->dims[idx->rank - 1];
	if (b < 0 || b >= idx->rank || b >= x->rank || k < 1 || b + k > x->rank)
		return ir_node_err(e, g, n, "batch_dims %lld with index tuples of %lld do not fit data of rank %d and indices of rank %d",
				   (long long)b, (long long)k, x->rank, idx->rank);
	for (int i = 0; i < b; i++)
		if (idx->dims[i] != x->dims[i])
			return ir_node_err(e, g, n, "batch dimension %d differs: data %lld, indices %lld", i,
					   (long long)x->dims[i], (long long)idx->dims[i]);
	if (idx->rank - 1 + x->rank - k > R)
		return ir_node_err(e, g, n, "result rank too large");
	for (int i = 0; i < idx->rank - 1; i++)
		d[r++] = idx->dims[i];
	for (int64_t i = b + k; i < x->rank; i++)
		d[r++] = x->dims[i];
	return ir_set_out(g, n, 0, x->dtype, r, d);
}
