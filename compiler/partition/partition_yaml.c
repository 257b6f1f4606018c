// SPDX-License-Identifier: MIT
/*
 * partition_yaml.c - the manual sharding config (--manual_sharding_config),
 * read with libyaml: a list of mappings `node: NAME` / `ipu: K`.  A listed
 * node starts IPU K's stage; the nodes after it, up to the next listed
 * one, stay on IPU K.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ipu/partition.h"

struct ctx {
	yaml_document_t *doc;
	const struct ir_graph *g;
	const char *name;
	int nstages;
	int *ipu_of;		/* per node position: the IPU it starts, or -1 */
	struct ir_error *e;
};

static int at(struct ctx *c, const yaml_node_t *n, const char *msg, const char *arg)
{
	return ir_err(c->e, "%s:%zu: %s%s", c->name, n->start_mark.line + 1, msg, arg ? arg : "");
}

static int find_node(const struct ir_graph *g, const char *name)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].name && !strcmp(g->nodes[i].name, name))
			return i;
	return -1;
}

static int entry(struct ctx *c, const yaml_node_t *m)
{
	const char *node = NULL;
	const yaml_node_t *ipu_node = NULL;
	long long ipu = -1;
	int pos;

	if (m->type != YAML_MAPPING_NODE)
		return at(c, m, "each entry is a mapping with the keys node and ipu", NULL);
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *key;

		if (!k || !v || k->type != YAML_SCALAR_NODE)
			return at(c, m, "keys are names (node, ipu)", NULL);
		key = (const char *)k->data.scalar.value;
		if (v->type != YAML_SCALAR_NODE)
			return at(c, v, "a single value is expected for key ", key);
		if (!strcmp(key, "node")) {
			node = (const char *)v->data.scalar.value;
		} else if (!strcmp(key, "ipu")) {
			const char *s = (const char *)v->data.scalar.value;
			char *end;

			errno = 0;
			ipu = strtoll(s, &end, 10);
			if (end == s || *end || errno || ipu < 0)
				return at(c, v, "expected an IPU number for key ipu, not ", s);
			ipu_node = v;
		} else {
			return at(c, k, "unknown key (keys: node, ipu): ", key);
		}
	}
	if (!node || !ipu_node)
		return at(c, m, "an entry needs both node and ipu", NULL);
	if (ipu >= c->nstages) {
		char m2[64];

		snprintf(m2, sizeof(m2), "ipu %lld is not below --num_ipus %d", ipu, c->nstages);
		return at(c, ipu_node, m2, NULL);
	}
	pos = find_node(c->g, node);
	if (pos < 0)
		return at(c, m, "no node of the (optimised) model is named ", node);
	if (c->ipu_of[pos] >= 0)
		return at(c, m, "node listed twice: ", node);
	c->ipu_of[pos] = (int)ipu;
	return 0;
}

/* Listed nodes in graph order must start IPUs 0, 1, ... in turn (the
 * first node is on IPU 0 whether listed or not). */
static int cuts(struct ctx *c, struct ipu_partition *p)
{
	int cur = 0;

	p->first[0] = 0;
	for (int i = 0; i < c->g->nnodes; i++) {
		int k = c->ipu_of[i];

		if (k < 0 || k == cur)
			continue;
		if (k != cur + 1)
			return ir_err(c->e, "%s: node '%s' starts IPU %d after IPU %d: stages follow the graph's order, each IPU after the one before it",
				      c->name, c->g->nodes[i].name, k, cur);
		p->first[++cur] = i;
	}
	if (cur + 1 != c->nstages)
		return ir_err(c->e, "%s: IPUs 0 to %d have nodes, --num_ipus is %d", c->name, cur,
			      c->nstages);
	p->first[c->nstages] = c->g->nnodes;
	p->nstages = c->nstages;
	return 0;
}

int ipu_partition_yaml_text(const struct ir_graph *g, const char *text, size_t len,
			    const char *name, int nstages, struct ipu_partition *p,
			    struct ir_error *e)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct ctx c = { &doc, g, name, nstages, NULL, e };
	yaml_node_t *root;
	int r = -1;

	if (nstages < 1 || nstages > IPU_PARTITION_MAX_IPUS)
		return ir_err(e, "--num_ipus %d: must be 1 to %d", nstages, IPU_PARTITION_MAX_IPUS);
	if (!yaml_parser_initialize(&parser))
		return ir_err(e, "out of memory reading %s", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = ir_err(e, "%s:%zu: %s", name, parser.problem_mark.line + 1,
			   parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return r;
	}
	c.ipu_of = malloc(((size_t)g->nnodes + 1) * sizeof(*c.ipu_of));
	if (!c.ipu_of) {
		r = ir_err(e, "out of memory reading %s", name);
		goto out;
	}
	for (int i = 0; i < g->nnodes; i++)
		c.ipu_of[i] = -1;
	root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_SEQUENCE_NODE) {
		r = ir_err(e, "%s: expected a list of entries '- node: NAME' / '  ipu: K'", name);
		goto out;
	}
	for (yaml_node_item_t *it = root->data.sequence.items.start; it < root->data.sequence.items.top; it++)
		if (entry(&c, yaml_document_get_node(&doc, *it)))
			goto out;
	r = cuts(&c, p);
out:
	free(c.ipu_of);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int ipu_partition_yaml(const struct ir_graph *g, const char *path, int nstages,
		       struct ipu_partition *p, struct ir_error *e)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	int r;

	if (!f)
		return ir_err(e, "%s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return ir_err(e, "%s: cannot read its size", path);
	}
	if (n > (16l << 20)) {
		fclose(f);
		return ir_err(e, "%s: %ld bytes, more than the 16 MiB a sharding config may have", path, n);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		r = ir_err(e, "%s: %s", path, buf ? "read failed" : "out of memory");
		fclose(f);
		free(buf);
		return r;
	}
	fclose(f);
	r = ipu_partition_yaml_text(g, buf, (size_t)n, path, nstages, p, e);
	free(buf);
	return r;
}
