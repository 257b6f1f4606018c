/* SPDX-License-Identifier: MIT */
/* opgeom.c - window geometry and broadcasting (see opgeom.h). */
#include <math.h>
#include <string.h>

#include "opgeom.h"

int ir_axis(int64_t axis, int rank)
{
	if (axis < -rank || axis >= rank)
		return -1;
	return (int)(axis < 0 ? axis + rank : axis);
}

int ir_broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *ro,
		 int64_t *o)
{
	int r = ra > rb ? ra : rb;

	for (int i = 0; i < r; i++) {
		int ia = i - (r - ra), ib = i - (r - rb);
		int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;

		if (da == db || db == 1)
			o[i] = da;
		else if (da == 1)
			o[i] = db;
		else
			return -1;
	}
	*ro = r;
	return 0;
}

void ir_broadcast_offsets(int ro, const int64_t *o, int ri, const int64_t *in,
			  int64_t *offs)
{
	int64_t stride[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 };
	int64_t n = ir_numel(ro, o), s = 1, off = 0;

	for (int i = ro - 1; i >= 0; i--) {
		int k = i - (ro - ri);

		if (k >= 0 && in[k] != 1) {
			stride[i] = s;
		} else {
			stride[i] = 0;
		}
		if (k >= 0)
			s *= in[k];
	}
	for (int64_t j = 0; j < n; j++) {
		offs[j] = off;
		for (int i = ro - 1; i >= 0; i--) {
			idx[i]++;
			off += stride[i];
			if (idx[i] < o[i])
				break;
			off -= stride[i] * idx[i];
			idx[i] = 0;
		}
	}
}

static int get_ints(const struct ir_node *n, const char *name, int nsp,
		    int64_t *dst, int64_t def, int mult)
{
	size_t cnt;
	const int64_t *v = ir_attr_ints(n, name, &cnt);

	if (!v) {
		for (int i = 0; i < nsp * mult; i++)
			dst[i] = def;
		return 0;
	}
	if (cnt != (size_t)(nsp * mult))
		return -1;
	memcpy(dst, v, cnt * sizeof(int64_t));
	return 0;
}

static int common(const struct ir_graph *g, const struct ir_node *n, int nsp,
		  const int64_t *in, const int64_t *kernel, struct ir_window *w,
		  int64_t *pads, struct ir_error *e)
{
	memset(w, 0, sizeof(*w));
	w->nsp = nsp;
	if (nsp < 1 || nsp > 3)
		return ir_node_err(e, g, n, "%d spatial dimensions; 1 to 3 are supported", nsp);
	memcpy(w->in, in, (size_t)nsp * sizeof(int64_t));
	if (kernel) {
		memcpy(w->k, kernel, (size_t)nsp * sizeof(int64_t));
	} else {
		size_t cnt;
		const int64_t *k = ir_attr_ints(n, "kernel_shape", &cnt);

		if (!k || cnt != (size_t)nsp)
			return ir_node_err(e, g, n, "attribute kernel_shape must have %d values", nsp);
		memcpy(w->k, k, cnt * sizeof(int64_t));
	}
	if (get_ints(n, "strides", nsp, w->s, 1, 1) ||
	    get_ints(n, "dilations", nsp, w->d, 1, 1) ||
	    get_ints(n, "pads", nsp, pads, 0, 2))
		return ir_node_err(e, g, n, "strides/dilations need %d values and pads %d", nsp, 2 * nsp);
	for (int i = 0; i < nsp; i++) {
		if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 ||
		    w->k[i] > (1 << 20) || w->s[i] > (1 << 20) || w->d[i] > (1 << 20))
			return ir_node_err(e, g, n, "kernel, strides and dilations must be in 1..2^20");
		if (pads[i] < 0 || pads[i + nsp] < 0 || pads[i] > (1 << 30) || pads[i + nsp] > (1 << 30))
			return ir_node_err(e, g, n, "pads must be in 0..2^30");
		w->pb[i] = pads[i];
		w->pe[i] = pads[i + nsp];
	}
	return 0;
}

