// SPDX-License-Identifier: MIT
/*
 * fuzz_serve_pbtxt.c - libFuzzer on ipu-serve's config.pbtxt reader
 * (server/config_pbtxt.c over server/pbtxt.cc: libprotobuf's text format
 * against Triton's model_config.proto, the walk that refuses fields not
 * acted on, protoc-c's unpacking and the mapping onto the model config).
 * The input is the file's text.  A refusal must come with a message; an
 * accepted config must be within every limit the loader relies on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_serve_pbtxt: accepted config breaks: %s\n", what);
		abort();
	}
}

static void check_tensors(const struct srv_tensor_decl *t, uint32_t n)
{
	require(n <= SRV_MAX_IO, "tensor count");
	for (uint32_t i = 0; i < n; i++) {
		require(t[i].name[0] && memchr(t[i].name, 0, sizeof(t[i].name)), "tensor name");
		require(t[i].dtype != IPURT_DT_INVALID && srv_dtype_to_v2(t[i].dtype), "tensor dtype");
		require(t[i].rank <= IPUEF_MAX_RANK, "tensor rank");
		for (uint32_t k = 0; k < t[i].rank; k++)
			require(t[i].dims[k] >= -1, "tensor dims");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct srv_model_config c;
	char err[SRV_ERR];

	err[0] = 0;
	if (srv_model_config_parse_pbtxt((const char *)data, size, "m", &c, err, sizeof(err))) {
		require(err[0] != 0, "a refusal without a message");
		return 0;
	}
	require(c.has_max_batch_size && c.max_batch_size >= 0 && c.max_batch_size <= (1 << 30),
		"max_batch_size");
	require(c.num_preferred <= SRV_MAX_PREFERRED, "preferred count");
	for (uint32_t i = 0; i < c.num_preferred; i++)
		require(c.preferred[i] >= 1 && c.preferred[i] <= (1u << 30), "preferred value");
	require(c.max_queue_delay_us <= 60000000, "queue delay");
	require(c.max_queue_size <= (1u << 24), "queue size");
	require(c.instance_count >= 1 && c.instance_count <= 64, "instance count");
	require(c.policy <= SRV_POLICY_SPECIFIC, "policy");
	require(c.latest_n >= 1 && c.latest_n <= SRV_MAX_VERSIONS, "latest_n");
	require(c.num_versions <= SRV_MAX_VERSIONS, "versions");
	for (uint32_t i = 0; i < c.num_versions; i++)
		require(c.versions[i] >= 0, "version value");
	require(c.policy != SRV_POLICY_SPECIFIC || c.num_versions > 0, "specific without versions");
	check_tensors(c.inputs, c.num_inputs);
	check_tensors(c.outputs, c.num_outputs);
	require(memchr(c.model_filename, 0, sizeof(c.model_filename)) && !strchr(c.model_filename, '/') &&
		c.model_filename[0] != '.', "model file name");
	require(!c.has_timeout || c.timeout_ns <= 86400000000000ull, "timeout");
	require(c.synchronous >= -1 && c.synchronous <= 1, "synchronous");
	return 0;
}
