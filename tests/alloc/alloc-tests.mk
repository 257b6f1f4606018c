# Allocation-failure loops (SQLite style) over the .ipuef reader/writer,
# .npy, libipu's in-process device, the ModelRunner and the compiler:
# tests/alloc/test_alloc_fail.c.  The project's allocation calls are
# redirected to tests/alloc/alloc_inject.c by the linker (--wrap), so the
# libraries are the ones every other program links.
CFLAGS_tests_alloc_ := $(COMPILER_CPPFLAGS) -Itests/runtime -Itests/modelrunner
ALLOC_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup,--wrap=aligned_alloc,--wrap=posix_memalign
ALLOC_TEST := $(BUILD)/tests/alloc/test_alloc_fail

$(BUILD)/tests/alloc/test_alloc_fail.o: $(COMPILER_PB_H)

$(ALLOC_TEST): $(BUILD)/tests/alloc/test_alloc_fail.o $(BUILD)/tests/alloc/alloc_inject.o \
		$(BUILD)/tests/runtime/ipuef_sample.o $(MR_MODELS_OBJ) $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) $(ALLOC_WRAP) -o $@ $(filter %.o,$^) \
		$(COMPILER_LINK) $(LDLIBS_BASE)

TESTS += $(ALLOC_TEST)
