/* SPDX-License-Identifier: MIT */
/*
 * binary.c - BINARY (elementwise with broadcast through strides) and WHERE.
 *
 * The strided index space is first simplified (size-1 dims dropped,
 * contiguous dims merged) so that the innermost row is as long as possible,
 * then each row runs a kernel specialised per op and dtype, with separate
 * loops for the contiguous/broadcast stride patterns so that gcc vectorises
 * them.  f16 rows are converted to f32 in blocks on the stack.
 */
#include "cl_opt.h"
#include "cl_common.h"

typedef void (*bin_fn)(size_t n, const void *va, ptrdiff_t as,
		       const void *vb, ptrdiff_t bs, void *vo);

#define BIN_KERNEL(name, TI, TO, EXPR)                                        \
	CL_CLONES static void name(size_t n, const void *va, ptrdiff_t as,    \
			 const void *vb, ptrdiff_t bs, void *vo)              \
	{                                                                     \
		const TI *a = va, *b = vb;                                    \
		TO *o = vo;                                                   \
		size_t i;                                                     \
		if (as == 1 && bs == 1) {                                     \
			for (i = 0; i < n; i++) {                             \
				TI x = a[i], y = b[i];                        \
				o[i] = (TO)(EXPR);                            \
			}                                                     \
		} else if (as == 1 && bs == 0) {                              \
			TI y = b[0];                                          \
			for (i = 0; i < n; i++) {                             \
				TI x = a[i];                                  \
				o[i] = (TO)(EXPR);                            \
			}                                                     \
		} else if (as == 0 && bs == 1) {                              \
			TI x = a[0];                                          \
			for (i = 0; i < n; i++) {                             \
				TI y = b[i];                                  \
				o[i] = (TO)(EXPR);                            \
			}                                                     \
		} else {                                                      \
			for (i = 0; i < n; i++) {                             \
				TI x = a[(ptrdiff_t)i * as];                  \
				TI y = b[(ptrdiff_t)i * bs];                  \
				o[i] = (TO)(EXPR);                            \
			}                                                     \
		}                                                             \
	}

/* f32 (also used for f16 after conversion) */
BIN_KERNEL(f_add, float, float, x + y)
BIN_KERNEL(f_sub, float, float, x - y)
BIN_KERNEL(f_mul, float, float, x * y)
BIN_KERNEL(f_div, float, float, x / y)
BIN_KERNEL(f_pow, float, float, powf(x, y))
BIN_KERNEL(f_max, float, float, (x > y || x != x) ? x : y)
BIN_KERNEL(f_min, float, float, (x < y || x != x) ? x : y)
BIN_KERNEL(f_mod, float, float, fmodf(x, y))
BIN_KERNEL(f_eq, float, uint8_t, x == y)
BIN_KERNEL(f_ne, float, uint8_t, x != y)
BIN_KERNEL(f_lt, float, uint8_t, x < y)
BIN_KERNEL(f_le, float, uint8_t, x <= y)
BIN_KERNEL(f_gt, float, uint8_t, x > y)
BIN_KERNEL(f_ge, float, uint8_t, x >= y)
BIN_KERNEL(f_prelu, float, float, x >= 0 ? x : x * y)
/* Add then UNARY RELU's formula on the f32 sum, before any f16 rounding:
 * a residual Add and the Relu after it in one pass over memory */
static inline float bin_relu(float s)
{
	return s < 0 ? 0.0f : s;
}
BIN_KERNEL(f_add_relu, float, float, bin_relu(x + y))

/* i32: wrapping arithmetic, division by zero gives 0 */
BIN_KERNEL(i_add, int32_t, int32_t, (uint32_t)x + (uint32_t)y)
BIN_KERNEL(i_sub, int32_t, int32_t, (uint32_t)x - (uint32_t)y)
BIN_KERNEL(i_mul, int32_t, int32_t, (uint32_t)x * (uint32_t)y)
BIN_KERNEL(i_div, int32_t, int32_t,
	   y == 0 ? 0 : (y == -1 ? (int32_t)(0u - (uint32_t)x) : x / y))
