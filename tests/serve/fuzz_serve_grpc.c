// SPDX-License-Identifier: MIT
/*
 * fuzz_serve_grpc.c - libFuzzer on ipu-serve's gRPC ModelInfer path
 * without the network: the bytes are a ModelInferRequest (protobuf-c, as
 * the transport hands them over), checked and filled by grpc_infer.c and
 * infer_core.c against three real models on in-process devices (affine:
 * batch dim 0 up to 8, scale: batch along dim 1, the fused model with an
 * FP16 subgraph), then answered from zeroed outputs and the answer read
 * back.  Byte 0 picks the model, the rest is the message.  A request that
 * is accepted must have every input inside the message or in its own
 * buffer with exactly the model's bytes; every refusal says why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "grpc_infer.h"
#include "kserve/grpc_predict_v2.pb-c.h"
#include "fuzz_models.h"
#include "serve.h"

#define NMODELS FUZZ_NMODELS

static struct srv_model *models[NMODELS];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_serve_models(models, "fuzz_serve_grpc");
	return 0;
}

/* Inside [lo, lo + len) of one of the message's raw_input_contents? */
static int in_raw(const Inference__ModelInferRequest *q, const char *d, uint64_t b)
{
	size_t k;

	for (k = 0; k < q->n_raw_input_contents; k++) {
		const char *lo = (const char *)q->raw_input_contents[k].data;

		if (lo && d >= lo && d + b <= lo + q->raw_input_contents[k].len)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Inference__ModelInferRequest *q;
	Inference__ModelInferResponse *a;
	struct srv_request *req;
	struct srv_model *m;
	char err[SRV_ERR];
	uint8_t *out = NULL;
	size_t olen = 0;
	uint32_t i;
	int raw;

	if (size < 1)
		return 0;
	m = models[data[0] % NMODELS];
	q = inference__model_infer_request__unpack(NULL, size - 1, data + 1);
	if (!q)
		return 0;
	req = srv_request_new();
	if (!req)
		abort();
	err[0] = 0;
	if (!srv_grpc_infer_prepare(m, q, req, &raw, err, sizeof(err))) {
		if (req->nin == 0 || req->nout == 0 || req->nreq == 0)
			abort();
		for (i = 0; i < req->nin; i++) {
			const char *d = req->in[i].data;
			uint64_t b = srv_tensor_bytes(&req->in[i]);

			if (!d || (d != req->in_owned[i] && !in_raw(q, d, b)))
				abort();
		}
		if (srv_grpc_infer_response(m, req, raw, &out, &olen, err, sizeof(err)))
			abort();
		a = inference__model_infer_response__unpack(NULL, olen, out);
		if (!a || a->n_outputs != req->nreq ||
		    (raw ? a->n_raw_output_contents != req->nreq : a->n_raw_output_contents != 0))
			abort();
		for (i = 0; raw && i < req->nreq; i++)
			if (a->raw_output_contents[i].len != srv_tensor_bytes(&req->out[req->req_out[i]]))
				abort();
		inference__model_infer_response__free_unpacked(a, NULL);
	} else if (!err[0]) {
		abort(); /* every refusal says why */
	}
	free(out);
	srv_request_free(req);
	inference__model_infer_request__free_unpacked(q, NULL);
	return 0;
}
