/* SPDX-License-Identifier: MIT */
/* json_summary.h - the --json summary of one compiled model. */
#ifndef IPU_CLI_JSON_SUMMARY_H
#define IPU_CLI_JSON_SUMMARY_H

#include <stdio.h>

#include "ipu/ir.h"

void ipuc_json_string(FILE *f, const char *s);
void ipuc_json_model(FILE *f, const char *path, const char *precision,
		     const struct ir_graph *g);

#endif
