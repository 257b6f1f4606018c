/* SPDX-License-Identifier: MIT */
/*
 * pack.h - packing variable-length requests into the rows of one device
 * batch along the sequence axis (server/pack.c, pack_request.c), after
 * PopRT's pack_args for BERT.
 *
 * A model whose config.yaml has a packing: block takes rows of T tokens
 * (max_sequence_length); a request carries one sequence of 1..T tokens
 * ([1, L, ...] in each sequence input).  The scheduler places queued
 * sequences first-fit into at most max_batch_size rows of at most
 * max_sequences_per_row sequences each, and fills for each row the inputs
 * the model needs to tell them apart:
 *
 *   mask_kind segment_ids  mask [B, T]: 1, 2, ... per sequence of the row
 *                          in order, 0 for padding (PopRT's packed BERT)
 *   mask_kind additive     mask [B, T, T] or [B, 1, T, T]: 0 where query
 *                          and key are of one sequence, -10000 elsewhere
 *   position_input         [B, T]: 0, 1, ... restarting with each sequence
 *
 * Outputs whose dimension 1 is T are per token: each request gets its
 * [1, L, ...] back.  Outputs named in segment_outputs are per sequence,
 * [B, max_sequences_per_row, ...], segment k at index k - 1: each request
 * gets its [1, ...].
 */
#ifndef IPU_SERVE_PACK_H
#define IPU_SERVE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "infer_core.h"
#include "serve.h"

#define SRV_PACK_MAX_ROWS 256

/* The additive mask's value between tokens of different sequences. */
#define SRV_PACK_MASKED (-10000.0f)

/* Where the sequences of one batch go. */
struct srv_pack_plan {
	uint32_t rows_cap, segs_cap;
	uint64_t row_len;
	uint32_t rows;				/* rows in use */
	uint64_t used[SRV_PACK_MAX_ROWS];	/* tokens taken in each */
	uint32_t segs[SRV_PACK_MAX_ROWS];	/* sequences in each */
};

/* An empty plan of up to rows_cap (<= SRV_PACK_MAX_ROWS) rows. */
void srv_pack_plan_init(struct srv_pack_plan *p, uint32_t rows_cap, uint64_t row_len,
			uint32_t segs_cap);
/*
 * First fit: the first row with len free tokens and a free segment, else
 * a new row.  0 with the row, its first token and its segment id (1-based),
 * or -1 if no row can take it (nothing changed).
 */
int srv_pack_place(struct srv_pack_plan *p, uint64_t len, uint32_t *row, uint64_t *off,
		   uint32_t *seg);
/* No row can take another sequence of one token. */
int srv_pack_full(const struct srv_pack_plan *p);

enum srv_pack_role {
	SRV_PACK_NONE = 0,
	SRV_PACK_SEQ,		/* inputs: the client's tokens */
	SRV_PACK_MASK,		/* made by the packer */
	SRV_PACK_POS,		/* made by the packer */
	SRV_PACK_TOKEN_OUT,	/* outputs per token */
	SRV_PACK_SEGMENT_OUT,	/* outputs per sequence */
};

/* What the packing config makes of the model's input or output `name`. */
enum srv_pack_role srv_pack_role(const struct srv_pack_config *c, const char *name, int is_input);

/*
 * Check a packing config against the model's inputs and outputs (io of
 * nin inputs then outputs, nio in all; bdim their batch dimensions):
 * every name exists, shapes and datatypes are the ones the packer fills,
 * every input and output has a role.  0, or -1 with the reason in err.
 */
int srv_pack_check(const struct srv_pack_config *c, const struct ipurt_tensor *io,
		   const uint32_t *bdim, uint32_t nin, uint32_t nio, char *err, size_t errlen);

/*
 * The request side: the client's sequence inputs ([1, L, ...], the same L
 * in each, 1 <= L <= max_sequence_length) into req, with its outputs cut
 * to its own tokens or sequence.  Called by srv_request_prepare for a
 * packing model; 0, or 400 (500 out of memory) with err.
 */
int srv_pack_prepare(struct srv_model *m, const struct srv_input *in, uint32_t nin,
		     const struct srv_output_req *out, uint32_t nout, int binary_default,
		     struct srv_request *req, char *err, size_t errlen);

/*
 * The pieces of a packed run, one tensor at a time.  merged has the
 * model's shape for the plan's rows ([rows, T, ...]); part is one
 * request's tensor.
 */
void srv_pack_put_tokens(void *merged, const struct ipurt_tensor *mt, const struct ipurt_tensor *part,
			 uint32_t row, uint64_t off);
void srv_pack_get_tokens(const void *merged, const struct ipurt_tensor *mt,
			 const struct ipurt_tensor *part, uint32_t row, uint64_t off);
void srv_pack_get_segment(const void *merged, const struct ipurt_tensor *mt,
			  const struct ipurt_tensor *part, uint32_t row, uint32_t seg);
/* The mask's padding (0 segment ids, or every pair masked), then each sequence. */
void srv_pack_mask_init(void *merged, const struct ipurt_tensor *mt, enum srv_pack_mask kind);
void srv_pack_put_mask(void *merged, const struct ipurt_tensor *mt, enum srv_pack_mask kind,
		       uint32_t row, uint64_t off, uint64_t len, uint32_t seg);
void srv_pack_put_positions(void *merged, const struct ipurt_tensor *mt, uint32_t row,
			    uint64_t off, uint64_t len);

/*
 * Run the placed requests batch[0..n) (pack_row/off/seg set, rows rows)
 * as one device batch on r and give each its outputs.  ti0..ti1: the
 * device's run.  0 or a negative ipurt code with err.
 */
int srv_pack_run(struct ipurt_runner *r, const struct srv_pack_config *c, struct srv_request **batch,
		 uint32_t n, uint32_t rows, uint64_t *ti0, uint64_t *ti1, char *err, size_t errlen);

#endif
