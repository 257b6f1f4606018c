// SPDX-License-Identifier: MIT
/*
 * pack.c - the scheduler's side of packing (pack.h): where sequences go in
 * a batch, the inputs the model needs to keep them apart, and the outputs
 * cut back per request.
 *
 * First fit in queue order keeps the oldest request first and packs about
 * as well as sorting by length for the short queues a server has; the
 * model, not the packer, keeps sequences from seeing each other, from the
 * mask and positions filled here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "pack.h"

void srv_pack_plan_init(struct srv_pack_plan *p, uint32_t rows_cap, uint64_t row_len,
			uint32_t segs_cap)
{
	memset(p, 0, sizeof(*p));
	p->rows_cap = rows_cap > SRV_PACK_MAX_ROWS ? SRV_PACK_MAX_ROWS : rows_cap;
	p->row_len = row_len;
	p->segs_cap = segs_cap;
}

int srv_pack_place(struct srv_pack_plan *p, uint64_t len, uint32_t *row, uint64_t *off,
		   uint32_t *seg)
{
	uint32_t i;

	if (!len || len > p->row_len)
		return -1;
	for (i = 0; i < p->rows_cap; i++) {
		if (i == p->rows)
			p->rows++; /* a new row */
		if (p->used[i] + len > p->row_len || p->segs[i] >= p->segs_cap)
			continue;
		*row = i;
		*off = p->used[i];
		*seg = ++p->segs[i];
		p->used[i] += len;
		return 0;
	}
	/* no room: do not count the rows this search opened */
	while (p->rows && !p->segs[p->rows - 1])
		p->rows--;
	return -1;
}

int srv_pack_full(const struct srv_pack_plan *p)
{
	uint32_t i;

	if (p->rows < p->rows_cap)
		return 0;
	for (i = 0; i < p->rows; i++)
		if (p->used[i] < p->row_len && p->segs[i] < p->segs_cap)
			return 0;
	return 1;
}

static int listed(const char (*names)[SRV_PACK_NAME], uint32_t n, const char *name)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

enum srv_pack_role srv_pack_role(const struct srv_pack_config *c, const char *name, int is_input)
{
	if (is_input) {
		if (listed(c->seq_inputs, c->num_seq_inputs, name))
			return SRV_PACK_SEQ;
		if (!strcmp(c->mask_input, name))
			return SRV_PACK_MASK;
		if (c->position_input[0] && !strcmp(c->position_input, name))
			return SRV_PACK_POS;
		return SRV_PACK_NONE;
	}
	return listed(c->segment_outputs, c->num_segment_outputs, name) ? SRV_PACK_SEGMENT_OUT
									 : SRV_PACK_TOKEN_OUT;
}

static int find(const struct ipurt_tensor *io, uint32_t from, uint32_t to, const char *name)
{
	uint32_t i;

	for (i = from; i < to; i++)
		if (!strcmp(io[i].name, name))
			return (int)i;
	return -1;
}

static int is_int(uint32_t dt)
{
	return dt == IPURT_DT_I32 || dt == IPURT_DT_I64;
}

static int missing(const char *what, const char *name, const struct ipurt_tensor *io,
		   uint32_t from, uint32_t to, char *err, size_t errlen)
{
	size_t k = (size_t)snprintf(err, errlen, "packing: %s '%s' is not one of the model's (", what,
				    name);
	uint32_t i;

	for (i = from; i < to && k < errlen; i++)
		k += (size_t)snprintf(err + k, errlen - k, "%s'%s'", i > from ? ", " : "", io[i].name);
	if (k < errlen)
		snprintf(err + k, errlen - k, ")");
	return -1;
}

