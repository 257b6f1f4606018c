// SPDX-License-Identifier: MIT
/*
 * test_libipu.c - libipu's public API (ipu/ipu.h) on the in-process device:
 * opening and describing devices, loading, streams, runs, waits with
 * deadlines, aborts, resets, counters and the handlers, with the model the
 * runtime tests use (Y = X * 2 + W; W streamed in by the Load program).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ipu/ipu.h"
#include "ipu/ipuef.h"
#include "rt_models.h"

static void *image;
static size_t image_len;
static uint32_t prog_load, prog_main;
enum { S_W = 0, S_X = 1, S_Y = 2 };	/* the model's streams */

static struct ipu_device *open_loaded(void)
{
	struct ipu_device *d = NULL;
	struct ipu_error le = { 0 };
	char err[256] = "";

	if (ipu_open("model:tiles=8,tile_mem=64k,workers=2", &d, err, sizeof(err)) ||
	    ipu_attach(d) || ipu_load(d, image, image_len, &le)) {
		fprintf(stderr, "open_loaded: %s%s\n", err, le.msg);
		ipu_close(d);
		return NULL;
	}
	return d;
}

/* The Load program with W = {10, 20, 30}. */
static int load_weights(struct ipu_device *d)
{
	static float w[3] = { 10, 20, 30 };
	struct ipu_completion c;
	char err[256];
	int rc;

	if (ipu_stream_submit(d, S_W, w, sizeof(w), 7))
		return -1;
	rc = ipu_run_sync(d, prog_load, err, sizeof(err));
	if (rc)
		return rc;
	return ipu_stream_poll(d, &c, 1, -1) == 1 && c.tag == 7 && c.status == 0 ? 0 : -1;
}

TEST(open_refuses_bad_specs)
{
	static const char *const bad[] = { "model:tiles=x", "model:tiles=-1", "model:bogus=1",
					   "model:version=ipu9", "bogus", "/dev/accel/accel-does-not-exist" };
	struct ipu_device *d = (struct ipu_device *)1;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK_MSG(ipu_open(bad[i], &d, err, sizeof(err)) < 0, "%s opened", bad[i]);
		CHECK_MSG(err[0] != 0, "%s: no message", bad[i]);
	}
}

TEST(info_describes_the_device)
{
	struct ipu_device_info info;
	struct ipu_device *d;
	char err[256];

	REQUIRE(ipu_open("model:tiles=8,tile_mem=64KiB,version=ipu21,serial=abc,workers=2", &d, err,
			 sizeof(err)) == 0);
	CHECK_EQ_INT(ipu_info(d, &info), 0);
	CHECK_EQ_INT(info.backend, IPU_BACKEND_MODEL);
	CHECK_EQ_INT(info.num_tiles, 8);
	CHECK_EQ_INT(info.tile_mem, 64 * 1024);
	CHECK_EQ_INT(info.version, 21);
	CHECK(!strcmp(info.version_name, "ipu21"));
	CHECK(!strcmp(info.serial, "abc"));
	CHECK_EQ_INT(info.workers, 2);
	CHECK_EQ_INT(info.state, IPU_STATE_IDLE);
	CHECK_EQ_INT(ipu_stream_count(d), IPU_E_NOT_LOADED);
	ipu_close(d);
}

