// SPDX-License-Identifier: MIT
/*
 * gen_slots.c - several sequences at once on a decoder exported with S
 * cache slots (input_ids and position_ids [S, 1], each state [S, ...]):
 * row s of every input, output and state is sequence s's.  A step feeds
 * every active slot its next prompt token or its last new token at its own
 * position; a free slot is fed token 0 at position 0, which only writes
 * its cache's position 0, and a sequence started there writes position 0
 * before it reads it and masks every later one, so a slot needs no reset
 * between sequences.  Greedy slots take the device's next_token; the
 * tokens-only program runs when no active slot wants logits or samples;
 * the sampling program (IPUEF_PROGRAM_SAMPLE) when slots sample and every
 * one of them can on the device (gen_sample_on_device), each row with its
 * own temperature, top-k, top-p and seed; else Main, and the host samples
 * from the logits with the same sampler (ipu/sample.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen_internal.h"
#include "ipu/half.h"
#include "rt_internal.h"

struct slot {
	int active;
	int64_t *prompt;
	uint32_t nprompt, fed;	/* prompt tokens, and fed so far */
	int64_t last;		/* the latest new token */
	uint64_t pos;		/* the next step's position */
	uint32_t new_tokens;
	int pending;		/* last is the prefill's first new token, not
				 * yet given as an event */
	struct ipurt_generate_opts o;
	int64_t *stop;		/* o.stop_ids, copied */
	int on_device;		/* samples on the device */
};

struct ipurt_gen_slots {
	struct ipurt_runner *r;
	const struct ipuef_anchor *ids, *pos, *logits, *next;
	uint32_t n;		/* slots */
	uint64_t vocab, positions;
	int has_tokens;		/* the model has IPUEF_PROGRAM_TOKENS */
	/* IPUEF_PROGRAM_SAMPLE's own anchors, all set when the model has it */
	const struct ipuef_anchor *sprm, *skeys, *stok;
	float *prmb;		/* its inputs and output */
	int64_t *keysb, *stokb;
	enum { RUN_MAIN, RUN_TOKENS, RUN_SAMPLE } mode;	/* of the last step */
	struct gen_prefill pf;	/* one slot: its prefill program, if any */
	uint32_t prefill_runs, prefill_tokens;	/* of the last start */
	struct slot *s;
	uint8_t *idb, *posb, *nextb;	/* the step's inputs and next_token */
	float *lg;		/* n rows of logits as f32 */
	uint16_t *half;		/* n rows as the device gives f16 ones */
	void *cand;		/* host sampling's work */
	uint64_t bytes;		/* the last step's stream bytes */
};

