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
#include "ops/registry.h"

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

/* The only live node reading value v, or -1 (none, several, or a graph
 * output). */
static int only_reader(const struct ir_graph *g, int v)
{
	int r = -1;

	if (g->vals[v].is_output)
		return -1;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		for (int k = 0; !n->dead && k < n->nin; k++) {
			if (n->in[k] != v)
				continue;
			if (r >= 0 && r != i)
				return -1;
			r = i;
		}
	}
	return r;
}

/* 1 when constant c, broadcast against [..., rows, cols], varies along at
 * most axis `axis` (0: rows, 1: columns) and holds len elements. */
static int along(const struct ir_value *c, int rank, int axis, int64_t len)
{
	int keep = axis == 0 ? c->rank - 2 : c->rank - 1;

	if (c->rank < 1 || c->rank > rank || (axis == 0 && c->rank < 2) ||
	    ir_value_numel(c) != len)
		return 0;
	for (int i = 0; i < c->rank; i++)
		if (i != keep && c->dims[i] != 1)
			return 0;
	return 1;
}

/*
 * The bias Add the device sums into an fp8 MatMul (a 1x1 convolution's or
 * a Gemm's bias, written as MatMul + Add by the preparation), or -1: the
 * lowering (lower_bias.c, lw_mm_bias_find) starts each float16 output
 * block from the bias and adds the float32 product to it, rounding to
 * float16 once, where evaluating the two nodes apart rounds the product
 * first.  *axis: 0 when the bias runs along the rows, 1 along the columns.
 */
static int fused_bias_add(const struct ir_graph *g, const struct ir_node *n, int *axis,
			  int *bias)
{
	const struct ir_value *o, *r, *c;
	const struct ir_node *add;
	int ai, k;

	if (ir_attr_int(n, "fp8_weight_input", -1) < 0 || n->opid != IR_OP_MatMul ||
	    n->nin != 2 || n->nout != 1 || n->out[0] < 0)
		return -1;
	o = &g->vals[n->out[0]];
	if (o->dtype != IR_F16 || o->rank < 2 || (ai = only_reader(g, n->out[0])) < 0)
		return -1;
	add = &g->nodes[ai];
	if (add->opid != IR_OP_Add || add->nin != 2 || add->nout != 1 || add->out[0] < 0)
		return -1;
	k = add->in[0] == n->out[0] ? 0 : 1;
	if (add->in[k] != n->out[0] || add->in[1 - k] < 0)
		return -1;
	c = &g->vals[add->in[1 - k]];
	r = &g->vals[add->out[0]];
	if (!c->data || c->dtype != o->dtype || r->dtype != o->dtype || r->rank != o->rank ||
	    memcmp(r->dims, o->dims, (size_t)o->rank * sizeof(o->dims[0])))
		return -1;
	if (along(c, o->rank, 1, o->dims[o->rank - 1]))
		*axis = 1;
	else if (along(c, o->rank, 0, o->dims[o->rank - 2]))
		*axis = 0;
	else
		return -1;
	*bias = add->in[1 - k];
	return ai;
}

/* The node writing value v, or -1. */
static int producer(const struct ir_graph *g, int v)
{
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		for (int k = 0; !n->dead && k < n->nout; k++)
			if (n->out[k] == v)
				return i;
	}
	return -1;
}

/* out = float16(float32 product + bias), the device's single rounding. */
static void add_bias_once(const struct ir_tensor *prod, const struct ir_value *b, int axis,
			  struct ir_tensor *out)
{
	int64_t cols = out->dims[out->rank - 1], rows = out->dims[out->rank - 2];
	int64_t cnt = ir_numel(out->rank, out->dims);

	for (int64_t i = 0; i < cnt; i++) {
		int64_t bi = axis ? i % cols : (i / cols) % rows;
		float x = (float)ir_get_f(prod->data, prod->dtype, (size_t)i);
		float y = (float)ir_get_f(b->data, b->dtype, (size_t)bi);

		ir_set_f(out->data, out->dtype, (size_t)i, (double)(y + x));
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
	int axis = 0, bias = -1, fused;

	(void)ctx;
	/* the bias Add of a fused product below: its input holds the sum already */
	if (n->opid == IR_OP_Add && n->nin == 2 && n->nout == 1) {
		for (int k = 0; k < 2; k++) {
			int p = n->in[k] >= 0 ? producer(g, n->in[k]) : -1;

			if (p >= 0 && in[k] && fused_bias_add(g, &g->nodes[p], &axis, &bias) == node) {
				memcpy(out[0].data, in[k]->data, ir_tensor_bytes(&out[0]));
				return 0;
			}
		}
		return 0;
	}
	fused = fused_bias_add(g, n, &axis, &bias) >= 0;
	/* Conv, MatMul and Gemm: data and weight, and Conv's or Gemm's bias, which stays as it is */
	if ((fmt < 0 && !fused) || n->nin < 2 || n->nin > 3 || n->nout != 1 || !in[a])
		return 0;
	if (fmt >= 0 && (!ipu_fp8_format_name((uint32_t)fmt) || scale < IPU_FP8_SCALE_MIN ||
			 scale > IPU_FP8_SCALE_MAX))
		return ir_node_err(e, g, n, "fp8 input format %lld, scale %lld: not a format and scale of ipu/fp8.h",
				   (long long)fmt, (long long)scale);
	if (ir_tensor_alloc(&q, in[a]->dtype, in[a]->rank, in[a]->dims, e))
		return -1;
	cnt = ir_numel(q.rank, q.dims);
	for (int64_t i = 0; i < cnt; i++) {
		float x = (float)ir_get_f(in[a]->data, in[a]->dtype, (size_t)i);

		if (fmt >= 0)
			x = ipu_fp8_to_f32(ipu_fp8_from_f32(x, (uint32_t)fmt, (int)scale),
					   (uint32_t)fmt, (int)scale);
		ir_set_f(q.data, q.dtype, (size_t)i, x);
	}
	qin[a] = &q;
	qin[1 - a] = in[1 - a];
	if (n->nin == 3)
		qin[2] = in[2];
	memset(&res, 0, sizeof(res));
	/* a fused product stays in float32 until its bias joins it */
	res.dtype = fused ? IR_F32 : out[0].dtype;
	res.rank = out[0].rank;
	memcpy(res.dims, out[0].dims, sizeof(res.dims));
	if (ir_eval_node(g, n, qin, &res, e)) {
		ir_tensor_free(&q);
		return -1;
	}
	if (fused)
		add_bias_once(&res, &g->vals[bias], axis, &out[0]);
	else
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
