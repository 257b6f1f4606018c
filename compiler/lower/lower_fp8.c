/* SPDX-License-Identifier: MIT */
/*
 * lower_fp8.c - the device side of the fp8 layers ir_pass_fp8 marked: their
 * weight pieces are stored as fp8 codes (one byte an element, frozen into
 * the executable), and under --precision fp8 their activation operand is
 * converted to fp8 on its tile by a CAST_FP8 vertex before the product.
 * A weight with per-channel scales is encoded channel by channel, and each
 * vertex carries the exponents of the output channels it computes.
 */
#include <stdlib.h>
#include <string.h>

#include "ipu/fp8.h"
#include "lower_internal.h"

static uint32_t fp8_dtype(int64_t fmt)
{
	return fmt == IPU_FP8_152 ? IPUX_DT_FP8_152 : IPUX_DT_FP8_143;
}

int lw_fp8_weight(const struct lw *l, int v, uint32_t *dt, int *scale)
{
	const struct ir_node *n = l->node;
	int64_t k;

	if (!n || (k = ir_attr_int(n, "fp8_weight_input", -1)) < 0 ||
	    k >= n->nin || n->in[k] != v)
		return 0;
	*dt = fp8_dtype(ir_attr_int(n, "fp8_weight_format", IPU_FP8_143));
	*scale = (int)ir_attr_int(n, "fp8_weight_scale", 0);
	return 1;
}

const int64_t *lw_fp8_channel_scales(const struct ir_node *n, size_t *count)
{
	const int64_t *sc = ir_attr_ints(n, "fp8_weight_scales", count);

	return sc && *count ? sc : NULL;
}

int lw_fp8_channel_piece(struct lw *l, const struct ir_node *n, int64_t c0,
			 int64_t count, uint32_t tile, struct ipu_slice *out)
{
	size_t nsc;
	const int64_t *sc = lw_fp8_channel_scales(n, &nsc);
	ipu_tensor t;
	int8_t *buf;

	if (!sc || c0 < 0 || count <= 0 || (uint64_t)(c0 + count) > nsc)
		return lw_fail(l, "internal: '%s' has %zu fp8 channel scales, channels %lld..%lld asked",
			       n->name, sc ? nsc : 0, (long long)c0, (long long)(c0 + count));
	t = lw_tensor(l, "fp8_scales", IPUX_DT_I8, (uint64_t)count);
	if (t == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, t, tile))
		return lw_check(l);
	lw_account(l, tile, (uint64_t)count);
	if (!(buf = malloc((size_t)count)))
		return lw_fail(l, "out of memory");
	for (int64_t c = 0; c < count; c++)
		buf[c] = (int8_t)sc[c0 + c];
	if (ipu_graph_set_init(l->gb, t, buf, (size_t)count)) {
		free(buf);
		return lw_check(l);
	}
	free(buf);
	*out = (struct ipu_slice){ t, 0, (uint64_t)count };
	return 0;
}

int lw_fp8_const_piece(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0,
		       int64_t nr, int64_t c0, int64_t nc, uint32_t tile,
		       struct ipu_slice *out)
{
	const struct ir_value *x = &l->g->vals[v];
	uint32_t dt;
	int scale;
	ipu_tensor t;
	uint8_t *buf;
	uint32_t fmt;
	size_t nsc = 0;
	const int64_t *sc;
	int64_t inner = 1;

	if (!lw_fp8_weight(l, v, &dt, &scale))
		return lw_fail(l, "internal: '%s' is not an fp8 weight", x->name);
	if ((sc = lw_fp8_channel_scales(l->node, &nsc))) {
		int64_t axis = ir_attr_int(l->node, "fp8_weight_axis", 0);

		if (axis < 0 || axis >= x->rank || x->dims[axis] != (int64_t)nsc)
			return lw_fail(l, "internal: '%s' has %zu fp8 channel scales on axis %lld",
				       x->name, nsc, (long long)axis);
		for (int d = (int)axis + 1; d < x->rank; d++)
			inner *= x->dims[d];
	}
	fmt = dt == IPUX_DT_FP8_152 ? IPU_FP8_152 : IPU_FP8_143;
	t = lw_tensor(l, x->name, dt, (uint64_t)(nr * nc));
	if (t == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, t, tile))
		return lw_check(l);
	lw_account(l, tile, (uint64_t)(nr * nc));
	buf = malloc((size_t)(nr * nc));
	if (!buf)
		return lw_fail(l, "out of memory");
	for (int64_t r = 0; r < nr; r++)
		for (int64_t c = 0; c < nc; c++) {
			size_t i = (size_t)(base + (uint64_t)((r0 + r) * ld + c0 + c));
			int s = sc ? (int)sc[((int64_t)i / inner) % (int64_t)nsc] : scale;

			buf[r * nc + c] = ipu_fp8_from_f32((float)ir_get_f(x->data, x->dtype, i),
							   fmt, s);
		}
	if (ipu_graph_set_init(l->gb, t, buf, (size_t)(nr * nc))) {
		free(buf);
		return lw_check(l);
	}
	free(buf);
	*out = (struct ipu_slice){ t, 0, (uint64_t)(nr * nc) };
	return 0;
}

int lw_fp8_is_layer(const struct ir_node *n)
{
	return ir_attr_int(n, "fp8_weight_input", -1) >= 0;
}

int lw_fp8_input(struct lw *l, const struct ir_node *n, int k, struct ipu_slice *op,
		 uint32_t tile, uint32_t *cs, int *scale)
{
	int64_t fmt = ir_attr_int(n, "fp8_input_format", -1);
	uint32_t p, dt;
	struct ipu_slice ops[2];

	*scale = 0;
	if (fmt < 0 || ir_attr_int(n, "fp8_weight_input", -1) == k)
		return 0;
	dt = fp8_dtype(fmt);
	*scale = (int)ir_attr_int(n, "fp8_input_scale", 0);
	if (*cs == IPU_GRAPH_INVALID &&
	    (*cs = ipu_graph_add_compute_set(l->gb, "fp8_cast")) == IPU_GRAPH_INVALID)
		return lw_check(l);
	ops[0] = *op;
	if (lw_temp(l, "fp8_in", dt, op->count, tile, &ops[1]))
		return -1;
	p = (uint32_t)*scale;
	if (ipu_graph_add_vertex(l->gb, *cs, IPUX_CL_CAST_FP8, ops, 2, &p, 1))
		return lw_check(l);
	*op = ops[1];
	return 0;
}
