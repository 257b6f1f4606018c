/* SPDX-License-Identifier: MIT */
/*
 * control.h - If, Loop and Scan: the subgraphs the importer keeps in their
 * GRAPH attributes (struct ir_attr.g), read by shape inference
 * (infer_control.c), the reference evaluator (eval/eval_control.c) and
 * the expansion into the outer graph (control.c).
 *
 * A control-flow node's inputs are its ONNX inputs, then the outer values
 * its subgraphs read (attribute `captures` counts them); every subgraph's
 * inputs are its ONNX formal inputs followed by the same outer values.
 */
#ifndef IPU_IR_CONTROL_H
#define IPU_IR_CONTROL_H

#include "ipu/ir.h"

/* Largest Loop trip count or Scan length the reference evaluator runs. */
#define IR_CF_MAX_TRIPS 100000
/* Most nodes one expansion may add to the outer graph (body nodes times
 * iterations): beyond it a Loop or Scan stays one node. */
#define IR_CF_MAX_UNROLL_NODES 4096
/* No expansion makes a graph of more nodes than this (nested and repeated
 * control flow): the rest stays as control-flow nodes. */
#define IR_CF_MAX_GRAPH_NODES 65536

/* Most scan inputs and scan outputs of one Scan. */
#define IR_CF_MAX_IO 64

/* A Scan node's layout (ir_scan_layout). */
struct ir_scan {
	struct ir_graph *body;
	int n, m, k, nc;	/* states, scan inputs, scan outputs, outer values */
	int64_t len;		/* steps */
	int in_axis[IR_CF_MAX_IO], in_rev[IR_CF_MAX_IO];
	int64_t out_axis[IR_CF_MAX_IO];	/* normalised by ir_infer_scan */
	int out_rev[IR_CF_MAX_IO];
};
int ir_scan_layout(struct ir_graph *g, const struct ir_node *n, struct ir_scan *s,
		   struct ir_error *e);

/* The subgraph in attribute `name` of n, or NULL. */
struct ir_graph *ir_cf_sub(const struct ir_node *n, const char *name);
/* The number of outer values n's subgraphs read (attribute captures). */
int ir_cf_captures(const struct ir_node *n);
/* Does the Loop body pass its condition through unchanged (the condition
 * input, through Identity, or a constant true)?  Needs an inferred body. */
int ir_cf_cond_passes(struct ir_graph *body);
/* Number of live nodes of a graph, its subgraphs' included. */
int ir_cf_live_nodes(const struct ir_graph *g);
/* How many Loops and Scans nest inside g's subgraphs at most (0: none). */
int ir_cf_loop_depth(const struct ir_graph *g);
/* Binds subgraph input k to the type and shape of v (with_data: and its
 * data, when v is a constant: an outer value a subgraph reads, never a
 * value that changes from one iteration to the next), checking a declared
 * type. */
int ir_cf_bind(struct ir_graph *sub, int k, const struct ir_value *v, int with_data, struct ir_error *e);
/* Infers a subgraph (its inputs bound); messages name node n. */
int ir_cf_infer_sub(struct ir_graph *g, const struct ir_node *n, struct ir_graph *sub,
		    const char *what, struct ir_error *e);

/*
 * Expands control-flow node `idx` into plain nodes inserted before it when
 * that is static.  Before the node is inferred (inferred 0; its inputs
 * are): an If with a constant condition becomes its branch, a Loop with a
 * constant trip count whose body passes the condition through and a Scan
 * are unrolled when the copies stay within IR_CF_MAX_UNROLL_NODES (each
 * copy sees its iteration number as a constant).  After (inferred 1): an
 * If on a run-time condition becomes both branches and a Where per
 * output.  Returns 1 if it expanded (the node is dead, its outputs written
 * by the inserted nodes), 0 if the node stays, -1 on error.  With log (a
 * FILE *), says how it expanded.
 */
int ir_cf_expand(struct ir_graph *g, int idx, int inferred, void *log, struct ir_error *e);

#endif /* IPU_IR_CONTROL_H */
