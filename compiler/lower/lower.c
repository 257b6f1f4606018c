/* SPDX-License-Identifier: MIT */
/*
 * lower.c - optimised IR graphs -> tiles -> .ipuef.
 *
 * For each graph: prepare (lower_prepare.c), one tensor per value, graph
 * inputs spread over tiles and filled by host-to-device stream copies,
 * every node lowered by its family (the `lower` hook of its operator in
 * ops/ops.def: elementwise, conv, matmul, rows, layout)
 * into exchanges and compute sets appended in order to the graph's
 * sequence, outputs streamed back.  Constants are frozen into the
 * executable next to the vertices that read them.  Several graphs (model
 * fusion) become the cases of a Switch on the `index` input; their anchors
 * are named graphK/NAME.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/dtype.h"
#include "ipu/file_atomic.h"
#include "ipu/ipuef.h"
#include "ipu/passes.h"
#include "custom/custom.h"
#include "lower_internal.h"

int ipu_lower_available(void)
{
	return 1;
}

static uint32_t rt_dtype(int dt)
{
	switch (dt) {
	case IR_F32: return IPURT_DT_F32;
	case IR_F16: return IPURT_DT_F16;
	case IR_I32: return IPURT_DT_I32;
	case IR_I64: return IPURT_DT_I64;
	case IR_U8: return IPURT_DT_U8;
	case IR_BOOL: return IPURT_DT_BOOL;
	case IR_I8: return IPURT_DT_I8;
	default: return IPURT_DT_INVALID;
	}
}


static int add_anchor(struct ipu_lower_anchors *as, const char *prefix, const struct ir_value *v,
		      uint32_t dir, uint32_t stream, int batch_axis, struct ir_error *e)
{
	struct ipuef_anchor *a;
	char *name;

	if (as->n == as->cap) {
		uint32_t cap = as->cap ? as->cap * 2 : 16;
		struct ipuef_anchor *na = realloc(as->a, cap * sizeof(*na));
		char **nn = na ? realloc(as->names, cap * sizeof(*nn)) : NULL;

		if (na)
			as->a = na;
		if (!na || !nn)
			return ir_err(e, "out of memory");
		as->names = nn;
		as->cap = cap;
	}
	name = malloc(strlen(prefix) + strlen(v->name) + 1);
	if (!name)
		return ir_err(e, "out of memory");
	sprintf(name, "%s%s", prefix, v->name);
	a = &as->a[as->n];
	memset(a, 0, sizeof(*a));
	as->names[as->n++] = name;
	a->name = name;
	a->dtype = rt_dtype(v->dtype);
	a->direction = dir;
	a->kind = IPUEF_ANCHOR_USER;
	a->rank = (uint32_t)v->rank;
	for (int i = 0; i < v->rank; i++)
		a->dims[i] = (uint64_t)v->dims[i];
	a->batch_dim = batch_axis < v->rank ? (uint32_t)batch_axis : IPUEF_NO_BATCH_DIM;
	a->stream_id = stream;
	a->programs = 1;
	return 0;
}

/* The run-time count of bounded output v (tensor cnt, I32 [1]) streamed
 * out as the output "<v>:count" (ipuef-format.md, Run-time counts). */
static int count_anchor(struct ipu_graph *gb, ipu_step seq, struct ipu_lower_anchors *as,
			const char *prefix, const struct ir_value *v, ipu_tensor cnt,
			struct ir_error *e)
{
	struct ir_value c;
	char name[IPUEF_MAX_NAME + 16], sname[IPUEF_MAX_NAME + 80];
	uint32_t sid;
	ipu_step sc;

	if (cnt == IPU_GRAPH_INVALID)
		return ir_err(e, "graph output '%s': its run-time count was not computed", v->name);
	snprintf(name, sizeof(name), "%s:count", v->name);
	snprintf(sname, sizeof(sname), "%s%s", prefix, name);
	for (uint32_t k = 0; k < as->n; k++)
		if (!strcmp(as->names[k], sname))
			return ir_err(e, "graph output '%s' would hide the run-time count of output '%s': rename it",
				      sname, v->name);
	memset(&c, 0, sizeof(c));
	c.name = name;
	c.dtype = IR_I32;
	c.rank = 1;
	c.dims[0] = 1;
	sid = ipu_graph_add_stream(gb, sname, IPUX_STREAM_D2H, 4);
	sc = sid == IPU_GRAPH_INVALID ? IPU_GRAPH_INVALID
				      : ipu_step_stream_copy(gb, sid, &(struct ipu_slice){ cnt, 0, 1 }, 1);
	if (sc == IPU_GRAPH_INVALID || ipu_step_append(gb, seq, sc))
		return ir_err(e, "graph builder: %s", ipu_graph_error(gb) ? ipu_graph_error(gb) : "failed");
	return add_anchor(as, prefix, &c, IPUEF_OUTPUT, sid, IR_MAX_RANK, e);
}

int lw_anchor_add(struct ipu_lower_anchors *as, const struct ir_value *v, uint32_t dir,
		  uint32_t stream, struct ir_error *e)
{
	return add_anchor(as, "", v, dir, stream, IR_MAX_RANK, e);
}

