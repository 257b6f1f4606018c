// SPDX-License-Identifier: MIT
/*
 * test_serve_pack_units.c - packing without a device (server/pack.c and
 * config.yaml's packing: block): first-fit placement, the segment ids,
 * additive mask and positions of a packed row, tokens and segments cut
 * back per request, and every refusal of a config against a model.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pack.h"
#include "serve.h"

static const char *good =
	"max_batch_size: 2\n"
	"packing:\n"
	"  sequence_inputs: [input_ids]\n"
	"  mask_input: attention_mask\n"
	"  mask_kind: segment_ids\n"
	"  position_input: position_ids\n"
	"  max_sequence_length: 8\n"
	"  max_sequences_per_row: 3\n"
	"  segment_outputs: pooled\n";

TEST(config_packing)
{
	struct srv_model_config c;
	char err[SRV_ERR];

	REQUIRE(srv_model_config_parse(good, strlen(good), "m", &c, err, sizeof(err)) == 0);
	CHECK(c.packing.enabled);
	CHECK_EQ_INT(c.packing.num_seq_inputs, 1);
	CHECK(!strcmp(c.packing.seq_inputs[0], "input_ids"));
	CHECK(!strcmp(c.packing.mask_input, "attention_mask"));
	CHECK(!strcmp(c.packing.position_input, "position_ids"));
	CHECK_EQ_INT(c.packing.mask_kind, SRV_PACK_MASK_SEGMENT_IDS);
	CHECK_EQ_INT(c.packing.max_sequence_length, 8);
	CHECK_EQ_INT(c.packing.max_sequences_per_row, 3);
	CHECK_EQ_INT(c.packing.num_segment_outputs, 1);
	CHECK(!strcmp(c.packing.segment_outputs[0], "pooled"));
	REQUIRE(srv_model_config_parse("", 0, "m", &c, err, sizeof(err)) == 0);
	CHECK(!c.packing.enabled);
}

TEST(config_packing_refusals)
{
	static const struct {
		const char *yaml, *msg;
	} bad[] = {
		{ "packing: [a]\n", "packing must be a mapping" },
		{ "packing: { mask_input: m, max_sequence_length: 8, max_sequences_per_row: 2 }\n",
		  "packing needs sequence_inputs" },
		{ "packing: { sequence_inputs: [a], max_sequence_length: 8, max_sequences_per_row: 2 }\n",
		  "packing needs mask_input" },
		{ "packing: { sequence_inputs: [a], mask_input: m, max_sequences_per_row: 2 }\n",
		  "packing needs max_sequence_length" },
		{ "packing: { sequence_inputs: [a], mask_input: m, max_sequence_length: 8 }\n",
		  "packing needs max_sequences_per_row" },
		{ "packing: { sequence_inputs: [a], mask_input: m, mask_kind: causal }\n",
		  "mask_kind must be segment_ids or additive, got 'causal'" },
		{ "packing: { sequence_inputs: [a], mask_input: m, pad: 0 }\n",
		  "packing: unknown field 'pad'" },
		{ "packing: { sequence_inputs: [''], mask_input: m }\n",
		  "sequence_inputs must be a tensor name" },
		{ "packing: { sequence_inputs: [a, b, c, d, e, f, g, h, i], mask_input: m }\n",
		  "more than 8 sequence_inputs" },
		{ "packing: { sequence_inputs: [a], mask_input: m, max_sequence_length: -1 }\n",
		  "max_sequence_length must be a whole number" },
	};
	struct srv_model_config c;
	char err[SRV_ERR];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK_MSG(srv_model_config_parse(bad[i].yaml, strlen(bad[i].yaml), "m", &c, err,
						 sizeof(err)) == -1 && strstr(err, bad[i].msg),
			  "%s -> %s", bad[i].yaml, err);
	}
}

#define PARAM(k, v) "parameters { key: \"" k "\" value { string_value: \"" v "\" } }\n"

TEST(config_pbtxt_packing)
{
	static const char *ragged =
		"max_batch_size: 2\n"
		"input [ { name: \"input_ids\" data_type: TYPE_INT32 dims: [ -1 ] allow_ragged_batch: true },\n"
		"        { name: \"attention_mask\" data_type: TYPE_INT32 dims: [ -1 ] } ]\n";
	static const struct {
		const char *params, *msg;
	} bad[] = {
		{ PARAM("packing_mask_input", "attention_mask"), "are needed" },
		{ PARAM("packing_mask_input", "attention_mask") PARAM("packing_max_sequence_length", "0")
		  PARAM("packing_max_sequences_per_row", "2"), "'0' is not a whole number from 1" },
		{ PARAM("packing_mask_kind", "causal"), "'causal' is not segment_ids or additive" },
		{ PARAM("packing_segment_outputs", "a,,b"), "must be output names separated by commas" },
		{ PARAM("packing_rows", "2"), "key 'packing_rows' is not one ipu-serve acts on" },
	};
	struct srv_model_config c;
	char text[2048], err[SRV_ERR];
	size_t i;

	snprintf(text, sizeof(text), "%s%s%s%s%s%s", ragged, PARAM("packing_mask_input", "attention_mask"),
		 PARAM("packing_mask_kind", "additive"), PARAM("packing_max_sequence_length", "128"),
		 PARAM("packing_max_sequences_per_row", "8"), PARAM("packing_segment_outputs", "pooled,cls"));
	err[0] = 0;
	CHECK_MSG(srv_model_config_parse_pbtxt(text, strlen(text), "m", &c, err, sizeof(err)) == 0,
		  "%s", err);
	REQUIRE(!err[0]);
	CHECK(c.packing.enabled);
	CHECK(c.packing.num_seq_inputs == 1 && !strcmp(c.packing.seq_inputs[0], "input_ids"));
	CHECK(!strcmp(c.packing.mask_input, "attention_mask"));
	CHECK_EQ_INT(c.packing.mask_kind, SRV_PACK_MASK_ADDITIVE);
	CHECK_EQ_INT(c.packing.max_sequence_length, 128);
	CHECK_EQ_INT(c.packing.max_sequences_per_row, 8);
	CHECK(c.packing.num_segment_outputs == 2 && !strcmp(c.packing.segment_outputs[1], "cls"));
	/* the parameters without a ragged input */
	snprintf(text, sizeof(text), "max_batch_size: 2\n%s", PARAM("packing_mask_input", "m"));
	CHECK(srv_model_config_parse_pbtxt(text, strlen(text), "m", &c, err, sizeof(err)) == -1 &&
	      strstr(err, "no input has allow_ragged_batch"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", ragged, bad[i].params);
		err[0] = 0;
		CHECK_MSG(srv_model_config_parse_pbtxt(text, strlen(text), "m", &c, err, sizeof(err)) == -1 &&
			  strstr(err, bad[i].msg), "%s -> %s", bad[i].params, err);
	}
}

