/* SPDX-License-Identifier: MIT */
/*
 * calib.h - calibration from data and the per-layer precision report.
 *
 * Calibration runs the optimised float32 graph in the reference evaluator
 * over samples (a NumPy .npz of arrays named by graph input, or seeded
 * random inputs), keeps per-tensor statistics (|x| maximum and a
 * logarithmic histogram of |x|), and chooses each tensor's scale for a
 * scaled low-precision format by minimising a selectable loss over every
 * scale the format allows.  Documentation/compiler/calibration.md defines
 * the histogram, each loss and the search exactly.
 *
 * The precision report evaluates the float32 graph and the converted graph
 * (after the compiler's precision passes) on the same samples and compares
 * every tensor both have, per ONNX node.
 *
 * A precision pass uses this library through the two functions marked
 * "for a precision pass" below, preferably through function pointers in
 * its options so that the pass itself does not link this library.
 */
#ifndef IPU_CALIB_H
#define IPU_CALIB_H

#include <stdint.h>
#include <stdio.h>

#include "ipu/ir.h"

/* ---- samples --------------------------------------------------------- */

/* The arrays of an .npz file, as stored (C order, the file's dtype). */
struct ipu_npz {
	int n;
	char **names;			/* member name without ".npy" */
	struct ir_tensor *arrays;	/* [n] */
};

/* Limits on untrusted archives: an .npz with more members, or a member
 * larger than this, is refused before anything is decompressed. */
#define IPU_NPZ_MAX_MEMBERS 4096
#define IPU_NPZ_MAX_MEMBER_BYTES ((uint64_t)4 << 30)

/* Reads an .npz (np.savez or np.savez_compressed).  Every member must be
 * an .npy file of a dtype the runtime reads (ipu/npy.h); a damaged or
 * hostile archive (bad CRC, truncation, encryption, duplicate or odd
 * names, sizes that do not match) is refused with a message naming the
 * file and the member. */
int ipu_npz_read(const char *path, struct ipu_npz *out, struct ir_error *e);
/* The same from memory; `what` names the buffer in messages. */
int ipu_npz_parse(const void *buf, size_t len, const char *what,
		  struct ipu_npz *out, struct ir_error *e);
void ipu_npz_free(struct ipu_npz *z);

/* Graph inputs for n runs: in[s * ninputs + i] is input i of sample s,
 * in graph input order, with the graph input's dtype and shape. */
struct ipu_calib_samples {
	int n, ninputs;
	struct ir_tensor *in;
};

/*
 * Splits an .npz into samples of graph g's inputs.  Each graph input must
 * have an array of its name and dtype whose shape is either the input's
 * shape (one sample) or [N, <input shape>] (N samples); every input must
 * give the same N.  Arrays named after no input are an error (a misspelt
 * name would otherwise calibrate on nothing).  max_samples > 0 keeps the
 * first max_samples.
 */
int ipu_calib_samples_from_npz(const struct ipu_npz *z, const struct ir_graph *g,
			       int max_samples, struct ipu_calib_samples *s,
			       struct ir_error *e);
/* n samples of seeded uniform inputs: floats in [-1, 1], integers and
 * bools in {0, 1, 2} (0/1 for bools), for when no data is given. */
int ipu_calib_samples_random(const struct ir_graph *g, int n, uint64_t seed,
			     struct ipu_calib_samples *s, struct ir_error *e);
/* The same samples converted to graph g's input dtypes (same shapes):
 * the float16 graph's inputs from float32 data, for example. */
int ipu_calib_samples_convert(const struct ipu_calib_samples *src,
			      const struct ir_graph *g,
			      struct ipu_calib_samples *dst, struct ir_error *e);
void ipu_calib_samples_free(struct ipu_calib_samples *s);

/* ---- statistics ------------------------------------------------------ */

/* Histogram of |x| on a log2 scale: bin b holds |x| in
 * [2^(LO + b/PER_OCTAVE), 2^(LO + (b+1)/PER_OCTAVE)); smaller nonzero
 * values go to bin 0 and larger ones to the last bin. */
#define IPU_CALIB_HIST_LO (-80)
#define IPU_CALIB_HIST_HI 80
#define IPU_CALIB_HIST_PER_OCTAVE 64
#define IPU_CALIB_HIST_BINS ((IPU_CALIB_HIST_HI - IPU_CALIB_HIST_LO) * IPU_CALIB_HIST_PER_OCTAVE)

