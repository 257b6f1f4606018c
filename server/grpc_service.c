// SPDX-License-Identifier: MIT
/*
 * grpc_service.c - the RPCs of KServe v2's GRPCInferenceService on
 * protobuf-c messages (server/grpc/grpc_predict_v2.proto): health,
 * metadata and ModelInfer, whose tensors (grpc_infer.c) go through the
 * same checks, scheduler and errors as the HTTP endpoints'
 * (infer_core.h); Triton's ModelStatistics and ModelConfig
 * (grpc_stats.c, grpc_config.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/status.h>

#include "cli.h"		/* IPU_STACK_VERSION */
#include "kserve/grpc_predict_v2.pb-c.h"
#include "grpc_server.h"
#include "grpc_infer.h"
#include "infer_core.h"

#define METHOD_PREFIX "/inference.GRPCInferenceService/"

int srv_grpc_code(int status)
{
	switch (status) {
	case 0: return GRPC_STATUS_OK;
	case 400:
	case 422: return GRPC_STATUS_INVALID_ARGUMENT;
	case 403: return GRPC_STATUS_PERMISSION_DENIED;
	case 404: return GRPC_STATUS_NOT_FOUND;
	case 413: return GRPC_STATUS_RESOURCE_EXHAUSTED;
	case 501: return GRPC_STATUS_UNIMPLEMENTED;
	case 503: return GRPC_STATUS_UNAVAILABLE;
	case 504: return GRPC_STATUS_DEADLINE_EXCEEDED;
	case 500: return GRPC_STATUS_INTERNAL;
	default: return GRPC_STATUS_UNKNOWN;
	}
}

static int fail(int status, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return status;
}

/* The message serialized into a malloc'd buffer. */
static int pack(const ProtobufCMessage *msg, uint8_t **out, size_t *len, char *err, size_t errlen)
{
	size_t n = protobuf_c_message_get_packed_size(msg);

	*out = malloc(n ? n : 1);
	if (!*out)
		return fail(500, err, errlen, "out of memory for a response of %zu bytes", n);
	*len = protobuf_c_message_pack(msg, *out);
	return 0;
}

/* "" is the newest loaded version, else a whole number. */
static int parse_version(const char *s, int64_t *v, char *err, size_t errlen)
{
	char *end;
	long long x;

	*v = -1;
	if (!s || !*s)
		return 0;
	if (*s < '0' || *s > '9')
		return fail(400, err, errlen, "version '%.40s' must be a whole number", s);
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end)
		return fail(400, err, errlen, "version '%.40s' must be a whole number", s);
	*v = x;
	return 0;
}

static int model_ready(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
		       size_t *out_len, char *err, size_t errlen)
{
	Inference__ModelReadyRequest *q = inference__model_ready_request__unpack(NULL, len, msg);
	Inference__ModelReadyResponse a = INFERENCE__MODEL_READY_RESPONSE__INIT;
	struct srv_model *m;
	char e2[SRV_ERR];
	int64_t v;
	int rc;

	if (!q)
		return fail(400, err, errlen, "the request is not a ModelReadyRequest protobuf message");
	rc = parse_version(q->version, &v, err, errlen);
	if (!rc) {
		/* a model not loaded is not ready: an answer, not an error */
		m = srv_repo_get(h->repo, q->name, v, e2, sizeof(e2));
		a.ready = m != NULL;
		if (m)
			srv_repo_put(h->repo, m);
		rc = pack(&a.base, out, out_len, err, errlen);
	}
	inference__model_ready_request__free_unpacked(q, NULL);
	return rc;
}

static int model_metadata(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
			  size_t *out_len, char *err, size_t errlen)
{
	Inference__ModelMetadataRequest *q = inference__model_metadata_request__unpack(NULL, len, msg);
	Inference__ModelMetadataResponse a = INFERENCE__MODEL_METADATA_RESPONSE__INIT;
	Inference__ModelMetadataResponse__TensorMetadata tm[SRV_MAX_IO], *tp[SRV_MAX_IO];
	struct srv_model *vers[SRV_MAX_VERSIONS], *m = NULL;
	struct srv_tensor_meta t[SRV_MAX_IO];
	int64_t v;
	char vs[SRV_MAX_VERSIONS][24], *vp[SRV_MAX_VERSIONS];
	uint32_t nin = 0, i, nv = 0;
	int nio, rc;

	if (!q)
		return fail(400, err, errlen, "the request is not a ModelMetadataRequest protobuf message");
	rc = parse_version(q->version, &v, err, errlen);
	if (rc)
		goto out;
	m = srv_repo_get(h->repo, q->name, v, err, errlen);
	if (!m) {
		rc = 404;
		goto out;
	}
	nio = srv_model_tensors(m, 1, t, SRV_MAX_IO, &nin);
	if (nio < 0) {
		rc = fail(500, err, errlen, "the model has more than %d inputs and outputs", SRV_MAX_IO);
		goto out;
	}
	nv = srv_repo_versions(h->repo, q->name, vers, SRV_MAX_VERSIONS);
	for (i = 0; i < nv; i++) {
		snprintf(vs[i], sizeof(vs[i]), "%lld", (long long)vers[i]->version);
		vp[i] = vs[i];
	}
	for (i = 0; i < (uint32_t)nio; i++) {
		inference__model_metadata_response__tensor_metadata__init(&tm[i]);
		tm[i].name = (char *)t[i].name;
		tm[i].datatype = (char *)srv_dtype_to_v2(t[i].dtype);
		tm[i].n_shape = t[i].rank;
		tm[i].shape = t[i].shape;
		tp[i] = &tm[i];
	}
	a.name = m->name;
	a.n_versions = nv;
	a.versions = vp;
	a.platform = "ipu_ipuef";
	a.n_inputs = nin;
	a.inputs = tp;
	a.n_outputs = (uint32_t)nio - nin;
	a.outputs = tp + nin;
	rc = pack(&a.base, out, out_len, err, errlen);
	for (i = 0; i < nv; i++)
		srv_repo_put(h->repo, vers[i]);
out:
	if (m)
		srv_repo_put(h->repo, m);
	inference__model_metadata_request__free_unpacked(q, NULL);
	return rc;
}

