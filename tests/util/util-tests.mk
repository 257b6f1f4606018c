# The shared utility (util/): the one error table.
$(BUILD)/tests/util/test_error: $(BUILD)/tests/util/test_error.o $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(ENGINE_LIB) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/util/test_error
