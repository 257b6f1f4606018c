/* SPDX-License-Identifier: MIT */
/* result.c - the compile result: summary, diagnostics, one allocation list. */
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "ipu/passes.h"

struct ipuc_alloc {
	struct ipuc_alloc *next;
	max_align_t data[];
};

void *ipuc_result_alloc(struct ipuc_result *r, size_t size)
{
	struct ipuc_alloc *a = calloc(1, sizeof(*a) + size);

	if (!a)
		return NULL;
	a->next = r->allocs;
	r->allocs = a;
	return a->data;
}

char *ipuc_result_strdup(struct ipuc_result *r, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = ipuc_result_alloc(r, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

/* "... node 'NAME' (OP, #3): ..." -> NAME and OP (the form the front end
 * and the lowering give every message about one node). */
static void node_of(struct ipuc_result *r, const char *msg, const char **node, const char **op)
{
	const char *p = strstr(msg, "node '"), *q, *o;
	char buf[512];

	*node = *op = NULL;
	if (!p)
		return;
	p += 6;
	q = strstr(p, "' (");
	if (!q || (size_t)(q - p) >= sizeof(buf))
		return;
	memcpy(buf, p, (size_t)(q - p));
	buf[q - p] = 0;
	*node = ipuc_result_strdup(r, buf);
	o = q + 3;
	q = o + strcspn(o, ",)");
	if (!*q || q == o || (size_t)(q - o) >= sizeof(buf))
		return;
	memcpy(buf, o, (size_t)(q - o));
	buf[q - o] = 0;
	*op = ipuc_result_strdup(r, buf);
}

int ipuc_result_diag(struct ipuc_result *r, enum ipu_compile_severity sev, int model,
		     const char *msg)
{
	struct ipu_compile_diagnostic *d;

	if (r->ndiags == r->capdiags) {
		size_t cap = r->capdiags ? 2 * r->capdiags : 8;
		void *p = realloc(r->diags, cap * sizeof(*r->diags));

		if (!p)
			return -1;
		r->diags = p;
		r->capdiags = cap;
	}
	d = &r->diags[r->ndiags];
	memset(d, 0, sizeof(*d));
	d->severity = sev;
	d->model = model;
	if (!(d->message = ipuc_result_strdup(r, msg)))
		return -1;
	node_of(r, msg, &d->node, &d->op);
	r->ndiags++;
	r->pub.diagnostics = r->diags;
	r->pub.num_diagnostics = r->ndiags;
	return 0;
}

static int anchors(struct ipuc_result *r, const struct ir_graph *g, const int *idx, int n,
		   const struct ipu_compile_anchor **out)
{
	struct ipu_compile_anchor *a = ipuc_result_alloc(r, (size_t)(n ? n : 1) * sizeof(*a));

	if (!a)
		return -1;
	for (int i = 0; i < n; i++) {
		const struct ir_value *v = &g->vals[idx[i]];

		if (!(a[i].name = ipuc_result_strdup(r, v->name ? v->name : "")))
			return -1;
		a[i].dtype = ir_dtype_name(v->dtype);
		a[i].rank = v->rank;
		for (int k = 0; k < v->rank && k < 8; k++)
			a[i].dims[k] = v->dims[k];
	}
	*out = a;
	return 0;
}

int ipuc_result_model(struct ipuc_result *r, int k, const char *path, const char *precision,
		      const struct ir_graph *g, const struct ir_qdq_stats *qdq)
{
	struct ipu_compile_model_summary *m = &r->models[k];
	struct ipu_compile_op_count *ops = ipuc_result_alloc(r, (size_t)(g->nnodes + 1) * sizeof(*ops));
	size_t nops = 0;

	if (!ops || !(m->model = ipuc_result_strdup(r, path)) ||
	    !(m->precision = ipuc_result_strdup(r, precision)) ||
	    anchors(r, g, g->inputs, g->ninputs, &m->inputs) ||
	    anchors(r, g, g->outputs, g->noutputs, &m->outputs))
		return -1;
	m->num_inputs = (size_t)g->ninputs;
	m->num_outputs = (size_t)g->noutputs;
	m->quantize = qdq->q;
	m->quantize_left = qdq->q_left;
	m->dequantize = qdq->dq;
	m->dequantize_left = qdq->dq_left;
	m->opset = g->opset;
	m->nodes = g->nnodes;
	for (int i = 0; i < g->nvals; i++)
		if (g->vals[i].data) {
			m->constants++;
			m->constant_bytes += ir_value_numel(&g->vals[i]) *
					     (int64_t)ir_dtype_size(g->vals[i].dtype);
		}
	/* op types by first appearance, as ipu-compile --json lists them */
	for (int i = 0; i < g->nnodes; i++) {
		size_t j;

		for (j = 0; j < nops && strcmp(ops[j].op, g->nodes[i].op); j++)
			;
		if (j == nops) {
			if (!(ops[nops].op = ipuc_result_strdup(r, g->nodes[i].op)))
				return -1;
			nops++;
		}
		ops[j].count++;
	}
	m->ops = ops;
	m->num_ops = nops;
	r->pub.summary.models = r->models;
	r->pub.summary.num_models = (size_t)k + 1;
	return 0;
}

void ipuc_result_stats(struct ipuc_result *r, const struct ipu_graph_stats *s, uint32_t tiles,
		       uint64_t file_bytes)
{
	struct ipu_compile_stats *o = &r->pub.summary.stats;

	r->pub.summary.has_stats = 1;
	o->tiles = tiles;
	o->tiles_used = s->tiles_used;
	o->mem_max = s->mem_max;
	o->mem_max_tile = s->mem_max_tile;
	o->mem_mean = s->tiles_used ? s->mem_total / s->tiles_used : 0;
	o->mem_total = s->mem_total;
	o->memory_reuse = s->memory_reuse;
	o->mem_max_no_reuse = s->mem_max_no_reuse;
	o->mem_max_no_reuse_tile = s->mem_max_no_reuse_tile;
	o->mem_total_no_reuse = s->mem_total_no_reuse;
	o->compute_sets = s->compute_sets;
	o->vertices = s->vertices;
	o->exchanges = s->exchanges;
	o->copies = s->copies;
	o->exchange_bytes = s->exchange_bytes;
	o->streams = s->streams;
	o->image_bytes = s->image_bytes;
	o->file_bytes = file_bytes;
}

void ipu_compile_result_free(struct ipu_compile_result *pub)
{
	struct ipuc_result *r = (struct ipuc_result *)pub;

	if (!r)
		return;
	while (r->allocs) {
		struct ipuc_alloc *a = r->allocs;

		r->allocs = a->next;
		free(a);
	}
	free(r->diags);
	free(r->pub.executable);
	free(r);
}
