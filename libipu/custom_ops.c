/* SPDX-License-Identifier: MIT */
/*
 * custom_ops.c - plugin libraries of custom operators: open, hash, check,
 * collect into one table (ipu/custom_ops.h).  The engine itself never
 * loads code; the hosts use this.
 */
#include <dlfcn.h>
#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/custom_ops.h"
#include "ipu/error.h"

struct ipu_custom_set {
	struct ipu_custom_table *table;
	void **handles;
	size_t n;
};

int ipu_custom_file_hash(const char *path, uint8_t hash[IPU_CUSTOM_HASH_BYTES], char *err,
			 size_t errlen)
{
	struct sha256_ctx ctx;
	uint8_t buf[65536];
	size_t got;
	FILE *f = fopen(path, "rb");

	if (!f)
		return ipu_errorf(err, errlen, IPU_E_IO, "%s: %s", path, strerror(errno));
	sha256_init(&ctx);
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		sha256_update(&ctx, got, buf);
	if (ferror(f)) {
		fclose(f);
		return ipu_errorf(err, errlen, IPU_E_IO, "%s: read error", path);
	}
	fclose(f);
	sha256_digest(&ctx, IPU_CUSTOM_HASH_BYTES, hash);
	return 0;
}

static int open_one(struct ipu_custom_set *s, const char *path, char *err, size_t errlen)
{
	uint8_t hash[IPU_CUSTOM_HASH_BYTES];
	ipu_custom_op_entry_fn entry;
	void *h, **nh;
	int rc;

	if (!strchr(path, '/'))
		return ipu_errorf(err, errlen, IPU_E_INVAL,
				  "custom-op library '%s': give a path (with a '/'), not a name the loader would search for",
				  path);
	/* the hash of the file we are about to map; the table keeps it */
	rc = ipu_custom_file_hash(path, hash, err, errlen);
	if (rc)
		return rc;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return ipu_errorf(err, errlen, IPU_E_INVAL, "custom-op library %s: %s", path, dlerror());
	*(void **)&entry = dlsym(h, IPU_CUSTOM_OP_ENTRY);
	if (!entry) {
		dlclose(h);
		return ipu_errorf(err, errlen, IPU_E_INVAL, "custom-op library %s exports no %s()",
				  path, IPU_CUSTOM_OP_ENTRY);
	}
	nh = realloc(s->handles, (s->n + 1) * sizeof(*nh));
	if (!nh) {
		dlclose(h);
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	s->handles = nh;
	rc = ipu_custom_table_add(s->table, entry(), hash, path, err, errlen);
	if (rc) {
		dlclose(h);
		return rc;
	}
	s->handles[s->n++] = h;
	return 0;
}

int ipu_custom_set_open(const char *paths, struct ipu_custom_set **out, char *err,
			size_t errlen)
{
	struct ipu_custom_set *s = calloc(1, sizeof(*s));
	char *copy = NULL, *save = NULL, *tok;
	int rc = 0;

	*out = NULL;
	if (!s || ipu_custom_table_create(&s->table)) {
		free(s);
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	if (paths && paths[0]) {
		copy = strdup(paths);
		if (!copy)
			rc = ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
		for (tok = copy ? strtok_r(copy, ":", &save) : NULL; tok && !rc;
		     tok = strtok_r(NULL, ":", &save))
			rc = open_one(s, tok, err, errlen);
	}
	free(copy);
	if (rc) {
		ipu_custom_set_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void ipu_custom_set_close(struct ipu_custom_set *s)
{
	if (!s)
		return;
	ipu_custom_table_destroy(s->table);
	for (size_t i = 0; i < s->n; i++)
		dlclose(s->handles[i]);
	free(s->handles);
	free(s);
}

const struct ipu_custom_table *ipu_custom_set_table(const struct ipu_custom_set *s)
{
	return s ? s->table : NULL;
}
