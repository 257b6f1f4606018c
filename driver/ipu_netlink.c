// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_netlink.c - device events: kept in a per-device ring (GET_EVENTS)
 * and multicast on the generic netlink family "ipu", group "events".
 */
#include <linux/ktime.h>
#include <net/genetlink.h>

#include "ipu_drv.h"

static const struct genl_multicast_group ipu_mcgrps[] = {
	{ .name = IPU_GENL_MCGRP_EVENTS, },
};

static struct genl_family ipu_genl_family = {
	.name = IPU_GENL_NAME,
	.version = IPU_GENL_VERSION,
	.maxattr = IPU_GENL_A_MAX,
	.module = THIS_MODULE,
	.mcgrps = ipu_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ipu_mcgrps),
};

static void ipu_netlink_send(struct ipu_device *idev, const struct ipu_event *ev)
{
	struct sk_buff *skb;
	void *hdr;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &ipu_genl_family, 0, IPU_GENL_CMD_EVENT);
	if (!hdr)
		goto err;
	if (nla_put_u32(skb, IPU_GENL_A_MINOR, idev->minor) ||
	    nla_put_u32(skb, IPU_GENL_A_TYPE, ev->type) ||
	    nla_put_u32(skb, IPU_GENL_A_PID, ev->pid) ||
	    nla_put_u32(skb, IPU_GENL_A_CODE, ev->code) ||
	    nla_put_u32(skb, IPU_GENL_A_DETAIL, ev->detail) ||
	    nla_put_u64_64bit(skb, IPU_GENL_A_ADDR, ev->addr, IPU_GENL_A_PAD) ||
	    nla_put_u64_64bit(skb, IPU_GENL_A_ID, ev->id, IPU_GENL_A_PAD))
		goto err;
	genlmsg_end(skb, hdr);
	/* -ESRCH (no listener) is not an error */
	genlmsg_multicast(&ipu_genl_family, skb, 0, 0, GFP_ATOMIC);
	return;
err:
	nlmsg_free(skb);
}

/**
 * ipu_event() - record a device event and multicast it on netlink
 * @idev: the device
 * @type: IPU_EVENT_*
 * @pid: the process concerned, or 0
 * @code: error status or IPU_RESET_REASON_*
 * @detail: error detail, or the reset's errno
 * @addr: the address the error concerns, or 0
 *
 * Callable from interrupt context.
 */
void ipu_event(struct ipu_device *idev, u32 type, pid_t pid, u32 code, u32 detail,
	       u64 addr)
{
	struct ipu_event ev;
	unsigned long flags;

	spin_lock_irqsave(&idev->ev_lock, flags);
	ev = (struct ipu_event){
		.id = ++idev->ev_next,
		.time_ns = ktime_get_ns(),
		.type = type,
		.pid = pid,
		.code = code,
		.detail = detail,
		.addr = addr,
	};
	idev->events[ev.id % IPU_EVENT_RING] = ev;
	spin_unlock_irqrestore(&idev->ev_lock, flags);
	ipu_netlink_send(idev, &ev);
}

/**
 * ipu_netlink_init() - register the generic netlink family "ipu"
 *
 * Return: 0 or a negative errno.
 */
int ipu_netlink_init(void)
{
	return genl_register_family(&ipu_genl_family);
}

/**
 * ipu_netlink_exit() - unregister the generic netlink family
 */
void ipu_netlink_exit(void)
{
	genl_unregister_family(&ipu_genl_family);
}
