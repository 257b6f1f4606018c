/* SPDX-License-Identifier: MIT */
/* prepare_rw.h - a rewrite in progress of the node at `pos` into several
 * nodes inserted before it (the prepare hooks of prepare_loss.c and
 * prepare_quant.c, the splits of prepare_gather.c and prepare_rows.c);
 * every function returns -1 with e set on failure. */
#ifndef IPU_PREPARE_RW_H
#define IPU_PREPARE_RW_H

#include <stdint.h>

#include "lower_internal.h"

struct lp_rw {
	struct ir_graph *g;
	int pos;		/* the rewritten node; inserts advance it */
	char name[256];		/* its name, the inserted nodes' prefix */
	struct ir_error *e;
};

/* Inserts op(a) or op(a, b) (b < 0: one input); returns the new value. */
int lp_rw_add(struct lp_rw *r, const char *op, int a, int b);
/* Inserts op(in...) writing value out (a new value if out < 0); returns
 * the value written. */
int lp_rw_add_to(struct lp_rw *r, const char *op, const int *in, int nin, int out);
/* Sets an int attribute of the node inserted last. */
int lp_rw_int(struct lp_rw *r, const char *attr, int64_t v);
/* A constant int64 vector (a Reshape's shape). */
int lp_rw_shape(struct lp_rw *r, const int64_t *dims, int64_t rank);
/* A constant of dtype dt and shape (rank, dims) from the int64 values v,
 * its value named after `name`. */
int lp_rw_ints(struct lp_rw *r, const char *name, int dt, int rank, const int64_t *dims,
	       const int64_t *v);
/* A scalar constant of dtype dt. */
int lp_rw_scalar(struct lp_rw *r, int dt, double v);
/* The rewritten node computes op(in...) into its first output from now on,
 * without attributes; its other outputs are dropped. */
int lp_rw_become(struct lp_rw *r, const char *op, const int *in, int nin);
/* The bytes one op may use on a tile of target t, as the lowering will
 * give them (op_budget in lower.c, with every constant of g counted):
 * the rewrites that split what a tile cannot hold use it to leave alone
 * every op the lowering takes whole. */
uint64_t lp_op_budget(const struct ir_graph *g, const struct ipu_target *t);

#endif /* IPU_PREPARE_RW_H */
