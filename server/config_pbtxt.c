// SPDX-License-Identifier: MIT
/*
 * config_pbtxt.c - a model's config.pbtxt, as Triton and its Poplar
 * backend write it: the protobuf library parses the text against Triton's
 * model_config.proto (pbtxt.cc), protoc-c's generated code unpacks the
 * result here, and the fields ipu-serve acts on fill the same
 * struct srv_model_config as config.yaml.  The list below is the whole of
 * what is acted on; any other field Triton defines is refused by its path
 * (a setting that silently did nothing would mislead whoever wrote it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_config.pb-c.h"
#include "pbtxt.h"
#include "serve.h"

static const char *const acted[] = {
	"name", "platform", "backend", "max_batch_size", "default_model_filename",
	"input", "input.name", "input.data_type", "input.dims", "input.allow_ragged_batch",
	"output", "output.name", "output.data_type", "output.dims",
	"version_policy", "version_policy.latest", "version_policy.latest.num_versions",
	"version_policy.all", "version_policy.specific", "version_policy.specific.versions",
	"dynamic_batching", "dynamic_batching.preferred_batch_size",
	"dynamic_batching.max_queue_delay_microseconds", "dynamic_batching.default_queue_policy",
	"dynamic_batching.default_queue_policy.max_queue_size",
	"instance_group", "instance_group.name", "instance_group.count", "instance_group.kind",
	"parameters", "parameters.key", "parameters.value", "parameters.value.string_value",
	NULL,
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The text and the message buffer, to name a refused value's line. */
struct where {
	const char *text;
	size_t len;
	char *err;
	size_t errlen;
};

/*
 * A value refused: "line L: " (the field's place, as the library saw it)
 * and the message.  Not for parameters: a map's entries are read back in
 * no fixed order, so the message names the key instead.
 */
static int at(struct where *w, const char *path, int index, const char *fmt, ...)
{
	int line = srv_pbtxt_line(w->text, w->len, path, index);
	size_t k = 0;
	va_list ap;

	if (line > 0)
		k = (size_t)snprintf(w->err, w->errlen, "line %d: ", line);
	if (k >= w->errlen)
		k = 0;
	va_start(ap, fmt);
	vsnprintf(w->err + k, w->errlen - k, fmt, ap);
	va_end(ap);
	return -1;
}

/* The paths of an input's or output's fields. */
static const char *name_of(const char *what)
{
	return !strcmp(what, "input") ? "input.name" : "output.name";
}

static const char *type_of(const char *what)
{
	return !strcmp(what, "input") ? "input.data_type" : "output.data_type";
}

static const char *dims_of(const char *what)
{
	return !strcmp(what, "input") ? "input.dims" : "output.dims";
}

/* Triton's TYPE_X is the v2 protocol's X; the runtime's types only. */
static uint32_t dtype_of(Inference__DataType t)
{
	static const struct { Inference__DataType t; const char *v2; } map[] = {
		{ INFERENCE__DATA_TYPE__TYPE_BOOL, "BOOL" }, { INFERENCE__DATA_TYPE__TYPE_UINT8, "UINT8" },
		{ INFERENCE__DATA_TYPE__TYPE_UINT16, "UINT16" }, { INFERENCE__DATA_TYPE__TYPE_UINT32, "UINT32" },
		{ INFERENCE__DATA_TYPE__TYPE_UINT64, "UINT64" }, { INFERENCE__DATA_TYPE__TYPE_INT8, "INT8" },
		{ INFERENCE__DATA_TYPE__TYPE_INT16, "INT16" }, { INFERENCE__DATA_TYPE__TYPE_INT32, "INT32" },
		{ INFERENCE__DATA_TYPE__TYPE_INT64, "INT64" }, { INFERENCE__DATA_TYPE__TYPE_FP16, "FP16" },
		{ INFERENCE__DATA_TYPE__TYPE_FP32, "FP32" }, { INFERENCE__DATA_TYPE__TYPE_FP64, "FP64" },
		{ INFERENCE__DATA_TYPE__TYPE_STRING, "BYTES" }, { INFERENCE__DATA_TYPE__TYPE_BF16, "BF16" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].t == t)
			return srv_dtype_from_v2(map[i].v2);
	return IPURT_DT_INVALID;
}

