/* SPDX-License-Identifier: MIT */
/* calib_cli.c - --calibration-with-data and --precision-compare in ipu-compile. */
#include <stdlib.h>
#include <string.h>

#include "calib_cli.h"
#include "ipu/fp8.h"
#include "ipu/onnx_io.h"

/* Seeded, so that two runs of the same command give the same report. */
#define RANDOM_SEED 0x5eed1234ull

int ipuc_calib_wanted(const struct ipuc_options *o)
{
	return o->calibration_data || o->precision_compare;
}

void ipuc_calib_state_free(struct ipuc_calib_state *st)
{
	ir_graph_free(st->g32);
	ipu_calib_free(st->calib);
	ipu_calib_samples_free(&st->samples);
	memset(st, 0, sizeof(*st));
}

char *ipuc_calib_path(const char *cfgdir, const char *path)
{
	char *p;

	if (!cfgdir || !cfgdir[0] || path[0] == '/')
		return strdup(path);
	p = malloc(strlen(cfgdir) + strlen(path) + 2);
	if (p)
		sprintf(p, "%s/%s", cfgdir, path);
	return p;
}

int ipuc_calib_prepare(const struct ipuc_options *o, const struct ipuc_model *m, const char *path,
		       const struct ir_pipeline_opts *po, const char *cfgdir,
		       struct ipuc_calib_state *st, struct ir_error *e)
{
	struct ir_pipeline_opts p32 = *po;
	struct ipu_npz z;
	char *data;
	int r;

	memset(st, 0, sizeof(*st));
	p32.precision_fp16 = 0;
	p32.fp32_copy = NULL;
	p32.verbose = 0;
	p32.on_pass = NULL;	/* the reference's passes are not the model's */
	p32.qdq = NULL;
	if (!(st->g32 = ipuc_model_load(m, path, e)))
		return -1;
	if (ir_pipeline_run(st->g32, &p32, e))
		goto fail;
	if (!o->calibration_data)
		return ipu_calib_samples_random(st->g32, 1, RANDOM_SEED, &st->samples, e);
	data = ipuc_calib_path(cfgdir, o->calibration_data);
	if (!data) {
		ir_err(e, "out of memory");
		goto fail;
	}
	r = ipu_npz_read(data, &z, e);
	free(data);
	if (r)
		goto fail;
	r = ipu_calib_samples_from_npz(&z, st->g32, 0, &st->samples, e);
	ipu_npz_free(&z);
	if (r)
		goto fail;
	if (!(st->calib = ipu_calib_collect(st->g32, &st->samples, 1, o->calibration_loss, e)))
		goto fail;
	return 0;
fail:
	ipuc_calib_state_free(st);
	return -1;
}

/* FILE.json -> FILE.graphN.json for the models of a fusion. */
static char *json_path(const char *base, int index, int n)
{
	const char *dot = strrchr(base, '.'), *slash = strrchr(base, '/');
	size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - base) : strlen(base);
	char *p;

	if (n == 1)
		return strdup(base);
	p = malloc(strlen(base) + 32);
	if (p)
		sprintf(p, "%.*s.graph%d%s", (int)stem, base, index, base + stem);
	return p;
}

int ipuc_calib_report(const struct ipuc_options *o, const struct ipuc_calib_state *st,
		      const struct ir_graph *g, const char *precision, int index, int n,
		      const char *cfgdir, const struct ipu_target *t,
		      const struct ipuc_calib_fp8 *cf, FILE *f, struct ir_error *e)
{
	struct ipu_calib_report rep;
	const struct ipu_calib_samples *s = st->calib ? &st->calib->samples : &st->samples;
	struct ir_graph *conv = NULL;
	int r = 0;

	if (ipuc_is_fp8(precision) && cf && cf->active) {
		struct ipu_target tt = *t;

		tt.fp8 = &cf->f8;
		if (!(conv = ipu_lower_prepared_graph(g, &tt, e)))
			return -1;
	}
	r = ipu_calib_compare(st->g32, conv ? conv : g, s, st->calib != NULL, precision, &rep, e);
	ir_graph_free(conv);
	if (r)
		return -1;
	if (n > 1)
		fprintf(f, "model %d:\n", index);
	ipu_calib_report_print(&rep, f);
	if (o->precision_compare_json) {
		char *base = ipuc_calib_path(cfgdir, o->precision_compare_json);
		char *path = base ? json_path(base, index, n) : NULL;

		free(base);
		r = path ? ipu_calib_report_write_json(&rep, path, e) : ir_err(e, "out of memory");
		free(path);
	}
	ipu_calib_report_free(&rep);
	return r;
}

