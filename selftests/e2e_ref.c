// SPDX-License-Identifier: GPL-2.0
/*
 * e2e_ref - host side of the end-to-end test: builds the MLP executable
 * with the graph builder, runs REQS requests on libipu's in-process model
 * device on the host (the CPU QEMU's device engine runs on, so the same
 * codelet paths), and writes DIR/mlp.ipux, DIR/mlp.in, DIR/mlp.ref.
 * The VM's ipu_e2e runs the same image and inputs through /dev/accel/accel0 and
 * compares with mlp.ref bit for bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct e2e_mlp e;
	char err[256];
	int ncpl = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: e2e_ref DIR\n");
		return 2;
	}
	if (e2e_mlp_make(&e, err, sizeof(err))) {
		fprintf(stderr, "e2e_ref: %s\n", err);
		return 1;
	}
	if (e2e_run_on(E2E_MODEL_SPEC, e.img, e.len, e.x, e.y, e.in_f, e.out_f, E2E_REQS, &ncpl))
		return 1;
	if (write_file(argv[1], "mlp.ipux", e.img, e.len) ||
	    write_file(argv[1], "mlp.in", e.x, (size_t)E2E_REQS * e.in_f * 4) ||
	    write_file(argv[1], "mlp.ref", e.y, (size_t)E2E_REQS * e.out_f * 4))
		return 1;
	printf("e2e_ref: %d requests of the MLP on %s -> %s/mlp.ref\n", E2E_REQS,
	       E2E_MODEL_SPEC, argv[1]);
	e2e_mlp_free(&e);
	return 0;
}
