/* SPDX-License-Identifier: MIT */
/*
 * lower_sample.c - a decoder's sampling on the device: program
 * IPUEF_PROGRAM_SAMPLE runs Main's steps and then draws each row's token
 * from its top-k logits (temperature, top-k, top-p, a seed) with the SAMPLE
 * codelet, the sampler the host uses too (ipu/sample.h).  A sampled step
 * then streams the token and a few scalars per row instead of the
 * vocabulary's logits.
 *
 * The candidates are an ordinary TopK of the logits (split over tiles for
 * long rows like any TopK) whose two outputs the lowering keeps on the
 * device: not anchors, read only by the sampling steps.  Those steps run in
 * the sampling program alone, after the shared body, so Main and the
 * tokens-only program are Main's as before (only the TopK added).
 */
#include <stdlib.h>
#include <string.h>

#include "ipu/sample.h"
#include "lower_internal.h"

static int find_out(const struct ir_graph *g, const char *name)
{
	for (int j = 0; j < g->noutputs; j++)
		if (!strcmp(g->vals[g->outputs[j]].name, name))
			return j;
	return -1;
}

int lw_sample_candidates(struct ir_graph *g, struct ir_error *e)
{
	int j = find_out(g, "logits"), lv, kv, out[2], in[2], node;
	const struct ir_value *lg;
	int64_t dims[IR_MAX_RANK], K;

	if (j < 0 || find_out(g, LW_NEXT_TOKEN) < 0 || ir_value_find(g, LW_SAMPLE_VALUES) >= 0)
		return 0;
	lv = g->outputs[j];
	lg = &g->vals[lv];
	if (lg->rank < 1 || !ir_value_has_shape(lg) || (lg->dtype != IR_F32 && lg->dtype != IR_F16))
		return 0;
	K = lg->dims[lg->rank - 1] < IPU_SAMPLE_MAX_K ? lg->dims[lg->rank - 1] : IPU_SAMPLE_MAX_K;
	if (K < 1)
		return 0;
	for (int d = 0; d < lg->rank; d++)
		dims[d] = lg->dims[d];
	dims[lg->rank - 1] = K;
	kv = lp_const_scalar(g, LW_NEXT_TOKEN "/k", IR_I64, (double)K, 1, e);
	if (kv < 0)
		return -1;
	out[0] = ir_value_add(g, LW_SAMPLE_VALUES, e);
	out[1] = out[0] < 0 ? -1 : ir_value_add(g, LW_SAMPLE_IDS, e);
	if (out[1] < 0)
		return -1;
	lg = &g->vals[lv];	/* the values may have moved */
	ir_value_set_shape(&g->vals[out[0]], lg->dtype, lg->rank, dims);
	ir_value_set_shape(&g->vals[out[1]], IR_I64, lg->rank, dims);
	in[0] = lv;
	in[1] = kv;
	node = ir_node_add(g, LW_NEXT_TOKEN "/TopK", "TopK", in, 2, out, 2, e);
	if (node < 0 || ir_attr_set_int(&g->nodes[node], "axis", -1, e) ||
	    ir_attr_set_int(&g->nodes[node], "largest", 1, e) ||
	    ir_attr_set_int(&g->nodes[node], "sorted", 1, e) || ir_graph_add_output(g, out[0], e) ||
	    ir_graph_add_output(g, out[1], e))
		return -1;
	ir_graph_link(g);
	return 0;
}

int lw_sample_output(struct lw_sample *s, const struct ir_value *v, const struct ipu_slice *sl,
		     uint32_t nsl, struct ir_error *e)
{
	int k = !strcmp(v->name, LW_SAMPLE_VALUES) ? 0 : !strcmp(v->name, LW_SAMPLE_IDS) ? 1 : -1;

	if (k < 0)
		return 0;
	free(s->sl[k]);
	s->sl[k] = malloc(nsl * sizeof(*sl));
	if (!s->sl[k])
		return ir_err(e, "out of memory");
	memcpy(s->sl[k], sl, nsl * sizeof(*sl));
	s->nsl[k] = nsl;
	s->dtype[k] = lw_dtype(v->dtype);
	s->count = (uint64_t)ir_value_numel(v);
	s->k = (uint64_t)v->dims[v->rank - 1];
	s->rank = v->rank - 1;
	for (int d = 0; d + 1 < v->rank; d++)
		s->dims[d] = v->dims[d];
	return 1;
}

/* A tensor of `count` elements of dt on `tile`; IPU_GRAPH_INVALID on error. */
static ipu_tensor local(struct ipu_graph *gb, const char *name, uint32_t dt, uint64_t count, uint32_t tile)
{
	ipu_tensor t = ipu_graph_add_tensor(gb, name, dt, 1, &count);

	if (t != IPU_GRAPH_INVALID && ipu_graph_map_tile(gb, t, tile))
		return IPU_GRAPH_INVALID;
	return t;
}

/* An input or output stream of tensor t (count elements of dt) and its anchor. */
static int stream(struct ipu_graph *gb, struct ipu_lower_anchors *as, const char *name, int ir_dt,
		  uint32_t dt, ipu_tensor t, uint64_t count, int rank, const int64_t *dims, uint32_t dir,
		  ipu_step *sc, struct ir_error *e)
{
	struct ir_value v = { .name = (char *)name, .dtype = ir_dt, .rank = rank };
	uint32_t sid = ipu_graph_add_stream(gb, name, dir == IPUEF_INPUT ? IPUX_STREAM_H2D : IPUX_STREAM_D2H,
					    (uint32_t)(count * ipux_dtype_size(dt)));

	for (int d = 0; d < rank; d++)
		v.dims[d] = dims[d];
	*sc = sid == IPU_GRAPH_INVALID ? IPU_GRAPH_INVALID
				       : ipu_step_stream_copy(gb, sid, &(struct ipu_slice){ t, 0, count }, 1);
	if (*sc == IPU_GRAPH_INVALID)
		return ir_err(e, "graph builder: %s", ipu_graph_error(gb) ? ipu_graph_error(gb) : "failed");
	return lw_anchor_add(as, &v, dir, sid, e);
}

