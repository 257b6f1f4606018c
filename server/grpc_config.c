// SPDX-License-Identifier: MIT
/*
 * grpc_config.c - Triton's ModelConfig RPC (server/grpc/
 * grpc_service_config.proto): a loaded version's effective configuration
 * as Triton's ModelConfig message (model_config.proto), the same facts as
 * GET /v2/models/M[/versions/V]/config.
 *
 * Tensors are written as Triton's configurations have them: with a
 * max_batch_size, dims leave the batch dimension out when it is the first
 * (a model batched along another dimension keeps it, as -1).  The instance
 * group's kind is KIND_MODEL: the model's own device, not a GPU or CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_server.h"
#include "kserve/grpc_service_config.pb-c.h"
#include "serve.h"

/* Triton's DataType of a runtime type ("TYPE_" and the v2 name). */
static Inference__DataType data_type(uint32_t dt)
{
	const ProtobufCEnumValue *v;
	char name[32];

	snprintf(name, sizeof(name), "TYPE_%s", srv_dtype_to_v2(dt) ? srv_dtype_to_v2(dt) : "");
	v = protobuf_c_enum_descriptor_get_value_by_name(&inference__data_type__descriptor, name);
	return v ? (Inference__DataType)v->value : INFERENCE__DATA_TYPE__TYPE_INVALID;
}

/* Everything the message points at, freed after packing. */
struct parts {
	Inference__ModelConfig cfg;
	Inference__ModelVersionPolicy pol;
	Inference__ModelVersionPolicy__Latest latest;
	Inference__ModelVersionPolicy__All all;
	Inference__ModelVersionPolicy__Specific specific;
	Inference__ModelInstanceGroup group, *groups[1];
	Inference__ModelDynamicBatching dyn;
	Inference__ModelQueuePolicy queue;
	int32_t preferred[SRV_MAX_PREFERRED];
	Inference__ModelInput in[SRV_MAX_IO], *inp[SRV_MAX_IO];
	Inference__ModelOutput out[SRV_MAX_IO], *outp[SRV_MAX_IO];
	int64_t dims[SRV_MAX_IO][IPUEF_MAX_RANK];
};

/* The dims of t as a configuration states them; returns their number. */
static size_t config_dims(const struct srv_model *m, const struct ipurt_tensor *t, uint32_t bdim,
			  int64_t *dims)
{
	int batched = m->max_batch && bdim != IPUEF_NO_BATCH_DIM;
	size_t n = 0;
	uint32_t d;

	for (d = 0; d < t->rank; d++) {
		if (batched && d == bdim && bdim == 0)
			continue;
		dims[n++] = batched && d == bdim ? -1 : (int64_t)t->dims[d];
	}
	return n;
}

