// SPDX-License-Identifier: MIT
/*
 * test_multi_runner.c - the ModelRunner on a group .ipuef: with no device
 * named it opens a group of in-process devices, one per IPU of the model,
 * and gives the same bits as the model compiled for one IPU; requests in
 * flight at once pipeline through the stages (every link carried each
 * request once, the modelled clock overlapped below one after the other);
 * a device that is not in-process is refused naming the IPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/group.h"
#include "ipu/ipuef.h"
#include "ipu/passes.h"
#include "ipu/runtime.h"
#include "mlp_model.h"

#define TILES 16
#define TILE_MEM (64 * 1024)
#define INFLIGHT 8

/* The model over n IPUs of TILES x TILE_MEM (n 1: one IPU of 64 tiles). */
static int model_file(int layers, int n, void **buf, size_t *len, struct ir_error *e)
{
	struct ir_graph *g = mlp_prepared(layers);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct ipu_shard sh;
	int r = -1;

	if (!g)
		return ir_err(e, "no graph");
	if (n == 1) {
		t.tiles = 64;
		r = ipu_lower_write_mem(&g, 1, &t, buf, len, NULL, e);
	} else if (!ipu_partition_auto(g, n, &t, &p, e)) {
		if (!ipu_shard_lower(g, &p, &t, &sh, e))
			r = ipu_shard_write_mem(&sh, &t, 0, 1, buf, len, e);
		ipu_shard_free(&sh);
	}
	ir_graph_free(g);
	return r;
}

static const char *output_name(const struct ipuef_file *f)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);

	for (uint32_t i = 0; i < m->num_anchors; i++)
		if (m->anchors[i].direction == IPUEF_OUTPUT)
			return m->anchors[i].name;
	return "";
}

static struct ipurt_tensor tensor(const char *name, float *data)
{
	struct ipurt_tensor t = { name, IPURT_DT_F32, 2, { MLP_ROWS, MLP_WIDTH }, data };

	return t;
}

static int run_once(struct ipurt_runner *r, const float *x, float *y, char *err, size_t errlen)
{
	const struct ipuef_file *f = ipurt_runner_file(r);
	struct ipurt_tensor in = tensor("x", (float *)x), out = tensor(output_name(f), y);

	return ipurt_runner_execute(r, &in, 1, &out, 1, err, errlen);
}

