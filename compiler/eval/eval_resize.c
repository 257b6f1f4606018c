/* SPDX-License-Identifier: MIT */
/* eval_resize.c - Resize (nearest, linear) in any rank, all ONNX coordinate
 * transformation modes except cubic interpolation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

#define R IR_MAX_RANK

/* lout_f: the resized length before flooring (in * scale) as the ONNX
 * reference uses it for align_corners. */
static double src_coord(const char *mode, double x, double scale, int64_t lin,
			int64_t lout, double lout_f, double roi_s, double roi_e)
{
	if (!strcmp(mode, "half_pixel"))
		return (x + 0.5) / scale - 0.5;
	if (!strcmp(mode, "pytorch_half_pixel"))
		return lout > 1 ? (x + 0.5) / scale - 0.5 : 0;
	if (!strcmp(mode, "align_corners"))
		return lout == 1 ? 0 : x * (double)(lin - 1) / (lout_f - 1);
	if (!strcmp(mode, "tf_half_pixel_for_nn"))
		return (x + 0.5) / scale;
	if (!strcmp(mode, "tf_crop_and_resize"))
		return lout > 1 ? roi_s * (double)(lin - 1) +
					  x * (roi_e - roi_s) * (double)(lin - 1) / (double)(lout - 1) :
				  0.5 * (roi_s + roi_e) * (double)(lin - 1);
	return x / scale; /* asymmetric */
}

static int64_t nearest(const char *m, double x)
{
	if (!strcmp(m, "floor"))
		return (int64_t)floor(x);
	if (!strcmp(m, "ceil"))
		return (int64_t)ceil(x);
	if (!strcmp(m, "round_prefer_ceil"))
		return (int64_t)floor(x + 0.5);
	/* round_prefer_floor */
	if (x == floor(x) + 0.5)
		return (int64_t)floor(x);
	return (int64_t)floor(x + 0.5);
}

static int resize(const struct ir_graph *g, const struct ir_node *n,
		  const struct ir_tensor *const *in, int nin,
		  struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	const struct ir_tensor *roi = nin > 1 ? in[1] : NULL, *sc = nin > 2 ? in[2] : NULL;
	const char *ctm = ir_attr_str(n, "coordinate_transformation_mode", "half_pixel");
	const char *nm = ir_attr_str(n, "nearest_mode", "round_prefer_floor");
	int lin = !strcmp(ir_attr_str(n, "mode", "nearest"), "linear");
	double extrap = ir_attr_float(n, "extrapolation_value", 0.0);
	int crop = !strcmp(ctm, "tf_crop_and_resize");
	int rank = x->rank;
	int64_t *i0[R] = { 0 }, *i1[R] = { 0 };
	double *w[R] = { 0 };
	char *oob[R] = { 0 };
	int64_t xs[R], id[R] = { 0 }, cnt = ev_numel(out);
	int r = -1;

	(void)nout;
	if (crop && (!roi || ev_numel(roi) != 2 * rank))
		return ir_node_err(e, g, n, "tf_crop_and_resize needs an roi with %d values", 2 * rank);
	for (int d = rank - 1, acc = 1; d >= 0; d--) {
		xs[d] = acc;
		acc *= (int)x->dims[d];
	}
	for (int d = 0; d < rank; d++) {
		int64_t lo = out->dims[d];
		double s = sc && ev_numel(sc) ? ir_get_f(sc->data, sc->dtype, (size_t)d) :
						 (double)lo / (double)x->dims[d];
		double rs = crop ? ir_get_f(roi->data, roi->dtype, (size_t)d) : 0;
		double re = crop ? ir_get_f(roi->data, roi->dtype, (size_t)(d + rank)) : 1;

		i0[d] = malloc((size_t)(lo ? lo : 1) * sizeof(int64_t));
		i1[d] = malloc((size_t)(lo ? lo : 1) * sizeof(int64_t));
		w[d] = malloc((size_t)(lo ? lo : 1) * sizeof(double));
		oob[d] = calloc((size_t)(lo ? lo : 1), 1);
		if (!i0[d] || !i1[d] || !w[d] || !oob[d]) {
			ir_err(e, "out of memory");
			goto out;
		}
		for (int64_t o = 0; o < lo; o++) {
			double lf = sc && ev_numel(sc) ? (double)x->dims[d] * s : (double)lo;
			double c = src_coord(ctm, (double)o, s, x->dims[d], lo, lf, rs, re);
			int64_t L = x->dims[d];

			if (crop && (c < 0 || c > (double)(L - 1)))
				oob[d][o] = 1;
			if (lin) {
				double f = floor(c);
				int64_t a = (int64_t)f, b = a + 1;

				w[d][o] = c - f;
				i0[d][o] = a < 0 ? 0 : a >= L ? L - 1 : a;
				i1[d][o] = b < 0 ? 0 : b >= L ? L - 1 : b;
			} else {
				int64_t a = nearest(nm, c);

				i0[d][o] = i1[d][o] = a < 0 ? 0 : a >= L ? L - 1 : a;
				w[d][o] = 0;
			}
		}
	}
	for (int64_t i = 0; i < cnt; i++) {
		double acc = 0;
		int outside = 0;

		for (int d = 0; d < rank; d++)
			outside |= oob[d][id[d]];
		if (outside) {
			ir_set_f(out->data, out->dtype, (size_t)i, extrap);
		} else if (!lin) {
			int64_t off = 0;

			for (int d = 0; d < rank; d++)
				off += i0[d][id[d]] * xs[d];
			memcpy((char *)out->data + i * (int64_t)ir_dtype_size(x->dtype),
			       (char *)x->data + off * (int64_t)ir_dtype_size(x->dtype), ir_dtype_size(x->dtype));
		} else {
			for (int corner = 0; corner < (1 << rank); corner++) {
				double wt = 1;
				int64_t off = 0;

				for (int d = 0; d < rank; d++) {
					int hi = (corner >> d) & 1;
					double wd = w[d][id[d]];

					if (wd == 0 && hi) {
						wt = 0;
						break;
					}
					wt *= hi ? wd : 1 - wd;
					off += (hi ? i1[d][id[d]] : i0[d][id[d]]) * xs[d];
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
		free(i0[d]);
		free(i1[d]);
		free(w[d]);
		free(oob[d]);
	}
	return r;
}

const struct ir_eval_op ir_eval_resize[] = {
	{ "Resize", resize },
	{ NULL, NULL },
};
