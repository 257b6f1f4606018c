// SPDX-License-Identifier: MIT
/*
 * gen_ipuef_corpus DIR - write the seed corpus of the .ipuef fuzzer: the
 * sample model and smaller and larger variants, all made by the writer,
 * and a .npy file (the fuzzer feeds every input to both parsers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ipuef.h"
#include "ipu/npy.h"
#include "ipuef_sample.h"

static int save(const char *dir, const char *name, struct ipuef_writer *w)
{
	char path[4096], err[512];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = ipuef_writer_write_file(w, path, err, sizeof(err));
	if (rc)
		fprintf(stderr, "gen_ipuef_corpus: %s: %s\n", path, err);
	ipuef_writer_destroy(w);
	return rc;
}

static struct ipuef_writer *minimal(const struct ipuef_metadata *m)
{
	struct ipuef_writer *w;

	if (ipuef_writer_create(&w, NULL, 0) ||
	    ipuef_writer_set_metadata(w, m, NULL, 0) ||
	    ipuef_writer_set_executable(w, sample_exe, 16, NULL, 0)) {
		fprintf(stderr, "gen_ipuef_corpus: building a file failed\n");
		exit(1);
	}
	return w;
}

int main(int argc, char **argv)
{
	struct ipuef_program progs[2] = { { "main", 0 }, { "load", 5 } };
	struct ipuef_anchor a[3] = {
		{ "graph0/X", IPURT_DT_F16, IPUEF_INPUT, IPUEF_ANCHOR_USER, 8,
		  { 1, 2, 1, 2, 1, 2, 1, 3 }, 7, 10, 1 },
		{ "graph1/O", IPURT_DT_I64, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 1,
		  { 3 }, 0, 11, 1 },
		{ "index", IPURT_DT_U8, IPUEF_INPUT, IPUEF_ANCHOR_INDEX, 0,
		  { 0 }, IPUEF_NO_BATCH_DIM, 12, 1 },
	};
	struct ipuef_metadata m = { 1, 0, "ipu2", 1472, 638976, 1, 2, progs,
				    3, a };
	struct ipuef_metadata bare = { 1, 0, "ipu21", 1, 1, 1, 0, NULL, 0,
				       NULL };
	struct ipuef_writer *w;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_ipuef_corpus DIR\n");
		return 2;
	}
	if (sample_writer(&w, NULL, 0))
		return 1;
	rc |= save(argv[1], "sample.ipuef", w);
	rc |= save(argv[1], "fused.ipuef", minimal(&m));
	rc |= save(argv[1], "bare.ipuef", minimal(&bare));
	w = minimal(&m);
	for (uint32_t i = 0; i < SAMPLE_NTENSORS; i++) {
		struct ipuef_tensor t = sample_tensors[i];

		t.flags |= IPUEF_TENSOR_FROZEN;
		ipuef_writer_add_tensor(w, &t, NULL, 0);
	}
	ipuef_writer_add_opaque(w, "ipu-compile", "", "", 0, NULL, 0);
	ipuef_writer_add_opaque(w, "other", "9", "xyz", 3, NULL, 0);
	rc |= save(argv[1], "frozen.ipuef", w);
	{
		/* Metadata version 2: two states (zeros, tensor data) and their programs */
		static const float init[2] = { 1.5f, -2.0f };
		struct ipuef_program sp[3] = { { "main", 0 }, { IPUEF_PROGRAM_STATE_WRITE, 1 },
					       { IPUEF_PROGRAM_STATE_READ, 2 } };
		struct ipuef_region r[3] = { { 0, 0, 16 }, { 1, 64, 16 }, { 2, 128, 8 } };
		struct ipuef_state st[2] = {
			{ "past_key_values.0.key", IPURT_DT_F32, 2, { 2, 4 }, IPUEF_STATE_INIT_ZEROS,
			  20, 21, 2, r },
			{ "c", IPURT_DT_F32, 1, { 2 }, IPUEF_STATE_INIT_DATA, 22, 23, 1, r + 2 },
		};
		struct ipuef_tensor t = { "c", IPURT_DT_F32, 1, { 2 }, 0, init, sizeof(init) };
		struct ipuef_metadata sm = m;

		sm.num_programs = 3;
		sm.programs = sp;
		sm.num_states = 2;
		sm.states = st;
		w = minimal(&sm);
		ipuef_writer_add_tensor(w, &t, NULL, 0);
		rc |= save(argv[1], "state.ipuef", w);
	}
	{
		/* Metadata version 3: a group of two IPUs, one link, an Executable each */
		static const uint32_t streams[2] = { 2, 2 };
		struct ipuef_anchor ga[2] = {
			{ "X", IPURT_DT_F32, IPUEF_INPUT, IPUEF_ANCHOR_USER, 2, { 4, 4 }, 0, 0, 1 },
			{ "O", IPURT_DT_F32, IPUEF_OUTPUT, IPUEF_ANCHOR_USER, 2, { 4, 4 }, 0, 3, 1 },
		};
		struct ipuef_link l = { "link:h", 0, 1, 1, 0, 64 };
		struct ipuef_group g = { 2, streams, 1, &l, 1, 1 };
		struct ipuef_metadata gm = m;

		gm.num_anchors = 2;
		gm.anchors = ga;
		gm.group = &g;
		w = minimal(&gm);
		ipuef_writer_add_executable(w, sample_exe, 16, NULL, 0);
		rc |= save(argv[1], "group.ipuef", w);
	}
	{
		const struct ipuef_tensor *t = &sample_tensors[0];
		struct ipurt_npy arr = { t->dtype, t->rank, { t->dims[0], t->dims[1] },
				       (void *)t->data, (size_t)t->size };
		char path[4096], err[256];

		snprintf(path, sizeof(path), "%s/w1.npy", argv[1]);
		if (ipurt_npy_write(path, &arr, err, sizeof(err))) {
			fprintf(stderr, "gen_ipuef_corpus: %s\n", err);
			rc = 1;
		}
	}
	return rc ? 1 : 0;
}
