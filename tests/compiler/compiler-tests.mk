# Tests of the compiler's front end: ONNX import (incl. external data),
# IR and passes, shape inference and the reference evaluator against the
# ONNX node tests of Debian's libonnx-testdata, YAML config and CLI.
CFLAGS_tests_compiler_ := $(COMPILER_CPPFLAGS)

COMPILER_TEST_NAMES := test_compiler_api test_compiler_fp8 test_compiler_ops test_op_registry test_onnx_nodes test_onnx_device test_onnx_convert test_compiler_lower test_compiler_ir test_compiler_import test_compiler_config test_graph_alloc test_lower_rewrites test_ir_names
COMPILER_TESTS := $(COMPILER_TEST_NAMES:%=$(BUILD)/tests/compiler/%)
COMPILER_NODE_RUNNER := $(BUILD)/tests/compiler/onnx_node_runner.o

$(BUILD)/tests/compiler/onnx_node_runner.o $(BUILD)/tests/compiler/lower_check.o $(COMPILER_TESTS:%=%.o): $(COMPILER_PB_H)

$(BUILD)/tests/compiler/test_onnx_nodes: $(COMPILER_NODE_RUNNER)
$(BUILD)/tests/compiler/test_onnx_convert: $(COMPILER_NODE_RUNNER)
$(BUILD)/tests/compiler/test_onnx_device: $(COMPILER_NODE_RUNNER) $(BUILD)/tests/compiler/onnx_device_runner.o
$(BUILD)/tests/compiler/node_report: $(COMPILER_NODE_RUNNER)
$(BUILD)/tests/compiler/test_compiler_lower $(BUILD)/tests/compiler/test_compiler_ops \
		$(BUILD)/tests/compiler/test_lower_rewrites: $(BUILD)/tests/compiler/lower_check.o

$(COMPILER_TESTS) $(BUILD)/tests/compiler/node_report: $(BUILD)/tests/compiler/%: \
		$(BUILD)/tests/compiler/%.o $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)

TESTS += $(COMPILER_TESTS)
PROGRAMS += $(BUILD)/tests/compiler/node_report

