/* SPDX-License-Identifier: MIT */
/* eval_control.h - the reference evaluator of If, Loop and Scan. */
#ifndef IPU_EVAL_CONTROL_H
#define IPU_EVAL_CONTROL_H

#include "ipu/ir.h"

/*
 * Runs control-flow node n (If, Loop or Scan; its subgraphs inferred by
 * shape inference) on inputs in[0..nin), allocating out[0..nout) with the
 * shapes the run gives (a Loop whose condition the body computes stops
 * when it turns false).  At most IR_CF_MAX_TRIPS iterations.
 */
int ir_cf_run(const struct ir_graph *g, const struct ir_node *n, const struct ir_tensor *const *in,
	      int nin, struct ir_tensor *out, int nout, struct ir_error *e);

#endif /* IPU_EVAL_CONTROL_H */
