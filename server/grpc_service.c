// SPDX-License-Identifier: MIT
/*
 * grpc_service.c - the RPCs of KServe v2's GRPCInferenceService on
 * protobuf-c messages (server/grpc/grpc_predict_v2.proto): health,
 * metadata and ModelInfer, whose tensors go through the same checks,
 * scheduler and errors as the HTTP endpoints' (infer_core.h).
 *
 * Inputs come as typed `contents` or as `raw_input_contents` (all inputs
 * one way: the protocol forbids mixing).  The answer uses the request's
 * encoding: raw_output_contents for raw requests, typed contents for typed
 * ones, except that FP16 outputs are always raw, since the protocol has no
 * 16-bit float contents and the response cannot mix the two.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/status.h>

#include "batch.h"
#include "cli.h"
#include "kserve/grpc_predict_v2.pb-c.h"
#include "grpc_server.h"
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
	struct ipurt_tensor io[SRV_MAX_IO];
	int64_t shapes[SRV_MAX_IO][IPUEF_MAX_RANK], v;
	char vs[SRV_MAX_VERSIONS][24], *vp[SRV_MAX_VERSIONS];
	uint32_t bdim[SRV_MAX_IO], nin = 0, i, d, nv = 0;
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
	nio = ipurt_runner_io(srv_model_runner(m), -1, 0, io, bdim, SRV_MAX_IO, &nin);
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
		int batched = m->max_batch && bdim[i] != IPUEF_NO_BATCH_DIM;

		inference__model_metadata_response__tensor_metadata__init(&tm[i]);
		tm[i].name = (char *)io[i].name;
		tm[i].datatype = (char *)srv_dtype_to_v2(io[i].dtype);
		tm[i].n_shape = io[i].rank;
		tm[i].shape = shapes[i];
		for (d = 0; d < io[i].rank; d++)
			shapes[i][d] = batched && d == bdim[i] ? -1 : (int64_t)io[i].dims[d];
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

/* Typed contents into the runner's buffer, the field the datatype names. */
static int fill_contents(const void *ctx, uint32_t dt, void *buf, uint64_t count, const char *name,
			 char *err, size_t errlen)
{
	const Inference__InferTensorContents *c = ctx;
	const char *field;
	size_t n, i;

	switch (dt) {
	case IPURT_DT_F32: field = "fp32_contents"; n = c->n_fp32_contents; break;
	case IPURT_DT_I32:
	case IPURT_DT_I8: field = "int_contents"; n = c->n_int_contents; break;
	case IPURT_DT_I64: field = "int64_contents"; n = c->n_int64_contents; break;
	case IPURT_DT_U8: field = "uint_contents"; n = c->n_uint_contents; break;
	case IPURT_DT_BOOL: field = "bool_contents"; n = c->n_bool_contents; break;
	case IPURT_DT_F16:
		return fail(400, err, errlen, "input '%s': FP16 has no typed contents in the protocol: send "
			    "it as raw_input_contents", name);
	default:
		return fail(400, err, errlen, "input '%s': unsupported datatype", name);
	}
	if (n != count)
		return fail(400, err, errlen, "input '%s': %zu elements in contents.%s, its shape holds %llu",
			    name, n, field, (unsigned long long)count);
	for (i = 0; i < n; i++) {
		switch (dt) {
		case IPURT_DT_F32: ((float *)buf)[i] = c->fp32_contents[i]; break;
		case IPURT_DT_I32: ((int32_t *)buf)[i] = c->int_contents[i]; break;
		case IPURT_DT_I64: ((int64_t *)buf)[i] = c->int64_contents[i]; break;
		case IPURT_DT_BOOL: ((uint8_t *)buf)[i] = c->bool_contents[i] != 0; break;
		case IPURT_DT_I8:
			if (c->int_contents[i] < INT8_MIN || c->int_contents[i] > INT8_MAX)
				return fail(400, err, errlen, "input '%s': element %zu (%d) is out of range for "
					    "INT8", name, i, c->int_contents[i]);
			((int8_t *)buf)[i] = (int8_t)c->int_contents[i];
			break;
		default: /* U8 */
			if (c->uint_contents[i] > UINT8_MAX)
				return fail(400, err, errlen, "input '%s': element %zu (%u) is out of range for "
					    "UINT8", name, i, c->uint_contents[i]);
			((uint8_t *)buf)[i] = (uint8_t)c->uint_contents[i];
			break;
		}
	}
	return 0;
}

