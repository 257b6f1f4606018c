/* SPDX-License-Identifier: MIT */
/*
 * rt_group.h - a model split over a group of IPUs run by the ModelRunner:
 * the file's group of in-process or kernel devices, each IPU with its own
 * Executable, the links from the group table, and requests pipelined
 * through the stages (Documentation/compiler/sharding.md).
 */
#ifndef IPU_RT_GROUP_H
#define IPU_RT_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "ipu/group.h"
#include "ipu/ipuef.h"

struct rt_group;

/* Called once per request from a device thread when every IPU ran it
 * (status 0) or the first failure, with its message. */
typedef void (*rt_group_done_fn)(void *ctx, void *tag, int status, const char *msg);

/*
 * Opens a group of as many devices as f's IPUs (device: NULL or "" for
 * in-process devices made to match the model, a "model..." spec for each,
 * or as many comma-separated kernel nodes of one ipu-link, whose links
 * are then the devices' own), verifies the group for them
 * (ipuef_group_verify), loads each IPU's executable, links them and
 * starts; `depth` requests may be in flight.  IPURT_E_* with a message.
 */
int rt_group_open(const struct ipuef_file *f, const char *device, uint32_t depth,
		  rt_group_done_fn done, void *ctx, struct rt_group **out, char *err,
		  size_t errlen);
void rt_group_close(struct rt_group *g);

/*
 * Queues one request: bufs[i] is one compiled batch of anchor anchors[i];
 * waits while `depth` requests are in flight.  0, or an IPURT_E_* code
 * (nothing of the request queued, or the group broken by a partial one).
 */
int rt_group_enqueue(struct rt_group *g, const uint32_t *anchors, void *const *bufs, uint32_t n,
		     void *tag);

struct ipu_group *rt_group_ipus(const struct rt_group *g);
/* Requests every IPU ran, and requests that failed. */
void rt_group_counts(const struct rt_group *g, uint64_t *ok, uint64_t *failed);

#endif /* IPU_RT_GROUP_H */
