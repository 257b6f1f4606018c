/* SPDX-License-Identifier: MIT */
/* driver.c - ipu-compile: options -> models -> passes -> outputs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch.h"
#include "calib_cli.h"
#include "check.h"
#include "cli.h"
#include "driver.h"
#include "ipu/lower.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"
#include "json_summary.h"
#include "report/report.h"
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

/* Anchors of types the device has no arithmetic for are converted by the
 * wide-types pass (float64 -> float32, int16/uint16 -> int32): say so, the
 * caller converts at the host boundary. */
static void warn_wide_anchors(const struct ir_graph *g, const char *path)
{
	for (int k = 0; k < g->ninputs + g->noutputs; k++) {
		int in = k < g->ninputs;
		const struct ir_value *v = &g->vals[in ? g->inputs[k] : g->outputs[k - g->ninputs]];
		const char *to = v->dtype == IR_F64 ? "float32" :
				 v->dtype == IR_I16 || v->dtype == IR_U16 ? "int32" : NULL;
		char buf[4 * 256 + 1];

		if (to)
			fprintf(stderr, "ipu-compile: warning: %s: graph %s '%s' is %s, which the device does not compute in: the executable %s %s (convert at the host boundary)\n",
				path, in ? "input" : "output", cli_safe(v->name, buf, sizeof(buf)),
				ir_dtype_name(v->dtype), in ? "takes" : "gives", to);
	}
}

static int compile_model(const struct ipuc_options *o, const struct ipuc_model *m,
			 const char *cfgdir, const char *precision,
			 struct ir_graph **out, struct ir_graph **ref32,
			 char **path_out, struct ipuc_calib_state *cs, struct ir_error *e)
{
	struct ir_pipeline_opts po;
	struct ir_qdq_stats qdq = { 0 };
	char *path = join(cfgdir, m->input_model);
	struct ir_graph *g;

	*out = NULL;
	*path_out = path;
	if (!path)
		return ir_err(e, "out of memory");
	memset(&po, 0, sizeof(po));
	po.infer.shapes = m->shapes;
	po.infer.nshapes = m->nshapes;
	po.infer.batch_size = o->batch_size;
	po.infer.batch_axis = o->batch_axis;
	po.infer.fold_limit = o->max_tensor_size;
	/* fp8 layers are chosen in the lowering; everything else is fp16 */
	po.precision_fp16 = !strcmp(precision, "fp16") || ipuc_is_fp8(precision);
	po.fp16.skip_ops = (const char *const *)o->skip_ops;
	po.fp16.nskip = o->nskip;
	po.no_fusion = o->no_fusion;
	po.verbose = o->verbose;
	po.fp32_copy = o->check ? ref32 : NULL;
	po.qdq = &qdq;
	if (ipuc_calib_wanted(o) && ipuc_calib_prepare(o, path, &po, cfgdir, cs, e)) {
		char msg[IR_ERROR_LEN];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		return ir_err(e, "%s: %s", path, msg);
	}
	g = onnx_load_file(path, e);
	if (!g)
		return -1;
	warn_wide_anchors(g, path);
	if (ipuc_batch_inputs(g, m, o->batch_size, o->batch_axis, e) ||
	    ir_pipeline_run(g, &po, e) || ipuc_batch_check(g, o->batch_size, o->batch_axis, e)) {
		char msg[IR_ERROR_LEN];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		ir_err(e, "%s: %s", path, msg);
		ir_graph_free(g);
		return -1;
	}
	if ((qdq.q || qdq.dq) && (o->verbose || !o->json))
		fprintf(stderr, "ipu-compile: %s: QDQ model: %d of %d DequantizeLinear and %d of %d QuantizeLinear folded at compile time (the weights dequantized once; the model computes in %s); %d DequantizeLinear and %d QuantizeLinear (activations) computed on the device\n",
			path, qdq.dq - qdq.dq_left, qdq.dq, qdq.q - qdq.q_left, qdq.q,
			po.precision_fp16 ? "float16" : "float32", qdq.dq_left, qdq.q_left);
	*out = g;
	return 0;
}

/* The precision the report names: one, or each fused model's when they
 * differ. */
