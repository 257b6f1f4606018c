// SPDX-License-Identifier: MIT
/*
 * http.c - the KServe v2 / Triton HTTP endpoints over libmicrohttpd:
 *
 *   GET  /v2/health/live, /v2/health/ready, /v2
 *   GET  /v2/models/M[/versions/V]            metadata
 *   GET  /v2/models/M[/versions/V]/ready
 *   GET  /v2/models/M[/versions/V]/config     the effective configuration
 *   GET  /v2/models[/M[/versions/V]]/stats    the statistics extension (stats.c)
 *   POST /v2/models/M[/versions/V]/infer      JSON and binary tensors
 *   POST /v2/models/M[/versions/V]/generate   a decoder's tokens, one answer
 *   POST /v2/models/M[/versions/V]/generate_stream  the same as server-sent
 *                                             events, each token as it is made
 *   GET  /v2/systemsharedmemory[/region/R]/status   the shared-memory
 *   POST /v2/systemsharedmemory/region/R/register     extension (shm.c)
 *   POST /v2/systemsharedmemory[/region/R]/unregister
 *   POST /v2/repository/index
 *   POST /v2/repository/models/M/load, .../unload
 *
 * One thread per connection (libmicrohttpd's), so a request waits for its
 * result on its own thread while the scheduler batches it with others; a
 * slow client holds only its own thread, up to the request deadline
 * (conn_guard.c).  Every error is a JSON {"error": "..."} with a 4xx/5xx
 * status; JSON bodies are parsed within the memory budget of
 * json_budget.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"
#include "infer_core.h"
#include "shm.h"

struct conn {
	char *body;
	size_t len, cap;		/* cap is charged to h->body_used */
	size_t declared;		/* Content-Length, 0 if none (chunked) */
	int too_large;
	int over_budget;		/* --max-body-memory was full: discard, answer 503 */
	int counted;
};

/* Give the body's memory and its charge back. */
static void drop_body(struct srv_http *h, struct conn *cn)
{
	free(cn->body);
	cn->body = NULL;
	atomic_fetch_sub(&h->body_used, cn->cap);
	cn->cap = cn->len = 0;
}

/*
 * Grow the body buffer to hold need bytes, charging the growth to the
 * memory of all bodies being received (--max-body-memory).  0, 1 when
 * that memory is full, -1 out of memory.
 */
static int grow_body(struct srv_http *h, struct conn *cn, size_t need)
{
	size_t cap, grow;
	char *b;

	/*
	 * A declared length is taken whole with the first bytes: bodies that
	 * compete for the budget then either fit entirely or are dropped at
	 * once, instead of all growing halfway and all failing.
	 */
	cap = cn->declared ? cn->declared : cn->cap ? cn->cap : 16384;
	while (cap < need)
		cap *= 2;
	if (cap > h->max_body)
		cap = h->max_body;
	grow = cap - cn->cap;
	if (atomic_fetch_add(&h->body_used, grow) + grow > h->max_body_memory) {
		atomic_fetch_sub(&h->body_used, grow);
		return 1;
	}
	b = realloc(cn->body, cap);
	if (!b) {
		atomic_fetch_sub(&h->body_used, grow);
		return -1;
	}
	cn->body = b;
	cn->cap = cap;
	return 0;
}

static enum MHD_Result send_body_close(struct srv_http *h, struct MHD_Connection *c, unsigned status,
				       char *body, size_t len, const char *type, size_t json_len,
				       int close)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;
	char n[32];

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (json_len != len) {
		snprintf(n, sizeof(n), "%zu", json_len);
		MHD_add_response_header(r, "Inference-Header-Content-Length", n);
	}
	if (close || atomic_load(&h->draining))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	if (status >= 100 && status < 600)
		atomic_fetch_add(&h->answered[status / 100], 1);
	return rc;
}

static enum MHD_Result send_body(struct srv_http *h, struct MHD_Connection *c, unsigned status,
				 char *body, size_t len, const char *type, size_t json_len)
{
	return send_body_close(h, c, status, body, len, type, json_len, 0);
}

/*
 * A JSON value that cannot be written (NULL from a json_pack given bytes
 * that are not UTF-8, or no memory) still gets an answer, never a
 * dropped connection.
 */
