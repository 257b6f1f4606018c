// SPDX-License-Identifier: MIT
/*
 * shard.c - a split model lowered, one image per IPU, with the streams of
 * its inputs, outputs and link transfers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/partition.h"

static const struct ipuef_anchor *anchor_of(const struct ipuef_anchor *an, uint32_t na,
					    const char *name)
{
	for (uint32_t i = 0; i < na; i++)
		if (!strcmp(an[i].name, name))
			return &an[i];
	return NULL;
}

static int stream_of(const struct ipuef_anchor *an, uint32_t na, const char *name, uint32_t *sid)
{
	const struct ipuef_anchor *a = anchor_of(an, na, name);

	if (a)
		*sid = a->stream_id;
	return a ? 0 : -1;
}

static int is_input(const struct ir_graph *g, const char *name)
{
	for (int i = 0; i < g->ninputs; i++)
		if (!strcmp(g->vals[g->inputs[i]].name, name))
			return 1;
	return 0;
}

static int is_output(const struct ir_graph *g, const char *name)
{
	for (int i = 0; i < g->noutputs; i++)
		if (!strcmp(g->vals[g->outputs[i]].name, name))
			return 1;
	return 0;
}

/* Appends to a grown array of n entries of esize bytes. */
static void *grow(void *arr, uint32_t n, size_t esize)
{
	return realloc(arr, ((size_t)n + 1) * esize);
}

static int add_io(struct ipu_shard_io **arr, uint32_t *n, uint32_t ipu, uint32_t stream,
		  const char *name, const struct ipuef_anchor *an, struct ir_error *e)
{
	struct ipu_shard_io *a = grow(*arr, *n, sizeof(**arr));
	char *nm = strdup(name);

	if (!a || !nm) {
		free(nm);
		if (a)
			*arr = a;
		return ir_err(e, "out of memory");
	}
	*arr = a;
	a[*n] = (struct ipu_shard_io){ ipu, stream, nm, *an };
	a[(*n)++].anchor.name = nm;
	return 0;
}