BIN_KERNEL(i_max, int32_t, int32_t, x > y ? x : y)
BIN_KERNEL(i_min, int32_t, int32_t, x < y ? x : y)
BIN_KERNEL(i_mod, int32_t, int32_t, (y == 0 || y == -1) ? 0 : x % y)
BIN_KERNEL(i_eq, int32_t, uint8_t, x == y)
BIN_KERNEL(i_ne, int32_t, uint8_t, x != y)
BIN_KERNEL(i_lt, int32_t, uint8_t, x < y)
BIN_KERNEL(i_le, int32_t, uint8_t, x <= y)
BIN_KERNEL(i_gt, int32_t, uint8_t, x > y)
BIN_KERNEL(i_ge, int32_t, uint8_t, x >= y)
BIN_KERNEL(i_prelu, int32_t, int32_t,
	   x >= 0 ? (uint32_t)x : (uint32_t)x * (uint32_t)y)

/* u8: comparisons and logic (nonzero is true) */
BIN_KERNEL(u_eq, uint8_t, uint8_t, x == y)
BIN_KERNEL(u_ne, uint8_t, uint8_t, x != y)
BIN_KERNEL(u_lt, uint8_t, uint8_t, x < y)
BIN_KERNEL(u_le, uint8_t, uint8_t, x <= y)
BIN_KERNEL(u_gt, uint8_t, uint8_t, x > y)
BIN_KERNEL(u_ge, uint8_t, uint8_t, x >= y)
BIN_KERNEL(u_and, uint8_t, uint8_t, (x != 0) & (y != 0))
BIN_KERNEL(u_or, uint8_t, uint8_t, (x != 0) | (y != 0))
BIN_KERNEL(u_xor, uint8_t, uint8_t, (x != 0) ^ (y != 0))

static const bin_fn f_kernels[IPUX_BIN_COUNT] = {
	[IPUX_BIN_ADD] = f_add, [IPUX_BIN_SUB] = f_sub,
	[IPUX_BIN_MUL] = f_mul, [IPUX_BIN_DIV] = f_div,
	[IPUX_BIN_POW] = f_pow, [IPUX_BIN_MAX] = f_max,
	[IPUX_BIN_MIN] = f_min, [IPUX_BIN_MOD] = f_mod,
	[IPUX_BIN_EQUAL] = f_eq, [IPUX_BIN_NOT_EQUAL] = f_ne,
	[IPUX_BIN_LESS] = f_lt, [IPUX_BIN_LESS_EQUAL] = f_le,
	[IPUX_BIN_GREATER] = f_gt, [IPUX_BIN_GREATER_EQUAL] = f_ge,
	[IPUX_BIN_PRELU] = f_prelu, [IPUX_BIN_ADD_RELU] = f_add_relu,
};

static const bin_fn i_kernels[IPUX_BIN_COUNT] = {
	[IPUX_BIN_ADD] = i_add, [IPUX_BIN_SUB] = i_sub,
	[IPUX_BIN_MUL] = i_mul, [IPUX_BIN_DIV] = i_div,
	[IPUX_BIN_MAX] = i_max, [IPUX_BIN_MIN] = i_min,
	[IPUX_BIN_MOD] = i_mod,
	[IPUX_BIN_EQUAL] = i_eq, [IPUX_BIN_NOT_EQUAL] = i_ne,
	[IPUX_BIN_LESS] = i_lt, [IPUX_BIN_LESS_EQUAL] = i_le,
	[IPUX_BIN_GREATER] = i_gt, [IPUX_BIN_GREATER_EQUAL] = i_ge,
	[IPUX_BIN_PRELU] = i_prelu,
};

static const bin_fn u_kernels[IPUX_BIN_COUNT] = {
	[IPUX_BIN_EQUAL] = u_eq, [IPUX_BIN_NOT_EQUAL] = u_ne,
	[IPUX_BIN_LESS] = u_lt, [IPUX_BIN_LESS_EQUAL] = u_le,
	[IPUX_BIN_GREATER] = u_gt, [IPUX_BIN_GREATER_EQUAL] = u_ge,
	[IPUX_BIN_AND] = u_and, [IPUX_BIN_OR] = u_or,
	[IPUX_BIN_XOR] = u_xor,
};

