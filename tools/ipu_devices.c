// SPDX-License-Identifier: MIT
/*
 * ipu_devices.c - the devices the driver knows and what INFO and COUNTERS
 * say of each: what ipu-info prints and ipu-monitor --top refreshes.
 * Opening read-only needs no attach, so neither tool disturbs the owner.
 */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "ipu_tool.h"

/* /sys/class/ipu/ipuN/stats/<stat> as a number, -1 if it cannot be read. */
static int64_t sysfs_stat(unsigned int minor, const char *stat)
{
	char path[96], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/ipu/ipu%u/stats/%s", minor, stat);
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
	if (ioctl(fd, IPU_IOCTL_INFO, &d->info) || ioctl(fd, IPU_IOCTL_COUNTERS, &d->cnt))
		d->err = errno;
	close(fd);
	d->lost_irqs = d->err ? -1 : sysfs_stat(d->info.minor, "lost_irqs");
	d->bad_completions = d->err ? -1 : sysfs_stat(d->info.minor, "bad_completions");
	return d->err ? -1 : 0;
}

static int by_number(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return atoi(x + 3) - atoi(y + 3);
}

int ipu_tool_list(char (*names)[32], int max)
{
	DIR *dir = opendir("/sys/class/ipu");
	char *sorted[IPU_TOOL_MAX_DEVS], tmp[IPU_TOOL_MAX_DEVS][32];
	struct dirent *e;
	int n = 0;

	if (!dir)
		return -1;
	if (max > IPU_TOOL_MAX_DEVS)
		max = IPU_TOOL_MAX_DEVS;
	while ((e = readdir(dir)) && n < max)
		if (!strncmp(e->d_name, "ipu", 3) && strlen(e->d_name) < 32) {
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