static void anchors_free(struct ipu_lower_anchors *as)
{
	for (uint32_t i = 0; i < as->n; i++)
		free(as->names[i]);
	free(as->names);
	free(as->a);
}

/* Half a tile, unless the constants of the rest of the model, kept for
 * the whole program, leave less: each tile holds their average share once
 * every op has placed its own (VGG-11 in fp32: 361 KB of a tile's 624 KiB),
 * and an eighth of a tile stays for the values live around the op. */
static uint64_t op_budget(const struct lw *l, const struct ir_node *n)
{
	uint64_t half = l->tile_mem / 2, own = 0, others, room;

	for (int k = 0; k < n->nin; k++) {
		int v = n->in[k], seen = 0;

		for (int j = 0; j < k && !seen; j++)
			seen = n->in[j] == v;
		if (v >= 0 && !seen && l->g->vals[v].data)
			own += (uint64_t)ir_value_numel(&l->g->vals[v]) * ir_dtype_size(l->g->vals[v].dtype);
	}
	others = (l->consts > own ? l->consts - own : 0) / (l->tiles ? l->tiles : 1);
	room = others + l->tile_mem / 8 < l->tile_mem ? l->tile_mem - others - l->tile_mem / 8 : 0;
	if (room < l->tile_mem / 8)
		room = l->tile_mem / 8;
	return room < half ? room : half;
}

static int lower_node(struct lw *l, const struct ir_node *n)
{
	const struct lw_op_hooks *h;
	int r;

	l->node = n;
	lw_temp_reset(l);
	l->budget = op_budget(l, n);
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0 && ir_value_numel(&l->g->vals[n->out[k]]) == 0)
			return lw_fail(l, "output '%s' is empty; empty tensors are not supported on the device",
				       l->g->vals[n->out[k]].name);
	if (ir_custom_is(n->op))
		return lw_custom(l, n) < 0 ? -1 : 0;
	h = lw_node_hooks(n);
	if (h && h->lower && (r = h->lower(l, n)) != 0)
		return r < 0 ? -1 : 0;
	return lw_fail(l, "operator %s is not lowered to tiles yet (shape inference and the reference evaluator support it)",
		       n->op);
}

/* Streams and nodes of one graph appended to sequence `seq`.  tokens (may
 * be NULL): receives a decoder's Main without its logits (lower_tokens.c),
 * or IPU_GRAPH_INVALID.  sh (may be NULL): constants shared with another
 * graph (lower_share.c); with sh->key set this is the second graph, a
 * decoder's prefill, whose caches are the states ss holds already.  smp
 * (may be NULL): receives the sampling program (lower_sample.c). */
static int lower_graph(struct ipu_graph *gb, const struct ir_graph *g, uint64_t *used,
		       uint64_t *kept, const struct ipu_target *t, struct lw_scratch *scr, ipu_step seq,
		       const char *prefix, struct ipu_lower_anchors *as,
		       struct ipu_lower_states *ss, ipu_step *tokens, struct lw_share *sh,
		       struct lw_sample *smp, struct ir_error *e)
{
	struct lw l;
	struct lw_tokens tok = { .body = IPU_GRAPH_INVALID };
	int r = -1;
	/* per output: the state input it replaces, or -1; per input: 1 if a state */
	int *in_of_out = malloc((size_t)(g->noutputs ? g->noutputs : 1) * sizeof(int));
	uint8_t *is_state = calloc((size_t)(g->ninputs ? g->ninputs : 1), 1);
	/* IPU_LOWER_TRACE=1: estimated bytes each node adds (debugging) */
	int trace = getenv("IPU_LOWER_TRACE") != NULL;

