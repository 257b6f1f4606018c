// SPDX-License-Identifier: MIT
/*
 * test_verify.c - the verifier refuses malformed executables, each with
 * its own error code, and never reads outside the image (run under ASan).
 *
 * A valid image that uses every section and step kind is built with the
 * graph builder; each case corrupts one field (then fixes the checksum so
 * that the check behind it is reached) and expects one specific code.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/crc32.h"
#include "ipu/engine.h"
#include "harness.h"
#include "load_image.h"
#include "ipu/graph.h"
#include "ipu/ipu.h"

#define DEV_TILES 4
#define DEV_MEM 4096

static void *base_img;
static size_t base_len;

static int build_base(void)
{
	struct ipu_graph *g = ipu_graph_create(DEV_TILES, DEV_MEM);
	uint64_t n16 = 16, d23[2] = { 2, 3 }, d34[2] = { 3, 4 }, d24[2] = { 2, 4 }, one = 1;
	ipu_tensor x = ipu_graph_add_tensor(g, "x", IPUX_DT_F32, 1, &n16);
	ipu_tensor w = ipu_graph_add_tensor(g, "w", IPUX_DT_F32, 1, &n16);
	ipu_tensor y = ipu_graph_add_tensor(g, "y", IPUX_DT_F32, 1, &n16);
	ipu_tensor z = ipu_graph_add_tensor(g, "z", IPUX_DT_F32, 1, &n16);
	ipu_tensor a = ipu_graph_add_tensor(g, "A", IPUX_DT_F32, 2, d23);
	ipu_tensor b = ipu_graph_add_tensor(g, "B", IPUX_DT_F32, 2, d34);
	ipu_tensor c = ipu_graph_add_tensor(g, "C", IPUX_DT_F32, 2, d24);
	ipu_tensor sel = ipu_graph_add_tensor(g, "sel", IPUX_DT_I32, 1, &one);
	float wv[16];
	uint32_t cs0, cs1, sin, sout, ssel, i;
	ipu_step seq, mm, cases[1];
	struct ipu_slice bops[3] = { { x, 0, 16 }, { w, 0, 16 }, { y, 0, 16 } };
	struct ipu_slice mops[3] = { { a, 0, 6 }, { b, 0, 12 }, { c, 0, 8 } };
	uint32_t bp[5] = { IPUX_BIN_ADD, 1, 16, 1, 1 };
	uint32_t mp[5] = { 1, 2, 4, 3, 0 };
	int rc;

	for (i = 0; i < 16; i++)
		wv[i] = (float)i;
	ipu_graph_map_tile(g, x, 0);
	ipu_graph_map_tile(g, w, 0);
	ipu_graph_map_tile(g, y, 0);
	ipu_graph_map_tile(g, z, 1);
	ipu_graph_map_tile(g, a, 2);
	ipu_graph_map_tile(g, b, 2);
	ipu_graph_map_tile(g, c, 2);
	ipu_graph_map_tile(g, sel, 3);
	ipu_graph_set_init(g, w, wv, sizeof(wv));
	cs0 = ipu_graph_add_compute_set(g, "add");
	ipu_graph_add_vertex(g, cs0, IPUX_CL_BINARY, bops, 3, bp, 5);
	cs1 = ipu_graph_add_compute_set(g, "mm");
	ipu_graph_add_vertex(g, cs1, IPUX_CL_MATMUL, mops, 3, mp, 5);
	sin = ipu_graph_add_stream(g, "in", IPUX_STREAM_H2D, 64);
	sout = ipu_graph_add_stream(g, "out", IPUX_STREAM_D2H, 64);
	ssel = ipu_graph_add_stream(g, "sel", IPUX_STREAM_H2D, 4);
	seq = ipu_step_sequence(g);
	ipu_step_append(g, seq, ipu_step_stream_copy(g, ssel, &(struct ipu_slice){ sel, 0, 1 }, 1));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sin, &(struct ipu_slice){ x, 0, 16 }, 1));
	ipu_step_append(g, seq, ipu_step_execute(g, cs0));
	ipu_step_append(g, seq, ipu_step_copy(g, (struct ipu_slice){ y, 0, 16 },
					      (struct ipu_slice){ z, 0, 16 }));
	mm = ipu_step_execute(g, cs1);
	cases[0] = mm;
	ipu_step_append(g, seq, ipu_step_switch(g, sel, cases, 1, ipu_step_repeat(g, 2, mm)));
	ipu_step_append(g, seq, ipu_step_sync(g, IPUX_SYNC_EXTERNAL));
	ipu_step_append(g, seq, ipu_step_stream_copy(g, sout, &(struct ipu_slice){ z, 0, 16 }, 1));
	ipu_graph_add_program(g, seq);
	rc = ipu_graph_compile(g, &base_img, &base_len, NULL);
	if (rc)
		fprintf(stderr, "base image: %s\n", ipu_graph_error(g));
	ipu_graph_destroy(g);
	return rc;
}

static struct ipux_header *H(uint8_t *img)
{
	return (struct ipux_header *)img;
}

static struct ipux_section *sec_entry(uint8_t *img, uint32_t type)
{
	struct ipux_section *tab = (struct ipux_section *)(img + H(img)->section_offset);
	uint32_t i;

	for (i = 0; i < H(img)->section_count; i++)
		if (tab[i].type == type)
			return &tab[i];
	return NULL;
}

static void *sec(uint8_t *img, uint32_t type)
{
	struct ipux_section *s = sec_entry(img, type);

	return s ? img + s->offset : NULL;
}

static void fix_crc(uint8_t *img, size_t len)
{
	if (len >= sizeof(struct ipux_header))
		H(img)->checksum = ipu_exe_checksum(img, len);
}

/* Find the step of a kind (the n-th one). */
static struct ipux_step *step_of(uint8_t *img, uint16_t kind, int nth)
{
	struct ipux_section *s = sec_entry(img, IPUX_SEC_STEPS);
	struct ipux_step *st = (struct ipux_step *)(img + s->offset);
	uint32_t i;

