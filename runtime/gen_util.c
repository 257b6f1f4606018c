// SPDX-License-Identifier: MIT
/*
 * gen_util.c - the plumbing both generation loops use around a decode
 * step: anchor sizes, token and position buffers of either integer type,
 * tensors over anchors, the clock their stats read.
 */
#include <string.h>
#include <time.h>

#include "gen_internal.h"
#include "ipu/sample.h"

uint64_t gen_elems(const struct ipuef_anchor *a)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < a->rank; d++)
		n *= a->dims[d];
	return n;
}

int gen_is_int(uint32_t dt)
{
	return dt == IPURT_DT_I64 || dt == IPURT_DT_I32;
}

void gen_put_int(void *p, uint32_t dt, uint32_t i, int64_t v)
{
	if (dt == IPURT_DT_I64) {
		memcpy((uint8_t *)p + 8 * (size_t)i, &v, 8);
	} else {
		int32_t w = (int32_t)v;

		memcpy((uint8_t *)p + 4 * (size_t)i, &w, 4);
	}
}

int64_t gen_get_int(const void *p, uint32_t dt, uint32_t i)
{
	int64_t v;
	int32_t w;

	if (dt == IPURT_DT_I64) {
		memcpy(&v, (const uint8_t *)p + 8 * (size_t)i, 8);
		return v;
	}
	memcpy(&w, (const uint8_t *)p + 4 * (size_t)i, 4);
	return w;
}

uint64_t gen_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gen_tensor_of(const struct ipuef_anchor *a, void *data, struct ipurt_tensor *t)
{
	memset(t, 0, sizeof(*t));
	t->name = a->name;
	t->dtype = a->dtype;
	t->rank = a->rank;
	memcpy(t->dims, a->dims, sizeof(a->dims));
	t->data = data;
}

int gen_sample_on_device(const struct ipurt_generate_opts *o, int has_sample, uint64_t vocab)
{
	uint64_t k = vocab < IPU_SAMPLE_MAX_K ? vocab : IPU_SAMPLE_MAX_K;

	return has_sample && o->temperature > 0 && !o->want_logits && !o->host_sampling &&
	       ((o->top_k >= 1 && o->top_k <= k) || vocab <= IPU_SAMPLE_MAX_K);
}