	memset(&l, 0, sizeof(l));
	l.gb = gb;
	l.g = g;
	l.sh = sh;
	if (sh)
		l.frozen = sh->frozen;	/* handed back at the end */
	l.used = used;
	l.kept = kept;
	l.reuse = !t->no_memory_reuse;
	l.tiles = t->tiles;
	l.tile_mem = t->tile_mem;
	l.budget = t->tile_mem / 2;
	l.seq = seq;
	l.e = e;
	l.scr = scr;
	l.vt = malloc((size_t)(g->nvals ? g->nvals : 1) * sizeof(*l.vt));
	l.count = malloc((size_t)(g->nvals ? g->nvals : 1) * sizeof(*l.count));
	l.last_use = malloc((size_t)(g->nvals ? g->nvals : 1) * sizeof(*l.last_use));
	l.optemp = calloc(t->tiles ? t->tiles : 1, sizeof(*l.optemp));
	l.hi = calloc(t->tiles ? t->tiles : 1, sizeof(*l.hi));
	l.base = calloc(t->tiles ? t->tiles : 1, sizeof(*l.base));
	l.absorbed = calloc((size_t)(g->nnodes ? g->nnodes : 1), 1);
	l.blk = calloc((size_t)(g->nvals ? g->nvals : 1), sizeof(*l.blk));
	if (!l.vt || !l.count || !l.last_use || !l.optemp || !l.hi || !l.base || !l.absorbed || !l.blk || !in_of_out || !is_state) {
		ir_err(e, "out of memory");
		goto out;
	}
	if (lw_state_find(g, t, in_of_out, e))
		goto out;
	if (tokens && lw_tokens_begin(&tok, gb, g, in_of_out, seq, as->n, e))
		goto out;
	if (tok.body != IPU_GRAPH_INVALID)
		l.seq = seq = tok.body;	/* inputs, ops and the states' updates */
	if (smp)
		smp->graph_first = as->n;
	for (int j = 0; j < g->noutputs; j++)
		if (in_of_out[j] >= 0) {
			if (!ss) {
				ir_err(e, "state '%s': a fused model cannot keep state on the device",
				       g->vals[g->inputs[in_of_out[j]]].name);
				goto out;
			}
			is_state[in_of_out[j]] = 1;
		}
	for (int i = 0; i < g->nvals; i++) {
		l.vt[i] = IPU_GRAPH_INVALID;
		l.count[i] = IPU_GRAPH_INVALID;
		l.last_use[i] = -1;
	}
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				l.last_use[n->in[k]] = i;
		/* a value nobody reads is dead once made */
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && l.last_use[n->out[k]] < i)
				l.last_use[n->out[k]] = i;
	}
	/* constants frozen beside the blocks that read them cost nothing to
	 * move but stay for the whole program: past this share of a tile
	 * they are copied in per run, and their memory is shared.  Every
	 * constant keeps one copy (its home) whatever this limit, so further
	 * copies only get what the model's own constants leave of 3/8 of a
	 * tile: a model whose weights fill the device keeps each once. */
	{
		uint64_t unique = 0, room = (uint64_t)t->tile_mem * 3 / 8;

		for (int i = 0; i < g->nvals; i++)
			if (g->vals[i].data && l.last_use[i] >= 0)
				unique += (uint64_t)ir_value_numel(&g->vals[i]) * ir_dtype_size(g->vals[i].dtype);
		l.consts = unique;
		unique /= t->tiles ? t->tiles : 1;
		l.keep_limit = unique < room ? room - unique : 0;
		if (l.keep_limit > (uint64_t)t->tile_mem / 4)
			l.keep_limit = (uint64_t)t->tile_mem / 4;
	}
	for (int i = 0; i < g->ninputs; i++) {
		const struct ir_value *v = &g->vals[g->inputs[i]];
		uint32_t dt = lw_dtype(v->dtype), sid;
		uint64_t cnt = (uint64_t)ir_value_numel(v);
		char sname[256];
		ipu_tensor tt;
		ipu_step sc;

		if (!dt || !rt_dtype(v->dtype) || !cnt) {
			ir_err(e, "graph input '%s' (%s, %lld elements) cannot be an anchor", v->name,
			       ir_dtype_name(v->dtype), (long long)cnt);
			goto out;
		}
		if (cnt * ipux_dtype_size(dt) > (uint64_t)t->tiles * (t->tile_mem / 2)) {
			ir_err(e, "graph input '%s' (%llu bytes) is more than the %llu bytes an input may take on %u tiles of %u bytes (half of each tile: the other half is for the ops that read it)",
			       v->name, (unsigned long long)(cnt * ipux_dtype_size(dt)),
			       (unsigned long long)t->tiles * (t->tile_mem / 2), t->tiles, t->tile_mem);
			goto out;
		}
		snprintf(sname, sizeof(sname), "%s%s", prefix, v->name);
		if (is_state[i] && sh && sh->key) {
			/* the prefill's cache: the decode step's state */
			if (lw_prefill_state(ss, v, &tt, e))
				goto out;
			l.vt[g->inputs[i]] = tt;
			l.last_use[g->inputs[i]] = g->nnodes;
			if (lw_value_live(&l, g->inputs[i]))
				goto out;
			continue;
		}
		tt = ipu_graph_add_tensor(gb, sname, dt, 1, &cnt);
		if (tt == IPU_GRAPH_INVALID ||
		    lw_spread(&l, tt, cnt, ipux_dtype_size(dt),
			      lw_matmul_a_tiles(&l, g->inputs[i], v->rank > 1 ? (int64_t)cnt / v->dims[v->rank - 1] : 1,
						cnt * ipux_dtype_size(dt))) < 0)
			goto builder;
		if (is_state[i]) {
			/* filled and drained by the state programs, never by Main */
			char wname[300], rname[300];
			uint32_t wsid, rsid;

			snprintf(wname, sizeof(wname), "%s/state_write", sname);
			snprintf(rname, sizeof(rname), "%s/state_read", sname);
			wsid = ipu_graph_add_stream(gb, wname, IPUX_STREAM_H2D, (uint32_t)(cnt * ipux_dtype_size(dt)));
			rsid = ipu_graph_add_stream(gb, rname, IPUX_STREAM_D2H, (uint32_t)(cnt * ipux_dtype_size(dt)));
			if (wsid == IPU_GRAPH_INVALID || rsid == IPU_GRAPH_INVALID)
				goto builder;
			if (lw_state_add(ss, v, rt_dtype(v->dtype), tt, wsid, rsid, e))
				goto out;
			l.vt[g->inputs[i]] = tt;
			/* live to the end: Main's last step writes its next value */
			l.last_use[g->inputs[i]] = g->nnodes;
			if (lw_value_live(&l, g->inputs[i]))
				goto out;
			continue;
		}
		sid = ipu_graph_add_stream(gb, sname, IPUX_STREAM_H2D, (uint32_t)(cnt * ipux_dtype_size(dt)));
		if (sid == IPU_GRAPH_INVALID)
			goto builder;
		sc = ipu_step_stream_copy(gb, sid, &(struct ipu_slice){ tt, 0, cnt }, 1);
		if (sc == IPU_GRAPH_INVALID || ipu_step_append(gb, seq, sc))
			goto builder;
		if (add_anchor(as, prefix, v, IPUEF_INPUT, sid, t->batch_axis, e))
			goto out;
		l.vt[g->inputs[i]] = tt;
		if (lw_value_live(&l, g->inputs[i]))
			goto out;
	}
	for (int i = 0; i < g->nnodes; i++) {
		uint64_t before = 0, after = 0;

		if (g->nodes[i].dead)
			continue;
		if (trace)
			for (uint32_t k = 0; k < t->tiles; k++)
				before += used[k];
		{
			char oname[IPUEF_MAX_NAME + 64];

			snprintf(oname, sizeof(oname), "%s%s", prefix, g->nodes[i].name);
			if (ipu_graph_set_origin(gb, oname, g->nodes[i].op))
				goto builder;
		}
		if ((!l.absorbed[i] && lower_node(&l, &g->nodes[i])) || lw_values_done(&l, i))
			goto out;
		if (t->progress && g->nnodes >= 50 && (i + 1) % (g->nnodes / 10) == 0)
			fprintf(t->progress, "ipu-compile: %slowered %d of %d nodes\n", prefix, i + 1, g->nnodes);
		if (trace) {
			for (uint32_t k = 0; k < t->tiles; k++)
				after += used[k];
			fprintf(stderr, "lower: %-40s %-20s %10llu bytes\n", g->nodes[i].name,
				g->nodes[i].op, (unsigned long long)(after - before));
		}
	}
	l.node = NULL;
	ipu_graph_set_origin(gb, NULL, NULL);
	for (int i = 0; i < g->noutputs; i++) {
		const struct ir_value *v = &g->vals[g->outputs[i]];
		uint32_t dt = lw_dtype(v->dtype), sid;
		uint64_t cnt = (uint64_t)ir_value_numel(v);
		char sname[256];
		ipu_tensor tt = IPU_GRAPH_INVALID;
		struct ipu_slice whole, *sl = &whole;
		uint32_t nsl = 1;
		ipu_step sc;

		/* a value left in its blocks is streamed out of them */
		if (lw_is_blocked(&l, g->outputs[i])) {
			if (lw_blocked_slices(&l, g->outputs[i], &sl, &nsl))
				goto out;
		} else if ((tt = lw_value_tensor(&l, g->outputs[i])) == IPU_GRAPH_INVALID)
			goto out;
		else
			whole = (struct ipu_slice){ tt, 0, cnt };
		if (smp && (r = lw_sample_output(smp, v, sl, nsl, e)) != 0) {
			/* the sampler's candidates stay on the device */
			if (sl != &whole)
				free(sl);
			if (r < 0)
				goto out;
			r = -1;
			continue;
		}
		if (sh && sh->key && in_of_out[i] < 0 && !strcmp(v->name, "logits")) {
			/* the prefill streams the next token only */
			if (sl != &whole)
				free(sl);
			continue;
		}
		if (!rt_dtype(v->dtype) || !cnt) {
			ir_err(e, "graph output '%s' (%s, %lld elements) cannot be an anchor", v->name,
			       ir_dtype_name(v->dtype), (long long)cnt);
			if (sl != &whole)
				free(sl);
			goto out;
		}
		if (in_of_out[i] >= 0) {
			/* the next value of a state: copied into it, on the device */
			ipu_tensor dst = l.vt[g->inputs[in_of_out[i]]];
			ipu_step x = ipu_step_exchange(gb);
			uint64_t at = 0;
			int bad = x == IPU_GRAPH_INVALID;

			for (uint32_t k = 0; k < nsl && !bad; k++) {
				bad = ipu_exchange_add(gb, x, sl[k], (struct ipu_slice){ dst, at, sl[k].count });
				at += sl[k].count;
			}
			if (sl != &whole)
				free(sl);
			if (bad || ipu_step_append(gb, seq, x))
				goto builder;
			continue;
		}
		snprintf(sname, sizeof(sname), "%s%s", prefix, v->name);
		sid = ipu_graph_add_stream(gb, sname, IPUX_STREAM_D2H, (uint32_t)(cnt * ipux_dtype_size(dt)));
		sc = sid == IPU_GRAPH_INVALID ? IPU_GRAPH_INVALID : ipu_step_stream_copy(gb, sid, sl, nsl);
		if (sl != &whole)
			free(sl);
		if (sc == IPU_GRAPH_INVALID)
			goto builder;
		if (tok.body != IPU_GRAPH_INVALID ? lw_tokens_output(&tok, v->name, sc, e)
						   : ipu_step_append(gb, seq, sc))
			goto builder;
		if (add_anchor(as, prefix, v, IPUEF_OUTPUT, sid, t->batch_axis, e))
			goto out;
		if (v->bounded && count_anchor(gb, seq, as, prefix, v, l.count[g->outputs[i]], e))
			goto out;
	}
	if (smp && lw_sample_end(smp, gb, tok.body, used, t->tiles, as, e))
		goto out;
	if (tok.body != IPU_GRAPH_INVALID && lw_tokens_end(&tok, as, tokens))
		goto builder;
	r = 0;
	goto out;