int srv_pack_check(const struct srv_pack_config *c, const struct ipurt_tensor *io,
		   const uint32_t *bdim, uint32_t nin, uint32_t nio, char *err, size_t errlen)
{
	uint64_t t = c->max_sequence_length;
	uint32_t i;
	int k;

	for (i = 0; i < c->num_seq_inputs; i++)
		if (find(io, 0, nin, c->seq_inputs[i]) < 0)
			return missing("sequence input", c->seq_inputs[i], io, 0, nin, err, errlen);
	if (find(io, 0, nin, c->mask_input) < 0)
		return missing("mask_input", c->mask_input, io, 0, nin, err, errlen);
	if (c->position_input[0] && find(io, 0, nin, c->position_input) < 0)
		return missing("position_input", c->position_input, io, 0, nin, err, errlen);
	for (i = 0; i < c->num_segment_outputs; i++)
		if (find(io, nin, nio, c->segment_outputs[i]) < 0)
			return missing("segment output", c->segment_outputs[i], io, nin, nio, err, errlen);
	for (i = 0; i < nio; i++) {
		const struct ipurt_tensor *x = &io[i];
		enum srv_pack_role role = srv_pack_role(c, x->name, i < nin);

		if (bdim[i] != 0) {
			snprintf(err, errlen, "packing: '%s' is not batched along dimension 0; packing "
				 "needs [batch, sequence, ...] tensors", x->name);
			return -1;
		}
		switch (role) {
		case SRV_PACK_NONE:
			snprintf(err, errlen, "packing: input '%s' is neither a sequence input, the "
				 "mask_input nor the position_input; the packer cannot fill it", x->name);
			return -1;
		case SRV_PACK_SEQ:
		case SRV_PACK_POS:
		case SRV_PACK_TOKEN_OUT:
			if (x->rank < 2 || x->dims[1] != t) {
				snprintf(err, errlen, "packing: %s '%s' must be [batch, %llu, ...] "
					 "(max_sequence_length on dimension 1)%s", i < nin ? "input" : "output",
					 x->name, (unsigned long long)t,
					 role == SRV_PACK_TOKEN_OUT ? ", or be listed in segment_outputs" : "");
				return -1;
			}
			if (role == SRV_PACK_POS && (x->rank != 2 || !is_int(x->dtype))) {
				snprintf(err, errlen, "packing: position_input '%s' must be INT32 or INT64 "
					 "[batch, %llu]", x->name, (unsigned long long)t);
				return -1;
			}
			break;
		case SRV_PACK_MASK:
			if (c->mask_kind == SRV_PACK_MASK_SEGMENT_IDS &&
			    (x->rank != 2 || x->dims[1] != t || !is_int(x->dtype))) {
				snprintf(err, errlen, "packing: mask_input '%s' of kind segment_ids must be "
					 "INT32 or INT64 [batch, %llu]", x->name, (unsigned long long)t);
				return -1;
			}
			if (c->mask_kind == SRV_PACK_MASK_ADDITIVE &&
			    (x->dtype != IPURT_DT_F32 || x->rank < 3 || x->rank > 4 ||
			     x->dims[x->rank - 1] != t || x->dims[x->rank - 2] != t ||
			     (x->rank == 4 && x->dims[1] != 1))) {
				snprintf(err, errlen, "packing: mask_input '%s' of kind additive must be FP32 "
					 "[batch, %llu, %llu] or [batch, 1, %llu, %llu]", x->name,
					 (unsigned long long)t, (unsigned long long)t, (unsigned long long)t,
					 (unsigned long long)t);
				return -1;
			}
			break;
		case SRV_PACK_SEGMENT_OUT:
			if (x->rank < 2 || x->dims[1] != c->max_sequences_per_row) {
				snprintf(err, errlen, "packing: segment output '%s' must be [batch, %llu, ...] "
					 "(max_sequences_per_row on dimension 1)", x->name,
					 (unsigned long long)c->max_sequences_per_row);
				return -1;
			}
			break;
		}
	}
	k = find(io, 0, nin, c->mask_input);
	if (c->position_input[0] && !strcmp(c->position_input, c->mask_input)) {
		snprintf(err, errlen, "packing: '%s' is both mask_input and position_input", io[k].name);
		return -1;
	}
	for (i = 0; i < c->num_seq_inputs; i++) {
		if (!strcmp(c->seq_inputs[i], c->mask_input) ||
		    (c->position_input[0] && !strcmp(c->seq_inputs[i], c->position_input))) {
			snprintf(err, errlen, "packing: '%s' is a sequence input and made by the packer",
				 c->seq_inputs[i]);
			return -1;
		}
	}
	return 0;
}

/* Bytes of one token of t (dimensions 2.. of [batch, T, ...]). */
static uint64_t token_bytes(const struct ipurt_tensor *t)
{
	uint64_t b = ipurt_dtype_size(t->dtype);
	uint32_t d;

	for (d = 2; d < t->rank; d++)
		b *= t->dims[d];
	return b;
}

void srv_pack_put_tokens(void *merged, const struct ipurt_tensor *mt, const struct ipurt_tensor *part,
			 uint32_t row, uint64_t off)
{
	uint64_t tb = token_bytes(mt);

	memcpy((char *)merged + (row * mt->dims[1] + off) * tb, part->data, part->dims[1] * tb);
}

void srv_pack_get_tokens(const void *merged, const struct ipurt_tensor *mt,
			 const struct ipurt_tensor *part, uint32_t row, uint64_t off)
{
	uint64_t tb = token_bytes(mt);

	memcpy(part->data, (const char *)merged + (row * mt->dims[1] + off) * tb, part->dims[1] * tb);
}

void srv_pack_get_segment(const void *merged, const struct ipurt_tensor *mt,
			  const struct ipurt_tensor *part, uint32_t row, uint32_t seg)
{
	uint64_t sb = token_bytes(mt);

	memcpy(part->data, (const char *)merged + (row * mt->dims[1] + seg - 1) * sb, sb);
}