int lw_sample_end(struct lw_sample *s, struct ipu_graph *gb, ipu_step body, const uint64_t *used,
		  uint32_t tiles, struct ipu_lower_anchors *as, struct ir_error *e)
{
	uint64_t rows, at[2] = { 0, 0 };
	uint32_t tile = 0, cs, params[2];
	ipu_tensor vals, ids, prm, keys, tok;
	ipu_step seq, x, sc[3];
	int64_t pdims[IR_MAX_RANK];
	int bad;

	s->seq = IPU_GRAPH_INVALID;
	if (!s->sl[0] || !s->sl[1] || body == IPU_GRAPH_INVALID || !s->k)
		return 0;
	rows = s->count / s->k;
	/* the emptiest tile: the candidates and scalars are a few KB */
	for (uint32_t k = 1; k < tiles; k++)
		if (used[k] < used[tile])
			tile = k;
	vals = local(gb, LW_SAMPLE_VALUES, s->dtype[0], s->count, tile);
	ids = vals == IPU_GRAPH_INVALID ? vals : local(gb, LW_SAMPLE_IDS, s->dtype[1], s->count, tile);
	prm = ids == IPU_GRAPH_INVALID ? ids : local(gb, IPUEF_SAMPLE_PARAMS, IPUX_DT_F32, 2 * rows, tile);
	keys = prm == IPU_GRAPH_INVALID ? prm : local(gb, IPUEF_SAMPLE_KEYS, IPUX_DT_I64, 3 * rows, tile);
	tok = keys == IPU_GRAPH_INVALID ? keys : local(gb, IPUEF_SAMPLED_TOKEN, IPUX_DT_I64, rows, tile);
	seq = tok == IPU_GRAPH_INVALID ? tok : ipu_step_sequence(gb);
	x = seq == IPU_GRAPH_INVALID ? seq : ipu_step_exchange(gb);
	bad = x == IPU_GRAPH_INVALID || ipu_step_append(gb, seq, body);
	for (int k = 0; k < 2 && !bad; k++)
		for (uint32_t i = 0; i < s->nsl[k] && !bad; i++) {
			bad = ipu_exchange_add(gb, x, s->sl[k][i],
					       (struct ipu_slice){ k ? ids : vals, at[k], s->sl[k][i].count });
			at[k] += s->sl[k][i].count;
		}
	if (bad)
		return ir_err(e, "graph builder: %s", ipu_graph_error(gb) ? ipu_graph_error(gb) : "failed");
	s->first_anchor = as->n;
	pdims[0] = (int64_t)rows;
	pdims[1] = 2;
	if (stream(gb, as, IPUEF_SAMPLE_PARAMS, IR_F32, IPUX_DT_F32, prm, 2 * rows, 2, pdims, IPUEF_INPUT,
		   &sc[0], e))
		return -1;
	pdims[1] = 3;
	if (stream(gb, as, IPUEF_SAMPLE_KEYS, IR_I64, IPUX_DT_I64, keys, 3 * rows, 2, pdims, IPUEF_INPUT,
		   &sc[1], e) ||
	    stream(gb, as, IPUEF_SAMPLED_TOKEN, IR_I64, IPUX_DT_I64, tok, rows, s->rank, s->dims,
		   IPUEF_OUTPUT, &sc[2], e))
		return -1;
	s->end_anchor = as->n;
	params[0] = (uint32_t)rows;
	params[1] = (uint32_t)s->k;
	cs = ipu_graph_add_compute_set(gb, "sample");
	bad = cs == IPU_GRAPH_INVALID ||
	      ipu_step_append(gb, seq, sc[0]) || ipu_step_append(gb, seq, sc[1]) ||
	      ipu_step_append(gb, seq, x) ||
	      ipu_graph_add_vertex(gb, cs,  IPUX_CL_SAMPLE,
				   (const struct ipu_slice[]){ { vals, 0, s->count }, { ids, 0, s->count },
							       { prm, 0, 2 * rows }, { keys, 0, 3 * rows },
							       { tok, 0, rows } },
				   5, params, 2) ||
	      ipu_step_append(gb, seq, ipu_step_execute(gb, cs)) || ipu_step_append(gb, seq, sc[2]);
	if (bad)
		return ir_err(e, "graph builder: %s", ipu_graph_error(gb) ? ipu_graph_error(gb) : "failed");
	s->seq = seq;
	return 0;
}

void lw_sample_mark(const struct lw_sample *s, struct ipu_lower_anchors *as, int prog)
{
	for (uint32_t i = s->graph_first; i < s->first_anchor; i++)
		if (as->a[i].direction == IPUEF_INPUT)
			as->a[i].programs |= 1ull << prog;
	for (uint32_t i = s->first_anchor; i < s->end_anchor; i++)
		as->a[i].programs = 1ull << prog;
}

void lw_sample_free(struct lw_sample *s)
{
	free(s->sl[0]);
	free(s->sl[1]);
	s->sl[0] = s->sl[1] = NULL;
}
