// SPDX-License-Identifier: MIT
/*
 * partition.c - stages of a model split over IPUs: each stage as a graph
 * of its own, the estimates the automatic split balances, and the split.
 *
 * Stages are contiguous in the node order, so every tensor that crosses a
 * boundary flows from a lower stage to a higher one: a stage waits only
 * for the stages before it and a pipeline of them cannot deadlock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/partition.h"
#include "ops/registry.h"

static uint64_t value_bytes(const struct ir_value *v)
{
	int64_t n = ir_value_numel(v);

	return n > 0 ? (uint64_t)n * ir_dtype_size(v->dtype) : 0;
}

/* Multiply-adds of the products, elements touched of the rest: what the
 * device's cost model grows with (Documentation/device/cost-model.md). */
static uint64_t node_work(const struct ir_graph *g, const struct ir_node *n)
{
	uint64_t out = 0, k = 0, in = 0;

	for (int i = 0; i < n->nout; i++)
		if (n->out[i] >= 0)
			out += (uint64_t)ir_value_numel(&g->vals[n->out[i]]);
	if (n->nin >= 2 && n->in[0] >= 0 && n->in[1] >= 0) {
		const struct ir_value *a = &g->vals[n->in[0]], *w = &g->vals[n->in[1]];

		if (n->opid == IR_OP_MatMul && a->rank >= 1)
			k = (uint64_t)a->dims[a->rank - 1];
		else if (n->opid == IR_OP_Gemm && a->rank == 2)
			k = (uint64_t)a->dims[ir_attr_int(n, "transA", 0) ? 0 : 1];
		else if (n->opid == IR_OP_Conv && w->rank >= 3)
			k = (uint64_t)ir_numel(w->rank - 1, w->dims + 1);
	}
	if (k)
		return out * k;
	for (int i = 0; i < n->nin; i++)
		if (n->in[i] >= 0 && !g->vals[n->in[i]].data)
			in += (uint64_t)ir_value_numel(&g->vals[n->in[i]]);
	return out + in;
}

/* Per node: the constants it is the first to read, the largest value it
 * makes, and its work. */
static int node_estimates(const struct ir_graph *g, uint64_t *consts, uint64_t *vals,
			  uint64_t *work)
{
	char *seen = calloc((size_t)g->nvals + 1, 1);

	if (!seen)
		return -1;
	for (int i = 0; i < g->nnodes; i++) {
		const struct ir_node *n = &g->nodes[i];

		consts[i] = vals[i] = 0;
		for (int k = 0; k < n->nin; k++) {
			int v = n->in[k];

			if (v >= 0 && g->vals[v].data && !seen[v]) {
				seen[v] = 1;
				consts[i] += value_bytes(&g->vals[v]);
			}
		}
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && value_bytes(&g->vals[n->out[k]]) > vals[i])
				vals[i] = value_bytes(&g->vals[n->out[k]]);
		work[i] = node_work(g, n);
	}
	free(seen);
	return 0;
}

/* A stage's bytes: its constants, kept for the whole program, and twice
 * its largest value (an op's input and output live at once; memory reuse
 * gives the others' bytes to later values). */
static uint64_t stage_bytes(uint64_t consts, uint64_t largest)
{
	return consts + 2 * largest;
}

void ipu_partition_estimate(const struct ir_graph *g, const struct ipu_partition *p,
			    struct ipu_stage_estimate *est)
{
	size_t nn = (size_t)g->nnodes + 1;
	uint64_t *b = malloc(nn * 3 * sizeof(*b));

	for (int s = 0; s < p->nstages; s++)
		est[s] = (struct ipu_stage_estimate){ 0, 0 };
	if (!b || node_estimates(g, b, b + nn, b + 2 * nn)) {
		free(b);
		return;
	}
	for (int s = 0; s < p->nstages; s++) {
		uint64_t consts = 0, largest = 0;

		for (int i = p->first[s]; i < p->first[s + 1]; i++) {
			consts += b[i];
			if (b[nn + i] > largest)
				largest = b[nn + i];
			est[s].work += b[2 * nn + i];
		}
		est[s].bytes = stage_bytes(consts, largest);
	}
	free(b);
}

