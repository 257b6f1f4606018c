# libipu's public API (ipu/ipu.h) on the in-process device.
CFLAGS_tests_libipu_ := -Itests/modelrunner
$(BUILD)/tests/libipu/test_libipu: $(BUILD)/tests/libipu/test_libipu.o $$(MR_MODELS_OBJ) \
		$(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(MR_MODELS_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) \
		$(GRAPH_LIB) $(ENGINE_LIB) -Wl,--end-group $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/libipu/test_libipu
