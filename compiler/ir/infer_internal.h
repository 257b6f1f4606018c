/* SPDX-License-Identifier: MIT */
/* infer_internal.h - helpers shared by the per-family shape inference files. */
#ifndef IPU_INFER_INTERNAL_H
#define IPU_INFER_INTERNAL_H

#include "ipu/ir.h"
#include "opgeom.h"
#include "ops/registry.h"

/* Input k of n, or NULL if omitted/absent. */
struct ir_value *ir_in(struct ir_graph *g, const struct ir_node *n, int k);
/* Input k must be present and shaped. */
int ir_need(struct ir_graph *g, const struct ir_node *n, int k,
	    struct ir_error *e);
/* Reads constant integer input k into v (at most max values). */
int ir_const_ints(struct ir_graph *g, const struct ir_node *n, int k,
		  int64_t *v, int max, int *count, struct ir_error *e);
/* Reads a constant scalar (or 1-element) input as double. */
int ir_const_scalar(struct ir_graph *g, const struct ir_node *n, int k,
		    double *v, struct ir_error *e);
/* Sets output k's type and shape (ignored if output k does not exist). */
int ir_set_out(struct ir_graph *g, const struct ir_node *n, int k, int dtype,
	       int rank, const int64_t *dims);
/* Output k = same dtype and shape as input i. */
int ir_same_as(struct ir_graph *g, const struct ir_node *n, int k, int i);
/* The MatMul output shape of inputs ia x ib (numpy rules: rank-1 operands
 * promoted and dropped again, batch dimensions broadcast) into d/r. */
int ir_matmul_dims(struct ir_graph *g, const struct ir_node *n, int ia, int ib, int64_t *d, int *r,
		   struct ir_error *e);
/* Input k's dtype must be one of the float types. */
int ir_need_float(struct ir_graph *g, const struct ir_node *n, int k,
		  struct ir_error *e);

/* Largest dimension / element count shape inference accepts (2^40): all
 * shape arithmetic below stays far from int64 overflow. */
#define IR_DIM_LIMIT ((int64_t)1 << 40)

/* a * b into *out; -1 if it overflows or exceeds IR_DIM_LIMIT. */
static inline int ir_dim_mul(int64_t a, int64_t b, int64_t *out)
{
	if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, out) || *out > IR_DIM_LIMIT)
		return -1;
	return 0;
}

#endif /* IPU_INFER_INTERNAL_H */
