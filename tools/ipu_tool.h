/* SPDX-License-Identifier: MIT */
/*
 * ipu_tool.h - small helpers of the ioctl-level tools (ipu-info, ipu-reset).
 */
#ifndef IPU_TOOL_H
#define IPU_TOOL_H

#include <errno.h>
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

/* "/dev/ipu0", "ipu0" or "0" -> "/dev/ipu0" */
static inline void ipu_tool_path(const char *arg, char *out, size_t n)
{
	if (arg[0] == '/')
		snprintf(out, n, "%s", arg);
	else if (!strncmp(arg, "ipu", 3))
		snprintf(out, n, "/dev/%s", arg);
	else
		snprintf(out, n, "/dev/ipu%s", arg);
}

static inline const char *ipu_tool_hint(int e)
{
	switch (e) {
	case ENOENT: return " (no such device: is ipu.ko loaded? ipu-info lists devices)";
	case EACCES: return " (permission denied: run as root or fix /dev/ipu* permissions)";
	case EBUSY: return " (attached by another process: see owner in ipu-info)";
	default: return "";
	}
}

#endif /* IPU_TOOL_H */
