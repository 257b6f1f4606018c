/*
 * QEMU emulated IPU: IPU-Links between devices.
 *
 * An `ipu-link` device holds its members by link-index and, per linked
 * stream pair (a sender's device-to-host stream joined to a receiver's
 * host-to-device stream by IPU_CMD_LINK_STREAM on the sender), a ring of
 * `depth` buffers.  The sender's StreamCopy fills the next free buffer
 * from its tile segments, the receiver's StreamCopy empties the oldest
 * one into its own tile segments; either waits on the link's condition
 * when the ring is full or empty, as a stream waits for a doorbell.  No
 * guest memory is touched and no descriptor is consumed.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 * See the COPYING file in the top-level directory.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/qdev-properties.h"
#include "ipu_compat.h"
#include "hw/pci/pci.h"

#include "ipu.h"
#include "ipu_link.h"
#include "trace.h"

typedef struct IpuLinkPair {
    bool active;
    uint32_t sender, stream;        /* member index, device-to-host stream */
    uint32_t receiver, peer_stream; /* member index, host-to-device stream */
    uint32_t bytes;                 /* one transfer, checked at both ends */
    uint8_t *buf;                   /* depth x bytes */
    uint32_t head, count;
    uint64_t epoch;                 /* bumped by a cancel: waiters leave */
    bool broken;                    /* the receiver's size differed */
} IpuLinkPair;

struct IpuLink {
    DeviceState parent_obj;
    uint32_t depth;
    QemuMutex lock;
    QemuCond cond;                  /* broadcast on every ring change */
    IpuState *members[IPU_LINK_MAX_MEMBERS];
    IpuLinkPair pairs[IPU_LINK_MAX_PAIRS];
};

/* The modelled time of one transfer (Documentation/device/cost-model.md) */
static uint64_t ipu_link_cycles(uint32_t bytes)
{
    return 2000 + bytes / 240;
}

static void ipu_link_pair_free(IpuLinkPair *p)
{
    g_free(p->buf);
    memset(p, 0, sizeof(*p));
}

bool ipu_link_attach(IpuState *s, Error **errp)
{
    IpuLink *l = s->link;

    if (!l) {
        return true;
    }
    if (s->link_index >= IPU_LINK_MAX_MEMBERS) {
        error_setg(errp, "ipu: link-index must be 0..%u",
                   IPU_LINK_MAX_MEMBERS - 1);
        return false;
    }
    qemu_mutex_lock(&l->lock);
    if (l->members[s->link_index]) {
        qemu_mutex_unlock(&l->lock);
        error_setg(errp, "ipu: link-index %u of link %s is taken by another "
                   "device: give each member its own index", s->link_index,
                   object_get_canonical_path_component(OBJECT(l)));
        return false;
    }
    l->members[s->link_index] = s;
    qemu_mutex_unlock(&l->lock);
    return true;
}

void ipu_link_detach(IpuState *s)
{
    IpuLink *l = s->link;
    uint32_t i;

    if (!l) {
        return;
    }
    qemu_mutex_lock(&l->lock);
    for (i = 0; i < IPU_LINK_MAX_PAIRS; i++) {
        IpuLinkPair *p = &l->pairs[i];

        if (p->active && (p->sender == s->link_index ||
                          p->receiver == s->link_index)) {
            ipu_link_pair_free(p);
        }
    }
    if (l->members[s->link_index] == s) {
        l->members[s->link_index] = NULL;
    }
    qemu_cond_broadcast(&l->cond);
    qemu_mutex_unlock(&l->lock);
}

void ipu_link_cancel_locked(IpuState *s, bool drop_sender)
{
    IpuLink *l = s->link;
    uint32_t i;

    if (!l || l->members[s->link_index] != s) {
        return;
    }
    qemu_mutex_lock(&l->lock);
    for (i = 0; i < IPU_LINK_MAX_PAIRS; i++) {
        IpuLinkPair *p = &l->pairs[i];

        if (!p->active || (p->sender != s->link_index &&
                           p->receiver != s->link_index)) {
            continue;
        }
        p->epoch++;
        p->head = p->count = 0;
        if (drop_sender && p->sender == s->link_index) {
            uint64_t epoch = p->epoch;

            ipu_link_pair_free(p);
            p->epoch = epoch;
        }
    }
    qemu_cond_broadcast(&l->cond);
    qemu_mutex_unlock(&l->lock);
}

