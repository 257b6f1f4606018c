/* SPDX-License-Identifier: MIT */
/*
 * onnx_node_runner.h - runs one ONNX backend node test directory
 * (model.onnx + test_data_set_0/{input,output}_N.pb) through import,
 * normalisation, shape inference and constant folding with the reference
 * evaluator, and classifies the outcome.
 */
#ifndef IPU_ONNX_NODE_RUNNER_H
#define IPU_ONNX_NODE_RUNNER_H

#include "ipu/ir.h"

enum node_result {
	NODE_PASS = 0,		/* shapes and values match */
	NODE_UNSUPPORTED = 1,	/* clean error from import/inference/eval */
	NODE_WRONG_SHAPE = 2,	/* inferred type/shape differs */
	NODE_WRONG_VALUE = 3,	/* folded values differ */
	NODE_NO_DATA = 4,	/* test data missing or unreadable */
};

struct node_outcome {
	enum node_result result;
	int shape_ok;		/* inference matched every output */
	int old_opset;		/* the model's opset is < 7 (converted) */
	int frozen;		/* shape inputs had to be frozen as constants */
	char msg[IR_ERROR_LEN];
};

void run_node_test(const char *dir, struct node_outcome *o);
struct ipu_target;
/* Compiles the test for target t, runs it on the in-process device and
 * compares with the expected outputs. */
void run_node_test_device(const char *dir, const struct ipu_target *t,
			  struct node_outcome *o);
const char *node_result_name(enum node_result r);

/*
 * The entries of folder `dir` (dot-files left out) sorted by name, as
 * malloc'ed strings in a malloc'ed array (free each, then the array).
 * Returns the count, or -1 if the folder cannot be opened or memory runs
 * out (nothing is left allocated then).
 */
long node_list_dir(const char *dir, char ***names);

#endif
