/* SPDX-License-Identifier: MIT */
/* driver.h - what ipu-compile does with its options. */
#ifndef IPU_CLI_DRIVER_H
#define IPU_CLI_DRIVER_H

#include <stdio.h>

#include "options.h"

/* Exit codes. */
#define IPUC_EXIT_OK 0
#define IPUC_EXIT_ERROR 1	/* bad model, option or unsupported op */
#define IPUC_EXIT_USAGE 2
#define IPUC_EXIT_NO_LOWERING 3	/* front end fine, no tile lowering yet */

/* Runs the compiler; messages go to err, --json/--list-ops output to out.
 * Returns an exit code. */
int ipuc_run(const struct ipuc_options *o, FILE *out, FILE *err);

#endif
