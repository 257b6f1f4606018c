/* SPDX-License-Identifier: MIT */
/* options.c - command-line parsing and option setters shared with YAML. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "ipu/onnx_io.h"

const char *ipuc_usage(void)
{
	return
"usage: ipu-compile --input-model MODEL.onnx [options]\n"
"       ipu-compile --config-yaml CONFIG.yaml [options]\n"
"\n"
"  -i, --input-model FILE     ONNX model (opsets 1-17 of the default domain)\n"
"  -o, --output FILE          executable to write (default <model>.ipuef)\n"
"  --input-shape N=d0,d1,...  static shape of input N (repeatable, or several\n"
"                             space-separated after one flag)\n"
"  --freeze NAME=FILE.pb      make graph input NAME a constant holding the\n"
"                             tensor of FILE.pb (an ONNX TensorProto, as in\n"
"                             ONNX test sets; repeatable): for inputs a\n"
"                             static-shape compile needs as values (Reshape's\n"
"                             shape, TopK's K, Resize's scales)\n"
"  --batch-size N             the batch of every input whose batch dimension\n"
"                             is symbolic or a static 1 (as PopRT's); a model\n"
"                             whose outputs do not follow is refused\n"
"  --batch-axis A             which axis is the batch (default 0)\n"
"  --precision fp32|fp16      compute precision (default fp32)\n"
"  --precision fp8|fp8_weight Conv/MatMul/Gemm weights stored in 8-bit floats\n"
"                             (fp8: their activation inputs too), the rest fp16\n"
"  --fp16-skip-op-types A,B   op types kept in fp32 under --precision fp16\n"
"  --fp8-skip-op-names A,B    layers (node names) kept in fp16 under fp8\n"
"  --fp8-params IN,W,INSCALE,WSCALE   formats F143|F152 of activations and\n"
"                             weights, their power-of-two scales (WSCALE\n"
"                             auto: from the largest values, see\n"
"                             --fp8-scale; default F143,F143,0,auto)\n"
"  --fp8-scale per-channel|per-tensor  auto weight scales: one a weight's\n"
"                             output channel (default) or one a weight\n"
"                             (PopRT's mode)\n"
"  --num-of-layers-keep-fp16 N  keep the N layers most sensitive to fp8 in fp16\n"
"  --fp8-auto-skip TARGET[,BUDGET]  keep in fp16 the layers that bring the\n"
"                             output error on the calibration data (max |err|\n"
"                             / max |output|) to TARGET, the executable at most\n"
"                             BUDGET (default 0.65) x its size with every layer\n"
"                             fp16; prints the layers kept (as a list for\n"
"                             --fp8-skip-op-names), the error and the size\n"
"                             (needs --calibration-with-data)\n"
"  --ipu-version ipu2|ipu21   target: 1472 tiles x 624 KiB\n"
"  --target tiles=N,tile-mem=SIZE   custom target (SIZE: 65536, 256KiB, 1MiB)\n"
"  --max-tensor-size BYTES    largest tensor constant folding may create\n"
"                             (ops that only move data fold at any size;\n"
"                             -1: no limit; default 64 MiB)\n"
"  --export-onnx FILE         write the converted, optimised ONNX model\n"
"  --report FILE.html         write a compile report: one self-contained page\n"
"                             (tile memory heat map, modelled cycles per ONNX\n"
"                             node and op type, exchange volume, memory over\n"
"                             the program, the biggest tensors)\n"
"  --convert-version N        write it in opset N (7-17; default 17)\n"
"  --calibration-with-data FILE.npz\n"
"                             calibration samples: arrays named by graph\n"
"                             input, each of the input's shape or [N, shape]\n"
"                             (np.savez); statistics of every activation\n"
"                             choose the fp8 scales and feed the report\n"
"  --calibration-loss-type mse|mae|snr|kld|cos_dist\n"
"                             what the scale search minimises (default kld;\n"
"                             see Documentation/compiler/calibration.md)\n"
"  --precision-compare        print, per ONNX node, the error of the\n"
"                             converted model's activations against float32\n"
"                             (on the calibration data, else one seeded\n"
"                             random sample)\n"
"  --precision-compare-json FILE   the same report as JSON (implies\n"
"                             --precision-compare)\n"
"  --config-yaml FILE         options as YAML (PopRT keys, model_fusion list)\n"
"  --list-ops                 print the supported operators and exit\n"
"  --check                    run once on the in-process device and compare\n"
"                             with the reference evaluator\n"
"  --json                     print a JSON summary on stdout\n"
"  --no-fusion                skip the fusion passes\n"
"  --no-memory-reuse          give every tensor its own tile memory for the\n"
"                             whole run (default: tensors whose values are\n"
"                             not needed at the same time share memory)\n"
"  --state IN=OUT,...         keep these cache inputs on the device as state,\n"
"                             each replaced by its output after every run\n"
"                             (besides past_key_values.N.key/.value ->\n"
"                             present.N.key/.value, found by name); 'none':\n"
"                             no state, every cache streamed from the host\n"
"  --prefill-model FILE       the decoder's prompt step: the same module\n"
"                             exported with T tokens a step (input_ids and\n"
"                             position_ids [1, T], the same caches and\n"
"                             weights), built as program 'prefill' over the\n"
"                             decode step's state and weights (one copy)\n"
"  --num-ipus N               split the model over N IPUs of the target (2-64):\n"
"                             stages of consecutive nodes balancing the\n"
"                             modelled work, each within 3/4 of an IPU, one\n"
"                             executable per IPU and the links between them\n"
"                             in one .ipuef (ipu-run opens N in-process IPUs)\n"
"  --manual-sharding-config FILE.yaml   with --num-ipus: where each IPU's\n"
"                             stage starts (a list of {node: NAME, ipu: K})\n"
"  --enable-pipelining        with --num-ipus: recorded in the .ipuef (the\n"
"                             IPUs always overlap runs: a request larger\n"
"                             than the compiled batch runs as micro-batches\n"
"                             of it, pipelined)\n"
"  --custom-library-so-paths LIB.so[:LIB2.so]   custom-operator plugins\n"
"                             (repeatable): nodes of their ONNX domains are\n"
"                             compiled to their codelets; native code run in\n"
"                             this process (Documentation/compiler/custom-ops.md)\n"
"  -v, --verbose              per-pass statistics on stderr\n"
"  --output-dir DIR           PopRT: folder for the outputs (created)\n"
"  --output-model FILE        PopRT: write the converted ONNX model (in DIR)\n"
"  --export-popef             PopRT: write DIR/executable.ipuef too\n"
"  -h, --help, --version      this text; the version\n"
"\n"
"Every option is also accepted in PopRT's spelling (--input_model, ...).\n"
"Outputs are written to a temporary file and renamed into place; an output\n"
"that is one of the inputs, or not a regular file, is refused before any work.\n"
"PopRT flags ipu-compile lacks (--popart_options, ...) are answered \"not\n"
"supported\" with exit status 2.\n"
"Exit status: 0 done, 1 failed (model, unsupported op or shape, lowering,\n"
"--check mismatch, write), 2 bad command line or config (nothing done).\n";
}

/* Appends plugin paths (':' or ',' separated) to o->custom_libs, ':'-joined. */
int ipuc_add_custom_libs(struct ipuc_options *o, const char *v, struct ir_error *e)
{
	size_t old = o->custom_libs ? strlen(o->custom_libs) : 0;
	char *n;

	if (!v[0])
		return ir_err(e, "--custom-library-so-paths: empty path");
	n = realloc(o->custom_libs, old + strlen(v) + 2);
	if (!n)
		return ir_err(e, "out of memory");
	if (old)
		n[old++] = ':';
	strcpy(n + old, v);
	for (char *c = n + old; *c; c++)
		if (*c == ',')
			*c = ':';
	o->custom_libs = n;
	return 0;
}

