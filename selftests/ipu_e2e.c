// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_e2e.c - end to end inside the VM: executables made with the graph
 * builder run through libipu on the in-process model device and on
 * /dev/accel/accel0 (the kernel backend: ioctls + io_uring), outputs compared bit
 * for bit, stats/stream_cmds showing the buffers went through uring_cmd.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipu/ipu.h"
#include "load_image.h"
#include "ipu_util.h"
#include "kselftest_harness.h"
#include "e2e_common.h"
#include "mlp_model.h"
#include <math.h>

#define MODEL_SPEC E2E_MODEL_SPEC

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		p = malloc(n);
		if (p && fread(p, 1, n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = n;
	}
	fclose(f);
	return p;
}

/*
 * The reference comes from the host (e2e_ref): the in-process model
 * device on the CPU that also runs QEMU's device engine.  (Inside the VM
 * the model device runs on TCG's CPU without AVX2/FMA and picks other
 * codelet paths, so it is compared too but only reported.)
 */
TEST(mlp_kernel_matches_model_bit_for_bit)
{
	struct e2e_mlp e;
	char err[256];
	size_t len, rlen, xlen;
	void *img, *ref, *xin;
	float *yk, *yg;
	uint64_t cmds0, bytes0;
	int n_k = 0, n_g = 0;
	size_t out_bytes;

	ASSERT_EQ(0, e2e_mlp_make(&e, err, sizeof(err))) TH_LOG("%s", err);
	img = slurp("/ipu/data/mlp.ipux", &len);
	ref = slurp("/ipu/data/mlp.ref", &rlen);
	xin = slurp("/ipu/data/mlp.in", &xlen);
	ASSERT_TRUE(img && ref && xin) TH_LOG("missing /ipu/data/mlp.* (make vm-image runs e2e_ref)");
	out_bytes = (size_t)E2E_REQS * e.out_f * 4;
	ASSERT_EQ(out_bytes, rlen);
	/* the builder is deterministic: the host's image is the one built here */
	EXPECT_EQ(e.len, len);
	EXPECT_EQ(0, memcmp(e.img, img, len));
	EXPECT_EQ(0, memcmp(e.x, xin, xlen));
	yk = calloc(out_bytes, 1);
	yg = calloc(out_bytes, 1);
	ASSERT_TRUE(yk && yg);
	cmds0 = ipu_t_sysfs_u64(0, "stats/stream_cmds");
	bytes0 = ipu_t_sysfs_u64(0, "stats/stream_bytes");
	ASSERT_EQ(0, e2e_run_on("/dev/accel/accel0", img, len, xin, yk, e.in_f, e.out_f, E2E_REQS, &n_k));
	EXPECT_EQ(2 * E2E_REQS, n_k);
	EXPECT_EQ(0, memcmp(ref, yk, out_bytes));
	EXPECT_EQ(cmds0 + 2 * E2E_REQS, ipu_t_sysfs_u64(0, "stats/stream_cmds"));
	EXPECT_EQ(bytes0 + (uint64_t)E2E_REQS * (e.in_f + e.out_f) * 4,
		  ipu_t_sysfs_u64(0, "stats/stream_bytes"));
	TH_LOG("%d requests through /dev/accel/accel0: outputs %s the host's in-process device; stats/stream_cmds %llu -> %llu",
	       E2E_REQS, memcmp(ref, yk, out_bytes) ? "DIFFER from" : "bit-identical to",
	       (unsigned long long)cmds0,
	       (unsigned long long)ipu_t_sysfs_u64(0, "stats/stream_cmds"));
	ASSERT_EQ(0, e2e_run_on(MODEL_SPEC, img, len, xin, yg, e.in_f, e.out_f, E2E_REQS, &n_g));
	{
		const float *a = ref, *b = yg;
		double md = 0;
		size_t i;

		for (i = 0; i < out_bytes / 4; i++)
			if (fabs((double)a[i] - b[i]) > md)
				md = fabs((double)a[i] - b[i]);
		TH_LOG("in-guest model device (TCG CPU, generic codelets): max |diff| %.3g", md);
		EXPECT_LT(md, 1e-4);
	}
	free(yk);
	free(yg);
	free(img);
	free(ref);
	free(xin);
	e2e_mlp_free(&e);
}

