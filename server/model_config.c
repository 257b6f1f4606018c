// SPDX-License-Identifier: MIT
/*
 * model_config.c - a model's config.yaml with Triton's field names:
 *
 *   name: mlp
 *   max_batch_size: 16
 *   dynamic_batching:
 *     preferred_batch_size: [8, 16]
 *     max_queue_delay_microseconds: 500
 *     default_queue_policy: { max_queue_size: 64 }
 *   instance_group: [ { count: 2 } ]
 *   version_policy: { latest: { num_versions: 2 } }   # or all: {} / specific: { versions: [1, 3] }
 *   packing:                          # variable-length requests packed (pack.h)
 *     sequence_inputs: [input_ids]
 *     mask_input: attention_mask
 *     mask_kind: segment_ids          # or additive
 *     position_input: position_ids
 *     max_sequence_length: 128
 *     max_sequences_per_row: 8
 *     segment_outputs: [pooled]
 *
 * Unknown fields are refused (a typo would otherwise silently change
 * nothing), naming the field and the file.  A folder may hold Triton's
 * config.pbtxt instead (config_pbtxt.c, chosen by config_read.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "serve.h"

struct cfg_ctx {
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

static int fail(struct cfg_ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	size_t k = 0;

	if (n)
		k = (size_t)snprintf(c->err, c->errlen, "line %lu: ", (unsigned long)n->start_mark.line + 1);
	if (k >= c->errlen)
		k = 0;
	va_start(ap, fmt);
	vsnprintf(c->err + k, c->errlen - k, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_u64(struct cfg_ctx *c, const yaml_node_t *n, const char *field, uint64_t max,
		   uint64_t *out)
{
	const char *s = scalar(n);
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return fail(c, n, "%s must be a whole number from 0 to %llu", field,
			    (unsigned long long)max);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return fail(c, n, "%s must be a whole number from 0 to %llu, got '%s'", field,
			    (unsigned long long)max, s);
	*out = v;
	return 0;
}

static int expect(struct cfg_ctx *c, const yaml_node_t *n, yaml_node_type_t t, const char *field)
{
	if (n && n->type == t)
		return 0;
	return fail(c, n, "%s must be a %s", field,
		    t == YAML_MAPPING_NODE ? "mapping" : t == YAML_SEQUENCE_NODE ? "list" : "value");
}

#define FOR_PAIRS(c, n, p)                                                               \
	for (yaml_node_pair_t *p = (n)->data.mapping.pairs.start; p < (n)->data.mapping.pairs.top; p++)
#define FOR_ITEMS(c, n, it)                                                              \
	for (yaml_node_item_t *it = (n)->data.sequence.items.start; it < (n)->data.sequence.items.top; it++)
#define NODE(c, i) yaml_document_get_node((c)->doc, (i))

static int parse_dynamic(struct cfg_ctx *c, yaml_node_t *n, struct srv_model_config *cfg)
{
	cfg->dynamic_batching = 1;
	/* "dynamic_batching: {}" and "dynamic_batching:" (null) both enable it */
	if (n->type == YAML_SCALAR_NODE && !n->data.scalar.length)
		return 0;
	if (expect(c, n, YAML_MAPPING_NODE, "dynamic_batching"))
		return -1;
	FOR_PAIRS(c, n, p) {
		const char *k = scalar(NODE(c, p->key));
		yaml_node_t *v = NODE(c, p->value);

		if (!k)
			return fail(c, v, "dynamic_batching: keys must be names");
		if (!strcmp(k, "max_queue_delay_microseconds")) {
			if (get_u64(c, v, k, 60000000, &cfg->max_queue_delay_us))
				return -1;
		} else if (!strcmp(k, "preferred_batch_size")) {
			uint64_t b;

			if (v->type == YAML_SCALAR_NODE) {
				if (get_u64(c, v, k, 1u << 30, &b))
					return -1;
				cfg->preferred[0] = b;
				cfg->num_preferred = 1;
				continue;
			}
			if (expect(c, v, YAML_SEQUENCE_NODE, k))
				return -1;
			cfg->num_preferred = 0;
			FOR_ITEMS(c, v, it) {
				yaml_node_t *e = NODE(c, *it);

				if (cfg->num_preferred == SRV_MAX_PREFERRED)
					return fail(c, e, "more than %d preferred_batch_size values",
						    SRV_MAX_PREFERRED);
				if (get_u64(c, e, k, 1u << 30, &b))
					return -1;
				if (!b)
					return fail(c, e, "preferred_batch_size values must be at least 1");
				cfg->preferred[cfg->num_preferred++] = b;
			}
		} else if (!strcmp(k, "default_queue_policy")) {
			if (expect(c, v, YAML_MAPPING_NODE, k))
				return -1;
			FOR_PAIRS(c, v, q) {
				const char *qk = scalar(NODE(c, q->key));

				if (!qk || strcmp(qk, "max_queue_size"))
					return fail(c, NODE(c, q->key),
						    "default_queue_policy: unknown field '%s' (known: max_queue_size)",
						    qk ? qk : "?");
				if (get_u64(c, NODE(c, q->value), qk, 1u << 24, &cfg->max_queue_size))
					return -1;
				cfg->has_max_queue_size = 1;
			}
		} else {
			return fail(c, NODE(c, p->key),
				    "dynamic_batching: unknown field '%s' (known: preferred_batch_size, "
				    "max_queue_delay_microseconds, default_queue_policy)", k);
		}
	}
	return 0;
}

