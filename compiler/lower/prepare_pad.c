/* SPDX-License-Identifier: MIT */
/*
 * prepare_pad.c - a Pad whose one padded row is too large for a tile (the
 * lowering cuts a Pad into blocks of the rows of its leading unpadded
 * dims, lower_layout.c: padding a 1024 x 1024 image leaves rows of a
 * whole channel) rewritten axis by axis into ops split over tiles:
 *
 *   cropping (a negative pad)  -> Slice
 *   constant                   -> Concat(constant block, x, constant block)
 *   edge                       -> Concat(Gather(x, [0] * b), x,
 *                                        Gather(x, [d-1] * e))
 *   reflect                    -> Concat(Gather(x, [b, ..., 1]), x,
 *                                        Gather(x, [d-2, ..., d-1-e]))
 *
 * Concat and a Gather of run-time data at constant indices are exchange
 * copies (lower_gather_const.c), a Slice a strided copy in blocks of
 * output rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "prepare_rw.h"

#define R IR_MAX_RANK

static int slice(struct lp_rw *r, int v, int64_t start, int64_t end, int64_t axis, int64_t step)
{
	int in[5] = { v };

	if ((in[1] = lp_rw_shape(r, &start, 1)) < 0 || (in[2] = lp_rw_shape(r, &end, 1)) < 0 ||
	    (in[3] = lp_rw_shape(r, &axis, 1)) < 0 || (in[4] = lp_rw_shape(r, &step, 1)) < 0)
		return -1;
	return lp_rw_add_to(r, "Slice", in, 5, -1);
}

/* The block padding axis i by n before (end 0) or after (end 1) cur of
 * dims d, in `mode`. */
static int block(struct lp_rw *r, int cur, const int64_t *d, int rank, int i, int64_t n, int end,
		 int mode, int dt, double value)
{
	int64_t bd[R];

	memcpy(bd, d, (size_t)rank * sizeof(int64_t));
	bd[i] = n;
	if (mode == 0) {
		struct ir_tensor t;
		int x = ir_value_add_unique(r->g, "pad_block", r->e);
		int64_t cnt;

		if (x < 0 || ir_tensor_alloc(&t, dt, rank, bd, r->e))
			return -1;
		cnt = ir_numel(rank, bd);
		for (int64_t k = 0; k < cnt; k++)
			ir_set_f(t.data, dt, (size_t)k, value);
		ir_value_set_const(&r->g->vals[x], &t);
		return x;
	}
	{
		/* edge: the edge element n times; reflect: the n elements next
		 * to the edge, the edge excluded, mirrored.  A Gather at these
		 * constant indices is exchange copies of runs (a strided Slice
		 * of one column would read the whole channel's span) */
		int64_t *idx = malloc((size_t)n * sizeof(int64_t)), one = n;
		int in[2] = { cur }, v;

		if (!idx)
			return ir_err(r->e, "out of memory");
		for (int64_t k = 0; k < n; k++)
			idx[k] = mode == 1 ? (end ? d[i] - 1 : 0) : end ? d[i] - 2 - k : n - k;
		in[1] = lp_rw_ints(r, "pad_index", IR_I64, 1, &one, idx);
		free(idx);
		if (in[1] < 0 || (v = lp_rw_add_to(r, "Gather", in, 2, -1)) < 0 || lp_rw_int(r, "axis", i))
			return -1;
		return v;
	}
}

