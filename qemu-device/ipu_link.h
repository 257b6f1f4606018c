/*
 * QEMU emulated IPU: IPU-Links between devices (ipu_link.c).
 *
 * `-device ipu-link,id=l0[,depth=2]` joins the `-device ipu,link=l0,
 * link-index=K` instances that name it (given after it).  A linked stream pair carries a
 * device-to-host stream of one member straight into a host-to-device
 * stream of another, device to device, without guest memory.
 *
 * Locks: the link's lock is taken after a member's s->lock, never before
 * it; no member's lock is held while a link transfer waits.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 * See the COPYING file in the top-level directory.
 */
#ifndef HW_MISC_IPU_LINK_H
#define HW_MISC_IPU_LINK_H

#include "qom/object.h"

#define TYPE_IPU_LINK "ipu-link"
OBJECT_DECLARE_SIMPLE_TYPE(IpuLink, IPU_LINK)

#define IPU_LINK_MAX_DEPTH 16u

struct IpuState;

/* Realize / unrealize of a member (BQL held). */
bool ipu_link_attach(struct IpuState *s, Error **errp);
void ipu_link_detach(struct IpuState *s);

/*
 * A reset, abort or unplug of member `s` (s->lock held): every transfer
 * waiting on a linked stream pair with `s` at either end returns
 * IPU_E_CANCELLED and the pairs' buffered data is dropped; with
 * `drop_sender`, the pairs `s` sends on are removed (its setup is gone).
 */
void ipu_link_cancel_locked(struct IpuState *s, bool drop_sender);

/*
 * IPU_CMD_LINK_STREAM (exec thread): join the sender's device-to-host
 * `stream` of `bytes` bytes to host-to-device `peer_stream` of member
 * `peer`.  Returns an IPU_ST_* code; *detail an IPU_LKE_* on IPU_ST_LINK.
 */
uint32_t ipu_link_stream(struct IpuState *s, uint32_t stream, uint32_t peer,
                         uint32_t peer_stream, uint32_t bytes,
                         uint32_t *detail);

/*
 * The engine's transfer of `stream` if it is an end of a linked pair:
 * returns 1 and sets *rc (0, IPU_E_CANCELLED, IPU_E_STREAM) then;
 * returns 0 if the stream is not linked (the guest's ring serves it).
 */
int ipu_link_transfer(struct IpuState *s, uint32_t stream, uint32_t dir,
                      const struct ipu_stream_seg *segs, uint32_t nsegs,
                      uint32_t total_bytes, int *stalled, int *rc);

#endif
