/* SPDX-License-Identifier: MIT */
/*
 * fp8.c - fp8 weights (and activations) for Conv and MatMul layers.
 *
 * PopRT's fp8 precisions quantise the operands of the matrix unit: the
 * weights of convolutions and matrix products (--precision fp8_weight) and
 * also their activation inputs (--precision fp8); everything else stays in
 * fp16.  A weight's scale comes from the weight alone (the smallest power
 * of two that keeps its largest magnitude finite, ipu_fp8_scale_for_absmax)
 * unless --fp8_params fixes one, or by default one such scale per output
 * channel (a power of two applied in the codelet's f32 epilogue, so a
 * channel of small weights keeps the binades a larger channel would take
 * from it); activations use the --fp8_params input
 * scale (default 0: F143 then covers 2^-10 .. 240, the range of normalised
 * activations).  Rounding the weight here, in the graph, means the
 * reference evaluator sees exactly the values the device decodes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/fp8.h"
#include "ipu/passes.h"
#include "ops/registry.h"

static int consumers(const struct ir_graph *g, int v)
{
	int c = 0;

	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			c += n->in[k] == v;
	}
	for (int i = 0; i < g->noutputs; i++)
		c += g->outputs[i] == v;
	return c;
}

static int is_weight(const struct ir_graph *g, int v, int rank)
{
	const struct ir_value *x;

	if (v < 0)
		return 0;
	x = &g->vals[v];
	return x->data && x->rank == rank &&
	       (x->dtype == IR_F16 || x->dtype == IR_F32) &&
	       ir_value_numel(x) > 0 && consumers(g, v) == 1;
}

static int is_activation(const struct ir_graph *g, int v)
{
	const struct ir_value *x = &g->vals[v];

	return !x->data && (x->dtype == IR_F16 || x->dtype == IR_F32);
}

int ir_fp8_weight_input(const struct ir_graph *g, int node)
{
	const struct ir_node *n = &g->nodes[node];

	if (n->dead || n->nin < 2 || n->in[0] < 0 || n->in[1] < 0)
		return -1;
	if (n->opid == IR_OP_Conv)
		return is_weight(g, n->in[1], 4) && is_activation(g, n->in[0]) ? 1 : -1;
	if (n->opid != IR_OP_MatMul)
		return -1;
	if (is_weight(g, n->in[1], 2) && is_activation(g, n->in[0]))
		return 1;
	if (is_weight(g, n->in[0], 2) && is_activation(g, n->in[1]))
		return 0;
	return -1;
}

int ir_fp8_name_matches(const char *node_name, const char *layer)
{
	size_t n = strlen(layer);

	return !strncmp(node_name, layer, n) &&
	       (node_name[n] == 0 || node_name[n] == '/');
}

static double absmax(const struct ir_value *w)
{
	int64_t n = ir_value_numel(w);
	double m = 0;

	for (int64_t i = 0; i < n; i++) {
		double a = fabs(ir_get_f(w->data, w->dtype, (size_t)i));

		if (a > m)
			m = a;
	}
	return m;
}

static int weight_scale(const struct ir_value *w, const struct ir_fp8_opts *o)
{
	if (!o->weight_scale_auto)
		return o->weight_scale;
	return ipu_fp8_scale_for_absmax(absmax(w), o->weight_format);
}

int ir_fp8_weight_axis(const struct ir_graph *g, int node, int k)
{
	return g->nodes[node].opid == IR_OP_MatMul && k == 1 ? 1 : 0;
}

/* Channels along axis of w, and the elements after that axis. */
static void channel_geom(const struct ir_value *w, int axis, int64_t *nch,
			 int64_t *inner)
{
	*nch = w->dims[axis];
	*inner = 1;
	for (int d = axis + 1; d < w->rank; d++)
		*inner *= w->dims[d];
}

/*
 * The weight's scales: one (*nch 1) or one per output channel; element i
 * uses sc[(i / inner) % nch].  Returns NULL when out of memory.
 */
static int *weight_scales(const struct ir_graph *g, int node, int k,
			  const struct ir_fp8_opts *o, int64_t *nch, int64_t *inner)
{
	const struct ir_value *w = &g->vals[g->nodes[node].in[k]];
	int64_t n = ir_value_numel(w);
	double *m;
	int *sc;

	if (!o->per_channel || !o->weight_scale_auto) {
		*nch = *inner = 1;
		*inner = n;
		sc = malloc(sizeof(*sc));
		if (sc)
			sc[0] = weight_scale(w, o);
		return sc;
	}
	channel_geom(w, ir_fp8_weight_axis(g, node, k), nch, inner);
	sc = malloc((size_t)*nch * sizeof(*sc));
	m = calloc((size_t)*nch, sizeof(*m));
	if (!sc || !m) {
		free(sc);
		free(m);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++) {
		double a = fabs(ir_get_f(w->data, w->dtype, (size_t)i));
		int64_t c = (i / *inner) % *nch;

		if (a > m[c])
			m[c] = a;
	}
	for (int64_t c = 0; c < *nch; c++)
		sc[c] = ipu_fp8_scale_for_absmax(m[c], o->weight_format);
	free(m);
	return sc;
}

static double q(double x, uint32_t fmt, int s)
{
	return ipu_fp8_to_f32(ipu_fp8_from_f32((float)x, fmt, s), fmt, s);
}