static int split_one(struct ir_graph *g, int *pi, struct ir_error *e)
{
	const struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *x = &g->vals[n->in[0]], *pv = &g->vals[n->in[1]];
	const struct ir_value *cv = n->nin > 2 && n->in[2] >= 0 ? &g->vals[n->in[2]] : NULL;
	const char *ms = ir_attr_str(n, "mode", "constant");
	int rank = x->rank, dt = x->dtype, cur = n->in[0], in[3];
	int mode = !strcmp(ms, "edge") ? 1 : !strcmp(ms, "reflect") ? 2 : 0;
	int64_t d[R], pads[2 * R];
	double value = cv ? ir_get_f(cv->data, cv->dtype, 0) : 0;
	struct lp_rw r = { g, *pi, "", e };

	/* n, x and the others move once nodes are inserted: all read first */
	snprintf(r.name, sizeof(r.name), "%s", n->name);
	memcpy(d, x->dims, sizeof(d));
	for (int k = 0; k < 2 * rank; k++)
		pads[k] = ir_get_i(pv->data, pv->dtype, (size_t)k);
	for (int i = 0; i < rank; i++) {
		int64_t b = pads[i], en = pads[i + rank];

		if (b < 0 || en < 0) {
			int64_t s0 = b < 0 ? -b : 0, s1 = d[i] - (en < 0 ? -en : 0);

			if ((cur = slice(&r, cur, s0, s1, i, 1)) < 0)
				return -1;
			d[i] = s1 - s0;
			b = b < 0 ? 0 : b;
			en = en < 0 ? 0 : en;
		}
		if (!b && !en)
			continue;
		in[0] = b ? block(&r, cur, d, rank, i, b, 0, mode, dt, value) : -1;
		in[1] = cur;
		in[2] = en ? block(&r, cur, d, rank, i, en, 1, mode, dt, value) : -1;
		if ((b && in[0] < 0) || (en && in[2] < 0))
			return -1;
		if ((cur = lp_rw_add_to(&r, "Concat", b ? in : in + 1, 1 + !!b + !!en, -1)) < 0 ||
		    lp_rw_int(&r, "axis", i))
			return -1;
		d[i] += b + en;
	}
	in[0] = cur;
	*pi = r.pos;
	return lp_rw_become(&r, "Identity", in, 1);
}

int lw_split_wide_pad(struct ir_graph *g, const struct ipu_target *t, int64_t fold_limit,
		      struct ir_error *e)
{
	struct ir_infer_opts io = { .fold = 1, .fold_limit = fold_limit };
	uint64_t budget = lp_op_budget(g, t);
	int any = 0;

	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];
		const struct ir_value *x, *pv, *cv, *o;
		int64_t in_row = 1, out_row = 1;
		int k = 0, rank;
		const char *ms;

		if (n->dead || n->opid != IR_OP_Pad || (n->nin > 3 && n->in[3] >= 0))
			continue;
		x = &g->vals[n->in[0]];
		pv = &g->vals[n->in[1]];
		cv = n->nin > 2 && n->in[2] >= 0 ? &g->vals[n->in[2]] : NULL;
		o = &g->vals[n->out[0]];
		rank = x->rank;
		ms = ir_attr_str(n, "mode", "constant");
		if (!ir_value_has_shape(x) || !ir_value_has_shape(o) || !pv->data || (cv && !cv->data) ||
		    x->data || ir_value_numel(pv) != 2 * rank || !lw_dtype(x->dtype) ||
		    (strcmp(ms, "constant") && strcmp(ms, "edge") && strcmp(ms, "reflect")))
			continue;
		/* the lowering's rows: from the first padded dim on */
		while (k < rank - 1 && !ir_get_i(pv->data, pv->dtype, (size_t)k) &&
		       !ir_get_i(pv->data, pv->dtype, (size_t)(k + rank)))
			k++;
		for (int j = k; j < rank; j++) {
			in_row *= x->dims[j];
			out_row *= o->dims[j];
		}
		if ((uint64_t)(in_row + out_row) * ir_dtype_size(x->dtype) <= budget)
			continue;
		/* reflect needs each pad shorter than its dim (ONNX's rule) */
		if (!strcmp(ms, "reflect")) {
			int ok = 1;

			for (int j = 0; j < rank; j++)
				ok &= ir_get_i(pv->data, pv->dtype, (size_t)j) < x->dims[j] &&
				      ir_get_i(pv->data, pv->dtype, (size_t)(j + rank)) < x->dims[j];
			if (!ok)
				continue;
		}
		if (split_one(g, &i, e))
			return -1;
		any = 1;
	}
	if (!any)
		return 0;
	ir_graph_link(g);
	return ir_infer(g, &io, e);
}
