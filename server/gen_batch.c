// SPDX-License-Identifier: MIT
/*
 * gen_batch.c - continuous batching of generations on one instance: the
 * generation loop an instance's worker (scheduler.c) runs when the
 * request it takes off the queue is a generation.
 *
 * The loop drives the runtime's cache slots (ipurt_gen_slots_*, S of them
 * in a decoder exported with S slots, one in an ordinary decoder): before
 * every device step it moves the generations at the head of the model's
 * queue into the free slots, so that a request that arrives while others
 * are generating joins them at the next step; a sequence that ends frees
 * its slot in the step that ends it, and a client gone (srv_gen_cancel)
 * frees its slot before the next step.  When every slot is busy the
 * requests wait in the model's queue, under its limits (max_queue_size:
 * 503 when full).  The loop ends when no slot holds a sequence; an infer
 * request at the head of the queue stops the admission (the queue stays
 * in arrival order), so it runs once the running sequences are done.
 *
 * Accounting is per generation as before: one request, one execution,
 * its tokens counted in ipu_generate_tokens; the loop's device steps in
 * ipu_generate_steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

struct gen_slot {
	struct srv_request *q;	/* NULL: free */
	uint64_t t0;
};

static void log_done(struct srv_model *m, uint32_t index, struct srv_request *q, uint32_t slot,
		     int rc, const char *err)
{
	char sn[1024], se[SRV_ERR * 4];

	if (m->log_verbose <= 1)
		return;
	fprintf(stderr, "ipu-serve: %s v%lld instance %u slot %u: generation of %u tokens: %s\n",
		cli_safe(m->name, sn, sizeof(sn)), (long long)m->version, index, slot,
		q->gen->ntokens, rc ? cli_safe(err, se, sizeof(se)) : "ok");
}

/* The sequence in slot s is over (called without m->lock). */
static void finish(struct srv_model *m, uint32_t index, struct gen_slot *sl, uint32_t s,
		   uint32_t stopped, int rc, const char *err)
{
	struct srv_request *q = sl[s].q;

	sl[s].q = NULL;
	srv_gen_end(q, stopped);
	log_done(m, index, q, s, rc, err);
	srv_model_gen_done(m, q, sl[s].t0, rc, err);
}

/* Queued generations into free slots (m->lock held). */
static void admit(struct srv_model *m, struct ipurt_gen_slots *g, struct gen_slot *sl,
		  struct srv_request *q, uint32_t index)
{
	uint32_t n = ipurt_gen_slots_count(g);

	while (q || (ipurt_gen_slots_active(g) < n && (q = srv_model_take_gen(m)))) {
		char err[SRV_ERR];
		uint32_t s = 0;
		int rc;

		m->executing++;
		q->t_start_ns = srv_now_ns();
		err[0] = 0;
		if (srv_gen_cancelled(q)) {
			snprintf(err, sizeof(err), "the client went away before the generation started");
			rc = IPURT_E_CANCELLED;
		} else {
			rc = ipurt_gen_slots_start(g, q->gen->prompt, q->gen->nprompt, &q->gen->opts, &s,
						   err, sizeof(err));
		}
		if (rc) {
			struct gen_slot one = { q, q->t_start_ns };

			pthread_mutex_unlock(&m->lock);
			finish(m, index, &one, 0, IPURT_GEN_STOP_CALLER, rc, err);
			pthread_mutex_lock(&m->lock);
		} else {
			sl[s].q = q;
			sl[s].t0 = q->t_start_ns;
		}
		q = NULL;
	}
}

/* Every sequence ended by rc (a device error), called without m->lock. */
static void fail_all(struct srv_model *m, uint32_t index, struct ipurt_gen_slots *g,
		     struct gen_slot *sl, int rc, const char *err)
{
	uint32_t s;

	for (s = 0; s < ipurt_gen_slots_count(g); s++) {
		if (!sl[s].q)
			continue;
		ipurt_gen_slots_finish(g, s);
		finish(m, index, sl, s, IPURT_GEN_STOP_CALLER, rc, err);
	}
}

/*
 * One device step for every slot and its tokens handed out (without
 * m->lock); 1 if a step ran.
 */
static int step(struct srv_model *m, uint32_t index, struct ipurt_gen_slots *g,
		 struct gen_slot *sl, struct ipurt_gen_event *ev)
{
	char err[SRV_ERR];
	uint32_t s, i, nev = 0;
	int rc;

	for (s = 0; s < ipurt_gen_slots_count(g); s++) {
		if (!sl[s].q || !srv_gen_cancelled(sl[s].q))
			continue;
		ipurt_gen_slots_finish(g, s);
		finish(m, index, sl, s, IPURT_GEN_STOP_CALLER, IPURT_E_CANCELLED,
		       "the client went away during the generation");
	}
	if (!ipurt_gen_slots_active(g))
		return 0;
	err[0] = 0;
	rc = ipurt_gen_slots_step(g, ev, &nev, err, sizeof(err));
	if (rc) {
		fail_all(m, index, g, sl, rc, err);
		return 1;
	}
	for (i = 0; i < nev; i++) {
		s = ev[i].slot;
		if (s >= ipurt_gen_slots_count(g) || !sl[s].q)
			continue;
		srv_gen_token(sl[s].q, ev[i].index, ev[i].token);
		if (ev[i].done)
			finish(m, index, sl, s, ev[i].stopped, 0, NULL);
	}
	return 1;
}

void srv_gen_batch(struct srv_model *m, struct ipurt_runner *r, uint32_t index,
		   struct srv_request *first)
{
	struct ipurt_gen_slots *g = NULL;
	struct ipurt_gen_event *ev = NULL;
	struct gen_slot *sl = NULL;
	char err[SRV_ERR];
	uint32_t n;
	int rc;

	pthread_mutex_unlock(&m->lock);
	err[0] = 0;
	rc = ipurt_gen_slots_open(r, &g, err, sizeof(err));
	if (!rc) {
		n = ipurt_gen_slots_count(g);
		sl = calloc(n, sizeof(*sl));
		ev = calloc(n, sizeof(*ev));
		if (!sl || !ev) {
			snprintf(err, sizeof(err), "out of memory for %u cache slots", n);
			rc = IPURT_E_NOMEM;
		}
	}
	if (rc) {
		struct gen_slot one = { first, srv_now_ns() };

		pthread_mutex_lock(&m->lock);
		m->executing++;
		first->t_start_ns = one.t0;
		pthread_mutex_unlock(&m->lock);
		finish(m, index, &one, 0, IPURT_GEN_STOP_CALLER, rc, err);
		goto out;
	}
	pthread_mutex_lock(&m->lock);
	admit(m, g, sl, first, index);
	while (ipurt_gen_slots_active(g)) {
		int ran;

		pthread_mutex_unlock(&m->lock);
		ran = step(m, index, g, sl, ev);
		pthread_mutex_lock(&m->lock);
		m->met.gen_steps += (uint64_t)ran;
		admit(m, g, sl, NULL, index);
	}
	pthread_mutex_unlock(&m->lock);
out:
	if (g)
		ipurt_gen_slots_close(g);
	free(sl);
	free(ev);
	pthread_mutex_lock(&m->lock);
}