builder:
	ir_err(e, "graph builder: %s", ipu_graph_error(gb) ? ipu_graph_error(gb) : "failed");
out:
	free(l.vt);
	free(l.count);
	free(l.last_use);
	free(l.optemp);
	free(l.hi);
	free(l.base);
	free(l.absorbed);
	lw_blocked_free_all(&l, g->nvals);
	free(in_of_out);
	free(is_state);
	free(l.trefs);
	if (sh)
		sh->frozen = l.frozen;
	else
		lw_frozen_free(&l.frozen);
	lw_tokens_free(&tok);
	return r;
}

/* One lowering of the prepared graphs into builder gb (see struct
 * lw_scratch for the two passes).  Compiles the image when image != NULL. */
static int build(struct ipu_graph *gb, struct ir_graph *const *prepared, int n,
		 const struct ir_graph *prefill, const struct ipu_target *t, int tokens_prog,
		 int sampling, struct lw_scratch *scr, struct ipu_lower_anchors *as,
		 struct ipu_lower_states *ss, void **image, size_t *len, struct ipu_graph_stats *stats,
		 int *prefill_prog, int *sample_prog, struct ir_error *e)
{
	struct lw_sample smp = { .seq = IPU_GRAPH_INVALID };
	/* used, then kept */
	uint64_t *used = calloc(2 * (size_t)(t->tiles ? t->tiles : 1), sizeof(uint64_t));
	ipu_step main_seq, tokens = IPU_GRAPH_INVALID, pf = IPU_GRAPH_INVALID;
	struct lw_share sh = { 0 };
	uint32_t pf_first = 0;
	int r = -1;

	*prefill_prog = 0;
	*sample_prog = 0;
	if (!used)
		return ir_err(e, "out of memory");
	/* values move only through streams, so tensors may share memory */
	ipu_graph_set_memory_reuse(gb, !t->no_memory_reuse);
	main_seq = ipu_step_sequence(gb);
	if (main_seq == IPU_GRAPH_INVALID)
		goto builder;
	if (scr && !scr->measure) {
		/* the scratch tensors, one per tile and dtype that needs one */
		for (uint32_t tile = 0; tile < t->tiles; tile++)
			for (uint32_t dt = 1; dt < IPUX_DT_COUNT; dt++) {
				size_t k = (size_t)tile * IPUX_DT_COUNT + dt;
				char name[64];

				scr->t[k] = IPU_GRAPH_INVALID;
				if (!scr->peak[k])
					continue;
				snprintf(name, sizeof(name), "scratch/%u/%u", tile, dt);
				scr->t[k] = ipu_graph_add_tensor(gb, name, dt, 1, &scr->peak[k]);
				if (scr->t[k] == IPU_GRAPH_INVALID || ipu_graph_map_tile(gb, scr->t[k], tile))
					goto builder;
			}
	}
	if (n == 1) {
		lw_share_first(&sh, prepared[0]);
		if (lower_graph(gb, prepared[0], used, used + t->tiles, t, scr, main_seq, "", as, ss,
				tokens_prog ? &tokens : NULL, prefill ? &sh : NULL, sampling ? &smp : NULL, e))
			goto out;
		if (prefill) {
			pf = ipu_step_sequence(gb);
			pf_first = as->n;
			if (pf == IPU_GRAPH_INVALID)
				goto builder;
			if (lw_share_second(&sh, prefill, e) ||
			    lower_graph(gb, prefill, used, used + t->tiles, t, scr, pf, LW_PREFILL_PREFIX,
					as, ss, NULL, &sh, NULL, e)) {
				char m[IR_ERROR_LEN];

				snprintf(m, sizeof(m), "%s", e->msg);
				ir_err(e, "the prefill model: %s", m);
				goto out;
			}
			if (t->progress)
				fprintf(t->progress,
					"ipu-compile: prefill program: %llu bytes of its constants are the decode step's (kept once; %llu bytes copied in per prefill run, %llu more frozen near their use)\n",
					(unsigned long long)sh.shared_bytes,
					(unsigned long long)sh.copied_bytes,
					(unsigned long long)sh.frozen_again);
		}
	} else {
		/* fusion: index -> switch over the subgraphs */
		ipu_tensor idx = ipu_graph_add_tensor(gb, "index", IPUX_DT_I32, 1, (uint64_t[]){ 1 });
		uint32_t sid;
		ipu_step cases[64], sw, dflt;
		struct ir_value iv = { .name = "index", .dtype = IR_I32, .rank = 1, .dims = { 1 } };

		if (idx == IPU_GRAPH_INVALID || ipu_graph_map_tile(gb, idx, 0))
			goto builder;
		sid = ipu_graph_add_stream(gb, "index", IPUX_STREAM_H2D, 4);
		if (sid == IPU_GRAPH_INVALID ||
		    ipu_step_append(gb, main_seq, ipu_step_stream_copy(gb, sid, &(struct ipu_slice){ idx, 0, 1 }, 1)))
			goto builder;
		if (add_anchor(as, "", &iv, IPUEF_INPUT, sid, 0, e))
			goto out;
		as->a[as->n - 1].kind = IPUEF_ANCHOR_INDEX;
		as->a[as->n - 1].batch_dim = IPUEF_NO_BATCH_DIM;
		for (int k = 0; k < n; k++) {
			char prefix[32];

			snprintf(prefix, sizeof(prefix), "graph%d/", k);
			cases[k] = ipu_step_sequence(gb);
			if (cases[k] == IPU_GRAPH_INVALID)
				goto builder;
			if (lower_graph(gb, prepared[k], used, used + t->tiles, t, scr, cases[k], prefix, as, NULL, NULL,
					NULL, NULL, e)) {
				char m[IR_ERROR_LEN];

				snprintf(m, sizeof(m), "%s", e->msg);
				ir_err(e, "model %d of the fusion: %s", k, m);
				goto out;
			}
		}
		dflt = ipu_step_sequence(gb);
		sw = ipu_step_switch(gb, idx, cases, (uint32_t)n, dflt);
		if (sw == IPU_GRAPH_INVALID || ipu_step_append(gb, main_seq, sw))
			goto builder;
	}
	if (ipu_graph_add_program(gb, main_seq) < 0)
		goto builder;
	if (ss->n && lw_state_programs(gb, ss))
		goto builder;
	if (tokens != IPU_GRAPH_INVALID && ipu_graph_add_program(gb, tokens) != LW_TOKENS_PROGRAM)
		goto builder;
	if (pf != IPU_GRAPH_INVALID) {
		int k = ipu_graph_add_program(gb, pf);

		if (k < 0)
			goto builder;
		*prefill_prog = k;
		for (uint32_t i = pf_first; i < as->n; i++)
			as->a[i].programs = 1ull << k;
	}
	if (smp.seq != IPU_GRAPH_INVALID) {
		int k = ipu_graph_add_program(gb, smp.seq);

		if (k < 0)
			goto builder;
		*sample_prog = k;
		lw_sample_mark(&smp, as, k);
	}
	if (image && ipu_graph_compile(gb, image, len, stats))
		goto builder;
	if (image && ss->n && lw_state_regions(gb, ss, e))
		goto out;
	r = 0;
	goto out;
builder:
	/* a model too big for the IPU is the user's news, not the builder's */
	if (ipu_graph_error(gb) && !strncmp(ipu_graph_error(gb), "model does not fit one IPU", 26))
		ir_err(e, "%s", ipu_graph_error(gb));
	else
		ir_err(e, "graph builder: %s", ipu_graph_error(gb) ? ipu_graph_error(gb) : "failed");
out:
	lw_sample_free(&smp);
	lw_share_free(&sh);
	free(used);
	return r;
}