static int bin_is_compare(uint32_t op)
{
	return op >= IPUX_BIN_EQUAL && op <= IPUX_BIN_GREATER_EQUAL;
}

static const bin_fn *bin_table(uint32_t dt)
{
	switch (dt) {
	case IPUX_DT_F32:
	case IPUX_DT_F16:
		return f_kernels;
	case IPUX_DT_I32:
		return i_kernels;
	case IPUX_DT_U8:
		return u_kernels;
	default:
		return NULL;
	}
}

static int binary_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p = v->params, *shape;
	uint32_t op, rank, odt;
	const bin_fn *tab;
	uint64_t n;
	int r = cl_check_counts(v, "BINARY", 3, 3, 2, 2 + 3 * IPUX_MAX_RANK,
				why, len);

	if (r)
		return r;
	op = p[0];
	rank = p[1];
	if (rank < 1 || rank > IPUX_MAX_RANK)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "BINARY: rank %u outside 1..%u", rank,
			      IPUX_MAX_RANK);
	if (v->num_params != 2 + 3 * rank)
		return ipu_errorf(why, len, IPUX_E_PARAM_COUNT,
			      "BINARY: %u params, rank %u needs %u",
			      v->num_params, rank, 2 + 3 * rank);
	if (op >= IPUX_BIN_COUNT)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "BINARY: unknown op %u", op);
	r = cl_check_same_dtype(v, 0, 1, "BINARY", "a", "b", why, len);
	if (r)
		return r;
	tab = bin_table(v->ops[0].dtype);
	if (!tab || !tab[op])
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "BINARY: op %u does not accept %s operands", op,
			      cl_dt_name(v->ops[0].dtype));
	odt = bin_is_compare(op) || (op >= IPUX_BIN_AND && op <= IPUX_BIN_XOR)
		      ? IPUX_DT_U8
		      : v->ops[0].dtype;
	if (v->ops[2].dtype != odt)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "BINARY: out is %s, op %u needs %s",
			      cl_dt_name(v->ops[2].dtype), op,
			      cl_dt_name(odt));
	shape = p + 2;
	r = cl_check_dims(shape, rank, &n, "BINARY", "shape", why, len);
	if (r)
		return r;
	r = cl_check_count(v, 2, n, "BINARY", "out", "prod(shape)", why, len);
	if (r)
		return r;
	r = cl_check_strides(v, 0, shape, p + 2 + rank, rank, "BINARY",
			     "astride", why, len);
	if (r)
		return r;
	return cl_check_strides(v, 1, shape, p + 2 + 2 * rank, rank, "BINARY",
				"bstride", why, len);
}

static uint64_t binary_cost(const struct ipu_vertex_ctx *v)
{
	uint32_t op = v->params[0];
	uint64_t c = cl_cost_stream(v->ops[2].count, v->ops[0].dtype, 1);

	if (op == IPUX_BIN_POW || op == IPUX_BIN_MOD || op == IPUX_BIN_DIV)
		c = cl_sat_mul(c, 4);
	return CL_VERTEX_OVERHEAD + c;
}

/* One row of f16 operands: convert blocks to f32, run the f32 kernel. */
static void bin_row_f16(bin_fn fn, int u8out, size_t n, const uint16_t *a,
			ptrdiff_t as, const uint16_t *b, ptrdiff_t bs,
			void *out)
{
	float fa[CL_BLK], fb[CL_BLK], fo[CL_BLK];
	size_t i0, i;

	for (i0 = 0; i0 < n; i0 += CL_BLK) {
		size_t m = n - i0 < CL_BLK ? n - i0 : CL_BLK;

		if (as == 0)
			fa[0] = cl_h2f(a[0]);
		else if (as == 1)
			ipu_cl_h2f_block(fa, a + i0, m);
		else
			for (i = 0; i < m; i++)
				fa[i] = cl_h2f(
					a[(ptrdiff_t)(i0 + i) * as]);
		if (bs == 0)
			fb[0] = cl_h2f(b[0]);
		else if (bs == 1)
			ipu_cl_h2f_block(fb, b + i0, m);
		else
			for (i = 0; i < m; i++)
				fb[i] = cl_h2f(
					b[(ptrdiff_t)(i0 + i) * bs]);
		if (u8out) {
			fn(m, fa, as ? 1 : 0, fb, bs ? 1 : 0,
			   (uint8_t *)out + i0);
		} else {
			fn(m, fa, as ? 1 : 0, fb, bs ? 1 : 0, fo);
			ipu_cl_f2h_block((uint16_t *)out + i0, fo, m);
		}
	}
}

