/* SPDX-License-Identifier: GPL-2.0 */
/*
 * e2e_common.h - the end-to-end workload shared by e2e_ref (host) and
 * ipu_e2e (VM): a graph-builder MLP and a libipu driver loop that runs
 * requests on any device spec.
 */
#ifndef IPU_E2E_COMMON_H
#define IPU_E2E_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ipu/ipu.h"
#include "load_image.h"
#include "mlp_model.h"

#define E2E_MODEL_SPEC "model:tiles=16,tile_mem=256k,workers=2"
#define E2E_REQS 16

struct e2e_mlp {
	struct mlp m;
	void *img;
	size_t len;
	uint32_t in_f, out_f;
	float *x, *y;
};

static inline int e2e_mlp_make(struct e2e_mlp *e, char *err, size_t errlen)
{
	uint32_t i;

	if (mlp_init(&e->m, 4, 64, 128, 10, 42)) {
		snprintf(err, errlen, "mlp_init failed");
		return -1;
	}
	e->img = mlp_build(&e->m, 16, 256 * 1024, 16, &e->len, NULL, err, errlen);
	if (!e->img)
		return -1;
	e->in_f = e->m.batch * e->m.in;
	e->out_f = e->m.batch * e->m.out;
	e->x = malloc((size_t)E2E_REQS * e->in_f * 4);
	e->y = calloc((size_t)E2E_REQS * e->out_f, 4);
	if (!e->x || !e->y) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < E2E_REQS; i++)
		mlp_input(&e->m, 100 + i, e->x + (size_t)i * e->in_f);
	return 0;
}

static inline void e2e_mlp_free(struct e2e_mlp *e)
{
	free(e->x);
	free(e->y);
	free(e->img);
	mlp_free(&e->m);
}

/*
 * Run `reqs` requests of program 0 on `spec`: input buffer i on stream 0,
 * output buffer i on stream 1 (all queued up front, then `reqs` runs).
 * Returns 0 or the first error.
 */
static inline int e2e_run_on(const char *spec, const void *img, size_t len, const float *x,
			     float *y, uint32_t in_floats, uint32_t out_floats, uint32_t reqs,
			     int *ncpl)
{
	struct ipu_device *d;
	struct ipu_completion c[64];
	uint64_t seq = 0;
	char err[256] = "";
	uint32_t i;
	int rc, n = 0;

	rc = ipu_open(spec, &d, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "open %s: %s\n", spec, err);
		return rc;
	}
	rc = ipu_attach(d);
	if (!rc)
		rc = test_load_image(d, img, len, err, sizeof(err));
	for (i = 0; !rc && i < reqs; i++) {
		rc = ipu_stream_submit(d, 0, (void *)(x + (size_t)i * in_floats), in_floats * 4, i);
		if (!rc)
			rc = ipu_stream_submit(d, 1, y + (size_t)i * out_floats, out_floats * 4,
					       1000 + i);
	}
	for (i = 0; !rc && i < reqs; i++)
		rc = ipu_run(d, 0, &seq);
	if (!rc)
		rc = ipu_wait(d, seq, 30000000000ll, err, sizeof(err));
	while (!rc && n < (int)(2 * reqs)) {
		int k = ipu_stream_poll(d, c, 64, 5000000000ll), j;

		if (k <= 0) {
			rc = k ? k : IPU_E_TIMEOUT;
			break;
		}
		for (j = 0; j < k; j++)
			if (c[j].status)
				rc = c[j].status;
		n += k;
	}
	if (rc)
		fprintf(stderr, "%s: %s (%s)\n", spec, ipu_strerror(rc), err);
	*ncpl = n;
	ipu_close(d);
	return rc;
}

#endif /* IPU_E2E_COMMON_H */
