/* SPDX-License-Identifier: MIT */
/* driver.h - what ipu-compile does with its options. */
#ifndef IPU_CLI_DRIVER_H
#define IPU_CLI_DRIVER_H

#include <stdio.h>

#include "options.h"

/* Exit codes. */
#define IPUC_EXIT_OK 0
#define IPUC_EXIT_ERROR 1	/* bad model, file, unsupported op or shape,
				 * failed lowering or --check */
#define IPUC_EXIT_USAGE 2	/* bad command line or config: nothing done */

/* Runs the compiler; messages go to err, --json/--list-ops output to out.
 * Returns an exit code. */
int ipuc_run(const struct ipuc_options *o, FILE *out, FILE *err);

#endif
