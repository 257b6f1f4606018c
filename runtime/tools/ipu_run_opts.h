// SPDX-License-Identifier: MIT
/*
 * ipu_run_opts.h - ipu-run's command line: what to run, on which device,
 * with which files, and how long to time it.
 */
#ifndef IPU_RUN_OPTS_H
#define IPU_RUN_OPTS_H

#include <stdint.h>

#define RUN_MAX_IO 64
#define RUN_MAX_IDS 4096		/* --prompt-ids, --stop-ids */

struct run_named {
	const char *name;
	const char *path;
};

struct run_opts {
	const char *model;		/* a path, or "-" for standard input */
	const char *device;		/* NULL: the in-process model device */
	char custom_ops[4096];		/* --custom-ops, ':'-joined; "" none */
	struct run_named in[RUN_MAX_IO], out[RUN_MAX_IO];
	int nin, nout;
	unsigned iterations, inflight, warmup;
	double duration;
	const char *export_times;
	uint64_t batch;			/* 0: as the inputs or the model say */
	uint64_t seed;
	int json, subgraph, no_validate;
	uint64_t timeout_ms;
	const char *profile;
	/* --generate: a decoder with its cache as state */
	int generate;
	int64_t prompt[RUN_MAX_IDS], stop[RUN_MAX_IDS];
	uint32_t nprompt, nstop;
	uint32_t max_new_tokens;
	double temperature, top_p;	/* 0: greedy; 0: all */
	uint32_t top_k;
	int host_sampling;		/* --host-sampling */
};

/*
 * Fills o from argv.  Prints --help or --version and exits 0; returns -1
 * with a message on standard error for a bad command line.
 */
int run_opts_parse(int argc, char **argv, struct run_opts *o);

/*
 * Refuses, with a message, every output file (--output, --profile,
 * --export-times) that names the model or an input file: checked before
 * any work, so a typo never overwrites what the run reads.
 */
int run_opts_check_outputs(const struct run_opts *o);

#endif /* IPU_RUN_OPTS_H */
