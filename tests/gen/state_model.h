/* SPDX-License-Identifier: MIT */
/* state_model.h - a graph-builder model with device-resident state. */
#ifndef GEN_STATE_MODEL_H
#define GEN_STATE_MODEL_H

#define SM_N 16			/* elements of X, Y and the state "acc" */
#define SM_COUNT0 100.0f	/* initial value of the state "count" */

/*
 * Write to path a model whose Main adds its input X (f32[16]) into the
 * state "acc" (f32[16], zeros at first, split over two tiles), adds 1 to
 * the state "count" (f32[1], initially SM_COUNT0 from tensor data) and
 * returns acc as Y.  0, or -1 with a message on stderr.
 */
int sm_make_accumulator(const char *path);

#endif
