/* SPDX-License-Identifier: MIT */
/*
 * opgeom.h - geometry shared by shape inference and the evaluator: window
 * ops (conv, pools) padding and output sizes, broadcasting, axis handling.
 */
#ifndef IPU_OPGEOM_H
#define IPU_OPGEOM_H

#include <stdint.h>

#include "ipu/ir.h"

/* Window geometry of Conv / ConvTranspose / MaxPool / AveragePool for
 * `nsp` spatial dims. */
struct ir_window {
	int nsp;
	int64_t in[IR_MAX_RANK];	/* input spatial sizes */
	int64_t k[IR_MAX_RANK];		/* kernel */
	int64_t s[IR_MAX_RANK];		/* strides */
	int64_t d[IR_MAX_RANK];		/* dilations */
	int64_t pb[IR_MAX_RANK], pe[IR_MAX_RANK]; /* pads begin/end */
	int64_t out[IR_MAX_RANK];
};

/* Fills w from the node's attributes; kernel from `kernel` (may be NULL:
 * attribute kernel_shape).  ceil: pools' ceil_mode.  Returns -1 with a
 * message naming the node on bad attributes. */
int ir_window_conv(const struct ir_graph *g, const struct ir_node *n, int nsp,
		   const int64_t *in, const int64_t *kernel, int ceil_mode,
		   struct ir_window *w, struct ir_error *e);
/* ConvTranspose: also output_padding / output_shape. */
int ir_window_convtranspose(const struct ir_graph *g, const struct ir_node *n,
			    int nsp, const int64_t *in, const int64_t *kernel,
			    struct ir_window *w, struct ir_error *e);

/* Multidirectional broadcast of two shapes; -1 if incompatible. */
int ir_broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *ro,
		 int64_t *o);
/* For each element of the dense output shape, the offset of the element of
 * `in` (broadcast to it).  offs has numel(out) entries. */
void ir_broadcast_offsets(int ro, const int64_t *o, int ri, const int64_t *in,
			  int64_t *offs);
/* Normalises a possibly negative axis; -1 if out of range. */
int ir_axis(int64_t axis, int rank);



/* Slice: resolves (starts, ends, axes, steps) of nax entries (axes/steps may
 * be NULL) against a shape into per-dimension start, step and count.
 * Returns -1 with a message (not naming the node) on bad values. */
int ir_slice_resolve(int rank, const int64_t *dims, const int64_t *starts,
		     const int64_t *ends, const int64_t *axes,
		     const int64_t *steps, int nax, int64_t *start,
		     int64_t *step, int64_t *count, struct ir_error *e);
/* Resize along one axis of length L to lo: for each output position o,
 * `taps` source indices idx[o*taps+t] (clamped) and weights w[o*taps+t]
 * (1 nearest, 2 linear, 4 cubic), and oob[o] = 1 where tf_crop_and_resize
 * samples outside the input.  s: the scale, or 0 when sizes were given;
 * rs/re: roi start/end (tf_crop_and_resize). */
void ir_resize_taps(const struct ir_node *n, int64_t L, int64_t lo, double s,
		    double rs, double re, int taps, int64_t *idx, double *w,
		    char *oob);

#endif /* IPU_OPGEOM_H */