TEST(affine_kernel_matches_model)
{
	enum { REQS = 40, NF = 2048 };
	size_t len;
	void *img = ipu_t_affine_image(NF, 1, 0, &len);
	float *x = malloc(REQS * NF * 4), *ym = calloc(REQS * NF, 4), *yk = calloc(REQS * NF, 4);
	uint32_t i;
	int n_m = 0, n_k = 0;

	ASSERT_NE(NULL, img);
	ASSERT_TRUE(x && ym && yk);
	for (i = 0; i < REQS * NF; i++)
		x[i] = (float)(i % 977) * 0.37f - 50.0f;
	ASSERT_EQ(0, e2e_run_on(MODEL_SPEC, img, len, x, ym, NF, NF, REQS, &n_m));
	ASSERT_EQ(0, e2e_run_on("/dev/accel/accel1", img, len, x, yk, NF, NF, REQS, &n_k));
	EXPECT_EQ(0, memcmp(ym, yk, REQS * NF * 4));
	free(x);
	free(ym);
	free(yk);
	free(img);
}

TEST(libipu_kernel_backend_api)
{
	size_t len;
	void *img = ipu_t_affine_image(256, 1, 0, &len);
	struct ipu_device *a, *b, *none = NULL;
	struct ipu_device_info info;
	struct ipu_completion c[8];
	float x[256], y[256];
	char err[256];
	uint64_t seq;
	uint32_t dir, bytes;
	int n, got;

	ASSERT_EQ(0, ipu_open("/dev/accel/accel0", &a, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, ipu_open("/dev/accel/accel0", &b, err, sizeof(err)));
	EXPECT_NE(0, ipu_open("/dev/accel/accel9", &none, err, sizeof(err)));
	EXPECT_EQ(NULL, none);
	ASSERT_EQ(0, ipu_info(a, &info));
	EXPECT_EQ(IPU_BACKEND_KERNEL, info.backend);
	EXPECT_EQ(16u, info.num_tiles);
	EXPECT_STREQ("accel0", info.name);
	ASSERT_EQ(0, ipu_attach(a));
	EXPECT_EQ(IPU_E_BUSY, ipu_attach(b));
	EXPECT_EQ(IPU_E_NOT_LOADED, ipu_stream_count(a));
	ASSERT_EQ(0, test_load_image(a, img, len, err, sizeof(err)));
	EXPECT_EQ(2, ipu_stream_count(a));
	ASSERT_EQ(0, ipu_stream_info(a, 1, &dir, &bytes));
	EXPECT_EQ(1u, dir);
	EXPECT_EQ(1024u, bytes);
	EXPECT_EQ(IPU_E_INVAL, ipu_stream_submit(a, 1, y, 12, 1));
	EXPECT_EQ(IPU_E_INVAL, ipu_stream_submit(a, 2, y, 1024, 1));
	/* queued buffers are cancelled by an abort, delivered before it returns */
	ASSERT_EQ(0, ipu_stream_submit(a, 1, y, sizeof(y), 5));
	ASSERT_EQ(0, ipu_stream_submit(a, 1, y, sizeof(y), 6));
	ASSERT_EQ(0, ipu_abort(a));
	n = ipu_stream_poll(a, c, 8, 0);
	ASSERT_EQ(2, n);
	EXPECT_EQ(IPU_E_CANCELLED, c[0].status);
	EXPECT_EQ(IPU_E_CANCELLED, c[1].status);
	EXPECT_EQ(5u, c[0].tag);	/* in the order they were queued */
	EXPECT_EQ(6u, c[1].tag);
	/* a run that waits for input times out, then completes */
	ASSERT_EQ(0, ipu_run(a, 0, &seq));
	EXPECT_EQ(IPU_E_TIMEOUT, ipu_wait(a, seq, 20000000, err, sizeof(err)));
	for (n = 0; n < 256; n++)
		x[n] = (float)n;
	ASSERT_EQ(0, ipu_stream_submit(a, 0, x, sizeof(x), 7));
	ASSERT_EQ(0, ipu_stream_submit(a, 1, y, sizeof(y), 8));
	EXPECT_EQ(0, ipu_wait(a, seq, 10000000000ll, err, sizeof(err)));
	for (got = 0; got < 2;) {
		n = ipu_stream_poll(a, c + got, 8 - got, 5000000000ll);
		ASSERT_LT(0, n);
		got += n;
	}
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(1024u, c[1].bytes);
	for (n = 0; n < 256; n++)
		if (y[n] != x[n] * 2 + 1)
			break;
	EXPECT_EQ(256, n);
	EXPECT_EQ(IPU_E_PROGRAM, ipu_run(a, 3, &seq));
	{
		struct ipu_counters k;

		ASSERT_EQ(0, ipu_counters(a, &k));
		EXPECT_LE(1u, k.programs_run);
		EXPECT_LE(1024u, k.stream_bytes_in);
	}
	ipu_close(b);
	ASSERT_EQ(0, ipu_reset(a));
	EXPECT_EQ(IPU_E_NOT_LOADED, ipu_stream_count(a));
	ipu_close(a);
	free(img);
}

/* More buffers than the driver's ring holds: libipu queues the rest and
 * feeds them from its completion thread, in order. */
TEST(libipu_more_buffers_than_the_ring)
{
	enum { R = 600, NF = 64 };
	size_t len;
	void *img = ipu_t_affine_image(NF, R, 0, &len);
	float *x = malloc(R * NF * 4), *y = calloc(R * NF, 4);
	struct ipu_device *d;
	struct ipu_completion c[128];
	char err[256];
	uint64_t seq;
	int i, got = 0, bad = 0, order = 0;
	int64_t last[2] = { -1, -1 };

	ASSERT_NE(NULL, img);
	ASSERT_TRUE(x && y);
	for (i = 0; i < R * NF; i++)
		x[i] = (float)i;
	ASSERT_EQ(0, ipu_open("/dev/accel/accel0", &d, err, sizeof(err)));
	ASSERT_EQ(0, ipu_attach(d));
	ASSERT_EQ(0, test_load_image(d, img, len, err, sizeof(err)));
	for (i = 0; i < R; i++) {
		ASSERT_EQ(0, ipu_stream_submit(d, 0, x + i * NF, NF * 4, i));
		ASSERT_EQ(0, ipu_stream_submit(d, 1, y + i * NF, NF * 4, R + i));
	}
	ASSERT_EQ(0, ipu_run(d, 0, &seq));
	EXPECT_EQ(0, ipu_wait(d, seq, 60000000000ll, err, sizeof(err))) TH_LOG("%s", err);
	while (got < 2 * R) {
		int n = ipu_stream_poll(d, c, 128, 60000000000ll), j;

		ASSERT_LT(0, n);
		for (j = 0; j < n; j++) {
			if (c[j].status || c[j].bytes != NF * 4)
				bad++;
			/* each stream's buffers come back in the order queued */
			if (c[j].stream < 2) {
				if ((int64_t)c[j].tag <= last[c[j].stream])
					order++;
				last[c[j].stream] = (int64_t)c[j].tag;
			}
		}
		got += n;
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, order);
	for (i = 0; i < R * NF; i++)
		if (y[i] != x[i] * 2 + 1)
			break;
	EXPECT_EQ(R * NF, i);
	ipu_close(d);
	free(x);
	free(y);
	free(img);
}

/* Queue R requests (x_i -> y_i), check the driver's pinned pages while they
 * wait for the run, run, and check every output and completion. */
static void registered_batch(struct __test_metadata *_metadata, struct ipu_device *d,
			     float *x, float *y, int R, int NF, int unregister_id,
			     int expect_pinned)
{
	struct ipu_completion c[64];
	char err[256];
	uint64_t seq;
	int i, got = 0, bad = 0;

	for (i = 0; i < R * NF; i++) {
		x[i] = (float)(i % 977) - 300;
		y[i] = -1;
	}
	for (i = 0; i < R; i++) {
		ASSERT_EQ(0, ipu_stream_submit(d, 0, x + i * NF, NF * 4, i));
		ASSERT_EQ(0, ipu_stream_submit(d, 1, y + i * NF, NF * 4, R + i));
	}
	/* the driver holds them now, pinned by it or by the registration */
	if (expect_pinned) {
		EXPECT_LE((uint64_t)2 * R, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	} else {
		EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	}
	if (unregister_id >= 0)
		ASSERT_EQ(0, ipu_unregister_memory(d, (uint32_t)unregister_id));
	ASSERT_EQ(0, ipu_run(d, 0, &seq));
	EXPECT_EQ(0, ipu_wait(d, seq, 60000000000ll, err, sizeof(err))) TH_LOG("%s", err);
	while (got < 2 * R) {
		int n = ipu_stream_poll(d, c, 64, 20000000000ll), j;

		ASSERT_LT(0, n);
		for (j = 0; j < n; j++)
			bad += c[j].status != 0 || c[j].bytes != (uint32_t)NF * 4;
		got += n;
	}
	EXPECT_EQ(0, bad);
	for (i = 0; i < R * NF; i++)
		if (y[i] != x[i] * 2 + 1)
			break;
	EXPECT_EQ(R * NF, i);
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
}

/*
 * ipu_register_memory on /dev/accel/accel0: buffers inside a registered range go
 * to the driver as io_uring fixed buffers (the driver pins nothing for
 * them), unregistering while they wait in the driver leaves them working,
 * buffers outside any range are pinned per request as before, and memory
 * the process frees while registered is unpinned once unregistered: the
 * system's pinned-page count is back to where it started.
 */
TEST(libipu_registered_memory)
{
	enum { R = 32, NF = 1024 };	/* 4 KiB buffers */
	size_t len, bytes = (size_t)2 * R * NF * 4;
	void *img = ipu_t_affine_image(NF, R, 0, &len);
	struct ipu_device *d;
	char err[256];
	uint32_t id, id2;
	int64_t pins0 = foll_pins_settled();
	float *mem, *spare;

	ASSERT_NE(NULL, img);
	ASSERT_LE(0, pins0);
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, ipu_open("/dev/accel/accel0", &d, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, ipu_attach(d));
	ASSERT_EQ(0, test_load_image(d, img, len, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, ipu_register_memory(d, mem, bytes, &id));
	/*
	 * io_uring pinned the range once.  (Not an exact count: the system's
	 * counter also moves with releases other work left to a worker.)
	 */
	EXPECT_LT(pins0, foll_pins_held());
	EXPECT_EQ(IPU_E_INVAL, ipu_register_memory(d, mem + 8, 64, &id2));
	/* registered: no per-request pinning */
	registered_batch(_metadata, d, mem, mem + R * NF, R, NF, -1, 0);
	registered_batch(_metadata, d, mem, mem + R * NF, R, NF, -1, 0);
	/* unregistered while the driver holds them: they still complete */
	registered_batch(_metadata, d, mem, mem + R * NF, R, NF, (int)id, 0);
	/* not registered any more: pinned per request */
	registered_batch(_metadata, d, mem, mem + R * NF, R, NF, -1, 1);
	/* memory freed by the process while registered */
	spare = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, spare);
	ASSERT_EQ(0, ipu_register_memory(d, spare, 1 << 20, &id2));
	ASSERT_EQ(0, munmap(spare, 1 << 20));
	EXPECT_LT(pins0, foll_pins_held());	/* still pinned: io_uring holds them */
	ASSERT_EQ(0, ipu_unregister_memory(d, id2));
	EXPECT_EQ(IPU_E_INVAL, ipu_unregister_memory(d, id2));
	/* the registration of a closed handle goes with it */
	ASSERT_EQ(0, ipu_register_memory(d, mem, bytes, &id));
	ipu_close(d);
	munmap(mem, bytes);
	free(img);
	/*
	 * io_uring releases retired buffers from a worker: give it a moment.
	 * The count may end below where it started (pins an earlier test left
	 * to such a worker go too), never above.
	 */
	for (int i = 0; i < 200 && foll_pins_held() > pins0; i++)
		usleep(10000);
	EXPECT_GE(pins0, foll_pins_held());
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
}

/*
 * The child of libipu_device_memory_shared_as_dmabuf: imports the dma-buf
 * into its own device handle and runs R requests with every buffer inside
 * it.  Returns the exit status, 0 when all went as it should.
 */
static int dmabuf_importer(int fd, int R, int NF, const void *img, size_t len)
{
	struct ipu_completion c[64];
	struct ipu_device *d;
	char err[256];
	size_t mlen = 0;
	uint32_t id;
	uint64_t seq;
	void *mem;
	float *x, *y;
	int i, got = 0;

	if (ipu_open("/dev/accel/accel0", &d, err, sizeof(err)) ||
	    ipu_import_dmabuf(d, fd, &mem, &mlen, &id) || mlen < (size_t)2 * R * NF * 4)
		return 10;
	x = mem;
	y = x + R * NF;
	if (ipu_attach(d) || test_load_image(d, img, len, err, sizeof(err)))
		return 11;
	for (i = 0; i < R; i++)
		if (ipu_stream_submit(d, 0, x + i * NF, NF * 4, i) ||
		    ipu_stream_submit(d, 1, y + i * NF, NF * 4, R + i))
			return 12;
	/* in the driver now: nothing pinned for them, the object's pages are */
	if (ipu_t_sysfs_u64(0, "stats/pinned_pages") != 0 ||
	    ipu_t_sysfs_u64(0, "stats/gem_pages") < (uint64_t)2 * R * NF * 4 / 4096)
		return 13;
	if (ipu_run(d, 0, &seq) || ipu_wait(d, seq, 60000000000ll, err, sizeof(err)))
		return 14;
	while (got < 2 * R) {
		int n = ipu_stream_poll(d, c, 64, 20000000000ll);

		if (n <= 0)
			return 15;
		for (int j = 0; j < n; j++)
			if (c[j].status || c[j].bytes != (uint32_t)NF * 4)
				return 16;
		got += n;
	}
	ipu_close(d);
	return 0;
}

/*
 * ipu_alloc_memory on /dev/accel/accel0 is a buffer object mapped into the
 * process; ipu_buffer_export_dmabuf hands it to another process, whose
 * ipu_import_dmabuf maps the same pages: that process runs requests with
 * inputs the first one wrote and outputs the first one reads, nothing
 * pinned per request and nothing copied.
 */
TEST(libipu_device_memory_shared_as_dmabuf)
{
	enum { R = 8, NF = 1024 };
	size_t len, bytes = (size_t)2 * R * NF * 4;
	void *img = ipu_t_affine_image(NF, R, 0, &len);
	uint64_t objs0 = ipu_t_sysfs_u64(0, "stats/gem_objects");
	struct ipu_device *d;
	char err[256];
	uint32_t id;
	void *mem = NULL;
	float *x, *y;
	int fd = -1, st, i;
	pid_t pid;

	ASSERT_NE(NULL, img);
	ASSERT_EQ(0, ipu_open("/dev/accel/accel0", &d, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, ipu_alloc_memory(d, bytes, &mem, &id));
	EXPECT_EQ(objs0 + 1, ipu_t_sysfs_u64(0, "stats/gem_objects"));
	x = mem;
	y = x + R * NF;
	for (i = 0; i < R * NF; i++) {
		x[i] = (float)(i % 613) - 200;
		y[i] = -1;
	}
	ASSERT_EQ(0, ipu_buffer_export_dmabuf(d, id, &fd));
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(dmabuf_importer(fd, R, NF, img, len));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("importer failed at step %d", WEXITSTATUS(st));
	for (i = 0; i < R * NF; i++)
		if (y[i] != x[i] * 2 + 1)
			break;
	EXPECT_EQ(R * NF, i);
	close(fd);
	EXPECT_EQ(0, ipu_free_memory(d, id));
	ipu_close(d);
	for (i = 0; i < 100 && ipu_t_sysfs_u64(0, "stats/gem_objects") != objs0; i++)
		usleep(20000);
	EXPECT_EQ(objs0, ipu_t_sysfs_u64(0, "stats/gem_objects"));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/gem_pages"));
	EXPECT_EQ(0u, ipu_t_sysfs_u64(0, "stats/pinned_pages"));
	free(img);
}

TEST_HARNESS_MAIN
