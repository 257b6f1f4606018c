/* SPDX-License-Identifier: MIT */
/*
 * calib_cli.h - ipu-compile's calibration options: the float32 reference
 * graph and the samples (--calibration-with-data, or seeded random ones),
 * the statistics, and the --precision-compare report.
 */
#ifndef IPU_CLI_CALIB_CLI_H
#define IPU_CLI_CALIB_CLI_H

#include <stdio.h>

#include "calib/calib.h"
#include "ipu/passes.h"
#include "options.h"

struct ipuc_calib_state {
	struct ir_graph *g32;		/* the model optimised in float32 */
	struct ipu_calib *calib;	/* statistics (data given), holds the samples */
	struct ipu_calib_samples samples;	/* when there are no statistics */
};

/* 1 if the options ask for calibration or the report. */
int ipuc_calib_wanted(const struct ipuc_options *o);
/* Runs the front end in float32 on the model at path (po: the options of
 * the real compilation; cfgdir: the config file's folder, paths in the
 * options are relative to it), then reads the samples and, with data, collects
 * the statistics. */
int ipuc_calib_prepare(const struct ipuc_options *o, const char *path,
		       const struct ir_pipeline_opts *po, const char *cfgdir,
		       struct ipuc_calib_state *st, struct ir_error *e);
/* The report of model `index` of `n` (g: after the precision passes):
 * the table on f, the JSON file if asked. */
int ipuc_calib_report(const struct ipuc_options *o, const struct ipuc_calib_state *st,
		      const struct ir_graph *g, const char *precision, int index, int n,
		      const char *cfgdir, FILE *f, struct ir_error *e);
/* A path of the options relative to the config file's folder (cfgdir
 * NULL or empty: as given); malloc'd, NULL if out of memory. */
char *ipuc_calib_path(const char *cfgdir, const char *path);
void ipuc_calib_state_free(struct ipuc_calib_state *st);

#endif
