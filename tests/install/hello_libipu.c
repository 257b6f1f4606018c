// SPDX-License-Identifier: MIT
/*
 * hello_libipu.c - a device program built against the installed libipu
 * with only `pkg-config --cflags --libs libipu`: it opens the in-process
 * device, reads its counters, and sees a refused image come back as one
 * error class with the verifier's finding as its detail.
 */
#include <stdio.h>
#include <string.h>

#include <ipu/ipu.h>

int main(void)
{
	static const unsigned char junk[64] = "not an executable";
	struct ipu_device_info info;
	struct ipu_counters c;
	struct ipu_device *d;
	struct ipu_error e;
	char err[256];
	int rc;

	if (ipu_open("model:tiles=4,tile_mem=64k,workers=1", &d, err, sizeof(err))) {
		fprintf(stderr, "hello_libipu: %s\n", err);
		return 1;
	}
	if (ipu_attach(d) || ipu_info(d, &info) || ipu_counters(d, &c)) {
		fprintf(stderr, "hello_libipu: attach/info/counters failed\n");
		ipu_close(d);
		return 1;
	}
	rc = ipu_load(d, junk, sizeof(junk), &e);
	ipu_close(d);
	if (rc != IPU_E_VERIFY || e.code != IPU_E_VERIFY || ipu_err_class(e.detail) != IPU_E_VERIFY ||
	    !e.msg[0]) {
		fprintf(stderr, "hello_libipu: load gave %s (detail %s): %s\n", ipu_err_name(rc),
			ipu_err_name(e.detail), e.msg);
		return 1;
	}
	printf("%s: %u tiles, %llu programs run; junk image: %s, detail %s (%s)\n", info.name,
	       info.num_tiles, (unsigned long long)c.programs_run, ipu_err_name(rc),
	       ipu_err_name(e.detail), ipu_strerror(e.detail));
	return 0;
}
