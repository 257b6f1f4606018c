// SPDX-License-Identifier: MIT
/*
 * bench_multi.c - a model split over IPUs (Documentation/compiler/
 * sharding.md): the modelled throughput of requests flowing through the
 * stages with the IPUs overlapped (pipelined) against the same split run
 * one stage after the other, the stages' balance, and one large request
 * cut into micro-batches that pipeline through two IPUs against the same
 * request unpipelined.  The model is the multi-IPU tests' MLP
 * (tests/multi/mlp_model.c: rows x 256 through 256 x 256 fp32 layers) on
 * in-process IPUs of 32 (two IPUs; 64 for the micro-batches) or 16 (four
 * IPUs) tiles x 64 KiB (96 KiB for the 256-row request, whose stages need
 * more than 64 KiB on their fullest tile), split
 * automatically; modelled cycles at 1.33 GHz.
 *
 * Usage: bench_multi [requests]   (default 64)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/passes.h"
#include "mlp_model.h"

#define CLOCK_HZ 1.33e9

struct result {
	struct ipu_partition p;
	struct ipu_stage_estimate est[IPU_PARTITION_MAX_IPUS];
	uint64_t pipe, serial, stage[IPU_PARTITION_MAX_IPUS];
};

/* `runs` runs of a rows-row MLP through its split over `ipus` IPUs. */
static int measure(int layers, int ipus, uint32_t tiles, uint32_t tile_bytes, int rows, int runs,
		   struct result *res)
{
	struct ir_graph *g = mlp_graph_rows(layers, rows);
	struct ir_pipeline_opts po = { 0 };
	struct ipu_target t = { "ipu2", tiles, tile_bytes };
	struct mlp_group mg = { 0 };
	struct ir_error e = { "" };
	size_t n = (size_t)rows * MLP_WIDTH;
	float *x = calloc((size_t)runs * n, sizeof(float));
	float *y = calloc((size_t)runs * n, sizeof(float));
	uint64_t *seq = calloc((size_t)runs * (size_t)ipus, sizeof(*seq));
	char err[512] = "";
	int r = 1;

	if (!g || !x || !y || !seq || ir_pipeline_run(g, &po, &e) ||
	    ipu_partition_auto(g, ipus, &t, &res->p, &e) || mlp_group_build(g, &res->p, &t, &mg, &e)) {
		fprintf(stderr, "bench_multi: %d layers on %d IPUs: %s\n", layers, ipus, e.msg);
		goto out;
	}
	if (ipu_group_start(mg.g, 4, NULL, NULL, err, sizeof(err)))
		goto close;
	for (int i = 0; i < runs; i++) {
		for (size_t k = 0; k < n; k++)
			x[i * n + k] = (float)((i * 131 + (int)k * 7) % 97) / 97.0f - 0.5f;
		if (ipu_stream_submit(ipu_group_device(mg.g, 0), mg.x_stream, x + i * n, n * 4, (uint64_t)i) ||
		    ipu_stream_submit(ipu_group_device(mg.g, (uint32_t)ipus - 1), mg.y_stream, y + i * n,
				      n * 4, (uint64_t)i))
			goto close;
	}
	for (int k = ipus - 1; k >= 0; k--)
		for (int i = 0; i < runs; i++)
			if (ipu_run(ipu_group_device(mg.g, (uint32_t)k), 0, &seq[k * runs + i]))
				goto close;
	for (int k = 0; k < ipus; k++)
		for (int i = 0; i < runs; i++)
			if (ipu_wait(ipu_group_device(mg.g, (uint32_t)k), seq[k * runs + i], -1, err,
				     sizeof(err)))
				goto close;
	if (ipu_group_modelled(mg.g, &res->pipe, &res->serial, res->stage) != (uint64_t)runs ||
	    !res->pipe)
		goto close;
	ipu_partition_estimate(g, &res->p, res->est);
	r = 0;
close:
	if (r)
		fprintf(stderr, "bench_multi: %d layers on %d IPUs: %s\n", layers, ipus, err);
	ipu_group_close(mg.g);
out:
	ir_graph_free(g);
	free(x);
	free(y);
	free(seq);
	return r;
}

