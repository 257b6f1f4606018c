/* SPDX-License-Identifier: MIT */
/*
 * lower_check.h - the compiler tests' one way to lower a graph and run it:
 * the pipeline, then `--check`'s comparison of the device against the
 * reference evaluator on an in-process target.
 */
#ifndef IPU_TESTS_LOWER_CHECK_H
#define IPU_TESTS_LOWER_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ir.h"

/*
 * Runs the pipeline on @g (fp16 when @fp16; @fold_limit 0 for the
 * default) and checks it on @tiles tiles of @mem bytes.  The check's
 * report, or the error, is written to @report.  Returns 0 when the device
 * matches the reference, < 0 otherwise.
 */
int lower_check(struct ir_graph *g, int fp16, uint32_t tiles, uint32_t mem, int64_t fold_limit,
		char *report, size_t len);

#endif