TEST(load_refuses_what_the_verifier_refuses)
{
	struct ipu_device_info info;
	struct ipu_device *d;
	uint8_t junk[256];
	struct ipu_error le;
	char err[256] = "";

	memset(junk, 0xa5, sizeof(junk));
	REQUIRE(ipu_open("model:tiles=8,tile_mem=64k", &d, err, sizeof(err)) == 0);
	REQUIRE(ipu_attach(d) == 0);
	/* the verifier's finding is the detail of one class */
	CHECK_EQ_INT(ipu_load(d, junk, sizeof(junk), &le), IPU_E_VERIFY);
	CHECK_EQ_INT(le.code, IPU_E_VERIFY);
	CHECK_EQ_INT(le.detail, IPUX_E_BAD_MAGIC);
	CHECK(le.msg[0] != 0);
	CHECK_EQ_INT(ipu_err_class(le.detail), IPU_E_VERIFY);
	CHECK(!strcmp(ipu_err_name(le.detail), "IPUX_E_BAD_MAGIC"));
	CHECK_EQ_INT(ipu_load(d, NULL, 0, &le), IPU_E_INVAL);
	CHECK_EQ_INT(le.detail, 0);
	CHECK_EQ_INT(ipu_info(d, &info), 0);
	CHECK_EQ_INT(info.state, IPU_STATE_IDLE);
	/* the model needs 3 tiles: a 2-tile device refuses it, naming why */
	ipu_close(d);
	REQUIRE(ipu_open("model:tiles=2,tile_mem=64k", &d, err, sizeof(err)) == 0);
	REQUIRE(ipu_attach(d) == 0);
	CHECK_EQ_INT(ipu_load(d, image, image_len, &le), IPU_E_VERIFY);
	CHECK_EQ_INT(le.detail, IPUX_E_TILES);
	CHECK(strstr(le.msg, "tiles") != NULL);
	ipu_close(d);
}

TEST(streams_and_a_request)
{
	struct ipu_device *d = open_loaded();
	float x[12], y[12];
	struct ipu_completion c[4];
	uint32_t dir, bytes;
	uint64_t seq;
	char err[256];
	int i, n;

	REQUIRE(d);
	CHECK_EQ_INT(ipu_stream_count(d), 3);
	CHECK(ipu_stream_info(d, S_X, &dir, &bytes) == 0 && dir == 0 && bytes == 48);
	CHECK(ipu_stream_info(d, S_Y, &dir, &bytes) == 0 && dir == 1 && bytes == 48);
	CHECK_EQ_INT(ipu_stream_info(d, 3, &dir, &bytes), IPU_E_INVAL);
	REQUIRE(load_weights(d) == 0);
	for (i = 0; i < 12; i++)
		x[i] = (float)i - 4;
	/* wrong sizes and streams are refused before anything queues */
	CHECK_EQ_INT(ipu_stream_submit(d, S_X, x, 47, 1), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_stream_submit(d, 9, x, 48, 1), IPU_E_INVAL);
	/* buffers may come after the run starts: it waits for them */
	REQUIRE(ipu_run(d, prog_main, &seq) == 0);
	CHECK_EQ_INT(ipu_stream_submit(d, S_X, x, sizeof(x), 1), 0);
	CHECK_EQ_INT(ipu_stream_submit(d, S_Y, y, sizeof(y), 2), 0);
	CHECK_EQ_INT(ipu_wait(d, seq, -1, err, sizeof(err)), 0);
	n = ipu_stream_poll(d, c, 4, 1000000000);
	if (n == 1)
		n += ipu_stream_poll(d, c + 1, 3, 1000000000);
	CHECK_EQ_INT(n, 2);
	for (i = 0; i < n; i++)
		CHECK(c[i].status == 0 && c[i].bytes == 48 && (c[i].tag == 1 || c[i].tag == 2));
	for (i = 0; i < 12; i++)
		CHECK_MSG(y[i] == x[i] * 2 + 10 * (i % 3 + 1), "y[%d] = %g", i, y[i]);
	ipu_close(d);
}

/*
 * Registered memory on the in-process device: the table's rules (no
 * overlap, bounded slots, ids reusable after unregistering) and requests
 * whose buffers lie inside, across and outside registered ranges giving
 * the same results.
 */