static enum MHD_Result send_json_close(struct srv_http *h, struct MHD_Connection *c, unsigned status,
				       json_t *j, int close)
{
	size_t len;
	char *text = srv_json_text(j, JSON_COMPACT | JSON_ENSURE_ASCII, &len);

	json_decref(j);
	if (!text) {
		static const char fallback[] = "{\"error\":\"the answer could not be written (out of memory)\"}";

		status = 500;
		text = strdup(fallback);
		if (!text)
			return MHD_NO;
		len = strlen(text);
	}
	return send_body_close(h, c, status, text, len, "application/json", len, close);
}

static enum MHD_Result send_json(struct srv_http *h, struct MHD_Connection *c, unsigned status,
				 json_t *j)
{
	return send_json_close(h, c, status, j, 0);
}

/* Every byte outside printable ASCII as \xNN. */
static const char *ascii_safe(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 5 < len; s++) {
		unsigned char b = (unsigned char)*s;

		if (b >= 0x20 && b < 0x7f)
			buf[o++] = (char)b;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", b);
	}
	buf[o] = 0;
	return buf;
}

/* close: the request's framing is broken, the connection cannot carry another */
static enum MHD_Result send_error_close(struct srv_http *h, struct MHD_Connection *c, unsigned status,
					const char *msg, int close)
{
	char safe[SRV_ERR * 4 + 16];
	json_t *j;

	/* a name from the URL or a body never writes raw control bytes into the log */
	cli_safe(msg, safe, sizeof(safe));
	j = json_pack("{s:s}", "error", safe);
	if (!j) /* bytes cli_safe lets through but JSON refuses (UTF-8 surrogates) */
		j = json_pack("{s:s}", "error", ascii_safe(msg, safe, sizeof(safe)));
	if (h->log_verbose)
		fprintf(stderr, "ipu-serve: %u: %s\n", status, safe);
	return send_json_close(h, c, status, j, close);
}

static enum MHD_Result send_error(struct srv_http *h, struct MHD_Connection *c, unsigned status,
				  const char *msg)
{
	return send_error_close(h, c, status, msg, 0);
}

/* "M", "M/versions/V" with a tail; NULL tail if the path ends there. */
struct route {
	char model[512];
	int64_t version;		/* -1: not given */
	const char *tail;		/* after "M[/versions/V]", "" or "/ready" ... */
};

static int parse_model_path(const char *p, struct route *rt, char *err, size_t errlen)
{
	const char *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : strlen(p);

	rt->version = -1;
	if (!n || n >= sizeof(rt->model)) {
		snprintf(err, errlen, "no model name in the path");
		return -1;
	}
	memcpy(rt->model, p, n);
	rt->model[n] = 0;
	p += n;
	if (!strncmp(p, "/versions/", 10)) {
		char *end;
		long long v;

		p += 10;
		if (*p < '0' || *p > '9') {
			snprintf(err, errlen, "version must be a whole number");
			return -1;
		}
		errno = 0;
		v = strtoll(p, &end, 10);
		if (errno || (*end && *end != '/')) {
			snprintf(err, errlen, "version must be a whole number");
			return -1;
		}
		rt->version = v;
		p = end;
	}
	rt->tail = p;
	return 0;
}

static json_t *tensor_json(const struct srv_tensor_meta *t)
{
	json_t *shape = json_array();
	uint32_t d;

	for (d = 0; shape && d < t->rank; d++)
		json_array_append_new(shape, json_integer((json_int_t)t->shape[d]));
	return json_pack("{s:s,s:s,s:o}", "name", t->name, "datatype", srv_dtype_to_v2(t->dtype),
			 "shape", shape);
}

