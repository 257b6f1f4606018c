/* SPDX-License-Identifier: MIT */
/* eval_nn.c - matmul, gemm, conv, conv-transpose, pooling. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

#define R IR_MAX_RANK

/* The tensor as doubles (malloc'ed). */
static double *to_f64(const struct ir_tensor *t, struct ir_error *e)
{
	int64_t n = ev_numel(t);
	double *d = malloc((size_t)(n ? n : 1) * sizeof(double));

	if (!d) {
		ir_err(e, "out of memory");
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		d[i] = ir_get_f(t->data, t->dtype, (size_t)i);
	return d;
}

static void from_f64(struct ir_tensor *t, const double *d)
{
	int64_t n = ev_numel(t);

	for (int64_t i = 0; i < n; i++)
		ir_set_f(t->data, t->dtype, (size_t)i, d[i]);
}

int ir_ev_matmul(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *a = in[0], *b = in[1];
	int64_t M = a->rank > 1 ? a->dims[a->rank - 2] : 1;
	int64_t K = a->dims[a->rank - 1];
	int64_t N = b->rank > 1 ? b->dims[b->rank - 1] : 1;
	struct ir_tensor ob = { 0 }, ab = { 0 }, bb = { 0 };
	int64_t nb, *ao = NULL, *bo = NULL;
	double *A = to_f64(a, e), *B = A ? to_f64(b, e) : NULL, *C = NULL;
	int r = -1;

	(void)g; (void)n; (void)nin; (void)nout;
	if (!B)
		goto out;
	ab.rank = a->rank > 2 ? a->rank - 2 : 0;
	memcpy(ab.dims, a->dims, (size_t)ab.rank * sizeof(int64_t));
	bb.rank = b->rank > 2 ? b->rank - 2 : 0;
	memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
	ir_broadcast(ab.rank, ab.dims, bb.rank, bb.dims, &ob.rank, ob.dims);
	nb = ir_numel(ob.rank, ob.dims);
	ao = malloc((size_t)(nb ? nb : 1) * sizeof(int64_t));
	bo = malloc((size_t)(nb ? nb : 1) * sizeof(int64_t));
	C = malloc((size_t)(nb * M * N > 0 ? nb * M * N : 1) * sizeof(double));
	if (!ao || !bo || !C) {
		ir_err(e, "out of memory");
		goto out;
	}
	ir_broadcast_offsets(ob.rank, ob.dims, ab.rank, ab.dims, ao);
	ir_broadcast_offsets(ob.rank, ob.dims, bb.rank, bb.dims, bo);
	for (int64_t p = 0; p < nb; p++) {
		const double *Ap = A + ao[p] * M * K, *Bp = B + bo[p] * K * N;
		double *Cp = C + p * M * N;

		/* i-k-j order: the inner loop runs over contiguous rows */
		for (int64_t i = 0; i < M; i++) {
			double *cr = Cp + i * N;

			for (int64_t j = 0; j < N; j++)
				cr[j] = 0;
			for (int64_t k = 0; k < K; k++) {
				double av = Ap[i * K + k];
				const double *br = Bp + k * N;

				for (int64_t j = 0; j < N; j++)
					cr[j] += av * br[j];
			}
		}
	}
	from_f64(out, C);
	r = 0;
out:
	free(A);
	free(B);
	free(C);
	free(ao);
	free(bo);
	return r;
}

int ir_ev_gemm(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *a = in[0], *b = in[1], *c = nin > 2 ? in[2] : NULL;
	int ta = (int)ir_attr_int(n, "transA", 0), tb = (int)ir_attr_int(n, "transB", 0);
	double alpha = ir_attr_float(n, "alpha", 1.0), beta = ir_attr_float(n, "beta", 1.0);
	int64_t M = out->dims[0], N = out->dims[1], K = ta ? a->dims[0] : a->dims[1];
	double *A = to_f64(a, e), *B = A ? to_f64(b, e) : NULL, *C = NULL;
	int64_t *co = NULL;
	int r = -1;

	(void)g; (void)nout;
	if (!B)
		goto out;
	C = malloc((size_t)(M * N > 0 ? M * N : 1) * sizeof(double));
	if (!C || (c && !(co = ev_bcast(out, c, e)))) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;

			for (int64_t k = 0; k < K; k++)
				s += A[ta ? k * M + i : i * K + k] * B[tb ? j * K + k : k * N + j];
			s *= alpha;
			if (c)
				s += beta * ir_get_f(c->data, c->dtype, (size_t)co[i * N + j]);
			C[i * N + j] = s;
		}
	from_f64(out, C);
	r = 0;
out:
	free(A);
	free(B);
	free(C);
	free(co);
	return r;
}

/* Window geometry padded to 3 spatial dims (leading dims of size 1). */
struct win3 {
	int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
};

static void to3(const struct ir_window *w, struct win3 *v)
{
	int off = 3 - w->nsp;

	for (int i = 0; i < 3; i++) {
		int j = i - off;

		v->in[i] = j >= 0 ? w->in[j] : 1;
		v->k[i] = j >= 0 ? w->k[j] : 1;
		v->s[i] = j >= 0 ? w->s[j] : 1;
		v->d[i] = j >= 0 ? w->d[j] : 1;
		v->pb[i] = j >= 0 ? w->pb[j] : 0;
		v->pe[i] = j >= 0 ? w->pe[j] : 0;
		v->out[i] = j >= 0 ? w->out[j] : 1;
	}
}

