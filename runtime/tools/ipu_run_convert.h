/* SPDX-License-Identifier: MIT */
/*
 * ipu_run_convert.h - an input .npy whose element type differs from its
 * anchor's, converted when no value changes (float16 to float32, narrower
 * to wider integers, int64 values that fit int32) or when the user can
 * only have meant it (float32 to a float16 anchor, rounded to nearest as
 * the model's fp16 conversion would), and said so.
 */
#ifndef IPU_RUN_CONVERT_H
#define IPU_RUN_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/npy.h"

/*
 * Convert a (read from `path`) to dtype `want` in place.  Returns 1 and a
 * line for the user in note when it converted, 0 when nothing was to do or
 * the pair is not one it converts (the runtime then says what is wrong),
 * -1 with err set when values do not fit or memory runs out.
 */
int convert_input(struct ipurt_npy *a, uint32_t want, const char *path, const char *anchor,
		  char *note, size_t notelen, char *err, size_t errlen);

#endif /* IPU_RUN_CONVERT_H */
