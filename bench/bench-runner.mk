# ModelRunner host overhead (make bench).
BENCH_RUNNER := $(BUILD)/bench/bench_runner
$(BENCH_RUNNER): $(BUILD)/bench/bench_runner.o $(MR_MODELS_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(MR_LINK) -Wl,--end-group $(LDLIBS_BASE)
$(BUILD)/bench/bench_runner.o: CFLAGS += -Itests/modelrunner
bench: bench-runner
bench-runner: $(BENCH_RUNNER)
	$(BENCH_RUNNER)
.PHONY: bench-runner