static enum MHD_Result model_metadata(struct srv_http *h, struct MHD_Connection *c,
				      const struct route *rt, int config)
{
	struct srv_model *vers[SRV_MAX_VERSIONS], *m;
	struct srv_tensor_meta t[SRV_MAX_IO];
	uint32_t nin = 0, i, nv;
	char err[SRV_ERR], v[32];
	json_t *j, *versions, *ins, *outs;
	int nio;

	m = srv_repo_get(h->repo, rt->model, rt->version, err, sizeof(err));
	if (!m)
		return send_error(h, c, 404, err);
	versions = json_array();
	nv = srv_repo_versions(h->repo, rt->model, vers, SRV_MAX_VERSIONS);
	for (i = 0; i < nv; i++) {
		snprintf(v, sizeof(v), "%lld", (long long)vers[i]->version);
		json_array_append_new(versions, json_string(v));
		srv_repo_put(h->repo, vers[i]);
	}
	ins = json_array();
	outs = json_array();
	/* metadata: what a request names (for a packing model one sequence's
	 * view); config: the model's own tensors */
	nio = srv_model_tensors(m, !config, t, SRV_MAX_IO, &nin);
	for (i = 0; nio > 0 && i < (uint32_t)nio; i++)
		json_array_append_new(i < nin ? ins : outs, tensor_json(&t[i]));
	if (!config) {
		j = json_pack("{s:s,s:o,s:s,s:o,s:o}", "name", m->name, "versions", versions, "platform",
			      "ipu_ipuef", "inputs", ins, "outputs", outs);
	} else {
		json_t *dyn = NULL, *pol;

		json_decref(versions);
		if (m->cfg.dynamic_batching) {
			json_t *pref = json_array();

			for (i = 0; i < m->cfg.num_preferred; i++)
				json_array_append_new(pref, json_integer((json_int_t)m->cfg.preferred[i]));
			dyn = json_pack("{s:o,s:I,s:{s:I}}", "preferred_batch_size", pref,
					"max_queue_delay_microseconds", (json_int_t)m->cfg.max_queue_delay_us,
					"default_queue_policy", "max_queue_size", (json_int_t)m->max_queue);
		}
		if (m->cfg.policy == SRV_POLICY_ALL) {
			pol = json_pack("{s:{}}", "all");
		} else if (m->cfg.policy == SRV_POLICY_LATEST) {
			pol = json_pack("{s:{s:i}}", "latest", "num_versions", (int)m->cfg.latest_n);
		} else {
			json_t *l = json_array();

			for (i = 0; i < m->cfg.num_versions; i++)
				json_array_append_new(l, json_integer((json_int_t)m->cfg.versions[i]));
			pol = json_pack("{s:{s:o}}", "specific", "versions", l);
		}
		j = json_pack("{s:s,s:s,s:I,s:[{s:i,s:s}],s:o,s:o,s:o,s:b,s:I}", "name", m->name,
			      "platform", "ipu_ipuef", "max_batch_size", (json_int_t)m->max_batch,
			      "instance_group", "count", (int)m->num_instances, "kind", "KIND_IPU",
			      "version_policy", pol, "input", ins, "output", outs, "fused", m->fused,
			      "max_queue_size", (json_int_t)m->max_queue);
		if (j && dyn)
			json_object_set_new(j, "dynamic_batching", dyn);
		else
			json_decref(dyn);
	}
	srv_repo_put(h->repo, m);
	return send_json(h, c, 200, j);
}

static enum MHD_Result infer(struct srv_http *h, struct MHD_Connection *c, const struct route *rt,
			     struct conn *cn)
{
	const char *hl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
	size_t json_len = cn->len, len = 0, jl = 0;
	uint64_t t0 = srv_now_ns();
	struct srv_request *req;
	struct srv_model *m;
	char err[SRV_ERR], *out = NULL;
	int rc;

	if (hl) {
		unsigned long long v;
		char *end;

		errno = 0;
		v = strtoull(hl, &end, 10);
		if (*hl < '0' || *hl > '9' || *end || errno || v > cn->len) {
			snprintf(err, sizeof(err),
				 "Inference-Header-Content-Length '%.40s' is not a length within the body (%zu bytes)",
				 hl, cn->len);
			return send_error(h, c, 400, err);
		}
		json_len = (size_t)v;
	}
	m = srv_repo_get(h->repo, rt->model, rt->version, err, sizeof(err));
	if (!m)
		return send_error(h, c, 404, err);
	req = srv_request_new();
	if (!req) {
		srv_repo_put(h->repo, m);
		return send_error(h, c, 500, "out of memory");
	}
	req->shm = h->shm;
	rc = srv_request_parse(m, cn->body ? cn->body : "", cn->len, json_len, &h->json, req, err,
			       sizeof(err));
	if (rc)
		srv_model_refused(m, rc, t0);
	else
		rc = srv_request_run(m, req, t0, err, sizeof(err));
	if (rc) {
		srv_request_free(req);
		srv_repo_put(h->repo, m);
		return send_error(h, c, (unsigned)rc, err);
	}
	rc = srv_response_build(m, req, &out, &len, &jl, err, sizeof(err));
	srv_request_free(req);
	srv_repo_put(h->repo, m);
	if (rc)
		return send_error(h, c, (unsigned)rc, err);
	return send_body(h, c, 200, out, len, jl == len ? "application/json" : "application/octet-stream",
			 jl);
}

