// SPDX-License-Identifier: MIT
/*
 * group.c - IPUs joined by modelled IPU-Links (ipu/group.h).
 *
 * A link is a ring of buffers between a sender's device-to-host stream
 * and a receiver's host-to-device stream.  The devices post completions
 * with no lock held, so the completion handler of one device hands a
 * filled buffer straight to the other device's stream: no thread of the
 * group's own, and a receiver whose StreamCopy finds no buffer waits as it
 * waits for the host.  The modelled clock is kept from the devices'
 * traces: each run of Main records its cycles without its link stream
 * copies, which the link's own cycles replace.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/group.h"

#define LINK_SHIFT 20u		/* tag: IPU_GROUP_TAG | link << 20 | buffer */
#define MAX_DEPTH (1u << LINK_SHIFT)

struct glink {
	uint32_t src, dst, src_stream, dst_stream, bytes;
	void **bufs;
	uint32_t nbufs;
	struct ipu_link_stats st;
};

struct gdev {
	struct ipu_group *g;
	uint32_t i;
	struct ipu_device *d;
	int32_t *link_of;	/* per stream: the link it is an end of, or -1 */
	uint32_t nstreams;
	uint64_t *runs;		/* modelled cycles of each run of Main */
	uint64_t nruns, cap;
	uint64_t link_cycles;	/* of the run under way: its link copies */
	struct ipu_link_counters base;	/* kernel device: its link counters at start */
};

struct ipu_group {
	uint32_t n;
	int hw;			/* kernel devices: the links are the devices' own */
	struct gdev dev[IPU_GROUP_MAX];
	struct glink *links;
	uint32_t nlinks, cap;
	pthread_mutex_t mu;	/* link stats, run records */
	atomic_int closing;
	atomic_int inflight;	/* link handlers under way */
	int started;
	ipu_group_completion_fn fn;
	void *ctx;
	ipu_group_trace_fn trace;	/* set while no IPU runs */
	void *trace_ctx;
};

static uint64_t link_cycles(uint64_t bytes)
{
	return IPU_LINK_LATENCY_CYCLES + (bytes + IPU_LINK_BYTES_PER_CYCLE - 1) / IPU_LINK_BYTES_PER_CYCLE;
}

#define KERNEL_PREFIX "/dev/accel/"

/* The spec of IPU i: a kernel group names its n nodes (comma-separated),
 * an in-process group is one spec opened n times. */
static int member_spec(const char *spec, uint32_t n, uint32_t i, char *out, size_t outlen,
		       char *err, size_t errlen)
{
	const char *p = spec, *e;
	uint32_t k = 0;

	if (strncmp(spec, KERNEL_PREFIX, strlen(KERNEL_PREFIX))) {
		snprintf(out, outlen, "%s", spec);
		return 0;
	}
	for (;;) {
		e = strchr(p, ',');
		if (k == i)
			break;
		if (!e)
			goto count;
		p = e + 1;
		k++;
	}
	if (i + 1 == n && e)
		goto count;
	if ((size_t)(e ? e - p : (ptrdiff_t)strlen(p)) >= outlen ||
	    strncmp(p, KERNEL_PREFIX, strlen(KERNEL_PREFIX))) {
		snprintf(err, errlen, "'%.*s' in '%s' is not a device node (%s...)",
			 (int)(e ? e - p : (ptrdiff_t)strlen(p)), p, spec, KERNEL_PREFIX "accelN");
		return IPU_E_INVAL;
	}
	snprintf(out, outlen, "%.*s", (int)(e ? e - p : (ptrdiff_t)strlen(p)), p);
	return 0;
count:
	snprintf(err, errlen,
		 "a group of %u kernel devices names each of them, comma-separated (e.g. %s), not '%s'",
		 n, n > 1 ? KERNEL_PREFIX "accel0," KERNEL_PREFIX "accel1" : KERNEL_PREFIX "accel0", spec);
	return IPU_E_INVAL;
}

