/* SPDX-License-Identifier: MIT */
/*
 * report.h - ipu-compile --report: one self-contained HTML page about a
 * compiled model (tile memory, modelled cycles per ONNX node and per op
 * type, exchange volume, memory over the program, the biggest tensors).
 * Plug it into the lowering as struct ipu_target's inspect hook.
 */
#ifndef IPU_COMPILER_REPORT_H
#define IPU_COMPILER_REPORT_H

#include <stddef.h>

#include "ipu/lower.h"

struct ipuc_report {
	const char *path;		/* the .html to write */
	const char *title;		/* the model(s), shown as the heading */
	const char *ipu_version;	/* as the .ipuef records it */
	int custom;			/* --target changed the geometry */
	double clock_ghz;		/* the modelled tile clock */
	const char *precision;		/* --precision as compiled: "fp16", or
					 * per model of a fusion "graph0 fp32,
					 * graph1 fp16" */
};

/* The inspect hook: ctx is a struct ipuc_report. */
int ipuc_report_inspect(void *ctx, struct ipu_graph *gb, const void *image, size_t len,
			const struct ipu_graph_stats *st, struct ir_error *e);

/* The report's data as JSON text (malloc'd), the page's embedded model. */
char *ipuc_report_data(const struct ipuc_report *r, struct ipu_graph *gb, const void *image,
		       size_t len, const struct ipu_graph_stats *st, struct ir_error *e);
/* The page around the data; 0 or -1 with e set. */
int ipuc_report_write_html(const struct ipuc_report *r, const char *data, struct ir_error *e);

#endif /* IPU_COMPILER_REPORT_H */
