// SPDX-License-Identifier: MIT
/*
 * fuzz_models.c - the serve fuzzers' models (fuzz_models.h): each written
 * as an .ipuef by tests/modelrunner's generators into a temporary folder,
 * given its config.yaml and loaded; the files go at once (the model keeps
 * what it loaded).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_models.h"
#include "rt_models.h"

void fuzz_serve_models(struct srv_model **models, const char *who)
{
	static const char *cfgs[FUZZ_NMODELS] = {
		"max_batch_size: 8\n", "max_batch_size: 6\n", "",
	};
	int (*make[FUZZ_NMODELS])(const char *) = { rt_make_affine, rt_make_scale_dim1, rt_make_fused };
	struct srv_load_opts o = { 0 };
	char dir[] = "/tmp/fuzz-serve-XXXXXX", path[256], err[SRV_ERR];
	int i;

	if (!mkdtemp(dir))
		abort();
	o.default_max_queue = 16;
	for (i = 0; i < FUZZ_NMODELS; i++) {
		struct srv_model_config c;

		snprintf(path, sizeof(path), "%s/m%d.ipuef", dir, i);
		if (make[i](path) || srv_model_config_parse(cfgs[i], strlen(cfgs[i]), "m", &c, err, sizeof(err)) ||
		    srv_model_create("m", 1, path, &c, &o, &models[i], err, sizeof(err))) {
			fprintf(stderr, "%s: model %d: %s\n", who, i, err);
			abort();
		}
		unlink(path);
	}
	rmdir(dir);
}
