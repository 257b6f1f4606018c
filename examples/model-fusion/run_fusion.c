/* SPDX-License-Identifier: MIT */
/*
 * run_fusion.c - the model-fusion example's run.py in C: run the fused model that
 * ipu-compile made from config.yaml through the ModelRunner API and check
 * the seed's asserted outputs.
 *
 *   run-fusion [EXECUTABLE.ipuef] [DEVICE]
 *
 * EXECUTABLE defaults to ./executable.ipuef; DEVICE to none, as in run.py:
 * the in-process device is then made to match the model (config.yaml
 * compiles for ipu_version 'ipu21').  As in run.py: timeout_ns 0,
 * validate_io_params off (a request gives one subgraph's tensors; the
 * runner fills the `index` input from the anchors' graphK/ prefix).
 * Prints one line per assert and exits 0 when all hold: the seed's two
 * asserts (twice, switching subgraphs), then `index` given explicitly, and
 * the seed's warning that validate_io_params on makes a one-subgraph
 * request fail.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ipu/half.h"
#include "ipu/runtime.h"

static int check_graph0(struct ipurt_runner *r)
{
	/* g0_X = ones([1,2]), g0_Y = 2 * ones([1,2]), g0_O = zeros([2]) */
	float x[2] = { 1.0f, 1.0f }, y[2] = { 2.0f, 2.0f }, o[2] = { 0.0f, 0.0f };
	struct ipurt_tensor in[2] = {
		{ "graph0/X", IPURT_DT_F32, 2, { 1, 2 }, x },
		{ "graph0/Y", IPURT_DT_F32, 2, { 1, 2 }, y },
	};
	struct ipurt_tensor out[1] = { { "graph0/O", IPURT_DT_F32, 1, { 2 }, o } };
	char err[512];
	int rc;

	rc = ipurt_runner_execute(r, in, 2, out, 1, err, sizeof(err));
	if (rc) {
		printf("not ok - graph0: execute failed: %s (%s)\n", err, ipu_err_name(rc));
		return 1;
	}
	/* npt.assert_array_equal(g0_O, np.ones([2]) * 3) */
	if (o[0] != 3.0f || o[1] != 3.0f) {
		printf("not ok - graph0/O == [3, 3]: got [%g, %g]\n", o[0], o[1]);
		return 1;
	}
	printf("ok - graph0/O == [3, 3] (f32): [%g, %g]\n", o[0], o[1]);
	return 0;
}

static int check_graph1(struct ipurt_runner *r)
{
	/* g1_X = zeros([1,1], f16), g1_O = zeros([1,3], f16) */
	uint16_t x[1] = { ipu_f32_to_f16(0.0f) }, o[3] = { 0x7e00, 0x7e00, 0x7e00 };
	const float want[3] = { 0.0f, 1.5f, 2.0f };
	struct ipurt_tensor in[1] = { { "graph1/X", IPURT_DT_F16, 2, { 1, 1 }, x } };
	struct ipurt_tensor out[1] = { { "graph1/O", IPURT_DT_F16, 2, { 1, 3 }, o } };
	char err[512];
	int rc, i, bad = 0;

	rc = ipurt_runner_execute(r, in, 1, out, 1, err, sizeof(err));
	if (rc) {
		printf("not ok - graph1: execute failed: %s (%s)\n", err, ipu_err_name(rc));
		return 1;
	}
	/* npt.assert_array_equal(g1_O, [[0.0, 1.5, 2.0]] as f16): exact bits */
	for (i = 0; i < 3; i++)
		if (o[i] != ipu_f32_to_f16(want[i]))
			bad = 1;
	printf("%s - graph1/O == [0, 1.5, 2] (f16): [%g, %g, %g] (bits %04x %04x %04x)\n",
	       bad ? "not ok" : "ok", ipu_f16_to_f32(o[0]), ipu_f16_to_f32(o[1]),
	       ipu_f16_to_f32(o[2]), o[0], o[1], o[2]);
	return bad;
}

/* The seed: "If index is not specified, PopRT Runtime will fill it
 * automatically".  Here it is given: index = 1 with graph1's tensors. */
