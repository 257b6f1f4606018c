/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what every command-line tool of the stack does the same way:
 * exit codes, --version, numbers with full-string and range checks, names
 * made safe to print, and the checks on an output path made before the
 * long work starts.  Messages go to stderr as "TOOL: ...".
 */
#ifndef IPU_CLI_H
#define IPU_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IPU_STACK_VERSION "0.3.0"

/* Exit codes of every tool (documented in each --help). */
enum {
	CLI_EXIT_OK = 0,	/* done */
	CLI_EXIT_FAILURE = 1,	/* the work failed (bad file, device error, ...) */
	CLI_EXIT_USAGE = 2,	/* bad command line: nothing was done */
};

/* "TOOL (ipu-stack) VERSION" on stdout. */
void cli_print_version(const char *tool);

/*
 * Parses a whole decimal (or 0x hex) number of option `opt` into [min, max].
 * On anything else ("", "-1", "12abc", overflow) prints
 * "TOOL: --OPT: 'ARG' is not a whole number from MIN to MAX" and returns -1.
 */
int cli_parse_u64(const char *tool, const char *opt, const char *arg, uint64_t min,
		  uint64_t max, uint64_t *out);

/*
 * `s` as it may be shown on a terminal or in a log: control characters,
 * DEL and bytes that are not valid UTF-8 become \xNN, so a model's names
 * cannot move the cursor or change the terminal.  Returns buf.
 */
const char *cli_safe(const char *s, char *buf, size_t len);

/*
 * Before the work starts: refuses (message, -1) an output that is the same
 * file as one of the inputs (same device and inode), that exists but is not
 * a regular file (a directory, a device, a FIFO), or whose folder is not
 * writable.  NULL entries of inputs are skipped.  Messages go to err.
 */
int cli_check_output(FILE *err, const char *tool, const char *out, const char *const *inputs,
		     unsigned ninputs);

#endif
