/* SPDX-License-Identifier: MIT */
/*
 * onnx_load.c - a repository's model.onnx, compiled when its version is
 * loaded: ipu_compile() (ipu/compiler.h) with ipu-compile's defaults, the
 * executable kept in memory and opened as any .ipuef.  Nothing is written
 * to the repository.
 */
#include <stdio.h>

#include "ipu/compiler.h"
#include "serve.h"

int srv_compile_onnx(const char *path, struct ipuef_file **out, char *err, size_t errlen)
{
	struct ipu_compile_options o;
	struct ipu_compile_model m = { .path = path };
	struct ipu_compile_result *r = NULL;
	char msg[SRV_ERR];
	int rc;

	*out = NULL;
	ipu_compile_options_init(&o);
	o.models = &m;
	o.num_models = 1;
	if (ipu_compile(&o, &r) < 0) {
		/* the compiler's message names the file */
		snprintf(err, errlen, "compiling: %s", r ? r->error : "out of memory");
		ipu_compile_result_free(r);
		return -1;
	}
	rc = ipuef_open_mem(r->executable, r->executable_size, out, msg, sizeof(msg));
	if (rc)
		snprintf(err, errlen, "%s compiled, but its executable does not open: %s", path, msg);
	ipu_compile_result_free(r);
	return rc ? -1 : 0;
}
