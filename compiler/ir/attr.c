/* SPDX-License-Identifier: MIT */
/* attr.c - node attributes: lookup with defaults, set, copy. */
#include <stdlib.h>
#include <string.h>

#include "ipu/ir.h"

static char *dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

void ir_attr_clear(struct ir_attr *a)
{
	free(a->name);
	free(a->s);
	free(a->ints);
	free(a->floats);
	if (a->strings)
		for (size_t i = 0; i < a->n; i++)
			free(a->strings[i]);
	free(a->strings);
	if (a->t) {
		ir_tensor_free(a->t);
		free(a->t);
	}
	ir_graph_free(a->g);
	memset(a, 0, sizeof(*a));
}

const struct ir_attr *ir_attr_find(const struct ir_node *n, const char *name)
{
	for (int i = 0; i < n->nattrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t ir_attr_int(const struct ir_node *n, const char *name, int64_t def)
{
	const struct ir_attr *a = ir_attr_find(n, name);

	if (!a)
		return def;
	if (a->type == IR_ATTR_FLOAT)
		return (int64_t)a->f;
	return a->i;
}

double ir_attr_float(const struct ir_node *n, const char *name, double def)
{
	const struct ir_attr *a = ir_attr_find(n, name);

	if (!a)
		return def;
	if (a->type == IR_ATTR_INT)
		return (double)a->i;
	return a->f;
}

const char *ir_attr_str(const struct ir_node *n, const char *name,
			const char *def)
{
	const struct ir_attr *a = ir_attr_find(n, name);

	return a && a->type == IR_ATTR_STRING && a->s ? a->s : def;
}

const int64_t *ir_attr_ints(const struct ir_node *n, const char *name,
			    size_t *count)
{
	const struct ir_attr *a = ir_attr_find(n, name);

	if (!a || a->type != IR_ATTR_INTS) {
		*count = 0;
		return NULL;
	}
	*count = a->n;
	return a->ints ? a->ints : (const int64_t *)"";
}

int ir_attr_remove(struct ir_node *n, const char *name)
{
	for (int i = 0; i < n->nattrs; i++) {
		if (strcmp(n->attrs[i].name, name))
			continue;
		ir_attr_clear(&n->attrs[i]);
		memmove(&n->attrs[i], &n->attrs[i + 1],
			(size_t)(n->nattrs - i - 1) * sizeof(n->attrs[0]));
		n->nattrs--;
		return 1;
	}
	return 0;
}

/* A fresh (cleared) attribute slot named `name`, replacing any old one. */
static struct ir_attr *slot(struct ir_node *n, const char *name,
			    struct ir_error *e)
{
	struct ir_attr *na;

	ir_attr_remove(n, name);
	na = realloc(n->attrs, (size_t)(n->nattrs + 1) * sizeof(*na));
	if (!na) {
		ir_err(e, "out of memory");
		return NULL;
	}
	n->attrs = na;
	memset(&na[n->nattrs], 0, sizeof(*na));
	na[n->nattrs].name = dupstr(name);
	if (!na[n->nattrs].name) {
		ir_err(e, "out of memory");
		return NULL;
	}
	return &na[n->nattrs++];
}

int ir_attr_set_int(struct ir_node *n, const char *name, int64_t v,
		    struct ir_error *e)
{
	struct ir_attr *a = slot(n, name, e);

	if (!a)
		return -1;
	a->type = IR_ATTR_INT;
	a->i = v;
	return 0;
}

int ir_attr_set_float(struct ir_node *n, const char *name, double v,
		      struct ir_error *e)
{
	struct ir_attr *a = slot(n, name, e);

	if (!a)
		return -1;
	a->type = IR_ATTR_FLOAT;
	a->f = v;
	return 0;
}

int ir_attr_set_str(struct ir_node *n, const char *name, const char *s,
		    struct ir_error *e)
{
	struct ir_attr *a = slot(n, name, e);

	if (!a)
		return -1;
	a->type = IR_ATTR_STRING;
	a->s = dupstr(s);
	return a->s ? 0 : ir_err(e, "out of memory");
}

int ir_attr_set_ints(struct ir_node *n, const char *name, const int64_t *v,
		     size_t count, struct ir_error *e)
{
	struct ir_attr *a = slot(n, name, e);

	if (!a)
		return -1;
	a->type = IR_ATTR_INTS;
	a->n = count;
	a->ints = malloc((count ? count : 1) * sizeof(int64_t));
	if (!a->ints)
		return ir_err(e, "out of memory");
	if (count)
		memcpy(a->ints, v, count * sizeof(int64_t));
	return 0;
}

int ir_attr_copy(struct ir_attr *d, const struct ir_attr *s,
		 struct ir_error *e)
{
	memset(d, 0, sizeof(*d));
	d->type = s->type;
	d->f = s->f;
	d->i = s->i;
	d->n = s->n;
	if (!(d->name = dupstr(s->name)))
		goto oom;
	if (s->s && !(d->s = dupstr(s->s)))
		goto oom;
	if (s->ints) {
		d->ints = malloc((s->n ? s->n : 1) * sizeof(int64_t));
		if (!d->ints)
			goto oom;
		memcpy(d->ints, s->ints, s->n * sizeof(int64_t));
	}
	if (s->floats) {
		d->floats = malloc((s->n ? s->n : 1) * sizeof(double));
		if (!d->floats)
			goto oom;
		memcpy(d->floats, s->floats, s->n * sizeof(double));
	}
	if (s->strings) {
		d->strings = calloc(s->n ? s->n : 1, sizeof(char *));
		if (!d->strings)
			goto oom;
		for (size_t i = 0; i < s->n; i++)
			if (!(d->strings[i] = dupstr(s->strings[i])))
				goto oom;
	}
	if (s->t) {
		d->t = calloc(1, sizeof(*d->t));
		if (!d->t || ir_tensor_alloc(d->t, s->t->dtype, s->t->rank,
					     s->t->dims, e))
			goto fail;
		memcpy(d->t->data, s->t->data, ir_tensor_bytes(s->t));
	}
	if (s->g && !(d->g = ir_graph_clone(s->g, e)))
		goto fail;
	return 0;
oom:
	ir_err(e, "out of memory");
fail:
	ir_attr_clear(d);
	return -1;
}
