// SPDX-License-Identifier: MIT
/*
 * lower_state.c - device-resident state: which graph inputs are caches
 * that the run's outputs replace, the streams and programs that fill and
 * drain them, and where they ended up on the tiles.
 *
 * A pair (IN, OUT) means: OUT is the value IN should have on the next run.
 * IN's tensor keeps its tile memory for the executable's life (the graph
 * builder keeps every piece a program reads before writing it, and every
 * piece several programs use), Main reads it in place and ends with one
 * exchange copying OUT into it, so a run streams neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

/* "past_key_values.N.key" -> "present.N.key" (also .value); 0 if not. */
static int hf_partner(const char *in, char *out, size_t len)
{
	static const char pre[] = "past_key_values.";
	const char *p = in + sizeof(pre) - 1, *q;

	if (strncmp(in, pre, sizeof(pre) - 1) || *p < '0' || *p > '9')
		return 0;
	for (q = p; *q >= '0' && *q <= '9'; q++)
		;
	if (strcmp(q, ".key") && strcmp(q, ".value"))
		return 0;
	return snprintf(out, len, "present.%s", p) < (int)len;
}

static int find_output(const struct ir_graph *g, const char *name)
{
	for (int j = 0; j < g->noutputs; j++)
		if (!strcmp(g->vals[g->outputs[j]].name, name))
			return j;
	return -1;
}

static int find_input(const struct ir_graph *g, const char *name)
{
	for (int i = 0; i < g->ninputs; i++)
		if (!strcmp(g->vals[g->inputs[i]].name, name))
			return i;
	return -1;
}

static int pair(const struct ir_graph *g, int i, int j, int *in_of_out, struct ir_error *e)
{
	const struct ir_value *a = &g->vals[g->inputs[i]], *b = &g->vals[g->outputs[j]];
	int same = a->dtype == b->dtype && a->rank == b->rank;

	for (int d = 0; same && d < a->rank; d++)
		same = a->dims[d] == b->dims[d];
	if (!same)
		return ir_err(e,
			      "state '%s' -> '%s': the input is %s of rank %d, the output %s of rank %d with other dims: a cache kept on the device must keep its dtype and shape (export the decoder with a fixed-length cache written at the position, Documentation/compiler/generation.md)",
			      a->name, b->name, ir_dtype_name(a->dtype), a->rank,
			      ir_dtype_name(b->dtype), b->rank);
	if (in_of_out[j] >= 0 && in_of_out[j] != i)
		return ir_err(e, "output '%s' is named as the next value of two states", b->name);
	for (int k = 0; k < g->noutputs; k++)
		if (k != j && in_of_out[k] == i)
			return ir_err(e, "state '%s' is given two next values", a->name);
	in_of_out[j] = i;
	return 0;
}

int lw_state_find(const struct ir_graph *g, const struct ipu_target *t, int *in_of_out,
		  struct ir_error *e)
{
	char out[IPUEF_MAX_NAME + 16];

	for (int j = 0; j < g->noutputs; j++)
		in_of_out[j] = -1;
	for (uint32_t k = 0; k < t->num_state_pairs; k++) {
		int i = find_input(g, t->state_pairs[k].in), j = find_output(g, t->state_pairs[k].out);

		if (i < 0 || j < 0)
			return ir_err(e, "state %s=%s: the model has no %s '%s'", t->state_pairs[k].in,
				      t->state_pairs[k].out, i < 0 ? "input" : "output",
				      i < 0 ? t->state_pairs[k].in : t->state_pairs[k].out);
		if (pair(g, i, j, in_of_out, e))
			return -1;
	}
	for (int i = 0; !t->no_auto_state && i < g->ninputs; i++) {
		int j;

		if (!hf_partner(g->vals[g->inputs[i]].name, out, sizeof(out)))
			continue;
		j = find_output(g, out);
		if (j >= 0 && in_of_out[j] != i && pair(g, i, j, in_of_out, e))
			return -1;
	}
	return 0;
}