/* Greedy cuts under a work limit and a byte cap: the fewest stages, each
 * as long as both allow (optimal for contiguous stages).  Returns the
 * stage count (cuts in first[] when it is at most max), or a node that
 * does not fit alone as -(node + 1). */
static int greedy(int nn, const uint64_t *consts, const uint64_t *vals, const uint64_t *work,
		  uint64_t limit, uint64_t cap, int max, int *first)
{
	uint64_t cc = 0, cv = 0, cw = 0;
	int ns = 1;

	first[0] = 0;
	for (int i = 0; i < nn; i++) {
		uint64_t v = vals[i] > cv ? vals[i] : cv;

		if (stage_bytes(consts[i], vals[i]) > cap)
			return -(i + 1);
		if (i > first[ns - 1] && (cw + work[i] > limit || stage_bytes(cc + consts[i], v) > cap)) {
			if (ns < max + 1)
				first[ns] = i;
			ns++;
			cc = cv = cw = 0;
			v = vals[i];
		}
		cc += consts[i];
		cv = v;
		cw += work[i];
	}
	if (ns <= max)
		first[ns] = nn;
	return ns;
}

/* More stages than the balance needed: split the stage with the most
 * work (of at least two nodes) where its halves' work is closest. */
static void split_more(struct ipu_partition *p, int want, const uint64_t *work)
{
	while (p->nstages < want) {
		int best = -1, at;
		uint64_t most = 0, half, acc = 0;

		for (int s = 0; s < p->nstages; s++) {
			uint64_t w = 0;

			for (int i = p->first[s]; i < p->first[s + 1]; i++)
				w += work[i];
			if (p->first[s + 1] - p->first[s] >= 2 && (best < 0 || w > most)) {
				best = s;
				most = w;
			}
		}
		if (best < 0)
			return;
		half = most / 2;
		for (at = p->first[best] + 1; at < p->first[best + 1] - 1; at++) {
			acc += work[at - 1];
			if (acc >= half)
				break;
		}
		memmove(&p->first[best + 2], &p->first[best + 1],
			(size_t)(p->nstages - best) * sizeof(p->first[0]));
		p->first[best + 1] = at;
		p->nstages++;
	}
}

int ipu_partition_auto(const struct ir_graph *g, int nstages, const struct ipu_target *t,
		       struct ipu_partition *p, struct ir_error *e)
{
	int nn = g->nnodes, r;
	uint64_t *consts, *vals, *work, lo = 0, hi = 0, cap;
	int first[IPU_PARTITION_MAX_IPUS + 1];

	if (nstages < 1 || nstages > IPU_PARTITION_MAX_IPUS)
		return ir_err(e, "--num_ipus %d: must be 1 to %d", nstages, IPU_PARTITION_MAX_IPUS);
	if (nn < nstages)
		return ir_err(e, "--num_ipus %d: the model has %d node%s, fewer than the IPUs", nstages,
			      nn, nn == 1 ? "" : "s");
	consts = malloc(((size_t)nn + 1) * sizeof(*consts));
	vals = malloc(((size_t)nn + 1) * sizeof(*vals));
	work = malloc(((size_t)nn + 1) * sizeof(*work));
	if (!consts || !vals || !work || node_estimates(g, consts, vals, work)) {
		r = ir_err(e, "out of memory estimating %d nodes", nn);
		goto out;
	}
	cap = (uint64_t)t->tiles * t->tile_mem / 4 * 3;
	for (int i = 0; i < nn; i++) {
		hi += work[i];
		if (work[i] > lo)
			lo = work[i];
	}
	r = greedy(nn, consts, vals, work, hi, cap, nstages, first);
	if (r < 0) {
		int i = -r - 1;

		r = ir_node_err(e, g, &g->nodes[i], "needs %llu bytes (its constants and twice its output), more than the %llu bytes a stage may take of an IPU (3/4 of %u tiles x %u)",
				(unsigned long long)stage_bytes(consts[i], vals[i]),
				(unsigned long long)cap, t->tiles, t->tile_mem);
		goto out;
	}
	if (r > nstages) {
		r = ir_err(e, "--num_ipus %d: the model needs at least %d IPUs of %u tiles x %u (its constants and twice its largest value a stage, at most 3/4 of each IPU)",
			   nstages, r, t->tiles, t->tile_mem);
		goto out;
	}
	/* the smallest largest-stage work the byte cap allows */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int k = greedy(nn, consts, vals, work, mid, cap, nstages, first);

