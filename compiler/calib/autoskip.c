/* SPDX-License-Identifier: MIT */
/*
 * autoskip.c - mixed precision from data: the layers that stay in float16
 * so that a model converted to a scaled 8-bit format keeps its output
 * error under a target, chosen by their effect on the model's output
 * rather than on their own output (a perturbation of an early layer is
 * amplified by every layer after it: on a random MobileNetV2 the first
 * convolution alone in fp8 costs as much output error as the last twenty).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"
#include "eval/eval.h"

struct skip_ctx {
	const struct ipu_calib *c;
	const struct ir_graph *g;
	const struct ipu_calib_format *act, *weight;
	int weight_absmax;
	const int *nodes;
	int n;
	struct ir_tensor *ref;		/* [samples * noutputs] float32 outputs */
};

static void outputs_free(struct ir_tensor *t, int n)
{
	for (int i = 0; t && i < n; i++)
		ir_tensor_free(&t[i]);
}

/* max over the float outputs of max |y - r| / max |r|, over the first ns
 * samples */
static int model_error(const struct skip_ctx *sc, const char *converted, int ns, double *err,
		       struct ir_error *e)
{
	int no = sc->g->noutputs;
	struct ir_tensor *y = calloc((size_t)no + 1, sizeof(*y));
	double *num = calloc((size_t)no + 1, sizeof(double));
	double *den = calloc((size_t)no + 1, sizeof(double));
	int r = -1;

	if (!y || !num || !den) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int s = 0; s < ns; s++) {
		if (ipu_calib_eval_converted(sc->c, sc->g, sc->nodes, sc->n, converted, sc->act,
					     sc->weight, sc->weight_absmax, s, y, e))
			goto out;
		for (int k = 0; k < no; k++) {
			const struct ir_tensor *ref = &sc->ref[s * no + k];
			int64_t cnt = ir_numel(ref->rank, ref->dims);

			if (!ir_dtype_is_float(ref->dtype))
				continue;
			for (int64_t i = 0; i < cnt; i++) {
				double a = ir_get_f(ref->data, ref->dtype, (size_t)i);
				double b = ir_get_f(y[k].data, y[k].dtype, (size_t)i);

				if (!isfinite(a))
					continue;
				num[k] = fmax(num[k], isfinite(b) ? fabs(b - a) : INFINITY);
				den[k] = fmax(den[k], fabs(a));
			}
		}
		outputs_free(y, no);
		memset(y, 0, sizeof(*y) * (size_t)no);
	}
	*err = 0;
	for (int k = 0; k < no; k++)
		if (num[k] > 0)
			*err = fmax(*err, den[k] > 0 ? num[k] / den[k] : INFINITY);
	r = 0;
out:
	outputs_free(y, no);
	free(y);
	free(num);
	free(den);
	return r;
}

void ipu_calib_auto_skip_free(struct ipu_calib_auto_skip *a)
{
	for (int i = 0; a->names && i < a->n; i++)
		free(a->names[i]);
	free(a->names);
	free(a->alone);
	free(a->cost);
	memset(a, 0, sizeof(*a));
}

/* converted[] for "the first k of order[] stay in float16" */
static void keep_prefix(char *converted, const int *order, int n, int k)
{
	for (int i = 0; i < n; i++)
		converted[order[i]] = i >= k;
}

/* The size with the first k of order[] kept (HUGE_VAL: cannot be built). */
static int prefix_size(const struct ir_graph *g, const int *nodes, const int *order, int k,
		       ipu_calib_size_fn size, void *ctx, const char **names, double *bytes,
		       struct ir_error *e)
{
	int r;

	for (int i = 0; i < k; i++)
		names[i] = g->nodes[nodes[order[i]]].name;
	r = size(ctx, names, k, bytes, e);
	if (r > 0)
		*bytes = HUGE_VAL;
	return r < 0 ? -1 : 0;
}

int ipu_calib_choose_auto_skip(const struct ipu_calib *c, const struct ir_graph *g,
			       const struct ipu_calib_format *act,
			       const struct ipu_calib_format *weight, int weight_absmax,
			       double target, double budget, ipu_calib_size_fn size,
			       void *size_ctx, struct ipu_calib_auto_skip *out,
			       struct ir_error *e)
{
	struct skip_ctx sc = { c, g, act, weight, weight_absmax, NULL, 0, NULL };
	int no = g->noutputs, ns = c->samples.n, n = 0, r = -1, lo, hi, kmax;
	int *nodes = calloc((size_t)g->nnodes + 1, sizeof(int));
	int *order = calloc((size_t)g->nnodes + 1, sizeof(int));
	double *alone = calloc((size_t)g->nnodes + 1, sizeof(double));
	double *cost = calloc((size_t)g->nnodes + 1, sizeof(double));
	double *gain = calloc((size_t)g->nnodes + 1, sizeof(double));
	const char **names = calloc((size_t)g->nnodes + 1, sizeof(*names));
	char *converted = calloc((size_t)g->nnodes + 1, 1);
	double err, bytes, limit;

