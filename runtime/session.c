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
	int64_t load_timeout_ns;
	int overridden;			/* created with caller data for TensorData */
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

/*
 * The TensorData anchors' tensors: the caller's overrides, else the file's
 * data.  Fills feed (room for every anchor) and *n.
 */
static int tensor_data(const struct ipuef_file *f, const struct ipurt_session_opts *opts,
		       struct ipurt_tensor *feed, uint32_t *n, char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	uint32_t i, nfeed = 0;

	for (i = 0; i < m->num_anchors; i++) {
		const struct ipuef_anchor *a = &m->anchors[i];
		const struct ipurt_tensor *ov;
		const struct ipuef_tensor *t;

		if (a->kind != IPUEF_ANCHOR_TENSOR_DATA)
			continue;
		ov = find_override(opts, a->name);
		if (opts && opts->exclude && opts->exclude(a->name, opts->exclude_ctx) && !ov) {
			return ipu_errorf(err, errlen, IPURT_E_MISSING,
				"tensor '%s' is excluded from automatic binding but no data was given for it",
				a->name);
		}
		if (ov) {
			feed[nfeed++] = *ov;
			continue;
		}
		t = ipuef_find_tensor(f, a->name);
		if (!t) { /* the reader guarantees it; be defensive anyway */
			return ipu_errorf(err, errlen, IPURT_E_MODEL, "no TensorData for anchor '%s'", a->name);
		}
		feed[nfeed].name = a->name;
		feed[nfeed].dtype = a->dtype;
		feed[nfeed].rank = a->rank;
		memcpy(feed[nfeed].dims, a->dims, sizeof(a->dims));
		feed[nfeed].data = (void *)t->data; /* only read: H2D stream */
		nfeed++;
	}
	*n = nfeed;
	return 0;
}

/* Run Load with the TensorData (a model without Load may have none). */
static int run_load(struct ipurt_session *s, const struct ipurt_session_opts *opts, char *err,
		    size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(s->f);
	struct ipurt_tensor *feed = calloc(m->num_anchors ? m->num_anchors : 1, sizeof(*feed));
	uint32_t nfeed = 0;
	int rc;

	if (!feed)
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	rc = tensor_data(s->f, opts, feed, &nfeed, err, errlen);
	if (!rc && ipuef_find_program(s->f, "load"))
		rc = ipurt_session_run_program(s, "load", feed, nfeed, s->load_timeout_ns, err, errlen);
	else if (!rc && nfeed)
		rc = ipu_errorf(err, errlen, IPURT_E_MODEL,
				"the model has TensorData anchors but no 'load' program");
	free(feed);
	return rc;
}

int ipurt_session_create(struct ipu_device *dev, const struct ipuef_file *f,
			 const struct ipurt_session_opts *opts, struct ipurt_session **out,
			 char *err, size_t errlen)
{
	struct ipurt_session *s;
	int rc;

	*out = NULL;
	if (!ipuef_find_program(f, "main")) {
		return ipu_errorf(err, errlen, IPURT_E_MODEL, "the model has no 'main' program");
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	s->dev = dev;
	s->f = f;
	s->load_timeout_ns = opts ? opts->load_timeout_ns : -1;
	s->overridden = opts && (opts->num_overrides || opts->exclude);
	rc = ipurt_executable_load(dev, f, &s->x, err, errlen);
	if (!rc)
		rc = run_load(s, opts, err, errlen);
	if (!rc)
		rc = ipurt_session_reset_state(s, err, errlen);
	if (rc) {
		ipurt_executable_free(s->x);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int ipurt_session_reload(struct ipurt_session *s, char *err, size_t errlen)
{
	int rc;

	if (s->overridden) {
		return ipu_errorf(err, errlen, IPURT_E_INVAL,
			"the session was created with the caller's data for its TensorData: create it again to reload");
	}
	rc = ipurt_executable_reload(s->x, err, errlen);
	if (!rc)
		rc = run_load(s, NULL, err, errlen);
	/* the reset that unloaded the model lost the state too */
	return rc ? rc : ipurt_session_reset_state(s, err, errlen);
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
