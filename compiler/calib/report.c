/* SPDX-License-Identifier: MIT */
/* report.c - the precision report as a table and as JSON. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"
#include "ipu/file_atomic.h"

/* Names come from the model: control bytes must not reach the terminal. */
static void safe(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 1 < len; s++)
		buf[o++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	buf[o] = 0;
}

static void num(FILE *f, double v)
{
	if (isinf(v))
		fprintf(f, " %11s", v > 0 ? "inf" : "-inf");
	else
		fprintf(f, " %11.4g", v);
}

void ipu_calib_report_print(const struct ipu_calib_report *r, FILE *f)
{
	int w = 5;
	char name[256];

	for (int i = 0; i < r->n; i++) {
		int len = (int)strlen(r->l[i].node);

		if (len > w)
			w = len > 48 ? 48 : len;
	}
	fprintf(f, "precision comparison: %s against float32, %d %s sample%s\n",
		r->precision, r->samples, r->from_data ? "calibration" : "random (seeded)",
		r->samples == 1 ? "" : "s");
	fprintf(f, "%-*s %-18s %-8s %11s %11s %11s %11s\n", w, "layer", "op", "dtype",
		"max_abs_err", "rel_err", "cos_dist", "snr_db");
	for (int i = 0; i < r->n; i++) {
		const struct ipu_calib_layer *l = &r->l[i];

		safe(l->node, name, sizeof(name));
		fprintf(f, "%-*.*s %-18.18s %-8.8s", w, w, name, l->op, l->dtype);
		num(f, l->max_abs_err);
		num(f, l->rel_err);
		num(f, l->cos_dist);
		num(f, l->snr_db);
		if (l->nonfinite)
			fprintf(f, "  (%llu non-finite)", (unsigned long long)l->nonfinite);
		fputc('\n', f);
	}
}

/* JSON has no infinity: null stands for "no error" (snr) or "undefined". */
static json_t *real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int ipu_calib_report_write_json(const struct ipu_calib_report *r, const char *path,
				struct ir_error *e)
{
	json_t *root = json_object(), *layers = json_array();
	char *text = NULL, err[256];
	int rc = -1;

	if (!root || !layers)
		goto oom;
	if (json_object_set_new(root, "precision", json_string(r->precision)) ||
	    json_object_set_new(root, "reference", json_string("fp32")) ||
	    json_object_set_new(root, "samples", json_integer(r->samples)) ||
	    json_object_set_new(root, "data", json_string(r->from_data ? "calibration" : "random")))
		goto oom;
	for (int i = 0; i < r->n; i++) {
		const struct ipu_calib_layer *l = &r->l[i];
		json_t *o = json_pack("{s:s%, s:s%, s:s%, s:s%, s:I, s:o, s:o, s:o, s:o, s:o, s:I}",
				      "name", l->node, strlen(l->node), "op", l->op, strlen(l->op),
				      "output", l->value, strlen(l->value), "dtype", l->dtype,
				      strlen(l->dtype), "elements", (json_int_t)l->count,
				      "max_abs_err", real(l->max_abs_err),
				      "max_abs_ref", real(l->max_abs_ref),
				      "rel_err", real(l->rel_err), "cos_dist", real(l->cos_dist),
				      "snr_db", real(l->snr_db), "nonfinite", (json_int_t)l->nonfinite);

		if (!o || json_array_append_new(layers, o))
			goto oom;
	}
	if (json_object_set(root, "layers", layers))
		goto oom;
	text = json_dumps(root, JSON_INDENT(1) | JSON_ENSURE_ASCII);
	if (!text)
		goto oom;
	if (ipurt_write_file_atomic(path, text, strlen(text), err, sizeof(err))) {
		ir_err(e, "cannot write the precision report %s: %s", path, err);
		goto out;
	}
	rc = 0;
	goto out;
oom:
	ir_err(e, "out of memory writing the precision report");
out:
	free(text);
	json_decref(layers);
	json_decref(root);
	return rc;
}
