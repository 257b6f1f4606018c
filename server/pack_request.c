// SPDX-License-Identifier: MIT
/*
 * pack_request.c - the request side of packing (pack.h): one sequence of
 * 1..max_sequence_length tokens in each sequence input, checked and taken
 * into the request; its outputs shaped to its own tokens ([1, L, ...]) or
 * its own sequence ([1, ...]).  The mask and positions are the packer's
 * to make: a client that sends them is told so.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "pack.h"

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 400;
}

static int find(const struct ipurt_tensor *io, uint32_t from, uint32_t to, const char *name)
{
	uint32_t i;

	for (i = from; i < to; i++)
		if (!strcmp(io[i].name, name))
			return (int)i;
	return -1;
}

int srv_pack_prepare(struct srv_model *m, const struct srv_input *in, uint32_t nin_given,
		     const struct srv_output_req *out, uint32_t nout_given, int binary_default,
		     struct srv_request *req, char *err, size_t errlen)
{
	const struct srv_pack_config *c = &m->cfg.packing;
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], nin, i, k, d;
	int nio, given[SRV_MAX_IO] = { 0 }, rc;
	uint64_t len = 0, t = c->max_sequence_length;

	nio = ipurt_runner_io(srv_model_runner(m), -1, 1, io, bdim, SRV_MAX_IO, &nin);
	if (nio <= 0) {
		snprintf(err, errlen, "the model has more than %d inputs and outputs", SRV_MAX_IO);
		return 500;
	}
	for (k = 0; k < nin_given; k++) {
		const struct srv_input *x = &in[k];
		int idx = find(io, 0, nin, x->name);
		enum srv_pack_role role = idx < 0 ? SRV_PACK_NONE : srv_pack_role(c, x->name, 1);
		const struct ipurt_tensor *mt;

		if (role == SRV_PACK_MASK || role == SRV_PACK_POS)
			return bad(err, errlen, "input '%s' is made by the server when it packs "
				   "sequences (model '%s' packs: send only %s%s)", x->name, m->name,
				   c->seq_inputs[0], c->num_seq_inputs > 1 ? " and the other sequence inputs" : "");
		if (role != SRV_PACK_SEQ)
			return bad(err, errlen, "model '%s' has no input '%s' (it packs sequences: "
				   "send '%s'%s)", m->name, x->name, c->seq_inputs[0],
				   c->num_seq_inputs > 1 ? " and the other sequence inputs" : "");
		if (given[idx]++)
			return bad(err, errlen, "input '%s' is given twice", x->name);
		mt = &io[idx];
		if (x->rank != mt->rank || x->shape[0] != 1)
			return bad(err, errlen, "input '%s': 'shape' must be [1, L%s] (one sequence of L "
				   "tokens, 1 <= L <= %llu)", x->name, mt->rank > 2 ? ", ..." : "",
				   (unsigned long long)t);
		if (x->shape[1] < 1)
			return bad(err, errlen, "input '%s': an empty sequence (shape[1] is %lld); "
				   "a request needs 1 to %llu tokens", x->name, (long long)x->shape[1],
				   (unsigned long long)t);
		if ((uint64_t)x->shape[1] > t)
			return bad(err, errlen, "input '%s': a sequence of %lld tokens is longer than "
				   "max_sequence_length %llu of model '%s'", x->name,
				   (long long)x->shape[1], (unsigned long long)t, m->name);
		if (len && (uint64_t)x->shape[1] != len)
			return bad(err, errlen, "input '%s': %lld tokens, the other sequence inputs have "
				   "%llu", x->name, (long long)x->shape[1], (unsigned long long)len);
		len = (uint64_t)x->shape[1];
		for (d = 2; d < mt->rank; d++)
			if (x->shape[d] < 0 || (uint64_t)x->shape[d] != mt->dims[d])
				return bad(err, errlen, "input '%s': shape[%u] is %lld, the model needs %llu",
					   x->name, d, (long long)x->shape[d], (unsigned long long)mt->dims[d]);
	}
	for (i = 0; i < nin; i++)
		if (srv_pack_role(c, io[i].name, 1) == SRV_PACK_SEQ && !given[i])
			return bad(err, errlen, "input '%s' is missing (model '%s' packs sequences: "
				   "send each sequence input as [1, L])", io[i].name, m->name);
	req->rows = 1;
	req->seq_len = len;
	req->nin = nin;
	req->nout = (uint32_t)nio - nin;
	for (i = 0; i < (uint32_t)nio; i++) {
		struct ipurt_tensor x = io[i];
		int is_in = i < nin;

		if (is_in || srv_pack_role(c, x.name, 0) == SRV_PACK_TOKEN_OUT) {
			/* the request's own tokens (the mask and positions: what the packer fills) */
			x.dims[1] = len;
		} else {
			/* one sequence's: [1, ...] without the segment axis */
			for (d = 1; d + 1 < x.rank; d++)
				x.dims[d] = x.dims[d + 1];
			x.rank--;
		}
		x.data = NULL;
		if (is_in) {
			req->in[i] = x;
			req->in_bdim[i] = 0;
		} else {
			req->out[i - nin] = x;
			req->out_bdim[i - nin] = 0;
		}
	}
	for (k = 0; k < nin_given; k++) {
		const struct srv_input *x = &in[k];
		int idx = find(io, 0, nin, x->name);

		if (!x->datatype || srv_dtype_from_v2(x->datatype) != io[idx].dtype)
			return bad(err, errlen, "input '%s': datatype %s, the model needs %s", x->name,
				   x->datatype ? x->datatype : "(none)", srv_dtype_to_v2(io[idx].dtype));
		rc = srv_input_put(req, idx, x, err, errlen);
		if (rc)
			return rc;
	}
	return srv_request_outputs(m, req, io, nin, (uint32_t)nio, out, nout_given, binary_default,
				   err, errlen);
}

int srv_model_tensors(struct srv_model *m, int request_view, struct srv_tensor_meta *t,
		      uint32_t cap, uint32_t *nin)
{
	const struct srv_pack_config *c = &m->cfg.packing;
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], n_in, i, d, n = 0;
	int nio;

	nio = ipurt_runner_io(srv_model_runner(m), -1, 0, io, bdim, SRV_MAX_IO, &n_in);
	if (nio < 0 || (uint32_t)nio > cap)
		return -1;
	*nin = 0;
	for (i = 0; i < (uint32_t)nio; i++) {
		int is_in = i < n_in, batched = m->max_batch && bdim[i] != IPUEF_NO_BATCH_DIM;
		enum srv_pack_role role = request_view && c->enabled ?
					 srv_pack_role(c, io[i].name, is_in) : SRV_PACK_NONE;
		struct srv_tensor_meta *x = &t[n];

		if (role == SRV_PACK_MASK || role == SRV_PACK_POS)
			continue;
		x->name = io[i].name;
		x->dtype = io[i].dtype;
		x->rank = io[i].rank;
		for (d = 0; d < io[i].rank; d++)
			x->shape[d] = batched && d == bdim[i] ? -1 : (int64_t)io[i].dims[d];
		if (role == SRV_PACK_SEQ || role == SRV_PACK_TOKEN_OUT) {
			x->shape[0] = 1;
			x->shape[1] = -1;
		} else if (role == SRV_PACK_SEGMENT_OUT) {
			/* [rows, segments, ...] gives one sequence's [1, ...] */
			for (d = 1; d + 1 < x->rank; d++)
				x->shape[d] = x->shape[d + 1];
			x->rank--;
			x->shape[0] = 1;
		}
		n++;
		if (is_in)
			(*nin)++;
	}
	return (int)n;
}