	for (i = 0; i < s->count; i++)
		if (st[i].kind == kind && nth-- == 0)
			return &st[i];
	return NULL;
}

struct vcase {
	const char *name;
	int expect;
};

/*
 * Apply mutation k to a copy of the base image; returns its expected code,
 * or 1 when k is past the last case.  *len may change; *crc says whether
 * to fix the checksum afterwards.
 */
static int mutate(int k, uint8_t **imgp, size_t *len, int *crc, const char **name)
{
	uint8_t *img = *imgp;
	struct ipux_vertex *v = sec(img, IPUX_SEC_VERTICES);
	struct ipux_operand *op = sec(img, IPUX_SEC_OPERANDS);
	uint32_t *par = sec(img, IPUX_SEC_PARAMS);
	struct ipux_copy *cp = sec(img, IPUX_SEC_COPIES);
	struct ipux_stream *st = sec(img, IPUX_SEC_STREAMS);
	struct ipux_stream_copy *sc = sec(img, IPUX_SEC_STREAM_COPIES);
	struct ipux_region *rg = sec(img, IPUX_SEC_REGIONS);
	struct ipux_init *in = sec(img, IPUX_SEC_INITS);
	struct ipux_compute_set *cs = sec(img, IPUX_SEC_COMPUTE_SETS);
	struct ipux_exchange *xe = sec(img, IPUX_SEC_EXCHANGES);
	uint32_t *prog = sec(img, IPUX_SEC_PROGRAMS);
	uint32_t *kids = sec(img, IPUX_SEC_CHILDREN);

	*crc = 1;
#define CASE(n, text, code, ...) case n: *name = text; __VA_ARGS__; return code
	switch (k) {
	CASE(0, "shorter than a header", IPUX_E_TRUNCATED, *len = 40; *crc = 0);
	CASE(1, "bad magic", IPUX_E_BAD_MAGIC, H(img)->magic = 0x12345678);
	CASE(2, "major version 2", IPUX_E_BAD_VERSION, H(img)->version_major = 2);
	CASE(3, "minor version from the future", IPUX_E_BAD_VERSION, H(img)->version_minor = 99);
	CASE(4, "header_size 60", IPUX_E_BAD_HEADER, H(img)->header_size = 60);
	CASE(5, "header flags", IPUX_E_BAD_HEADER, H(img)->flags = 1);
	CASE(6, "header reserved word", IPUX_E_BAD_HEADER, H(img)->reserved[3] = 7);
	CASE(7, "truncated body", IPUX_E_TRUNCATED, *len -= 4);
	CASE(8, "trailing garbage", IPUX_E_BAD_HEADER, *len += 8; *imgp = img = realloc(img, *len);
	     memset(img + *len - 8, 0, 8));
	CASE(9, "bit flip in the body", IPUX_E_CHECKSUM, img[*len - 3] ^= 0x10; *crc = 0);
	CASE(10, "zero tiles", IPUX_E_TILES, H(img)->num_tiles = 0);
	CASE(11, "more tiles than the device", IPUX_E_TILES, H(img)->num_tiles = DEV_TILES + 1);
	CASE(12, "tile_mem not a multiple of 64", IPUX_E_TILE_MEM, H(img)->tile_mem = 1000);
	CASE(13, "tile_mem over the device", IPUX_E_TILE_MEM, H(img)->tile_mem = DEV_MEM * 2);
	CASE(14, "section table past the end", IPUX_E_SECTION_TABLE,
	     H(img)->section_offset = (uint32_t)*len - 8);
	CASE(15, "section count overflowing", IPUX_E_SECTION_TABLE, H(img)->section_count = 0x40000000);
	CASE(16, "unknown section type", IPUX_E_SECTION_UNKNOWN, sec_entry(img, IPUX_SEC_DATA)->type = 99);
	CASE(17, "duplicate section", IPUX_E_SECTION_DUP, sec_entry(img, IPUX_SEC_DATA)->type = IPUX_SEC_INITS);
	CASE(18, "misaligned section", IPUX_E_SECTION_ALIGN, sec_entry(img, IPUX_SEC_STEPS)->offset += 2);
	CASE(19, "section size != count x record", IPUX_E_SECTION_SIZE, sec_entry(img, IPUX_SEC_STEPS)->count += 1);
	CASE(20, "section offset + size wraps around", IPUX_E_SECTION_BOUNDS,
	     sec_entry(img, IPUX_SEC_DATA)->offset = 0xfffffff0u);
	CASE(21, "section table cut before STEPS", IPUX_E_SECTION_MISSING,
	     H(img)->section_count = (uint32_t)(sec_entry(img, IPUX_SEC_STEPS) -
		     (struct ipux_section *)(img + H(img)->section_offset)));
	CASE(22, "vertex on a tile past the end", IPUX_E_TILE_RANGE, v[0].tile = DEV_TILES);
	CASE(23, "vertex reserved field", IPUX_E_RESERVED, v[0].reserved = 1);
	CASE(24, "unknown codelet", IPUX_E_CODELET_UNKNOWN, v[0].codelet = 999);
	CASE(25, "operand index overflowing", IPUX_E_OPERAND_RANGE, v[0].first_operand = 0xffffffffu);
	CASE(26, "param index past the table", IPUX_E_PARAM_RANGE, v[1].first_param = 1000);
	CASE(27, "17 operands", IPUX_E_LIMIT, v[0].num_operands = 17);
	CASE(28, "unknown operand dtype", IPUX_E_DTYPE, op[0].dtype = 77);
	CASE(29, "misaligned operand", IPUX_E_REGION_ALIGN, op[0].offset += 2);
	CASE(30, "operand past the tile end", IPUX_E_REGION_BOUNDS, op[0].offset = DEV_MEM - 16);
	CASE(31, "operand count overflowing", IPUX_E_REGION_BOUNDS, op[1].count = 0xffffffffu);
	CASE(32, "matmul shape inconsistent", IPUX_E_OPERAND_SHAPE, par[5 + 1] = 3 /* M */);
	CASE(33, "binary operand types differ", IPUX_E_OPERAND_TYPE, op[1].dtype = IPUX_DT_I32);
	CASE(34, "binary with two operands", IPUX_E_OPERAND_COUNT, v[0].num_operands = 2);
	CASE(35, "binary with a missing param", IPUX_E_PARAM_COUNT, v[0].num_params = 4);
	CASE(36, "binary op out of range", IPUX_E_PARAM_VALUE, par[0] = 999);
	CASE(37, "compute set vertices past the table", IPUX_E_VERTEX_RANGE, cs[1].num_vertices = 5);
	CASE(38, "exchange copies past the table", IPUX_E_COPY_RANGE, xe[0].first_copy = 3);
	CASE(39, "copy source past the tile end", IPUX_E_COPY_BOUNDS, cp[0].src_offset = DEV_MEM - 8);
	CASE(40, "copy to a tile past the end", IPUX_E_TILE_RANGE, cp[0].dst_tile = 9);
	CASE(41, "stream direction 5", IPUX_E_STREAM_DIR, st[0].dir = 5);
	CASE(42, "stream copy of a missing stream", IPUX_E_STREAM_ID, sc[0].stream = 3);
	CASE(43, "stream buffer size mismatch", IPUX_E_STREAM_SIZE, st[0].buffer_bytes = 60);
	CASE(44, "stream copy regions past the table", IPUX_E_REGION_RANGE, sc[1].num_regions = 9);
	CASE(45, "stream region past the tile end", IPUX_E_REGION_BOUNDS, rg[0].offset = DEV_MEM - 2);
	CASE(46, "unknown step kind", IPUX_E_STEP_KIND, step_of(img, IPUX_STEP_SYNC, 0)->kind = 42);
	CASE(47, "execute of a missing compute set", IPUX_E_STEP_REF, step_of(img, IPUX_STEP_EXECUTE, 0)->a = 7);
	CASE(48, "step flags", IPUX_E_STEP_FLAGS, step_of(img, IPUX_STEP_SYNC, 0)->flags = 1);
	CASE(49, "sequence children past the table", IPUX_E_CHILD_RANGE, step_of(img, IPUX_STEP_SEQUENCE, 0)->b = 100);
	CASE(50, "child is no step", IPUX_E_STEP_RANGE, kids[0] = 5000);
	CASE(51, "sequence containing itself", IPUX_E_PROGRAM_CYCLE,
	     { struct ipux_step *s0 = step_of(img, IPUX_STEP_SEQUENCE, 0);
	       kids[s0->a + 2] = (uint32_t)(s0 - (struct ipux_step *)sec(img, IPUX_SEC_STEPS)); });
	CASE(52, "no programs", IPUX_E_PROGRAM_COUNT,
	     sec_entry(img, IPUX_SEC_PROGRAMS)->count = 0; sec_entry(img, IPUX_SEC_PROGRAMS)->size = 0);
	CASE(53, "program root is no step", IPUX_E_STEP_RANGE, prog[0] = 1234);
	CASE(54, "switch selector misaligned", IPUX_E_SWITCH, step_of(img, IPUX_STEP_SWITCH, 0)->b += 1);
	CASE(55, "switch without children", IPUX_E_SWITCH, step_of(img, IPUX_STEP_SWITCH, 0)->d = 0);
	CASE(56, "init reading past DATA", IPUX_E_INIT_BOUNDS, in[0].data_offset = 60);
	CASE(57, "init on a tile past the end", IPUX_E_TILE_RANGE, in[0].tile = 4);
	CASE(58, "repeat body is no step", IPUX_E_STEP_RANGE, step_of(img, IPUX_STEP_REPEAT, 0)->b = 999);
	CASE(59, "unused step field set", IPUX_E_RESERVED, step_of(img, IPUX_STEP_EXECUTE, 0)->d = 1);
	CASE(60, "sync kind 9", IPUX_E_STEP_REF, step_of(img, IPUX_STEP_SYNC, 0)->a = 9);
	CASE(61, "operand reserved bytes", IPUX_E_RESERVED, op[2].reserved[1] = 1);
	CASE(62, "repeat containing its sequence", IPUX_E_PROGRAM_CYCLE,
	     step_of(img, IPUX_STEP_REPEAT, 0)->b =
		     (uint32_t)(step_of(img, IPUX_STEP_SEQUENCE, 0) -
				(struct ipux_step *)sec(img, IPUX_SEC_STEPS)));
	default:
		return 1;
	}
#undef CASE
}

