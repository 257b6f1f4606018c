/* SPDX-License-Identifier: MIT */
/*
 * test_op_registry.c - invariants of the operator registry (ops/ops.def):
 * the binary search needs unique names in strcmp order, every operator
 * needs shape inference and an evaluator (constant folding and --check
 * use them for anything they meet), every name is an operator of ONNX's
 * own schemas with an arity they allow (and older versions where it has
 * an upgrade from them), and the lowering's hooks agree
 * with what --list-ops reports.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "eval/eval.h"
#include "harness.h"
#include "ipu/lower.h"
#include "lower/lower_internal.h"
#include "onnx/onnx_attr_schema.h"
#include "ops/registry.h"

/* The lowering's hooks of an operator named `op`, found as the lowering
 * finds them: through the id a node of that operator carries. */
static const struct lw_op_hooks *lw_op_hooks(const char *op)
{
	const struct ir_op_desc *d = ir_op_lookup(op);
	struct ir_node n = { .op = (char *)op, .opid = d ? (int)d->id : IR_OP_COUNT };

	return lw_node_hooks(&n);
}

TEST(sorted_unique_and_found)
{
	int n;
	const struct ir_op_desc *t = ir_op_table(&n);

	CHECK_EQ_INT(n, IR_OP_COUNT);
	CHECK(n > 100);
	for (int i = 0; i < n; i++) {
		CHECK_MSG(t[i].id == (enum ir_op_id)i, "%s has id %d at %d", t[i].name, t[i].id, i);
		if (i)
			CHECK_MSG(strcmp(t[i - 1].name, t[i].name) < 0,
				  "%s and %s are not in strcmp order (or not unique)",
				  t[i - 1].name, t[i].name);
		CHECK_MSG(ir_op_lookup(t[i].name) == &t[i], "lookup of %s", t[i].name);
	}
}

TEST(unknown_names_not_found)
{
	static const char *const none[] = {
		"", "abs", "Ab", "Absx", "ABS", "Constant", "Upsample", "SequenceAt", "Zzz", " Add",
	};

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		CHECK_MSG(!ir_op_lookup(none[i]) && !ir_op_supported(none[i]), "'%s' found", none[i]);
	CHECK(!ir_op_lookup(NULL));
}

TEST(every_op_infers_and_evaluates)
{
	int n;
	const struct ir_op_desc *t = ir_op_table(&n);

	for (int i = 0; i < n; i++) {
		CHECK_MSG(t[i].infer, "%s has no shape inference", t[i].name);
		CHECK_MSG(t[i].eval && ir_eval_supported(t[i].name), "%s has no evaluator", t[i].name);
		CHECK_MSG(t[i].min_in >= 0 && t[i].min_in <= t[i].max_in, "%s takes %d to %d inputs",
			  t[i].name, t[i].min_in, t[i].max_in);
		/* the legacy conversion rewrites exactly two operands */
		CHECK_MSG(!(t[i].flags & IR_OP_LEGACY_BCAST) || (t[i].min_in == 2 && t[i].max_in == 2),
			  "%s has legacy broadcasting but takes %d to %d inputs",
			  t[i].name, t[i].min_in, t[i].max_in);
		CHECK_MSG(ir_op_has(t[i].name, t[i].flags) && (!t[i].flags || !ir_op_has(t[i].name, ~0u)),
			  "ir_op_has disagrees with the flags of %s", t[i].name);
	}
}

/* The versions of `op` in ONNX's schemas: inputs they allow at least and
 * at most; 0 if ONNX has no such operator. */
static int schema_inputs(const char *op, int *lo, int *hi, int *versions)
{
	int found = 0;

	*versions = 0;
	*lo = INT_MAX;
	*hi = 0;
	for (unsigned i = 0; i < onnx_op_version_count; i++) {
		const struct onnx_op_version *v = &onnx_op_versions[i];

		if (strcmp(v->op, op))
			continue;
		found = 1;
		++*versions;
		if (v->min_inputs < *lo)
			*lo = v->min_inputs;
		if (v->max_inputs > *hi)
			*hi = v->max_inputs;
	}
	return found;
}

TEST(names_and_arity_are_onnx)
{
	int n;
	const struct ir_op_desc *t = ir_op_table(&n);

	for (int i = 0; i < n; i++) {
		int lo, hi, versions;

		if (!schema_inputs(t[i].name, &lo, &hi, &versions)) {
			/* Gelu came with opset 20, after the installed schemas */
			CHECK_MSG(!strcmp(t[i].name, "Gelu"),
				  "%s is not an operator of the default ONNX domain", t[i].name);
			continue;
		}
		/* an upgrade from an older opset needs an older version */
		CHECK_MSG(!t[i].upgrade || versions > 1,
			  "%s has an upgrade hook but one version", t[i].name);
		/* the internal form may take one more input than the versions
		 * installed: reductions get their axes attribute as an input
		 * (normalize.c, as opset 18 has it), Pad its opset 18 axes */
		if (!strncmp(t[i].name, "Reduce", 6) || !strcmp(t[i].name, "Pad"))
			hi = hi > 1 ? hi + 1 : 2;
		/* control flow: the outer values its subgraphs read follow the
		 * node's own inputs (up to 1024 in all), and a Loop whose
		 * trip count and condition are both omitted has none */
		if (!strcmp(t[i].name, "If") || !strcmp(t[i].name, "Loop") || !strcmp(t[i].name, "Scan")) {
			hi = 1024;
			if (!strcmp(t[i].name, "Loop"))
				lo = 0;
		}
		CHECK_MSG(t[i].min_in >= lo && t[i].min_in <= hi && t[i].max_in <= hi,
			  "%s: the registry takes %d to %d inputs, ONNX's versions %d to %d",
			  t[i].name, t[i].min_in, t[i].max_in, lo, hi);
	}
}

