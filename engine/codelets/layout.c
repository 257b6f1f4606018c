/* SPDX-License-Identifier: MIT */
/*
 * layout.c - data movement: TRANSPOSE, STRIDED_COPY and PAD.  Any dtype;
 * elements are moved as 1/2/4/8-byte units.  The strided index space is
 * simplified (size-1 dims dropped, contiguous dims merged) before copying
 * row by row.
 */
#include "cl_opt.h"
#include "cl_common.h"

/* dst[0..n) = src[i * stride] (elements of es bytes). */
static void lay_row(uint8_t *dst, const uint8_t *src, ptrdiff_t stride,
		    size_t n, uint32_t es)
{
	size_t i;

	if (stride == 1) {
		memmove(dst, src, n * es);
		return;
	}
	/* one element along the row (a bias broadcast over a block's
	 * columns): a fill the compiler vectorises, not a strided gather */
	if (stride == 0) {
		switch (es) {
		case 1:
			memset(dst, src[0], n);
			return;
		case 2: {
			uint16_t *d = (uint16_t *)dst, x;

			memcpy(&x, src, sizeof(x));
			for (i = 0; i < n; i++)
				d[i] = x;
			return;
		}
		case 4: {
			uint32_t *d = (uint32_t *)dst, x;

			memcpy(&x, src, sizeof(x));
			for (i = 0; i < n; i++)
				d[i] = x;
			return;
		}
		default: {
			uint64_t *d = (uint64_t *)dst, x;

			memcpy(&x, src, sizeof(x));
			for (i = 0; i < n; i++)
				d[i] = x;
			return;
		}
		}
	}
	switch (es) {
	case 1:
		for (i = 0; i < n; i++)
			dst[i] = src[(ptrdiff_t)i * stride];
		break;
	case 2: {
		uint16_t *d = (uint16_t *)dst;
		const uint16_t *s = (const uint16_t *)src;

		for (i = 0; i < n; i++)
			d[i] = s[(ptrdiff_t)i * stride];
		break;
	}
	case 4: {
		uint32_t *d = (uint32_t *)dst;
		const uint32_t *s = (const uint32_t *)src;

		for (i = 0; i < n; i++)
			d[i] = s[(ptrdiff_t)i * stride];
		break;
	}
	default: {
		uint64_t *d = (uint64_t *)dst;
		const uint64_t *s = (const uint64_t *)src;

		for (i = 0; i < n; i++)
			d[i] = s[(ptrdiff_t)i * stride];
		break;
	}
	}
}

/* Copy the dense out of nd (one operand: the input, base offset in0). */
static void lay_copy(struct cl_nd *nd, const uint8_t *in, int64_t in0,
		     uint8_t *out, uint32_t es)
{
	uint64_t idx[IPUX_MAX_RANK] = { 0 }, rows, row, n;
	int64_t off[1] = { in0 };
	ptrdiff_t st;

	cl_nd_simplify(nd);
	n = nd->shape[nd->rank - 1];
	st = (ptrdiff_t)nd->stride[0][nd->rank - 1];
	rows = cl_nd_rows(nd);
	for (row = 0; row < rows; row++) {
		lay_row(out + (size_t)(row * n) * es,
			in + (ptrdiff_t)off[0] * (ptrdiff_t)es, st, n, es);
		cl_nd_next(nd, idx, off);
	}
}

static int lay_rank(const struct ipu_vertex_ctx *v, const char *name,
		    uint32_t fixed, uint32_t per_dim, uint32_t *rank,
		    char *why, size_t len)
{
	uint32_t r;

	if (v->num_params < 1)
		return ipu_errorf(why, len, IPUX_E_PARAM_COUNT,
			      "%s: no params", name);
	r = v->params[0];
	if (r < 1 || r > IPUX_MAX_RANK)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: rank %u outside 1..%u", name, r,
			      IPUX_MAX_RANK);
	if (v->num_params != fixed + per_dim * r)
		return ipu_errorf(why, len, IPUX_E_PARAM_COUNT,
			      "%s: %u params, rank %u needs %u", name,
			      v->num_params, r, fixed + per_dim * r);
	*rank = r;
	return 0;
}

static int lay_dtypes(const struct ipu_vertex_ctx *v, const char *name,
		      char *why, size_t len)
{
	if (!cl_is_valid_dt(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "%s: in has invalid dtype %u", name,
			      v->ops[0].dtype);
	return cl_check_same_dtype(v, 0, 1, name, "in", "out", why, len);
}

static uint64_t lay_cost(const struct ipu_vertex_ctx *v)
{
	/* strided moves: 8 bytes/cycle plus one cycle per element gathered */
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[1].count, v->ops[1].dtype, 1) +
	       v->ops[1].count / 2;
}

/* ------------------------------------------------------------- TRANSPOSE */

