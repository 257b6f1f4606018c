/* SPDX-License-Identifier: MIT */
/*
 * collect.c - statistics of every float tensor over the calibration runs,
 * the data-driven activation scale, and the per-layer sensitivity ranking.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"
#include "eval/eval.h"
#include "ops/registry.h"

void ipu_calib_free(struct ipu_calib *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		free(c->t[i].name);
	free(c->t);
	ipu_calib_samples_free(&c->samples);
	free(c);
}

const struct ipu_calib_tensor *ipu_calib_find(const struct ipu_calib *c, const char *value)
{
	for (int i = 0; c && i < c->n; i++)
		if (!strcmp(c->t[i].name, value))
			return &c->t[i];
	return NULL;
}

struct collect_ctx {
	struct ipu_calib *c;
	const int *slot;	/* value -> tensor index, -1: not collected */
};

static int collect_visit(void *ctx, const struct ir_graph *g, int node,
			 const struct ir_tensor *const *in, struct ir_tensor *out,
			 struct ir_error *e)
{
	struct collect_ctx *cc = ctx;
	const struct ir_node *n = &g->nodes[node];

	(void)in;
	(void)e;
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0 && cc->slot[n->out[k]] >= 0)
			ipu_calib_hist_add(&cc->c->t[cc->slot[n->out[k]]].hist, &out[k]);
	return 0;
}

static int add_tensor(struct ipu_calib *c, int *slot, const struct ir_graph *g, int v,
		      struct ir_error *e)
{
	if (v < 0 || slot[v] >= 0 || g->vals[v].data || !ir_dtype_is_float(g->vals[v].dtype))
		return 0;
	if (!(c->t[c->n].name = strdup(g->vals[v].name)))
		return ir_err(e, "out of memory");
	ipu_calib_hist_init(&c->t[c->n].hist);
	slot[v] = c->n++;
	return 0;
}

struct ipu_calib *ipu_calib_collect(const struct ir_graph *g, struct ipu_calib_samples *s,
				    int from_data, int loss, struct ir_error *e)
{
	struct ipu_calib *c = calloc(1, sizeof(*c));
	int *slot = malloc((size_t)(g->nvals + 1) * sizeof(int));
	struct collect_ctx cc;

	if (!c || !slot || !(c->t = calloc((size_t)g->nvals + 1, sizeof(*c->t)))) {
		free(c);
		free(slot);
		ir_err(e, "out of memory");
		return NULL;
	}
	c->samples = *s;
	memset(s, 0, sizeof(*s));
	c->loss = loss;
	c->from_data = from_data;
	for (int v = 0; v < g->nvals; v++)
		slot[v] = -1;
	for (int i = 0; i < g->ninputs; i++)
		if (add_tensor(c, slot, g, g->inputs[i], e))
			goto fail;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].nout; k++)
			if (add_tensor(c, slot, g, g->nodes[i].out[k], e))
				goto fail;
	cc.c = c;
	cc.slot = slot;
	for (int smp = 0; smp < c->samples.n; smp++) {
		const struct ir_tensor *in = &c->samples.in[smp * c->samples.ninputs];

		for (int i = 0; i < g->ninputs; i++)
			if (slot[g->inputs[i]] >= 0)
				ipu_calib_hist_add(&c->t[slot[g->inputs[i]]].hist, &in[i]);
		if (ir_eval_graph_visit(g, in, NULL, collect_visit, &cc, e)) {
			char msg[IR_ERROR_LEN];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			ir_err(e, "calibration run %d: %s", smp, msg);
			goto fail;
		}
	}
	free(slot);
	return c;
fail:
	free(slot);
	ipu_calib_free(c);
	return NULL;
}

int ipu_calib_activation_scale(const struct ipu_calib *c, const char *value,
			       const struct ipu_calib_format *f, int *scale,
			       struct ir_error *e)
{
	const struct ipu_calib_tensor *t = ipu_calib_find(c, value);

	if (!t)
		return 0;
	if (ipu_calib_choose_scale(&t->hist, f, c->loss, scale, NULL, e))
		return -1;
	return 1;
}

/* ---- layers ------------------------------------------------------------ */

static int constant(const struct ir_graph *g, int v, int rank)
{
	return v >= 0 && g->vals[v].data && g->vals[v].rank == rank &&
	       ir_dtype_is_float(g->vals[v].dtype);
}

static int computed(const struct ir_graph *g, int v)
{
	return v >= 0 && !g->vals[v].data && ir_dtype_is_float(g->vals[v].dtype);
}

