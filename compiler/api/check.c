/* SPDX-License-Identifier: MIT */
/*
 * check.c - --check: lower, load on the in-process device ("model"
 * backend of libipu), feed seeded random inputs, run `main`, and compare
 * every output with the reference evaluator on the same inputs.  Floats
 * are compared with |got - ref| <= atol + rtol * |ref| (float32: 1e-4,
 * 1e-3; float16: 1e-2, 1e-2); integers and bools exactly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"
#include "check.h"
#include "eval/eval.h"
#include "ipu/ipu.h"
#include "ipu/ipuef.h"

static void fill_random(struct ir_tensor *t, uint64_t *seed)
{
	int64_t n = ir_numel(t->rank, t->dims);

	for (int64_t i = 0; i < n; i++) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		if (ir_dtype_is_float(t->dtype))
			ir_set_f(t->data, t->dtype, (size_t)i, (double)((*seed >> 33) % 20001) / 10000.0 - 1.0);
		else
			ir_set_i(t->data, t->dtype, (size_t)i, (int64_t)((*seed >> 33) % 3));
	}
}

/* Outputs with a run-time count (bounded values) one graph may have. */
#define CHECK_MAX_COUNTS 64

static int find_stream(const struct ipuef_anchor *a, uint32_t na, const char *prefix,
		       const char *name, uint32_t *sid)
{
	char full[1100];

	snprintf(full, sizeof(full), "%s%s", prefix, name);
	for (uint32_t i = 0; i < na; i++)
		if (!strcmp(a[i].name, full)) {
			*sid = a[i].stream_id;
			return 0;
		}
	return -1;
}

static int compare(const struct ir_tensor *got, const struct ir_tensor *ref,
		   double *maxabs, double *maxrel, int loose)
{
	int64_t n = ir_numel(ref->rank, ref->dims);
	int f16 = ref->dtype == IR_F16;
	double atol = loose ? 5e-2 : f16 ? 1e-2 : 1e-4, rtol = loose ? 5e-2 : f16 ? 1e-2 : 1e-3;
	int ok = 1;

	*maxabs = *maxrel = 0;
	for (int64_t i = 0; i < n; i++) {
		double a = ir_get_f(got->data, got->dtype, (size_t)i);
		double b = ir_get_f(ref->data, ref->dtype, (size_t)i);
		double d;

		if (!ir_dtype_is_float(ref->dtype)) {
			int64_t gi = ir_get_i(got->data, got->dtype, (size_t)i);
			int64_t ri = ir_get_i(ref->data, ref->dtype, (size_t)i);

			if (gi != ri) {
				ok = 0;
				/* the report's max abs err says by how much */
				d = fabs((double)gi - (double)ri);
				if (d > *maxabs)
					*maxabs = d;
			}
			continue;
		}
		/* equal values match whatever the tolerance: inf - inf is NaN */
		if ((isnan(a) && isnan(b)) || a == b)
			continue;
		d = fabs(a - b);
		if (d > *maxabs)
			*maxabs = d;
		if (b != 0 && d / fabs(b) > *maxrel)
			*maxrel = d / fabs(b);
		if (!(d <= atol + rtol * fabs(b)))
			ok = 0;
	}
	return ok;
}

int ipuc_check(struct ir_graph *const *graphs, int n, const struct ipu_target *t,
	       FILE *report, struct ir_error *e)
{
	return ipuc_check_refs(graphs, NULL, n, t, NULL, report, e);
}

/* The reference model's result on the same (converted) inputs. */
static int run_ref(const struct ir_graph *ref, const struct ir_tensor *in,
		   struct ir_tensor *out, struct ir_error *e)
{
	struct ir_tensor *cin = calloc((size_t)ref->ninputs + 1, sizeof(*cin));
	int r = -1;

