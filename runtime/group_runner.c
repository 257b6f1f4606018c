// SPDX-License-Identifier: MIT
/*
 * group_runner.c - a split model's group of IPUs behind the ModelRunner.
 * A request's buffers go to the streams of the IPUs that serve its
 * anchors and Main is queued on every IPU, all under one lock so that
 * every IPU sees the requests in the same order; the boundary tensors go
 * IPU to IPU over the links, so request i on IPU k+1 overlaps request i+1
 * on IPU k.  Each IPU reports its runs in order (its run handler), so the
 * j-th report of every IPU is request j's: the request is done when all
 * the IPUs reported it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ipu.h"
#include "rt_group.h"

struct slot {
	void *tag;
	uint32_t remaining;
	int status;
	char msg[200];
};

struct rt_ipu {
	struct rt_group *g;
	uint32_t k;
	uint64_t reported;		/* runs of Main it reported */
};

struct rt_group {
	const struct ipuef_file *f;
	const struct ipuef_metadata *m;
	struct ipu_group *ipus;
	uint32_t n, main, depth;
	rt_group_done_fn done;
	void *ctx;
	struct rt_ipu *ipu;
	struct slot *slots;		/* depth of them, request j in j % depth */
	uint64_t head, tail;		/* oldest in flight, next to queue */
	uint64_t ok, failed;
	int broken;
	pthread_mutex_t lock;		/* slots, head, tail, counts */
	pthread_mutex_t submit;		/* one request's submissions at a time */
	pthread_cond_t room;
};

static void on_run(void *ctx, uint64_t seq, int status, const char *msg)
{
	struct rt_ipu *ip = ctx;
	struct rt_group *g = ip->g;
	struct slot *s, fin = { 0 };
	int finished = 0;

	(void)seq;
	pthread_mutex_lock(&g->lock);
	s = &g->slots[ip->reported++ % g->depth];
	if (status && !s->status) {
		s->status = status;
		snprintf(s->msg, sizeof(s->msg), "IPU %u of %u: %s", ip->k, g->n,
			 msg && *msg ? msg : ipu_err_name(status));
	}
	if (--s->remaining == 0) {
		fin = *s;
		finished = 1;
		if (fin.status)
			g->failed++;
		else
			g->ok++;
	}
	pthread_mutex_unlock(&g->lock);
	if (!finished)
		return;
	/* before the slot is reused: the tag and message are copied */
	g->done(g->ctx, fin.tag, fin.status, fin.msg);
	pthread_mutex_lock(&g->lock);
	g->head++;
	pthread_cond_broadcast(&g->room);
	pthread_mutex_unlock(&g->lock);
}

static int open_devices(struct rt_group *g, const char *device, char *err, size_t errlen)
{
	char spec[160];
	const char *v = g->m->ipu_version;
	struct ipu_device_info info, ik;

	if (!device || !*device) {
		int named = v && (!strcmp(v, "ipu2") || !strcmp(v, "ipu21"));

		snprintf(spec, sizeof(spec), "model:tiles=%u,tile_mem=%u%s%s", g->m->num_tiles,
			 g->m->tile_mem, named ? ",version=" : "", named ? v : "");
		device = spec;
	} else if ((strncmp(device, "model", 5) && strncmp(device, "/dev/accel/", 11)) ||
		   strchr(device, ';')) {
		return ipu_errorf(err, errlen, IPURT_E_NO_DEVICE,
				  "the model is split over %u IPUs: it runs on a group of in-process devices (one 'model...' spec, opened %u times) or of %u kernel devices of one ipu-link (/dev/accel/accel0,/dev/accel/accel1,...), not on '%s'",
				  g->n, g->n, g->n, device);
	}
	if (ipu_group_open(device, g->n, &g->ipus, err, errlen))
		return IPURT_E_NO_DEVICE;
	if (ipu_info(ipu_group_device(g->ipus, 0), &info))
		return ipu_errorf(err, errlen, IPURT_E_DEVICE, "cannot read the device's size");
	/* the stages are verified for one size: every IPU of the group has it */
	for (uint32_t k = 1; k < g->n; k++) {
		if (ipu_info(ipu_group_device(g->ipus, k), &ik))
			return ipu_errorf(err, errlen, IPURT_E_DEVICE, "cannot read IPU %u's size", k);
		if (ik.num_tiles != info.num_tiles || ik.tile_mem != info.tile_mem)
			return ipu_errorf(err, errlen, IPURT_E_NO_DEVICE,
					  "IPU %u of the group (%s) has %u tiles of %u bytes, IPU 0 (%s) %u of %u: a group's IPUs are all of one size",
					  k, ik.path, ik.num_tiles, ik.tile_mem, info.path,
					  info.num_tiles, info.tile_mem);
	}
	return ipuef_group_verify(g->f, info.num_tiles, info.tile_mem, err, errlen) ? IPURT_E_MODEL : 0;
}

