/* SPDX-License-Identifier: MIT */
/*
 * gen_internal.h - what the generation loops (generate.c: one sequence;
 * gen_slots.c: one per cache slot) share: the host sampler.
 */
#ifndef IPURT_GEN_INTERNAL_H
#define IPURT_GEN_INTERNAL_H

#include <stdint.h>

#include "ipu/runtime.h"

/* One candidate token of a sampling step. */
struct gen_cand {
	float p;
	uint32_t id;
};

/*
 * Sample from softmax(logits / temperature) restricted to the top_k most
 * likely tokens (0: all) and then to the fewest whose probabilities add
 * up to top_p (>= 1: all), drawing from the splitmix64 stream *rng.  c
 * has room for vocab entries.
 */
int64_t gen_sample(const float *logits, uint64_t vocab, const struct ipurt_generate_opts *o,
		   struct gen_cand *c, uint64_t *rng);

/* ipurt_generate on a decoder of several cache slots: the sequence in
 * one slot through the step API, the same callbacks and stats. */
int gen_slots_generate(struct ipurt_runner *r, const int64_t *prompt, uint32_t nprompt,
		       const struct ipurt_generate_opts *o, ipurt_token_fn fn, void *ctx,
		       struct ipurt_generate_stats *st, char *err, size_t errlen);

#endif /* IPURT_GEN_INTERNAL_H */