static int find_io(struct ipurt_gen_slots *g, char *err, size_t errlen)
{
	const struct ipuef_file *f = ipurt_runner_file(g->r);
	const struct ipuef_metadata *m = ipuef_metadata(f);
	const struct ipuef_state *st;

	g->ids = ipuef_find_anchor(f, "input_ids");
	g->pos = ipuef_find_anchor(f, "position_ids");
	g->logits = ipuef_find_anchor(f, "logits");
	g->next = ipuef_find_anchor(f, "next_token");
	if (!m->num_states)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "the model keeps no state on the device: compile the decoder with its key/value cache as state (Documentation/compiler/generation.md)");
	if (!g->ids || !g->pos || g->ids->direction != IPUEF_INPUT ||
	    g->pos->direction != IPUEF_INPUT || !gen_is_int(g->ids->dtype) ||
	    !gen_is_int(g->pos->dtype) || gen_elems(g->ids) != gen_elems(g->pos) || !gen_elems(g->ids))
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "generation needs integer inputs 'input_ids' and 'position_ids' of one token per slot ([slots, 1])");
	g->n = (uint32_t)gen_elems(g->ids);
	if (g->next && (g->next->direction != IPUEF_OUTPUT || gen_elems(g->next) != g->n ||
			!gen_is_int(g->next->dtype)))
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "output 'next_token' must be one integer per slot");
	if (g->logits) {
		if (g->logits->direction != IPUEF_OUTPUT || !g->logits->rank ||
		    (g->logits->dtype != IPURT_DT_F32 && g->logits->dtype != IPURT_DT_F16))
			return ipu_errorf(err, errlen, IPURT_E_MODEL,
					  "output 'logits' must be f32 or f16 with the vocabulary as its last dim");
		g->vocab = g->logits->dims[g->logits->rank - 1];
		if (gen_elems(g->logits) != g->vocab * g->n)
			return ipu_errorf(err, errlen, IPURT_E_MODEL,
					  "output 'logits' has %llu values, not one row of %llu per slot (%u)",
					  (unsigned long long)gen_elems(g->logits),
					  (unsigned long long)g->vocab, g->n);
	}
	if (!g->next && !g->logits)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "generation needs an output 'next_token' or 'logits'");
	/* every state [slots, .., positions, head dim], as Hugging Face's cache */
	st = &m->states[0];
	if (st->rank < 3 || st->dims[0] != g->n)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "state '%s' is not one cache per slot: its first dim must be the %u slots of 'input_ids'",
				  st->name, g->n);
	g->positions = st->dims[st->rank - 2];
	g->has_tokens = g->next && ipuef_find_program(f, IPUEF_PROGRAM_TOKENS) != NULL;
	g->sprm = ipuef_find_anchor(f, IPUEF_SAMPLE_PARAMS);
	g->skeys = ipuef_find_anchor(f, IPUEF_SAMPLE_KEYS);
	g->stok = ipuef_find_anchor(f, IPUEF_SAMPLED_TOKEN);
	if (!g->logits || !ipuef_find_program(f, IPUEF_PROGRAM_SAMPLE) || !g->sprm || !g->skeys ||
	    !g->stok || g->sprm->dtype != IPURT_DT_F32 || gen_elems(g->sprm) != 2ull * g->n ||
	    g->skeys->dtype != IPURT_DT_I64 || gen_elems(g->skeys) != 3ull * g->n ||
	    g->stok->dtype != IPURT_DT_I64 || gen_elems(g->stok) != g->n)
		g->sprm = g->skeys = g->stok = NULL;	/* sampled on the host */
	/* a prefill runs one sequence: the model's only slot */
	return g->n == 1 ? gen_prefill_find(f, &g->pf, err, errlen) : 0;
}

void ipurt_gen_slots_close(struct ipurt_gen_slots *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; g->s && i < g->n; i++) {
		free(g->s[i].prompt);
		free(g->s[i].stop);
	}
	free(g->s);
	free(g->idb);
	free(g->posb);
	free(g->nextb);
	free(g->lg);
	free(g->half);
	free(g->cand);
	free(g->prmb);
	free(g->keysb);
	free(g->stokb);
	free(g);
}

int ipurt_gen_slots_open(struct ipurt_runner *r, struct ipurt_gen_slots **out, char *err,
			 size_t errlen)
{
	struct ipurt_gen_slots *g;
	int rc;

	*out = NULL;
	if (ipurt_runner_num_devices(r) != 1)
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "generation needs a runner of one device: the caches live on one, and a replicated runner spreads the steps over %u",
				  ipurt_runner_num_devices(r));
	g = calloc(1, sizeof(*g));
	if (!g)
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	g->r = r;
	rc = find_io(g, err, errlen);
	if (rc) {
		free(g);
		return rc;
	}
	g->s = calloc(g->n, sizeof(*g->s));
	g->idb = calloc(g->n, 8);
	g->posb = calloc(g->n, 8);
	g->nextb = calloc(g->n, 8);
	if (g->logits) {
		g->lg = malloc(g->n * g->vocab * sizeof(float));
		g->half = g->logits->dtype == IPURT_DT_F16 ?
			  malloc(g->n * g->vocab * sizeof(uint16_t)) : NULL;
		g->cand = malloc(gen_sample_work(g->vocab));
	}
	if (g->sprm) {
		g->prmb = calloc(2 * (size_t)g->n, sizeof(float));
		g->keysb = calloc(3 * (size_t)g->n, sizeof(int64_t));
		g->stokb = calloc(g->n, sizeof(int64_t));
	}
	if (!g->s || !g->idb || !g->posb || !g->nextb ||
	    (g->sprm && (!g->prmb || !g->keysb || !g->stokb)) ||
	    (g->logits && (!g->lg || !g->cand || (g->logits->dtype == IPURT_DT_F16 && !g->half)))) {
		ipurt_gen_slots_close(g);
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory for %u slots", g->n);
	}
	rc = ipurt_runner_reset_state(r, err, errlen);
	if (rc) {
		ipurt_gen_slots_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

uint32_t ipurt_gen_slots_count(const struct ipurt_gen_slots *g)
{
	return g->n;
}

uint32_t ipurt_gen_slots_active(const struct ipurt_gen_slots *g)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < g->n; i++)
		k += g->s[i].active;
	return k;
}

