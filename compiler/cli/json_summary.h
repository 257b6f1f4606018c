/* SPDX-License-Identifier: MIT */
/* json_summary.h - ipu-compile's --json summary and its one-line summary,
 * printed from ipu_compile()'s result. */
#ifndef IPU_CLI_JSON_SUMMARY_H
#define IPU_CLI_JSON_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "ipu/compiler.h"

void ipuc_json_string(FILE *f, const char *s);
/* The "target" object and "models" list's opening. */
void ipuc_json_target(FILE *f, const struct ipu_compile_summary *s);
void ipuc_json_model(FILE *f, const struct ipu_compile_model_summary *m);

/* The compile summary: tiles used, memory per tile (max, mean over used
 * tiles), compute sets, vertices, exchanges and their bytes. */
void ipuc_json_stats(FILE *f, const struct ipu_compile_stats *s);
/* The one-line summary: the .ipuef's size on disk, then the executable
 * blob's (image_bytes) and the figures above. */
void ipuc_print_stats(FILE *f, const char *exe, const struct ipu_compile_stats *s);

#endif
