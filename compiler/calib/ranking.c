/* SPDX-License-Identifier: MIT */
/*
 * ranking.c - the sensitivity ranking of a whole graph, kept by node name
 * so that a pass working on a rewritten copy of the graph (the lowering's,
 * where a Gemm became "NAME/MatMul") finds its layers' scores.
 */
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"

void ipu_calib_ranking_free(struct ipu_calib_ranking *r)
{
	for (int i = 0; r->names && i < r->n; i++)
		free(r->names[i]);
	free(r->names);
	free(r->score);
	memset(r, 0, sizeof(*r));
}

int ipu_calib_rank_graph(const struct ipu_calib *c, const struct ir_graph *g,
			 const struct ipu_calib_format *act,
			 const struct ipu_calib_format *weight, int weight_absmax,
			 struct ipu_calib_ranking *r, struct ir_error *e)
{
	int *nodes = calloc((size_t)g->nnodes + 1, sizeof(int));
	int *order = malloc((size_t)(g->nnodes + 1) * sizeof(int));
	int n = 0;

	memset(r, 0, sizeof(*r));
	r->names = calloc((size_t)g->nnodes + 1, sizeof(char *));
	r->score = calloc((size_t)g->nnodes + 1, sizeof(double));
	if (!nodes || !order || !r->names || !r->score)
		goto oom;
	for (int i = 0; i < g->nnodes; i++)
		if (ipu_calib_layer_activation(g, i) >= 0)
			nodes[n++] = i;
	if (ipu_calib_rank_layers(c, g, nodes, n, act, weight, weight_absmax, order, r->score, e))
		goto fail;
	for (int i = 0; i < n; i++) {
		const struct ir_node *nd = &g->nodes[nodes[i]];

		if (!(r->names[i] = strdup(nd->name && nd->name[0] ? nd->name :
					   g->vals[nd->out[0]].name)))
			goto oom;
		r->n++;
	}
	free(nodes);
	free(order);
	return 0;
oom:
	ir_err(e, "out of memory");
fail:
	free(nodes);
	free(order);
	ipu_calib_ranking_free(r);
	return -1;
}

int ipu_calib_ranking_score(const struct ipu_calib_ranking *r, const char *node,
			    double *score)
{
	size_t best = 0;
	int found = 0;

	for (int i = 0; i < r->n; i++) {
		size_t len = strlen(r->names[i]);

		if (strncmp(node, r->names[i], len) || (node[len] && node[len] != '/'))
			continue;
		if (!found || len > best) {
			best = len;
			*score = r->score[i];
			found = 1;
		}
	}
	return found;
}
