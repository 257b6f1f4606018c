// SPDX-License-Identifier: MIT
/*
 * fuzz_ipuef.c - libFuzzer target for the .ipuef reader.
 *
 * Every input is parsed twice: as is (which mostly exercises the header
 * and checksum checks), and with its blob and file CRCs recomputed, so
 * that mutations reach the blob, metadata, tensor and cross-blob checks
 * instead of all dying at the checksum.  An accepted file is walked through
 * every accessor; a refused one must come with a known error code and a
 * message.  Any crash, leak, sanitizer report or abort() is a finding.
 *
 * The same input also goes to the .npy parser, the runtime's other reader
 * of untrusted files (the corpus holds a .npy seed).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ipuef.h"
#include "ipu/npy.h"
#include "ipuef_sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void walk(const struct ipuef_file *f)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	size_t exe_len;
	const uint8_t *exe = ipuef_executable(f, &exe_len);
	uint64_t acc = 0;

	for (size_t i = 0; i < exe_len; i++)
		acc += exe[i];
	acc += strlen(m->ipu_version) + m->num_tiles + m->tile_mem;
	for (uint32_t i = 0; i < m->num_programs; i++)
		if (ipuef_find_program(f, m->programs[i].name) == NULL)
			abort();
	for (uint32_t i = 0; i < m->num_anchors; i++) {
		const struct ipuef_anchor *a = &m->anchors[i];

		if (ipuef_find_anchor(f, a->name) != a || a->rank > 8 ||
		    !ipuef_anchor_bytes(a))
			abort();
		acc += a->dims[a->rank ? a->rank - 1 : 0];
	}
	for (uint32_t i = 0; i < ipuef_num_tensors(f); i++) {
		const struct ipuef_tensor *t = ipuef_tensor(f, i);
		const uint8_t *d = t->data;

		if (ipuef_find_tensor(f, t->name) != t)
			abort();
		for (uint64_t k = 0; k < t->size; k++)
			acc += d[k];
	}
	for (uint32_t i = 0; i < ipuef_num_opaques(f); i++) {
		const struct ipuef_opaque *o = ipuef_opaque(f, i);
		const uint8_t *d = o->data;

		acc += strlen(o->name) + strlen(o->version);
		for (uint64_t k = 0; k < o->size; k++)
			acc += d[k];
	}
	for (uint32_t i = 0; i < ipuef_num_blobs(f); i++)
		acc += ipuef_blob(f, i)->size;
	sink = acc;
}

static void parse(const uint8_t *data, size_t size)
{
	struct ipuef_file *f = NULL;
	char err[512];
	int rc;

	err[0] = 0;
	rc = ipuef_open_mem(data, size, &f, err, sizeof(err));
	if (rc == 0) {
		if (!f)
			abort();
		walk(f);
		ipuef_close(f);
		return;
	}
	if (f || !err[0] || rc > IPUEF_E_IO || rc < IPUEF_E_OPAQUE ||
	    !strcmp(ipu_err_name(rc), "IPU_E_UNKNOWN"))
		abort();
}

static void parse_npy(const uint8_t *data, size_t size)
{
	struct ipurt_npy a;
	char err[512];
	int rc;

	err[0] = 0;
	rc = ipurt_npy_parse(data, size, &a, err, sizeof(err));
	if (rc == 0) {
		uint64_t n = ipurt_dtype_size(a.dtype);

		for (uint32_t i = 0; i < a.rank; i++)
			n *= a.dims[i];
		if (n != a.size || a.rank > IPURT_NPY_MAX_RANK || !a.data)
			abort();
		if (a.size)
			sink = ((const uint8_t *)a.data)[a.size - 1];
		ipurt_npy_free(&a);
		return;
	}
	if (a.data || !err[0] ||
	    !strcmp(ipu_err_name(rc), "IPU_E_UNKNOWN"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	parse_npy(data, size);

	parse(data, size);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	raw_fix_crcs(copy, size);
	parse(copy, size);
	free(copy);
	return 0;
}