static int transpose_check(const struct ipu_vertex_ctx *v, char *why,
			   size_t len)
{
	uint32_t rank = 0, k, seen = 0;
	uint64_t n;
	int r = cl_check_counts(v, "TRANSPOSE", 2, 2, 1, 1 + 2 * IPUX_MAX_RANK,
				why, len);

	if (!r)
		r = lay_rank(v, "TRANSPOSE", 1, 2, &rank, why, len);
	if (!r)
		r = lay_dtypes(v, "TRANSPOSE", why, len);
	if (r)
		return r;
	for (k = 0; k < rank; k++) {
		uint32_t pk = v->params[1 + rank + k];

		if (pk >= rank || (seen & (1u << pk)))
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "TRANSPOSE: perm is not a permutation "
				      "of 0..%u", rank - 1);
		seen |= 1u << pk;
	}
	r = cl_check_dims(v->params + 1, rank, &n, "TRANSPOSE", "shape", why,
			  len);
	if (!r)
		r = cl_check_count(v, 0, n, "TRANSPOSE", "in", "prod(shape)",
				   why, len);
	if (!r)
		r = cl_check_count(v, 1, n, "TRANSPOSE", "out", "prod(shape)",
				   why, len);
	return r;
}

static int transpose_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t rank = p[0], k;
	int64_t st[IPUX_MAX_RANK], s = 1;
	struct cl_nd nd;

	for (k = rank; k-- > 0;) {
		st[k] = s;
		s *= p[1 + k];
	}
	nd.rank = rank;
	nd.nops = 1;
	for (k = 0; k < rank; k++) {
		uint32_t pk = p[1 + rank + k];

		nd.shape[k] = p[1 + pk];
		nd.stride[0][k] = st[pk];
	}
	lay_copy(&nd, IPU_OP_PTR(v, 0, const uint8_t), 0,
		 IPU_OP_PTR(v, 1, uint8_t), ipux_dtype_size(v->ops[0].dtype));
	return 0;
}

const struct ipu_codelet ipu_cl_transpose = {
	"TRANSPOSE", transpose_check, lay_cost, transpose_run
};

/* ---------------------------------------------------------- STRIDED_COPY */

static int strided_check(const struct ipu_vertex_ctx *v, char *why,
			 size_t len)
{
	const uint32_t *p = v->params;
	uint32_t rank = 0, k;
	uint64_t n;
	int64_t lo, hi;
	int r = cl_check_counts(v, "STRIDED_COPY", 2, 2, 1,
				2 + 2 * IPUX_MAX_RANK, why, len);

	if (!r)
		r = lay_rank(v, "STRIDED_COPY", 2, 2, &rank, why, len);
	if (!r)
		r = lay_dtypes(v, "STRIDED_COPY", why, len);
	if (!r)
		r = cl_check_dims(p + 1, rank, &n, "STRIDED_COPY", "shape", why,
				  len);
	if (!r)
		r = cl_check_count(v, 1, n, "STRIDED_COPY", "out",
				   "prod(shape)", why, len);
	if (r)
		return r;
	/* lowest and highest input index reached, in checked int64 */
	lo = hi = p[1 + rank];
	for (k = 0; k < rank; k++) {
		int64_t t = (int64_t)(p[1 + k] - 1) *
			    (int64_t)(int32_t)p[2 + rank + k]; /* |t| < 2^63 */

		if (t < 0 ? __builtin_add_overflow(lo, t, &lo)
			  : __builtin_add_overflow(hi, t, &hi))
			return ipu_errorf(why, len, IPUX_E_OPERAND_SHAPE,
				      "STRIDED_COPY: index range overflows");
	}
	if (lo < 0 || hi >= (int64_t)v->ops[0].count)
		return ipu_errorf(why, len, IPUX_E_OPERAND_SHAPE,
			      "STRIDED_COPY: reads in[%lld..%lld], in has %u "
			      "elements", (long long)lo, (long long)hi,
			      v->ops[0].count);
	return 0;
}

static int strided_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t rank = p[0], k;
	struct cl_nd nd;

	nd.rank = rank;
	nd.nops = 1;
	for (k = 0; k < rank; k++) {
		nd.shape[k] = p[1 + k];
		nd.stride[0][k] = (int32_t)p[2 + rank + k];
	}
	lay_copy(&nd, IPU_OP_PTR(v, 0, const uint8_t), p[1 + rank],
		 IPU_OP_PTR(v, 1, uint8_t), ipux_dtype_size(v->ops[0].dtype));
	return 0;
}

const struct ipu_codelet ipu_cl_strided_copy = {
	"STRIDED_COPY", strided_check, lay_cost, strided_run
};

/* ------------------------------------------------------------------ PAD */

#define PAD_CONSTANT 0u
#define PAD_REFLECT 1u
#define PAD_EDGE 2u

