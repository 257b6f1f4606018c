/* SPDX-License-Identifier: MIT */
/*
 * loss.c - the calibration losses and the scale search
 * (definitions: Documentation/compiler/calibration.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"

static const char *const loss_names[IPU_CALIB_LOSS_COUNT] = {
	[IPU_CALIB_MSE] = "mse", [IPU_CALIB_MAE] = "mae", [IPU_CALIB_SNR] = "snr",
	[IPU_CALIB_KLD] = "kld", [IPU_CALIB_COS_DIST] = "cos_dist",
};

int ipu_calib_loss_parse(const char *name, struct ir_error *e)
{
	for (int i = 0; i < IPU_CALIB_LOSS_COUNT; i++)
		if (!strcmp(name, loss_names[i]))
			return i;
	return ir_err(e, "calibration loss '%.100s' is unknown: use mse, mae, snr, kld or cos_dist", name);
}

const char *ipu_calib_loss_name(int loss)
{
	return loss >= 0 && loss < IPU_CALIB_LOSS_COUNT ? loss_names[loss] : "unknown";
}

double ipu_calib_loss_pairs(int loss, const double *x, const double *q, const double *w,
			    size_t n)
{
	double sw = 0, se2 = 0, sea = 0, sx2 = 0, sq2 = 0, sxq = 0;

	for (size_t i = 0; i < n; i++) {
		double wi = w ? w[i] : 1.0, d = q[i] - x[i];

		sw += wi;
		se2 += wi * d * d;
		sea += wi * fabs(d);
		sx2 += wi * x[i] * x[i];
		sq2 += wi * q[i] * q[i];
		sxq += wi * x[i] * q[i];
	}
	switch (loss) {
	case IPU_CALIB_MSE:
		return sw > 0 ? se2 / sw : 0;
	case IPU_CALIB_MAE:
		return sw > 0 ? sea / sw : 0;
	case IPU_CALIB_SNR:
		if (se2 == 0)
			return 0;
		return sx2 > 0 ? se2 / sx2 : INFINITY;
	case IPU_CALIB_COS_DIST:
		if (sx2 == 0 && sq2 == 0)
			return 0;
		if (sx2 == 0 || sq2 == 0)
			return 1;
		return 1 - sxq / sqrt(sx2 * sq2);
	default:
		return NAN;
	}
}

/* The nonempty bins of h (zero first) as values and weights. */
struct bins {
	size_t n;
	double *x, *w, *q;
};

static int bins_of(const struct ipu_calib_hist *h, struct bins *b)
{
	size_t n = 1;

	for (int i = 0; i < IPU_CALIB_HIST_BINS; i++)
		n += h->bins[i] != 0;
	b->x = calloc(n, sizeof(double));
	b->w = calloc(n, sizeof(double));
	b->q = calloc(n, sizeof(double));
	if (!b->x || !b->w || !b->q) {
		free(b->x);
		free(b->w);
		free(b->q);
		return -1;
	}
	b->n = 0;
	if (h->zeros) {
		b->x[b->n] = 0;
		b->w[b->n++] = (double)h->zeros;
	}
	for (int i = 0; i < IPU_CALIB_HIST_BINS; i++)
		if (h->bins[i]) {
			b->x[b->n] = ipu_calib_hist_value(h, i);
			b->w[b->n++] = (double)h->bins[i];
		}
	return 0;
}

static void bins_free(struct bins *b)
{
	free(b->x);
	free(b->w);
	free(b->q);
}

/*
 * KL(P || Q) over octaves: P is the histogram of |x| and Q that of the
 * stored values |q(x)|, both counted per octave of magnitude (plus one bin
 * for zero) and Q smoothed by IPU_CALIB_KLD_EPS.  A power-of-two scale
 * moves the format's grid by whole octaves, so rounding within the normal
 * range moves the same mass across octave boundaries at every scale: what
 * the divergence weighs is the mass that saturation piles up at the top
 * and the mass that underflow flushes to zero.
 */
#define OCTAVES (IPU_CALIB_HIST_HI - IPU_CALIB_HIST_LO)

static int octave_of(double a)
{
	int o;

	if (a == 0)
		return 0;
	o = (int)floor(log2(a)) - IPU_CALIB_HIST_LO;
	return 1 + (o < 0 ? 0 : o >= OCTAVES ? OCTAVES - 1 : o);
}

static double kld(const struct bins *b)
{
	double p[OCTAVES + 1] = { 0 }, q[OCTAVES + 1] = { 0 }, total = 0, kl = 0;
	const double eps = IPU_CALIB_KLD_EPS;

	for (size_t i = 0; i < b->n; i++) {
		p[octave_of(b->x[i])] += b->w[i];
		q[octave_of(b->q[i])] += b->w[i];
		total += b->w[i];
	}
	if (total <= 0)
		return 0;
	for (int k = 0; k <= OCTAVES; k++) {
		double pk = p[k] / total, qk = (q[k] / total + eps) / (1 + eps * (OCTAVES + 1));

		if (pk > 0)
			kl += pk * log(pk / qk);
	}
	return kl;
}

static double loss_at(const struct bins *b, const struct ipu_calib_format *f, int scale, int loss)
{
	for (size_t i = 0; i < b->n; i++)
		b->q[i] = fabs(f->quantize(f->ctx, scale, b->x[i]));
	if (loss == IPU_CALIB_KLD)
		return kld(b);
	return ipu_calib_loss_pairs(loss, b->x, b->q, b->w, b->n);
}

double ipu_calib_hist_loss(const struct ipu_calib_hist *h, const struct ipu_calib_format *f,
			   int scale, int loss)
{
	struct bins b;
	double l;

	if (bins_of(h, &b))
		return NAN;
	l = loss_at(&b, f, scale, loss);
	bins_free(&b);
	return l;
}

static int nearest_zero(const struct ipu_calib_format *f)
{
	return f->scale_min > 0 ? f->scale_min : f->scale_max < 0 ? f->scale_max : 0;
}

int ipu_calib_choose_scale(const struct ipu_calib_hist *h, const struct ipu_calib_format *f,
			   int loss, int *scale, double *best_loss, struct ir_error *e)
{
	struct bins b;
	double bl = INFINITY;

	*scale = nearest_zero(f);
	if (best_loss)
		*best_loss = 0;
	if (loss < 0 || loss >= IPU_CALIB_LOSS_COUNT)
		return ir_err(e, "calibration loss %d is unknown", loss);
	if (h->count == h->zeros)
		return 0;
	if (bins_of(h, &b))
		return ir_err(e, "out of memory");
	/* an 8-bit float rounds a normal value the same at every scale, so
	 * the loss is often flat over several scales: the smallest of them
	 * keeps the most room for small values (a relative margin keeps
	 * summation noise from deciding) */
	for (int s = f->scale_min; s <= f->scale_max; s++) {
		double l = loss_at(&b, f, s, loss);

		if (l < bl * (1 - 1e-9) || (isinf(bl) && l < bl)) {
			bl = l;
			*scale = s;
		}
	}
	bins_free(&b);
	if (best_loss)
		*best_loss = bl;
	return 0;
}
