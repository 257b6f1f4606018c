// SPDX-License-Identifier: MIT
/*
 * mlp.c - the foundation demo: build a 784-512-10 MLP (batch 16) whose
 * weights are spread over 64 tiles, run it on the in-process device
 * through libipu, compare with a double-precision reference, and print the
 * outputs, the timing and the device's modelled cycle counts.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/ipu.h"
#include "ipu/ipuef.h"
#include "mlp_model.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Wrap the executable as an .ipuef model (weights frozen, no Load). */
static int save_ipuef(const struct mlp *m, const void *img, size_t len, const char *path)
{
	const struct ipux_header *h = img;
	struct ipuef_program prog = { "main", 0 };
	struct ipuef_anchor an[2] = {
		{ "x", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 2, { m->batch, m->in }, 0, 0, 1 },
		{ "y", IPURT_DT_F32, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 2, { m->batch, m->out }, 0, 1, 1 },
	};
	struct ipuef_metadata md = { IPUX_VERSION_MAJOR, IPUX_VERSION_MINOR, "ipu2", h->num_tiles,
				     h->tile_mem, m->batch, 1, &prog, 2, an };
	struct ipuef_writer *w;
	char err[512];
	int rc = ipuef_writer_create(&w, err, sizeof(err));

	if (!rc)
		rc = ipuef_writer_set_metadata(w, &md, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_set_executable(w, img, len, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_add_opaque(w, "mlp-example", "1", "", 0, err, sizeof(err));
	if (!rc)
		rc = ipuef_writer_write_file(w, path, err, sizeof(err));
	if (rc)
		fprintf(stderr, "mlp-example: %s: %s\n", path, err);
	ipuef_writer_destroy(w);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mlp-example [--device SPEC] [--tiles N] [--iterations N] [--check]\n"
		"                   [--save FILE.ipuef]\n"
		"Build a 784-512-10 MLP (batch 16) over N tiles (default 64) with the graph\n"
		"builder, run it on an IPU device (default: the in-process model device,\n"
		"model:tiles=1472) and compare with a double-precision reference.\n"
		"  --device SPEC    libipu device (model[:tiles=..,tile_mem=..,workers=..])\n"
		"  --tiles N        tiles to spread the model over (default 64)\n"
		"  --iterations N   timed inferences after a warm-up (default 200)\n"
		"  --save FILE      also write the model as an .ipuef file (for ipu-run)\n"
		"  --check          exit 1 unless outputs match the reference within 1e-5 of\n"
		"                   the output scale\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "tiles", required_argument, NULL, 't' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "check", no_argument, NULL, 'c' },
		{ "save", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *spec = "model", *save = NULL;
	uint32_t ntiles = 64, iters = 200, i, j;
	int check = 0, c, rc = 1;
	struct mlp m;
	struct ipu_device *d = NULL;
	struct ipu_device_info info;
	struct ipu_graph_stats st;
	struct ipu_counters k;
	struct ipu_error le;
	char err[512];
	void *img = NULL;
	size_t len;
	float *x = NULL, *y = NULL;
	double *ref = NULL, *lat = NULL, maxabs = 0, maxref = 0, maxrel, t0, total;

	while ((c = getopt_long(argc, argv, "d:t:n:ch", opts, NULL)) != -1) {
		switch (c) {
		case 'd': spec = optarg; break;
		case 't': ntiles = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': iters = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'c': check = 1; break;
		case 'S': save = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!ntiles || !iters) {
		usage(stderr);
		return 2;
	}
	if (mlp_init(&m, 16, 784, 512, 10, 42)) {
		fprintf(stderr, "mlp-example: out of memory\n");
		return 1;
	}
	if (ipu_open(spec, &d, err, sizeof(err))) {
		fprintf(stderr, "mlp-example: %s\n", err);
		goto out;
	}
	ipu_info(d, &info);
	if (ntiles > info.num_tiles) {
		fprintf(stderr, "mlp-example: %u tiles requested, device has %u\n", ntiles,
			info.num_tiles);
		goto out;
	}
	t0 = now();
	img = mlp_build(&m, info.num_tiles, info.tile_mem, ntiles, &len, &st, err, sizeof(err));
	if (!img) {
		fprintf(stderr, "mlp-example: build: %s\n", err);
		goto out;
	}
	printf("device     %s (%s, %u tiles x %u KiB, %u workers)\n", info.path,
	       info.version_name, info.num_tiles, info.tile_mem / 1024, info.workers);
	printf("model      MLP %u-%u-%u, batch %u, relu, f32\n", m.in, m.hidden, m.out, m.batch);
	printf("layer1     split M/N/K %u/%u/%u over %u tiles, %llu MACs/tile\n", m.plan1.mp,
	       m.plan1.np, m.plan1.kp, m.plan1.mp * m.plan1.np * m.plan1.kp,
	       (unsigned long long)m.plan1.macs_per_tile);
	printf("layer2     split M/N/K %u/%u/%u over %u tiles, %llu MACs/tile\n", m.plan2.mp,
	       m.plan2.np, m.plan2.kp, m.plan2.mp * m.plan2.np * m.plan2.kp,
	       (unsigned long long)m.plan2.macs_per_tile);
	printf("build      %.1f ms, image %zu bytes, %u tiles used, memory max %llu B (tile %u), mean %llu B\n",
	       (now() - t0) * 1e3, len, st.tiles_used, (unsigned long long)st.mem_max,
	       st.mem_max_tile, (unsigned long long)(st.mem_total / (st.tiles_used ? st.tiles_used : 1)));
	printf("           %u compute sets, %u vertices, %u exchange copies (%llu bytes)\n",
	       st.compute_sets, st.vertices, st.copies, (unsigned long long)st.exchange_bytes);
	if (save) {
		if (save_ipuef(&m, img, len, save))
			goto out;
		printf("saved      %s\n", save);
	}
	if (ipu_load(d, img, len, &le)) {
		fprintf(stderr, "mlp-example: load: %s\n", le.msg);
		goto out;
	}
	x = malloc((size_t)m.batch * m.in * sizeof(*x));
	y = malloc((size_t)m.batch * m.out * sizeof(*y));
	ref = malloc((size_t)m.batch * m.out * sizeof(*ref));
	lat = malloc(iters * sizeof(*lat));
	if (!x || !y || !ref || !lat) {
		fprintf(stderr, "mlp-example: out of memory\n");
		goto out;
	}
	mlp_input(&m, 7, x);
	/* one checked inference */
	if (ipu_stream_submit(d, 0, x, (size_t)m.batch * m.in * 4, 0) ||
	    ipu_stream_submit(d, 1, y, (size_t)m.batch * m.out * 4, 0) ||
	    ipu_run_sync(d, 0, err, sizeof(err))) {
		fprintf(stderr, "mlp-example: run: %s\n", err);
		goto out;
	}
	mlp_reference(&m, x, ref);
	for (i = 0; i < m.batch * m.out; i++) {
		if (fabs(y[i] - ref[i]) > maxabs)
			maxabs = fabs(y[i] - ref[i]);
		if (fabs(ref[i]) > maxref)
			maxref = fabs(ref[i]);
	}
	/* error relative to the output's scale (f32 sums of 784 products) */
	maxrel = maxabs / (maxref > 0 ? maxref : 1);
	printf("outputs    row 0:");
	for (j = 0; j < m.out; j++)
		printf(" %.4f", y[j]);
	printf("\n           argmax per row:");
	for (i = 0; i < m.batch; i++) {
		uint32_t best = 0;

		for (j = 1; j < m.out; j++)
			if (y[i * m.out + j] > y[i * m.out + best])
				best = j;
		printf(" %u", best);
	}
	printf("\nreference  max abs error %.3g, %.3g of the output scale, vs float64\n", maxabs, maxrel);
	ipu_counters(d, &k);
	printf("device     modelled %llu cycles/inference (compute %llu, exchange %llu, streams %llu)\n",
	       (unsigned long long)k.cycles, (unsigned long long)k.compute_cycles,
	       (unsigned long long)k.exchange_cycles, (unsigned long long)k.stream_cycles);
	printf("           = %.1f us at 1.33 GHz\n", (double)k.cycles / 1330.0);
	/* timing */
	t0 = now();
	for (i = 0; i < iters; i++) {
		double s = now();

		ipu_stream_submit(d, 0, x, (size_t)m.batch * m.in * 4, 0);
		ipu_stream_submit(d, 1, y, (size_t)m.batch * m.out * 4, 0);
		if (ipu_run_sync(d, 0, err, sizeof(err))) {
			fprintf(stderr, "mlp-example: run: %s\n", err);
			goto out;
		}
		lat[i] = now() - s;
	}
	total = now() - t0;
	qsort(lat, iters, sizeof(*lat), cmp_double);
	printf("timing     %u inferences: p50 %.1f us, p99 %.1f us, %.0f inferences/s (%.0f samples/s)\n",
	       iters, lat[iters / 2] * 1e6, lat[(iters * 99) / 100] * 1e6, iters / total,
	       iters * m.batch / total);
	rc = 0;
	if (check && maxrel > 1e-5) {
		fprintf(stderr, "mlp-example: outputs differ from the reference (%.3g of scale)\n",
			maxrel);
		rc = 1;
	}
out:
	free(x);
	free(y);
	free(ref);
	free(lat);
	free(img);
	ipu_close(d);
	mlp_free(&m);
	return rc;
}
