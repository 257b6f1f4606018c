/* SPDX-License-Identifier: MIT */
/* lower_util.c - tensors, tile choice, operand pieces, program steps. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

uint32_t lw_dtype(int dt)
{
	switch (dt) {
	case IR_F32: return IPUX_DT_F32;
	case IR_F16: return IPUX_DT_F16;
	case IR_I32: return IPUX_DT_I32;
	case IR_I64: return IPUX_DT_I64;
	case IR_BOOL: case IR_U8: return IPUX_DT_U8;
	case IR_I8: return IPUX_DT_I8;
	default: return 0;
	}
}

uint32_t lw_f32bits(double v)
{
	float f = (float)v;
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

int lw_fail(struct lw *l, const char *fmt, ...)
{
	char msg[IR_ERROR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l->node)
		return ir_node_err(l->e, l->g, l->node, "%s", msg);
	return ir_err(l->e, "%s", msg);
}

int lw_fail_mem(struct lw *l, uint64_t need, const char *fmt, ...)
{
	char what[IR_ERROR_LEN / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return lw_fail(l, "%s needs %llu bytes on one tile, more than the %llu bytes a tile gives one op (half of its %u bytes of memory)",
		       what, (unsigned long long)need, (unsigned long long)l->budget, l->tile_mem);
}

int lw_check(struct lw *l)
{
	const char *m = ipu_graph_error(l->gb);

	if (!m)
		return 0;
	return lw_fail(l, "graph builder: %s", m);
}

ipu_tensor lw_tensor(struct lw *l, const char *what, uint32_t dtype, uint64_t n)
{
	char name[256];
	uint64_t d = n ? n : 1;

	snprintf(name, sizeof(name), "%s/%s", l->node ? l->node->name : "graph", what);
	return ipu_graph_add_tensor(l->gb, name, dtype, 1, &d);
}

void lw_account(struct lw *l, uint32_t tile, uint64_t bytes)
{
	if (tile < l->tiles)
		l->used[tile] += (bytes + 63) & ~(uint64_t)63;
}

uint32_t lw_pick_tile(struct lw *l)
{
	uint32_t best = l->cursor % l->tiles;

	for (uint32_t k = 0; k < l->tiles; k++) {
		uint32_t t = (l->cursor + k) % l->tiles;

		if (l->used[t] < l->used[best])
			best = t;
	}
	l->cursor = (best + 1) % l->tiles;
	return best;
}

int lw_spread(struct lw *l, ipu_tensor t, uint64_t n, uint32_t esize, uint32_t want)
{
	uint32_t first, nt;
	uint64_t per;
	int used;

	if (!n)
		n = 1;
	if (want < 1)
		want = 1;
	if (want > l->tiles)
		want = l->tiles;
	if ((uint64_t)want > n)
		want = (uint32_t)n;
	first = l->cursor;
	if (first + want > l->tiles)
		first = 0;
	nt = want;
	used = ipu_graph_map_linear(l->gb, t, first, nt, 1);
	if (used < 0)
		return lw_check(l);
	per = (n + (uint64_t)used - 1) / (uint64_t)used;
	for (int i = 0; i < used; i++)
		lw_account(l, first + (uint32_t)i, per * esize);
	l->cursor = (first + (uint32_t)used) % l->tiles;
	return used;
}

/* Spread wide enough that no tile holds more than a few KiB of it. */
static uint32_t spread_width(struct lw *l, uint64_t bytes)
{
	uint64_t w = (bytes + 8191) / 8192;

	if (w > l->tiles)
		w = l->tiles;
	return w ? (uint32_t)w : 1;
}

ipu_tensor lw_value_tensor(struct lw *l, int v)
{
	const struct ir_value *x = &l->g->vals[v];
	uint32_t dt = lw_dtype(x->dtype);
	uint64_t n = (uint64_t)ir_value_numel(x);
	ipu_tensor t;

	if (l->vt[v] != IPU_GRAPH_INVALID)
		return l->vt[v];
	if (!dt) {
		lw_fail(l, "value '%s' has type %s, which the device does not support",
			x->name, ir_dtype_name(x->dtype));
		return IPU_GRAPH_INVALID;
	}
	if (!x->data) {
		lw_fail(l, "value '%s' is used before it is computed", x->name);
		return IPU_GRAPH_INVALID;
	}
	if (!n) {
		lw_fail(l, "constant '%s' is empty; empty tensors are not supported on the device", x->name);
		return IPU_GRAPH_INVALID;
	}
	t = ipu_graph_add_tensor(l->gb, x->name, dt, 1, &n);
	if (t == IPU_GRAPH_INVALID || lw_spread(l, t, n, ipux_dtype_size(dt), spread_width(l, n * ipux_dtype_size(dt))) < 0 ||
	    ipu_graph_set_init(l->gb, t, x->data, n * ipux_dtype_size(dt))) {
		lw_check(l);
		return IPU_GRAPH_INVALID;
	}
	l->vt[v] = t;
	return t;
}