static int binary_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t op = p[0], rank = p[1], k;
	uint32_t dt = v->ops[0].dtype, odt = v->ops[2].dtype;
	uint32_t isz = ipux_dtype_size(dt), osz = ipux_dtype_size(odt);
	const uint8_t *a = IPU_OP_PTR(v, 0, const uint8_t);
	const uint8_t *b = IPU_OP_PTR(v, 1, const uint8_t);
	uint8_t *o = IPU_OP_PTR(v, 2, uint8_t);
	bin_fn fn = bin_table(dt)[op];
	struct cl_nd nd;
	uint64_t idx[IPUX_MAX_RANK] = { 0 }, rows, row, n;
	int64_t off[2] = { 0, 0 };
	ptrdiff_t as, bs;

	nd.rank = rank;
	nd.nops = 2;
	for (k = 0; k < rank; k++) {
		nd.shape[k] = p[2 + k];
		nd.stride[0][k] = p[2 + rank + k];
		nd.stride[1][k] = p[2 + 2 * rank + k];
	}
	cl_nd_simplify(&nd);
	n = nd.shape[nd.rank - 1];
	as = (ptrdiff_t)nd.stride[0][nd.rank - 1];
	bs = (ptrdiff_t)nd.stride[1][nd.rank - 1];
	rows = cl_nd_rows(&nd);
	for (row = 0; row < rows; row++) {
		const uint8_t *ra = a + (size_t)off[0] * isz;
		const uint8_t *rb = b + (size_t)off[1] * isz;
		uint8_t *ro = o + (size_t)(row * n) * osz;

		if (dt == IPUX_DT_F16)
			bin_row_f16(fn, odt == IPUX_DT_U8, n,
				    (const uint16_t *)ra, as,
				    (const uint16_t *)rb, bs, ro);
		else
			fn(n, ra, as, rb, bs, ro);
		cl_nd_next(&nd, idx, off);
	}
	return 0;
}

const struct ipu_codelet ipu_cl_binary = {
	"BINARY", binary_check, binary_cost, binary_run
};

/* ---------------------------------------------------------------- WHERE */

#define WHERE_KERNEL(name, T)                                                 \
	static void name(size_t n, const uint8_t *c, ptrdiff_t cs,            \
			 const T *x, ptrdiff_t xs, const T *y, ptrdiff_t ys,  \
			 T *o)                                                \
	{                                                                     \
		size_t i;                                                     \
		if (cs == 1 && xs == 1 && ys == 1) {                          \
			for (i = 0; i < n; i++)                               \
				o[i] = c[i] ? x[i] : y[i];                    \
		} else {                                                      \
			for (i = 0; i < n; i++)                               \
				o[i] = c[(ptrdiff_t)i * cs]                   \
					       ? x[(ptrdiff_t)i * xs]         \
					       : y[(ptrdiff_t)i * ys];        \
		}                                                             \
	}

WHERE_KERNEL(where8, uint8_t)
WHERE_KERNEL(where16, uint16_t)
WHERE_KERNEL(where32, uint32_t)
WHERE_KERNEL(where64, uint64_t)

