/* SPDX-License-Identifier: MIT */
/*
 * lower_blocked.c - values whose data stays in the blocks that made them.
 *
 * A MatMul cut into column blocks computes each [rows x columns] block on
 * its tile; its rows are not contiguous in the row-major output.  Copying
 * them into a standard tensor spread over the tiles, and then copying from
 * there again into every reader's operands, moved MobileNetV2's activations
 * twice per run in row-sized pieces.  Instead the blocks are pieces of one
 * tensor (the store), and the value keeps the map from its logical
 * elements to the store: runs [lb, lb + n) -> store [sb, sb + n), one per
 * block row.  Readers copy straight from the blocks (lw_piece,
 * lw_block_piece, lw_copy_in), elementwise ops whose operands share the
 * blocks run on them in place (their output is blocked the same way), and
 * the standard tensor is made, once, only for a reader that needs the
 * value's tensor itself (lw_value_tensor: graph outputs, layout ops).
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

struct lw_run {
	uint64_t lb, n, sb;
};

struct lw_blocked {
	uint32_t refs;		/* values sharing this layout and store */
	ipu_tensor store;	/* the blocks: pieces mapped where they were made */
	ipu_tensor std;		/* the standard tensor, once a reader needed it */
	uint32_t dt;
	uint64_t numel;
	uint64_t next;		/* store elements handed out to blocks */
	struct lw_run *run;	/* sorted by lb after lw_blocked_done */
	size_t n, cap;
};

/* A copy of logical elements into a destination, merged with its
 * neighbours when both sides continue each other. */
struct seg {
	uint64_t sb, db, n;
};

struct segs {
	struct seg *s;
	size_t n, cap;
};

static struct lw_blocked *rec(const struct lw *l, int v)
{
	return l->blk && v >= 0 ? l->blk[v] : NULL;
}

int lw_is_blocked(const struct lw *l, int v)
{
	struct lw_blocked *b = rec(l, v);

	return b && b->std == IPU_GRAPH_INVALID;
}

ipu_tensor lw_blocked_store(const struct lw *l, int v)
{
	struct lw_blocked *b = rec(l, v);

	return b ? b->store : IPU_GRAPH_INVALID;
}

int lw_blocked_new(struct lw *l, int v, uint32_t dt, uint64_t numel)
{
	struct lw_blocked *b;

	if (!l->blk)
		return lw_fail(l, "internal: no blocked-value table");
	if (l->blk[v])
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return lw_fail(l, "out of memory");
	b->refs = 1;
	b->dt = dt;
	b->numel = numel;
	b->std = IPU_GRAPH_INVALID;
	b->store = lw_tensor(l, "blocks", dt, numel);
	if (b->store == IPU_GRAPH_INVALID) {
		free(b);
		return lw_check(l);
	}
	l->blk[v] = b;
	return 0;
}

int lw_blocked_block(struct lw *l, int v, uint32_t tile, uint64_t count, struct ipu_slice *out)
{
	struct lw_blocked *b = rec(l, v);

	if (!b || b->next + count > b->numel)
		return lw_fail(l, "internal: block of %llu elements past the blocked value's end",
			       (unsigned long long)count);
	if (ipu_graph_map(l->gb, b->store, tile, b->next, b->next + count))
		return lw_check(l);
	lw_account(l, tile, count * ipux_dtype_size(b->dt));
	*out = (struct ipu_slice){ b->store, b->next, count };
	b->next += count;
	return 0;
}

int lw_blocked_run(struct lw *l, int v, uint64_t lb, uint64_t n, uint64_t sb)
{
	struct lw_blocked *b = rec(l, v);

	if (!b)
		return lw_fail(l, "internal: run of a value that is not blocked");
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		struct lw_run *r = realloc(b->run, cap * sizeof(*r));

		if (!r)
			return lw_fail(l, "out of memory");
		b->run = r;
		b->cap = cap;
	}
	b->run[b->n++] = (struct lw_run){ lb, n, sb };
	return 0;
}

static int run_cmp(const void *a, const void *b)
{
	const struct lw_run *x = a, *y = b;

	return x->lb < y->lb ? -1 : x->lb > y->lb;
}