int lw_temp(struct lw *l, const char *what, uint32_t dt, uint64_t count,
	    uint32_t tile, struct ipu_slice *out)
{
	struct lw_scratch *s = l->scr;
	size_t k = (size_t)tile * IPUX_DT_COUNT + dt;
	ipu_tensor t;

	lw_account(l, tile, count * ipux_dtype_size(dt));
	if (s && !s->measure) {
		if (s->t[k] == IPU_GRAPH_INVALID || s->top[k] + count > s->peak[k])
			return lw_fail(l, "internal: scratch of tile %u overflows (%llu + %llu > %llu elements)",
				       tile, (unsigned long long)s->top[k], (unsigned long long)count,
				       (unsigned long long)s->peak[k]);
		*out = (struct ipu_slice){ s->t[k], s->top[k], count };
		s->top[k] += count;
		return 0;
	}
	t = lw_tensor(l, what, dt, count);
	if (t == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, t, tile))
		return lw_check(l);
	if (s) {
		s->top[k] += count;
		if (s->top[k] > s->peak[k])
			s->peak[k] = s->top[k];
	}
	*out = (struct ipu_slice){ t, 0, count };
	return 0;
}

void lw_temp_reset(struct lw *l)
{
	if (l->scr)
		memset(l->scr->top, 0, (size_t)l->tiles * IPUX_DT_COUNT * sizeof(uint64_t));
}

/* Is [begin, begin+count) of t entirely on `tile`? */
static int on_tile(struct lw *l, ipu_tensor t, uint64_t begin, uint64_t count,
		   uint32_t tile)
{
	uint64_t pos = begin, end = begin + count;

	while (pos < end) {
		uint32_t tt = ipu_graph_tile_of(l->gb, t, pos);
		uint32_t k = 0, pt;
		uint64_t b, e2;
		uint32_t off;
		int found = 0;

		if (tt != tile)
			return 0;
		/* find the interval holding pos to skip to its end */
		while (ipu_graph_tensor_location(l->gb, t, k, &pt, &b, &e2, &off) == 0) {
			if (pos >= b && pos < e2) {
				pos = e2;
				found = 1;
				break;
			}
			k++;
		}
		if (!found)
			return 0;
	}
	return 1;
}

int lw_piece_t(struct lw *l, ipu_tensor t, uint64_t begin, uint64_t count,
	       uint32_t tile, ipu_step *xch, struct ipu_slice *out)
{
	uint32_t dt = ipu_graph_tensor_dtype(l->gb, t);

	if (on_tile(l, t, begin, count, tile)) {
		*out = (struct ipu_slice){ t, begin, count };
		return 0;
	}
	if (lw_temp(l, "in", dt, count, tile, out))
		return -1;
	if (*xch == IPU_GRAPH_INVALID && (*xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (ipu_exchange_add(l->gb, *xch, (struct ipu_slice){ t, begin, count }, *out))
		return lw_check(l);
	return 0;
}

int lw_piece(struct lw *l, int v, uint64_t begin, uint64_t count, uint32_t tile,
	     ipu_step *xch, struct ipu_slice *out)
{
	const struct ir_value *x = &l->g->vals[v];

	if (x->data && l->vt[v] == IPU_GRAPH_INVALID) {
		/* a frozen copy of just this piece, where it is used */
		uint32_t dt = lw_dtype(x->dtype), f8dt;
		size_t es = ir_dtype_size(x->dtype);
		ipu_tensor tmp;
		int f8s;

		if (lw_fp8_weight(l, v, &f8dt, &f8s))
			return lw_fp8_const_piece(l, v, begin, (int64_t)count, 0, 1, 0,
						  (int64_t)count, tile, out);

		if (!dt)
			return lw_fail(l, "constant '%s' has type %s, which the device does not support",
				       x->name, ir_dtype_name(x->dtype));
		tmp = lw_tensor(l, x->name, dt, count);
		if (tmp == IPU_GRAPH_INVALID || ipu_graph_map_tile(l->gb, tmp, tile) ||
		    ipu_graph_set_init(l->gb, tmp, (const char *)x->data + begin * es, count * es))
			return lw_check(l);
		lw_account(l, tile, count * es);
		*out = (struct ipu_slice){ tmp, 0, count };
		return 0;
	}
	if (lw_value_tensor(l, v) == IPU_GRAPH_INVALID)
		return lw_check(l) ? -1 : -1;
	return lw_piece_t(l, l->vt[v], begin, count, tile, xch, out);
}

int lw_emit(struct lw *l, ipu_step xch, uint32_t cs)
{
	if (xch != IPU_GRAPH_INVALID && ipu_step_append(l->gb, l->seq, xch))
		return lw_check(l);
	if (cs != IPU_GRAPH_INVALID) {
		ipu_step ex = ipu_step_execute(l->gb, cs);

		if (ex == IPU_GRAPH_INVALID || ipu_step_append(l->gb, l->seq, ex))
			return lw_check(l);
	}
	return 0;
}
