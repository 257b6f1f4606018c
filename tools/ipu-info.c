// SPDX-License-Identifier: MIT
/*
 * ipu-info - list the IPUs a program can use: the in-process device
 * (libipu's model backend, every tool's default) and every IPU the driver
 * knows (/sys/class/accel/accelN/device) with its identity, PCI address, state,
 * owner and counters.
 *
 *   ipu-info [--json] [DEV...]
 */
#include <getopt.h>
#include <stdint.h>

#include <jansson.h>

#include "cli.h"
#include "ipu_info_model.h"
#include "ipu_tool.h"

static void print_text(const struct ipu_tool_dev *d)
{
	const struct ipu_info_args *i = &d->info;
	const struct ipu_counters_args *c = &d->cnt;

	if (d->err) {
		printf("%s: error: %s%s\n", d->name, strerror(d->err), ipu_tool_hint(d->err));
		return;
	}
	printf("%s: pci %04x:%02x:%02x.%x serial %016llx\n", d->name, i->pci_domain,
	       i->pci_bus, i->pci_dev, i->pci_fn, (unsigned long long)i->serial);
	printf("  DRM accel driver %s %d.%d.%d (%s), node /dev/accel/accel%u\n", d->drm_name,
	       d->drm_major, d->drm_minor, d->drm_patch, d->drm_desc, i->minor);
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
	if (i->link_index != UINT32_MAX) {
		printf("  ipu-link index %u, ", i->link_index);
		if (i->group_size)
			printf("group %u: IPU %u of %u", i->group_id, i->group_ipu, i->group_size);
		else
			printf("in no group");
		printf(", link out %llu B, in %llu B, %llu modelled cycles\n",
		       (unsigned long long)c->link_out_bytes, (unsigned long long)c->link_in_bytes,
		       (unsigned long long)c->link_cycles);
	}
	if (d->lost_irqs >= 0 && d->bad_completions >= 0)
		printf("  recovered: lost interrupts %lld (completions polled), bad completions %lld (each reset the device)\n",
		       (long long)d->lost_irqs, (long long)d->bad_completions);
}