static int parse_instances(struct cfg_ctx *c, yaml_node_t *n, struct srv_model_config *cfg)
{
	uint32_t total = 0;

	if (expect(c, n, YAML_SEQUENCE_NODE, "instance_group"))
		return -1;
	FOR_ITEMS(c, n, it) {
		yaml_node_t *g = NODE(c, *it);
		uint64_t count = 1;

		if (expect(c, g, YAML_MAPPING_NODE, "an instance_group entry"))
			return -1;
		FOR_PAIRS(c, g, p) {
			const char *k = scalar(NODE(c, p->key));
			yaml_node_t *v = NODE(c, p->value);

			if (k && !strcmp(k, "count")) {
				if (get_u64(c, v, "instance_group count", 64, &count))
					return -1;
				if (!count)
					return fail(c, v, "instance_group count must be at least 1");
			} else if (k && !strcmp(k, "kind")) {
				/* the devices are chosen by --device; only the default kinds mean that */
				const char *kind = scalar(v);

				if (!kind || (strcmp(kind, "KIND_AUTO") && strcmp(kind, "KIND_IPU")))
					return fail(c, v, "instance_group kind must be KIND_AUTO or KIND_IPU, got '%s'",
						    kind ? kind : "?");
			} else if (k && !strcmp(k, "name")) {
				if (!scalar(v))
					return fail(c, v, "instance_group name must be a value");
			} else {
				return fail(c, NODE(c, p->key),
					    "instance_group: unknown field '%s' (known: count, kind, name)",
					    k ? k : "?");
			}
		}
		total += (uint32_t)count;
	}
	if (total > 64)
		return fail(c, n, "instance_group: %u instances in all, at most 64", total);
	cfg->instance_count = total ? total : 1;
	return 0;
}

