// SPDX-License-Identifier: MIT
/*
 * test_serve_pbtxt.c - config.pbtxt as Triton and its Poplar backend
 * write it: every field ipu-serve acts on mapped, the Poplar backend's
 * parameters, and the refusals with their messages (a field Triton does
 * not define, a wrong type, bad syntax: the protobuf library's words and
 * place; a Triton field not acted on: its path and line); then a
 * repository folder loaded with the model's declared inputs and outputs
 * checked, a folder with both config files refused, and the repository
 * poll (--model-control-mode=poll) looking at folders added, changed and
 * removed, one scan at a time.
 * Runs under ASan+UBSan in make check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "repo_poll.h"
#include "rt_models.h"
#include "serve.h"

static int parse(const char *t, struct srv_model_config *c, char *err)
{
	return srv_model_config_parse_pbtxt(t, strlen(t), "m", c, err, SRV_ERR);
}

/* The refusal's message holds every one of the words. */
static int refused(const char *t, const char *w1, const char *w2)
{
	struct srv_model_config c;
	char err[SRV_ERR];

	if (!parse(t, &c, err)) {
		fprintf(stderr, "accepted: %s\n", t);
		return 0;
	}
	if (!strstr(err, w1) || (w2 && !strstr(err, w2))) {
		fprintf(stderr, "message '%s' lacks '%s' / '%s'\n", err, w1, w2 ? w2 : "");
		return 0;
	}
	return 1;
}

TEST(pbtxt_full)
{
	struct srv_model_config c;
	char err[SRV_ERR];
	const char *t =
		"# every field acted on\n"
		"name: \"m\"\n"
		"backend: \"poplar\"\n"
		"max_batch_size: 16\n"
		"default_model_filename: \"executable.ipuef\"\n"
		"input [\n"
		"  { name: \"X\" data_type: TYPE_FP32 dims: [ 3 ] },\n"
		"  { name: \"I\" data_type: TYPE_INT64 dims: [ -1, 2 ] }\n"
		"]\n"
		"output { name: \"Y\" data_type: TYPE_FP16 dims: 3 dims: 4 }\n"
		"dynamic_batching {\n"
		"  preferred_batch_size: [ 4, 8 ]\n"
		"  max_queue_delay_microseconds: 500\n"
		"  default_queue_policy { max_queue_size: 7 }\n"
		"}\n"
		"instance_group [ { count: 2 kind: KIND_CPU }, { name: \"g\" kind: KIND_GPU } ]\n"
		"version_policy: { specific: { versions: [3, 1] } }\n"
		"parameters { key: \"synchronous_execution\" value: { string_value: \"true\" } }\n"
		"parameters [ { key: \"timeout_ns\" value: { string_value: \"250000000\" } } ]\n";

	if (parse(t, &c, err))
		fprintf(stderr, "%s\n", err);
	REQUIRE(parse(t, &c, err) == 0);
	CHECK(c.has_max_batch_size && c.max_batch_size == 16);
	CHECK(!strcmp(c.model_filename, "executable.ipuef"));
	CHECK_EQ_INT(c.num_inputs, 2);
	CHECK(!strcmp(c.inputs[0].name, "X"));
	CHECK_EQ_INT(c.inputs[0].dtype, IPURT_DT_F32);
	CHECK_EQ_INT(c.inputs[0].rank, 1);
	CHECK_EQ_INT(c.inputs[0].dims[0], 3);
	CHECK_EQ_INT(c.inputs[1].dtype, IPURT_DT_I64);
	CHECK_EQ_INT(c.inputs[1].dims[0], -1);
	CHECK_EQ_INT(c.inputs[1].dims[1], 2);
	CHECK_EQ_INT(c.num_outputs, 1);
	CHECK_EQ_INT(c.outputs[0].dtype, IPURT_DT_F16);
	CHECK_EQ_INT(c.outputs[0].rank, 2);
	CHECK_EQ_INT(c.outputs[0].dims[1], 4);
	CHECK(c.dynamic_batching);
	CHECK_EQ_INT(c.num_preferred, 2);
	CHECK_EQ_INT(c.preferred[1], 8);
	CHECK_EQ_INT(c.max_queue_delay_us, 500);
	CHECK(c.has_max_queue_size && c.max_queue_size == 7);
	/* a group without count is one instance, as in Triton */
	CHECK_EQ_INT(c.instance_count, 3);
	CHECK_EQ_INT(c.policy, SRV_POLICY_SPECIFIC);
	CHECK_EQ_INT(c.num_versions, 2);
	CHECK_EQ_INT(c.versions[0], 3);
	CHECK_EQ_INT(c.synchronous, 1);
	CHECK(c.has_timeout && c.timeout_ns == 250000000ull);
}

