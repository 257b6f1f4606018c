// SPDX-License-Identifier: MIT
/*
 * json_budget.c - jansson's allocations during a request body's parse
 * taken from an arena of the document, counted against a budget shared by
 * every connection.
 *
 * Each block carries a 16-byte header naming its document (NULL outside a
 * parse: responses, metadata, which use the C library's malloc), so that
 * jansson's free of a document's value is a no-op and the arena goes as a
 * whole.  Chunks grow from 64 KiB to 16 MiB; from 1 MiB glibc maps them on
 * their own (the server fixes M_MMAP_THRESHOLD), so freeing one unmaps it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_budget.h"

#define FIRST_CHUNK (64u << 10)
#define MAX_CHUNK (16u << 20)

struct hdr {
	struct srv_json_doc *doc;	/* NULL: the C library's block */
	size_t pad;
};
_Static_assert(sizeof(struct hdr) == 16, "the header keeps malloc's 16-byte alignment");

struct srv_json_chunk {
	struct srv_json_chunk *next;
	size_t size, used;		/* bytes after the chunk header */
	size_t pad;
	unsigned char data[];
};
_Static_assert(sizeof(struct srv_json_chunk) % 16 == 0, "chunk data stays 16-byte aligned");

/* The document being parsed on this thread, if any. */
static _Thread_local struct srv_json_doc *parsing;

static struct srv_json_chunk *new_chunk(struct srv_json_doc *d, size_t need)
{
	struct srv_json_budget *b = d->budget;
	struct srv_json_chunk *c;
	size_t usual = d->next, size = usual > need ? usual : need, bytes = sizeof(*c) + size;

	if (b) {
		size_t now = atomic_fetch_add(&b->used, bytes) + bytes, peak;

		if (now > b->limit) {
			atomic_fetch_sub(&b->used, bytes);
			d->refused = 1;
			d->alone = d->total + bytes > b->limit;
			return NULL;
		}
		peak = atomic_load(&b->peak);
		while (now > peak && !atomic_compare_exchange_weak(&b->peak, &peak, now))
			;
	}
	c = malloc(bytes);
	if (!c) {
		if (b)
			atomic_fetch_sub(&b->used, bytes);
		return NULL;
	}
	c->size = size;
	c->used = 0;
	d->total += bytes;
	if (d->next < MAX_CHUNK)
		d->next *= 2;
	/* a block larger than the usual chunk gets its own; the current one stays in use */
	if (d->chunks && size > usual) {
		c->next = d->chunks->next;
		d->chunks->next = c;
	} else {
		c->next = d->chunks;
		d->chunks = c;
	}
	return c;
}

static void *arena_malloc(size_t n)
{
	struct srv_json_doc *d = parsing;
	struct srv_json_chunk *c;
	struct hdr *h;
	size_t need;

	if (n > SIZE_MAX / 2)
		return NULL;
	if (!d) {
		h = malloc(sizeof(*h) + n);
		if (!h)
			return NULL;
		h->doc = NULL;
		return h + 1;
	}
	need = (sizeof(*h) + n + 15) & ~(size_t)15;
	c = d->chunks;
	if (!c || c->size - c->used < need) {
		c = new_chunk(d, need);
		if (!c)
			return NULL;
	}
	h = (struct hdr *)(c->data + c->used);
	c->used += need;
	h->doc = d;
	return h + 1;
}

static void arena_free(void *p)
{
	struct hdr *h;

	if (!p)
		return;
	h = (struct hdr *)p - 1;
	/* a document's values go with its arena */
	if (!h->doc)
		free(h);
}

void srv_json_budget_install(void)
{
	json_set_alloc_funcs(arena_malloc, arena_free);
}

int srv_json_parse(struct srv_json_budget *b, const char *buf, size_t len, size_t flags,
		   struct srv_json_doc *doc, char *err, size_t errlen)
{
	json_error_t jerr;

	memset(doc, 0, sizeof(*doc));
	doc->budget = b;
	doc->next = FIRST_CHUNK;
	parsing = doc;
	doc->root = json_loadb(buf, len, flags, &jerr);
	parsing = NULL;
	if (doc->root)
		return 0;
	if (doc->refused && doc->alone) {
		snprintf(err, errlen, "the JSON body parses into more than %zu bytes (--max-json-memory); "
			 "send large tensors as binary data", b->limit);
		return 413;
	}
	if (doc->refused) {
		snprintf(err, errlen, "other JSON bodies being parsed hold the memory for JSON "
			 "(--max-json-memory %zu bytes); retry", b->limit);
		return 503;
	}
	snprintf(err, errlen, "malformed JSON at line %d column %d: %s", jerr.line, jerr.column, jerr.text);
	return 400;
}

void srv_json_release(struct srv_json_doc *doc)
{
	struct srv_json_chunk *c = doc->chunks, *next;

	json_decref(doc->root);
	doc->root = NULL;
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	if (doc->budget)
		atomic_fetch_sub(&doc->budget->used, doc->total);
	doc->chunks = NULL;
	doc->total = 0;
}

struct text {
	char *p;
	size_t n, cap;
};

static int put_text(const char *s, size_t n, void *data)
{
	struct text *t = data;

	if (t->n + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		char *p;

		while (cap < t->n + n + 1)
			cap *= 2;
		p = realloc(t->p, cap);
		if (!p)
			return -1;
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
	return 0;
}

char *srv_json_text(const json_t *j, size_t flags, size_t *len)
{
	struct text t = { 0 };

	if (!j || json_dump_callback(j, put_text, &t, flags) || put_text("", 0, &t)) {
		free(t.p);
		return NULL;
	}
	t.p[t.n] = 0;
	if (len)
		*len = t.n;
	return t.p;
}