/* A generation queued for its model: parse, check, submit. */
static int gen_submit(struct srv_http *h, const struct route *rt, struct conn *cn,
		      struct srv_model **mp, struct srv_request **reqp, char *err, size_t errlen)
{
	uint64_t t0 = srv_now_ns();
	struct srv_request *req;
	struct srv_model *m;
	int rc;

	m = srv_repo_get(h->repo, rt->model, rt->version, err, errlen);
	if (!m)
		return 404;
	req = srv_request_new();
	if (!req) {
		srv_repo_put(h->repo, m);
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	rc = srv_gen_parse(m, cn->body ? cn->body : "", cn->len, &h->json, req, err, errlen);
	if (!rc)
		rc = srv_model_submit(m, req, err, errlen);
	if (rc) {
		srv_model_refused(m, rc, t0);
		srv_request_free(req);
		srv_repo_put(h->repo, m);
		return rc;
	}
	*mp = m;
	*reqp = req;
	return 0;
}

static enum MHD_Result generate(struct srv_http *h, struct MHD_Connection *c, const struct route *rt,
				struct conn *cn)
{
	struct srv_request *req;
	struct srv_model *m;
	char err[SRV_ERR], *out;
	size_t len = 0;
	int rc;

	rc = gen_submit(h, rt, cn, &m, &req, err, sizeof(err));
	if (rc)
		return send_error(h, c, (unsigned)rc, err);
	srv_model_wait(m, req);
	if (req->status) {
		char msg[SRV_ERR + 64];

		snprintf(msg, sizeof(msg), "%s: %s", ipu_err_name(req->status), req->err);
		rc = req->status == IPURT_E_MODEL ? 400 : srv_status_of_runtime(req->status);
		srv_request_free(req);
		srv_repo_put(h->repo, m);
		return send_error(h, c, (unsigned)rc, msg);
	}
	out = srv_gen_response(m, req, &len);
	srv_request_free(req);
	srv_repo_put(h->repo, m);
	if (!out)
		return send_error(h, c, 500, "out of memory");
	return send_body(h, c, 200, out, len, "application/json", len);
}

/*
 * A generation streamed as server-sent events.  libmicrohttpd calls
 * stream_read on the connection's own thread whenever it can send, so
 * it blocks there until the next token; when the client goes away the
 * send fails, the connection ends and stream_free stops the generation.
 */
struct gen_stream {
	struct srv_http *h;
	struct srv_model *m;
	struct srv_request *req;
	uint32_t sent;			/* tokens made into events */
	int finished;			/* the final or error event is made */
	size_t len, off;		/* of the event in buf still to send */
	char buf[SRV_ERR * 8 + 1024];
};

/* while it waits in the queue, a comment every second finds a client gone */
#define GEN_KEEPALIVE_NS 1000000000ull

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct gen_stream *s = cls;
	struct srv_request *req = s->req;
	struct srv_gen *g = req->gen;
	size_t n;

