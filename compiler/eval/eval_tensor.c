/* SPDX-License-Identifier: MIT */
/* eval_tensor.c - layout and data-movement ops (dtype-agnostic byte moves). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"

#define R IR_MAX_RANK
#define ES(t) ir_dtype_size((t)->dtype)
#define AT(t, i) ((char *)(t)->data + (size_t)(i) * ES(t))

int ir_ev_copy(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	(void)g; (void)n; (void)nin; (void)nout; (void)e;
	memcpy(out->data, in[0]->data, ir_tensor_bytes(out));
	return 0;
}

/* out[idx] = in[base + sum idx_k * st_k] for a dense out. */
static void gather_strided(const struct ir_tensor *x, struct ir_tensor *out,
			   int64_t base, const int64_t *st)
{
	int64_t idx[R] = { 0 }, cnt = ev_numel(out), off = base;
	size_t es = ES(x);

	for (int64_t i = 0; i < cnt; i++) {
		memcpy(AT(out, i), AT(x, off), es);
		for (int k = out->rank - 1; k >= 0; k--) {
			idx[k]++;
			off += st[k];
			if (idx[k] < out->dims[k])
				break;
			off -= st[k] * idx[k];
			idx[k] = 0;
		}
	}
}

int ir_ev_transpose(const struct ir_graph *g, const struct ir_node *n,
		    const struct ir_tensor *const *in, int nin,
		    struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t xs[R], st[R];
	size_t cnt;
	const int64_t *p = ir_attr_ints(n, "perm", &cnt);

	(void)g; (void)nin; (void)nout; (void)e;
	ev_strides(x, xs);
	for (int i = 0; i < x->rank; i++)
		st[i] = xs[p ? p[i] : x->rank - 1 - i];
	gather_strided(x, out, 0, st);
	return 0;
}

int ir_ev_slice(const struct ir_graph *g, const struct ir_node *n,
		const struct ir_tensor *const *in, int nin,
		struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t v[4][R], start[R], step[R], count[R], xs[R], st[R], base = 0;
	int c = (int)ev_numel(in[1]);
	struct ir_error sub;

	(void)nout;
	for (int k = 1; k < 5; k++)
		for (int i = 0; k < nin && in[k] && i < c; i++)
			v[k - 1][i] = ir_get_i(in[k]->data, in[k]->dtype, (size_t)i);
	if (ir_slice_resolve(x->rank, x->dims, v[0], v[1],
			     nin > 3 && in[3] ? v[2] : NULL,
			     nin > 4 && in[4] ? v[3] : NULL, c, start, step, count, &sub))
		return ir_node_err(e, g, n, "%s", sub.msg);
	ev_strides(x, xs);
	for (int i = 0; i < x->rank; i++) {
		base += start[i] * xs[i];
		st[i] = step[i] * xs[i];
	}
	gather_strided(x, out, base, st);
	return 0;
}

int ir_ev_expand(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	int64_t *o = ev_bcast(out, in[0], e), cnt = ev_numel(out);

	(void)g; (void)n; (void)nin; (void)nout;
	if (!o)
		return -1;
	for (int64_t i = 0; i < cnt; i++)
		memcpy(AT(out, i), AT(in[0], o[i]), ES(out));
	free(o);
	return 0;
}

int ir_ev_concat(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	int a = ir_axis(ir_attr_int(n, "axis", 0), out->rank);
	int64_t outer = 1, inner = ES(out), pos = 0;

	(void)g; (void)nout; (void)e;
	for (int i = 0; i < a; i++)
		outer *= out->dims[i];
	for (int i = a + 1; i < out->rank; i++)
		inner *= out->dims[i];
	for (int k = 0; k < nin; k++) {
		int64_t blk = in[k]->dims[a] * inner;

		for (int64_t o = 0; o < outer; o++)
			memcpy((char *)out->data + (o * out->dims[a]) * inner + pos,
			       (char *)in[k]->data + o * blk, (size_t)blk);
		pos += blk;
	}
	return 0;
}

int ir_ev_split(const struct ir_graph *g, const struct ir_node *n,
		const struct ir_tensor *const *in, int nin,
		struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int64_t outer = 1, inner = ES(x), pos = 0;

	(void)g; (void)nin; (void)e;
	for (int i = 0; i < a; i++)
		outer *= x->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		inner *= x->dims[i];
	for (int k = 0; k < nout; k++) {
		int64_t blk = out[k].dims[a] * inner;

		for (int64_t o = 0; o < outer; o++)
			memcpy((char *)out[k].data + o * blk,
			       (char *)x->data + o * x->dims[a] * inner + pos, (size_t)blk);
		pos += blk;
	}
	return 0;
}