# libFuzzer on the ONNX importer and the front end (clang; the compiler's
# front-end sources and the generated protobuf-c code are built into the
# fuzzer with its instrumentation), seeded with the node tests' models.
ONNX_FUZZ := build/fuzz/fuzz_onnx_import
ONNX_FUZZ_SRCS = tests/compiler/fuzz_onnx_import.c runtime/file_atomic.c \
	engine/fp8.c engine/custom.c util/error.c \
	$(sort $(wildcard compiler/ops/*.c compiler/ir/*.c compiler/onnx/*.c compiler/eval/*.c compiler/passes/*.c \
		compiler/custom/*.c))
ONNX_FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation \
	-Icompiler/include -Icompiler -Iutil/include -Iengine/include -Iruntime/include
ONNX_CORPUS := build/fuzz/onnx-corpus

$(ONNX_FUZZ): $(ONNX_FUZZ_SRCS) $(COMPILER_PB_C) $(COMPILER_SCHEMA_C) $(wildcard compiler/*/*.h compiler/include/ipu/*.h)
	@mkdir -p $(dir $@)
	clang $(ONNX_FUZZ_FLAGS) -I$(COMPILER_GEN) -Icompiler/onnx -o $@ $(ONNX_FUZZ_SRCS) $(COMPILER_PB_C) $(COMPILER_SCHEMA_C) -w -lprotobuf-c -lm

$(ONNX_CORPUS)/.stamp:
	@mkdir -p $(dir $@)
	for d in /usr/share/libonnx-testdata/data/node/*/; do \
		n=$$(basename $$d); [ -f $$d/model.onnx ] && cp $$d/model.onnx $(dir $@)/$$n.onnx; \
	done; true
	@touch $@

.PHONY: fuzz-onnx-check fuzz-onnx
fuzz-onnx-check: $(ONNX_FUZZ) $(ONNX_CORPUS)/.stamp
	scripts/fuzz-run $(ONNX_FUZZ) 1500000 $(ONNX_CORPUS) -max_len=65536
fuzz-onnx: $(ONNX_FUZZ) $(ONNX_CORPUS)/.stamp
	scripts/fuzz-run --explore $(ONNX_FUZZ) 600 $(ONNX_CORPUS) -max_len=65536
fuzz: fuzz-onnx
CHECKS += ;make -s fuzz-onnx-check;

# The same inputs through the lowering too (graph builder, engine verifier).
# The .ipuef writer's sources by wildcard: a new part of the format is
# linked without touching this list.
ONNX_LOWER_FUZZ := build/fuzz/fuzz_onnx_lower
ONNX_LOWER_FUZZ_SRCS = tests/compiler/fuzz_onnx_lower.c \
	$(sort $(wildcard compiler/ops/*.c compiler/ir/*.c compiler/onnx/*.c compiler/eval/*.c compiler/passes/*.c \
		compiler/lower/*.c compiler/graph/*.c compiler/custom/*.c engine/*.c \
		engine/codelets/*.c util/*.c runtime/ipuef_*.c)) runtime/dtype.c \
	runtime/file_atomic.c

$(ONNX_LOWER_FUZZ): $(ONNX_LOWER_FUZZ_SRCS) $(COMPILER_PB_C) $(COMPILER_SCHEMA_C) $(wildcard compiler/*/*.h compiler/include/ipu/*.h engine/*.h engine/include/ipu/*.h util/include/ipu/*.h)
	@mkdir -p $(dir $@)
	clang $(ONNX_FUZZ_FLAGS) -Iruntime/include -Iruntime -I$(COMPILER_GEN) -o $@ \
		-Icompiler/onnx $(ONNX_LOWER_FUZZ_SRCS) $(COMPILER_PB_C) $(COMPILER_SCHEMA_C) -w -lprotobuf-c -lm -pthread

.PHONY: fuzz-onnx-lower-check fuzz-onnx-lower
fuzz-onnx-lower-check: $(ONNX_LOWER_FUZZ) $(ONNX_CORPUS)/.stamp
	scripts/fuzz-run $(ONNX_LOWER_FUZZ) 1000000 $(ONNX_CORPUS) -max_len=65536
fuzz-onnx-lower: $(ONNX_LOWER_FUZZ) $(ONNX_CORPUS)/.stamp
	scripts/fuzz-run --explore $(ONNX_LOWER_FUZZ) 600 $(ONNX_CORPUS) -max_len=65536
fuzz: fuzz-onnx-lower
CHECKS += ;make -s fuzz-onnx-lower-check;

# the property test: random graphs, tiny to larger than the device
include tests/compiler/property/property.mk

# ONNX's node, pytorch-converted and pytorch-operator suites through the
# command-line tools (ipu-compile, then ipu-run on each case's input_N.pb):
# the record of each suite after the colon.
ONNX_CLI_CASE := $(BUILD)/tests/compiler/onnx_cli_case
$(ONNX_CLI_CASE): $(BUILD)/tests/compiler/onnx_cli_case.o $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $< $(COMPILER_LINK) $(LDLIBS_BASE)
$(BUILD)/tests/compiler/onnx_cli_case.o: $(COMPILER_PB_H)
PROGRAMS += $(ONNX_CLI_CASE)
.PHONY: check-onnx-cli
check-onnx-cli: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $(ONNX_CLI_CASE)
	tests/compiler/onnx-cli-check.sh $(BUILD)/bin $(ONNX_CLI_CASE) node:829 pytorch-converted:81 pytorch-operator:31
CHECKS += ;make -s check-onnx-cli;

# Every executable byte-identical to the base commit's (default main):
# BASE=<commit> make check-ipuef-identical, before landing a refactor that
# must not change the output (tests/compiler/ipuef_identical.py; not part
# of make check, where the base would be the tree itself).
.PHONY: check-ipuef-identical
check-ipuef-identical: $(IPU_COMPILE)
	nice /usr/bin/python3 tests/compiler/ipuef_identical.py --bin $(BUILD)/bin --work $(BUILD)/ipuef-identical

# Ops too large for one tile, split over tiles (tests/compiler/split_ops.py):
# Gather at run-time indices beyond a tile, Softmax/LogSoftmax/LayerNorm/
# InstanceNorm/Reduce*/CumSum/TopK over rows longer than a tile (an
# InstanceNorm's image of C rows larger than a tile), Pad of channels larger
# than a tile, fp32 and fp16, against numpy in float64 (about 30 s).
.PHONY: check-split-ops
check-split-ops: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	nice /usr/bin/python3 tests/compiler/split_ops.py $(BUILD)/bin $(BUILD)/split-ops
CHECKS += ;make -s check-split-ops;

# ONNX control flow (tests/compiler/control_flow.py): If on run-time and
# constant conditions, an RNN-style Loop, a Loop with an If inside, Scans
# both ways, fp32 and fp16 against numpy; branches of different shapes
# refused (a few seconds)
.PHONY: check-control-flow
check-control-flow: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	nice /usr/bin/python3 tests/compiler/control_flow.py $(BUILD)/bin $(BUILD)/control-flow
CHECKS += ;make -s check-control-flow;

# --batch-size on models torch exported at a static batch 1: applied, or
# refused naming the input or output (tests/compiler/batch_size.py)
.PHONY: check-batch-size
check-batch-size: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump
	/usr/bin/python3 tests/compiler/batch_size.py $(BUILD)/bin
CHECKS += ;make -s check-batch-size;

# ipu_compile() keeps no state between calls: threads compiling at once
# (two of them running --check on in-process devices) under ThreadSanitizer.
.PHONY: check-compiler-api-tsan
check-compiler-api-tsan:
	$(MAKE) -s BUILD=build/tsan SANITIZE=thread build/tsan/tests/compiler/test_compiler_api
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" build/tsan/tests/compiler/test_compiler_api threads_compile_at_once
CHECKS += ;make -s check-compiler-api-tsan;
