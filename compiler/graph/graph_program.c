// SPDX-License-Identifier: MIT
/*
 * graph_program.c - program steps, exchanges and stream copies.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

static ipu_step new_step(struct ipu_graph *g, uint16_t kind, uint32_t a, uint32_t b)
{
	struct g_step *s;

	if (g->error || G_PUSH(g, steps))
		return IPU_GRAPH_INVALID;
	s = &g->steps[g->n_steps];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->a = a;
	s->b = b;
	s->selector = IPU_GRAPH_INVALID;
	return g->n_steps++;
}

static int add_kid(struct ipu_graph *g, struct g_step *s, uint32_t kid)
{
	if (g_grow(g, (void **)&s->kids, &s->cap, (uint64_t)s->nkids + 1, sizeof(*s->kids)))
		return -1;
	s->kids[s->nkids++] = kid;
	return 0;
}

ipu_step ipu_step_sequence(struct ipu_graph *g)
{
	return new_step(g, IPUX_STEP_SEQUENCE, 0, 0);
}

int ipu_step_append(struct ipu_graph *g, ipu_step seq, ipu_step child)
{
	if (g->error)
		return -1;
	if (seq >= g->n_steps || g->steps[seq].kind != IPUX_STEP_SEQUENCE)
		return g_fail(g, "append: step %u is not a sequence", seq);
	if (child >= g->n_steps)
		return g_fail(g, "append: no step %u", child);
	if (child == seq)
		return g_fail(g, "append: a sequence cannot contain itself");
	return add_kid(g, &g->steps[seq], child);
}

ipu_step ipu_step_execute(struct ipu_graph *g, uint32_t cs)
{
	if (!g->error && cs >= g->n_cs_names) {
		g_fail(g, "execute: no compute set %u", cs);
		return IPU_GRAPH_INVALID;
	}
	return new_step(g, IPUX_STEP_EXECUTE, cs, 0);
}

ipu_step ipu_step_exchange(struct ipu_graph *g)
{
	struct g_exchange *x;

	if (g->error || G_PUSH(g, exchanges))
		return IPU_GRAPH_INVALID;
	x = &g->exchanges[g->n_exchanges];
	memset(x, 0, sizeof(*x));
	x->origin = g->origin;
	g->n_exchanges++;
	return new_step(g, IPUX_STEP_EXCHANGE, g->n_exchanges - 1, 0);
}

int ipu_exchange_add(struct ipu_graph *g, ipu_step xs, struct ipu_slice src,
		     struct ipu_slice dst)
{
	struct g_exchange *x;

	if (g->error)
		return -1;
	if (xs >= g->n_steps || g->steps[xs].kind != IPUX_STEP_EXCHANGE)
		return g_fail(g, "exchange_add: step %u is not an exchange", xs);
	if (g_check_slice(g, src, "copy source") || g_check_slice(g, dst, "copy destination"))
		return -1;
	if (src.count != dst.count ||
	    g_tensor(g, src.t)->dtype != g_tensor(g, dst.t)->dtype)
		return g_fail(g, "copy '%s' -> '%s': %llu vs %llu elements or different dtypes",
			      g_tensor(g, src.t)->name, g_tensor(g, dst.t)->name,
			      (unsigned long long)src.count, (unsigned long long)dst.count);
	if (G_PUSH(g, copies))
		return -1;
	g->copies[g->n_copies] = (struct g_copy){ src, dst };
	x = &g->exchanges[g->steps[xs].a];
	if (g_grow(g, (void **)&x->idx, &x->cap, (uint64_t)x->n + 1, sizeof(*x->idx)))
		return -1;
	x->idx[x->n++] = g->n_copies++;
	return 0;
}

ipu_step ipu_step_copy(struct ipu_graph *g, struct ipu_slice src, struct ipu_slice dst)
{
	ipu_step s = ipu_step_exchange(g);

	if (s == IPU_GRAPH_INVALID || ipu_exchange_add(g, s, src, dst))
		return IPU_GRAPH_INVALID;
	return s;
}

ipu_step ipu_step_stream_copy(struct ipu_graph *g, uint32_t stream,
			      const struct ipu_slice *slices, uint32_t nslices)
{
	uint64_t bytes = 0;
	uint32_t i;
	struct g_stream_copy *sc;

	if (g->error)
		return IPU_GRAPH_INVALID;
	if (stream >= g->n_streams) {
		g_fail(g, "stream copy: no stream %u", stream);
		return IPU_GRAPH_INVALID;
	}
	for (i = 0; i < nslices; i++) {
		if (g_check_slice(g, slices[i], "stream copy"))
			return IPU_GRAPH_INVALID;
		bytes += slices[i].count * g_tensor(g, slices[i].t)->esize;
	}
	if (bytes != g->streams[stream].bytes) {
		g_fail(g, "stream copy on '%s': slices hold %llu bytes, stream buffers are %u",
		       g->streams[stream].name, (unsigned long long)bytes,
		       g->streams[stream].bytes);
		return IPU_GRAPH_INVALID;
	}
	if (g_grow(g, (void **)&g->sc_slices, &g->cap_sc_slices,
		   (uint64_t)g->n_sc_slices + nslices, sizeof(*g->sc_slices)) ||
	    G_PUSH(g, scs))
		return IPU_GRAPH_INVALID;
	sc = &g->scs[g->n_scs];
	sc->stream = stream;
	sc->first_slice = g->n_sc_slices;
	sc->nslices = nslices;
	for (i = 0; i < nslices; i++)
		g->sc_slices[g->n_sc_slices++] = slices[i];
	g->n_scs++;
	return new_step(g, IPUX_STEP_STREAM_COPY, g->n_scs - 1, 0);
}

ipu_step ipu_step_repeat(struct ipu_graph *g, uint32_t count, ipu_step body)
{
	if (!g->error && body >= g->n_steps) {
		g_fail(g, "repeat: no step %u", body);
		return IPU_GRAPH_INVALID;
	}
	return new_step(g, IPUX_STEP_REPEAT, count, body);
}

ipu_step ipu_step_switch(struct ipu_graph *g, ipu_tensor selector,
			 const ipu_step *cases, uint32_t ncases, ipu_step dflt)
{
	struct g_tensor *t = g_tensor(g, selector);
	ipu_step s;
	uint32_t i;

	if (g->error)
		return IPU_GRAPH_INVALID;
	if (!t || t->dtype != IPUX_DT_I32 || t->elems < 1) {
		g_fail(g, "switch: selector must be an i32 tensor");
		return IPU_GRAPH_INVALID;
	}
	for (i = 0; i < ncases; i++) {
		if (cases[i] >= g->n_steps) {
			g_fail(g, "switch: case %u is no step", i);
			return IPU_GRAPH_INVALID;
		}
	}
	if (dflt >= g->n_steps) {
		g_fail(g, "switch: default is no step");
		return IPU_GRAPH_INVALID;
	}
	s = new_step(g, IPUX_STEP_SWITCH, 0, 0);
	if (s == IPU_GRAPH_INVALID)
		return s;
	g->steps[s].selector = selector;
	for (i = 0; i < ncases; i++)
		if (add_kid(g, &g->steps[s], cases[i]))
			return IPU_GRAPH_INVALID;
	if (add_kid(g, &g->steps[s], dflt))
		return IPU_GRAPH_INVALID;
	return s;
}

ipu_step ipu_step_sync(struct ipu_graph *g, enum ipux_sync_kind kind)
{
	return new_step(g, IPUX_STEP_SYNC, (uint32_t)kind, 0);
}

int ipu_graph_add_program(struct ipu_graph *g, ipu_step root)
{
	if (g->error)
		return -1;
	if (root >= g->n_steps)
		return g_fail(g, "program: no step %u", root);
	if (g->n_programs >= IPUX_MAX_PROGRAMS)
		return g_fail(g, "more than %u programs", IPUX_MAX_PROGRAMS);
	if (G_PUSH(g, programs))
		return -1;
	g->programs[g->n_programs] = root;
	return (int)g->n_programs++;
}