int ir_ev_gather(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *idx = in[1];
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int64_t outer = 1, inner = ES(x), ni = ev_numel(idx), len = x->dims[a];

	(void)nin; (void)nout;
	for (int i = 0; i < a; i++)
		outer *= x->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		inner *= x->dims[i];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < ni; j++) {
			int64_t k = ir_get_i(idx->data, idx->dtype, (size_t)j);

			if (k < -len || k >= len)
				return ir_node_err(e, g, n, "index %lld is outside [-%lld, %lld)",
						   (long long)k, (long long)len, (long long)len);
			if (k < 0)
				k += len;
			memcpy((char *)out->data + (o * ni + j) * inner,
			       (char *)x->data + (o * len + k) * inner, (size_t)inner);
		}
	return 0;
}

int ir_ev_gather_elements(const struct ir_graph *g, const struct ir_node *n,
			  const struct ir_tensor *const *in, int nin,
			  struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0], *idx = in[1];
	int a = ir_axis(ir_attr_int(n, "axis", 0), x->rank);
	int64_t xs[R], id[R] = { 0 }, cnt = ev_numel(idx);

	(void)nin; (void)nout;
	ev_strides(x, xs);
	for (int64_t i = 0; i < cnt; i++, ev_next_idx(idx->rank, idx->dims, id)) {
		int64_t k = ir_get_i(idx->data, idx->dtype, (size_t)i), off = 0;

		if (k < -x->dims[a] || k >= x->dims[a])
			return ir_node_err(e, g, n, "index %lld out of range", (long long)k);
		if (k < 0)
			k += x->dims[a];
		for (int d = 0; d < x->rank; d++)
			off += (d == a ? k : id[d]) * xs[d];
		memcpy(AT(out, i), AT(x, off), ES(x));
	}
	return 0;
}

int ir_ev_tile(const struct ir_graph *g, const struct ir_node *n,
	       const struct ir_tensor *const *in, int nin,
	       struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t xs[R], id[R] = { 0 }, cnt = ev_numel(out);

	(void)g; (void)n; (void)nin; (void)nout; (void)e;
	ev_strides(x, xs);
	for (int64_t i = 0; i < cnt; i++, ev_next_idx(out->rank, out->dims, id)) {
		int64_t off = 0;

		for (int d = 0; d < x->rank; d++)
			off += (id[d] % x->dims[d]) * xs[d];
		memcpy(AT(out, i), AT(x, off), ES(x));
	}
	return 0;
}

int ir_ev_pad(const struct ir_graph *g, const struct ir_node *n,
	      const struct ir_tensor *const *in, int nin,
	      struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	const char *mode = ir_attr_str(n, "mode", "constant");
	int64_t xs[R], id[R] = { 0 }, pb[R], cnt = ev_numel(out);
	double cv = nin > 2 && in[2] ? ir_get_f(in[2]->data, in[2]->dtype, 0) : 0;
	int64_t ci = nin > 2 && in[2] ? ir_get_i(in[2]->data, in[2]->dtype, 0) : 0;

	(void)g; (void)nout; (void)e;
	ev_strides(x, xs);
	for (int d = 0; d < x->rank; d++)
		pb[d] = ir_get_i(in[1]->data, in[1]->dtype, (size_t)d);
	for (int64_t i = 0; i < cnt; i++, ev_next_idx(out->rank, out->dims, id)) {
		int64_t off = 0;
		int outside = 0;

		for (int d = 0; d < x->rank; d++) {
			int64_t s = id[d] - pb[d], len = x->dims[d];

			if (s < 0 || s >= len) {
				if (mode[0] == 'c') {
					outside = 1;
					break;
				} else if (mode[0] == 'e') {
					s = s < 0 ? 0 : len - 1;
				} else {
					int64_t period = 2 * (len - 1);

					if (period == 0) {
						s = 0;
					} else {
						s = s % period;
						if (s < 0)
							s += period;
						if (s >= len)
							s = period - s;
					}
				}
			}
			off += s * xs[d];
		}
		if (outside) {
			if (ir_dtype_is_float(out->dtype))
				ir_set_f(out->data, out->dtype, (size_t)i, cv);
			else
				ir_set_i(out->data, out->dtype, (size_t)i, ci);
		} else {
			memcpy(AT(out, i), AT(x, off), ES(x));
		}
	}
	return 0;
}

int ir_ev_shape(const struct ir_graph *g, const struct ir_node *n,
		const struct ir_tensor *const *in, int nin,
		struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t st = ir_attr_int(n, "start", 0);

	(void)g; (void)nin; (void)nout; (void)e;
	if (n->opid == IR_OP_Size) {
		ir_set_i(out->data, IR_I64, 0, ev_numel(x));
		return 0;
	}
	if (st < 0)
		st += x->rank;
	if (st < 0)
		st = 0;
	for (int64_t i = 0; i < out->dims[0]; i++)
		ir_set_i(out->data, IR_I64, (size_t)i, x->dims[st + i]);
	return 0;
}

int ir_ev_constant_of_shape(const struct ir_graph *g, const struct ir_node *n,
			    const struct ir_tensor *const *in, int nin,
			    struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_attr *a = ir_attr_find(n, "value");
	int64_t cnt = ev_numel(out);

	(void)g; (void)in; (void)nin; (void)nout; (void)e;
	if (!a)
		return 0; /* zeros */
	for (int64_t i = 0; i < cnt; i++)
		memcpy(AT(out, i), a->t->data, ES(out));
	return 0;
}

