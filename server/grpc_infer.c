// SPDX-License-Identifier: MIT
/*
 * grpc_infer.c - a ModelInferRequest into the transport-neutral request
 * (infer_core.h) and a finished request into a ModelInferResponse, with
 * KServe v2's two tensor encodings (grpc_infer.h).
 *
 * Inputs come as typed `contents` or as `raw_input_contents` (all inputs
 * one way: the protocol forbids mixing).  The answer uses the request's
 * encoding: raw_output_contents for raw requests, typed contents for typed
 * ones, except that FP16 outputs are always raw, since the protocol has no
 * 16-bit float contents and the response cannot mix the two.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "grpc_infer.h"
#include "infer_core.h"
#include "kserve/grpc_predict_v2.pb-c.h"

static int fail(int status, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return status;
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

int srv_grpc_infer_prepare(struct srv_model *m, const Inference__ModelInferRequest *q,
			   struct srv_request *req, int *raw, char *err, size_t errlen)
{
	struct srv_input in[SRV_MAX_IO];
	struct srv_output_req outs[SRV_MAX_IO];
	uint32_t k;
	int rc;

	*raw = q->n_raw_input_contents > 0;
	if (q->n_inputs > SRV_MAX_IO || q->n_outputs > SRV_MAX_IO)
		return fail(400, err, errlen, "more than %d inputs or outputs", SRV_MAX_IO);
	if (*raw && q->n_raw_input_contents != q->n_inputs)
		return fail(400, err, errlen, "%zu raw_input_contents for %zu inputs: give one per input, "
			    "in the order of 'inputs'", q->n_raw_input_contents, q->n_inputs);
	for (k = 0; k < q->n_inputs; k++) {
		const Inference__ModelInferRequest__InferInputTensor *x = q->inputs[k];

		memset(&in[k], 0, sizeof(in[k]));
		in[k].name = x->name;
		in[k].datatype = *x->datatype ? x->datatype : NULL;
		in[k].shape = x->shape;
		in[k].rank = x->n_shape <= IPUEF_MAX_RANK ? (uint32_t)x->n_shape : IPUEF_MAX_RANK + 1;
		if (*raw) {
			if (x->contents)
				return fail(400, err, errlen, "input '%s' has contents while the request has "
					    "raw_input_contents: send every input one way", x->name);
			in[k].raw = q->raw_input_contents[k].data ? (const void *)q->raw_input_contents[k].data
								    : (const void *)"";
			in[k].raw_declared = in[k].raw_avail = q->raw_input_contents[k].len;
			in[k].raw_label = "raw_input_contents size";
			continue;
		}
		if (!x->contents)
			return fail(400, err, errlen, "input '%s' has no contents, and the request no "
				    "raw_input_contents", x->name);
		in[k].fill = fill_contents;
		in[k].fill_ctx = x->contents;
	}
	for (k = 0; k < q->n_outputs; k++) {
		outs[k].name = q->outputs[k]->name;
		outs[k].binary = *raw;
	}
	if (*q->id) {
		req->id = strdup(q->id);
		if (!req->id)
			return fail(500, err, errlen, "out of memory");
	}
	rc = srv_request_prepare(m, in, (uint32_t)q->n_inputs, outs, (uint32_t)q->n_outputs, *raw, req,
				 err, errlen);
	if (rc)
		return rc;
	/* FP16 has no typed contents: a response holding one is all raw */
	for (k = 0; !*raw && k < req->nreq; k++)
		if (req->out[req->req_out[k]].dtype == IPURT_DT_F16)
			*raw = 1;
	return 0;
}

int srv_grpc_infer_response(struct srv_model *m, const struct srv_request *req, int raw, uint8_t **out,
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
	*out_len = protobuf_c_message_get_packed_size(&a.base);
	*out = malloc(*out_len ? *out_len : 1);
	if (!*out)
		rc = fail(500, err, errlen, "out of memory for a response of %zu bytes", *out_len);
	else
		protobuf_c_message_pack(&a.base, *out);
out:
	for (i = 0; i < SRV_MAX_IO; i++)
		free(mem[i]);
	return rc;
}