/* One lowering; with_token: give a decoder its next_token (*added says if it
 * did); tokens_prog: and its tokens-only program (lower_tokens.c); sampling:
 * and its sampling program (lower_sample.c). */
static int lower_image_once(struct ir_graph *const *graphs, int n, const struct ipu_target *t,
			    void **image, size_t *len, struct ipu_lower_info *info,
			    struct ir_error *e, int with_token, int tokens_prog, int sampling, int *added)
{
	struct ir_graph *prepared[64] = { 0 }, *pf = NULL;
	struct ipu_graph *gb = NULL;
	size_t slots = (size_t)(t->tiles ? t->tiles : 1) * IPUX_DT_COUNT;
	struct lw_scratch scr = { 0 };
	struct ipu_lower_anchors trial = { 0 };
	struct ipu_lower_states trial_states = { 0 };
	int r = -1;

	memset(info, 0, sizeof(*info));
	if (n < 1 || n > 64)
		return ir_err(e, "%d graphs: 1 to 64 can be lowered into one executable", n);
	scr.top = calloc(slots, sizeof(uint64_t));
	scr.peak = calloc(slots, sizeof(uint64_t));
	scr.t = calloc(slots, sizeof(ipu_tensor));
	if (!scr.top || !scr.peak || !scr.t) {
		ir_err(e, "out of memory");
		goto out;
	}
	for (int k = 0; k < n; k++) {
		int outs = graphs[k]->noutputs;

		prepared[k] = ir_graph_clone(graphs[k], e);
		if (!prepared[k] || (n == 1 && with_token && lw_state_token(prepared[k], t, e)) ||
		    (n == 1 && with_token && tokens_prog && sampling && lw_sample_candidates(prepared[k], e)))
			goto out;
		*added |= prepared[k]->noutputs > outs;
		if (ipu_lower_prepare(prepared[k], t->fold_limit, e) ||
		    lw_split_wide_argmax(prepared[k], t, t->fold_limit, e) ||
		    lw_split_long_gather(prepared[k], t, t->fold_limit, e) ||
		    lw_split_long_rows(prepared[k], t, t->fold_limit, e) ||
		    lw_split_wide_pad(prepared[k], t, t->fold_limit, e))
			goto out;
		if (t->fp8 && ir_pass_fp8(prepared[k], t->fp8, e) < 0)
			goto out;
	}
	if (t->prefill && lw_prefill_prepare(t->prefill, n, t, &pf, e))
		goto out;
	if (!t->no_memory_reuse) {
		/* every temporary is a tensor of its own: once its op has run,
		 * the builder's reuse by liveness gives its memory to later
		 * tensors of any dtype (smaller peaks than the scratch, and one
		 * pass) */
		gb = ipu_graph_create(t->tiles, t->tile_mem);
		if (!gb) {
			ir_err(e, "out of memory");
			goto out;
		}
		r = build(gb, prepared, n, pf, t, tokens_prog, sampling, NULL, &info->anchors_priv,
			  &info->states_priv, image, len, &info->stats, &info->prefill_program,
			  &info->sample_program, e);
	} else {
		/* without reuse: pass 1 measures the temporaries' peak per
		 * tile and dtype */
		scr.measure = 1;
		gb = ipu_graph_create(t->tiles, t->tile_mem);
		if (!gb) {
			ir_err(e, "out of memory");
			goto out;
		}
		r = build(gb, prepared, n, pf, t, tokens_prog, sampling, &scr, &trial, &trial_states, NULL,
			  NULL, NULL, &info->prefill_program, &info->sample_program, e);
		anchors_free(&trial);
		lw_states_free(&trial_states);
		ipu_graph_destroy(gb);
		gb = NULL;
		if (r)
			goto out;
		r = -1;
		/* pass 2: the same decisions, temporaries in the shared scratch */
		scr.measure = 0;
		memset(scr.top, 0, slots * sizeof(uint64_t));
		gb = ipu_graph_create(t->tiles, t->tile_mem);
		if (!gb) {
			ir_err(e, "out of memory");
			goto out;
		}
		r = build(gb, prepared, n, pf, t, tokens_prog, sampling, &scr, &info->anchors_priv,
			  &info->states_priv, image, len, &info->stats, &info->prefill_program,
			  &info->sample_program, e);
	}
	if (!r)
		r = lw_debug_blob(gb, &info->stats, &info->debug, &info->debug_len, e);
	if (!r && t->inspect && t->inspect(t->inspect_ctx, gb, *image, *len, &info->stats, e))
		r = -1;
out:
	for (int k = 0; k < 64; k++)
		ir_graph_free(prepared[k]);
	ir_graph_free(pf);
	ipu_graph_destroy(gb);
	free(scr.top);
	free(scr.peak);
	free(scr.t);
	if (r)
		ipu_lower_info_free(info);	/* nothing to hand out on failure */
	return r;
}

