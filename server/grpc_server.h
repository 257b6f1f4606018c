/* SPDX-License-Identifier: MIT */
/*
 * grpc_server.h - KServe v2's GRPCInferenceService (server/grpc/
 * grpc_predict_v2.proto) over gRPC's C core: the transport
 * (grpc_server.c) and the RPCs on protobuf-c messages (grpc_service.c).
 */
#ifndef IPU_SERVE_GRPC_SERVER_H
#define IPU_SERVE_GRPC_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

/* The gRPC status code (grpc_status_code) of an HTTP-class status (infer_core.h). */
int srv_grpc_code(int status);

/*
 * One call: the method's full name ("/inference.GRPCInferenceService/
 * ModelInfer") and its request message; the serialized response in *out
 * (malloc'd).  The repository and the drain state are h's.  Returns 0, or
 * an HTTP-class status (400 malformed or bad input, 404, 501 unknown
 * method, 503 ...) with the message in err.
 */
int srv_grpc_dispatch(struct srv_http *h, const char *method, const uint8_t *msg, size_t len,
		      uint8_t **out, size_t *out_len, char *err, size_t errlen);

/* Triton's ModelStatistics (grpc_stats.c) and ModelConfig (grpc_config.c) RPCs, the same contract. */
int srv_grpc_model_statistics(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
			      size_t *out_len, char *err, size_t errlen);
int srv_grpc_model_config(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
			  size_t *out_len, char *err, size_t errlen);

struct srv_grpc_limits {
	size_t max_message;		/* largest request message (--max-body-size) */
	unsigned max_calls;		/* calls at once (--max-connections); more: RESOURCE_EXHAUSTED */
	uint64_t request_timeout_ms;	/* the request message must arrive within it (0: no limit) */
};

struct srv_grpc;

/*
 * Listen on addr:port (0: any free port, *port_out tells) and serve with
 * the HTTP endpoints' repository, scheduler and body-memory budget (h).
 */
int srv_grpc_start(struct srv_http *h, const char *addr, int port, const struct srv_grpc_limits *l,
		   struct srv_grpc **out, int *port_out, char *err, size_t errlen);

/*
 * Refuse new calls and wait up to timeout_ms for those in flight, then
 * cancel what is left and free everything.  Returns the calls cancelled.
 */
unsigned srv_grpc_stop(struct srv_grpc *g, uint64_t timeout_ms);

#endif
