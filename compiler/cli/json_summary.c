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

void ipuc_json_target(FILE *f, const struct ipu_compile_summary *s)
{
	fprintf(f, "{\"target\": {\"ipu_version\": \"%s\", \"tiles\": %u, \"tile_mem\": %u, \"custom\": %s}, \"models\": [",
		s->ipu_version, s->tiles, s->tile_mem, s->custom ? "true" : "false");
}

static void anchors(FILE *f, const struct ipu_compile_anchor *a, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		ipuc_json_string(f, a[i].name);
		fprintf(f, ", \"dtype\": \"%s\", \"shape\": [", a[i].dtype);
		for (int k = 0; k < a[i].rank; k++)
			fprintf(f, "%s%lld", k ? ", " : "", (long long)a[i].dims[k]);
		fprintf(f, "]}");
	}
	fputc(']', f);
}

void ipuc_json_model(FILE *f, const struct ipu_compile_model_summary *m)
{
	fprintf(f, "{\"model\": ");
	ipuc_json_string(f, m->model);
	fprintf(f, ", \"opset\": %d, \"precision\": \"%s\", \"nodes\": %d, \"constants\": %d, \"constant_bytes\": %lld, \"inputs\": ",
		m->opset, m->precision, m->nodes, m->constants, (long long)m->constant_bytes);
	anchors(f, m->inputs, m->num_inputs);
	fprintf(f, ", \"outputs\": ");
	anchors(f, m->outputs, m->num_outputs);
	fprintf(f, ", \"ops\": {");
	for (size_t i = 0; i < m->num_ops; i++)
		fprintf(f, "%s\"%s\": %d", i ? ", " : "", m->ops[i].op, m->ops[i].count);
	fprintf(f, "}}");
}

void ipuc_json_stats(FILE *f, const struct ipu_compile_stats *s)
{
	fprintf(f, "{\"tiles\": %u, \"tiles_used\": %u, \"mem_max\": %llu, \"mem_max_tile\": %u, \"mem_mean\": %llu, \"mem_total\": %llu, \"memory_reuse\": %s, \"mem_max_no_reuse\": %llu, \"mem_max_no_reuse_tile\": %u, \"mem_total_no_reuse\": %llu, \"compute_sets\": %u, \"vertices\": %u, \"exchanges\": %u, \"copies\": %u, \"exchange_bytes\": %llu, \"streams\": %u, \"image_bytes\": %llu}",
		s->tiles, s->tiles_used, (unsigned long long)s->mem_max, s->mem_max_tile,
		(unsigned long long)s->mem_mean, (unsigned long long)s->mem_total,
		s->memory_reuse ? "true" : "false", (unsigned long long)s->mem_max_no_reuse,
		s->mem_max_no_reuse_tile, (unsigned long long)s->mem_total_no_reuse, s->compute_sets,
		s->vertices, s->exchanges, s->copies, (unsigned long long)s->exchange_bytes, s->streams,
		(unsigned long long)s->image_bytes);
}

void ipuc_print_stats(FILE *f, const char *exe, const struct ipu_compile_stats *s)
{
	fprintf(f, "ipu-compile: wrote %s (%llu bytes; executable blob %llu bytes): %u of %u tiles, memory per tile max %llu (tile %u) mean %llu bytes (%s: max %llu mean %llu), %u compute sets, %u vertices, %u exchanges moving %llu bytes\n",
		exe, (unsigned long long)s->file_bytes, (unsigned long long)s->image_bytes, s->tiles_used,
		s->tiles, (unsigned long long)s->mem_max, s->mem_max_tile, (unsigned long long)s->mem_mean,
		s->memory_reuse ? "with memory reuse; without" : "no memory reuse",
		(unsigned long long)s->mem_max_no_reuse,
		(unsigned long long)(s->tiles_used ? s->mem_total_no_reuse / s->tiles_used : 0),
		s->compute_sets, s->vertices, s->exchanges, (unsigned long long)s->exchange_bytes);
}
