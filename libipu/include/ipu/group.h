/* SPDX-License-Identifier: MIT */
/*
 * group.h - a group of IPUs joined by modelled IPU-Links, for a model
 * split over several IPUs (Documentation/compiler/sharding.md).
 *
 * The group opens N devices of one spec (the in-process device: N
 * engines, each with its own device thread), or N kernel devices of one
 * ipu-link named one by one ("/dev/accel/accel0,/dev/accel/accel1":
 * attached as the driver's device group, ipu_attach_group).  Each IPU
 * loads its own
 * executable (ipu_load on ipu_group_device()).  A link joins a
 * device-to-host stream of one IPU to a host-to-device stream of a later
 * IPU of the same buffer size: when the sender's StreamCopy fills a link
 * buffer, the group hands that buffer to the receiver's stream (a
 * device-to-device copy at the sync point, no host buffer of the user's),
 * and once the receiver has taken it, back to the sender.  The IPUs run
 * concurrently, each its own queued runs, so request i on IPU k+1 overlaps
 * request i+1 on IPU k: the stages pipeline.
 *
 * Each transfer counts link bytes and modelled link cycles: 2,000 cycles
 * of latency + bytes / 240 (the GC200's published 320 GB/s chip to chip
 * at 1.33 GHz; Documentation/device/cost-model.md, IPU-Links).  The
 * group's modelled clock follows run k of Main (program 0) on every IPU:
 * it starts when the IPU finished run k-1 and every link into it carried
 * run k's data (the sender's finish + the link's cycles), and lasts the
 * run's modelled cycles without those of its link stream copies.
 *
 * On kernel devices the links are the devices' own (ipu_link_stream at
 * ipu_group_start): the data goes device to device without the host,
 * the stages pipeline the same way, and the transfers are counted by the
 * devices (ipu-info, sysfs) rather than per link; the devices trace no
 * steps, so the modelled clock counts no runs.
 *
 * Stream buffer tags with bit 63 set are the group's own; the user's
 * buffers (the model's inputs and outputs) use the others, and their
 * completions reach the group's completion handler.
 */
#ifndef IPU_GROUP_H
#define IPU_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/ipu.h"

#define IPU_GROUP_MAX 64u
#define IPU_GROUP_MAX_LINKS 4096u
#define IPU_GROUP_TAG (1ull << 63)	/* link buffers' tags */
#define IPU_LINK_LATENCY_CYCLES 2000u
#define IPU_LINK_BYTES_PER_CYCLE 240u

struct ipu_group;

/* Opens and attaches n (1 .. IPU_GROUP_MAX) devices of `spec`: a
 * "model..." spec opened n times, or n comma-separated kernel nodes of
 * one ipu-link (all attached or none: IPU_E_BUSY if one is owned
 * elsewhere). */
int ipu_group_open(const char *spec, uint32_t n, struct ipu_group **out, char *err,
		   size_t errlen);
/* Aborts every IPU's work and closes them. */
void ipu_group_close(struct ipu_group *g);
uint32_t ipu_group_size(const struct ipu_group *g);
/* IPU i's device, to load, submit, run and wait on; NULL if out of range. */
struct ipu_device *ipu_group_device(struct ipu_group *g, uint32_t i);

/*
 * Declares a link once both executables are loaded, before
 * ipu_group_start: both ends are checked (IPUs in range, src_ipu <
 * dst_ipu, the sender's stream device-to-host and the receiver's
 * host-to-device, the same buffer size, each stream in one link only).
 * Returns the link's index or a negative code with the message in err.
 */
int ipu_group_link(struct ipu_group *g, uint32_t src_ipu, uint32_t src_stream,
		   uint32_t dst_ipu, uint32_t dst_stream, char *err, size_t errlen);

/* Completions of the user's buffers, with the IPU they belong to; called
 * from a libipu thread, must not block (as ipu_completion_fn). */
typedef void (*ipu_group_completion_fn)(void *ctx, uint32_t ipu, const struct ipu_completion *c);

/*
 * Starts the links: `depth` (>= 1) buffers per link, so that many
 * requests may be in flight between two IPUs; installs the group's
 * completion handlers (fn may be NULL: the user's completions are then
 * dropped) and its traces.  No device may be running.
 */
int ipu_group_start(struct ipu_group *g, uint32_t depth, ipu_group_completion_fn fn, void *ctx,
		    char *err, size_t errlen);

/*
 * Every per-step event of every IPU (ipu_set_trace's events, with the
 * IPU's index), for a profile of the group: the group keeps the devices'
 * own trace hooks for its modelled clock and hands each event on.  Set or
 * cleared (fn NULL) while no IPU is running; called on the IPU's thread.
 */
typedef void (*ipu_group_trace_fn)(void *ctx, uint32_t ipu, const struct ipu_step_event *ev);
void ipu_group_set_trace(struct ipu_group *g, ipu_group_trace_fn fn, void *ctx);

struct ipu_link_stats {
	uint32_t src_ipu, dst_ipu;
	uint64_t transfers;
	uint64_t bytes;
	uint64_t cycles;	/* modelled */
};
/* A link's figures; IPU_E_INVAL out of range or on kernel devices (their
 * link counters are per device: ipu-info). */
int ipu_group_link_stats(struct ipu_group *g, uint32_t link, struct ipu_link_stats *out);
/* 1 if the links are the devices' own (kernel devices), else 0. */
int ipu_group_device_links(const struct ipu_group *g);
/* IPU ipu's link bytes sent and received and the modelled cycles of its
 * sends since ipu_group_start (on kernel devices from the devices' own
 * counters); IPU_E_INVAL out of range or before the start. */
int ipu_group_ipu_links(struct ipu_group *g, uint32_t ipu, struct ipu_link_counters *out);
uint32_t ipu_group_num_links(const struct ipu_group *g);

/*
 * The modelled clock over the runs of Main every IPU finished so far (the
 * fewest any IPU ran): *pipelined as the IPUs overlap, *sequential as if
 * each request went through the IPUs one after the other; per IPU its
 * modelled cycles (without link stream copies) summed over those runs,
 * in stage_cycles[0 .. size) if not NULL.  Returns the run count.
 */
uint64_t ipu_group_modelled(struct ipu_group *g, uint64_t *pipelined, uint64_t *sequential,
			    uint64_t *stage_cycles);

#endif /* IPU_GROUP_H */
