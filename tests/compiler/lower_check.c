// SPDX-License-Identifier: MIT
/* lower_check.c - see lower_check.h. */
#include <stdio.h>
#include <string.h>

#include "api/check.h"
#include "ipu/passes.h"
#include "lower_check.h"

int lower_check(struct ir_graph *g, int fp16, uint32_t tiles, uint32_t mem, int64_t fold_limit,
		char *report, size_t len)
{
	struct ir_error e = { "" };
	struct ir_pipeline_opts po = { .precision_fp16 = fp16, .infer.fold_limit = fold_limit };
	struct ipu_target t = { "ipu2", tiles, mem, .fold_limit = fold_limit };
	FILE *f = fmemopen(report, len - 1, "w");
	int r;

	memset(report, 0, len);
	if (!f) {
		snprintf(report, len, "fmemopen failed");
		return -1;
	}
	if (ir_pipeline_run(g, &po, &e)) {
		fclose(f);
		snprintf(report, len, "pipeline: %s", e.msg);
		return -1;
	}
	r = ipuc_check(&g, 1, &t, f, &e);
	if (r < 0)
		fprintf(f, "error: %s\n", e.msg);
	fclose(f);
	return r;
}
