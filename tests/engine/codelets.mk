# Codelet unit tests: every codelet's run() against a scalar double
# reference, and its check() against malformed vertices.
CODELET_TESTS := $(patsubst tests/engine/%.c,$(BUILD)/tests/engine/%,$(sort $(wildcard tests/engine/test_codelets*.c)))

$(CODELET_TESTS): $(BUILD)/tests/engine/%: $(BUILD)/tests/engine/%.o $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(ENGINE_LIB) $(LDLIBS_BASE)

TESTS += $(CODELET_TESTS)
