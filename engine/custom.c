/* SPDX-License-Identifier: MIT */
/*
 * custom.c - the table of custom codelets a host hands to the engine
 * (ipu/custom_table.h), and the binding of an executable's CUSTOM section
 * to it at load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "ipu/custom_table.h"

struct custom_entry {
	const struct ipu_custom_op *op;
	uint8_t hash[IPU_CUSTOM_HASH_BYTES];
};

struct ipu_custom_table {
	struct custom_entry *e;
	uint32_t n, cap;
};

_Static_assert(sizeof(struct ipux_custom) == 96, "custom codelet record layout");

int ipu_custom_table_create(struct ipu_custom_table **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : IPU_E_NOMEM;
}

void ipu_custom_table_destroy(struct ipu_custom_table *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}

static int name_ok(const char *s)
{
	return s && s[0] && strlen(s) < IPU_CUSTOM_NAME_MAX;
}

static int check_op(const struct ipu_custom_op *op, uint32_t i, const char *path,
		    char *err, size_t errlen)
{
	if (op->struct_size != sizeof(*op))
		return ipu_errorf(err, errlen, IPU_E_INVAL,
				  "%s: operator %u has struct_size %u, this stack's is %zu (rebuild the plugin against this ipu/custom_op.h)",
				  path, i, op->struct_size, sizeof(*op));
	if (!name_ok(op->domain) || !name_ok(op->name))
		return ipu_errorf(err, errlen, IPU_E_INVAL,
				  "%s: operator %u: domain and name must be 1 to %u characters",
				  path, i, IPU_CUSTOM_NAME_MAX - 1);
	if (!op->infer || !op->reference || !op->codelet.check || !op->codelet.cost ||
	    !op->codelet.run || !op->codelet.name)
		return ipu_errorf(err, errlen, IPU_E_INVAL,
				  "%s: %s::%s lacks infer, reference or a codelet function or name",
				  path, op->domain, op->name);
	if (op->split < IPU_CUSTOM_SPLIT_ELEMENTWISE || op->split > IPU_CUSTOM_SPLIT_ONE_TILE)
		return ipu_errorf(err, errlen, IPU_E_INVAL, "%s: %s::%s: unknown split %u",
				  path, op->domain, op->name, op->split);
	if (op->flags & ~IPU_CUSTOM_F16)
		return ipu_errorf(err, errlen, IPU_E_INVAL, "%s: %s::%s: unknown flags 0x%x",
				  path, op->domain, op->name, op->flags & ~IPU_CUSTOM_F16);
	if (op->num_outputs != 1 || op->min_inputs > op->max_inputs ||
	    op->max_inputs > IPU_CUSTOM_MAX_INPUTS || op->opset_min > op->opset_max)
		return ipu_errorf(err, errlen, IPU_E_INVAL,
				  "%s: %s::%s: %u outputs (must be 1), inputs %u to %u (at most %u) or opsets %d to %d out of order",
				  path, op->domain, op->name, op->num_outputs, op->min_inputs,
				  op->max_inputs, IPU_CUSTOM_MAX_INPUTS, op->opset_min, op->opset_max);
	if (op->num_attrs > IPU_CUSTOM_MAX_ATTRS || (op->num_attrs && !op->attrs))
		return ipu_errorf(err, errlen, IPU_E_INVAL, "%s: %s::%s: %u attributes (at most %u)",
				  path, op->domain, op->name, op->num_attrs, IPU_CUSTOM_MAX_ATTRS);
	for (uint32_t a = 0; a < op->num_attrs; a++) {
		const struct ipu_custom_attr *at = &op->attrs[a];

		if (!at->name || !at->name[0] ||
		    (at->type != IPU_CUSTOM_ATTR_FLOAT && at->type != IPU_CUSTOM_ATTR_INT))
			return ipu_errorf(err, errlen, IPU_E_INVAL,
					  "%s: %s::%s: attribute %u has no name or an unknown type",
					  path, op->domain, op->name, a);
	}
	return 0;
}

int ipu_custom_table_add(struct ipu_custom_table *t, const struct ipu_custom_op_library *lib,
			 const uint8_t hash[IPU_CUSTOM_HASH_BYTES], const char *path,
			 char *err, size_t errlen)
{
	struct custom_entry *ne;
	uint32_t i;
	int rc;

	if (!lib)
		return ipu_errorf(err, errlen, IPU_E_INVAL, "%s: the entry point returned no library", path);
	if (lib->abi_version != IPU_CUSTOM_OP_ABI_VERSION)
		return ipu_errorf(err, errlen, IPU_E_INVAL,
				  "%s: plugin built for custom-op ABI version %u, this stack speaks version %u (rebuild it against this ipu/custom_op.h)",
				  path, lib->abi_version, IPU_CUSTOM_OP_ABI_VERSION);
	if (lib->struct_size != sizeof(*lib))
		return ipu_errorf(err, errlen, IPU_E_INVAL,
				  "%s: library struct_size %u, this stack's is %zu (rebuild the plugin against this ipu/custom_op.h)",
				  path, lib->struct_size, sizeof(*lib));
	if (lib->num_ops && !lib->ops)
		return ipu_errorf(err, errlen, IPU_E_INVAL, "%s: %u operators but no table", path, lib->num_ops);
	for (i = 0; i < lib->num_ops; i++) {
		const struct ipu_custom_op *op = &lib->ops[i];

		rc = check_op(op, i, path, err, errlen);
		if (rc)
			return rc;
		if (ipu_custom_table_find(t, op->domain, op->name, -1, NULL))
			return ipu_errorf(err, errlen, IPU_E_INVAL, "%s: %s::%s is already loaded (from another library)",
					  path, op->domain, op->name);
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(lib->ops[j].domain, op->domain) && !strcmp(lib->ops[j].name, op->name))
				return ipu_errorf(err, errlen, IPU_E_INVAL, "%s: %s::%s is listed twice",
						  path, op->domain, op->name);
	}
	if (t->n + lib->num_ops > t->cap) {
		uint32_t cap = t->n + lib->num_ops + 4;

		ne = realloc(t->e, (size_t)cap * sizeof(*ne));
		if (!ne)
			return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
		t->e = ne;
		t->cap = cap;
	}
	for (i = 0; i < lib->num_ops; i++) {
		t->e[t->n].op = &lib->ops[i];
		memcpy(t->e[t->n].hash, hash, IPU_CUSTOM_HASH_BYTES);
		t->n++;
	}
	return 0;
}

uint32_t ipu_custom_table_count(const struct ipu_custom_table *t)
{
	return t ? t->n : 0;
}

const struct ipu_custom_op *ipu_custom_table_op(const struct ipu_custom_table *t, uint32_t i,
						const uint8_t **hash)
{
	if (!t || i >= t->n)
		return NULL;
	if (hash)
		*hash = t->e[i].hash;
	return t->e[i].op;
}

const struct ipu_custom_op *ipu_custom_table_find(const struct ipu_custom_table *t,
						  const char *domain, const char *name,
						  int opset, uint32_t *index)
{
	for (uint32_t i = 0; t && i < t->n; i++) {
		const struct ipu_custom_op *op = t->e[i].op;

		if (strcmp(op->domain, domain) || strcmp(op->name, name))
			continue;
		if (opset >= 0 && (opset < op->opset_min || opset > op->opset_max))
			continue;
		if (index)
			*index = i;
		return op;
	}
	return NULL;
}

void ipu_custom_hash_hex(const uint8_t hash[IPU_CUSTOM_HASH_BYTES], char *buf)
{
	static const char hex[] = "0123456789abcdef";

	for (uint32_t i = 0; i < IPU_CUSTOM_HASH_BYTES; i++) {
		buf[2 * i] = hex[hash[i] >> 4];
		buf[2 * i + 1] = hex[hash[i] & 15];
	}
	buf[2 * IPU_CUSTOM_HASH_BYTES] = 0;
}

/* A NUL-terminated, NUL-padded name field of a CUSTOM record. */
static int field_ok(const char *f, size_t len)
{
	size_t n = strnlen(f, len);

	if (n == 0 || n == len)
		return 0;
	for (size_t i = n; i < len; i++)
		if (f[i])
			return 0;
	return 1;
}

