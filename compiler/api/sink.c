/* SPDX-License-Identifier: MIT */
/* sink.c - the pipeline writes its messages to a FILE; the caller gets
 * them line by line through its callback. */
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"

struct sink {
	void (*fn)(void *ctx, enum ipu_compile_message_kind kind, const char *text);
	void *ctx;
	enum ipu_compile_message_kind kind;
	struct ipuc_result *r;		/* warnings become its diagnostics */
	const int *model;
	char *line;
	size_t len, cap;
};

static int put(struct sink *s, const char *buf, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		char *p;

		while (cap < s->len + n + 1)
			cap *= 2;
		if (!(p = realloc(s->line, cap)))
			return -1;
		s->line = p;
		s->cap = cap;
	}
	memcpy(s->line + s->len, buf, n);
	s->len += n;
	s->line[s->len] = 0;
	return 0;
}

static void line_done(struct sink *s)
{
	static const char warning[] = "ipu-compile: warning: ";

	if (s->r && !strncmp(s->line, warning, sizeof(warning) - 1)) {
		char *m = s->line + sizeof(warning) - 1;
		size_t k = strlen(m);

		if (k && m[k - 1] == '\n')
			m[k - 1] = 0;
		ipuc_result_diag(s->r, IPU_COMPILE_WARNING, *s->model, m);
		if (k && !m[k - 1])
			m[k - 1] = '\n';
	}
	if (s->fn)
		s->fn(s->ctx, s->kind, s->line);
}

static ssize_t sink_write(void *c, const char *buf, size_t n)
{
	struct sink *s = c;
	size_t done = 0;

	if (!s->fn && !s->r)
		return (ssize_t)n;
	while (done < n) {
		const char *nl = memchr(buf + done, '\n', n - done);
		size_t k = nl ? (size_t)(nl - (buf + done)) + 1 : n - done;

		if (put(s, buf + done, k))
			return -1;
		done += k;
		if (nl) {
			line_done(s);
			s->len = 0;
		}
	}
	return (ssize_t)n;
}

static int sink_close(void *c)
{
	struct sink *s = c;

	/* a last line without its newline */
	if (s->len)
		line_done(s);
	free(s->line);
	free(s);
	return 0;
}

FILE *ipuc_sink_open(const struct ipu_compile_options *o, enum ipu_compile_message_kind kind,
		     struct ipuc_result *r, const int *model)
{
	cookie_io_functions_t io = { .write = sink_write, .close = sink_close };
	struct sink *s = calloc(1, sizeof(*s));
	FILE *f;

	if (!s)
		return NULL;
	s->fn = o->message;
	s->ctx = o->callback_ctx;
	s->kind = kind;
	s->r = r;
	s->model = model;
	if (!(f = fopencookie(s, "w", io))) {
		free(s);
		return NULL;
	}
	/* each line as it is written: in order with the other kinds' lines
	 * and the progress callbacks, and its warning about the model being
	 * compiled then */
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}
