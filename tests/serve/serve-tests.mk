# ipu-serve end to end (tests/serve/test_serve.py): real HTTP on loopback
# with curl, urllib and requests, models built by gen_models and
# mlp-example, results compared with ipu-run's.
.PHONY: check-serve
check-serve: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/mlp-example \
		$(BUILD)/bin/ipu-compile $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve.py
CHECKS += ;make -s check-serve;

# The pieces without HTTP (config.yaml, batch merge/split, datatypes, the
# gRPC service's refusals), under ASan+UBSan in make check.
CFLAGS_tests_serve_ := -Iserver -Itools/lib -I$(SERVE_GEN) -Itests/modelrunner
$(BUILD)/tests/serve/test_serve_units.o: $(SERVE_PB_H)
$(BUILD)/tests/serve/test_serve_units: $(BUILD)/tests/serve/test_serve_units.o $(SERVE_LIB_OBJS) \
		$(CLI_LIB) $(RUNTIME_LIB) $(RUNTIME_DEPLIBS) $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(SERVE_LIB_OBJS) $(CLI_LIB) $(RUNTIME_LINK) $(SERVE_LIBS) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/serve/test_serve_units

# Library errors to HTTP statuses and gRPC codes, by class, for every code.
$(BUILD)/tests/serve/test_serve_status.o: $(SERVE_PB_H)
$(BUILD)/tests/serve/test_serve_status: $(BUILD)/tests/serve/test_serve_status.o $(SERVE_LIB_OBJS) \
		$(CLI_LIB) $(RUNTIME_LIB) $(RUNTIME_DEPLIBS) $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(SERVE_LIB_OBJS) $(CLI_LIB) $(RUNTIME_LINK) $(SERVE_LIBS) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/serve/test_serve_status

# Packing without a device: placement, masks, positions, the config's refusals.
$(BUILD)/tests/serve/test_serve_pack_units.o: $(SERVE_PB_H)
$(BUILD)/tests/serve/test_serve_pack_units: $(BUILD)/tests/serve/test_serve_pack_units.o \
		$(SERVE_LIB_OBJS) $(CLI_LIB) $(RUNTIME_LIB) $(RUNTIME_DEPLIBS) $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(SERVE_LIB_OBJS) $(CLI_LIB) $(RUNTIME_LINK) $(SERVE_LIBS) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/serve/test_serve_pack_units

# Triton's statistics extension and nv_inference_* metric names
# (tests/serve/test_serve_stats.py): requests of known batch sizes, one at
# a time and in full dynamic batches, read back exactly; then again with
# the ASan+UBSan server.
.PHONY: check-serve-stats
check-serve-stats: $(BUILD)/bin/ipu-serve $(BUILD)/bin/mlp-example $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_stats.py
CHECKS += ;make -s check-serve-stats;
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve-stats;

# Triton's system shared-memory extension (tests/serve/test_serve_shm.py):
# tensors through POSIX shared memory made by Python's
# multiprocessing.shared_memory give the same bytes as inline; bad
# registrations and parameters 400; a region unregistered under a queued
# request; --system-shared-memory off.  Again with the ASan+UBSan server.
.PHONY: check-serve-shm
check-serve-shm: $(BUILD)/bin/ipu-serve $(BUILD)/bin/mlp-example $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_shm.py
CHECKS += ;make -s check-serve-shm;
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve-shm;

# config.pbtxt read by libprotobuf against Triton's model_config.proto:
# the fields acted on, the refusals and their messages, a repository
# folder loaded with its declared inputs and outputs checked.
$(BUILD)/tests/serve/test_serve_pbtxt: $(BUILD)/tests/serve/test_serve_pbtxt.o $(SERVE_LIB_OBJS) \
		$(MR_MODELS_OBJ) $(CLI_LIB) $(RUNTIME_LIB) $(RUNTIME_DEPLIBS) $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(SERVE_LIB_OBJS) $(MR_MODELS_OBJ) $(CLI_LIB) $(RUNTIME_LINK) \
		$(SERVE_LIBS) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/serve/test_serve_pbtxt

