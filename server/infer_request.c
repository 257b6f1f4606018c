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
#include "infer_core.h"
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

/* The typed data of a JSON input: its "data" array, flat or nested. */
static int fill_json(const void *ctx, uint32_t dt, void *buf, uint64_t count, const char *name,
		     char *err, size_t errlen)
{
	uint64_t at = 0;
	int rc = put_data(ctx, dt, buf, count, &at, 1, name, err, errlen);

	if (rc)
		return rc;
	if (at != count)
		return bad(err, errlen, "input '%s': %llu data elements, its shape holds %llu", name,
			   (unsigned long long)at, (unsigned long long)count);
	return 0;
}

/* An input's shared-memory window (the shared-memory extension, shm.h). */
struct shm_src {
	struct srv_shm *shm;
	const char *region;
	uint64_t off, size;
};

/* Its bytes, copied now: the region may go or change once the request is queued. */
static int fill_shm(const void *ctx, uint32_t dt, void *buf, uint64_t count, const char *name,
		    char *err, size_t errlen)
{
	const struct shm_src *src = ctx;
	uint64_t bytes = count * ipurt_dtype_size(dt), e;
	struct srv_shm_region *reg;
	int rc;

	if (src->size != bytes)
		return bad(err, errlen, "input '%s': shared_memory_byte_size %llu, but the tensor is %llu "
			   "bytes", name, (unsigned long long)src->size, (unsigned long long)bytes);
	reg = srv_shm_acquire(src->shm, src->region, src->off, src->size, err, errlen);
	if (!reg)
		return 400;
	rc = srv_shm_read(reg, src->off, buf, bytes, err, errlen);
	srv_shm_release(src->shm, reg);
	if (rc)
		return rc;
	if (dt == IPURT_DT_BOOL) {
		for (e = 0; e < bytes; e++)
			if (((const uint8_t *)buf)[e] > 1)
				return bad(err, errlen, "input '%s': BOOL element %llu is %u, not 0 or 1", name,
					   (unsigned long long)e, ((const uint8_t *)buf)[e]);
	}
	return 0;
}

/* Output k of req to be written into a region (held by the request): 0 or an HTTP status. */
static int shm_output(struct srv_request *req, uint32_t k, const json_t *op, const char *name,
		      int binary, char *err, size_t errlen)
{
	const struct ipurt_tensor *t = &req->out[req->req_out[k]];
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
	req->req_shm[k] = srv_shm_acquire(req->shm, region, off, size, err, errlen);
	if (!req->req_shm[k])
		return 400;
	req->req_shm_offset[k] = off;
	req->req_shm_size[k] = size;
	/* one written into shared memory is in neither part of the answer */
	req->req_binary[k] = 0;
	return 0;
}

/* Longest shape accepted as given; a longer one is refused by the rank check. */
#define JSON_SHAPE_MAX (IPUEF_MAX_RANK + 1)