	memset(out, 0, sizeof(*out));
	sc.ref = calloc((size_t)(ns * no) + 1, sizeof(*sc.ref));
	if (!nodes || !order || !alone || !cost || !gain || !names || !converted || !sc.ref) {
		ir_err(e, "out of memory");
		goto out;
	}
	if (!(target >= 0) || !(budget >= 0 && budget <= 1)) {
		ir_err(e, "fp8 auto skip: target %g must be >= 0 and budget %g within 0..1",
		       target, budget);
		goto out;
	}
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *nd = &g->nodes[i];

		if (ipu_calib_layer_activation(g, i) >= 0 && nd->name && nd->name[0])
			nodes[n++] = i;
	}
	sc.nodes = nodes;
	sc.n = n;
	for (int i = 0; i < n; i++)
		order[i] = i;
	if (prefix_size(g, nodes, order, 0, size, size_ctx, names, &out->size_all, e) ||
	    prefix_size(g, nodes, order, n, size, size_ctx, names, &out->size_none, e))
		goto out;
	if (!isfinite(out->size_all) || !isfinite(out->size_none)) {
		ir_err(e, "fp8 auto skip: the model does not build %s",
		       isfinite(out->size_all) ? "with every layer in fp16" : "with every layer in fp8");
		goto out;
	}
	limit = budget * out->size_none;
	for (int s = 0; s < ns; s++)
		if (ir_eval_graph(g, &c->samples.in[s * c->samples.ninputs], &sc.ref[s * no], e))
			goto out;
	/* each layer alone: the error it costs converted (on the first sample:
	 * it only orders the layers, and a model evaluation per layer and
	 * sample is most of the search's time), the bytes it costs kept */
	for (int i = 0; i < n; i++) {
		memset(converted, 0, (size_t)n);
		converted[i] = 1;
		if (model_error(&sc, converted, 1, &alone[i], e))
			goto out;
		names[0] = g->nodes[nodes[i]].name;
		if (size(size_ctx, names, 1, &bytes, e) < 0)
			goto out;
		cost[i] = bytes - out->size_all;
		gain[i] = cost[i] > 0 ? alone[i] * alone[i] / cost[i] : HUGE_VAL;
	}
	/* stable, the most error bought back per byte first */
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i;

		while (j > 0 && gain[order[j - 1]] < gain[x]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	/* the longest prefix within the budget: bisection on the size */
	lo = 0;
	hi = n + 1;
	if (out->size_all > limit)
		hi = 1;
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;

		if (prefix_size(g, nodes, order, mid, size, size_ctx, names, &bytes, e))
			goto out;
		if (bytes <= limit)
			lo = mid;
		else
			hi = mid;
	}
	kmax = lo;
	keep_prefix(converted, order, n, 0);
	if (model_error(&sc, converted, ns, &out->error_all, e))
		goto out;
	/* the shortest prefix that meets the target: bisection between a
	 * prefix known to miss it (lo) and one known to meet it or the
	 * longest the budget allows (hi) */
	out->nkeep = 0;
	out->error = out->error_all;
	if (out->error_all > target && kmax > 0) {
		keep_prefix(converted, order, n, kmax);
		if (model_error(&sc, converted, ns, &err, e))
			goto out;
		out->nkeep = kmax;
		out->error = err;
		lo = 0;
		hi = kmax;
		while (err <= target && hi - lo > 1) {
			int mid = lo + (hi - lo) / 2;
			double em;

			keep_prefix(converted, order, n, mid);
			if (model_error(&sc, converted, ns, &em, e))
				goto out;
			if (em <= target) {
				hi = mid;
				out->nkeep = mid;
				out->error = em;
			} else {
				lo = mid;
			}
		}
	}
	if (prefix_size(g, nodes, order, out->nkeep, size, size_ctx, names, &out->size, e))
		goto out;
	out->met = out->error <= target;
	out->names = calloc((size_t)n + 1, sizeof(char *));
	out->alone = calloc((size_t)n + 1, sizeof(double));
	out->cost = calloc((size_t)n + 1, sizeof(double));
	if (!out->names || !out->alone || !out->cost) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (!(out->names[i] = strdup(g->nodes[nodes[order[i]]].name))) {
			ir_err(e, "out of memory");
			goto out;
		}
		out->n++;
		out->alone[i] = alone[order[i]];
		out->cost[i] = cost[order[i]];
	}
	r = 0;
out:
	if (r)
		ipu_calib_auto_skip_free(out);
	if (sc.ref)
		outputs_free(sc.ref, ns * no);
	free(sc.ref);
	free(nodes);
	free(order);
	free(alone);
	free(cost);
	free(gain);
	free(names);
	free(converted);
	return r;
}