# Packing of variable-length requests (tests/serve/test_serve_pack.py): a
# BERT-shaped encoder in PopRT's packed form, 16 seeded requests of 8..128
# tokens packed into rows of 128, each answer bit-identical to the same
# request padded and alone and within 1e-3 of torch's, with segment ids
# and with the additive block-diagonal mask; config.yaml and config.pbtxt;
# bad requests and packing configs refused.  Again with the ASan+UBSan
# server.
.PHONY: check-serve-pack
check-serve-pack: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-compile
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_pack.py
CHECKS += ;make -s check-serve-pack;
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve-pack;

# Debian's Prometheus scrapes ipu-serve; counters read back through its API.
.PHONY: check-serve-prometheus
check-serve-prometheus: $(BUILD)/bin/ipu-serve $(BUILD)/bin/mlp-example $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_prometheus.py
CHECKS += ;make -s check-serve-prometheus;

# The same end-to-end run against the ASan+UBSan build of ipu-serve (its
# HTTP, JSON and batching paths, and no leak at the SIGTERM exit).
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve;

# libFuzzer on the infer body parser, response builder and config.yaml
# reader (clang; the server's parsing sources instrumented, the runtime's
# libraries linked as built), seeded by tests/serve/fuzz-corpus.
SERVE_FUZZ := build/fuzz/fuzz_serve_request
SERVE_FUZZ_SRCS := tests/serve/fuzz_serve_request.c tests/serve/fuzz_models.c server/infer_request.c server/infer_core.c server/infer_response.c \
	server/json_budget.c server/batch.c server/scheduler.c server/generate.c server/gen_batch.c server/model_config.c \
	server/stats.c server/shm.c server/pack.c server/pack_request.c tools/lib/cli.c