int lw_state_token(struct ir_graph *g, const struct ipu_target *t, struct ir_error *e)
{
	int *in_of_out = malloc((size_t)(g->noutputs ? g->noutputs : 1) * sizeof(int));
	int j, lv, tv, node, any = 0;
	const struct ir_value *lg;
	int64_t dims[IR_MAX_RANK];

	if (!in_of_out)
		return ir_err(e, "out of memory");
	if (lw_state_find(g, t, in_of_out, e)) {
		free(in_of_out);
		return -1;
	}
	for (j = 0; j < g->noutputs; j++)
		any |= in_of_out[j] >= 0;
	free(in_of_out);
	j = find_output(g, "logits");
	if (!any || j < 0 || find_output(g, LW_NEXT_TOKEN) >= 0 ||
	    ir_value_find(g, LW_NEXT_TOKEN) >= 0)
		return 0;
	lv = g->outputs[j];
	lg = &g->vals[lv];
	if (lg->rank < 1 || !ir_value_has_shape(lg))
		return 0;
	for (int d = 0; d + 1 < lg->rank; d++)
		dims[d] = lg->dims[d];
	tv = ir_value_add(g, LW_NEXT_TOKEN, e);
	if (tv < 0)
		return -1;
	ir_value_set_shape(&g->vals[tv], IR_I64, g->vals[lv].rank - 1, dims);
	node = ir_node_add(g, LW_NEXT_TOKEN "/ArgMax", "ArgMax", &lv, 1, &tv, 1, e);
	if (node < 0 || ir_attr_set_int(&g->nodes[node], "axis", -1, e) ||
	    ir_attr_set_int(&g->nodes[node], "keepdims", 0, e) || ir_graph_add_output(g, tv, e))
		return -1;
	ir_graph_link(g);
	return 0;
}

int lw_state_add(struct ipu_lower_states *ss, const struct ir_value *v, uint32_t rt_dtype,
		 ipu_tensor tt, uint32_t write_stream, uint32_t read_stream, struct ir_error *e)
{
	struct ipuef_state *s;

	if (ss->n == ss->cap) {
		uint32_t cap = ss->cap ? ss->cap * 2 : 8;
		struct ipuef_state *ns = realloc(ss->s, cap * sizeof(*ns));
		char **nn = ns ? realloc(ss->names, cap * sizeof(*nn)) : NULL;
		ipu_tensor *nt = nn ? realloc(ss->t, cap * sizeof(*nt)) : NULL;
		struct ipuef_region **nr = nt ? realloc(ss->regions, cap * sizeof(*nr)) : NULL;

		if (ns)
			ss->s = ns;
		if (nn)
			ss->names = nn;
		if (nt)
			ss->t = nt;
		if (!nr)
			return ir_err(e, "out of memory");
		ss->regions = nr;
		ss->cap = cap;
	}
	s = &ss->s[ss->n];
	memset(s, 0, sizeof(*s));
	ss->names[ss->n] = strdup(v->name);
	ss->regions[ss->n] = NULL;
	ss->t[ss->n] = tt;
	if (!ss->names[ss->n])
		return ir_err(e, "out of memory");
	s->name = ss->names[ss->n];
	s->dtype = rt_dtype;
	s->rank = (uint32_t)v->rank;
	for (int d = 0; d < v->rank; d++)
		s->dims[d] = (uint64_t)v->dims[d];
	s->init = IPUEF_STATE_INIT_ZEROS;
	s->write_stream = write_stream;
	s->read_stream = read_stream;
	ss->n++;
	return 0;
}

int lw_state_programs(struct ipu_graph *gb, const struct ipu_lower_states *ss)
{
	ipu_step wr = ipu_step_sequence(gb), rd = ipu_step_sequence(gb);

	if (wr == IPU_GRAPH_INVALID || rd == IPU_GRAPH_INVALID)
		return -1;
	for (uint32_t i = 0; i < ss->n; i++) {
		struct ipu_slice all = { ss->t[i], 0, ipu_graph_tensor_elems(gb, ss->t[i]) };

		if (ipu_step_append(gb, wr, ipu_step_stream_copy(gb, ss->s[i].write_stream, &all, 1)) ||
		    ipu_step_append(gb, rd, ipu_step_stream_copy(gb, ss->s[i].read_stream, &all, 1)))
			return -1;
	}
	return ipu_graph_add_program(gb, wr) < 0 || ipu_graph_add_program(gb, rd) < 0 ? -1 : 0;
}

