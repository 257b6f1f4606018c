// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_sysfs.c - attributes of the IPU's PCI device, reached from the accel
 * node as /sys/class/accel/accelN/device/ (Documentation/driver/).
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "ipu_drv.h"

static const char * const ipu_state_names[] = {
	[IPU_DEV_STATE_IDLE] = "idle",
	[IPU_DEV_STATE_READY] = "ready",
	[IPU_DEV_STATE_BUSY] = "busy",
	[IPU_DEV_STATE_ERROR] = "error",
	[IPU_DEV_STATE_RESETTING] = "resetting",
};

static ssize_t serial_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%016llx\n", idev->serial);
}
static DEVICE_ATTR_RO(serial);

static ssize_t tiles_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", idev->tiles);
}
static DEVICE_ATTR_RO(tiles);

static ssize_t tile_mem_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", idev->tile_mem);
}
static DEVICE_ATTR_RO(tile_mem);

static ssize_t version_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", idev->hw_version);
}
static DEVICE_ATTR_RO(version);

static ssize_t if_version_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u.%u\n", idev->if_version >> 16, idev->if_version & 0xffff);
}
static DEVICE_ATTR_RO(if_version);

static ssize_t state_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", ipu_state_names[ipu_state(idev)]);
}
static DEVICE_ATTR_RO(state);

static ssize_t owner_pid_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", READ_ONCE(idev->owner_pid));
}
static DEVICE_ATTR_RO(owner_pid);

static ssize_t watchdog_ms_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(idev->watchdog_ms));
}

static ssize_t watchdog_ms_store(struct device *dev, struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct ipu_device *idev = dev_get_drvdata(dev);
	unsigned int v;
	int ret;

	ret = kstrtouint(buf, 0, &v);
	if (ret)
		return ret;
	WRITE_ONCE(idev->watchdog_ms, v);
	return count;
}
static DEVICE_ATTR_RW(watchdog_ms);

static ssize_t run_limit_ms_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(idev->run_limit_ms));
}

static ssize_t run_limit_ms_store(struct device *dev, struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct ipu_device *idev = dev_get_drvdata(dev);
	unsigned int v;
	int ret;

	ret = kstrtouint(buf, 0, &v);
	if (ret)
		return ret;
	WRITE_ONCE(idev->run_limit_ms, v);
	return count;
}
static DEVICE_ATTR_RW(run_limit_ms);

static ssize_t link_index_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);

	if (idev->link_index == U32_MAX)
		return sysfs_emit(buf, "none\n");
	return sysfs_emit(buf, "%u\n", idev->link_index);
}
static DEVICE_ATTR_RO(link_index);

/* "none", or "ID IPU K of N: accelA accelB ..." (the members, IPU order) */
static ssize_t group_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct ipu_device *idev = dev_get_drvdata(dev);
	int minors[IPU_LINK_MAX_MEMBERS];
	u32 id, ipu, n, k;
	int len;

	n = ipu_group_info(idev, &id, &ipu, minors);
	if (!n)
		return sysfs_emit(buf, "none\n");
	len = sysfs_emit(buf, "%u IPU %u of %u:", id, ipu, n);
	for (k = 0; k < n; k++)
		len += sysfs_emit_at(buf, len, " accel%d", minors[k]);
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
static DEVICE_ATTR_RO(group);

static struct attribute *ipu_dev_attrs[] = {
	&dev_attr_serial.attr,
	&dev_attr_link_index.attr,
	&dev_attr_group.attr,
	&dev_attr_tiles.attr,
	&dev_attr_tile_mem.attr,
	&dev_attr_version.attr,
	&dev_attr_if_version.attr,
	&dev_attr_state.attr,
	&dev_attr_owner_pid.attr,
	&dev_attr_watchdog_ms.attr,
	&dev_attr_run_limit_ms.attr,
	NULL,
};

static const struct attribute_group ipu_dev_group = {
	.attrs = ipu_dev_attrs,
};

/* stats/NAME shows the driver counter idev->st_NAME */
#define IPU_STAT_ATTR(name)							\
static ssize_t name##_show(struct device *dev, struct device_attribute *attr,	\
			   char *buf)						\
{										\
	struct ipu_device *idev = dev_get_drvdata(dev);				\
										\
	return sysfs_emit(buf, "%lld\n", atomic64_read(&idev->st_##name));	\
}										\
static DEVICE_ATTR_RO(name)

IPU_STAT_ATTR(stream_cmds);
IPU_STAT_ATTR(stream_bytes);
IPU_STAT_ATTR(programs_run);
IPU_STAT_ATTR(resets);
IPU_STAT_ATTR(errors);
IPU_STAT_ATTR(pinned_pages);
IPU_STAT_ATTR(lost_irqs);
IPU_STAT_ATTR(bad_completions);
IPU_STAT_ATTR(gem_objects);
IPU_STAT_ATTR(gem_pages);

static struct attribute *ipu_stats_attrs[] = {
	&dev_attr_stream_cmds.attr,
	&dev_attr_stream_bytes.attr,
	&dev_attr_programs_run.attr,
	&dev_attr_resets.attr,
	&dev_attr_errors.attr,
	&dev_attr_pinned_pages.attr,
	&dev_attr_lost_irqs.attr,
	&dev_attr_bad_completions.attr,
	&dev_attr_gem_objects.attr,
	&dev_attr_gem_pages.attr,
	NULL,
};

static const struct attribute_group ipu_stats_group = {
	.name = "stats",
	.attrs = ipu_stats_attrs,
};

const struct attribute_group *ipu_dev_groups[] = {
	&ipu_dev_group,
	&ipu_stats_group,
	NULL,
};
