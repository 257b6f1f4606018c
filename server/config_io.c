// SPDX-License-Identifier: MIT
/*
 * config_io.c - the inputs and outputs a config.pbtxt declares, checked
 * against the loaded model: the .ipuef is what runs, so a declaration that
 * differs from it is refused at load instead of surfacing as request
 * errors later.  Dims follow Triton: with max_batch_size > 0 a batched
 * tensor's dims leave out its batch dimension; -1 matches any size.
 */
#include <stdio.h>
#include <string.h>

#include "serve.h"

static void dims_text(const int64_t *d, uint32_t n, char *buf, size_t len)
{
	size_t k = (size_t)snprintf(buf, len, "[");

	for (uint32_t i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? ", " : "", (long long)d[i]);
	if (k < len)
		snprintf(buf + k, len - k, "]");
}

static int check_one(const char *what, const struct srv_tensor_decl *d, const struct ipurt_tensor *t,
		     uint32_t bdim, int batched, char *err, size_t errlen)
{
	int64_t want[IPUEF_MAX_RANK];
	uint32_t n = 0;
	char a[160], b[160];

	if (d->dtype != t->dtype) {
		snprintf(err, errlen, "%s '%s': data_type TYPE_%s, the model's is TYPE_%s", what, d->name,
			 srv_dtype_to_v2(d->dtype) ? srv_dtype_to_v2(d->dtype) : "?",
			 srv_dtype_to_v2(t->dtype) ? srv_dtype_to_v2(t->dtype) : "?");
		return -1;
	}
	for (uint32_t k = 0; k < t->rank; k++)
		if (!batched || k != bdim)
			want[n++] = (int64_t)t->dims[k];
	if (d->rank == n) {
		uint32_t k;

		for (k = 0; k < n && (d->dims[k] == -1 || d->dims[k] == want[k]); k++)
			;
		if (k == n)
			return 0;
	}
	dims_text(d->dims, d->rank, a, sizeof(a));
	dims_text(want, n, b, sizeof(b));
	snprintf(err, errlen, "%s '%s': dims %s, the model's are %s%s", what, d->name, a, b,
		 batched ? " (without the batch dimension, as max_batch_size > 0)" : "");
	return -1;
}

int srv_model_config_check_io(const struct srv_model_config *c, struct srv_model *m, char *err,
			      size_t errlen)
{
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], nin, i, k;
	int nio;

	if (!c->num_inputs && !c->num_outputs)
		return 0;
	nio = ipurt_runner_io(srv_model_runner(m), -1, 0, io, bdim, SRV_MAX_IO, &nin);
	if (nio < 0) {
		snprintf(err, errlen, "the model's inputs and outputs could not be read (%d)", nio);
		return -1;
	}
	for (int out = 0; out < 2; out++) {
		const struct srv_tensor_decl *decl = out ? c->outputs : c->inputs;
		uint32_t ndecl = out ? c->num_outputs : c->num_inputs;
		uint32_t lo = out ? nin : 0, hi = out ? (uint32_t)nio : nin;

		for (i = 0; i < ndecl; i++) {
			for (k = lo; k < hi && strcmp(io[k].name, decl[i].name); k++)
				;
			if (k == hi) {
				snprintf(err, errlen, "%s '%s' is not one of the model's %ss", out ? "output" : "input",
					 decl[i].name, out ? "output" : "input");
				return -1;
			}
			if (check_one(out ? "output" : "input", &decl[i], &io[k], bdim[k],
				      m->max_batch && bdim[k] != IPUEF_NO_BATCH_DIM, err, errlen))
				return -1;
		}
	}
	/* Triton: a model's inputs are all declared (outputs may be a subset) */
	for (k = 0; c->num_inputs && k < nin; k++) {
		for (i = 0; i < c->num_inputs && strcmp(io[k].name, c->inputs[i].name); i++)
			;
		if (i == c->num_inputs) {
			snprintf(err, errlen, "the model's input '%s' is not declared in input [...]", io[k].name);
			return -1;
		}
	}
	return 0;
}
