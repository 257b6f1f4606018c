/* SPDX-License-Identifier: MIT */
/*
 * ipu/compiler.h - the compiler as a library (libipucompiler): ONNX models
 * in (files or bytes), an .ipuef executable out (bytes, and a file if
 * asked), with the compile summary and the diagnostics as data.
 *
 *   struct ipu_compile_options o;
 *   struct ipu_compile_model m = { .data = onnx, .size = onnx_len };
 *   struct ipu_compile_result *r;
 *
 *   ipu_compile_options_init(&o);
 *   o.models = &m;
 *   o.num_models = 1;
 *   o.precision = "fp16";
 *   if (ipu_compile(&o, &r) < 0)
 *           fprintf(stderr, "%s\n", r ? r->error : "out of memory");
 *   else
 *           use(r->executable, r->executable_size);
 *   ipu_compile_result_free(r);
 *
 * The library keeps no state between calls: threads may compile at once,
 * each with its own options and result.  The options are those of
 * ipu-compile (Documentation/compiler/guide.md, Documentation/compiler/api.md).
 */
#ifndef IPU_COMPILER_H
#define IPU_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised when a field is appended to ipu_compile_options. */
#define IPU_COMPILE_OPTIONS_VERSION 2	/* 2: num_ipus, manual_sharding_config, enable_pipelining */

/* A static shape given to one graph input (ipu-compile --input-shape). */
struct ipu_compile_shape {
	const char *name;		/* the graph input */
	size_t rank;			/* at most 8 */
	const int64_t *dims;		/* each >= 1 */
};

/* One ONNX model: a file or its bytes (a serialized ModelProto). */
struct ipu_compile_model {
	const char *path;		/* the file; NULL: data and size */
	const void *data;
	size_t size;
	/* Where an in-memory model's external data files are (NULL: such
	 * a model is refused); a file's are beside it. */
	const char *base_dir;
	/* How messages and the summary name an in-memory model (NULL:
	 * "<memory>"). */
	const char *name;
	const struct ipu_compile_shape *input_shapes;
	size_t num_input_shapes;
	const char *precision;		/* NULL: the options' precision */
	/* Write the converted, optimised ONNX model there (NULL: not). */
	const char *export_onnx;
};

/* A pass of the front end has run (progress callback). */
struct ipu_compile_progress {
	int model;			/* index in options.models */
	const char *pass;		/* "normalize", "infer+fold", ..., or
					 * "load", "lower", "write" */
	int rewrites;			/* what the pass changed (-1: not a pass) */
	int nodes;			/* live nodes after it (-1: not a pass) */
};

/* What a message callback is given. */
enum ipu_compile_message_kind {
	IPU_COMPILE_MESSAGE_LOG = 0,	/* warnings, verbose statistics, the
					 * --check lines (ipu-compile's stderr) */
	IPU_COMPILE_MESSAGE_TABLE = 1,	/* the precision report's table
					 * (ipu-compile's stdout) */
	IPU_COMPILE_MESSAGE_NOTE = 2,	/* what the compilation did that a
					 * user should know (a QDQ model's
					 * folding): ipu-compile prints it on
					 * stderr unless --json */
};