/* --fp8_params "IN,W,INSCALE,WSCALE": 1 if INSCALE is given. */
static int input_scale_given(const char *params)
{
	const char *p = params;

	for (int field = 0; p && field < 2; field++)
		p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
	return p && *p && *p != ',';
}

/* A format that only allows one scale (the pass's fixed scales). */
static int fixed_format(uint32_t fmt, int fixed, int scale, struct ipu_calib_format *f,
			struct ir_error *e)
{
	if (ipu_calib_fp8_format(fmt, f, e))
		return -1;
	if (fixed)
		f->scale_min = f->scale_max = scale;
	return 0;
}

static double rank_score(void *ctx, const struct ir_graph *g, int node,
			 const struct ir_fp8_opts *o)
{
	const struct ipuc_calib_fp8 *cf = ctx;
	double score = 0;

	(void)o;
	for (int i = 0; i < cf->nrank; i++)
		if (ipu_calib_ranking_score(&cf->rank[i], g->nodes[node].name, &score))
			return score;
	return 0;
}

static int layer_scale(void *ctx, const struct ir_graph *g, int node, int *scale,
		       struct ir_error *e)
{
	const struct ipuc_calib_fp8 *cf = ctx;
	double d;

	(void)e;
	for (int i = 0; i < cf->nscales; i++) {
		if (ipu_calib_ranking_score(&cf->scales[i], g->nodes[node].name, &d)) {
			*scale = (int)d;
			return 1;
		}
	}
	return 0;
}

/* Each layer's activation input scale from the statistics, kept by node name. */
static int layer_scales(const struct ipu_calib *c, const struct ir_graph *g,
			const struct ipu_calib_format *act, struct ipu_calib_ranking *out,
			FILE *log, struct ir_error *e)
{
	int n = 0;

	memset(out, 0, sizeof(*out));
	out->names = calloc((size_t)g->nnodes + 1, sizeof(*out->names));
	out->score = calloc((size_t)g->nnodes + 1, sizeof(*out->score));
	if (!out->names || !out->score) {
		ipu_calib_ranking_free(out);
		return ir_err(e, "out of memory");
	}
	for (int i = 0; i < g->nnodes; i++) {
		int k = ipu_calib_layer_activation(g, i), scale = 0, r;

		if (k < 0 || !g->nodes[i].name)
			continue;
		r = ipu_calib_activation_scale(c, g->vals[g->nodes[i].in[k]].name, act, &scale, e);
		if (r < 0) {
			out->n = n;
			ipu_calib_ranking_free(out);
			return -1;
		}
		if (!r)
			continue;
		out->names[n] = strdup(g->nodes[i].name);
		if (!out->names[n]) {
			out->n = n;
			ipu_calib_ranking_free(out);
			return ir_err(e, "out of memory");
		}
		out->score[n++] = scale;
		if (log)
			fprintf(log, "ipu-compile: calibration: fp8 input scale %d for layer %s\n",
				scale, g->nodes[i].name);
	}
	out->n = n;
	return 0;
}

/* --fp8-auto-skip on the first model with data; its layers join the
 * skip list of --fp8-skip-op-names. */
struct size_ctx {
	const struct ipuc_options *o;
	const struct ipuc_calib_fp8 *cf;
	struct ir_graph *g;
	const struct ipu_target *t;
};

/* The executable's bytes with the layers keep[] (and --fp8-skip-op-names')
 * in fp16: the lowering itself, since a layer's weights are stored on as
 * many tiles as read them. */
static int lowered_size(void *ctx, const char *const *keep, int n, double *bytes,
			struct ir_error *e)
{
	const struct size_ctx *sc = ctx;
	struct ir_fp8_opts f8 = sc->cf->f8;
	struct ipu_target t = *sc->t;
	struct ipu_lower_info info;
	const char **names = calloc((size_t)(sc->o->nfp8_skip + n) + 1, sizeof(*names));
	void *image = NULL;
	size_t len = 0;
	int k = 0;