static int cmp_region_elem(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

int lw_state_regions(struct ipu_graph *gb, struct ipu_lower_states *ss, struct ir_error *e)
{
	for (uint32_t i = 0; i < ss->n; i++) {
		uint32_t n = 0, tile, off, esz = ipux_dtype_size(ipu_graph_tensor_dtype(gb, ss->t[i]));
		uint64_t b, en, (*pieces)[4] = NULL;

		while (!ipu_graph_tensor_location(gb, ss->t[i], n, &tile, &b, &en, &off)) {
			uint64_t(*np)[4] = realloc(pieces, (n + 1) * sizeof(*np));

			if (!np) {
				free(pieces);
				return ir_err(e, "out of memory");
			}
			pieces = np;
			pieces[n][0] = b;
			pieces[n][1] = en;
			pieces[n][2] = tile;
			pieces[n][3] = off;
			n++;
		}
		if (!n)
			return ir_err(e, "state '%s' has no tile memory", ss->s[i].name);
		/* element order, as the state's stream copies move it */
		qsort(pieces, n, sizeof(*pieces), cmp_region_elem);
		ss->regions[i] = calloc(n, sizeof(*ss->regions[i]));
		if (!ss->regions[i]) {
			free(pieces);
			return ir_err(e, "out of memory");
		}
		for (uint32_t k = 0; k < n; k++)
			ss->regions[i][k] = (struct ipuef_region){
				(uint32_t)pieces[k][2], (uint32_t)pieces[k][3],
				(uint32_t)((pieces[k][1] - pieces[k][0]) * esz) };
		ss->s[i].num_regions = n;
		ss->s[i].regions = ss->regions[i];
		free(pieces);
	}
	return 0;
}

void lw_states_free(struct ipu_lower_states *ss)
{
	for (uint32_t i = 0; i < ss->n; i++) {
		free(ss->names[i]);
		free(ss->regions[i]);
	}
	free(ss->names);
	free(ss->regions);
	free(ss->t);
	free(ss->s);
	memset(ss, 0, sizeof(*ss));
}

const struct ipuef_state *ipu_lower_states(const struct ipu_lower_info *info, uint32_t *n)
{
	*n = info->states_priv.n;
	return info->states_priv.s;
}

int ipu_state_spec_parse(const char *text, struct ipu_state_spec *spec, struct ir_error *e)
{
	char *p, *save = NULL, *item;
	uint32_t cap = 1;

	memset(spec, 0, sizeof(*spec));
	if (!strcmp(text, "none")) {
		spec->none = 1;
		return 0;
	}
	for (p = (char *)text; *p; p++)
		cap += *p == ',';
	spec->buf = strdup(text);
	spec->pairs = calloc(cap, sizeof(*spec->pairs));
	if (!spec->buf || !spec->pairs) {
		ipu_state_spec_free(spec);
		return ir_err(e, "out of memory");
	}
	for (item = strtok_r(spec->buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq || eq == item || !eq[1] || strchr(eq + 1, '=')) {
			ir_err(e, "--state '%s': each pair is INPUT=OUTPUT (the cache input and the output that replaces it), or the whole option is 'none'",
			       item);
			ipu_state_spec_free(spec);
			return -1;
		}
		*eq = 0;
		spec->pairs[spec->n++] = (struct ipu_state_pair){ item, eq + 1 };
	}
	if (!spec->n) {
		ipu_state_spec_free(spec);
		return ir_err(e, "--state '%s': no INPUT=OUTPUT pair", text);
	}
	return 0;
}

void ipu_state_spec_free(struct ipu_state_spec *spec)
{
	free(spec->pairs);
	free(spec->buf);
	memset(spec, 0, sizeof(*spec));
}
