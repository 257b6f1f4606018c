/* SPDX-License-Identifier: MIT */
/*
 * ipu_info_model.h - ipu-info's view of the in-process device: libipu's
 * model backend, the tile engine running inside the calling process, which
 * every tool (ipu-run, ipu-serve, the Python package, libipurt) uses when no
 * /dev/accel/accelN is named.
 */
#ifndef IPU_INFO_MODEL_H
#define IPU_INFO_MODEL_H

#include <jansson.h>

/* Non-zero if arg names an in-process device: "model" or "model:OPTS". */
int ipu_info_is_model(const char *arg);

/*
 * Open the in-process device `spec` ("model", "model:tiles=16,..."), read
 * what it is and close it again (nothing is loaded or run).  Prints it as
 * text on stdout, or appends one JSON object to arr when arr is non-NULL.
 * Returns 0, or -1 after a message on stderr ("ipu-info: SPEC: ...").
 */
int ipu_info_model(const char *spec, json_t *arr);

#endif /* IPU_INFO_MODEL_H */
