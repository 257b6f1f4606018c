// SPDX-License-Identifier: MIT
/*
 * test_profile_blob.c - the .ipuef debug blob (ipuef_debug_*): round trip,
 * every truncation and every single-byte corruption of a payload either
 * decodes to something valid or is refused with a message (never a crash
 * under ASan), bad indices and names refused by the encoder too.
 */
#include <stdint.h>

#include "harness.h"
#include "ipu/ipuef.h"

static const struct ipuef_debug_node nodes[] = {
	{ "stem_conv", "Conv" }, { "classifier/MatMul", "MatMul" }, { "\xc3\xa9t\xc3\xa9", "Relu" },
};
static const uint32_t cs[] = { 0, 1, IPUEF_DEBUG_NONE, 2 };
static const uint32_t xch[] = { IPUEF_DEBUG_NONE, 1 };

static struct ipuef_debug sample(void)
{
	return (struct ipuef_debug){ 3, nodes, 4, cs, 2, xch };
}

TEST(round_trip)
{
	struct ipuef_debug d = sample(), *back = NULL;
	char err[256];
	void *buf;
	size_t len;
	uint32_t i;

	REQUIRE(ipuef_debug_encode(&d, &buf, &len, err, sizeof(err)) == 0);
	REQUIRE(ipuef_debug_decode(buf, len, &back, err, sizeof(err)) == 0);
	CHECK_EQ_INT(back->num_nodes, 3);
	CHECK_EQ_INT(back->num_compute_sets, 4);
	CHECK_EQ_INT(back->num_exchanges, 2);
	for (i = 0; i < 3; i++) {
		CHECK(!strcmp(back->nodes[i].name, nodes[i].name));
		CHECK(!strcmp(back->nodes[i].op, nodes[i].op));
	}
	for (i = 0; i < 4; i++)
		CHECK(back->cs_node[i] == cs[i]);
	for (i = 0; i < 2; i++)
		CHECK(back->xch_node[i] == xch[i]);
	ipuef_debug_free(back);
	free(buf);
}

TEST(truncations_and_corruptions)
{
	struct ipuef_debug d = sample(), *back;
	char err[256];
	uint8_t *buf, *cp;
	size_t len, n, i;
	int refused = 0;

	REQUIRE(ipuef_debug_encode(&d, (void **)&buf, &len, err, sizeof(err)) == 0);
	cp = malloc(len);
	REQUIRE(cp);
	for (n = 0; n < len; n++) {
		memcpy(cp, buf, n);
		back = (struct ipuef_debug *)1;
		err[0] = 0;
		CHECK(ipuef_debug_decode(cp, n, &back, err, sizeof(err)) < 0);
		CHECK(back == NULL && err[0]);
	}
	for (i = 0; i < len; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			memcpy(cp, buf, len);
			cp[i] ^= (uint8_t)(1u << bit);
			back = NULL;
			if (ipuef_debug_decode(cp, len, &back, err, sizeof(err))) {
				refused++;
				CHECK(back == NULL);
				continue;
			}
			/* accepted: every index it hands out is in range */
			for (uint32_t k = 0; k < back->num_compute_sets; k++)
				CHECK(back->cs_node[k] == IPUEF_DEBUG_NONE || back->cs_node[k] < back->num_nodes);
			ipuef_debug_free(back);
		}
	}
	CHECK(refused > 0);
	free(cp);
	free(buf);
}

TEST(encoder_refuses)
{
	struct ipuef_debug d = sample();
	static const uint32_t bad_cs[] = { 0, 7 };
	static const struct ipuef_debug_node bad_name[] = { { "a\nb", "Add" } };
	static const struct ipuef_debug_node empty[] = { { "x", "" } };
	char err[256];
	void *buf = NULL;
	size_t len;

	d.cs_node = bad_cs;
	d.num_compute_sets = 2;
	CHECK(ipuef_debug_encode(&d, &buf, &len, err, sizeof(err)) == IPUEF_E_OPAQUE);
	CHECK(strstr(err, "compute set 1") != NULL);
	d = sample();
	d.nodes = bad_name;
	d.num_nodes = 1;
	d.num_compute_sets = 0;
	d.num_exchanges = 0;
	CHECK(ipuef_debug_encode(&d, &buf, &len, err, sizeof(err)) == IPUEF_E_STRING);
	d.nodes = empty;
	CHECK(ipuef_debug_encode(&d, &buf, &len, err, sizeof(err)) == IPUEF_E_STRING);
	CHECK(buf == NULL);
}

TEST(file_without_blob)
{
	/* a file with only the producer's opaque: no debug info, no error */
	struct ipuef_writer *w;
	struct ipuef_file *f;
	struct ipuef_debug *d = (struct ipuef_debug *)1;
	struct ipuef_program prog = { "main", 0 };
	struct ipuef_metadata md = { 1, 0, "ipu2", 1, 1024, 1, 1, &prog, 0, NULL };
	static const uint8_t exe[8];
	char err[256];
	void *mem;
	size_t len;

	REQUIRE(ipuef_writer_create(&w, err, sizeof(err)) == 0);
	REQUIRE(ipuef_writer_set_metadata(w, &md, err, sizeof(err)) == 0);
	REQUIRE(ipuef_writer_set_executable(w, exe, sizeof(exe), err, sizeof(err)) == 0);
	REQUIRE(ipuef_writer_add_opaque(w, "ipu-compile", "1", "{}", 2, err, sizeof(err)) == 0);
	REQUIRE(ipuef_writer_write_mem(w, &mem, &len, err, sizeof(err)) == 0);
	REQUIRE(ipuef_open_mem(mem, len, &f, err, sizeof(err)) == 0);
	CHECK(ipuef_debug_read(f, &d, err, sizeof(err)) == 0);
	CHECK(d == NULL);
	ipuef_close(f);
	free(mem);
	ipuef_writer_destroy(w);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(round_trip);
	RUN(truncations_and_corruptions);
	RUN(encoder_refuses);
	RUN(file_without_blob);
	return TH_DONE();
}