static int load_and_link(struct rt_group *g, char *err, size_t errlen)
{
	const struct ipuef_group *gt = g->m->group;
	uint32_t depth = g->depth;

	for (uint32_t k = 0; k < g->n; k++) {
		struct ipu_error le;
		size_t len;
		const void *img = ipuef_group_executable(g->f, k, &len);
		int rc = ipu_load(ipu_group_device(g->ipus, k), img, len, &le);

		if (rc)
			return ipu_errorf(err, errlen, IPURT_E_MODEL,
					  "IPU %u refused its executable: %s (%s)", k, le.msg,
					  ipu_err_name(le.detail ? le.detail : rc));
	}
	for (uint32_t i = 0; i < gt->num_links; i++) {
		const struct ipuef_link *l = &gt->links[i];
		char m[300];

		if (ipu_group_link(g->ipus, l->src_ipu, l->src_stream, l->dst_ipu, l->dst_stream, m,
				   sizeof(m)) < 0)
			return ipu_errorf(err, errlen, IPURT_E_MODEL, "link '%s': %s", l->name, m);
	}
	for (uint32_t k = 0; k < g->n; k++)
		if (ipu_set_run_handler(ipu_group_device(g->ipus, k), on_run, &g->ipu[k]))
			return ipu_errorf(err, errlen, IPURT_E_DEVICE, "IPU %u: no run handler", k);
	if (ipu_group_start(g->ipus, depth, NULL, NULL, err, errlen))
		return IPURT_E_DEVICE;
	return 0;
}

int rt_group_open(const struct ipuef_file *f, const char *device, uint32_t depth,
		  rt_group_done_fn done, void *ctx, struct rt_group **out, char *err,
		  size_t errlen)
{
	struct rt_group *g = calloc(1, sizeof(*g));
	const struct ipuef_program *p = ipuef_find_program(f, "main");
	int rc;

	*out = NULL;
	if (!g)
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	pthread_mutex_init(&g->lock, NULL);
	pthread_mutex_init(&g->submit, NULL);
	pthread_cond_init(&g->room, NULL);
	g->f = f;
	g->m = ipuef_metadata(f);
	g->n = ipuef_num_ipus(f);
	g->depth = depth ? depth : 1;
	g->done = done;
	g->ctx = ctx;
	g->ipu = calloc(g->n, sizeof(*g->ipu));
	g->slots = calloc(g->depth, sizeof(*g->slots));
	if (!g->ipu || !g->slots) {
		rt_group_close(g);
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	for (uint32_t k = 0; k < g->n; k++)
		g->ipu[k] = (struct rt_ipu){ g, k, 0 };
	if (!p) {
		rt_group_close(g);
		return ipu_errorf(err, errlen, IPURT_E_MODEL, "the model has no program 'main'");
	}
	g->main = p->index;
	rc = open_devices(g, device, err, errlen);
	if (!rc)
		rc = load_and_link(g, err, errlen);
	if (rc) {
		rt_group_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

void rt_group_close(struct rt_group *g)
{
	if (!g)
		return;
	/* aborts what is queued: its runs are reported (cancelled) first */
	ipu_group_close(g->ipus);
	free(g->ipu);
	free(g->slots);
	pthread_mutex_destroy(&g->lock);
	pthread_mutex_destroy(&g->submit);
	pthread_cond_destroy(&g->room);
	free(g);
}

int rt_group_enqueue(struct rt_group *g, const uint32_t *anchors, void *const *bufs, uint32_t n,
		     void *tag)
{
	uint64_t j;
	int rc = 0;

	pthread_mutex_lock(&g->submit);
	pthread_mutex_lock(&g->lock);
	while (g->tail - g->head >= g->depth && !g->broken)
		pthread_cond_wait(&g->room, &g->lock);
	if (g->broken) {
		pthread_mutex_unlock(&g->lock);
		pthread_mutex_unlock(&g->submit);
		return IPURT_E_DEVICE;
	}
	j = g->tail;
	g->slots[j % g->depth] = (struct slot){ tag, g->n, 0, "" };
	pthread_mutex_unlock(&g->lock);
	for (uint32_t i = 0; i < n && !rc; i++) {
		const struct ipuef_anchor *a = &g->m->anchors[anchors[i]];
		uint32_t s, k = ipuef_anchor_ipu(g->m, a, &s);

		rc = ipu_stream_submit(ipu_group_device(g->ipus, k), s, bufs[i],
				       ipuef_anchor_bytes(a), j);
		/* a stream fed, another not: the IPUs' order is lost */
		if (rc && i)
			rc = IPURT_E_DEVICE;
	}
	for (uint32_t k = 0; k < g->n && !rc; k++) {
		uint64_t seq;

		if (ipu_run(ipu_group_device(g->ipus, k), g->main, &seq))
			rc = IPURT_E_DEVICE;
	}
	pthread_mutex_lock(&g->lock);
	if (rc == IPURT_E_DEVICE)
		g->broken = 1;
	if (!rc)
		g->tail++;
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_unlock(&g->submit);
	return rc == IPURT_E_DEVICE ? rc : rc ? IPURT_E_NOMEM : 0;
}

struct ipu_group *rt_group_ipus(const struct rt_group *g)
{
	return g->ipus;
}

void rt_group_counts(const struct rt_group *g, uint64_t *ok, uint64_t *failed)
{
	pthread_mutex_t *l = (pthread_mutex_t *)&g->lock;

	pthread_mutex_lock(l);
	*ok = g->ok;
	*failed = g->failed;
	pthread_mutex_unlock(l);
}