static int requests_row(int layers, int ipus, uint32_t tiles, int requests)
{
	struct result res;
	uint64_t most = 0, sum = 0;

	if (measure(layers, ipus, tiles, 64 * 1024, MLP_ROWS, requests, &res))
		return 1;
	for (int k = 0; k < ipus; k++) {
		sum += res.stage[k];
		if (res.stage[k] > most)
			most = res.stage[k];
	}
	printf("| %d x %ux64 KiB | %d layers (%d KiB) | %d | %.0f | %.0f | %.2fx | %.3f |", ipus,
	       tiles, layers, layers * 256, requests, requests / (res.serial / CLOCK_HZ),
	       requests / (res.pipe / CLOCK_HZ), (double)res.serial / (double)res.pipe,
	       (double)most * ipus / (double)sum);
	for (int k = 0; k < ipus; k++)
		printf(" %d-%d: %llu cycles, %llu KiB%s", res.p.first[k], res.p.first[k + 1] - 1,
		       (unsigned long long)(res.stage[k] / (uint64_t)requests),
		       (unsigned long long)(res.est[k].bytes >> 10), k + 1 < ipus ? ";" : " |\n");
	return 0;
}

/* One request of `rows` rows on two IPUs of `tiles` tiles: whole (no
 * pipelining) against cut into micro-batches that pipeline. */
static int micro_rows(int layers, int rows, uint32_t tiles, uint32_t tile_bytes)
{
	struct result whole, mb;
	int r = 0;

	if (measure(layers, 2, tiles, tile_bytes, rows, 1, &whole))
		return 1;
	printf("| %d rows, %d layers, 2 x %ux%u KiB | 1 (no pipelining) | %llu | %.0f | 1.00x | %llu / %llu |\n",
	       rows, layers, tiles, tile_bytes >> 10, (unsigned long long)whole.serial, rows / (whole.serial / CLOCK_HZ),
	       (unsigned long long)whole.stage[0], (unsigned long long)whole.stage[1]);
	for (int m = 2; m <= rows / 2 && rows / m >= 4; m *= 2) {
		if (measure(layers, 2, tiles, tile_bytes, rows / m, m, &mb)) {
			r = 1;
			continue;
		}
		printf("| | %d of %d rows | %llu | %.0f | %.2fx | %llu / %llu |\n", m, rows / m,
		       (unsigned long long)mb.pipe, rows / (mb.pipe / CLOCK_HZ),
		       (double)whole.serial / (double)mb.pipe, (unsigned long long)(mb.stage[0] / (uint64_t)m),
		       (unsigned long long)(mb.stage[1] / (uint64_t)m));
	}
	return r;
}

int main(int argc, char **argv)
{
	int requests = argc > 1 ? atoi(argv[1]) : 64, r = 0;

	if (requests < 1 || requests > 100000) {
		fprintf(stderr, "usage: bench_multi [requests 1..100000]\n");
		return 2;
	}
	printf("Requests through the stages, %d rows each:\n\n", MLP_ROWS);
	printf("| IPUs | model | requests | one stage after the other (req/s, modelled) | pipelined (req/s, modelled) | speed-up | slowest stage / mean | per stage: nodes, cycles a request, estimated bytes |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	r |= requests_row(8, 2, 32, requests);
	r |= requests_row(4, 2, 32, requests);
	r |= requests_row(8, 4, 16, requests);
	printf("\nOne request cut into micro-batches, two IPUs:\n\n");
	printf("| request | micro-batches | modelled cycles | rows/s (modelled) | speed-up | stage cycles a micro-batch (IPU 0 / IPU 1) |\n");
	printf("|---|---|---|---|---|---|\n");
	r |= micro_rows(4, 64, 64, 64 * 1024);
	/* 256 rows whole need 73,488 bytes on the fullest tile of a stage. */
	r |= micro_rows(4, 256, 64, 96 * 1024);
	return r;
}