uint64_t ipurt_gen_slots_stream_bytes(const struct ipurt_gen_slots *g)
{
	return g->bytes;
}

static void release(struct slot *s)
{
	free(s->prompt);
	free(s->stop);
	memset(s, 0, sizeof(*s));
}

int ipurt_gen_slots_start(struct ipurt_gen_slots *g, const int64_t *prompt, uint32_t nprompt,
			  const struct ipurt_generate_opts *o, uint32_t *slot, char *err,
			  size_t errlen)
{
	uint64_t limit;
	struct slot *s = NULL;
	uint32_t i;

	if (!prompt || !nprompt || !o || !o->max_new_tokens)
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "a sequence needs a prompt of at least one token and max_new_tokens >= 1");
	limit = o->max_positions && o->max_positions < g->positions ? o->max_positions : g->positions;
	if (nprompt > limit)
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "the prompt has %u tokens, the model's cache holds %llu positions", nprompt,
				  (unsigned long long)limit);
	if (o->temperature < 0 || o->top_p < 0 || isnan(o->temperature) || isnan(o->top_p))
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "temperature %g, top_p %g: neither may be negative", o->temperature,
				  o->top_p);
	if ((o->temperature > 0 || o->want_logits) && !g->logits)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "sampling and want_logits need the model's 'logits' output");
	for (i = 0; i < g->n && !s; i++)
		if (!g->s[i].active)
			s = &g->s[i];
	if (!s)
		return ipu_errorf(err, errlen, IPURT_E_BUSY, "all %u slots hold a sequence", g->n);
	s->prompt = malloc(nprompt * sizeof(*prompt));
	s->stop = o->num_stop ? malloc(o->num_stop * sizeof(*s->stop)) : NULL;
	if (!s->prompt || (o->num_stop && !s->stop)) {
		release(s);
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory for a prompt of %u tokens",
				  nprompt);
	}
	memcpy(s->prompt, prompt, nprompt * sizeof(*prompt));
	if (o->num_stop)
		memcpy(s->stop, o->stop_ids, o->num_stop * sizeof(*s->stop));
	s->o = *o;
	s->o.stop_ids = s->stop;
	s->o.max_positions = limit;
	s->nprompt = nprompt;
	s->on_device = gen_sample_on_device(o, g->sprm != NULL, g->vocab);
	s->active = 1;
	*slot = (uint32_t)(s - g->s);
	g->prefill_runs = g->prefill_tokens = 0;
	if (g->pf.tokens) {
		/* the only slot: no other sequence shares the step, so the
		 * prompt goes T tokens a run now (its last token by a step
		 * when the host needs its logits, as ipurt_generate) */
		uint32_t upto = o->temperature > 0 || o->want_logits ? nprompt - 1 : nprompt, done = 0;
		int64_t next = 0;
		int rc = gen_prefill_run(g->r, &g->pf, prompt, upto, g->positions, &done, &next,
					 &g->prefill_runs, err, errlen);

		if (rc) {
			release(s);
			return rc;
		}
		g->prefill_tokens = done;
		s->fed = done;
		s->pos = done;
		if (done == nprompt) {
			s->last = next;
			s->pending = 1;
		}
	}
	return 0;
}

int ipurt_gen_slots_finish(struct ipurt_gen_slots *g, uint32_t slot)
{
	if (slot >= g->n || !g->s[slot].active)
		return IPURT_E_INVAL;
	release(&g->s[slot]);
	return 0;
}