int ipu_exe_bind_custom(struct ipu_exe *x, const struct ipu_custom_table *t, char *err,
			size_t errlen)
{
	if (!x->ncustom)
		return 0;
	if (x->ncustom > IPUX_MAX_CUSTOM)
		return ipu_errorf(err, errlen, IPUX_E_LIMIT, "%u custom codelets, limit %u",
				  x->ncustom, IPUX_MAX_CUSTOM);
	x->custom_cl = calloc(x->ncustom, sizeof(*x->custom_cl));
	if (!x->custom_cl)
		return IPU_E_NOMEM;
	for (uint32_t i = 0; i < x->ncustom; i++) {
		const struct ipux_custom *c = &x->customs[i];
		char hex[2 * IPU_CUSTOM_HASH_BYTES + 1];
		const struct ipu_custom_op *op;
		const uint8_t *have = NULL;
		uint32_t k;

		if (!field_ok(c->domain, sizeof(c->domain)) || !field_ok(c->name, sizeof(c->name)))
			return ipu_errorf(err, errlen, IPUX_E_RESERVED,
					  "custom codelet %u: domain or name empty, unterminated or not NUL-padded", i);
		ipu_custom_hash_hex(c->lib_hash, hex);
		op = ipu_custom_table_find(t, c->domain, c->name, -1, &k);
		if (!op)
			return ipu_errorf(err, errlen, IPUX_E_CODELET_UNKNOWN,
					  "custom codelet %s::%s (library sha256 %s) is not loaded on this device: load its plugin (--custom-ops PATH, or -device ipu,custom-ops=PATH in QEMU)",
					  c->domain, c->name, hex);
		ipu_custom_table_op(t, k, &have);
		if (memcmp(have, c->lib_hash, IPU_CUSTOM_HASH_BYTES)) {
			char hex2[2 * IPU_CUSTOM_HASH_BYTES + 1];

			ipu_custom_hash_hex(have, hex2);
			return ipu_errorf(err, errlen, IPUX_E_CODELET_UNKNOWN,
					  "custom codelet %s::%s: the executable was compiled with library sha256 %s, the device loaded sha256 %s (load the same plugin file)",
					  c->domain, c->name, hex, hex2);
		}
		x->custom_cl[i] = &op->codelet;
	}
	return 0;
}
