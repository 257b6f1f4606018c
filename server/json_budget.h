/* SPDX-License-Identifier: MIT */
/*
 * json_budget.h - a bound on the memory of request bodies parsed with
 * jansson, and that memory given back at once (server/json_budget.c).
 *
 * jansson turns each JSON value into its own allocations: a body of
 * "0.0," elements takes 16 to 20 times its size once parsed, so a byte
 * limit on the body does not bound the parse.  While a request body is
 * parsed, every allocation jansson makes comes from an arena of that
 * document, counted against one budget shared by all connections and
 * refused past it, so the parse stops at the budget instead of after it;
 * releasing the document frees the arena in a few large blocks, which go
 * back to the system instead of staying in glibc's per-thread arenas.
 */
#ifndef IPU_SERVE_JSON_BUDGET_H
#define IPU_SERVE_JSON_BUDGET_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>

struct srv_json_budget {
	size_t limit;			/* bytes the parsed documents may hold together */
	atomic_size_t used;
	atomic_size_t peak;		/* the most held at once */
};

struct srv_json_chunk;

/* A parsed document and the arena its values live in. */
struct srv_json_doc {
	json_t *root;
	struct srv_json_budget *budget;
	struct srv_json_chunk *chunks;
	size_t total;			/* bytes of its chunks */
	size_t next;			/* size of the next chunk */
	int refused, alone;
};

/*
 * Route jansson's allocations through the document arenas (jansson's
 * allocator is per process: call once, before any thread uses jansson).
 * Without it srv_json_parse still parses, with jansson's malloc, uncounted.
 */
void srv_json_budget_install(void);

/*
 * Parse len bytes of JSON (jansson flags) into doc->root, counting what the
 * document holds against b (NULL: no bound) until srv_json_release.  0, or
 * an HTTP status with err: 400 malformed JSON, 413 this body alone parses
 * into more than the whole budget, 503 the budget is held by other bodies
 * being parsed now (retry).  Release doc in every case.
 */
int srv_json_parse(struct srv_json_budget *b, const char *buf, size_t len, size_t flags,
		   struct srv_json_doc *doc, char *err, size_t errlen);

/* Free the document and its arena. */
void srv_json_release(struct srv_json_doc *doc);

/*
 * json_dumps into memory of the C library's malloc (free() it): with the
 * arena allocator installed, jansson's own json_dumps text may not be given
 * to free().  *len (if not NULL) is its length.
 */
char *srv_json_text(const json_t *j, size_t flags, size_t *len);

#endif
