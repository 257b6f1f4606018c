/* SPDX-License-Identifier: MIT */
/*
 * sample.h - the token sampler of generation, defined once for the host
 * (runtime/gen_sample.c) and the device (the SAMPLE codelet), so that both
 * draw the same token from the same logits and seed.
 *
 * A draw is counter-based: the uniform of a step is a pure function of
 * the caller's seed and a counter (the position of the step whose logits
 * are sampled), so a device step needs no generator state carried from
 * one step to the next, and a sequence draws the same tokens whichever
 * cache slot or path (host or device) samples it.
 *
 * Not installed: the engine's and the runtime's own (its inline functions
 * need libm, which a program of the public API need not link).
 */
#ifndef IPU_SAMPLE_H
#define IPU_SAMPLE_H

#include <math.h>
#include <stdint.h>

/* Candidates the device keeps per row (the top-k it samples among): a
 * device sampler serves top_k 1..IPU_SAMPLE_MAX_K. */
#define IPU_SAMPLE_MAX_K 64u

/*
 * Uniform in [0, 1) with 53 random bits: output number counter (from 0) of
 * the splitmix64 stream seeded with seed.
 */
static inline double ipu_sample_uniform(uint64_t seed, uint64_t counter)
{
	uint64_t z = seed + (counter + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

/*
 * The drawn candidate among x[0..n): the n most likely tokens' logits in
 * descending order (equal logits: the lower token id first), n already cut
 * to top_k.  Weights exp(x / temperature - max) in double, x / temperature
 * rounded to float first; top_p in (0, 1) keeps the fewest leading
 * candidates whose probabilities add up to top_p; u (ipu_sample_uniform)
 * scaled by the kept weights' sum picks the first candidate whose running
 * sum exceeds it.  temperature <= 0 (or NaN) or n <= 1: candidate 0, the
 * greedy choice.
 */
static inline uint32_t ipu_sample_pick(const float *x, uint32_t n, float temperature, float top_p,
				       double u)
{
	double top, sum = 0, acc = 0;
	uint32_t k;

	if (!(temperature > 0) || n <= 1)
		return 0;
	top = (double)(x[0] / temperature);
	for (k = 0; k < n; k++)
		sum += exp((double)(x[k] / temperature) - top);
	if (top_p > 0 && top_p < 1) {
		for (k = 0; k < n; k++) {
			acc += exp((double)(x[k] / temperature) - top) / sum;
			if (acc >= top_p) {
				n = k + 1;
				break;
			}
		}
		for (sum = 0, k = 0; k < n; k++)
			sum += exp((double)(x[k] / temperature) - top);
	}
	u *= sum;
	for (acc = 0, k = 0; k + 1 < n; k++) {
		acc += exp((double)(x[k] / temperature) - top);
		if (u < acc)
			break;
	}
	return k;
}

#endif /* IPU_SAMPLE_H */
