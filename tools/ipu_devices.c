// SPDX-License-Identifier: MIT
/*
 * ipu_devices.c - the devices the driver knows and what INFO and COUNTERS
 * say of each: what ipu-info prints and ipu-monitor --top refreshes.
 * Opening read-only needs no attach, so neither tool disturbs the owner.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <unistd.h>

#include <xf86drm.h>

#include "ipu_tool.h"

/* /sys/class/accel/accelN/device/stats/<stat> as a number, -1 if it cannot be read. */
static int64_t sysfs_stat(unsigned int minor, const char *stat)
{
	char path[96], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%u/device/stats/%s", minor, stat);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

int ipu_tool_query(const char *name, struct ipu_tool_dev *d)
{
	char path[64];
	int fd;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	ipu_tool_path(name, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		d->err = errno;
		return -1;
	}
	if (ioctl(fd, DRM_IOCTL_IPU_INFO, &d->info) || ioctl(fd, DRM_IOCTL_IPU_COUNTERS, &d->cnt))
		d->err = errno;
	if (!d->err) {
		drmVersionPtr v = drmGetVersion(fd);

		if (v) {
			snprintf(d->drm_name, sizeof(d->drm_name), "%s", v->name);
			snprintf(d->drm_desc, sizeof(d->drm_desc), "%s", v->desc);
			d->drm_major = v->version_major;
			d->drm_minor = v->version_minor;
			d->drm_patch = v->version_patchlevel;
			drmFreeVersion(v);
		} else {
			d->err = errno ? errno : EIO;
		}
	}
	close(fd);
	d->lost_irqs = d->err ? -1 : sysfs_stat(d->info.minor, "lost_irqs");
	d->bad_completions = d->err ? -1 : sysfs_stat(d->info.minor, "bad_completions");
	return d->err ? -1 : 0;
}

static int by_number(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return atoi(x + 5) - atoi(y + 5);
}

/* Is /sys/class/accel/NAME a device of ipu.ko (its PCI device's driver)? */
static int is_ipu_node(const char *name)
{
	char path[300], link[300];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/accel/%s/device/driver", name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	return !strcmp(basename(link), "ipu");
}

int ipu_tool_list(char (*names)[32], int max)
{
	DIR *dir;
	char *sorted[IPU_TOOL_MAX_DEVS], tmp[IPU_TOOL_MAX_DEVS][32];
	struct dirent *e;
	int n = 0;

	if (access("/sys/bus/pci/drivers/ipu", F_OK))
		return -1;
	dir = opendir("/sys/class/accel");
	if (!dir)
		return 0;
	if (max > IPU_TOOL_MAX_DEVS)
		max = IPU_TOOL_MAX_DEVS;
	while ((e = readdir(dir)) && n < max)
		if (!strncmp(e->d_name, "accel", 5) && strlen(e->d_name) < 32 &&
		    is_ipu_node(e->d_name)) {
			snprintf(tmp[n], sizeof(tmp[n]), "%s", e->d_name);
			sorted[n] = tmp[n];
			n++;
		}
	closedir(dir);
	qsort(sorted, n, sizeof(sorted[0]), by_number);
	for (int i = 0; i < n; i++)
		snprintf(names[i], 32, "%s", sorted[i]);
	return n;
}