TEST(plan_first_fit)
{
	struct srv_pack_plan p;
	uint32_t row, seg;
	uint64_t off;

	srv_pack_plan_init(&p, 2, 8, 3);
	REQUIRE(srv_pack_place(&p, 5, &row, &off, &seg) == 0);
	CHECK(row == 0 && off == 0 && seg == 1);
	REQUIRE(srv_pack_place(&p, 4, &row, &off, &seg) == 0); /* 5 + 4 > 8: a new row */
	CHECK(row == 1 && off == 0 && seg == 1);
	REQUIRE(srv_pack_place(&p, 3, &row, &off, &seg) == 0); /* fits the first row's end */
	CHECK(row == 0 && off == 5 && seg == 2);
	CHECK_EQ_INT(p.rows, 2);
	CHECK(!srv_pack_full(&p));
	CHECK(srv_pack_place(&p, 5, &row, &off, &seg) == -1); /* 4 free in row 1, no third row */
	CHECK_EQ_INT(p.rows, 2);
	REQUIRE(srv_pack_place(&p, 1, &row, &off, &seg) == 0);
	CHECK(row == 1 && off == 4 && seg == 2);
	REQUIRE(srv_pack_place(&p, 1, &row, &off, &seg) == 0);
	CHECK(row == 1 && off == 5 && seg == 3);
	/* row 0 is full of tokens, row 1 of segments */
	CHECK(srv_pack_full(&p));
	CHECK(srv_pack_place(&p, 1, &row, &off, &seg) == -1);
	CHECK(srv_pack_place(&p, 0, &row, &off, &seg) == -1);
	srv_pack_plan_init(&p, 1, 8, 3);
	CHECK(srv_pack_place(&p, 9, &row, &off, &seg) == -1);
	CHECK_EQ_INT(p.rows, 0);
	REQUIRE(srv_pack_place(&p, 8, &row, &off, &seg) == 0);
	CHECK(srv_pack_full(&p));
}

