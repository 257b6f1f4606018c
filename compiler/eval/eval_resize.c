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

/* Keys cubic weights of the 4 taps floor(x)-1 .. floor(x)+2. */
static void cubic(double t, double A, double *w)
{
	double x;

	x = t + 1;
	w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
	x = 1 - t;
	w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
	x = 2 - t;
	w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

static int resize(const struct ir_graph *g, const struct ir_node *n,
		  const struct ir_tensor *const *in, int nin,
		  struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	const struct ir_tensor *roi = nin > 1 ? in[1] : NULL, *sc = nin > 2 ? in[2] : NULL;
	const char *ctm = ir_attr_str(n, "coordinate_transformation_mode", "half_pixel");
	const char *nm = ir_attr_str(n, "nearest_mode", "round_prefer_floor");
	const char *mode = ir_attr_str(n, "mode", "nearest");
	int taps = !strcmp(mode, "cubic") ? 4 : !strcmp(mode, "linear") ? 2 : 1;
	double A = ir_attr_float(n, "cubic_coeff_a", -0.75);
	int excl = (int)ir_attr_int(n, "exclude_outside", 0);
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
		for (int64_t o = 0; o < lo; o++) {
			double lf = sc && ev_numel(sc) ? (double)L * s : (double)lo;
			double c = src_coord(ctm, (double)o, s, L, lo, lf, rs, re);
			int64_t *ip = idx[d] + o * taps;
			double *wp = w[d] + o * taps;

			if (crop && (c < 0 || c > (double)(L - 1)))
				oob[d][o] = 1;
			if (taps == 1) {
				int64_t a = nearest(nm, c);

				ip[0] = a < 0 ? 0 : a >= L ? L - 1 : a;
				wp[0] = 1;
			} else {
				double f = floor(c), sum = 0;
				int64_t base = (int64_t)f - (taps == 4 ? 1 : 0);

				if (taps == 2) {
					wp[0] = 1 - (c - f);
					wp[1] = c - f;
				} else {
					cubic(c - f, A, wp);
				}
				for (int t = 0; t < taps; t++) {
					int64_t a = base + t;

					if (excl && (a < 0 || a >= L))
						wp[t] = 0;
					sum += wp[t];
					ip[t] = a < 0 ? 0 : a >= L ? L - 1 : a;
				}
				if (excl && sum != 0)
					for (int t = 0; t < taps; t++)
						wp[t] /= sum;
			}
		}
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

const struct ir_eval_op ir_eval_resize[] = {
	{ "Resize", resize },
	{ NULL, NULL },
};