struct ipu_calib_hist {
	double absmax;			/* of the finite elements */
	uint64_t count;			/* finite elements seen */
	uint64_t zeros;			/* of which exactly zero */
	uint64_t nonfinite;		/* NaN and infinities, not binned */
	uint64_t bins[IPU_CALIB_HIST_BINS];
};

void ipu_calib_hist_init(struct ipu_calib_hist *h);
/* Adds every element of a float tensor (any float dtype). */
void ipu_calib_hist_add(struct ipu_calib_hist *h, const struct ir_tensor *t);
/* The value that stands for bin b in the losses: the bin's geometric
 * centre, not above absmax. */
double ipu_calib_hist_value(const struct ipu_calib_hist *h, int b);

/* ---- losses and scale choice ----------------------------------------- */

enum ipu_calib_loss {
	IPU_CALIB_MSE,
	IPU_CALIB_MAE,
	IPU_CALIB_SNR,		/* minimises noise power / signal power */
	IPU_CALIB_KLD,
	IPU_CALIB_COS_DIST,
	IPU_CALIB_LOSS_COUNT
};

/* Smoothing of the stored values' distribution in the kld loss. */
#define IPU_CALIB_KLD_EPS 1e-6

/* "mse", ... -> the enum, or -1 with a message listing the choices. */
int ipu_calib_loss_parse(const char *name, struct ir_error *e);
const char *ipu_calib_loss_name(int loss);

/* The losses between a reference x and its approximation q over n
 * elements, each weighted by w (w NULL: weight 1).  Not KLD, which compares
 * distributions (ipu_calib_hist_loss). */
double ipu_calib_loss_pairs(int loss, const double *x, const double *q,
			    const double *w, size_t n);

/*
 * A scaled storage format: scale s stores x as the format's nearest value
 * to x * 2^-s (with the format's rounding and saturation) and reads it back
 * times 2^s.  quantize(ctx, s, x) returns that read-back value.
 */
struct ipu_calib_format {
	double (*quantize)(const void *ctx, int scale, double x);
	const void *ctx;
	int scale_min, scale_max;	/* the scales the format allows */
	const char *name;
	/* The smallest scale at which absmax does not saturate (scales from
	 * weights alone), or NULL. */
	int (*scale_for_absmax)(const void *ctx, double absmax);
};

/* The device's 8-bit float format fmt (enum ipu_fp8_format of ipu/fp8.h:
 * F143 or F152, scales -32..31) through its scalar encoder and decoder. */
int ipu_calib_fp8_format(uint32_t fmt, struct ipu_calib_format *f, struct ir_error *e);

/* The loss of storing the histogram's tensor in format f with scale s
 * (NaN if out of memory). */
double ipu_calib_hist_loss(const struct ipu_calib_hist *h, const struct ipu_calib_format *f,
			   int scale, int loss);
/* The scale of [scale_min, scale_max] with the smallest loss (ties, to a
 * relative 1e-9: the smaller scale, which leaves small values the most
 * precision).  An empty or all-zero histogram, where
 * every scale is exact, gets 0 if allowed, else the allowed scale nearest
 * 0.  Sets *scale and *best_loss (if not NULL, its loss); -1 on error. */
int ipu_calib_choose_scale(const struct ipu_calib_hist *h, const struct ipu_calib_format *f,
			   int loss, int *scale, double *best_loss, struct ir_error *e);

/* ---- calibration of a graph ------------------------------------------ */

struct ipu_calib_tensor {
	char *name;			/* value name in the graph calibrated */
	struct ipu_calib_hist hist;
};

struct ipu_calib {
	int loss;			/* enum ipu_calib_loss */
	int from_data;			/* 0: seeded random samples */
	struct ipu_calib_samples samples;	/* float32 graph's inputs */
	int n;
	struct ipu_calib_tensor *t;	/* every float value computed or fed */
};

/* Runs g (inferred, float32) over the samples (taken over by the result)
 * and collects the statistics of every float graph input and node output.
 * NULL on error. */
struct ipu_calib *ipu_calib_collect(const struct ir_graph *g, struct ipu_calib_samples *s,
				    int from_data, int loss, struct ir_error *e);
void ipu_calib_free(struct ipu_calib *c);
const struct ipu_calib_tensor *ipu_calib_find(const struct ipu_calib *c, const char *value);

