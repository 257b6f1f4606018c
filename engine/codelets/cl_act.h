/* SPDX-License-Identifier: MIT */
/*
 * cl_act.h - the activation epilogue of MATMUL and CONV2D (codelet.h):
 * Relu or Clip applied to each final f32 value before it is stored, so a
 * producer followed only by that activation needs no second pass over its
 * output.  The formulas are UNARY RELU's and CLIP's, so a fused f32
 * output has the bits of the unfused pair.
 */
#ifndef IPU_CL_ACT_H
#define IPU_CL_ACT_H

#include "cl_common.h"

enum { CL_ACT_NONE = 0, CL_ACT_RELU = 1, CL_ACT_CLIP = 2 };

struct cl_act {
	int kind;
	float lo, hi;	/* Relu: 0, +inf (clamping to them is Relu's formula) */
};

/*
 * The activation of a vertex whose flags word is `flags` and whose CLIP
 * bounds (if any) follow its `base` params.  Checked vertices only.
 */
static inline void cl_act_of(const struct ipu_vertex_ctx *v, uint32_t flags,
			     uint32_t relu, uint32_t clip, uint32_t base,
			     struct cl_act *a)
{
	a->kind = CL_ACT_NONE;
	a->lo = a->hi = 0.0f;
	if (flags & relu) {
		a->kind = CL_ACT_RELU;
		a->hi = INFINITY;
	} else if (flags & clip) {
		a->kind = CL_ACT_CLIP;
		a->lo = cl_f32_from_bits(v->params[base]);
		a->hi = cl_f32_from_bits(v->params[base + 1]);
	}
}

/*
 * check(): the param count is base (+2 with clip), at most one activation,
 * and Clip's bounds are numbers with lo <= hi.
 */
static inline int cl_act_check(const struct ipu_vertex_ctx *v, const char *name,
			       uint32_t flags, uint32_t relu, uint32_t clip,
			       uint32_t base, char *why, size_t len)
{
	uint32_t want = base + ((flags & clip) ? 2 : 0);
	float lo, hi;

	if ((flags & relu) && (flags & clip))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: flags 0x%x ask for both RELU and CLIP", name,
			      flags);
	if (v->num_params != want)
		return ipu_errorf(why, len, IPUX_E_PARAM_COUNT,
			      "%s: %u params, expected %u%s", name,
			      v->num_params, want,
			      (flags & clip) ? " (CLIP appends lo, hi)" : "");
	if (!(flags & clip))
		return 0;
	lo = cl_f32_from_bits(v->params[base]);
	hi = cl_f32_from_bits(v->params[base + 1]);
	if (!(lo <= hi))
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "%s: CLIP bounds lo %g, hi %g: need numbers with "
			      "lo <= hi", name, (double)lo, (double)hi);
	return 0;
}

/*
 * x < lo ? lo : (x > hi ? hi : x) as two compare-and-blends: with lo <= hi
 * the same value (NaN and -0 pass through), and Relu's x < 0 ? 0 : x with
 * lo 0, hi +inf.
 */
static inline float cl_clamp(float x, float lo, float hi)
{
	x = x < lo ? lo : x;
	return x > hi ? hi : x;
}

static inline float cl_act1(const struct cl_act *a, float x)
{
	return a->kind ? cl_clamp(x, a->lo, a->hi) : x;
}

/* x[0..n) = act(x[0..n)); the loop vectorises (compare and blend). */
static inline void cl_act_apply(const struct cl_act *a, float *x, size_t n)
{
	float lo = a->lo, hi = a->hi;
	size_t i;

	if (a->kind)
		for (i = 0; i < n; i++)
			x[i] = cl_clamp(x[i], lo, hi);
}

#endif /* IPU_CL_ACT_H */
