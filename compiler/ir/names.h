/* SPDX-License-Identifier: MIT */
/*
 * names.h - the graph's index of value names (names.c), used by graph.c
 * only: ir_value_find and ir_value_add_unique in constant time.
 */
#ifndef IR_NAMES_H
#define IR_NAMES_H

#include "ipu/ir.h"

/* The value named `name` (the latest of duplicates), -1 if none, -2 if
 * the graph has no index (search linearly). */
int ir_names_find(const struct ir_graph *g, const char *name);
/* Value v was appended: index its name. */
void ir_names_added(struct ir_graph *g, int v);
/* The suffix ir_value_add_unique may start searching at for `base`
 * (0: "<base>" itself; k: "<base>_k"); builds the index if it can. */
int ir_names_first_suffix(struct ir_graph *g, const char *base);
/* "<base>" (k = 0) or "<base>_k" was taken, and every one before it. */
void ir_names_taken(struct ir_graph *g, const char *base, int k);
/* Forget the index (values were removed); it is rebuilt on demand. */
void ir_names_drop(struct ir_graph *g);

#endif /* IR_NAMES_H */