/*
 * For a precision pass: the scale the calibration data chooses for the
 * activation `value` stored in format f.  Returns 1 with *scale set, 0
 * when there are no statistics for that value (the pass keeps its
 * default), -1 on error.
 */
int ipu_calib_activation_scale(const struct ipu_calib *c, const char *value,
			       const struct ipu_calib_format *f, int *scale,
			       struct ir_error *e);

/*
 * The layers a weight format applies to: Conv with a constant 4-D weight,
 * MatMul with one constant 2-D operand, Gemm with a constant B; their
 * other float operand is the layer's activation input.  Returns that
 * input's index (0 or 1) or -1 for any other node.
 */
int ipu_calib_layer_activation(const struct ir_graph *g, int node);

/*
 * One activation scale for every layer input (the fp8 pass's single input
 * scale): the histograms of the activation inputs of every layer of g (the
 * calibrated graph) added together, and the scale the calibration loss
 * chooses for them.  Returns 1 with *scale set, 0 if no layer input was
 * calibrated, -1 on error.
 */
int ipu_calib_layer_input_scale(const struct ipu_calib *c, const struct ir_graph *g,
				const struct ipu_calib_format *f, int *scale,
				struct ir_error *e);

/*
 * For a precision pass: ranks nodes by their sensitivity to the format.
 * For each node nodes[i] of g (the float32 graph the pass is about to
 * convert), on every sample, its float inputs are stored in the format
 * (constant inputs in `weight` with the scale their own values choose by
 * the calibration loss, or the smallest scale that holds their largest
 * magnitude when weight_absmax is IPU_CALIB_WEIGHT_ABSMAX, or that of each
 * output channel (a Conv's axis 0, a MatMul's or Gemm's output features)
 * when it is IPU_CALIB_WEIGHT_ABSMAX_CHANNEL, as the fp8 pass chooses them;
 * computed inputs in `act` with the calibrated scale, or not at all when
 * act is NULL)
 * and the node is evaluated again; its sensitivity is the noise-to-signal
 * power ratio of its first output against the float32 result, summed over
 * the samples.  order[0..n) receives indices into nodes[], most sensitive
 * first; score[i] (if not NULL) node i's ratio.  The n most sensitive are
 * what --num_of_layers_keep_fp16 keeps in float16.
 */
enum {
	IPU_CALIB_WEIGHT_LOSS = 0,		/* by the calibration loss */
	IPU_CALIB_WEIGHT_ABSMAX = 1,		/* one scale a weight */
	IPU_CALIB_WEIGHT_ABSMAX_CHANNEL = 2	/* one an output channel */
};

int ipu_calib_rank_layers(const struct ipu_calib *c, const struct ir_graph *g,
			  const int *nodes, int n, const struct ipu_calib_format *act,
			  const struct ipu_calib_format *weight, int weight_absmax,
			  int *order, double *score, struct ir_error *e);

/*
 * Runs g over calibration sample `sample` with the layers nodes[i] whose
 * converted[i] is set computed as ipu_calib_rank_layers stores them (same
 * formats and scales), each converted output feeding the nodes after it,
 * the other layers in float.  outputs: as ir_eval_graph's.
 */
int ipu_calib_eval_converted(const struct ipu_calib *c, const struct ir_graph *g,
			     const int *nodes, int n, const char *converted,
			     const struct ipu_calib_format *act,
			     const struct ipu_calib_format *weight, int weight_absmax,
			     int sample, struct ir_tensor *outputs, struct ir_error *e);

/*
 * Mixed precision chosen from the data (--fp8-auto-skip): which layers of
 * g (every layer of ipu_calib_layer_activation that has a node name) stay
 * in float16 so that the model's output error is at most `target` and its
 * size at most `budget` times its size with every layer in float16.  The error of a choice is, over the calibration
 * samples, the largest over the graph's float outputs of
 * max |y - r| / max |r|, y computed with the layers converted as
 * ipu_calib_eval_converted does and r by the float32 graph.  The size is
 * what size(ctx, names, n, &bytes, e) says of the model with the n layers
 * named kept in float16 (the executable's bytes: a layer's weights may be
 * stored on many tiles, so its cost is not its element count); it returns
 * 0, 1 if that choice cannot be built (not a candidate), -1 on error.
 * Each layer is scored by the error of the model with that layer alone
 * converted (on the first sample) and costed by the size it adds kept alone; the layers are
 * kept in the order of score^2 per byte (the error bought back per byte,
 * free ones first), and the shortest prefix of that order that meets the
 * target, no longer than the longest within the budget, is found by
 * bisection on both.
 */
