// SPDX-License-Identifier: MIT
/*
 * state.c - device-resident state through a Session: initialise it after
 * Load, reset it, read it back and write it.  The device has no other way
 * in or out of tile memory than streams, so every operation is one run of
 * the executable's state_write or state_read program, which move every
 * state at once; touching one state means moving the others through a
 * scratch buffer too (state is read and written between requests, not per
 * token, so this costs little).
 */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* One buffer per state: the caller's for `name`, scratch for the rest. */
struct state_bufs {
	void **p;
	uint8_t *scratch;
};

static void bufs_free(struct state_bufs *b)
{
	free(b->p);
	free(b->scratch);
}

static int bufs_alloc(const struct ipuef_metadata *m, struct state_bufs *b, char *err,
		      size_t errlen)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < m->num_states; i++)
		total += ipuef_state_bytes(&m->states[i]);
	b->p = calloc(m->num_states, sizeof(*b->p));
	b->scratch = calloc(total ? total : 1, 1);
	if (!b->p || !b->scratch) {
		bufs_free(b);
		return ipu_errorf(err, errlen, IPURT_E_NOMEM,
				  "out of memory for %llu bytes of state",
				  (unsigned long long)total);
	}
	total = 0;
	for (uint32_t i = 0; i < m->num_states; i++) {
		b->p[i] = b->scratch + total;
		total += ipuef_state_bytes(&m->states[i]);
	}
	return 0;
}

/* Run state_write (write != 0) or state_read with one buffer per state. */
static int run_states(struct ipurt_session *s, int write, void *const *bufs, char *err,
		      size_t errlen)
{
	const struct ipuef_file *f = ipurt_session_file(s);
	const struct ipuef_metadata *m = ipuef_metadata(f);
	struct ipurt_executable *x = ipurt_session_executable(s);
	struct ipu_device *dev = ipurt_executable_device(x);
	const char *name = write ? IPUEF_PROGRAM_STATE_WRITE : IPUEF_PROGRAM_STATE_READ;
	int prog = ipurt_executable_program(x, name);
	int rc;

	if (prog < 0)
		return ipu_errorf(err, errlen, IPURT_E_MODEL, "the model has no '%s' program", name);
	for (uint32_t i = 0; i < m->num_states; i++) {
		const struct ipuef_state *st = &m->states[i];

		rc = ipu_stream_submit(dev, write ? st->write_stream : st->read_stream, bufs[i],
				       ipuef_state_bytes(st), 0);
		if (rc) {
			ipu_abort(dev);
			return ipu_errorf(err, errlen, rc, "cannot queue state '%s': %s", st->name,
					  ipu_strerror(rc));
		}
	}
	return ipurt_executable_run(x, (uint32_t)prog, -1, err, errlen);
}

static int find(const struct ipuef_metadata *m, const char *name, uint64_t bytes, char *err,
		size_t errlen)
{
	for (uint32_t i = 0; name && i < m->num_states; i++) {
		uint64_t want = ipuef_state_bytes(&m->states[i]);

		if (strcmp(m->states[i].name, name))
			continue;
		if (bytes != want)
			return ipu_errorf(err, errlen, IPURT_E_SHAPE,
					  "state '%s' has %llu bytes, %llu were given", name,
					  (unsigned long long)want, (unsigned long long)bytes);
		return (int)i;
	}
	return ipu_errorf(err, errlen, IPURT_E_NAME, "the model has no state '%s'%s",
			  name ? name : "(null)",
			  m->num_states ? "" : " (it declares no state)");
}

int ipurt_session_reset_state(struct ipurt_session *s, char *err, size_t errlen)
{
	const struct ipuef_file *f = ipurt_session_file(s);
	const struct ipuef_metadata *m = ipuef_metadata(f);
	struct state_bufs b;
	int rc;

	if (!m->num_states)
		return 0;
	rc = bufs_alloc(m, &b, err, errlen);	/* zeros */
	if (rc)
		return rc;
	for (uint32_t i = 0; i < m->num_states; i++) {
		const struct ipuef_tensor *t;

		if (m->states[i].init != IPUEF_STATE_INIT_DATA)
			continue;
		t = ipuef_find_tensor(f, m->states[i].name);
		if (t)	/* the reader checked it is there, of the state's size */
			b.p[i] = (void *)t->data;	/* only read: H2D */
	}
	rc = run_states(s, 1, b.p, err, errlen);
	bufs_free(&b);
	return rc;
}

int ipurt_session_read_state(struct ipurt_session *s, const char *name, void *dst,
			     uint64_t bytes, char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(ipurt_session_file(s));
	struct state_bufs b;
	int i = find(m, name, bytes, err, errlen), rc;

	if (i < 0)
		return i;
	rc = bufs_alloc(m, &b, err, errlen);
	if (rc)
		return rc;
	b.p[i] = dst;
	rc = run_states(s, 0, b.p, err, errlen);
	bufs_free(&b);
	return rc;
}

int ipurt_session_write_state(struct ipurt_session *s, const char *name, const void *src,
			      uint64_t bytes, char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(ipurt_session_file(s));
	struct state_bufs b;
	int i = find(m, name, bytes, err, errlen), rc;

	if (i < 0)
		return i;
	rc = bufs_alloc(m, &b, err, errlen);
	if (rc)
		return rc;
	/* the others keep their values: read them all, then write them back */
	rc = run_states(s, 0, b.p, err, errlen);
	if (!rc) {
		b.p[i] = (void *)src;	/* only read: H2D */
		rc = run_states(s, 1, b.p, err, errlen);
	}
	bufs_free(&b);
	return rc;
}
