/* SPDX-License-Identifier: MIT */
/*
 * lower.c - entry point of the lowering to tiles.  Not implemented yet:
 * the front end (import, inference, passes, --export-onnx) works, and
 * asking for an executable is a clear error rather than a fake file.
 */
#include "ipu/lower.h"

int ipu_lower_available(void)
{
	return 0;
}

int ipu_lower_write(struct ir_graph *const *graphs, int n,
		    const struct ipu_target *t, const char *out_path,
		    struct ir_error *e)
{
	(void)graphs;
	(void)n;
	(void)t;
	return ir_err(e, "lowering to tiles not available yet: cannot write %s (the model was imported, inferred and optimised; use --export-onnx to see the result)",
		      out_path);
}