typedef int (*ipu_calib_size_fn)(void *ctx, const char *const *keep, int n, double *bytes,
				 struct ir_error *e);

struct ipu_calib_auto_skip {
	int n;				/* layers considered */
	char **names;			/* [n] node names, in keeping order */
	double *alone;			/* [n] error with only that layer converted */
	double *cost;			/* [n] bytes it adds kept alone */
	int nkeep;			/* the first nkeep names stay float16 */
	double error;			/* of the choice */
	double error_all;		/* with every layer converted */
	double size, size_all, size_none;	/* of the choice, all converted, none */
	int met;			/* error <= target */
};

int ipu_calib_choose_auto_skip(const struct ipu_calib *c, const struct ir_graph *g,
			       const struct ipu_calib_format *act,
			       const struct ipu_calib_format *weight, int weight_absmax,
			       double target, double budget, ipu_calib_size_fn size,
			       void *size_ctx, struct ipu_calib_auto_skip *out,
			       struct ir_error *e);
void ipu_calib_auto_skip_free(struct ipu_calib_auto_skip *a);

/* Every layer of a graph (ipu_calib_layer_activation) with its score. */
struct ipu_calib_ranking {
	int n;
	char **names;			/* node names */
	double *score;			/* noise-to-signal ratio */
};

/* ipu_calib_rank_layers over every layer of g, kept by node name. */
int ipu_calib_rank_graph(const struct ipu_calib *c, const struct ir_graph *g,
			 const struct ipu_calib_format *act,
			 const struct ipu_calib_format *weight, int weight_absmax,
			 struct ipu_calib_ranking *r, struct ir_error *e);
/* The score of the layer a node comes from: the layer named `node`, or
 * the one whose name followed by '/' starts it (the nodes the lowering
 * makes of a layer are named "LAYER/..."); the longest such name wins.
 * Returns 1 and sets *score, or 0 if no layer matches. */
int ipu_calib_ranking_score(const struct ipu_calib_ranking *r, const char *node,
			    double *score);
void ipu_calib_ranking_free(struct ipu_calib_ranking *r);

/* ---- precision report ------------------------------------------------ */

/* One compared tensor: the output of ONNX node `node`. */
struct ipu_calib_layer {
	char *node, *op, *value;
	char *dtype;			/* of the converted graph's tensor */
	uint64_t count;			/* elements compared over all samples */
	double max_abs_err;		/* max |y - r| */
	double max_abs_ref;		/* max |r| */
	double rel_err;			/* max_abs_err / max_abs_ref (0 if both 0) */
	double cos_dist;		/* 1 - sum(y r) / sqrt(sum y^2 sum r^2) */
	double snr_db;			/* 10 log10(sum r^2 / sum (y - r)^2); +inf: exact */
	uint64_t nonfinite;		/* elements where y or r is NaN/inf (not in the sums) */
};

struct ipu_calib_report {
	char *precision;		/* of the converted graph */
	int samples, from_data;
	int n;
	struct ipu_calib_layer *l;	/* in the converted graph's node order */
};

/* Evaluates ref (float32) and conv (after precision passes) on the
 * samples (given for ref, converted for conv) and compares every node
 * output of conv with the same-named value of ref. */
int ipu_calib_compare(const struct ir_graph *ref, const struct ir_graph *conv,
		      const struct ipu_calib_samples *s, int from_data,
		      const char *precision, struct ipu_calib_report *r,
		      struct ir_error *e);
void ipu_calib_report_free(struct ipu_calib_report *r);
/* An ir_eval_visit_fn: for a node the fp8 pass gave fp8_input_format and
 * fp8_input_scale (its weight input fp8_weight_input already rounded in the
 * graph), evaluates it again with its activation input converted to that
 * format, as the device does; other nodes are left alone.  ipu_calib_compare
 * applies it to the converted graph. */
int ipu_calib_emulate_fp8_input(void *ctx, const struct ir_graph *g, int node,
				const struct ir_tensor *const *in, struct ir_tensor *out,
				struct ir_error *e);
/* The table for people (one line per layer). */
void ipu_calib_report_print(const struct ipu_calib_report *r, FILE *f);
/* The report as a JSON object; -1 with a message if writing fails. */
int ipu_calib_report_write_json(const struct ipu_calib_report *r, const char *path,
				struct ir_error *e);

#endif /* IPU_CALIB_H */
