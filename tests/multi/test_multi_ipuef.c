// SPDX-License-Identifier: MIT
/*
 * test_multi_ipuef.c - the .ipuef of a model split over IPUs (Metadata
 * version 3, one Executable per IPU, the group table): written from the
 * lowered split and read back; the group loaded from the file alone runs
 * with the same bits as the model on one IPU; a link whose receiver
 * writes a tile outside its IPU, a table with a link backwards or a
 * stream used twice, and a newer Metadata version are refused; a one-IPU
 * model is still written as version 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/crc32.h"
#include "ipu/engine.h"
#include "ipu/group.h"
#include "ipu/ipuef.h"
#include "ipu/ipux.h"
#include "ipu/passes.h"
#include "mlp_model.h"

#define TILES 16
#define TILE_MEM (64 * 1024)

/* The group .ipuef of `layers` MLP layers over `n` IPUs of TILES x TILE_MEM. */
static int group_file(int layers, int n, void **buf, size_t *len, struct ir_error *e)
{
	struct ir_graph *g = mlp_prepared(layers);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM };
	struct ipu_partition p;
	struct ipu_shard sh;
	int r = -1;

	if (!g)
		return ir_err(e, "no graph");
	if (!ipu_partition_auto(g, n, &t, &p, e)) {
		if (!ipu_shard_lower(g, &p, &t, &sh, e))
			r = ipu_shard_write_mem(&sh, &t, 0, 1, buf, len, e);
		ipu_shard_free(&sh);
	}
	ir_graph_free(g);
	return r;
}

/* Runs the file's group once on x: IPU k loads the k-th Executable, the
 * links and anchors come from the table.  0 or -1 with err. */
static int run_file(const struct ipuef_file *f, const float *x, float *y, char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	const struct ipuef_group *gt = m->group;
	struct ipu_group *grp = NULL;
	char spec[96];
	uint64_t seq[IPU_GROUP_MAX];
	int r = -1;

	snprintf(spec, sizeof(spec), "model:tiles=%u,tile_mem=%u", m->num_tiles, m->tile_mem);
	if (ipu_group_open(spec, gt->num_ipus, &grp, err, errlen))
		return -1;
	for (uint32_t k = 0; k < gt->num_ipus; k++) {
		struct ipu_error le;
		size_t len;
		const void *img = ipuef_group_executable(f, k, &len);

		if (ipu_load(ipu_group_device(grp, k), img, len, &le)) {
			snprintf(err, errlen, "IPU %u: %s", k, le.msg);
			goto out;
		}
	}
	for (uint32_t i = 0; i < gt->num_links; i++) {
		const struct ipuef_link *l = &gt->links[i];

		if (ipu_group_link(grp, l->src_ipu, l->src_stream, l->dst_ipu, l->dst_stream, err,
				   errlen) < 0)
			goto out;
	}
	if (ipu_group_start(grp, 1, NULL, NULL, err, errlen))
		goto out;
	for (uint32_t a = 0; a < m->num_anchors; a++) {
		uint32_t s, k = ipuef_anchor_ipu(m, &m->anchors[a], &s);
		int out = m->anchors[a].direction == IPUEF_OUTPUT;

		if (ipu_stream_submit(ipu_group_device(grp, k), s, out ? (void *)y : (void *)x,
				      ipuef_anchor_bytes(&m->anchors[a]), a)) {
			snprintf(err, errlen, "anchor %u: submit refused", a);
			goto out;
		}
	}
	for (uint32_t k = 0; k < gt->num_ipus; k++)
		if (ipu_run(ipu_group_device(grp, k), 0, &seq[k]))
			goto out;
	for (uint32_t k = 0; k < gt->num_ipus; k++)
		if (ipu_wait(ipu_group_device(grp, k), seq[k], 20ll * 1000000000, err, errlen))
			goto out;
	r = 0;
out:
	ipu_group_close(grp);
	return r;
}

