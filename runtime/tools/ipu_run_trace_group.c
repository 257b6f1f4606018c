// SPDX-License-Identifier: MIT
/*
 * ipu_run_trace_group.c - --profile's tracks for a model split over IPUs:
 * every IPU's runs and steps on the group's modelled clock (the rule of
 * ipu/group.h, so the trace ends where ipu-run's pipelined clock does)
 * and each link transfer as a slice with its bytes and cycles.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "ipu_run_trace_internal.h"

/* The link a stream of IPU k is an end of, or -1. */
static int link_of(const struct ipuef_group *gt, uint32_t k, uint32_t stream)
{
	for (uint32_t i = 0; i < gt->num_links; i++) {
		const struct ipuef_link *l = &gt->links[i];

		if ((l->src_ipu == k && l->src_stream == stream) || (l->dst_ipu == k && l->dst_stream == stream))
			return (int)i;
	}
	return -1;
}

static uint64_t link_cycles(uint64_t bytes)
{
	return IPU_LINK_LATENCY_CYCLES + (bytes + IPU_LINK_BYTES_PER_CYCLE - 1) / IPU_LINK_BYTES_PER_CYCLE;
}

/* A group's IPU: its run of a program, steps[first .. last), program at last. */
struct ipu_track {
	struct ipu_step_event *ev;
	size_t n, *prog, nprog;
	uint64_t done, fin, runs[64];
	int fin_valid;
};

/*
 * One run of IPU k from `start` (cycles) on the group's clock, steps back
 * to back; the link stream copies take no time there (their cycles are the
 * link's, on the link track), as in the group's modelled clock
 * (ipu/group.h).  Returns the run's end.
 */
static uint64_t group_run_events(struct writer *w, struct ipu_track *tr, size_t first, size_t last,
				 uint64_t start, uint64_t run)
{
	const struct ipuef_group *gt = w->m->group;
	double k = w->info->ghz * 1e3;
	int pid = PID_IPU0 + w->ipu;
	uint64_t c = start, lc = 0;
	const char *cat;
	char name[1200];
	size_t i;
	json_t *a;

	for (i = first; i < last; i++)
		if (tr->ev[i].kind == IPU_STEP_STREAM_COPY && link_of(gt, (uint32_t)w->ipu, tr->ev[i].stream) >= 0)
			lc += tr->ev[i].cycles;
	lc = lc < tr->ev[last].cycles ? lc : tr->ev[last].cycles;
	a = trace_step_args(w, &tr->ev[last], name, sizeof(name), &cat, run);
	if (a)
		json_object_set_new(a, "link_cycles", json_integer((json_int_t)lc));
	trace_complete(w, pid, name, cat, (double)start / k,
		 (double)(start + tr->ev[last].cycles - lc) / k - (double)start / k, a);
	for (i = first; i < last; i++) {
		const struct ipu_step_event *e = &tr->ev[i];
		int li = e->kind == IPU_STEP_STREAM_COPY ? link_of(gt, (uint32_t)w->ipu, e->stream) : -1;
		uint64_t d = li >= 0 ? 0 : e->cycles;

		a = trace_step_args(w, e, name, sizeof(name), &cat, run);
		if (a && li >= 0)
			json_object_set_new(a, "link", json_string(gt->links[li].name));
		trace_complete(w, pid, name, cat, (double)c / k, (double)(c + d) / k - (double)c / k, a);
		c += d;
	}
	return start + tr->ev[last].cycles - lc;
}

/*
 * A group's profile: one process per IPU on the group's modelled clock
 * (run i of Main on IPU k starts when IPU k finished run i-1 and every
 * link into it carried run i's data), and one for the links, each
 * transfer a slice from its sender's finish, its bytes and cycles.
 * Returns the clock's end; *bytes and *transfers over the links.
 */