static int pad_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p = v->params;
	uint32_t rank = 0, k, mode;
	uint64_t n, nout = 1;
	int r = cl_check_counts(v, "PAD", 2, 2, 1, 3 + 3 * IPUX_MAX_RANK, why,
				len);

	if (!r)
		r = lay_rank(v, "PAD", 3, 3, &rank, why, len);
	if (!r)
		r = lay_dtypes(v, "PAD", why, len);
	if (!r)
		r = cl_check_dims(p + 1, rank, &n, "PAD", "in_shape", why, len);
	if (!r)
		r = cl_check_count(v, 0, n, "PAD", "in", "prod(in_shape)", why,
				   len);
	if (r)
		return r;
	mode = p[1 + 3 * rank];
	if (mode > PAD_EDGE)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "PAD: unknown mode %u", mode);
	for (k = 0; k < rank; k++) {
		int64_t in = p[1 + k], b = (int32_t)p[1 + rank + k];
		int64_t e = (int32_t)p[1 + 2 * rank + k], o = in + b + e;

		if (o < 1)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "PAD: dim %u of out has size %lld", k,
				      (long long)o);
		if (mode == PAD_REFLECT && (b > in - 1 || e > in - 1))
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "PAD: reflect pad %lld/%lld of dim %u "
				      "exceeds its size %lld - 1",
				      (long long)b, (long long)e, k,
				      (long long)in);
		if (__builtin_mul_overflow(nout, (uint64_t)o, &nout) ||
		    nout > UINT32_MAX)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "PAD: out would exceed 2^32-1 elements");
	}
	return cl_check_count(v, 1, nout, "PAD", "out", "prod(out_shape)", why,
			      len);
}

/* Input index of out index o along a dim, or -1 for constant padding. */
static int64_t pad_map(int64_t o, int64_t b, int64_t in, uint32_t mode)
{
	int64_t i = o - b;

	if (i >= 0 && i < in)
		return i;
	switch (mode) {
	case PAD_REFLECT:
		return i < 0 ? -i : 2 * (in - 1) - i;
	case PAD_EDGE:
		return i < 0 ? 0 : in - 1;
	default:
		return -1;
	}
}

static int pad_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t rank = p[0], mode = p[1 + 3 * rank], value = p[2 + 3 * rank];
	uint32_t dt = v->ops[0].dtype, es = ipux_dtype_size(dt);
	const uint8_t *in = IPU_OP_PTR(v, 0, const uint8_t);
	uint8_t *out = IPU_OP_PTR(v, 1, uint8_t);
	int64_t ish[IPUX_MAX_RANK], osh[IPUX_MAX_RANK], beg[IPUX_MAX_RANK];
	int64_t ist[IPUX_MAX_RANK], s = 1;
	uint64_t idx[IPUX_MAX_RANK] = { 0 }, rows = 1, row;
	int64_t L, bl, inl, o;
	uint32_t k;

	for (k = rank; k-- > 0;) {
		ish[k] = p[1 + k];
		beg[k] = (int32_t)p[1 + rank + k];
		osh[k] = ish[k] + beg[k] + (int32_t)p[1 + 2 * rank + k];
		ist[k] = s;
		s *= ish[k];
	}
	for (k = 0; k + 1 < rank; k++)
		rows *= (uint64_t)osh[k];
	L = osh[rank - 1];
	bl = beg[rank - 1];
	inl = ish[rank - 1];
	for (row = 0; row < rows; row++) {
		uint8_t *dst = out + (size_t)(row * (uint64_t)L) * es;
		int64_t base = 0;
		int konst = 0;
		int64_t m0, m1;

		for (k = 0; k + 1 < rank; k++) {
			int64_t i = pad_map((int64_t)idx[k], beg[k], ish[k], mode);

			if (i < 0)
				konst = 1;
			base += i * ist[k];
		}
		if (konst) {
			cl_fill_elems(dst, dt, (size_t)L, value);
		} else {
			/* out positions [m0, m1) copy in[m0 - bl ..] */
			m0 = bl > 0 ? bl : 0;
			m1 = bl + inl < L ? bl + inl : L;
			if (m1 < m0)
				m1 = m0;
			for (o = 0; o < m0 && o < L; o++) {
				int64_t i = pad_map(o, bl, inl, mode);

				if (i < 0)
					cl_fill_elems(dst + o * es, dt, 1, value);
				else
					cl_copy_elem(dst + o * es,
						     in + (base + i) * es, es);
			}
			if (m1 > m0)
				memmove(dst + m0 * es,
					in + (base + m0 - bl) * es,
					(size_t)(m1 - m0) * es);
			for (o = m1 > m0 ? m1 : m0; o < L; o++) {
				int64_t i = pad_map(o, bl, inl, mode);

				if (i < 0)
					cl_fill_elems(dst + o * es, dt, 1, value);
				else
					cl_copy_elem(dst + o * es,
						     in + (base + i) * es, es);
			}
		}
		/* next row */
		for (k = rank - 1; k-- > 0;) {
			if (++idx[k] < (uint64_t)osh[k])
				break;
			idx[k] = 0;
		}
	}
	return 0;
}

static uint64_t pad_cost(const struct ipu_vertex_ctx *v)
{
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[1].count, v->ops[1].dtype, 1);
}

const struct ipu_codelet ipu_cl_pad = {
	"PAD", pad_check, pad_cost, pad_run
};
