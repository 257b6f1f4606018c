// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_debugfs.c - test knobs under /sys/kernel/debug/ipu/ipuN/ (N of
 * /dev/accel/accelN; root only, not ABI): the device's fault injection
 * registers, its progress counter, the driver's own inject_hang and "aer",
 * which runs the driver's AER recovery.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "ipu_drv.h"

static struct dentry *ipu_debugfs_root;

/* the same names as the QEMU device's `fault` property */
static const char * const ipu_fault_kinds[IPU_FAULT_KIND_MAX + 1] = {
	[IPU_FAULT_NONE] = "none",
	[IPU_FAULT_HANG] = "hang",
	[IPU_FAULT_DROP_IRQ] = "drop-irq",
	[IPU_FAULT_CORRUPT_CPL] = "corrupt-cpl",
	[IPU_FAULT_DMA] = "dma",
	[IPU_FAULT_SLOW] = "slow",
};

static const char * const ipu_fault_opcodes[] = {
	[IPU_CMD_NOP] = "nop",
	[IPU_CMD_LOAD_EXE] = "load",
	[IPU_CMD_WRITE_TENSOR] = "write",
	[IPU_CMD_READ_TENSOR] = "read",
	[IPU_CMD_RUN] = "run",
	[IPU_CMD_ABORT] = "abort",
	[IPU_CMD_RESET_ENGINE] = "reset-engine",
	[IPU_CMD_CREATE_STREAM] = "create-stream",
	[IPU_CMD_DELETE_STREAM] = "delete-stream",
};

static int ipu_fault_show(struct seq_file *m, void *unused)
{
	struct ipu_device *idev = m->private;
	u32 ctrl = ipu_rd(idev, IPU_REG_FAULT_CTRL);
	u32 kind = ctrl & IPU_FAULT_KIND_MASK;
	u32 op = ctrl >> IPU_FAULT_OPCODE_SHIFT & 0xff;

	if (kind == IPU_FAULT_NONE) {
		seq_puts(m, "none");
	} else {
		seq_printf(m, "%s:%u", kind <= IPU_FAULT_KIND_MAX ? ipu_fault_kinds[kind] : "?",
			   ipu_rd(idev, IPU_REG_FAULT_COUNT));
		if (ctrl & IPU_FAULT_MATCH_OPCODE)
			seq_printf(m, ":%s", op < ARRAY_SIZE(ipu_fault_opcodes) ?
				   ipu_fault_opcodes[op] : "?");
		if (ctrl & IPU_FAULT_REPEAT)
			seq_puts(m, ":repeat");
		if (kind == IPU_FAULT_SLOW)
			seq_printf(m, ":arg=%u", ipu_rd(idev, IPU_REG_FAULT_ARG));
	}
	seq_printf(m, " fired=%u\n", ipu_rd(idev, IPU_REG_FAULT_FIRED));
	return 0;
}

/* "KIND:N[:OPCODE][:repeat][:arg=MS]" into FAULT_CTRL, COUNT and ARG */
static int ipu_fault_parse(char *spec, u32 *ctrl, u32 *count, u32 *arg)
{
	char *tok;
	int kind, op;

	tok = strsep(&spec, ":");
	kind = match_string(ipu_fault_kinds, ARRAY_SIZE(ipu_fault_kinds), tok);
	if (kind < 0)
		return -EINVAL;
	*ctrl = kind;
	*count = 1;
	*arg = 0;
	if (kind == IPU_FAULT_NONE)
		return spec ? -EINVAL : 0;
	tok = strsep(&spec, ":");
	if (!tok || kstrtou32(tok, 0, count) || !*count)
		return -EINVAL;
	while ((tok = strsep(&spec, ":"))) {
		if (!strcmp(tok, "repeat")) {
			*ctrl |= IPU_FAULT_REPEAT;
		} else if (str_has_prefix(tok, "arg=")) {
			if (kstrtou32(tok + 4, 0, arg) || *arg > IPU_FAULT_MAX_SLOW_MS)
				return -EINVAL;
		} else {
			op = match_string(ipu_fault_opcodes, ARRAY_SIZE(ipu_fault_opcodes), tok);
			if (op < 0)
				return -EINVAL;
			*ctrl |= IPU_FAULT_MATCH_OPCODE | (u32)op << IPU_FAULT_OPCODE_SHIFT;
		}
	}
	return 0;
}