struct ipu_compile_options {
	/* sizeof(struct ipu_compile_options) as the caller was built: the
	 * library reads no field beyond it.  Set by ipu_compile_options_init. */
	size_t size;
	const struct ipu_compile_model *models;	/* more than one: model fusion */
	size_t num_models;
	const char *precision;		/* "fp32" (default), "fp16", "fp8", "fp8_weight" */
	int64_t batch_size;		/* 0: as the model says */
	int batch_axis;
	const char *ipu_version;	/* "ipu2" (default) or "ipu21" */
	uint32_t tiles;			/* default 1472 */
	uint32_t tile_mem;		/* bytes per tile, default 624 KiB */
	int64_t max_tensor_size;	/* bytes a constant fold may create:
					 * 0 64 MiB, -1 no limit */
	const char *const *fp16_skip_op_types;	/* op types kept in fp32 */
	size_t num_fp16_skip_op_types;
	const char *const *fp8_skip_op_names;	/* layers kept in fp16 under fp8 */
	size_t num_fp8_skip_op_names;
	const char *fp8_params;		/* "IN,W,INSCALE,WSCALE", NULL: default */
	int num_of_layers_keep_fp16;
	const char *state;		/* "IN=OUT,...", "none", NULL: by name */
	int check;			/* run once on the in-process device and
					 * compare with the reference evaluator */
	int no_fusion;
	int no_memory_reuse;
	int verbose;			/* per-pass statistics as LOG messages */
	const char *calibration_data;	/* .npz of samples named by input */
	const char *calibration_loss_type;	/* NULL: "kld" */
	int precision_compare;		/* the per-layer error table */
	const char *precision_compare_json;
	/* 1 (default): lower to an executable; 0: the front end only (ONNX
	 * export, precision report). */
	int executable;
	/* Also write the .ipuef there (atomically), NULL: memory only. */
	const char *output;
	/* Keep the executable's bytes in the result (default 1; 0 with an
	 * output path saves the copy). */
	int keep_executable;
	int export_opset;		/* opset of export_onnx files, 0: 17 */
	const char *report;		/* an HTML compile report there */
	/* Called after each pass (may be NULL); ctx is callback_ctx. */
	void (*progress)(void *ctx, const struct ipu_compile_progress *p);
	/* Called with each message line, newline included (may be NULL:
	 * the messages are dropped; warnings are diagnostics too). */
	void (*message)(void *ctx, enum ipu_compile_message_kind kind, const char *text);
	void *callback_ctx;
	/* Models bigger than one IPU (Documentation/compiler/sharding.md):
	 * 0 or 1 one IPU; N (2..64) the model split over N IPUs of the
	 * target, one Executable per IPU in a group .ipuef. */
	uint32_t num_ipus;
	/* A YAML list of {node, ipu}: where the stages start (needs
	 * num_ipus); NULL: the split that balances the modelled work. */
	const char *manual_sharding_config;
	/* Recorded in the group table: the IPUs run requests overlapped
	 * (they always do in the runtime, and a request larger than the
	 * compiled batch runs as micro-batches of it, pipelined). */
	int enable_pipelining;
	/* Custom-operator plugins (ipu/custom_op.h, Documentation/compiler/
	 * custom-ops.md), paths separated by ':'; NULL: none.  Native code
	 * run in this process: only the caller chooses it. */
	const char *custom_library_so_paths;
	/* fp8 weight scales: "per-channel" (NULL: the default, one power of
	 * two per output channel) or "per-tensor" (PopRT's one a weight). */
	const char *fp8_scale;
	/* A decoder's prefill: the decode step's module exported with T
	 * tokens a step (Documentation/compiler/generation.md), lowered into
	 * program "prefill" of the same executable over the same state and
	 * weights.  Needs a decode model with state; NULL: none. */
	const char *prefill_model;
	/* fp8 mixed precision from the calibration data: "TARGET" or
	 * "TARGET,BUDGET" keeps in fp16 the layers that bring the model's
	 * output error on the samples to TARGET (max |err| / max |output|),
	 * the executable at most BUDGET (default 0.65) times its size with
	 * every layer in fp16 (Documentation/compiler/fp8.md); NULL: off.
	 * Needs calibration_data; the choice is a NOTE message. */
	const char *fp8_auto_skip;
};

/* One graph input or output. */
struct ipu_compile_anchor {
	const char *name;
	const char *dtype;		/* "float32", "float16", "int32", ... */
	int rank;
	int64_t dims[8];
};

struct ipu_compile_op_count {
	const char *op;
	int count;
};

/* One model after the front end (ipu-compile --json's "models"). */
struct ipu_compile_model_summary {
	const char *model;		/* path, or the in-memory name */
	const char *precision;
	int opset;
	int nodes;
	int constants;
	int64_t constant_bytes;
	const struct ipu_compile_anchor *inputs;
	size_t num_inputs;
	const struct ipu_compile_anchor *outputs;
	size_t num_outputs;
	const struct ipu_compile_op_count *ops;	/* by first appearance */
	size_t num_ops;
	/* A QDQ model's QuantizeLinear/DequantizeLinear nodes, and those left
	 * to compute on the device (the others, weights', were folded). */
	int quantize, quantize_left;
	int dequantize, dequantize_left;
};