static const char *type_name(Inference__DataType t)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(&inference__data_type__descriptor,
									     (int)t);

	return v ? v->name : "?";
}

static int tensors(struct where *w, const char *what, size_t n, char **names,
		   Inference__DataType *types, size_t *ndims, int64_t **dims,
		   struct srv_tensor_decl *out, uint32_t *nout)
{
	if (n > SRV_MAX_IO)
		return at(w, what, -1, "%s: %zu tensors, at most %d", what, n, SRV_MAX_IO);
	for (size_t i = 0; i < n; i++) {
		struct srv_tensor_decl *d = &out[i];

		if (!names[i][0])
			return at(w, what, (int)i, "%s[%zu]: name is missing", what, i);
		if (strlen(names[i]) >= sizeof(d->name))
			return at(w, name_of(what), (int)i,
				    "%s[%zu]: name longer than %zu bytes", what, i,
				    sizeof(d->name) - 1);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(out[k].name, names[i]))
				return at(w, name_of(what), (int)i,
					    "%s '%s' is declared twice", what, names[i]);
		snprintf(d->name, sizeof(d->name), "%s", names[i]);
		d->dtype = dtype_of(types[i]);
		if (d->dtype == IPURT_DT_INVALID)
			return at(w, type_of(what), (int)i,
				    "%s '%s': data_type %s is not a type the runtime has",
				    what, names[i], type_name(types[i]));
		if (ndims[i] > IPUEF_MAX_RANK)
			return at(w, dims_of(what), (int)i,
				    "%s '%s': %zu dims, at most %u", what, names[i], ndims[i],
				    IPUEF_MAX_RANK);
		d->rank = (uint32_t)ndims[i];
		for (size_t k = 0; k < ndims[i]; k++) {
			if (dims[i][k] < -1)
				return at(w, dims_of(what), (int)i,
					    "%s '%s': dims[%zu] is %lld (a size, or -1 for any)",
					    what, names[i], k, (long long)dims[i][k]);
			d->dims[k] = dims[i][k];
		}
	}
	*nout = (uint32_t)n;
	return 0;
}

/* A packing parameter's tensor name (srv_pack_config, Documentation/serve/packing.md). */
static int pack_name(const char *k, const char *v, char *out, char *err, size_t errlen)
{
	if (!*v || strlen(v) >= SRV_PACK_NAME)
		return fail(err, errlen, "parameters %s: string_value must be a tensor name of 1 to %d "
			    "characters", k, SRV_PACK_NAME - 1);
	snprintf(out, SRV_PACK_NAME, "%s", v);
	return 0;
}

static int pack_count(const char *k, const char *v, uint64_t max, uint64_t *out, char *err,
		      size_t errlen)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!*v || *v == '-' || *v == '+' || *end || errno || !n || n > max)
		return fail(err, errlen, "parameters %s: string_value '%s' is not a whole number from "
			    "1 to %llu", k, v, (unsigned long long)max);
	*out = n;
	return 0;
}

/*
 * Packing from config.pbtxt: the sequence inputs are the ones with
 * allow_ragged_batch, the rest comes from parameters packing_*.
 */
static int packing_param(const char *k, const char *v, struct srv_pack_config *p, char *err,
			 size_t errlen)
{
	if (!strcmp(k, "packing_mask_input"))
		return pack_name(k, v, p->mask_input, err, errlen);
	if (!strcmp(k, "packing_position_input"))
		return pack_name(k, v, p->position_input, err, errlen);
	if (!strcmp(k, "packing_mask_kind")) {
		if (!strcmp(v, "segment_ids"))
			p->mask_kind = SRV_PACK_MASK_SEGMENT_IDS;
		else if (!strcmp(v, "additive"))
			p->mask_kind = SRV_PACK_MASK_ADDITIVE;
		else
			return fail(err, errlen, "parameters packing_mask_kind: string_value '%s' is not "
				    "segment_ids or additive", v);
		return 0;
	}
	if (!strcmp(k, "packing_max_sequence_length"))
		return pack_count(k, v, 1u << 20, &p->max_sequence_length, err, errlen);
	if (!strcmp(k, "packing_max_sequences_per_row"))
		return pack_count(k, v, 1u << 16, &p->max_sequences_per_row, err, errlen);
	if (!strcmp(k, "packing_segment_outputs")) {
		const char *at = v;

		/* comma-separated names */
		p->num_segment_outputs = 0;
		while (*at) {
			size_t n = strcspn(at, ",");

			if (p->num_segment_outputs == SRV_PACK_MAX_NAMES)
				return fail(err, errlen, "parameters packing_segment_outputs: more than %d "
					    "names", SRV_PACK_MAX_NAMES);
			if (!n || n >= SRV_PACK_NAME)
				return fail(err, errlen, "parameters packing_segment_outputs: '%s' must be "
					    "output names separated by commas", v);
			memcpy(p->segment_outputs[p->num_segment_outputs], at, n);
			p->segment_outputs[p->num_segment_outputs++][n] = 0;
			at += n + (at[n] == ',');
		}
		return 0;
	}
	return fail(err, errlen, "parameters: key '%s' is not one ipu-serve acts on (known: "
		    "synchronous_execution, timeout_ns, packing_mask_input, packing_mask_kind, "
		    "packing_position_input, packing_max_sequence_length, packing_max_sequences_per_row, "
		    "packing_segment_outputs)", k);
}

