/* SPDX-License-Identifier: MIT */
/*
 * gen_internal.h - what the generation loops (generate.c: one sequence;
 * gen_slots.c: one per cache slot) share: the host sampler (gen_sample.c)
 * and the step's plumbing (gen_util.c).
 */
#ifndef IPURT_GEN_INTERNAL_H
#define IPURT_GEN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ipuef.h"
#include "ipu/runtime.h"

/*
 * Sample from softmax(logits / temperature) restricted to the top_k most
 * likely tokens (0: all) and then to the fewest whose probabilities add
 * up to top_p (>= 1: all), drawing ipu_sample_uniform(seed, counter) (the
 * counter: the position of the step whose logits these are).  work has
 * gen_sample_work(vocab) bytes.
 */
size_t gen_sample_work(uint64_t vocab);
int64_t gen_sample(const float *logits, uint64_t vocab, const struct ipurt_generate_opts *o, void *work,
		   uint64_t counter);

/* Whether sequence options o sample on the device of a model whose
 * sampling program exists (has_sample) over a vocabulary of vocab. */
int gen_sample_on_device(const struct ipurt_generate_opts *o, int has_sample, uint64_t vocab);

/* Elements of an anchor (the product of its dims). */
uint64_t gen_elems(const struct ipuef_anchor *a);
/* Whether dt is an integer type a token or position may have (i32, i64). */
int gen_is_int(uint32_t dt);
/* Element i of an i64 or i32 buffer, written or read as int64_t. */
void gen_put_int(void *p, uint32_t dt, uint32_t i, int64_t v);
int64_t gen_get_int(const void *p, uint32_t dt, uint32_t i);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gen_now_ns(void);
/* t describes anchor a's tensor held in data. */
void gen_tensor_of(const struct ipuef_anchor *a, void *data, struct ipurt_tensor *t);

/* A decoder's prefill program (IPUEF_PROGRAM_PREFILL): its anchors and
 * tokens per run (0: the model has none). */
struct gen_prefill {
	const struct ipuef_anchor *ids, *pos, *next;
	uint32_t tokens;
};
int gen_prefill_find(const struct ipuef_file *f, struct gen_prefill *pf, char *err, size_t errlen);
/*
 * Feeds prompt[0..n) of a new sequence through the prefill program, T
 * tokens a run at positions 0.., the last run padded (the pad tokens'
 * cache rows lie after the prompt, where the next step writes before it
 * reads), as long as a run's positions stay inside the cache of
 * `positions`.  *done: prompt tokens taken (the caller steps the rest);
 * when *done == n, *next is the greedy token after prompt[n - 1].
 */
int gen_prefill_run(struct ipurt_runner *r, const struct gen_prefill *pf, const int64_t *prompt,
		    uint32_t n, uint64_t positions, uint32_t *done, int64_t *next, uint32_t *runs,
		    char *err, size_t errlen);

/* ipurt_generate on a decoder of several cache slots: the sequence in
 * one slot through the step API, the same callbacks and stats. */
int gen_slots_generate(struct ipurt_runner *r, const int64_t *prompt, uint32_t nprompt,
		       const struct ipurt_generate_opts *o, ipurt_token_fn fn, void *ctx,
		       struct ipurt_generate_stats *st, char *err, size_t errlen);

#endif /* IPURT_GEN_INTERNAL_H */