uint32_t ipu_link_stream(IpuState *s, uint32_t stream, uint32_t peer,
                         uint32_t peer_stream, uint32_t bytes,
                         uint32_t *detail)
{
    IpuLink *l = s->link;
    IpuLinkPair *p, *slot = NULL;
    uint32_t dir, size, i;
    uint8_t *buf;

    *detail = IPU_LKE_NO_LINK;
    if (!l) {
        return IPU_ST_LINK;
    }
    if (!s->loaded) {
        *detail = 0;
        return IPU_ST_NOT_LOADED;
    }
    *detail = IPU_LKE_STREAM;
    if (stream >= IPU_MAX_STREAMS || peer_stream >= IPU_MAX_STREAMS ||
        ipu_engine_stream_info(s->engine, stream, &dir, &size) ||
        dir != IPUX_STREAM_D2H) {
        return IPU_ST_LINK;
    }
    *detail = IPU_LKE_SIZE;
    if (bytes != size || bytes == 0) {
        return IPU_ST_LINK;
    }
    buf = g_try_malloc((size_t)l->depth * bytes);
    if (!buf) {
        *detail = bytes;
        return IPU_ST_NO_MEMORY;
    }
    qemu_mutex_lock(&l->lock);
    *detail = IPU_LKE_PEER;
    if (peer >= IPU_LINK_MAX_MEMBERS || peer == s->link_index ||
        !l->members[peer]) {
        goto refused;
    }
    for (i = 0; i < IPU_LINK_MAX_PAIRS; i++) {
        p = &l->pairs[i];
        if (!p->active) {
            slot = slot ? slot : p;
            continue;
        }
        if (p->sender == s->link_index && p->stream == stream) {
            /* set up again: replaces the pair (and its data) */
            slot = p;
            break;
        }
    }
    for (i = 0; i < IPU_LINK_MAX_PAIRS; i++) {
        p = &l->pairs[i];
        if (p->active && p != slot && p->receiver == peer &&
            p->peer_stream == peer_stream) {
            *detail = IPU_LKE_BUSY;
            goto refused;
        }
    }
    if (!slot) {
        *detail = IPU_LKE_BUSY;
        goto refused;
    }
    if (slot->active) {
        uint64_t epoch = slot->epoch + 1;

        ipu_link_pair_free(slot);
        slot->epoch = epoch;
    }
    slot->active = true;
    slot->sender = s->link_index;
    slot->stream = stream;
    slot->receiver = peer;
    slot->peer_stream = peer_stream;
    slot->bytes = bytes;
    slot->buf = buf;
    qemu_cond_broadcast(&l->cond);
    qemu_mutex_unlock(&l->lock);
    trace_ipu_link_stream(s->link_index, stream, peer, peer_stream, bytes);
    *detail = 0;
    return IPU_ST_OK;

refused:
    qemu_mutex_unlock(&l->lock);
    g_free(buf);
    return IPU_ST_LINK;
}

/* The pair `s` is an end of through `stream` in direction `dir`. */
static IpuLinkPair *ipu_link_find(IpuLink *l, uint32_t index,
                                  uint32_t stream, uint32_t dir)
{
    uint32_t i;

    for (i = 0; i < IPU_LINK_MAX_PAIRS; i++) {
        IpuLinkPair *p = &l->pairs[i];

        if (!p->active) {
            continue;
        }
        if (dir == IPUX_STREAM_D2H ? p->sender == index && p->stream == stream
                                   : p->receiver == index &&
                                     p->peer_stream == stream) {
            return p;
        }
    }
    return NULL;
}

/* Copy between the tile segments and one link buffer. */
static void ipu_link_copy(uint8_t *buf, const struct ipu_stream_seg *segs,
                          uint32_t nsegs, bool to_buf)
{
    uint32_t i, off = 0;

    for (i = 0; i < nsegs; i++) {
        if (to_buf) {
            memcpy(buf + off, segs[i].ptr, segs[i].len);
        } else {
            memcpy(segs[i].ptr, buf + off, segs[i].len);
        }
        off += segs[i].len;
    }
}