TEST(base_image_runs)
{
	struct ipu_device *d;
	char err[256];
	float x[16], z[16];
	int32_t sel = 0;
	int i;

	REQUIRE(ipu_open("model:tiles=4,tile_mem=4096,workers=2", &d, err, sizeof(err)) == 0);
	CHECK_EQ_INT(test_load_image(d, base_img, base_len, err, sizeof(err)), 0);
	for (i = 0; i < 16; i++)
		x[i] = (float)(i * i);
	ipu_stream_submit(d, 2, &sel, 4, 0);
	ipu_stream_submit(d, 0, x, sizeof(x), 0);
	ipu_stream_submit(d, 1, z, sizeof(z), 0);
	CHECK_EQ_INT(ipu_run_sync(d, 0, err, sizeof(err)), 0);
	for (i = 0; i < 16; i++)
		CHECK(z[i] == x[i] + (float)i);
	ipu_close(d);
}

TEST(malformed_images_refused)
{
	int k, distinct_codes = 0, seen[128] = { 0 }, cases = 0;

	for (k = 0;; k++) {
		uint8_t *img = malloc(base_len);
		size_t len = base_len;
		const char *name = "";
		int crc, expect, rc;
		char err[512];

		REQUIRE(img);
		memcpy(img, base_img, base_len);
		expect = mutate(k, &img, &len, &crc, &name);
		if (expect == 1) {
			free(img);
			break;
		}
		cases++;
		if (crc)
			fix_crc(img, len);
		err[0] = 0;
		rc = ipu_exe_verify(img, len, DEV_TILES, DEV_MEM, err, sizeof(err));
		CHECK_MSG(rc == expect, "case %d (%s): got %s (%s), want %s", k, name,
			  ipu_err_name(rc), err, ipu_err_name(expect));
		CHECK_MSG(rc == 0 || err[0], "case %d (%s): no message", k, name);
		/* IPUX_E_* count down from IPU_ERR_BASE: the finding's number */
		if (rc < 0 && IPU_ERR_BASE - rc < 128 && !seen[IPU_ERR_BASE - rc]++)
			distinct_codes++;
		free(img);
	}
	printf("# %d malformed images, %d distinct error codes\n", cases, distinct_codes);
	CHECK(cases >= 60);
	CHECK(distinct_codes >= 40);
}

