/* SPDX-License-Identifier: MIT */
/* json_summary.c - JSON description of a compiled model. */
#include <string.h>

#include "json_summary.h"

void ipuc_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void anchors(FILE *f, const struct ir_graph *g, const int *idx, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++) {
		const struct ir_value *v = &g->vals[idx[i]];

		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		ipuc_json_string(f, v->name);
		fprintf(f, ", \"dtype\": \"%s\", \"shape\": [", ir_dtype_name(v->dtype));
		for (int k = 0; k < v->rank; k++)
			fprintf(f, "%s%lld", k ? ", " : "", (long long)v->dims[k]);
		fprintf(f, "]}");
	}
	fputc(']', f);
}

void ipuc_json_model(FILE *f, const char *path, const char *precision,
		     const struct ir_graph *g)
{
	int nconst = 0, first = 1;
	long long cbytes = 0;

	for (int i = 0; i < g->nvals; i++)
		if (g->vals[i].data) {
			nconst++;
			cbytes += ir_value_numel(&g->vals[i]) * (long long)ir_dtype_size(g->vals[i].dtype);
		}
	fprintf(f, "{\"model\": ");
	ipuc_json_string(f, path);
	fprintf(f, ", \"opset\": %d, \"precision\": \"%s\", \"nodes\": %d, \"constants\": %d, \"constant_bytes\": %lld, \"inputs\": ",
		g->opset, precision, g->nnodes, nconst, cbytes);
	anchors(f, g, g->inputs, g->ninputs);
	fprintf(f, ", \"outputs\": ");
	anchors(f, g, g->outputs, g->noutputs);
	fprintf(f, ", \"ops\": {");
	for (int i = 0; i < g->nnodes; i++) {
		int seen = 0, count = 0;

		for (int j = 0; j < i; j++)
			seen |= !strcmp(g->nodes[j].op, g->nodes[i].op);
		if (seen)
			continue;
		for (int j = i; j < g->nnodes; j++)
			count += !strcmp(g->nodes[j].op, g->nodes[i].op);
		fprintf(f, "%s\"%s\": %d", first ? "" : ", ", g->nodes[i].op, count);
		first = 0;
	}
	fprintf(f, "}}");
}

void ipuc_json_stats(FILE *f, const struct ipu_graph_stats *s, uint32_t tiles)
{
	fprintf(f, "{\"tiles\": %u, \"tiles_used\": %u, \"mem_max\": %llu, \"mem_max_tile\": %u, \"mem_mean\": %llu, \"mem_total\": %llu, \"memory_reuse\": %s, \"mem_max_no_reuse\": %llu, \"mem_max_no_reuse_tile\": %u, \"mem_total_no_reuse\": %llu, \"compute_sets\": %u, \"vertices\": %u, \"exchanges\": %u, \"copies\": %u, \"exchange_bytes\": %llu, \"streams\": %u, \"image_bytes\": %zu}",
		tiles, s->tiles_used, (unsigned long long)s->mem_max, s->mem_max_tile,
		(unsigned long long)(s->tiles_used ? s->mem_total / s->tiles_used : 0),
		(unsigned long long)s->mem_total, s->memory_reuse ? "true" : "false",
		(unsigned long long)s->mem_max_no_reuse, s->mem_max_no_reuse_tile,
		(unsigned long long)s->mem_total_no_reuse, s->compute_sets, s->vertices, s->exchanges,
		s->copies, (unsigned long long)s->exchange_bytes, s->streams, s->image_bytes);
}

void ipuc_print_stats(FILE *f, const char *exe, uint64_t file_bytes,
		      const struct ipu_graph_stats *s, uint32_t tiles)
{
	fprintf(f, "ipu-compile: wrote %s (%llu bytes; executable blob %zu bytes): %u of %u tiles, memory per tile max %llu (tile %u) mean %llu bytes (%s: max %llu mean %llu), %u compute sets, %u vertices, %u exchanges moving %llu bytes\n",
		exe, (unsigned long long)file_bytes, s->image_bytes, s->tiles_used, tiles, (unsigned long long)s->mem_max, s->mem_max_tile,
		(unsigned long long)(s->tiles_used ? s->mem_total / s->tiles_used : 0),
		s->memory_reuse ? "with memory reuse; without" : "no memory reuse",
		(unsigned long long)s->mem_max_no_reuse,
		(unsigned long long)(s->tiles_used ? s->mem_total_no_reuse / s->tiles_used : 0),
		s->compute_sets, s->vertices, s->exchanges, (unsigned long long)s->exchange_bytes);
}
