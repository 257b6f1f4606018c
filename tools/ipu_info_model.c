// SPDX-License-Identifier: MIT
/*
 * ipu_info_model.c - the in-process device as ipu-info lists it.  It is
 * opened through libipu exactly as the other tools open it, so the tiles,
 * memory and version shown are the ones a run would get.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ipu/ipu.h"
#include "ipu_info_model.h"

/* How a user picks this device, for the listing. */
#define SIZE_HOW "model:tiles=N,tile_mem=SIZE,workers=N,version=ipu2|ipu21"

int ipu_info_is_model(const char *arg)
{
	return !strncmp(arg, "model", 5) && (arg[5] == 0 || arg[5] == ':');
}

static const char *state_name(uint32_t s)
{
	static const char *const names[] = { "idle", "ready", "busy", "error" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static void print_text(const char *spec, const struct ipu_device_info *i)
{
	char safe[160];

	cli_safe(spec, safe, sizeof(safe));
	printf("%s: in-process device (libipu backend 'model': the tile engine runs in the calling process)\n",
	       safe);
	printf("  tiles %u x %u KiB (%.1f MiB), version %s, serial %s\n", i->num_tiles,
	       i->tile_mem / 1024, (double)i->num_tiles * i->tile_mem / (1 << 20), i->version_name,
	       i->serial);
	printf("  select: --device %s (ipu-run, ipu-serve); ipurt_config.device = \"%s\" (C);\n"
	       "          RunnerConfig(device=\"%s\") (Python)\n", safe, safe, safe);
	printf("  default: with no device given, every tool makes one sized to the model;\n"
	       "          other sizes: " SIZE_HOW "\n");
}

static int append_json(json_t *arr, const char *spec, const struct ipu_device_info *i)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:s}",
			      "name", spec, "path", spec, "backend", "model",
			      "tiles", (json_int_t)i->num_tiles, "tile_mem", (json_int_t)i->tile_mem,
			      "memory", (json_int_t)i->num_tiles * i->tile_mem,
			      "version", (json_int_t)i->version, "version_name", i->version_name,
			      "state", state_name(i->state),
			      "select", spec);

	return o ? json_array_append_new(arr, o) : -1;
}

int ipu_info_model(const char *spec, json_t *arr)
{
	struct ipu_device_info info;
	struct ipu_device *d;
	char err[256], safe[160];
	int rc;

	rc = ipu_open(spec, &d, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ipu-info: %s: %s\n", cli_safe(spec, safe, sizeof(safe)), err);
		return -1;
	}
	rc = ipu_info(d, &info);
	ipu_close(d);
	if (rc) {
		fprintf(stderr, "ipu-info: %s: %s\n", cli_safe(spec, safe, sizeof(safe)),
			ipu_strerror(rc));
		return -1;
	}
	if (!arr) {
		print_text(spec, &info);
		return 0;
	}
	if (append_json(arr, spec, &info)) {
		fprintf(stderr, "ipu-info: out of memory\n");
		return -1;
	}
	return 0;
}