TEST(pbtxt_defaults)
{
	struct srv_model_config c;
	char err[SRV_ERR];

	/* an empty file: Triton's defaults (max_batch_size 0: no batching) */
	REQUIRE(parse("", &c, err) == 0);
	CHECK(c.has_max_batch_size && c.max_batch_size == 0);
	CHECK(!c.dynamic_batching);
	CHECK_EQ_INT(c.instance_count, 1);
	CHECK_EQ_INT(c.policy, SRV_POLICY_LATEST);
	CHECK_EQ_INT(c.latest_n, 1);
	CHECK_EQ_INT(c.synchronous, -1);
	CHECK(!c.has_timeout && !c.model_filename[0]);
	/* dynamic_batching {} enables it; latest {} is one version; all {} */
	REQUIRE(parse("max_batch_size: 4 dynamic_batching {} version_policy { latest {} }", &c, err) == 0);
	CHECK(c.dynamic_batching && c.num_preferred == 0);
	CHECK_EQ_INT(c.latest_n, 1);
	REQUIRE(parse("version_policy { latest { num_versions: 3 } }", &c, err) == 0);
	CHECK_EQ_INT(c.latest_n, 3);
	REQUIRE(parse("version_policy { all {} }", &c, err) == 0);
	CHECK_EQ_INT(c.policy, SRV_POLICY_ALL);
	/* platform ours; a field Triton defines written with its default changes nothing */
	REQUIRE(parse("platform: \"ipu_ipuef\" input { name: \"X\" data_type: TYPE_FP32 dims: 3 "
		      "format: FORMAT_NONE is_shape_tensor: false optional: false } runtime: \"\"",
		      &c, err) == 0);
	REQUIRE(parse("parameters { key: \"synchronous_execution\" value { string_value: \"0\" } }",
		      &c, err) == 0);
	CHECK_EQ_INT(c.synchronous, 0);
	REQUIRE(parse("parameters { key: \"timeout_ns\" value { string_value: \"0\" } }", &c, err) == 0);
	CHECK(c.has_timeout && c.timeout_ns == 0);
}