int ipu_group_open(const char *spec, uint32_t n, struct ipu_group **out, char *err,
		   size_t errlen)
{
	struct ipu_group *g;
	struct ipu_device *devs[IPU_GROUP_MAX];
	struct ipu_device_info info;
	int r;

	*out = NULL;
	if (!spec || !*spec)
		spec = "model";
	if (n < 1 || n > IPU_GROUP_MAX) {
		snprintf(err, errlen, "a group has 1 to %u IPUs, not %u", IPU_GROUP_MAX, n);
		return IPU_E_INVAL;
	}
	/* the whole list is checked before a device is opened */
	for (uint32_t i = 0; i < n; i++) {
		char one[128];

		if ((r = member_spec(spec, n, i, one, sizeof(one), err, errlen)) != 0)
			return r;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory for a group of %u IPUs", n);
		return IPU_E_NOMEM;
	}
	pthread_mutex_init(&g->mu, NULL);
	atomic_init(&g->closing, 0);
	atomic_init(&g->inflight, 0);
	for (uint32_t i = 0; i < n; i++) {
		char e2[256] = "", one[128];

		g->dev[i].g = g;
		g->dev[i].i = i;
		r = member_spec(spec, n, i, one, sizeof(one), err, errlen);
		if (r) {
			ipu_group_close(g);
			return r;
		}
		r = ipu_open(one, &g->dev[i].d, e2, sizeof(e2));
		g->n = i + (g->dev[i].d != NULL);
		if (!r && (r = ipu_info(g->dev[i].d, &info)) != 0)
			snprintf(e2, sizeof(e2), "info: %s", ipu_strerror(r));
		if (!r && i == 0)
			g->hw = info.backend == IPU_BACKEND_KERNEL && n > 1;
		/* the devices of an ipu-link are attached as one group below */
		if (!r && !g->hw && (r = ipu_attach(g->dev[i].d)) != 0)
			snprintf(e2, sizeof(e2), "attach: %s", ipu_strerror(r));
		if (r) {
			snprintf(err, errlen, "IPU %u of the group (%s): %s", i, one, e2);
			ipu_group_close(g);
			return r;
		}
		devs[i] = g->dev[i].d;
	}
	if (g->hw && (r = ipu_attach_group(devs, n)) != 0) {
		snprintf(err, errlen,
			 "%s: %s", spec,
			 r == IPU_E_BUSY ? "a member is attached by another process" :
			 r == IPU_E_INVAL ? "not the devices of one ipu-link (sysfs link_index), or one named twice" :
			 ipu_strerror(r));
		ipu_group_close(g);
		return r;
	}
	*out = g;
	return 0;
}

