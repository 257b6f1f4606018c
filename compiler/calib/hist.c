/* SPDX-License-Identifier: MIT */
/*
 * hist.c - the logarithmic histogram of |x|.  Log bins because the formats
 * being calibrated are floating point: their error is relative, so every
 * octave needs the same resolution, from the tensor's smallest elements to
 * its outliers.  64 bins per octave keep a bin's representative within
 * 0.55 % of any value in it, well under the 6 % to 12 % steps of 8-bit
 * floats.
 */
#include <math.h>
#include <string.h>

#include "calib/calib.h"

void ipu_calib_hist_init(struct ipu_calib_hist *h)
{
	memset(h, 0, sizeof(*h));
}

static int bin_of(double a)
{
	double b = floor((log2(a) - IPU_CALIB_HIST_LO) * IPU_CALIB_HIST_PER_OCTAVE);

	if (b < 0)
		return 0;
	if (b >= IPU_CALIB_HIST_BINS)
		return IPU_CALIB_HIST_BINS - 1;
	return (int)b;
}

void ipu_calib_hist_add(struct ipu_calib_hist *h, const struct ir_tensor *t)
{
	int64_t n = ir_numel(t->rank, t->dims);

	if (!ir_dtype_is_float(t->dtype))
		return;
	for (int64_t i = 0; i < n; i++) {
		double a = fabs(ir_get_f(t->data, t->dtype, (size_t)i));

		if (!isfinite(a)) {
			h->nonfinite++;
			continue;
		}
		h->count++;
		if (a == 0) {
			h->zeros++;
			continue;
		}
		if (a > h->absmax)
			h->absmax = a;
		h->bins[bin_of(a)]++;
	}
}

double ipu_calib_hist_value(const struct ipu_calib_hist *h, int b)
{
	double v = exp2(IPU_CALIB_HIST_LO + (b + 0.5) / IPU_CALIB_HIST_PER_OCTAVE);

	return v > h->absmax ? h->absmax : v;
}