static int check_explicit_index(struct ipurt_runner *r)
{
	int32_t index = 1;
	uint16_t x[1] = { ipu_f32_to_f16(0.0f) }, o[3] = { 0, 0, 0 };
	struct ipurt_tensor in[2] = {
		{ "index", IPURT_DT_I32, 1, { 1 }, &index },
		{ "graph1/X", IPURT_DT_F16, 2, { 1, 1 }, x },
	};
	struct ipurt_tensor out[1] = { { "graph1/O", IPURT_DT_F16, 2, { 1, 3 }, o } };
	char err[512];
	int rc;

	rc = ipurt_runner_execute(r, in, 2, out, 1, err, sizeof(err));
	if (rc) {
		printf("not ok - index = 1 given: execute failed: %s (%s)\n", err, ipu_err_name(rc));
		return 1;
	}
	if (ipu_f16_to_f32(o[0]) != 0.0f || ipu_f16_to_f32(o[1]) != 1.5f ||
	    ipu_f16_to_f32(o[2]) != 2.0f) {
		printf("not ok - index = 1 given: graph1/O = [%g, %g, %g]\n", ipu_f16_to_f32(o[0]),
		       ipu_f16_to_f32(o[1]), ipu_f16_to_f32(o[2]));
		return 1;
	}
	printf("ok - index = 1 given explicitly: graph1/O == [0, 1.5, 2]\n");
	return 0;
}

/* The seed: "be sure to set validate_io_params to False ... Setting this
 * parameter to True will cause errors": a request with graph0's tensors
 * only is refused, naming what is missing. */
static int check_validate_on(const char *path, const char *device)
{
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	float x[2] = { 1.0f, 1.0f }, y[2] = { 2.0f, 2.0f }, o[2] = { 0.0f, 0.0f };
	struct ipurt_tensor in[2] = {
		{ "graph0/X", IPURT_DT_F32, 2, { 1, 2 }, x },
		{ "graph0/Y", IPURT_DT_F32, 2, { 1, 2 }, y },
	};
	struct ipurt_tensor out[1] = { { "graph0/O", IPURT_DT_F32, 1, { 2 }, o } };
	char err[512];
	int rc;

	ipurt_config_init(&cfg);
	cfg.validate_io_params = 1;
	cfg.device = device;
	rc = ipurt_runner_create(path, &cfg, &r, err, sizeof(err));
	if (rc) {
		printf("not ok - validate_io_params on: load failed: %s\n", err);
		return 1;
	}
	rc = ipurt_runner_execute(r, in, 2, out, 1, err, sizeof(err));
	ipurt_runner_destroy(r);
	if (rc == 0) {
		printf("not ok - validate_io_params on: a graph0-only request was accepted\n");
		return 1;
	}
	printf("ok - validate_io_params on refuses a graph0-only request: %s (%s)\n", err,
	       ipu_err_name(rc));
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "executable.ipuef";
	/* no device named: the in-process device follows the model (ipu21) */
	const char *device = argc > 2 && argv[2][0] ? argv[2] : NULL;
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	char err[512];
	int rc, failed = 0, round;

	if (argc > 3 || (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		fprintf(stderr, "usage: run-fusion [EXECUTABLE.ipuef] [DEVICE]\n");
		return 2;
	}
	ipurt_config_init(&cfg);
	cfg.timeout_ns = 0;		/* config.timeout_ns = 0 */
	cfg.validate_io_params = 0;	/* config.validate_io_params = False */
	cfg.device = device;
	rc = ipurt_runner_create(path, &cfg, &r, err, sizeof(err));
	if (rc) {
		printf("not ok - load %s on %s: %s (%s)\n", path, device ? device : "the default device",
		       err, ipu_err_name(rc));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("ok - loaded %s on %s\n", path, device ? device : "the default device (follows the model)");
	/* run.py runs each subgraph once; switch back and forth once more to
	 * show the index selects the subgraph on every request */
	for (round = 0; round < 2; round++) {
		failed += check_graph0(r);
		failed += check_graph1(r);
	}
	failed += check_explicit_index(r);
	ipurt_runner_destroy(r);
	failed += check_validate_on(path, device);
	printf("%d passed, %d failed\n", 7 - failed, failed);
	return failed ? 1 : 0;
}