static int where_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p = v->params, *shape;
	uint32_t rank;
	uint64_t n;
	int r = cl_check_counts(v, "WHERE", 4, 4, 1, 1 + 4 * IPUX_MAX_RANK,
				why, len);

	if (r)
		return r;
	rank = p[0];
	if (rank < 1 || rank > IPUX_MAX_RANK)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "WHERE: rank %u outside 1..%u", rank,
			      IPUX_MAX_RANK);
	if (v->num_params != 1 + 4 * rank)
		return ipu_errorf(why, len, IPUX_E_PARAM_COUNT,
			      "WHERE: %u params, rank %u needs %u",
			      v->num_params, rank, 1 + 4 * rank);
	if (v->ops[0].dtype != IPUX_DT_U8)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "WHERE: cond is %s, expected U8",
			      cl_dt_name(v->ops[0].dtype));
	if (!cl_is_valid_dt(v->ops[1].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "WHERE: x has invalid dtype %u",
			      v->ops[1].dtype);
	r = cl_check_same_dtype(v, 1, 2, "WHERE", "x", "y", why, len);
	if (!r)
		r = cl_check_same_dtype(v, 1, 3, "WHERE", "x", "out", why,
					len);
	if (r)
		return r;
	shape = p + 1;
	r = cl_check_dims(shape, rank, &n, "WHERE", "shape", why, len);
	if (!r)
		r = cl_check_count(v, 3, n, "WHERE", "out", "prod(shape)", why,
				   len);
	if (!r)
		r = cl_check_strides(v, 0, shape, p + 1 + rank, rank, "WHERE",
				     "cstride", why, len);
	if (!r)
		r = cl_check_strides(v, 1, shape, p + 1 + 2 * rank, rank,
				     "WHERE", "xstride", why, len);
	if (!r)
		r = cl_check_strides(v, 2, shape, p + 1 + 3 * rank, rank,
				     "WHERE", "ystride", why, len);
	return r;
}

static uint64_t where_cost(const struct ipu_vertex_ctx *v)
{
	return CL_VERTEX_OVERHEAD +
	       cl_cost_stream(v->ops[3].count, v->ops[3].dtype, 1);
}

static int where_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t rank = p[0], k, sz = ipux_dtype_size(v->ops[3].dtype);
	const uint8_t *c = IPU_OP_PTR(v, 0, const uint8_t);
	const uint8_t *x = IPU_OP_PTR(v, 1, const uint8_t);
	const uint8_t *y = IPU_OP_PTR(v, 2, const uint8_t);
	uint8_t *o = IPU_OP_PTR(v, 3, uint8_t);
	struct cl_nd nd;
	uint64_t idx[IPUX_MAX_RANK] = { 0 }, rows, row, n;
	int64_t off[3] = { 0, 0, 0 };
	ptrdiff_t cs, xs, ys;

	nd.rank = rank;
	nd.nops = 3;
	for (k = 0; k < rank; k++) {
		nd.shape[k] = p[1 + k];
		nd.stride[0][k] = p[1 + rank + k];
		nd.stride[1][k] = p[1 + 2 * rank + k];
		nd.stride[2][k] = p[1 + 3 * rank + k];
	}
	cl_nd_simplify(&nd);
	n = nd.shape[nd.rank - 1];
	cs = (ptrdiff_t)nd.stride[0][nd.rank - 1];
	xs = (ptrdiff_t)nd.stride[1][nd.rank - 1];
	ys = (ptrdiff_t)nd.stride[2][nd.rank - 1];
	rows = cl_nd_rows(&nd);
	for (row = 0; row < rows; row++) {
		const uint8_t *rc = c + off[0];
		const uint8_t *rx = x + (size_t)off[1] * sz;
		const uint8_t *ry = y + (size_t)off[2] * sz;
		uint8_t *ro = o + (size_t)(row * n) * sz;

		switch (sz) {
		case 1:
			where8(n, rc, cs, rx, xs, ry, ys, ro);
			break;
		case 2:
			where16(n, rc, cs, (const uint16_t *)rx, xs,
				(const uint16_t *)ry, ys, (uint16_t *)ro);
			break;
		case 4:
			where32(n, rc, cs, (const uint32_t *)rx, xs,
				(const uint32_t *)ry, ys, (uint32_t *)ro);
			break;
		default:
			where64(n, rc, cs, (const uint64_t *)rx, xs,
				(const uint64_t *)ry, ys, (uint64_t *)ro);
			break;
		}
		cl_nd_next(&nd, idx, off);
	}
	return 0;
}

const struct ipu_codelet ipu_cl_where = {
	"WHERE", where_check, where_cost, where_run
};
