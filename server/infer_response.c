// SPDX-License-Identifier: MIT
/*
 * infer_response.c - the v2 infer response: the requested outputs as JSON
 * "data" or, with the binary tensor data extension, as raw little-endian
 * bytes after the JSON header (parameters.binary_data_size per output).
 *
 * Floats are written with 9 significant digits: enough for every float32
 * to read back to the same bits, so JSON results compare bit-exactly.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "ipu/half.h"
#include "json_budget.h"
#include "serve.h"
#include "shm.h"

static json_t *element(const void *data, uint32_t dt, uint64_t i)
{
	switch (dt) {
	case IPURT_DT_F32: return json_real(((const float *)data)[i]);
	case IPURT_DT_F16: return json_real(ipu_f16_to_f32(((const uint16_t *)data)[i]));
	case IPURT_DT_I32: return json_integer(((const int32_t *)data)[i]);
	case IPURT_DT_I64: return json_integer((json_int_t)((const int64_t *)data)[i]);
	case IPURT_DT_I8: return json_integer(((const int8_t *)data)[i]);
	case IPURT_DT_U8: return json_integer(((const uint8_t *)data)[i]);
	case IPURT_DT_BOOL: return json_boolean(((const uint8_t *)data)[i]);
	default: return NULL;
	}
}

static int finite_all(const struct ipurt_tensor *t, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		float f = t->dtype == IPURT_DT_F32 ? ((const float *)t->data)[i]
						   : ipu_f16_to_f32(((const uint16_t *)t->data)[i]);
		if (!isfinite(f))
			return 0;
	}
	return 1;
}

int srv_response_build(struct srv_model *m, const struct srv_request *req, char **out,
		       size_t *len, size_t *json_len, char *err, size_t errlen)
{
	json_t *root = json_object(), *outs = json_array();
	char ver[32], *text = NULL, *body;
	size_t tlen, total, at;
	uint64_t bin = 0;
	uint32_t i, d;
	int rc = 500;

	*out = NULL;
	snprintf(ver, sizeof(ver), "%lld", (long long)m->version);
	if (!root || !outs || json_object_set_new(root, "model_name", json_string(m->name)) ||
	    json_object_set_new(root, "model_version", json_string(ver)) ||
	    (req->id && json_object_set_new(root, "id", json_string(req->id))) ||
	    json_object_set(root, "outputs", outs))
		goto nomem;
	for (i = 0; i < req->nreq; i++) {
		const struct ipurt_tensor *t = &req->out[req->req_out[i]];
		uint64_t bytes = srv_tensor_bytes(t), n = bytes / ipurt_dtype_size(t->dtype), e;
		json_t *o = json_object(), *shape = json_array();

		if (!o || !shape || json_array_append_new(outs, o) ||
		    json_object_set_new(o, "name", json_string(t->name)) ||
		    json_object_set_new(o, "datatype", json_string(srv_dtype_to_v2(t->dtype))) ||
		    json_object_set_new(o, "shape", shape)) {
			json_decref(shape);
			goto nomem;
		}
		for (d = 0; d < t->rank; d++)
			if (json_array_append_new(shape, json_integer((json_int_t)t->dims[d])))
				goto nomem;
		if (req->req_shm[i]) {
			rc = srv_shm_write(req->req_shm[i], req->req_shm_offset[i], t->data, bytes, err, errlen);
			if (rc)
				goto fail;
			rc = 500;
			if (json_object_set_new(o, "parameters",
						json_pack("{s:s,s:I,s:I}", "shared_memory_region",
							  srv_shm_region_name(req->req_shm[i]),
							  "shared_memory_offset", (json_int_t)req->req_shm_offset[i],
							  "shared_memory_byte_size", (json_int_t)bytes)))
				goto nomem;
			continue;
		}
		if (req->req_binary[i]) {
			if (json_object_set_new(o, "parameters",
						json_pack("{s:I}", "binary_data_size", (json_int_t)bytes)))
				goto nomem;
			bin += bytes;
			continue;
		}
		if ((t->dtype == IPURT_DT_F32 || t->dtype == IPURT_DT_F16) && !finite_all(t, n)) {
			snprintf(err, errlen,
				 "output '%s' holds NaN or infinity, which JSON cannot carry; ask for it as "
				 "binary data (\"parameters\": {\"binary_data\": true})", t->name);
			rc = 422;
			goto fail;
		}
		{
			json_t *data = json_array();

			if (!data || json_object_set_new(o, "data", data))
				goto nomem;
			for (e = 0; e < n; e++)
				if (json_array_append_new(data, element(t->data, t->dtype, e)))
					goto nomem;
		}
	}
	text = srv_json_text(root, JSON_COMPACT | JSON_REAL_PRECISION(9) | JSON_ENSURE_ASCII, &tlen);
	if (!text)
		goto nomem;
	total = tlen + bin;
	body = realloc(text, total ? total : 1);
	if (!body)
		goto nomem;
	text = NULL;
	at = tlen;
	for (i = 0; i < req->nreq; i++) {
		const struct ipurt_tensor *t = &req->out[req->req_out[i]];

		if (!req->req_binary[i] || req->req_shm[i])
			continue;
		memcpy(body + at, t->data, srv_tensor_bytes(t));
		at += srv_tensor_bytes(t);
	}
	*out = body;
	*len = total;
	*json_len = tlen;
	json_decref(outs);
	json_decref(root);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory building the response");
	rc = 500;
fail:
	free(text);
	json_decref(outs);
	json_decref(root);
	return rc;
}
