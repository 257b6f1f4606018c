// SPDX-License-Identifier: MIT
/*
 * ipu-reset - reset an IPU: ipu-reset [--abort|--engine|--device] DEV
 *   --device (default)  full device reset: running work is cancelled, the
 *                       executable is unloaded, the rings re-initialised
 *   --engine            abort and unload the executable, keep the rings
 *   --abort             cancel runs and queued buffers only
 * Resetting a device another process has attached needs CAP_SYS_ADMIN.
 */
#include <fcntl.h>
#include <unistd.h>

#include "ipu_tool.h"

int main(int argc, char **argv)
{
	struct ipu_reset_args r = { .mode = IPU_RESET_DEVICE };
	const char *dev = NULL;
	char path[64];
	int i, fd;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--abort"))
			r.mode = IPU_RESET_ABORT;
		else if (!strcmp(argv[i], "--engine"))
			r.mode = IPU_RESET_ENGINE;
		else if (!strcmp(argv[i], "--device"))
			r.mode = IPU_RESET_DEVICE;
		else if (argv[i][0] == '-')
			dev = NULL, i = argc;
		else
			dev = argv[i];
	}
	if (!dev) {
		fprintf(stderr, "usage: ipu-reset [--abort|--engine|--device] DEV   (DEV: /dev/ipuN, ipuN or N)\n");
		return 2;
	}
	ipu_tool_path(dev, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ipu-reset: %s: %s%s\n", path, strerror(errno), ipu_tool_hint(errno));
		return 1;
	}
	if (ioctl(fd, IPU_IOCTL_RESET, &r)) {
		fprintf(stderr, "ipu-reset: %s: reset failed: %s%s\n", path, strerror(errno),
			ipu_tool_hint(errno));
		close(fd);
		return 1;
	}
	printf("%s: %s reset done\n", path,
	       r.mode == IPU_RESET_DEVICE ? "device" : r.mode == IPU_RESET_ENGINE ? "engine" : "abort");
	close(fd);
	return 0;
}
