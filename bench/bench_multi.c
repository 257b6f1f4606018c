// SPDX-License-Identifier: MIT
/*
 * bench_multi.c - a model split over IPUs (Documentation/compiler/
 * sharding.md): the modelled throughput of requests flowing through the
 * stages with the IPUs overlapped (pipelined) against the same split run
 * one stage after the other, and the stages' balance.  The model is the
 * multi-IPU tests' MLP (tests/multi/mlp_model.c: [8 x 256] through 256 x
 * 256 fp32 layers) on in-process IPUs of 32 (two IPUs) or 16 (four IPUs)
 * tiles x 64 KiB, split automatically; modelled cycles at 1.33 GHz.
 *
 * Usage: bench_multi [requests]   (default 64)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/passes.h"
#include "mlp_model.h"

#define CLOCK_HZ 1.33e9

static int bench(int layers, int ipus, uint32_t tiles, int requests)
{
	struct ir_graph *g = mlp_graph(layers);
	struct ir_pipeline_opts po = { 0 };
	struct ipu_target t = { "ipu2", tiles, 64 * 1024 };
	struct ipu_partition p;
	struct ipu_stage_estimate est[IPU_PARTITION_MAX_IPUS];
	struct mlp_group mg;
	struct ir_error e = { "" };
	float *x = calloc((size_t)requests * MLP_ROWS * MLP_WIDTH, sizeof(float));
	float *y = calloc((size_t)requests * MLP_ROWS * MLP_WIDTH, sizeof(float));
	uint64_t *seq = calloc((size_t)requests * (size_t)ipus, sizeof(*seq));
	uint64_t pipe = 0, serial = 0, stage[IPU_PARTITION_MAX_IPUS], most = 0, sum = 0;
	size_t n = MLP_ROWS * MLP_WIDTH;
	char err[512];
	int r = 1;

	if (!g || !x || !y || !seq || ir_pipeline_run(g, &po, &e) ||
	    ipu_partition_auto(g, ipus, &t, &p, &e) || mlp_group_build(g, &p, &t, &mg, &e)) {
		fprintf(stderr, "bench_multi: %d layers on %d IPUs: %s\n", layers, ipus, e.msg);
		goto out;
	}
	if (ipu_group_start(mg.g, 4, NULL, NULL, err, sizeof(err))) {
		fprintf(stderr, "bench_multi: %s\n", err);
		goto close;
	}
	for (int i = 0; i < requests; i++) {
		for (size_t k = 0; k < n; k++)
			x[i * n + k] = (float)((i * 131 + (int)k * 7) % 97) / 97.0f - 0.5f;
		if (ipu_stream_submit(ipu_group_device(mg.g, 0), mg.x_stream, x + i * n, n * 4, (uint64_t)i) ||
		    ipu_stream_submit(ipu_group_device(mg.g, (uint32_t)ipus - 1), mg.y_stream, y + i * n,
				      n * 4, (uint64_t)i))
			goto close;
	}
	for (int k = ipus - 1; k >= 0; k--)
		for (int i = 0; i < requests; i++)
			if (ipu_run(ipu_group_device(mg.g, (uint32_t)k), 0, &seq[k * requests + i]))
				goto close;
	for (int k = 0; k < ipus; k++)
		for (int i = 0; i < requests; i++)
			if (ipu_wait(ipu_group_device(mg.g, (uint32_t)k), seq[k * requests + i], -1, err,
				     sizeof(err))) {
				fprintf(stderr, "bench_multi: IPU %d run %d: %s\n", k, i, err);
				goto close;
			}
	if (ipu_group_modelled(mg.g, &pipe, &serial, stage) != (uint64_t)requests || !pipe)
		goto close;
	ipu_partition_estimate(g, &p, est);
	for (int k = 0; k < ipus; k++) {
		sum += stage[k];
		if (stage[k] > most)
			most = stage[k];
	}
	printf("| %d x %ux64 KiB | %d layers (%d KiB) | %d | %.0f | %.0f | %.2fx | %.3f |",
	       ipus, tiles, layers, layers * 256, requests, requests / (serial / CLOCK_HZ),
	       requests / (pipe / CLOCK_HZ), (double)serial / (double)pipe,
	       (double)most * ipus / (double)sum);
	for (int k = 0; k < ipus; k++)
		printf(" %d-%d: %llu cycles, %llu KiB%s", p.first[k], p.first[k + 1] - 1,
		       (unsigned long long)(stage[k] / (uint64_t)requests),
		       (unsigned long long)(est[k].bytes >> 10), k + 1 < ipus ? ";" : " |\n");
	for (int l = 0; l < (int)ipu_group_num_links(mg.g); l++) {
		struct ipu_link_stats st;

		if (!ipu_group_link_stats(mg.g, (uint32_t)l, &st))
			fprintf(stderr, "#   link %u -> %u: %llu transfers, %llu bytes, %llu modelled cycles\n",
				st.src_ipu, st.dst_ipu, (unsigned long long)st.transfers,
				(unsigned long long)st.bytes, (unsigned long long)st.cycles);
	}
	r = 0;
close:
	ipu_group_close(mg.g);
out:
	ir_graph_free(g);
	free(x);
	free(y);
	free(seq);
	return r;
}

int main(int argc, char **argv)
{
	int requests = argc > 1 ? atoi(argv[1]) : 64, r = 0;

	if (requests < 1 || requests > 100000) {
		fprintf(stderr, "usage: bench_multi [requests 1..100000]\n");
		return 2;
	}
	printf("| IPUs | model | requests | one stage after the other (req/s, modelled) | pipelined (req/s, modelled) | speed-up | slowest stage / mean | per stage: nodes, cycles a request, estimated bytes |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	r |= bench(8, 2, 32, requests);
	r |= bench(4, 2, 32, requests);
	r |= bench(8, 4, 16, requests);
	return r;
}
