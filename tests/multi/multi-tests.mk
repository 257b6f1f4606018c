# Models bigger than one IPU: the chip-level refusal of a model that does
# not fit, with the number of IPUs its memory plan needs.
CFLAGS_tests_multi_ := $(COMPILER_CPPFLAGS)

MULTI_TEST_NAMES := test_multi_fit
MULTI_TESTS := $(MULTI_TEST_NAMES:%=$(BUILD)/tests/multi/%)

$(MULTI_TESTS:%=%.o): $(COMPILER_PB_H)

$(MULTI_TESTS): $(BUILD)/tests/multi/%: $(BUILD)/tests/multi/%.o $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)

TESTS += $(MULTI_TESTS)
