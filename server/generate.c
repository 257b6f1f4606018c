// SPDX-License-Identifier: MIT
/*
 * generate.c - the generate extension's bodies (Triton's
 * extension_generate, with token ids instead of text: there is no
 * tokenizer): the request parsed and checked against the decoder, its
 * tokens as the scheduler's generation loop (gen_batch.c) makes them, and
 * the answers, whole or as server-sent events.
 *
 * A request is {"input_ids": [ints], "parameters": {...}, "id": "..."}.
 * Everything a request could get wrong is refused here with a 400 before
 * it is queued, so that the worker only meets device errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_budget.h"
#include "serve.h"

/* new tokens when the request names no limit (vLLM's default) */
#define GEN_DEFAULT_MAX_TOKENS 16

static int bad(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return 400;
}

int srv_gen_model(struct srv_model *m, struct srv_gen_model *g, char *err, size_t errlen)
{
	const struct ipuef_metadata *md = ipuef_metadata(m->file);
	const struct ipuef_anchor *ids = ipuef_find_anchor(m->file, "input_ids");
	const struct ipuef_anchor *pos = ipuef_find_anchor(m->file, "position_ids");
	const struct ipuef_anchor *logits = ipuef_find_anchor(m->file, "logits");
	const struct ipuef_anchor *next = ipuef_find_anchor(m->file, "next_token");
	const struct ipuef_state *s;

	memset(g, 0, sizeof(*g));
	if (!md->num_states || !ids || !pos || ids->direction != IPUEF_INPUT ||
	    pos->direction != IPUEF_INPUT || (!logits && !next) || m->fused) {
		snprintf(err, errlen,
			 "model '%s' is not a decoder: generate needs a model compiled with its key/value "
			 "cache as device state, inputs 'input_ids' and 'position_ids' and an output "
			 "'logits' or 'next_token' (Documentation/compiler/generation.md); use /infer",
			 m->name);
		return 400;
	}
	s = &md->states[0];
	g->positions = s->rank >= 2 ? s->dims[s->rank - 2] : UINT64_MAX;
	if (logits && logits->direction == IPUEF_OUTPUT && logits->rank)
		g->vocab = logits->dims[logits->rank - 1];
	g->id_max = ids->dtype == IPURT_DT_I32 ? INT32_MAX : INT64_MAX;
	return 0;
}

/* A JSON integer within [lo, hi], or 400 naming the field. */
static int get_int(json_t *v, const char *what, long long lo, long long hi, long long *out,
		   char *err, size_t errlen)
{
	if (!json_is_integer(v)) {
		snprintf(err, errlen, "%s must be an integer", what);
		return 400;
	}
	*out = json_integer_value(v);
	if (*out < lo || *out > hi) {
		snprintf(err, errlen, "%s is %lld, must be within %lld..%lld", what, *out, lo, hi);
		return 400;
	}
	return 0;
}

static int get_number(json_t *v, const char *what, double lo, double hi, float *out, char *err,
		      size_t errlen)
{
	double d;

	if (!json_is_number(v)) {
		snprintf(err, errlen, "%s must be a number", what);
		return 400;
	}
	d = json_number_value(v);
	if (!isfinite(d) || d < lo || d > hi) {
		snprintf(err, errlen, "%s is %g, must be within %g..%g", what, d, lo, hi);
		return 400;
	}
	*out = (float)d;
	return 0;
}

static int parse_stop(json_t *v, struct srv_gen *g, char *err, size_t errlen)
{
	size_t i, n;
	long long t = 0;
	int rc;

	if (json_is_integer(v)) {
		rc = get_int(v, "parameters.stop", 0, INT64_MAX, &t, err, errlen);
		if (!rc)
			g->stop[g->num_stop++] = t;
		return rc;
	}
	if (!json_is_array(v))
		return bad(err, errlen, "parameters.stop / stop_token_ids must be a token id or a list of "
			   "token ids (there is no tokenizer: stop strings cannot be matched)");
	n = json_array_size(v);
	for (i = 0; i < n; i++) {
		if (g->num_stop >= SRV_GEN_MAX_STOP) {
			snprintf(err, errlen, "more than %d stop token ids", SRV_GEN_MAX_STOP);
			return 400;
		}
		rc = get_int(json_array_get(v, i), "a stop token id", 0, INT64_MAX, &t, err, errlen);
		if (rc)
			return rc;
		g->stop[g->num_stop++] = t;
	}
	return 0;
}