int lw_blocked_done(struct lw *l, int v)
{
	struct lw_blocked *b = rec(l, v);
	uint64_t at = 0;

	if (!b)
		return 0;
	qsort(b->run, b->n, sizeof(*b->run), run_cmp);
	/* the runs tile the value once it is complete */
	for (size_t i = 0; b->next == b->numel && i < b->n; i++) {
		if (b->run[i].lb != at)
			return lw_fail(l, "internal: blocked value has a gap or overlap at element %llu",
				       (unsigned long long)at);
		at += b->run[i].n;
	}
	if (b->next == b->numel && at != b->numel)
		return lw_fail(l, "internal: blocked value covers %llu of %llu elements",
			       (unsigned long long)at, (unsigned long long)b->numel);
	return 0;
}

void lw_blocked_alias(struct lw *l, int dst, int src)
{
	struct lw_blocked *b = rec(l, src);

	if (!b || !l->blk || dst == src || l->blk[dst] == b)
		return;
	b->refs++;
	l->blk[dst] = b;
}

void lw_blocked_free_all(struct lw *l, int nvals)
{
	if (!l->blk)
		return;
	for (int v = 0; v < nvals; v++) {
		struct lw_blocked *b = l->blk[v];

		if (b && !--b->refs) {
			free(b->run);
			free(b);
		}
	}
	free(l->blk);
	l->blk = NULL;
}