	if (!cin)
		return ir_err(e, "out of memory");
	for (int i = 0; i < ref->ninputs; i++) {
		const struct ir_value *v = &ref->vals[ref->inputs[i]];
		int64_t cnt = ir_value_numel(v);

		if (ir_tensor_alloc(&cin[i], v->dtype, v->rank, v->dims, e))
			goto out;
		for (int64_t k = 0; k < cnt; k++)
			ir_set_f(cin[i].data, v->dtype, (size_t)k, ir_get_f(in[i].data, in[i].dtype, (size_t)k));
	}
	r = ir_eval_graph(ref, cin, out, e);
out:
	for (int i = 0; i < ref->ninputs; i++)
		ir_tensor_free(&cin[i]);
	free(cin);
	return r;
}

int ipuc_check_refs(struct ir_graph *const *graphs, struct ir_graph *const *refs,
		    int n, const struct ipu_target *t, const char *custom_libs, FILE *report,
		    struct ir_error *e)
{
	struct ipu_lower_info info;
	void *image = NULL;
	size_t len = 0;
	struct ipu_device *d = NULL;
	char spec[4200], err[512] = "";
	struct ipu_error le;
	const struct ipuef_anchor *an;
	uint32_t na;
	int bad = 0, r = -1;
	uint64_t seed = 0x1234567ull;