int ir_ev_conv(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *w = in[1], *b = nin > 2 ? in[2] : NULL;
	int64_t G = ir_attr_int(n, "group", 1), NB = x->dims[0], C = x->dims[1];
	int64_t M = out->dims[1], cg = C / G, mg = M / G;
	struct ir_window win;
	struct win3 v;
	double *X = NULL, *W = NULL, *Y = NULL;
	int r = -1;
	int64_t isz, osz, ksz;

	(void)nout;
	if (ir_window_conv(g, n, x->rank - 2, x->dims + 2, w->dims + 2, 0, &win, e))
		return -1;
	to3(&win, &v);
	isz = v.in[0] * v.in[1] * v.in[2];
	osz = v.out[0] * v.out[1] * v.out[2];
	ksz = v.k[0] * v.k[1] * v.k[2];
	X = to_f64(x, e);
	W = X ? to_f64(w, e) : NULL;
	Y = W ? calloc((size_t)(ev_numel(out) ? ev_numel(out) : 1), sizeof(double)) : NULL;
	if (!Y) {
		ir_err(e, "out of memory");
		goto out;
	}
	/* Kernel positions outside, output rows inside: the innermost loop
	 * runs over a contiguous output row (double accumulation). */
	for (int64_t nn = 0; nn < NB; nn++)
		for (int64_t m = 0; m < M; m++) {
			int64_t grp = m / mg;
			double bias = b ? ir_get_f(b->data, b->dtype, (size_t)m) : 0;
			double *yp = Y + (nn * M + m) * osz;

			for (int64_t i = 0; i < osz; i++)
				yp[i] = bias;
			for (int64_t c = 0; c < cg; c++) {
				const double *xp = X + (nn * C + grp * cg + c) * isz;
				const double *wp = W + (m * cg + c) * ksz;

				for (int64_t kd = 0; kd < v.k[0]; kd++)
				for (int64_t kh = 0; kh < v.k[1]; kh++)
				for (int64_t kw = 0; kw < v.k[2]; kw++) {
					double wv = wp[(kd * v.k[1] + kh) * v.k[2] + kw];
					int64_t offw = kw * v.d[2] - v.pb[2];
					int64_t ow0 = 0, ow1 = v.out[2];

					/* ow with 0 <= ow*s + offw < in */
					while (ow0 < ow1 && ow0 * v.s[2] + offw < 0)
						ow0++;
					while (ow1 > ow0 && (ow1 - 1) * v.s[2] + offw >= v.in[2])
						ow1--;
					for (int64_t od = 0; od < v.out[0]; od++) {
						int64_t id = od * v.s[0] - v.pb[0] + kd * v.d[0];

						if (id < 0 || id >= v.in[0])
							continue;
						for (int64_t oh = 0; oh < v.out[1]; oh++) {
							int64_t ih = oh * v.s[1] - v.pb[1] + kh * v.d[1];
							const double *xr;
							double *yr;

							if (ih < 0 || ih >= v.in[1])
								continue;
							xr = xp + (id * v.in[1] + ih) * v.in[2];
							yr = yp + (od * v.out[1] + oh) * v.out[2];
							for (int64_t ow = ow0; ow < ow1; ow++)
								yr[ow] += wv * xr[ow * v.s[2] + offw];
						}
					}
				}
			}
		}
	from_f64(out, Y);
	r = 0;
out:
	free(X);
	free(W);
	free(Y);
	return r;
}

