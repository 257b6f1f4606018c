// SPDX-License-Identifier: MIT
/*
 * ipu_run_io.c - the tensors of ipu-run's requests (ipu_run_io.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ipu/half.h"
#include "ipu_run_convert.h"
#include "ipu_run_io.h"
#include "ipu_run_pb.h"

static uint64_t rng(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Seeded values: floats in [-1, 1), ints in [0, 10), bools 0/1. */
static void generate(struct ipurt_npy *a, uint64_t seed)
{
	uint64_t n = a->size / ipurt_dtype_size(a->dtype), i, s = seed | 1;

	for (i = 0; i < n; i++) {
		uint64_t r = rng(&s);
		double u = (double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0;

		switch (a->dtype) {
		case IPURT_DT_F32: ((float *)a->data)[i] = (float)u; break;
		case IPURT_DT_F16: ((uint16_t *)a->data)[i] = ipu_f32_to_f16((float)u); break;
		case IPURT_DT_I32: ((int32_t *)a->data)[i] = (int32_t)(r % 10); break;
		case IPURT_DT_I64: ((int64_t *)a->data)[i] = (int64_t)(r % 10); break;
		case IPURT_DT_I8: ((int8_t *)a->data)[i] = (int8_t)(r % 10); break;
		case IPURT_DT_BOOL: ((uint8_t *)a->data)[i] = (uint8_t)(r & 1); break;
		default: ((uint8_t *)a->data)[i] = (uint8_t)(r % 10); break;
		}
	}
}

/* The files given must name anchors, inputs as inputs and outputs as outputs. */
static int check_names(const struct run_opts *o, const struct ipuef_file *file)
{
	int i;

	for (i = 0; i < o->nin + o->nout; i++) {
		const struct run_named *nm = i < o->nin ? &o->in[i] : &o->out[i - o->nin];
		const struct ipuef_anchor *an = ipuef_find_anchor(file, nm->name);

		if (!an || (an->direction == IPUEF_OUTPUT) != (i >= o->nin)) {
			char sn[256], sm[256];

			fprintf(stderr, "ipu-run: the model has no %s named '%s' (see ipuef-dump %s)\n",
				i < o->nin ? "input" : "output", cli_safe(nm->name, sn, sizeof(sn)),
				cli_safe(o->model, sm, sizeof(sm)));
			return -1;
		}
	}
	return 0;
}

static const char *input_path(const struct run_opts *o, const char *anchor)
{
	const char *path = NULL;
	int j;

	for (j = 0; j < o->nin; j++)
		if (!strcmp(o->in[j].name, anchor))
			path = o->in[j].path;
	return path;
}

/* Reads an input file into a, converted to the anchor's element type. */
static int read_input(struct ipurt_npy *a, const char *path, const struct ipurt_tensor *anchor)
{
	char err[512], note[768];
	int cv;

	if (run_pb_path(path)) {
		if (run_pb_read(path, a, note, sizeof(note), err, sizeof(err))) {
			fprintf(stderr, "ipu-run: %s\n", err);
			return -1;
		}
		if (note[0])
			fprintf(stderr, "ipu-run: note: %s\n", note);
	} else if (ipurt_npy_read(path, a, err, sizeof(err))) {
		/* the reader names the file in some messages, not all */
		if (strncmp(err, path, strlen(path)))
			fprintf(stderr, "ipu-run: %s: %s\n", path, err);
		else
			fprintf(stderr, "ipu-run: %s\n", err);
		return -1;
	}
	cv = convert_input(a, anchor->dtype, path, anchor->name, note, sizeof(note), err, sizeof(err));
	if (cv < 0) {
		fprintf(stderr, "ipu-run: %s\n", err);
		return -1;
	}
	if (cv > 0)
		fprintf(stderr, "ipu-run: note: %s\n", note);
	if (a->rank > IPUEF_MAX_RANK) {
		fprintf(stderr, "ipu-run: %s has rank %u, the model's anchors have at most %u\n", path,
			a->rank, IPUEF_MAX_RANK);
		return -1;
	}
	return 0;
}

/* A zeroed array of the anchor's type and shape. */
static int alloc_like(struct ipurt_npy *a, const struct ipurt_tensor *t)
{
	uint32_t j;

	a->dtype = t->dtype;
	a->rank = t->rank;
	memcpy(a->dims, t->dims, sizeof(t->dims));
	a->size = ipurt_dtype_size(a->dtype);
	for (j = 0; j < a->rank; j++)
		a->size *= a->dims[j];
	a->data = calloc(1, a->size ? a->size : 1);
	if (!a->data) {
		fprintf(stderr, "ipu-run: out of memory\n");
		return -1;
	}
	return 0;
}

int run_io_prepare(struct run_io *io, const struct run_opts *o, struct ipurt_runner *r)
{
	const struct ipuef_file *file = ipurt_runner_file(r);
	const struct ipuef_metadata *m = ipuef_metadata(file);
	struct ipurt_tensor t[RUN_MAX_IO];
	uint32_t bdim[RUN_MAX_IO], nio_in, k;
	uint64_t rows = o->batch;
	int samples_dim = -1, nio;

	memset(io, 0, sizeof(*io));
	io->samples = 1;
	if (check_names(o, file))
		return -1;
	nio = ipurt_runner_io(r, o->subgraph, 0, t, bdim, RUN_MAX_IO, &nio_in);
	if (nio < 0) {
		fprintf(stderr, "ipu-run: the model has more than %d inputs and outputs\n", RUN_MAX_IO);
		return -1;
	}
	/* input files first: the first batched one sets the request's rows */
	for (k = 0; k < nio_in; k++) {
		const char *path = input_path(o, t[k].name);

		if (!path)
			continue;
		if (read_input(&io->arrays[k], path, &t[k]))
			return -1;
		if (!rows && bdim[k] != IPUEF_NO_BATCH_DIM && bdim[k] < io->arrays[k].rank)
			rows = io->arrays[k].dims[bdim[k]];
	}
	if (rows)
		ipurt_runner_io(r, o->subgraph, rows, t, bdim, RUN_MAX_IO, &nio_in);
	/* the rest is generated (inputs, seeded) or allocated (outputs) */
	for (k = 0; k < (uint32_t)nio; k++) {
		struct ipurt_npy *arr = &io->arrays[k];
		struct ipurt_tensor *dst = k < nio_in ? &io->in[io->nin++] : &io->out[io->nout++];

		if (!arr->data) {
			if (alloc_like(arr, &t[k]))
				return -1;
			if (k < nio_in) {
				/* the seed follows the anchor, so runs are repeatable */
				generate(arr, o->seed + (uint64_t)(ipuef_find_anchor(file, t[k].name) -
								   m->anchors));
				io->generated[io->nin - 1] = 1;
			}
		}
		if (k < nio_in && samples_dim < 0 && bdim[k] != IPUEF_NO_BATCH_DIM && bdim[k] < arr->rank) {
			samples_dim = (int)bdim[k];
			io->samples = arr->dims[bdim[k]];
		}
		*dst = t[k];
		dst->dtype = arr->dtype;
		dst->rank = arr->rank;
		memcpy(dst->dims, arr->dims, sizeof(dst->dims[0]) * arr->rank);
		dst->data = arr->data;
	}
	return 0;
}

struct ipurt_npy run_io_view(const struct ipurt_tensor *t)
{
	struct ipurt_npy v;
	uint32_t j;

	memset(&v, 0, sizeof(v));
	v.dtype = t->dtype;
	v.rank = t->rank;
	memcpy(v.dims, t->dims, sizeof(t->dims[0]) * t->rank);
	v.data = t->data;
	v.size = ipurt_dtype_size(t->dtype);
	for (j = 0; j < t->rank; j++)
		v.size *= t->dims[j];
	return v;
}

/* A bounded output's true leading size: the value of its "NAME:count"
 * output (ipuef-format.md, Run-time counts), within the static bound. */
static void trim_to_count(const struct run_io *io, const char *name, struct ipurt_npy *v)
{
	char cname[IPUEF_MAX_NAME + 16];
	int32_t c;

	snprintf(cname, sizeof(cname), "%s:count", name);
	for (int i = 0; i < io->nout; i++) {
		const struct ipurt_tensor *t = &io->out[i];

		if (strcmp(t->name, cname) || t->dtype != IPURT_DT_I32 || t->rank != 1 ||
		    t->dims[0] != 1 || v->rank < 1 || !v->dims[0])
			continue;
		memcpy(&c, t->data, sizeof(c));
		if (c < 0)
			c = 0;
		if ((uint64_t)c < v->dims[0]) {
			v->size = v->size / v->dims[0] * (uint64_t)c;
			v->dims[0] = (uint64_t)c;
		}
	}
}

int run_io_write_outputs(const struct run_io *io, const struct run_opts *o)
{
	char err[512], sp[512];
	int i, j;

	for (i = 0; i < io->nout; i++) {
		for (j = 0; j < o->nout; j++) {
			struct ipurt_npy view;

			if (strcmp(o->out[j].name, io->out[i].name))
				continue;
			view = run_io_view(&io->out[i]);
			trim_to_count(io, io->out[i].name, &view);
			if (run_pb_path(o->out[j].path) ?
				    run_pb_write(o->out[j].path, &view, io->out[i].name, err, sizeof(err)) :
				    ipurt_npy_write(o->out[j].path, &view, err, sizeof(err))) {
				fprintf(stderr, "ipu-run: %s\n", cli_safe(err, sp, sizeof(sp)));
				return -1;
			}
		}
	}
	return 0;
}

void run_io_free(struct run_io *io)
{
	int i;

	for (i = 0; i < 2 * RUN_MAX_IO; i++)
		ipurt_npy_free(&io->arrays[i]);
}