int ipu_lower_image(struct ir_graph *const *graphs, int n, const struct ipu_target *t,
		    void **image, size_t *len, struct ipu_lower_info *info,
		    struct ir_error *e)
{
	int added = 0, r = lower_image_once(graphs, n, t, image, len, info, e, 1, 1, 1, &added);

	if (!r || !added)
		return r;
	/* the sampler is ours too: a decoder that fits only without it keeps
	 * the rest (the runtime then samples from the logits) */
	if (t->progress)
		fprintf(t->progress, "ipu-compile: no %s program (%s); sampling streams the logits\n",
			IPUEF_PROGRAM_SAMPLE, e->msg);
	e->msg[0] = 0;
	r = lower_image_once(graphs, n, t, image, len, info, e, 1, 1, 0, &added);
	if (!r)
		return r;
	/* the tokens-only program runs Main's steps too, and the builder
	 * keeps every value two programs touch for the whole run (programs
	 * run in any order): a decoder that fits only with memory reuse goes
	 * without it (its steps stream the logits) rather than without
	 * next_token */
	if (t->progress)
		fprintf(t->progress, "ipu-compile: no %s program (%s); every step streams the logits\n",
			IPUEF_PROGRAM_TOKENS, e->msg);
	e->msg[0] = 0;
	r = lower_image_once(graphs, n, t, image, len, info, e, 1, 0, 0, &added);
	if (!r)
		return r;
	/* the greedy ArgMax is ours, not the model's: a vocabulary whose row
	 * does not fit one tile's op budget goes without it (the runtime then
	 * picks the token from the logits) rather than failing the model */
	if (t->progress)
		fprintf(t->progress, "ipu-compile: no next_token on the device (%s); the runtime chooses from the logits\n",
			e->msg);
	e->msg[0] = 0;
	return lower_image_once(graphs, n, t, image, len, info, e, 0, 0, 0, &added);
}

