/* SPDX-License-Identifier: MIT */
/*
 * reduce.c - REDUCE, CUMSUM and TOPK: operations along the middle axis of
 * an [outer][len][inner] view.
 *
 * Float data accumulates in double (cheap here, and exact enough that the
 * f32 result is correctly rounded in practice); i32 data in int64 with the
 * result wrapped to 32 bits.  The inner axis is processed in blocks of
 * RB columns so that the accumulators live on the stack.
 */
#include "cl_opt.h"
#include "cl_common.h"

#define RB 64u

/* Shared [outer, len, inner, ...] shape check: in = outer*len*inner. */
static int seq_check_shape(const struct ipu_vertex_ctx *v, const uint32_t *p,
			   const char *name, uint64_t *n_in, char *why,
			   size_t len)
{
	int r = cl_check_dims(p, 3, n_in, name, "outer*len*inner", why, len);

	if (r)
		return r;
	return cl_check_count(v, 0, *n_in, name, "in", "outer*len*inner", why,
			      len);
}

/* ---------------------------------------------------------------- REDUCE */

static int reduce_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p;
	uint32_t op, idt, odt;
	uint64_t n, nout;
	int r = cl_check_counts(v, "REDUCE", 2, 2, 4, 4, why, len);

	if (r)
		return r;
	p = v->params;
	op = p[0];
	if (op >= IPUX_RED_COUNT)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "REDUCE: unknown op %u", op);
	idt = v->ops[0].dtype;
	if (!cl_is_float(idt) && idt != IPUX_DT_I32)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "REDUCE: in is %s, expected F32, F16 or I32",
			      cl_dt_name(idt));
	if (idt == IPUX_DT_I32 &&
	    (op == IPUX_RED_L2 || op == IPUX_RED_LOG_SUM_EXP))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "REDUCE: op %u needs a float input", op);
	odt = (op == IPUX_RED_ARGMAX || op == IPUX_RED_ARGMIN) ? IPUX_DT_I32
							       : idt;
	if (v->ops[1].dtype != odt)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "REDUCE: out is %s, expected %s",
			      cl_dt_name(v->ops[1].dtype), cl_dt_name(odt));
	r = seq_check_shape(v, p + 1, "REDUCE", &n, why, len);
	if (r)
		return r;
	if (odt == IPUX_DT_I32 && idt != IPUX_DT_I32 && p[2] > INT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "REDUCE: len %u does not fit an I32 index", p[2]);
	nout = (uint64_t)p[1] * p[3];
	return cl_check_count(v, 1, nout, "REDUCE", "out", "outer*inner", why,
			      len);
}

static uint64_t reduce_cost(const struct ipu_vertex_ctx *v)
{
	uint32_t op = v->params[0];
	uint64_t c = cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 1);

	if (op == IPUX_RED_LOG_SUM_EXP)
		c = cl_sat_mul(c, 5);
	return CL_VERTEX_OVERHEAD + c +
	       cl_cost_stream(v->ops[1].count, v->ops[1].dtype, 1);
}

/* acc[j] op= x[j] for one position l of the reduced axis. */
static void red_step(uint32_t op, double *acc, int32_t *idx,
		     const float *x, size_t n, uint32_t l, const double *mx)
{
	size_t j;

	switch (op) {
	case IPUX_RED_SUM:
	case IPUX_RED_MEAN:
		for (j = 0; j < n; j++)
			acc[j] += x[j];
		break;
	case IPUX_RED_MAX: /* NaN sticks */
		for (j = 0; j < n; j++)
			acc[j] = ((((x[j] > acc[j]) | (x[j] != x[j])) &
				   (acc[j] == acc[j])))
					 ? x[j]
					 : acc[j];
		break;
	case IPUX_RED_MIN:
		for (j = 0; j < n; j++)
			acc[j] = ((((x[j] < acc[j]) | (x[j] != x[j])) &
				   (acc[j] == acc[j])))
					 ? x[j]
					 : acc[j];
		break;
	case IPUX_RED_PROD:
		for (j = 0; j < n; j++)
			acc[j] *= x[j];
		break;
	case IPUX_RED_ARGMAX:
		for (j = 0; j < n; j++)
			if (acc[j] == acc[j] && (x[j] > acc[j] || x[j] != x[j])) {
				acc[j] = x[j];
				idx[j] = (int32_t)l;
			}
		break;
	case IPUX_RED_ARGMIN:
		for (j = 0; j < n; j++)
			if (acc[j] == acc[j] && (x[j] < acc[j] || x[j] != x[j])) {
				acc[j] = x[j];
				idx[j] = (int32_t)l;
			}
		break;
	case IPUX_RED_SUM_SQUARE:
	case IPUX_RED_L2:
		for (j = 0; j < n; j++)
			acc[j] += (double)x[j] * x[j];
		break;
	case IPUX_RED_L1:
		for (j = 0; j < n; j++)
			acc[j] += fabs((double)x[j]);
		break;
	default: /* LOG_SUM_EXP, second pass */
		for (j = 0; j < n; j++)
			if (isfinite(mx[j]))
				acc[j] += exp((double)x[j] - mx[j]);
		break;
	}
}

