/* SPDX-License-Identifier: MIT */
/* custom.c - custom operators' attributes, shape inference and reference. */
#include <stdlib.h>
#include <string.h>

#include "custom.h"
#include "ipu/ipux.h"

int ir_custom_is(const char *op)
{
	return op && strstr(op, "::") != NULL;
}

uint32_t ir_custom_ipux_dtype(int dt)
{
	switch (dt) {
	case IR_F32: return IPUX_DT_F32;
	case IR_F16: return IPUX_DT_F16;
	case IR_I32: return IPUX_DT_I32;
	case IR_U8: case IR_BOOL: return IPUX_DT_U8;
	case IR_I8: return IPUX_DT_I8;
	case IR_I64: return IPUX_DT_I64;
	default: return 0;
	}
}

int ir_custom_ir_dtype(uint32_t dt)
{
	switch (dt) {
	case IPUX_DT_F32: return IR_F32;
	case IPUX_DT_F16: return IR_F16;
	case IPUX_DT_I32: return IR_I32;
	case IPUX_DT_U8: return IR_U8;
	case IPUX_DT_I8: return IR_I8;
	case IPUX_DT_I64: return IR_I64;
	default: return IR_UNDEFINED;
	}
}

const struct ipu_custom_op *ir_custom_op(const struct ir_graph *g, const struct ir_node *n,
					 const uint8_t **hash, struct ir_error *e)
{
	const char *sep = strstr(n->op, "::");
	char domain[64];
	const struct ipu_custom_op *op;
	int opset = -1;
	uint32_t idx;

	if (!sep || (size_t)(sep - n->op) >= sizeof(domain)) {
		ir_node_err(e, g, n, "'%s' is not a custom operator (domain::op_type)", n->op);
		return NULL;
	}
	memcpy(domain, n->op, (size_t)(sep - n->op));
	domain[sep - n->op] = 0;
	for (int i = 0; i < g->ndomains; i++)
		if (!strcmp(g->domains[i].name, domain))
			opset = g->domains[i].version;
	op = ipu_custom_table_find(g->custom, domain, sep + 2, opset, &idx);
	if (!op) {
		if (ipu_custom_table_find(g->custom, domain, sep + 2, -1, NULL))
			ir_node_err(e, g, n, "the loaded plugin of %s does not serve opset %d of domain '%s'",
				    n->op, opset, domain);
		else
			ir_node_err(e, g, n, "operator %s of domain '%s' is not loaded: give the plugin library that defines it with --custom_library_so_paths",
				    sep + 2, domain);
		return NULL;
	}
	if (hash)
		ipu_custom_table_op(g->custom, idx, hash);
	return op;
}

int ir_custom_attrs(const struct ir_graph *g, const struct ir_node *n,
		    const struct ipu_custom_op *op, double *attrs, struct ir_error *e)
{
	for (int k = 0; k < n->nattrs; k++) {
		uint32_t a;

		for (a = 0; a < op->num_attrs; a++)
			if (!strcmp(op->attrs[a].name, n->attrs[k].name))
				break;
		if (a == op->num_attrs)
			return ir_node_err(e, g, n, "attribute '%s' is not one of %s's", n->attrs[k].name, n->op);
	}
	for (uint32_t a = 0; a < op->num_attrs; a++) {
		const struct ipu_custom_attr *sa = &op->attrs[a];
		const struct ir_attr *at = ir_attr_find(n, sa->name);

		if (!at) {
			if (sa->required)
				return ir_node_err(e, g, n, "attribute '%s' is required", sa->name);
			attrs[a] = sa->default_value;
		} else if (sa->type == IPU_CUSTOM_ATTR_FLOAT && at->type == IR_ATTR_FLOAT) {
			attrs[a] = at->f;
		} else if (sa->type == IPU_CUSTOM_ATTR_INT && at->type == IR_ATTR_INT) {
			attrs[a] = (double)at->i;
		} else {
			return ir_node_err(e, g, n, "attribute '%s' must be a single %s", sa->name,
					   sa->type == IPU_CUSTOM_ATTR_FLOAT ? "float" : "int");
		}
	}
	return 0;
}

/* The shapes of n's inputs and outputs as the plugin sees them. */
static int shapes_of(const struct ir_graph *g, const struct ir_node *n, int outputs,
		     struct ipu_custom_shape *s, struct ir_error *e)
{
	int cnt = outputs ? n->nout : n->nin;

	for (int k = 0; k < cnt; k++) {
		int v = outputs ? n->out[k] : n->in[k];
		const struct ir_value *iv;

		memset(&s[k], 0, sizeof(s[k]));
		if (v < 0)
			continue;
		iv = &g->vals[v];
		if (iv->rank < 0 || iv->rank > (int)IPU_CUSTOM_MAX_RANK)
			return ir_node_err(e, g, n, "%s %d ('%s') has rank %d; custom operators take 0 to %u",
					   outputs ? "output" : "input", k, iv->name, iv->rank,
					   IPU_CUSTOM_MAX_RANK);
		s[k].dtype = ir_custom_ipux_dtype(iv->dtype);
		if (!s[k].dtype && !outputs)
			return ir_node_err(e, g, n, "input %d ('%s') has type %s, which custom operators do not take",
					   k, iv->name, ir_dtype_name(iv->dtype));
		s[k].rank = (uint32_t)iv->rank;
		memcpy(s[k].dims, iv->dims, (size_t)iv->rank * sizeof(int64_t));
	}
	return 0;
}

