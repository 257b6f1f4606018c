// SPDX-License-Identifier: MIT
/*
 * infer_request.c - an infer request body of the v2 protocol into the
 * tensors of one ModelRunner request, checked against the model.
 *
 * JSON tensors carry "data" (flat or nested, row-major); with the binary
 * tensor data extension an input says "parameters": {"binary_data_size": N}
 * and its bytes follow the JSON header (Inference-Header-Content-Length) in
 * input order.  Every check names the tensor and what was expected, and
 * nothing is queued until the whole request is valid.
 */
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "ipu/half.h"
#include "json_budget.h"
#include "serve.h"
#include "shm.h"

static const struct {
	uint32_t dt;
	const char *v2;
} dtypes[] = {
	{ IPURT_DT_F32, "FP32" }, { IPURT_DT_F16, "FP16" }, { IPURT_DT_I32, "INT32" },
	{ IPURT_DT_I64, "INT64" }, { IPURT_DT_U8, "UINT8" }, { IPURT_DT_BOOL, "BOOL" },
	{ IPURT_DT_I8, "INT8" },
};

const char *srv_dtype_to_v2(uint32_t dt)
{
	size_t i;

	for (i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].dt == dt)
			return dtypes[i].v2;
	return NULL;
}

uint32_t srv_dtype_from_v2(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (!strcmp(dtypes[i].v2, name))
			return dtypes[i].dt;
	return IPURT_DT_INVALID;
}

struct srv_request *srv_request_new(void)
{
	struct srv_request *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->subgraph = -1;
	return r;
}

void srv_request_free(struct srv_request *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < SRV_MAX_IO; i++) {
		free(r->in_owned[i]);
		free(r->out[i].data);
		srv_shm_release(r->shm, r->req_shm[i]);
	}
	free(r->id);
	srv_gen_free(r->gen);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

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

/* One JSON element into element i of a typed buffer. */
static int put_element(const json_t *v, uint32_t dt, void *buf, uint64_t i, const char *name,
		       char *err, size_t errlen)
{
	json_int_t x;

	switch (dt) {
	case IPURT_DT_F32:
	case IPURT_DT_F16:
		if (!json_is_number(v))
			return bad(err, errlen, "input '%s': element %llu is not a number", name,
				   (unsigned long long)i);
		/*
		 * A finite value that rounds to infinity in the declared type would
		 * only surface later as a NaN or infinite output: refuse it here.
		 */
		if (dt == IPURT_DT_F32) {
			float f = (float)json_number_value(v);

			if (isinf(f))
				return bad(err, errlen, "input '%s': element %llu (%.9g) is out of range for FP32 "
					   "(largest magnitude %.9g)", name, (unsigned long long)i,
					   json_number_value(v), (double)FLT_MAX);
			((float *)buf)[i] = f;
		} else {
			uint16_t h = ipu_f32_to_f16((float)json_number_value(v));

			if ((h & 0x7fff) == 0x7c00)
				return bad(err, errlen, "input '%s': element %llu (%.9g) is out of range for FP16 "
					   "(largest magnitude 65504)", name, (unsigned long long)i,
					   json_number_value(v));
			((uint16_t *)buf)[i] = h;
		}
		return 0;
	case IPURT_DT_BOOL:
		if (!json_is_boolean(v))
			return bad(err, errlen, "input '%s': element %llu is not true or false", name,
				   (unsigned long long)i);
		((uint8_t *)buf)[i] = json_is_true(v);
		return 0;
	default:
		break;
	}
	if (!json_is_integer(v))
		return bad(err, errlen, "input '%s': element %llu is not a whole number", name,
			   (unsigned long long)i);
	x = json_integer_value(v);
	switch (dt) {
	case IPURT_DT_I64: ((int64_t *)buf)[i] = (int64_t)x; return 0;
	case IPURT_DT_I32:
		if (x < INT32_MIN || x > INT32_MAX)
			break;
		((int32_t *)buf)[i] = (int32_t)x;
		return 0;
	case IPURT_DT_I8:
		if (x < INT8_MIN || x > INT8_MAX)
			break;
		((int8_t *)buf)[i] = (int8_t)x;
		return 0;
	case IPURT_DT_U8:
		if (x < 0 || x > UINT8_MAX)
			break;
		((uint8_t *)buf)[i] = (uint8_t)x;
		return 0;
	default:
		return bad(err, errlen, "input '%s': unsupported datatype", name);
	}
	return bad(err, errlen, "input '%s': element %llu (%lld) is out of range for %s", name,
		   (unsigned long long)i, (long long)x, srv_dtype_to_v2(dt));
}

