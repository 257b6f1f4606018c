// SPDX-License-Identifier: MIT
/*
 * report_data.c - gathers what the compile report shows, as JSON: the
 * modelled cost of every compute set, exchange and stream copy comes from
 * the device's own cost model (the executable loaded into an engine, as
 * the device would), the model node of each from the builder's origins,
 * memory from the builder's layout.  Every compute set and exchange of a
 * lowered model runs once per request (a fused model's subgraphs: once per
 * request of that subgraph), so these are per-request figures.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/engine.h"
#include "report.h"

#define TOP_TENSORS 30
#define MAX_TIMELINE 2000	/* points of the memory curve */

struct node_acc {
	uint64_t compute, exchange, xbytes;
	uint32_t css, vertices, tiles_max;
};

static const char *dtype_name(enum ipux_dtype dt)
{
	switch (dt) {
	case IPUX_DT_F32: return "f32";
	case IPUX_DT_F16: return "f16";
	case IPUX_DT_I32: return "i32";
	case IPUX_DT_U8: return "u8";
	case IPUX_DT_I8: return "i8";
	case IPUX_DT_I64: return "i64";
	default: return "?";
	}
}

/* The tensors of one name: an operator's blocks of one weight or temporary
 * share their name, and are one row of the report. */
struct tensor_group {
	const char *name;
	enum ipux_dtype dtype;
	uint64_t bytes, elems;
	uint32_t count, pieces, tiles, lo, hi;
};

static int cmp_name(const void *a, const void *b, void *gb)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(ipu_graph_tensor_name(gb, x), ipu_graph_tensor_name(gb, y));

	return c ? c : (x > y) - (x < y);
}

static int cmp_group(const void *a, const void *b)
{
	const struct tensor_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The biggest tensors (tensors of one name together) with the tiles they
 * live on. */
static json_t *tensors_json(const struct ipu_graph *gb)
{
	uint32_t n = ipu_graph_num_tensors(gb), i, k, ng = 0;
	uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	struct tensor_group *g = calloc(n ? n : 1, sizeof(*g));
	json_t *a = json_array();

	if (!idx || !g || !a)
		goto fail;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_name, (void *)gb);
	for (i = 0; i < n; i++) {
		uint32_t t = idx[i], tile, off;
		uint64_t b, e, last_tile = UINT64_MAX;
		const char *name = ipu_graph_tensor_name(gb, t);
		struct tensor_group *x;

		if (!ng || strcmp(g[ng - 1].name, name)) {
			x = &g[ng++];
			x->name = name;
			x->dtype = ipu_graph_tensor_dtype(gb, t);
			x->lo = UINT32_MAX;
		}
		x = &g[ng - 1];
		x->count++;
		x->elems += ipu_graph_tensor_elems(gb, t);
		x->bytes += ipu_graph_tensor_elems(gb, t) * ipux_dtype_size(ipu_graph_tensor_dtype(gb, t));
		for (k = 0; !ipu_graph_tensor_location(gb, t, k, &tile, &b, &e, &off); k++) {
			x->pieces++;
			x->lo = tile < x->lo ? tile : x->lo;
			x->hi = tile > x->hi ? tile : x->hi;
			/* pieces are in element order: count tile changes */
			x->tiles += tile != last_tile;
			last_tile = tile;
		}
	}
	qsort(g, ng, sizeof(*g), cmp_group);
	for (i = 0; i < ng && i < TOP_TENSORS; i++)
		if (json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:I,s:I,s:i,s:i,s:i,s:i}", "name", g[i].name,
						       "dtype", dtype_name(g[i].dtype), "count", (int)g[i].count,
						       "elems", (json_int_t)g[i].elems, "bytes", (json_int_t)g[i].bytes,
						       "pieces", (int)g[i].pieces, "tiles", (int)g[i].tiles,
						       "first_tile", g[i].pieces ? (int)g[i].lo : -1,
						       "last_tile", g[i].pieces ? (int)g[i].hi : -1)))
			goto fail;
	free(idx);
	free(g);
	return a;
fail:
	free(idx);
	free(g);
	json_decref(a);
	return NULL;
}