int ir_ev_range(const struct ir_graph *g, const struct ir_node *n,
		const struct ir_tensor *const *in, int nin,
		struct ir_tensor *out, int nout, struct ir_error *e)
{
	(void)g; (void)n; (void)nin; (void)nout; (void)e;
	if (ir_dtype_is_int(out->dtype)) {
		int64_t s = ir_get_i(in[0]->data, in[0]->dtype, 0);
		int64_t d = ir_get_i(in[2]->data, in[2]->dtype, 0);

		for (int64_t i = 0; i < out->dims[0]; i++)
			ir_set_i(out->data, out->dtype, (size_t)i, s + i * d);
	} else {
		double s = ir_get_f(in[0]->data, in[0]->dtype, 0);
		double d = ir_get_f(in[2]->data, in[2]->dtype, 0);
		/* like numpy/ONNX's reference: accumulate in the dtype */
		for (int64_t i = 0; i < out->dims[0]; i++)
			ir_set_f(out->data, out->dtype, (size_t)i, s + (double)i * d);
	}
	return 0;
}

int ir_ev_trilu(const struct ir_graph *g, const struct ir_node *n,
		const struct ir_tensor *const *in, int nin,
		struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t k = nin > 1 && in[1] ? ir_get_i(in[1]->data, in[1]->dtype, 0) : 0;
	int upper = (int)ir_attr_int(n, "upper", 1);
	int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
	int64_t cnt = ev_numel(x);

	(void)g; (void)nout; (void)e;
	memcpy(out->data, x->data, ir_tensor_bytes(x));
	for (int64_t i = 0; i < cnt; i++) {
		int64_t c = i % cols, r = (i / cols) % rows;
		int keep = upper ? c - r >= k : c - r <= k;

		if (!keep)
			memset(AT(out, i), 0, ES(out));
	}
	return 0;
}

int ir_ev_depth_space(const struct ir_graph *g, const struct ir_node *n,
		      const struct ir_tensor *const *in, int nin,
		      struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *x = in[0];
	int64_t b = ir_attr_int(n, "blocksize", 1);
	int crd = !strcmp(ir_attr_str(n, "mode", "DCR"), "CRD");
	int64_t id[4] = { 0 }, cnt = ev_numel(out);

	(void)g; (void)nin; (void)nout; (void)e;
	for (int64_t i = 0; i < cnt; i++, ev_next_idx(4, out->dims, id)) {
		int64_t nn = id[0], c = id[1], h = id[2], w = id[3], sc, sh, sw;

		if (n->opid == IR_OP_DepthToSpace) {
			int64_t bh = h % b, bw = w % b, C = out->dims[1];

			sc = crd ? c * b * b + bh * b + bw : (bh * b + bw) * C + c;
			sh = h / b;
			sw = w / b;
		} else {
			int64_t C = x->dims[1], blk = c / C, cc = c % C;

			sc = cc;
			sh = h * b + blk / b;
			sw = w * b + blk % b;
		}
		memcpy(AT(out, i), AT(x, ((nn * x->dims[1] + sc) * x->dims[2] + sh) * x->dims[3] + sw), ES(x));
	}
	return 0;
}

int ir_ev_onehot(const struct ir_graph *g, const struct ir_node *n,
		 const struct ir_tensor *const *in, int nin,
		 struct ir_tensor *out, int nout, struct ir_error *e)
{
	const struct ir_tensor *idx = in[0], *val = in[2];
	int a = ir_axis(ir_attr_int(n, "axis", -1), out->rank);
	int64_t depth = out->dims[a], inner = 1, outer = 1;

	(void)g; (void)nin; (void)nout; (void)e;
	for (int i = 0; i < a; i++)
		outer *= out->dims[i];
	for (int i = a + 1; i < out->rank; i++)
		inner *= out->dims[i];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t d = 0; d < depth; d++)
			for (int64_t j = 0; j < inner; j++) {
				int64_t k = (int64_t)ir_get_f(idx->data, idx->dtype, (size_t)(o * inner + j));

				if (k < 0)
					k += depth;
				memcpy(AT(out, (o * depth + d) * inner + j), AT(val, k == d ? 1 : 0), ES(out));
			}
	return 0;
}

int ir_ev_eyelike(const struct ir_graph *g, const struct ir_node *n,
		  const struct ir_tensor *const *in, int nin,
		  struct ir_tensor *out, int nout, struct ir_error *e)
{
	int64_t k = ir_attr_int(n, "k", 0);

	(void)g; (void)in; (void)nin; (void)nout; (void)e;
	for (int64_t r = 0; r < out->dims[0]; r++) {
		int64_t c = r + k;

		if (c >= 0 && c < out->dims[1])
			ir_set_f(out->data, out->dtype, (size_t)(r * out->dims[1] + c), 1);
	}
	return 0;
}
