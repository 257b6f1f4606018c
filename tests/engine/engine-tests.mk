# Engine tests through the graph builder and libipu's model backend:
# program steps, streams, exchanges, verifier refusals.
ENGINE_TESTS := $(patsubst tests/engine/%.c,$(BUILD)/tests/engine/%,$(sort $(wildcard tests/engine/test_programs*.c tests/engine/test_verify*.c)))
DEVICE_LIBS = $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)

$(ENGINE_TESTS): $(BUILD)/tests/engine/%: $(BUILD)/tests/engine/%.o $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(DEVICE_LIBS) $(LDLIBS_BASE)

TESTS += $(ENGINE_TESTS)

# The MLP test shares the example's model code (examples/mlp/mlp_model.c).
CFLAGS_tests_engine_ := -Iexamples/mlp
$(BUILD)/tests/engine/test_mlp: $(BUILD)/tests/engine/test_mlp.o $(MLP_MODEL_OBJ) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(MLP_MODEL_OBJ) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/engine/test_mlp

# valgrind-clean: the codelet, engine, builder, libipu and runtime tests under
# memcheck (about 2 minutes)
VALGRIND_TESTS = $(BUILD)/tests/engine/test_programs $(BUILD)/tests/engine/test_verify \
	$(BUILD)/tests/engine/test_mlp $(BUILD)/tests/modelrunner/test_runner \
	$(CODELET_TESTS) $(RT_TESTS)
.PHONY: check-valgrind
check-valgrind: $(VALGRIND_TESTS)
	scripts/valgrind-run $(VALGRIND_TESTS)
CHECKS += ;make -s check-valgrind;
