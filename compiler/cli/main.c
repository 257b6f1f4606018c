/* SPDX-License-Identifier: MIT */
/* main.c - ipu-compile: ONNX model -> .ipuef executable. */
#include <stdio.h>

#include "cli.h"
#include "driver.h"

int main(int argc, char **argv)
{
	struct ipuc_options o;
	struct ir_error e = { "" };
	int rc;

	ipuc_options_init(&o);
	if (argc < 2) {
		fputs(ipuc_usage(), stderr);
		return IPUC_EXIT_USAGE;
	}
	if (ipuc_parse_args(argc, argv, &o, &e)) {
		char buf[4 * IR_ERROR_LEN + 1];

		fprintf(stderr, "ipu-compile: error: %s\n", cli_safe(e.msg, buf, sizeof(buf)));
		ipuc_options_free(&o);
		return IPUC_EXIT_USAGE;
	}
	rc = ipuc_run(&o, stdout, stderr);
	ipuc_options_free(&o);
	return rc;
}