TEST(pbtxt_refusals)
{
	/* the library's own messages, with line and column */
	CHECK(refused("name: \"m\"\nmax_batchsize: 4\n", "line 2 column 14: ",
		      "no field named \"max_batchsize\""));
	CHECK(refused("max_batch_size: \"four\"\n", "line 1", "Expected integer"));
	CHECK(refused("max_batch_size: 4.5\n", "line 1", "Expected integer"));
	CHECK(refused("instance_group { kind: KIND_IPU }\n", "line 1", "KIND_IPU"));
	CHECK(refused("input { name: \"X\" data_type: TYPE_FP32 dims: [ 3 }\n", "line 1", "Expected"));
	CHECK(refused("dynamic_batching {\n  preferred_batch_size: 4\n", "line 3", NULL));
	CHECK(refused("max_batch_size: 4\nmax_batch_size: 8\n", "line 2", "specified multiple times"));
	CHECK(refused("dynamic_batching { } sequence_batching { }\n", "line 1", "oneof"));
	/* Triton fields not acted on: by path and line */
	CHECK(refused("name: \"m\"\n\noptimization { priority: PRIORITY_MAX }\n", "line 3: optimization is a field",
		      "does not act on"));
	CHECK(refused("input {\n  name: \"X\"\n  data_type: TYPE_FP32\n  dims: 3\n  reshape { shape: [3] }\n}\n",
		      "line 5: input.reshape", NULL));
	CHECK(refused("dynamic_batching {\n preserve_ordering: true\n}\n", "line 2: dynamic_batching.preserve_ordering",
		      NULL));
	CHECK(refused("instance_group [ { count: 1 gpus: [ 0 ] } ]\n", "instance_group.gpus", NULL));
	CHECK(refused("sequence_batching { }\n", "sequence_batching", "does not act on"));
	CHECK(refused("model_warmup [ { name: \"w\" } ]\n", "model_warmup", NULL));
	CHECK(refused("dynamic_batching { default_queue_policy { timeout_action: DELAY } }\n",
		      "dynamic_batching.default_queue_policy.timeout_action", NULL));
	CHECK(refused("response_cache { enable: true }\n", "response_cache", NULL));
	/* values, with the line of the field refused */
	CHECK(refused("name: \"m\"\ninstance_group [\n  { count: 1 },\n  { count: 65 }\n]\n",
		      "line 4: instance_group[1] count 65", NULL));
	CHECK(refused("input [\n  { name: \"X\" data_type: TYPE_FP32 dims: 3 },\n  { name: \"Z\"\n    "
		      "data_type: TYPE_FP32\n    dims: [ 1, -7 ] }\n]\n", "line 5: input 'Z': dims[1] is -7", NULL));
	CHECK(refused("\n\nmax_batch_size: -1\n", "line 3: max_batch_size -1", NULL));
	CHECK(refused("dynamic_batching {\n  max_queue_delay_microseconds: 60000001\n}\n",
		      "line 2: max_queue_delay_microseconds 60000001", NULL));
	CHECK(refused("name: \"other\"\n", "differs from the model's folder 'm'", NULL));
	CHECK(refused("backend: \"tensorrt\"\n", "backend 'tensorrt'", NULL));
	CHECK(refused("platform: \"tensorflow_savedmodel\"\n", "platform 'tensorflow_savedmodel'", NULL));
	CHECK(refused("max_batch_size: -1\n", "max_batch_size -1", NULL));
	CHECK(refused("input { name: \"X\" data_type: TYPE_STRING dims: 3 }\n", "TYPE_STRING", NULL));
	CHECK(refused("input { data_type: TYPE_FP32 dims: 3 }\n", "name is missing", NULL));
	CHECK(refused("input { name: \"X\" data_type: TYPE_FP32 dims: -2 }\n", "dims[0] is -2", NULL));
	CHECK(refused("input [ { name: \"X\" data_type: TYPE_FP32 }, { name: \"X\" data_type: TYPE_FP32 } ]\n",
		      "declared twice", NULL));
	CHECK(refused("output { name: \"Y\" data_type: TYPE_FP32 dims: [1,1,1,1,1,1,1,1,1] }\n", "9 dims", NULL));
	CHECK(refused("dynamic_batching { preferred_batch_size: 0 }\n", "preferred_batch_size 0", NULL));
	CHECK(refused("instance_group { count: 65 }\n", "count 65", NULL));
	CHECK(refused("instance_group { kind: KIND_MODEL }\n", "KIND_AUTO, KIND_CPU or KIND_GPU", NULL));
	CHECK(refused("version_policy { specific { } }\n", "needs versions", NULL));
	CHECK(refused("default_model_filename: \"../x.ipuef\"\n", "default_model_filename", NULL));
	CHECK(refused("parameters { key: \"batching\" value { string_value: \"1\" } }\n",
		      "key 'batching'", "synchronous_execution, timeout_ns"));
	CHECK(refused("parameters { key: \"synchronous_execution\" value { string_value: \"yes\" } }\n",
		      "'yes' is not true or false", NULL));
	CHECK(refused("parameters { key: \"timeout_ns\" value { string_value: \"-5\" } }\n",
		      "timeout_ns: string_value '-5'", NULL));
	CHECK(refused("parameters { key: \"timeout_ns\" value { string_value: \"1\" other: 2 } }\n",
		      "no field named \"other\"", NULL));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
}

