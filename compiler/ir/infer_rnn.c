/* SPDX-License-Identifier: MIT */
/* infer_rnn.c - shapes of the recurrent layers LSTM, GRU and RNN. */
#include <string.h>

#include "infer_internal.h"

/* Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h and Y_c [D, B, H]
 * (layout 1: [B, D, H]) from X [T, B, I] (layout 1: [B, T, I]) and W
 * [D, gates * H, I]. */
int ir_infer_rnn(struct ir_graph *g, struct ir_node *n, struct ir_error *e)
{
	struct ir_value *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *r = ir_in(g, n, 2);
	int gates = n->opid == IR_OP_LSTM ? 4 : n->opid == IR_OP_GRU ? 3 : 1;
	const char *dir = ir_attr_str(n, "direction", "forward");
	int64_t layout = ir_attr_int(n, "layout", 0), hs = ir_attr_int(n, "hidden_size", 0);
	int64_t D, T, B, H, y[4], s[3];

	if (!x || !w || !r)
		return ir_node_err(e, g, n, "needs X, W and R");
	if (ir_need_float(g, n, 0, e))
		return -1;
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
		return ir_node_err(e, g, n, "direction '%s' is not forward, reverse or bidirectional", dir);
	if (layout != 0 && layout != 1)
		return ir_node_err(e, g, n, "layout %lld is not 0 or 1", (long long)layout);
	D = strcmp(dir, "bidirectional") ? 1 : 2;
	if (x->rank != 3 || w->rank != 3 || r->rank != 3)
		return ir_node_err(e, g, n, "X, W and R must be 3-D (ranks %d, %d, %d)", x->rank, w->rank, r->rank);
	T = layout ? x->dims[1] : x->dims[0];
	B = layout ? x->dims[0] : x->dims[1];
	H = r->dims[2];
	if (hs && hs != H)
		return ir_node_err(e, g, n, "hidden_size %lld but R is [%lld, %lld, %lld]", (long long)hs,
				   (long long)r->dims[0], (long long)r->dims[1], (long long)r->dims[2]);
	if (w->dims[0] != D || r->dims[0] != D || w->dims[1] != gates * H || r->dims[1] != gates * H ||
	    w->dims[2] != x->dims[2])
		return ir_node_err(e, g, n, "W [%lld, %lld, %lld] and R [%lld, %lld, %lld] do not fit %lld direction(s), %d gates of %lld and input size %lld",
				   (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2],
				   (long long)r->dims[0], (long long)r->dims[1], (long long)r->dims[2],
				   (long long)D, gates, (long long)H, (long long)x->dims[2]);
	if (w->dtype != x->dtype || r->dtype != x->dtype)
		return ir_node_err(e, g, n, "X, W and R must have one type");
	if (layout) {
		y[0] = B; y[1] = T; y[2] = D; y[3] = H;
		s[0] = B; s[1] = D; s[2] = H;
	} else {
		y[0] = T; y[1] = D; y[2] = B; y[3] = H;
		s[0] = D; s[1] = B; s[2] = H;
	}
	if (ir_set_out(g, n, 0, x->dtype, 4, y) || ir_set_out(g, n, 1, x->dtype, 3, s))
		return -1;
	return gates == 4 ? ir_set_out(g, n, 2, x->dtype, 3, s) : 0;
}
