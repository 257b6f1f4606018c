/* SPDX-License-Identifier: MIT */
/*
 * lower_tokens.c - a decoder's second Main without the logits' stream.
 * A decode step of GPT-2 small streams 201 KB of logits for an 8-byte
 * token; a caller that only wants the greedy token runs this program
 * instead.  Both programs share one sequence of steps (the inputs' copies,
 * every op, the states' updates), so the executable holds the model's code
 * once, and differ only in which outputs they stream.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

static int find_out(const struct ir_graph *g, const char *name)
{
	for (int j = 0; j < g->noutputs; j++)
		if (!strcmp(g->vals[g->outputs[j]].name, name))
			return j;
	return -1;
}

int lw_tokens_begin(struct lw_tokens *k, struct ipu_graph *gb, const struct ir_graph *g,
		    const int *in_of_out, ipu_step main, uint32_t first_anchor, struct ir_error *e)
{
	int state = 0;

	memset(k, 0, sizeof(*k));
	k->gb = gb;
	k->main = main;
	k->body = IPU_GRAPH_INVALID;
	k->first_anchor = first_anchor;
	for (int j = 0; j < g->noutputs; j++)
		state |= in_of_out[j] >= 0;
	if (!state || find_out(g, "logits") < 0 || find_out(g, LW_NEXT_TOKEN) < 0)
		return 0;
	k->body = ipu_step_sequence(gb);
	if (k->body == IPU_GRAPH_INVALID)
		return ir_err(e, "graph builder: %s", ipu_graph_error(gb) ? ipu_graph_error(gb) : "failed");
	return 0;
}

int lw_tokens_output(struct lw_tokens *k, const char *name, ipu_step sc, struct ir_error *e)
{
	if (k->n == k->cap) {
		uint32_t cap = k->cap ? 2 * k->cap : 8;
		ipu_step *s = realloc(k->sc, cap * sizeof(*s));
		int *l;

		if (!s)
			return ir_err(e, "out of memory");
		k->sc = s;
		l = realloc(k->is_logits, cap * sizeof(*l));
		if (!l)
			return ir_err(e, "out of memory");
		k->is_logits = l;
		k->cap = cap;
	}
	k->sc[k->n] = sc;
	k->is_logits[k->n++] = !strcmp(name, "logits");
	return 0;
}

int lw_tokens_end(struct lw_tokens *k, struct ipu_lower_anchors *as, ipu_step *tokens)
{
	ipu_step t = ipu_step_sequence(k->gb);

	if (t == IPU_GRAPH_INVALID || ipu_step_append(k->gb, k->main, k->body) ||
	    ipu_step_append(k->gb, t, k->body))
		return -1;
	for (uint32_t i = 0; i < k->n; i++) {
		if (ipu_step_append(k->gb, k->main, k->sc[i]))
			return -1;
		if (!k->is_logits[i] && ipu_step_append(k->gb, t, k->sc[i]))
			return -1;
	}
	for (uint32_t i = k->first_anchor; i < as->n; i++)
		if (strcmp(as->a[i].name, "logits"))
			as->a[i].programs |= 1ull << LW_TOKENS_PROGRAM;
	*tokens = t;
	return 0;
}

void lw_tokens_free(struct lw_tokens *k)
{
	free(k->sc);
	free(k->is_logits);
	k->sc = NULL;
	k->is_logits = NULL;
}

int lw_tokens_present(const struct ipuef_anchor *a, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].programs & (1ull << LW_TOKENS_PROGRAM))
			return 1;
	return 0;
}
