// SPDX-License-Identifier: MIT
/*
 * test_state.c - device-resident state: a model that accumulates its input
 * into state across runs (checked against the same sums on the host),
 * reset, read back and written through the ModelRunner; the states the
 * .ipuef declares; the writer's rules for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "ipu/ipux.h"
#include "ipu/runtime.h"
#include "state_model.h"

#define DUMP IPURT_TEST_BUILD "/bin/ipuef-dump"

static char model_path[256];

static uint32_t rng = 12345u;	/* seeded: the same inputs every run */

static float next_input(void)
{
	rng = rng * 1664525u + 1013904223u;
	return (float)((int32_t)(rng >> 8) % 2001 - 1000) / 64.0f;
}

static struct ipurt_runner *open_runner(void)
{
	struct ipurt_config cfg;
	struct ipurt_runner *r = NULL;
	char err[512];

	ipurt_config_init(&cfg);
	if (ipurt_runner_create(model_path, &cfg, &r, err, sizeof(err)))
		fprintf(stderr, "  runner: %s\n", err);
	return r;
}

/* One run: Y = acc after adding x. */
static int step(struct ipurt_runner *r, const float *x, float *y)
{
	struct ipurt_tensor in = { "X", IPURT_DT_F32, 1, { SM_N }, (void *)x };
	struct ipurt_tensor out = { "Y", IPURT_DT_F32, 1, { SM_N }, y };
	char err[512];
	int rc = ipurt_runner_execute(r, &in, 1, &out, 1, err, sizeof(err));

	if (rc)
		fprintf(stderr, "  execute: %s\n", err);
	return rc;
}

TEST(accumulates_across_runs)
{
	struct ipurt_runner *r = open_runner();
	float host[SM_N] = { 0 }, x[SM_N], y[SM_N], acc[SM_N], count = 0;
	char err[512];

	REQUIRE(r);
	/* initial values: zeros, and count's tensor data */
	CHECK_EQ_INT(ipurt_runner_read_state(r, "acc", acc, sizeof(acc), err, sizeof(err)), 0);
	for (int i = 0; i < SM_N; i++)
		CHECK(acc[i] == 0.0f);
	CHECK_EQ_INT(ipurt_runner_read_state(r, "count", &count, 4, err, sizeof(err)), 0);
	CHECK(count == SM_COUNT0);
	for (int run = 0; run < 7; run++) {
		for (int i = 0; i < SM_N; i++) {
			x[i] = next_input();
			host[i] += x[i];
		}
		REQUIRE(step(r, x, y) == 0);
		CHECK_MSG(!memcmp(y, host, sizeof(host)), "run %d: Y differs from the host's sums", run);
	}
	CHECK_EQ_INT(ipurt_runner_read_state(r, "acc", acc, sizeof(acc), err, sizeof(err)), 0);
	CHECK(!memcmp(acc, host, sizeof(host)));
	CHECK_EQ_INT(ipurt_runner_read_state(r, "count", &count, 4, err, sizeof(err)), 0);
	CHECK(count == SM_COUNT0 + 7);
	/* reading does not disturb: the next run goes on from the same sums */
	for (int i = 0; i < SM_N; i++) {
		x[i] = next_input();
		host[i] += x[i];
	}
	REQUIRE(step(r, x, y) == 0);
	CHECK(!memcmp(y, host, sizeof(host)));
	ipurt_runner_destroy(r);
}