/* One output as typed contents (arrays allocated into *mem, freed by the caller). */
static int put_contents(Inference__InferTensorContents *c, const struct ipurt_tensor *t, void **mem)
{
	uint64_t n = srv_tensor_bytes(t) / ipurt_dtype_size(t->dtype), i;
	size_t el = t->dtype == IPURT_DT_I64 ? 8 : t->dtype == IPURT_DT_BOOL ? sizeof(protobuf_c_boolean) : 4;

	*mem = malloc(n ? n * el : 1);
	if (!*mem)
		return -1;
	for (i = 0; i < n; i++) {
		switch (t->dtype) {
		case IPURT_DT_F32: ((float *)*mem)[i] = ((const float *)t->data)[i]; break;
		case IPURT_DT_I32: ((int32_t *)*mem)[i] = ((const int32_t *)t->data)[i]; break;
		case IPURT_DT_I8: ((int32_t *)*mem)[i] = ((const int8_t *)t->data)[i]; break;
		case IPURT_DT_I64: ((int64_t *)*mem)[i] = ((const int64_t *)t->data)[i]; break;
		case IPURT_DT_U8: ((uint32_t *)*mem)[i] = ((const uint8_t *)t->data)[i]; break;
		default: ((protobuf_c_boolean *)*mem)[i] = ((const uint8_t *)t->data)[i] != 0; break;
		}
	}
	switch (t->dtype) {
	case IPURT_DT_F32: c->n_fp32_contents = n; c->fp32_contents = *mem; break;
	case IPURT_DT_I32:
	case IPURT_DT_I8: c->n_int_contents = n; c->int_contents = *mem; break;
	case IPURT_DT_I64: c->n_int64_contents = n; c->int64_contents = *mem; break;
	case IPURT_DT_U8: c->n_uint_contents = n; c->uint_contents = *mem; break;
	default: c->n_bool_contents = n; c->bool_contents = *mem; break;
	}
	return 0;
}

static int infer_response(struct srv_model *m, const struct srv_request *req, int raw, uint8_t **out,
			  size_t *out_len, char *err, size_t errlen)
{
	Inference__ModelInferResponse a = INFERENCE__MODEL_INFER_RESPONSE__INIT;
	Inference__ModelInferResponse__InferOutputTensor ot[SRV_MAX_IO], *op[SRV_MAX_IO];
	Inference__InferTensorContents ct[SRV_MAX_IO];
	ProtobufCBinaryData rawo[SRV_MAX_IO];
	int64_t shapes[SRV_MAX_IO][IPUEF_MAX_RANK];
	void *mem[SRV_MAX_IO] = { 0 };
	char ver[24];
	uint32_t i, d;
	int rc = 0;

	snprintf(ver, sizeof(ver), "%lld", (long long)m->version);
	a.model_name = m->name;
	a.model_version = ver;
	if (req->id)
		a.id = req->id;
	for (i = 0; i < req->nreq; i++) {
		const struct ipurt_tensor *t = &req->out[req->req_out[i]];

		inference__model_infer_response__infer_output_tensor__init(&ot[i]);
		ot[i].name = (char *)t->name;
		ot[i].datatype = (char *)srv_dtype_to_v2(t->dtype);
		ot[i].n_shape = t->rank;
		ot[i].shape = shapes[i];
		for (d = 0; d < t->rank; d++)
			shapes[i][d] = (int64_t)t->dims[d];
		op[i] = &ot[i];
		if (raw) {
			rawo[i].data = t->data;
			rawo[i].len = srv_tensor_bytes(t);
			continue;
		}
		inference__infer_tensor_contents__init(&ct[i]);
		if (put_contents(&ct[i], t, &mem[i])) {
			rc = fail(500, err, errlen, "out of memory building the response");
			goto out;
		}
		ot[i].contents = &ct[i];
	}
	a.n_outputs = req->nreq;
	a.outputs = op;
	if (raw) {
		a.n_raw_output_contents = req->nreq;
		a.raw_output_contents = rawo;
	}
	rc = pack(&a.base, out, out_len, err, errlen);
out:
	for (i = 0; i < SRV_MAX_IO; i++)
		free(mem[i]);
	return rc;
}

