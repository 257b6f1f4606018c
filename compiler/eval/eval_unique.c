/* SPDX-License-Identifier: MIT */
/* eval_unique.c - Unique: distinct elements (or slices along an axis) in
 * order of first occurrence, or sorted ascending (slices
 * lexicographically), with first indices, inverse indices and counts. */
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "select.h"

struct items {
	const struct ir_tensor *x;
	int64_t outer, len, inner;	/* x as [outer, len, inner]; items along len */
};

static double item_at(const struct items *it, int64_t k, int64_t j)
{
	int64_t o = j / it->inner, i = j % it->inner;

	return ir_get_f(it->x->data, it->x->dtype, (size_t)((o * it->len + k) * it->inner + i));
}

static int cmp_items(const struct items *it, int64_t a, int64_t b)
{
	for (int64_t j = 0; j < it->outer * it->inner; j++) {
		double x = item_at(it, a, j), y = item_at(it, b, j);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

int64_t ir_unique(const struct ir_tensor *x, int has_axis, int axis, int sorted, int64_t *order,
		  int64_t *inverse, int64_t *counts, struct ir_error *e)
{
	struct items it = { x, 1, ev_numel(x), 1 };
	int64_t *first, *inv, *cnt, *rank, u = 0;

	if (has_axis) {
		it.len = x->dims[axis];
		for (int i = 0; i < axis; i++)
			it.outer *= x->dims[i];
		for (int i = axis + 1; i < x->rank; i++)
			it.inner *= x->dims[i];
	}
	first = malloc((size_t)(it.len + 1) * sizeof(int64_t));
	inv = malloc((size_t)(it.len + 1) * sizeof(int64_t));
	cnt = calloc((size_t)(it.len + 1), sizeof(int64_t));
	rank = malloc((size_t)(it.len + 1) * sizeof(int64_t));
	if (!first || !inv || !cnt || !rank) {
		free(first);
		free(inv);
		free(cnt);
		free(rank);
		ir_err(e, "out of memory");
		return -1;
	}
	for (int64_t k = 0; k < it.len; k++) {
		int64_t j = 0;

		while (j < u && cmp_items(&it, first[j], k))
			j++;
		if (j == u)
			first[u++] = k;
		inv[k] = j;
		cnt[j]++;
	}
	/* rank[j]: the output position of distinct item j */
	for (int64_t j = 0; j < u; j++) {
		rank[j] = j;
		if (sorted) {
			rank[j] = 0;
			for (int64_t m = 0; m < u; m++)
				rank[j] += cmp_items(&it, first[m], first[j]) < 0;
		}
	}
	for (int64_t j = 0; j < u; j++) {
		if (order)
			order[rank[j]] = first[j];
		if (counts)
			counts[rank[j]] = cnt[j];
	}
	for (int64_t k = 0; inverse && k < it.len; k++)
		inverse[k] = rank[inv[k]];
	free(first);
	free(inv);
	free(cnt);
	free(rank);
	return u;
}

int ir_ev_unique(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int has_axis = ir_attr_find(n, "axis") != NULL;
	int a = has_axis ? ir_axis(ir_attr_int(n, "axis", 0), x->rank) : 0;
	int64_t len = has_axis ? x->dims[a] : ev_numel(x), outer = 1, inner = 1, u;
	int64_t *order = malloc((size_t)(len + 1) * 3 * sizeof(int64_t)), *inv, *counts;
	size_t es = ir_dtype_size(x->dtype);

	(void)nin;
	if (!order)
		return ir_err(e, "out of memory");
	inv = order + len + 1;
	counts = inv + len + 1;
	if ((u = ir_unique(x, has_axis, a, (int)ir_attr_int(n, "sorted", 1), order, inv, counts, e)) < 0) {
		free(order);
		return -1;
	}
	if (u != (nout > 1 ? out[1].dims[0] : u)) {
		free(order);
		return ir_node_err(e, g, n, "%lld distinct items, inferred otherwise", (long long)u);
	}
	for (int i = 0; has_axis && i < a; i++)
		outer *= x->dims[i];
	for (int i = a + 1; has_axis && i < x->rank; i++)
		inner *= x->dims[i];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < u; j++)
			memcpy((char *)out[0].data + (size_t)((o * u + j) * inner) * es,
			       (const char *)x->data + (size_t)((o * len + order[j]) * inner) * es, (size_t)inner * es);
	for (int64_t j = 0; j < u; j++) {
		if (nout > 1)
			ir_set_i(out[1].data, out[1].dtype, (size_t)j, order[j]);
		if (nout > 3)
			ir_set_i(out[3].data, out[3].dtype, (size_t)j, counts[j]);
	}
	for (int64_t k = 0; nout > 2 && k < len; k++)
		ir_set_i(out[2].data, out[2].dtype, (size_t)k, inv[k]);
	free(order);
	return 0;
}