TEST(lowering_hooks_agree)
{
	int n, lowered = 0;
	const struct ir_op_desc *t = ir_op_table(&n);

	for (int i = 0; i < n; i++) {
		const struct lw_op_hooks *h = lw_op_hooks(t[i].name);
		int folded = !!(t[i].flags & (IR_OP_SHAPE_ONLY | IR_OP_CONST_OUT));

		if (!h) {
			CHECK_MSG(0, "%s has no lowering hooks entry", t[i].name);
			continue;
		}
		/* folded before the lowering: a lower hook would never run */
		CHECK_MSG(!(folded && h->lower), "%s is always folded but has a lower hook", t[i].name);
		CHECK_MSG(ipu_lower_supported(t[i].name) == (h->lower || h->prepare || h->decompose || folded),
			  "--list-ops disagrees with the hooks of %s", t[i].name);
		lowered += ipu_lower_supported(t[i].name);
	}
	CHECK(!lw_op_hooks("Upsample") && !ipu_lower_supported("Upsample"));
	/* each op reaches its own lowering; shared ones only where the device
	 * operation code alone differs */
	CHECK(lw_op_hooks("Relu")->lower == lw_unary);
	CHECK(lw_op_hooks("Add")->lower == lw_binary);
	CHECK(lw_op_hooks("Conv")->lower == lw_conv);
	CHECK(lw_op_hooks("MatMul")->lower == lw_matmul);
	CHECK(lw_op_hooks("Softmax")->lower == lw_softmax);
	CHECK(lw_op_hooks("LogSoftmax")->lower == lw_log_softmax);
	CHECK(lw_op_hooks("ReduceMean")->lower == lw_reduce);
	CHECK(lw_op_hooks("Transpose")->lower == lw_transpose);
	CHECK(lw_op_hooks("MaxPool")->lower == lw_max_pool);
	CHECK(lw_op_hooks("AveragePool")->lower == lw_average_pool);
	CHECK(lw_op_hooks("Concat")->lower == lw_concat && lw_op_hooks("Split")->lower == lw_split);
	CHECK(lowered > 90);
}

/* What the front end rewrites into must be known to it. */
/* A node's id is set where its op is: when it is added, inserted or
 * renamed, and a custom or unknown op has none. */
TEST(node_ids_follow_op)
{
	struct ir_error e = { 0 };
	struct ir_graph *g = ir_graph_new(&e);
	int x, y, z, a, b, c;

	CHECK(g != NULL);
	if (!g)
		return;
	x = ir_value_add(g, "x", &e);
	y = ir_value_add(g, "y", &e);
	z = ir_value_add(g, "z", &e);
	CHECK(x >= 0 && y >= 0 && z >= 0);
	a = ir_node_add(g, "a", "Relu", &x, 1, &y, 1, &e);
	b = ir_node_add(g, "b", "Upsample", &y, 1, &z, 1, &e);
	c = ir_node_insert(g, 0, "c", "com.example::Thing", &x, 1, &z, 1, &e);
	CHECK(a == 0 && b == 1 && c == 0);
	/* the insert shifted a and b by one */
	CHECK_EQ_INT(g->nodes[1].opid, IR_OP_Relu);
	CHECK_EQ_INT(g->nodes[2].opid, IR_OP_COUNT);
	CHECK_EQ_INT(g->nodes[0].opid, IR_OP_COUNT);
	CHECK(ir_node_set_op(&g->nodes[1], "Sigmoid", &e) == 0);
	CHECK_EQ_INT(g->nodes[1].opid, IR_OP_Sigmoid);
	CHECK(ir_node_desc(&g->nodes[1]) == ir_op_lookup("Sigmoid"));
	CHECK(ir_node_set_op(&g->nodes[1], "NoSuchOp", &e) == 0);
	CHECK(ir_node_desc(&g->nodes[1]) == NULL && lw_node_hooks(&g->nodes[1]) == NULL);
	ir_graph_free(g);
}

TEST(rewrite_targets_known)
{
	static const char *const made[] = {
		/* prepare*.c and prepare_decompose.c build from these */
		"Add", "Sub", "Mul", "Div", "MatMul", "Transpose", "Identity", "Cast", "Not",
		"Equal", "Where", "Reshape", "Slice", "Gather", "Concat", "ReduceSum",
		"ReduceMean", "Sqrt", "Reciprocal", "Log", "Exp", "Neg", "Abs", "Max", "Min",
		"Less", "Greater", "Xor", "And", "Unsqueeze", "ArgMax", "Sigmoid", "Tanh",
		"Relu", "Conv", "Sin", "Cos", "Pow", "Mod",
	};

	/* normalize.c: Upsample and Resize of opsets below 11 */
	CHECK(ir_op_supported("Resize") && ipu_lower_supported("Resize"));
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		const struct lw_op_hooks *h = lw_op_hooks(made[i]);

		CHECK_MSG(h && h->lower, "%s is made by a rewrite but has no lower hook", made[i]);
	}
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(sorted_unique_and_found);
	RUN(unknown_names_not_found);
	RUN(every_op_infers_and_evaluates);
	RUN(names_and_arity_are_onnx);
	RUN(lowering_hooks_agree);
	RUN(node_ids_follow_op);
	RUN(rewrite_targets_known);
	return TH_DONE();
}