TEST(registered_memory)
{
	struct ipu_device *d = open_loaded();
	static float pool[4][24];
	uint32_t id[IPU_MAX_REGISTERED], a, b, extra;
	char err[256];
	int i, k, r;

	REQUIRE(d);
	REQUIRE(load_weights(d) == 0);
	CHECK_EQ_INT(ipu_register_memory(d, NULL, 16, &a), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_register_memory(d, pool, 0, &a), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_register_memory(d, pool, (size_t)2 << 30, &a), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_register_memory(d, pool[0], sizeof(pool[0]), &a), 0);
	/* overlapping a registered range, from either side or inside it */
	CHECK_EQ_INT(ipu_register_memory(d, (char *)pool[0] + 4, 8, &b), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_register_memory(d, pool, sizeof(pool), &b), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_register_memory(d, (char *)pool[0] + sizeof(pool[0]) - 1, 8, &b),
		     IPU_E_INVAL);
	CHECK_EQ_INT(ipu_register_memory(d, pool[1], sizeof(pool[1]), &b), 0);
	CHECK(a != b);
	CHECK_EQ_INT(ipu_unregister_memory(d, IPU_MAX_REGISTERED), IPU_E_INVAL);
	/* requests: X and Y inside one range, across two, and outside */
	for (r = 0; r < 3; r++) {
		float *x = r == 0 ? pool[0] : r == 1 ? pool[0] + 18 : pool[2];
		float *y = r == 0 ? pool[0] + 12 : r == 1 ? pool[1] + 6 : pool[3];
		uint64_t seq;
		struct ipu_completion c[2];
		int n = 0;

		for (i = 0; i < 12; i++)
			x[i] = (float)(i * (r + 1)) - 3;
		REQUIRE(ipu_stream_submit(d, S_X, x, 48, 1) == 0);
		REQUIRE(ipu_stream_submit(d, S_Y, y, 48, 2) == 0);
		REQUIRE(ipu_run(d, prog_main, &seq) == 0);
		CHECK_EQ_INT(ipu_wait(d, seq, -1, err, sizeof(err)), 0);
		while (n < 2 && (k = ipu_stream_poll(d, c, 2, 1000000000)) > 0)
			n += k;
		CHECK_EQ_INT(n, 2);
		for (i = 0; i < 12; i++)
			CHECK_MSG(y[i] == x[i] * 2 + 10 * (i % 3 + 1), "request %d: y[%d] = %g", r, i,
				  y[i]);
	}
	CHECK_EQ_INT(ipu_unregister_memory(d, a), 0);
	CHECK_EQ_INT(ipu_unregister_memory(d, a), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_unregister_memory(d, b), 0);
	/* every slot, then one more */
	for (k = 0; k < IPU_MAX_REGISTERED; k++)
		CHECK_EQ_INT(ipu_register_memory(d, (char *)pool + k, 1, &id[k]), 0);
	CHECK_EQ_INT(ipu_register_memory(d, (char *)pool + IPU_MAX_REGISTERED, 1, &extra),
		     IPU_E_BUSY);
	CHECK_EQ_INT(ipu_unregister_memory(d, id[5]), 0);
	CHECK_EQ_INT(ipu_register_memory(d, (char *)pool + IPU_MAX_REGISTERED, 1, &extra), 0);
	CHECK_EQ_INT(extra, id[5]);
	ipu_close(d);	/* with ranges still registered */
}

/*
 * Device memory on the in-process device: ipu_alloc_memory maps memory
 * registered like ipu_register_memory's (requests inside it work, ids
 * are slots of the same table), ipu_free_memory and ipu_unregister_memory
 * give it back; dma-bufs need a kernel device.
 */
