/* SPDX-License-Identifier: MIT */
/* list_ops.c - the --list-ops table. */
#include <stdio.h>

#include "eval/eval.h"
#include "ipu/lower.h"
#include "list_ops.h"

int ipuc_list_ops(FILE *out, int json)
{
	const char *names[512];
	int n = ir_op_names(names, 512);

	if (n > 512)
		n = 512;
	if (json) {
		fprintf(out, "{\"ops\": [");
		for (int i = 0; i < n; i++)
			fprintf(out, "%s{\"op\": \"%s\", \"shape_inference\": true, \"evaluator\": %s, \"lowering\": %s}",
				i ? ", " : "", names[i], ir_eval_supported(names[i]) ? "true" : "false",
				ipu_lower_supported(names[i]) ? "true" : "false");
		fprintf(out, "]}\n");
		return 0;
	}
	fprintf(out, "%-28s %-6s %-6s %s\n", "op (default domain)", "infer", "eval", "lower");
	for (int i = 0; i < n; i++)
		fprintf(out, "%-28s %-6s %-6s %s\n", names[i], "yes",
			ir_eval_supported(names[i]) ? "yes" : "no",
			ipu_lower_supported(names[i]) ? "yes" : "no");
	fprintf(out, "%d operators; opsets 1 to 17 of the default ONNX domain (1 to 6 converted).\n", n);
	fprintf(out, "Upsample is accepted and rewritten to Resize; Constant nodes become constants;\n"
		     "ops with constant inputs are folded at compile time whether lowered or not.\n");
	return 0;
}
