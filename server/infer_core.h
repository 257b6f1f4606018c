/* SPDX-License-Identifier: MIT */
/*
 * infer_core.h - the infer request path that HTTP and gRPC share
 * (server/infer_core.c): a request decoded by its transport (JSON and
 * binary tensors over HTTP, protobuf over gRPC) is checked against the
 * model and filled in one place, queued on the model's scheduler (dynamic
 * batching), waited for, and its failure given one status.
 *
 * Statuses are HTTP's numbers, the protocol's own error classes: 400 bad
 * input, 404 no such model, 413 too large, 422 not representable, 500
 * internal, 503 full or shutting down, 504 timed out.  The HTTP endpoints
 * send them as they are; gRPC maps them to its codes the way Triton does
 * (srv_grpc_code in grpc_server.h).
 */
#ifndef IPU_SERVE_INFER_CORE_H
#define IPU_SERVE_INFER_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "serve.h"

/* The extensions ipu-serve names in its server metadata, NULL-terminated. */
extern const char *const srv_extensions[];

/*
 * Fill count elements of dtype into buf from the request's typed data.
 * Returns 0, or 400 (or 500) with the reason naming input `name` in err.
 */
typedef int (*srv_fill_fn)(const void *ctx, uint32_t dtype, void *buf, uint64_t count,
			   const char *name, char *err, size_t errlen);

/* One input tensor as its transport decoded it (nothing checked yet). */
struct srv_input {
	const char *name;
	const char *datatype;		/* "FP32" ..., NULL if none given */
	const int64_t *shape;
	uint32_t rank;			/* > IPUEF_MAX_RANK: the request gave no shape array */
	/*
	 * Raw little-endian bytes (HTTP's binary tensor data, gRPC's
	 * raw_input_contents), read in place by the device: they must outlive
	 * the request.  NULL: typed data through fill.
	 */
	const void *raw;
	uint64_t raw_declared;		/* the size the request states */
	uint64_t raw_avail;		/* the bytes there are */
	const char *raw_label;		/* what states the size, for messages */
	const char *raw_also;		/* typed data given too (refused), named; or NULL */
	srv_fill_fn fill;
	const void *fill_ctx;
};

/* An output the client asked for, and whether it wants it as raw bytes. */
struct srv_output_req {
	const char *name;
	int binary;
};

/*
 * Check the inputs against m (names, datatypes, shapes, the batch and its
 * limit, raw sizes, BOOL bytes) and fill req: its inputs, the outputs
 * asked for (nout 0: every output of the subgraph, each binary_default),
 * and the outputs' buffers.  Nothing is queued.  0, or 400 (500 out of
 * memory) with the message in err.  A packing model's request is one
 * sequence (srv_pack_prepare, pack.h).
 */
int srv_request_prepare(struct srv_model *m, const struct srv_input *in, uint32_t nin,
			const struct srv_output_req *out, uint32_t nout, int binary_default,
			struct srv_request *req, char *err, size_t errlen);

/* One tensor as a client sees it: -1 for a dimension the request chooses. */
struct srv_tensor_meta {
	const char *name;	/* the model's, valid while m is held */
	uint32_t dtype;		/* IPURT_DT_* */
	uint32_t rank;
	int64_t shape[IPUEF_MAX_RANK];
};

/*
 * m's tensors, inputs first (*nin of them): the model's own with -1 for
 * a batched dimension; with request_view, for a packing model, what a
 * request names instead: each sequence input [1, -1, ...], no mask or
 * position input (the server makes them), per-token outputs [1, -1, ...]
 * and per-sequence outputs [1, ...] (the metadata answers of both
 * transports).  The count (at most cap), or -1 with more than cap.
 */
int srv_model_tensors(struct srv_model *m, int request_view, struct srv_tensor_meta *t,
		      uint32_t cap, uint32_t *nin);

/*
 * The outputs req asks for among io[nin..nio) (nout_given 0: every output,
 * each binary_default) and their zeroed buffers: the last step of
 * srv_request_prepare and srv_pack_prepare.  0, or 400 (500 out of memory)
 * with err.
 */
int srv_request_outputs(const struct srv_model *m, struct srv_request *req,
			const struct ipurt_tensor *io, uint32_t nin, uint32_t nio,
			const struct srv_output_req *out, uint32_t nout_given, int binary_default,
			char *err, size_t errlen);

/*
 * One input's bytes into req->in[idx] (its shape set): raw in place, or
 * typed through its transport's fill.  0, or 400 (500) with err.
 */
int srv_input_put(struct srv_request *req, int idx, const struct srv_input *x, char *err,
		  size_t errlen);

/*
 * Queue a prepared request on m's scheduler and wait for it.  0 when it
 * ran; else a status (503 queue full, 400/503/504/500 from the runtime)
 * with "IPURT_E_...: reason" in err.  A request the queue refuses is
 * counted in the model's statistics as arrived at t0 (srv_now_ns()), as
 * the transports count the ones srv_request_prepare refused.
 */
int srv_request_run(struct srv_model *m, struct srv_request *req, uint64_t t0, char *err,
		    size_t errlen);

/*
 * The HTTP status of an error class (a negative errno, ipu_err_errno):
 * 400 for a bad request (-EINVAL, -EPROTO, -EOVERFLOW), 404 -ENOENT,
 * 503 for what a later retry may get (-EBUSY, -EAGAIN, -ENOMEM, -ENODEV,
 * -ESHUTDOWN), 504 -ETIMEDOUT and -ECANCELED, else 500.  gRPC follows
 * the status (srv_grpc_code).
 */
int srv_status_of_class(int cls);

/* The status of any library error code (enum ipu_err) or -errno, by its class. */
int srv_status_of_runtime(int rc);

#endif
