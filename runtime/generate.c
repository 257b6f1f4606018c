// SPDX-License-Identifier: MIT
/*
 * generate.c - the generation loop over a decoder whose key/value cache is
 * device-resident state: reset the state, feed the prompt one token per
 * step, then feed back each new token until a stop token, the token limit,
 * the end of the cache or the caller says stop.  The greedy choice comes
 * from the model's next_token output (computed on the device) when it has
 * one, else from the logits on the host; sampling (temperature, top-k,
 * top-p) is done on the device when the model has the sampling program
 * and the options allow (gen_sample_on_device: the step API's loop,
 * gen_slots.c, runs it), else on the host from the logits, with the same
 * sampler (ipu/sample.h) and the same tokens for the same seed.  A
 * caller that wants neither logits nor sampling gets the model's
 * tokens-only program when it has one (IPUEF_PROGRAM_TOKENS): the same
 * step without the logits' stream, a few bytes per step.  A decoder
 * compiled with a prefill program (IPUEF_PROGRAM_PREFILL) takes its prompt
 * T tokens a run (gen_prefill.c) where it fits the cache, the rest token by
 * token.  A decoder of several cache slots runs the sequence in one slot
 * (gen_slots.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/half.h"
#include "gen_internal.h"
#include "rt_internal.h"

/* The anchors of one decode step. */
struct gen_io {
	const struct ipuef_anchor *ids, *pos, *logits, *next;
	uint64_t vocab;
	int tokens_only;	/* run IPUEF_PROGRAM_TOKENS, not Main */
};

static int find_io(const struct ipuef_file *f, struct gen_io *io, char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);

	memset(io, 0, sizeof(*io));
	io->ids = ipuef_find_anchor(f, "input_ids");
	io->pos = ipuef_find_anchor(f, "position_ids");
	io->logits = ipuef_find_anchor(f, "logits");
	io->next = ipuef_find_anchor(f, "next_token");
	if (!m->num_states)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "the model keeps no state on the device: compile the decoder with its key/value cache as state (Documentation/compiler/generation.md)");
	if (!io->ids || !io->pos || io->ids->direction != IPUEF_INPUT ||
	    io->pos->direction != IPUEF_INPUT || gen_elems(io->ids) != 1 || gen_elems(io->pos) != 1 ||
	    !gen_is_int(io->ids->dtype) || !gen_is_int(io->pos->dtype))
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "generation needs inputs 'input_ids' and 'position_ids' of one integer each (one token per step)");
	if (io->next && (io->next->direction != IPUEF_OUTPUT || gen_elems(io->next) != 1 ||
			 !gen_is_int(io->next->dtype)))
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "output 'next_token' must be one integer");
	if (io->logits) {
		if (io->logits->direction != IPUEF_OUTPUT ||
		    (io->logits->dtype != IPURT_DT_F32 && io->logits->dtype != IPURT_DT_F16) ||
		    !io->logits->rank)
			return ipu_errorf(err, errlen, IPURT_E_MODEL,
					  "output 'logits' must be f32 or f16 with the vocabulary as its last dim");
		io->vocab = io->logits->dims[io->logits->rank - 1];
		if (gen_elems(io->logits) != io->vocab)
			return ipu_errorf(err, errlen, IPURT_E_MODEL,
					  "output 'logits' has %llu values, not one row of %llu: one sequence, one token per step",
					  (unsigned long long)gen_elems(io->logits),
					  (unsigned long long)io->vocab);
	}
	if (!io->next && !io->logits)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "generation needs an output 'next_token' or 'logits'");
	return 0;
}

/* Positions the cache holds: dim -2 of the first state ([.., positions, head dim]). */
static uint64_t cache_positions(const struct ipuef_metadata *m)
{
	const struct ipuef_state *s = &m->states[0];

	return s->rank >= 2 ? s->dims[s->rank - 2] : UINT64_MAX;
}

/* One step: token at position pos; *next the greedy choice.  logits has
 * room for the vocabulary in f32 and, for f16 logits (a model compiled
 * with --precision fp16), as many halves after it, converted to f32. */