void ipu_lower_info_free(struct ipu_lower_info *info)
{
	anchors_free(&info->anchors_priv);
	lw_states_free(&info->states_priv);
	free(info->debug);
	memset(info, 0, sizeof(*info));
}

const struct ipuef_anchor *ipu_lower_anchors(const struct ipu_lower_info *info,
					     uint32_t *n)
{
	*n = info->anchors_priv.n;
	return info->anchors_priv.a;
}

int ipu_lower_write_mem(struct ir_graph *const *graphs, int n,
			const struct ipu_target *t, void **out, size_t *out_len,
			struct ipu_graph_stats *stats, struct ir_error *e)
{
	struct ipu_lower_info info;
	void *image = NULL;
	size_t len = 0;
	struct ipuef_writer *w = NULL;
	struct ipuef_metadata md;
	struct ipuef_program prog[6] = {
		{ "main", 0 }, { IPUEF_PROGRAM_STATE_WRITE, 1 }, { IPUEF_PROGRAM_STATE_READ, 2 },
		{ IPUEF_PROGRAM_TOKENS, LW_TOKENS_PROGRAM }
	};
	char err[512], summary[512];
	int r = -1;

	if (ipu_lower_image(graphs, n, t, &image, &len, &info, e))
		goto out;
	if (stats)
		*stats = info.stats;
	memset(&md, 0, sizeof(md));
	md.exe_format_major = IPUX_VERSION_MAJOR;
	/* the image's own: 1.0 unless it has custom codelets, so that
	 * runtimes of 1.0 still run it */
	md.exe_format_minor = ((const struct ipux_header *)image)->version_minor;
	md.ipu_version = t->ipu_version ? t->ipu_version : "ipu2";
	md.num_tiles = t->tiles;
	md.tile_mem = t->tile_mem;
	md.batch_size = 1;
	if (t->batch_size)
		md.batch_size = t->batch_size;
	else if (graphs[0]->ninputs && graphs[0]->vals[graphs[0]->inputs[0]].rank > t->batch_axis && n == 1)
		md.batch_size = (uint32_t)graphs[0]->vals[graphs[0]->inputs[0]].dims[t->batch_axis];
	md.programs = prog;
	md.anchors = ipu_lower_anchors(&info, &md.num_anchors);
	md.states = ipu_lower_states(&info, &md.num_states);
	md.num_programs = md.num_states ? 3 + lw_tokens_present(md.anchors, md.num_anchors) : 1;
	if (info.prefill_program) {
		prog[md.num_programs] = (struct ipuef_program){ IPUEF_PROGRAM_PREFILL,
								 (uint32_t)info.prefill_program };
		md.num_programs++;
	}
	if (info.sample_program) {
		prog[md.num_programs] = (struct ipuef_program){ IPUEF_PROGRAM_SAMPLE,
								 (uint32_t)info.sample_program };
		md.num_programs++;
	}
	snprintf(summary, sizeof(summary),
		 "{\"tiles_used\": %u, \"mem_max\": %llu, \"mem_total\": %llu, \"mem_max_no_reuse\": %llu, \"compute_sets\": %u, \"vertices\": %u, \"exchanges\": %u, \"exchange_bytes\": %llu}",
		 info.stats.tiles_used, (unsigned long long)info.stats.mem_max,
		 (unsigned long long)info.stats.mem_total,
		 (unsigned long long)info.stats.mem_max_no_reuse, info.stats.compute_sets,
		 info.stats.vertices, info.stats.exchanges,
		 (unsigned long long)info.stats.exchange_bytes);
	if (ipuef_writer_create(&w, err, sizeof(err)) ||
	    ipuef_writer_set_metadata(w, &md, err, sizeof(err)) ||
	    ipuef_writer_set_executable(w, image, len, err, sizeof(err)) ||
	    ipuef_writer_add_opaque(w, "ipu-compile", "1", summary, strlen(summary), err, sizeof(err)) ||
	    ipuef_writer_add_opaque(w, IPUEF_DEBUG_BLOB, IPUEF_DEBUG_VERSION, info.debug,
				    info.debug_len, err, sizeof(err)) ||
	    ipuef_writer_write_mem(w, out, out_len, err, sizeof(err))) {
		ir_err(e, "writing the .ipuef: %s", err);
		goto out;
	}
	r = 0;
out:
	ipuef_writer_destroy(w);
	ipu_lower_info_free(&info);
	free(image);
	return r;
}