static ssize_t ipu_fault_write(struct file *file, const char __user *ubuf, size_t len,
			       loff_t *ppos)
{
	struct ipu_device *idev = file_inode(file)->i_private;
	u32 ctrl, count, arg;
	char buf[96];
	int ret;

	if (len >= sizeof(buf))
		return -E2BIG;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	ret = ipu_fault_parse(strim(buf), &ctrl, &count, &arg);
	if (ret)
		return ret;
	mutex_lock(&idev->lock);
	if (idev->gone) {
		mutex_unlock(&idev->lock);
		return -ENODEV;
	}
	/* CTRL last: writing it arms the fault and restarts the count */
	ipu_wr(idev, IPU_REG_FAULT_ARG, arg);
	ipu_wr(idev, IPU_REG_FAULT_COUNT, count);
	ipu_wr(idev, IPU_REG_FAULT_CTRL, ctrl);
	mutex_unlock(&idev->lock);
	dev_dbg(&idev->pdev->dev, "fault injection %#x, count %u, arg %u\n", ctrl, count, arg);
	return len;
}

static int ipu_fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, ipu_fault_show, inode->i_private);
}

static const struct file_operations ipu_fault_fops = {
	.owner = THIS_MODULE,
	.open = ipu_fault_open,
	.read = seq_read,
	.write = ipu_fault_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int ipu_progress_show(struct seq_file *m, void *unused)
{
	struct ipu_device *idev = m->private;

	seq_printf(m, "%llu\n", ipu_rd64(idev, IPU_REG_PROGRESS_LO));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ipu_progress);

/* writing 1 runs error_detected(frozen), slot_reset and resume */
static ssize_t ipu_aer_write(struct file *file, const char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	struct ipu_device *idev = file_inode(file)->i_private;
	bool go;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &go);
	if (ret)
		return ret;
	if (!go)
		return len;
	if (READ_ONCE(idev->gone))
		return -ENODEV;
	ret = ipu_aer_recover(idev);
	return ret ? ret : len;
}

static const struct file_operations ipu_aer_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = ipu_aer_write,
	.llseek = noop_llseek,
};

/**
 * ipu_debugfs_init() - create the debugfs directory "ipu"
 */
void ipu_debugfs_init(void)
{
	ipu_debugfs_root = debugfs_create_dir(IPU_DRV_NAME, NULL);
}

/**
 * ipu_debugfs_exit() - remove the debugfs directory "ipu" and all below it
 */
void ipu_debugfs_exit(void)
{
	debugfs_remove_recursive(ipu_debugfs_root);
	ipu_debugfs_root = NULL;
}

/**
 * ipu_debugfs_add() - the test knobs of one device, ipu/ipuN/
 * @idev: the device
 *
 * Failures only lose the knobs: debugfs errors are not checked by design.
 */
void ipu_debugfs_add(struct ipu_device *idev)
{
	char name[16];

	snprintf(name, sizeof(name), "ipu%d", idev->minor);
	idev->debugfs = debugfs_create_dir(name, ipu_debugfs_root);
	debugfs_create_bool("inject_hang", 0600, idev->debugfs, &idev->inject_hang);
	debugfs_create_file("aer", 0200, idev->debugfs, idev, &ipu_aer_fops);
	if (idev->caps & IPU_CAP_FAULT)
		debugfs_create_file("fault", 0600, idev->debugfs, idev, &ipu_fault_fops);
	if (idev->caps & IPU_CAP_PROGRESS)
		debugfs_create_file("progress", 0400, idev->debugfs, idev, &ipu_progress_fops);
}

/**
 * ipu_debugfs_remove() - remove ipu/ipuN/
 * @idev: the device
 */
void ipu_debugfs_remove(struct ipu_device *idev)
{
	debugfs_remove_recursive(idev->debugfs);
	idev->debugfs = NULL;
}
