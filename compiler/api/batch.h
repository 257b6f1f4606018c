/* SPDX-License-Identifier: MIT */
/* batch.h - --batch-size applied to a model's inputs, and checked after. */
#ifndef IPU_API_BATCH_H
#define IPU_API_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ir.h"
#include "options.h"

/* Before shape inference: dimension `axis` of every input that is a
 * static 1 becomes n (symbolic ones are left to inference, which binds
 * them to n too).  An input fixed at another size, or an --input-shape of
 * m that gives another batch, is refused with a message naming the input
 * and its shape.  n <= 0: nothing to do. */
int ipuc_batch_inputs(struct ir_graph *g, const struct ipuc_model *m, int64_t n, int axis,
		      struct ir_error *e);
/* After shape inference: every input and output with a dimension `axis`
 * has n there; otherwise the error names the first that has not. */
int ipuc_batch_check(const struct ir_graph *g, int64_t n, int axis, struct ir_error *e);
/* "[1, 3, N, 224]" */
void ipuc_shape_str(const struct ir_value *v, char *buf, size_t len);

#endif
