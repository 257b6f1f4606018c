// SPDX-License-Identifier: MIT
/* gen_models DIR - write the Model Runtime test models into DIR as .ipuef files. */
#include <stdio.h>

#include "rt_models.h"

int main(int argc, char **argv)
{
	char p[3][512];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	snprintf(p[0], sizeof(p[0]), "%s/affine.ipuef", argv[1]);
	snprintf(p[1], sizeof(p[1]), "%s/scale_dim1.ipuef", argv[1]);
	snprintf(p[2], sizeof(p[2]), "%s/fused.ipuef", argv[1]);
	return rt_make_affine(p[0]) || rt_make_scale_dim1(p[1]) || rt_make_fused(p[2]) ? 1 : 0;
}