static int model_infer(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
		       size_t *out_len, char *err, size_t errlen)
{
	Inference__ModelInferRequest *q = inference__model_infer_request__unpack(NULL, len, msg);
	uint64_t t0 = srv_now_ns();
	struct srv_input in[SRV_MAX_IO];
	struct srv_output_req outs[SRV_MAX_IO];
	struct srv_request *req = NULL;
	struct srv_model *m = NULL;
	int rc, raw, queued = 0;
	int64_t v;
	size_t k;

	if (!q)
		return fail(400, err, errlen, "the request is not a ModelInferRequest protobuf message "
			    "(%zu bytes)", len);
	if (atomic_load(&h->draining)) {
		rc = fail(503, err, errlen, "the server is shutting down");
		goto out;
	}
	raw = q->n_raw_input_contents > 0;
	if (q->n_inputs > SRV_MAX_IO || q->n_outputs > SRV_MAX_IO) {
		rc = fail(400, err, errlen, "more than %d inputs or outputs", SRV_MAX_IO);
		goto out;
	}
	if (raw && q->n_raw_input_contents != q->n_inputs) {
		rc = fail(400, err, errlen, "%zu raw_input_contents for %zu inputs: give one per input, in "
			  "the order of 'inputs'", q->n_raw_input_contents, q->n_inputs);
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
	for (k = 0; k < q->n_inputs; k++) {
		const Inference__ModelInferRequest__InferInputTensor *x = q->inputs[k];

		memset(&in[k], 0, sizeof(in[k]));
		in[k].name = x->name;
		in[k].datatype = *x->datatype ? x->datatype : NULL;
		in[k].shape = x->shape;
		in[k].rank = x->n_shape <= IPUEF_MAX_RANK ? (uint32_t)x->n_shape : IPUEF_MAX_RANK + 1;
		if (raw) {
			if (x->contents) {
				rc = fail(400, err, errlen, "input '%s' has contents while the request has "
					  "raw_input_contents: send every input one way", x->name);
				goto out;
			}
			in[k].raw = q->raw_input_contents[k].data ? (const void *)q->raw_input_contents[k].data
								    : (const void *)"";
			in[k].raw_declared = in[k].raw_avail = q->raw_input_contents[k].len;
			in[k].raw_label = "raw_input_contents size";
			continue;
		}
		if (!x->contents) {
			rc = fail(400, err, errlen, "input '%s' has no contents, and the request no "
				  "raw_input_contents", x->name);
			goto out;
		}
		in[k].fill = fill_contents;
		in[k].fill_ctx = x->contents;
	}
	for (k = 0; k < q->n_outputs; k++) {
		outs[k].name = q->outputs[k]->name;
		outs[k].binary = raw;
	}
	req = srv_request_new();
	if (!req) {
		rc = fail(500, err, errlen, "out of memory");
		goto out;
	}
	if (*q->id) {
		req->id = strdup(q->id);
		if (!req->id) {
			rc = fail(500, err, errlen, "out of memory");
			goto out;
		}
	}
	rc = srv_request_prepare(m, in, (uint32_t)q->n_inputs, outs, (uint32_t)q->n_outputs, raw, req,
				 err, errlen);
	if (!rc) {
		queued = 1;
		rc = srv_request_run(m, req, t0, err, errlen);
	}
	if (!rc) {
		for (k = 0; !raw && k < req->nreq; k++)
			if (req->out[req->req_out[k]].dtype == IPURT_DT_F16)
				raw = 1;
		rc = infer_response(m, req, raw, out, out_len, err, errlen);
	}
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
