/* SPDX-License-Identifier: MIT */
/*
 * yaml_config.c - the YAML config (--config-yaml), parsed with libyaml.
 *
 * Top-level keys are PopRT's (output_dir, output_model, export_popef,
 * max_tensor_size, ipu_version, model_fusion, ...) plus every command-line
 * option with underscores.  Unknown keys are errors naming the key and its
 * line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <yaml.h>

#include "ipu/onnx_io.h"
#include "options.h"

struct ctx {
	yaml_document_t *doc;
	const char *what;
	struct ir_error *e;
};

static int nerr(struct ctx *c, const yaml_node_t *n, const char *fmt,
		const char *a)
{
	return ir_err(c->e, "%s:%zu: %s%s", c->what, n->start_mark.line + 1, fmt, a ? a : "");
}

static const char *scalar(struct ctx *c, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE) {
		nerr(c, n, "a single value is expected for key ", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

static int boolean(struct ctx *c, const yaml_node_t *n, const char *key, int *out)
{
	const char *s = scalar(c, n, key);

	if (!s)
		return -1;
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1") || !strcasecmp(s, "on"))
		*out = 1;
	else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0") || !strcasecmp(s, "off"))
		*out = 0;
	else
		return nerr(c, n, "expected True or False for key ", key);
	return 0;
}

static int integer(struct ctx *c, const yaml_node_t *n, const char *key,
		   int64_t lo, int64_t *out)
{
	const char *s = scalar(c, n, key);
	char *end;
	long long v;

	if (!s)
		return -1;
	v = strtoll(s, &end, 10);
	if (end == s || *end || v < lo)
		return nerr(c, n, "expected an integer for key ", key);
	*out = v;
	return 0;
}

static int set(char **dst, const char *v, struct ir_error *e)
{
	char *s = strdup(v);

	if (!s)
		return ir_err(e, "out of memory");
	free(*dst);
	*dst = s;
	return 0;
}

/* A message from a setter, prefixed with the file and line. */
static int wrap(struct ctx *c, const yaml_node_t *n)
{
	char m[IR_ERROR_LEN];

	snprintf(m, sizeof(m), "%s", c->e->msg);
	return ir_err(c->e, "%s:%zu: %s", c->what, n->start_mark.line + 1, m);
}

/* One custom-op plugin: native code, so a config names it by an absolute
 * path only (never relative to a file someone else may have written). */
static int custom_lib(struct ctx *c, const yaml_node_t *n, const char *key, struct ipuc_options *o)
{
	const char *s = scalar(c, n, key);

	if (!s)
		return -1;
	if (s[0] != '/')
		return nerr(c, n, "custom_library_so_paths: give absolute paths in a config file", NULL);
	if (ipuc_add_custom_libs(o, s, c->e))
		return wrap(c, n);
	return 0;
}

static int shapes(struct ctx *c, const yaml_node_t *n, struct ipuc_model *m)
{
	if (n->type == YAML_SCALAR_NODE) {
		/* "X=1,2 Y=1,2" or a single binding */
		char *copy = strdup((const char *)n->data.scalar.value), *save = NULL, *tok;

		if (!copy)
			return ir_err(c->e, "out of memory");
		for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (ipuc_add_shape(m, tok, c->e)) {
				free(copy);
				return wrap(c, n);
			}
		free(copy);
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return nerr(c, n, "input_shape must be a list like ['X=1,2', 'Y=1,2']", NULL);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		const char *s = scalar(c, item, "input_shape");

		if (!s)
			return -1;
		if (ipuc_add_shape(m, s, c->e))
			return wrap(c, item);
	}
	return 0;
}

static int fusion_model(struct ctx *c, const yaml_node_t *n, struct ipuc_model *m)
{
	if (n->type != YAML_MAPPING_NODE)
		return nerr(c, n, "each model_fusion entry must be a mapping (input_model, input_shape, precision)", NULL);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *key = scalar(c, k, "");
		const char *s;

		if (!key)
			return -1;
		if (!strcmp(key, "input_model")) {
			if (!(s = scalar(c, v, key)) || set(&m->input_model, s, c->e))
				return -1;
		} else if (!strcmp(key, "input_shape")) {
			if (shapes(c, v, m))
				return -1;
		} else if (!strcmp(key, "precision")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_set_precision(&m->precision, s, c->e))
				return wrap(c, v);
		} else {
			return nerr(c, k, "unknown key in a model_fusion entry (known: input_model, input_shape, precision): ", key);
		}
	}
	if (!m->input_model)
		return nerr(c, n, "model_fusion entry without input_model", NULL);
	return 0;
}

