/* SPDX-License-Identifier: MIT */
/*
 * lower_registry.c - the lowering's columns of ops/ops.def, indexed by the
 * operator ids of the front end's registry: the lookup by name is the
 * front end's, the lowering adds only what it alone links.
 */
#include <stddef.h>

#include "lower_internal.h"

#define no_prepare NULL
#define no_decompose NULL
#define no_lower NULL

static const struct lw_op_hooks hooks[] = {
#define OP(name, lo, hi, fl, inf, ev, up, prep, dec, low) [IR_OP_##name] = { prep, dec, low },
#include "ops/ops.def"
#undef OP
};

_Static_assert(sizeof(hooks) / sizeof(hooks[0]) == IR_OP_COUNT, "one set of hooks per id");

const struct lw_op_hooks *lw_node_hooks(const struct ir_node *n)
{
	return n->opid >= 0 && n->opid < IR_OP_COUNT ? &hooks[n->opid] : NULL;
}

/* Lowered directly, rewritten into lowered ops, or folded before the
 * lowering sees it. */
int ipu_lower_supported(const char *op)
{
	const struct ir_op_desc *d = ir_op_lookup(op);
	const struct lw_op_hooks *h = d ? &hooks[d->id] : NULL;

	return h && (h->lower || h->prepare || h->decompose ||
		     (d->flags & (IR_OP_SHAPE_ONLY | IR_OP_CONST_OUT)));
}
