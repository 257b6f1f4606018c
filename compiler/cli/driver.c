/* SPDX-License-Identifier: MIT */
/* driver.c - ipu-compile: its options as ipu_compile()'s (paths relative
 * to the config file, PopRT's output folder and names), the compilation,
 * and what it prints. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/calib_cli.h"
#include "cli.h"
#include "driver.h"
#include "ipu/compiler.h"
#include "json_summary.h"
#include "freeze.h"
#include "list_ops.h"

/* dir/name unless name is absolute or dir is NULL/empty. */
static char *join(const char *dir, const char *name)
{
	char *p;

	if (!dir || !dir[0] || name[0] == '/')
		return strdup(name);
	if (name[0] == '.' && name[1] == '/')
		name += 2;
	p = malloc(strlen(dir) + strlen(name) + 2);
	if (p)
		sprintf(p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	return p;
}

static char *dirname_of(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	if (!s)
		return strdup("");
	return strndup(path, (size_t)(s - path));
}

/* model.onnx -> model<suffix> */
/* mkdir -p: 0, or -1 with errno set. */
static int make_dirs(const char *path)
{
	char *p = strdup(path), *q;
	int rc = 0;

	if (!p)
		return -1;
	for (q = p + 1; !rc; q++) {
		int last = *q == 0;

		if (*q != '/' && !last)
			continue;
		*q = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			rc = -1;
		if (last)
			break;
		*q = '/';
	}
	free(p);
	return rc;
}

static char *replace_ext(const char *path, const char *suffix)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	size_t base = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
	char *p = malloc(base + strlen(suffix) + 1);

	if (p) {
		memcpy(p, path, base);
		strcpy(p + base, suffix);
	}
	return p;
}

/* Messages carry the model's names: escaped, so a name cannot drive the terminal. */
static void print_error(FILE *err, const char *msg)
{
	char buf[4 * IR_ERROR_LEN + 1];

	fprintf(err, "ipu-compile: error: %s\n", cli_safe(msg, buf, sizeof(buf)));
}

/* Ends the --json object of a failed compilation: tail, then the error. */
static void json_fail(FILE *out, const char *tail, const char *msg)
{
	fprintf(out, "%s, \"error\": ", tail);
	ipuc_json_string(out, msg);
	fprintf(out, "}\n");
}

/* The export path of model i (NULL when no ONNX is exported). */
static char *export_path(const struct ipuc_options *o, const char *outdir, int n, int i)
{
	char suffix[32], *base, *file;

	if (!o->export_onnx && !o->output_model)
		return NULL;
	base = o->export_onnx ? strdup(o->export_onnx) : join(outdir, o->output_model);
	if (!base || n == 1)
		return base;
	snprintf(suffix, sizeof(suffix), ".graph%d.onnx", i);
	file = replace_ext(base, suffix);
	free(base);
	return file;
}

/* Every file ipu-compile will write, against every file it reads. */
static int check_outputs(FILE *err, const struct ipuc_options *o,
			 const struct ipuc_model *models, int n, const char *cfgdir,
			 const char *outdir, const char *exe)
{
	const char *inputs[IPUC_MAX_MODELS + 2];
	char *paths[IPUC_MAX_MODELS] = { 0 }, *calib = NULL, *cmpjson = NULL;
	int i, k = 0, rc = 0;

	for (i = 0; i < n; i++) {
		paths[i] = join(o->config_yaml ? cfgdir : NULL, models[i].input_model);
		inputs[k++] = paths[i];
	}
	if (o->config_yaml)
		inputs[k++] = o->config_yaml;
	if (o->calibration_data && !(calib = ipuc_calib_path(o->config_yaml ? cfgdir : NULL,
							     o->calibration_data)))
		rc = -1;
	if (calib)
		inputs[k++] = calib;
	if (o->precision_compare_json &&
	    !(cmpjson = ipuc_calib_path(o->config_yaml ? cfgdir : NULL, o->precision_compare_json)))
		rc = -1;
	if (rc)
		fprintf(err, "ipu-compile: out of memory\n");
	if (!rc && exe)
		rc = cli_check_output(err, "ipu-compile", exe, inputs, (unsigned)k);
	if (!rc && o->report)
		rc = cli_check_output(err, "ipu-compile", o->report, inputs, (unsigned)k);
	if (!rc && cmpjson)
		rc = cli_check_output(err, "ipu-compile", cmpjson, inputs, (unsigned)k);
	if (!rc && o->report && exe && !strcmp(o->report, exe)) {
		fprintf(err, "ipu-compile: the executable and the report are both %s\n", exe);
		rc = -1;
	}
	for (i = 0; !rc && i < n; i++) {
		char *x = export_path(o, outdir, n, i);

		if (x)
			rc = cli_check_output(err, "ipu-compile", x, inputs, (unsigned)k);
		if (!rc && x && exe && !strcmp(x, exe)) {
			fprintf(err, "ipu-compile: the executable and the exported ONNX model are both %s\n", x);
			rc = -1;
		}
		free(x);
	}
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(calib);
	free(cmpjson);
	return rc;
}

