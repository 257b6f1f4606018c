// SPDX-License-Identifier: MIT
/* ipu_run_generate.h - ipu-run --generate: a decoder's generation loop. */
#ifndef IPU_RUN_GENERATE_H
#define IPU_RUN_GENERATE_H

#include "ipu_run_opts.h"

/* Load the model, generate, print the tokens and figures: 0 or -1. */
int run_generate(const struct run_opts *o);

#endif