static json_t *dev_json(const struct ipu_tool_dev *d)
{
	const struct ipu_info_args *i = &d->info;
	const struct ipu_counters_args *c = &d->cnt;
	char pci[32], serial[24], path[64], iface[16], drmver[40];
	json_t *o, *k, *drm;

	if (d->err)
		return json_pack("{s:s, s:s}", "name", d->name, "error", strerror(d->err));
	snprintf(pci, sizeof(pci), "%04x:%02x:%02x.%x", i->pci_domain, i->pci_bus, i->pci_dev,
		 i->pci_fn);
	snprintf(serial, sizeof(serial), "%016llx", (unsigned long long)i->serial);
	snprintf(path, sizeof(path), "/dev/accel/accel%u", i->minor);
	snprintf(iface, sizeof(iface), "%u.%u", i->if_version >> 16, i->if_version & 0xffff);
	snprintf(drmver, sizeof(drmver), "%d.%d.%d", d->drm_major, d->drm_minor, d->drm_patch);
	o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:I, s:I, s:I}",
		      "name", d->name, "path", path, "backend", "kernel", "id", (json_int_t)i->minor, "pci", pci,
		      "serial", serial, "tiles", (json_int_t)i->tiles,
		      "tile_mem", (json_int_t)i->tile_mem,
		      "memory", (json_int_t)i->tiles * i->tile_mem,
		      "version", (json_int_t)i->hw_version, "interface", iface,
		      "state", ipu_tool_state(i->state), "owner_pid", (json_int_t)i->owner_pid,
		      "programs_loaded", (json_int_t)i->num_programs,
		      "streams", (json_int_t)i->num_streams);
	k = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		      "programs", (json_int_t)c->programs, "cycles", (json_int_t)c->cycles,
		      "compute_cycles", (json_int_t)c->compute_cycles,
		      "exchange_bytes", (json_int_t)c->exchange_bytes,
		      "stream_in_bytes", (json_int_t)c->stream_in_bytes,
		      "stream_out_bytes", (json_int_t)c->stream_out_bytes,
		      "stalls", (json_int_t)c->stalls, "errors", (json_int_t)c->errors,
		      "resets", (json_int_t)c->resets, "stream_cmds", (json_int_t)c->stream_cmds,
		      "stream_bytes", (json_int_t)c->stream_bytes,
		      "programs_run", (json_int_t)c->programs_run,
		      "driver_resets", (json_int_t)c->drv_resets,
		      "pinned_pages", (json_int_t)c->pinned_pages);
	if (k && d->lost_irqs >= 0 && d->bad_completions >= 0) {
		json_object_set_new(k, "lost_irqs", json_integer(d->lost_irqs));
		json_object_set_new(k, "bad_completions", json_integer(d->bad_completions));
	}
	if (o && i->link_index != UINT32_MAX) {
		json_t *l = json_pack("{s:I, s:I, s:I, s:I}", "index", (json_int_t)i->link_index,
				      "out_bytes", (json_int_t)c->link_out_bytes,
				      "in_bytes", (json_int_t)c->link_in_bytes,
				      "cycles", (json_int_t)c->link_cycles);

		if (l && i->group_size)
			json_object_set_new(l, "group",
					    json_pack("{s:I, s:I, s:I}", "id", (json_int_t)i->group_id,
						      "ipu", (json_int_t)i->group_ipu,
						      "size", (json_int_t)i->group_size));
		json_object_set_new(o, "link", l);
	}
	drm = json_pack("{s:s, s:s, s:s, s:s}", "name", d->drm_name, "version", drmver,
			"desc", d->drm_desc, "node", path);
	if (!o || !k || !drm || json_object_set_new(o, "drm", drm) ||
	    json_object_set_new(o, "counters", k)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One device per line, in the order given, so scripts can grep a line. */
static int print_json(json_t *arr)
{
	size_t i, n = json_array_size(arr);

	printf("[\n");
	for (i = 0; i < n; i++) {
		char *s = json_dumps(json_array_get(arr, i), JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);

		if (!s)
			return -1;
		printf("  %s%s\n", s, i + 1 < n ? "," : "");
		free(s);
	}
	printf("]\n");
	return 0;
}

int main(int argc, char **argv)
{
	char names[IPU_TOOL_MAX_DEVS][32];
	const char *devs[IPU_TOOL_MAX_DEVS];
	int n = 0, json = 0, i, bad = 0, listed = 0, no_driver = 0;
	struct ipu_tool_dev d;
	json_t *arr = NULL;

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
			printf("usage: ipu-info [--json] [DEV...]\n"
			       "List the IPU devices a program can use: the in-process device and the driver's.\n"
			       "  (no DEV)           the in-process device 'model' (libipu's model backend:\n"
			       "                     the tile engine in the calling process; tiles, memory per\n"
			       "                     tile, version, how to select it), then every /dev/accel/accelN\n"
			       "                     of the driver (DRM driver and version, identity, state,\n"
			       "                     owner, counters; sysfs)\n"
			       "  DEV                /dev/accel/accelN, accelN or N: that kernel device only;\n"
			       "                     model[:tiles=N,tile_mem=SIZE,workers=N,version=V]: that\n"
			       "                     in-process device\n"
			       "  --json             one JSON array, a device per line (\"backend\": \"model\"\n"
			       "                     or \"kernel\")\n"
			       "  --help, --version  this text; the version\n"
			       "Exit status: 0 done (at least one device listed), 1 nothing listed, a device\n"
			       "not found or not readable, 2 bad command line.\n");
			return CLI_EXIT_OK;
		case 'v': cli_print_version("ipu-info"); return CLI_EXIT_OK;
		default:
			fprintf(stderr, "ipu-info: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	for (i = optind; i < argc; i++) {
		const char *a = argv[i][0] == '/' ? strrchr(argv[i], '/') + 1 : argv[i];

		if (n == IPU_TOOL_MAX_DEVS) {
			fprintf(stderr, "ipu-info: at most %d devices at a time\n", IPU_TOOL_MAX_DEVS);
			return CLI_EXIT_USAGE;
		}
		if (ipu_info_is_model(argv[i])) {
			devs[n++] = argv[i];
			continue;
		}
		if (strlen(a) >= sizeof(names[0])) {
			char safe[128];

			fprintf(stderr, "ipu-info: '%s': not a device name (accelN, /dev/accel/accelN, N or model[:OPTS])\n",
				cli_safe(a, safe, sizeof(safe)));
			return CLI_EXIT_USAGE;
		}
		snprintf(names[n], sizeof(names[0]), "%s", a);
		devs[n] = names[n];
		n++;
	}
	if (optind == argc) {
		/* the in-process device first: it is what every tool uses unless told otherwise */
		devs[n++] = "model";
		c = ipu_tool_list(names, IPU_TOOL_MAX_DEVS - 1);
		if (c < 0)
			no_driver = 1;
		for (i = 0; i < c; i++)
			devs[n++] = names[i];
	}
	if (json && !(arr = json_array())) {
		fprintf(stderr, "ipu-info: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (ipu_info_is_model(devs[i])) {
			if (ipu_info_model(devs[i], arr))
				bad = 1;
			else
				listed++;
			continue;
		}
		if (ipu_tool_query(devs[i], &d))
			bad = 1;
		else
			listed++;
		if (!json)
			print_text(&d);
		else if (json_array_append_new(arr, dev_json(&d))) {
			fprintf(stderr, "ipu-info: out of memory\n");
			json_decref(arr);
			return 1;
		}
	}
	/* Said in text only: --json stays one array a script can parse. */
	if (!json && no_driver)
		printf("no kernel devices: no IPU driver (/sys/bus/pci/drivers/ipu missing; load ipu.ko for /dev/accel/accelN)\n");
	else if (!json && optind == argc && n == 1)
		printf("no kernel devices: the IPU driver is loaded but lists no device\n");
	if (json) {
		if (print_json(arr)) {
			fprintf(stderr, "ipu-info: out of memory\n");
			bad = 1;
		}
		json_decref(arr);
	}
	/* a plain listing succeeds when it shows a device at all */
	if (optind == argc)
		return listed ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
	return bad;
}
