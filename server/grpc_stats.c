// SPDX-License-Identifier: MIT
/*
 * grpc_stats.c - Triton's ModelStatistics RPC (server/grpc/
 * grpc_service_stats.proto): the statistics extension's counters (stats.c)
 * for every loaded version, one model's versions, or one version, the
 * same numbers as GET /v2/models[/M[/versions/V]]/stats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_server.h"
#include "kserve/grpc_service_stats.pb-c.h"
#include "serve.h"
#include "stats.h"

#define MAX_STAT_MODELS 1024

/* What one version's message points at, freed after packing. */
struct one {
	Inference__ModelStatistics ms;
	Inference__InferStatistics is;
	Inference__StatisticDuration d[6];
	Inference__StatisticDuration *pd;	/* 3 per batch size */
	Inference__InferBatchStatistics *bs;
	Inference__InferBatchStatistics **bp;
	char ver[24];
};

static void duration(Inference__StatisticDuration *d, const struct srv_duration *s)
{
	inference__statistic_duration__init(d);
	d->count = s->count;
	d->ns = s->ns;
}

/* Fill o from m; -1 out of memory. */
static int fill(struct one *o, struct srv_model *m)
{
	struct srv_metrics met;
	struct srv_stats st;
	uint32_t q, ex, i;

	if (srv_model_stats(m, &met, &st, &q, &ex))
		return -1;
	inference__model_statistics__init(&o->ms);
	inference__infer_statistics__init(&o->is);
	snprintf(o->ver, sizeof(o->ver), "%lld", (long long)m->version);
	o->ms.name = m->name;
	o->ms.version = o->ver;
	o->ms.last_inference = st.last_inference_ms;
	o->ms.inference_count = met.inferences;
	o->ms.execution_count = met.executions;
	duration(&o->d[0], &st.success);
	duration(&o->d[1], &st.fail);
	duration(&o->d[2], &st.queue);
	duration(&o->d[3], &st.compute_input);
	duration(&o->d[4], &st.compute_infer);
	duration(&o->d[5], &st.compute_output);
	o->is.success = &o->d[0];
	o->is.fail = &o->d[1];
	o->is.queue = &o->d[2];
	o->is.compute_input = &o->d[3];
	o->is.compute_infer = &o->d[4];
	o->is.compute_output = &o->d[5];
	o->ms.inference_stats = &o->is;
	o->pd = calloc(st.nbatch ? 3u * st.nbatch : 1, sizeof(*o->pd));
	o->bs = calloc(st.nbatch ? st.nbatch : 1, sizeof(*o->bs));
	o->bp = calloc(st.nbatch ? st.nbatch : 1, sizeof(*o->bp));
	if (!o->pd || !o->bs || !o->bp) {
		srv_stats_fini(&st);
		return -1;
	}
	for (i = 0; i < st.nbatch; i++) {
		inference__infer_batch_statistics__init(&o->bs[i]);
		o->bs[i].batch_size = st.batch[i].batch_size;
		duration(&o->pd[3 * i], &st.batch[i].compute_input);
		duration(&o->pd[3 * i + 1], &st.batch[i].compute_infer);
		duration(&o->pd[3 * i + 2], &st.batch[i].compute_output);
		o->bs[i].compute_input = &o->pd[3 * i];
		o->bs[i].compute_infer = &o->pd[3 * i + 1];
		o->bs[i].compute_output = &o->pd[3 * i + 2];
		o->bp[i] = &o->bs[i];
	}
	o->ms.n_batch_stats = st.nbatch;
	o->ms.batch_stats = o->bp;
	srv_stats_fini(&st);
	return 0;
}

int srv_grpc_model_statistics(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
			      size_t *out_len, char *err, size_t errlen)
{
	Inference__ModelStatisticsRequest *q = inference__model_statistics_request__unpack(NULL, len, msg);
	Inference__ModelStatisticsResponse a = INFERENCE__MODEL_STATISTICS_RESPONSE__INIT;
	Inference__ModelStatistics **list = NULL;
	struct srv_model **ms = NULL;
	struct one *ones = NULL;
	uint32_t n = 0, i;
	int rc = 500;

	if (!q) {
		snprintf(err, errlen, "the request is not a ModelStatisticsRequest protobuf message");
		return 400;
	}
	snprintf(err, errlen, "out of memory");
	ms = malloc(MAX_STAT_MODELS * sizeof(*ms));
	if (!ms)
		goto out;
	if (!*q->name) {
		n = srv_repo_all(h->repo, ms, MAX_STAT_MODELS);
	} else if (*q->version) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(q->version, &end, 10);
		if (*q->version < '0' || *q->version > '9' || errno || *end) {
			snprintf(err, errlen, "version '%.40s' must be a whole number", q->version);
			rc = 400;
			goto out;
		}
		ms[0] = srv_repo_get(h->repo, q->name, v, err, errlen);
		if (!ms[0]) {
			rc = 404;
			goto out;
		}
		n = 1;
	} else {
		n = srv_repo_versions(h->repo, q->name, ms, MAX_STAT_MODELS);
		if (!n) {
			/* the repository's own message: not found, or not loaded and why */
			ms[0] = srv_repo_get(h->repo, q->name, -1, err, errlen);
			if (!ms[0]) {
				rc = 404;
				goto out;
			}
			n = 1;
		}
	}
	ones = calloc(n ? n : 1, sizeof(*ones));
	list = calloc(n ? n : 1, sizeof(*list));
	if (!ones || !list)
		goto out;
	for (i = 0; i < n; i++) {
		if (fill(&ones[i], ms[i]))
			goto out;
		list[i] = &ones[i].ms;
	}
	a.n_model_stats = n;
	a.model_stats = list;
	*out_len = protobuf_c_message_get_packed_size(&a.base);
	*out = malloc(*out_len ? *out_len : 1);
	if (!*out)
		goto out;
	protobuf_c_message_pack(&a.base, *out);
	rc = 0;
out:
	for (i = 0; ones && i < n; i++) {
		free(ones[i].pd);
		free(ones[i].bs);
		free(ones[i].bp);
	}
	for (i = 0; i < n; i++)
		srv_repo_put(h->repo, ms[i]);
	free(ones);
	free(list);
	free(ms);
	inference__model_statistics_request__free_unpacked(q, NULL);
	return rc;
}