int ipu_shard_lower(const struct ir_graph *g, const struct ipu_partition *p,
		    const struct ipu_target *t, struct ipu_shard *s, struct ir_error *e)
{
	struct ir_graph *sg[IPU_PARTITION_MAX_IPUS] = { 0 };
	struct ipu_lower_info info[IPU_PARTITION_MAX_IPUS];
	int n = p->nstages, r = -1;

	memset(s, 0, sizeof(*s));
	memset(info, 0, sizeof(info));
	s->nipus = (uint32_t)n;
	/* as ipu_lower_write records it for the model on one IPU */
	s->batch_size = 1;
	if (t->batch_size)
		s->batch_size = t->batch_size;
	else if (g->ninputs && g->vals[g->inputs[0]].rank > t->batch_axis)
		s->batch_size = (uint32_t)g->vals[g->inputs[0]].dims[t->batch_axis];
	for (int k = 0; k < n; k++) {
		sg[k] = ipu_partition_stage(g, p, k, e);
		if (!sg[k] || ipu_lower_image(&sg[k], 1, t, &s->image[k], &s->len[k], &info[k], e)) {
			char m[IR_ERROR_LEN];

			snprintf(m, sizeof(m), "%s", e->msg);
			ir_err(e, "IPU %d of %d (nodes %d to %d): %s", k, n, p->first[k],
			       p->first[k + 1] - 1, m);
			goto out;
		}
		{
			const struct ipu_graph_stats *k1 = &info[k].stats;
			struct ipu_graph_stats *all = &s->stats;
			struct ipu_graph_stats sum = *all;

			if (!k || k1->mem_max > all->mem_max)
				*all = *k1;
			all->compute_sets = sum.compute_sets + k1->compute_sets;
			all->vertices = sum.vertices + k1->vertices;
			all->exchanges = sum.exchanges + k1->exchanges;
			all->copies = sum.copies + k1->copies;
			all->steps = sum.steps + k1->steps;
			all->streams = sum.streams + k1->streams;
			all->exchange_bytes = sum.exchange_bytes + k1->exchange_bytes;
			all->image_bytes = sum.image_bytes + k1->image_bytes;
		}
	}
	for (int b = 0; b < n; b++) {
		uint32_t nb;
		const struct ipuef_anchor *ab = ipu_lower_anchors(&info[b], &nb);

		/* every stream of a stage is one of its anchors */
		s->nstreams[b] = nb;

		for (int i = 0; i < sg[b]->ninputs; i++) {
			const char *name = sg[b]->vals[sg[b]->inputs[i]].name;
			uint32_t ds, ss = 0, na;
			char sent[IPUEF_MAX_NAME + 16];
			int a = -1;

			if (stream_of(ab, nb, name, &ds)) {
				ir_err(e, "IPU %d: no stream for input '%s'", b, name);
				goto out;
			}
			if (strlen(name) + 16 > sizeof(sent)) {
				ir_err(e, "IPU %d: input '%.64s...' has a name of more than %u bytes", b,
				       name, IPUEF_MAX_NAME);
				goto out;
			}
			/* a value several IPUs read leaves its sender once per reader
			 * (ipu_partition_stage): this reader's copy, if any */
			snprintf(sent, sizeof(sent), "%s@ipu%d", name, b);
			for (int k = 0; k < b && a < 0; k++) {
				const struct ipuef_anchor *aa = ipu_lower_anchors(&info[k], &na);

				if (!stream_of(aa, na, sent, &ss))
					a = k;
			}
			if (a < 0 && is_input(g, name)) {
				if (add_io(&s->inputs, &s->ninputs, (uint32_t)b, ds, name,
					   anchor_of(ab, nb, name), e))
					goto out;
				continue;
			}
			/* else the earlier stage that makes it, under its own name */
			for (int k = 0; k < b && a < 0; k++)
				for (int o = 0; o < sg[k]->noutputs && a < 0; o++)
					if (!strcmp(sg[k]->vals[sg[k]->outputs[o]].name, name)) {
						const struct ipuef_anchor *aa =
							ipu_lower_anchors(&info[k], &na);

						snprintf(sent, sizeof(sent), "%s", name);
						a = stream_of(aa, na, sent, &ss) ? -2 : k;
					}
			if (a < 0) {
				ir_err(e, "IPU %d: input '%s' is made by no earlier IPU", b, name);
				goto out;
			}
			{
				struct ipu_shard_link *l = grow(s->links, s->nlinks, sizeof(*l));
				char *nm = strdup(sent);

				if (l)
					s->links = l;
				if (!l || !nm) {
					free(nm);
					ir_err(e, "out of memory");
					goto out;
				}
				l[s->nlinks++] = (struct ipu_shard_link){
					(uint32_t)a, ss, (uint32_t)b, ds, nm,
					ipuef_anchor_bytes(anchor_of(ab, nb, name))
				};
			}
		}
		for (int o = 0; o < sg[b]->noutputs; o++) {
			const char *name = sg[b]->vals[sg[b]->outputs[o]].name;
			uint32_t sid;

			if (!is_output(g, name))
				continue;
			if (stream_of(ab, nb, name, &sid)) {
				ir_err(e, "IPU %d: no stream for output '%s'", b, name);
				goto out;
			}
			if (add_io(&s->outputs, &s->noutputs, (uint32_t)b, sid, name,
				   anchor_of(ab, nb, name), e))
				goto out;
		}
	}
	r = 0;
out:
	for (int k = 0; k < n; k++) {
		ir_graph_free(sg[k]);
		ipu_lower_info_free(&info[k]);
	}
	return r;
}

void ipu_shard_free(struct ipu_shard *s)
{
	for (uint32_t k = 0; k < s->nipus; k++)
		free(s->image[k]);
	for (uint32_t i = 0; i < s->ninputs; i++)
		free(s->inputs[i].name);
	for (uint32_t i = 0; i < s->noutputs; i++)
		free(s->outputs[i].name);
	for (uint32_t i = 0; i < s->nlinks; i++)
		free(s->links[i].name);
	free(s->inputs);
	free(s->outputs);
	free(s->links);
	memset(s, 0, sizeof(*s));
}