static int step(struct ipurt_runner *r, const struct gen_io *io, int64_t token, int64_t pos,
		float *logits, int64_t *next, uint64_t *bytes, char *err, size_t errlen)
{
	uint16_t *half = io->logits && io->logits->dtype == IPURT_DT_F16 ?
			 (uint16_t *)(logits + io->vocab) : NULL;
	struct ipurt_tensor in[2], out[2];
	uint8_t idb[8], posb[8], nb[8] = { 0 };
	struct ipu_counters c0, c1;
	uint32_t nout = 0;
	int rc, counted;

	gen_put_int(idb, io->ids->dtype, 0, token);
	gen_put_int(posb, io->pos->dtype, 0, pos);
	gen_tensor_of(io->ids, idb, &in[0]);
	gen_tensor_of(io->pos, posb, &in[1]);
	if (io->logits && !io->tokens_only)
		gen_tensor_of(io->logits, half ? (void *)half : (void *)logits, &out[nout++]);
	if (io->next)
		gen_tensor_of(io->next, nb, &out[nout++]);
	counted = ipu_counters(ipurt_runner_device(r), &c0) == 0;
	if (io->tokens_only) {
		struct ipurt_tensor all[3] = { in[0], in[1], out[0] };

		rc = rt_runner_run_program(r, IPUEF_PROGRAM_TOKENS, all, 3, err, errlen);
	} else {
		rc = ipurt_runner_execute(r, in, 2, out, nout, err, errlen);
	}
	if (rc)
		return rc;
	if (counted && ipu_counters(ipurt_runner_device(r), &c1) == 0)
		*bytes = (c1.stream_bytes_in - c0.stream_bytes_in) +
			 (c1.stream_bytes_out - c0.stream_bytes_out);
	if (half && !io->tokens_only)
		for (uint64_t v = 0; v < io->vocab; v++)
			logits[v] = ipu_f16_to_f32(half[v]);
	if (io->next) {
		*next = gen_get_int(nb, io->next->dtype, 0);
	} else {
		uint64_t best = 0;

		for (uint64_t v = 1; v < io->vocab; v++)
			if (logits[v] > logits[best])
				best = v;
		*next = (int64_t)best;
	}
	return 0;
}

static int is_stop(const struct ipurt_generate_opts *o, int64_t t)
{
	for (uint32_t i = 0; i < o->num_stop; i++)
		if (o->stop_ids[i] == t)
			return 1;
	return 0;
}

int ipurt_generate(struct ipurt_runner *r, const int64_t *prompt, uint32_t nprompt,
		   const struct ipurt_generate_opts *o, ipurt_token_fn fn, void *ctx,
		   struct ipurt_generate_stats *st, char *err, size_t errlen)
{
	const struct ipuef_file *f = ipurt_runner_file(r);
	struct ipurt_generate_stats s = { 0 };
	struct gen_io io;
	struct gen_prefill pf;
	struct ipu_counters c0, c1;
	uint64_t limit, t0, t1 = 0, bytes = 0;
	int counted;
	uint32_t done = 0;
	float *logits = NULL;
	void *cands = NULL;	/* host sampling's work */
	int64_t next = 0, pos = 0;
	int rc;

