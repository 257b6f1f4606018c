// SPDX-License-Identifier: MIT
/*
 * infer_core.c - the part of an infer request that does not depend on its
 * transport: checking the decoded tensors against the model, filling the
 * runner's request, queueing it and mapping its failure (infer_core.h).
 *
 * Every check names the tensor and what was expected, and nothing is
 * queued until the whole request is valid, so HTTP and gRPC clients get
 * the same answers and the same messages for the same request.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "infer_core.h"
#include "pack.h"

const char *const srv_extensions[] = { "binary_tensor_data", "model_repository", "generate",
				       "statistics", NULL };

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 400;
}

static void shape_str(const uint64_t *dims, uint32_t rank, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	uint32_t i;

	for (i = 0; i < rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%llu", i ? "," : "", (unsigned long long)dims[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

static int find_io(const struct ipurt_tensor *io, uint32_t from, uint32_t to, const char *name)
{
	uint32_t i;

	for (i = from; i < to; i++)
		if (!strcmp(io[i].name, name))
			return (int)i;
	return -1;
}

static void list_names(const struct ipurt_tensor *io, uint32_t from, uint32_t to, char *buf,
		       size_t len)
{
	size_t n = 0;
	uint32_t i;

	buf[0] = 0;
	for (i = from; i < to && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s'%s'", i > from ? ", " : "", io[i].name);
}

int srv_input_put(struct srv_request *req, int idx, const struct srv_input *x, char *err,
		  size_t errlen)
{
	struct ipurt_tensor *t = &req->in[idx];
	uint64_t bytes = srv_tensor_bytes(t), e;
	char s[160];

	if (x->raw) {
		if (x->raw_declared != bytes) {
			shape_str(t->dims, t->rank, s, sizeof(s));
			return bad(err, errlen, "input '%s': %s %llu, but %s%s is %llu bytes", x->name,
				   x->raw_label, (unsigned long long)x->raw_declared,
				   srv_dtype_to_v2(t->dtype), s, (unsigned long long)bytes);
		}
		if (x->raw_also)
			return bad(err, errlen, "input '%s' has both %s and %s", x->name, x->raw_also,
				   x->raw_label);
		if (x->raw_avail < bytes)
			return bad(err, errlen, "input '%s': binary data ends after %llu of %llu bytes",
				   x->name, (unsigned long long)x->raw_avail, (unsigned long long)bytes);
		t->data = (void *)x->raw;
		if (t->dtype == IPURT_DT_BOOL) {
			const uint8_t *b = t->data;

			for (e = 0; e < bytes; e++)
				if (b[e] > 1)
					return bad(err, errlen, "input '%s': BOOL element %llu is %u, not 0 or 1",
						   x->name, (unsigned long long)e, b[e]);
		}
		return 0;
	}
	req->in_owned[idx] = malloc(bytes ? bytes : 1);
	if (!req->in_owned[idx]) {
		snprintf(err, errlen, "out of memory for input '%s'", x->name);
		return 500;
	}
	t->data = req->in_owned[idx];
	return x->fill(x->fill_ctx, t->dtype, t->data, bytes / ipurt_dtype_size(t->dtype), x->name,
		       err, errlen);
}

int srv_request_outputs(const struct srv_model *m, struct srv_request *req,
			const struct ipurt_tensor *io, uint32_t nin, uint32_t nio,
			const struct srv_output_req *out, uint32_t nout_given, int binary_default,
			char *err, size_t errlen)
{
	char names[1024];
	uint32_t i, k;

	for (k = 0; k < nout_given; k++) {
		int idx = find_io(io, nin, nio, out[k].name);

		if (idx < 0) {
			list_names(io, nin, nio, names, sizeof(names));
			return bad(err, errlen, "model '%s' has no output '%s'%s (outputs: %s)", m->name,
				   out[k].name, m->fused ? " in this subgraph" : "", names);
		}
		if (req->nreq == SRV_MAX_IO)
			return bad(err, errlen, "more than %d requested outputs", SRV_MAX_IO);
		req->req_out[req->nreq] = (uint32_t)idx - nin;
		req->req_binary[req->nreq++] = out[k].binary;
	}
	for (i = 0; !nout_given && i < req->nout; i++) {
		req->req_out[req->nreq] = i;
		req->req_binary[req->nreq++] = binary_default;
	}
	for (i = 0; i < req->nout; i++) {
		uint64_t bytes = srv_tensor_bytes(&req->out[i]);

		req->out[i].data = calloc(1, bytes ? bytes : 1);
		if (!req->out[i].data) {
			snprintf(err, errlen, "out of memory for output '%s'", req->out[i].name);
			return 500;
		}
	}
	return 0;
}

int srv_request_prepare(struct srv_model *m, const struct srv_input *in, uint32_t nin_given,
			const struct srv_output_req *out, uint32_t nout_given, int binary_default,
			struct srv_request *req, char *err, size_t errlen)
{
	struct ipurt_runner *r = srv_model_runner(m);
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], nin, i, k;
	int nio, given[SRV_MAX_IO] = { 0 }, rc;
	char names[1024];

	if (!nin_given)
		return bad(err, errlen, "'inputs' must be a non-empty array of tensors");
	if (m->cfg.packing.enabled)
		return srv_pack_prepare(m, in, nin_given, out, nout_given, binary_default, req, err,
					errlen);
	/* the subgraph (fused models) and the rows come from the inputs */
	for (k = 0; m->fused && k < nin_given && req->subgraph < 0; k++)
		req->subgraph = ipurt_anchor_subgraph(in[k].name);
	if (m->fused && req->subgraph < 0)
		return bad(err, errlen, "model '%s' is fused: name inputs 'graphK/NAME' of one subgraph K "
			   "(see GET /v2/models/%s)", m->name, m->name);
	nio = ipurt_runner_io(r, req->subgraph, 0, io, bdim, SRV_MAX_IO, &nin);
	if (nio <= 0) {
		snprintf(err, errlen, nio < 0 ? "the model has more than %d inputs and outputs"
					      : "subgraph %d of model '%s' has no inputs or outputs",
			 nio < 0 ? SRV_MAX_IO : req->subgraph, m->name);
		return nio < 0 ? 500 : 400;
	}
	req->rows = 0;
	for (k = 0; k < nin_given; k++) {
		const struct srv_input *x = &in[k];
		int idx = find_io(io, 0, nin, x->name);

		if (idx < 0) {
			list_names(io, 0, nin, names, sizeof(names));
			return bad(err, errlen, "model '%s' has no input '%s'%s (inputs: %s)", m->name,
				   x->name, m->fused ? " in this subgraph" : "", names);
		}
		if (given[idx]++)
			return bad(err, errlen, "input '%s' is given twice", x->name);
		if (x->rank != io[idx].rank)
			return bad(err, errlen, "input '%s': 'shape' must be an array of %u dimensions",
				   x->name, io[idx].rank);
		if (bdim[idx] != IPUEF_NO_BATCH_DIM && !req->rows) {
			if (x->shape[bdim[idx]] < 1)
				return bad(err, errlen, "input '%s': shape[%u] must be a whole number >= 1",
					   x->name, bdim[idx]);
			req->rows = (uint64_t)x->shape[bdim[idx]];
		}
	}
	for (i = 0; i < nin; i++) {
		if (!given[i]) {
			list_names(io, 0, nin, names, sizeof(names));
			return bad(err, errlen, "input '%s' is missing (the model needs %s)", io[i].name,
				   names);
		}
	}
	if (m->batch_dim != IPURT_NO_BATCHING_DIM) {
		if (!m->max_batch)
			req->rows = m->compiled_batch; /* fixed shapes */
		else if (req->rows > m->max_batch)
			return bad(err, errlen, "batch of %llu rows exceeds max_batch_size %llu of model '%s'",
				   (unsigned long long)req->rows, (unsigned long long)m->max_batch, m->name);
	}
	nio = ipurt_runner_io(r, req->subgraph, m->max_batch ? req->rows : 0, io, bdim, SRV_MAX_IO,
			      &nin);
	req->nin = nin;
	req->nout = (uint32_t)nio - nin;
	for (i = 0; i < (uint32_t)nio; i++) {
		if (i < nin) {
			req->in[i] = io[i];
			req->in_bdim[i] = bdim[i];
		} else {
			req->out[i - nin] = io[i];
			req->out_bdim[i - nin] = bdim[i];
		}
	}
	for (k = 0; k < nin_given; k++) {
		const struct srv_input *x = &in[k];
		int idx = find_io(io, 0, nin, x->name);
		struct ipurt_tensor *t = &req->in[idx];
		uint64_t got[IPUEF_MAX_RANK];
		char want_s[160], got_s[160];
		uint32_t d;

		if (!x->datatype || srv_dtype_from_v2(x->datatype) != t->dtype)
			return bad(err, errlen, "input '%s': datatype %s, the model needs %s", x->name,
				   x->datatype ? x->datatype : "(none)", srv_dtype_to_v2(t->dtype));
		for (d = 0; d < t->rank; d++) {
			if (x->shape[d] < 0)
				return bad(err, errlen, "input '%s': shape[%u] is not a whole number >= 0",
					   x->name, d);
			got[d] = (uint64_t)x->shape[d];
		}
		if (memcmp(got, t->dims, t->rank * sizeof(got[0]))) {
			shape_str(got, t->rank, got_s, sizeof(got_s));
			shape_str(t->dims, t->rank, want_s, sizeof(want_s));
			if (bdim[idx] != IPUEF_NO_BATCH_DIM && m->max_batch)
				return bad(err, errlen, "input '%s': shape %s, the model needs %s for a batch of "
					   "%llu (dimension %u is the batch, up to %llu)", x->name, got_s, want_s,
					   (unsigned long long)req->rows, bdim[idx],
					   (unsigned long long)m->max_batch);
			return bad(err, errlen, "input '%s': shape %s, the model needs %s", x->name, got_s,
				   want_s);
		}
		rc = srv_input_put(req, idx, x, err, errlen);
		if (rc)
			return rc;
	}
	return srv_request_outputs(m, req, io, nin, (uint32_t)nio, out, nout_given, binary_default,
				   err, errlen);
}

int srv_status_of_class(int cls)
{
	switch (cls) {
	case -EINVAL:
	case -EPROTO:
	case -EOVERFLOW:
		return 400;
	case -ENOENT:
		return 404;
	/* the server is short of something now: a retry later may succeed */
	case -EBUSY:
	case -EAGAIN:
	case -ENOMEM:
	case -ENODEV:
	case -ESHUTDOWN:
		return 503;
	case -ETIMEDOUT:
	case -ECANCELED:
		return 504;
	default:
		return 500;
	}
}

int srv_status_of_runtime(int rc)
{
	return srv_status_of_class(ipu_err_errno(rc));
}

int srv_request_run(struct srv_model *m, struct srv_request *req, uint64_t t0, char *err,
		    size_t errlen)
{
	int rc = srv_model_submit(m, req, err, errlen);

	if (rc) {
		srv_model_refused(m, rc, t0);
		return rc;
	}
	srv_model_wait(m, req);
	if (!req->status)
		return 0;
	snprintf(err, errlen, "%s: %s", ipu_err_name(req->status), req->err);
	return srv_status_of_runtime(req->status);
}