int ir_ev_convtranspose(const struct ir_graph *g, const struct ir_node *n,
			const struct ir_tensor *const *in, int nin,
			struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *w = in[1], *b = nin > 2 ? in[2] : NULL;
	int64_t G = ir_attr_int(n, "group", 1), NB = x->dims[0], C = x->dims[1];
	int64_t M = out->dims[1], cg = C / G, mg = M / G;
	struct ir_window win;
	struct win3 v;
	double *X = NULL, *W = NULL, *Y = NULL;
	int64_t isz, osz, ksz;
	int r = -1;

	(void)nout;
	if (ir_window_convtranspose(g, n, x->rank - 2, x->dims + 2, w->dims + 2, &win, e))
		return -1;
	to3(&win, &v);
	isz = v.in[0] * v.in[1] * v.in[2];
	osz = v.out[0] * v.out[1] * v.out[2];
	ksz = v.k[0] * v.k[1] * v.k[2];
	X = to_f64(x, e);
	W = X ? to_f64(w, e) : NULL;
	Y = W ? calloc((size_t)(ev_numel(out) ? ev_numel(out) : 1), sizeof(double)) : NULL;
	if (!Y) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int64_t nn = 0; nn < NB; nn++)
		for (int64_t c = 0; c < C; c++) {
			int64_t grp = c / cg;
			const double *xp = X + (nn * C + c) * isz;

			for (int64_t mm = 0; mm < mg; mm++) {
				int64_t m = grp * mg + mm;
				const double *wp = W + (c * mg + mm) * ksz;
				double *yp = Y + (nn * M + m) * osz;

				for (int64_t id = 0; id < v.in[0]; id++)
				for (int64_t ih = 0; ih < v.in[1]; ih++)
				for (int64_t iw = 0; iw < v.in[2]; iw++) {
					double xv = xp[(id * v.in[1] + ih) * v.in[2] + iw];

					for (int64_t kd = 0; kd < v.k[0]; kd++) {
						int64_t od = id * v.s[0] + kd * v.d[0] - v.pb[0];

						if (od < 0 || od >= v.out[0])
							continue;
						for (int64_t kh = 0; kh < v.k[1]; kh++) {
							int64_t oh = ih * v.s[1] + kh * v.d[1] - v.pb[1];

							if (oh < 0 || oh >= v.out[1])
								continue;
							for (int64_t kw = 0; kw < v.k[2]; kw++) {
								int64_t ow = iw * v.s[2] + kw * v.d[2] - v.pb[2];

								if (ow < 0 || ow >= v.out[2])
									continue;
								yp[(od * v.out[1] + oh) * v.out[2] + ow] +=
									xv * wp[(kd * v.k[1] + kh) * v.k[2] + kw];
							}
						}
					}
				}
			}
		}
	if (b)
		for (int64_t nn = 0; nn < NB; nn++)
			for (int64_t m = 0; m < M; m++)
				for (int64_t i = 0; i < osz; i++)
					Y[(nn * M + m) * osz + i] += ir_get_f(b->data, b->dtype, (size_t)m);
	from_f64(out, Y);
	r = 0;
out:
	free(X);
	free(W);
	free(Y);
	return r;
}

int ir_ev_pool(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int is_max = n->opid == IR_OP_MaxPool || n->opid == IR_OP_GlobalMaxPool;
	int global = n->opid == IR_OP_GlobalAveragePool || n->opid == IR_OP_GlobalMaxPool;
	int cip = (int)ir_attr_int(n, "count_include_pad", 0);
	struct ir_window win;
	struct win3 v;
	int64_t NC = x->dims[0] * x->dims[1], isz, osz;
	double *X = to_f64(x, e), *Y;

	(void)nin;
	if (!X)
		return -1;
	if (global) {
		memset(&win, 0, sizeof(win));
		win.nsp = x->rank - 2;
		for (int i = 0; i < win.nsp; i++) {
			win.in[i] = win.k[i] = x->dims[i + 2];
			win.s[i] = win.d[i] = win.out[i] = 1;
		}
	} else if (ir_window_conv(g, n, x->rank - 2, x->dims + 2, NULL,
				  (int)ir_attr_int(n, "ceil_mode", 0), &win, e)) {
		free(X);
		return -1;
	}
	to3(&win, &v);
	isz = v.in[0] * v.in[1] * v.in[2];
	osz = v.out[0] * v.out[1] * v.out[2];
	Y = calloc((size_t)(NC * osz > 0 ? NC * osz : 1), sizeof(double));
	if (!Y) {
		free(X);
		return ir_err(e, "out of memory");
	}
	for (int64_t c = 0; c < NC; c++)
		for (int64_t od = 0; od < v.out[0]; od++)
		for (int64_t oh = 0; oh < v.out[1]; oh++)
		for (int64_t ow = 0; ow < v.out[2]; ow++) {
			double acc = is_max ? -INFINITY : 0;
			int64_t cnt = 0, cntpad = 0, arg = 0;

			for (int64_t kd = 0; kd < v.k[0]; kd++)
			for (int64_t kh = 0; kh < v.k[1]; kh++)
			for (int64_t kw = 0; kw < v.k[2]; kw++) {
				int64_t id = od * v.s[0] - v.pb[0] + kd * v.d[0];
				int64_t ih = oh * v.s[1] - v.pb[1] + kh * v.d[1];
				int64_t iw = ow * v.s[2] - v.pb[2] + kw * v.d[2];
				int64_t off;

				if (id < v.in[0] + v.pe[0] && ih < v.in[1] + v.pe[1] &&
				    iw < v.in[2] + v.pe[2])
					cntpad++;
				if (id < 0 || id >= v.in[0] || ih < 0 || ih >= v.in[1] ||
				    iw < 0 || iw >= v.in[2])
					continue;
				off = (id * v.in[1] + ih) * v.in[2] + iw;
				cnt++;
				if (is_max) {
					if (X[c * isz + off] > acc) {
						acc = X[c * isz + off];
						arg = c * isz + off;
					}
				} else {
					acc += X[c * isz + off];
				}
			}
			if (!is_max)
				acc /= (double)(cip ? cntpad : cnt);
			Y[c * osz + (od * v.out[1] + oh) * v.out[2] + ow] = acc;
			if (nout > 1)
				ir_set_i(out[1].data, IR_I64, (size_t)(c * osz + (od * v.out[1] + oh) * v.out[2] + ow), arg);
		}
	from_f64(out, Y);
	free(X);
	free(Y);
	return 0;
}
