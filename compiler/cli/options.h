/* SPDX-License-Identifier: MIT */
/* options.h - ipu-compile's command line and YAML config into the options. */
#ifndef IPU_CLI_OPTIONS_H
#define IPU_CLI_OPTIONS_H

#include <stddef.h>

#include "api/options.h"

/* Parses argv (argv[0] skipped).  --config-yaml is applied where it
 * appears; later options override it. */
int ipuc_parse_args(int argc, char **argv, struct ipuc_options *o,
		    struct ir_error *e);
int ipuc_parse_yaml_file(const char *path, struct ipuc_options *o,
			 struct ir_error *e);
int ipuc_parse_yaml(const char *text, size_t len, const char *what,
		    struct ipuc_options *o, struct ir_error *e);
/* 1 if name (PopRT's underscore spelling) is one of PopRT's options that
 * ipu-compile does not have. */
int ipuc_poprt_unsupported(const char *name);
/* Usage text. */
const char *ipuc_usage(void);

#endif /* IPU_CLI_OPTIONS_H */
