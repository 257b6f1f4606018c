/* SPDX-License-Identifier: MIT */
/* compile.c - ipu_compile(): models -> front end -> checks -> .ipuef. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "batch.h"
#include "calib_cli.h"
#include "check.h"
#include "cli.h"
#include "ipu/custom_ops.h"
#include "ipu/file_atomic.h"
#include "ipu/lower.h"
#include "ipu/onnx_io.h"
#include "ipu/passes.h"
#include "report/report.h"

/* Everything one compilation holds: no state outside it. */
struct job {
	const struct ipu_compile_options *po;
	struct ipuc_options o;
	struct ipuc_result *r;
	FILE *log;			/* LOG messages */
	FILE *table;			/* the precision report's table */
	FILE *note;			/* NOTE messages */
	int model;			/* being compiled, for progress */
	struct ir_qdq_stats qdq;	/* of the model just compiled */
	struct ipu_custom_set *custom;	/* --custom_library_so_paths */
};

static void progress(struct job *j, const char *pass, int rewrites, int nodes)
{
	struct ipu_compile_progress p = { j->model, pass, rewrites, nodes };

	if (j->po->progress)
		j->po->progress(j->po->callback_ctx, &p);
}

static void on_pass(void *ctx, const char *pass, int rewrites, int nodes)
{
	struct job *j = ctx;

	if (j->o.verbose)
		fprintf(j->log, "ipu-compile: %-18s %d rewrites, %d nodes\n", pass, rewrites, nodes);
	progress(j, pass, rewrites, nodes);
}