TEST(row_inputs)
{
	struct ipurt_tensor ids = { "input_ids", IPURT_DT_I32, 2, { 2, 8 }, NULL };
	struct ipurt_tensor mask = { "attention_mask", IPURT_DT_I64, 2, { 2, 8 }, NULL };
	struct ipurt_tensor add = { "mask", IPURT_DT_F32, 4, { 2, 1, 8, 8 }, NULL };
	struct ipurt_tensor pos = { "position_ids", IPURT_DT_I32, 2, { 2, 8 }, NULL };
	int32_t mid[16] = { 0 }, mpos[16] = { 0 }, a[3] = { 7, 8, 9 }, b[2] = { 5, 6 };
	int32_t want_ids[16] = { 7, 8, 9, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	int32_t want_pos[16] = { 0, 1, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	int64_t mm[16], want_mask[16] = { 1, 1, 1, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct ipurt_tensor pa = { "input_ids", IPURT_DT_I32, 2, { 1, 3 }, a };
	struct ipurt_tensor pb = { "input_ids", IPURT_DT_I32, 2, { 1, 2 }, b };
	float *am = malloc(2 * 64 * sizeof(float));
	int q, k, bad = 0;

	REQUIRE(am);
	srv_pack_put_tokens(mid, &ids, &pa, 0, 0);
	srv_pack_put_tokens(mid, &ids, &pb, 0, 3);
	CHECK(!memcmp(mid, want_ids, sizeof(mid)));
	srv_pack_mask_init(mm, &mask, SRV_PACK_MASK_SEGMENT_IDS);
	srv_pack_put_mask(mm, &mask, SRV_PACK_MASK_SEGMENT_IDS, 0, 0, 3, 1);
	srv_pack_put_mask(mm, &mask, SRV_PACK_MASK_SEGMENT_IDS, 0, 3, 2, 2);
	CHECK(!memcmp(mm, want_mask, sizeof(mm)));
	srv_pack_put_positions(mpos, &pos, 0, 0, 3);
	srv_pack_put_positions(mpos, &pos, 0, 3, 2);
	CHECK(!memcmp(mpos, want_pos, sizeof(mpos)));
	/* additive, row 1: sequences [0, 3) and [3, 5) see themselves only */
	srv_pack_mask_init(am, &add, SRV_PACK_MASK_ADDITIVE);
	srv_pack_put_mask(am, &add, SRV_PACK_MASK_ADDITIVE, 1, 0, 3, 1);
	srv_pack_put_mask(am, &add, SRV_PACK_MASK_ADDITIVE, 1, 3, 2, 2);
	for (q = 0; q < 8; q++) {
		for (k = 0; k < 8; k++) {
			int same = (q < 3 && k < 3) || (q >= 3 && q < 5 && k >= 3 && k < 5);

			bad += am[q * 8 + k] != SRV_PACK_MASKED; /* row 0 untouched */
			bad += am[64 + q * 8 + k] != (same ? 0.0f : SRV_PACK_MASKED);
		}
	}
	CHECK_EQ_INT(bad, 0);
	free(am);
}

TEST(outputs_back)
{
	/* [2 rows, 4 tokens, 2] per token; [2 rows, 3 segments, 2] per segment */
	struct ipurt_tensor ht = { "hidden", IPURT_DT_F32, 3, { 2, 4, 2 }, NULL };
	struct ipurt_tensor st = { "pooled", IPURT_DT_F32, 3, { 2, 3, 2 }, NULL };
	float h[16], s[12], got[6], seg[2];
	struct ipurt_tensor part = { "hidden", IPURT_DT_F32, 3, { 1, 3, 2 }, got };
	struct ipurt_tensor sp = { "pooled", IPURT_DT_F32, 2, { 1, 2 }, seg };
	int i;

	for (i = 0; i < 16; i++)
		h[i] = (float)i;
	for (i = 0; i < 12; i++)
		s[i] = 100.0f + (float)i;
	srv_pack_get_tokens(h, &ht, &part, 1, 1); /* row 1, tokens 1..3 */
	for (i = 0; i < 6; i++)
		CHECK(got[i] == (float)(8 + 2 + i));
	srv_pack_get_segment(s, &st, &sp, 1, 2); /* row 1, segment 2 */
	CHECK(seg[0] == 100.0f + 6 + 2 && seg[1] == 100.0f + 6 + 3);
}

TEST(check_against_model)
{
	struct srv_model_config c;
	struct ipurt_tensor io[5] = {
		{ "input_ids", IPURT_DT_I32, 2, { 2, 8 }, NULL },
		{ "attention_mask", IPURT_DT_I32, 2, { 2, 8 }, NULL },
		{ "position_ids", IPURT_DT_I64, 2, { 2, 8 }, NULL },
		{ "hidden", IPURT_DT_F32, 3, { 2, 8, 4 }, NULL },
		{ "pooled", IPURT_DT_F32, 3, { 2, 3, 4 }, NULL },
	};
	uint32_t bdim[5] = { 0, 0, 0, 0, 0 };
	char err[SRV_ERR];

	REQUIRE(srv_model_config_parse(good, strlen(good), "m", &c, err, sizeof(err)) == 0);
	CHECK_MSG(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_INT(srv_pack_role(&c.packing, "input_ids", 1), SRV_PACK_SEQ);
	CHECK_EQ_INT(srv_pack_role(&c.packing, "hidden", 0), SRV_PACK_TOKEN_OUT);
	CHECK_EQ_INT(srv_pack_role(&c.packing, "pooled", 0), SRV_PACK_SEGMENT_OUT);

	strcpy(c.packing.mask_input, "segment_ids");
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "mask_input 'segment_ids' is not one of the model's ('input_ids', "
			  "'attention_mask', 'position_ids')"));
	strcpy(c.packing.mask_input, "attention_mask");
	strcpy(c.packing.segment_outputs[0], "pool");
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "segment output 'pool' is not one of the model's ('hidden', 'pooled')"));
	c.packing.num_segment_outputs = 0;
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "output 'pooled' must be [batch, 8, ...]"));
	strcpy(c.packing.segment_outputs[0], "pooled");
	c.packing.num_segment_outputs = 1;
	c.packing.position_input[0] = 0;
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "input 'position_ids' is neither"));
	strcpy(c.packing.position_input, "position_ids");
	c.packing.max_sequence_length = 16;
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "input 'input_ids' must be [batch, 16, ...]"));
	c.packing.max_sequence_length = 8;
	c.packing.mask_kind = SRV_PACK_MASK_ADDITIVE;
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "of kind additive must be FP32"));
	c.packing.mask_kind = SRV_PACK_MASK_SEGMENT_IDS;
	io[1].dtype = IPURT_DT_F32;
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "of kind segment_ids must be INT32 or INT64"));
	io[1].dtype = IPURT_DT_I32;
	bdim[3] = 1;
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1 &&
	      strstr(err, "'hidden' is not batched along dimension 0"));
	bdim[3] = 0;
	strcpy(c.packing.seq_inputs[0], "attention_mask");
	CHECK(srv_pack_check(&c.packing, io, bdim, 3, 5, err, sizeof(err)) == -1);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(config_packing);
	RUN(config_packing_refusals);
	RUN(config_pbtxt_packing);
	RUN(plan_first_fit);
	RUN(row_inputs);
	RUN(outputs_back);
	RUN(check_against_model);
	return TH_DONE();
}
