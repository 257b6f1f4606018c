/* SPDX-License-Identifier: MIT */
/* infer_elementwise.c - shapes of unary, binary, variadic and logic ops. */
#include <string.h>

#include "infer_internal.h"

static int numeric(struct ir_graph *g, struct ir_node *n, int k,
		   struct ir_error *e)
{
	struct ir_value *v = ir_in(g, n, k);

	if (v->dtype == IR_BOOL || v->dtype == IR_C64 || v->dtype == IR_C128)
		return ir_node_err(e, g, n, "input %d ('%s') has type %s; a numeric type is required",
				   k, v->name, ir_dtype_name(v->dtype));
	return 0;
}

int ir_infer_unary_any(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	(void)e;
	ir_same_as(g, n, 0, 0);
	if (n->nout > 1) { /* Dropout mask */
		struct ir_value *v = ir_in(g, n, 0);

		ir_set_out(g, n, 1, IR_BOOL, v->rank, v->dims);
	}
	return 0;
}

int ir_infer_unary_num(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	if (numeric(g, n, 0, e))
		return -1;
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_unary_float(struct ir_graph *g, struct ir_node *n,
			 struct ir_error *e)
{
	if (ir_need_float(g, n, 0, e))
		return -1;
	return ir_same_as(g, n, 0, 0);
}

int ir_infer_unary_bool_out(struct ir_graph *g, struct ir_node *n,
			    struct ir_error *e)
{
	struct ir_value *v = ir_in(g, n, 0);

	if (n->opid == IR_OP_Not && v->dtype != IR_BOOL)
		return ir_node_err(e, g, n, "input must be bool, not %s", ir_dtype_name(v->dtype));
	return ir_set_out(g, n, 0, IR_BOOL, v->rank, v->dims);
}

int ir_infer_dropout(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *t = ir_in(g, n, 2);

	struct ir_value *r = ir_in(g, n, 1);

	/* training mode with ratio 0 is still the identity */
	if (t && (!t->data || ir_get_i(t->data, t->dtype, 0)) &&
	    !(r && r->data && ir_get_f(r->data, r->dtype, 0) == 0))
		return ir_node_err(e, g, n, "training_mode must be a constant false for inference (or ratio 0)");
	return ir_infer_unary_any(g, n, e);
}

/* Broadcasts every present input; out_dtype 0 = first input's dtype. */
static int bcast(struct ir_graph *g, struct ir_node *n, int first, int count,
		 int out_dtype, int same_types, struct ir_error *e)
{
	int rank = 0;
	int64_t dims[IR_MAX_RANK];
	int dt = IR_UNDEFINED;

	for (int k = first; k < first + count; k++) {
		struct ir_value *v = ir_in(g, n, k);
		int r2;
		int64_t d2[IR_MAX_RANK];

		if (!v)
			continue;
		if (v->rank > IR_MAX_RANK)
			return -1;
		if (dt == IR_UNDEFINED) {
			dt = v->dtype;
			rank = v->rank;
			memcpy(dims, v->dims, sizeof(dims));
			continue;
		}
		if (same_types && v->dtype != dt)
			return ir_node_err(e, g, n, "input %d ('%s') is %s but input %d is %s; ONNX requires equal types",
					   k, v->name, ir_dtype_name(v->dtype), first, ir_dtype_name(dt));
		if (ir_broadcast(rank, dims, v->rank, v->dims, &r2, d2))
			return ir_node_err(e, g, n, "input %d ('%s') cannot be broadcast with the other inputs", k, v->name);
		rank = r2;
		memcpy(dims, d2, sizeof(dims));
	}
	if (dt == IR_UNDEFINED)
		return ir_node_err(e, g, n, "needs at least one input");
	return ir_set_out(g, n, 0, out_dtype ? out_dtype : dt, rank, dims);
}

int ir_infer_binary_arith(struct ir_graph *g, struct ir_node *n,
			  struct ir_error *e)
{
	int same = n->opid != IR_OP_Pow;

	/* none of these inputs is optional: an empty name is a broken model */
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] < 0)
			return ir_node_err(e, g, n, "input %d is omitted (empty name), but %s needs every input",
					   k, n->op);
	for (int k = 0; k < n->nin; k++)
		if (numeric(g, n, k, e))
			return -1;
	return bcast(g, n, 0, n->nin, 0, same, e);
}

int ir_infer_compare(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	return bcast(g, n, 0, 2, IR_BOOL, 1, e);
}

int ir_infer_logic(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	for (int k = 0; k < 2; k++)
		if (ir_in(g, n, k)->dtype != IR_BOOL)
			return ir_node_err(e, g, n, "input %d must be bool", k);
	return bcast(g, n, 0, 2, IR_BOOL, 1, e);
}

int ir_infer_where(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *c = ir_in(g, n, 0);
	int r;

	if (c->dtype != IR_BOOL)
		return ir_node_err(e, g, n, "condition must be bool, not %s", ir_dtype_name(c->dtype));
	if (ir_in(g, n, 1)->dtype != ir_in(g, n, 2)->dtype)
		return ir_node_err(e, g, n, "X and Y must have the same type");
	r = bcast(g, n, 0, 3, ir_in(g, n, 1)->dtype, 0, e);
	return r;
}

int ir_infer_cast(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *v = ir_in(g, n, 0);
	int to;

	if (n->opid == IR_OP_CastLike)
		to = ir_in(g, n, 1)->dtype;
	else
		to = (int)ir_attr_int(n, "to", 0);
	if (to <= 0 || to >= IR_DTYPE_COUNT || !ir_dtype_size(to) ||
	    to == IR_C64 || to == IR_C128)
		return ir_node_err(e, g, n, "cast to type %d (%s) is not supported", to, ir_dtype_name(to));
	return ir_set_out(g, n, 0, to, v->rank, v->dims);
}

int ir_infer_clip(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	for (int k = 1; k < 3; k++) {
		struct ir_value *v = ir_in(g, n, k);

		if (v && ir_value_numel(v) != 1)
			return ir_node_err(e, g, n, "min/max must be scalars");
	}
	return ir_infer_unary_num(g, n, e);
}

int ir_infer_prelu(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *s = ir_in(g, n, 1);
	int r;
	int64_t d[IR_MAX_RANK];

	if (ir_broadcast(x->rank, x->dims, s->rank, s->dims, &r, d) ||
	    r != x->rank || memcmp(d, x->dims, (size_t)r * sizeof(d[0])))
		return ir_node_err(e, g, n, "slope must broadcast to X's shape");
	return ir_same_as(g, n, 0, 0);
}
