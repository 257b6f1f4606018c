/* SPDX-License-Identifier: MIT */
/*
 * prepare_dft.c - DFT as one MatMul by a constant matrix (its decompose
 * hook): the transformed axis and the real/imaginary pair moved last and
 * flattened, x [rows, N * c] times M [N * c, K * 2], where for the input
 * sample t and output frequency k, with a = -+2 pi (k t mod L) / L
 * (L the DFT length, inputs beyond it ignored as the evaluator does) and
 * s = 1 or 1/L for the inverse:
 *   re_k += s (cos a  re_t - sin a  im_t),  im_k += s (sin a  re_t + cos a  im_t)
 * then moved back.  A constant dft_length is required (it sets shapes).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prepare_rw.h"

int lp_dec_dft(struct ir_graph *g, int *pi, struct ir_error *e)
{
	struct ir_node *n = &g->nodes[*pi];
	const struct ir_value *xv = &g->vals[n->in[0]], *ov = &g->vals[n->out[0]];
	const struct ir_value *lv = n->nin > 1 && n->in[1] >= 0 ? &g->vals[n->in[1]] : NULL;
	int r = xv->rank, a = (int)ir_attr_int(n, "axis", 1), inv = (int)ir_attr_int(n, "inverse", 0);
	int64_t N, K, L, xc, rows = 1, perm[IR_MAX_RANK], d[IR_MAX_RANK], md[2];
	int x = n->in[0], dt = xv->dtype, y, mv, in[2];
	struct lp_rw rw = { g, *pi, "", e };
	struct ir_tensor m;

	if (!ir_dtype_is_float(dt) || r < 2 || r > IR_MAX_RANK || (lv && !lv->data))
		return 0;
	if (a < 0)
		a += r;
	if (a < 0 || a >= r - 1)
		return 0;
	N = xv->dims[a];
	K = ov->dims[a];
	xc = xv->dims[r - 1];
	L = lv ? ir_get_i(lv->data, lv->dtype, 0) : N;
	if (L < 1 || (xc != 1 && xc != 2))
		return 0;
	snprintf(rw.name, sizeof(rw.name), "%s", n->name);
	/* [.., N, .., c] -> [.., .., N, c] -> [rows, N * c] */
	for (int i = 0, k = 0; i < r - 1; i++)
		if (i != a)
			perm[k++] = i;
	perm[r - 2] = a;
	perm[r - 1] = r - 1;
	for (int i = 0; i < r - 1; i++)
		if (i != a)
			rows *= xv->dims[i];
	md[0] = rows;
	md[1] = N * xc;
	if ((x = lp_rw_add(&rw, "Transpose", x, -1)) < 0 ||
	    ir_attr_set_ints(&g->nodes[rw.pos - 1], "perm", perm, (size_t)r, e) ||
	    (y = lp_rw_shape(&rw, md, 2)) < 0 || (x = lp_rw_add(&rw, "Reshape", x, y)) < 0)
		return -1;
	md[0] = N * xc;
	md[1] = K * 2;
	if ((mv = ir_value_add_unique(g, "dft_matrix", e)) < 0 || ir_tensor_alloc(&m, dt, 2, md, e))
		return -1;
	memset(m.data, 0, ir_tensor_bytes(&m));
	for (int64_t t = 0; t < N && t < L; t++)
		for (int64_t k = 0; k < K; k++) {
			double ang = (inv ? 2 : -2) * M_PI * (double)(k * t % L) / (double)L;
			double s = inv ? 1.0 / (double)L : 1.0, c = cos(ang) * s, sn = sin(ang) * s;

			ir_set_f(m.data, dt, (size_t)((t * xc) * K * 2 + k * 2), c);
			ir_set_f(m.data, dt, (size_t)((t * xc) * K * 2 + k * 2 + 1), sn);
			if (xc == 2) {
				ir_set_f(m.data, dt, (size_t)((t * xc + 1) * K * 2 + k * 2), -sn);
				ir_set_f(m.data, dt, (size_t)((t * xc + 1) * K * 2 + k * 2 + 1), c);
			}
		}
	ir_value_set_const(&g->vals[mv], &m);
	if ((y = lp_rw_add(&rw, "MatMul", x, mv)) < 0)
		return -1;
	/* [rows, K * 2] -> [.., .., K, 2] -> the output's order */
	xv = &g->vals[g->nodes[rw.pos].in[0]];
	for (int i = 0, k = 0; i < r - 1; i++)
		if (i != a)
			d[k++] = xv->dims[i];
	d[r - 2] = K;
	d[r - 1] = 2;
	for (int i = 0; i < a; i++)
		perm[i] = i;
	perm[a] = r - 2;
	for (int i = a + 1; i < r - 1; i++)
		perm[i] = i - 1;
	perm[r - 1] = r - 1;
	if ((x = lp_rw_shape(&rw, d, r)) < 0 || (y = lp_rw_add(&rw, "Reshape", y, x)) < 0)
		return -1;
	in[0] = y;
	*pi = rw.pos;
	if (lp_rw_become(&rw, "Transpose", in, 1))
		return -1;
	return ir_attr_set_ints(&g->nodes[rw.pos], "perm", perm, (size_t)r, e);
}
