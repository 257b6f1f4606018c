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
#include <getopt.h>
#include <unistd.h>

#include "cli.h"
#include "ipu_tool.h"

int main(int argc, char **argv)
{
	struct ipu_reset_args r = { .mode = IPU_RESET_DEVICE };
	const char *dev = NULL;
	char path[64];
	int i, fd;

	static const struct option lo[] = {
		{ "abort", no_argument, NULL, 'a' },
		{ "engine", no_argument, NULL, 'e' },
		{ "device", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] =
		"usage: ipu-reset [--abort|--engine|--device] DEV   (DEV: /dev/accel/accelN, accelN or N)\n"
		"  --abort    cancel what runs, keep the executable\n"
		"  --engine   reset the engine (the executable is unloaded)\n"
		"  --device   full device reset\n"
		"  --help, --version  this text; the version\n"
		"Exit status: 0 done, 1 the device refused or is missing, 2 bad command line.\n";
	int c;

	(void)i;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'a': r.mode = IPU_RESET_ABORT; break;
		case 'e': r.mode = IPU_RESET_ENGINE; break;
		case 'd': r.mode = IPU_RESET_DEVICE; break;
		case 'h': fputs(usage, stdout); return CLI_EXIT_OK;
		case 'v': cli_print_version("ipu-reset"); return CLI_EXIT_OK;
		default:
			fprintf(stderr, "ipu-reset: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	dev = argv[optind];
	ipu_tool_path(dev, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ipu-reset: %s: %s%s\n", path, strerror(errno), ipu_tool_hint(errno));
		return 1;
	}
	if (ioctl(fd, DRM_IOCTL_IPU_RESET, &r)) {
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