/* The executable's figures (ipu-compile --json's "summary"). */
struct ipu_compile_stats {
	uint32_t tiles, tiles_used;
	uint64_t mem_max;		/* bytes on the fullest tile */
	uint32_t mem_max_tile;
	uint64_t mem_mean;		/* over the tiles used */
	uint64_t mem_total;
	int memory_reuse;
	uint64_t mem_max_no_reuse;
	uint32_t mem_max_no_reuse_tile;
	uint64_t mem_total_no_reuse;
	uint32_t compute_sets, vertices, exchanges, copies;
	uint64_t exchange_bytes;
	uint32_t streams;
	uint64_t image_bytes;		/* the executable blob */
	uint64_t file_bytes;		/* the whole .ipuef */
};

struct ipu_compile_summary {
	const char *ipu_version;	/* as the .ipuef records it */
	uint32_t tiles, tile_mem;
	int custom;			/* not that IPU's geometry */
	const struct ipu_compile_model_summary *models;	/* compiled so far */
	size_t num_models;
	int has_stats;			/* an executable was made */
	struct ipu_compile_stats stats;
	int check;			/* -1 not run, 1 matched, 0 differed */
};

enum ipu_compile_severity {
	IPU_COMPILE_WARNING = 1,
	IPU_COMPILE_ERROR = 2,
};

/* A warning or the error, with the node and operator it is about. */
struct ipu_compile_diagnostic {
	enum ipu_compile_severity severity;
	int model;			/* index in options.models, -1: none */
	const char *node;		/* NULL: not about one node */
	const char *op;
	const char *message;
};

/* Where a compilation stopped (ipu_compile_result.stage). */
enum ipu_compile_stage {
	IPU_COMPILE_STAGE_OPTIONS = 1,	/* an option refused: nothing done */
	IPU_COMPILE_STAGE_MODEL,	/* loading or the front end of a model */
	IPU_COMPILE_STAGE_EXPORT,	/* writing export_onnx */
	IPU_COMPILE_STAGE_CALIBRATION,	/* calibration, the precision report */
	IPU_COMPILE_STAGE_TARGET,	/* fp8 or state options against the models */
	IPU_COMPILE_STAGE_CHECK,	/* the --check run */
	IPU_COMPILE_STAGE_LOWER,	/* lowering, the report, the file */
	IPU_COMPILE_STAGE_DONE,
};

struct ipu_compile_result {
	int status;			/* 0, or what ipu_compile returned */
	enum ipu_compile_stage stage;	/* DONE, or where it failed */
	char error[512];		/* the message ("" when status is 0) */
	void *executable;		/* the .ipuef bytes (NULL: not kept) */
	size_t executable_size;
	const char *output;		/* the file written, or NULL */
	struct ipu_compile_summary summary;
	const struct ipu_compile_diagnostic *diagnostics;
	size_t num_diagnostics;
};

/* Fills the defaults (and size).  Returns 0. */
int ipu_compile_options_init(struct ipu_compile_options *o);

/*
 * Compiles.  Returns 0, or a negative errno class with the message in
 * (*result)->error and a diagnostic:
 *   -EINVAL   an option or the model is invalid (names the option, node)
 *   -ENOENT   a file cannot be read
 *   -ENOTSUP  an operator, attribute or shape the compiler does not support
 *   -ENOSPC   the model does not fit the target's tile memory
 *   -EDOM     --check: the device's results differ from the reference
 *   -EIO      an output cannot be written
 *   -ENOMEM   out of memory
 * *result is set unless memory for it could not be found (-ENOMEM, NULL);
 * free it with ipu_compile_result_free in every case.
 */
int ipu_compile(const struct ipu_compile_options *o, struct ipu_compile_result **result);

void ipu_compile_result_free(struct ipu_compile_result *r);

/* The library's version ("0.3.0"). */
const char *ipu_compile_version(void);

#ifdef __cplusplus
}
#endif

#endif /* IPU_COMPILER_H */
