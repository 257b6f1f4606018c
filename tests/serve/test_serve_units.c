// SPDX-License-Identifier: MIT
/*
 * test_serve_units.c - ipu-serve's pieces without HTTP: config.yaml with
 * Triton's fields (and its refusals, naming field and line), merging and
 * splitting batches along any dimension against an index-by-index
 * reference, the v2 datatype names, the memory budget of JSON parses,
 * a generation taken out of the queue when its client goes away, the
 * gRPC service's answers to malformed and unknown calls and its status
 * codes.
 * Runs under ASan+UBSan in make check.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "grpc_server.h"
#include "harness.h"
#include "json_budget.h"
#include "kserve/grpc_predict_v2.pb-c.h"
#include "serve.h"
#include "shm.h"

static int parse(const char *y, struct srv_model_config *c, char *err)
{
	return srv_model_config_parse(y, strlen(y), "m", c, err, SRV_ERR);
}

TEST(config_full)
{
	struct srv_model_config c;
	char err[SRV_ERR];
	const char *y =
		"name: m\n"
		"backend: ipu\n"
		"max_batch_size: 16\n"
		"dynamic_batching:\n"
		"  preferred_batch_size: [4, 8]\n"
		"  max_queue_delay_microseconds: 500\n"
		"  default_queue_policy: { max_queue_size: 7 }\n"
		"instance_group:\n"
		"  - count: 2\n"
		"    kind: KIND_AUTO\n"
		"  - { count: 1 }\n"
		"version_policy: { specific: { versions: [3, 1] } }\n";

	REQUIRE(parse(y, &c, err) == 0);
	CHECK(c.has_max_batch_size && c.max_batch_size == 16);
	CHECK(c.dynamic_batching);
	CHECK_EQ_INT(c.num_preferred, 2);
	CHECK_EQ_INT(c.preferred[1], 8);
	CHECK_EQ_INT(c.max_queue_delay_us, 500);
	CHECK(c.has_max_queue_size && c.max_queue_size == 7);
	CHECK_EQ_INT(c.instance_count, 3);
	CHECK_EQ_INT(c.policy, SRV_POLICY_SPECIFIC);
	CHECK_EQ_INT(c.num_versions, 2);
	CHECK_EQ_INT(c.versions[0], 3);
}

TEST(config_defaults)
{
	struct srv_model_config c;
	char err[SRV_ERR];

	REQUIRE(parse("", &c, err) == 0);
	CHECK(!c.has_max_batch_size && !c.dynamic_batching);
	CHECK_EQ_INT(c.instance_count, 1);
	CHECK_EQ_INT(c.policy, SRV_POLICY_LATEST);
	CHECK_EQ_INT(c.latest_n, 1);
	REQUIRE(parse("dynamic_batching:\nversion_policy: { all: {} }\n", &c, err) == 0);
	CHECK(c.dynamic_batching);
	CHECK_EQ_INT(c.policy, SRV_POLICY_ALL);
	REQUIRE(parse("version_policy:\n  latest:\n    num_versions: 3\n", &c, err) == 0);
	CHECK_EQ_INT(c.latest_n, 3);
}

TEST(config_refusals)
{
	static const struct {
		const char *yaml, *msg;
	} cases[] = {
		{ "max_batch_sise: 4\n", "line 1: unknown field 'max_batch_sise'" },
		{ "max_batch_size: -1\n", "max_batch_size must be a whole number" },
		{ "max_batch_size: 4x\n", "got '4x'" },
		{ "max_batch_size: 99999999999999999999999\n", "whole number" },
		{ "name: other\n", "differs from the model's folder 'm'" },
		{ "backend: onnxruntime\n", "ipu-serve runs .ipuef models" },
		{ "dynamic_batching: 5\n", "dynamic_batching must be a mapping" },
		{ "dynamic_batching: { preferred_batch_size: [0] }\n", "at least 1" },
		{ "dynamic_batching: { delay: 1 }\n", "dynamic_batching: unknown field 'delay'" },
		{ "instance_group: [ { count: 0 } ]\n", "count must be at least 1" },
		{ "instance_group: [ { kind: KIND_GPU } ]\n", "KIND_GPU" },
		{ "instance_group: { count: 1 }\n", "instance_group must be a list" },
		{ "version_policy: { newest: {} }\n", "unknown policy 'newest'" },
		{ "version_policy: { latest: {}, all: {} }\n", "exactly one" },
		{ "version_policy: { specific: { versions: [] } }\n", "needs versions" },
		{ "a: [\n", "line" },
		{ "- 1\n- 2\n", "must be a mapping" },
	};
	struct srv_model_config c;
	char err[SRV_ERR];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		CHECK_MSG(parse(cases[i].yaml, &c, err) != 0, "accepted: %s", cases[i].yaml);
		CHECK_MSG(strstr(err, cases[i].msg) != NULL, "'%s' -> '%s', want '%s'", cases[i].yaml,
			  err, cases[i].msg);
	}
}

TEST(batch_roundtrip_any_dim)
{
	/* rank-3 tensors [2, 4, 3] with rows along dim 0, 1 or 2 */
	static const uint64_t rows[] = { 1, 3, 2, 5 };
	uint32_t bd, n = 4, j;

	for (bd = 0; bd < 3; bd++) {
		uint64_t total = 0, off, base[3] = { 2, 4, 3 };
		struct ipurt_tensor parts[4], merged;
		int32_t *m;

		for (j = 0; j < n; j++)
			total += rows[j];
		memset(&merged, 0, sizeof(merged));
		merged.dtype = IPURT_DT_I32;
		merged.rank = 3;
		memcpy(merged.dims, base, sizeof(base));
		merged.dims[bd] = total;
		m = calloc(srv_tensor_bytes(&merged) / 4, 4);
		REQUIRE(m);
		for (j = 0; j < n; j++) {
			uint64_t i, cnt;

			parts[j] = merged;
			parts[j].dims[bd] = rows[j];
			cnt = srv_tensor_bytes(&parts[j]) / 4;
			parts[j].data = malloc(cnt * 4);
			REQUIRE(parts[j].data);
			for (i = 0; i < cnt; i++)
				((int32_t *)parts[j].data)[i] = (int32_t)(j * 1000000 + i);
		}
		for (j = 0, off = 0; j < n; off += rows[j], j++)
			srv_batch_gather(m, total, off, &parts[j], bd);
		/* reference: element (a, b, c) of the merged tensor by coordinates */
		{
			uint64_t a, b, c, idx = 0, bad = 0;

			for (a = 0; a < merged.dims[0]; a++)
				for (b = 0; b < merged.dims[1]; b++)
					for (c = 0; c < merged.dims[2]; c++, idx++) {
						uint64_t co[3] = { a, b, c }, r = co[bd], p = 0, pi;

						while (r >= rows[p])
							r -= rows[p++];
						co[bd] = r;
						pi = (co[0] * parts[p].dims[1] + co[1]) * parts[p].dims[2] + co[2];
						bad += m[idx] != (int32_t)(p * 1000000 + pi);
					}
			CHECK_MSG(bad == 0, "dim %u: %llu elements misplaced", bd, (unsigned long long)bad);
		}
		/* and back: scatter into fresh buffers gives each part its own values */
		for (j = 0, off = 0; j < n; off += rows[j], j++) {
			struct ipurt_tensor back = parts[j];
			uint64_t cnt = srv_tensor_bytes(&back) / 4, i;

			back.data = calloc(cnt, 4);
			REQUIRE(back.data);
			srv_batch_scatter(m, total, off, &back, bd);
			for (i = 0; i < cnt; i++)
				if (((int32_t *)back.data)[i] != ((int32_t *)parts[j].data)[i])
					break;
			CHECK_MSG(i == cnt, "dim %u part %u differs at %llu", bd, j, (unsigned long long)i);
			free(back.data);
			free(parts[j].data);
		}
		free(m);
	}
}