/* Bytes live over the program, at most MAX_TIMELINE points (maxima of runs). */
static json_t *timeline_json(struct ipu_graph *gb, const struct ipu_graph_stats *st)
{
	uint64_t *v;
	uint32_t n, i, step;
	json_t *a;

	if (!st->memory_reuse)
		return json_null();
	if (ipu_graph_memory_timeline(gb, &v, &n))
		return NULL;
	a = json_array();
	step = n > MAX_TIMELINE ? (n + MAX_TIMELINE - 1) / MAX_TIMELINE : 1;
	for (i = 0; a && i < n; i += step) {
		uint64_t mx = 0;

		for (uint32_t k = i; k < n && k < i + step; k++)
			mx = v[k] > mx ? v[k] : mx;
		json_array_append_new(a, json_integer((json_int_t)mx));
	}
	free(v);
	return json_pack("{s:o*,s:i,s:i}", "bytes", a, "positions", (int)n, "per_point", (int)step);
}

char *ipuc_report_data(const struct ipuc_report *r, struct ipu_graph *gb, const void *image,
		       size_t len, const struct ipu_graph_stats *st, struct ir_error *e)
{
	struct ipu_engine_config cfg;
	struct ipu_engine *eng = NULL;
	struct ipu_exe_info xi;
	struct ipu_engine_superstep_cost c;
	uint32_t ntiles, tmem, i, nn = ipu_graph_num_origins(gb);
	struct node_acc *acc = calloc((size_t)nn + 1, sizeof(*acc));	/* [nn]: no node */
	uint64_t *peak = NULL, stream = 0, sbytes = 0, compute = 0, exchange = 0, xbytes = 0;
	json_t *root = NULL, *nodes = NULL, *ops = NULL, *tiles = NULL;
	char msg[256], *text = NULL;

	ipu_graph_target(gb, &ntiles, &tmem);
	peak = calloc(ntiles, sizeof(*peak));
	if (!acc || !peak)
		goto oom;
	cfg.num_tiles = ntiles;
	cfg.tile_mem = tmem;
	cfg.workers = 1;
	if (!ipu_engine_create(&cfg, NULL, &eng, msg, sizeof(msg)))
		/* the compiler's plugins: the report costs their codelets too */
		ipu_engine_set_custom(eng, ipu_graph_custom_table(gb));
	if (!eng || ipu_engine_load(eng, image, len, msg, sizeof(msg)) ||
	    ipu_engine_exe_info(eng, &xi)) {
		ir_err(e, "report: the device refuses the executable: %s", msg);
		goto out;
	}
	for (i = 0; i < xi.num_compute_sets; i++) {
		struct ipu_engine_cs_profile p;
		uint32_t o = ipu_graph_cs_origin(gb, i);
		struct node_acc *a = &acc[o < nn ? o : nn];

		if (ipu_engine_superstep_cost(eng, IPUX_STEP_EXECUTE, i, &c) ||
		    ipu_engine_cs_profile(eng, i, &p))
			goto inconsistent;
		a->compute += c.cycles;
		a->css++;
		a->vertices += p.vertices;
		a->tiles_max = p.tiles > a->tiles_max ? p.tiles : a->tiles_max;
		compute += c.cycles;
	}
	for (i = 0; i < xi.num_exchanges; i++) {
		uint32_t o = ipu_graph_exchange_origin(gb, i);
		struct node_acc *a = &acc[o < nn ? o : nn];

		if (ipu_engine_superstep_cost(eng, IPUX_STEP_EXCHANGE, i, &c))
			goto inconsistent;
		a->exchange += c.cycles;
		a->xbytes += c.bytes;
		exchange += c.cycles;
		xbytes += c.bytes;
	}
	for (i = 0; !ipu_engine_superstep_cost(eng, IPUX_STEP_STREAM_COPY, i, &c); i++) {
		stream += c.cycles;
		sbytes += c.bytes;
	}
	if (ipu_graph_tile_usage(gb, peak))
		goto inconsistent;
	nodes = json_array();
	tiles = json_array();
	ops = json_object();
	if (!nodes || !tiles || !ops)
		goto oom;
	for (i = 0; i < ntiles; i++)
		if (json_array_append_new(tiles, json_integer((json_int_t)peak[i])))
			goto oom;
	for (i = 0; i <= nn; i++) {
		const char *op = "", *name = i < nn ? ipu_graph_origin(gb, i, &op) : "(no node: graph inputs and outputs)";
		struct node_acc *a = &acc[i];
		json_t *po;

		if (!a->css && !a->exchange && !a->xbytes)
			continue;
		if (i == nn)
			op = "-";
		if (json_array_append_new(nodes, json_pack("{s:s,s:s,s:I,s:I,s:I,s:i,s:i,s:i}", "name", name,
							   "op", op, "compute_cycles", (json_int_t)a->compute,
							   "exchange_cycles", (json_int_t)a->exchange,
							   "exchange_bytes", (json_int_t)a->xbytes,
							   "compute_sets", (int)a->css, "vertices", (int)a->vertices,
							   "tiles", (int)a->tiles_max)))
			goto oom;
		po = json_object_get(ops, op);
		if (!po) {
			po = json_pack("{s:I,s:I,s:I,s:i}", "compute_cycles", (json_int_t)0, "exchange_cycles",
				       (json_int_t)0, "exchange_bytes", (json_int_t)0, "nodes", 0);
			if (!po || json_object_set_new(ops, op, po))
				goto oom;
		}
#define ADD(k, v) json_object_set_new(po, k, json_integer(json_integer_value(json_object_get(po, k)) + (json_int_t)(v)))
		ADD("compute_cycles", a->compute);
		ADD("exchange_cycles", a->exchange);
		ADD("exchange_bytes", a->xbytes);
		ADD("nodes", 1);
#undef ADD
	}
	root = json_pack("{s:s,s:s,s:s,s:{s:s,s:i,s:i,s:b},s:f,s:{s:i,s:I,s:i,s:I,s:I,s:I,s:b,s:i,s:i,s:i,s:I,s:I},"
			 "s:{s:I,s:I,s:I,s:I,s:I},s:I,s:o,s:o,s:o}",
			 "title", r->title, "generator", "ipu-compile", "precision", r->precision,
			 "target", "ipu_version", r->ipu_version, "tiles", (int)ntiles, "tile_mem", (int)tmem,
			 "custom", r->custom, "clock_ghz", r->clock_ghz,
			 "summary", "tiles_used", (int)st->tiles_used, "mem_max", (json_int_t)st->mem_max,
			 "mem_max_tile", (int)st->mem_max_tile, "mem_total", (json_int_t)st->mem_total,
			 "mem_max_no_reuse", (json_int_t)st->mem_max_no_reuse,
			 "mem_total_no_reuse", (json_int_t)st->mem_total_no_reuse,
			 "memory_reuse", st->memory_reuse, "compute_sets", (int)st->compute_sets,
			 "vertices", (int)st->vertices, "exchanges", (int)st->exchanges,
			 "exchange_bytes", (json_int_t)xbytes, "image_bytes", (json_int_t)st->image_bytes,
			 "cycles", "compute", (json_int_t)compute, "exchange", (json_int_t)exchange,
			 "stream", (json_int_t)stream, "sync", (json_int_t)0,
			 "total", (json_int_t)(compute + exchange + stream),
			 "stream_bytes", (json_int_t)sbytes,
			 "tile_memory", tiles, "nodes", nodes, "ops", ops);
	tiles = nodes = ops = NULL;
	if (!root)
		goto oom;
	{
		json_t *tl = timeline_json(gb, st), *tj = tensors_json(gb);

		if (!tl || !tj || json_object_set_new(root, "memory_timeline", tl) ||
		    json_object_set_new(root, "tensors", tj)) {
			if (!tl && ipu_graph_error(gb)) {
				ir_err(e, "report: %s", ipu_graph_error(gb));
				goto out;
			}
			goto oom;
		}
	}
	/* escape '/': the data sits inside <script>, where "</script>" would end it */
	text = json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH);
	if (!text)
		goto oom;
	goto out;
inconsistent:
	ir_err(e, "report: the executable and the builder disagree (compute sets %u, exchanges %u)",
	       xi.num_compute_sets, xi.num_exchanges);
	goto out;
oom:
	ir_err(e, "report: out of memory");
out:
	json_decref(root);
	json_decref(nodes);
	json_decref(tiles);
	json_decref(ops);
	ipu_engine_destroy(eng);
	free(acc);
	free(peak);
	return text;
}
