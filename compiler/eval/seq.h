/* SPDX-License-Identifier: MIT */
/* seq.h - ReverseSequence's element map, shared by the evaluator and the
 * lowering's rewrite. */
#ifndef IPU_EVAL_SEQ_H
#define IPU_EVAL_SEQ_H

#include <stdint.h>

#include "ipu/ir.h"

/* src[i]: the input element output element i copies, for the node's
 * batch_axis/time_axis and the sequence lengths lens (dtype ldt).
 * Returns -1 if a length is outside [0, the time axis]. */
int ir_reverse_sequence_src(const struct ir_node *n, int rank, const int64_t *dims, const void *lens,
			    int ldt, int64_t *src);

#endif /* IPU_EVAL_SEQ_H */
