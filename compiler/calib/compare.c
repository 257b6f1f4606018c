/* SPDX-License-Identifier: MIT */
/*
 * compare.c - the precision report: the float32 graph and the converted
 * graph run in the reference evaluator on the same samples, and every
 * node output of the float32 graph is compared with the converted graph's
 * tensor of the same name.  The evaluator rounds each node's result to its
 * output dtype, so a float16 graph's activations carry float16 rounding
 * node by node, as on the device.  A layer the fp8 pass converted has its
 * weight already rounded to the fp8 grid in the graph; the conversion of
 * its activation input to fp8, which the device does before the product
 * (attributes fp8_input_format and fp8_input_scale), is emulated here by
 * evaluating the node again on the converted input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"
#include "eval/eval.h"
#include "ipu/fp8.h"

struct acc {
	double sum_rr, sum_yy, sum_yr, sum_ee;
};

struct cmp_ctx {
	struct ipu_calib_report *r;
	struct acc *acc;
	const int *ref_row;	/* ref value -> row, -1 */
	const int *conv_row;	/* conv value -> row, -1 */
	struct ir_tensor *kept;	/* [row]: ref result of this sample */
};

static int ref_visit(void *ctx, const struct ir_graph *g, int node,
		     const struct ir_tensor *const *in, struct ir_tensor *out,
		     struct ir_error *e)
{
	struct cmp_ctx *cc = ctx;
	const struct ir_node *n = &g->nodes[node];

	(void)in;
	for (int k = 0; k < n->nout; k++) {
		int row = n->out[k] >= 0 ? cc->ref_row[n->out[k]] : -1;
		struct ir_tensor *t;

		if (row < 0)
			continue;
		t = &cc->kept[row];
		if (ir_tensor_alloc(t, out[k].dtype, out[k].rank, out[k].dims, e))
			return -1;
		memcpy(t->data, out[k].data, ir_tensor_bytes(t));
	}
	return 0;
}

static void accumulate(struct ipu_calib_layer *l, struct acc *a, const struct ir_tensor *y,
		       const struct ir_tensor *ref)
{
	int64_t n = ir_numel(ref->rank, ref->dims);

	for (int64_t i = 0; i < n; i++) {
		double r = ir_get_f(ref->data, ref->dtype, (size_t)i);
		double v = ir_get_f(y->data, y->dtype, (size_t)i);
		double d = fabs(v - r);

		l->count++;
		if (!isfinite(r) || !isfinite(v)) {
			l->nonfinite++;
			continue;
		}
		if (d > l->max_abs_err)
			l->max_abs_err = d;
		if (fabs(r) > l->max_abs_ref)
			l->max_abs_ref = fabs(r);
		a->sum_rr += r * r;
		a->sum_yy += v * v;
		a->sum_yr += v * r;
		a->sum_ee += (v - r) * (v - r);
	}
}

int ipu_calib_emulate_fp8_input(void *ctx, const struct ir_graph *g, int node,
				const struct ir_tensor *const *in, struct ir_tensor *out,
				struct ir_error *e)
{
	const struct ir_node *n = &g->nodes[node];
	const struct ir_tensor *qin[3];
	struct ir_tensor q, res;
	int64_t fmt = ir_attr_int(n, "fp8_input_format", -1);
	int64_t scale = ir_attr_int(n, "fp8_input_scale", 0);
	int64_t w = ir_attr_int(n, "fp8_weight_input", -1);
	int a = w == 0 ? 1 : 0;
	int64_t cnt;

