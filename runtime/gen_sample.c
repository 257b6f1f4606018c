// SPDX-License-Identifier: MIT
/*
 * gen_sample.c - the host sampler of the generation loops: temperature,
 * top-k and top-p over one row of logits, from a splitmix64 stream the
 * caller seeds (the same seed, the same tokens; Python's Runner.generate()
 * and ipu-run use this one).
 */
#include <math.h>
#include <stdlib.h>

#include "gen_internal.h"

/* splitmix64: the sampler's generator, seeded by the caller. */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int by_p_desc(const void *a, const void *b)
{
	const struct gen_cand *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? 1 : -1;
	return (x->id > y->id) - (x->id < y->id);	/* ties: the lower id first */
}

int64_t gen_sample(const float *logits, uint64_t vocab, const struct ipurt_generate_opts *o,
		   struct gen_cand *c, uint64_t *rng)
{
	uint64_t n = vocab, k;
	double sum = 0, acc = 0, u, top;

	for (uint64_t v = 0; v < vocab; v++)
		c[v] = (struct gen_cand){ logits[v] / o->temperature, (uint32_t)v };
	qsort(c, vocab, sizeof(*c), by_p_desc);
	if (o->top_k && o->top_k < n)
		n = o->top_k;
	top = c[0].p;	/* the largest: every weight exp(x - top) <= 1 */
	for (k = 0; k < n; k++) {
		c[k].p = (float)exp((double)c[k].p - top);
		sum += c[k].p;
	}
	if (o->top_p > 0 && o->top_p < 1) {
		for (k = 0; k < n; k++) {
			acc += c[k].p / sum;
			if (acc >= o->top_p) {
				n = k + 1;
				break;
			}
		}
		for (sum = 0, k = 0; k < n; k++)
			sum += c[k].p;
	}
	u = (double)(next_random(rng) >> 11) * 0x1.0p-53 * sum;
	for (acc = 0, k = 0; k + 1 < n; k++) {
		acc += c[k].p;
		if (u < acc)
			break;
	}
	return c[k].id;
}