TEST(dtype_names)
{
	uint32_t dt;

	for (dt = 1; dt < IPURT_DT_COUNT; dt++) {
		const char *n = srv_dtype_to_v2(dt);

		REQUIRE(n);
		CHECK_EQ_INT(srv_dtype_from_v2(n), dt);
	}
	CHECK_EQ_INT(srv_dtype_from_v2("FP64"), IPURT_DT_INVALID);
	CHECK_EQ_INT(srv_dtype_from_v2("BYTES"), IPURT_DT_INVALID);
	CHECK_EQ_INT(srv_dtype_from_v2("fp32"), IPURT_DT_INVALID);
	CHECK(srv_dtype_to_v2(0) == NULL);
}

/* "[0,0,...,0]" with n elements */
static char *zeros(size_t n, size_t *len)
{
	char *t = malloc(2 * n + 2);
	size_t i;

	if (!t)
		return NULL;
	t[0] = '[';
	for (i = 0; i < n; i++) {
		t[1 + 2 * i] = '0';
		t[2 + 2 * i] = i + 1 < n ? ',' : ']';
	}
	*len = 2 * n + 1;
	return t;
}

TEST(json_budget)
{
	struct srv_json_budget b = { .limit = 4u << 20 };
	struct srv_json_doc a, d;
	char err[SRV_ERR], *big, *text;
	size_t len, tl;

	/* a body of 2 MB, far under a byte limit of 4 MiB, parses into more */
	big = zeros(1000000, &len);
	REQUIRE(big);
	CHECK_EQ_INT(srv_json_parse(&b, big, len, 0, &d, err, sizeof(err)), 413);
	CHECK(strstr(err, "--max-json-memory") != NULL);
	srv_json_release(&d);
	CHECK_EQ_INT(atomic_load(&b.used), 0);
	CHECK(atomic_load(&b.peak) <= b.limit);
	/* one that fits alone, while another holds most of the budget: 503 */
	CHECK_EQ_INT(srv_json_parse(&b, big, 2 * 50000 + 1, 0, &a, err, sizeof(err)), 400); /* cut: malformed */
	srv_json_release(&a);
	big[2 * 50000] = ']';
	REQUIRE(srv_json_parse(&b, big, 2 * 50000 + 1, 0, &a, err, sizeof(err)) == 0);
	CHECK_EQ_INT(json_array_size(a.root), 50000);
	CHECK(atomic_load(&b.used) > 0);
	b.limit = atomic_load(&b.used) + (1u << 20);
	CHECK_EQ_INT(srv_json_parse(&b, big, 2 * 50000 + 1, 0, &d, err, sizeof(err)), 503);
	srv_json_release(&d);
	srv_json_release(&a);
	CHECK_EQ_INT(atomic_load(&b.used), 0);
	REQUIRE(srv_json_parse(&b, big, 2 * 50000 + 1, 0, &d, err, sizeof(err)) == 0);
	/* text of the C library's malloc: free() takes it */
	text = srv_json_text(d.root, JSON_COMPACT, &tl);
	REQUIRE(text);
	CHECK_EQ_INT(tl, 2 * 50000 + 1);
	CHECK(!memcmp(text, big, tl));
	free(text);
	srv_json_release(&d);
	CHECK_EQ_INT(atomic_load(&b.used), 0);
	free(big);
}