static int parse_params(json_t *p, const struct srv_gen_model *gm, struct srv_gen *g,
			long long *max_tokens, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	long long t = 0;
	int rc = 0;

	if (!json_is_object(p))
		return bad(err, errlen, "parameters must be a JSON object");
	json_object_foreach(p, key, v) {
		if (!strcmp(key, "max_tokens") || !strcmp(key, "max_new_tokens")) {
			if (*max_tokens)
				return bad(err, errlen, "give one of parameters.max_tokens and max_new_tokens");
			rc = get_int(v, key, 1, INT32_MAX, max_tokens, err, errlen);
		} else if (!strcmp(key, "stop") || !strcmp(key, "stop_token_ids")) {
			rc = parse_stop(v, g, err, errlen);
		} else if (!strcmp(key, "temperature")) {
			rc = get_number(v, "parameters.temperature", 0, 1e6, &g->opts.temperature, err, errlen);
			if (!rc && g->opts.temperature > 0 && !gm->vocab)
				return bad(err, errlen, "sampling (temperature > 0) needs the model's 'logits' "
					   "output; this decoder gives only next_token");
		} else if (!strcmp(key, "top_k")) {
			rc = get_int(v, "parameters.top_k", 0, UINT32_MAX, &t, err, errlen);
			g->opts.top_k = (uint32_t)t;
		} else if (!strcmp(key, "top_p")) {
			rc = get_number(v, "parameters.top_p", 0, 1, &g->opts.top_p, err, errlen);
		} else if (!strcmp(key, "seed")) {
			rc = get_int(v, "parameters.seed", 0, INT64_MAX, &t, err, errlen);
			g->opts.seed = (uint64_t)t;
		} else {
			snprintf(err, errlen, "unknown parameter '%.64s' (known: max_tokens, max_new_tokens, "
				 "stop, stop_token_ids, temperature, top_k, top_p, seed)", key);
			return 400;
		}
		if (rc)
			return rc;
	}
	return 0;
}

int srv_gen_parse(struct srv_model *m, const char *body, size_t len, struct srv_json_budget *b,
		  struct srv_request *req, char *err, size_t errlen)
{
	struct srv_gen_model gm;
	struct srv_json_doc doc;
	struct srv_gen *g;
	const char *key;
	json_t *v, *ids = NULL;
	long long max_tokens = 0, t;
	uint64_t room;
	size_t i, n;
	int rc;

	rc = srv_gen_model(m, &gm, err, errlen);
	if (rc)
		return rc;
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	req->gen = g;
	rc = srv_json_parse(b, body, len, 0, &doc, err, errlen);
	if (rc)
		goto out;
	if (!json_is_object(doc.root)) {
		rc = bad(err, errlen, "the generate request body must be a JSON object");
		goto out;
	}
	json_object_foreach(doc.root, key, v) {
		if (!strcmp(key, "input_ids")) {
			ids = v;
		} else if (!strcmp(key, "parameters")) {
			rc = parse_params(v, &gm, g, &max_tokens, err, errlen);
		} else if (!strcmp(key, "id")) {
			if (!json_is_string(v)) {
				rc = bad(err, errlen, "id must be a string");
			} else if (!(req->id = strdup(json_string_value(v)))) {
				snprintf(err, errlen, "out of memory");
				rc = 500;
			}
		} else if (!strcmp(key, "text_input")) {
			rc = bad(err, errlen, "text_input needs a tokenizer, which ipu-serve does not have: "
				 "send the prompt's token ids as input_ids");
		} else {
			snprintf(err, errlen, "unknown field '%.64s' (known: input_ids, parameters, id)", key);
			rc = 400;
		}
		if (rc)
			goto out;
	}
	if (!ids) {
		rc = bad(err, errlen, "the request has no input_ids (the prompt as a list of token ids)");
		goto out;
	}
	if (!json_is_array(ids)) {
		rc = bad(err, errlen, "input_ids must be a list of token ids (integers)");
		goto out;
	}
	n = json_array_size(ids);
	if (!n) {
		rc = bad(err, errlen, "input_ids is empty: the prompt needs at least one token");
		goto out;
	}
	if (n > gm.positions) {
		snprintf(err, errlen, "the prompt has %zu tokens, the model's cache holds %llu positions",
			 n, (unsigned long long)gm.positions);
		rc = 400;
		goto out;
	}
	g->prompt = malloc(n * sizeof(*g->prompt));
	if (!g->prompt) {
		snprintf(err, errlen, "out of memory");
		rc = 500;
		goto out;
	}
	for (i = 0; i < n; i++) {
		char what[64];

		snprintf(what, sizeof(what), "input_ids[%zu]", i);
		rc = get_int(json_array_get(ids, i), what, 0,
			     gm.vocab ? (long long)gm.vocab - 1 : gm.id_max, &t, err, errlen);
		if (rc)
			goto out;
		g->prompt[i] = t;
	}
	g->nprompt = (uint32_t)n;
	/* the prompt's last step makes new token 0, each further one a step */
	room = gm.positions - n + 1;
	if (max_tokens && (uint64_t)max_tokens > room) {
		snprintf(err, errlen, "max_tokens %lld with a prompt of %zu tokens passes the model's cache "
			 "of %llu positions: at most %llu new tokens", max_tokens, n,
			 (unsigned long long)gm.positions, (unsigned long long)room);
		rc = 400;
		goto out;
	}
	if (!max_tokens)
		max_tokens = room < GEN_DEFAULT_MAX_TOKENS ? (long long)room : GEN_DEFAULT_MAX_TOKENS;
	g->opts.max_new_tokens = (uint32_t)max_tokens;
	g->opts.stop_ids = g->stop;
	g->opts.num_stop = g->num_stop;
	g->tokens = malloc((size_t)max_tokens * sizeof(*g->tokens));
	if (!g->tokens) {
		snprintf(err, errlen, "out of memory");
		rc = 500;
	}
out:
	srv_json_release(&doc);
	return rc;
}