/* Where the messages of the compilation go. */
struct sinks {
	FILE *err;
	FILE *table;
	int notes;			/* print NOTE messages */
};

static void on_message(void *ctx, enum ipu_compile_message_kind kind, const char *text)
{
	struct sinks *s = ctx;

	if (kind == IPU_COMPILE_MESSAGE_NOTE && !s->notes)
		return;
	fputs(text, kind == IPU_COMPILE_MESSAGE_TABLE ? s->table : s->err);
}

/* The --json object's end after a failure, as far as the compilation got. */
static void json_failed(FILE *out, const struct ipu_compile_result *r, int check)
{
	switch (r->stage) {
	case IPU_COMPILE_STAGE_MODEL:
		json_fail(out, "], \"executable\": null", r->error);
		break;
	case IPU_COMPILE_STAGE_EXPORT:
		break;
	case IPU_COMPILE_STAGE_CALIBRATION:
		json_fail(out, "], \"executable\": null", r->error);
		break;
	case IPU_COMPILE_STAGE_CHECK:
		json_fail(out, r->summary.check == 0 ? "], \"executable\": null, \"check\": false" :
			  "], \"executable\": null, \"check\": null", r->error);
		break;
	case IPU_COMPILE_STAGE_LOWER:
		json_fail(out, check ? "], \"executable\": null, \"check\": true" : "], \"executable\": null",
			  r->error);
		break;
	default:
		fprintf(out, "]");
		break;
	}
}

/* Model i of the options as ipu_compile() takes it. */
static int public_model(const struct ipuc_options *o, const struct ipuc_model *m, int n, int i,
			const char *cfgdir, const char *outdir, struct ipu_compile_model *pm,
			struct ipu_compile_shape *shapes)
{
	memset(pm, 0, sizeof(*pm));
	pm->path = join(o->config_yaml ? cfgdir : NULL, m->input_model);
	pm->export_onnx = export_path(o, outdir, n, i);
	if (!pm->path || ((o->export_onnx || o->output_model) && !pm->export_onnx))
		return -1;
	for (int k = 0; k < m->nshapes; k++) {
		shapes[k].name = m->shapes[k].name;
		shapes[k].rank = (size_t)m->shapes[k].rank;
		shapes[k].dims = m->shapes[k].dims;
	}
	pm->input_shapes = shapes;
	pm->num_input_shapes = (size_t)m->nshapes;
	pm->precision = m->precision;
	return 0;
}

