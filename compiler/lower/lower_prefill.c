/* SPDX-License-Identifier: MIT */
/*
 * lower_prefill.c - a decoder's prompt in one run.  Token by token, a
 * prompt of N tokens costs N runs of the decode step; the prefill program
 * is the same module exported with T tokens a step, writing T cache rows
 * at the positions its position_ids input gives and masking each token's
 * attention to the positions up to its own (tests/gen/tiny_gpt.py
 * --tokens).  It is lowered after the decode step into the same builder:
 * its caches are the step's state tensors and its weights the step's
 * frozen constants (lower_share.c), so the device holds one of each.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

int lw_prefill_prepare(const struct ir_graph *g, int n, const struct ipu_target *t,
		       struct ir_graph **out, struct ir_error *e)
{
	struct ir_graph *p;
	int *in_of_out, any = 0;

	*out = NULL;
	if (n != 1)
		return ir_err(e, "a prefill model needs one decode model, not a fusion of %d", n);
	if (t->fp8)
		return ir_err(e, "a prefill model cannot share fp8 weights with its decode step: compile it in fp32 or fp16");
	p = ir_graph_clone(g, e);
	if (!p)
		return -1;
	in_of_out = malloc((size_t)(p->noutputs ? p->noutputs : 1) * sizeof(int));
	if (!in_of_out) {
		ir_graph_free(p);
		return ir_err(e, "out of memory");
	}
	if (lw_state_find(p, t, in_of_out, e))
		goto fail;
	for (int j = 0; j < p->noutputs; j++)
		any |= in_of_out[j] >= 0;
	if (!any) {
		ir_err(e, "the prefill model has no cache pairs: it needs the decode step's caches as inputs and outputs of the same names (Documentation/compiler/generation.md)");
		goto fail;
	}
	if (lw_state_token(p, t, e) || ipu_lower_prepare(p, t->fold_limit, e) ||
	    lw_split_wide_argmax(p, t, t->fold_limit, e))
		goto fail;
	free(in_of_out);
	*out = p;
	return 0;
fail:
	free(in_of_out);
	ir_graph_free(p);
	return -1;
}

int lw_prefill_state(const struct ipu_lower_states *ss, const struct ir_value *v, ipu_tensor *t,
		     struct ir_error *e)
{
	for (uint32_t i = 0; i < ss->n; i++) {
		const struct ipuef_state *s = &ss->s[i];
		int same = s->rank == (uint32_t)v->rank;

		if (strcmp(s->name, v->name))
			continue;
		for (int d = 0; same && d < v->rank; d++)
			same = s->dims[d] == (uint64_t)v->dims[d];
		if (!same)
			return ir_err(e, "cache '%s' has another shape than the decode step's: export both with the same cache length and slots",
				      v->name);
		*t = ss->t[i];
		return 0;
	}
	return ir_err(e, "cache '%s' is not a state of the decode step: the two exports need the same cache inputs and outputs",
		      v->name);
}
