// SPDX-License-Identifier: MIT
/*
 * ipu-info - list every IPU the driver knows (/sys/class/ipu/ipuN) with
 * its identity, PCI address, state, owner and counters.
 *
 *   ipu-info [--json] [DEV...]
 */
#include <dirent.h>
#include <getopt.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "cli.h"
#include "ipu_tool.h"

struct dev {
	char name[32];
	struct ipu_info_args info;
	struct ipu_counters_args cnt;
	int err;
};

static int query(const char *name, struct dev *d)
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
	return d->err ? -1 : 0;
}

static int cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return atoi(x + 3) - atoi(y + 3);
}

static void print_text(const struct dev *d)
{
	const struct ipu_info_args *i = &d->info;
	const struct ipu_counters_args *c = &d->cnt;

	if (d->err) {
		printf("%s: error: %s%s\n", d->name, strerror(d->err), ipu_tool_hint(d->err));
		return;
	}
	printf("%s: pci %04x:%02x:%02x.%x serial %016llx\n", d->name, i->pci_domain,
	       i->pci_bus, i->pci_dev, i->pci_fn, (unsigned long long)i->serial);
	printf("  tiles %u x %u KiB (%.1f MiB), version ipu%u, interface %u.%u\n", i->tiles,
	       i->tile_mem / 1024, (double)i->tiles * i->tile_mem / (1 << 20), i->hw_version,
	       i->if_version >> 16, i->if_version & 0xffff);
	printf("  state %s, owner pid %d, executable: %u programs, %u streams\n",
	       ipu_tool_state(i->state), i->owner_pid, i->num_programs, i->num_streams);
	printf("  device: programs %llu, cycles %llu, stream in %llu B, out %llu B, stalls %llu, errors %llu, resets %llu\n",
	       (unsigned long long)c->programs, (unsigned long long)c->cycles,
	       (unsigned long long)c->stream_in_bytes, (unsigned long long)c->stream_out_bytes,
	       (unsigned long long)c->stalls, (unsigned long long)c->errors,
	       (unsigned long long)c->resets);
	printf("  driver: stream cmds %llu (%llu B), programs run %llu, resets %llu, errors %llu, pinned pages %llu\n",
	       (unsigned long long)c->stream_cmds, (unsigned long long)c->stream_bytes,
	       (unsigned long long)c->programs_run, (unsigned long long)c->drv_resets,
	       (unsigned long long)c->drv_errors, (unsigned long long)c->pinned_pages);
}

static void print_json(const struct dev *d, int last)
{
	const struct ipu_info_args *i = &d->info;
	const struct ipu_counters_args *c = &d->cnt;

	if (d->err) {
		printf("  {\"name\": \"%s\", \"error\": \"%s\"}%s\n", d->name, strerror(d->err),
		       last ? "" : ",");
		return;
	}
	printf("  {\"name\": \"%s\", \"path\": \"/dev/%s\", \"id\": %u, "
	       "\"pci\": \"%04x:%02x:%02x.%x\", \"serial\": \"%016llx\", "
	       "\"tiles\": %u, \"tile_mem\": %u, \"memory\": %llu, \"version\": %u, "
	       "\"interface\": \"%u.%u\", \"state\": \"%s\", \"owner_pid\": %d, "
	       "\"programs_loaded\": %u, \"streams\": %u,\n",
	       d->name, d->name, i->minor, i->pci_domain, i->pci_bus, i->pci_dev, i->pci_fn,
	       (unsigned long long)i->serial, i->tiles, i->tile_mem,
	       (unsigned long long)i->tiles * i->tile_mem, i->hw_version, i->if_version >> 16,
	       i->if_version & 0xffff, ipu_tool_state(i->state), i->owner_pid,
	       i->num_programs, i->num_streams);
	printf("   \"counters\": {\"programs\": %llu, \"cycles\": %llu, \"compute_cycles\": %llu, "
	       "\"exchange_bytes\": %llu, \"stream_in_bytes\": %llu, \"stream_out_bytes\": %llu, "
	       "\"stalls\": %llu, \"errors\": %llu, \"resets\": %llu, \"stream_cmds\": %llu, "
	       "\"stream_bytes\": %llu, \"programs_run\": %llu, \"driver_resets\": %llu, "
	       "\"pinned_pages\": %llu}}%s\n",
	       (unsigned long long)c->programs, (unsigned long long)c->cycles,
	       (unsigned long long)c->compute_cycles, (unsigned long long)c->exchange_bytes,
	       (unsigned long long)c->stream_in_bytes, (unsigned long long)c->stream_out_bytes,
	       (unsigned long long)c->stalls, (unsigned long long)c->errors,
	       (unsigned long long)c->resets, (unsigned long long)c->stream_cmds,
	       (unsigned long long)c->stream_bytes, (unsigned long long)c->programs_run,
	       (unsigned long long)c->drv_resets, (unsigned long long)c->pinned_pages,
	       last ? "" : ",");
}

int main(int argc, char **argv)
{
	char *names[64];
	int n = 0, json = 0, i, bad = 0;
	struct dev d;

	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h':
			printf("usage: ipu-info [--json] [DEV...]   (DEV: /dev/ipuN, ipuN or N)\n"
			       "List IPU devices: identity, state, owner, counters (sysfs).\n"
			       "  --json             one JSON array\n"
			       "  --help, --version  this text; the version\n"
			       "Exit status: 0 done, 1 no driver or a device not found, 2 bad command line.\n");
			return CLI_EXIT_OK;
		case 'v': cli_print_version("ipu-info"); return CLI_EXIT_OK;
		default:
			fprintf(stderr, "ipu-info: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	for (i = optind; i < argc; i++) {
		if (n == 64) {
			fprintf(stderr, "ipu-info: at most 64 devices at a time\n");
			return CLI_EXIT_USAGE;
		}
		names[n++] = argv[i][0] == '/' ? strrchr(argv[i], '/') + 1 : argv[i];
	}
	if (!n) {
		DIR *dir = opendir("/sys/class/ipu");
		struct dirent *e;

		if (!dir) {
			fprintf(stderr, "ipu-info: no IPU driver: /sys/class/ipu missing (load ipu.ko)\n");
			if (json)
				printf("[]\n");
			return 1;
		}
		while ((e = readdir(dir)) && n < 64)
			if (!strncmp(e->d_name, "ipu", 3)) {
				names[n] = strdup(e->d_name);
				if (!names[n]) {
					fprintf(stderr, "ipu-info: out of memory\n");
					return 1;
				}
				n++;
			}
		closedir(dir);
		qsort(names, n, sizeof(names[0]), cmp);
	}
	if (json)
		printf("[\n");
	else if (!n)
		printf("no IPU devices\n");
	for (i = 0; i < n; i++) {
		if (query(names[i], &d))
			bad = 1;
		if (json)
			print_json(&d, i == n - 1);
		else
			print_text(&d);
	}
	if (json)
		printf("]\n");
	return bad;
}