	(void)ctx;
	/* Conv, MatMul and Gemm: data and weight, and Conv's or Gemm's bias, which stays as it is */
	if (fmt < 0 || n->nin < 2 || n->nin > 3 || n->nout != 1 || !in[a])
		return 0;
	if (!ipu_fp8_format_name((uint32_t)fmt) || scale < IPU_FP8_SCALE_MIN ||
	    scale > IPU_FP8_SCALE_MAX)
		return ir_node_err(e, g, n, "fp8 input format %lld, scale %lld: not a format and scale of ipu/fp8.h",
				   (long long)fmt, (long long)scale);
	if (ir_tensor_alloc(&q, in[a]->dtype, in[a]->rank, in[a]->dims, e))
		return -1;
	cnt = ir_numel(q.rank, q.dims);
	for (int64_t i = 0; i < cnt; i++) {
		float x = (float)ir_get_f(in[a]->data, in[a]->dtype, (size_t)i);

		ir_set_f(q.data, q.dtype, (size_t)i,
			 ipu_fp8_to_f32(ipu_fp8_from_f32(x, (uint32_t)fmt, (int)scale), (uint32_t)fmt, (int)scale));
	}
	qin[a] = &q;
	qin[1 - a] = in[1 - a];
	if (n->nin == 3)
		qin[2] = in[2];
	memset(&res, 0, sizeof(res));
	res.dtype = out[0].dtype;
	res.rank = out[0].rank;
	memcpy(res.dims, out[0].dims, sizeof(res.dims));
	if (ir_eval_node(g, n, qin, &res, e)) {
		ir_tensor_free(&q);
		return -1;
	}
	memcpy(out[0].data, res.data, ir_tensor_bytes(&res));
	ir_tensor_free(&res);
	ir_tensor_free(&q);
	return 0;
}

static int conv_visit(void *ctx, const struct ir_graph *g, int node,
		      const struct ir_tensor *const *in, struct ir_tensor *out,
		      struct ir_error *e)
{
	struct cmp_ctx *cc = ctx;
	const struct ir_node *n = &g->nodes[node];

	if (ipu_calib_emulate_fp8_input(NULL, g, node, in, out, e))
		return -1;
	for (int k = 0; k < n->nout; k++) {
		int row = n->out[k] >= 0 ? cc->conv_row[n->out[k]] : -1;

		if (row < 0 || !cc->kept[row].data)
			continue;
		accumulate(&cc->r->l[row], &cc->acc[row], &out[k], &cc->kept[row]);
	}
	return 0;
}

void ipu_calib_report_free(struct ipu_calib_report *r)
{
	for (int i = 0; r->l && i < r->n; i++) {
		free(r->l[i].node);
		free(r->l[i].op);
		free(r->l[i].value);
		free(r->l[i].dtype);
	}
	free(r->l);
	free(r->precision);
	memset(r, 0, sizeof(*r));
}

static char *dup_or(const char *s, const char *def)
{
	return strdup(s && s[0] ? s : def);
}

/* The output of a layer the lowering rewrote into nodes "LAYER/..." (a
 * Gemm into MatMul and Add) whose last node took over the layer's result:
 * the last such node's output of the same size, or -1. */
static int rewritten_output(const struct ir_graph *conv, const char *layer, int64_t numel)
{
	size_t len = layer ? strlen(layer) : 0;

	if (!len)
		return -1;
	for (int i = conv->nnodes - 1; i >= 0; i--) {
		const struct ir_node *n = &conv->nodes[i];

		if (n->dead || n->nout < 1 || n->out[0] < 0 || !n->name ||
		    strncmp(n->name, layer, len) || n->name[len] != '/')
			continue;
		return ir_value_numel(&conv->vals[n->out[0]]) == numel ? n->out[0] : -1;
	}
	return -1;
}

/* Rows: every float output of a live ref node whose name the converted
 * graph also computes (same element count, float there too), or which the
 * lowering's rewrite of the node took over. */
static int build_rows(const struct ir_graph *ref, const struct ir_graph *conv,
		      struct ipu_calib_report *r, int *ref_row, int *conv_row,
		      struct ir_error *e)
{
	for (int v = 0; v < ref->nvals; v++)
		ref_row[v] = -1;
	for (int v = 0; v < conv->nvals; v++)
		conv_row[v] = -1;
	for (int i = 0; i < ref->nnodes; i++) {
		const struct ir_node *n = &ref->nodes[i];

		for (int k = 0; !n->dead && k < n->nout; k++) {
			const struct ir_value *rv;
			int cv;
			struct ipu_calib_layer *l;

			if (n->out[k] < 0)
				continue;
			rv = &ref->vals[n->out[k]];
			cv = ir_value_find(conv, rv->name);
			if (cv < 0 && n->nout == 1)
				cv = rewritten_output(conv, n->name, ir_value_numel(rv));
			if (!ir_dtype_is_float(rv->dtype) || cv < 0 || conv->vals[cv].data ||
			    !ir_dtype_is_float(conv->vals[cv].dtype) ||
			    ir_value_numel(&conv->vals[cv]) != ir_value_numel(rv))
				continue;
			/* a graph input or one value for two rows: nothing to compare */
			if (conv->vals[cv].is_input || conv_row[cv] >= 0)
				continue;
			l = &r->l[r->n];
			memset(l, 0, sizeof(*l));
			l->node = dup_or(n->name, rv->name);
			l->op = strdup(n->op);
			l->value = strdup(rv->name);
			l->dtype = strdup(ir_dtype_name(conv->vals[cv].dtype));
			if (!l->node || !l->op || !l->value || !l->dtype) {
				r->n++;
				return ir_err(e, "out of memory");
			}
			ref_row[n->out[k]] = r->n;
			conv_row[cv] = r->n;
			r->n++;
		}
	}
	return 0;
}