int srv_request_parse(struct srv_model *m, const char *body, size_t len, size_t json_len,
		      struct srv_json_budget *budget, struct srv_request *req, char *err, size_t errlen)
{
	struct srv_input in[SRV_MAX_IO];
	int64_t shapes[SRV_MAX_IO][JSON_SHAPE_MAX];
	struct srv_output_req outs[SRV_MAX_IO];
	struct shm_src shm_in[SRV_MAX_IO];
	const json_t *out_params[SRV_MAX_IO];
	int out_binary[SRV_MAX_IO];
	json_t *root, *inputs, *outputs, *params, *v;
	struct srv_json_doc doc;
	uint32_t nin = 0, nout = 0;
	size_t bin_at = json_len, k;
	int rc;

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
	if (json_array_size(inputs) > SRV_MAX_IO) {
		bad(err, errlen, "more than %d inputs", SRV_MAX_IO);
		goto out;
	}
	json_array_foreach(inputs, k, v) {
		struct srv_input *x = &in[nin++];
		const char *name = json_string_value(json_object_get(v, "name"));
		json_t *shape = json_object_get(v, "shape"), *data = json_object_get(v, "data"), *s;
		json_t *ip = json_object_get(v, "parameters"), *bsz = json_object_get(ip, "binary_data_size");
		size_t d;

		if (!json_is_object(v) || !name) {
			bad(err, errlen, "inputs[%zu] must be an object with a string 'name'", k);
			goto out;
		}
		memset(x, 0, sizeof(*x));
		x->name = name;
		x->datatype = json_string_value(json_object_get(v, "datatype"));
		x->shape = shapes[k];
		x->rank = json_is_array(shape) && json_array_size(shape) <= IPUEF_MAX_RANK
				  ? (uint32_t)json_array_size(shape) : JSON_SHAPE_MAX;
		json_array_foreach(shape, d, s) {
			if (d == x->rank)
				break;
			if (!json_is_integer(s) || json_integer_value(s) < 0) {
				bad(err, errlen, "input '%s': shape[%zu] is not a whole number >= 0", name, d);
				goto out;
			}
			shapes[k][d] = (int64_t)json_integer_value(s);
		}
		if (ip && !json_is_object(ip)) {
			bad(err, errlen, "input '%s': 'parameters' must be an object", name);
			goto out;
		}
		rc = srv_shm_params(ip, "input", name, &shm_in[k].region, &shm_in[k].off, &shm_in[k].size,
				    err, errlen);
		if (rc == 1) {
			rc = 400;
			if (!req->shm) {
				bad(err, errlen, "input '%s': shared memory is off on this server "
				    "(ipu-serve --system-shared-memory off)", name);
				goto out;
			}
			if (data || bsz) {
				bad(err, errlen, "input '%s' names a shared-memory region and carries 'data' or "
				    "binary_data_size too", name);
				goto out;
			}
			shm_in[k].shm = req->shm;
			x->fill = fill_shm;
			x->fill_ctx = &shm_in[k];
			continue;
		}
		if (rc)
			goto out;
		rc = 400;
		if (bsz) {
			if (!json_is_integer(bsz) || json_integer_value(bsz) < 0) {
				bad(err, errlen, "input '%s': binary_data_size must be a whole number", name);
				goto out;
			}
			/* the body outlives the request: the device reads it in place */
			x->raw = body + bin_at;
			x->raw_declared = (uint64_t)json_integer_value(bsz);
			x->raw_avail = len - bin_at;
			x->raw_label = "binary_data_size";
			x->raw_also = data ? "'data'" : NULL;
			if (x->raw_declared <= x->raw_avail)
				bin_at += x->raw_declared;
			else
				bin_at = len;
			continue;
		}
		if (!json_is_array(data)) {
			bad(err, errlen, "input '%s' needs 'data' (an array) or parameters.binary_data_size",
			    name);
			goto out;
		}
		x->fill = fill_json;
		x->fill_ctx = data;
	}
	/* requested outputs (default: every output of the subgraph) */
	outputs = json_object_get(root, "outputs");
	if (outputs && !json_is_array(outputs)) {
		bad(err, errlen, "'outputs' must be an array");
		goto out;
	}
	json_array_foreach(outputs, k, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		json_t *op = json_object_get(v, "parameters"), *b = json_object_get(op, "binary_data");

		if (!json_is_object(v) || !name) {
			bad(err, errlen, "outputs[%zu] must be an object with a string 'name'", k);
			goto out;
		}
		if (b && !json_is_boolean(b)) {
			bad(err, errlen, "output '%s': parameters.binary_data must be true or false", name);
			goto out;
		}
		if (nout == SRV_MAX_IO) {
			bad(err, errlen, "more than %d requested outputs", SRV_MAX_IO);
			goto out;
		}
		out_params[nout] = op;
		out_binary[nout] = json_is_true(b);
		outs[nout].name = name;
		outs[nout++].binary = b ? json_is_true(b) : req->binary_default;
	}
	rc = srv_request_prepare(m, in, nin, outs, nout, req->binary_default, req, err, errlen);
	for (k = 0; !rc && k < nout; k++)
		rc = shm_output(req, (uint32_t)k, out_params[k], outs[k].name, out_binary[k], err, errlen);
	if (!rc && bin_at != len)
		rc = bad(err, errlen, "%zu bytes of binary data after the last binary input", len - bin_at);
out:
	srv_json_release(&doc);
	return rc;
}
