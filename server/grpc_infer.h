/* SPDX-License-Identifier: MIT */
/*
 * grpc_infer.h - KServe v2's ModelInferRequest and ModelInferResponse
 * (protobuf-c, server/grpc/grpc_predict_v2.proto) to and from the
 * transport-neutral request of infer_core.h (server/grpc_infer.c).
 */
#ifndef IPU_SERVE_GRPC_INFER_H
#define IPU_SERVE_GRPC_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "serve.h"

struct Inference__ModelInferRequest;

/*
 * Check q's tensors (typed contents or raw_input_contents) against m and
 * fill req through srv_request_prepare; q must outlive req (raw inputs are
 * read in place).  *raw: the answer's encoding (raw, or typed contents).
 * 0, or 400 (500) with err.  Nothing is queued.
 */
int srv_grpc_infer_prepare(struct srv_model *m, const struct Inference__ModelInferRequest *q,
			   struct srv_request *req, int *raw, char *err, size_t errlen);

/* The serialized ModelInferResponse of a finished req (*out malloc'd); 0 or 500 with err. */
int srv_grpc_infer_response(struct srv_model *m, const struct srv_request *req, int raw,
			    uint8_t **out, size_t *out_len, char *err, size_t errlen);

#endif