int ipu_lower_write(struct ir_graph *const *graphs, int n,
		    const struct ipu_target *t, const char *out_path,
		    struct ipu_graph_stats *stats, struct ir_error *e)
{
	char err[512];
	void *buf;
	size_t len;
	int r;

	if (ipu_lower_write_mem(graphs, n, t, &buf, &len, stats, e))
		return -1;
	r = ipurt_write_file_atomic(out_path, buf, len, err, sizeof(err));
	free(buf);
	return r ? ir_err(e, "writing %s: %s", out_path, err) : 0;
}

struct ir_graph *ipu_lower_prepared_graph(const struct ir_graph *g,
					  const struct ipu_target *t, struct ir_error *e)
{
	struct ir_graph *p = ir_graph_clone(g, e);

	if (p && (ipu_lower_prepare(p, t->fold_limit, e) ||
		  lw_split_wide_argmax(p, t, t->fold_limit, e) ||
		  lw_split_long_gather(p, t, t->fold_limit, e) ||
		  lw_split_long_rows(p, t, t->fold_limit, e) ||
		  lw_split_wide_pad(p, t, t->fold_limit, e) ||
		  (t->fp8 && ir_pass_fp8(p, t->fp8, e) < 0))) {
		ir_graph_free(p);
		return NULL;
	}
	return p;
}
