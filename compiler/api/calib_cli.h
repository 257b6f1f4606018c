/* SPDX-License-Identifier: MIT */
/*
 * calib_cli.h - ipu-compile's calibration options: the float32 reference
 * graph and the samples (--calibration-with-data, or seeded random ones),
 * the statistics, and the --precision-compare report.
 */
#ifndef IPU_API_CALIB_CLI_H
#define IPU_API_CALIB_CLI_H

#include <stdio.h>

#include "calib/calib.h"
#include "ipu/lower.h"
#include "ipu/passes.h"
#include "options.h"

struct ipuc_calib_state {
	struct ir_graph *g32;		/* the model optimised in float32 */
	struct ipu_calib *calib;	/* statistics (data given), holds the samples */
	struct ipu_calib_samples samples;	/* when there are no statistics */
};

/* What calibration gives the fp8 pass: with data, one input scale for
 * every layer input (unless --fp8_params fixes it) and the sensitivity
 * ranking --num_of_layers_keep_fp16 uses; the pass options as the
 * executable gets them (the report converts its graph with the same). */
struct ipuc_calib_fp8 {
	int active;			/* an fp8 precision is compiled */
	struct ir_fp8_opts f8;
	int input_scale_from_data;
	int ranked;
	struct ipu_calib_ranking rank[IPUC_MAX_MODELS];
	int nrank;
	/* fp8 with data: each layer's activation scale, by node name */
	struct ipu_calib_ranking scales[IPUC_MAX_MODELS];
	int nscales;
	/* --fp8-auto-skip: the choice (of the first model with data) and
	 * the skip list it makes with --fp8-skip-op-names' names */
	int auto_skip;
	struct ipu_calib_auto_skip chosen;
	const char **skip;
	int nskip;
};

/* The --fp8-auto-skip choice for people: which layers stay fp16, the
 * error reached, as a ready --fp8-skip-op-names list (nothing if the
 * option is not given). */
void ipuc_calib_fp8_print_auto_skip(const struct ipuc_options *o,
				    const struct ipuc_calib_fp8 *cf, FILE *f);

/* Fills cf for the models' precisions (after every model was compiled;
 * st[i] from ipuc_calib_prepare, or empty; graphs[i] the models after the
 * front end and t the target, which --fp8-auto-skip lowers to size its
 * choices).  log: -v messages or NULL. */
int ipuc_calib_fp8_prepare(const struct ipuc_options *o, const struct ipuc_model *models,
			   int n, const struct ipuc_calib_state *st, struct ir_graph *const *graphs,
			   const struct ipu_target *t,
			   struct ipuc_calib_fp8 *cf, FILE *log, struct ir_error *e);
/* The calibrated input scales and ranking into the pass options f8. */
void ipuc_calib_fp8_apply(const struct ipuc_calib_fp8 *cf, struct ir_fp8_opts *f8);
void ipuc_calib_fp8_free(struct ipuc_calib_fp8 *cf);

/* 1 if the options ask for calibration or the report. */
int ipuc_calib_wanted(const struct ipuc_options *o);
/* Runs the front end in float32 on the model at path (po: the options of
 * the real compilation; cfgdir: the config file's folder, paths in the
 * options are relative to it), then reads the samples and, with data, collects
 * the statistics. */
int ipuc_calib_prepare(const struct ipuc_options *o, const struct ipuc_model *m, const char *path,
		       const struct ir_pipeline_opts *po, const char *cfgdir,
		       struct ipuc_calib_state *st, struct ir_error *e);
/* The report of model `index` of `n` (g: after the front end's precision
 * passes; an fp8 precision is compared after the lowering's rewrites and
 * the fp8 pass with cf's options, as the executable computes it): the
 * table on f, the JSON file if asked. */
int ipuc_calib_report(const struct ipuc_options *o, const struct ipuc_calib_state *st,
		      const struct ir_graph *g, const char *precision, int index, int n,
		      const char *cfgdir, const struct ipu_target *t,
		      const struct ipuc_calib_fp8 *cf, FILE *f, struct ir_error *e);
/* A path of the options relative to the config file's folder (cfgdir
 * NULL or empty: as given); malloc'd, NULL if out of memory. */
char *ipuc_calib_path(const char *cfgdir, const char *path);
void ipuc_calib_state_free(struct ipuc_calib_state *st);

#endif
