// SPDX-License-Identifier: MIT
/*
 * mlp_model.c - the multi-IPU tests' model and a one-device runner.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ipu.h"
#include "ipu/passes.h"
#include "mlp_model.h"

static int input(struct ir_graph *g, const char *name, int rank, const int64_t *d)
{
	int v = ir_value_add(g, name, NULL);

	ir_value_set_shape(&g->vals[v], IR_F32, rank, d);
	ir_graph_add_input(g, v, NULL);
	return v;
}

static int cconst(struct ir_graph *g, const char *name, int rank, const int64_t *d, unsigned seed)
{
	struct ir_tensor t;
	int v = ir_value_add(g, name, NULL);
	int64_t n = ir_numel(rank, d);

	if (ir_tensor_alloc(&t, IR_F32, rank, d, NULL))
		return -1;
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		/* small enough that eight layers stay finite and non-zero */
		ir_set_f(t.data, IR_F32, (size_t)i, (((seed >> 8) % 2001) / 1000.0 - 1.0) / 8.0);
	}
	ir_value_set_const(&g->vals[v], &t);
	return v;
}

struct ir_graph *mlp_graph(int layers)
{
	return mlp_graph_rows(layers, MLP_ROWS);
}

struct ir_graph *mlp_graph_rows(int layers, int rows)
{
	struct ir_graph *g = ir_graph_new(NULL);
	int64_t dx[] = { rows, MLP_WIDTH }, dw[] = { MLP_WIDTH, MLP_WIDTH };
	int h;

	if (!g)
		return NULL;
	h = input(g, "x", 2, dx);
	for (int l = 0; l < layers; l++) {
		char wn[16], mn[16], rn[16];
		int in[2];

		snprintf(wn, sizeof(wn), "w%d", l);
		snprintf(mn, sizeof(mn), "mm%d", l);
		snprintf(rn, sizeof(rn), "relu%d", l);
		in[0] = h;
		in[1] = cconst(g, wn, 2, dw, 11u + (unsigned)l);
		if (in[1] < 0) {
			ir_graph_free(g);
			return NULL;
		}
		h = ir_value_add(g, mn, NULL);
		ir_node_add(g, mn, "MatMul", in, 2, &h, 1, NULL);
		if (l + 1 < layers) {
			int r = ir_value_add(g, rn, NULL);

			ir_node_add(g, rn, "Relu", &h, 1, &r, 1, NULL);
			h = r;
		}
	}
	ir_graph_add_output(g, h, NULL);
	return g;
}

const struct ir_tensor *mlp_store_find(const struct mlp_store *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return &s->t[i];
	return NULL;
}

void mlp_store_free(struct mlp_store *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->names[i]);
		ir_tensor_free(&s->t[i]);
	}
	s->n = 0;
}

static int stream_of(const struct ipuef_anchor *an, uint32_t na, const char *name, uint32_t *sid)
{
	for (uint32_t i = 0; i < na; i++)
		if (!strcmp(an[i].name, name)) {
			*sid = an[i].stream_id;
			return 0;
		}
	return -1;
}

int mlp_run(struct ir_graph *g, const struct ipu_target *t, struct mlp_store *store,
	    struct ir_error *e)
{
	struct ipu_lower_info info;
	struct ipu_device *d = NULL;
	struct ipu_error le = { 0 };
	const struct ipuef_anchor *an;
	void *image = NULL;
	size_t len = 0;
	uint32_t na, sid;
	char spec[96], err[512] = "";
	int first_out = store->n, r = -1;

	memset(&info, 0, sizeof(info));
	if (ipu_lower_image(&g, 1, t, &image, &len, &info, e))
		return -1;
	an = ipu_lower_anchors(&info, &na);
	snprintf(spec, sizeof(spec), "model:tiles=%u,tile_mem=%u", t->tiles, t->tile_mem);
	if (ipu_open(spec, &d, err, sizeof(err)) || ipu_attach(d) || ipu_load(d, image, len, &le)) {
		ir_err(e, "%s: %s%s", spec, err, le.msg);
		goto out;
	}
	for (int i = 0; i < g->ninputs; i++) {
		const char *name = g->vals[g->inputs[i]].name;
		const struct ir_tensor *x = mlp_store_find(store, name);

		if (!x || stream_of(an, na, name, &sid) ||
		    ipu_stream_submit(d, sid, x->data, ir_tensor_bytes(x), 0)) {
			ir_err(e, "input '%s': %s", name, x ? "no stream" : "not in the store");
			goto out;
		}
	}
	for (int i = 0; i < g->noutputs; i++) {
		const struct ir_value *v = &g->vals[g->outputs[i]];
		struct ir_tensor *y = &store->t[store->n];

		if (store->n >= 64 || ir_tensor_alloc(y, v->dtype, v->rank, v->dims, e))
			goto out;
		store->names[store->n] = strdup(v->name);
		if (!store->names[store->n]) {
			ir_tensor_free(y);
			ir_err(e, "out of memory");
			goto out;
		}
		store->n++;
		if (stream_of(an, na, v->name, &sid) ||
		    ipu_stream_submit(d, sid, y->data, ir_tensor_bytes(y), 0)) {
			ir_err(e, "output '%s': no stream", v->name);
			goto out;
		}
	}
	if (ipu_run_sync(d, 0, err, sizeof(err))) {
		ir_err(e, "running: %s", err);
		goto out;
	}
	{
		struct ipu_completion c[64];

		while (ipu_stream_poll(d, c, 64, 0) > 0)
			;
	}
	r = 0;
out:
	if (r) {
		while (store->n > first_out) {
			store->n--;
			free(store->names[store->n]);
			ir_tensor_free(&store->t[store->n]);
		}
	}
	ipu_close(d);
	free(image);
	ipu_lower_info_free(&info);
	return r;
}

