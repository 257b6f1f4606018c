/* SPDX-License-Identifier: MIT */
/* json_summary.h - the --json summary of one compiled model. */
#ifndef IPU_CLI_JSON_SUMMARY_H
#define IPU_CLI_JSON_SUMMARY_H

#include <stdio.h>

#include "ipu/graph.h"
#include "ipu/ir.h"

void ipuc_json_string(FILE *f, const char *s);
void ipuc_json_model(FILE *f, const char *path, const char *precision,
		     const struct ir_graph *g);

/* The compile summary: tiles used, memory per tile (max, mean over used
 * tiles), compute sets, vertices, exchanges and their bytes. */
void ipuc_json_stats(FILE *f, const struct ipu_graph_stats *s, uint32_t tiles);
/* The one-line summary: the .ipuef's size on disk, then the executable
 * blob's (image_bytes) and the figures above. */
void ipuc_print_stats(FILE *f, const char *exe, uint64_t file_bytes,
		      const struct ipu_graph_stats *s, uint32_t tiles);

#endif