uint64_t trace_group_events(struct writer *w, const struct run_trace *t, uint64_t *bytes,
			     uint64_t *transfers)
{
	const struct ipuef_group *gt = w->m->group;
	uint32_t n = gt->num_ipus;
	struct ipu_track *tr = calloc(n, sizeof(*tr));
	uint64_t (*lanes)[LINK_LANES] = calloc(gt->num_links ? gt->num_links : 1, sizeof(*lanes));
	uint64_t end = 0;
	double kc = w->info->ghz * 1e3;
	size_t i, maxrun = 0;
	char title[200];

	*bytes = *transfers = 0;
	if (!tr || !lanes) {
		w->failed = 1;
		goto out;
	}
	for (uint32_t k = 0; k < n; k++) {
		size_t cnt = 0;

		for (i = 0; i < t->ngsteps; i++)
			cnt += t->gsteps[i].ipu == k;
		tr[k].ev = malloc((cnt ? cnt : 1) * sizeof(*tr[k].ev));
		tr[k].prog = malloc((cnt ? cnt : 1) * sizeof(*tr[k].prog));
		if (!tr[k].ev || !tr[k].prog) {
			w->failed = 1;
			goto out;
		}
		for (i = 0; i < t->ngsteps; i++) {
			if (t->gsteps[i].ipu != k)
				continue;
			if (t->gsteps[i].ev.kind == IPU_TRACE_PROGRAM)
				tr[k].prog[tr[k].nprog++] = tr[k].n;
			tr[k].ev[tr[k].n++] = t->gsteps[i].ev;
		}
		if (tr[k].nprog > maxrun)
			maxrun = tr[k].nprog;
		snprintf(title, sizeof(title), "IPU %u of %u (modelled at %.2f GHz, the group's clock)", k, n,
			 w->info->ghz);
		trace_meta(w, PID_IPU0 + (int)k, 0, "process_name", title);
		trace_meta(w, PID_IPU0 + (int)k, TID_STEPS, "thread_name", "programs and supersteps");
		trace_sort_index(w, PID_IPU0 + (int)k, 0, (int)k + 1);
	}
	trace_meta(w, PID_LINKS, 0, "process_name", "IPU-Links (modelled)");
	trace_sort_index(w, PID_LINKS, 0, (int)n + 1);
	for (size_t r = 0; r < maxrun; r++) {
		for (uint32_t k = 0; k < n; k++) {
			size_t last, first;
			uint64_t start;
			const struct ipu_step_event *pe;

			tr[k].fin_valid = 0;
			if (r >= tr[k].nprog)
				continue;
			last = tr[k].prog[r];
			first = r ? tr[k].prog[r - 1] + 1 : 0;
			pe = &tr[k].ev[last];
			start = tr[k].done;
			for (uint32_t li = 0; li < gt->num_links && pe->program == 0 && !pe->status; li++) {
				const struct ipuef_link *l = &gt->links[li];
				uint64_t lc = link_cycles(l->bytes), from;
				int j;

				if (l->dst_ipu != k || l->src_ipu >= n || !tr[l->src_ipu].fin_valid)
					continue;
				from = tr[l->src_ipu].fin;
				/* a transfer still under way: the next lane */
				for (j = 0; j < LINK_LANES - 1 && lanes[li][j] > from; j++)
					;
				if (!lanes[li][j]) {
					char tn[300];

					snprintf(tn, sizeof(tn), "%s IPU %u -> IPU %u%s", l->name, l->src_ipu,
						 l->dst_ipu, j ? " (overlapping transfers)" : "");
					trace_meta(w, PID_LINKS, 1 + (int)li * LINK_LANES + j, "thread_name", tn);
				}
				lanes[li][j] = from + lc;
				trace_emit(w, json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:{s:I,s:I,s:i,s:i,s:I}}", "ph", "X",
						  "name", l->name, "cat", "link", "pid", PID_LINKS,
						  "tid", 1 + (int)li * LINK_LANES + j, "ts", (double)from / kc,
						  "dur", (double)(from + lc) / kc - (double)from / kc, "args",
						  "bytes", (json_int_t)l->bytes, "cycles", (json_int_t)lc,
						  "src_ipu", (int)l->src_ipu, "dst_ipu", (int)l->dst_ipu,
						  "run", (json_int_t)r));
				*bytes += l->bytes;
				(*transfers)++;
				if (from + lc > start)
					start = from + lc;
			}
			w->ipu = (int)k;
			w->dev = w->info->group ? ipu_group_device(w->info->group, k) : NULL;
			tr[k].fin = group_run_events(w, &tr[k], first, last, start, tr[k].runs[pe->program % 64]++);
			tr[k].fin_valid = pe->program == 0 && !pe->status;
			tr[k].done = tr[k].fin;
			if (tr[k].fin > end)
				end = tr[k].fin;
		}
	}
out:
	w->ipu = -1;
	w->dev = w->info->dev;
	for (uint32_t k = 0; tr && k < n; k++) {
		free(tr[k].ev);
		free(tr[k].prog);
	}
	free(tr);
	free(lanes);
	return end;
}