static int parse_int(const char *opt, const char *v, int64_t lo, int64_t hi, int64_t *out,
		     struct ir_error *e)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (end == v || *end || errno || x < lo || x > hi || isspace((unsigned char)v[0]))
		return ir_err(e, "--%s: '%s' is not a whole number from %lld to %lld", opt, v,
			      (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

/* PopRT 1.4's options ipu-compile does not have: a clear answer, not
 * "unknown" (Documentation/compiler/guide.md lists them). */
static const char *const poprt_unsupported[] = {
	"available_memory_proportion", "batches_per_step", "checkpoints", "compiler_options",
	"custom_pass_config", "custom_shape_inference",
	"data_preprocess", "disable_compilation_progress_bar", "disable_fast_norm",
	"eightbitsio", "merge_if_with_same_cond", "enable_compress_pattern", "enable_erf_gelu",
	"enable_insert_remap", "fold_periodic_initializer", "enable_avoid_overflow_patterns",
	"framework", "infer_shape_ahead", "list_all_passes", "logging_level",
	"num_io_tiles", "only_manual_sharding",
	"optimize_internal_exchange_code", "pack_args", "passes", "perf_tuner",
	"popart_options", "print_completion", "remap_mode", "remove_outputs", "run",
	"serialize_matmul", "serialize_matmul_add", "merge_matmul", "merge_matmul_add",
	"merge_moe", "show", "skip_passes",
	/* earlier PopRT releases */
	"quantize", "use_external_data_format",
};

enum {
	O_HELP = 'h', O_VERBOSE = 'v', O_OUTPUT = 'o', O_LIST_OPS = 256, O_CHECK, O_JSON,
	O_NO_FUSION, O_NO_MEMORY_REUSE, O_INPUT_MODEL, O_INPUT_SHAPE, O_BATCH_SIZE, O_BATCH_AXIS, O_PRECISION,
	O_SKIP, O_IPU_VERSION, O_TARGET, O_MAX_TENSOR, O_EXPORT_ONNX, O_CONFIG, O_OUTPUT_DIR,
	O_OUTPUT_MODEL, O_EXPORT_POPEF, O_VERSION, O_CONVERT_VERSION, O_UNSUPPORTED, O_REPORT,
	O_CALIB_DATA, O_CALIB_LOSS, O_PREC_COMPARE, O_PREC_COMPARE_JSON,
	O_FP8_SKIP, O_FP8_PARAMS, O_FP8_SCALE, O_FP8_AUTO_SKIP, O_KEEP_FP16, O_STATE, O_PREFILL, O_NUM_IPUS, O_SHARDING, O_PIPELINING,
	O_CUSTOM_LIBS,
	O_FREEZE,
};

/* Each option in our spelling and in PopRT's (underscores). */
#define OPT2(dash, under, has, val) { dash, has, NULL, val }, { under, has, NULL, val }
static const struct option long_opts[] = {
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ "verbose", no_argument, NULL, O_VERBOSE },
	{ "output", required_argument, NULL, O_OUTPUT },
	{ "check", no_argument, NULL, O_CHECK },
	{ "json", no_argument, NULL, O_JSON },
	{ "precision", required_argument, NULL, O_PRECISION },
	{ "target", required_argument, NULL, O_TARGET },
	{ "report", required_argument, NULL, O_REPORT },
	OPT2("list-ops", "list_ops", no_argument, O_LIST_OPS),
	OPT2("no-fusion", "no_fusion", no_argument, O_NO_FUSION),
	OPT2("no-memory-reuse", "no_memory_reuse", no_argument, O_NO_MEMORY_REUSE),
	{ "state", required_argument, NULL, O_STATE },
	OPT2("prefill-model", "prefill_model", required_argument, O_PREFILL),
	OPT2("input-model", "input_model", required_argument, O_INPUT_MODEL),
	OPT2("input-shape", "input_shape", required_argument, O_INPUT_SHAPE),
	OPT2("batch-size", "batch_size", required_argument, O_BATCH_SIZE),
	OPT2("batch-axis", "batch_axis", required_argument, O_BATCH_AXIS),
	OPT2("fp16-skip-op-types", "fp16_skip_op_types", required_argument, O_SKIP),
	OPT2("fp8-skip-op-names", "fp8_skip_op_names", required_argument, O_FP8_SKIP),
	OPT2("fp8-params", "fp8_params", required_argument, O_FP8_PARAMS),
	OPT2("fp8-scale", "fp8_scale", required_argument, O_FP8_SCALE),
	OPT2("fp8-auto-skip", "fp8_auto_skip", required_argument, O_FP8_AUTO_SKIP),
	OPT2("num-of-layers-keep-fp16", "num_of_layers_keep_fp16", required_argument, O_KEEP_FP16),
	OPT2("ipu-version", "ipu_version", required_argument, O_IPU_VERSION),
	OPT2("max-tensor-size", "max_tensor_size", required_argument, O_MAX_TENSOR),
	OPT2("export-onnx", "export_onnx", required_argument, O_EXPORT_ONNX),
	OPT2("convert-version", "convert_version", required_argument, O_CONVERT_VERSION),
	OPT2("config-yaml", "config_yaml", required_argument, O_CONFIG),
	OPT2("output-dir", "output_dir", required_argument, O_OUTPUT_DIR),
	OPT2("output-model", "output_model", required_argument, O_OUTPUT_MODEL),
	OPT2("export-popef", "export_popef", no_argument, O_EXPORT_POPEF),
	OPT2("calibration-with-data", "calibration_with_data", required_argument, O_CALIB_DATA),
	OPT2("calibration-loss-type", "calibration_loss_type", required_argument, O_CALIB_LOSS),
	OPT2("precision-compare", "precision_compare", no_argument, O_PREC_COMPARE),
	OPT2("precision-compare-json", "precision_compare_json", required_argument, O_PREC_COMPARE_JSON),
	OPT2("num-ipus", "num_ipus", required_argument, O_NUM_IPUS),
	OPT2("manual-sharding-config", "manual_sharding_config", required_argument, O_SHARDING),
	OPT2("enable-pipelining", "enable_pipelining", no_argument, O_PIPELINING),
	OPT2("custom-library-so-paths", "custom_library_so_paths", required_argument, O_CUSTOM_LIBS),
	{ "freeze", required_argument, NULL, O_FREEZE },
	{ NULL, 0, NULL, 0 },
};

int ipuc_poprt_unsupported(const char *name)
{
	for (size_t i = 0; i < sizeof(poprt_unsupported) / sizeof(poprt_unsupported[0]); i++)
		if (!strcmp(name, poprt_unsupported[i]))
			return 1;
	return 0;
}

static const char *poprt_only(const char *arg)
{
	char name[64];
	size_t n, i;

	if (strncmp(arg, "--", 2))
		return NULL;
	n = strcspn(arg + 2, "=");
	if (n >= sizeof(name))
		return NULL;
	for (i = 0; i < n; i++)
		name[i] = arg[2 + i] == '-' ? '_' : arg[2 + i];
	name[n] = 0;
	for (i = 0; i < sizeof(poprt_unsupported) / sizeof(poprt_unsupported[0]); i++)
		if (!strcmp(name, poprt_unsupported[i]))
			return poprt_unsupported[i];
	return NULL;
}

/* "--no-fusion=1": a known switch given a value (getopt calls it unknown). */
static int takes_no_value(const char *arg)
{
	size_t n;

	if (strncmp(arg, "--", 2) || !strchr(arg, '='))
		return 0;
	n = strcspn(arg + 2, "=");
	for (const struct option *lo = long_opts; lo->name; lo++)
		if (strlen(lo->name) == n && !strncmp(lo->name, arg + 2, n))
			return lo->has_arg == no_argument;
	return 0;
}

int ipuc_parse_args(int argc, char **argv, struct ipuc_options *o,
		    struct ir_error *e)
{
	int c, last = 0;
	int64_t x;

	/* "-": non-options come back in order (the model, or more NAME=dims
	 * after --input-shape, PopRT style: --input_shape A=1,2 B=3,4) */
	optind = 0;	/* glibc: a full restart, also after an earlier parse stopped mid-argument */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:hi:o:v", long_opts, NULL)) != -1) {
		const char *v = optarg;

		switch (c) {
		case 1:
			if (last == O_INPUT_SHAPE && strchr(v, '=')) {
				if (ipuc_add_shape(&o->model, v, e))
					return -1;
				continue;
			}
			if (o->model.input_model)
				return ir_err(e, "unexpected argument '%s' (the model is already %s)", v,
					      o->model.input_model);
			if (ipuc_setstr(&o->model.input_model, v, e))
				return -1;
			break;
		case O_HELP: o->help = 1; break;
		case O_VERSION: o->version = 1; break;
		case O_LIST_OPS: o->list_ops = 1; break;
		case O_CHECK: o->check = 1; break;
		case O_JSON: o->json = 1; break;
		case O_VERBOSE: o->verbose = 1; break;
		case O_NO_FUSION: o->no_fusion = 1; break;
		case O_NO_MEMORY_REUSE: o->no_memory_reuse = 1; break;
		case O_STATE:
			if (ipuc_setstr(&o->state, v, e))
				return -1;
			break;
		case O_PREFILL:
			if (ipuc_setstr(&o->prefill_model, v, e))
				return -1;
			break;
		case O_NUM_IPUS:
			if (parse_int("num-ipus", v, 1, 64, &x, e))
				return -1;
			o->num_ipus = (uint32_t)x;
			break;
		case O_SHARDING:
			if (ipuc_setstr(&o->sharding_config, v, e))
				return -1;
			break;
		case O_PIPELINING: o->pipelining = 1; break;
		case O_FREEZE:
			if (!strchr(v, '=') || *v == '=' || !strchr(v, '=')[1])
				return ir_err(e, "--freeze %s: give NAME=FILE.pb (a graph input and a TensorProto file)", v);
			if (o->nfreeze == IPUC_MAX_SHAPES)
				return ir_err(e, "more than %d --freeze inputs", IPUC_MAX_SHAPES);
			if (ipuc_setstr(&o->freeze[o->nfreeze], v, e))
				return -1;
			o->nfreeze++;
			break;
		case O_CUSTOM_LIBS:
			if (ipuc_add_custom_libs(o, v, e))
				return -1;
			break;
		case O_EXPORT_POPEF: o->export_popef = 1; break;
		case 'i':
		case O_INPUT_MODEL:
			if (ipuc_setstr(&o->model.input_model, v, e))
				return -1;
			break;
		case O_OUTPUT:
			if (ipuc_setstr(&o->output, v, e))
				return -1;
			break;
		case O_OUTPUT_DIR:
			if (ipuc_setstr(&o->output_dir, v, e))
				return -1;
			break;
		case O_OUTPUT_MODEL:
			if (ipuc_setstr(&o->output_model, v, e))
				return -1;
			break;
		case O_INPUT_SHAPE:
			if (ipuc_add_shape(&o->model, v, e))
				return -1;
			break;
		case O_BATCH_SIZE:
			if (parse_int("batch-size", v, 1, INT32_MAX, &x, e))
				return -1;
			o->batch_size = x;
			break;
		case O_BATCH_AXIS:
			if (parse_int("batch-axis", v, 0, IR_MAX_RANK - 1, &x, e))
				return -1;
			o->batch_axis = (int)x;
			break;
		case O_PRECISION:
			if (ipuc_set_precision(&o->model.precision, v, e))
				return -1;
			break;
		case O_SKIP:
			if (ipuc_add_skip_ops(o, v, e))
				return -1;
			break;
		case O_FP8_SKIP:
			if (ipuc_add_fp8_skip(o, v, e))
				return -1;
			break;
		case O_FP8_PARAMS:
			if (ipuc_set_fp8_params(o, v, e))
				return -1;
			break;
		case O_FP8_SCALE:
			if (ipuc_set_fp8_scale(o, v, e))
				return -1;
			break;
		case O_FP8_AUTO_SKIP:
			if (ipuc_set_fp8_auto_skip(o, v, e))
				return -1;
			break;
		case O_KEEP_FP16:
			if (parse_int("num-of-layers-keep-fp16", v, 0, INT32_MAX, &x, e))
				return -1;
			o->keep_fp16 = (int)x;
			break;
		case O_IPU_VERSION:
			if (ipuc_set_ipu_version(o, v, e))
				return -1;
			break;
		case O_TARGET:
			if (ipuc_parse_target(o, v, e))
				return -1;
			break;
		case O_MAX_TENSOR:
			if (parse_int("max-tensor-size", v, -1, INT64_MAX, &x, e))
				return -1;
			o->max_tensor_size = x;
			break;
		case O_REPORT:
			if (ipuc_setstr(&o->report, v, e))
				return -1;
			break;
		case O_EXPORT_ONNX:
			if (ipuc_setstr(&o->export_onnx, v, e))
				return -1;
			break;
		case O_CONVERT_VERSION:
			if (parse_int("convert-version", v, ONNX_EXPORT_OPSET_MIN, ONNX_OPSET_MAX, &x, e))
				return -1;
			o->convert_version = (int)x;
			break;
		case O_CALIB_DATA:
			if (ipuc_setstr(&o->calibration_data, v, e))
				return -1;
			break;
		case O_CALIB_LOSS:
			if (ipuc_set_calibration_loss(o, v, e))
				return -1;
			break;
		case O_PREC_COMPARE: o->precision_compare = 1; break;
		case O_PREC_COMPARE_JSON:
			if (ipuc_setstr(&o->precision_compare_json, v, e))
				return -1;
			o->precision_compare = 1;
			break;
		case O_CONFIG:
			if (ipuc_setstr(&o->config_yaml, v, e) || ipuc_parse_yaml_file(v, o, e))
				return -1;
			break;
		case ':':
			return ir_err(e, "option %s needs a value", argv[optind - 1]);
		default: {
			const char *a = argv[optind - 1], *p = poprt_only(a);

			if (p)
				return ir_err(e, "PopRT's --%s is not supported by ipu-compile (see ipu-compile --help for what is)", p);
			if (takes_no_value(a))
				return ir_err(e, "option '%.*s' takes no value", (int)strcspn(a, "="), a);
			return ir_err(e, "unknown option '%s' (see ipu-compile --help)", a);
		}
		}
		last = c;
	}
	return 0;
}
