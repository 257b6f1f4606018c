/* SPDX-License-Identifier: MIT */
/* check.h - ipu-compile --check: run the executable once on the
 * in-process device and compare with the reference evaluator. */
#ifndef IPU_API_CHECK_H
#define IPU_API_CHECK_H

#include <stdio.h>

#include "ipu/lower.h"

/* Returns 0 if every output of every graph matches, 1 if some differ,
 * -1 on error (message in e).  Writes one line per output to `report`. */
int ipuc_check(struct ir_graph *const *graphs, int n, const struct ipu_target *t,
	       FILE *report, struct ir_error *e);
/* Also compares against refs[k]; the device loads custom_libs (':'-
 * separated plugins, NULL: none) like the compiler did. (may be NULL entries: the float32 models
 * before precision conversion), reported but with a float16-vs-float32
 * tolerance (5e-2 + 5e-2 * |ref|). */
int ipuc_check_refs(struct ir_graph *const *graphs, struct ir_graph *const *refs,
		    int n, const struct ipu_target *t, const char *custom_libs, FILE *report,
		    struct ir_error *e);

#endif