TEST(runner_on_a_group_as_on_one_ipu)
{
	struct ir_error e = { "" };
	void *b2 = NULL, *b1 = NULL;
	size_t l2 = 0, l1 = 0;
	struct ipuef_file *f2 = NULL, *f1 = NULL;
	struct ipurt_runner *r2 = NULL, *r1 = NULL;
	char err[512];
	static float x[INFLIGHT][MLP_ROWS * MLP_WIDTH], y1[INFLIGHT][MLP_ROWS * MLP_WIDTH],
		y2[INFLIGHT][MLP_ROWS * MLP_WIDTH];
	struct ipurt_future *fut[INFLIGHT];
	struct ipu_group *grp;
	uint64_t pipe = 0, serial = 0;
	struct ipu_link_stats st;

	CHECK_MSG(model_file(8, 4, &b2, &l2, &e) == 0, "%s", e.msg);
	CHECK_MSG(model_file(8, 1, &b1, &l1, &e) == 0, "%s", e.msg);
	REQUIRE(ipuef_open_mem(b2, l2, &f2, err, sizeof(err)) == 0);
	REQUIRE(ipuef_open_mem(b1, l1, &f1, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ipuef_num_ipus(f2), 4);
	CHECK_MSG(ipurt_runner_create_from(f2, NULL, &r2, err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(ipurt_runner_create_from(f1, NULL, &r1, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(r2 && r1);
	CHECK_EQ_INT(ipurt_runner_num_devices(r2), 4);
	grp = ipurt_runner_group(r2);
	REQUIRE(grp);
	CHECK(ipurt_runner_group(r1) == NULL);
	for (int i = 0; i < INFLIGHT; i++) {
		mlp_fill(x[i], 100u + (uint32_t)i);
		CHECK_MSG(run_once(r1, x[i], y1[i], err, sizeof(err)) == 0, "%s", err);
	}
	/* one request, then INFLIGHT at once */
	CHECK_MSG(run_once(r2, x[0], y2[0], err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(!memcmp(y1[0], y2[0], sizeof(y1[0])), "request 0 differs from one IPU's");
	memset(y2, 0, sizeof(y2));
	for (int i = 0; i < INFLIGHT; i++) {
		struct ipurt_tensor in = tensor("x", x[i]), out = tensor(output_name(f2), y2[i]);

		CHECK_MSG(ipurt_runner_execute_async(r2, &in, 1, &out, 1, &fut[i], err, sizeof(err)) == 0,
			  "%s", err);
	}
	for (int i = 0; i < INFLIGHT; i++) {
		CHECK_MSG(ipurt_future_wait(fut[i], -1, err, sizeof(err)) == 0, "%s", err);
		ipurt_future_free(fut[i]);
		CHECK_MSG(!memcmp(y1[i], y2[i], sizeof(y1[i])), "request %d differs from one IPU's", i);
	}
	CHECK_EQ_INT(ipu_group_num_links(grp), 3);
	for (uint32_t l = 0; l < 3; l++) {
		REQUIRE(ipu_group_link_stats(grp, l, &st) == 0);
		CHECK_EQ_INT(st.transfers, 1 + INFLIGHT);
		CHECK_EQ_INT(st.bytes, (1 + INFLIGHT) * MLP_ROWS * MLP_WIDTH * 4);
	}
	CHECK_EQ_INT(ipu_group_modelled(grp, &pipe, &serial, NULL), 1 + INFLIGHT);
	printf("# %d requests on 4 IPUs through the runner: %llu modelled cycles overlapped, %llu one after the other (%.2fx)\n",
	       1 + INFLIGHT, (unsigned long long)pipe, (unsigned long long)serial,
	       (double)serial / (double)(pipe ? pipe : 1));
	CHECK(pipe > 0 && pipe < serial);
	{
		uint64_t ok = 0;

		CHECK_EQ_INT(ipurt_runner_device_status(r2, 3, &ok, err, sizeof(err)), 1);
		CHECK_EQ_INT(ok, 1 + INFLIGHT);
	}
	ipurt_runner_destroy(r2);
	ipurt_runner_destroy(r1);
	ipuef_close(f2);
	ipuef_close(f1);
	free(b2);
	free(b1);
}

TEST(a_group_needs_devices_of_one_kind)
{
	struct ir_error e = { "" };
	void *b = NULL;
	size_t l = 0;
	struct ipuef_file *f = NULL;
	struct ipurt_runner *r = NULL;
	struct ipurt_config c;
	char err[512];

	CHECK_MSG(model_file(4, 2, &b, &l, &e) == 0, "%s", e.msg);
	REQUIRE(ipuef_open_mem(b, l, &f, err, sizeof(err)) == 0);
	ipurt_config_init(&c);
	c.device = "replay:x";
	CHECK(ipurt_runner_create_from(f, &c, &r, err, sizeof(err)) == IPURT_E_NO_DEVICE);
	CHECK_MSG(strstr(err, "split over 2 IPUs: it runs on a group of in-process devices"), "%s", err);
	/* kernel devices: one node per IPU, each a device node */
	c.device = "/dev/accel/accel0";
	CHECK(ipurt_runner_create_from(f, &c, &r, err, sizeof(err)) == IPURT_E_NO_DEVICE);
	CHECK_MSG(strstr(err, "a group of 2 kernel devices names each of them"), "%s", err);
	c.device = "/dev/accel/accel0,/dev/accel/accel1,/dev/accel/accel2";
	CHECK(ipurt_runner_create_from(f, &c, &r, err, sizeof(err)) == IPURT_E_NO_DEVICE);
	CHECK_MSG(strstr(err, "a group of 2 kernel devices names each of them"), "%s", err);
	c.device = "/dev/accel/accel0,model";
	CHECK(ipurt_runner_create_from(f, &c, &r, err, sizeof(err)) == IPURT_E_NO_DEVICE);
	CHECK_MSG(strstr(err, "'model' in '/dev/accel/accel0,model' is not a device node"), "%s", err);
	/* nodes this host may not have: refused opening IPU 0 (or, on a
	 * machine with two devices not of one link, attaching them) */
	c.device = "/dev/accel/accel97,/dev/accel/accel98";
	CHECK(ipurt_runner_create_from(f, &c, &r, err, sizeof(err)) == IPURT_E_NO_DEVICE);
	CHECK_MSG(strstr(err, "IPU 0 of the group (/dev/accel/accel97)"), "%s", err);
	/* an in-process device too small for an IPU's executable */
	c.device = "model:tiles=8";
	CHECK(ipurt_runner_create_from(f, &c, &r, err, sizeof(err)) == IPURT_E_MODEL);
	printf("# %s\n", err);
	CHECK_MSG(strstr(err, "outside its 8 tiles"), "%s", err);
	c.device = "model:tiles=16";
	CHECK_MSG(ipurt_runner_create_from(f, &c, &r, err, sizeof(err)) == 0, "%s", err);
	ipurt_runner_destroy(r);
	ipuef_close(f);
	free(b);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(runner_on_a_group_as_on_one_ipu);
	RUN(a_group_needs_devices_of_one_kind);
	return TH_DONE();
}