TEST(reset_restores_initial_values)
{
	struct ipurt_runner *r = open_runner();
	float x[SM_N], y[SM_N], acc[SM_N], count = 0;
	char err[512];

	REQUIRE(r);
	for (int i = 0; i < SM_N; i++)
		x[i] = next_input();
	REQUIRE(step(r, x, y) == 0);
	REQUIRE(step(r, x, y) == 0);
	CHECK_EQ_INT(ipurt_runner_reset_state(r, err, sizeof(err)), 0);
	CHECK_EQ_INT(ipurt_runner_read_state(r, "acc", acc, sizeof(acc), err, sizeof(err)), 0);
	for (int i = 0; i < SM_N; i++)
		CHECK(acc[i] == 0.0f);
	CHECK_EQ_INT(ipurt_runner_read_state(r, "count", &count, 4, err, sizeof(err)), 0);
	CHECK(count == SM_COUNT0);
	REQUIRE(step(r, x, y) == 0);
	CHECK(!memcmp(x, y, sizeof(x)));	/* 0 + x */
	ipurt_runner_destroy(r);
}

TEST(write_replaces_one_state_and_keeps_the_others)
{
	struct ipurt_runner *r = open_runner();
	float x[SM_N], y[SM_N], v[SM_N], count = 0;
	char err[512];

	REQUIRE(r);
	for (int i = 0; i < SM_N; i++) {
		x[i] = next_input();
		v[i] = (float)i * 0.5f - 3.0f;
	}
	REQUIRE(step(r, x, y) == 0);
	CHECK_EQ_INT(ipurt_runner_write_state(r, "acc", v, sizeof(v), err, sizeof(err)), 0);
	CHECK_EQ_INT(ipurt_runner_read_state(r, "count", &count, 4, err, sizeof(err)), 0);
	CHECK(count == SM_COUNT0 + 1);
	REQUIRE(step(r, x, y) == 0);
	for (int i = 0; i < SM_N; i++)
		CHECK(y[i] == v[i] + x[i]);
	count = 7.0f;
	CHECK_EQ_INT(ipurt_runner_write_state(r, "count", &count, 4, err, sizeof(err)), 0);
	REQUIRE(step(r, x, y) == 0);
	for (int i = 0; i < SM_N; i++)
		CHECK(y[i] == (v[i] + x[i]) + x[i]);
	CHECK_EQ_INT(ipurt_runner_read_state(r, "count", &count, 4, err, sizeof(err)), 0);
	CHECK(count == 8.0f);
	ipurt_runner_destroy(r);
}

TEST(state_errors_name_what_is_wrong)
{
	struct ipurt_runner *r = open_runner();
	float acc[SM_N];
	char err[512] = "";

	REQUIRE(r);
	CHECK_EQ_INT(ipurt_runner_read_state(r, "nope", acc, sizeof(acc), err, sizeof(err)),
		     IPURT_E_NAME);
	CHECK(strstr(err, "'nope'"));
	CHECK_EQ_INT(ipurt_runner_read_state(r, "acc", acc, 8, err, sizeof(err)), IPURT_E_SHAPE);
	CHECK(strstr(err, "64 bytes"));
	CHECK_EQ_INT(ipurt_runner_write_state(r, "X", acc, 64, err, sizeof(err)), IPURT_E_NAME);
	ipurt_runner_destroy(r);
}

TEST(file_declares_states_with_their_regions)
{
	struct ipuef_file *f = NULL;
	const struct ipuef_metadata *m;
	const struct ipuef_state *acc;
	char err[512];
	uint64_t sum = 0;

	REQUIRE(ipuef_open(model_path, &f, err, sizeof(err)) == 0);
	m = ipuef_metadata(f);
	CHECK_EQ_INT(m->num_states, 2);
	CHECK_EQ_INT(ipuef_blob(f, 0)->version, 2);	/* Metadata with a state table */
	acc = ipuef_find_state(f, "acc");
	REQUIRE(acc);
	CHECK(!ipuef_find_state(f, "X"));
	CHECK_EQ_INT(ipuef_state_bytes(acc), SM_N * 4);
	CHECK_EQ_INT(acc->num_regions, 2);
	CHECK_EQ_INT(acc->regions[0].tile, 1);
	CHECK_EQ_INT(acc->regions[1].tile, 2);
	for (uint32_t i = 0; i < acc->num_regions; i++)
		sum += acc->regions[i].bytes;
	CHECK_EQ_INT(sum, SM_N * 4);
	CHECK_EQ_INT(ipuef_find_state(f, "count")->init, IPUEF_STATE_INIT_DATA);
	ipuef_close(f);
}