TEST(alloc_memory_and_dmabufs)
{
	struct ipu_device *d = open_loaded();
	struct ipu_completion c[2];
	uint32_t id, id2, user;
	static float own[24];
	void *mem = NULL, *mem2 = NULL;
	float *x, *y;
	uint64_t seq;
	char err[256];
	int fd = -1, i, n = 0, k;

	REQUIRE(d);
	REQUIRE(load_weights(d) == 0);
	CHECK_EQ_INT(ipu_alloc_memory(d, 0, &mem, &id), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_alloc_memory(d, 96, NULL, &id), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_alloc_memory(d, (size_t)2 << 30, &mem, &id), IPU_E_INVAL);
	REQUIRE(ipu_alloc_memory(d, 96, &mem, &id) == 0);
	x = mem;
	y = x + 12;
	for (i = 0; i < 12; i++)
		x[i] = (float)i - 5;
	REQUIRE(ipu_stream_submit(d, S_X, x, 48, 1) == 0);
	REQUIRE(ipu_stream_submit(d, S_Y, y, 48, 2) == 0);
	REQUIRE(ipu_run(d, prog_main, &seq) == 0);
	CHECK_EQ_INT(ipu_wait(d, seq, -1, err, sizeof(err)), 0);
	while (n < 2 && (k = ipu_stream_poll(d, c, 2, 1000000000)) > 0)
		n += k;
	CHECK_EQ_INT(n, 2);
	for (i = 0; i < 12; i++)
		CHECK_MSG(y[i] == x[i] * 2 + 10 * (i % 3 + 1), "y[%d] = %g", i, y[i]);
	/* no dma-bufs without a kernel device, nor of caller-registered memory */
	CHECK_EQ_INT(ipu_buffer_export_dmabuf(d, id, &fd), IPU_E_INVAL);
	CHECK_EQ_INT(fd, -1);
	CHECK_EQ_INT(ipu_import_dmabuf(d, 0, &mem2, NULL, &id2), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_import_dmabuf(d, -1, &mem2, NULL, &id2), IPU_E_INVAL);
	REQUIRE(ipu_register_memory(d, own, sizeof(own), &user) == 0);
	CHECK_EQ_INT(ipu_buffer_export_dmabuf(d, user, &fd), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_free_memory(d, user), IPU_E_INVAL);	/* the caller's, not ours */
	CHECK_EQ_INT(ipu_unregister_memory(d, user), 0);
	CHECK_EQ_INT(ipu_free_memory(d, id), 0);
	CHECK_EQ_INT(ipu_free_memory(d, id), IPU_E_INVAL);
	/* unregistering frees it too; one left allocated is freed at close */
	REQUIRE(ipu_alloc_memory(d, 4096, &mem, &id) == 0);
	CHECK_EQ_INT(ipu_unregister_memory(d, id), 0);
	REQUIRE(ipu_alloc_memory(d, 4096, &mem2, &id2) == 0);
	memset(mem2, 0x5a, 4096);
	ipu_close(d);
}

TEST(deadlines_and_abort)
{
	struct ipu_device *d = open_loaded();
	struct ipu_completion c;
	float x[12] = { 0 }, y[12];
	uint64_t seq;
	char err[256];

	REQUIRE(d);
	REQUIRE(load_weights(d) == 0);
	/* no input queued: the run stalls on its stream copy */
	REQUIRE(ipu_run(d, prog_main, &seq) == 0);
	CHECK_EQ_INT(ipu_wait(d, seq, 0, err, sizeof(err)), IPU_E_TIMEOUT);
	CHECK_EQ_INT(ipu_wait(d, seq, 20000000, err, sizeof(err)), IPU_E_TIMEOUT);
	CHECK_EQ_INT(ipu_stream_submit(d, S_Y, y, sizeof(y), 5), 0);
	CHECK_EQ_INT(ipu_abort(d), 0);
	CHECK_EQ_INT(ipu_wait(d, seq, -1, err, sizeof(err)), IPU_E_CANCELLED);
	CHECK(ipu_stream_poll(d, &c, 1, 1000000000) == 1 && c.tag == 5 && c.status == IPU_E_CANCELLED);
	/* the executable stays loaded: the next request works */
	CHECK_EQ_INT(ipu_stream_submit(d, S_X, x, sizeof(x), 1), 0);
	CHECK_EQ_INT(ipu_stream_submit(d, S_Y, y, sizeof(y), 2), 0);
	CHECK_EQ_INT(ipu_run_sync(d, prog_main, err, sizeof(err)), 0);
	CHECK(y[0] == 10 && y[1] == 20 && y[2] == 30);
	ipu_close(d);
}

struct handled {
	uint64_t seqs[4];
	int runs, buffers;
};

static void on_run(void *ctx, uint64_t seq, int status, const char *msg)
{
	struct handled *h = ctx;

	(void)msg;
	if (h->runs < 4 && !status)
		h->seqs[h->runs] = seq;
	h->runs++;
}

static void on_buffer(void *ctx, const struct ipu_completion *c)
{
	struct handled *h = ctx;

	h->buffers += c->status == 0;
}