	(void)pos;
	while (s->off == s->len) {
		struct timespec ts;
		int64_t token = 0;
		uint32_t index = 0;
		int have, done, timedout = 0;

		if (s->finished)
			return MHD_CONTENT_READER_END_OF_STREAM;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(GEN_KEEPALIVE_NS / 1000000000ull);
		pthread_mutex_lock(&req->lock);
		while (s->sent == g->ntokens && !req->done && !timedout)
			timedout = pthread_cond_timedwait(&req->cond, &req->lock, &ts) != 0;
		have = s->sent < g->ntokens;
		if (have) {
			index = s->sent++;
			token = g->tokens[index];
		}
		done = req->done;
		pthread_mutex_unlock(&req->lock);
		s->off = 0;
		if (have) {
			s->len = srv_gen_event_token(s->m, req, index, token, s->buf, sizeof(s->buf));
		} else if (done) {
			char msg[SRV_ERR + 64];

			s->finished = 1;
			if (req->status) {
				snprintf(msg, sizeof(msg), "%s: %s", ipu_err_name(req->status), req->err);
				s->len = srv_gen_event_error(msg, s->buf, sizeof(s->buf));
			} else {
				s->len = srv_gen_event_final(s->m, req, s->buf, sizeof(s->buf));
			}
		} else {
			s->len = (size_t)snprintf(s->buf, sizeof(s->buf), ": waiting\n\n");
		}
		if (!s->len)
			return MHD_CONTENT_READER_END_WITH_ERROR; /* out of memory */
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(buf, s->buf + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct gen_stream *s = cls;

	srv_gen_cancel(s->req);
	srv_model_withdraw(s->m, s->req);
	srv_model_wait(s->m, s->req);
	srv_request_free(s->req);
	srv_repo_put(s->h->repo, s->m);
	free(s);
}

static enum MHD_Result generate_stream(struct srv_http *h, struct MHD_Connection *c,
				       const struct route *rt, struct conn *cn)
{
	struct MHD_Response *r;
	struct gen_stream *s;
	enum MHD_Result ret;
	char err[SRV_ERR];
	int rc;

	s = calloc(1, sizeof(*s));
	if (!s)
		return send_error(h, c, 500, "out of memory");
	s->h = h;
	rc = gen_submit(h, rt, cn, &s->m, &s->req, err, sizeof(err));
	if (rc) {
		free(s);
		return send_error(h, c, (unsigned)rc, err);
	}
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
	if (!r) {
		stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	if (atomic_load(&h->draining))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	atomic_fetch_add(&h->answered[2], 1);
	return ret;
}

static enum MHD_Result repository(struct srv_http *h, struct MHD_Connection *c, const char *p,
				  struct conn *cn)
{
	char err[SRV_ERR];
	int rc;

	if (!strcmp(p, "index")) {
		struct srv_json_doc doc = { 0 };
		int ready;
		char *text;

		if (cn->len) {
			rc = srv_json_parse(&h->json, cn->body, cn->len, 0, &doc, err, sizeof(err));
			if (rc) {
				srv_json_release(&doc);
				return send_error(h, c, (unsigned)rc, err);
			}
		}
		ready = json_is_true(json_object_get(doc.root, "ready"));
		if (cn->len && !json_is_object(doc.root)) {
			srv_json_release(&doc);
			return send_error(h, c, 400, "the index request body must be a JSON object");
		}
		srv_json_release(&doc);
		text = srv_repo_index_json(h->repo, ready);
		if (!text)
			return send_error(h, c, 500, "out of memory");
		return send_body(h, c, 200, text, strlen(text), "application/json", strlen(text));
	}
	if (!strncmp(p, "models/", 7)) {
		const char *name = p + 7, *slash = strrchr(name, '/');
		char model[512];

		if (!slash || slash == name || (size_t)(slash - name) >= sizeof(model) ||
		    (strcmp(slash, "/load") && strcmp(slash, "/unload")))
			return send_error(h, c, 404, "use /v2/repository/models/MODEL/load or .../unload");
		memcpy(model, name, (size_t)(slash - name));
		model[slash - name] = 0;
		if (!h->explicit_control)
			return send_error(h, c, 403,
					  "model control is off: start ipu-serve with --model-control-mode=explicit "
					  "to load and unload models through the API");
		if (cn->len) {
			struct srv_json_doc doc;
			int ok;

			rc = srv_json_parse(&h->json, cn->body, cn->len, 0, &doc, err, sizeof(err));
			ok = json_is_object(doc.root);
			srv_json_release(&doc);
			if (rc)
				return send_error(h, c, (unsigned)rc, err);
			if (!ok)
				return send_error(h, c, 400, "the request body must be a JSON object");
		}
		rc = !strcmp(slash, "/load") ? srv_repo_load(h->repo, model, err, sizeof(err))
					     : srv_repo_unload(h->repo, model, err, sizeof(err));
		if (rc)
			return send_error(h, c, (unsigned)rc, err);
		return send_body(h, c, 200, strdup(""), 0, "application/json", 0);
	}
	return send_error(h, c, 404, "unknown repository endpoint");
}

/* The statistics extension: every model (rt NULL), a model, or a version. */
static enum MHD_Result stats(struct srv_http *h, struct MHD_Connection *c, const struct route *rt)
{
	char err[SRV_ERR], *text;
	size_t len = 0;
	int status;

	text = srv_stats_json(h->repo, rt ? rt->model : NULL, rt ? rt->version : -1, &len, &status,
			      err, sizeof(err));
	if (!text)
		return send_error(h, c, (unsigned)status, err);
	return send_body(h, c, 200, text, len, "application/json", len);
}

static enum MHD_Result route(struct srv_http *h, struct MHD_Connection *c, const char *url,
			     const char *method, struct conn *cn)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
	struct route rt;
	char err[SRV_ERR];

	if (!strcmp(url, "/v2/health/live"))
		return get ? send_json(h, c, 200, json_pack("{s:b}", "live", 1))
			   : send_error(h, c, 405, "use GET");
	if (!strcmp(url, "/v2/health/ready")) {
		int ready = !atomic_load(&h->draining);

		if (!get)
			return send_error(h, c, 405, "use GET");
		return send_json(h, c, ready ? 200 : 503, json_pack("{s:b}", "ready", ready));
	}
	if (!strcmp(url, "/v2") || !strcmp(url, "/v2/")) {
		json_t *ext = json_array();
		size_t i;

		if (!get) {
			json_decref(ext);
			return send_error(h, c, 405, "use GET");
		}
		for (i = 0; ext && srv_extensions[i]; i++)
			json_array_append_new(ext, json_string(srv_extensions[i]));
		if (ext && h->shm)
			json_array_append_new(ext, json_string("system_shared_memory"));
		return send_json(h, c, 200, json_pack("{s:s,s:s,s:o}", "name", "ipu-serve", "version",
						      IPU_STACK_VERSION, "extensions", ext));
	}
	if (!strncmp(url, "/v2/systemsharedmemory/", 23)) {
		char *out = NULL;
		size_t len = 0;
		int rc = srv_shm_endpoint(h->shm, method, url + 23, cn->body, cn->len, &h->json, &out,
					  &len, err, sizeof(err));

		if (rc != 200)
			return send_error(h, c, (unsigned)rc, err);
		return send_body(h, c, 200, out, len, "application/json", len);
	}
	if (!strncmp(url, "/v2/repository/", 15)) {
		if (!post)
			return send_error(h, c, 405, "use POST");
		return repository(h, c, url + 15, cn);
	}
	/* as Triton's: a model named "stats" has its metadata hidden behind this */
	if (!strcmp(url, "/v2/models/stats"))
		return get ? stats(h, c, NULL) : send_error(h, c, 405, "use GET");
	if (!strncmp(url, "/v2/models/", 11)) {
		if (parse_model_path(url + 11, &rt, err, sizeof(err)))
			return send_error(h, c, 400, err);
		if (!strcmp(rt.tail, "/infer")) {
			if (!post)
				return send_error(h, c, 405, "use POST for infer");
			if (atomic_load(&h->draining))
				return send_error(h, c, 503, "the server is shutting down");
			return infer(h, c, &rt, cn);
		}
		if (!strcmp(rt.tail, "/generate") || !strcmp(rt.tail, "/generate_stream")) {
			if (!post)
				return send_error(h, c, 405, "use POST for generate");
			if (atomic_load(&h->draining))
				return send_error(h, c, 503, "the server is shutting down");
			return rt.tail[9] ? generate_stream(h, c, &rt, cn) : generate(h, c, &rt, cn);
		}
		if (!get)
			return send_error(h, c, 405, "use GET");
		if (!*rt.tail || !strcmp(rt.tail, "/"))
			return model_metadata(h, c, &rt, 0);
		if (!strcmp(rt.tail, "/config"))
			return model_metadata(h, c, &rt, 1);
		if (!strcmp(rt.tail, "/stats"))
			return stats(h, c, &rt);
		if (!strcmp(rt.tail, "/ready")) {
			struct srv_model *m = srv_repo_get(h->repo, rt.model, rt.version, err, sizeof(err));

			if (!m)
				return send_error(h, c, 400, err);
			srv_repo_put(h->repo, m);
			return send_json(h, c, 200, json_pack("{s:s,s:b}", "name", rt.model, "ready", 1));
		}
	}
	return send_error(h, c, 404, "no such endpoint (see Documentation/serving.md)");
}

/* The headers that frame the body (RFC 9112 section 6), as sent. */
struct framing {
	unsigned ncl, nte;
	const char *te;
	int bad_name;			/* a field name that is not a token */
};

/* RFC 9110 section 5.6.2: a field name is one or more tchar */
static int is_token(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s)))
			return 0;
	return 1;
}

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct framing *f = cls;

	(void)kind;
	/* libmicrohttpd keeps "Host " of "Host : x" as the name; a proxy may read it as Host */
	if (!is_token(key))
		f->bad_name = 1;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		f->ncl++;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		f->nte++;
		f->te = value;
	}
	return MHD_YES;
}