int mlp_shard_load(const struct ipu_shard *s, struct ipu_group *grp, char *err, size_t errlen)
{
	int r;

	if (ipu_group_size(grp) != s->nipus) {
		snprintf(err, errlen, "the model is split over %u IPUs, the group has %u", s->nipus,
			 ipu_group_size(grp));
		return IPU_E_INVAL;
	}
	for (uint32_t k = 0; k < s->nipus; k++) {
		struct ipu_error le = { 0 };

		r = ipu_load(ipu_group_device(grp, k), s->image[k], s->len[k], &le);
		if (r) {
			snprintf(err, errlen, "IPU %u: %s", k, le.msg[0] ? le.msg : ipu_strerror(r));
			return r;
		}
	}
	for (uint32_t i = 0; i < s->nlinks; i++) {
		const struct ipu_shard_link *l = &s->links[i];
		char m[256];

		r = ipu_group_link(grp, l->src_ipu, l->src_stream, l->dst_ipu, l->dst_stream, m, sizeof(m));
		if (r < 0) {
			snprintf(err, errlen, "link '%s': %s", l->name, m);
			return r;
		}
	}
	return 0;
}

int mlp_group_build(const struct ir_graph *g, const struct ipu_partition *p,
		    const struct ipu_target *t, struct mlp_group *out, struct ir_error *e)
{
	struct ipu_shard sh;
	char spec[96], err[512] = "";
	int r = -1;

	memset(out, 0, sizeof(*out));
	if (ipu_shard_lower(g, p, t, &sh, e))
		goto out;
	snprintf(spec, sizeof(spec), "model:tiles=%u,tile_mem=%u", t->tiles, t->tile_mem);
	if (ipu_group_open(spec, sh.nipus, &out->g, err, sizeof(err)) ||
	    mlp_shard_load(&sh, out->g, err, sizeof(err))) {
		ir_err(e, "%s", err);
		goto out;
	}
	out->nstages = sh.nipus;
	out->links = sh.nlinks;
	for (uint32_t i = 0; i < sh.ninputs && i < MLP_GROUP_IO; i++) {
		out->inputs[out->ninputs++] = (struct mlp_group_io){ sh.inputs[i].ipu, sh.inputs[i].stream };
		if (!strcmp(sh.inputs[i].name, "x"))
			out->x_stream = sh.inputs[i].stream;
	}
	for (uint32_t i = 0; i < sh.noutputs && i < MLP_GROUP_IO; i++)
		out->outputs[out->noutputs++] = (struct mlp_group_io){ sh.outputs[i].ipu, sh.outputs[i].stream };
	if (!sh.noutputs) {
		ir_err(e, "the model has no output");
		goto out;
	}
	out->y_stream = sh.outputs[0].stream;
	{
		const struct ir_value *y = &g->vals[g->outputs[0]];

		out->y_bytes = (uint64_t)ir_value_numel(y) * ir_dtype_size(y->dtype);
	}
	r = 0;
out:
	ipu_shard_free(&sh);
	if (r) {
		ipu_group_close(out->g);
		out->g = NULL;
	}
	return r;
}

struct ir_graph *mlp_prepared(int layers)
{
	struct ir_graph *g = mlp_graph(layers);
	struct ir_pipeline_opts po = { 0 };
	struct ir_error e = { "" };

	if (g && ir_pipeline_run(g, &po, &e)) {
		fprintf(stderr, "  pipeline: %s\n", e.msg);
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

void mlp_fill(float *x, uint32_t seed)
{
	for (int i = 0; i < MLP_ROWS * MLP_WIDTH; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
	}
}
