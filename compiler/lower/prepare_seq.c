/* SPDX-License-Identifier: MIT */
/* prepare_seq.c - ReverseSequence with constant sequence lengths becomes a
 * Gather of the flattened input at constant offsets (exchange copies of
 * runs, spread over tiles: lower_gather_const.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/seq.h"
#include "prepare_rw.h"

int lp_prep_reverse_sequence(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *l = &g->vals[n->in[1]];
	int64_t cnt = ir_value_numel(x), m1 = -1, *src;
	struct lp_rw r = { g, *pi, "", e };
	struct ir_tensor t;
	int idx, in[2], s;

	if (!l->data)
		return ir_node_err(e, g, n, "input 1 ('sequence_lens') must be a compile-time constant to be lowered (it is computed at run time)");
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	if (!(src = malloc((size_t)(cnt ? cnt : 1) * sizeof(int64_t))))
		return ir_err(e, "out of memory");
	if (ir_reverse_sequence_src(n, x->rank, x->dims, l->data, l->dtype, src)) {
		free(src);
		return ir_node_err(e, g, n, "a sequence length is outside [0, the time axis]");
	}
	if ((idx = ir_value_add_unique(g, "reversed", e)) < 0 ||
	    ir_tensor_alloc(&t, IR_I32, x->rank, x->dims, e)) {
		free(src);
		return -1;
	}
	for (int64_t i = 0; i < cnt; i++)
		ir_set_i(t.data, IR_I32, (size_t)i, src[i]);
	free(src);
	ir_value_set_const(&g->vals[idx], &t);
	if ((s = lp_rw_shape(&r, &m1, 1)) < 0 || (in[0] = lp_rw_add(&r, "Reshape", g->nodes[r.pos].in[0], s)) < 0)
		return -1;
	in[1] = idx;
	*pi = r.pos;
	if (lp_rw_become(&r, "Gather", in, 2))
		return -1;
	return ir_attr_set_int(&g->nodes[r.pos], "axis", 0, e);
}