$(SERVE_FUZZ): $(SERVE_FUZZ_SRCS) $(wildcard server/*.h) $(MR_MODELS_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) \
		$(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1 -std=c11 \
		-D_GNU_SOURCE -Wall -Wextra -Werror -Iutil/include -Iruntime/include -Ilibipu/include \
		-Iengine/include -Iserver -Itools/lib -Itests/modelrunner -pthread -o $@ $(SERVE_FUZZ_SRCS) \
		-Wl,--start-group $(MR_LINK) -Wl,--end-group -ljansson -lyaml $(LIBIPU_LDLIBS) -lm

.PHONY: fuzz-serve-check fuzz-serve
fuzz-serve-check: $(SERVE_FUZZ)
	scripts/fuzz-run $(SERVE_FUZZ) 200000 tests/serve/fuzz-corpus -max_len=4096
fuzz-serve: $(SERVE_FUZZ)
	scripts/fuzz-run --explore $(SERVE_FUZZ) 600 tests/serve/fuzz-corpus -max_len=4096
fuzz: fuzz-serve
CHECKS += ;make -s fuzz-serve-check;

# libFuzzer on the gRPC ModelInfer path: a ModelInferRequest's tensors
# checked and filled (grpc_infer.c, infer_core.c) and answered, against the
# same three models, seeded by tests/serve/fuzz-corpus-grpc (messages
# generated by tests/serve/grpc_fuzz_seeds.py from the .proto).
SERVE_GRPC_FUZZ := build/fuzz/fuzz_serve_grpc
SERVE_GRPC_FUZZ_SRCS := tests/serve/fuzz_serve_grpc.c server/grpc_infer.c \
	$(filter-out tests/serve/fuzz_serve_request.c,$(SERVE_FUZZ_SRCS))
$(SERVE_GRPC_FUZZ): $(SERVE_GRPC_FUZZ_SRCS) $(wildcard server/*.h) $(BUILD)/gen/server/kserve/grpc_predict_v2.pb-c.c \
		$(MR_MODELS_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1 -std=c11 \
		-D_GNU_SOURCE -Wall -Wextra -Werror -Iutil/include -Iruntime/include -Ilibipu/include \
		-Iengine/include -Iserver -Itools/lib -Itests/modelrunner -I$(BUILD)/gen/server -pthread -o $@ \
		$(SERVE_GRPC_FUZZ_SRCS) $(BUILD)/gen/server/kserve/grpc_predict_v2.pb-c.c \
		-Wl,--start-group $(MR_LINK) -Wl,--end-group -ljansson -lyaml -lprotobuf-c $(LIBIPU_LDLIBS) -lm

.PHONY: fuzz-serve-grpc-check fuzz-serve-grpc
fuzz-serve-grpc-check: $(SERVE_GRPC_FUZZ)
	scripts/fuzz-run $(SERVE_GRPC_FUZZ) 200000 tests/serve/fuzz-corpus-grpc -max_len=4096
fuzz-serve-grpc: $(SERVE_GRPC_FUZZ)
	scripts/fuzz-run --explore $(SERVE_GRPC_FUZZ) 600 tests/serve/fuzz-corpus-grpc -max_len=4096
fuzz: fuzz-serve-grpc
CHECKS += ;make -s fuzz-serve-grpc-check;

# libFuzzer on the config.pbtxt reader: libprotobuf's text format (the
# library as Debian builds it), the walk refusing fields not acted on
# (server/pbtxt.cc) and the mapping (server/config_pbtxt.c), seeded by
# tests/serve/fuzz-corpus-pbtxt; the generated code comes from the plain
# build's protoc runs.
SERVE_PBTXT_FUZZ := build/fuzz/fuzz_serve_pbtxt
SERVE_PBTXT_FUZZ_SRCS := tests/serve/fuzz_serve_pbtxt.c server/config_pbtxt.c \
	$(filter-out tests/serve/fuzz_serve_request.c,$(SERVE_FUZZ_SRCS))
$(SERVE_PBTXT_FUZZ): $(SERVE_PBTXT_FUZZ_SRCS) server/pbtxt.cc $(wildcard server/*.h) \
		$(SERVE_TRITON_GEN)/model_config.pb.cc $(SERVE_TRITON_GEN)/model_config.pb-c.c $(MR_MODELS_OBJ) \
		$(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	# vptr and function checks need UBSan's C++ runtime, which a C link leaves out
	clang++ -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr,function \
		-fno-sanitize-recover=undefined -g -O1 -std=c++17 -Wall -Wextra -Werror -Iserver \
		-I$(SERVE_TRITON_GEN) -c -o $@-pbtxt.o server/pbtxt.cc
	clang++ -O1 -std=c++17 -I$(SERVE_TRITON_GEN) -c -o $@-pb.o $(SERVE_TRITON_GEN)/model_config.pb.cc
	clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1 -std=c11 \
		-D_GNU_SOURCE -Wall -Wextra -Werror -Iutil/include -Iruntime/include -Ilibipu/include \
		-Iengine/include -Iserver -I$(SERVE_TRITON_GEN) -Itools/lib -Itests/modelrunner -pthread -o $@ \
		$(SERVE_PBTXT_FUZZ_SRCS) $(SERVE_TRITON_GEN)/model_config.pb-c.c $@-pbtxt.o $@-pb.o \
		-Wl,--start-group $(MR_LINK) -Wl,--end-group -ljansson -lyaml -lprotobuf-c -lprotobuf \
		-lstdc++ $(LIBIPU_LDLIBS) -lm

.PHONY: fuzz-serve-pbtxt-check fuzz-serve-pbtxt
fuzz-serve-pbtxt-check: $(SERVE_PBTXT_FUZZ)
	scripts/fuzz-run $(SERVE_PBTXT_FUZZ) 50000 tests/serve/fuzz-corpus-pbtxt -max_len=2048
fuzz-serve-pbtxt: $(SERVE_PBTXT_FUZZ)
	scripts/fuzz-run --explore $(SERVE_PBTXT_FUZZ) 600 tests/serve/fuzz-corpus-pbtxt -max_len=2048
fuzz: fuzz-serve-pbtxt
CHECKS += ;make -s fuzz-serve-pbtxt-check;

# Triton's config.pbtxt end to end (tests/serve/test_serve_pbtxt.py): a
# repository laid out as the Poplar backend's served over HTTP, start-up
# refusals, and --model-control-mode=poll with models added, changed and
# removed under a steady stream of requests; then with the ASan+UBSan
# server (the poll thread included, no leak at its exit).
.PHONY: check-serve-pbtxt
check-serve-pbtxt: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/mlp-example \
		$(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_pbtxt.py
CHECKS += ;make -s check-serve-pbtxt;
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve-pbtxt;

# ipu-serve in the test VM on the PCIe devices /dev/accel/accel0 and /dev/accel/accel1,
# asked by busybox wget from inside the guest (tests/serve/test_serve_vm.py).
.PHONY: check-serve-vm
check-serve-vm: $(KMOD) $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/mlp-example \
		$(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_vm.py $(KMOD)
CHECKS += ;make -s check-serve-vm;

# The end-to-end runs (infer, generate, statistics, shared memory) once more
# with ipu-serve built under ThreadSanitizer (HTTP threads, workers,
# repository references, streams, regions unregistered under queued
# requests); a race report stops the
# server (halt_on_error) and fails the run.
.PHONY: check-serve-tsan
check-serve-tsan: $(BUILD)/bin/ipu-run $(BUILD)/bin/mlp-example $(BUILD)/bin/ipu-compile \
		$(BUILD)/tests/modelrunner/gen_models
	$(MAKE) -s BUILD=build/tsan SANITIZE=thread build/tsan/bin/ipu-serve
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" SERVE_BIN=build/tsan/bin/ipu-serve \
		BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve.py
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" SERVE_BIN=build/tsan/bin/ipu-serve \
		BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_generate.py
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" SERVE_BIN=build/tsan/bin/ipu-serve \
		BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_contbatch.py
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" SERVE_BIN=build/tsan/bin/ipu-serve \
		BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_stats.py
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" SERVE_BIN=build/tsan/bin/ipu-serve \
		BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_shm.py
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" SERVE_BIN=build/tsan/bin/ipu-serve \
		BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_pbtxt.py
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" SERVE_BIN=build/tsan/bin/ipu-serve SERVE_NO_GRPC=1 \
		BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_pack.py
CHECKS += ;make -s check-serve-tsan;

# The attacks of an outside trial replayed with raw sockets against a live
# ipu-serve (tests/serve/test_serve_attack.py): JSON bodies at the body
# limit (peak RSS within the documented budget), trickling clients, requests
# racing the SIGTERM drain, malformed framing and names, overflowing floats.
.PHONY: check-serve-attack
check-serve-attack: $(BUILD)/bin/ipu-serve $(BUILD)/bin/mlp-example $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_attack.py
CHECKS += ;make -s check-serve-attack;

# The generate extension (tests/serve/test_serve_generate.py): the tiny GPT
# of tests/gen served by /generate and /generate_stream (curl -N and a
# Python SSE client) against torch's greedy loop and ipu-run --generate;
# bad input, a model that is not a decoder, clients gone mid-stream; then
# again with the ASan+UBSan server (no leak at its exit).
.PHONY: check-serve-generate
check-serve-generate: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/ipu-compile \
		$(BUILD)/bin/mlp-example
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_generate.py
CHECKS += ;make -s check-serve-generate;
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve-generate;

# Continuous batching of generations (tests/serve/test_serve_contbatch.py):
# the tiny GPT with 2 cache slots and 1024 positions; a short request joins
# a long one mid-generation and ends first, 8 requests over the 2 slots,
# a client gone mid-stream frees its slot for a queued request, a full
# queue answers 503; every sequence gives the tokens of its run alone
# (ipu-run --generate, torch's greedy tokens); again under ASan+UBSan.
.PHONY: check-serve-contbatch
check-serve-contbatch: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/ipu-compile
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_contbatch.py
CHECKS += ;make -s check-serve-contbatch;
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve-contbatch;

# KServe v2 gRPC (tests/serve/test_serve_grpc.py): a client generated from
# server/grpc/grpc_predict_v2.proto by python3-grpc-tools; health, metadata
# and ModelInfer (raw and typed tensors) bit-identical to the HTTP answers,
# Triton's status codes for bad input, malformed and oversized messages,
# clients gone mid-call, 64 concurrent streams, --max-connections, drain;
# then again with the ASan+UBSan server.
.PHONY: check-serve-grpc
check-serve-grpc: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-compile $(BUILD)/bin/mlp-example \
		$(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_grpc.py
CHECKS += ;make -s check-serve-grpc;
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve-grpc;