static int packing(const Inference__ModelConfig *m, struct srv_model_config *c, char *err,
		   size_t errlen)
{
	struct srv_pack_config *p = &c->packing;
	int any = p->mask_input[0] || p->position_input[0] || p->max_sequence_length ||
		  p->max_sequences_per_row || p->num_segment_outputs;

	for (size_t i = 0; i < m->n_input; i++) {
		if (!m->input[i]->allow_ragged_batch)
			continue;
		if (p->num_seq_inputs == SRV_PACK_MAX_NAMES)
			return fail(err, errlen, "more than %d inputs with allow_ragged_batch",
				    SRV_PACK_MAX_NAMES);
		if (pack_name("allow_ragged_batch", m->input[i]->name,
			      p->seq_inputs[p->num_seq_inputs], err, errlen))
			return -1;
		p->num_seq_inputs++;
	}
	if (!any && !p->num_seq_inputs)
		return 0;
	if (!p->num_seq_inputs)
		return fail(err, errlen, "packing: no input has allow_ragged_batch: true (the inputs the "
			    "client sends as [1, L])");
	if (!p->mask_input[0] || !p->max_sequence_length || !p->max_sequences_per_row)
		return fail(err, errlen, "allow_ragged_batch packs sequences: parameters "
			    "packing_mask_input, packing_max_sequence_length and "
			    "packing_max_sequences_per_row are needed");
	p->enabled = 1;
	return 0;
}

/* "true"/"false" as the Poplar backend's parameters are written, or 1/0. */
static int boolean(const char *s, int *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "1")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	return -1;
}

static int parameters(struct where *w, const Inference__ModelConfig *m, struct srv_model_config *c)
{
	for (size_t i = 0; i < m->n_parameters; i++) {
		const char *k = m->parameters[i]->key;
		const char *v = m->parameters[i]->value ? m->parameters[i]->value->string_value : "";

		if (!strcmp(k, "synchronous_execution")) {
			if (boolean(v, &c->synchronous))
				return fail(w->err, w->errlen,
					    "parameters synchronous_execution: string_value "
					    "'%s' is not true or false", v);
		} else if (!strcmp(k, "timeout_ns")) {
			char *end;
			unsigned long long ns;

			errno = 0;
			ns = strtoull(v, &end, 10);
			if (!*v || *v == '-' || *v == '+' || *end || errno || ns > 86400000000000ull)
				return fail(w->err, w->errlen,
					    "parameters timeout_ns: string_value '%s' is not a "
					    "whole number of nanoseconds up to 86400000000000 (0: never)", v);
			c->timeout_ns = ns;
			c->has_timeout = 1;
		} else if (packing_param(k, v, &c->packing, w->err, w->errlen)) {
			return -1;
		}
	}
	return packing(m, c, w->err, w->errlen);
}

static int fill(struct where *w, const Inference__ModelConfig *m, const char *model,
		struct srv_model_config *c)
{
	uint32_t total = 0;