		if (k > 0 && k <= nstages)
			hi = mid;
		else
			lo = mid + 1;
	}
	p->nstages = greedy(nn, consts, vals, work, lo, cap, nstages, first);
	memcpy(p->first, first, sizeof(first));
	split_more(p, nstages, work);
	r = 0;
out:
	free(consts);
	free(vals);
	free(work);
	return r;
}

static int set_list(int **list, int *n, const int *v, int count, struct ir_error *e)
{
	free(*list);
	*list = malloc(((size_t)count + 1) * sizeof(int));
	if (!*list) {
		*n = 0;
		return ir_err(e, "out of memory");
	}
	memcpy(*list, v, (size_t)count * sizeof(int));
	*n = count;
	return 0;
}

/*
 * A link joins one sender stream to one receiver stream, and an anchor
 * names one stream, so a value several later stages read leaves this
 * stage once per reader: an output as itself for the first (a value made
 * here), and "<value>@ipu<K>" (an Identity of it, the same tensor) for
 * each reader K in readers.
 */
static int fan_out(struct ir_graph *c, int v, uint64_t readers, struct ir_error *e)
{
	for (int k = 0; readers; k++) {
		size_t len = strlen(c->vals[v].name) + 16;
		char *name;
		int w, r;

		if (!(readers & ((uint64_t)1 << k)))
			continue;
		readers &= ~((uint64_t)1 << k);
		name = malloc(len);
		if (!name)
			return ir_err(e, "out of memory");
		snprintf(name, len, "%s@ipu%d", c->vals[v].name, k);
		if (ir_value_find(c, name) >= 0) {
			r = ir_err(e, "value '%s' sent to IPU %d: the model already has a value named '%s'",
				   c->vals[v].name, k, name);
			free(name);
			return r;
		}
		w = ir_value_add(c, name, e);
		if (w >= 0) {
			ir_value_set_shape(&c->vals[w], c->vals[v].dtype, c->vals[v].rank,
					   c->vals[v].dims);
			if (ir_node_add(c, name, "Identity", &v, 1, &w, 1, e) < 0 ||
			    ir_graph_add_output(c, w, e))
				w = -1;
		}
		free(name);
		if (w < 0)
			return -1;
	}
	return 0;
}

