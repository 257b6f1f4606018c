// SPDX-License-Identifier: MIT
/*
 * stats.c - the counters of Triton's statistics extension (stats.h),
 * updated by the scheduler under the model's lock; stats_json.c writes
 * them out.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

const char *const srv_fail_reason_names[SRV_FAIL_REASONS] = {
	"REJECTED", "CANCELED", "BACKEND", "OTHER",
};

void srv_stats_fini(struct srv_stats *s)
{
	free(s->batch);
	s->batch = NULL;
	s->nbatch = s->cap = 0;
}

int srv_stats_copy(struct srv_stats *dst, const struct srv_stats *src)
{
	*dst = *src;
	dst->batch = NULL;
	dst->cap = src->nbatch;
	if (!src->nbatch)
		return 0;
	dst->batch = malloc(src->nbatch * sizeof(*dst->batch));
	if (!dst->batch) {
		dst->nbatch = dst->cap = 0;
		return -1;
	}
	memcpy(dst->batch, src->batch, src->nbatch * sizeof(*dst->batch));
	return 0;
}

static void add(struct srv_duration *d, uint64_t ns)
{
	d->count++;
	d->ns += ns;
}

void srv_stats_batch(struct srv_stats *s, uint64_t rows, uint64_t in_ns, uint64_t infer_ns,
		     uint64_t out_ns)
{
	struct srv_batch_stat *b;
	uint32_t i;

	/* few distinct sizes (up to max_batch_size): a sorted table */
	for (i = 0; i < s->nbatch && s->batch[i].batch_size < rows; i++)
		;
	if (i == s->nbatch || s->batch[i].batch_size != rows) {
		if (s->nbatch == s->cap) {
			uint32_t cap = s->cap ? s->cap * 2 : 8;
			struct srv_batch_stat *nb = realloc(s->batch, cap * sizeof(*nb));

			if (!nb) {
				s->batch_dropped++;
				return;
			}
			s->batch = nb;
			s->cap = cap;
		}
		memmove(&s->batch[i + 1], &s->batch[i], (s->nbatch - i) * sizeof(*s->batch));
		memset(&s->batch[i], 0, sizeof(*s->batch));
		s->batch[i].batch_size = rows;
		s->nbatch++;
	}
	b = &s->batch[i];
	add(&b->compute_input, in_ns);
	add(&b->compute_infer, infer_ns);
	add(&b->compute_output, out_ns);
}

static void stamp(struct srv_stats *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	s->last_inference_ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void srv_stats_success(struct srv_stats *s, uint64_t total_ns, uint64_t queue_ns, uint64_t in_ns,
		       uint64_t infer_ns, uint64_t out_ns)
{
	add(&s->success, total_ns);
	add(&s->queue, queue_ns);
	add(&s->compute_input, in_ns);
	add(&s->compute_infer, infer_ns);
	add(&s->compute_output, out_ns);
	stamp(s);
}

void srv_stats_failure(struct srv_stats *s, enum srv_fail_reason why, uint64_t ns)
{
	add(&s->fail, ns);
	if ((unsigned)why < SRV_FAIL_REASONS)
		s->fail_reason[why]++;
	stamp(s);
}
