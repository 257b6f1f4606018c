/* SPDX-License-Identifier: MIT */
/*
 * fp8_matmul.c - MATMUL_FP8: C (+)= A x B where A, B or both are stored in
 * fp8 and decoded in registers (the weights are B, or A when the product
 * is a 1x1 convolution W x X), the other F32 or F16; C F32 or F16.
 *
 * Blocks of C (MB rows x NB columns) are accumulated in f32 on the stack.
 * For each k, one row slice of B is decoded through the table and
 * broadcast-multiplied into the MB rows, so each decoded weight serves MB
 * products.  Sums run over k in increasing order with separate multiply and
 * add (never fused: contraction is off in this file whatever the build's
 * language mode says, gnu11 allowing it and c11 not), which makes the result independent of the host and of the build
 * flags: the in-process and QEMU devices agree bit for bit.
 *
 * Per-channel weight scales (IPUX_MM_SCALES_A/B) are powers of two applied
 * to each f32 sum once, in the epilogue: multiplying by 2^s is exact, so
 * the weights are decoded through one table whatever their channel's scale.
 */
#include "cl_opt.h"
#include "fp8_cl.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

enum { MP_BATCH, MP_M, MP_N, MP_K, MP_FLAGS, MP_SA, MP_SB, MP_COUNT };

#define MM8_MB 8u
#define MM8_NB 256u

static const char *const mm8_what[] = { "A", "B", "C" };
static const char *const mm8_dim[] = { "batch", "M", "N", "K" };

static int mm8_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p = v->params;
	uint32_t flags, i;
	uint64_t na, nb, nc;
	int r = cl_check_counts(v, "MATMUL_FP8", 3, 4, MP_COUNT, MP_COUNT, why,
				len);

	if (r)
		return r;
	r = fp8_check_readable(v, 0, "MATMUL_FP8", mm8_what[0], why, len);
	if (!r)
		r = fp8_check_readable(v, 1, "MATMUL_FP8", mm8_what[1], why, len);
	if (!r && !cl_is_fp8(v->ops[0].dtype) && !cl_is_fp8(v->ops[1].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "MATMUL_FP8: neither A (%s) nor B (%s) is fp8: "
			      "use MATMUL", cl_dt_name(v->ops[0].dtype),
			      cl_dt_name(v->ops[1].dtype));
	if (!r)
		r = cl_check_dtype_float(v, 2, "MATMUL_FP8", mm8_what[2], why,
					 len);
	if (!r)
		r = fp8_check_scale(v, 0, MP_SA, "MATMUL_FP8", "A", why, len);
	if (!r)
		r = fp8_check_scale(v, 1, MP_SB, "MATMUL_FP8", "B", why, len);
	if (r)
		return r;
	flags = p[MP_FLAGS];
	if (flags & ~(IPUX_MM_ACCUMULATE | IPUX_MM_TRANS_B | IPUX_MM_B_SHARED |
		      IPUX_MM_A_SHARED | IPUX_MM_SCALES_A | IPUX_MM_SCALES_B))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "MATMUL_FP8: unknown flags 0x%x", flags);
	if ((flags & IPUX_MM_SCALES_A) && (flags & IPUX_MM_SCALES_B))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "MATMUL_FP8: SCALES_A and SCALES_B both set (one "
			      "operand is the weight)");
	if (!!(flags & (IPUX_MM_SCALES_A | IPUX_MM_SCALES_B)) != (v->num_ops == 4))
		return ipu_errorf(why, len, IPUX_E_OPERAND_COUNT,
			      "MATMUL_FP8: %u operands, expected %u (4 with "
			      "SCALES_A or SCALES_B: the channel scales last)",
			      v->num_ops, v->num_ops == 4 ? 3 : 4);
	for (i = 0; i < 4; i++)
		if (p[i] == 0)
			return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
				      "MATMUL_FP8: %s is 0", mm8_dim[i]);
	na = (uint64_t)((flags & IPUX_MM_A_SHARED) ? 1 : p[MP_BATCH]) * p[MP_M];
	nb = (uint64_t)((flags & IPUX_MM_B_SHARED) ? 1 : p[MP_BATCH]) * p[MP_K];
	nc = (uint64_t)p[MP_BATCH] * p[MP_M];
	if (na > UINT32_MAX || (na *= p[MP_K]) > UINT32_MAX ||
	    nb > UINT32_MAX || (nb *= p[MP_N]) > UINT32_MAX ||
	    nc > UINT32_MAX || (nc *= p[MP_N]) > UINT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "MATMUL_FP8: an operand of batch %u, M %u, N %u, "
			      "K %u exceeds 2^32-1 elements",
			      p[0], p[1], p[2], p[3]);
	r = cl_check_count(v, 0, na, "MATMUL_FP8", "A",
			   (flags & IPUX_MM_A_SHARED) ? "M*K" : "batch*M*K",
			   why, len);
	if (!r)
		r = cl_check_count(v, 1, nb, "MATMUL_FP8", "B",
				   (flags & IPUX_MM_B_SHARED) ? "K*N"
							      : "batch*K*N",
				   why, len);
	if (!r)
		r = cl_check_count(v, 2, nc, "MATMUL_FP8", "C", "batch*M*N",
				   why, len);
	if (!r && (flags & IPUX_MM_SCALES_A))
		r = fp8_check_channel_scales(v, 3, 0, MP_SA, p[MP_M],
					     "MATMUL_FP8", "M", why, len);
	if (!r && (flags & IPUX_MM_SCALES_B))
		r = fp8_check_channel_scales(v, 3, 1, MP_SB, p[MP_N],
					     "MATMUL_FP8", "N", why, len);
	return r;
}

