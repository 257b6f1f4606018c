/* SPDX-License-Identifier: MIT */
/*
 * fp16.c - precision conversion float32 -> float16.
 *
 * Every float32 value becomes float16 (constants are rounded to nearest
 * even), graph inputs and outputs included, as PopRT's --precision fp16
 * does.  Exceptions:
 *  - shape parameters (Resize roi/scales) stay float32;
 *  - nodes whose op type is in the skip list keep computing in float32: a
 *    Cast to float32 is inserted before each of their float16 inputs and a
 *    Cast back to float16 after each output;
 *  - Softmax, LogSoftmax, the normalisations and the reductions (the ops
 *    flagged IR_OP_ACCUM_F32 in ops/ops.def) get the attribute
 *    accumulate_f32 = 1: the lowering (and the device codelets) keep their
 *    statistics and sums in float32.
 * Cast(to = float) and ConstantOfShape/EyeLike producing float32 are
 * retargeted to float16.  Shapes are re-inferred by the caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom/custom.h"
#include "ipu/passes.h"
#include "ops/registry.h"

static int skipped(const struct ir_graph *g, const struct ir_node *n,
		   const struct ir_fp16_opts *o)
{
	/* a custom operator whose codelet computes f32 only stays in f32 */
	if (ir_custom_is(n->op)) {
		struct ir_error e;
		const struct ipu_custom_op *op = ir_custom_op(g, n, NULL, &e);

		if (!op || !(op->flags & IPU_CUSTOM_F16))
			return 1;
	}
	for (int i = 0; o && i < o->nskip; i++)
		if (!strcmp(o->skip_ops[i], n->op))
			return 1;
	return 0;
}

static int param_slot(const struct ir_node *n, int k)
{
	return n->opid == IR_OP_Resize && (k == 1 || k == 2);
}

static int to_f16_value(struct ir_value *v, struct ir_error *e)
{
	if (v->data) {
		struct ir_tensor t;
		int64_t n = ir_value_numel(v);

		if (ir_tensor_alloc(&t, IR_F16, v->rank, v->dims, e))
			return -1;
		for (int64_t i = 0; i < n; i++)
			ir_set_f(t.data, IR_F16, (size_t)i, ir_get_f(v->data, IR_F32, (size_t)i));
		ir_value_set_const(v, &t);
	}
	v->dtype = IR_F16;
	return 0;
}

/* Inserts `Cast(to)` reading `src` at node position pos; returns the new
 * value's index. */
static int insert_cast(struct ir_graph *g, int pos, int src, int to,
		       const char *tag, struct ir_error *e)
{
	char name[300];
	int v, ni;

	snprintf(name, sizeof(name), "%s_%s", g->vals[src].name, tag);
	v = ir_value_add_unique(g, name, e);
	if (v < 0)
		return -1;
	ir_value_set_shape(&g->vals[v], to, g->vals[src].rank, g->vals[src].dims);
	ni = ir_node_insert(g, pos, g->vals[v].name, "Cast", &src, 1, &v, 1, e);
	if (ni < 0 || ir_attr_set_int(&g->nodes[ni], "to", to, e))
		return -1;
	return v;
}

int ir_pass_fp16(struct ir_graph *g, const struct ir_fp16_opts *o,
		 struct ir_error *e)
{
	char *keep = calloc((size_t)(g->nvals ? g->nvals : 1), 1);
	char *was = calloc((size_t)(g->nvals ? g->nvals : 1), 1);
	int nvals = g->nvals, changes = 0;

	if (!keep || !was) {
		free(keep);
		free(was);
		return ir_err(e, "out of memory");
	}
	/* values only used as shape parameters stay f32 */
	for (int v = 0; v < nvals; v++) {
		int param = 0, other = 0;

		for (int i = 0; i < g->nnodes; i++) {
			const struct ir_node *n = &g->nodes[i];

			if (n->dead)
				continue;
			for (int k = 0; k < n->nin; k++)
				if (n->in[k] == v) {
					if (param_slot(n, k))
						param = 1;
					else
						other = 1;
				}
		}
		keep[v] = param && !other;
	}
	for (int v = 0; v < nvals; v++) {
		if (g->vals[v].dtype != IR_F32 || keep[v])
			continue;
		was[v] = 1;
		if (to_f16_value(&g->vals[v], e))
			goto fail;
		changes++;
	}
	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		if (!skipped(g, n, o)) {
			if (n->opid == IR_OP_Cast && ir_attr_int(n, "to", 0) == IR_F32 &&
			    ir_attr_set_int(n, "to", IR_F16, e))
				goto fail;
			if (n->opid == IR_OP_EyeLike && ir_attr_int(n, "dtype", 0) == IR_F32 &&
			    ir_attr_set_int(n, "dtype", IR_F16, e))
				goto fail;
			if (n->opid == IR_OP_ConstantOfShape) {
				const struct ir_attr *a = ir_attr_find(n, "value");

				if (a && a->type == IR_ATTR_TENSOR && a->t->dtype == IR_F32) {
					struct ir_tensor t;
					double val = ir_get_f(a->t->data, IR_F32, 0);

					if (ir_tensor_alloc(&t, IR_F16, a->t->rank, a->t->dims, e))
						goto fail;
					ir_set_f(t.data, IR_F16, 0, val);
					ir_tensor_free(a->t);
					*a->t = t;
				} else if (!a) {
					struct ir_attr *na = realloc(n->attrs, (size_t)(n->nattrs + 1) * sizeof(*na));
					int64_t one = 1;

					if (!na)
						goto oom;
					n->attrs = na;
					memset(&na[n->nattrs], 0, sizeof(*na));
					na[n->nattrs].name = strdup("value");
					na[n->nattrs].type = IR_ATTR_TENSOR;
					na[n->nattrs].t = calloc(1, sizeof(struct ir_tensor));
					n->nattrs++;
					if (!na[n->nattrs - 1].name || !na[n->nattrs - 1].t)
						goto oom;
					if (ir_tensor_alloc(na[n->nattrs - 1].t, IR_F16, 1, &one, e))
						goto fail;
				}
			}
			if (ir_node_has(n, IR_OP_ACCUM_F32) && ir_attr_set_int(n, "accumulate_f32", 1, e))
				goto fail;
			continue;
		}
		/* A skipped op: Casts around it. */
		for (int k = 0; k < n->nin; k++) {
			int v = n->in[k], c;

			if (v < 0 || v >= nvals || !was[v])
				continue;
			c = insert_cast(g, i, v, IR_F32, "f32", e);
			if (c < 0)
				goto fail;
			i++; /* the node moved one down */
			n = &g->nodes[i];
			n->in[k] = c;
		}
		for (int k = 0; k < n->nout; k++) {
			int v = n->out[k], nv, cv;
			char name[300];

			if (v < 0 || v >= nvals || !was[v])
				continue;
			snprintf(name, sizeof(name), "%s_f32", g->vals[v].name);
			nv = ir_value_add_unique(g, name, e);
			if (nv < 0)
				goto fail;
			ir_value_set_shape(&g->vals[nv], IR_F32, g->vals[v].rank, g->vals[v].dims);
			n->out[k] = nv;
			cv = ir_node_insert(g, i + 1, g->vals[v].name, "Cast", &nv, 1, &v, 1, e);
			if (cv < 0 || ir_attr_set_int(&g->nodes[cv], "to", IR_F16, e))
				goto fail;
			n = &g->nodes[i];
		}
	}
	ir_graph_link(g);
	free(keep);
	free(was);
	return changes;
oom:
	ir_err(e, "out of memory");
fail:
	free(keep);
	free(was);
	return -1;
}
