/* SPDX-License-Identifier: MIT */
/*
 * batch.c - --batch-size on a model exported at a fixed batch.
 *
 * Exporters (torch.onnx.export without dynamic_axes) write the batch they
 * traced as a static dimension, most often 1.  As PopRT's --batch_size,
 * the batch axis of every input that is symbolic or a static 1 becomes N
 * before shape inference, which then recomputes every shape from them.
 * A model whose outputs do not follow (a Reshape to a constant shape
 * holding the traced batch) is refused: the executable would not have the
 * batch the file records.
 */
#include <stdio.h>
#include <string.h>

#include "batch.h"

void ipuc_shape_str(const struct ir_value *v, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	buf[0] = 0;
	n += (size_t)snprintf(buf, len, "[");
	for (int k = 0; k < v->rank && n < len; k++) {
		if (v->dim_param[k])
			n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? ", " : "", v->dim_param[k]);
		else if (v->dims[k] < 0)
			n += (size_t)snprintf(buf + n, len - n, "%s?", k ? ", " : "");
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%lld", k ? ", " : "", (long long)v->dims[k]);
	}
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

static const struct ir_shape_binding *binding_of(const struct ipuc_model *m, const char *name)
{
	for (int i = 0; m && i < m->nshapes; i++)
		if (!strcmp(m->shapes[i].name, name))
			return &m->shapes[i];
	return NULL;
}

int ipuc_batch_inputs(struct ir_graph *g, const struct ipuc_model *m, int64_t n, int axis,
		      struct ir_error *e)
{
	char shape[256];

	if (n <= 0)
		return 0;
	for (int i = 0; i < g->ninputs; i++) {
		struct ir_value *v = &g->vals[g->inputs[i]];
		const struct ir_shape_binding *b = binding_of(m, v->name);

		if (b) {
			/* the user's shape wins; it must say the same batch */
			if (axis < b->rank && b->dims[axis] != n)
				return ir_err(e, "--batch-size %lld: --input-shape %s gives dimension %d as %lld: give the batch once, or the same in both",
					      (long long)n, v->name, axis, (long long)b->dims[axis]);
			continue;
		}
		/* no shape (refused by inference with its own message) or a scalar */
		if (v->rank <= 0)
			continue;
		if (axis >= v->rank)
			return ir_err(e, "--batch-size %lld: --batch-axis %d is outside input '%s' (rank %d)",
				      (long long)n, axis, v->name, v->rank);
		if (v->dim_param[axis] || v->dims[axis] < 0)
			continue;	/* symbolic: inference fixes it */
		if (v->dims[axis] == n)
			continue;
		if (v->dims[axis] != 1) {
			ipuc_shape_str(v, shape, sizeof(shape));
			return ir_err(e, "--batch-size %lld: input '%s' has the static shape %s; its dimension %d (%lld) is not 1 or symbolic, so it is not a batch ipu-compile can change (give the input's shape with --input-shape %s=..., or re-export the model with a dynamic batch dimension)",
				      (long long)n, v->name, shape, axis, (long long)v->dims[axis], v->name);
		}
		v->dims[axis] = n;
	}
	return 0;
}

int ipuc_batch_check(const struct ir_graph *g, int64_t n, int axis, struct ir_error *e)
{
	char shape[256];

	if (n <= 0)
		return 0;
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		int in = i < g->ninputs;
		const struct ir_value *v = &g->vals[in ? g->inputs[i] : g->outputs[i - g->ninputs]];

		if (v->rank <= axis || v->dims[axis] == n)
			continue;
		ipuc_shape_str(v, shape, sizeof(shape));
		if (in)
			return ir_err(e, "--batch-size %lld: input '%s' has shape %s after shape inference; dimension %d is not the batch",
				      (long long)n, v->name, shape, axis);
		return ir_err(e, "--batch-size %lld: with the inputs at batch %lld, output '%s' comes out as %s: the model fixes its batch inside (e.g. a Reshape to a constant shape traced at batch 1), so the executable cannot run %lld samples at once; re-export the model with a dynamic batch dimension (torch.onnx.export(..., dynamic_axes=...)), or compile it at its own batch size and let the runtime split requests",
			      (long long)n, (long long)n, v->name, shape, (long long)n);
	}
	return 0;
}