/*
 * A stream whose client went away takes its generation out of the queue
 * (completed as cancelled, the others keep their order), and a cancelled
 * generation that a worker takes anyway never touches the device.
 */
TEST(gen_withdraw)
{
	struct srv_model m = { 0 };
	struct srv_request *a = srv_request_new(), *g = srv_request_new(), *b = srv_request_new();
	struct srv_metrics met;
	uint32_t queued, executing;
	char err[SRV_ERR];

	REQUIRE(a && g && b);
	g->gen = calloc(1, sizeof(*g->gen));
	REQUIRE(g->gen);
	m.name = "m";
	m.max_queue = 8;
	pthread_mutex_init(&m.lock, NULL);
	pthread_cond_init(&m.cond, NULL);
	CHECK_EQ_INT(srv_model_submit(&m, a, err, sizeof(err)), 0);
	CHECK_EQ_INT(srv_model_submit(&m, g, err, sizeof(err)), 0);
	CHECK_EQ_INT(srv_model_submit(&m, b, err, sizeof(err)), 0);
	srv_gen_cancel(g);
	srv_model_withdraw(&m, g);
	CHECK(g->done);
	CHECK_EQ_INT(g->status, IPURT_E_CANCELLED);
	CHECK_EQ_INT(m.queued, 2);
	CHECK(m.head == a && a->next == b && m.tail == b && !b->next);
	srv_model_wait(&m, g);
	srv_model_metrics(&m, &met, &queued, &executing);
	CHECK_EQ_INT(met.failure, 1);
	CHECK_EQ_INT(queued, 2);
	CHECK_EQ_INT(m.stats.fail.count, 1);
	CHECK_EQ_INT(m.stats.fail_reason[SRV_FAIL_CANCELED], 1);
	CHECK_EQ_INT(m.stats.success.count, 0);
	/* the tail, then a request no longer queued: nothing else moves */
	srv_model_withdraw(&m, b);
	CHECK(m.head == a && m.tail == a && !a->next);
	srv_model_withdraw(&m, g);
	CHECK_EQ_INT(m.queued, 1);
	srv_model_withdraw(&m, a);
	CHECK(!m.head && !m.tail && m.queued == 0);
	/* cancelled before a slot took it: the batch loop skips it, no token made */
	CHECK(srv_gen_cancelled(g));
	CHECK_EQ_INT(g->gen->ntokens, 0);
	srv_request_free(a);
	srv_request_free(g);
	srv_request_free(b);
	pthread_cond_destroy(&m.cond);
	pthread_mutex_destroy(&m.lock);
}

