/* SPDX-License-Identifier: MIT */
/* check.h - ipu-compile --check: run the executable once on the
 * in-process device and compare with the reference evaluator. */
#ifndef IPU_CLI_CHECK_H
#define IPU_CLI_CHECK_H

#include <stdio.h>

#include "ipu/lower.h"

/* Returns 0 if every output of every graph matches, 1 if some differ,
 * -1 on error (message in e).  Writes one line per output to `report`. */
int ipuc_check(struct ir_graph *const *graphs, int n, const struct ipu_target *t,
	       FILE *report, struct ir_error *e);

#endif