/* stdout of `ipuef-dump [opt] model` (malloc'd), or NULL if it failed. */
static char *dump(const char *opt)
{
	char cmd[600];
	FILE *p;
	char *out = calloc(1, 65536);
	size_t n = 0;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s %s", DUMP, opt, model_path);
	p = popen(cmd, "r");
	if (!p || !out) {
		free(out);
		if (p)
			pclose(p);
		return NULL;
	}
	n = fread(out, 1, 65535, p);
	out[n] = 0;
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		free(out);
		return NULL;
	}
	return out;
}

TEST(ipuef_dump_lists_states)
{
	char *text = dump(""), *js = dump("--json");
	json_t *root = NULL, *states, *acc;
	json_error_t je;

	REQUIRE(text && js);
	CHECK(strstr(text, "States (device-resident, kept from run to run):\n  acc\n    f32 [16] (64 bytes), starts as zeros"));
	CHECK(strstr(text, "  count\n    f32 [1] (4 bytes), initial value from tensor data"));
	CHECK(strstr(text, "2 regions: tile 1 [") && strstr(text, "tile 2 ["));
	root = json_loads(js, 0, &je);
	REQUIRE(root);
	states = json_object_get(json_object_get(root, "metadata"), "states");
	CHECK(json_is_array(states) && json_array_size(states) == 2);
	acc = json_array_get(states, 0);
	CHECK(!strcmp(json_string_value(json_object_get(acc, "name")), "acc"));
	CHECK(!strcmp(json_string_value(json_object_get(acc, "init")), "zeros"));
	CHECK_EQ_INT(json_integer_value(json_object_get(acc, "bytes")), 64);
	CHECK_EQ_INT(json_array_size(json_object_get(acc, "regions")), 2);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(json_object_get(acc, "regions"), 1), "tile")), 2);
	json_decref(root);
	free(text);
	free(js);
}

/* Rewrite the model's metadata with one change; returns the writer's code. */
static int rewrite(void (*edit)(struct ipuef_metadata *, struct ipuef_state *,
				struct ipuef_region *, struct ipuef_program *), char *err,
		   size_t errlen, uint32_t *meta_version)
{
	struct ipuef_file *f = NULL;
	struct ipuef_writer *w = NULL;
	struct ipuef_metadata m;
	struct ipuef_state st[2];
	struct ipuef_region reg[16];
	struct ipuef_program pr[8];
	uint32_t nreg = 0;
	void *mem = NULL;
	size_t len;
	const void *img;
	int rc;

	if (ipuef_open(model_path, &f, err, errlen))
		return -1;
	m = *ipuef_metadata(f);
	memcpy(pr, m.programs, m.num_programs * sizeof(*pr));
	m.programs = pr;
	for (uint32_t i = 0; i < m.num_states; i++) {
		st[i] = m.states[i];
		memcpy(reg + nreg, st[i].regions, st[i].num_regions * sizeof(*reg));
		st[i].regions = reg + nreg;
		nreg += st[i].num_regions;
	}
	m.states = st;
	edit(&m, st, reg, pr);
	img = ipuef_executable(f, &len);
	rc = ipuef_writer_create(&w, err, errlen);
	if (!rc)
		rc = ipuef_writer_set_metadata(w, &m, err, errlen);
	if (!rc)
		rc = ipuef_writer_set_executable(w, img, len, err, errlen);
	for (uint32_t i = 0; !rc && i < ipuef_num_tensors(f); i++)
		rc = ipuef_writer_add_tensor(w, ipuef_tensor(f, i), err, errlen);
	if (!rc)
		rc = ipuef_writer_write_mem(w, &mem, &len, err, errlen);
	if (!rc && meta_version) {
		struct ipuef_file *g = NULL;

		rc = ipuef_open_mem(mem, len, &g, err, errlen);
		if (!rc)
			*meta_version = ipuef_blob(g, 0)->version;
		ipuef_close(g);
	}
	free(mem);
	ipuef_writer_destroy(w);
	ipuef_close(f);
	return rc;
}