/*
 * The statistics: batch sizes tabled in order whatever order they come in,
 * a copy that owns its table, a request's phases adding up to its time,
 * refusals counted by reason.
 */
TEST(stats_table)
{
	static const uint64_t sizes[] = { 8, 1, 3, 8, 2, 1, 8 };
	struct srv_stats s = { 0 }, c;
	struct srv_model m = { 0 };
	uint32_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		srv_stats_batch(&s, sizes[i], 1, 10 * sizes[i], 100);
	REQUIRE(s.nbatch == 4);
	CHECK_EQ_INT(s.batch[0].batch_size, 1);
	CHECK_EQ_INT(s.batch[1].batch_size, 2);
	CHECK_EQ_INT(s.batch[2].batch_size, 3);
	CHECK_EQ_INT(s.batch[3].batch_size, 8);
	CHECK_EQ_INT(s.batch[3].compute_infer.count, 3);
	CHECK_EQ_INT(s.batch[3].compute_infer.ns, 240);
	CHECK_EQ_INT(s.batch[0].compute_output.ns, 200);
	CHECK_EQ_INT(s.batch_dropped, 0);
	/* more sizes than the first table holds: it grows */
	for (i = 100; i > 90; i--)
		srv_stats_batch(&s, i, 0, 0, 0);
	CHECK_EQ_INT(s.nbatch, 14);
	for (i = 1; i < s.nbatch; i++)
		CHECK(s.batch[i - 1].batch_size < s.batch[i].batch_size);
	srv_stats_success(&s, 1111, 1000, 100, 10, 1);
	srv_stats_failure(&s, SRV_FAIL_BACKEND, 7);
	CHECK_EQ_INT(s.success.ns, s.queue.ns + s.compute_input.ns + s.compute_infer.ns + s.compute_output.ns);
	CHECK_EQ_INT(s.fail.count, 1);
	CHECK(s.last_inference_ms > 1700000000000ull);
	REQUIRE(srv_stats_copy(&c, &s) == 0);
	CHECK(c.batch != s.batch && c.nbatch == s.nbatch);
	CHECK(!memcmp(c.batch, s.batch, s.nbatch * sizeof(*s.batch)));
	srv_stats_fini(&s);
	CHECK_EQ_INT(c.batch[13].batch_size, 100);
	srv_stats_fini(&c);
	/* refused before the queue: 503 is REJECTED, anything else OTHER */
	pthread_mutex_init(&m.lock, NULL);
	srv_model_refused(&m, 503, srv_now_ns());
	srv_model_refused(&m, 400, srv_now_ns());
	srv_model_refused(&m, 413, srv_now_ns());
	CHECK_EQ_INT(m.stats.fail.count, 3);
	CHECK_EQ_INT(m.stats.fail_reason[SRV_FAIL_REJECTED], 1);
	CHECK_EQ_INT(m.stats.fail_reason[SRV_FAIL_OTHER], 2);
	CHECK_EQ_INT(m.stats.success.count, 0);
	pthread_mutex_destroy(&m.lock);
}