int ipuc_run(const struct ipuc_options *o, FILE *out, FILE *err)
{
	const struct ipuc_model *models;
	struct ipu_compile_model pm[IPUC_MAX_MODELS];
	struct ipu_compile_shape (*shapes)[IPUC_MAX_SHAPES] = NULL;
	struct ipu_compile_options po;
	struct ipu_compile_result *r = NULL;
	struct sinks sinks = { err, o->json ? err : out, o->verbose || !o->json };
	int n = 0, rc = IPUC_EXIT_ERROR, want_exe;
	char *cfgdir = NULL, *outdir = NULL, *exe = NULL, *calib = NULL, *cmpjson = NULL, *shard = NULL;
	char *frozen_dir = NULL;
	void *frozen = NULL;

	memset(pm, 0, sizeof(pm));
	if (o->help) {
		fputs(ipuc_usage(), out);
		return IPUC_EXIT_OK;
	}
	if (o->version) {
		cli_print_version("ipu-compile");
		return IPUC_EXIT_OK;
	}
	if (o->list_ops)
		return ipuc_list_ops(out, o->json) ? IPUC_EXIT_ERROR : IPUC_EXIT_OK;
	if (o->nfusion && o->model.input_model) {
		fprintf(err, "ipu-compile: give either input_model or model_fusion, not both\n");
		return IPUC_EXIT_USAGE;
	}
	if (o->convert_version && !o->export_onnx && !o->output_model) {
		fprintf(err, "ipu-compile: --convert-version sets the opset of the exported model: give --export-onnx FILE too\n");
		return IPUC_EXIT_USAGE;
	}
	if (!o->nfusion && !o->model.input_model) {
		fprintf(err, "ipu-compile: no model: give --input-model FILE or --config-yaml FILE (see --help)\n");
		return IPUC_EXIT_USAGE;
	}
	models = o->nfusion ? o->fusion : &o->model;
	n = o->nfusion ? o->nfusion : 1;
	/* paths in a config file are relative to the config file */
	cfgdir = o->config_yaml ? dirname_of(o->config_yaml) : strdup("");
	outdir = o->output_dir ? join(cfgdir, o->output_dir) : strdup(cfgdir ? cfgdir : "");
	if (!cfgdir || !outdir)
		goto oom;
	/* PopRT creates output_dir (and its parents) when it is missing */
	if (o->output_dir && *outdir && make_dirs(outdir)) {
		fprintf(err, "ipu-compile: error: cannot create output_dir %s: %s\n", outdir,
			strerror(errno));
		goto out;
	}
	want_exe = o->output || o->export_popef == 1 || o->check || o->report ||
		   (o->export_popef == -1 && !o->export_onnx && !o->output_model);
	if (want_exe) {
		if (o->output) {
			exe = strdup(o->output);
		} else if (n > 1 || o->config_yaml || o->output_dir) {
			/* PopRT writes DIR/executable.popef */
			exe = join(outdir, "executable.ipuef");
		} else {
			char *first = join(NULL, models[0].input_model);

			exe = first ? replace_ext(first, ".ipuef") : NULL;
			free(first);
		}
		if (!exe)
			goto oom;
	}
	/* refused before any work: an output that is an input, or no file */
	if (check_outputs(err, o, models, n, cfgdir, outdir, exe))
		goto out;
	if (!(shapes = calloc(IPUC_MAX_MODELS, sizeof(*shapes))))
		goto oom;
	for (int i = 0; i < n; i++)
		if (public_model(o, &models[i], n, i, cfgdir, outdir, &pm[i], shapes[i]))
			goto oom;
	if (o->nfreeze) {
		struct ir_error fe = { "" };
		char *dir;

		if (n > 1) {
			fprintf(err, "ipu-compile: --freeze names inputs of one model, not of a model fusion\n");
			rc = IPUC_EXIT_USAGE;
			goto out;
		}
		if (ipuc_freeze_model(pm[0].path, o->freeze, o->nfreeze, &frozen, &pm[0].size, &fe)) {
			fprintf(err, "ipu-compile: error: %s: %s\n", pm[0].path, fe.msg);
			goto out;
		}
		/* the frozen model is handed over as bytes; its external data
		 * files stay beside the file */
		dir = dirname_of(pm[0].path);
		frozen_dir = dir && !dir[0] ? strdup(pm[0].path[0] == '/' ? "/" : ".") : dir;
		if (dir && !dir[0])
			free(dir);
		if (!frozen_dir)
			goto oom;
		pm[0].data = frozen;
		pm[0].base_dir = frozen_dir;
		pm[0].name = pm[0].path;
		pm[0].path = NULL;
	}
	ipu_compile_options_init(&po);
	po.models = pm;
	po.num_models = (size_t)n;
	po.precision = o->model.precision;
	po.batch_size = o->batch_size;
	po.batch_axis = o->batch_axis;
	po.ipu_version = o->ipu_version;
	po.tiles = o->tiles;
	po.tile_mem = o->tile_mem;
	po.max_tensor_size = o->max_tensor_size;
	po.fp16_skip_op_types = (const char *const *)o->skip_ops;
	po.num_fp16_skip_op_types = (size_t)o->nskip;
	po.fp8_skip_op_names = (const char *const *)o->fp8_skip;
	po.num_fp8_skip_op_names = (size_t)o->nfp8_skip;
	po.fp8_params = o->fp8_params;
	po.fp8_scale = o->fp8_per_tensor ? "per-tensor" : "per-channel";
	po.num_of_layers_keep_fp16 = o->keep_fp16;
	po.fp8_auto_skip = o->fp8_auto_skip;
	po.state = o->state;
	po.prefill_model = o->prefill_model;
	po.custom_library_so_paths = o->custom_libs;
	po.check = o->check;
	po.no_fusion = o->no_fusion;
	po.no_memory_reuse = o->no_memory_reuse;
	po.verbose = o->verbose;
	po.num_ipus = o->num_ipus;
	po.enable_pipelining = o->pipelining;
	/* in a config file, relative to it (as the calibration data) */
	if (o->sharding_config &&
	    !(shard = ipuc_calib_path(o->config_yaml ? cfgdir : NULL, o->sharding_config)))
		goto oom;
	po.manual_sharding_config = shard;
	if (o->calibration_data &&
	    !(calib = ipuc_calib_path(o->config_yaml ? cfgdir : NULL, o->calibration_data)))
		goto oom;
	if (o->precision_compare_json &&
	    !(cmpjson = ipuc_calib_path(o->config_yaml ? cfgdir : NULL, o->precision_compare_json)))
		goto oom;
	po.calibration_data = calib;
	po.calibration_loss_type = ipu_calib_loss_name(o->calibration_loss);
	po.precision_compare = o->precision_compare;
	po.precision_compare_json = cmpjson;
	po.executable = want_exe;
	po.output = exe;
	po.keep_executable = 0;
	po.export_opset = o->convert_version;
	po.report = o->report;
	po.message = on_message;
	po.callback_ctx = &sinks;
	if (ipu_compile(&po, &r) < 0) {
		if (!r)
			goto oom;
		print_error(err, r->error);
		if (o->json && r->stage != IPU_COMPILE_STAGE_OPTIONS) {
			ipuc_json_target(out, &r->summary);
			for (size_t i = 0; i < r->summary.num_models; i++) {
				if (i)
					fprintf(out, ", ");
				ipuc_json_model(out, &r->summary.models[i]);
			}
			json_failed(out, r, o->check);
		}
		goto out;
	}
	if (o->json) {
		ipuc_json_target(out, &r->summary);
		for (size_t i = 0; i < r->summary.num_models; i++) {
			if (i)
				fprintf(out, ", ");
			ipuc_json_model(out, &r->summary.models[i]);
		}
		fprintf(out, "]");
		if (!want_exe) {
			fprintf(out, ", \"executable\": null}\n");
		} else {
			fprintf(out, ", \"check\": %s, \"executable\": ", o->check ? "true" : "null");
			ipuc_json_string(out, exe);
			fprintf(out, ", \"file_bytes\": %llu", (unsigned long long)r->summary.stats.file_bytes);
			if (o->report) {
				fprintf(out, ", \"report\": ");
				ipuc_json_string(out, o->report);
			}
			fprintf(out, ", \"summary\": ");
			ipuc_json_stats(out, &r->summary.stats);
			fprintf(out, "}\n");
		}
	}
	if (want_exe && (o->verbose || !o->json))
		ipuc_print_stats(err, exe, &r->summary.stats);
	if (o->report && (o->verbose || !o->json))
		fprintf(err, "ipu-compile: wrote the report %s\n", o->report);
	rc = IPUC_EXIT_OK;
	goto out;
oom:
	fprintf(err, "ipu-compile: out of memory\n");
	rc = IPUC_EXIT_ERROR;
out:
	ipu_compile_result_free(r);
	for (int i = 0; i < n; i++) {
		free((char *)pm[i].path);
		free((char *)pm[i].name);
		free((char *)pm[i].export_onnx);
	}
	free(frozen);
	free(frozen_dir);
	free(shapes);
	free(calib);
	free(cmpjson);
	free(shard);
	free(cfgdir);
	free(outdir);
	free(exe);
	return rc;
}