int ir_custom_infer(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ipu_custom_shape in[IPU_CUSTOM_MAX_INPUTS], out[1];
	double attrs[IPU_CUSTOM_MAX_ATTRS];
	const struct ipu_custom_op *op = ir_custom_op(g, n, NULL, e);
	char why[256] = "";

	if (!op)
		return -1;
	if (n->nin < (int)op->min_inputs || n->nin > (int)op->max_inputs)
		return ir_node_err(e, g, n, "has %d inputs; %s takes %u to %u", n->nin, n->op,
				   op->min_inputs, op->max_inputs);
	if (n->nout != (int)op->num_outputs)
		return ir_node_err(e, g, n, "has %d outputs; %s has %u", n->nout, n->op, op->num_outputs);
	if (ir_custom_attrs(g, n, op, attrs, e) || shapes_of(g, n, 0, in, e))
		return -1;
	memset(out, 0, sizeof(out));
	if (op->infer(in, (uint32_t)n->nin, attrs, out, 1, why, sizeof(why)))
		return ir_node_err(e, g, n, "%s's shape inference (plugin): %s", n->op,
				   why[0] ? why : "refused without a reason");
	if (out[0].rank > IPU_CUSTOM_MAX_RANK || !ir_custom_ir_dtype(out[0].dtype))
		return ir_node_err(e, g, n, "%s's shape inference (plugin) gave rank %u, dtype %u",
				   n->op, out[0].rank, out[0].dtype);
	for (uint32_t i = 0; i < out[0].rank; i++)
		if (out[0].dims[i] < 1)
			return ir_node_err(e, g, n, "%s's shape inference (plugin) gave dimension %u = %lld",
					   n->op, i, (long long)out[0].dims[i]);
	ir_value_set_shape(&g->vals[n->out[0]], ir_custom_ir_dtype(out[0].dtype), (int)out[0].rank,
			   out[0].dims);
	return 0;
}

int ir_custom_eval(const struct ir_graph *g, const struct ir_node *n,
		   const struct ir_tensor *const *in, int nin, struct ir_tensor *out, int nout,
		   struct ir_error *e)
{
	struct ipu_custom_shape ish[IPU_CUSTOM_MAX_INPUTS], osh[1];
	double attrs[IPU_CUSTOM_MAX_ATTRS];
	float *fin[IPU_CUSTOM_MAX_INPUTS] = { 0 }, *fout = NULL;
	const struct ipu_custom_op *op = ir_custom_op(g, n, NULL, e);
	char why[256] = "";
	int rc = -1;

	if (!op)
		return -1;
	if (nout != 1 || nin > (int)IPU_CUSTOM_MAX_INPUTS)
		return ir_node_err(e, g, n, "%d inputs / %d outputs for a custom operator", nin, nout);
	if (ir_custom_attrs(g, n, op, attrs, e))
		return -1;
	for (int k = 0; k < nin; k++) {
		int64_t cnt;

		memset(&ish[k], 0, sizeof(ish[k]));
		if (!in[k])
			continue;
		cnt = ir_numel(in[k]->rank, in[k]->dims);
		ish[k].dtype = ir_custom_ipux_dtype(in[k]->dtype);
		ish[k].rank = (uint32_t)in[k]->rank;
		memcpy(ish[k].dims, in[k]->dims, (size_t)in[k]->rank * sizeof(int64_t));
		fin[k] = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof(float));
		if (!fin[k]) {
			ir_err(e, "out of memory");
			goto out;
		}
		for (int64_t i = 0; i < cnt; i++)
			fin[k][i] = (float)ir_get_f(in[k]->data, in[k]->dtype, (size_t)i);
	}
	memset(osh, 0, sizeof(osh));
	osh[0].dtype = ir_custom_ipux_dtype(out[0].dtype);
	osh[0].rank = (uint32_t)out[0].rank;
	memcpy(osh[0].dims, out[0].dims, (size_t)out[0].rank * sizeof(int64_t));
	{
		int64_t cnt = ir_numel(out[0].rank, out[0].dims);

		fout = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof(float));
		if (!fout) {
			ir_err(e, "out of memory");
			goto out;
		}
		if (op->reference(ish, (const float *const *)fin, (uint32_t)nin, attrs, osh, &fout, 1,
				  why, sizeof(why))) {
			ir_node_err(e, g, n, "%s's reference (plugin): %s", n->op,
				    why[0] ? why : "refused without a reason");
			goto out;
		}
		for (int64_t i = 0; i < cnt; i++)
			ir_set_f(out[0].data, out[0].dtype, (size_t)i, fout[i]);
	}
	rc = 0;
out:
	for (int k = 0; k < nin; k++)
		free(fin[k]);
	free(fout);
	return rc;
}
