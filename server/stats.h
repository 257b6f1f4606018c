/* SPDX-License-Identifier: MIT */
/*
 * stats.h - Triton's statistics extension for a model version: durations
 * per request and per batch size, kept under the model's lock
 * (server/stats.c), read as GET /v2/models[/M[/versions/V]]/stats and as
 * the nv_inference_* series of /metrics.
 */
#ifndef IPU_SERVE_STATS_H
#define IPU_SERVE_STATS_H

#include <stddef.h>
#include <stdint.h>

/* A count and the nanoseconds summed over it. */
struct srv_duration {
	uint64_t count, ns;
};

/* Executions of one batch size (rows; 1 for an unbatched model). */
struct srv_batch_stat {
	uint64_t batch_size;
	struct srv_duration compute_input, compute_infer, compute_output;
};

/* Why a request failed, as the reason label of nv_inference_request_failure. */
enum srv_fail_reason {
	SRV_FAIL_REJECTED = 0,		/* not queued: the queue was full or the model unloading */
	SRV_FAIL_CANCELED = 1,		/* withdrawn from the queue (the client went away) */
	SRV_FAIL_BACKEND = 2,		/* the execution failed */
	SRV_FAIL_OTHER = 3,		/* the request was invalid for the model */
	SRV_FAIL_REASONS = 4,
};
extern const char *const srv_fail_reason_names[SRV_FAIL_REASONS];

/*
 * Every duration but fail's counts the successful requests only (as
 * Triton), so success.count == queue.count == compute_*.count.
 */
struct srv_stats {
	struct srv_duration success, fail, queue, compute_input, compute_infer, compute_output;
	uint64_t fail_reason[SRV_FAIL_REASONS];
	uint64_t last_inference_ms;	/* wall clock (ms since the epoch) of the last one done */
	struct srv_batch_stat *batch;	/* ascending batch_size */
	uint32_t nbatch, cap;
	uint64_t batch_dropped;		/* executions not tabled: no memory for a new size */
};

/* Free what s holds (not s). */
void srv_stats_fini(struct srv_stats *s);
/* A deep copy (the batch table malloc'd); 0 or -1 out of memory. */
int srv_stats_copy(struct srv_stats *dst, const struct srv_stats *src);

/* One execution of rows with its three phases, in ns. */
void srv_stats_batch(struct srv_stats *s, uint64_t rows, uint64_t in_ns, uint64_t infer_ns,
		     uint64_t out_ns);
/*
 * A finished request: total ns from queued to done; for a success also its
 * queue wait and its share of the three phases of the execution it ran in.
 */
void srv_stats_success(struct srv_stats *s, uint64_t total_ns, uint64_t queue_ns, uint64_t in_ns,
		       uint64_t infer_ns, uint64_t out_ns);
void srv_stats_failure(struct srv_stats *s, enum srv_fail_reason why, uint64_t ns);

#endif

struct srv_repo;
/*
 * The statistics extension's answer for every loaded version of every
 * model (model NULL), of one model (version < 0), or of one version:
 * {"model_stats": [...]} as malloc'd JSON text.  NULL with *status 404
 * (no such model or version) or 500 (out of memory) and err.
 */
char *srv_stats_json(struct srv_repo *r, const char *model, int64_t version, size_t *len,
		     int *status, char *err, size_t errlen);