static int fill(struct parts *p, struct srv_model *m, char *err, size_t errlen)
{
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], nin = 0, i;
	int nio;

	nio = ipurt_runner_io(srv_model_runner(m), -1, 0, io, bdim, SRV_MAX_IO, &nin);
	if (nio < 0) {
		snprintf(err, errlen, "the model has more than %d inputs and outputs", SRV_MAX_IO);
		return 500;
	}
	inference__model_config__init(&p->cfg);
	p->cfg.name = m->name;
	p->cfg.platform = "ipu_ipuef";
	p->cfg.max_batch_size = (int32_t)m->max_batch;
	inference__model_version_policy__init(&p->pol);
	if (m->cfg.policy == SRV_POLICY_ALL) {
		inference__model_version_policy__all__init(&p->all);
		p->pol.policy_choice_case = INFERENCE__MODEL_VERSION_POLICY__POLICY_CHOICE_ALL;
		p->pol.all = &p->all;
	} else if (m->cfg.policy == SRV_POLICY_LATEST) {
		inference__model_version_policy__latest__init(&p->latest);
		p->latest.num_versions = m->cfg.latest_n;
		p->pol.policy_choice_case = INFERENCE__MODEL_VERSION_POLICY__POLICY_CHOICE_LATEST;
		p->pol.latest = &p->latest;
	} else {
		inference__model_version_policy__specific__init(&p->specific);
		p->specific.n_versions = m->cfg.num_versions;
		p->specific.versions = m->cfg.versions;
		p->pol.policy_choice_case = INFERENCE__MODEL_VERSION_POLICY__POLICY_CHOICE_SPECIFIC;
		p->pol.specific = &p->specific;
	}
	p->cfg.version_policy = &p->pol;
	inference__model_instance_group__init(&p->group);
	p->group.kind = INFERENCE__MODEL_INSTANCE_GROUP__KIND__KIND_MODEL;
	p->group.count = (int32_t)m->num_instances;
	p->groups[0] = &p->group;
	p->cfg.n_instance_group = 1;
	p->cfg.instance_group = p->groups;
	if (m->cfg.dynamic_batching) {
		inference__model_dynamic_batching__init(&p->dyn);
		inference__model_queue_policy__init(&p->queue);
		for (i = 0; i < m->cfg.num_preferred; i++)
			p->preferred[i] = (int32_t)m->cfg.preferred[i];
		p->dyn.n_preferred_batch_size = m->cfg.num_preferred;
		p->dyn.preferred_batch_size = p->preferred;
		p->dyn.max_queue_delay_microseconds = m->cfg.max_queue_delay_us;
		p->queue.max_queue_size = (uint32_t)m->max_queue;
		p->dyn.default_queue_policy = &p->queue;
		p->cfg.scheduling_choice_case = INFERENCE__MODEL_CONFIG__SCHEDULING_CHOICE_DYNAMIC_BATCHING;
		p->cfg.dynamic_batching = &p->dyn;
	}
	for (i = 0; i < (uint32_t)nio; i++) {
		if (i < nin) {
			Inference__ModelInput *x = &p->in[i];

			inference__model_input__init(x);
			x->name = (char *)io[i].name;
			x->data_type = data_type(io[i].dtype);
			x->dims = p->dims[i];
			x->n_dims = config_dims(m, &io[i], bdim[i], p->dims[i]);
			p->inp[i] = x;
		} else {
			Inference__ModelOutput *x = &p->out[i - nin];

			inference__model_output__init(x);
			x->name = (char *)io[i].name;
			x->data_type = data_type(io[i].dtype);
			x->dims = p->dims[i];
			x->n_dims = config_dims(m, &io[i], bdim[i], p->dims[i]);
			p->outp[i - nin] = x;
		}
	}
	p->cfg.n_input = nin;
	p->cfg.input = p->inp;
	p->cfg.n_output = (uint32_t)nio - nin;
	p->cfg.output = p->outp;
	return 0;
}

int srv_grpc_model_config(struct srv_http *h, const uint8_t *msg, size_t len, uint8_t **out,
			  size_t *out_len, char *err, size_t errlen)
{
	Inference__ModelConfigRequest *q = inference__model_config_request__unpack(NULL, len, msg);
	Inference__ModelConfigResponse a = INFERENCE__MODEL_CONFIG_RESPONSE__INIT;
	struct srv_model *m = NULL;
	struct parts *p = NULL;
	int64_t v = -1;
	int rc = 400;

	if (!q) {
		snprintf(err, errlen, "the request is not a ModelConfigRequest protobuf message");
		return 400;
	}
	if (*q->version) {
		char *end;

		errno = 0;
		v = strtoll(q->version, &end, 10);
		if (*q->version < '0' || *q->version > '9' || errno || *end) {
			snprintf(err, errlen, "version '%.40s' must be a whole number", q->version);
			goto out;
		}
	}
	m = srv_repo_get(h->repo, q->name, v, err, errlen);
	if (!m) {
		rc = 404;
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		rc = 500;
		goto out;
	}
	rc = fill(p, m, err, errlen);
	if (rc)
		goto out;
	a.config = &p->cfg;
	*out_len = protobuf_c_message_get_packed_size(&a.base);
	*out = malloc(*out_len ? *out_len : 1);
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		rc = 500;
		goto out;
	}
	protobuf_c_message_pack(&a.base, *out);
out:
	free(p);
	if (m)
		srv_repo_put(h->repo, m);
	inference__model_config_request__free_unpacked(q, NULL);
	return rc;
}
