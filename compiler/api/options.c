/* SPDX-License-Identifier: MIT */
/* options.c - the compiler's options as the pipeline takes them: their
 * defaults and the setters that check each value (the command line, the
 * YAML config and ipu_compile()'s options all go through them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"
#include "ipu/onnx_io.h"
#include "options.h"

void ipuc_options_init(struct ipuc_options *o)
{
	memset(o, 0, sizeof(*o));
	o->export_popef = -1;
	o->tiles = IPU2_TILES;
	o->tile_mem = IPU2_TILE_MEM;
	o->calibration_loss = IPU_CALIB_KLD;
}

static void model_free(struct ipuc_model *m)
{
	free(m->input_model);
	free(m->precision);
	free(m->base_dir);
	free(m->export_path);
	for (int i = 0; i < m->nshapes; i++)
		free(m->shapes[i].name);
	memset(m, 0, sizeof(*m));
}

void ipuc_options_free(struct ipuc_options *o)
{
	free(o->sharding_config);
	free(o->custom_libs);
	model_free(&o->model);
	for (int i = 0; i < o->nfusion; i++)
		model_free(&o->fusion[i]);
	free(o->output);
	free(o->output_dir);
	free(o->output_model);
	free(o->export_onnx);
	free(o->report);
	free(o->config_yaml);
	free(o->ipu_version);
	free(o->calibration_data);
	free(o->precision_compare_json);
	for (int i = 0; i < o->nskip; i++)
		free(o->skip_ops[i]);
	for (int i = 0; i < o->nfp8_skip; i++)
		free(o->fp8_skip[i]);
	free(o->fp8_params);
	free(o->fp8_auto_skip);
	free(o->state);
	for (int i = 0; i < o->nfreeze; i++)
		free(o->freeze[i]);
	free(o->prefill_model);
	memset(o, 0, sizeof(*o));
}

int ipuc_setstr(char **dst, const char *v, struct ir_error *e)
{
	char *s = strdup(v);

	if (!s)
		return ir_err(e, "out of memory");
	free(*dst);
	*dst = s;
	return 0;
}

int ipuc_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul = 1;

	if (end == s || s[0] == '-')
		return -1;
	if (!strcmp(end, "") || !strcmp(end, "B"))
		mul = 1;
	else if (!strcmp(end, "K") || !strcmp(end, "KiB") || !strcmp(end, "k") || !strcmp(end, "KB"))
		mul = 1024;
	else if (!strcmp(end, "M") || !strcmp(end, "MiB") || !strcmp(end, "MB"))
		mul = 1024 * 1024;
	else
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int ipuc_set_ipu_version(struct ipuc_options *o, const char *v,
			 struct ir_error *e)
{
	if (strcmp(v, "ipu2") && strcmp(v, "ipu21"))
		return ir_err(e, "ipu version '%s' is unknown: use ipu2 or ipu21", v);
	o->tiles = IPU2_TILES;
	o->tile_mem = IPU2_TILE_MEM;
	return ipuc_setstr(&o->ipu_version, v, e);
}

int ipuc_parse_target(struct ipuc_options *o, const char *spec,
		      struct ir_error *e)
{
	char *copy = strdup(spec), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return ir_err(e, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;

		if (!eq) {
			r = ir_err(e, "--target: '%s' is not key=value (keys: tiles, tile-mem)", tok);
			break;
		}
		*eq = 0;
		if (ipuc_parse_size(eq + 1, &v) || v == 0) {
			r = ir_err(e, "--target: '%s' is not a positive size", eq + 1);
			break;
		}
		if (!strcmp(tok, "tiles")) {
			if (v > 8192) {
				r = ir_err(e, "--target: tiles=%llu is more than 8192", (unsigned long long)v);
				break;
			}
			o->tiles = (uint32_t)v;
		} else if (!strcmp(tok, "tile-mem") || !strcmp(tok, "tile_mem")) {
			if (v > (16u << 20) || v < 1024) {
				r = ir_err(e, "--target: tile-mem=%llu must be between 1 KiB and 16 MiB", (unsigned long long)v);
				break;
			}
			o->tile_mem = (uint32_t)v;
		} else {
			r = ir_err(e, "--target: unknown key '%s' (keys: tiles, tile-mem)", tok);
			break;
		}
	}
	free(copy);
	return r;
}

int ipuc_add_shape(struct ipuc_model *m, const char *spec, struct ir_error *e)
{
	struct ir_shape_binding b;

	if (m->nshapes == IPUC_MAX_SHAPES)
		return ir_err(e, "more than %d input shapes", IPUC_MAX_SHAPES);
	if (ir_parse_shape_binding(spec, &b, e))
		return -1;
	for (int i = 0; i < m->nshapes; i++)
		if (!strcmp(m->shapes[i].name, b.name)) {
			free(m->shapes[i].name);
			m->shapes[i] = b;
			return 0;
		}
	m->shapes[m->nshapes++] = b;
	return 0;
}

int ipuc_set_precision(char **dst, const char *p, struct ir_error *e)
{
	if (strcmp(p, "fp32") && strcmp(p, "fp16") && !ipuc_is_fp8(p))
		return ir_err(e, "precision '%s' is not fp32, fp16, fp8 or fp8_weight", p);
	return ipuc_setstr(dst, p, e);
}

int ipuc_set_calibration_loss(struct ipuc_options *o, const char *name,
			      struct ir_error *e)
{
	int l = ipu_calib_loss_parse(name, e);

	if (l < 0)
		return -1;
	o->calibration_loss = l;
	return 0;
}

int ipuc_add_skip_ops(struct ipuc_options *o, const char *list,
		      struct ir_error *e)
{
	char *copy = strdup(list), *save = NULL, *tok;

	if (!copy)
		return ir_err(e, "out of memory");
	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (o->nskip == IPUC_MAX_SKIP) {
			free(copy);
			return ir_err(e, "more than %d op types to skip", IPUC_MAX_SKIP);
		}
		if (!ir_op_supported(tok)) {
			ir_err(e, "--fp16-skip-op-types: '%s' is not a supported op type (see --list-ops)", tok);
			free(copy);
			return -1;
		}
		if (!(o->skip_ops[o->nskip] = strdup(tok))) {
			free(copy);
			return ir_err(e, "out of memory");
		}
		o->nskip++;
	}
	free(copy);
	return 0;
}


struct ir_graph *ipuc_model_load(const struct ipuc_model *m, const char *path,
				 struct ir_error *e)
{
	if (m->data)
		return onnx_load_buffer(m->data, m->size, m->base_dir, e);
	return onnx_load_file(path, e);
}
