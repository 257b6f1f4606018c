/* SPDX-License-Identifier: MIT */
/* eval_scatter.c - ScatterElements/Scatter, ScatterND and GatherND: element
 * moves, with the scatters' reductions in double (exact int64 for
 * integers). */
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

#define R IR_MAX_RANK
#define ES(t) ir_dtype_size((t)->dtype)
#define AT(t, i) ((char *)(t)->data + (size_t)(i) * ES(t))

/* out[o] = reduce(out[o], u[i]) */
static void put(struct ir_tensor *out, int64_t o, const struct ir_tensor *u, int64_t i,
		const char *red)
{
	if (!strcmp(red, "none")) {
		memcpy(AT(out, o), AT(u, i), ES(u));
	} else if (ir_dtype_is_int(out->dtype)) {
		int64_t a = ir_get_i(out->data, out->dtype, (size_t)o), b = ir_get_i(u->data, u->dtype, (size_t)i);

		a = red[0] == 'a' ? a + b : red[1] == 'u' ? a * b : red[1] == 'a' ? (a > b ? a : b) : (a < b ? a : b);
		ir_set_i(out->data, out->dtype, (size_t)o, a);
	} else {
		double a = ir_get_f(out->data, out->dtype, (size_t)o), b = ir_get_f(u->data, u->dtype, (size_t)i);

		a = red[0] == 'a' ? a + b : red[1] == 'u' ? a * b : red[1] == 'a' ? (a > b ? a : b) : (a < b ? a : b);
		ir_set_f(out->data, out->dtype, (size_t)o, a);
	}
}

/* Index value j of idx, wrapped once if negative; -1 if out of [0, len). */
static int64_t index_at(const struct ir_tensor *idx, int64_t j, int64_t len)
{
	int64_t k = ir_get_i(idx->data, idx->dtype, (size_t)j);

	if (k < 0)
		k += len;
	return k < 0 || k >= len ? -1 : k;
}

int ir_ev_scatter_elements(const struct ir_graph *g, const struct ir_node *n,
			   const struct ir_tensor *const *in, int nin,
			   struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *idx = in[1], *u = in[2];
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	const char *red = ir_attr_str(n, "reduction", "none");
	int64_t xs[R], id[R] = { 0 }, cnt = ev_numel(idx);

	(void)nin; (void)nout;
	memcpy(out->data, x->data, ir_tensor_bytes(x));
	ev_strides(x, xs);
	for (int64_t i = 0; i < cnt; i++, ev_next_idx(idx->rank, idx->dims, id)) {
		int64_t k = index_at(idx, i, x->dims[a]), off = 0;

		if (k < 0)
			return ir_node_err(e, g, n, "index %lld out of range",
					   (long long)ir_get_i(idx->data, idx->dtype, (size_t)i));
		for (int d = 0; d < x->rank; d++)
			off += (d == a ? k : id[d]) * xs[d];
		put(out, off, u, i, red);
	}
	return 0;
}

/* The flat offset in x of index tuple t (k values) of idx; -1 if out of
 * range.  base: the batch dims' offset. */
static int64_t tuple_offset(const struct ir_tensor *x, const int64_t *xs, const struct ir_tensor *idx,
			    int64_t t, int64_t k, int64_t b)
{
	int64_t off = 0;

	for (int64_t j = 0; j < k; j++) {
		int64_t v = index_at(idx, t * k + j, x->dims[b + j]);

		if (v < 0)
			return -1;
		off += v * xs[b + j];
	}
	return off;
}

int ir_ev_scatter_nd(const struct ir_graph *g, const struct ir_node *n,
		     const struct ir_tensor *const *in, int nin,
		     struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *idx = in[1], *u = in[2];
	const char *red = ir_attr_str(n, "reduction", "none");
	int64_t xs[R], k = idx->dims[idx->rank - 1], tuples = ev_numel(idx) / (k ? k : 1), slice = 1;

	(void)nin; (void)nout;
	if (!k)
		tuples = ir_numel(idx->rank - 1, idx->dims);
	memcpy(out->data, x->data, ir_tensor_bytes(x));
	ev_strides(x, xs);
	for (int d = (int)k; d < x->rank; d++)
		slice *= x->dims[d];
	for (int64_t t = 0; t < tuples; t++) {
		int64_t off = tuple_offset(x, xs, idx, t, k, 0);

		if (off < 0)
			return ir_node_err(e, g, n, "index tuple %lld out of range", (long long)t);
		for (int64_t j = 0; j < slice; j++)
			put(out, off + j, u, t * slice + j, red);
	}
	return 0;
}

int ir_ev_gather_nd(const struct ir_graph *g, const struct ir_node *n,
		    const struct ir_tensor *const *in, int nin,
		    struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *idx = in[1];
	int64_t b = ir_attr_int(n, "batch_dims", 0), k = idx->dims[idx->rank - 1];
	int64_t xs[R], batches = 1, per = 1, slice = 1;

	(void)nin; (void)nout;
	ev_strides(x, xs);
	for (int i = 0; i < b; i++)
		batches *= x->dims[i];
	for (int i = (int)b; i < idx->rank - 1; i++)
		per *= idx->dims[i];
	for (int64_t i = b + k; i < x->rank; i++)
		slice *= x->dims[i];
	for (int64_t bi = 0; bi < batches; bi++)
		for (int64_t t = 0; t < per; t++) {
			int64_t off = tuple_offset(x, xs, idx, bi * per + t, k, b);

			if (off < 0)
				return ir_node_err(e, g, n, "index tuple %lld out of range", (long long)(bi * per + t));
			/* the batch's own block of the data */
			off += b ? bi * xs[b - 1] : 0;
			memcpy(AT(out, (bi * per + t) * slice), AT(x, off), (size_t)slice * ES(x));
		}
	return 0;
}
