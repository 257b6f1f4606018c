/* SPDX-License-Identifier: MIT */
/* api_internal.h - what the files of ipu_compile() share. */
#ifndef IPU_API_INTERNAL_H
#define IPU_API_INTERNAL_H

#include <stdio.h>

#include "ipu/compiler.h"
#include "ipu/graph.h"
#include "ipu/ir.h"
#include "options.h"

/* A result and everything it points to: one allocation list. */
struct ipuc_result {
	struct ipu_compile_result pub;
	struct ipuc_alloc *allocs;
	struct ipu_compile_model_summary models[IPUC_MAX_MODELS];
	struct ipu_compile_diagnostic *diags;
	size_t ndiags, capdiags;
};

/* Memory owned by the result (freed with it); NULL if out of memory. */
void *ipuc_result_alloc(struct ipuc_result *r, size_t size);
char *ipuc_result_strdup(struct ipuc_result *r, const char *s);
/* Adds a diagnostic; the node and operator are taken from a message that
 * names them ("node 'NAME' (OP, #i): ...").  -1 if out of memory. */
int ipuc_result_diag(struct ipuc_result *r, enum ipu_compile_severity sev, int model,
		     const char *msg);
/* Model k's summary from its graph after the front end. */
struct ir_qdq_stats;
int ipuc_result_model(struct ipuc_result *r, int k, const char *path, const char *precision,
		      const struct ir_graph *g, const struct ir_qdq_stats *qdq);
struct ipu_target;
/* The model split over o->num_ipus IPUs as a group .ipuef (split.c). */
int ipuc_lower_split(const struct ipuc_options *o, int nmodels, const struct ir_graph *g,
		     const struct ipu_target *t, void **image, size_t *len,
		     struct ipu_graph_stats *st, struct ir_error *e);
void ipuc_result_stats(struct ipuc_result *r, const struct ipu_graph_stats *s, uint32_t tiles,
		       uint64_t file_bytes);

/* A FILE whose lines go to the options' message callback (kind); writes
 * are dropped when there is none.  With r, each "ipu-compile: warning: "
 * line is also a warning of r, about model *model.  NULL if out of memory. */
FILE *ipuc_sink_open(const struct ipu_compile_options *o, enum ipu_compile_message_kind kind,
		     struct ipuc_result *r, const int *model);

/* The public options into the pipeline's (every value checked with the
 * setters ipu-compile's own parsing uses).  -1 with e set. */
int ipuc_options_from_public(const struct ipu_compile_options *po, struct ipuc_options *o,
			     struct ir_error *e);

#endif