	if (!names)
		return ir_err(e, "out of memory");
	for (int i = 0; i < sc->o->nfp8_skip; i++)
		names[k++] = sc->o->fp8_skip[i];
	for (int i = 0; i < n; i++)
		names[k++] = keep[i];
	ipuc_calib_fp8_apply(sc->cf, &f8);
	f8.skip_names = names;
	f8.nskip = k;
	t.fp8 = &f8;
	t.progress = NULL;
	t.inspect = NULL;
	memset(&info, 0, sizeof(info));
	if (ipu_lower_image(&sc->g, 1, &t, &image, &len, &info, e)) {
		free(names);
		return 1;	/* does not fit, for one: not a choice */
	}
	free(image);
	ipu_lower_info_free(&info);
	free(names);
	*bytes = (double)len;
	return 0;
}

static int auto_skip(const struct ipuc_options *o, const struct ipuc_calib_state *st,
		     struct ir_graph *const *graphs, int n, const struct ipu_target *t,
		     struct ipuc_calib_fp8 *cf, const struct ipu_calib_format *act,
		     const struct ipu_calib_format *weight, struct ir_error *e)
{
	struct size_ctx sc = { o, cf, NULL, t };
	int i = 0;

	while (i < n && !st[i].calib)
		i++;
	if (i == n)
		return 0;
	sc.g = graphs[i];
	if (ipu_calib_choose_auto_skip(st[i].calib, st[i].g32,
				       cf->f8.mode == IR_FP8_FULL ? act : NULL, weight,
				       !cf->f8.weight_scale_auto ? IPU_CALIB_WEIGHT_LOSS
				       : cf->f8.per_channel ? IPU_CALIB_WEIGHT_ABSMAX_CHANNEL
				       : IPU_CALIB_WEIGHT_ABSMAX,
				       o->fp8_auto_target, o->fp8_auto_budget, lowered_size, &sc,
				       &cf->chosen, e))
		return -1;
	cf->auto_skip = 1;
	cf->skip = calloc((size_t)(o->nfp8_skip + cf->chosen.nkeep) + 1, sizeof(*cf->skip));
	if (!cf->skip)
		return ir_err(e, "out of memory");
	for (int k = 0; k < o->nfp8_skip; k++)
		cf->skip[cf->nskip++] = o->fp8_skip[k];
	for (int k = 0; k < cf->chosen.nkeep; k++)
		cf->skip[cf->nskip++] = cf->chosen.names[k];
	cf->f8.skip_names = cf->skip;
	cf->f8.nskip = cf->nskip;
	return 0;
}

void ipuc_calib_fp8_print_auto_skip(const struct ipuc_options *o,
				    const struct ipuc_calib_fp8 *cf, FILE *f)
{
	const struct ipu_calib_auto_skip *a = &cf->chosen;

	if (!cf->auto_skip || !f)
		return;
	fprintf(f, "ipu-compile: fp8 auto skip: %d of %d layers kept in fp16: output error on the "
		"calibration data %.3g (all in fp8: %.3g), target %g %s; executable %.0f bytes, "
		"%.3f of the all-fp16-layers one (all in fp8: %.3f, budget %g)\n",
		a->nkeep, a->n, a->error, a->error_all, o->fp8_auto_target,
		a->met ? "met" : "not met within the budget", a->size,
		a->size_none > 0 ? a->size / a->size_none : 0,
		a->size_none > 0 ? a->size_all / a->size_none : 0, o->fp8_auto_budget);
	fprintf(f, "ipu-compile: fp8 auto skip: --fp8-skip-op-names ");
	for (int k = 0; k < a->nkeep; k++)
		fprintf(f, "%s%s", k ? "," : "", a->names[k]);
	fprintf(f, "\n");
}

int ipuc_calib_fp8_prepare(const struct ipuc_options *o, const struct ipuc_model *models,
			   int n, const struct ipuc_calib_state *st, struct ir_graph *const *graphs,
			   const struct ipu_target *t,
			   struct ipuc_calib_fp8 *cf, FILE *log, struct ir_error *e)
{
	const char *p8 = NULL;
	struct ipu_calib_format act, weight;
	int data = 0;