static void put_int(void *base, uint64_t i, uint32_t dtype, int64_t v)
{
	if (dtype == IPURT_DT_I64)
		((int64_t *)base)[i] = v;
	else
		((int32_t *)base)[i] = (int32_t)v;
}

void srv_pack_mask_init(void *merged, const struct ipurt_tensor *mt, enum srv_pack_mask kind)
{
	uint64_t n = srv_tensor_bytes(mt) / ipurt_dtype_size(mt->dtype), i;

	if (kind == SRV_PACK_MASK_SEGMENT_IDS) {
		memset(merged, 0, srv_tensor_bytes(mt));
		return;
	}
	for (i = 0; i < n; i++)
		((float *)merged)[i] = SRV_PACK_MASKED;
}

void srv_pack_put_mask(void *merged, const struct ipurt_tensor *mt, enum srv_pack_mask kind,
		       uint32_t row, uint64_t off, uint64_t len, uint32_t seg)
{
	uint64_t t = mt->dims[mt->rank - 1], q, k;

	if (kind == SRV_PACK_MASK_SEGMENT_IDS) {
		for (k = 0; k < len; k++)
			put_int(merged, row * t + off + k, mt->dtype, seg);
		return;
	}
	for (q = off; q < off + len; q++)
		for (k = off; k < off + len; k++)
			((float *)merged)[(row * t + q) * t + k] = 0.0f;
}

void srv_pack_put_positions(void *merged, const struct ipurt_tensor *mt, uint32_t row,
			    uint64_t off, uint64_t len)
{
	uint64_t k;

	for (k = 0; k < len; k++)
		put_int(merged, row * mt->dims[1] + off + k, mt->dtype, (int64_t)k);
}

int srv_pack_run(struct ipurt_runner *r, const struct srv_pack_config *c, struct srv_request **batch,
		 uint32_t n, uint32_t rows, uint64_t *ti0, uint64_t *ti1, char *err, size_t errlen)
{
	struct ipurt_tensor io[SRV_MAX_IO];
	uint32_t bdim[SRV_MAX_IO], nin, i, j;
	void *bufs[SRV_MAX_IO] = { 0 };
	int nio, rc = IPURT_E_NOMEM;

	nio = ipurt_runner_io(r, -1, rows, io, bdim, SRV_MAX_IO, &nin);
	if (nio <= 0) {
		snprintf(err, errlen, "the model's inputs and outputs cannot be listed");
		return IPURT_E_INVAL;
	}
	for (i = 0; i < (uint32_t)nio; i++) {
		uint64_t bytes = srv_tensor_bytes(&io[i]);

		/* zeroed: padding tokens are 0, and so is every output row nobody reads */
		io[i].data = bufs[i] = calloc(1, bytes ? bytes : 1);
		if (!io[i].data) {
			snprintf(err, errlen, "out of memory for a packed batch of %u rows", rows);
			goto out;
		}
		if (i >= nin)
			continue;
		switch (srv_pack_role(c, io[i].name, 1)) {
		case SRV_PACK_MASK:
			srv_pack_mask_init(io[i].data, &io[i], c->mask_kind);
			for (j = 0; j < n; j++)
				srv_pack_put_mask(io[i].data, &io[i], c->mask_kind, batch[j]->pack_row,
						  batch[j]->pack_off, batch[j]->seq_len, batch[j]->pack_seg);
			break;
		case SRV_PACK_POS:
			for (j = 0; j < n; j++)
				srv_pack_put_positions(io[i].data, &io[i], batch[j]->pack_row,
						       batch[j]->pack_off, batch[j]->seq_len);
			break;
		default:
			/* the requests' inputs are in the model's order (srv_pack_prepare) */
			for (j = 0; j < n; j++)
				srv_pack_put_tokens(io[i].data, &io[i], &batch[j]->in[i], batch[j]->pack_row,
						    batch[j]->pack_off);
			break;
		}
	}
	*ti0 = srv_now_ns();
	rc = ipurt_runner_execute(r, io, nin, io + nin, (uint32_t)nio - nin, err, errlen);
	*ti1 = srv_now_ns();
	if (rc)
		goto out;
	for (i = nin; i < (uint32_t)nio; i++) {
		int seg = srv_pack_role(c, io[i].name, 0) == SRV_PACK_SEGMENT_OUT;

		for (j = 0; j < n; j++) {
			const struct ipurt_tensor *part = &batch[j]->out[i - nin];

			if (seg)
				srv_pack_get_segment(io[i].data, &io[i], part, batch[j]->pack_row,
						     batch[j]->pack_seg);
			else
				srv_pack_get_tokens(io[i].data, &io[i], part, batch[j]->pack_row,
						    batch[j]->pack_off);
		}
	}
out:
	for (i = 0; i < SRV_MAX_IO; i++)
		free(bufs[i]);
	return rc;
}