/*
 * A body whose length the server and a proxy in front could read apart
 * (request smuggling) is refused, and the connection closed, since where
 * the next request starts is unknown.  libmicrohttpd takes the first of
 * several Content-Length headers and reads an unknown transfer coding
 * until the client closes.
 */
static enum MHD_Result check_framing(struct srv_http *h, struct MHD_Connection *c, int *refused)
{
	struct framing f = { 0 };
	char err[SRV_ERR];

	*refused = 1;
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
	if (f.bad_name)
		return send_error_close(h, c, 400, "a header field name that is not a token (whitespace "
					"before its colon?) (RFC 9112 section 5.1)", 1);
	if (f.nte && f.ncl)
		return send_error_close(h, c, 400, "a request may not carry both Transfer-Encoding and "
					"Content-Length (RFC 9112 section 6.1)", 1);
	if (f.nte > 1 || (f.nte && strcasecmp(f.te, "chunked"))) {
		snprintf(err, sizeof(err), "Transfer-Encoding '%.60s' is not supported: send the body with "
			 "Content-Length or 'Transfer-Encoding: chunked' alone", f.nte > 1 ? "(several)" : f.te);
		return send_error_close(h, c, 501, err, 1);
	}
	if (f.ncl > 1)
		return send_error_close(h, c, 400, "several Content-Length headers: send exactly one "
					"(RFC 9112 section 6.3)", 1);
	*refused = 0;
	return MHD_YES;
}