	memset(cf, 0, sizeof(*cf));
	for (int i = 0; i < n; i++) {
		const char *prec = models[i].precision ? models[i].precision :
				   o->model.precision ? o->model.precision : "fp32";

		if (ipuc_is_fp8(prec) && !p8)
			p8 = prec;
		data |= st[i].calib != NULL;
	}
	if (!p8)
		return 0;
	if (ipuc_fp8_opts(o, p8, &cf->f8, e))
		return -1;
	cf->active = 1;
	if (o->fp8_auto_skip && !data)
		return ir_err(e, "--fp8-auto-skip chooses the fp16 layers from data: give --calibration-with-data FILE.npz");
	if (!data)
		return 0;
	if (cf->f8.mode == IR_FP8_FULL && !(o->fp8_params && input_scale_given(o->fp8_params))) {
		int scale = cf->f8.input_scale, found = 0;

		if (ipu_calib_fp8_format(cf->f8.input_format, &act, e))
			return -1;
		/* the first model with data decides: one scale serves every model */
		for (int i = 0; i < n && !found; i++) {
			if (!st[i].calib)
				continue;
			found = ipu_calib_layer_input_scale(st[i].calib, st[i].g32, &act, &scale, e);
			if (found < 0)
				return -1;
		}
		if (found) {
			cf->f8.input_scale = scale;
			cf->input_scale_from_data = 1;
			if (log)
				fprintf(log, "ipu-compile: calibration: fp8 input scale %d (%s, loss %s)\n",
					scale, ipu_fp8_format_name(cf->f8.input_format),
					ipu_calib_loss_name(o->calibration_loss));
			/* and each layer its own, where its input was seen */
			for (int i = 0; i < n; i++) {
				if (!st[i].calib)
					continue;
				if (layer_scales(st[i].calib, st[i].g32, &act, &cf->scales[cf->nscales],
						 log, e)) {
					ipuc_calib_fp8_free(cf);
					return -1;
				}
				cf->nscales++;
			}
		}
	}
	if (fixed_format(cf->f8.input_format, 1, cf->f8.input_scale, &act, e) ||
	    fixed_format(cf->f8.weight_format, !cf->f8.weight_scale_auto, cf->f8.weight_scale,
			 &weight, e))
		return -1;
	for (int i = 0; i < n; i++) {
		if (!st[i].calib)
			continue;
		if (ipu_calib_rank_graph(st[i].calib, st[i].g32,
					 cf->f8.mode == IR_FP8_FULL ? &act : NULL, &weight,
					 !cf->f8.weight_scale_auto ? IPU_CALIB_WEIGHT_LOSS
					 : cf->f8.per_channel ? IPU_CALIB_WEIGHT_ABSMAX_CHANNEL
					 : IPU_CALIB_WEIGHT_ABSMAX,
					 &cf->rank[cf->nrank], e)) {
			ipuc_calib_fp8_free(cf);
			return -1;
		}
		cf->nrank++;
	}
	cf->ranked = 1;
	cf->f8.rank = rank_score;
	cf->f8.rank_ctx = cf;
	if (o->fp8_auto_skip && auto_skip(o, st, graphs, n, t, cf, &act, &weight, e)) {
		ipuc_calib_fp8_free(cf);
		return -1;
	}
	for (int i = 0; log && i < cf->nrank; i++)
		for (int k = 0; k < cf->rank[i].n; k++)
			fprintf(log, "ipu-compile: calibration: layer %s sensitivity %.4g\n",
				cf->rank[i].names[k], cf->rank[i].score[k]);
	return 0;
}

void ipuc_calib_fp8_apply(const struct ipuc_calib_fp8 *cf, struct ir_fp8_opts *f8)
{
	if (!cf->active)
		return;
	if (cf->input_scale_from_data)
		f8->input_scale = cf->f8.input_scale;
	if (cf->nscales) {
		f8->input_scale_of = layer_scale;
		f8->input_scale_ctx = (void *)cf;
	}
	if (cf->auto_skip) {
		f8->skip_names = cf->skip;
		f8->nskip = cf->nskip;
	}
	if (cf->ranked) {
		f8->rank = cf->f8.rank;
		f8->rank_ctx = cf->f8.rank_ctx;
	}
}

void ipuc_calib_fp8_free(struct ipuc_calib_fp8 *cf)
{
	for (int i = 0; i < cf->nrank; i++)
		ipu_calib_ranking_free(&cf->rank[i]);
	for (int i = 0; i < cf->nscales; i++)
		ipu_calib_ranking_free(&cf->scales[i]);
	ipu_calib_auto_skip_free(&cf->chosen);
	free(cf->skip);
	memset(cf, 0, sizeof(*cf));
}