static uint64_t mm8_cost(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint64_t macs = cl_sat_mul(cl_sat_mul((uint64_t)p[0] * p[1], p[2]),
				   p[3]);
	uint64_t rows = (uint64_t)p[0] * p[1];

	/* the f16 rate of MATMUL: the weights are decoded on the way in */
	return CL_VERTEX_OVERHEAD + cl_div_up(macs, 64) + cl_sat_mul(rows, 4) +
	       cl_cost_stream(v->ops[2].count, v->ops[2].dtype, 1);
}

/* acc[0..n) += a * b[0..n), multiply then add, each rounded. */
static inline void mm8_axpy(float *restrict acc, float a,
			    const float *restrict b, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		acc[j] += a * b[j];
}

static int mm8_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	uint32_t adt = v->ops[0].dtype, bdt = v->ops[1].dtype;
	uint32_t cdt = v->ops[2].dtype;
	const uint8_t *a = IPU_OP_PTR(v, 0, const uint8_t);
	const uint8_t *b = IPU_OP_PTR(v, 1, const uint8_t);
	uint8_t *c = IPU_OP_PTR(v, 2, uint8_t);
	size_t batch = p[MP_BATCH], M = p[MP_M], N = p[MP_N], K = p[MP_K];
	uint32_t flags = p[MP_FLAGS];
	size_t amod = (flags & IPUX_MM_A_SHARED) ? 1 : batch;
	size_t bmod = (flags & IPUX_MM_B_SHARED) ? 1 : batch;
	int trans = !!(flags & IPUX_MM_TRANS_B);
	int accumulate = !!(flags & IPUX_MM_ACCUMULATE);
	size_t asz = ipux_dtype_size(adt), bsz = ipux_dtype_size(bdt);
	size_t csz = ipux_dtype_size(cdt);
	float tb[256], ta[256];
	float acc[MM8_MB][MM8_NB], brow[MM8_NB], av[MM8_MB];
	const int8_t *sc = v->num_ops == 4 ? IPU_OP_PTR(v, 3, const int8_t)
					   : NULL;
	int scale_rows = !!(flags & IPUX_MM_SCALES_A);
	size_t bt, n0, m0, k, i, j;

	if (cl_is_fp8(bdt))
		fp8_table_of(v, 1, MP_SB, tb);
	if (cl_is_fp8(adt))
		fp8_table_of(v, 0, MP_SA, ta);
	for (bt = 0; bt < batch; bt++) {
		const uint8_t *ab = a + (bt % amod) * M * K * asz;
		const uint8_t *bb = b + (bt % bmod) * K * N * bsz;
		uint8_t *cb = c + bt * M * N * csz;

		for (n0 = 0; n0 < N; n0 += MM8_NB) {
			size_t nb = N - n0 < MM8_NB ? N - n0 : MM8_NB;

			for (m0 = 0; m0 < M; m0 += MM8_MB) {
				size_t mb = M - m0 < MM8_MB ? M - m0 : MM8_MB;

				for (i = 0; i < mb; i++)
					for (j = 0; j < nb; j++)
						acc[i][j] = 0.0f;
				for (k = 0; k < K; k++) {
					if (trans)
						for (j = 0; j < nb; j++)
							brow[j] = fp8_get(bb, bdt, tb, (n0 + j) * K + k);
					else if (bdt == IPUX_DT_F32)
						memcpy(brow, (const float *)bb + k * N + n0,
						       nb * sizeof(float));
					else
						for (j = 0; j < nb; j++)
							brow[j] = fp8_get(bb, bdt, tb, k * N + n0 + j);
					for (i = 0; i < mb; i++)
						av[i] = fp8_get(ab, adt, ta,
								(m0 + i) * K + k);
					for (i = 0; i < mb; i++)
						mm8_axpy(acc[i], av[i], brow, nb);
				}
				for (i = 0; i < mb; i++) {
					size_t row = (m0 + i) * N + n0;

					for (j = 0; j < nb; j++) {
						float x = acc[i][j];

						if (sc)
							x *= fp8_pow2f(sc[scale_rows ? m0 + i : n0 + j]);

						if (accumulate)
							x = cl_getf(cb, cdt, row + j) + x;
						cl_setf(cb, cdt, row + j, x);
					}
				}
			}
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_matmul_fp8 = {
	"MATMUL_FP8", mm8_check, mm8_cost, mm8_run
};
