/* SPDX-License-Identifier: MIT */
/* eval_resize.c - Resize (nearest, linear) in any rank, all ONNX coordinate
 * transformation modes except cubic interpolation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "ir/opgeom.h"

#define R IR_MAX_RANK

/* lout_f: the resized length before flooring (in * scale) as the ONNX
 * reference uses it for align_corners. */
int ir_ev_resize(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	const struct ir_tensor *roi = nin > 1 ? in[1] : NULL, *sc = nin > 2 ? in[2] : NULL;
	const char *ctm = ir_attr_str(n, "coordinate_transformation_mode", "half_pixel");
	const char *mode = ir_attr_str(n, "mode", "nearest");
	int taps = !strcmp(mode, "cubic") ? 4 : !strcmp(mode, "linear") ? 2 : 1;
	double extrap = ir_attr_float(n, "extrapolation_value", 0.0);
	int crop = !strcmp(ctm, "tf_crop_and_resize");
	int rank = x->rank;
	int64_t *idx[R] = { 0 };	/* [o * taps + t] */
	double *w[R] = { 0 };
	char *oob[R] = { 0 };
	int64_t xs[R], id[R] = { 0 }, cnt = ev_numel(out), combos = 1;
	size_t es = ir_dtype_size(x->dtype);
	int r = -1;

	(void)nout;
	if (crop && (!roi || ev_numel(roi) != 2 * rank))
		return ir_node_err(e, g, n, "tf_crop_and_resize needs an roi with %d values", 2 * rank);
	for (int d = rank - 1, acc = 1; d >= 0; d--) {
		xs[d] = acc;
		acc *= (int)x->dims[d];
	}
	for (int d = 0; d < rank; d++)
		combos *= taps;
	for (int d = 0; d < rank; d++) {
		int64_t lo = out->dims[d], L = x->dims[d];
		double s = sc && ev_numel(sc) ? ir_get_f(sc->data, sc->dtype, (size_t)d) :
						 (double)lo / (double)L;
		double rs = crop ? ir_get_f(roi->data, roi->dtype, (size_t)d) : 0;
		double re = crop ? ir_get_f(roi->data, roi->dtype, (size_t)(d + rank)) : 1;

		idx[d] = malloc((size_t)(lo ? lo : 1) * (size_t)taps * sizeof(int64_t));
		w[d] = malloc((size_t)(lo ? lo : 1) * (size_t)taps * sizeof(double));
		oob[d] = calloc((size_t)(lo ? lo : 1), 1);
		if (!idx[d] || !w[d] || !oob[d]) {
			ir_err(e, "out of memory");
			goto out;
		}
		ir_resize_taps(n, L, lo, sc && ev_numel(sc) ? s : 0, rs, re, taps, idx[d], w[d], oob[d]);
	}
	for (int64_t i = 0; i < cnt; i++) {
		int outside = 0;

		for (int d = 0; d < rank; d++)
			outside |= oob[d][id[d]];
		if (outside) {
			ir_set_f(out->data, out->dtype, (size_t)i, extrap);
		} else if (taps == 1) {
			int64_t off = 0;

			for (int d = 0; d < rank; d++)
				off += idx[d][id[d]] * xs[d];
			memcpy((char *)out->data + (size_t)i * es, (char *)x->data + (size_t)off * es, es);
		} else {
			double acc = 0;

			for (int64_t c = 0; c < combos; c++) {
				double wt = 1;
				int64_t off = 0, rem = c;

				for (int d = 0; d < rank && wt != 0; d++) {
					int t = (int)(rem % taps);

					rem /= taps;
					wt *= w[d][id[d] * taps + t];
					off += idx[d][id[d] * taps + t] * xs[d];
				}
				if (wt != 0)
					acc += wt * ir_get_f(x->data, x->dtype, (size_t)off);
			}
			ir_set_f(out->data, out->dtype, (size_t)i, acc);
		}
		for (int d = rank - 1; d >= 0; d--) {
			if (++id[d] < out->dims[d])
				break;
			id[d] = 0;
		}
	}
	r = 0;
out:
	for (int d = 0; d < rank; d++) {
		free(idx[d]);
		free(w[d]);
		free(oob[d]);
	}
	return r;
}