static enum MHD_Result api_handler(void *cls, struct MHD_Connection *c, const char *url,
				   const char *method, const char *version, const char *upload,
				   size_t *upload_size, void **con_cls)
{
	struct srv_http *h = cls;
	struct conn *cn = *con_cls;
	char err[SRV_ERR];

	(void)version;
	if (!cn) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		enum MHD_Result r;
		int refused;

		cn = calloc(1, sizeof(*cn));
		if (!cn)
			return MHD_NO;
		*con_cls = cn;
		cn->counted = 1;
		atomic_fetch_add(&h->inflight, 1);
		r = check_framing(h, c, &refused);
		if (refused)
			return r;
		if (srv_conn_bad_url(c, err, sizeof(err)))
			return send_error(h, c, 400, err);
		if (cl && strtoull(cl, NULL, 10) > h->max_body) {
			snprintf(err, sizeof(err), "request body of %.30s bytes exceeds the limit of %zu "
				 "(--max-body-size)", cl, h->max_body);
			return send_error(h, c, 413, err);
		}
		cn->declared = cl ? (size_t)strtoull(cl, NULL, 10) : 0;
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;

		*upload_size = 0;
		if (cn->too_large || cn->over_budget || cn->len + n > h->max_body) {
			/* chunked: discard the rest, answer at the end */
			cn->too_large = !cn->over_budget;
			return MHD_YES;
		}
		if (cn->len + n > cn->cap) {
			int rc = grow_body(h, cn, cn->len + n);

			if (rc < 0)
				return MHD_NO;
			if (rc) {
				/* what it holds goes back at once, for the bodies that fit */
				cn->over_budget = 1;
				drop_body(h, cn);
				return MHD_YES;
			}
		}
		memcpy(cn->body + cn->len, upload, n);
		cn->len += n;
		return MHD_YES;
	}
	if (cn->too_large) {
		snprintf(err, sizeof(err), "request body exceeds the limit of %zu bytes (--max-body-size)",
			 h->max_body);
		return send_error(h, c, 413, err);
	}
	if (cn->over_budget) {
		snprintf(err, sizeof(err), "the bodies being received hold all of --max-body-memory "
			 "(%zu bytes); retry", h->max_body_memory);
		return send_error(h, c, 503, err);
	}
	/* the whole request is here: its deadline no longer applies */
	srv_conn_busy(&h->conns, c, 1);
	return route(h, c, url, method, cn);
}