void srv_gen_free(struct srv_gen *g)
{
	if (!g)
		return;
	free(g->prompt);
	free(g->tokens);
	free(g);
}

/* Each token as it comes: kept for the answer, handed to a waiting stream. */
int srv_gen_token(struct srv_request *req, uint32_t index, int64_t token)
{
	struct srv_gen *g = req->gen;
	int stop;

	pthread_mutex_lock(&req->lock);
	if (index < g->opts.max_new_tokens && g->ntokens < g->opts.max_new_tokens)
		g->tokens[g->ntokens++] = token;
	stop = g->cancel;
	pthread_cond_broadcast(&req->cond);
	pthread_mutex_unlock(&req->lock);
	return stop;
}

void srv_gen_end(struct srv_request *req, uint32_t stopped)
{
	struct srv_gen *g = req->gen;

	pthread_mutex_lock(&req->lock);
	g->st.prompt_tokens = g->nprompt;
	g->st.new_tokens = g->ntokens;
	g->st.stopped = stopped;
	pthread_mutex_unlock(&req->lock);
}

int srv_gen_cancelled(struct srv_request *req)
{
	int cancel;

	pthread_mutex_lock(&req->lock);
	cancel = req->gen->cancel;
	pthread_mutex_unlock(&req->lock);
	return cancel;
}

void srv_gen_cancel(struct srv_request *req)
{
	pthread_mutex_lock(&req->lock);
	req->gen->cancel = 1;
	pthread_mutex_unlock(&req->lock);
}

static const char *finish_reason(uint32_t stopped)
{
	switch (stopped) {
	case IPURT_GEN_STOP_TOKEN:
		return "stop";
	case IPURT_GEN_STOP_CACHE_FULL:
		return "cache_full";
	case IPURT_GEN_STOP_CALLER:
		return "cancelled";
	default:
		return "length";
	}
}

/* {"model_name", "model_version"[, "id"]}: what every answer starts with. */
static json_t *head(const struct srv_model *m, const struct srv_request *req)
{
	char v[32];
	json_t *j;

	snprintf(v, sizeof(v), "%lld", (long long)m->version);
	j = json_pack("{s:s,s:s}", "model_name", m->name, "model_version", v);
	if (j && req->id)
		json_object_set_new(j, "id", json_string(req->id));
	return j;
}

static json_t *ids_array(const int64_t *t, uint32_t n)
{
	json_t *a = json_array();
	uint32_t i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)t[i]));
	return a;
}

/* The counts and why it ended (the generation is done: read without the lock). */
static void add_summary(json_t *j, const struct srv_gen *g)
{
	json_object_set_new(j, "finish_reason", json_string(finish_reason(g->st.stopped)));
	json_object_set_new(j, "prompt_tokens", json_integer(g->nprompt));
	json_object_set_new(j, "completion_tokens", json_integer(g->ntokens));
}

char *srv_gen_response(const struct srv_model *m, const struct srv_request *req, size_t *len)
{
	json_t *j = head(m, req);
	char *text;

	if (!j)
		return NULL;
	json_object_set_new(j, "output_ids", ids_array(req->gen->tokens, req->gen->ntokens));
	add_summary(j, req->gen);
	text = srv_json_text(j, JSON_COMPACT | JSON_ENSURE_ASCII, len);
	json_decref(j);
	return text;
}

/* "data: JSON\n\n" into buf (cap bytes); its length, or 0 if it did not fit. */
static size_t event(json_t *j, char *buf, size_t cap)
{
	size_t len, n = 0;
	char *text;

	if (!j)
		return 0;
	text = srv_json_text(j, JSON_COMPACT | JSON_ENSURE_ASCII, &len);
	json_decref(j);
	if (text && len + 8 <= cap)
		n = (size_t)snprintf(buf, cap, "data: %s\n\n", text);
	free(text);
	return n;
}

size_t srv_gen_event_token(const struct srv_model *m, const struct srv_request *req,
			   uint32_t index, int64_t token, char *buf, size_t cap)
{
	json_t *j = head(m, req);

	if (j) {
		json_object_set_new(j, "index", json_integer(index));
		json_object_set_new(j, "output_ids", ids_array(&token, 1));
	}
	return event(j, buf, cap);
}

size_t srv_gen_event_final(const struct srv_model *m, const struct srv_request *req, char *buf,
			   size_t cap)
{
	json_t *j = head(m, req);

	if (j) {
		json_object_set_new(j, "output_ids", json_array());
		json_object_set_new(j, "final", json_true());
		add_summary(j, req->gen);
	}
	return event(j, buf, cap);
}

size_t srv_gen_event_error(const char *msg, char *buf, size_t cap)
{
	size_t n = event(json_pack("{s:s}", "error", msg), buf, cap);

	/* a message that is not UTF-8 still ends the stream with an error */
	return n ? n : event(json_pack("{s:s}", "error", "the generation failed"), buf, cap);
}
