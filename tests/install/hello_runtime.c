// SPDX-License-Identifier: MIT
/*
 * hello_runtime.c - a user's first program against an installed ipu-stack:
 * built with nothing but `pkg-config --cflags --libs libipurt` (no source
 * folder of the project on its include path), it runs a model through the
 * ModelRunner and checks the answer.
 *
 *   hello_runtime MODEL.ipuef   (the affine test model: Y = X * 2 + [10, 20, 30])
 */
#include <stdio.h>
#include <string.h>

#include <ipu/runtime.h>

int main(int argc, char **argv)
{
	float x[12], y[12];
	struct ipurt_tensor in, out;
	struct ipurt_runner *r;
	char err[256];
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: hello_runtime MODEL.ipuef\n");
		return 2;
	}
	if (ipurt_runner_create(argv[1], NULL, &r, err, sizeof(err))) {
		fprintf(stderr, "hello_runtime: %s\n", err);
		return 1;
	}
	memset(&in, 0, sizeof(in));
	in.name = "X";
	in.dtype = IPURT_DT_F32;
	in.rank = 2;
	in.dims[0] = 4;
	in.dims[1] = 3;
	in.data = x;
	out = in;
	out.name = "Y";
	out.data = y;
	for (i = 0; i < 12; i++)
		x[i] = (float)i / 2;
	if (ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err))) {
		fprintf(stderr, "hello_runtime: %s\n", err);
		ipurt_runner_destroy(r);
		return 1;
	}
	ipurt_runner_destroy(r);
	for (i = 0; i < 12; i++) {
		if (y[i] != x[i] * 2 + 10 * (i % 3 + 1)) {
			printf("wrong: y[%d] = %g\n", i, y[i]);
			return 1;
		}
	}
	printf("ok: Y = X * 2 + W through libipurt.so\n");
	return 0;
}
