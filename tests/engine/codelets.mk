# Codelet unit tests: every codelet's run() against a scalar double
# reference, and its check() against malformed vertices.
CODELET_TESTS := $(patsubst tests/engine/%.c,$(BUILD)/tests/engine/%,$(sort $(wildcard tests/engine/test_codelets*.c)))

$(CODELET_TESTS): $(BUILD)/tests/engine/%: $(BUILD)/tests/engine/%.o $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(ENGINE_LIB) $(LDLIBS_BASE)

TESTS += $(CODELET_TESTS)

# Single-thread codelet throughput (MATMUL per ISA level vs OpenBLAS sgemm).
BENCH_CODELETS := $(BUILD)/bench/bench_codelets
$(BENCH_CODELETS): $(BUILD)/bench/bench_codelets.o $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(ENGINE_LIB) -lopenblas $(LDLIBS_BASE)
bench: bench-codelets
bench-codelets: $(BENCH_CODELETS)
	OPENBLAS_NUM_THREADS=1 $(BENCH_CODELETS)
.PHONY: bench-codelets