static void red_init(uint32_t op, double *acc, int32_t *idx, const float *x0,
		     size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		idx[j] = 0;
		switch (op) {
		case IPUX_RED_MAX: case IPUX_RED_MIN:
		case IPUX_RED_ARGMAX: case IPUX_RED_ARGMIN:
			acc[j] = x0[j];
			break;
		case IPUX_RED_PROD:
			acc[j] = 1;
			break;
		default:
			acc[j] = 0;
			break;
		}
	}
}

/*
 * Reduce one contiguous row (inner == 1) of L elements starting at element
 * base: sums use 8 independent double accumulators (vectorisable, and in
 * double the order hardly matters); MAX/MIN/ARG* run in order.
 */
static double red_row(uint32_t op, const void *in, uint32_t dt, size_t base,
		      size_t L, int32_t *arg)
{
	double acc[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, r;
	float x[CL_BLK], m = 0, best = 0;
	size_t i0, i, k;
	int32_t bi = 0;

	if (op == IPUX_RED_LOG_SUM_EXP || op == IPUX_RED_MAX ||
	    op == IPUX_RED_MIN || op == IPUX_RED_ARGMAX ||
	    op == IPUX_RED_ARGMIN) {
		int mx = op == IPUX_RED_LOG_SUM_EXP || op == IPUX_RED_MAX ||
			 op == IPUX_RED_ARGMAX;

		best = cl_getf(in, dt, base);
		for (i0 = 0; i0 < L; i0 += CL_BLK) {
			size_t b = L - i0 < CL_BLK ? L - i0 : CL_BLK;

			cl_load_f(in, dt, base + i0, x, b);
			for (i = 0; i < b; i++) {
				float e = x[i];

				if (best != best)
					break;
				if (mx ? (e > best || e != e) : (e < best || e != e)) {
					best = e;
					bi = (int32_t)(i0 + i);
				}
			}
		}
		*arg = bi;
		if (op != IPUX_RED_LOG_SUM_EXP)
			return best;
		m = best;
		if (!isfinite(m))
			return m;
	}
	if (op == IPUX_RED_PROD)
		acc[0] = 1;
	for (i0 = 0; i0 < L; i0 += CL_BLK) {
		size_t b = L - i0 < CL_BLK ? L - i0 : CL_BLK;

		cl_load_f(in, dt, base + i0, x, b);
		switch (op) {
		case IPUX_RED_PROD:
			for (i = 0; i < b; i++)
				acc[0] *= x[i];
			break;
		case IPUX_RED_SUM_SQUARE:
		case IPUX_RED_L2:
			for (i = 0; i + 8 <= b; i += 8)
				for (k = 0; k < 8; k++)
					acc[k] += (double)x[i + k] * x[i + k];
			for (; i < b; i++)
				acc[0] += (double)x[i] * x[i];
			break;
		case IPUX_RED_L1:
			for (i = 0; i < b; i++)
				x[i] = fabsf(x[i]);
			goto sum;
		case IPUX_RED_LOG_SUM_EXP:
			for (i = 0; i < b; i++)
				x[i] = cl_expf(x[i] - m);
			goto sum;
		default: /* SUM, MEAN */
		sum:
			for (i = 0; i + 8 <= b; i += 8)
				for (k = 0; k < 8; k++)
					acc[k] += x[i + k];
			for (; i < b; i++)
				acc[0] += x[i];
			break;
		}
	}
	r = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
	    ((acc[4] + acc[5]) + (acc[6] + acc[7]));
	switch (op) {
	case IPUX_RED_MEAN:
		return r / (double)L;
	case IPUX_RED_L2:
		return sqrt(r);
	case IPUX_RED_LOG_SUM_EXP:
		return m + log(r);
	default:
		return r;
	}
}

static void red_float(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t op = p[0], dt = v->ops[0].dtype, odt = v->ops[1].dtype;
	size_t outer = p[1], L = p[2], inner = p[3], o, j0, j, l;
	const void *in = IPU_OP_PTR(v, 0, const void);
	void *out = IPU_OP_PTR(v, 1, void);

	if (inner == 1) {
		for (o = 0; o < outer; o++) {
			int32_t arg = 0;
			double r = red_row(op, in, dt, o * L, L, &arg);

			if (op == IPUX_RED_ARGMAX || op == IPUX_RED_ARGMIN)
				((int32_t *)out)[o] = arg;
			else
				cl_setf(out, odt, o, (float)r);
		}
		return;
	}
	for (o = 0; o < outer; o++) {
		for (j0 = 0; j0 < inner; j0 += RB) {
			size_t jb = inner - j0 < RB ? inner - j0 : RB;
			double acc[RB], mx[RB];
			int32_t idx[RB];
			float x[RB];
			uint32_t sop = op;

			if (op == IPUX_RED_LOG_SUM_EXP) {
				/* first pass: the maximum */
				cl_load_f(in, dt, o * L * inner + j0, x, jb);
				red_init(IPUX_RED_MAX, mx, idx, x, jb);
				for (l = 1; l < L; l++) {
					cl_load_f(in, dt, (o * L + l) * inner + j0,
						  x, jb);
					red_step(IPUX_RED_MAX, mx, idx, x, jb,
						 (uint32_t)l, NULL);
				}
			}
			cl_load_f(in, dt, o * L * inner + j0, x, jb);
			red_init(sop, acc, idx, x, jb);
			for (l = (sop == IPUX_RED_MAX || sop == IPUX_RED_MIN ||
				  sop == IPUX_RED_ARGMAX || sop == IPUX_RED_ARGMIN);
			     l < L; l++) {
				if (l)
					cl_load_f(in, dt,
						  (o * L + l) * inner + j0, x,
						  jb);
				red_step(sop, acc, idx, x, jb, (uint32_t)l, mx);
			}
			for (j = 0; j < jb; j++) {
				size_t oi = o * inner + j0 + j;
				double r = acc[j];

				switch (op) {
				case IPUX_RED_ARGMAX:
				case IPUX_RED_ARGMIN:
					((int32_t *)out)[oi] = idx[j];
					continue;
				case IPUX_RED_MEAN:
					r /= (double)L;
					break;
				case IPUX_RED_L2:
					r = sqrt(r);
					break;
				case IPUX_RED_LOG_SUM_EXP:
					r = isfinite(mx[j]) ? mx[j] + log(r)
							    : mx[j];
					break;
				default:
					break;
				}
				cl_setf(out, odt, oi, (float)r);
			}
		}
	}
}

static void red_i32(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t op = p[0];
	size_t outer = p[1], L = p[2], inner = p[3], o, j, l;
	const int32_t *in = IPU_OP_PTR(v, 0, const int32_t);
	int32_t *out = IPU_OP_PTR(v, 1, int32_t);

	for (o = 0; o < outer; o++)
		for (j = 0; j < inner; j++) {
			const int32_t *x = in + o * L * inner + j;
			uint64_t acc = op == IPUX_RED_PROD ? 1 : 0;
			int32_t best = x[0], bi = 0;

			for (l = 0; l < L; l++) {
				int32_t e = x[l * inner];

				switch (op) {
				case IPUX_RED_SUM: case IPUX_RED_MEAN:
					acc += (uint64_t)(int64_t)e;
					break;
				case IPUX_RED_PROD:
					acc *= (uint64_t)(int64_t)e;
					break;
				case IPUX_RED_SUM_SQUARE:
					acc += (uint64_t)((int64_t)e * e);
					break;
				case IPUX_RED_L1:
					acc += (uint64_t)(e < 0 ? -(int64_t)e : e);
					break;
				case IPUX_RED_MAX: case IPUX_RED_ARGMAX:
					if (e > best) {
						best = e;
						bi = (int32_t)l;
					}
					break;
				default: /* MIN, ARGMIN */
					if (e < best) {
						best = e;
						bi = (int32_t)l;
					}
					break;
				}
			}
			switch (op) {
			case IPUX_RED_MAX: case IPUX_RED_MIN:
				out[o * inner + j] = best;
				break;
			case IPUX_RED_ARGMAX: case IPUX_RED_ARGMIN:
				out[o * inner + j] = bi;
				break;
			case IPUX_RED_MEAN:
				/* |sum| < 2^63: len < 2^32, |e| <= 2^31 */
				out[o * inner + j] =
					(int32_t)((int64_t)acc / (int64_t)L);
				break;
			default:
				out[o * inner + j] = (int32_t)(uint32_t)acc;
				break;
			}
		}
}

static int reduce_run(const struct ipu_vertex_ctx *v)
{
	if (v->ops[0].dtype == IPUX_DT_I32)
		red_i32(v);
	else
		red_float(v);
	return 0;
}

const struct ipu_codelet ipu_cl_reduce = {
	"REDUCE", reduce_check, reduce_cost, reduce_run
};

/* ---------------------------------------------------------------- CUMSUM */

static int cumsum_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	uint32_t dt;
	uint64_t n;
	int r = cl_check_counts(v, "CUMSUM", 2, 2, 4, 4, why, len);

	if (r)
		return r;
	dt = v->ops[0].dtype;
	if (!cl_is_float(dt) && dt != IPUX_DT_I32)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "CUMSUM: in is %s, expected F32, F16 or I32",
			      cl_dt_name(dt));
	r = cl_check_same_dtype(v, 0, 1, "CUMSUM", "in", "out", why, len);
	if (r)
		return r;
	if (v->params[3] & ~(IPUX_CUMSUM_EXCLUSIVE | IPUX_CUMSUM_REVERSE))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "CUMSUM: unknown flags 0x%x", v->params[3]);
	r = seq_check_shape(v, v->params, "CUMSUM", &n, why, len);
	if (r)
		return r;
	return cl_check_count(v, 1, n, "CUMSUM", "out", "outer*len*inner",
			      why, len);
}