TEST(written_read_back_and_run_as_one_ipu)
{
	struct ir_error e = { "" };
	struct ipuef_file *f = NULL, *one = NULL;
	void *buf = NULL, *buf1 = NULL;
	size_t len = 0, len1 = 0;
	char err[512];
	static float x[MLP_ROWS * MLP_WIDTH], y[MLP_ROWS * MLP_WIDTH], y1[MLP_ROWS * MLP_WIDTH];
	const struct ipuef_metadata *m;
	struct ir_graph *g = mlp_prepared(4);
	struct ipu_target t = { "ipu2", 64, TILE_MEM };
	struct ipu_device *d = NULL;
	struct ipu_error le;
	uint64_t sq;

	CHECK_MSG(group_file(4, 2, &buf, &len, &e) == 0, "%s", e.msg);
	REQUIRE(buf);
	CHECK_MSG(ipuef_open_mem(buf, len, &f, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(f);
	m = ipuef_metadata(f);
	CHECK_EQ_INT(ipuef_num_ipus(f), 2);
	CHECK_EQ_INT(ipuef_blob(f, 0)->version, 3);
	REQUIRE(m->group);
	CHECK_EQ_INT(m->group->num_links, 1);
	CHECK_MSG(!strncmp(m->group->links[0].name, "link:", 5), "%s", m->group->links[0].name);
	CHECK_EQ_INT(m->group->links[0].bytes, MLP_ROWS * MLP_WIDTH * 4);
	CHECK_EQ_INT(m->group->links[0].src_ipu, 0);
	CHECK_EQ_INT(m->group->links[0].dst_ipu, 1);
	CHECK_EQ_INT(m->num_anchors, 2);
	CHECK(ipuef_group_executable(f, 1, NULL) != NULL);
	CHECK(ipuef_group_executable(f, 2, NULL) == NULL);
	{
		uint32_t s, kx = ipuef_anchor_ipu(m, ipuef_find_anchor(f, "x"), &s);
		const struct ipuef_anchor *ya = m->anchors[0].direction == IPUEF_OUTPUT ? &m->anchors[0]
											 : &m->anchors[1];

		CHECK_EQ_INT(kx, 0);
		CHECK_EQ_INT(ipuef_anchor_ipu(m, ya, &s), 1);
	}
	CHECK_MSG(ipuef_group_verify(f, TILES, TILE_MEM, err, sizeof(err)) == 0, "%s", err);
	/* kept for make check-multi-ipuef (ipuef-dump's listing) */
	if (getenv("MULTI_IPUEF_OUT")) {
		FILE *o = fopen(getenv("MULTI_IPUEF_OUT"), "wb");

		CHECK(o && fwrite(buf, 1, len, o) == len);
		if (o)
			fclose(o);
	}

	/* the group from the file alone, against the model on one IPU of 64 tiles */
	mlp_fill(x, 7);
	CHECK_MSG(run_file(f, x, y, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(g);
	CHECK_MSG(ipu_lower_write_mem(&g, 1, &t, &buf1, &len1, NULL, &e) == 0, "%s", e.msg);
	CHECK_MSG(ipuef_open_mem(buf1, len1, &one, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(one);
	if (getenv("MULTI_IPUEF_ONE")) {
		FILE *o = fopen(getenv("MULTI_IPUEF_ONE"), "wb");

		CHECK(o && fwrite(buf1, 1, len1, o) == len1);
		if (o)
			fclose(o);
	}
	/* a one-IPU model is still Metadata version 1: older readers read it */
	CHECK_EQ_INT(ipuef_blob(one, 0)->version, 1);
	CHECK_EQ_INT(ipuef_num_ipus(one), 1);
	CHECK_MSG(ipuef_group_verify(one, 64, TILE_MEM, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(ipu_open("model:tiles=64", &d, err, sizeof(err)) == 0);
	REQUIRE(ipu_attach(d) == 0);
	{
		size_t el;
		const void *img = ipuef_executable(one, &el);
		const struct ipuef_anchor *ax = ipuef_find_anchor(one, "x");
		const struct ipuef_anchor *ay = ipuef_metadata(one)->anchors[0].direction == IPUEF_OUTPUT
							? &ipuef_metadata(one)->anchors[0]
							: &ipuef_metadata(one)->anchors[1];

		REQUIRE(ax);
		REQUIRE(ipu_load(d, img, el, &le) == 0);
		CHECK(ipu_stream_submit(d, ax->stream_id, x, sizeof(x), 0) == 0);
		CHECK(ipu_stream_submit(d, ay->stream_id, y1, sizeof(y1), 1) == 0);
		CHECK(ipu_run(d, 0, &sq) == 0);
		CHECK(ipu_wait(d, sq, 20ll * 1000000000, err, sizeof(err)) == 0);
	}
	CHECK_MSG(!memcmp(y, y1, sizeof(y)), "the group's output differs from one IPU's");
	ipu_close(d);
	ipuef_close(one);
	ipuef_close(f);
	free(buf);
	free(buf1);
	ir_graph_free(g);
}

/* The image's region table entry of the first piece stream s copies. */
static struct ipux_region *first_piece(uint8_t *img, size_t len, uint32_t s)
{
	struct ipux_header h;
	struct ipux_stream_copy *sc = NULL;
	struct ipux_region *rg = NULL;
	uint32_t nsc = 0;

	memcpy(&h, img, sizeof(h));
	for (uint32_t i = 0; i < h.section_count; i++) {
		struct ipux_section sec;

		memcpy(&sec, img + h.section_offset + 16u * i, sizeof(sec));
		if (sec.offset + sec.size > len)
			return NULL;
		if (sec.type == IPUX_SEC_STREAM_COPIES) {
			sc = (struct ipux_stream_copy *)(img + sec.offset);
			nsc = sec.count;
		}
		if (sec.type == IPUX_SEC_REGIONS)
			rg = (struct ipux_region *)(img + sec.offset);
	}
	for (uint32_t i = 0; sc && rg && i < nsc; i++)
		if (sc[i].stream == s)
			return &rg[sc[i].first_region];
	return NULL;
}

/* The file again from f's parts, with IPU ipu's image replaced. */
static int rewrite(const struct ipuef_file *f, const struct ipuef_metadata *m, uint32_t ipu,
		   const void *img, size_t ilen, void **out, size_t *len, char *err, size_t errlen)
{
	struct ipuef_writer *w = NULL;
	int r;
	size_t l;

	r = ipuef_writer_create(&w, err, errlen);
	if (!r)
		r = ipuef_writer_set_metadata(w, m, err, errlen);
	for (uint32_t k = 0; !r && k < ipuef_num_ipus(f); k++) {
		const void *p = k == ipu ? img : ipuef_group_executable(f, k, &l);

		if (k == ipu)
			l = ilen;
		r = k ? ipuef_writer_add_executable(w, p, l, err, errlen)
		      : ipuef_writer_set_executable(w, p, l, err, errlen);
	}
	if (!r)
		r = ipuef_writer_write_mem(w, out, len, err, errlen);
	ipuef_writer_destroy(w);
	return r;
}

TEST(a_link_to_a_tile_outside_the_peer_is_refused)
{
	struct ir_error e = { "" };
	struct ipuef_file *f = NULL, *bad = NULL;
	void *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0, il;
	char err[512];
	uint8_t *img;
	struct ipux_region *rg;
	const struct ipuef_link *l;

	CHECK_MSG(group_file(4, 2, &buf, &len, &e) == 0, "%s", e.msg);
	REQUIRE(ipuef_open_mem(buf, len, &f, err, sizeof(err)) == 0);
	l = &ipuef_metadata(f)->group->links[0];
	{
		const void *p = ipuef_group_executable(f, 1, &il);

		img = malloc(il);
		REQUIRE(img);
		memcpy(img, p, il);
	}
	rg = first_piece(img, il, l->dst_stream);
	REQUIRE(rg);
	rg->tile = TILES;	/* one past the receiver's last tile */
	{
		uint32_t c = ipu_exe_checksum(img, il);

		memcpy(img + offsetof(struct ipux_header, checksum), &c, sizeof(c));
	}
	/* the file itself is well formed: the reader keeps executables opaque */
	CHECK_MSG(rewrite(f, ipuef_metadata(f), 1, img, il, &buf2, &len2, err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(ipuef_open_mem(buf2, len2, &bad, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(bad);
	CHECK(ipuef_group_verify(bad, TILES, TILE_MEM, err, sizeof(err)) == IPUEF_E_METADATA);
	printf("# %s\n", err);
	CHECK_MSG(strstr(err, "link 0 'link:") && strstr(err, "the receiver, IPU 1, writes tile 16") &&
			  strstr(err, "outside its 16 tiles x 65536 bytes"),
		  "%s", err);
	/* a device of fewer tiles than the sender's reads refuses the sender */
	CHECK(ipuef_group_verify(f, 2, TILE_MEM, err, sizeof(err)) != 0);
	CHECK_MSG(strstr(err, "the sender, IPU 0, reads tile"), "%s", err);
	ipuef_close(bad);
	ipuef_close(f);
	free(img);
	free(buf);
	free(buf2);
}

TEST(bad_group_tables_are_refused)
{
	struct ir_error e = { "" };
	struct ipuef_file *f = NULL;
	void *buf = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	char err[512];
	struct ipuef_metadata m;
	struct ipuef_group g;
	struct ipuef_link l;
	struct ipuef_writer *w = NULL;
	uint8_t *copy;

	CHECK_MSG(group_file(4, 2, &buf, &len, &e) == 0, "%s", e.msg);
	REQUIRE(ipuef_open_mem(buf, len, &f, err, sizeof(err)) == 0);
	m = *ipuef_metadata(f);
	g = *m.group;
	l = g.links[0];
	m.group = &g;
	g.links = &l;
	REQUIRE(ipuef_writer_create(&w, err, sizeof(err)) == 0);

	l.src_ipu = 1;
	l.dst_ipu = 0;
	CHECK(ipuef_writer_set_metadata(w, &m, err, sizeof(err)) == IPUEF_E_METADATA);
	CHECK_MSG(strstr(err, "a link goes forward"), "%s", err);
	l = ipuef_metadata(f)->group->links[0];
	/* the model's input moved onto the receiver's link stream */
	{
		struct ipuef_anchor an[2];

		memcpy(an, m.anchors, sizeof(an));
		for (int i = 0; i < 2; i++)
			if (an[i].direction == IPUEF_INPUT)
				an[i].stream_id = g.num_streams[0] + l.dst_stream;
		m.anchors = an;
		CHECK(ipuef_writer_set_metadata(w, &m, err, sizeof(err)) != 0);
		CHECK_MSG(strstr(err, "already an anchor's or a link's") || strstr(err, "share stream id"),
			  "%s", err);
		m.anchors = ipuef_metadata(f)->anchors;
	}
	g.micro_batches = 0;
	CHECK(ipuef_writer_set_metadata(w, &m, err, sizeof(err)) == IPUEF_E_METADATA);
	CHECK_MSG(strstr(err, "micro_batches 0"), "%s", err);
	g.micro_batches = 1;
	g.num_ipus = 1;
	CHECK(ipuef_writer_set_metadata(w, &m, err, sizeof(err)) == IPUEF_E_LIMIT);
	g.num_ipus = 2;
	/* one Executable for a group of two */
	CHECK(ipuef_writer_set_metadata(w, &m, err, sizeof(err)) == 0);
	{
		size_t el;
		const void *img = ipuef_group_executable(f, 0, &el);

		CHECK(ipuef_writer_set_executable(w, img, el, err, sizeof(err)) == 0);
	}
	CHECK(ipuef_writer_write_mem(w, &out, &olen, err, sizeof(err)) == IPUEF_E_BLOB_COUNT);
	CHECK_MSG(strstr(err, "1 Executables for 2 IPU(s)"), "%s", err);
	ipuef_writer_destroy(w);

	/* a newer Metadata version than this reader's (as version 3 is to
	 * the readers before it) is refused by version, not half read */
	copy = malloc(len);
	REQUIRE(copy);
	memcpy(copy, buf, len);
	copy[32 + 4] = 4;	/* the first blob's (Metadata's) version */
	{
		struct ipuef_file *nf = NULL;
		uint32_t c = ipu_crc32(ipu_crc32(0, copy, 28), copy + 32, len - 32);
		int rc;

		memcpy(copy + 28, &c, 4);	/* the whole file's CRC (little-endian host) */
		rc = ipuef_open_mem(copy, len, &nf, err, sizeof(err));
		CHECK_EQ_INT(rc, IPUEF_E_BLOB_VERSION);
		CHECK_MSG(strstr(err, "blob 0 (Metadata): payload version 4"), "%s", err);
		ipuef_close(nf);
	}
	free(copy);
	ipuef_close(f);
	free(buf);
}

/* Runs a one-IPU file once on x (its input "x", its one output to y). */
static int run_one(const struct ipuef_file *f, const float *x, float *y, char *err, size_t errlen)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	struct ipu_device *d = NULL;
	struct ipu_error le;
	size_t el;
	const void *img = ipuef_executable(f, &el);
	uint64_t sq;
	int r = -1;

	if (ipu_open("model:tiles=64", &d, err, errlen))
		return -1;
	if (ipu_attach(d) || ipu_load(d, img, el, &le)) {
		snprintf(err, errlen, "loading the one-IPU model failed");
		goto out;
	}
	for (uint32_t a = 0; a < m->num_anchors; a++) {
		int o = m->anchors[a].direction == IPUEF_OUTPUT;

		if (ipu_stream_submit(d, m->anchors[a].stream_id, o ? (void *)y : (void *)x,
				      ipuef_anchor_bytes(&m->anchors[a]), a)) {
			snprintf(err, errlen, "anchor %u: submit refused", a);
			goto out;
		}
	}
	if (ipu_run(d, 0, &sq) || ipu_wait(d, sq, 20ll * 1000000000, err, errlen))
		goto out;
	r = 0;
out:
	ipu_close(d);
	return r;
}

/* The 2-layer MLP with y = mm1 + relu0 + mm0 + x: relu0, made on IPU 0,
 * is read by IPUs 1 and 2, mm0 skips IPU 1 to reach IPU 2, and the
 * model's input x is read by IPUs 0 and 2 (one anchor, then a link). */
static struct ir_graph *fan_graph(struct ipu_partition *p, struct ir_error *e)
{
	struct ir_graph *g = mlp_graph(2);
	struct ir_pipeline_opts po = { 0 };
	int mm0, relu0, mm1, in[2], d, d2, y;

	if (!g)
		return NULL;
	mm0 = ir_value_find(g, "mm0");
	relu0 = ir_value_find(g, "relu0");
	mm1 = ir_value_find(g, "mm1");
	d = ir_value_add(g, "sum1", e);
	d2 = ir_value_add(g, "sum2", e);
	y = ir_value_add(g, "y", e);
	in[0] = mm1;
	in[1] = relu0;
	if (mm0 < 0 || relu0 < 0 || mm1 < 0 || d < 0 || d2 < 0 || y < 0 ||
	    ir_node_add(g, "sum1", "Add", in, 2, &d, 1, e) < 0)
		goto fail;
	in[0] = d;
	in[1] = mm0;
	if (ir_node_add(g, "sum2", "Add", in, 2, &d2, 1, e) < 0)
		goto fail;
	in[0] = d2;
	in[1] = ir_value_find(g, "x");
	if (ir_node_add(g, "y", "Add", in, 2, &y, 1, e) < 0)
		goto fail;
	g->vals[mm1].is_output = 0;
	g->noutputs = 0;
	if (ir_graph_add_output(g, y, e) || ir_pipeline_run(g, &po, e))
		goto fail;
	/* IPU 0: mm0, relu0; IPU 1: mm1; IPU 2: the sums */
	p->nstages = 3;
	p->first[0] = 0;
	p->first[1] = p->first[2] = -1;
	for (int i = 0; i < g->nnodes; i++) {
		if (!strcmp(g->nodes[i].name, "mm1"))
			p->first[1] = i;
		if (!strcmp(g->nodes[i].name, "sum1"))
			p->first[2] = i;
	}
	p->first[3] = g->nnodes;
	if (p->first[1] != 2 || p->first[2] != 3 || g->nnodes != 6) {
		ir_err(e, "the prepared graph has %d nodes, mm1 at %d and sum1 at %d", g->nnodes,
		       p->first[1], p->first[2]);
		goto fail;
	}
	return g;
fail:
	ir_graph_free(g);
	return NULL;
}

TEST(a_value_read_by_two_later_ipus_runs)
{
	struct ir_error e = { "" };
	struct ipu_partition p;
	struct ir_graph *g = fan_graph(&p, &e);
	struct ipu_target t = { "ipu2", TILES, TILE_MEM }, t1 = { "ipu2", 64, TILE_MEM };
	struct ipu_shard sh;
	struct ipuef_file *f = NULL, *one = NULL;
	void *buf = NULL, *buf1 = NULL;
	size_t len = 0, len1 = 0;
	char err[512];
	static float x[MLP_ROWS * MLP_WIDTH], y[MLP_ROWS * MLP_WIDTH], y1[MLP_ROWS * MLP_WIDTH];
	static float h0[MLP_ROWS * MLP_WIDTH], r0[MLP_ROWS * MLP_WIDTH];
	const struct ipuef_group *gt;
	const float *w0, *w1;
	double scale = 0, m = 0;
	int seen = 0;

	CHECK_MSG(g, "%s", e.msg);
	REQUIRE(g);
	CHECK_MSG(ipu_shard_lower(g, &p, &t, &sh, &e) == 0, "%s", e.msg);
	CHECK_MSG(ipu_shard_write_mem(&sh, &t, 0, 1, &buf, &len, &e) == 0, "%s", e.msg);
	ipu_shard_free(&sh);
	REQUIRE(buf);
	CHECK_MSG(ipuef_open_mem(buf, len, &f, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(f);
	CHECK_MSG(ipuef_group_verify(f, TILES, TILE_MEM, err, sizeof(err)) == 0, "%s", err);
	gt = ipuef_metadata(f)->group;
	REQUIRE(gt);
	/* relu0 to IPUs 1 and 2 (one sender stream each), mm0 and x 0 -> 2,
	 * mm1 1 -> 2; x one anchor (IPU 0), y the other */
	CHECK_EQ_INT(gt->num_links, 5);
	CHECK_EQ_INT(ipuef_metadata(f)->num_anchors, 2);
	for (uint32_t i = 0; i < gt->num_links; i++) {
		const struct ipuef_link *l = &gt->links[i];

		CHECK_EQ_INT(l->bytes, MLP_ROWS * MLP_WIDTH * 4);
		if (!strcmp(l->name, "link:relu0"))
			seen |= (l->src_ipu == 0 && l->dst_ipu == 1) << 0;
		else if (!strcmp(l->name, "link:relu0@ipu2"))
			seen |= (l->src_ipu == 0 && l->dst_ipu == 2) << 1;
		else if (!strcmp(l->name, "link:mm0"))
			seen |= (l->src_ipu == 0 && l->dst_ipu == 2) << 2;
		else if (!strcmp(l->name, "link:mm1"))
			seen |= (l->src_ipu == 1 && l->dst_ipu == 2) << 3;
		else if (!strcmp(l->name, "link:x@ipu2"))
			seen |= (l->src_ipu == 0 && l->dst_ipu == 2) << 4;
		else
			CHECK_MSG(0, "link %u '%s'", i, l->name);
	}
	CHECK_EQ_INT(seen, 31);

	mlp_fill(x, 11);
	CHECK_MSG(run_file(f, x, y, err, sizeof(err)) == 0, "%s", err);

	/* against the model on one IPU, bit for bit */
	CHECK_MSG(ipu_lower_write_mem(&g, 1, &t1, &buf1, &len1, NULL, &e) == 0, "%s", e.msg);
	CHECK_MSG(ipuef_open_mem(buf1, len1, &one, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(one);
	CHECK_MSG(run_one(one, x, y1, err, sizeof(err)) == 0, "%s", err);
	CHECK_MSG(!memcmp(y, y1, sizeof(y)), "3 IPUs differ from one");

	/* and against the sums in double precision */
	w0 = g->vals[ir_value_find(g, "w0")].data;
	w1 = g->vals[ir_value_find(g, "w1")].data;
	REQUIRE(w0 && w1);
	for (int r = 0; r < MLP_ROWS; r++)
		for (int c = 0; c < MLP_WIDTH; c++) {
			double a = 0;

			for (int k = 0; k < MLP_WIDTH; k++)
				a += (double)x[r * MLP_WIDTH + k] * w0[k * MLP_WIDTH + c];
			h0[r * MLP_WIDTH + c] = (float)a;
			r0[r * MLP_WIDTH + c] = a > 0 ? (float)a : 0;
		}
	for (int r = 0; r < MLP_ROWS; r++)
		for (int c = 0; c < MLP_WIDTH; c++) {
			double a = 0, want;
			int i = r * MLP_WIDTH + c;

			for (int k = 0; k < MLP_WIDTH; k++)
				a += (double)r0[r * MLP_WIDTH + k] * w1[k * MLP_WIDTH + c];
			want = a + r0[i] + h0[i] + x[i];
			scale = fmax(scale, fabs(want));
			m = fmax(m, fabs(y[i] - want));
		}
	printf("# 3 IPUs, 5 links: bit-identical to one IPU, %.3g of the output scale from double\n",
	       m / scale);
	CHECK(scale > 0 && m / scale < 1e-5);
	ipuef_close(one);
	ipuef_close(f);
	free(buf);
	free(buf1);
	ir_graph_free(g);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(written_read_back_and_run_as_one_ipu);
	RUN(a_link_to_a_tile_outside_the_peer_is_refused);
	RUN(bad_group_tables_are_refused);
	RUN(a_value_read_by_two_later_ipus_runs);
	return TH_DONE();
}
