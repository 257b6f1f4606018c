# Tests of the compiler's front end: ONNX import (incl. external data),
# IR and passes, shape inference and the reference evaluator against the
# ONNX node tests of Debian's libonnx-testdata, YAML config and CLI.
CFLAGS_tests_compiler_ := $(COMPILER_CPPFLAGS)

COMPILER_TEST_NAMES := test_onnx_nodes test_onnx_device test_compiler_lower test_compiler_ir test_compiler_import test_compiler_config
COMPILER_TESTS := $(COMPILER_TEST_NAMES:%=$(BUILD)/tests/compiler/%)
COMPILER_NODE_RUNNER := $(BUILD)/tests/compiler/onnx_node_runner.o

$(BUILD)/tests/compiler/onnx_node_runner.o $(COMPILER_TESTS:%=%.o): $(COMPILER_PB_H)

$(BUILD)/tests/compiler/test_onnx_nodes: $(COMPILER_NODE_RUNNER)
$(BUILD)/tests/compiler/test_onnx_device: $(COMPILER_NODE_RUNNER) $(BUILD)/tests/compiler/onnx_device_runner.o
$(BUILD)/tests/compiler/node_report: $(COMPILER_NODE_RUNNER)

$(COMPILER_TESTS) $(BUILD)/tests/compiler/node_report: $(BUILD)/tests/compiler/%: \
		$(BUILD)/tests/compiler/%.o $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)

TESTS += $(COMPILER_TESTS)
PROGRAMS += $(BUILD)/tests/compiler/node_report