/* The last run starting at or before element e. */
static size_t find_run(const struct lw_blocked *b, uint64_t e)
{
	size_t lo = 0, hi = b->n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (b->run[mid].lb <= e)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int segs_add(struct lw *l, struct segs *s, uint64_t sb, uint64_t db, uint64_t n)
{
	if (s->n && s->s[s->n - 1].sb + s->s[s->n - 1].n == sb && s->s[s->n - 1].db + s->s[s->n - 1].n == db) {
		s->s[s->n - 1].n += n;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct seg *x = realloc(s->s, cap * sizeof(*x));

		if (!x)
			return lw_fail(l, "out of memory");
		s->s = x;
		s->cap = cap;
	}
	s->s[s->n++] = (struct seg){ sb, db, n };
	return 0;
}

/* Logical [begin, begin + count) of b, to destination offset db on. */
static int gather(struct lw *l, const struct lw_blocked *b, uint64_t begin, uint64_t count,
		  uint64_t db, struct segs *s)
{
	uint64_t e = begin, end = begin + count;

	if (end > b->numel || !b->n)
		return lw_fail(l, "internal: elements [%llu, %llu) of a blocked value of %llu",
			       (unsigned long long)begin, (unsigned long long)end, (unsigned long long)b->numel);
	for (size_t i = find_run(b, begin); e < end; i++) {
		const struct lw_run *r = &b->run[i];
		uint64_t in, n;

		if (i >= b->n || r->lb > e || r->lb + r->n <= e)
			return lw_fail(l, "internal: element %llu of a blocked value is in no block",
				       (unsigned long long)e);
		in = e - r->lb;
		n = r->n - in < end - e ? r->n - in : end - e;
		if (segs_add(l, s, r->sb + in, db + (e - begin), n))
			return -1;
		e += n;
	}
	return 0;
}

/* Is [begin, begin + count) of t one piece on one tile (its tile in *tile)? */
static int one_piece(struct lw *l, ipu_tensor t, uint64_t begin, uint64_t count, uint32_t *tile)
{
	uint64_t b, e;
	uint32_t k, pt, off;

	for (k = 0; ipu_graph_tensor_location(l->gb, t, k, &pt, &b, &e, &off) == 0; k++)
		if (begin >= b && begin < e) {
			*tile = pt;
			return begin + count <= e;
		}
	return 0;
}

/* Adds the copies of s (store -> dst) to *xch. */
static int copy_segs(struct lw *l, const struct lw_blocked *b, const struct segs *s,
		     struct ipu_slice dst, ipu_step *xch)
{
	if (*xch == IPU_GRAPH_INVALID && (*xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
		return lw_check(l);
	for (size_t i = 0; i < s->n; i++)
		if (ipu_exchange_add(l->gb, *xch, (struct ipu_slice){ b->store, s->s[i].sb, s->s[i].n },
				     (struct ipu_slice){ dst.t, dst.begin + s->s[i].db, s->s[i].n }))
			return lw_check(l);
	return 0;
}

/* Rows r0.. (nr of them, nc elements each, leading dim ld, from element
 * base) of blocked b on `tile`: the store itself when they are one piece
 * there, else a temporary filled by one copy per merged run. */
static int blocked_rows(struct lw *l, struct lw_blocked *b, uint64_t base, int64_t ld,
			int64_t r0, int64_t nr, int64_t c0, int64_t nc, uint32_t tile,
			ipu_step *xch, struct ipu_slice *out)
{
	struct segs s = { 0 };
	uint32_t at;
	int r = -1;

	for (int64_t i = 0; i < nr; i++)
		if (gather(l, b, base + (uint64_t)((r0 + i) * ld + c0), (uint64_t)nc, (uint64_t)(i * nc), &s))
			goto out;
	if (s.n == 1 && one_piece(l, b->store, s.s[0].sb, s.s[0].n, &at) && at == tile) {
		*out = (struct ipu_slice){ b->store, s.s[0].sb, s.s[0].n };
		r = 0;
		goto out;
	}
	if (lw_temp(l, "in", b->dt, (uint64_t)(nr * nc), tile, out) || copy_segs(l, b, &s, *out, xch))
		goto out;
	r = 0;
out:
	free(s.s);
	return r;
}

int lw_blocked_piece(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0, int64_t nr,
		     int64_t c0, int64_t nc, uint32_t tile, ipu_step *xch, struct ipu_slice *out)
{
	struct lw_blocked *b = rec(l, v);

	return blocked_rows(l, b, base, ld, r0, nr, c0, nc, tile, xch, out);
}

int lw_copy_in(struct lw *l, int v, uint64_t begin, uint64_t count, struct ipu_slice dst,
	       ipu_step *xch)
{
	struct segs s = { 0 };
	ipu_tensor t;
	int r;

	if (lw_is_blocked(l, v)) {
		r = gather(l, rec(l, v), begin, count, 0, &s) || copy_segs(l, rec(l, v), &s, dst, xch) ? -1 : 0;
		free(s.s);
		return r;
	}
	t = lw_value_tensor(l, v);
	if (t == IPU_GRAPH_INVALID)
		return -1;
	if (*xch == IPU_GRAPH_INVALID && (*xch = ipu_step_exchange(l->gb)) == IPU_GRAPH_INVALID)
		return lw_check(l);
	if (ipu_exchange_add(l->gb, *xch, (struct ipu_slice){ t, begin, count }, dst))
		return lw_check(l);
	return 0;
}

int lw_blocked_block_tile(struct lw *l, int v, uint64_t base, int64_t ld, int64_t r0, int64_t nr,
			  int64_t c0, int64_t nc, uint32_t *tile)
{
	struct lw_blocked *b = rec(l, v);
	struct segs s = { 0 };
	int r = 0;

	if (!b || b->std != IPU_GRAPH_INVALID)
		return 0;
	for (int64_t i = 0; i < nr && s.n <= 1; i++)
		if (gather(l, b, base + (uint64_t)((r0 + i) * ld + c0), (uint64_t)nc, (uint64_t)(i * nc), &s))
			break;
	if (s.n == 1 && s.s[0].n == (uint64_t)(nr * nc))
		r = one_piece(l, b->store, s.s[0].sb, s.s[0].n, tile);
	free(s.s);
	return r;
}

int lw_read_as_matmul_a(struct lw *l, const struct ir_node *n, int v, int depth)
{
	const struct ir_graph *g = l->g;

	if (depth > 8)
		return 0;
	for (int j = (int)(n - g->nodes) + 1; j < g->nnodes; j++) {
		const struct ir_node *r = &g->nodes[j];
		const struct lw_op_hooks *h;
		int reads = 0;

		for (int k = 0; k < r->nin && !r->dead; k++)
			reads |= r->in[k] == v;
		if (!reads)
			continue;
		if (r->opid == IR_OP_MatMul && r->in[0] == v)
			return 1;
		h = lw_node_hooks(r);
		/* the same elements under another name or through an
		 * elementwise op (a bias, a reshape, an activation) */
		if ((l->absorbed[j] || (h && (h->lower == lw_alias || h->lower == lw_unary || h->lower == lw_binary))) &&
		    r->nout >= 1 &&
		    r->out[0] >= 0 && lw_read_as_matmul_a(l, r, r->out[0], depth + 1))
			return 1;
	}
	return 0;
}

int lw_blocked_partner(struct lw *l, const struct ir_node *n, int v)
{
	const struct ir_graph *g = l->g;
	int from = (int)(n - g->nodes);

	/* through an absorbed bias Add and reshapes, a few hops at most */
	for (int hop = 0; hop < 8; hop++) {
		int next = -1;

		for (int j = from + 1; j < g->nnodes && next < 0; j++) {
			const struct ir_node *r = &g->nodes[j];
			const struct lw_op_hooks *h;
			int reads = 0, u;

			for (int k = 0; k < r->nin && !r->dead; k++)
				reads |= r->in[k] == v;
			if (!reads)
				continue;
			h = lw_node_hooks(r);
			if (l->absorbed[j] || (h && h->lower == lw_alias)) {
				next = r->out[0];
				from = j;
				continue;
			}
			if (r->opid != IR_OP_Add || r->nin != 2)
				continue;
			u = r->in[0] == v ? r->in[1] : r->in[0];
			if (u != v && u >= 0 && lw_is_blocked(l, u) &&
			    ir_value_numel(&g->vals[u]) == ir_value_numel(&g->vals[v]))
				return u;
		}
		if (next < 0)
			return -1;
		v = next;
	}
	return -1;
}

int64_t lw_blocked_col_width(struct lw *l, int v, int64_t rows, int64_t cols)
{
	struct lw_blocked *b = rec(l, v);
	uint32_t tile;
	int64_t w;

	if (!b || b->std != IPU_GRAPH_INVALID || !b->n || b->numel != (uint64_t)(rows * cols))
		return 0;
	w = (int64_t)b->run[0].n;
	/* the first block is [rows x w] in one piece: the producer's were */
	if (w >= cols || !lw_blocked_block_tile(l, v, 0, cols, 0, rows, 0, w, &tile))
		return 0;
	return w;
}

int lw_blocked_range_tile(struct lw *l, int v, uint64_t begin, uint64_t count, uint32_t *tile)
{
	struct lw_blocked *b = rec(l, v);
	struct segs s = { 0 };
	int r = 0;

	if (!gather(l, b, begin, count, 0, &s) && s.n == 1)
		r = one_piece(l, b->store, s.s[0].sb, s.s[0].n, tile);
	free(s.s);
	return r;
}

int lw_blocked_slices(struct lw *l, int v, struct ipu_slice **out, uint32_t *n)
{
	struct lw_blocked *b = rec(l, v);
	struct segs s = { 0 };
	struct ipu_slice *sl;

	if (gather(l, b, 0, b->numel, 0, &s))
		goto fail;
	sl = malloc((s.n ? s.n : 1) * sizeof(*sl));
	if (!sl) {
		lw_fail(l, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < s.n; i++)
		sl[i] = (struct ipu_slice){ b->store, s.s[i].sb, s.s[i].n };
	free(s.s);
	*out = sl;
	*n = (uint32_t)s.n;
	return 0;
fail:
	free(s.s);
	return -1;
}

ipu_tensor lw_blocked_materialise(struct lw *l, int v)
{
	struct lw_blocked *b = rec(l, v);
	size_t es = ipux_dtype_size(b->dt);
	ipu_step xch = IPU_GRAPH_INVALID;
	struct segs s = { 0 };
	ipu_tensor t;
	int r = -1;

	if (b->std == IPU_GRAPH_INVALID) {
		/* spread like the standard output of a column-blocked product
		 * was: a few KiB per tile */
		t = lw_tensor(l, l->g->vals[v].name, b->dt, b->numel);
		if (t == IPU_GRAPH_INVALID)
			goto builder;
		if (lw_spread(l, t, b->numel, (uint32_t)es, (uint32_t)(b->numel * es / 8192 + 1)) < 0)
			goto out;
		if (gather(l, b, 0, b->numel, 0, &s) || copy_segs(l, b, &s, (struct ipu_slice){ t, 0, b->numel }, &xch) ||
		    lw_emit(l, xch, IPU_GRAPH_INVALID))
			goto out;
		b->std = t;
	}
	/* this value's reference; dropped when it dies (lw_values_done) */
	l->vt[v] = b->std;
	if (lw_tref(l, b->std, 1))
		goto out;
	r = 0;
	goto out;
builder:
	lw_check(l);
out:
	free(s.s);
	return r ? IPU_GRAPH_INVALID : l->vt[v];
}

/* Elementwise ops on blocked operands: computed block by block where
 * the first blocked operand's blocks are, the output blocked the same
 * way (one vertex per block).  Operands blocked alike are read in place;
 * other full-shape computed operands (blocked otherwise, or standard)
 * are copied in run by run, once, as they would be into a standard
 * output's pieces. */
static int same_runs(const struct lw_blocked *a, const struct lw_blocked *b)
{
	if (a == b)
		return 1;
	if (a->n != b->n || a->numel != b->numel)
		return 0;
	return !memcmp(a->run, b->run, a->n * sizeof(*a->run));
}

static uint32_t pieces(struct lw *l, ipu_tensor t)
{
	uint32_t k = 0, tile, off;
	uint64_t b, e;

	while (ipu_graph_tensor_location(l->gb, t, k, &tile, &b, &e, &off) == 0)
		k++;
	return k;
}

/* How operand k of an elementwise op on lead's blocks is read. */
enum ew_read { EW_SCALAR, EW_SAME, EW_GATHER };

static int sb_cmp(const void *a, const void *b)
{
	const struct lw_run *x = a, *y = b;

	return x->sb < y->sb ? -1 : x->sb > y->sb;
}

/* Copies the elements of value v at lead's store elements [pb, pe) into
 * dst: for each of lead's runs there (bysb: its runs by store offset),
 * the same logical elements of v. */
static int gather_store_range(struct lw *l, const struct lw_run *bysb, size_t nrun, int v,
			      uint64_t pb, uint64_t pe, struct ipu_slice dst, ipu_step *xch)
{
	size_t lo = 0, hi = nrun;

	/* the first run ending after pb */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (bysb[mid].sb + bysb[mid].n <= pb)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < nrun && bysb[i].sb < pe; i++) {
		uint64_t a = bysb[i].sb > pb ? bysb[i].sb : pb;
		uint64_t e = bysb[i].sb + bysb[i].n < pe ? bysb[i].sb + bysb[i].n : pe;

		if (lw_copy_in(l, v, bysb[i].lb + (a - bysb[i].sb), e - a,
			       (struct ipu_slice){ dst.t, dst.begin + (a - pb), e - a }, xch))
			return -1;
	}
	return 0;
}

/* One vertex of an elementwise op over store elements [pb, pe) on
 * `tile`. */
static int block_vertex(struct lw *l, uint32_t cs, uint32_t codelet, uint32_t op,
			const uint32_t *up, const int *ins, const enum ew_read *rd, int nops,
			const struct lw_run *bysb, size_t nrun, ipu_tensor ostore,
			uint32_t tile, uint64_t pb, uint64_t pe, ipu_step *xch)
{
	struct ipu_slice ops[4];
	uint32_t p[8], np = 0;

	for (int j = 0; j < nops; j++) {
		if (rd[j] == EW_SCALAR) {
			if (lw_piece(l, ins[j], 0, 1, tile, xch, &ops[j]))
				return -1;
		} else if (rd[j] == EW_SAME) {
			if (lw_piece_t(l, rec(l, ins[j])->store, pb, pe - pb, tile, xch, &ops[j]))
				return -1;
		} else if (lw_temp(l, "in", lw_dtype(l->g->vals[ins[j]].dtype), pe - pb, tile, &ops[j]) ||
			   gather_store_range(l, bysb, nrun, ins[j], pb, pe, ops[j], xch))
			return -1;
	}
	ops[nops] = (struct ipu_slice){ ostore, pb, pe - pb };
	if (codelet == IPUX_CL_UNARY) {
		memcpy(p, up, 3 * sizeof(*p));
		np = 3;
	} else if (codelet == IPUX_CL_BINARY || codelet == IPUX_CL_WHERE) {
		/* rank 1: [op,] 1, count, a stride per operand */
		if (codelet == IPUX_CL_BINARY)
			p[np++] = op;
		p[np++] = 1;
		p[np++] = (uint32_t)(pe - pb);
		for (int j = 0; j < nops; j++)
			p[np++] = rd[j] == EW_SCALAR ? 0 : 1;
	}
	if (ipu_graph_add_vertex(l->gb, cs, codelet, ops, (uint32_t)nops + 1, p, np))
		return lw_check(l);
	return 0;
}

int lw_blocked_elementwise(struct lw *l, const struct ir_node *n, uint32_t codelet,
			   uint32_t op, const uint32_t *up, const int *ins, int nops)
{
	const struct ir_value *o = &l->g->vals[n->out[0]];
	uint64_t total = (uint64_t)ir_value_numel(o);
	uint32_t odt = lw_dtype(o->dtype), cs;
	struct lw_blocked *lead = NULL, *ob;
	struct lw_run *bysb = NULL;
	enum ew_read rd[4];
	ipu_step xch = IPU_GRAPH_INVALID;
	uint64_t esz = ipux_dtype_size(odt), pb, pe;
	uint32_t tile, off;
	int gathered = 0, r = -1;

	if (!l->blk || !odt || nops > 3 || n->nout != 1)
		return 0;
	for (int k = 0; k < nops && !lead; k++)
		if (lw_is_blocked(l, ins[k]) && rec(l, ins[k])->next == rec(l, ins[k])->numel &&
		    (uint64_t)ir_value_numel(&l->g->vals[ins[k]]) == total)
			lead = rec(l, ins[k]);
	if (!lead)
		return 0;
	for (int k = 0; k < nops; k++) {
		const struct ir_value *x = &l->g->vals[ins[k]];
		struct lw_blocked *b = rec(l, ins[k]);

		if (ir_value_numel(x) == 1) {
			rd[k] = EW_SCALAR;
			continue;
		}
		/* broadcasts other than a scalar, and large constants, the
		 * standard lowering handles */
		if ((uint64_t)ir_value_numel(x) != total || x->data)
			return 0;
		if (b && b->std == IPU_GRAPH_INVALID && b->next == b->numel && same_runs(lead, b))
			rd[k] = EW_SAME;
		else {
			rd[k] = EW_GATHER;
			gathered = 1;
			/* a standard operand in fewer pieces than the lead's
			 * blocks leads instead (the standard lowering follows
			 * its pieces): fewer vertices for the same bytes */
			if (!lw_is_blocked(l, ins[k]) && l->vt[ins[k]] != IPU_GRAPH_INVALID &&
			    pieces(l, l->vt[ins[k]]) < pieces(l, lead->store))
				return 0;
		}
		esz += ir_dtype_size(x->dtype);
	}
	if (gathered) {
		bysb = malloc((lead->n ? lead->n : 1) * sizeof(*bysb));
		if (!bysb)
			return lw_fail(l, "out of memory");
		memcpy(bysb, lead->run, lead->n * sizeof(*bysb));
		qsort(bysb, lead->n, sizeof(*bysb), sb_cmp);
	}
	if (lw_blocked_new(l, n->out[0], odt, total))
		goto out;
	ob = l->blk[n->out[0]];
	cs = ipu_graph_add_compute_set(l->gb, n->name);
	if (cs == IPU_GRAPH_INVALID) {
		lw_check(l);
		goto out;
	}
	for (uint32_t k = 0; ipu_graph_tensor_location(l->gb, lead->store, k, &tile, &pb, &pe, &off) == 0; k++) {
		/* a vertex per block, or per part of one whose operands and
		 * output are more than the op's budget */
		uint64_t parts = ((pe - pb) * esz + l->budget - 1) / l->budget;

		if (ipu_graph_map(l->gb, ob->store, tile, pb, pe)) {
			lw_check(l);
			goto out;
		}
		lw_account(l, tile, (pe - pb) * ipux_dtype_size(odt));
		for (uint64_t q = 0; q < parts; q++)
			if (block_vertex(l, cs, codelet, op, up, ins, rd, nops, bysb, lead->n, ob->store, tile,
					 pb + (pe - pb) * q / parts, pb + (pe - pb) * (q + 1) / parts, &xch))
				goto out;
	}
	ob->next = ob->numel;
	for (size_t i = 0; i < lead->n; i++)
		if (lw_blocked_run(l, n->out[0], lead->run[i].lb, lead->run[i].n, lead->run[i].sb))
			goto out;
	if (lw_blocked_done(l, n->out[0]) || lw_emit(l, xch, cs))
		goto out;
	r = 1;
out:
	free(bysb);
	return r;
}