	if (st)
		memset(st, 0, sizeof(*st));
	io.ids = ipuef_find_anchor(f, "input_ids");
	io.logits = ipuef_find_anchor(f, "logits");
	/* a decoder of several cache slots, or sampling on the device: the
	 * step API's loop (one slot) */
	if ((io.ids && gen_elems(io.ids) > 1) ||
	    (o && io.logits && io.logits->rank &&
	     gen_sample_on_device(o, ipuef_find_program(f, IPUEF_PROGRAM_SAMPLE) != NULL,
				  io.logits->dims[io.logits->rank - 1])))
		return gen_slots_generate(r, prompt, nprompt, o, fn, ctx, st, err, errlen);
	rc = find_io(f, &io, err, errlen);
	if (rc)
		return rc;
	if (ipurt_runner_num_devices(r) != 1)
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "generation needs a runner of one device: the cache lives on one, and a replicated runner spreads the steps over %u",
				  ipurt_runner_num_devices(r));
	if (!prompt || !nprompt || !o)
		return ipu_errorf(err, errlen, IPURT_E_INVAL, "generation needs a prompt of at least one token");
	limit = o->max_positions ? o->max_positions : cache_positions(ipuef_metadata(f));
	if (nprompt > limit)
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "the prompt has %u tokens, the model's cache holds %llu positions", nprompt,
				  (unsigned long long)limit);
	if (o->temperature < 0 || o->top_p < 0 || isnan(o->temperature) || isnan(o->top_p))
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
				  "temperature %g, top_p %g: neither may be negative", o->temperature,
				  o->top_p);
	if (o->temperature > 0 && !io.logits)
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
				  "sampling needs the model's 'logits' output");
	if (o->temperature > 0) {
		cands = malloc(gen_sample_work(io.vocab));
		if (!cands)
			return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory for %llu logits",
					  (unsigned long long)io.vocab);
	}
	if (io.logits) {
		/* f16 logits arrive after the f32 row (step()) */
		logits = malloc(io.vocab * sizeof(float) +
				(io.logits->dtype == IPURT_DT_F16 ? io.vocab * sizeof(uint16_t) : 0));
		if (!logits) {
			free(cands);
			return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory for %llu logits",
					  (unsigned long long)io.vocab);
		}
	}
	s.device_argmax = io.next != NULL && !cands;
	/* the logits stay on the device when nobody reads them */
	io.tokens_only = s.device_argmax && !o->want_logits &&
			 ipuef_find_program(f, IPUEF_PROGRAM_TOKENS) != NULL;
	s.prompt_tokens = nprompt;
	rc = gen_prefill_find(f, &pf, err, errlen);
	if (!rc)
		rc = ipurt_runner_reset_state(r, err, errlen);	/* a new sequence */
	counted = ipu_counters(ipurt_runner_device(r), &c0) == 0;
	t0 = gen_now_ns();
	/* the prompt T tokens a run; its last token by a step when the host
	 * needs that step's logits (sampling, want_logits) */
	if (!rc && pf.tokens) {
		uint32_t upto = cands || o->want_logits ? nprompt - 1 : nprompt;

		rc = gen_prefill_run(r, &pf, prompt, upto, cache_positions(ipuef_metadata(f)), &done,
				     &next, &s.prefill_runs, err, errlen);
		pos = done;
	}
	s.prefill_tokens = done;
	for (uint32_t i = done; !rc && i < nprompt; i++)
		rc = step(r, &io, prompt[i], pos++, logits, &next, &bytes, err, errlen);
	if (!rc && cands)
		next = gen_sample(logits, io.vocab, o, cands, (uint64_t)pos - 1);
	/* next is new token 0; each further one costs a step */
	while (!rc) {
		uint64_t now = gen_now_ns();

		if (s.new_tokens == 0) {
			s.prompt_ns = now - t0;
			if (counted && ipu_counters(ipurt_runner_device(r), &c1) == 0)
				s.prompt_cycles = c1.cycles - c0.cycles;
		} else
			s.decode_ns = now - t1;
		if (s.new_tokens == 0)
			t1 = now;
		s.new_tokens++;
		if (fn && fn(ctx, s.new_tokens - 1, next, o->want_logits ? logits : NULL, io.vocab)) {
			s.stopped = IPURT_GEN_STOP_CALLER;
			break;
		}
		if (is_stop(o, next)) {
			s.stopped = IPURT_GEN_STOP_TOKEN;
			break;
		}
		if (s.new_tokens >= o->max_new_tokens) {
			s.stopped = IPURT_GEN_STOP_LIMIT;
			break;
		}
		if ((uint64_t)pos >= limit) {
			s.stopped = IPURT_GEN_STOP_CACHE_FULL;
			break;
		}
		rc = step(r, &io, next, pos++, logits, &next, &bytes, err, errlen);
		if (!rc && cands)
			next = gen_sample(logits, io.vocab, o, cands, (uint64_t)pos - 1);
		s.decode_steps += !rc;
	}
	s.stream_bytes_per_step = bytes;
	free(cands);
	free(logits);
	if (st)
		*st = s;
	return rc;
}