int ir_window_conv(const struct ir_graph *g, const struct ir_node *n, int nsp,
		   const int64_t *in, const int64_t *kernel, int ceil_mode,
		   struct ir_window *w, struct ir_error *e)
{
	int64_t pads[2 * IR_MAX_RANK];
	const char *ap = ir_attr_str(n, "auto_pad", "NOTSET");

	if (common(g, n, nsp, in, kernel, w, pads, e))
		return -1;
	for (int i = 0; i < nsp; i++) {
		int64_t ext = w->d[i] * (w->k[i] - 1) + 1;

		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t out = (w->in[i] + w->s[i] - 1) / w->s[i];
			int64_t tot = (out - 1) * w->s[i] + ext - w->in[i];

			if (tot < 0)
				tot = 0;
			w->pb[i] = ap[5] == 'U' ? tot / 2 : tot - tot / 2;
			w->pe[i] = tot - w->pb[i];
			w->out[i] = out;
			continue;
		}
		if (!strcmp(ap, "VALID")) {
			w->pb[i] = w->pe[i] = 0;
		} else if (strcmp(ap, "NOTSET")) {
			return ir_node_err(e, g, n, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", ap);
		}
		{
			int64_t span = w->in[i] + w->pb[i] + w->pe[i] - ext;

			if (span < 0)
				return ir_node_err(e, g, n, "window (%lld) larger than the padded input (%lld) on spatial axis %d",
						   (long long)ext, (long long)(w->in[i] + w->pb[i] + w->pe[i]), i);
			w->out[i] = span / w->s[i] + 1;
			if (ceil_mode && span % w->s[i]) {
				w->out[i]++;
				/* the last window must start inside the input
				 * or the left padding */
				if ((w->out[i] - 1) * w->s[i] >= w->in[i] + w->pb[i])
					w->out[i]--;
			}
		}
	}
	return 0;
}

int ir_window_convtranspose(const struct ir_graph *g, const struct ir_node *n,
			    int nsp, const int64_t *in, const int64_t *kernel,
			    struct ir_window *w, struct ir_error *e)
{
	int64_t pads[2 * IR_MAX_RANK], op[IR_MAX_RANK];
	size_t cnt;
	const int64_t *os = ir_attr_ints(n, "output_shape", &cnt);
	const char *ap = ir_attr_str(n, "auto_pad", "NOTSET");

	if (common(g, n, nsp, in, kernel, w, pads, e))
		return -1;
	if (get_ints(n, "output_padding", nsp, op, 0, 1))
		return ir_node_err(e, g, n, "output_padding needs %d values", nsp);
	for (int i = 0; i < nsp; i++)
		if (op[i] < 0 || op[i] > (1 << 20))
			return ir_node_err(e, g, n, "output_padding must be in 0..2^20");
	for (size_t i = 0; os && i < cnt; i++)
		if (os[i] < 0 || os[i] > ((int64_t)1 << 40))
			return ir_node_err(e, g, n, "output_shape values must be in 0..2^40");
	if (os && cnt != (size_t)nsp && cnt != (size_t)nsp + 2)
		return ir_node_err(e, g, n, "output_shape needs %d values", nsp);
	for (int i = 0; i < nsp; i++) {
		int64_t ext = w->d[i] * (w->k[i] - 1) + 1;
		int64_t full = w->s[i] * (w->in[i] - 1) + op[i] + ext;
		int64_t target = -1;

		if (os)
			target = os[cnt == (size_t)nsp ? i : i + 2];
		else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))
			target = w->in[i] * w->s[i];
		if (target >= 0) {
			/* a negative total extends the output (floor division
			 * as in ONNX's reference) */
			int64_t tot = full - target;
			int64_t half = tot >= 0 ? tot / 2 : -((-tot + 1) / 2);

			if (!strcmp(ap, "SAME_UPPER")) {
				w->pb[i] = half;
				w->pe[i] = tot - half;
			} else {
				w->pb[i] = tot - half;
				w->pe[i] = half;
			}
			w->out[i] = target;
		} else {
			if (!strcmp(ap, "VALID"))
				w->pb[i] = w->pe[i] = 0;
			w->out[i] = full - w->pb[i] - w->pe[i];
		}
		if (w->out[i] < 1)
			return ir_node_err(e, g, n, "output size %lld on spatial axis %d", (long long)w->out[i], i);
	}
	return 0;
}