	/* Triton: the name is optional and must be the folder's when given */
	if (m->name[0] && strcmp(m->name, model))
		return at(w, "name", -1,
			    "name '%s' differs from the model's folder '%s'", m->name, model);
	/* the Poplar backend's name, ours, and ONNX models that are compiled at load */
	if (m->backend[0] && strcmp(m->backend, "poplar") && strcmp(m->backend, "ipu") &&
	    strcmp(m->backend, "onnxruntime"))
		return at(w, "backend", -1,
			    "backend '%s': ipu-serve runs .ipuef models and compiles "
			    "model.onnx (use poplar, ipu or onnxruntime, or leave it out)", m->backend);
	if (m->platform[0] && strcmp(m->platform, "ipu_ipuef") && strcmp(m->platform, "onnxruntime_onnx"))
		return at(w, "platform", -1,
			    "platform '%s': ipu-serve runs .ipuef models and compiles "
			    "model.onnx (use ipu_ipuef or onnxruntime_onnx, or leave it out)", m->platform);
	if (m->max_batch_size < 0 || m->max_batch_size > (1 << 30))
		return at(w, "max_batch_size", -1,
			    "max_batch_size %d: must be 0 to %d", m->max_batch_size, 1 << 30);
	/* written or not, proto3 reads it as 0: Triton's "no batching" */
	c->max_batch_size = m->max_batch_size;
	c->has_max_batch_size = 1;
	if (m->default_model_filename[0]) {
		const char *f = m->default_model_filename;

		if (strchr(f, '/') || f[0] == '.' || strlen(f) >= sizeof(c->model_filename))
			return at(w, "default_model_filename", -1,
				    "default_model_filename '%s' must be a file name in the "
				    "version folder", f);
		snprintf(c->model_filename, sizeof(c->model_filename), "%s", f);
	}
	{
		char *n[SRV_MAX_IO];
		Inference__DataType t[SRV_MAX_IO];
		size_t nd[SRV_MAX_IO];
		int64_t *d[SRV_MAX_IO];

		if (m->n_input > SRV_MAX_IO || m->n_output > SRV_MAX_IO)
			return at(w, "input", -1, "more than %d inputs or outputs", SRV_MAX_IO);
		for (size_t i = 0; i < m->n_input; i++) {
			n[i] = m->input[i]->name;
			t[i] = m->input[i]->data_type;
			nd[i] = m->input[i]->n_dims;
			d[i] = m->input[i]->dims;
		}
		if (tensors(w, "input", m->n_input, n, t, nd, d, c->inputs, &c->num_inputs))
			return -1;
		for (size_t i = 0; i < m->n_output; i++) {
			n[i] = m->output[i]->name;
			t[i] = m->output[i]->data_type;
			nd[i] = m->output[i]->n_dims;
			d[i] = m->output[i]->dims;
		}
		if (tensors(w, "output", m->n_output, n, t, nd, d, c->outputs, &c->num_outputs))
			return -1;
	}
	if (m->scheduling_choice_case == INFERENCE__MODEL_CONFIG__SCHEDULING_CHOICE_DYNAMIC_BATCHING) {
		const Inference__ModelDynamicBatching *db = m->dynamic_batching;

		c->dynamic_batching = 1;
		if (db->n_preferred_batch_size > SRV_MAX_PREFERRED)
			return at(w, "dynamic_batching.preferred_batch_size", -1,
				    "more than %d preferred_batch_size values", SRV_MAX_PREFERRED);
		for (size_t i = 0; i < db->n_preferred_batch_size; i++) {
			if (db->preferred_batch_size[i] < 1 || db->preferred_batch_size[i] > (1 << 30))
				return at(w, "dynamic_batching.preferred_batch_size", -1,
					    "preferred_batch_size %d: must be 1 to %d",
					    db->preferred_batch_size[i], 1 << 30);
			c->preferred[i] = (uint64_t)db->preferred_batch_size[i];
		}
		c->num_preferred = (uint32_t)db->n_preferred_batch_size;
		if (db->max_queue_delay_microseconds > 60000000)
			return at(w, "dynamic_batching.max_queue_delay_microseconds", -1,
				    "max_queue_delay_microseconds %llu: at most 60000000",
				    (unsigned long long)db->max_queue_delay_microseconds);
		c->max_queue_delay_us = db->max_queue_delay_microseconds;
		if (db->default_queue_policy) {
			if (db->default_queue_policy->max_queue_size > (1u << 24))
				return at(w, "dynamic_batching.default_queue_policy.max_queue_size", -1,
					    "max_queue_size %u: at most %u",
					    db->default_queue_policy->max_queue_size, 1u << 24);
			c->max_queue_size = db->default_queue_policy->max_queue_size;
			c->has_max_queue_size = 1;
		}
	}
	for (size_t i = 0; i < m->n_instance_group; i++) {
		const Inference__ModelInstanceGroup *g = m->instance_group[i];
		/* Triton: a count left out is 1 */
		int32_t count = g->count ? g->count : 1;

		/*
		 * Every instance is a worker on an IPU (--device, else an in-process
		 * device of its own): Triton's KIND_CPU (the Poplar backend's kind),
		 * KIND_GPU and KIND_AUTO all mean that; KIND_MODEL would leave the
		 * placement to the model, which an .ipuef does not do.
		 */
		if (g->kind != INFERENCE__MODEL_INSTANCE_GROUP__KIND__KIND_AUTO &&
		    g->kind != INFERENCE__MODEL_INSTANCE_GROUP__KIND__KIND_CPU &&
		    g->kind != INFERENCE__MODEL_INSTANCE_GROUP__KIND__KIND_GPU)
			return at(w, "instance_group.kind", (int)i,
				    "instance_group[%zu] kind %d: KIND_AUTO, KIND_CPU or "
				    "KIND_GPU (each instance runs on an IPU)", i, (int)g->kind);
		if (count < 1 || count > 64)
			return at(w, "instance_group.count", (int)i,
				    "instance_group[%zu] count %d: must be 1 to 64", i, count);
		total += (uint32_t)count;
		if (total > 64)
			return at(w, "instance_group", -1,
				    "instance_group: %u instances in all, at most 64", total);
	}
	if (total)
		c->instance_count = total;
	if (m->version_policy) {
		const Inference__ModelVersionPolicy *p = m->version_policy;

		switch (p->policy_choice_case) {
		case INFERENCE__MODEL_VERSION_POLICY__POLICY_CHOICE_ALL:
			c->policy = SRV_POLICY_ALL;
			break;
		case INFERENCE__MODEL_VERSION_POLICY__POLICY_CHOICE_SPECIFIC:
			c->policy = SRV_POLICY_SPECIFIC;
			if (!p->specific->n_versions)
				return at(w, "version_policy.specific", -1,
					    "version_policy specific needs versions: [N, ...]");
			if (p->specific->n_versions > SRV_MAX_VERSIONS)
				return at(w, "version_policy.specific.versions", -1,
					    "more than %d versions", SRV_MAX_VERSIONS);
			for (size_t i = 0; i < p->specific->n_versions; i++) {
				if (p->specific->versions[i] < 0)
					return at(w, "version_policy.specific.versions", -1,
						    "version_policy specific: version %lld is "
						    "negative", (long long)p->specific->versions[i]);
				c->versions[i] = p->specific->versions[i];
			}
			c->num_versions = (uint32_t)p->specific->n_versions;
			break;
		case INFERENCE__MODEL_VERSION_POLICY__POLICY_CHOICE_LATEST:
			c->policy = SRV_POLICY_LATEST;
			/* Triton: num_versions left out (0) is 1 */
			c->latest_n = p->latest->num_versions ? p->latest->num_versions : 1;
			if (c->latest_n > SRV_MAX_VERSIONS)
				return at(w, "version_policy.latest.num_versions", -1,
					    "version_policy latest num_versions %u: at most %d",
					    c->latest_n, SRV_MAX_VERSIONS);
			break;
		default:
			break;
		}
	}
	return parameters(w, m, c);
}

int srv_model_config_parse_pbtxt(const char *text, size_t len, const char *model,
				 struct srv_model_config *c, char *err, size_t errlen)
{
	struct where w = { text, len, err, errlen };
	Inference__ModelConfig *m;
	uint8_t *bin;
	size_t binlen;
	int rc;

	srv_model_config_init(c);
	if (srv_pbtxt_encode(text, len, acted, &bin, &binlen, err, errlen))
		return -1;
	m = inference__model_config__unpack(NULL, binlen, bin);
	free(bin);
	if (!m)
		return fail(err, errlen, "the configuration could not be decoded (out of memory?)");
	rc = fill(&w, m, model, c);
	inference__model_config__free_unpacked(m, NULL);
	if (rc)
		srv_model_config_init(c);
	return rc;
}
