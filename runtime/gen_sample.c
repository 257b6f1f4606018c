// SPDX-License-Identifier: MIT
/*
 * gen_sample.c - the host sampler of the generation loops: temperature,
 * top-k and top-p over one row of logits, drawn with ipu/sample.h, the
 * sampler the device's SAMPLE codelet runs too: the same logits, seed and
 * counter give the same token on either side (Python's Runner.generate()
 * and ipu-run use this one when the model has no sampling program).
 */
#include <stdlib.h>

#include "ipu/sample.h"
#include "gen_internal.h"

/* One candidate token of a sampling step. */
struct gen_cand {
	float x;
	uint32_t id;
};

/* Logits descending, equal ones by the lower id: the device's TopK order. */
static int by_logit_desc(const void *a, const void *b)
{
	const struct gen_cand *p = a, *q = b;

	if (p->x != q->x)
		return p->x < q->x ? 1 : -1;
	return (p->id > q->id) - (p->id < q->id);
}

size_t gen_sample_work(uint64_t vocab)
{
	return (size_t)vocab * (sizeof(struct gen_cand) + sizeof(float));
}

int64_t gen_sample(const float *logits, uint64_t vocab, const struct ipurt_generate_opts *o, void *work,
		   uint64_t counter)
{
	struct gen_cand *c = work;
	float *x = (float *)(c + vocab);
	uint64_t n = vocab;

	for (uint64_t v = 0; v < vocab; v++)
		c[v] = (struct gen_cand){ logits[v], (uint32_t)v };
	qsort(c, vocab, sizeof(*c), by_logit_desc);
	if (o->top_k && o->top_k < n)
		n = o->top_k;
	for (uint64_t k = 0; k < n; k++)
		x[k] = c[k].x;
	return c[ipu_sample_pick(x, (uint32_t)n, o->temperature, o->top_p,
				 ipu_sample_uniform(o->seed, counter))].id;
}
