/* SPDX-License-Identifier: MIT */
/*
 * partition.h - splitting a model over several IPUs (sharding): the graph
 * is cut into stages that are contiguous in its node order, one stage per
 * IPU, and each stage becomes a graph of its own whose inputs are the
 * model's inputs it reads and the tensors earlier stages make (the link
 * transfers), and whose outputs are the model's outputs it makes and the
 * tensors later stages read.  Each stage is then lowered for its own IPU
 * like any one-IPU model.  Documentation/compiler/sharding.md.
 *
 * The graph given is the optimised one (after ir_pipeline_run: shapes
 * known, nodes in topological order).
 */
#ifndef IPU_PARTITION_H
#define IPU_PARTITION_H

#include <stdint.h>

#include "ipu/ir.h"
#include "ipu/lower.h"

#define IPU_PARTITION_MAX_IPUS 64

/*
 * A split into nstages stages: stage s holds the nodes at positions
 * first[s] .. first[s + 1] - 1 (first[0] = 0, first[nstages] = the node
 * count, every stage at least one node).
 */
struct ipu_partition {
	int nstages;
	int first[IPU_PARTITION_MAX_IPUS + 1];
};

/* What the automatic split estimates per stage (also for a manual one). */
struct ipu_stage_estimate {
	uint64_t bytes;		/* its constants + twice its largest value */
	uint64_t work;		/* modelled work: multiply-adds + elements */
};

/*
 * The automatic split over nstages IPUs of target t: the cuts that make
 * the largest stage's modelled work smallest while every stage's bytes
 * stay within 3/4 of an IPU's memory (the lowering keeps the rest of each
 * tile for the values live around an op); a refusal names the node that
 * cannot fit even alone, or the IPUs the model would need.
 */
int ipu_partition_auto(const struct ir_graph *g, int nstages, const struct ipu_target *t,
		       struct ipu_partition *p, struct ir_error *e);

/*
 * The split a sharding YAML gives (a list of `node: NAME` / `ipu: K`
 * mappings; a listed node starts IPU K's stage, the others follow the node
 * before them).  IPUs are 0 .. nstages - 1, each used, in increasing order
 * along the graph.  Errors name the file, line and node.
 */
int ipu_partition_yaml(const struct ir_graph *g, const char *path, int nstages,
		       struct ipu_partition *p, struct ir_error *e);

/* The same from YAML text (name is used in messages). */
int ipu_partition_yaml_text(const struct ir_graph *g, const char *text, size_t len,
			    const char *name, int nstages, struct ipu_partition *p,
			    struct ir_error *e);

/* Each stage's estimate (est has p->nstages entries). */
void ipu_partition_estimate(const struct ir_graph *g, const struct ipu_partition *p,
			    struct ipu_stage_estimate *est);

/*
 * Stage s of p as a graph of its own (a deep copy; free with
 * ir_graph_free): the model's inputs it reads, in the model's order, then
 * the values earlier stages make, in value order; the model's outputs it
 * makes, in the model's order, then the values later stages read.  Value
 * names are kept, so an output of stage a and the input of stage b of the
 * same name are one link transfer.  A value several later stages read is
 * an output once per reader (a link has one sender stream): itself for
 * the first, then "<value>@ipu<K>" (an Identity of it) for each later
 * stage K; a model input several stages read is an input of the first
 * only, which outputs "<input>@ipu<K>" for each later reader K.
 */
struct ir_graph *ipu_partition_stage(const struct ir_graph *g, const struct ipu_partition *p,
				     int s, struct ir_error *e);

/*
 * A split model lowered: one executable image per IPU, where the model's
 * inputs and outputs are (IPU and stream), and the link transfers (a
 * stage's output stream to a later stage's input stream of the same name
 * and size), for a group of IPUs (libipu's ipu/group.h) to load.
 */
struct ipu_shard_io {
	uint32_t ipu, stream;
	char *name;
	struct ipuef_anchor anchor;	/* as on its IPU (name is `name`) */
};
struct ipu_shard_link {
	uint32_t src_ipu, src_stream, dst_ipu, dst_stream;
	char *name;
	uint64_t bytes;			/* one transfer */
};
struct ipu_shard {
	uint32_t nipus;
	void *image[IPU_PARTITION_MAX_IPUS];
	size_t len[IPU_PARTITION_MAX_IPUS];
	uint32_t nstreams[IPU_PARTITION_MAX_IPUS];	/* each image's */
	uint32_t batch_size;		/* as a one-IPU model of target t */
	/* The fullest IPU's tiles and memory; compute sets, vertices,
	 * exchanges, streams and image bytes summed over the IPUs. */
	struct ipu_graph_stats stats;
	struct ipu_shard_io *inputs, *outputs;
	uint32_t ninputs, noutputs;
	struct ipu_shard_link *links;
	uint32_t nlinks;
};

/* Lowers every stage of p for its own IPU of target t.  0, or -1 with e
 * set (naming the stage); free with ipu_shard_free either way. */
int ipu_shard_lower(const struct ir_graph *g, const struct ipu_partition *p,
		    const struct ipu_target *t, struct ipu_shard *s, struct ir_error *e);
void ipu_shard_free(struct ipu_shard *s);

/*
 * The group .ipuef of a lowered split (Metadata version 3 with the group
 * table; runtime/include/ipu/ipuef.h): IPU k's image as the k-th
 * Executable, the model's inputs and outputs as anchors on the IPUs
 * serving them, each link named "link:<tensor>" ("link:<tensor>@ipu<K>"
 * for the copy of a tensor several IPUs read going to IPU K).  pipelined and
 * micro_batches are recorded in the group table.  *out is malloc'd.
 * 0, or -1 with e set.
 */
int ipu_shard_write_mem(const struct ipu_shard *s, const struct ipu_target *t, int pipelined,
			uint32_t micro_batches, void **out, size_t *out_len, struct ir_error *e);

#endif /* IPU_PARTITION_H */
