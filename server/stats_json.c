// SPDX-License-Identifier: MIT
/*
 * stats_json.c - the answer of GET /v2/models[/M[/versions/V]]/stats in
 * Triton's schema (docs/protocol/extension_statistics.md) from the
 * counters of stats.c.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_budget.h"
#include "serve.h"
#include "stats.h"

static json_t *duration(const struct srv_duration *d)
{
	return json_pack("{s:I,s:I}", "count", (json_int_t)d->count, "ns", (json_int_t)d->ns);
}

/* One $model_stat; NULL out of memory. */
static json_t *model_stat(struct srv_model *m)
{
	static const struct srv_duration none;
	struct srv_metrics met;
	struct srv_stats st;
	uint32_t q, ex, i;
	json_t *batch, *j;
	char ver[32];

	if (srv_model_stats(m, &met, &st, &q, &ex))
		return NULL;
	batch = json_array();
	for (i = 0; batch && i < st.nbatch; i++) {
		const struct srv_batch_stat *b = &st.batch[i];

		if (json_array_append_new(batch, json_pack("{s:I,s:o,s:o,s:o}", "batch_size",
							   (json_int_t)b->batch_size, "compute_input",
							   duration(&b->compute_input), "compute_infer",
							   duration(&b->compute_infer), "compute_output",
							   duration(&b->compute_output)))) {
			json_decref(batch);
			batch = NULL;
		}
	}
	snprintf(ver, sizeof(ver), "%lld", (long long)m->version);
	/* no response cache: its hits and misses stay 0, present for clients that read them */
	j = json_pack("{s:s,s:s,s:I,s:I,s:I,s:{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o},s:o}", "name",
		      m->name, "version", ver, "last_inference", (json_int_t)st.last_inference_ms,
		      "inference_count", (json_int_t)met.inferences, "execution_count",
		      (json_int_t)met.executions, "inference_stats", "success", duration(&st.success),
		      "fail", duration(&st.fail), "queue", duration(&st.queue), "compute_input",
		      duration(&st.compute_input), "compute_infer", duration(&st.compute_infer),
		      "compute_output", duration(&st.compute_output), "cache_hit", duration(&none),
		      "cache_miss", duration(&none), "batch_stats", batch);
	srv_stats_fini(&st);
	return j;
}

#define MAX_STAT_MODELS 1024

char *srv_stats_json(struct srv_repo *r, const char *model, int64_t version, size_t *len,
		     int *status, char *err, size_t errlen)
{
	struct srv_model **ms = malloc(MAX_STAT_MODELS * sizeof(*ms));
	json_t *list = json_array(), *root = NULL;
	uint32_t n = 0, i;
	char *text = NULL;

	*status = 500;
	snprintf(err, errlen, "out of memory");
	if (!ms || !list)
		goto out;
	if (!model) {
		n = srv_repo_all(r, ms, MAX_STAT_MODELS);
	} else if (version >= 0) {
		ms[0] = srv_repo_get(r, model, version, err, errlen);
		if (!ms[0]) {
			*status = 404;
			goto out;
		}
		n = 1;
	} else {
		n = srv_repo_versions(r, model, ms, MAX_STAT_MODELS);
		if (!n) {
			/* the repository's own message (not found, or not loaded and why) */
			ms[0] = srv_repo_get(r, model, -1, err, errlen);
			if (ms[0])
				n = 1;
			else {
				*status = 404;
				goto out;
			}
		}
	}
	for (i = 0; i < n; i++) {
		json_t *s = list ? model_stat(ms[i]) : NULL;

		if (!s || json_array_append_new(list, s)) {
			json_decref(list);
			list = NULL;
		}
	}
	if (!list)
		goto out;
	root = json_pack("{s:o}", "model_stats", list);
	list = NULL;
	text = root ? srv_json_text(root, JSON_COMPACT | JSON_ENSURE_ASCII, len) : NULL;
	if (text)
		*status = 200;
out:
	for (i = 0; i < n; i++)
		srv_repo_put(r, ms[i]);
	json_decref(list);
	json_decref(root);
	free(ms);
	return text;
}
