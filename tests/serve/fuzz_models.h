/* SPDX-License-Identifier: MIT */
/*
 * fuzz_models.h - the three models the serve fuzzers run against, loaded
 * once on in-process devices: affine (batch dim 0, dynamic batch up to
 * 8), scale (batch along dim 1, up to 6) and the fused model.
 */
#ifndef FUZZ_MODELS_H
#define FUZZ_MODELS_H

#include "serve.h"

#define FUZZ_NMODELS 3

/* Fill models[FUZZ_NMODELS]; aborts with who's name on any failure. */
void fuzz_serve_models(struct srv_model **models, const char *who);

#endif