int ir_slice_resolve(int rank, const int64_t *dims, const int64_t *starts,
		     const int64_t *ends, const int64_t *axes,
		     const int64_t *steps, int nax, int64_t *start,
		     int64_t *step, int64_t *count, struct ir_error *e)
{
	int seen[IR_MAX_RANK] = { 0 };

	for (int i = 0; i < rank; i++) {
		start[i] = 0;
		step[i] = 1;
		count[i] = dims[i];
	}
	for (int j = 0; j < nax; j++) {
		int a = ir_axis(axes ? axes[j] : j, rank);
		int64_t st = steps ? steps[j] : 1, d, s, en, c;

		if (a < 0)
			return ir_err(e, "slice axis %lld is outside rank %d",
				      (long long)(axes ? axes[j] : j), rank);
		if (seen[a]++)
			return ir_err(e, "slice axis %d repeated", a);
		if (st == 0)
			return ir_err(e, "slice step 0");
		d = dims[a];
		s = starts[j];
		en = ends[j];
		if (s < 0)
			s += d;
		if (en < 0 && en > INT64_MIN + d)
			en += d;
		else if (en < 0)
			en = -1;
		if (st > 0) {
			s = s < 0 ? 0 : s > d ? d : s;
			en = en < 0 ? 0 : en > d ? d : en;
			c = en > s ? (en - s + st - 1) / st : 0;
		} else {
			s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
			en = en < -1 ? -1 : en > d - 1 ? d - 1 : en;
			c = s > en ? (s - en + (-st) - 1) / (-st) : 0;
		}
		start[a] = c ? s : 0;
		step[a] = st;
		count[a] = c;
	}
	return 0;
}

static double ir_resize_coord(const char *mode, double x, double scale, int64_t lin,
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

static int64_t rz_nearest(const char *m, double x)
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
static void rz_cubic(double t, double A, double *w)
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


void ir_resize_taps(const struct ir_node *n, int64_t L, int64_t lo, double s,
		    double rs, double re, int taps, int64_t *idx, double *w, char *oob)
{
	const char *ctm = ir_attr_str(n, "coordinate_transformation_mode", "half_pixel");
	const char *nm = ir_attr_str(n, "nearest_mode", "round_prefer_floor");
	double A = ir_attr_float(n, "cubic_coeff_a", -0.75);
	int excl = (int)ir_attr_int(n, "exclude_outside", 0);
	int crop = !strcmp(ctm, "tf_crop_and_resize");
	double lf = s > 0 ? (double)L * s : (double)lo;

	if (s <= 0)
		s = (double)lo / (double)L;
	for (int64_t o = 0; o < lo; o++) {
		double c = ir_resize_coord(ctm, (double)o, s, L, lo, lf, rs, re);
		int64_t *ip = idx + o * taps;
		double *wp = w + o * taps;

		oob[o] = crop && (c < 0 || c > (double)(L - 1));
		if (taps == 1) {
			int64_t a = rz_nearest(nm, c);

			ip[0] = a < 0 ? 0 : a >= L ? L - 1 : a;
			wp[0] = 1;
		} else {
			double f = floor(c), sum = 0;
			int64_t base = (int64_t)f - (taps == 4 ? 1 : 0);

			if (taps == 2) {
				wp[0] = 1 - (c - f);
				wp[1] = c - f;
			} else {
				rz_cubic(c - f, A, wp);
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
