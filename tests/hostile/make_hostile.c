// SPDX-License-Identifier: MIT
/*
 * make_hostile.c - well-formed .ipuef files that lie, for the hostile-input
 * tests: the checksums are right, the metadata is not.
 *
 *   make_hostile swap IN OUT   anchors X and Y trade streams (an output
 *                              anchor on an input stream and back)
 *   make_hostile huge IN OUT   anchor X declares [268435456, 3] f32 (3 GiB)
 *                              on its 48-byte stream
 *   make_hostile orphan IN OUT anchor Y is dropped: its stream has no anchor
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ipuef.h"

int main(int argc, char **argv)
{
	struct ipuef_file *f;
	struct ipuef_writer *w;
	struct ipuef_metadata m;
	struct ipuef_anchor *a;
	const void *exe;
	size_t exelen;
	char err[512];
	uint32_t i, n = 0, x = 0, y = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: make_hostile swap|huge|orphan IN OUT\n");
		return 2;
	}
	if (ipuef_open(argv[2], &f, err, sizeof(err))) {
		fprintf(stderr, "make_hostile: %s\n", err);
		return 1;
	}
	m = *ipuef_metadata(f);
	a = calloc(m.num_anchors, sizeof(*a));
	if (!a)
		return 1;
	for (i = 0; i < m.num_anchors; i++) {
		if (!strcmp(argv[1], "orphan") && !strcmp(m.anchors[i].name, "Y"))
			continue;
		a[n] = m.anchors[i];
		if (!strcmp(a[n].name, "X"))
			x = n;
		if (!strcmp(a[n].name, "Y"))
			y = n;
		n++;
	}
	if (!strcmp(argv[1], "swap")) {
		uint32_t s = a[x].stream_id;

		a[x].stream_id = a[y].stream_id;
		a[y].stream_id = s;
	} else if (!strcmp(argv[1], "huge")) {
		a[x].dims[0] = 268435456;
	} else if (strcmp(argv[1], "orphan")) {
		fprintf(stderr, "make_hostile: unknown mode %s\n", argv[1]);
		return 2;
	}
	m.anchors = a;
	m.num_anchors = n;
	exe = ipuef_executable(f, &exelen);
	if (ipuef_writer_create(&w, err, sizeof(err)) ||
	    ipuef_writer_set_metadata(w, &m, err, sizeof(err)) ||
	    ipuef_writer_set_executable(w, exe, exelen, err, sizeof(err))) {
		fprintf(stderr, "make_hostile: %s\n", err);
		return 1;
	}
	for (i = 0; i < ipuef_num_tensors(f); i++)
		if (ipuef_writer_add_tensor(w, ipuef_tensor(f, i), err, sizeof(err))) {
			fprintf(stderr, "make_hostile: %s\n", err);
			return 1;
		}
	if (ipuef_writer_write_file(w, argv[3], err, sizeof(err))) {
		fprintf(stderr, "make_hostile: %s\n", err);
		return 1;
	}
	ipuef_writer_destroy(w);
	free(a);
	ipuef_close(f);
	return 0;
}