double ir_fp8_weight_error(void *ctx, const struct ir_graph *g, int node,
			   const struct ir_fp8_opts *o)
{
	int k = ir_fp8_weight_input(g, node);
	const struct ir_value *w;
	double num = 0, den = 0;
	int64_t n, nch, inner;
	int *sc;

	(void)ctx;
	if (k < 0)
		return 0;
	w = &g->vals[g->nodes[node].in[k]];
	if (!(sc = weight_scales(g, node, k, o, &nch, &inner)))
		return HUGE_VAL;	/* out of memory: rank it first, kept in fp16 */
	n = ir_value_numel(w);
	for (int64_t i = 0; i < n; i++) {
		double x = ir_get_f(w->data, w->dtype, (size_t)i);
		double d = x - q(x, o->weight_format, sc[(i / inner) % nch]);

		num += d * d;
		den += x * x;
	}
	free(sc);
	return den > 0 ? num / den : 0;
}

static int skipped(const struct ir_node *n, const struct ir_fp8_opts *o)
{
	for (int i = 0; i < o->nskip; i++)
		if (ir_fp8_name_matches(n->name, o->skip_names[i]))
			return 1;
	return 0;
}

struct ranked {
	int node;
	double score;
};

static int by_score(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->node - y->node; /* stable: earlier layers first */
}

int ir_pass_fp8(struct ir_graph *g, const struct ir_fp8_opts *o,
		struct ir_error *e)
{
	struct ranked *r;
	int nr = 0, done = 0;

	if (!o || o->mode == IR_FP8_OFF)
		return 0;
	if (o->weight_format >= IPU_FP8_FORMAT_COUNT ||
	    o->input_format >= IPU_FP8_FORMAT_COUNT)
		return ir_err(e, "fp8: unknown format");
	if ((!o->weight_scale_auto && (o->weight_scale < IPU_FP8_SCALE_MIN ||
				       o->weight_scale > IPU_FP8_SCALE_MAX)) ||
	    o->input_scale < IPU_FP8_SCALE_MIN || o->input_scale > IPU_FP8_SCALE_MAX)
		return ir_err(e, "fp8: scales must be within [%d, %d]",
			      IPU_FP8_SCALE_MIN, IPU_FP8_SCALE_MAX);
	r = calloc((size_t)(g->nnodes ? g->nnodes : 1), sizeof(*r));
	if (!r)
		return ir_err(e, "out of memory");
	for (int i = 0; i < g->nnodes; i++) {
		if (ir_fp8_weight_input(g, i) < 0 || skipped(&g->nodes[i], o))
			continue;
		r[nr].node = i;
		r[nr].score = o->rank ? o->rank(o->rank_ctx, g, i, o)
				      : ir_fp8_weight_error(NULL, g, i, o);
		nr++;
	}
	qsort(r, (size_t)nr, sizeof(*r), by_score);
	for (int j = o->keep_fp16 > 0 ? o->keep_fp16 : 0; j < nr; j++) {
		struct ir_node *n = &g->nodes[r[j].node];
		int k = ir_fp8_weight_input(g, r[j].node);
		struct ir_value *w = &g->vals[n->in[k]];
		int is = o->input_scale;
		int64_t cnt = ir_value_numel(w), nch, inner;
		int *sc = weight_scales(g, r[j].node, k, o, &nch, &inner);
		int64_t *sc64 = sc && nch > 1 ? malloc((size_t)nch * sizeof(*sc64)) : NULL;
		int bad;

		if (!sc || (nch > 1 && !sc64)) {
			free(sc);
			free(r);
			return ir_err(e, "out of memory");
		}
		for (int64_t c = 0; sc64 && c < nch; c++)
			sc64[c] = sc[c];

		if (o->mode == IR_FP8_FULL && o->input_scale_of) {
			int got = o->input_scale_of(o->input_scale_ctx, g, r[j].node, &is, e);

			if (got < 0) {
				free(sc);
				free(sc64);
				free(r);
				return -1;
			}
			if (!got || is < IPU_FP8_SCALE_MIN || is > IPU_FP8_SCALE_MAX)
				is = o->input_scale;
		}

		for (int64_t i = 0; i < cnt; i++)
			ir_set_f(w->data, w->dtype, (size_t)i,
				 q(ir_get_f(w->data, w->dtype, (size_t)i), o->weight_format,
				   sc[(i / inner) % nch]));
		bad = ir_attr_set_int(n, "fp8_weight_input", k, e) ||
		      ir_attr_set_int(n, "fp8_weight_format", o->weight_format, e) ||
		      ir_attr_set_int(n, "fp8_weight_scale", sc64 ? 0 : sc[0], e) ||
		      (sc64 && (ir_attr_set_ints(n, "fp8_weight_scales", sc64, (size_t)nch, e) ||
				ir_attr_set_int(n, "fp8_weight_axis",
						ir_fp8_weight_axis(g, r[j].node, k), e))) ||
		      (o->mode == IR_FP8_FULL &&
		       (ir_attr_set_int(n, "fp8_input_format", o->input_format, e) ||
			ir_attr_set_int(n, "fp8_input_scale", is, e)));
		free(sc);
		free(sc64);
		if (bad) {
			free(r);
			return -1;
		}
		done++;
	}
	free(r);
	return done;
}
