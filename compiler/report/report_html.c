// SPDX-License-Identifier: MIT
/*
 * report_html.c - the report page: report_page.html (inline CSS and
 * JavaScript, nothing fetched) around the JSON data, written atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/file_atomic.h"
#include "ipu/graph.h"
#include "report.h"

/* report_page.html before and after its data (generated: gen_page.py) */
extern const char ipuc_report_page_head[], ipuc_report_page_tail[];

int ipuc_report_write_html(const struct ipuc_report *r, const char *data, struct ir_error *e)
{
	size_t nh = strlen(ipuc_report_page_head), nd = strlen(data), nt = strlen(ipuc_report_page_tail);
	char *page = malloc(nh + nd + nt + 1), err[512];
	int rc;

	if (!page)
		return ir_err(e, "report: out of memory");
	memcpy(page, ipuc_report_page_head, nh);
	memcpy(page + nh, data, nd);
	memcpy(page + nh + nd, ipuc_report_page_tail, nt + 1);
	rc = ipurt_write_file_atomic(r->path, page, nh + nd + nt, err, sizeof(err));
	free(page);
	if (rc)
		return ir_err(e, "report: %s", err);
	return 0;
}

int ipuc_report_inspect(void *ctx, struct ipu_graph *gb, const void *image, size_t len,
			const struct ipu_graph_stats *st, struct ir_error *e)
{
	const struct ipuc_report *r = ctx;
	char *data = ipuc_report_data(r, gb, image, len, st, e);
	int rc;

	if (!data)
		return -1;
	rc = ipuc_report_write_html(r, data, e);
	free(data);
	return rc;
}
