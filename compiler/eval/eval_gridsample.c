/* SPDX-License-Identifier: MIT */
/* eval_gridsample.c - GridSample as ONNX (and PyTorch's grid_sample)
 * define it: grid coordinates in [-1, 1] unnormalised with or without
 * align_corners; border clips and reflection reflects the coordinate
 * (each tap's, for bicubic); taps outside the image read 0. */
#include <math.h>
#include <string.h>

#include "eval_internal.h"

enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECT };

static double unnormalise(double c, int64_t size, int align)
{
	return align ? (c + 1) / 2 * (double)(size - 1) : ((c + 1) * (double)size - 1) / 2;
}

static double reflect(double c, double twice_lo, double twice_hi)
{
	double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2, extra, flips;

	if (twice_lo == twice_hi)
		return 0;
	c = fabs(c - lo);
	extra = fmod(c, span);
	flips = floor(c / span);
	return fmod(flips, 2) == 0 ? extra + lo : span - extra + lo;
}

/* The padding mode applied to a coordinate. */
static double pad_coord(double c, int64_t size, int pad, int align)
{
	if (pad == PAD_REFLECT)
		c = align ? reflect(c, 0, 2.0 * (double)(size - 1)) : reflect(c, -1, 2.0 * (double)size - 1);
	if (pad != PAD_ZEROS)
		c = fmin(fmax(c, 0), (double)(size - 1));
	return c;
}

static double at(const struct ir_tensor *x, int64_t base, int64_t H, int64_t W, int64_t y, int64_t xx)
{
	if (y < 0 || y >= H || xx < 0 || xx >= W)
		return 0;
	return ir_get_f(x->data, x->dtype, (size_t)(base + y * W + xx));
}

static void cubic(double t, double *w)
{
	const double A = -0.75;

	w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
	w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
	w[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
	w[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

int ir_ev_gridsample(const struct ir_graph *g, const struct ir_node *n,
		     const struct ir_tensor *const *in, int nin,
		     struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *gr = in[1];
	const char *mode = ir_attr_str(n, "mode", "bilinear"), *ps = ir_attr_str(n, "padding_mode", "zeros");
	int align = (int)ir_attr_int(n, "align_corners", 0);
	int pad = !strcmp(ps, "border") ? PAD_BORDER : !strcmp(ps, "reflection") ? PAD_REFLECT : PAD_ZEROS;
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t Ho = gr->dims[1], Wo = gr->dims[2];

	(void)g; (void)nin; (void)nout; (void)e;
	for (int64_t b = 0; b < N; b++)
		for (int64_t oy = 0; oy < Ho; oy++)
			for (int64_t ox = 0; ox < Wo; ox++) {
				size_t gi = (size_t)(((b * Ho + oy) * Wo + ox) * 2);
				double fx = unnormalise(ir_get_f(gr->data, gr->dtype, gi), W, align);
				double fy = unnormalise(ir_get_f(gr->data, gr->dtype, gi + 1), H, align);

				for (int64_t c = 0; c < C; c++) {
					int64_t base = (b * C + c) * H * W;
					double v = 0;

					if (!strcmp(mode, "bicubic")) {
						double wx[4], wy[4], x0 = floor(fx), y0 = floor(fy);

						cubic(fx - x0, wx);
						cubic(fy - y0, wy);
						for (int j = 0; j < 4; j++)
							for (int i = 0; i < 4; i++) {
								double tx = pad_coord(x0 - 1 + i, W, pad, align);
								double ty = pad_coord(y0 - 1 + j, H, pad, align);

								v += wx[i] * wy[j] * at(x, base, H, W, (int64_t)ty, (int64_t)tx);
							}
					} else {
						double px = pad_coord(fx, W, pad, align), py = pad_coord(fy, H, pad, align);

						if (!strcmp(mode, "nearest")) {
							v = at(x, base, H, W, (int64_t)nearbyint(py), (int64_t)nearbyint(px));
						} else {
							double x0 = floor(px), y0 = floor(py), tx = px - x0, ty = py - y0;
							int64_t ix = (int64_t)x0, iy = (int64_t)y0;

							v = at(x, base, H, W, iy, ix) * (1 - tx) * (1 - ty) +
							    at(x, base, H, W, iy, ix + 1) * tx * (1 - ty) +
							    at(x, base, H, W, iy + 1, ix) * (1 - tx) * ty +
							    at(x, base, H, W, iy + 1, ix + 1) * tx * ty;
						}
					}
					ir_set_f(out->data, out->dtype, (size_t)(((b * C + c) * Ho + oy) * Wo + ox), v);
				}
			}
	return 0;
}
