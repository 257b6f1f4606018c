// SPDX-License-Identifier: MIT
/*
 * fuzz_serve_request.c - libFuzzer on ipu-serve's infer body parser and
 * response builder (server/infer_request.c, infer_response.c), against
 * three real models loaded on in-process devices: affine (batch dim 0,
 * dynamic batch up to 8), scale (batch along dim 1) and the fused model.
 *
 * Input: byte 0 = 0xff: the rest is a config.yaml (server/model_config.c,
 * whose walk over libyaml's document must refuse with a message or fill
 * a config within its limits).  Otherwise byte 0 picks the model, bytes
 * 1-2 (little-endian) the
 * Inference-Header-Content-Length (clamped to the body), the rest is the
 * body.  A request the parser accepts must have every tensor's data
 * inside the body or its own buffer with exactly the model's bytes; its
 * response is then built from zeroed outputs.  No device run: the parser
 * and builder are what the network reaches.  Tensors may name the
 * shared-memory regions "r0" (4096 bytes) and "r1" (12 bytes at offset
 * 4090 of the same object) of a registry (server/shm.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "fuzz_models.h"
#include "serve.h"
#include "shm.h"

#define NMODELS FUZZ_NMODELS

static struct srv_model *models[NMODELS];
static struct srv_shm *shm;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[256], err[SRV_ERR];
	int i;

	(void)argc;
	(void)argv;
	fuzz_serve_models(models, "fuzz_serve_request");
	/* the registry keeps the descriptor: the object's name can go at once */
	snprintf(path, sizeof(path), "/fuzz-serve-%d", (int)getpid());
	i = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	shm = srv_shm_create(4);
	if (i < 0 || ftruncate(i, 8192) || !shm ||
	    srv_shm_register(shm, "r0", path, 0, 4096, err, sizeof(err)) ||
	    srv_shm_register(shm, "r1", path, 4090, 12, err, sizeof(err))) {
		fprintf(stderr, "fuzz_serve_request: shared memory: %s\n", err);
		abort();
	}
	shm_unlink(path);
	close(i);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srv_model *m;
	struct srv_request *req;
	char err[SRV_ERR], *out = NULL, *body;
	size_t len, jl, hl, olen, ojl;
	uint32_t i;

	if (size >= 1 && data[0] == 0xff) {
		struct srv_model_config c;

		err[0] = 0;
		if (srv_model_config_parse((const char *)data + 1, size - 1, "m", &c, err, sizeof(err))) {
			if (!err[0])
				abort();
		} else if (c.num_preferred > SRV_MAX_PREFERRED || c.num_versions > SRV_MAX_VERSIONS ||
			   c.instance_count < 1 || c.instance_count > 64 || c.latest_n < 1) {
			abort();
		}
		return 0;
	}
	if (size < 3)
		return 0;
	m = models[data[0] % NMODELS];
	hl = (size_t)data[1] | (size_t)data[2] << 8;
	len = size - 3;
	jl = hl < len ? hl : len;
	/* an exact-size copy: ASan sees any read past the body */
	body = malloc(len ? len : 1);
	if (!body)
		return 0;
	memcpy(body, data + 3, len);
	req = srv_request_new();
	if (!req)
		abort();
	req->shm = shm;
	err[0] = 0;
	if (!srv_request_parse(m, body, len, jl, NULL, req, err, sizeof(err))) {
		if (req->nin == 0 || req->nout == 0 || req->nreq == 0)
			abort();
		for (i = 0; i < req->nin; i++) {
			const char *d = req->in[i].data;
			uint64_t b = srv_tensor_bytes(&req->in[i]);
			int in_body = d >= body && d + b <= body + len;

			if (!d || (!in_body && d != req->in_owned[i]))
				abort();
		}
		if (!srv_response_build(m, req, &out, &olen, &ojl, err, sizeof(err)) && ojl > olen)
			abort();
	} else if (!err[0]) {
		abort(); /* every refusal says why */
	}
	free(out);
	srv_request_free(req);
	free(body);
	return 0;
}
