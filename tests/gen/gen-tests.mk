# Generation: device-resident state (tests/gen/state_model.c builds a model
# that accumulates into state with the graph builder and the .ipuef writer).
GEN_STATE_OBJ := $(BUILD)/tests/gen/state_model.o
CFLAGS_tests_gen_ := -Itests/gen -DIPURT_TEST_BUILD='"$(BUILD)"'

$(BUILD)/tests/gen/test_state: $(BUILD)/tests/gen/test_state.o $(GEN_STATE_OBJ) \
		$(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) $(BUILD)/bin/ipuef-dump
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(GEN_STATE_OBJ) $(RUNTIME_LIB) \
		$(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) -Wl,--end-group -ljansson $(LDLIBS_BASE)

TESTS += $(BUILD)/tests/gen/test_state
