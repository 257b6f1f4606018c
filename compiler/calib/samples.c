/* SPDX-License-Identifier: MIT */
/* samples.c - graph inputs for calibration runs: from an .npz, random, converted. */
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"

void ipu_calib_samples_free(struct ipu_calib_samples *s)
{
	for (int i = 0; s->in && i < s->n * s->ninputs; i++)
		ir_tensor_free(&s->in[i]);
	free(s->in);
	memset(s, 0, sizeof(*s));
}

static int samples_alloc(struct ipu_calib_samples *s, int n, int ninputs, struct ir_error *e)
{
	memset(s, 0, sizeof(*s));
	s->in = calloc((size_t)n * (size_t)ninputs + 1, sizeof(*s->in));
	if (!s->in)
		return ir_err(e, "out of memory");
	s->n = n;
	s->ninputs = ninputs;
	return 0;
}

static void shape_str(int rank, const int64_t *dims, char *buf, size_t len)
{
	size_t o = 0;

	o += (size_t)snprintf(buf, len, "[");
	for (int k = 0; k < rank && o < len; k++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", k ? ", " : "", (long long)dims[k]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/* Samples in array a for input v: 1 if a has v's shape, N if [N, shape],
 * 0 if neither. */
static int64_t sample_count(const struct ir_tensor *a, const struct ir_value *v)
{
	if (a->rank == v->rank && !memcmp(a->dims, v->dims, (size_t)v->rank * sizeof(int64_t)))
		return 1;
	if (a->rank == v->rank + 1 && v->rank < IR_MAX_RANK &&
	    !memcmp(a->dims + 1, v->dims, (size_t)v->rank * sizeof(int64_t)))
		return a->dims[0];
	return 0;
}

int ipu_calib_samples_from_npz(const struct ipu_npz *z, const struct ir_graph *g,
			       int max_samples, struct ipu_calib_samples *s,
			       struct ir_error *e)
{
	int *which = calloc((size_t)g->ninputs + 1, sizeof(*which));
	int64_t n = -1;
	char have[256], want[256];

	memset(s, 0, sizeof(*s));
	if (!which)
		return ir_err(e, "out of memory");
	for (int k = 0; k < z->n; k++) {
		int found = 0;

		for (int i = 0; i < g->ninputs; i++)
			found |= !strcmp(g->vals[g->inputs[i]].name, z->names[k]);
		if (!found) {
			free(which);
			return ir_err(e, "calibration data: array '%.200s' is not an input of the model (inputs: %s%s)",
				      z->names[k], g->ninputs ? g->vals[g->inputs[0]].name : "none",
				      g->ninputs > 1 ? ", ..." : "");
		}
	}
	for (int i = 0; i < g->ninputs; i++) {
		const struct ir_value *v = &g->vals[g->inputs[i]];
		int64_t c;
		int k;

		for (k = 0; k < z->n && strcmp(z->names[k], v->name); k++)
			;
		if (k == z->n) {
			free(which);
			return ir_err(e, "calibration data has no array for input '%.200s' (save it with np.savez(file, **{'%.200s': array}))",
				      v->name, v->name);
		}
		which[i] = k;
		shape_str(z->arrays[k].rank, z->arrays[k].dims, have, sizeof(have));
		shape_str(v->rank, v->dims, want, sizeof(want));
		if (z->arrays[k].dtype != v->dtype) {
			free(which);
			return ir_err(e, "calibration data: array '%.200s' is %s but the input is %s (convert it with .astype before np.savez)",
				      v->name, ir_dtype_name(z->arrays[k].dtype), ir_dtype_name(v->dtype));
		}
		c = sample_count(&z->arrays[k], v);
		if (c <= 0) {
			free(which);
			return ir_err(e, "calibration data: array '%.200s' has shape %s; input '%.200s' needs %s (one sample) or [N, ...] of it (N samples)",
				      v->name, have, v->name, want);
		}
		if (n >= 0 && n != c) {
			free(which);
			return ir_err(e, "calibration data: arrays give different sample counts (%lld and %lld); every input needs the same N",
				      (long long)n, (long long)c);
		}
		n = c;
	}
	if (n < 0)
		n = 1; /* a graph without inputs runs once */
	if (max_samples > 0 && n > max_samples)
		n = max_samples;
	if (n > INT32_MAX / (g->ninputs + 1)) {
		free(which);
		return ir_err(e, "calibration data: %lld samples are too many", (long long)n);
	}
	if (samples_alloc(s, (int)n, g->ninputs, e)) {
		free(which);
		return -1;
	}
	for (int smp = 0; smp < s->n; smp++)
		for (int i = 0; i < g->ninputs; i++) {
			const struct ir_value *v = &g->vals[g->inputs[i]];
			const struct ir_tensor *a = &z->arrays[which[i]];
			struct ir_tensor *t = &s->in[smp * s->ninputs + i];
			size_t bytes;

			if (ir_tensor_alloc(t, v->dtype, v->rank, v->dims, e)) {
				ipu_calib_samples_free(s);
				free(which);
				return -1;
			}
			bytes = ir_tensor_bytes(t);
			memcpy(t->data, (const char *)a->data + (a->rank == v->rank ? 0 : (size_t)smp * bytes),
			       bytes);
		}
	free(which);
	return 0;
}

int ipu_calib_samples_random(const struct ir_graph *g, int n, uint64_t seed,
			     struct ipu_calib_samples *s, struct ir_error *e)
{
	if (n < 1)
		return ir_err(e, "at least one random sample is needed");
	if (samples_alloc(s, n, g->ninputs, e))
		return -1;
	for (int smp = 0; smp < n; smp++)
		for (int i = 0; i < g->ninputs; i++) {
			const struct ir_value *v = &g->vals[g->inputs[i]];
			struct ir_tensor *t = &s->in[smp * s->ninputs + i];
			int64_t cnt;

			if (ir_tensor_alloc(t, v->dtype, v->rank, v->dims, e)) {
				ipu_calib_samples_free(s);
				return -1;
			}
			cnt = ir_numel(t->rank, t->dims);
			for (int64_t k = 0; k < cnt; k++) {
				uint64_t r;

				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				r = seed >> 33;
				if (ir_dtype_is_float(t->dtype))
					ir_set_f(t->data, t->dtype, (size_t)k, (double)(r % 20001) / 10000.0 - 1.0);
				else
					ir_set_i(t->data, t->dtype, (size_t)k,
						 (int64_t)(r % (t->dtype == IR_BOOL ? 2 : 3)));
			}
		}
	return 0;
}

int ipu_calib_samples_convert(const struct ipu_calib_samples *src, const struct ir_graph *g,
			      struct ipu_calib_samples *dst, struct ir_error *e)
{
	if (src->ninputs != g->ninputs)
		return ir_err(e, "the samples have %d inputs, the graph %d", src->ninputs, g->ninputs);
	if (samples_alloc(dst, src->n, src->ninputs, e))
		return -1;
	for (int k = 0; k < src->n * src->ninputs; k++) {
		const struct ir_value *v = &g->vals[g->inputs[k % src->ninputs]];
		const struct ir_tensor *a = &src->in[k];
		struct ir_tensor *t = &dst->in[k];
		int64_t cnt = ir_numel(a->rank, a->dims);

		if (ir_numel(v->rank, v->dims) != cnt) {
			ipu_calib_samples_free(dst);
			return ir_err(e, "input '%.200s' changed size in the precision conversion", v->name);
		}
		if (ir_tensor_alloc(t, v->dtype, v->rank, v->dims, e)) {
			ipu_calib_samples_free(dst);
			return -1;
		}
		for (int64_t i = 0; i < cnt; i++) {
			if (ir_dtype_is_float(v->dtype) || ir_dtype_is_float(a->dtype))
				ir_set_f(t->data, v->dtype, (size_t)i, ir_get_f(a->data, a->dtype, (size_t)i));
			else
				ir_set_i(t->data, v->dtype, (size_t)i, ir_get_i(a->data, a->dtype, (size_t)i));
		}
	}
	return 0;
}
