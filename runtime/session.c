// SPDX-License-Identifier: MIT
/*
 * session.c - the Session: upload the executable, bind TensorData to the
 * Load program's streams (except what a predicate excludes, which the
 * user must then supply), run Load once, and run other programs on demand.
 */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

struct ipurt_session {
	struct ipu_device *dev;
	const struct ipuef_file *f;
	struct ipurt_executable *x;
};

static const struct ipurt_tensor *find_override(const struct ipurt_session_opts *o,
						const char *name)
{
	uint32_t i;

	for (i = 0; o && i < o->num_overrides; i++)
		if (!strcmp(o->overrides[i].name, name))
			return &o->overrides[i];
	return NULL;
}

/* Check a user tensor against an anchor's exact request shape. */
static int check_exact(const struct ipuef_anchor *a, const struct ipurt_tensor *t, char *err,
		       size_t errlen)
{
	char want[128], got[128];
	uint32_t i;
	int same = t->dtype == a->dtype && t->rank == a->rank;

	for (i = 0; same && i < a->rank; i++)
		same = t->dims[i] == a->dims[i];
	if (same && t->data)
		return 0;
	rt_shape_str(a->dtype, a->rank, a->dims, want, sizeof(want));
	rt_shape_str(t->dtype, t->rank, t->dims, got, sizeof(got));
	return ipu_errorf(err, errlen, t->dtype != a->dtype ? IPURT_E_DTYPE : IPURT_E_SHAPE, "tensor '%s': got %s%s, the model needs %s", a->name, got,
		t->data ? "" : " with no data", want);
}

int ipurt_session_run_program(struct ipurt_session *s, const char *program,
			      const struct ipurt_tensor *tensors, uint32_t n,
			      int64_t timeout_ns, char *err, size_t errlen)
{
	const struct ipuef_program *p = ipuef_find_program(s->f, program);
	uint32_t i;
	int rc;

	if (!p) {
		return ipu_errorf(err, errlen, IPURT_E_MODEL, "the model has no program '%s'", program);
	}
	for (i = 0; i < n; i++) {
		const struct ipuef_anchor *a = ipuef_find_anchor(s->f, tensors[i].name);

		if (!a) {
			return ipu_errorf(err, errlen, IPURT_E_NAME, "the model has no anchor '%s'", tensors[i].name);
		}
		rc = check_exact(a, &tensors[i], err, errlen);
		if (rc)
			return rc;
	}
	for (i = 0; i < n; i++) {
		const struct ipuef_anchor *a = ipuef_find_anchor(s->f, tensors[i].name);

		rc = ipu_stream_submit(s->dev, a->stream_id, tensors[i].data, ipuef_anchor_bytes(a), 0);
		if (rc) {
			ipu_abort(s->dev);
			return ipu_errorf(err, errlen, rc, "cannot queue '%s' on stream %u: %s", a->name,
				a->stream_id, ipu_strerror(rc));
		}
	}
	return ipurt_executable_run(s->x, p->index, timeout_ns, err, errlen);
}

int ipurt_session_create(struct ipu_device *dev, const struct ipuef_file *f,
			 const struct ipurt_session_opts *opts, struct ipurt_session **out,
			 char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	const struct ipuef_program *load = ipuef_find_program(f, "load");
	struct ipurt_session *s;
	struct ipurt_tensor *feed = NULL;
	uint32_t i, nfeed = 0;
	int rc;

	*out = NULL;
	if (!ipuef_find_program(f, "main")) {
		return ipu_errorf(err, errlen, IPURT_E_MODEL, "the model has no 'main' program");
	}
	s = calloc(1, sizeof(*s));
	feed = calloc(m->num_anchors ? m->num_anchors : 1, sizeof(*feed));
	if (!s || !feed) {
		free(s);
		free(feed);
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	s->dev = dev;
	s->f = f;
	rc = ipurt_executable_load(dev, f, &s->x, err, errlen);
	if (rc)
		goto fail;
	/* TensorData anchors: from the file unless excluded/overridden */
	for (i = 0; i < m->num_anchors; i++) {
		const struct ipuef_anchor *a = &m->anchors[i];
		const struct ipurt_tensor *ov;
		const struct ipuef_tensor *t;

		if (a->kind != IPUEF_ANCHOR_TENSOR_DATA)
			continue;
		ov = find_override(opts, a->name);
		if (opts && opts->exclude && opts->exclude(a->name, opts->exclude_ctx) && !ov) {
			ipu_errorf(err, errlen, IPURT_E_MISSING,
				"tensor '%s' is excluded from automatic binding but no data was given for it",
				a->name);
			rc = IPURT_E_MISSING;
			goto fail;
		}
		if (ov) {
			feed[nfeed++] = *ov;
			continue;
		}
		t = ipuef_find_tensor(f, a->name);
		if (!t) { /* the reader guarantees it; be defensive anyway */
			ipu_errorf(err, errlen, IPURT_E_MODEL, "no TensorData for anchor '%s'", a->name);
			rc = IPURT_E_MODEL;
			goto fail;
		}
		feed[nfeed].name = a->name;
		feed[nfeed].dtype = a->dtype;
		feed[nfeed].rank = a->rank;
		memcpy(feed[nfeed].dims, a->dims, sizeof(a->dims));
		feed[nfeed].data = (void *)t->data; /* only read: H2D stream */
		nfeed++;
	}
	if (load) {
		rc = ipurt_session_run_program(s, "load", feed, nfeed,
					       opts ? opts->load_timeout_ns : -1, err, errlen);
		if (rc)
			goto fail;
	} else if (nfeed) {
		ipu_errorf(err, errlen, IPURT_E_MODEL, "the model has TensorData anchors but no 'load' program");
		rc = IPURT_E_MODEL;
		goto fail;
	}
	free(feed);
	*out = s;
	return 0;
fail:
	free(feed);
	ipurt_executable_free(s->x);
	free(s);
	return rc;
}

void ipurt_session_destroy(struct ipurt_session *s)
{
	if (!s)
		return;
	ipurt_executable_free(s->x);
	free(s);
}

struct ipurt_executable *ipurt_session_executable(struct ipurt_session *s)
{
	return s->x;
}

const struct ipuef_file *ipurt_session_file(const struct ipurt_session *s)
{
	return s->f;
}