TEST(handlers_counters_and_reset)
{
	struct ipu_device *d = open_loaded();
	struct ipu_counters before, after;
	struct ipu_device_info info;
	struct handled h;
	float x[12] = { 1 }, y[12];
	uint64_t seq[2];
	char err[256];
	int k;

	REQUIRE(d);
	REQUIRE(load_weights(d) == 0);
	memset(&h, 0, sizeof(h));
	CHECK_EQ_INT(ipu_counters(d, &before), 0);
	CHECK_EQ_INT(ipu_set_run_handler(d, on_run, &h), 0);
	CHECK_EQ_INT(ipu_set_completion_handler(d, on_buffer, &h), 0);
	for (k = 0; k < 2; k++) {
		CHECK_EQ_INT(ipu_stream_submit(d, S_X, x, sizeof(x), 1), 0);
		CHECK_EQ_INT(ipu_stream_submit(d, S_Y, y, sizeof(y), 2), 0);
		CHECK_EQ_INT(ipu_run(d, prog_main, &seq[k]), 0);
	}
	CHECK_EQ_INT(ipu_wait(d, seq[1], -1, err, sizeof(err)), 0);
	CHECK_EQ_INT(ipu_wait(d, seq[0], -1, err, sizeof(err)), 0);
	CHECK_EQ_INT(ipu_counters(d, &after), 0);
	CHECK_EQ_INT(after.programs_run - before.programs_run, 2);
	CHECK(after.cycles > before.cycles);
	CHECK_EQ_INT(after.stream_bytes_in - before.stream_bytes_in, 96);
	CHECK_EQ_INT(after.stream_bytes_out - before.stream_bytes_out, 96);
	ipu_close(d);	/* waits for the handlers' last calls */
	CHECK_EQ_INT(h.runs, 2);
	CHECK(h.seqs[0] == seq[0] && h.seqs[1] == seq[1]);	/* in order */
	CHECK_EQ_INT(h.buffers, 4);

	d = open_loaded();
	REQUIRE(d);
	REQUIRE(load_weights(d) == 0);
	CHECK_EQ_INT(ipu_reset(d), 0);
	CHECK_EQ_INT(ipu_info(d, &info), 0);
	CHECK_EQ_INT(info.state, IPU_STATE_IDLE);
	CHECK_EQ_INT(ipu_stream_count(d), IPU_E_NOT_LOADED);
	CHECK_EQ_INT(ipu_counters(d, &after), 0);
	CHECK_EQ_INT(after.programs_run, 0);
	CHECK(strlen(ipu_strerror(IPU_E_TIMEOUT)) > 0);
	ipu_close(d);
}

/* The in-process device is on no ipu-link: a group of two and a linked
 * stream are refused, a group of fewer than two or of mixed backends too. */
TEST(no_links_in_process)
{
	struct ipu_device *d[2] = { open_loaded(), open_loaded() };

	REQUIRE(d[0] && d[1]);
	CHECK_EQ_INT(ipu_attach_group(d, 2), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_attach_group(d, 1), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_attach_group(NULL, 2), IPU_E_INVAL);
	CHECK_EQ_INT(ipu_link_stream(d[0], S_Y, 1, S_X), IPU_E_INVAL);
	ipu_close(d[0]);
	ipu_close(d[1]);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/ipu-libipu-XXXXXX", file[64];
	struct ipuef_file *f;
	char err[256];
	const void *img;

	TH_INIT(argc, argv);
	if (!mkdtemp(path))
		return 1;
	snprintf(file, sizeof(file), "%s/affine.ipuef", path);
	if (rt_make_affine(file) || ipuef_open(file, &f, err, sizeof(err))) {
		fprintf(stderr, "cannot make the test model\n");
		return 1;
	}
	img = ipuef_executable(f, &image_len);
	image = malloc(image_len);
	if (!image)
		return 1;
	memcpy(image, img, image_len);
	prog_load = ipuef_find_program(f, "load")->index;
	prog_main = ipuef_find_program(f, "main")->index;
	ipuef_close(f);
	unlink(file);
	rmdir(path);
	RUN(open_refuses_bad_specs);
	RUN(info_describes_the_device);
	RUN(load_refuses_what_the_verifier_refuses);
	RUN(streams_and_a_request);
	RUN(registered_memory);
	RUN(alloc_memory_and_dmabufs);
	RUN(deadlines_and_abort);
	RUN(handlers_counters_and_reset);
	RUN(no_links_in_process);
	free(image);
	return TH_DONE();
}