/* A repository folder holding the affine model ([4, 3] batched on dim 0). */
static void make_repo(char *dir, const char *config_name, const char *config)
{
	char path[512];

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/m", dir);
	REQUIRE(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/m/1", dir);
	REQUIRE(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/m/1/executable.ipuef", dir);
	REQUIRE(rt_make_affine(path) == 0);
	snprintf(path, sizeof(path), "%s/m/%s", dir, config_name);
	write_file(path, config);
}

static void remove_repo(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/m/1/executable.ipuef", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/m/config.pbtxt", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/m/config.yaml", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/m/1", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/m", dir);
	rmdir(path);
	rmdir(dir);
}

/* Load the folder; 0, or the status with the message in err. */
static int load(const char *config, char *err)
{
	char dir[] = "/tmp/test-pbtxt-XXXXXX";
	struct srv_load_opts o = { 0 };
	struct srv_repo *r;
	int rc;

	make_repo(dir, "config.pbtxt", config);
	o.default_max_queue = 8;
	if (srv_repo_create(dir, &o, &r, err, SRV_ERR)) {
		remove_repo(dir);
		return -1;
	}
	rc = srv_repo_load(r, "m", err, SRV_ERR);
	if (!rc) {
		struct srv_model *m = srv_repo_get(r, "m", -1, err, SRV_ERR);

		CHECK(m != NULL);
		if (m) {
			CHECK(!strcmp(m->path + strlen(m->path) - 16, "executable.ipuef"));
			srv_repo_put(r, m);
		}
	}
	srv_repo_destroy(r);
	remove_repo(dir);
	return rc;
}

TEST(pbtxt_repository)
{
	char err[SRV_ERR];
	const char *base = "name: \"m\" backend: \"poplar\" default_model_filename: \"executable.ipuef\"\n";
	char t[1024];

	/* declared as the model has them: dims without the batch dim */
	snprintf(t, sizeof(t), "%smax_batch_size: 8\n"
		 "input [ { name: \"X\" data_type: TYPE_FP32 dims: [ 3 ] } ]\n"
		 "output [ { name: \"Y\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
		 "dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }\n"
		 "instance_group [ { count: 2 kind: KIND_CPU } ]\n"
		 "parameters { key: \"timeout_ns\" value { string_value: \"5000000000\" } }\n"
		 "parameters { key: \"synchronous_execution\" value { string_value: \"1\" } }\n", base);
	CHECK_MSG(load(t, err) == 0, "%s", err);
	/* no batching: the whole shape */
	snprintf(t, sizeof(t), "%smax_batch_size: 0\ninput { name: \"X\" data_type: TYPE_FP32 dims: [ 4, 3 ] }\n", base);
	CHECK_MSG(load(t, err) == 0, "%s", err);
	/* outputs may be left out; inputs not */
	snprintf(t, sizeof(t), "%smax_batch_size: 4\noutput { name: \"Y\" data_type: TYPE_FP32 dims: 3 }\n", base);
	CHECK_MSG(load(t, err) == 0, "%s", err);
	snprintf(t, sizeof(t), "%smax_batch_size: 4\ninput { name: \"X\" data_type: TYPE_FP16 dims: 3 }\n", base);
	CHECK(load(t, err) != 0 && strstr(err, "input 'X': data_type TYPE_FP16, the model's is TYPE_FP32"));
	snprintf(t, sizeof(t), "%smax_batch_size: 4\ninput { name: \"X\" data_type: TYPE_FP32 dims: [ 4, 3 ] }\n", base);
	CHECK(load(t, err) != 0 && strstr(err, "dims [4, 3], the model's are [3] (without the batch"));
	snprintf(t, sizeof(t), "%smax_batch_size: 4\ninput { name: \"Z\" data_type: TYPE_FP32 dims: 3 }\n", base);
	CHECK(load(t, err) != 0 && strstr(err, "input 'Z' is not one of the model's inputs"));
	snprintf(t, sizeof(t), "%smax_batch_size: 4\noutput { name: \"Q\" data_type: TYPE_FP32 dims: 3 }\n", base);
	CHECK(load(t, err) != 0 && strstr(err, "output 'Q' is not one of the model's outputs"));
	/* the file named in the error */
	CHECK(load("name: \"m\"\nbogus: 1\n", err) != 0 && strstr(err, "config.pbtxt: line 2 column 6: Message type \"inference.ModelConfig\" has no field named \"bogus\""));
	/* without default_model_filename the version has no model.ipuef */
	CHECK(load("name: \"m\"\n", err) != 0 && strstr(err, "no version to serve"));
}

TEST(pbtxt_and_yaml)
{
	char dir[] = "/tmp/test-pbtxt-XXXXXX", path[512], err[SRV_ERR];
	struct srv_model_config c;

	make_repo(dir, "config.pbtxt", "max_batch_size: 4\n");
	snprintf(path, sizeof(path), "%s/m/config.yaml", dir);
	write_file(path, "max_batch_size: 4\n");
	snprintf(path, sizeof(path), "%s/m", dir);
	CHECK(srv_model_config_read(path, "m", &c, err, sizeof(err)) != 0);
	CHECK(strstr(err, "has both config.pbtxt and config.yaml") != NULL);
	snprintf(path, sizeof(path), "%s/m/config.yaml", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/m", dir);
	CHECK(srv_model_config_read(path, "m", &c, err, sizeof(err)) == 0);
	CHECK(c.has_max_batch_size && c.max_batch_size == 4);
	remove_repo(dir);
}

static void put_model(const char *repo, const char *name, int version, const char *config)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", repo, name);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%d", repo, name, version);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%d/model.ipuef", repo, name, version);
	REQUIRE(rt_make_affine(path) == 0);
	if (config) {
		/* written aside and renamed into place, as a deployment does */
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%s/%s/.config", repo, name);
		write_file(tmp, config);
		snprintf(path, sizeof(path), "%s/%s/config.pbtxt", repo, name);
		REQUIRE(rename(tmp, path) == 0);
	}
}

static void drop_model(const char *repo, const char *name, int maxver)
{
	char path[512];

	for (int v = 1; v <= maxver; v++) {
		snprintf(path, sizeof(path), "%s/%s/%d/model.ipuef", repo, name, v);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s/%d", repo, name, v);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/%s/config.pbtxt", repo, name);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", repo, name);
	REQUIRE(rmdir(path) == 0);
}

TEST(poll_scan)
{
	char dir[] = "/tmp/test-poll-XXXXXX", err[SRV_ERR];
	struct srv_load_opts o = { 0 };
	struct srv_model *held, *m;
	struct srv_repo *r;
	struct srv_poll *p;
	char *index;

	REQUIRE(mkdtemp(dir) != NULL);
	put_model(dir, "a", 1, "max_batch_size: 4\n");
	o.default_max_queue = 8;
	REQUIRE(srv_repo_create(dir, &o, &r, err, sizeof(err)) == 0);
	REQUIRE(srv_poll_create(r, dir, 0, &p, err, sizeof(err)) == 0);
	REQUIRE(srv_repo_load_all(r, err, sizeof(err)) == 0);
	held = srv_repo_get(r, "a", -1, err, sizeof(err));
	REQUIRE(held != NULL);
	/* nothing changed: nothing reloaded */
	srv_poll_scan(p);
	m = srv_repo_get(r, "a", -1, err, sizeof(err));
	CHECK(m == held);
	srv_repo_put(r, m);
	/* added */
	put_model(dir, "b", 1, NULL);
	srv_poll_scan(p);
	m = srv_repo_get(r, "b", -1, err, sizeof(err));
	CHECK(m != NULL);
	if (m)
		srv_repo_put(r, m);
	/* a new version: served at once, the held one still whole */
	put_model(dir, "a", 2, NULL);
	srv_poll_scan(p);
	m = srv_repo_get(r, "a", -1, err, sizeof(err));
	REQUIRE(m != NULL);
	CHECK_EQ_INT(m->version, 2);
	CHECK_EQ_INT(held->version, 1);
	CHECK(!strcmp(held->name, "a") && held->max_batch == 4);
	srv_repo_put(r, held);
	srv_repo_put(r, m);
	/* a changed config */
	put_model(dir, "a", 2, "max_batch_size: 2\n");
	srv_poll_scan(p);
	m = srv_repo_get(r, "a", -1, err, sizeof(err));
	REQUIRE(m != NULL);
	CHECK_EQ_INT(m->max_batch, 2);
	held = m;
	/* a refused change: the versions serving stay, the reason is kept */
	put_model(dir, "a", 2, "max_batch_size: 2\nmodel_warmup { name: \"w\" }\n");
	srv_poll_scan(p);
	m = srv_repo_get(r, "a", -1, err, sizeof(err));
	CHECK(m == held);
	if (m)
		srv_repo_put(r, m);
	srv_repo_put(r, held);
	index = srv_repo_index_json(r, 0);
	REQUIRE(index != NULL);
	CHECK(strstr(index, "\"READY\"") != NULL);
	free(index);
	/* removed */
	drop_model(dir, "b", 1);
	srv_poll_scan(p);
	CHECK(srv_repo_get(r, "b", -1, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "not loaded") != NULL || strstr(err, "unknown model") != NULL);
	/* the thread starts and stops cleanly */
	REQUIRE(srv_poll_start(p, 1, err, sizeof(err)) == 0);
	srv_poll_destroy(p);
	srv_repo_destroy(r);
	drop_model(dir, "a", 2);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(pbtxt_full);
	RUN(pbtxt_defaults);
	RUN(pbtxt_refusals);
	RUN(pbtxt_repository);
	RUN(pbtxt_and_yaml);
	RUN(poll_scan);
	return TH_DONE();
}