int ipu_calib_layer_activation(const struct ir_graph *g, int node)
{
	const struct ir_node *n = &g->nodes[node];

	if (n->dead || n->nin < 2)
		return -1;
	if (n->opid == IR_OP_Conv)
		return constant(g, n->in[1], 4) && computed(g, n->in[0]) ? 0 : -1;
	if (n->opid == IR_OP_Gemm)
		return constant(g, n->in[1], 2) && computed(g, n->in[0]) ? 0 : -1;
	if (n->opid != IR_OP_MatMul)
		return -1;
	if (constant(g, n->in[1], 2) && computed(g, n->in[0]))
		return 0;
	if (constant(g, n->in[0], 2) && computed(g, n->in[1]))
		return 1;
	return -1;
}

int ipu_calib_layer_input_scale(const struct ipu_calib *c, const struct ir_graph *g,
				const struct ipu_calib_format *f, int *scale,
				struct ir_error *e)
{
	struct ipu_calib_hist *sum = malloc(sizeof(*sum));
	char *seen = calloc((size_t)g->nvals + 1, 1);
	int found = 0, r;

	if (!sum || !seen) {
		free(sum);
		free(seen);
		return ir_err(e, "out of memory");
	}
	ipu_calib_hist_init(sum);
	for (int i = 0; i < g->nnodes; i++) {
		int k = ipu_calib_layer_activation(g, i), v;
		const struct ipu_calib_tensor *t;

		if (k < 0)
			continue;
		v = g->nodes[i].in[k];
		/* a tensor read by several layers counts once */
		if (seen[v] || !(t = ipu_calib_find(c, g->vals[v].name)))
			continue;
		seen[v] = 1;
		found = 1;
		if (t->hist.absmax > sum->absmax)
			sum->absmax = t->hist.absmax;
		sum->count += t->hist.count;
		sum->zeros += t->hist.zeros;
		sum->nonfinite += t->hist.nonfinite;
		for (int b = 0; b < IPU_CALIB_HIST_BINS; b++)
			sum->bins[b] += t->hist.bins[b];
	}
	r = found ? ipu_calib_choose_scale(sum, f, c->loss, scale, NULL, e) : 0;
	free(sum);
	free(seen);
	if (r)
		return -1;
	return found;
}

/* ---- sensitivity ranking --------------------------------------------- */

struct rank_ctx {
	const struct ipu_calib *c;
	const struct ipu_calib_format *act, *weight;
	int weight_absmax;
	const int *cand;	/* node -> index into nodes[], or -1 */
	int **scale;		/* [candidate][input] */
	char **known;
	double *noise, *signal;
	/* NULL: every candidate is measured; else only those set, whose
	 * converted outputs then replace the float ones, so that the layers
	 * after them read what the converted layer computes */
	const char *subst;
};

/* The scale of input k of node n: weights by their own values,
 * activations by the calibration statistics (or, for a value the
 * calibration did not see, by this sample). */
static int input_scale(struct rank_ctx *rc, int ci, const struct ir_graph *g,
		       const struct ir_node *n, int k, const struct ir_tensor *t,
		       int *scale, struct ir_error *e)
{
	const struct ir_value *v = &g->vals[n->in[k]];
	const struct ipu_calib_format *f = v->data ? rc->weight : rc->act;
	const struct ipu_calib_tensor *ct = v->data ? NULL : ipu_calib_find(rc->c, v->name);
	struct ipu_calib_hist *h;
	int r;

	if (rc->known[ci][k]) {
		*scale = rc->scale[ci][k];
		return 0;
	}
	if (ct) {
		r = ipu_calib_choose_scale(&ct->hist, f, rc->c->loss, scale, NULL, e);
	} else if (v->data && rc->weight_absmax && f->scale_for_absmax) {
		double m = 0;

		for (int64_t i = 0; i < ir_numel(t->rank, t->dims); i++) {
			double a = fabs(ir_get_f(t->data, t->dtype, (size_t)i));

			if (a > m)
				m = a;
		}
		*scale = f->scale_for_absmax(f->ctx, m);
		r = 0;
	} else {
		if (!(h = malloc(sizeof(*h))))
			return ir_err(e, "out of memory");
		ipu_calib_hist_init(h);
		ipu_calib_hist_add(h, t);
		r = ipu_calib_choose_scale(h, f, rc->c->loss, scale, NULL, e);
		free(h);
	}
	if (r)
		return -1;
	rc->scale[ci][k] = *scale;
	rc->known[ci][k] = 1;
	return 0;
}

/*
 * The output-channel axis of weight input k of layer n (the fp8 pass's
 * channels: a Conv's Cout, a MatMul's or Gemm's output features), or -1.
 */