/* Runs one step of every slot; *logits_read: whether the rows are fresh. */
static int run_step(struct ipurt_gen_slots *g, int *logits_read, char *err, size_t errlen)
{
	struct ipurt_tensor t[5];
	struct ipu_counters c0, c1;
	int host = 0, device = 0, counted, rc;
	uint32_t nt = 2;

	for (uint32_t i = 0; i < g->n; i++) {
		const struct slot *s = &g->s[i];

		if (s->active && (s->o.want_logits || (s->o.temperature > 0 && !s->on_device)))
			host = 1;
		else if (s->active && s->o.temperature > 0)
			device = 1;
		gen_put_int(g->idb, g->ids->dtype, i,
			!s->active ? 0 : s->fed < s->nprompt ? s->prompt[s->fed] : s->last);
		gen_put_int(g->posb, g->pos->dtype, i, s->active ? (int64_t)s->pos : 0);
		if (g->sprm) {
			/* a row that is not sampled gets the greedy token */
			int smp = s->active && s->o.temperature > 0;

			g->prmb[2 * i] = smp ? s->o.temperature : 0;
			g->prmb[2 * i + 1] = smp ? s->o.top_p : 0;
			g->keysb[3 * i] = smp ? s->o.top_k : 0;
			g->keysb[3 * i + 1] = smp ? (int64_t)s->o.seed : 0;
			g->keysb[3 * i + 2] = smp ? (int64_t)s->pos : 0;
		}
	}
	g->mode = host || (!device && !g->has_tokens) ? RUN_MAIN : device ? RUN_SAMPLE : RUN_TOKENS;
	gen_tensor_of(g->ids, g->idb, &t[0]);
	gen_tensor_of(g->pos, g->posb, &t[1]);
	if (g->mode == RUN_SAMPLE) {
		gen_tensor_of(g->sprm, g->prmb, &t[nt++]);
		gen_tensor_of(g->skeys, g->keysb, &t[nt++]);
		gen_tensor_of(g->stok, g->stokb, &t[nt++]);
	} else {
		if (g->logits && g->mode == RUN_MAIN)
			gen_tensor_of(g->logits, g->half ? (void *)g->half : (void *)g->lg, &t[nt++]);
		if (g->next)
			gen_tensor_of(g->next, g->nextb, &t[nt++]);
	}
	counted = ipu_counters(ipurt_runner_device(g->r), &c0) == 0;
	if (g->mode == RUN_SAMPLE)
		rc = rt_runner_run_program(g->r, IPUEF_PROGRAM_SAMPLE, t, nt, err, errlen);
	else if (g->mode == RUN_TOKENS)
		rc = rt_runner_run_program(g->r, IPUEF_PROGRAM_TOKENS, t, nt, err, errlen);
	else
		rc = ipurt_runner_execute(g->r, t, 2, t + 2, nt - 2, err, errlen);
	if (rc)
		return rc;
	if (counted && ipu_counters(ipurt_runner_device(g->r), &c1) == 0)
		g->bytes = (c1.stream_bytes_in - c0.stream_bytes_in) +
			   (c1.stream_bytes_out - c0.stream_bytes_out);
	*logits_read = g->logits && g->mode == RUN_MAIN;
	if (*logits_read && g->half)
		for (uint64_t v = 0; v < g->n * g->vocab; v++)
			g->lg[v] = ipu_f16_to_f32(g->half[v]);
	return 0;
}

static int64_t choose(struct ipurt_gen_slots *g, struct slot *s, uint32_t i)
{
	const float *row = g->lg ? g->lg + (size_t)i * g->vocab : NULL;
	uint64_t best = 0;

	if (g->mode == RUN_SAMPLE)
		return g->stokb[i];	/* greedy rows get the greedy token */
	if (s->o.temperature > 0)
		return gen_sample(row, g->vocab, &s->o, g->cand, s->pos - 1);
	if (g->next)
		return gen_get_int(g->nextb, g->next->dtype, i);
	for (uint64_t v = 1; v < g->vocab; v++)
		if (row[v] > row[best])
			best = v;
	return (int64_t)best;
}

/* The event of slot i's new token s->last; frees the slot when it ends. */
static void emit(struct ipurt_gen_slots *g, struct slot *s, uint32_t i, int logits_read,
		 struct ipurt_gen_event *ev, uint32_t *nev)
{
	struct ipurt_gen_event *e = &ev[(*nev)++];

