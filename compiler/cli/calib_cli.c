/* SPDX-License-Identifier: MIT */
/* calib_cli.c - --calibration-with-data and --precision-compare in ipu-compile. */
#include <stdlib.h>
#include <string.h>

#include "calib_cli.h"
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

int ipuc_calib_prepare(const struct ipuc_options *o, const char *path,
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
	if (!(st->g32 = onnx_load_file(path, e)))
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
		      const char *cfgdir, FILE *f, struct ir_error *e)
{
	struct ipu_calib_report rep;
	const struct ipu_calib_samples *s = st->calib ? &st->calib->samples : &st->samples;
	int r = 0;

	if (ipu_calib_compare(st->g32, g, s, st->calib != NULL, precision, &rep, e))
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
