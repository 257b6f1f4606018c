/* SPDX-License-Identifier: MIT */
/* pipeline.c - the front end's pass order (Documentation/compiler/guide.md). */
#include <stdio.h>
#include <string.h>

#include "ipu/passes.h"
#include "ops/registry.h"

/* The sanitizer build checks the graph's invariants after every step, so
 * a pass that breaks one fails there and then, naming itself. */
#ifdef __SANITIZE_ADDRESS__
#define VERIFY_STEPS 1
#else
#define VERIFY_STEPS 0
#endif

#define STEP(name, call)                                                    \
	do {                                                                \
		int r_ = (call);                                            \
		if (r_ < 0)                                                 \
			return -1;                                          \
		if (VERIFY_STEPS && verify_step(g, name, typed, e))         \
			return -1;                                          \
		if (o->on_pass)                                             \
			o->on_pass(o->on_pass_ctx, name, r_, live_nodes(g)); \
		else if (o->verbose)                                        \
			fprintf(stderr, "ipu-compile: %-18s %d rewrites, %d nodes\n", \
				name, r_, live_nodes(g));                   \
	} while (0)

static int pipeline(struct ir_graph *g, const struct ir_pipeline_opts *o,
		    struct ir_error *e);

static int verify_step(const struct ir_graph *g, const char *step, unsigned flags,
		       struct ir_error *e)
{
	struct ir_error v;

	if (!ir_verify(g, flags, &v))
		return 0;
	return ir_err(e, "internal error: the graph is broken after the %s step: %s", step, v.msg);
}

static int live_nodes(const struct ir_graph *g)
{
	int n = 0;

	for (int i = 0; i < g->nnodes; i++)
		n += !g->nodes[i].dead;
	return n;
}

/* Softmax-family nodes of opsets < 13 (coerce2d) whose trailing axes
 * after `axis` are all 1 or which reduce the last axis are the opset-13
 * form: drop the internal attribute. */
static int canonical_softmax(struct ir_graph *g, struct ir_error *e)
{
	int n = 0;

	(void)e;
	for (int i = 0; i < g->nnodes; i++) {
		struct ir_node *nd = &g->nodes[i];
		const struct ir_value *x;
		int a, trivial = 1;

		if (nd->dead || !ir_attr_find(nd, "coerce2d"))
			continue;
		x = &g->vals[nd->in[0]];
		a = (int)ir_attr_int(nd, "axis", 1);
		if (a < 0)
			a += x->rank;
		for (int k = a + 1; k < x->rank; k++)
			trivial &= x->dims[k] == 1;
		if (!trivial)
			continue;
		ir_attr_remove(nd, "coerce2d");
		n++;
	}
	return n;
}

/*
 * The model's declared output types against what inference found: a model
 * that says one thing and computes another is refused, naming the output.
 * Dimensions are compared only when the user fixed no shape (--input-shape
 * and --batch-size legitimately change them).
 */
static int check_declared_outputs(struct ir_graph *g, const struct ir_infer_opts *io,
				  struct ir_error *e)
{
	int dims = !io->nshapes && !io->batch_size;

	if (!g->out_decl)
		return 0;
	for (int i = 0; i < g->noutputs; i++) {
		const struct ir_decl *d = &g->out_decl[i];
		const struct ir_value *v = &g->vals[g->outputs[i]];

		if (d->dtype != IR_UNDEFINED && v->dtype != IR_UNDEFINED && d->dtype != v->dtype)
			return ir_err(e, "graph output '%s' is declared %s but computes %s", v->name,
				      ir_dtype_name(d->dtype), ir_dtype_name(v->dtype));
		if (d->rank < 0 || v->rank < 0)
			continue;
		if (d->rank != v->rank)
			return ir_err(e, "graph output '%s' is declared with rank %d but computes rank %d",
				      v->name, d->rank, v->rank);
		for (int k = 0; dims && k < d->rank; k++)
			if (d->dims[k] > 0 && v->dims[k] > 0 && d->dims[k] != v->dims[k] &&
			    !(k == 0 && v->bounded && d->dims[k] <= v->dims[k]))	/* a run-time count */
				return ir_err(e, "graph output '%s' is declared with dimension %d = %lld but computes %lld",
					      v->name, k, (long long)d->dims[k], (long long)v->dims[k]);
	}
	return 0;
}

static void count_qdq(const struct ir_graph *g, int *q, int *dq)
{
	*q = *dq = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead) {
			*q += g->nodes[i].opid == IR_OP_QuantizeLinear;
			*dq += g->nodes[i].opid == IR_OP_DequantizeLinear;
		}
}

int ir_pipeline_run(struct ir_graph *g, const struct ir_pipeline_opts *o,
		    struct ir_error *e)
{
	if (o->qdq)
		count_qdq(g, &o->qdq->q, &o->qdq->dq);
	if (pipeline(g, o, e))
		return -1;
	if (o->qdq)
		count_qdq(g, &o->qdq->q_left, &o->qdq->dq_left);
	return 0;
}

static int pipeline(struct ir_graph *g, const struct ir_pipeline_opts *o,
		    struct ir_error *e)
{
	struct ir_infer_opts io = o->infer;
	int64_t limit = io.fold_limit ? io.fold_limit : ((int64_t)64 << 20);

	unsigned typed = 0;

	io.fold = 1;
	STEP("normalize", ir_normalize(g, e));
	typed = IR_VERIFY_TYPED;
	STEP("infer+fold", ir_infer(g, &io, e));
	STEP("declared-outputs", check_declared_outputs(g, &io, e));
	STEP("softmax-form", canonical_softmax(g, e));
	{
		int r = ir_pass_wide_types(g, e);

		if (r < 0)
			return -1;
		if (r)
			STEP("wide-types+infer", ir_infer(g, &io, e) ? -1 : r);
	}
	STEP("identity", ir_pass_identity(g, e));
	if (!o->no_fusion) {
		STEP("fuse-conv-bn", ir_pass_fuse_conv_bn(g, e));
		STEP("fuse-matmul-add", ir_pass_fuse_matmul_add(g, e));
	}
	STEP("fold", ir_pass_fold(g, limit, e));
	STEP("dce", ir_pass_dce(g, e));
	STEP("int64-to-int32", ir_pass_int64_to_int32(g, e));
	if (o->precision_fp16) {
		if (o->fp32_copy && !(*o->fp32_copy = ir_graph_clone(g, e)))
			return -1;
		STEP("fp16", ir_pass_fp16(g, &o->fp16, e));
		STEP("re-infer+fold", ir_infer(g, &io, e));
		STEP("dce", ir_pass_dce(g, e));
	}
	return 0;
}