/*
 * Shared-memory regions: names and keys checked, windows bounded by the
 * region and the object, a region unregistered while a request holds it
 * still readable and writable until released.
 */
TEST(shm_regions)
{
	struct srv_shm *s = srv_shm_create(2);
	struct srv_shm_region *a, *b;
	char key[64], err[SRV_ERR], buf[8];
	int fd;

	REQUIRE(s);
	snprintf(key, sizeof(key), "/ipu-serve-units-%d", (int)getpid());
	fd = shm_open(key, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, 256) == 0);
	REQUIRE(pwrite(fd, "abcdefgh", 8, 100) == 8);
	CHECK_EQ_INT(srv_shm_register(s, "a", key, 96, 64, err, sizeof(err)), 0);
	CHECK_EQ_INT(srv_shm_register(s, "a", key, 0, 1, err, sizeof(err)), 400);
	CHECK(strstr(err, "already registered") != NULL);
	CHECK_EQ_INT(srv_shm_register(s, "b", key, 200, 57, err, sizeof(err)), 400);
	CHECK(strstr(err, "beyond the end") != NULL);
	CHECK_EQ_INT(srv_shm_register(s, "a/b", key, 0, 1, err, sizeof(err)), 400);
	CHECK_EQ_INT(srv_shm_register(s, "b", "/x/y", 0, 1, err, sizeof(err)), 400);
	CHECK_EQ_INT(srv_shm_register(s, "b", key, UINT64_MAX, 2, err, sizeof(err)), 400);
	CHECK_EQ_INT(srv_shm_register(s, "b", key, 0, 256, err, sizeof(err)), 0);
	CHECK_EQ_INT(srv_shm_register(s, "c", key, 0, 1, err, sizeof(err)), 400);
	CHECK(strstr(err, "2 regions") != NULL);
	CHECK_EQ_INT(srv_shm_count(s), 2);
	CHECK(srv_shm_acquire(s, "a", 60, 5, err, sizeof(err)) == NULL);
	CHECK(srv_shm_acquire(s, "a", UINT64_MAX, 1, err, sizeof(err)) == NULL);
	CHECK(srv_shm_acquire(s, "zz", 0, 1, err, sizeof(err)) == NULL);
	a = srv_shm_acquire(s, "a", 4, 8, err, sizeof(err));
	REQUIRE(a);
	CHECK_EQ_INT(srv_shm_unregister(s, "a"), 1);
	CHECK_EQ_INT(srv_shm_unregister(s, "a"), 0);
	CHECK(srv_shm_acquire(s, "a", 4, 8, err, sizeof(err)) == NULL);
	/* gone by name, still held: its descriptor works */
	CHECK_EQ_INT(srv_shm_read(a, 4, buf, 8, err, sizeof(err)), 0);
	CHECK(!memcmp(buf, "abcdefgh", 8));
	CHECK_EQ_INT(srv_shm_write(a, 4, "ABCDEFGH", 8, err, sizeof(err)), 0);
	srv_shm_release(s, a);
	b = srv_shm_acquire(s, "b", 100, 8, err, sizeof(err));
	REQUIRE(b);
	CHECK_EQ_INT(srv_shm_read(b, 100, buf, 8, err, sizeof(err)), 0);
	CHECK(!memcmp(buf, "ABCDEFGH", 8));
	/* shrunk by its owner: an error, never a fault, and never regrown */
	REQUIRE(ftruncate(fd, 50) == 0);
	CHECK_EQ_INT(srv_shm_read(b, 100, buf, 8, err, sizeof(err)), 400);
	CHECK(strstr(err, "shrunk") != NULL);
	CHECK_EQ_INT(srv_shm_write(b, 100, buf, 8, err, sizeof(err)), 400);
	{
		struct stat st;

		CHECK(fstat(fd, &st) == 0 && st.st_size == 50);
	}
	srv_shm_release(s, b);
	CHECK_EQ_INT(srv_shm_unregister(s, NULL), 1);
	CHECK_EQ_INT(srv_shm_count(s), 0);
	srv_shm_destroy(s);
	close(fd);
	shm_unlink(key);
}