	memset(e, 0, sizeof(*e));
	e->slot = i;
	e->index = s->new_tokens++;
	e->token = s->last;
	e->logits = s->o.want_logits && logits_read ? g->lg + (size_t)i * g->vocab : NULL;
	e->vocab = g->vocab;
	for (uint32_t k = 0; k < s->o.num_stop && !e->done; k++)
		if (s->stop[k] == s->last) {
			e->done = 1;
			e->stopped = IPURT_GEN_STOP_TOKEN;
		}
	if (!e->done && s->new_tokens >= s->o.max_new_tokens) {
		e->done = 1;
		e->stopped = IPURT_GEN_STOP_LIMIT;
	} else if (!e->done && s->pos >= s->o.max_positions) {
		e->done = 1;
		e->stopped = IPURT_GEN_STOP_CACHE_FULL;
	}
	if (e->done)
		release(s);
}

int ipurt_gen_slots_step(struct ipurt_gen_slots *g, struct ipurt_gen_event *ev, uint32_t *nev,
			 char *err, size_t errlen)
{
	int logits_read = 0, rc;

	*nev = 0;
	if (!ipurt_gen_slots_active(g))
		return 0;
	/* a prefill's first new token is this call's event, without a step */
	for (uint32_t i = 0; i < g->n; i++)
		if (g->s[i].active && g->s[i].pending) {
			g->s[i].pending = 0;
			emit(g, &g->s[i], i, 0, ev, nev);
		}
	if (*nev)
		return 0;
	rc = run_step(g, &logits_read, err, errlen);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < g->n; i++) {
		struct slot *s = &g->s[i];

		if (!s->active)
			continue;
		s->pos++;
		if (s->fed < s->nprompt && ++s->fed < s->nprompt)
			continue;	/* the prompt goes on */
		s->last = choose(g, s, i);
		emit(g, s, i, logits_read, ev, nev);
	}
	return 0;
}

int gen_slots_generate(struct ipurt_runner *r, const int64_t *prompt, uint32_t nprompt,
		       const struct ipurt_generate_opts *o, ipurt_token_fn fn, void *ctx,
		       struct ipurt_generate_stats *st, char *err, size_t errlen)
{
	struct ipurt_generate_stats s = { 0 };
	struct ipurt_gen_slots *g = NULL;
	struct ipurt_gen_event *ev = NULL;
	struct ipurt_generate_opts oo;
	struct ipu_counters c0, c1;
	uint64_t t0, t1 = 0, now;
	uint32_t slot, nev;
	int rc, counted;

	if (!o)
		return ipu_errorf(err, errlen, IPURT_E_INVAL, "generation needs its options");
	oo = *o;
	if (!oo.max_new_tokens)
		oo.max_new_tokens = 1;	/* as ipurt_generate: the first token always */
	rc = ipurt_gen_slots_open(r, &g, err, errlen);
	if (rc)
		return rc;
	ev = calloc(g->n, sizeof(*ev));
	if (!ev) {
		ipurt_gen_slots_close(g);
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	counted = ipu_counters(ipurt_runner_device(r), &c0) == 0;
	t0 = gen_now_ns();
	rc = ipurt_gen_slots_start(g, prompt, nprompt, &oo, &slot, err, errlen);
	s.prompt_tokens = nprompt;
	s.prefill_runs = g->prefill_runs;
	s.prefill_tokens = g->prefill_tokens;
	s.device_argmax = g->next && !(oo.temperature > 0);
	s.device_sampling = !rc && g->s[slot].on_device;
	while (!rc && ipurt_gen_slots_active(g)) {
		rc = ipurt_gen_slots_step(g, ev, &nev, err, errlen);
		for (uint32_t i = 0; !rc && i < nev; i++) {
			now = gen_now_ns();
			if (!s.new_tokens) {
				s.prompt_ns = now - t0, t1 = now;
				if (counted && ipu_counters(ipurt_runner_device(r), &c1) == 0)
					s.prompt_cycles = c1.cycles - c0.cycles;
			} else
				s.decode_ns = now - t1, s.decode_steps++;
			s.new_tokens++;
			if (fn && fn(ctx, ev[i].index, ev[i].token, ev[i].logits, ev[i].vocab)) {
				s.stopped = IPURT_GEN_STOP_CALLER;
				ipurt_gen_slots_finish(g, slot);
			} else if (ev[i].done) {
				s.stopped = ev[i].stopped;
			}
		}
	}
	s.stream_bytes_per_step = g->bytes;
	free(ev);
	ipurt_gen_slots_close(g);
	if (st)
		*st = s;
	return rc;
}