static const char *report_precision(const struct ipuc_options *o, const struct ipuc_model *models,
				    int n, char *buf, size_t len)
{
	const char *first = NULL;
	size_t k = 0;
	int same = 1;

	for (int i = 0; i < n; i++) {
		const char *p = models[i].precision ? models[i].precision :
				o->model.precision ? o->model.precision : "fp32";

		if (first && strcmp(p, first))
			same = 0;
		first = first ? first : p;
	}
	if (same)
		return first ? first : "fp32";
	buf[0] = 0;
	for (int i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%sgraph%d %s", i ? ", " : "", i,
				      models[i].precision ? models[i].precision :
				      o->model.precision ? o->model.precision : "fp32");
	return buf;
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

int ipuc_run(const struct ipuc_options *o, FILE *out, FILE *err)
{
	struct ir_error e = { "" };
	const struct ipuc_model *models;
	struct ir_graph *graphs[IPUC_MAX_MODELS] = { 0 }, *refs[IPUC_MAX_MODELS] = { 0 };
	struct ipuc_calib_state cstate[IPUC_MAX_MODELS];
	struct ipuc_calib_fp8 calfp8;
	char *paths[IPUC_MAX_MODELS] = { 0 };
	int n, rc = IPUC_EXIT_ERROR, want_exe;
	char *cfgdir = NULL, *outdir = NULL, *exe = NULL;
	struct ipu_target t = { o->ipu_version, o->tiles, o->tile_mem, o->batch_axis,
				(uint32_t)o->batch_size, o->verbose ? err : NULL,
				o->max_tensor_size, o->no_memory_reuse };
	struct ipu_graph_stats st;
	struct ipu_state_spec sspec = { 0 };
	struct ipuc_report rep;
	struct ir_fp8_opts f8;
	struct stat sb;
	char precs[IPUC_MAX_MODELS * 24];

	memset(cstate, 0, sizeof(cstate));
	memset(&calfp8, 0, sizeof(calfp8));
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
	if (check_outputs(err, o, models, n, cfgdir, outdir, exe)) {
		rc = IPUC_EXIT_ERROR;
		goto out;
	}
	/* the target as the .ipuef records it; custom: not that IPU's geometry */
	if (o->json)
		fprintf(out, "{\"target\": {\"ipu_version\": \"%s\", \"tiles\": %u, \"tile_mem\": %u, \"custom\": %s}, \"models\": [",
			o->ipu_version ? o->ipu_version : "ipu2", o->tiles, o->tile_mem,
			o->tiles != IPU2_TILES || o->tile_mem != IPU2_TILE_MEM ? "true" : "false");
	for (int i = 0; i < n; i++) {
		const char *prec = models[i].precision ? models[i].precision :
				   o->model.precision ? o->model.precision : "fp32";

		if (o->verbose)
			fprintf(err, "ipu-compile: model %d: %s (%s)\n", i, models[i].input_model, prec);
		if (compile_model(o, &models[i], o->config_yaml ? cfgdir : NULL, prec,
				  &graphs[i], &refs[i], &paths[i], &cstate[i], &e)) {
			print_error(err, e.msg);
			if (o->json)
				json_fail(out, "], \"executable\": null", e.msg);
			goto out;
		}
		if (o->json) {
			if (i)
				fprintf(out, ", ");
			ipuc_json_model(out, paths[i], prec, graphs[i]);
		}
		if (o->export_onnx || o->output_model) {
			char *file = export_path(o, outdir, n, i);

			if (!file)
				goto oom;
			if (o->convert_version ? onnx_save_file_opset(graphs[i], file, o->convert_version, &e) :
			    onnx_save_file(graphs[i], file, &e)) {
				print_error(err, e.msg);
				free(file);
				goto out;
			}
			if (o->verbose)
				fprintf(err, "ipu-compile: wrote %s\n", file);
			free(file);
		}
	}
	if (o->json)
		fprintf(out, "]");
	/* the fp8 pass's calibration, and the report (the table goes where
	 * --json does not) once every model is compiled */
	if (ipuc_calib_fp8_prepare(o, models, n, cstate, &calfp8, o->verbose ? err : NULL, &e)) {
		print_error(err, e.msg);
		if (o->json)
			json_fail(out, ", \"executable\": null", e.msg);
		goto out;
	}
	for (int i = 0; o->precision_compare && i < n; i++) {
		const char *prec = models[i].precision ? models[i].precision :
				   o->model.precision ? o->model.precision : "fp32";

		if (ipuc_calib_report(o, &cstate[i], graphs[i], prec, i, n,
				      o->config_yaml ? cfgdir : NULL, &t, &calfp8,
				      o->json ? err : out, &e)) {
			print_error(err, e.msg);
			if (o->json)
				json_fail(out, ", \"executable\": null", e.msg);
			goto out;
		}
	}
	if (!want_exe) {
		if (o->json)
			fprintf(out, ", \"executable\": null}\n");
		rc = IPUC_EXIT_OK;
		goto out;
	}
	{
		/* fp8 layers are picked at lowering, once for all the models */
		const char *p8 = NULL;
		int n8 = 0;

		for (int i = 0; i < n; i++) {
			const char *prec = models[i].precision ? models[i].precision :
					   o->model.precision ? o->model.precision : "fp32";

			if (!ipuc_is_fp8(prec))
				continue;
			if (p8 && strcmp(p8, prec))
				n8 = -n - 1;
			p8 = prec;
			n8++;
		}
		if (n8 && n8 != n) {
			print_error(err, "model_fusion: fp8 and fp8_weight cannot be mixed with each other or with other precisions in one executable");
			goto out;
		}
		if (n8) {
			if (ipuc_fp8_opts(o, p8, &f8, &e)) {
				print_error(err, e.msg);
				goto out;
			}
			ipuc_calib_fp8_apply(&calfp8, &f8);
			t.fp8 = &f8;
		}
	}
	if (o->state) {
		if (ipu_state_spec_parse(o->state, &sspec, &e)) {
			print_error(err, e.msg);
			goto out;
		}
		t.state_pairs = sspec.pairs;
		t.num_state_pairs = sspec.n;
		t.no_auto_state = sspec.none;
	}
	if (o->check) {
		/* the check feeds every input from the host: caches streamed */
		struct ipu_target tc = t;
		int c;

		tc.num_state_pairs = 0;
		tc.no_auto_state = 1;
		c = ipuc_check_refs(graphs, refs, n, &tc, err, &e);

		if (c < 0) {
			print_error(err, e.msg);
			if (o->json)
				json_fail(out, ", \"executable\": null, \"check\": null", e.msg);
			rc = IPUC_EXIT_ERROR;
			goto out;
		}
		if (c > 0) {
			fprintf(err, "ipu-compile: error: --check: the device's results differ from the reference evaluator\n");
			if (o->json)
				json_fail(out, ", \"executable\": null, \"check\": false",
					  "--check: the device's results differ from the reference evaluator");
			rc = IPUC_EXIT_ERROR;
			goto out;
		}
	}
	if (o->report) {
		/* the report looks at the builder of the executable written */
		rep.path = o->report;
		rep.title = n > 1 ? "fused models" : paths[0];
		rep.ipu_version = o->ipu_version ? o->ipu_version : "ipu2";
		rep.custom = o->tiles != IPU2_TILES || o->tile_mem != IPU2_TILE_MEM;
		rep.clock_ghz = !strcmp(rep.ipu_version, "ipu21") ? 1.85 : 1.33;
		rep.precision = report_precision(o, models, n, precs, sizeof(precs));
		t.inspect = ipuc_report_inspect;
		t.inspect_ctx = &rep;
	}
	if (ipu_lower_write(graphs, n, &t, exe, &st, &e)) {
		print_error(err, e.msg);
		if (o->json)
			json_fail(out, o->check ? ", \"executable\": null, \"check\": true" : ", \"executable\": null",
				  e.msg);
		rc = IPUC_EXIT_ERROR;
		goto out;
	}
	/* what a user sees with ls: the whole file, not the executable blob */
	if (stat(exe, &sb)) {
		fprintf(err, "ipu-compile: error: %s: written, but cannot stat it: %s\n", exe, strerror(errno));
		goto out;
	}
	if (o->json) {
		fprintf(out, ", \"check\": %s, \"executable\": ", o->check ? "true" : "null");
		ipuc_json_string(out, exe);
		fprintf(out, ", \"file_bytes\": %lld", (long long)sb.st_size);
		if (o->report) {
			fprintf(out, ", \"report\": ");
			ipuc_json_string(out, o->report);
		}
		fprintf(out, ", \"summary\": ");
		ipuc_json_stats(out, &st, o->tiles);
		fprintf(out, "}\n");
	}
	if (o->verbose || !o->json)
		ipuc_print_stats(err, exe, (uint64_t)sb.st_size, &st, o->tiles);
	if (o->report && (o->verbose || !o->json))
		fprintf(err, "ipu-compile: wrote the report %s\n", o->report);
	rc = IPUC_EXIT_OK;
	goto out;
oom:
	fprintf(err, "ipu-compile: out of memory\n");
	rc = IPUC_EXIT_ERROR;
out:
	for (int i = 0; i < n; i++) {
		ir_graph_free(graphs[i]);
		ir_graph_free(refs[i]);
		ipuc_calib_state_free(&cstate[i]);
		free(paths[i]);
	}
	ipuc_calib_fp8_free(&calfp8);
	ipu_state_spec_free(&sspec);
	free(cfgdir);
	free(outdir);
	free(exe);
	return rc;
}
