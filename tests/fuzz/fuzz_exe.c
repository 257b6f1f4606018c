// SPDX-License-Identifier: MIT
/*
 * fuzz_exe.c - libFuzzer target for the device's security boundary: parse
 * + verify an executable image and, when it is accepted, load it and run
 * every program, so that any gap between a codelet's check() and its run()
 * shows up as an ASan/UBSan report.  Runs are bounded by a watchdog that
 * aborts the engine after a few milliseconds (Repeat counts can be huge).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipu/engine.h"

#define DEV_TILES 4
#define DEV_MEM (16 * 1024)

static int zero_transfer(void *ctx, uint32_t stream, uint32_t dir,
			 const struct ipu_stream_seg *segs, uint32_t nsegs,
			 uint32_t total, int *stalled)
{
	uint32_t i;

	(void)ctx;
	(void)stream;
	(void)total;
	(void)stalled;
	if (dir == IPUX_STREAM_H2D)
		for (i = 0; i < nsegs; i++)
			memset(segs[i].ptr, (int)(i * 37u), segs[i].len);
	return 0;
}

/*
 * Each run arms the watchdog with a new generation number; the watchdog
 * aborts a run only if that same arming is still in force after 5 ms, so a
 * quick re-arm for the next program can never leave a run unwatched.
 */
struct watchdog {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct ipu_engine *e;
	int armed;
	unsigned gen;
};

static struct ipu_engine *engine;
static struct watchdog wd = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0 };

static void *watchdog_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wd.lock);
	for (;;) {
		struct timespec ts;
		unsigned g;

		while (!wd.armed)
			pthread_cond_wait(&wd.cv, &wd.lock);
		g = wd.gen;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 5 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		while (wd.armed && wd.gen == g &&
		       pthread_cond_timedwait(&wd.cv, &wd.lock, &ts) != ETIMEDOUT)
			;
		if (!wd.armed || wd.gen != g)
			continue;
		ipu_engine_abort(wd.e);
		while (wd.armed && wd.gen == g)
			pthread_cond_wait(&wd.cv, &wd.lock);
	}
	return NULL;
}

static void arm(int on)
{
	pthread_mutex_lock(&wd.lock);
	wd.armed = on;
	if (on)
		wd.gen++;
	pthread_cond_broadcast(&wd.cv);
	pthread_mutex_unlock(&wd.lock);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct ipu_exe_info info;
	uint32_t p;
	uint8_t *img;
	int rc;

	if (!engine) {
		struct ipu_engine_config cfg = { DEV_TILES, DEV_MEM, 1 };
		struct ipu_stream_ops ops = { zero_transfer, NULL };
		pthread_t t;

		if (ipu_engine_create(&cfg, &ops, &engine, err, sizeof(err)))
			abort();
		/* as libipu's in-process device runs: copies read in place */
		ipu_engine_set_elide(engine, 1);
		wd.e = engine;
		pthread_create(&t, NULL, watchdog_main, NULL);
	}
	img = malloc(size ? size : 1);
	if (!img)
		return 0;
	memcpy(img, data, size);
	if (size >= sizeof(struct ipux_header) && data[size - 1] != 0xff) {
		struct ipux_header *h = (struct ipux_header *)img;

		h->total_size = (uint32_t)size;
		h->checksum = ipu_exe_checksum(img, size);
	}
	rc = ipu_engine_load(engine, img, size, err, sizeof(err));
	free(img);
	if (rc)
		return 0;
	ipu_engine_exe_info(engine, &info);
	for (p = 0; p < info.num_programs; p++) {
		arm(1);
		ipu_engine_run(engine, p, err, sizeof(err));
		arm(0);
		ipu_engine_clear_abort(engine);
	}
	return 0;
}