static int parse_policy(struct cfg_ctx *c, yaml_node_t *n, struct srv_model_config *cfg)
{
	const char *k;
	yaml_node_t *v;

	if (expect(c, n, YAML_MAPPING_NODE, "version_policy"))
		return -1;
	if (n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1)
		return fail(c, n, "version_policy takes exactly one of latest, all, specific");
	k = scalar(NODE(c, n->data.mapping.pairs.start->key));
	v = NODE(c, n->data.mapping.pairs.start->value);
	if (k && !strcmp(k, "all")) {
		cfg->policy = SRV_POLICY_ALL;
		return 0;
	}
	if (k && !strcmp(k, "latest")) {
		uint64_t num = 1;

		cfg->policy = SRV_POLICY_LATEST;
		if (v->type == YAML_MAPPING_NODE) {
			FOR_PAIRS(c, v, p) {
				const char *f = scalar(NODE(c, p->key));

				if (!f || strcmp(f, "num_versions"))
					return fail(c, NODE(c, p->key),
						    "version_policy latest: unknown field '%s' (known: num_versions)",
						    f ? f : "?");
				if (get_u64(c, NODE(c, p->value), f, SRV_MAX_VERSIONS, &num))
					return -1;
				if (!num)
					return fail(c, NODE(c, p->value), "num_versions must be at least 1");
			}
		} else if (scalar(v) && *scalar(v)) {
			return fail(c, v, "version_policy latest must be a mapping { num_versions: N }");
		}
		cfg->latest_n = (uint32_t)num;
		return 0;
	}
	if (k && !strcmp(k, "specific")) {
		cfg->policy = SRV_POLICY_SPECIFIC;
		cfg->num_versions = 0;
		if (expect(c, v, YAML_MAPPING_NODE, "version_policy specific"))
			return -1;
		FOR_PAIRS(c, v, p) {
			const char *f = scalar(NODE(c, p->key));
			yaml_node_t *l = NODE(c, p->value);

			if (!f || strcmp(f, "versions"))
				return fail(c, NODE(c, p->key),
					    "version_policy specific: unknown field '%s' (known: versions)",
					    f ? f : "?");
			if (expect(c, l, YAML_SEQUENCE_NODE, "versions"))
				return -1;
			FOR_ITEMS(c, l, it) {
				uint64_t ver;

				if (cfg->num_versions == SRV_MAX_VERSIONS)
					return fail(c, l, "more than %d versions", SRV_MAX_VERSIONS);
				if (get_u64(c, NODE(c, *it), "a version", INT64_MAX, &ver))
					return -1;
				cfg->versions[cfg->num_versions++] = (int64_t)ver;
			}
		}
		if (!cfg->num_versions)
			return fail(c, v, "version_policy specific needs versions: [N, ...]");
		return 0;
	}
	return fail(c, n, "version_policy: unknown policy '%s' (known: latest, all, specific)",
		    k ? k : "?");
}

static int get_name(struct cfg_ctx *c, const yaml_node_t *n, const char *field, char *out)
{
	const char *s = scalar(n);

	if (!s || !*s || strlen(s) >= SRV_PACK_NAME)
		return fail(c, n, "packing: %s must be a tensor name of 1 to %d characters", field,
			    SRV_PACK_NAME - 1);
	strcpy(out, s);
	return 0;
}

static int get_names(struct cfg_ctx *c, const yaml_node_t *n, const char *field,
		     char (*out)[SRV_PACK_NAME], uint32_t *num)
{
	*num = 0;
	if (n->type == YAML_SCALAR_NODE) {
		*num = 1;
		return get_name(c, n, field, out[0]);
	}
	if (expect(c, n, YAML_SEQUENCE_NODE, field))
		return -1;
	FOR_ITEMS(c, n, it) {
		if (*num == SRV_PACK_MAX_NAMES)
			return fail(c, n, "packing: more than %d %s", SRV_PACK_MAX_NAMES, field);
		if (get_name(c, NODE(c, *it), field, out[(*num)++]))
			return -1;
	}
	return 0;
}

