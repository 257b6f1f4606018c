# Model Runtime tests on the in-process device: Session, DeviceManager,
# QueueManager, ModelRunner.  rt_models.c builds their .ipuef models with
# the graph builder and the .ipuef writer.
MR_MODELS_OBJ := $(BUILD)/tests/modelrunner/rt_models.o
MR_LINK = $(MR_MODELS_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
CFLAGS_tests_modelrunner_ := -Itests/modelrunner

$(BUILD)/tests/modelrunner/test_runner: $(BUILD)/tests/modelrunner/test_runner.o $(MR_MODELS_OBJ) \
		$(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(MR_LINK) -Wl,--end-group $(LDLIBS_BASE)

TESTS += $(BUILD)/tests/modelrunner/test_runner

$(BUILD)/tests/modelrunner/test_replication: $(BUILD)/tests/modelrunner/test_replication.o \
		$(MR_MODELS_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(MR_LINK) -Wl,--end-group $(LDLIBS_BASE)

TESTS += $(BUILD)/tests/modelrunner/test_replication

$(BUILD)/tests/modelrunner/gen_models: $(BUILD)/tests/modelrunner/gen_models.o $(MR_MODELS_OBJ) \
		$(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(MR_LINK) -Wl,--end-group $(LDLIBS_BASE)
PROGRAMS += $(BUILD)/tests/modelrunner/gen_models

# ipu-run from the command line, checked with numpy
.PHONY: check-ipu-run
check-ipu-run: $(BUILD)/bin/ipu-run $(BUILD)/tests/modelrunner/gen_models
	tests/modelrunner/test_ipu_run.sh
CHECKS += ;make -s check-ipu-run;

# The ModelRunner's threads (callers, feeder, device thread, engine
# workers) under ThreadSanitizer, in its own build tree.
.PHONY: check-tsan-runner
check-tsan-runner:
	$(MAKE) -s BUILD=build/tsan SANITIZE=thread build/tsan/tests/modelrunner/test_runner
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" build/tsan/tests/modelrunner/test_runner
CHECKS += ;make -s check-tsan-runner;

# Replication's failover thread beside them, under ThreadSanitizer too.
.PHONY: check-tsan-replication
check-tsan-replication:
	$(MAKE) -s BUILD=build/tsan SANITIZE=thread build/tsan/tests/modelrunner/test_replication
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" build/tsan/tests/modelrunner/test_replication
CHECKS += ;make -s check-tsan-replication;