static int model_infer(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
		       size_t *out_len, char *err, size_t errlen)
{
	Inference__ModelInferRequest *q = inference__model_infer_request__unpack(NULL, len, msg);
	uint64_t t0 = srv_now_ns();
	struct srv_request *req = NULL;
	struct srv_model *m = NULL;
	int rc, raw = 0, queued = 0;
	int64_t v;

	if (!q)
		return fail(400, err, errlen, "the request is not a ModelInferRequest protobuf message "
			    "(%zu bytes)", len);
	if (atomic_load(&h->draining)) {
		rc = fail(503, err, errlen, "the server is shutting down");
		goto out;
	}
	rc = parse_version(q->model_version, &v, err, errlen);
	if (rc)
		goto out;
	m = srv_repo_get(h->repo, q->model_name, v, err, errlen);
	if (!m) {
		rc = 404;
		goto out;
	}
	req = srv_request_new();
	if (!req) {
		rc = fail(500, err, errlen, "out of memory");
		goto out;
	}
	rc = srv_grpc_infer_prepare(m, q, req, &raw, err, errlen);
	if (!rc) {
		queued = 1;
		rc = srv_request_run(m, req, t0, err, errlen);
	}
	if (!rc)
		rc = srv_grpc_infer_response(m, req, raw, out, out_len, err, errlen);
out:
	/* refused before its queue: counted in the statistics as HTTP's are */
	if (rc && m && !queued)
		srv_model_refused(m, rc, t0);
	srv_request_free(req);
	if (m)
		srv_repo_put(h->repo, m);
	inference__model_infer_request__free_unpacked(q, NULL);
	return rc;
}

int srv_grpc_dispatch(struct srv_http *h, const char *method, const uint8_t *msg, size_t len,
		      uint8_t **out, size_t *out_len, char *err, size_t errlen)
{
	const char *rpc;

	*out = NULL;
	*out_len = 0;
	if (strncmp(method, METHOD_PREFIX, strlen(METHOD_PREFIX)))
		return fail(501, err, errlen, "unknown service of method '%.200s': ipu-serve serves "
			    "inference.GRPCInferenceService", method);
	rpc = method + strlen(METHOD_PREFIX);
	if (!strcmp(rpc, "ModelInfer"))
		return model_infer(h, msg, len, out, out_len, err, errlen);
	if (!strcmp(rpc, "ModelMetadata"))
		return model_metadata(h, msg, len, out, out_len, err, errlen);
	if (!strcmp(rpc, "ModelReady"))
		return model_ready(h, msg, len, out, out_len, err, errlen);
	if (!strcmp(rpc, "ModelStatistics"))
		return srv_grpc_model_statistics(h, msg, len, out, out_len, err, errlen);
	if (!strcmp(rpc, "ModelConfig"))
		return srv_grpc_model_config(h, msg, len, out, out_len, err, errlen);
	if (!strcmp(rpc, "ServerLive") || !strcmp(rpc, "ServerReady")) {
		/* both requests are empty messages: anything else is malformed */
		Inference__ServerLiveRequest *q = inference__server_live_request__unpack(NULL, len, msg);
		Inference__ServerLiveResponse live = INFERENCE__SERVER_LIVE_RESPONSE__INIT;
		Inference__ServerReadyResponse ready = INFERENCE__SERVER_READY_RESPONSE__INIT;

		if (!q)
			return fail(400, err, errlen, "the request is not a %s protobuf message", rpc);
		inference__server_live_request__free_unpacked(q, NULL);
		if (rpc[6] == 'L') {
			live.live = 1;
			return pack(&live.base, out, out_len, err, errlen);
		}
		ready.ready = !atomic_load(&h->draining);
		return pack(&ready.base, out, out_len, err, errlen);
	}
	if (!strcmp(rpc, "ServerMetadata")) {
		Inference__ServerMetadataRequest *q = inference__server_metadata_request__unpack(NULL, len, msg);
		Inference__ServerMetadataResponse a = INFERENCE__SERVER_METADATA_RESPONSE__INIT;

		if (!q)
			return fail(400, err, errlen, "the request is not a ServerMetadataRequest protobuf message");
		inference__server_metadata_request__free_unpacked(q, NULL);
		a.name = "ipu-serve";
		a.version = IPU_STACK_VERSION;
		for (a.n_extensions = 0; srv_extensions[a.n_extensions]; a.n_extensions++)
			;
		a.extensions = (char **)srv_extensions;
		return pack(&a.base, out, out_len, err, errlen);
	}
	return fail(501, err, errlen, "GRPCInferenceService has no method '%.100s' in ipu-serve (it "
		    "serves ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata, ModelInfer, "
		    "ModelStatistics, ModelConfig)",
		    rpc);
}