static void api_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			  enum MHD_RequestTerminationCode toe)
{
	struct srv_http *h = cls;
	struct conn *cn = *con_cls;

	(void)toe;
	/* the next request on this connection starts its own deadline */
	srv_conn_busy(&h->conns, c, 0);
	if (!cn)
		return;
	if (cn->counted)
		atomic_fetch_sub(&h->inflight, 1);
	drop_body(h, cn);
	free(cn);
	*con_cls = NULL;
}

static enum MHD_Result metrics_handler(void *cls, struct MHD_Connection *c, const char *url,
				       const char *method, const char *version, const char *upload,
				       size_t *upload_size, void **con_cls)
{
	struct srv_http *h = cls;
	static const char marker;
	char *page;
	size_t len;

	(void)version;
	(void)upload;
	if (!*con_cls) {
		*con_cls = (void *)&marker; /* the first call only sees the headers */
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics"))
		return send_error(h, c, 404, "metrics are at /metrics");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return send_error(h, c, 405, "use GET");
	page = srv_metrics_page(h->repo, &len);
	if (!page)
		return send_error(h, c, 500, "out of memory");
	return send_body(h, c, 200, page, len, "text/plain; version=0.0.4; charset=utf-8", len);
}

static struct MHD_Daemon *start(const char *addr, int port, MHD_AccessHandlerCallback fn,
				struct srv_http *h, int api, unsigned timeout, unsigned limit,
				unsigned per_client, int *bound, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv4 address", addr);
		return NULL;
	}
	if (api)
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG,
				     (uint16_t)port, NULL, NULL, fn, h,
				     MHD_OPTION_EXTERNAL_LOGGER, srv_conns_log, &h->conns,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				     MHD_OPTION_CONNECTION_TIMEOUT, timeout,
				     MHD_OPTION_CONNECTION_LIMIT, limit,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client,
				     MHD_OPTION_NOTIFY_CONNECTION, srv_conns_notify, &h->conns,
				     MHD_OPTION_URI_LOG_CALLBACK, srv_conns_uri_log, &h->conns,
				     MHD_OPTION_UNESCAPE_CALLBACK, srv_conns_unescape, &h->conns,
				     MHD_OPTION_NOTIFY_COMPLETED, api_completed, h,
				     MHD_OPTION_END);
	else
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG,
				     (uint16_t)port, NULL, NULL, fn, h,
				     MHD_OPTION_EXTERNAL_LOGGER, srv_conns_log, NULL,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				     MHD_OPTION_CONNECTION_TIMEOUT, timeout,
				     MHD_OPTION_CONNECTION_LIMIT, limit,
				     MHD_OPTION_END);
	if (!d) {
		snprintf(err, errlen, "cannot listen on %s:%d (in use? see the message above)", addr, port);
		return NULL;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*bound = info ? (int)info->port : port;
	return d;
}

int srv_http_start(struct srv_http *h, const char *addr, int port, int metrics_port,
		   const struct srv_http_limits *l, struct MHD_Daemon **api,
		   struct MHD_Daemon **metrics, int *api_port_out, int *metrics_port_out,
		   char *err, size_t errlen)
{
	*metrics = NULL;
	*api = start(addr, port, api_handler, h, 1, l->connection_timeout_s, l->max_connections,
		     l->max_per_client, api_port_out, err, errlen);
	if (!*api)
		return -1;
	if (metrics_port < 0)
		return 0;
	*metrics = start(addr, metrics_port, metrics_handler, h, 0, l->connection_timeout_s, 64, 0,
			 metrics_port_out, err, errlen);
	if (!*metrics) {
		MHD_stop_daemon(*api);
		*api = NULL;
		return -1;
	}
	return 0;
}

unsigned srv_http_quiesce(struct MHD_Daemon *api)
{
	MHD_socket fd = MHD_quiesce_daemon(api);
	struct sockaddr_storage sa;
	unsigned handed = 0;
	socklen_t sl;
	int s;

	if (fd == MHD_INVALID_SOCKET)
		return 0;
	/*
	 * Connections the kernel completed before the listener closes have
	 * sent their requests already: hand them to libmicrohttpd (they are
	 * answered, 503 for an infer) instead of resetting them with the socket.
	 */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0) {
		for (;;) {
			sl = sizeof(sa);
			s = accept4(fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);
			if (s < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			/* on failure libmicrohttpd closes the socket itself */
			if (MHD_add_connection(api, s, (struct sockaddr *)&sa, sl) == MHD_YES)
				handed++;
		}
	}
	close(fd);
	return handed;
}