static int channel_axis(const struct ir_node *n, int k, const struct ir_tensor *t)
{
	if (n->opid == IR_OP_Conv)
		return k == 1 ? 0 : -1;
	if (t->rank != 2)
		return -1;
	if (n->opid == IR_OP_Gemm)
		return k == 1 ? (ir_attr_int(n, "transB", 0) ? 0 : 1)
			      : (ir_attr_int(n, "transA", 0) ? 1 : 0);
	if (n->opid == IR_OP_MatMul)
		return k == 1 ? 1 : 0;
	return -1;
}

/* q = t stored in f, each output channel at the scale of its absmax. */
static int quantize_channels(const struct ipu_calib_format *f, int axis,
			     const struct ir_tensor *t, struct ir_tensor *q,
			     struct ir_error *e)
{
	int64_t nch = t->dims[axis], inner = 1, cnt = ir_numel(t->rank, t->dims);
	double *m;

	for (int d = axis + 1; d < t->rank; d++)
		inner *= t->dims[d];
	if (!(m = calloc((size_t)(nch > 0 ? nch : 1), sizeof(*m))))
		return ir_err(e, "out of memory");
	for (int64_t i = 0; i < cnt; i++) {
		double a = fabs(ir_get_f(t->data, t->dtype, (size_t)i));
		int64_t c = (i / inner) % nch;

		if (a > m[c])
			m[c] = a;
	}
	for (int64_t i = 0; i < cnt; i++) {
		int64_t c = (i / inner) % nch;

		ir_set_f(q->data, q->dtype, (size_t)i,
			 f->quantize(f->ctx, f->scale_for_absmax(f->ctx, m[c]),
				     ir_get_f(t->data, t->dtype, (size_t)i)));
	}
	free(m);
	return 0;
}

static int rank_visit(void *ctx, const struct ir_graph *g, int node,
		      const struct ir_tensor *const *in, struct ir_tensor *out,
		      struct ir_error *e)
{
	struct rank_ctx *rc = ctx;
	const struct ir_node *n = &g->nodes[node];
	int ci = rc->cand[node], r = -1;
	const struct ir_tensor *qin[1024];
	struct ir_tensor qt[1024], qout[64];

	if (ci < 0 || n->nin > 1024 || n->nout > 64 || (rc->subst && !rc->subst[ci]))
		return 0;
	memset(qt, 0, sizeof(qt[0]) * (size_t)n->nin);
	for (int k = 0; k < n->nin; k++) {
		const struct ir_value *v;
		const struct ipu_calib_format *f;
		int64_t cnt;
		int s;

		qin[k] = in[k];
		if (!in[k] || !ir_dtype_is_float(in[k]->dtype))
			continue;
		v = &g->vals[n->in[k]];
		f = v->data ? rc->weight : rc->act;
		if (!f)
			continue;
		if (v->data && rc->weight_absmax == IPU_CALIB_WEIGHT_ABSMAX_CHANNEL &&
		    f->scale_for_absmax && channel_axis(n, k, in[k]) >= 0) {
			if (ir_tensor_alloc(&qt[k], in[k]->dtype, in[k]->rank, in[k]->dims, e) ||
			    quantize_channels(f, channel_axis(n, k, in[k]), in[k], &qt[k], e))
				goto out;
			qin[k] = &qt[k];
			continue;
		}
		if (input_scale(rc, ci, g, n, k, in[k], &s, e) ||
		    ir_tensor_alloc(&qt[k], in[k]->dtype, in[k]->rank, in[k]->dims, e))
			goto out;
		cnt = ir_numel(in[k]->rank, in[k]->dims);
		for (int64_t i = 0; i < cnt; i++)
			ir_set_f(qt[k].data, qt[k].dtype, (size_t)i,
				 f->quantize(f->ctx, s, ir_get_f(in[k]->data, in[k]->dtype, (size_t)i)));
		qin[k] = &qt[k];
	}
	for (int k = 0; k < n->nout; k++) {
		memset(&qout[k], 0, sizeof(qout[k]));
		qout[k].dtype = out[k].dtype;
		qout[k].rank = out[k].rank;
		memcpy(qout[k].dims, out[k].dims, sizeof(out[k].dims));
	}
	if (ir_eval_node(g, n, qin, qout, e))
		goto out;
	if (ir_dtype_is_float(out[0].dtype)) {
		int64_t cnt = ir_numel(out[0].rank, out[0].dims);

		for (int64_t i = 0; i < cnt; i++) {
			double y = ir_get_f(out[0].data, out[0].dtype, (size_t)i);
			double q = ir_get_f(qout[0].data, qout[0].dtype, (size_t)i);

			if (!isfinite(y))
				continue;
			rc->signal[ci] += y * y;
			rc->noise[ci] += isfinite(q) ? (q - y) * (q - y) : INFINITY;
		}
	}
	for (int k = 0; rc->subst && k < n->nout; k++)
		memcpy(out[k].data, qout[k].data, ir_tensor_bytes(&out[k]));
	for (int k = 0; k < n->nout; k++)
		ir_tensor_free(&qout[k]);
	r = 0;
out:
	for (int k = 0; k < n->nin; k++)
		ir_tensor_free(&qt[k]);
	return r;
}

