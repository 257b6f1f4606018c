/* SPDX-License-Identifier: MIT */
/*
 * options.h - the compiler's options as the pipeline takes them: from
 * ipu_compile()'s (compiler/api/options_public.c), and from ipu-compile's
 * command line and YAML config (compiler/cli/options.h) through the same
 * setters; Documentation/compiler/guide.md describes every option.
 */
#ifndef IPU_API_OPTIONS_H
#define IPU_API_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ir.h"

/* The geometry of ipu2 and ipu21 (GC200, Bow): the default target. */
#define IPU2_TILES 1472u
#define IPU2_TILE_MEM (624u * 1024u)
#define IPUC_MAX_SHAPES 64
#define IPUC_MAX_MODELS 64
#define IPUC_MAX_SKIP 64

/* One model of a fusion (or the single model). */
struct ipuc_model {
	char *input_model;
	struct ir_shape_binding shapes[IPUC_MAX_SHAPES];
	int nshapes;
	char *precision;		/* NULL: the global one */
	/* ipu_compile() only: the model's bytes (input_model then names it
	 * in messages; not owned), where its external data lives, and where
	 * its converted ONNX goes. */
	const void *data;
	size_t size;
	char *base_dir;
	char *export_path;
};

struct ipuc_options {
	struct ipuc_model model;	/* --input-model, --input-shape, --precision */
	struct ipuc_model fusion[IPUC_MAX_MODELS];
	int nfusion;
	char *output;			/* .ipuef path */
	char *output_dir;
	char *output_model;		/* PopRT: converted ONNX name */
	int export_popef;		/* -1 unset */
	char *export_onnx;
	char *report;		/* --report FILE.html */
	char *config_yaml;
	char *ipu_version;		/* "ipu2" / "ipu21" */
	uint32_t tiles;
	uint32_t tile_mem;		/* bytes */
	int64_t max_tensor_size;	/* bytes, -1 unlimited, 0 default */
	int convert_version;		/* opset of the exported ONNX (0: 17) */
	int64_t batch_size;
	int batch_axis;
	char *skip_ops[IPUC_MAX_SKIP];
	int nskip;
	int list_ops, check, json, help, version, verbose, no_fusion;
	int no_memory_reuse;
	char *state;			/* --state as given */
	char *prefill_model;		/* --prefill-model */
	/* calibration and the precision report (compiler/calib/calib.h) */
	char *calibration_data;		/* .npz of arrays named by input */
	int calibration_loss;		/* enum ipu_calib_loss */
	int precision_compare;
	char *precision_compare_json;
	/* --precision fp8 / fp8_weight (fp8_options.c) */
	char *fp8_skip[IPUC_MAX_SKIP];	/* --fp8_skip_op_names */
	int nfp8_skip;
	char *fp8_params;		/* --fp8_params as given */
	int fp8_per_tensor;		/* --fp8-scale per-tensor */
	int keep_fp16;			/* --num_of_layers_keep_fp16 */
	char *fp8_auto_skip;		/* --fp8-auto-skip as given, or NULL */
	double fp8_auto_target, fp8_auto_budget;
	/* a model split over IPUs (sharding.md) */
	uint32_t num_ipus;		/* --num-ipus, 0: one IPU */
	char *sharding_config;		/* --manual-sharding-config */
	int pipelining;			/* --enable-pipelining */
	char *custom_libs;		/* --custom_library_so_paths, ':'-joined */
	/* --freeze NAME=FILE.pb as given: graph inputs made constants
	 * (compiler/cli/freeze.h) */
	char *freeze[IPUC_MAX_SHAPES];
	int nfreeze;
};

void ipuc_options_init(struct ipuc_options *o);
/* --custom-library-so-paths: appends (':' or ',' separated). */
int ipuc_add_custom_libs(struct ipuc_options *o, const char *v, struct ir_error *e);
void ipuc_options_free(struct ipuc_options *o);
/* The model's graph: from its bytes, or the file at path. */
struct ir_graph *ipuc_model_load(const struct ipuc_model *m, const char *path,
				 struct ir_error *e);
/* Replaces *dst by a copy of v. */
int ipuc_setstr(char **dst, const char *v, struct ir_error *e);
/* --ipu-version: sets tiles, tile memory and the version string. */
int ipuc_set_ipu_version(struct ipuc_options *o, const char *v,
			 struct ir_error *e);
/* --target tiles=N,tile-mem=SIZE */
int ipuc_parse_target(struct ipuc_options *o, const char *spec,
		      struct ir_error *e);
/* "624KiB", "1M", "65536" -> bytes */
int ipuc_parse_size(const char *s, uint64_t *out);
/* Adds a NAME=dims binding to a model. */
int ipuc_add_shape(struct ipuc_model *m, const char *spec, struct ir_error *e);
int ipuc_set_precision(char **dst, const char *p, struct ir_error *e);
/* --calibration_loss_type */
int ipuc_set_calibration_loss(struct ipuc_options *o, const char *name,
			      struct ir_error *e);
int ipuc_add_skip_ops(struct ipuc_options *o, const char *list,
		      struct ir_error *e);
/* fp8_options.c: --fp8_skip_op_names (comma-separated node names),
 * --fp8_params, and the pass options they make. */
int ipuc_add_fp8_skip(struct ipuc_options *o, const char *list,
		      struct ir_error *e);
/* --fp8-auto-skip TARGET[,BUDGET]. */
int ipuc_set_fp8_auto_skip(struct ipuc_options *o, const char *v, struct ir_error *e);
/* --fp8-scale per-channel|per-tensor. */
int ipuc_set_fp8_scale(struct ipuc_options *o, const char *v,
		       struct ir_error *e);
int ipuc_set_fp8_params(struct ipuc_options *o, const char *v,
			struct ir_error *e);
struct ir_fp8_opts;
/* precision: "fp8" or "fp8_weight" (anything else: mode off). */
int ipuc_fp8_opts(const struct ipuc_options *o, const char *precision,
		  struct ir_fp8_opts *out, struct ir_error *e);
int ipuc_is_fp8(const char *precision);
#endif /* IPU_API_OPTIONS_H */
