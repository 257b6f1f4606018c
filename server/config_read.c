// SPDX-License-Identifier: MIT
/*
 * config_read.c - a model folder's configuration file: Triton's
 * config.pbtxt (config_pbtxt.c) or ipu-serve's config.yaml
 * (model_config.c), never both, at most 1 MiB.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve.h"

int srv_model_config_read(const char *dir, const char *model, struct srv_model_config *cfg,
			  char *err, size_t errlen)
{
	char path[4096], other[4096], msg[SRV_ERR];
	char *text = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int pbtxt, rc;
	FILE *f;

	srv_model_config_init(cfg);
	/* Triton's config.pbtxt, or ipu-serve's own config.yaml; never both */
	snprintf(path, sizeof(path), "%s/config.pbtxt", dir);
	snprintf(other, sizeof(other), "%s/config.yaml", dir);
	pbtxt = !stat(path, &st);
	if (pbtxt && !stat(other, &st)) {
		snprintf(err, errlen, "%s has both config.pbtxt and config.yaml: keep one (the same "
			 "fields, in Triton's text format or in YAML)", dir);
		return -1;
	}
	if (!pbtxt)
		snprintf(path, sizeof(path), "%s", other);
	f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;

		if (len + 4096 > cap) {
			char *t;

			if (cap > (1u << 20)) {
				snprintf(err, errlen, "%s: larger than 1 MiB", path);
				free(text);
				fclose(f);
				return -1;
			}
			cap = cap ? 2 * cap : 8192;
			t = realloc(text, cap);
			if (!t) {
				snprintf(err, errlen, "%s: out of memory", path);
				free(text);
				fclose(f);
				return -1;
			}
			text = t;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read failed", path);
		free(text);
		fclose(f);
		return -1;
	}
	fclose(f);
	rc = pbtxt ? srv_model_config_parse_pbtxt(text ? text : "", len, model, cfg, msg, sizeof(msg))
		   : srv_model_config_parse(text ? text : "", len, model, cfg, msg, sizeof(msg));
	if (rc)
		snprintf(err, errlen, "%s: %s", path, msg);
	free(text);
	return rc;
}