int ipu_link_transfer(IpuState *s, uint32_t stream, uint32_t dir,
                      const struct ipu_stream_seg *segs, uint32_t nsegs,
                      uint32_t total_bytes, int *stalled, int *rc)
{
    IpuLink *l = s->link;
    IpuLinkPair *p;
    uint64_t epoch;
    uint32_t gen, slot;
    bool send = dir == IPUX_STREAM_D2H;

    if (!l) {
        return 0;
    }
    /*
     * The member's own state is read under its lock and the pair's epoch
     * under the link's, nested: a cancel (which holds both) either comes
     * before and is seen here, or after and bumps the epoch seen below.
     */
    qemu_mutex_lock(&s->lock);
    qemu_mutex_lock(&l->lock);
    p = ipu_link_find(l, s->link_index, stream, dir);
    if (!p) {
        qemu_mutex_unlock(&l->lock);
        qemu_mutex_unlock(&s->lock);
        return 0;
    }
    gen = s->gen;
    if (s->stopping || s->abort_pending || s->reset_pending) {
        qemu_mutex_unlock(&l->lock);
        qemu_mutex_unlock(&s->lock);
        *rc = IPU_E_CANCELLED;
        return 1;
    }
    qemu_mutex_unlock(&s->lock);
    epoch = p->epoch;
    trace_ipu_link_transfer(s->link_index, stream, dir, total_bytes);

    if (total_bytes != p->bytes || p->broken) {
        /* both ends fail from now on: the pair must be set up again */
        p->broken = true;
        p->epoch++;
        qemu_cond_broadcast(&l->cond);
        qemu_mutex_unlock(&l->lock);
        ipu_error(s, IPU_ST_LINK, IPU_LKE_SIZE, total_bytes);
        *rc = IPU_E_STREAM;
        return 1;
    }
    while (p->active && p->epoch == epoch &&
           (send ? p->count == l->depth : p->count == 0)) {
        *stalled = 1;
        qemu_cond_wait(&l->cond, &l->lock);
    }
    if (!p->active || p->epoch != epoch || p->broken) {
        bool broken = p->active && p->broken;

        qemu_mutex_unlock(&l->lock);
        if (broken) {
            ipu_error(s, IPU_ST_LINK, IPU_LKE_SIZE, total_bytes);
            *rc = IPU_E_STREAM;
        } else {
            *rc = IPU_E_CANCELLED;
        }
        return 1;
    }
    if (send) {
        slot = (p->head + p->count) % l->depth;
        ipu_link_copy(p->buf + (size_t)slot * p->bytes, segs, nsegs, true);
        p->count++;
    } else {
        ipu_link_copy(p->buf + (size_t)p->head * p->bytes, segs, nsegs,
                      false);
        p->head = (p->head + 1) % l->depth;
        p->count--;
    }
    qemu_cond_broadcast(&l->cond);
    qemu_mutex_unlock(&l->lock);

    qemu_mutex_lock(&s->lock);
    if (s->gen == gen) {
        if (send) {
            s->cnt[IPU_CNT_LINK_OUT] += total_bytes;
            s->cnt[IPU_CNT_LINK_CYC] += ipu_link_cycles(total_bytes);
        } else {
            s->cnt[IPU_CNT_LINK_IN] += total_bytes;
        }
    }
    qemu_mutex_unlock(&s->lock);
    *rc = 0;
    return 1;
}

/* ------------------------------------------------------------ the device */

static void ipu_link_realize(DeviceState *dev, Error **errp)
{
    IpuLink *l = IPU_LINK(dev);

    if (l->depth < 1 || l->depth > IPU_LINK_MAX_DEPTH) {
        error_setg(errp, "ipu-link: depth must be 1..%u", IPU_LINK_MAX_DEPTH);
    }
}

static void ipu_link_init(Object *obj)
{
    IpuLink *l = IPU_LINK(obj);

    qemu_mutex_init(&l->lock);
    qemu_cond_init(&l->cond);
}

static void ipu_link_finalize(Object *obj)
{
    IpuLink *l = IPU_LINK(obj);
    uint32_t i;

    for (i = 0; i < IPU_LINK_MAX_PAIRS; i++) {
        ipu_link_pair_free(&l->pairs[i]);
    }
    qemu_cond_destroy(&l->cond);
    qemu_mutex_destroy(&l->lock);
}

static IPU_PROPERTY ipu_link_properties[] = {
    DEFINE_PROP_UINT32("depth", IpuLink, depth, 2),
#ifdef DEFINE_PROP_END_OF_LIST
    DEFINE_PROP_END_OF_LIST(),
#endif
};

static void ipu_link_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);

    dc->realize = ipu_link_realize;
    dc->desc = "IPU-Links joining ipu devices (link=ID on each)";
    device_class_set_props(dc, ipu_link_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

/*
 * A bus-less device rather than an -object: QEMU's -object accepts only
 * the types of its QAPI schema.
 */
static const TypeInfo ipu_link_info = {
    .name = TYPE_IPU_LINK,
    .parent = TYPE_DEVICE,
    .instance_size = sizeof(IpuLink),
    .instance_init = ipu_link_init,
    .instance_finalize = ipu_link_finalize,
    .class_init = ipu_link_class_init,
};

static void ipu_link_register_types(void)
{
    type_register_static(&ipu_link_info);
}

type_init(ipu_link_register_types)
