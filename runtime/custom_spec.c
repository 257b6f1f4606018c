/* SPDX-License-Identifier: MIT */
/*
 * custom_spec.c - the device spec that gives in-process devices a model's
 * custom-operator plugins (ipurt_custom_ops_spec, ipu/runtime.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/custom_table.h"
#include "ipu/ipux.h"
#include "rt_internal.h"

int ipurt_custom_ops_spec(const char *device, const struct ipuef_file *f, const char *paths,
			  char **out, char *err, size_t errlen)
{
	size_t np = 0, cap;
	char *suffix, *res, *d;
	const char *p;

	*out = NULL;
	if (!paths || !*paths)
		return ipu_errorf(err, errlen, IPURT_E_INVAL, "no custom-op library given");
	for (p = paths; *p;) {
		size_t l = strcspn(p, ":");

		if (!l || !memchr(p, '/', l) || memchr(p, ',', l) || memchr(p, ';', l))
			return ipu_errorf(err, errlen, IPURT_E_INVAL,
					  "custom-op library '%.*s': give a path with a '/' and no ',' or ';'",
					  (int)l, p);
		np++;
		p += l + (p[l] == ':');
	}
	suffix = malloc(strlen(paths) + np * 12 + 1);
	if (!suffix)
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	d = suffix;
	for (p = paths; *p;) {
		size_t l = strcspn(p, ":");

		d += sprintf(d, ",custom-ops=%.*s", (int)l, p);
		p += l + (p[l] == ':');
	}
	if (!device || !*device) {
		const struct ipuef_metadata *m = f ? ipuef_metadata(f) : NULL;
		const char *v = m ? m->ipu_version : NULL;
		int known = v && (!strcmp(v, "ipu2") || !strcmp(v, "ipu21"));

		if (!m) {
			free(suffix);
			return ipu_errorf(err, errlen, IPURT_E_INVAL, "no device and no model to size one for");
		}
		cap = strlen(suffix) + 96;
		res = malloc(cap);
		if (res)
			snprintf(res, cap, "model:tiles=%u,tile_mem=%u%s%s%s", m->num_tiles, m->tile_mem,
				 known ? ",version=" : "", known ? v : "", suffix);
	} else {
		size_t specs = 1;

		for (p = device; *p; p++)
			specs += *p == ',' || *p == ';';
		cap = strlen(device) + specs * (strlen(suffix) + 1) + 1;
		res = malloc(cap);
		d = res;
		for (p = device; res && *p;) {
			size_t l = rt_spec_len(p);

			memcpy(d, p, l);
			d += l;
			if (l == 5 && !strncmp(p, "model", 5)) {
				d += sprintf(d, ":%s", suffix + 1);
			} else if (!strncmp(p, "model:", 6)) {
				d += sprintf(d, "%s", suffix);
			}
			/* /dev/accel/accelN: its plugins are the QEMU device's own */
			p += l;
			if (*p)
				*d++ = *p++;
		}
		if (res)
			*d = 0;
	}
	free(suffix);
	if (!res)
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	*out = res;
	return 0;
}

int rt_custom_codelets(const void *image, size_t len, char *buf, size_t buflen)
{
	const uint8_t *img = image;
	struct ipux_header h;
	size_t at = 0;
	int n = 0;

	if (!buflen)
		return 0;
	buf[0] = 0;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, img, sizeof(h));
	if (h.magic != IPUX_MAGIC || h.section_offset > len ||
	    (uint64_t)h.section_count * sizeof(struct ipux_section) > len - h.section_offset)
		return 0;
	for (uint32_t i = 0; i < h.section_count; i++) {
		struct ipux_section s;

		memcpy(&s, img + h.section_offset + (size_t)i * sizeof(s), sizeof(s));
		if (s.type != IPUX_SEC_CUSTOM || s.offset > len || s.size > len - s.offset ||
		    (uint64_t)s.count * sizeof(struct ipux_custom) != s.size)
			continue;
		for (uint32_t k = 0; k < s.count && at + 1 < buflen; k++) {
			struct ipux_custom c;
			char hex[2 * IPU_CUSTOM_HASH_BYTES + 1];
			int w;

			memcpy(&c, img + s.offset + (size_t)k * sizeof(c), sizeof(c));
			if (strnlen(c.domain, sizeof(c.domain)) == sizeof(c.domain) ||
			    strnlen(c.name, sizeof(c.name)) == sizeof(c.name))
				return 0;
			ipu_custom_hash_hex(c.lib_hash, hex);
			w = snprintf(buf + at, buflen - at, "%s%s::%s (library sha256 %s)", n ? ", " : "",
				     c.domain, c.name, hex);
			if (w < 0)
				return 0;
			at += (size_t)w < buflen - at ? (size_t)w : buflen - at - 1;
			n++;
		}
	}
	return n;
}