struct ir_graph *ipu_partition_stage(const struct ir_graph *g, const struct ipu_partition *p,
				     int s, struct ir_error *e)
{
	struct ir_graph *c = NULL;
	int *stage_of = NULL, *ins = NULL, *outs = NULL, nin = 0, nout = 0;
	char *read_before = NULL, *read_here = NULL, *listed = NULL;
	uint64_t *read_later = NULL;	/* bit k: stage k reads the value */
	int lo, hi;

	if (g->nvals < 0) {
		ir_err(e, "a graph of %d values", g->nvals);
		return NULL;
	}

	if (s < 0 || s >= p->nstages) {
		ir_err(e, "stage %d of %d", s, p->nstages);
		return NULL;
	}
	lo = p->first[s];
	hi = p->first[s + 1];
	stage_of = malloc(((size_t)g->nvals + 1) * sizeof(*stage_of));
	ins = malloc(((size_t)g->nvals + 1) * sizeof(*ins));
	outs = malloc(((size_t)g->nvals + 1) * sizeof(*outs));
	read_before = calloc((size_t)g->nvals + 1, 1);
	read_here = calloc((size_t)g->nvals + 1, 1);
	read_later = calloc((size_t)g->nvals + 1, sizeof(*read_later));
	listed = calloc((size_t)g->nvals + 1, 1);
	if (!stage_of || !ins || !outs || !read_before || !read_here || !read_later || !listed) {
		ir_err(e, "out of memory splitting %d values", g->nvals);
		goto fail;
	}
	/* the node position that makes each value, -1 for inputs/constants */
	for (int v = 0; v < g->nvals; v++)
		stage_of[v] = -1;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i].nout; k++)
			if (g->nodes[i].out[k] >= 0)
				stage_of[g->nodes[i].out[k]] = i;
	for (int i = 0, r = 0; i < g->nnodes; i++) {
		while (r + 1 < p->nstages && i >= p->first[r + 1])
			r++;
		for (int k = 0; k < g->nodes[i].nin; k++) {
			int v = g->nodes[i].in[k];

			if (v < 0 || g->vals[v].data)
				continue;
			if (i < lo)
				read_before[v] = 1;
			else if (i < hi)
				read_here[v] = 1;
			else
				read_later[v] |= (uint64_t)1 << r;
		}
	}
	/* inputs: the model's, then what earlier stages make */
	for (int i = 0; i < g->ninputs; i++)
		if (read_here[g->inputs[i]] && !listed[g->inputs[i]]) {
			listed[g->inputs[i]] = 1;
			ins[nin++] = g->inputs[i];
		}
	for (int v = 0; v < g->nvals; v++)
		if (read_here[v] && !listed[v] && stage_of[v] >= 0 && stage_of[v] < lo) {
			listed[v] = 1;
			ins[nin++] = v;
		}
	/* outputs: the model's made here, then what later stages read */
	memset(listed, 0, (size_t)g->nvals + 1);
	for (int i = 0; i < g->noutputs; i++) {
		int v = g->outputs[i];

		if (stage_of[v] < 0) {
			ir_err(e, "output '%s' is computed by no node (a model input or a constant): not supported over several IPUs",
			       g->vals[v].name);
			goto fail;
		}
		if (stage_of[v] >= lo && stage_of[v] < hi && !listed[v]) {
			listed[v] = 1;
			outs[nout++] = v;
		}
	}
	for (int v = 0; v < g->nvals; v++)
		if (read_later[v] && !listed[v] && stage_of[v] >= lo && stage_of[v] < hi) {
			listed[v] = 1;
			outs[nout++] = v;
		}
	if (!nout) {
		ir_err(e, "stage %d (nodes %d to %d) makes nothing the model or a later stage uses",
		       s, lo, hi - 1);
		goto fail;
	}
	c = ir_graph_clone(g, e);
	if (!c)
		goto fail;
	for (int v = 0; v < c->nvals; v++)
		c->vals[v].is_input = c->vals[v].is_output = 0;
	for (int i = 0; i < nin; i++)
		c->vals[ins[i]].is_input = 1;
	for (int i = 0; i < nout; i++)
		c->vals[outs[i]].is_output = 1;
	free(c->out_decl);
	c->out_decl = NULL;
	if (set_list(&c->inputs, &c->ninputs, ins, nin, e) ||
	    set_list(&c->outputs, &c->noutputs, outs, nout, e))
		goto fail;
	for (int i = 0; i < c->nnodes; i++)
		c->nodes[i].dead = i < lo || i >= hi;
	/* the first stage that reads a model input hands it to the later ones */
	for (int i = 0; i < c->ninputs; i++) {
		int v = c->inputs[i];

		if (stage_of[v] < 0 && !read_before[v] && read_later[v] &&
		    fan_out(c, v, read_later[v], e))
			goto fail;
	}
	for (int i = 0; i < nout; i++)
		/* all but the first reader */
		if (fan_out(c, outs[i], read_later[outs[i]] & (read_later[outs[i]] - 1), e))
			goto fail;
	if (ir_compact(c, e))
		goto fail;
	goto out;
fail:
	ir_graph_free(c);
	c = NULL;
out:
	free(stage_of);
	free(ins);
	free(outs);
	free(read_before);
	free(read_here);
	free(read_later);
	free(listed);
	return c;
}