static int parse_packing(struct cfg_ctx *c, yaml_node_t *n, struct srv_model_config *cfg)
{
	struct srv_pack_config *pk = &cfg->packing;

	if (expect(c, n, YAML_MAPPING_NODE, "packing"))
		return -1;
	pk->enabled = 1;
	FOR_PAIRS(c, n, p) {
		const char *k = scalar(NODE(c, p->key));
		yaml_node_t *v = NODE(c, p->value);

		if (!k)
			return fail(c, v, "packing: keys must be names");
		if (!strcmp(k, "sequence_inputs")) {
			if (get_names(c, v, k, pk->seq_inputs, &pk->num_seq_inputs))
				return -1;
		} else if (!strcmp(k, "segment_outputs")) {
			if (get_names(c, v, k, pk->segment_outputs, &pk->num_segment_outputs))
				return -1;
		} else if (!strcmp(k, "mask_input")) {
			if (get_name(c, v, k, pk->mask_input))
				return -1;
		} else if (!strcmp(k, "position_input")) {
			if (get_name(c, v, k, pk->position_input))
				return -1;
		} else if (!strcmp(k, "mask_kind")) {
			const char *kind = scalar(v);

			if (kind && !strcmp(kind, "segment_ids"))
				pk->mask_kind = SRV_PACK_MASK_SEGMENT_IDS;
			else if (kind && !strcmp(kind, "additive"))
				pk->mask_kind = SRV_PACK_MASK_ADDITIVE;
			else
				return fail(c, v, "packing: mask_kind must be segment_ids or additive, got '%s'",
					    kind ? kind : "?");
		} else if (!strcmp(k, "max_sequence_length")) {
			if (get_u64(c, v, k, 1u << 20, &pk->max_sequence_length))
				return -1;
		} else if (!strcmp(k, "max_sequences_per_row")) {
			if (get_u64(c, v, k, 1u << 16, &pk->max_sequences_per_row))
				return -1;
		} else {
			return fail(c, NODE(c, p->key),
				    "packing: unknown field '%s' (known: sequence_inputs, mask_input, mask_kind, "
				    "position_input, max_sequence_length, max_sequences_per_row, segment_outputs)", k);
		}
	}
	if (!pk->num_seq_inputs)
		return fail(c, n, "packing needs sequence_inputs: [NAME, ...] (the inputs the client sends "
			    "as [1, L])");
	if (!pk->mask_input[0])
		return fail(c, n, "packing needs mask_input: NAME (the segment ids or additive mask "
			    "the server fills)");
	if (!pk->max_sequence_length)
		return fail(c, n, "packing needs max_sequence_length >= 1 (the model's sequence axis)");
	if (!pk->max_sequences_per_row)
		return fail(c, n, "packing needs max_sequences_per_row >= 1");
	return 0;
}

void srv_model_config_init(struct srv_model_config *c)
{
	memset(c, 0, sizeof(*c));
	c->instance_count = 1;
	c->policy = SRV_POLICY_LATEST;
	c->latest_n = 1;
	c->synchronous = -1;
}

int srv_model_config_parse(const char *text, size_t len, const char *model,
			   struct srv_model_config *cfg, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct cfg_ctx c = { &doc, err, errlen };
	yaml_node_t *root;
	int rc = -1;

	srv_model_config_init(cfg);
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "line %lu: %s", (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root || (root->type == YAML_SCALAR_NODE && !root->data.scalar.length)) {
		rc = 0; /* an empty file: every default */
		goto out;
	}
	if (expect(&c, root, YAML_MAPPING_NODE, "the configuration"))
		goto out;
	FOR_PAIRS(&c, root, p) {
		const char *k = scalar(NODE(&c, p->key));
		yaml_node_t *v = NODE(&c, p->value);

		if (!k) {
			fail(&c, v, "keys must be names");
			goto out;
		}
		if (!strcmp(k, "name")) {
			if (!scalar(v) || strcmp(scalar(v), model)) {
				fail(&c, v, "name '%s' differs from the model's folder '%s'",
				     scalar(v) ? scalar(v) : "?", model);
				goto out;
			}
		} else if (!strcmp(k, "backend") || !strcmp(k, "platform")) {
			if (!scalar(v) || (strcmp(scalar(v), "ipu") && strcmp(scalar(v), "ipu_ipuef"))) {
				fail(&c, v, "%s '%s': ipu-serve runs .ipuef models (use 'ipu' or leave it out)",
				     k, scalar(v) ? scalar(v) : "?");
				goto out;
			}
		} else if (!strcmp(k, "max_batch_size")) {
			uint64_t b;

			if (get_u64(&c, v, k, 1u << 30, &b))
				goto out;
			cfg->max_batch_size = (int64_t)b;
			cfg->has_max_batch_size = 1;
		} else if (!strcmp(k, "dynamic_batching")) {
			if (parse_dynamic(&c, v, cfg))
				goto out;
		} else if (!strcmp(k, "instance_group")) {
			if (parse_instances(&c, v, cfg))
				goto out;
		} else if (!strcmp(k, "version_policy")) {
			if (parse_policy(&c, v, cfg))
				goto out;
		} else if (!strcmp(k, "packing")) {
			if (parse_packing(&c, v, cfg))
				goto out;
		} else {
			fail(&c, NODE(&c, p->key),
			     "unknown field '%s' (known: name, backend, platform, max_batch_size, "
			     "dynamic_batching, instance_group, version_policy, packing)", k);
			goto out;
		}
	}
	rc = 0;
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}