static void rank_ctx_free(struct rank_ctx *rc, int n)
{
	for (int i = 0; rc->scale && rc->known && i < n; i++) {
		free(rc->scale[i]);
		free(rc->known[i]);
	}
	free(rc->scale);
	free(rc->known);
	free(rc->noise);
	free(rc->signal);
	free((void *)rc->cand);
	memset(rc, 0, sizeof(*rc));
}

static int rank_ctx_init(struct rank_ctx *rc, const struct ipu_calib *c, const struct ir_graph *g,
			 const int *nodes, int n, const struct ipu_calib_format *act,
			 const struct ipu_calib_format *weight, int weight_absmax,
			 struct ir_error *e)
{
	int *cand = malloc((size_t)(g->nnodes + 1) * sizeof(int));

	memset(rc, 0, sizeof(*rc));
	rc->c = c;
	rc->act = act;
	rc->weight = weight;
	rc->weight_absmax = weight_absmax;
	rc->cand = cand;
	rc->scale = calloc((size_t)n + 1, sizeof(int *));
	rc->known = calloc((size_t)n + 1, sizeof(char *));
	rc->noise = calloc((size_t)n + 1, sizeof(double));
	rc->signal = calloc((size_t)n + 1, sizeof(double));
	if (!cand || !rc->scale || !rc->known || !rc->noise || !rc->signal)
		goto oom;
	for (int i = 0; i < g->nnodes; i++)
		cand[i] = -1;
	for (int i = 0; i < n; i++) {
		if (nodes[i] < 0 || nodes[i] >= g->nnodes) {
			ir_err(e, "sensitivity ranking: node %d is not in the graph", nodes[i]);
			goto fail;
		}
		cand[nodes[i]] = i;
		rc->scale[i] = calloc((size_t)g->nodes[nodes[i]].nin + 1, sizeof(int));
		rc->known[i] = calloc((size_t)g->nodes[nodes[i]].nin + 1, 1);
		if (!rc->scale[i] || !rc->known[i])
			goto oom;
	}
	return 0;
oom:
	ir_err(e, "out of memory");
fail:
	rank_ctx_free(rc, n);
	return -1;
}

int ipu_calib_rank_layers(const struct ipu_calib *c, const struct ir_graph *g,
			  const int *nodes, int n, const struct ipu_calib_format *act,
			  const struct ipu_calib_format *weight, int weight_absmax,
			  int *order, double *score, struct ir_error *e)
{
	struct rank_ctx rc;
	double *ratio = calloc((size_t)n + 1, sizeof(double));
	int r = -1;

	if (!ratio)
		return ir_err(e, "out of memory");
	if (rank_ctx_init(&rc, c, g, nodes, n, act, weight, weight_absmax, e)) {
		free(ratio);
		return -1;
	}
	for (int smp = 0; smp < c->samples.n; smp++)
		if (ir_eval_graph_visit(g, &c->samples.in[smp * c->samples.ninputs], NULL,
					rank_visit, &rc, e))
			goto out;
	for (int i = 0; i < n; i++) {
		ratio[i] = rc.noise[i] == 0 ? 0 : rc.signal[i] > 0 ? rc.noise[i] / rc.signal[i] : INFINITY;
		order[i] = i;
		if (score)
			score[i] = ratio[i];
	}
	/* stable, most sensitive first: equal scores keep the caller's order */
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i;

		while (j > 0 && ratio[order[j - 1]] < ratio[x]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	r = 0;
out:
	rank_ctx_free(&rc, n);
	free(ratio);
	return r;
}

int ipu_calib_eval_converted(const struct ipu_calib *c, const struct ir_graph *g,
			     const int *nodes, int n, const char *converted,
			     const struct ipu_calib_format *act,
			     const struct ipu_calib_format *weight, int weight_absmax,
			     int sample, struct ir_tensor *outputs, struct ir_error *e)
{
	struct rank_ctx rc;
	int r;

	if (sample < 0 || sample >= c->samples.n)
		return ir_err(e, "calibration sample %d of %d", sample, c->samples.n);
	if (rank_ctx_init(&rc, c, g, nodes, n, act, weight, weight_absmax, e))
		return -1;
	rc.subst = converted;
	r = ir_eval_graph_visit(g, &c->samples.in[sample * c->samples.ninputs], outputs,
				rank_visit, &rc, e);
	rank_ctx_free(&rc, n);
	return r;
}