static uint64_t cumsum_cost(const struct ipu_vertex_ctx *v)
{
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[0].count, v->ops[0].dtype, 2);
}

static int cumsum_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t dt = v->ops[0].dtype;
	size_t outer = p[0], L = p[1], inner = p[2], o, j0, j, s;
	int excl = !!(p[3] & IPUX_CUMSUM_EXCLUSIVE);
	int rev = !!(p[3] & IPUX_CUMSUM_REVERSE);
	const void *in = IPU_OP_PTR(v, 0, const void);
	void *out = IPU_OP_PTR(v, 1, void);

	for (o = 0; o < outer; o++)
		for (j0 = 0; j0 < inner; j0 += RB) {
			size_t jb = inner - j0 < RB ? inner - j0 : RB;
			double acc[RB];
			uint32_t iacc[RB];
			float x[RB];

			for (j = 0; j < jb; j++) {
				acc[j] = 0;
				iacc[j] = 0;
			}
			for (s = 0; s < L; s++) {
				size_t l = rev ? L - 1 - s : s;
				size_t base = (o * L + l) * inner + j0;

				if (dt == IPUX_DT_I32) {
					const int32_t *xi = (const int32_t *)in + base;
					int32_t *yo = (int32_t *)out + base;

					for (j = 0; j < jb; j++) {
						uint32_t e = (uint32_t)xi[j];

						if (excl) {
							yo[j] = (int32_t)iacc[j];
							iacc[j] += e;
						} else {
							iacc[j] += e;
							yo[j] = (int32_t)iacc[j];
						}
					}
					continue;
				}
				cl_load_f(in, dt, base, x, jb);
				for (j = 0; j < jb; j++) {
					double e = x[j];

					if (excl) {
						x[j] = (float)acc[j];
						acc[j] += e;
					} else {
						acc[j] += e;
						x[j] = (float)acc[j];
					}
				}
				cl_store_f(out, dt, base, x, jb);
			}
		}
	return 0;
}