/* Flat or nested arrays, row-major. */
static int put_data(const json_t *d, uint32_t dt, void *buf, uint64_t count, uint64_t *at,
		    int depth, const char *name, char *err, size_t errlen)
{
	size_t i;
	const json_t *v;

	if (depth > (int)IPUEF_MAX_RANK + 1)
		return bad(err, errlen, "input '%s': data nested deeper than the tensor's rank", name);
	json_array_foreach(d, i, v) {
		int rc;

		if (json_is_array(v)) {
			rc = put_data(v, dt, buf, count, at, depth + 1, name, err, errlen);
			if (rc)
				return rc;
			continue;
		}
		if (*at >= count)
			return bad(err, errlen, "input '%s': more data elements than its shape holds (%llu)",
				   name, (unsigned long long)count);
		rc = put_element(v, dt, buf, *at, name, err, errlen);
		if (rc)
			return rc;
		(*at)++;
	}
	return 0;
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

/*
 * An input whose parameters name a shared-memory region: its bytes read
 * from there.  1 when it did, 0 if the input names no region, else an
 * HTTP status (also when it carries data as well: other).
 */
static int shm_input(struct srv_request *req, const json_t *ip, struct ipurt_tensor *t, int idx,
		     const char *name, int other, char *err, size_t errlen)
{
	uint64_t off, size, bytes = srv_tensor_bytes(t), e;
	struct srv_shm_region *reg;
	const char *region;
	int rc;

	rc = srv_shm_params(ip, "input", name, &region, &off, &size, err, errlen);
	if (rc != 1)
		return rc;
	if (!req->shm)
		return bad(err, errlen, "input '%s': shared memory is off on this server "
			   "(ipu-serve --system-shared-memory off)", name);
	if (other)
		return bad(err, errlen, "input '%s' names a shared-memory region and carries 'data' or "
			   "binary_data_size too", name);
	if (size != bytes)
		return bad(err, errlen, "input '%s': shared_memory_byte_size %llu, but the tensor is %llu "
			   "bytes", name, (unsigned long long)size, (unsigned long long)bytes);
	reg = srv_shm_acquire(req->shm, region, off, size, err, errlen);
	if (!reg)
		return 400;
	req->in_owned[idx] = malloc(bytes ? bytes : 1);
	if (!req->in_owned[idx]) {
		srv_shm_release(req->shm, reg);
		snprintf(err, errlen, "out of memory for input '%s'", name);
		return 500;
	}
	t->data = req->in_owned[idx];
	/* copied now: the region may go or change once the request is queued */
	rc = srv_shm_read(reg, off, t->data, bytes, err, errlen);
	srv_shm_release(req->shm, reg);
	if (rc)
		return rc;
	if (t->dtype == IPURT_DT_BOOL) {
		for (e = 0; e < bytes; e++)
			if (((const uint8_t *)t->data)[e] > 1)
				return bad(err, errlen, "input '%s': BOOL element %llu is %u, not 0 or 1", name,
					   (unsigned long long)e, ((const uint8_t *)t->data)[e]);
	}
	return 1;
}

/* A requested output to be written into a region (held by the request): 0 or an HTTP status. */
static int shm_output(struct srv_request *req, const json_t *op, const struct ipurt_tensor *t,
		      const char *name, int binary, char *err, size_t errlen)
{
	uint64_t off, size, bytes = srv_tensor_bytes(t);
	const char *region;
	int rc;

	rc = srv_shm_params(op, "output", name, &region, &off, &size, err, errlen);
	if (rc != 1)
		return rc;
	if (!req->shm)
		return bad(err, errlen, "output '%s': shared memory is off on this server "
			   "(ipu-serve --system-shared-memory off)", name);
	if (binary)
		return bad(err, errlen, "output '%s': binary_data and a shared-memory region exclude each "
			   "other", name);
	if (size < bytes)
		return bad(err, errlen, "output '%s' is %llu bytes, its shared_memory_byte_size only %llu",
			   name, (unsigned long long)bytes, (unsigned long long)size);
	req->req_shm[req->nreq] = srv_shm_acquire(req->shm, region, off, size, err, errlen);
	if (!req->req_shm[req->nreq])
		return 400;
	req->req_shm_offset[req->nreq] = off;
	req->req_shm_size[req->nreq] = size;
	return 0;
}

int srv_request_parse(struct srv_model *m, const char *body, size_t len, size_t json_len,
		      struct srv_json_budget *budget, struct srv_request *req, char *err, size_t errlen)
{
	struct ipurt_runner *r = srv_model_runner(m);
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], nin, i;
	json_t *root, *inputs, *outputs, *params, *v;
	struct srv_json_doc doc;
	int nio, given[SRV_MAX_IO] = { 0 }, rc = 400;
	size_t bin_at = json_len, k;
	char names[1024];

	if (json_len > len)
		return bad(err, errlen, "Inference-Header-Content-Length %zu exceeds the body (%zu bytes)",
			   json_len, len);
	rc = srv_json_parse(budget, body, json_len, JSON_REJECT_DUPLICATES, &doc, err, errlen);
	if (rc) {
		srv_json_release(&doc);
		return rc;
	}
	root = doc.root;
	rc = 400;
	if (!json_is_object(root)) {
		bad(err, errlen, "the request must be a JSON object");
		goto out;
	}
	v = json_object_get(root, "id");
	if (v) {
		if (!json_is_string(v)) {
			bad(err, errlen, "'id' must be a string");
			goto out;
		}
		req->id = strdup(json_string_value(v));
		if (!req->id) {
			rc = 500;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	params = json_object_get(root, "parameters");
	if (params && !json_is_object(params)) {
		bad(err, errlen, "'parameters' must be an object");
		goto out;
	}
	v = json_object_get(params, "binary_data_output");
	if (v && !json_is_boolean(v)) {
		bad(err, errlen, "parameters.binary_data_output must be true or false");
		goto out;
	}
	req->binary_default = json_is_true(v);
	inputs = json_object_get(root, "inputs");
	if (!json_is_array(inputs) || !json_array_size(inputs)) {
		bad(err, errlen, "'inputs' must be a non-empty array of tensors");
		goto out;
	}
	/* the subgraph (fused models) and the rows come from the inputs */
	json_array_foreach(inputs, k, v) {
		const char *name = json_string_value(json_object_get(v, "name"));

		if (!json_is_object(v) || !name) {
			bad(err, errlen, "inputs[%zu] must be an object with a string 'name'", k);
			goto out;
		}
		if (m->fused && req->subgraph < 0)
			req->subgraph = ipurt_anchor_subgraph(name);
	}
	if (m->fused && req->subgraph < 0) {
		bad(err, errlen, "model '%s' is fused: name inputs 'graphK/NAME' of one subgraph K "
			"(see GET /v2/models/%s)", m->name, m->name);
		goto out;
	}
	nio = ipurt_runner_io(r, req->subgraph, 0, io, bdim, SRV_MAX_IO, &nin);
	if (nio <= 0) {
		rc = nio < 0 ? 500 : 400;
		snprintf(err, errlen, nio < 0 ? "the model has more than %d inputs and outputs"
					      : "subgraph %d of model '%s' has no inputs or outputs",
			 nio < 0 ? SRV_MAX_IO : req->subgraph, m->name);
		goto out;
	}
	req->rows = 0;
	json_array_foreach(inputs, k, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		json_t *shape = json_object_get(v, "shape"), *s;
		int idx = find_io(io, 0, nin, name);

		if (idx < 0) {
			list_names(io, 0, nin, names, sizeof(names));
			bad(err, errlen, "model '%s' has no input '%s'%s (inputs: %s)", m->name, name,
			    m->fused ? " in this subgraph" : "", names);
			goto out;
		}
		if (given[idx]++) {
			bad(err, errlen, "input '%s' is given twice", name);
			goto out;
		}
		if (!json_is_array(shape) || json_array_size(shape) != io[idx].rank) {
			bad(err, errlen, "input '%s': 'shape' must be an array of %u dimensions", name,
			    io[idx].rank);
			goto out;
		}
		if (bdim[idx] != IPUEF_NO_BATCH_DIM && !req->rows) {
			s = json_array_get(shape, bdim[idx]);
			if (!json_is_integer(s) || json_integer_value(s) < 1) {
				bad(err, errlen, "input '%s': shape[%u] must be a whole number >= 1", name,
				    bdim[idx]);
				goto out;
			}
			req->rows = (uint64_t)json_integer_value(s);
		}
	}
	for (i = 0; i < nin; i++) {
		if (!given[i]) {
			list_names(io, 0, nin, names, sizeof(names));
			bad(err, errlen, "input '%s' is missing (the model needs %s)", io[i].name, names);
			goto out;
		}
	}
	if (m->batch_dim != IPURT_NO_BATCHING_DIM) {
		if (!m->max_batch) {
			req->rows = m->compiled_batch; /* fixed shapes */
		} else if (req->rows > m->max_batch) {
			bad(err, errlen, "batch of %llu rows exceeds max_batch_size %llu of model '%s'",
			    (unsigned long long)req->rows, (unsigned long long)m->max_batch, m->name);
			goto out;
		}
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
	json_array_foreach(inputs, k, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		const char *dtn = json_string_value(json_object_get(v, "datatype"));
		json_t *shape = json_object_get(v, "shape"), *data = json_object_get(v, "data");
		json_t *ip = json_object_get(v, "parameters"), *bsz = json_object_get(ip, "binary_data_size");
		int idx = find_io(io, 0, nin, name);
		struct ipurt_tensor *t = &req->in[idx];
		uint64_t got[IPUEF_MAX_RANK], bytes = srv_tensor_bytes(t), count, at = 0;
		char want_s[160], got_s[160];
		size_t d;
		json_t *s;

		if (!dtn || srv_dtype_from_v2(dtn) != t->dtype) {
			bad(err, errlen, "input '%s': datatype %s, the model needs %s", name,
			    dtn ? dtn : "(none)", srv_dtype_to_v2(t->dtype));
			goto out;
		}
		json_array_foreach(shape, d, s) {
			if (!json_is_integer(s) || json_integer_value(s) < 0) {
				bad(err, errlen, "input '%s': shape[%zu] is not a whole number >= 0", name, d);
				goto out;
			}
			got[d] = (uint64_t)json_integer_value(s);
		}
		if (memcmp(got, t->dims, t->rank * sizeof(got[0]))) {
			shape_str(got, t->rank, got_s, sizeof(got_s));
			shape_str(t->dims, t->rank, want_s, sizeof(want_s));
			if (bdim[idx] != IPUEF_NO_BATCH_DIM && m->max_batch)
				bad(err, errlen, "input '%s': shape %s, the model needs %s for a batch of %llu "
				    "(dimension %u is the batch, up to %llu)", name, got_s, want_s,
				    (unsigned long long)req->rows, bdim[idx], (unsigned long long)m->max_batch);
			else
				bad(err, errlen, "input '%s': shape %s, the model needs %s", name, got_s, want_s);
			goto out;
		}
		if (ip && !json_is_object(ip)) {
			bad(err, errlen, "input '%s': 'parameters' must be an object", name);
			goto out;
		}
		rc = shm_input(req, ip, t, idx, name, data || bsz, err, errlen);
		if (rc == 1)
			continue;
		if (rc)
			goto out;
		rc = 400;
		if (bsz) {
			if (!json_is_integer(bsz) || json_integer_value(bsz) < 0) {
				bad(err, errlen, "input '%s': binary_data_size must be a whole number", name);
				goto out;
			}
			if ((uint64_t)json_integer_value(bsz) != bytes) {
				shape_str(t->dims, t->rank, got_s, sizeof(got_s));
				bad(err, errlen, "input '%s': binary_data_size %lld, but %s%s is %llu bytes",
				    name, (long long)json_integer_value(bsz), dtn, got_s,
				    (unsigned long long)bytes);
				goto out;
			}
			if (data) {
				bad(err, errlen, "input '%s' has both 'data' and binary_data_size", name);
				goto out;
			}
			if (len - bin_at < bytes) {
				bad(err, errlen, "input '%s': binary data ends after %zu of %llu bytes", name,
				    len - bin_at, (unsigned long long)bytes);
				goto out;
			}
			/* the body outlives the request: the device reads it in place */
			t->data = (void *)(body + bin_at);
			if (t->dtype == IPURT_DT_BOOL) {
				const uint8_t *b = t->data;
				uint64_t e;

				for (e = 0; e < bytes; e++) {
					if (b[e] > 1) {
						bad(err, errlen, "input '%s': BOOL element %llu is %u, not 0 or 1",
						    name, (unsigned long long)e, b[e]);
						goto out;
					}
				}
			}
			bin_at += bytes;
			continue;
		}
		if (!json_is_array(data)) {
			bad(err, errlen, "input '%s' needs 'data' (an array) or parameters.binary_data_size",
			    name);
			goto out;
		}
		count = bytes / ipurt_dtype_size(t->dtype);
		req->in_owned[idx] = malloc(bytes ? bytes : 1);
		if (!req->in_owned[idx]) {
			rc = 500;
			snprintf(err, errlen, "out of memory for input '%s'", name);
			goto out;
		}
		t->data = req->in_owned[idx];
		if (put_data(data, t->dtype, t->data, count, &at, 1, name, err, errlen))
			goto out;
		if (at != count) {
			bad(err, errlen, "input '%s': %llu data elements, its shape holds %llu", name,
			    (unsigned long long)at, (unsigned long long)count);
			goto out;
		}
	}
	if (bin_at != len) {
		bad(err, errlen, "%zu bytes of binary data after the last binary input", len - bin_at);
		goto out;
	}
	/* requested outputs (default: every output of the subgraph) */
	outputs = json_object_get(root, "outputs");
	if (outputs && !json_is_array(outputs)) {
		bad(err, errlen, "'outputs' must be an array");
		goto out;
	}
	if (outputs && json_array_size(outputs)) {
		json_array_foreach(outputs, k, v) {
			const char *name = json_string_value(json_object_get(v, "name"));
			json_t *op = json_object_get(v, "parameters"), *b = json_object_get(op, "binary_data");
			int idx;

			if (!json_is_object(v) || !name) {
				bad(err, errlen, "outputs[%zu] must be an object with a string 'name'", k);
				goto out;
			}
			idx = find_io(io, nin, (uint32_t)nio, name);
			if (idx < 0) {
				list_names(io, nin, (uint32_t)nio, names, sizeof(names));
				bad(err, errlen, "model '%s' has no output '%s'%s (outputs: %s)", m->name, name,
				    m->fused ? " in this subgraph" : "", names);
				goto out;
			}
			if (b && !json_is_boolean(b)) {
				bad(err, errlen, "output '%s': parameters.binary_data must be true or false", name);
				goto out;
			}
			if (req->nreq == SRV_MAX_IO) {
				bad(err, errlen, "more than %d requested outputs", SRV_MAX_IO);
				goto out;
			}
			rc = shm_output(req, op, &req->out[idx - nin], name, json_is_true(b), err, errlen);
			if (rc)
				goto out;
			rc = 400;
			req->req_out[req->nreq] = (uint32_t)idx - nin;
			/* one written into shared memory is in neither part of the answer */
			req->req_binary[req->nreq] = req->req_shm[req->nreq] ? 0
						     : b ? json_is_true(b) : req->binary_default;
			req->nreq++;
		}
	} else {
		for (i = 0; i < req->nout; i++) {
			req->req_out[req->nreq] = i;
			req->req_binary[req->nreq++] = req->binary_default;
		}
	}
	for (i = 0; i < req->nout; i++) {
		uint64_t bytes = srv_tensor_bytes(&req->out[i]);

		req->out[i].data = calloc(1, bytes ? bytes : 1);
		if (!req->out[i].data) {
			rc = 500;
			snprintf(err, errlen, "out of memory for output '%s'", req->out[i].name);
			goto out;
		}
	}
	rc = 0;
out:
	srv_json_release(&doc);
	return rc;
}