/* Nesting deeper than the limit: the builder's verification reports it. */
TEST(too_deep_refused)
{
	struct ipu_graph *g = ipu_graph_create(1, 1024);
	ipu_step s = ipu_step_sync(g, IPUX_SYNC_INTERNAL);
	void *img;
	size_t len;
	int i;

	for (i = 0; i < (int)IPUX_MAX_DEPTH + 2; i++) {
		ipu_step q = ipu_step_sequence(g);

		ipu_step_append(g, q, s);
		s = q;
	}
	ipu_graph_add_program(g, s);
	CHECK(ipu_graph_compile(g, &img, &len, NULL) < 0);
	CHECK(strstr(ipu_graph_error(g), "IPUX_E_PROGRAM_DEPTH") != NULL);
	ipu_graph_destroy(g);
}

/* Every truncation and every single-byte change is refused cleanly. */
TEST(truncations_and_flips)
{
	size_t cut;
	int bad = 0;

	for (cut = 0; cut < base_len; cut++) {
		char err[256];

		if (ipu_exe_verify(base_img, cut, DEV_TILES, DEV_MEM, err, sizeof(err)) == 0)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	for (cut = 0; cut < base_len; cut++) {
		uint8_t *img = malloc(base_len);
		char err[256];
		int rc;

		memcpy(img, base_img, base_len);
		img[cut] ^= 0x01;
		rc = ipu_exe_verify(img, base_len, DEV_TILES, DEV_MEM, err, sizeof(err));
		/* the checksum field itself and the CRC'd body both fail */
		if (rc == 0)
			bad++;
		free(img);
	}
	CHECK_EQ_INT(bad, 0);
}

/* CRC-32 check value, and chaining at every split point of odd lengths. */
TEST(crc32_known_values)
{
	uint8_t buf[1031];
	uint32_t whole;
	size_t i;
	int bad = 0;

	CHECK_EQ_INT(ipu_crc32(0, "123456789", 9), 0xcbf43926u);
	CHECK_EQ_INT(ipu_crc32(0, "", 0), 0);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	whole = ipu_crc32(0, buf, sizeof(buf));
	for (i = 0; i <= sizeof(buf); i += 13)
		if (ipu_crc32(ipu_crc32(0, buf, i), buf + i, sizeof(buf) - i) != whole)
			bad++;
	CHECK_EQ_INT(bad, 0);
	/* unaligned starts */
	for (i = 1; i < 8; i++)
		if (ipu_crc32(ipu_crc32(0, buf, i), buf + i, 100) != ipu_crc32(0, buf, i + 100))
			bad++;
	CHECK_EQ_INT(bad, 0);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	if (build_base()) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	RUN(base_image_runs);
	RUN(malformed_images_refused);
	RUN(too_deep_refused);
	RUN(truncations_and_flips);
	RUN(crc32_known_values);
	free(base_img);
	return TH_DONE();
}