const struct ipu_codelet ipu_cl_cumsum = {
	"CUMSUM", cumsum_check, cumsum_cost, cumsum_run
};

/* ---------------------------------------------------------------- TOPK */

static int topk_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p;
	uint32_t dt;
	uint64_t n, nout;
	int r = cl_check_counts(v, "TOPK", 3, 3, 5, 5, why, len);

	if (r)
		return r;
	p = v->params;
	dt = v->ops[0].dtype;
	if (!cl_is_float(dt) && dt != IPUX_DT_I32)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "TOPK: in is %s, expected F32, F16 or I32",
			      cl_dt_name(dt));
	r = cl_check_same_dtype(v, 0, 1, "TOPK", "in", "values", why, len);
	if (r)
		return r;
	if (v->ops[2].dtype != IPUX_DT_I32)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "TOPK: indices is %s, expected I32",
			      cl_dt_name(v->ops[2].dtype));
	if (p[4] & ~IPUX_TOPK_LARGEST)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "TOPK: unknown flags 0x%x", p[4]);
	r = seq_check_shape(v, p, "TOPK", &n, why, len);
	if (r)
		return r;
	if (p[3] < 1 || p[3] > p[1])
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "TOPK: k %u outside 1..len (%u)", p[3], p[1]);
	if (p[1] > INT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "TOPK: len %u does not fit an I32 index", p[1]);
	nout = (uint64_t)p[0] * p[3] * p[2]; /* <= outer*len*inner */
	r = cl_check_count(v, 1, nout, "TOPK", "values", "outer*k*inner", why,
			   len);
	if (!r)
		r = cl_check_count(v, 2, nout, "TOPK", "indices",
				   "outer*k*inner", why, len);
	if (r)
		return r;
	/* the indices output is the heap: it must not alias anything */
	if (cl_overlap(v, 0, 1) || cl_overlap(v, 0, 2) || cl_overlap(v, 1, 2))
		return ipu_errorf(why, len, IPUX_E_OPERAND_SHAPE,
			      "TOPK: operands overlap");
	return 0;
}