static void no_read_program(struct ipuef_metadata *m, struct ipuef_state *s,
			    struct ipuef_region *r, struct ipuef_program *p)
{
	(void)s, (void)r, (void)p;
	m->num_programs = 2;	/* main, state_write */
}

static void short_regions(struct ipuef_metadata *m, struct ipuef_state *s,
			  struct ipuef_region *r, struct ipuef_program *p)
{
	(void)m, (void)s, (void)p;
	r[0].bytes -= 4;
}

static void stream_of_an_anchor(struct ipuef_metadata *m, struct ipuef_state *s,
				struct ipuef_region *r, struct ipuef_program *p)
{
	(void)r, (void)p;
	s[0].read_stream = m->anchors[1].stream_id;
}

static void name_of_an_anchor(struct ipuef_metadata *m, struct ipuef_state *s,
			      struct ipuef_region *r, struct ipuef_program *p)
{
	(void)m, (void)r, (void)p;
	s[0].name = "Y";
}

static void init_without_data(struct ipuef_metadata *m, struct ipuef_state *s,
			      struct ipuef_region *r, struct ipuef_program *p)
{
	(void)m, (void)r, (void)p;
	s[0].init = IPUEF_STATE_INIT_DATA;	/* no TensorData 'acc' */
}

static void unchanged(struct ipuef_metadata *m, struct ipuef_state *s,
		      struct ipuef_region *r, struct ipuef_program *p)
{
	(void)m, (void)s, (void)r, (void)p;
}

static void without_states(struct ipuef_metadata *m, struct ipuef_state *s,
			   struct ipuef_region *r, struct ipuef_program *p)
{
	(void)s, (void)r, (void)p;
	m->num_states = 0;
}

TEST(writer_refuses_malformed_states)
{
	char err[512] = "";
	uint32_t v = 0;

	CHECK_EQ_INT(rewrite(unchanged, err, sizeof(err), &v), 0);
	CHECK_EQ_INT(v, 2);
	/* a file without state stays Metadata version 1, readable by older readers */
	CHECK_EQ_INT(rewrite(without_states, err, sizeof(err), &v), 0);
	CHECK_EQ_INT(v, 1);
	CHECK_EQ_INT(rewrite(no_read_program, err, sizeof(err), NULL), IPUEF_E_PROGRAM);
	CHECK(strstr(err, "state_read"));
	CHECK_EQ_INT(rewrite(short_regions, err, sizeof(err), NULL), IPUEF_E_METADATA);
	CHECK(strstr(err, "regions hold 60 bytes, the state has 64"));
	CHECK_EQ_INT(rewrite(stream_of_an_anchor, err, sizeof(err), NULL), IPUEF_E_ANCHOR_STREAM);
	CHECK_EQ_INT(rewrite(name_of_an_anchor, err, sizeof(err), NULL), IPUEF_E_ANCHOR_NAME);
	CHECK_EQ_INT(rewrite(init_without_data, err, sizeof(err), NULL), IPUEF_E_TENSOR_MISSING);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int rc;

	TH_INIT(argc, argv);
	snprintf(model_path, sizeof(model_path), "%s/gen-state-%d.ipuef", dir, (int)getpid());
	if (sm_make_accumulator(model_path)) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	RUN(accumulates_across_runs);
	RUN(reset_restores_initial_values);
	RUN(write_replaces_one_state_and_keeps_the_others);
	RUN(state_errors_name_what_is_wrong);
	RUN(file_declares_states_with_their_regions);
	RUN(writer_refuses_malformed_states);
	RUN(ipuef_dump_lists_states);
	rc = TH_DONE();
	unlink(model_path);
	return rc;
}
