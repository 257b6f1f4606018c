/* SPDX-License-Identifier: MIT */
/* einsum.h - Einsum's equation, parsed against its inputs' shapes (shared
 * by shape inference, the evaluator and the lowering). */
#ifndef IPU_EINSUM_H
#define IPU_EINSUM_H

#include <stdint.h>

#include "ipu/ir.h"

#define EINSUM_MAX_IN 8
#define EINSUM_MAX_LABELS 64

struct einsum {
	int nin;
	int rank[EINSUM_MAX_IN];
	int lab[EINSUM_MAX_IN][IR_MAX_RANK];	/* label of each input axis */
	int out_rank;
	int out_lab[IR_MAX_RANK];
	int nlabels;
	int64_t size[EINSUM_MAX_LABELS];	/* each label's extent */
};

/* Parses `eq` (explicit "ij,jk->ik" or implicit "ij,jk"; "..." for
 * broadcast axes; spaces ignored) for inputs of the given ranks and
 * shapes.  Returns 0, or -1 with a message in msg. */
int einsum_parse(const char *eq, int nin, const int *rank, const int64_t (*dims)[IR_MAX_RANK],
		 struct einsum *es, char *msg, size_t len);

#endif /* IPU_EINSUM_H */