static uint64_t topk_cost(const struct ipu_vertex_ctx *v)
{
	uint64_t lg = 1, k = v->params[3];

	while ((1ull << lg) < k + 1 && lg < 40)
		lg++;
	return CL_VERTEX_OVERHEAD +
	       cl_div_up(cl_sat_mul(v->ops[0].count, 1 + lg), 2);
}

struct tk_ctx {
	const void *in;
	uint32_t dt;
	int largest;
	size_t base, inner;	/* element l of the column: base + l*inner */
};

static double tk_val(const struct tk_ctx *c, uint32_t l)
{
	size_t i = c->base + (size_t)l * c->inner;

	if (c->dt == IPUX_DT_I32)
		return ((const int32_t *)c->in)[i];
	return cl_getf(c->in, c->dt, i);
}

/* Does element a come before element b in the output order? */
static int tk_before(const struct tk_ctx *c, uint32_t a, uint32_t b)
{
	double va = tk_val(c, a), vb = tk_val(c, b);
	int cmp; /* ascending, NaN greatest */

	if (va != va)
		cmp = vb != vb ? 0 : 1;
	else if (vb != vb)
		cmp = -1;
	else
		cmp = va < vb ? -1 : va > vb ? 1 : 0;
	if (!c->largest)
		cmp = -cmp;
	return cmp > 0 || (cmp == 0 && a < b);
}

/* Heap of indices, root = the element that comes last in output order. */
static void tk_sift(const struct tk_ctx *c, int32_t *h, size_t hs, size_t n,
		    size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		int32_t t;

		if (l < n && tk_before(c, (uint32_t)h[m * hs], (uint32_t)h[l * hs]))
			m = l;
		if (r < n && tk_before(c, (uint32_t)h[m * hs], (uint32_t)h[r * hs]))
			m = r;
		if (m == i)
			return;
		t = h[i * hs];
		h[i * hs] = h[m * hs];
		h[m * hs] = t;
		i = m;
	}
}

static int topk_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	size_t outer = p[0], L = p[1], inner = p[2], K = p[3], o, j, i, n;
	struct tk_ctx c;
	int32_t *idx = IPU_OP_PTR(v, 2, int32_t);
	void *vals = IPU_OP_PTR(v, 1, void);

	c.in = IPU_OP_PTR(v, 0, const void);
	c.dt = v->ops[0].dtype;
	c.largest = !!(p[4] & IPUX_TOPK_LARGEST);
	c.inner = inner;
	for (o = 0; o < outer; o++)
		for (j = 0; j < inner; j++) {
			int32_t *h = idx + o * K * inner + j;
			size_t l;

			c.base = o * L * inner + j;
			/* build a heap of the first K, then replace its root */
			for (l = 0; l < K; l++)
				h[l * inner] = (int32_t)l;
			for (i = K / 2; i-- > 0;)
				tk_sift(&c, h, inner, K, i);
			for (l = K; l < L; l++)
				if (tk_before(&c, (uint32_t)l, (uint32_t)h[0])) {
					h[0] = (int32_t)l;
					tk_sift(&c, h, inner, K, 0);
				}
			/* heap sort: the root goes last */
			for (n = K; n > 1; n--) {
				int32_t t = h[0];

				h[0] = h[(n - 1) * inner];
				h[(n - 1) * inner] = t;
				tk_sift(&c, h, inner, n - 1, 0);
			}
			for (l = 0; l < K; l++) {
				size_t si = c.base + (size_t)h[l * inner] * inner;
				size_t di = (o * K + l) * inner + j;

				if (c.dt == IPUX_DT_I32)
					((int32_t *)vals)[di] =
						((const int32_t *)c.in)[si];
				else if (c.dt == IPUX_DT_F32)
					((float *)vals)[di] =
						((const float *)c.in)[si];
				else
					((uint16_t *)vals)[di] =
						((const uint16_t *)c.in)[si];
			}
		}
	return 0;
}

const struct ipu_codelet ipu_cl_topk = {
	"TOPK", topk_check, topk_cost, topk_run
};