void ipu_group_close(struct ipu_group *g)
{
	if (!g)
		return;
	/* no handler may hand a buffer to a device being closed: from here
	 * on they stop, and the ones under way finish first (both sides
	 * sequentially consistent, so one of them sees the other) */
	atomic_store(&g->closing, 1);
	while (atomic_load(&g->inflight) > 0)
		sched_yield();
	for (uint32_t i = 0; i < g->n; i++)
		if (g->dev[i].d)
			ipu_abort(g->dev[i].d);
	for (uint32_t i = 0; i < g->n; i++) {
		ipu_close(g->dev[i].d);
		free(g->dev[i].link_of);
		free(g->dev[i].runs);
	}
	for (uint32_t l = 0; l < g->nlinks; l++) {
		for (uint32_t b = 0; b < g->links[l].nbufs; b++)
			free(g->links[l].bufs[b]);
		free(g->links[l].bufs);
	}
	free(g->links);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

uint32_t ipu_group_size(const struct ipu_group *g)
{
	return g->n;
}

struct ipu_device *ipu_group_device(struct ipu_group *g, uint32_t i)
{
	return i < g->n ? g->dev[i].d : NULL;
}

uint32_t ipu_group_num_links(const struct ipu_group *g)
{
	return g->nlinks;
}

/* The stream table of IPU i, made when its first link is declared. */
static int streams_of(struct gdev *gd, char *err, size_t errlen)
{
	int n;

	if (gd->link_of)
		return 0;
	n = ipu_stream_count(gd->d);
	if (n < 0) {
		snprintf(err, errlen, "IPU %u: no executable loaded (%s)", gd->i, ipu_strerror(n));
		return n;
	}
	gd->link_of = malloc(((size_t)n + 1) * sizeof(*gd->link_of));
	if (!gd->link_of) {
		snprintf(err, errlen, "out of memory");
		return IPU_E_NOMEM;
	}
	for (int s = 0; s < n; s++)
		gd->link_of[s] = -1;
	gd->nstreams = (uint32_t)n;
	return 0;
}

/* One end of a link: the stream exists, goes the right way, is free. */
static int check_end(struct gdev *gd, uint32_t stream, uint32_t want_dir, uint32_t *bytes,
		     char *err, size_t errlen)
{
	uint32_t dir = 0;
	int r = streams_of(gd, err, errlen);

	if (r)
		return r;
	if (stream >= gd->nstreams || ipu_stream_info(gd->d, stream, &dir, bytes)) {
		snprintf(err, errlen, "IPU %u has no stream %u (%u streams)", gd->i, stream, gd->nstreams);
		return IPU_E_INVAL;
	}
	if (dir != want_dir) {
		snprintf(err, errlen, "IPU %u stream %u is %s: a link %s a %s stream", gd->i, stream,
			 dir == IPU_STREAM_H2D ? "host-to-device" : "device-to-host",
			 want_dir == IPU_STREAM_D2H ? "leaves its sender from" : "reaches its receiver through",
			 want_dir == IPU_STREAM_D2H ? "device-to-host" : "host-to-device");
		return IPU_E_INVAL;
	}
	if (gd->link_of[stream] >= 0) {
		snprintf(err, errlen, "IPU %u stream %u is already an end of link %d", gd->i, stream,
			 gd->link_of[stream]);
		return IPU_E_INVAL;
	}
	return 0;
}

int ipu_group_link(struct ipu_group *g, uint32_t src_ipu, uint32_t src_stream,
		   uint32_t dst_ipu, uint32_t dst_stream, char *err, size_t errlen)
{
	uint32_t sb = 0, db = 0;
	int r;

	if (g->started) {
		snprintf(err, errlen, "links are declared before ipu_group_start");
		return IPU_E_INVAL;
	}
	if (src_ipu >= g->n || dst_ipu >= g->n || src_ipu >= dst_ipu) {
		snprintf(err, errlen, "a link from IPU %u to IPU %u: both below %u, the sender first",
			 src_ipu, dst_ipu, g->n);
		return IPU_E_INVAL;
	}
	if (g->nlinks >= IPU_GROUP_MAX_LINKS) {
		snprintf(err, errlen, "more than %u links", IPU_GROUP_MAX_LINKS);
		return IPU_E_INVAL;
	}
	r = check_end(&g->dev[src_ipu], src_stream, IPU_STREAM_D2H, &sb, err, errlen);
	if (!r)
		r = check_end(&g->dev[dst_ipu], dst_stream, IPU_STREAM_H2D, &db, err, errlen);
	if (r)
		return r;
	if (sb != db) {
		snprintf(err, errlen, "link IPU %u stream %u (%u bytes) -> IPU %u stream %u (%u bytes): the ends differ in size",
			 src_ipu, src_stream, sb, dst_ipu, dst_stream, db);
		return IPU_E_INVAL;
	}
	if (g->nlinks == g->cap) {
		uint32_t nc = g->cap ? g->cap * 2 : 8;
		struct glink *nl = realloc(g->links, nc * sizeof(*nl));

		if (!nl) {
			snprintf(err, errlen, "out of memory");
			return IPU_E_NOMEM;
		}
		g->links = nl;
		g->cap = nc;
	}
	g->links[g->nlinks] = (struct glink){ src_ipu, dst_ipu, src_stream, dst_stream, sb, NULL, 0,
					      { src_ipu, dst_ipu, 0, 0, 0 } };
	g->dev[src_ipu].link_of[src_stream] = (int32_t)g->nlinks;
	g->dev[dst_ipu].link_of[dst_stream] = (int32_t)g->nlinks;
	return (int)g->nlinks++;
}

static void on_completion(void *ctx, const struct ipu_completion *c)
{
	struct gdev *gd = ctx;
	struct ipu_group *g = gd->g;
	struct glink *l;
	uint32_t li, b;

	if (!(c->tag & IPU_GROUP_TAG)) {
		if (g->fn)
			g->fn(g->ctx, gd->i, c);
		return;
	}
	atomic_fetch_add(&g->inflight, 1);
	li = (uint32_t)((c->tag & ~IPU_GROUP_TAG) >> LINK_SHIFT);
	b = (uint32_t)(c->tag & (MAX_DEPTH - 1));
	if (c->status || atomic_load(&g->closing) || li >= g->nlinks || b >= g->links[li].nbufs) {
		atomic_fetch_sub(&g->inflight, 1);
		return;
	}
	l = &g->links[li];
	if (gd->i == l->src) {
		pthread_mutex_lock(&g->mu);
		l->st.transfers++;
		l->st.bytes += c->bytes;
		l->st.cycles += link_cycles(c->bytes);
		pthread_mutex_unlock(&g->mu);
		ipu_stream_submit(g->dev[l->dst].d, l->dst_stream, l->bufs[b], l->bytes, c->tag);
	} else {
		ipu_stream_submit(g->dev[l->src].d, l->src_stream, l->bufs[b], l->bytes, c->tag);
	}
	atomic_fetch_sub(&g->inflight, 1);
}

static void on_trace(void *ctx, const struct ipu_step_event *ev)
{
	struct gdev *gd = ctx;
	struct ipu_group *g = gd->g;

	if (g->trace)
		g->trace(g->trace_ctx, gd->i, ev);
	if (ev->kind == IPU_STEP_STREAM_COPY) {
		if (ev->stream < gd->nstreams && gd->link_of && gd->link_of[ev->stream] >= 0)
			gd->link_cycles += ev->cycles;
		return;
	}
	if (ev->kind != IPU_TRACE_PROGRAM)
		return;
	if (ev->program == 0 && ev->status == 0) {
		uint64_t c = ev->cycles > gd->link_cycles ? ev->cycles - gd->link_cycles : 0;

		pthread_mutex_lock(&g->mu);
		if (gd->nruns == gd->cap) {
			uint64_t nc = gd->cap ? gd->cap * 2 : 64;
			uint64_t *nr = realloc(gd->runs, nc * sizeof(*nr));

			if (nr) {
				gd->runs = nr;
				gd->cap = nc;
			}
		}
		/* out of memory: the run is not recorded, the clock ends
		 * before it (ipu_group_modelled counts the runs it has) */
		if (gd->nruns < gd->cap)
			gd->runs[gd->nruns++] = c;
		pthread_mutex_unlock(&g->mu);
	}
	gd->link_cycles = 0;
}

/*
 * Kernel devices: each link is the sender device's own (the driver's
 * LINK_STREAM), so no buffer of the group's is queued and no host thread
 * carries the data; every completion is the user's.  The devices keep no
 * per-step trace, so the group's modelled clock has no runs.
 */
static int start_device_links(struct ipu_group *g, char *err, size_t errlen)
{
	int r;

	for (uint32_t i = 0; i < g->n; i++) {
		if ((r = streams_of(&g->dev[i], err, errlen)) != 0)
			return r;
		/* the device's counters add up over earlier users: the group's
		 * figures start here */
		r = ipu_link_counters(g->dev[i].d, &g->dev[i].base);
		if (r) {
			snprintf(err, errlen, "IPU %u: link counters: %s", i, ipu_strerror(r));
			return r;
		}
		ipu_set_completion_handler(g->dev[i].d, on_completion, &g->dev[i]);
	}
	for (uint32_t li = 0; li < g->nlinks; li++) {
		const struct glink *l = &g->links[li];

		r = ipu_link_stream(g->dev[l->src].d, l->src_stream, l->dst, l->dst_stream);
		if (r) {
			snprintf(err, errlen, "link %u (IPU %u stream %u -> IPU %u stream %u): the device refused it (%s)",
				 li, l->src, l->src_stream, l->dst, l->dst_stream, ipu_strerror(r));
			return r;
		}
	}
	g->started = 1;
	return 0;
}

int ipu_group_start(struct ipu_group *g, uint32_t depth, ipu_group_completion_fn fn, void *ctx,
		    char *err, size_t errlen)
{
	int r;

	if (g->started || depth < 1 || depth >= MAX_DEPTH) {
		snprintf(err, errlen, g->started ? "the group is started already" :
			 "link depth %u: 1 to %u buffers", depth, MAX_DEPTH - 1);
		return IPU_E_INVAL;
	}
	g->fn = fn;
	g->ctx = ctx;
	if (g->hw)
		return start_device_links(g, err, errlen);
	for (uint32_t i = 0; i < g->n; i++) {
		struct gdev *gd = &g->dev[i];

		if ((r = streams_of(gd, err, errlen)) != 0)
			return r;
		r = ipu_set_trace(gd->d, on_trace, gd);
		if (r) {
			snprintf(err, errlen, "IPU %u: traces: %s", i, ipu_strerror(r));
			return r;
		}
		ipu_set_completion_handler(gd->d, on_completion, gd);
	}
	for (uint32_t li = 0; li < g->nlinks; li++) {
		struct glink *l = &g->links[li];

		l->bufs = calloc(depth, sizeof(*l->bufs));
		if (!l->bufs) {
			snprintf(err, errlen, "out of memory for link %u", li);
			return IPU_E_NOMEM;
		}
		for (uint32_t b = 0; b < depth; b++) {
			l->bufs[b] = malloc(l->bytes ? l->bytes : 1);
			if (!l->bufs[b]) {
				snprintf(err, errlen, "out of memory for link %u's %u bytes", li, l->bytes);
				return IPU_E_NOMEM;
			}
			l->nbufs = b + 1;
			r = ipu_stream_submit(g->dev[l->src].d, l->src_stream, l->bufs[b], l->bytes,
					      IPU_GROUP_TAG | (uint64_t)li << LINK_SHIFT | b);
			if (r) {
				snprintf(err, errlen, "link %u: %s", li, ipu_strerror(r));
				return r;
			}
		}
	}
	g->started = 1;
	return 0;
}

void ipu_group_set_trace(struct ipu_group *g, ipu_group_trace_fn fn, void *ctx)
{
	g->trace = fn;
	g->trace_ctx = ctx;
}

int ipu_group_device_links(const struct ipu_group *g)
{
	return g->hw;
}

int ipu_group_ipu_links(struct ipu_group *g, uint32_t ipu, struct ipu_link_counters *out)
{
	struct ipu_link_counters now;
	int r;

	if (ipu >= g->n || !g->started)
		return IPU_E_INVAL;
	if (g->hw) {
		const struct ipu_link_counters *b = &g->dev[ipu].base;

		if ((r = ipu_link_counters(g->dev[ipu].d, &now)) != 0)
			return r;
		/* a device reset zeroes the counters: then they count from it */
		out->out_bytes = now.out_bytes >= b->out_bytes ? now.out_bytes - b->out_bytes : now.out_bytes;
		out->in_bytes = now.in_bytes >= b->in_bytes ? now.in_bytes - b->in_bytes : now.in_bytes;
		out->cycles = now.cycles >= b->cycles ? now.cycles - b->cycles : now.cycles;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&g->mu);
	for (uint32_t li = 0; li < g->nlinks; li++) {
		const struct glink *l = &g->links[li];

		if (l->src == ipu) {
			out->out_bytes += l->st.bytes;
			out->cycles += l->st.cycles;
		}
		if (l->dst == ipu)
			out->in_bytes += l->st.bytes;
	}
	pthread_mutex_unlock(&g->mu);
	return 0;
}

int ipu_group_link_stats(struct ipu_group *g, uint32_t link, struct ipu_link_stats *out)
{
	if (link >= g->nlinks || g->hw)
		return IPU_E_INVAL;
	pthread_mutex_lock(&g->mu);
	*out = g->links[link].st;
	pthread_mutex_unlock(&g->mu);
	return 0;
}

uint64_t ipu_group_modelled(struct ipu_group *g, uint64_t *pipelined, uint64_t *sequential,
			    uint64_t *stage_cycles)
{
	uint64_t runs = UINT64_MAX, done[IPU_GROUP_MAX] = { 0 }, end = 0, seq = 0;

	pthread_mutex_lock(&g->mu);
	for (uint32_t k = 0; k < g->n; k++) {
		if (g->dev[k].nruns < runs)
			runs = g->dev[k].nruns;
		if (stage_cycles)
			stage_cycles[k] = 0;
	}
	for (uint64_t i = 0; i < runs; i++) {
		uint64_t fin[IPU_GROUP_MAX];

		for (uint32_t k = 0; k < g->n; k++) {
			uint64_t start = done[k], t = g->dev[k].runs[i];

			for (uint32_t li = 0; li < g->nlinks; li++) {
				const struct glink *l = &g->links[li];
				uint64_t ready;

				if (l->dst != k)
					continue;
				ready = fin[l->src] + link_cycles(l->bytes);
				if (ready > start)
					start = ready;
				seq += link_cycles(l->bytes);
			}
			fin[k] = start + t;
			seq += t;
			if (stage_cycles)
				stage_cycles[k] += t;
		}
		for (uint32_t k = 0; k < g->n; k++) {
			done[k] = fin[k];
			if (fin[k] > end)
				end = fin[k];
		}
	}
	pthread_mutex_unlock(&g->mu);
	*pipelined = end;
	*sequential = seq;
	return runs == UINT64_MAX ? 0 : runs;
}
