/* SPDX-License-Identifier: MIT */
/*
 * fp8_cast.c - CAST_FP8: F32/F16 <-> FP8_143/FP8_152 with a per-tensor
 * scale, rounding and saturating exactly as the scalar reference (fp8.c).
 */
#include "cl_opt.h"
#include "fp8_cl.h"

static int cast_fp8_check(const struct ipu_vertex_ctx *v, char *why,
			  size_t len)
{
	uint32_t sdt, ddt;
	int r = cl_check_counts(v, "CAST_FP8", 2, 2, 1, 1, why, len);

	if (r)
		return r;
	sdt = v->ops[0].dtype;
	ddt = v->ops[1].dtype;
	if (!((cl_is_float(sdt) && cl_is_fp8(ddt)) ||
	      (cl_is_fp8(sdt) && cl_is_float(ddt))))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "CAST_FP8: %s to %s; one side must be F32 or "
			      "F16 and the other FP8_143 or FP8_152",
			      cl_dt_name(sdt), cl_dt_name(ddt));
	r = fp8_check_scale(v, cl_is_fp8(sdt) ? 0 : 1, 0, "CAST_FP8",
			    cl_is_fp8(sdt) ? "src" : "dst", why, len);
	if (r)
		return r;
	r = cl_check_count(v, 1, v->ops[0].count, "CAST_FP8", "dst",
			   "src count", why, len);
	if (r)
		return r;
	/* sizes differ, so in-place use could not be exact: refuse overlap */
	if (cl_overlap(v, 0, 1))
		return ipu_errorf(why, len, IPUX_E_OPERAND_SHAPE,
			      "CAST_FP8: src and dst overlap");
	return 0;
}

static uint64_t cast_fp8_cost(const struct ipu_vertex_ctx *v)
{
	uint32_t wide = cl_is_fp8(v->ops[0].dtype) ? v->ops[1].dtype
						     : v->ops[0].dtype;

	/* a table lookup or a rounding per element: twice a plain stream */
	return CL_VERTEX_OVERHEAD + cl_cost_stream(v->ops[0].count, wide, 2);
}

static int cast_fp8_run(const struct ipu_vertex_ctx *v)
{
	uint32_t sdt = v->ops[0].dtype, ddt = v->ops[1].dtype;
	size_t n = v->ops[0].count, i;
	int32_t scale = (int32_t)v->params[0];

	if (cl_is_fp8(sdt)) {
		const uint8_t *src = IPU_OP_PTR(v, 0, const uint8_t);
		float tab[256];

		ipu_fp8_table(tab, fp8_fmt_of(sdt), scale);
		if (ddt == IPUX_DT_F32) {
			float *dst = IPU_OP_PTR(v, 1, float);

			for (i = 0; i < n; i++)
				dst[i] = tab[src[i]];
		} else {
			uint16_t htab[256], *dst = IPU_OP_PTR(v, 1, uint16_t);

			for (i = 0; i < 256; i++)
				htab[i] = ipu_f32_to_f16(tab[i]);
			for (i = 0; i < n; i++)
				dst[i] = htab[src[i]];
		}
		return 0;
	}
	{
		uint8_t *dst = IPU_OP_PTR(v, 1, uint8_t);
		uint32_t fmt = fp8_fmt_of(ddt);

		if (sdt == IPUX_DT_F32) {
			const float *src = IPU_OP_PTR(v, 0, const float);

			for (i = 0; i < n; i++)
				dst[i] = ipu_fp8_from_f32(src[i], fmt, scale);
		} else {
			const uint16_t *src = IPU_OP_PTR(v, 0, const uint16_t);

			for (i = 0; i < n; i++)
				dst[i] = ipu_fp8_from_f16(src[i], fmt, scale);
		}
	}
	return 0;
}

const struct ipu_codelet ipu_cl_cast_fp8 = {
	"CAST_FP8", cast_fp8_check, cast_fp8_cost, cast_fp8_run
};
