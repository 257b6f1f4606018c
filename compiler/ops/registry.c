/* SPDX-License-Identifier: MIT */
/* registry.c - the operator descriptors of ops.def and their lookup. */
#include <stdlib.h>
#include <string.h>

#include "registry.h"

#define no_upgrade NULL

static const struct ir_op_desc ops[] = {
#define OP(name, lo, hi, fl, inf, ev, up, prep, dec, low) \
	{ #name, IR_OP_##name, lo, hi, fl, inf, ev, up },
#include "ops/ops.def"
#undef OP
};

_Static_assert(sizeof(ops) / sizeof(ops[0]) == IR_OP_COUNT, "one descriptor per id");

static int cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ir_op_desc *)elem)->name);
}

const struct ir_op_desc *ir_op_lookup(const char *op)
{
	if (!op)
		return NULL;
	return bsearch(op, ops, IR_OP_COUNT, sizeof(ops[0]), cmp);
}

const struct ir_op_desc *ir_op_table(int *n)
{
	*n = IR_OP_COUNT;
	return ops;
}

int ir_op_has(const char *op, unsigned flags)
{
	const struct ir_op_desc *d = ir_op_lookup(op);

	return d && (d->flags & flags) == flags;
}

const struct ir_op_desc *ir_node_desc(const struct ir_node *n)
{
	return n->opid >= 0 && n->opid < IR_OP_COUNT ? &ops[n->opid] : NULL;
}

int ir_node_has(const struct ir_node *n, unsigned flags)
{
	const struct ir_op_desc *d = ir_node_desc(n);

	return d && (d->flags & flags) == flags;
}

int ir_op_supported(const char *op)
{
	return ir_op_lookup(op) != NULL;
}

int ir_op_names(const char **names, int max)
{
	for (int i = 0; i < IR_OP_COUNT && i < max; i++)
		names[i] = ops[i].name;
	return IR_OP_COUNT;
}
