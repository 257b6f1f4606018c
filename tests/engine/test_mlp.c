// SPDX-License-Identifier: MIT
/*
 * test_mlp.c - the foundation's multi-tile example as a test: a 784-512-10
 * MLP, batch 16, weights spread over 64 tiles by the partitioned matmul,
 * run through libipu's model backend, matches a float64 reference; also
 * other tile counts (forcing K splits and partial-sum reductions) and f16.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "load_image.h"
#include "ipu/ipu.h"
#include "mlp_model.h"

static double run_mlp(uint32_t ntiles, uint32_t tile_mem, const char *spec, struct mlp *m)
{
	struct ipu_device *d = NULL;
	struct ipu_graph_stats st;
	char err[512];
	size_t len;
	void *img;
	float *x = malloc((size_t)m->batch * m->in * 4), *y = malloc((size_t)m->batch * m->out * 4);
	double *ref = malloc((size_t)m->batch * m->out * 8), worst = -1, scale = 0;
	uint32_t i;

	if (!x || !y || !ref)
		goto out;
	img = mlp_build(m, 1472, tile_mem, ntiles, &len, &st, err, sizeof(err));
	if (!img) {
		fprintf(stderr, "build: %s\n", err);
		goto out;
	}
	if (ipu_open(spec, &d, err, sizeof(err)) || test_load_image(d, img, len, err, sizeof(err))) {
		fprintf(stderr, "device: %s\n", err);
		free(img);
		goto out;
	}
	free(img);
	mlp_input(m, 3, x);
	ipu_stream_submit(d, 0, x, (size_t)m->batch * m->in * 4, 0);
	ipu_stream_submit(d, 1, y, (size_t)m->batch * m->out * 4, 0);
	if (ipu_run_sync(d, 0, err, sizeof(err))) {
		fprintf(stderr, "run: %s\n", err);
		goto out;
	}
	mlp_reference(m, x, ref);
	worst = 0;
	for (i = 0; i < m->batch * m->out; i++) {
		if (fabs(ref[i]) > scale)
			scale = fabs(ref[i]);
		if (fabs(y[i] - ref[i]) > worst)
			worst = fabs(y[i] - ref[i]);
	}
	worst /= scale > 0 ? scale : 1;
	printf("# %u tiles of %u B: split1 %u/%u/%u split2 %u/%u/%u, error %.3g of scale\n",
	       ntiles, tile_mem, m->plan1.mp, m->plan1.np, m->plan1.kp, m->plan2.mp, m->plan2.np,
	       m->plan2.kp, worst);
out:
	ipu_close(d);
	free(x);
	free(y);
	free(ref);
	return worst;
}

TEST(mlp_784_512_10_on_64_tiles)
{
	struct mlp m;
	double e;

	REQUIRE(mlp_init(&m, 16, 784, 512, 10, 42) == 0);
	e = run_mlp(64, 624 * 1024, "model:workers=2", &m);
	CHECK(e >= 0 && e < 1e-5);
	CHECK_EQ_INT(m.plan1.mp * m.plan1.np * m.plan1.kp, 64);
	mlp_free(&m);
}

/* Small tiles force K to be split: partial sums reduced across tiles. */
TEST(mlp_small_tiles_split_k)
{
	struct mlp m;
	double e;

	REQUIRE(mlp_init(&m, 16, 784, 512, 10, 43) == 0);
	e = run_mlp(256, 32 * 1024, "model:tiles=1472,tile_mem=32k,workers=3", &m);
	CHECK(e >= 0 && e < 1e-5);
	CHECK(m.plan1.kp > 1);
	mlp_free(&m);
}

/* Odd sizes: nothing divides evenly. */
TEST(mlp_odd_sizes)
{
	struct mlp m;
	double e;

	REQUIRE(mlp_init(&m, 7, 97, 33, 5, 44) == 0);
	e = run_mlp(13, 8192, "model:tile_mem=8192,workers=2", &m);
	CHECK(e >= 0 && e < 1e-5);
	mlp_free(&m);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(mlp_784_512_10_on_64_tiles);
	RUN(mlp_small_tiles_split_k);
	RUN(mlp_odd_sizes);
	return TH_DONE();
}