static int top(struct ctx *c, const yaml_node_t *root, struct ipuc_options *o)
{
	if (root->type != YAML_MAPPING_NODE)
		return nerr(c, root, "the config must be a mapping of option: value", NULL);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *key = scalar(c, k, "");
		const char *s;
		int64_t x;

		if (!key)
			return -1;
#define IS(name) (!strcmp(key, name))
		if (IS("model_fusion")) {
			if (v->type != YAML_SEQUENCE_NODE)
				return nerr(c, v, "model_fusion must be a list of models", NULL);
			for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
				if (o->nfusion == IPUC_MAX_MODELS)
					return nerr(c, v, "too many models in model_fusion", NULL);
				if (fusion_model(c, yaml_document_get_node(c->doc, *it), &o->fusion[o->nfusion++]))
					return -1;
			}
		} else if (IS("input_model")) {
			if (!(s = scalar(c, v, key)) || set(&o->model.input_model, s, c->e))
				return -1;
		} else if (IS("input_shape")) {
			if (shapes(c, v, &o->model))
				return -1;
		} else if (IS("precision")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_set_precision(&o->model.precision, s, c->e))
				return wrap(c, v);
		} else if (IS("output") || IS("output_popef")) {
			if (!(s = scalar(c, v, key)) || set(&o->output, s, c->e))
				return -1;
		} else if (IS("output_dir")) {
			if (!(s = scalar(c, v, key)) || set(&o->output_dir, s, c->e))
				return -1;
		} else if (IS("output_model")) {
			if (!(s = scalar(c, v, key)) || set(&o->output_model, s, c->e))
				return -1;
		} else if (IS("export_onnx")) {
			if (!(s = scalar(c, v, key)) || set(&o->export_onnx, s, c->e))
				return -1;
		} else if (IS("export_popef") || IS("export_ipuef")) {
			if (boolean(c, v, key, &o->export_popef))
				return -1;
		} else if (IS("convert_version")) {
			if (integer(c, v, key, 0, &x))
				return -1;
			if (x < ONNX_EXPORT_OPSET_MIN || x > ONNX_OPSET_MAX)
				return nerr(c, v, "convert_version takes an opset from 7 to 17: key ", key);
			o->convert_version = (int)x;
		} else if (IS("max_tensor_size")) {
			if (integer(c, v, key, -1, &x))
				return -1;
			o->max_tensor_size = x;
		} else if (IS("ipu_version")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_set_ipu_version(o, s, c->e))
				return wrap(c, v);
		} else if (IS("target")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_parse_target(o, s, c->e))
				return wrap(c, v);
		} else if (IS("batch_size")) {
			if (integer(c, v, key, 1, &x))
				return -1;
			o->batch_size = x;
		} else if (IS("batch_axis")) {
			if (integer(c, v, key, 0, &x))
				return -1;
			if (x >= IR_MAX_RANK)
				return nerr(c, v, "batch_axis is beyond the maximum rank", NULL);
			o->batch_axis = (int)x;
		} else if (IS("fp8_skip_op_names")) {
			if (v->type == YAML_SCALAR_NODE) {
				if (ipuc_add_fp8_skip(o, (const char *)v->data.scalar.value, c->e))
					return wrap(c, v);
			} else if (v->type == YAML_SEQUENCE_NODE) {
				for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
					if (!(s = scalar(c, yaml_document_get_node(c->doc, *it), key)) ||
					    ipuc_add_fp8_skip(o, s, c->e))
						return s ? wrap(c, v) : -1;
			} else {
				return nerr(c, v, "fp8_skip_op_names must be a name, a comma-separated list or a list of names", NULL);
			}
		} else if (IS("fp8_params")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_set_fp8_params(o, s, c->e))
				return wrap(c, v);
		} else if (IS("fp8_scale")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_set_fp8_scale(o, s, c->e))
				return wrap(c, v);
		} else if (IS("fp8_auto_skip")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_set_fp8_auto_skip(o, s, c->e))
				return wrap(c, v);
		} else if (IS("num_of_layers_keep_fp16")) {
			if (integer(c, v, key, 0, &x))
				return -1;
			if (x > INT32_MAX)
				return nerr(c, v, "num_of_layers_keep_fp16 is too large", NULL);
			o->keep_fp16 = (int)x;
		} else if (IS("fp16_skip_op_types")) {
			if (v->type == YAML_SCALAR_NODE) {
				if (ipuc_add_skip_ops(o, (const char *)v->data.scalar.value, c->e))
					return wrap(c, v);
			} else if (v->type == YAML_SEQUENCE_NODE) {
				for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
					yaml_node_t *item = yaml_document_get_node(c->doc, *it);

					if (!(s = scalar(c, item, key)))
						return -1;
					if (ipuc_add_skip_ops(o, s, c->e))
						return wrap(c, item);
				}
			} else {
				return nerr(c, v, "fp16_skip_op_types must be a list", NULL);
			}
		} else if (IS("num_ipus")) {
			if (integer(c, v, key, 1, &x))
				return -1;
			if (x > 64)
				return nerr(c, v, "num_ipus is from 1 to 64", NULL);
			o->num_ipus = (uint32_t)x;
		} else if (IS("custom_library_so_paths")) {
			if (v->type == YAML_SCALAR_NODE) {
				if (custom_lib(c, v, key, o))
					return -1;
			} else if (v->type == YAML_SEQUENCE_NODE) {
				for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
					if (custom_lib(c, yaml_document_get_node(c->doc, *it), key, o))
						return -1;
			} else {
				return nerr(c, v, "custom_library_so_paths must be a path or a list of paths", NULL);
			}
		} else if (IS("manual_sharding_config")) {
			if (!(s = scalar(c, v, key)) || set(&o->sharding_config, s, c->e))
				return -1;
		} else if (IS("enable_pipelining")) {
			if (boolean(c, v, key, &o->pipelining))
				return -1;
		} else if (IS("calibration_with_data")) {
			if (!(s = scalar(c, v, key)) || set(&o->calibration_data, s, c->e))
				return -1;
		} else if (IS("calibration_loss_type")) {
			if (!(s = scalar(c, v, key)))
				return -1;
			if (ipuc_set_calibration_loss(o, s, c->e))
				return wrap(c, v);
		} else if (IS("precision_compare_json")) {
			if (!(s = scalar(c, v, key)) || set(&o->precision_compare_json, s, c->e))
				return -1;
			o->precision_compare = 1;
		} else if (IS("precision_compare")) {
			if (boolean(c, v, key, &o->precision_compare))
				return -1;
		} else if (IS("check") || IS("json") || IS("verbose")) {
			int b;

			if (boolean(c, v, key, &b))
				return -1;
			if (IS("check"))
				o->check = b;
			else if (IS("json"))
				o->json = b;
			else
				o->verbose = b;
		} else if (ipuc_poprt_unsupported(key)) {
			return nerr(c, k, "PopRT's key is not supported by ipu-compile (see ipu-compile --help for what is): ", key);
		} else {
			return nerr(c, k, "unknown key ", key);
		}
