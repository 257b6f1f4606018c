/* SPDX-License-Identifier: MIT */
/* options.c - command-line parsing and option setters shared with YAML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define IPU2_TILES 1472u
#define IPU2_TILE_MEM (624u * 1024u)

void ipuc_options_init(struct ipuc_options *o)
{
	memset(o, 0, sizeof(*o));
	o->export_popef = -1;
	o->tiles = IPU2_TILES;
	o->tile_mem = IPU2_TILE_MEM;
}

static void model_free(struct ipuc_model *m)
{
	free(m->input_model);
	free(m->precision);
	for (int i = 0; i < m->nshapes; i++)
		free(m->shapes[i].name);
	memset(m, 0, sizeof(*m));
}

void ipuc_options_free(struct ipuc_options *o)
{
	model_free(&o->model);
	for (int i = 0; i < o->nfusion; i++)
		model_free(&o->fusion[i]);
	free(o->output);
	free(o->output_dir);
	free(o->output_model);
	free(o->export_onnx);
	free(o->config_yaml);
	free(o->ipu_version);
	for (int i = 0; i < o->nskip; i++)
		free(o->skip_ops[i]);
	memset(o, 0, sizeof(*o));
}

static int setstr(char **dst, const char *v, struct ir_error *e)
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
	return setstr(&o->ipu_version, v, e);
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
	if (strcmp(p, "fp32") && strcmp(p, "fp16") && strcmp(p, "fp8"))
		return ir_err(e, "precision '%s' is not fp32, fp16 or fp8", p);
	if (!strcmp(p, "fp8"))
		return ir_err(e, "precision fp8 (weight storage) is not supported yet; use fp16 or fp32");
	return setstr(dst, p, e);
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

const char *ipuc_usage(void)
{
	return
"usage: ipu-compile --input-model MODEL.onnx [options]\n"
"       ipu-compile --config-yaml CONFIG.yaml [options]\n"
"\n"
"  --input-model FILE         ONNX model (opsets 7-17 of the default domain)\n"
"  -o, --output FILE          executable to write (default <model>.ipuef)\n"
"  --input-shape N=d0,d1,...  static shape of input N (repeatable, or several\n"
"                             space-separated after one flag)\n"
"  --batch-size N             fix the batch dimension of every input\n"
"  --batch-axis A             which axis is the batch (default 0)\n"
"  --precision fp32|fp16      compute precision (default fp32)\n"
"  --fp16-skip-op-types A,B   op types kept in fp32 under --precision fp16\n"
"  --ipu-version ipu2|ipu21   target: 1472 tiles x 624 KiB\n"
"  --target tiles=N,tile-mem=SIZE   custom target (SIZE: 65536, 256KiB, 1MiB)\n"
"  --max-tensor-size BYTES    largest tensor constant folding may create\n"
"                             (-1: no limit; default 64 MiB)\n"
"  --export-onnx FILE         write the converted, optimised ONNX model\n"
"  --config-yaml FILE         options as YAML (PopRT keys, model_fusion list)\n"
"  --list-ops                 print the supported operators and exit\n"
"  --check                    run once on the in-process device and compare\n"
"                             with the reference evaluator\n"
"  --json                     print a JSON summary on stdout\n"
"  --no-fusion                skip the fusion passes\n"
"  -v, --verbose              per-pass statistics on stderr\n"
"  -h, --help                 this text\n";
}

/* Value of option argv[*i] (either --opt=value or the next argument). */
static const char *value(int argc, char **argv, int *i, const char *eqv,
			 struct ir_error *e)
{
	if (eqv)
		return eqv;
	if (*i + 1 >= argc) {
		ir_err(e, "option %s needs a value", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

static int parse_int(const char *opt, const char *v, int64_t lo, int64_t *out,
		     struct ir_error *e)
{
	char *end;
	long long x = strtoll(v, &end, 10);

	if (end == v || *end || x < lo)
		return ir_err(e, "%s: '%s' is not an integer >= %lld", opt, v, (long long)lo);
	*out = x;
	return 0;
}

int ipuc_parse_args(int argc, char **argv, struct ipuc_options *o,
		    struct ir_error *e)
{
	for (int i = 1; i < argc; i++) {
		char opt[64];
		const char *a = argv[i], *eqv = NULL, *v;
		const char *eq = strchr(a, '=');
		int64_t x;

		if (a[0] != '-') {
			if (o->model.input_model)
				return ir_err(e, "unexpected argument '%s' (the model is already %s)", a, o->model.input_model);
			if (setstr(&o->model.input_model, a, e))
				return -1;
			continue;
		}
		if (eq && !strncmp(a, "--", 2) && (size_t)(eq - a) < sizeof(opt)) {
			memcpy(opt, a, (size_t)(eq - a));
			opt[eq - a] = 0;
			eqv = eq + 1;
		} else {
			snprintf(opt, sizeof(opt), "%s", a);
		}
		/* PopRT spells options with underscores */
		for (char *p = opt + 2; *p; p++)
			if (*p == '_')
				*p = '-';
#define IS(s) (!strcmp(opt, s))
		if (IS("-h") || IS("--help")) {
			o->help = 1;
		} else if (IS("--list-ops")) {
			o->list_ops = 1;
		} else if (IS("--check")) {
			o->check = 1;
		} else if (IS("--json")) {
			o->json = 1;
		} else if (IS("-v") || IS("--verbose")) {
			o->verbose = 1;
		} else if (IS("--no-fusion")) {
			o->no_fusion = 1;
		} else if (IS("--input-model")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || setstr(&o->model.input_model, v, e))
				return -1;
		} else if (IS("-o") || IS("--output")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || setstr(&o->output, v, e))
				return -1;
		} else if (IS("--input-shape")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || ipuc_add_shape(&o->model, v, e))
				return -1;
			/* PopRT style: --input_shape A=1,2 B=3,4 */
			while (!eqv && i + 1 < argc && argv[i + 1][0] != '-' && strchr(argv[i + 1], '='))
				if (ipuc_add_shape(&o->model, argv[++i], e))
					return -1;
		} else if (IS("--batch-size")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || parse_int(opt, v, 1, &x, e))
				return -1;
			o->batch_size = x;
		} else if (IS("--batch-axis")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || parse_int(opt, v, 0, &x, e))
				return -1;
			if (x >= IR_MAX_RANK)
				return ir_err(e, "--batch-axis %lld is beyond rank %d", (long long)x, IR_MAX_RANK);
			o->batch_axis = (int)x;
		} else if (IS("--precision")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || ipuc_set_precision(&o->model.precision, v, e))
				return -1;
		} else if (IS("--fp16-skip-op-types")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || ipuc_add_skip_ops(o, v, e))
				return -1;
		} else if (IS("--ipu-version")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || ipuc_set_ipu_version(o, v, e))
				return -1;
		} else if (IS("--target")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || ipuc_parse_target(o, v, e))
				return -1;
		} else if (IS("--max-tensor-size")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || parse_int(opt, v, -1, &x, e))
				return -1;
			o->max_tensor_size = x;
		} else if (IS("--export-onnx")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || setstr(&o->export_onnx, v, e))
				return -1;
		} else if (IS("--config-yaml")) {
			if (!(v = value(argc, argv, &i, eqv, e)) || setstr(&o->config_yaml, v, e) ||
			    ipuc_parse_yaml_file(v, o, e))
				return -1;
		} else {
			return ir_err(e, "unknown option '%s' (see ipu-compile --help)", a);
		}
#undef IS
	}
	return 0;
}
