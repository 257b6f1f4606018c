/* SPDX-License-Identifier: MIT */
/*
 * ipu_tool.h - small helpers of the ioctl-level tools (ipu-info, ipu-reset,
 * ipu-monitor).
 */
#ifndef IPU_TOOL_H
#define IPU_TOOL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/ipu.h>

static inline const char *ipu_tool_state(unsigned int s)
{
	static const char *const names[] = { "idle", "ready", "busy", "error", "resetting" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

/* "/dev/accel/accel0", "accel0" or "0" -> "/dev/accel/accel0" */
static inline void ipu_tool_path(const char *arg, char *out, size_t n)
{
	if (arg[0] == '/')
		snprintf(out, n, "%s", arg);
	else if (!strncmp(arg, "accel", 5))
		snprintf(out, n, "/dev/accel/%s", arg);
	else
		snprintf(out, n, "/dev/accel/accel%s", arg);
}

static inline const char *ipu_tool_hint(int e)
{
	switch (e) {
	case ENOENT: return " (no such device: is ipu.ko loaded? ipu-info lists devices)";
	case EACCES: return " (permission denied: run as root or fix /dev/accel/accel* permissions)";
	case EBUSY: return " (attached by another process: see owner in ipu-info)";
	default: return "";
	}
}

#define IPU_TOOL_MAX_DEVS 64

/* One device as INFO and COUNTERS describe it (ipu_devices.c). */
struct ipu_tool_dev {
	char name[32];
	struct ipu_info_args info;
	struct ipu_counters_args cnt;
	/* the DRM driver behind the node (DRM_IOCTL_VERSION) */
	char drm_name[16], drm_desc[64];
	int drm_major, drm_minor, drm_patch;
	/* the driver's recovery counters, only in sysfs (stats/...); -1 unread */
	int64_t lost_irqs, bad_completions;
	int err;			/* errno of the open or an ioctl, 0 if fine */
};

/* Query "accelN", "/dev/accel/accelN" or "N"; -1 with d->err set on failure. */
int ipu_tool_query(const char *name, struct ipu_tool_dev *d);
/* The driver's devices ("accel0", ...: accel nodes whose PCI device ipu.ko
 * drives) in number order, at most max; -1 if the driver is not loaded
 * (/sys/bus/pci/drivers/ipu missing). */
int ipu_tool_list(char (*names)[32], int max);

/* Tile clock of the modelled IPU, for turning modelled cycles into time. */
static inline double ipu_tool_clock_ghz(unsigned int hw_version)
{
	return hw_version == 21 ? 1.85 : 1.33;
}

#endif /* IPU_TOOL_H */