/* A warning: a LOG line and a diagnostic. */
static void warn(struct job *j, int model, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void warn(struct job *j, int model, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(void)model;	/* the log's sink records it, for j->model */
	fprintf(j->log, "ipu-compile: warning: %s\n", msg);
}

/* Anchors of types the device has no arithmetic for are converted by the
 * wide-types pass (float64 -> float32, int16/uint16 -> int32): say so, the
 * caller converts at the host boundary. */
static void warn_wide_anchors(struct job *j, const struct ir_graph *g, const char *path)
{
	for (int k = 0; k < g->ninputs + g->noutputs; k++) {
		int in = k < g->ninputs;
		const struct ir_value *v = &g->vals[in ? g->inputs[k] : g->outputs[k - g->ninputs]];
		const char *to = v->dtype == IR_F64 ? "float32" :
				 v->dtype == IR_I16 || v->dtype == IR_U16 ? "int32" : NULL;
		char buf[4 * 256 + 1];

		if (to)
			warn(j, j->model, "%s: graph %s '%s' is %s, which the device does not compute in: the executable %s %s (convert at the host boundary)",
			     path, in ? "input" : "output", cli_safe(v->name, buf, sizeof(buf)),
			     ir_dtype_name(v->dtype), in ? "takes" : "gives", to);
	}
}

static const char *precision_of(const struct ipuc_options *o, const struct ipuc_model *m)
{
	return m->precision ? m->precision : o->model.precision ? o->model.precision : "fp32";
}

static int compile_model(struct job *j, const struct ipuc_model *m, const char *precision,
			 struct ir_graph **out, struct ir_graph **ref32,
			 struct ipuc_calib_state *cs, struct ir_error *e)
{
	const struct ipuc_options *o = &j->o;
	struct ir_pipeline_opts po;
	struct ir_qdq_stats qdq = { 0 };
	const char *path = m->input_model;
	struct ir_graph *g;

	*out = NULL;
	memset(&po, 0, sizeof(po));
	po.infer.shapes = m->shapes;
	po.infer.nshapes = m->nshapes;
	po.infer.batch_size = o->batch_size;
	po.infer.batch_axis = o->batch_axis;
	po.infer.fold_limit = o->max_tensor_size;
	po.infer.log = j->log;
	/* fp8 layers are chosen in the lowering; everything else is fp16 */
	po.precision_fp16 = !strcmp(precision, "fp16") || ipuc_is_fp8(precision);
	po.fp16.skip_ops = (const char *const *)o->skip_ops;
	po.fp16.nskip = o->nskip;
	po.no_fusion = o->no_fusion;
	po.verbose = o->verbose;
	po.fp32_copy = o->check ? ref32 : NULL;
	po.qdq = &qdq;
	po.on_pass = on_pass;
	po.on_pass_ctx = j;
	if (ipuc_calib_wanted(o) && ipuc_calib_prepare(o, m, path, &po, NULL, cs, e)) {
		char msg[IR_ERROR_LEN];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		return ir_err(e, "%s: %s", path, msg);
	}
	g = ipuc_model_load(m, path, e);
	if (!g)
		return -1;
	g->custom = ipu_custom_set_table(j->custom);
	progress(j, "load", -1, -1);
	warn_wide_anchors(j, g, path);
	if (ipuc_batch_inputs(g, m, o->batch_size, o->batch_axis, e) ||
	    ir_pipeline_run(g, &po, e) || ipuc_batch_check(g, o->batch_size, o->batch_axis, e)) {
		char msg[IR_ERROR_LEN];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		ir_err(e, "%s: %s", path, msg);
		ir_graph_free(g);
		return -1;
	}
	j->qdq = qdq;
	/* under fp8 the model's integer scales (absmax / 127 and the like)
	 * are no powers of two and its int8 grid no fp8 one: the weights
	 * dequantized here get fp8's own scales, which the note says */
	if (qdq.q || qdq.dq)
		fprintf(j->note, "ipu-compile: %s: QDQ model: %d of %d DequantizeLinear and %d of %d QuantizeLinear folded at compile time (the weights dequantized once%s; the model computes in %s); %d DequantizeLinear and %d QuantizeLinear (activations) computed on the device\n",
			path, qdq.dq - qdq.dq_left, qdq.dq, qdq.q - qdq.q_left, qdq.q,
			ipuc_is_fp8(precision) ? ", then rounded to fp8 with fp8's own scales: the model's do not map onto them" : "",
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
		const char *p = precision_of(o, &models[i]);

		if (first && strcmp(p, first))
			same = 0;
		first = first ? first : p;
	}
	if (same)
		return first ? first : "fp32";
	buf[0] = 0;
	for (int i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%sgraph%d %s", i ? ", " : "", i,
				      precision_of(o, &models[i]));
	return buf;
}

/* The errno class of a message (ipu/compiler.h lists them). */
static int error_class(enum ipu_compile_stage stage, const char *msg)
{
	if (stage == IPU_COMPILE_STAGE_OPTIONS)
		return strstr(msg, "out of memory") ? -ENOMEM : -EINVAL;
	if (!strcmp(msg, "out of memory") || strstr(msg, ": out of memory") == msg + strlen(msg) - 15)
		return -ENOMEM;
	if (stage == IPU_COMPILE_STAGE_CHECK && strstr(msg, "differ"))
		return -EDOM;
	if (strstr(msg, "cannot open"))
		return -ENOENT;
	if (strstr(msg, "does not fit") || strstr(msg, "out of memory:") ||
	    (stage == IPU_COMPILE_STAGE_LOWER && strstr(msg, "bytes a tile gives")))
		return -ENOSPC;
	if (strstr(msg, "not supported") || strstr(msg, "unsupported") || strstr(msg, "not lowered"))
		return -ENOTSUP;
	if (stage == IPU_COMPILE_STAGE_EXPORT || strstr(msg, "writing "))
		return -EIO;
	return -EINVAL;
}

static int fail(struct job *j, enum ipu_compile_stage stage, int model, const char *msg)
{
	struct ipu_compile_result *p = &j->r->pub;

	snprintf(p->error, sizeof(p->error), "%s", msg);
	p->stage = stage;
	p->status = error_class(stage, msg);
	ipuc_result_diag(j->r, IPU_COMPILE_ERROR, model, msg);
	return p->status;
}

/* An output must not be one of the inputs, nor anything but a file. */
static int check_outputs(struct job *j, const struct ipuc_model *models, int n)
{
	const struct ipuc_options *o = &j->o;
	const char *inputs[IPUC_MAX_MODELS + 2], *outs[IPUC_MAX_MODELS + 3];
	char *text = NULL;
	size_t len = 0, k = 0, nout = 0;
	FILE *f;
	int rc = 0;

	for (int i = 0; i < n; i++)
		inputs[k++] = models[i].data ? NULL : models[i].input_model;
	inputs[k++] = o->calibration_data;
	outs[nout++] = o->output;
	outs[nout++] = o->report;
	outs[nout++] = o->precision_compare_json;
	for (int i = 0; i < n; i++)
		outs[nout++] = models[i].export_path;
	if (!(f = open_memstream(&text, &len)))
		return fail(j, IPU_COMPILE_STAGE_OPTIONS, -1, "out of memory");
	for (size_t i = 0; !rc && i < nout; i++)
		if (outs[i])
			rc = cli_check_output(f, "ipu-compile", outs[i], inputs, (unsigned)k);
	for (size_t a = 0; !rc && a < nout; a++)
		for (size_t b = a + 1; !rc && b < nout; b++)
			if (outs[a] && outs[b] && !strcmp(outs[a], outs[b])) {
				fprintf(f, "ipu-compile: %s is given as two outputs\n", outs[a]);
				rc = -1;
			}
	fclose(f);
	if (rc) {
		/* "ipu-compile: MESSAGE\n" -> MESSAGE */
		char *m = text ? text : "cannot write an output";

		if (!strncmp(m, "ipu-compile: ", 13))
			m += 13;
		m[strcspn(m, "\n")] = 0;
		rc = fail(j, IPU_COMPILE_STAGE_OPTIONS, -1, m);
		if (rc == -EINVAL && strstr(m, "writable"))
			j->r->pub.status = rc = -EIO;
	}
	free(text);
	return rc;
}

static int run(struct job *j)
{
	const struct ipuc_options *o = &j->o;
	struct ipuc_result *res = j->r;
	struct ir_error e = { "" };
	const struct ipuc_model *models = o->nfusion ? o->fusion : &o->model;
	int n = o->nfusion ? o->nfusion : 1;
	struct ir_graph *graphs[IPUC_MAX_MODELS] = { 0 }, *refs[IPUC_MAX_MODELS] = { 0 };
	struct ir_graph *prefill = NULL, *prefill_ref = NULL;
	struct ipuc_calib_state cstate[IPUC_MAX_MODELS];
	struct ipuc_calib_fp8 calfp8;
	struct ipu_target t = { o->ipu_version, o->tiles, o->tile_mem, o->batch_axis,
				(uint32_t)o->batch_size, o->verbose ? j->log : NULL,
				o->max_tensor_size, o->no_memory_reuse };
	struct ipu_graph_stats st;
	struct ipu_state_spec sspec = { 0 };
	struct ipuc_report rep;
	struct ir_fp8_opts f8;
	char precs[IPUC_MAX_MODELS * 24];
	void *image = NULL;
	size_t image_len = 0;
	int rc = 0;

	memset(cstate, 0, sizeof(cstate));
	memset(&calfp8, 0, sizeof(calfp8));
	res->pub.summary.ipu_version = ipuc_result_strdup(res, o->ipu_version ? o->ipu_version : "ipu2");
	if (!res->pub.summary.ipu_version)
		return fail(j, IPU_COMPILE_STAGE_OPTIONS, -1, "out of memory");
	res->pub.summary.tiles = o->tiles;
	res->pub.summary.tile_mem = o->tile_mem;
	res->pub.summary.custom = o->tiles != IPU2_TILES || o->tile_mem != IPU2_TILE_MEM;
	res->pub.summary.check = -1;
	if ((rc = check_outputs(j, models, n)))
		goto out;
	for (int i = 0; i < n; i++) {
		const char *prec = precision_of(o, &models[i]);

		j->model = i;
		if (o->verbose)
			fprintf(j->log, "ipu-compile: model %d: %s (%s)\n", i, models[i].input_model, prec);
		if (compile_model(j, &models[i], prec, &graphs[i], &refs[i], &cstate[i], &e)) {
			rc = fail(j, IPU_COMPILE_STAGE_MODEL, i, e.msg);
			goto out;
		}
		if (ipuc_result_model(res, i, models[i].input_model, prec, graphs[i], &j->qdq)) {
			rc = fail(j, IPU_COMPILE_STAGE_MODEL, i, "out of memory");
			goto out;
		}
		if (models[i].export_path) {
			const char *file = models[i].export_path;

			if (o->convert_version ? onnx_save_file_opset(graphs[i], file, o->convert_version, &e) :
			    onnx_save_file(graphs[i], file, &e)) {
				rc = fail(j, IPU_COMPILE_STAGE_EXPORT, i, e.msg);
				goto out;
			}
			if (o->verbose)
				fprintf(j->log, "ipu-compile: wrote %s\n", file);
		}
	}
	j->model = -1;
	if (o->prefill_model && j->po->executable) {
		/* the decode model's options, its own file and shapes */
		struct ipuc_model pm = models[0];
		struct ipuc_calib_state pcs;

		memset(&pcs, 0, sizeof(pcs));
		pm.input_model = o->prefill_model;
		pm.data = NULL;
		pm.size = 0;
		pm.nshapes = 0;
		pm.export_path = NULL;
		if (n > 1 || o->num_ipus > 1 || o->sharding_config) {
			rc = fail(j, IPU_COMPILE_STAGE_OPTIONS, -1,
				  "--prefill-model: the decode model must be one model on one IPU (no fusion, no --num-ipus)");
			goto out;
		}
		if (ipuc_is_fp8(precision_of(o, &models[0]))) {
			rc = fail(j, IPU_COMPILE_STAGE_OPTIONS, -1,
				  "--prefill-model: fp8 precisions are not supported with a prefill program (fp32 or fp16)");
			goto out;
		}
		if (o->verbose)
			fprintf(j->log, "ipu-compile: prefill model: %s (%s)\n", pm.input_model,
				precision_of(o, &models[0]));
		rc = compile_model(j, &pm, precision_of(o, &models[0]), &prefill, &prefill_ref, &pcs, &e);
		ipuc_calib_state_free(&pcs);
		if (rc) {
			char m[IR_ERROR_LEN];

			snprintf(m, sizeof(m), "--prefill-model: %s", e.msg);
			rc = fail(j, IPU_COMPILE_STAGE_MODEL, -1, m);
			goto out;
		}
		t.prefill = prefill;
	}
	/* the fp8 pass's calibration, and the report once every model is
	 * compiled */
	if (ipuc_calib_fp8_prepare(o, models, n, cstate, graphs, &t, &calfp8, o->verbose ? j->log : NULL, &e)) {
		rc = fail(j, IPU_COMPILE_STAGE_CALIBRATION, -1, e.msg);
		goto out;
	}
	ipuc_calib_fp8_print_auto_skip(o, &calfp8, j->note);
	for (int i = 0; o->precision_compare && i < n; i++) {
		if (ipuc_calib_report(o, &cstate[i], graphs[i], precision_of(o, &models[i]), i, n,
				      NULL, &t, &calfp8, j->table, &e)) {
			rc = fail(j, IPU_COMPILE_STAGE_CALIBRATION, i, e.msg);
			goto out;
		}
	}
	if (!j->po->executable)
		goto done;
	{
		/* fp8 layers are picked at lowering, once for all the models */
		const char *p8 = NULL;
		int n8 = 0;

		for (int i = 0; i < n; i++) {
			const char *prec = precision_of(o, &models[i]);

			if (!ipuc_is_fp8(prec))
				continue;
			if (p8 && strcmp(p8, prec))
				n8 = -n - 1;
			p8 = prec;
			n8++;
		}
		if (n8 && n8 != n) {
			rc = fail(j, IPU_COMPILE_STAGE_TARGET, -1,
				  "model_fusion: fp8 and fp8_weight cannot be mixed with each other or with other precisions in one executable");
			goto out;
		}
		if (n8) {
			if (ipuc_fp8_opts(o, p8, &f8, &e)) {
				rc = fail(j, IPU_COMPILE_STAGE_TARGET, -1, e.msg);
				goto out;
			}
			ipuc_calib_fp8_apply(&calfp8, &f8);
			t.fp8 = &f8;
		}
	}
	if (o->state) {
		if (ipu_state_spec_parse(o->state, &sspec, &e)) {
			rc = fail(j, IPU_COMPILE_STAGE_TARGET, -1, e.msg);
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
		tc.prefill = NULL;
		progress(j, "check", -1, -1);
		c = ipuc_check_refs(graphs, refs, n, &tc, o->custom_libs, j->log, &e);
		if (c < 0) {
			rc = fail(j, IPU_COMPILE_STAGE_CHECK, -1, e.msg);
			goto out;
		}
		res->pub.summary.check = c == 0;
		if (c > 0) {
			rc = fail(j, IPU_COMPILE_STAGE_CHECK, -1,
				  "--check: the device's results differ from the reference evaluator");
			goto out;
		}
	}
	if (o->report) {
		/* the report looks at the builder of the executable made */
		rep.path = o->report;
		rep.title = n > 1 ? "fused models" : models[0].input_model;
		rep.ipu_version = o->ipu_version ? o->ipu_version : "ipu2";
		rep.custom = res->pub.summary.custom;
		rep.clock_ghz = !strcmp(rep.ipu_version, "ipu21") ? 1.85 : 1.33;
		rep.precision = report_precision(o, models, n, precs, sizeof(precs));
		t.inspect = ipuc_report_inspect;
		t.inspect_ctx = &rep;
	}
	progress(j, "lower", -1, -1);
	if (o->num_ipus > 1 || o->sharding_config) {
		/* a model bigger than one IPU: one executable per IPU */
		memset(&st, 0, sizeof(st));
		if (ipuc_lower_split(o, n, graphs[0], &t, &image, &image_len, &st, &e)) {
			rc = fail(j, IPU_COMPILE_STAGE_LOWER, -1, e.msg);
			goto out;
		}
	} else if (ipu_lower_write_mem(graphs, n, &t, &image, &image_len, &st, &e)) {
		rc = fail(j, IPU_COMPILE_STAGE_LOWER, -1, e.msg);
		goto out;
	}
	if (o->output) {
		char err[512], msg[1024];

		progress(j, "write", -1, -1);
		if (ipurt_write_file_atomic(o->output, image, image_len, err, sizeof(err))) {
			snprintf(msg, sizeof(msg), "writing %s: %s", o->output, err);
			rc = fail(j, IPU_COMPILE_STAGE_LOWER, -1, msg);
			goto out;
		}
		if (!(res->pub.output = ipuc_result_strdup(res, o->output))) {
			rc = fail(j, IPU_COMPILE_STAGE_LOWER, -1, "out of memory");
			goto out;
		}
	}
	ipuc_result_stats(res, &st, o->tiles, image_len);
	if (j->po->keep_executable || !o->output) {
		res->pub.executable = image;
		res->pub.executable_size = image_len;
		image = NULL;
	}
done:
	res->pub.stage = IPU_COMPILE_STAGE_DONE;
out:
	for (int i = 0; i < n; i++) {
		ir_graph_free(graphs[i]);
		ir_graph_free(refs[i]);
		ipuc_calib_state_free(&cstate[i]);
	}
	ipuc_calib_fp8_free(&calfp8);
	ipu_state_spec_free(&sspec);
	ir_graph_free(prefill);
	ir_graph_free(prefill_ref);
	free(image);
	return rc;
}

int ipu_compile(const struct ipu_compile_options *po, struct ipu_compile_result **result)
{
	struct ipu_compile_options norm;
	struct ipuc_result *r = calloc(1, sizeof(*r));
	struct ir_error e = { "" };
	struct job j;
	int rc;

	*result = NULL;
	if (!r)
		return -ENOMEM;
	*result = &r->pub;
	memset(&j, 0, sizeof(j));
	j.po = po;
	j.r = r;
	j.model = -1;
	r->pub.summary.check = -1;
	if (!po) {
		ir_err(&e, "no options: give ipu_compile_options (ipu_compile_options_init)");
		rc = fail(&j, IPU_COMPILE_STAGE_OPTIONS, -1, e.msg);
		return rc;
	}
	/* the caller's fields, the defaults beyond its size */
	ipu_compile_options_init(&norm);
	if (po->size && po->size <= sizeof(norm) + 4096) {
		memcpy(&norm, po, po->size < sizeof(norm) ? po->size : sizeof(norm));
		norm.size = sizeof(norm);
		j.po = &norm;
	}
	if (ipuc_options_from_public(po, &j.o, &e)) {
		rc = fail(&j, IPU_COMPILE_STAGE_OPTIONS, -1, e.msg);
		ipuc_options_free(&j.o);
		return rc;
	}
	j.log = ipuc_sink_open(j.po, IPU_COMPILE_MESSAGE_LOG, r, &j.model);
	j.table = ipuc_sink_open(j.po, IPU_COMPILE_MESSAGE_TABLE, NULL, NULL);
	j.note = ipuc_sink_open(j.po, IPU_COMPILE_MESSAGE_NOTE, NULL, NULL);
	if (!j.log || !j.table || !j.note) {
		rc = fail(&j, IPU_COMPILE_STAGE_OPTIONS, -1, "out of memory");
	} else if (j.o.custom_libs &&
		   ipu_custom_set_open(j.o.custom_libs, &j.custom, e.msg, sizeof(e.msg))) {
		char m[IR_ERROR_LEN];

		snprintf(m, sizeof(m), "--custom_library_so_paths: %s", e.msg);
		rc = fail(&j, IPU_COMPILE_STAGE_OPTIONS, -1, m);
	} else {
		rc = run(&j);
	}
	/* after every graph and engine using its table */
	ipu_custom_set_close(j.custom);
	if (j.log)
		fclose(j.log);
	if (j.table)
		fclose(j.table);
	if (j.note)
		fclose(j.note);
	ipuc_options_free(&j.o);
	return rc;
}

const char *ipu_compile_version(void)
{
	return IPU_STACK_VERSION;
}
