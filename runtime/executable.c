// SPDX-License-Identifier: MIT
/*
 * executable.c - the Executable: the model's engine image on a device,
 * with its programs run and stopped by name or index.
 */
#include <stdlib.h>
#include <string.h>

#include "ipu/ipux.h"
#include "rt_internal.h"

struct ipurt_executable {
	struct ipu_device *dev;
	const struct ipuef_file *f;
};

/*
 * Every anchor must name a stream of the executable with its direction and
 * size, and every stream must be carried by an anchor: a program waiting on
 * a stream nobody feeds would wait forever, so this is refused at load
 * with both names instead.
 */
static int check_streams(struct ipu_device *dev, const struct ipuef_file *f, char *err,
			 size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	int n = ipu_stream_count(dev);
	uint32_t a, s, dir, bytes;
	uint8_t *fed;

	if (n < 0) {
		return ipu_errorf(err, errlen, n, "cannot list the executable's streams: %s", ipu_err_name(n));
	}
	fed = calloc((size_t)n + 1, 1);
	if (!fed) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	for (a = 0; a < m->num_anchors; a++) {
		const struct ipuef_anchor *an = &m->anchors[a];
		uint32_t want = an->direction == IPUEF_OUTPUT ? IPU_STREAM_D2H : IPU_STREAM_H2D;

		if (an->stream_id >= (uint32_t)n) {
			ipu_errorf(err, errlen, IPURT_E_MODEL, "anchor '%s' names stream %u; the executable has %d streams",
				an->name, an->stream_id, n);
			free(fed);
			return IPURT_E_MODEL;
		}
		ipu_stream_info(dev, an->stream_id, &dir, &bytes);
		if (dir != want || bytes != ipuef_anchor_bytes(an)) {
			ipu_errorf(err, errlen, IPURT_E_MODEL,
				"anchor '%s' (%s, %llu bytes) does not match stream %u of the executable (%s, %u bytes)",
				an->name, an->direction == IPUEF_OUTPUT ? "output" : "input",
				(unsigned long long)ipuef_anchor_bytes(an), an->stream_id,
				dir == IPU_STREAM_D2H ? "device to host" : "host to device", bytes);
			free(fed);
			return IPURT_E_MODEL;
		}
		fed[an->stream_id] = 1;
	}
	for (a = 0; a < m->num_states; a++) {
		const struct ipuef_state *st = &m->states[a];
		uint32_t sid[2] = { st->write_stream, st->read_stream };

		for (uint32_t k = 0; k < 2; k++) {
			uint32_t want = k ? IPU_STREAM_D2H : IPU_STREAM_H2D;

			if (sid[k] < (uint32_t)n)
				ipu_stream_info(dev, sid[k], &dir, &bytes);
			if (sid[k] >= (uint32_t)n || dir != want || bytes != ipuef_state_bytes(st)) {
				ipu_errorf(err, errlen, IPURT_E_MODEL,
					"state '%s': its %s stream %u is not a %s stream of %llu bytes in the executable",
					st->name, k ? "read" : "write", sid[k],
					k ? "device to host" : "host to device",
					(unsigned long long)ipuef_state_bytes(st));
				free(fed);
				return IPURT_E_MODEL;
			}
			fed[sid[k]] = 1;
		}
	}
	for (s = 0; s < (uint32_t)n; s++) {
		if (!fed[s]) {
			ipu_stream_info(dev, s, &dir, &bytes);
			ipu_errorf(err, errlen, IPURT_E_MODEL,
				"stream %u of the executable (%s, %u bytes) has no anchor in the model's metadata: a program using it would wait forever",
				s, dir == IPU_STREAM_D2H ? "device to host" : "host to device", bytes);
			free(fed);
			return IPURT_E_MODEL;
		}
	}
	free(fed);
	return 0;
}

/* Upload the file's executable to dev and check its streams against the metadata. */
static int upload(struct ipu_device *dev, const struct ipuef_file *f, char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	struct ipu_error le;
	const void *img;
	size_t len;
	int rc;

	if (m->exe_format_major != IPUX_VERSION_MAJOR || m->exe_format_minor > IPUX_VERSION_MINOR) {
		return ipu_errorf(err, errlen, IPURT_E_MODEL,
			"the model's executable is format %u.%u; this runtime's devices run %u.%u",
			m->exe_format_major, m->exe_format_minor, IPUX_VERSION_MAJOR,
			IPUX_VERSION_MINOR);
	}
	img = ipuef_executable(f, &len);
	rc = ipu_load(dev, img, len, &le);
	if (rc) {
		char need[1024];

		/* a device behind the driver says only the code: name what it lacked */
		if (le.detail == IPUX_E_CODELET_UNKNOWN && !strstr(le.msg, "custom codelet") &&
		    rt_custom_codelets(img, len, need, sizeof(need)))
			return ipu_errorf(err, errlen, rc,
					  "the device refused the model's executable: %s (%s): it needs custom codelet %s; is that plugin loaded on the device (QEMU: -device ipu,custom-ops=PATH)?",
					  le.msg, ipu_err_name(le.detail), need);
		return ipu_errorf(err, errlen, rc, "the device refused the model's executable: %s (%s)",
				le.msg, ipu_err_name(le.detail ? le.detail : rc));
	}
	return check_streams(dev, f, err, errlen);
}

int ipurt_executable_load(struct ipu_device *dev, const struct ipuef_file *f,
			  struct ipurt_executable **out, char *err, size_t errlen)
{
	struct ipurt_executable *x;
	int rc;

	*out = NULL;
	x = calloc(1, sizeof(*x));
	if (!x) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	rc = upload(dev, f, err, errlen);
	if (rc) {
		free(x);
		return rc;
	}
	x->dev = dev;
	x->f = f;
	*out = x;
	return 0;
}

int ipurt_executable_reload(struct ipurt_executable *x, char *err, size_t errlen)
{
	return upload(x->dev, x->f, err, errlen);
}

void ipurt_executable_free(struct ipurt_executable *x)
{
	free(x);
}

int ipurt_executable_program(const struct ipurt_executable *x, const char *name)
{
	const struct ipuef_program *p = ipuef_find_program(x->f, name);

	return p ? (int)p->index : -1;
}

int ipurt_executable_run(struct ipurt_executable *x, uint32_t prog, int64_t timeout_ns,
			 char *err, size_t errlen)
{
	uint64_t seq;
	char derr[256];
	int rc = ipu_run(x->dev, prog, &seq);

	if (timeout_ns == 0)
		timeout_ns = -1; /* 0 means no timeout here, not a poll */
	if (rc) {
		return ipu_errorf(err, errlen, rc, "cannot start program %u: %s", prog, ipu_strerror(rc));
	}
	rc = ipu_wait(x->dev, seq, timeout_ns, derr, sizeof(derr));
	if (rc == IPU_E_TIMEOUT) {
		ipu_abort(x->dev);
		return ipu_errorf(err, errlen, IPURT_E_TIMEOUT, "program %u did not finish within %lld ns (aborted)", prog,
			(long long)timeout_ns);
	}
	if (rc)
		return ipu_errorf(err, errlen, rc, "program %u failed: %s", prog, derr);
	return 0;
}

struct ipu_device *ipurt_executable_device(const struct ipurt_executable *x)
{
	return x->dev;
}