/* gRPC calls that never reach a model: health, metadata, refusals. */
TEST(grpc_dispatch)
{
	static const char *const rpcs[] = { "ModelInfer", "ModelMetadata", "ModelReady", "ServerLive",
					    "ServerReady", "ServerMetadata", "ModelStatistics", "ModelConfig" };
	static const uint8_t junk[][6] = { { 0xff, 0xff, 0xff, 0xff }, { 0x0a, 0x05, 'a', 'b' },
					   { 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f } };
	struct srv_http h;
	Inference__ServerMetadataResponse *md;
	Inference__ServerReadyResponse *rd;
	char err[SRV_ERR], method[128];
	uint8_t *out;
	size_t len, i, j;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < sizeof(rpcs) / sizeof(rpcs[0]); i++) {
		snprintf(method, sizeof(method), "/inference.GRPCInferenceService/%s", rpcs[i]);
		for (j = 0; j < sizeof(junk) / sizeof(junk[0]); j++) {
			CHECK_EQ_INT(srv_grpc_dispatch(&h, method, junk[j], 6, &out, &len, err, sizeof(err)), 400);
			CHECK(!out && strstr(err, "protobuf"));
		}
	}
	CHECK_EQ_INT(srv_grpc_dispatch(&h, "/inference.GRPCInferenceService/RepositoryIndex", NULL, 0, &out,
				       &len, err, sizeof(err)), 501);
	CHECK_EQ_INT(srv_grpc_dispatch(&h, "/x.Y/ServerLive", NULL, 0, &out, &len, err, sizeof(err)), 501);
	CHECK_EQ_INT(srv_grpc_dispatch(&h, "/inference.GRPCInferenceService/ServerMetadata", NULL, 0, &out,
				       &len, err, sizeof(err)), 0);
	md = inference__server_metadata_response__unpack(NULL, len, out);
	CHECK(md && !strcmp(md->name, "ipu-serve") && md->n_extensions == 4);
	inference__server_metadata_response__free_unpacked(md, NULL);
	free(out);
	atomic_store(&h.draining, 1);
	CHECK_EQ_INT(srv_grpc_dispatch(&h, "/inference.GRPCInferenceService/ServerReady", NULL, 0, &out,
				       &len, err, sizeof(err)), 0);
	rd = inference__server_ready_response__unpack(NULL, len, out);
	CHECK(rd && !rd->ready);
	inference__server_ready_response__free_unpacked(rd, NULL);
	free(out);
	/* an infer while draining: UNAVAILABLE before any model is looked up */
	CHECK_EQ_INT(srv_grpc_dispatch(&h, "/inference.GRPCInferenceService/ModelInfer", NULL, 0, &out,
				       &len, err, sizeof(err)), 503);
	CHECK_EQ_INT(srv_grpc_code(0), 0);		/* OK */
	CHECK_EQ_INT(srv_grpc_code(400), 3);		/* INVALID_ARGUMENT */
	CHECK_EQ_INT(srv_grpc_code(504), 4);		/* DEADLINE_EXCEEDED */
	CHECK_EQ_INT(srv_grpc_code(404), 5);		/* NOT_FOUND */
	CHECK_EQ_INT(srv_grpc_code(413), 8);		/* RESOURCE_EXHAUSTED */
	CHECK_EQ_INT(srv_grpc_code(501), 12);		/* UNIMPLEMENTED */
	CHECK_EQ_INT(srv_grpc_code(500), 13);		/* INTERNAL */
	CHECK_EQ_INT(srv_grpc_code(503), 14);		/* UNAVAILABLE */
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	/* as ipu-serve does before any thread */
	srv_json_budget_install();
	RUN(config_full);
	RUN(config_defaults);
	RUN(config_refusals);
	RUN(batch_roundtrip_any_dim);
	RUN(dtype_names);
	RUN(json_budget);
	RUN(gen_withdraw);
	RUN(stats_table);
	RUN(shm_regions);
	RUN(grpc_dispatch);
	return TH_DONE();
}
