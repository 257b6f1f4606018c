/* SPDX-License-Identifier: MIT */
/*
 * fp8_options.c - ipu-compile's fp8 options: --fp8_skip_op_names,
 * --fp8_params, --num_of_layers_keep_fp16, turned into ir_pass_fp8's
 * options for --precision fp8 / fp8_weight.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/fp8.h"
#include "ipu/passes.h"
#include "options.h"

int ipuc_is_fp8(const char *precision)
{
	return precision && (!strcmp(precision, "fp8") || !strcmp(precision, "fp8_weight"));
}

int ipuc_add_fp8_skip(struct ipuc_options *o, const char *list,
		      struct ir_error *e)
{
	char *copy = strdup(list), *save = NULL, *tok;

	if (!copy)
		return ir_err(e, "out of memory");
	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (o->nfp8_skip == IPUC_MAX_SKIP) {
			free(copy);
			return ir_err(e, "--fp8_skip_op_names: more than %d names", IPUC_MAX_SKIP);
		}
		if (!(o->fp8_skip[o->nfp8_skip] = strdup(tok))) {
			free(copy);
			return ir_err(e, "out of memory");
		}
		o->nfp8_skip++;
	}
	free(copy);
	return 0;
}

static int scale_of(const char *s, int allow_auto, int *auto_out, int *out,
		    const char *what, struct ir_error *e)
{
	char *end;
	long x;

	if (allow_auto && !strcmp(s, "auto")) {
		*auto_out = 1;
		return 0;
	}
	errno = 0;
	x = strtol(s, &end, 10);
	if (end == s || *end || errno || x < IPU_FP8_SCALE_MIN || x > IPU_FP8_SCALE_MAX)
		return ir_err(e, "--fp8_params: %s scale '%s' is not a whole number from %d to %d%s",
			      what, s, IPU_FP8_SCALE_MIN, IPU_FP8_SCALE_MAX,
			      allow_auto ? " or auto" : "");
	if (auto_out)
		*auto_out = 0;
	*out = (int)x;
	return 0;
}

/* Parses "IN,W,INSCALE,WSCALE" (trailing fields may be left out). */
static int parse_params(const char *v, struct ir_fp8_opts *f, struct ir_error *e)
{
	char *copy = strdup(v), *field[5] = { 0 }, *p;
	int n = 0, r = -1;

	if (!copy)
		return ir_err(e, "out of memory");
	for (p = copy; n < 5; n++) {
		field[n] = p;
		p = strchr(p, ',');
		if (!p) {
			n++;
			break;
		}
		*p++ = 0;
	}
	if (n > 4 || (p && n == 5)) {
		ir_err(e, "--fp8_params '%s': at most 4 fields (input format, weight format, input scale, weight scale)", v);
		goto out;
	}
	if (n > 0 && *field[0] && ipu_fp8_format_parse(field[0], &f->input_format)) {
		ir_err(e, "--fp8_params: input format '%s' is not F143 or F152", field[0]);
		goto out;
	}
	if (n > 1 && *field[1] && ipu_fp8_format_parse(field[1], &f->weight_format)) {
		ir_err(e, "--fp8_params: weight format '%s' is not F143 or F152", field[1]);
		goto out;
	}
	if (n > 2 && *field[2] && scale_of(field[2], 0, NULL, &f->input_scale, "input", e))
		goto out;
	if (n > 3 && *field[3] &&
	    scale_of(field[3], 1, &f->weight_scale_auto, &f->weight_scale, "weight", e))
		goto out;
	r = 0;
out:
	free(copy);
	return r;
}

int ipuc_set_fp8_params(struct ipuc_options *o, const char *v,
			struct ir_error *e)
{
	struct ir_fp8_opts f;
	char *s;

	memset(&f, 0, sizeof(f));
	if (parse_params(v, &f, e))
		return -1;
	if (!(s = strdup(v)))
		return ir_err(e, "out of memory");
	free(o->fp8_params);
	o->fp8_params = s;
	return 0;
}

int ipuc_set_fp8_scale(struct ipuc_options *o, const char *v,
		       struct ir_error *e)
{
	if (!strcmp(v, "per-channel") || !strcmp(v, "per_channel"))
		o->fp8_per_tensor = 0;
	else if (!strcmp(v, "per-tensor") || !strcmp(v, "per_tensor"))
		o->fp8_per_tensor = 1;
	else
		return ir_err(e, "--fp8-scale '%s': expected per-channel or per-tensor", v);
	return 0;
}

/* The size budget of --fp8-auto-skip, as a share of the executable with
 * every layer in fp16: the top of the 0.5-0.65 that makes fp8 worth its
 * error (an executable of fp8 weights only is 0.5-0.62 of it). */
#define AUTO_SKIP_BUDGET 0.65

int ipuc_set_fp8_auto_skip(struct ipuc_options *o, const char *v, struct ir_error *e)
{
	char *end, *copy;
	double t, b = AUTO_SKIP_BUDGET;

	errno = 0;
	t = strtod(v, &end);
	if (end == v || errno || !(t >= 0 && t <= 1e6))
		return ir_err(e, "--fp8-auto-skip '%s': expected TARGET[,BUDGET], TARGET the output error to reach (a number >= 0, e.g. 0.05)", v);
	if (*end == ',') {
		const char *p = end + 1;

		errno = 0;
		b = strtod(p, &end);
		if (end == p || errno || !(b >= 0 && b <= 1))
			return ir_err(e, "--fp8-auto-skip '%s': BUDGET is the largest executable allowed, as a share of the one with every layer in fp16, from 0 to 1", v);
	}
	if (*end)
		return ir_err(e, "--fp8-auto-skip '%s': expected TARGET[,BUDGET] (e.g. 0.05 or 0.05,0.65)", v);
	if (!(copy = strdup(v)))
		return ir_err(e, "out of memory");
	free(o->fp8_auto_skip);
	o->fp8_auto_skip = copy;
	o->fp8_auto_target = t;
	o->fp8_auto_budget = b;
	return 0;
}

int ipuc_fp8_opts(const struct ipuc_options *o, const char *precision,
		  struct ir_fp8_opts *out, struct ir_error *e)
{
	memset(out, 0, sizeof(*out));
	out->input_format = IPU_FP8_143;
	out->weight_format = IPU_FP8_143;
	out->weight_scale_auto = 1;
	out->per_channel = !o->fp8_per_tensor;
	if (!ipuc_is_fp8(precision))
		return 0;
	out->mode = !strcmp(precision, "fp8") ? IR_FP8_FULL : IR_FP8_WEIGHT;
	if (o->fp8_params && parse_params(o->fp8_params, out, e))
		return -1;
	out->skip_names = (const char *const *)o->fp8_skip;
	out->nskip = o->nfp8_skip;
	out->keep_fp16 = o->keep_fp16;
	return 0;
}