int ipu_calib_compare(const struct ir_graph *ref, const struct ir_graph *conv,
		      const struct ipu_calib_samples *s, int from_data,
		      const char *precision, struct ipu_calib_report *r,
		      struct ir_error *e)
{
	int *ref_row = malloc((size_t)(ref->nvals + 1) * sizeof(int));
	int *conv_row = malloc((size_t)(conv->nvals + 1) * sizeof(int));
	struct ipu_calib_samples cs = { 0, 0, NULL };
	struct cmp_ctx cc = { r, NULL, ref_row, conv_row, NULL };
	int rc = -1, rows = 0;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < ref->nnodes; i++)
		rows += ref->nodes[i].nout;
	r->l = calloc((size_t)rows + 1, sizeof(*r->l));
	r->precision = strdup(precision);
	r->samples = s->n;
	r->from_data = from_data;
	cc.acc = calloc((size_t)rows + 1, sizeof(*cc.acc));
	cc.kept = calloc((size_t)rows + 1, sizeof(*cc.kept));
	if (!ref_row || !conv_row || !r->l || !r->precision || !cc.acc || !cc.kept) {
		ir_err(e, "out of memory");
		goto out;
	}
	if (build_rows(ref, conv, r, ref_row, conv_row, e) ||
	    ipu_calib_samples_convert(s, conv, &cs, e))
		goto out;
	for (int smp = 0; smp < s->n; smp++) {
		int fail = ir_eval_graph_visit(ref, &s->in[smp * s->ninputs], NULL, ref_visit, &cc, e) ||
			   ir_eval_graph_visit(conv, &cs.in[smp * cs.ninputs], NULL, conv_visit, &cc, e);

		for (int i = 0; i < r->n; i++)
			ir_tensor_free(&cc.kept[i]);
		if (fail) {
			char msg[IR_ERROR_LEN];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			ir_err(e, "precision comparison, sample %d: %s", smp, msg);
			goto out;
		}
	}
	/* a value the converted graph names but never computes (rewritten
	 * away) has no row */
	{
		int k = 0;

		for (int i = 0; i < r->n; i++) {
			if (!r->l[i].count) {
				free(r->l[i].node);
				free(r->l[i].op);
				free(r->l[i].value);
				free(r->l[i].dtype);
				continue;
			}
			cc.acc[k] = cc.acc[i];
			r->l[k++] = r->l[i];
		}
		r->n = k;
	}
	for (int i = 0; i < r->n; i++) {
		struct ipu_calib_layer *l = &r->l[i];
		const struct acc *a = &cc.acc[i];

		l->rel_err = l->max_abs_ref > 0 ? l->max_abs_err / l->max_abs_ref :
			     l->max_abs_err > 0 ? INFINITY : 0;
		if (a->sum_rr == 0 && a->sum_yy == 0)
			l->cos_dist = 0;
		else if (a->sum_rr == 0 || a->sum_yy == 0)
			l->cos_dist = 1;
		else
			l->cos_dist = 1 - a->sum_yr / sqrt(a->sum_rr * a->sum_yy);
		/* rounding can take the quotient a hair past 1 */
		if (l->cos_dist < 0)
			l->cos_dist = 0;
		l->snr_db = a->sum_ee == 0 ? INFINITY :
			    a->sum_rr == 0 ? -INFINITY : 10 * log10(a->sum_rr / a->sum_ee);
	}
	rc = 0;
out:
	if (rc)
		ipu_calib_report_free(r);
	ipu_calib_samples_free(&cs);
	free(ref_row);
	free(conv_row);
	free(cc.acc);
	free(cc.kept);
	return rc;
}