	if (ipu_lower_image(graphs, n, t, &image, &len, &info, e))
		return -1;
	an = ipu_lower_anchors(&info, &na);
	if (custom_libs && strlen(custom_libs) > 3000)
		return ir_err(e, "--check: custom-op library paths longer than 3000 bytes");
	snprintf(spec, sizeof(spec), "model:tiles=%u,tile_mem=%u", t->tiles, t->tile_mem);
	/* the device loads the compiler's plugins: one custom-ops= each */
	for (const char *p = custom_libs; p && *p;) {
		size_t l = strcspn(p, ":"), at = strlen(spec);

		snprintf(spec + at, sizeof(spec) - at, ",custom-ops=%.*s", (int)l, p);
		p += l + (p[l] == ':');
	}
	le.msg[0] = 0;
	if (ipu_open(spec, &d, err, sizeof(err)) || ipu_attach(d) ||
	    ipu_load(d, image, len, &le)) {
		ir_err(e, "--check: in-process device (%s): %s%s", spec, err, le.msg);
		goto out;
	}
	for (int k = 0; k < n; k++) {
		const struct ir_graph *g = graphs[k];
		struct ir_tensor *in = calloc((size_t)g->ninputs + 1, sizeof(*in));
		struct ir_tensor *ref = calloc((size_t)g->noutputs + 1, sizeof(*ref));
		struct ir_tensor *got = calloc((size_t)g->noutputs + 1, sizeof(*got));
		char prefix[32] = "";
		int32_t index = k, counts[CHECK_MAX_COUNTS] = { 0 };
		int fail = !in || !ref || !got;

		if (n > 1)
			snprintf(prefix, sizeof(prefix), "graph%d/", k);
		for (int i = 0; !fail && i < g->ninputs; i++) {
			const struct ir_value *v = &g->vals[g->inputs[i]];
			uint32_t sid;

			if (ir_tensor_alloc(&in[i], v->dtype, v->rank, v->dims, e) ||
			    find_stream(an, na, prefix, v->name, &sid)) {
				fail = 1;
				break;
			}
			fill_random(&in[i], &seed);
			if (ipu_stream_submit(d, sid, in[i].data, ir_tensor_bytes(&in[i]), 0))
				fail = 1;
		}
		for (int i = 0; !fail && i < g->noutputs; i++) {
			const struct ir_value *v = &g->vals[g->outputs[i]];
			uint32_t sid;

			if (ir_tensor_alloc(&got[i], v->dtype, v->rank, v->dims, e) ||
			    find_stream(an, na, prefix, v->name, &sid) ||
			    ipu_stream_submit(d, sid, got[i].data, ir_tensor_bytes(&got[i]), 0))
				fail = 1;
			if (!fail && v->bounded && i < CHECK_MAX_COUNTS) {
				/* its run-time count streams out too (ipuef-format.md) */
				char cname[IPUEF_MAX_NAME + 16];

				snprintf(cname, sizeof(cname), "%s:count", v->name);
				fail = find_stream(an, na, prefix, cname, &sid) ||
				       ipu_stream_submit(d, sid, &counts[i], sizeof(counts[i]), 0);
			} else if (!fail && v->bounded) {
				ir_err(e, "--check: more than %d outputs with a run-time count", CHECK_MAX_COUNTS);
				fail = 1;
			}
		}
		if (!fail && n > 1) {
			uint32_t sid;

			fail = find_stream(an, na, "", "index", &sid) ||
			       ipu_stream_submit(d, sid, &index, sizeof(index), 0);
		}
		if (!fail && ipu_run_sync(d, 0, err, sizeof(err))) {
			ir_err(e, "--check: running on the device: %s", err);
			fail = 1;
		} else if (!fail) {
			struct ipu_completion c[64];

			while (ipu_stream_poll(d, c, 64, 0) > 0)
				;
		}
		if (!fail && t->fp8) {
			/* the graph the lowering built from: weights on the fp8
			 * grid, fp8 activation inputs converted as the device
			 * converts them */
			struct ir_graph *pg = ipu_lower_prepared_graph(g, t, e);

			fail = !pg || ir_eval_graph_visit(pg, in, ref, ipu_calib_emulate_fp8_input,
							  NULL, e);
			ir_graph_free(pg);
		} else if (!fail && ir_eval_graph(g, in, ref, e)) {
			fail = 1;
		}
		for (int i = 0; !fail && i < g->noutputs; i++) {
			double ma, mr;
			int ok = compare(&got[i], &ref[i], &ma, &mr, 0);

			fprintf(report, "check: %s%s: %s, max abs err %.3g, max rel err %.3g\n",
				prefix, g->vals[g->outputs[i]].name, ok ? "ok" : "MISMATCH", ma, mr);
			bad |= !ok;
			if (g->vals[g->outputs[i]].bounded && i < CHECK_MAX_COUNTS) {
				/* the reference's rows past its count are -1 */
				int64_t rows = ref[i].rank ? ref[i].dims[0] : 0, want = 0;
				size_t row = rows ? ir_tensor_bytes(&ref[i]) / ir_dtype_size(ref[i].dtype) / (size_t)rows : 0;

				while (want < rows && ir_get_i(ref[i].data, ref[i].dtype, (size_t)want * row) != -1)
					want++;
				fprintf(report, "check: %s%s:count: %s, %d rows (reference %lld)\n", prefix,
					g->vals[g->outputs[i]].name, counts[i] == want ? "ok" : "MISMATCH",
					counts[i], (long long)want);
				bad |= counts[i] != want;
			}
		}
		if (!fail && refs && refs[k] && refs[k]->noutputs == g->noutputs &&
		    refs[k]->ninputs == g->ninputs) {
			struct ir_tensor *r32 = calloc((size_t)g->noutputs + 1, sizeof(*r32));

			if (!r32 || run_ref(refs[k], in, r32, e)) {
				fail = 1;
			} else {
				for (int i = 0; i < g->noutputs; i++) {
					double ma, mr;
					int ok = compare(&got[i], &r32[i], &ma, &mr, 1);

					fprintf(report, "check: %s%s vs the float32 model: %s, max abs err %.3g, max rel err %.3g\n",
						prefix, g->vals[g->outputs[i]].name, ok ? "ok" : "MISMATCH", ma, mr);
					bad |= !ok;
				}
			}
			for (int i = 0; r32 && i < g->noutputs; i++)
				ir_tensor_free(&r32[i]);
			free(r32);
		}
		for (int i = 0; in && i < g->ninputs; i++)
			ir_tensor_free(&in[i]);
		for (int i = 0; ref && got && i < g->noutputs; i++) {
			ir_tensor_free(&ref[i]);
			ir_tensor_free(&got[i]);
		}
		free(in);
		free(ref);
		free(got);
		if (fail) {
			if (!e->msg[0])
				ir_err(e, "--check: could not run graph %d", k);
			goto out;
		}
	}
	r = bad;
out:
	if (d)
		ipu_close(d);
	free(image);
	ipu_lower_info_free(&info);
	return r;
}
