// SPDX-License-Identifier: MIT
/*
 * ipu_run_io.h - the tensors of ipu-run's requests: inputs read from .npy
 * files (converted where no value changes) or generated from a seed, and
 * output buffers, shaped by the runtime's rule for the model's anchors at
 * the request's batch size (ipurt_runner_io).
 */
#ifndef IPU_RUN_IO_H
#define IPU_RUN_IO_H

#include <stdint.h>

#include "ipu/npy.h"
#include "ipu/runtime.h"
#include "ipu_run_opts.h"

struct run_io {
	struct ipurt_npy arrays[2 * RUN_MAX_IO];	/* the data of in, then out */
	struct ipurt_tensor in[RUN_MAX_IO], out[RUN_MAX_IO];
	int generated[RUN_MAX_IO];	/* in[i] came from the seed, not a file */
	int nin, nout;
	uint64_t samples;		/* rows of the request's first batched input */
};

/*
 * Fills io for the subgraph o->subgraph of the model r runs (-1: not a
 * fused model): checks that every file given names an anchor of the right
 * direction, reads and converts the input files, takes the request's rows
 * from --batch-size or else the first batched input file, and generates or
 * allocates the rest.  Returns -1 with a message on standard error.
 */
int run_io_prepare(struct run_io *io, const struct run_opts *o, struct ipurt_runner *r);

/* Writes each output named by --output to its .npy file. */
int run_io_write_outputs(const struct run_io *io, const struct run_opts *o);

/* A read-only npy view of a tensor of io (size filled in). */
struct ipurt_npy run_io_view(const struct ipurt_tensor *t);

void run_io_free(struct run_io *io);

#endif /* IPU_RUN_IO_H */