#undef IS
	}
	return 0;
}

int ipuc_parse_yaml(const char *text, size_t len, const char *what,
		    struct ipuc_options *o, struct ir_error *e)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct ctx c = { &doc, what, e };
	int r;

	if (!yaml_parser_initialize(&parser))
		return ir_err(e, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = ir_err(e, "%s:%zu: YAML syntax error: %s", what,
			   parser.problem_mark.line + 1,
			   parser.problem ? parser.problem : "?");
		yaml_parser_delete(&parser);
		return r;
	}
	root = yaml_document_get_root_node(&doc);
	r = root ? top(&c, root, o) : ir_err(e, "%s: empty config", what);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int ipuc_parse_yaml_file(const char *path, struct ipuc_options *o,
			 struct ir_error *e)
{
	struct stat st;
	FILE *f;
	char *buf;
	long size;
	int r;

	/* a FIFO or a device would block or never end: regular files only */
	if (stat(path, &st))
		return ir_err(e, "cannot open config %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ir_err(e, "config %s is not a regular file", path);
	if (st.st_size > (1 << 24))
		return ir_err(e, "config %s is %lld bytes; a config is at most 16 MiB", path,
			      (long long)st.st_size);
	f = fopen(path, "rb");
	if (!f)
		return ir_err(e, "cannot open config %s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return ir_err(e, "cannot size %s", path);
	}
	buf = malloc((size_t)size + 1);
	if (!buf) {
		fclose(f);
		return ir_err(e, "out of memory");
	}
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(buf);
		return ir_err(e, "cannot read %s", path);
	}
	fclose(f);
	buf[size] = 0;
	r = ipuc_parse_yaml(buf, (size_t)size, path, o, e);
	free(buf);
	return r;
}
